"""cule's CUDA backend: frames per second and per-kernel GPU time against the number of environments.

Random actions, ale-py's default preprocessing (84x84 grey, stack 4,
frameskip 4), a few warm-up steps, then timed steps until --seconds have
passed (at least --min-steps, at most --steps): the mean of the whole step
(wall clock, synchronised) and of each kernel (CUDA events). In the same run,
ale-py's vector env on the machine's CPU cores (--ale-envs environments,
--ale-threads threads; 0 to skip) gives the yardstick. --kernels game
also times the game's own build (the game and step policy compiled in)
beside the mapper's build the backend uses, where a prebuilt binary of it is
found. Writes gpu_scale.jsonl (one row per measurement, appended) and
gpu_scale.png to --output-dir. Needs a GPU, a CUDA build of torch and cupy
(pip install -e ".[cuda]"); --dry-run runs the same code on the CPU through
the launch shim with a few environments, to check a command line without one.

    python -m cule.kernels --build pong breakout --arch sm_90       # first: the kernels, ahead of time
    python -m cule.benchmarks.gpu_scale --games pong breakout --envs 1024 4096 16384 65536
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import torch

import cule
from cule.benchmarks import add_output_dir, pyplot

KERNEL_NAMES = ("run", "render", "reset", "gather")


class KernelTimer:
    """Wraps a launcher: each launch timed with CUDA events on the current stream (on the shim, the host clock)."""

    def __init__(self, launcher, cuda: bool):
        self.launcher, self.cuda = launcher, cuda
        self.sms = launcher.sms
        self.events: dict[str, list] = {k: [] for k in KERNEL_NAMES}

    def launch(self, kernel, geometry, **args):
        name = kernel.removeprefix("cule_")
        if self.cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            self.launcher.launch(kernel, geometry, **args)
            end.record()
        else:
            start = time.perf_counter()
            self.launcher.launch(kernel, geometry, **args)
            end = time.perf_counter()
        self.events.setdefault(name, []).append((start, end))

    def zero(self, tensor) -> None:
        self.launcher.zero(tensor)

    def clear(self) -> None:
        for v in self.events.values():
            v.clear()

    def mean_ms(self, name: str) -> float:
        pairs = self.events.get(name, [])
        if not pairs:
            return 0.0
        ms = [s.elapsed_time(e) if self.cuda else 1e3 * (e - s) for s, e in pairs]
        return sum(ms) / len(ms)


def make_env(game: str, n: int, dry: bool, kernels: str):
    """The env measured: the CUDA backend with the mapper's kernels (or the game's own build), or on the shim."""
    if dry:
        return cule.AtariVectorEnv(game, n, device="cpu", _shim=True), "shim"
    env = cule.AtariVectorEnv(game, n, device="cuda")
    if kernels == "game":
        from cule.backends.cuda import CudaLauncher
        from cule.kernels import KernelBuild
        env.backend.launcher = CudaLauncher(KernelBuild(env.emulator.cart, game, False), env.device)
    return env, env.backend.launcher.source


def measure(game: str, n: int, warmup: int, steps: int, min_steps: int, seconds: float, dry: bool = False,
            kernels: str = "mapper") -> dict:
    sync = torch.cuda.synchronize if not dry else (lambda: None)
    phases, t_phase = {}, time.perf_counter()

    def phase(name: str) -> None:  # each phase's time, printed as it ends: a stall shows where it is
        nonlocal t_phase
        now = time.perf_counter()
        phases[name] = round(now - t_phase, 2)
        t_phase = now
        print(f"  [{time.strftime('%H:%M:%S')}] {game} {n} envs {kernels}: {name} {phases[name]} s", flush=True)

    env, source = make_env(game, n, dry, kernels)
    phase("construct")
    env.reset(seed=0)
    sync()
    phase("reset")
    setup_s = phases["construct"] + phases["reset"]
    timer = KernelTimer(env.backend.launcher, cuda=not dry)
    env.backend.launcher = timer
    device = "cpu" if dry else "cuda"
    actions = torch.randint(0, env.single_action_space.n, (warmup + steps, n), device=device)
    for k in range(warmup):
        env.step(actions[k])
    sync()
    phase("warm-up")
    timer.clear()
    t0, done = time.perf_counter(), 0
    while done < steps and (done < min_steps or time.perf_counter() - t0 < seconds):
        env.step(actions[warmup + done])
        done += 1
        if done >= min_steps:
            sync()  # the clock is read against finished work
    sync()
    elapsed = time.perf_counter() - t0
    phase("timed steps")
    stats, frameskip = env.backend.render_stats(), env.frameskip
    env.close()
    del env
    phase("close")
    return dict(game=game, envs=n, kernels=kernels, kernel_source=source, steps=done, phases=phases,
                fps=done * frameskip * n / elapsed, step_ms=1e3 * elapsed / done, setup_s=round(setup_s, 2),
                **{f"{k}_ms": timer.mean_ms(k) for k in KERNEL_NAMES},
                device="launch shim (CPU)" if dry else torch.cuda.get_device_name(), **stats)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="+", default=["pong"], help="ALE game ids")
    parser.add_argument("--envs", nargs="+", type=int, default=[1024, 4096, 16384], help="environment counts")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first (the first loads the kernels)")
    parser.add_argument("--steps", type=int, default=20, help="most timed steps (x4 frames x envs = frames counted)")
    parser.add_argument("--min-steps", type=int, default=3, help="fewest timed steps")
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="timed steps stop once this much time has passed (after --min-steps)")
    parser.add_argument("--kernels", choices=("mapper", "game", "both"), default="mapper",
                        help="the mapper's build (the backend's), the game's own build, or both in turn")
    parser.add_argument("--ale-envs", type=int, default=256, help="ale-py vector env's environments (0: skip it)")
    parser.add_argument("--ale-threads", type=int, default=os.cpu_count(), help="ale-py vector env's threads")
    parser.add_argument("--ale-steps", type=int, default=200, help="ale-py vector env's timed steps")
    parser.add_argument("--dry-run", action="store_true",
                        help="no GPU: the launch shim on the CPU, at most 8 environments, 1 timed step, "
                             "ale-py with at most 8 environments and 10 steps")
    add_output_dir(parser, "gpu_scale")
    args = parser.parse_args(argv)
    if args.dry_run:
        args.envs = sorted({min(n, 8) for n in args.envs})
        args.warmup, args.steps, args.min_steps = 1, 1, 1
        args.ale_envs, args.ale_steps = min(args.ale_envs, 8), min(args.ale_steps, 10)
    elif not torch.cuda.is_available():
        raise SystemExit("gpu_scale needs a CUDA GPU (torch sees none); --dry-run checks the command on the CPU")
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    kernels = ["mapper", "game"] if args.kernels == "both" else [args.kernels]
    rows = []

    def keep(row: dict) -> None:
        rows.append(row)
        with open(out / "gpu_scale.jsonl", "a") as f:
            f.write(json.dumps(dict(row, date=time.strftime("%Y-%m-%d %H:%M:%S"))) + "\n")

    for game in args.games:
        if args.ale_envs:
            from cule.benchmarks.fps import ale_vector

            fps = ale_vector(game, args.ale_envs, args.ale_steps, args.ale_threads)
            keep(dict(game=game, backend="ale-vector", envs=args.ale_envs, threads=args.ale_threads, fps=fps))
            print(f"{game:16s} ale-py vector env, {args.ale_envs} envs, {args.ale_threads} threads: "
                  f"{fps:12,.0f} frames/s", flush=True)
        for n in args.envs:
            for build in kernels:
                row = measure(game, n, args.warmup, args.steps, args.min_steps, args.seconds, args.dry_run, build)
                keep(dict(row, backend="cule-cuda"))
                print(f"{game:16s} {n:7d} envs {build:6s} {row['fps']:12,.0f} frames/s  step {row['step_ms']:8.1f} "
                      f"ms ({row['steps']} steps)  cule_run {row['run_ms']:8.1f}  render {row['render_ms']:6.2f}  "
                      f"reset {row['reset_ms']:6.2f}  gather {row['gather_ms']:6.2f} ms  setup {row['setup_s']} s",
                      flush=True)
                if not args.dry_run:
                    torch.cuda.empty_cache()
    plot(rows, out / "gpu_scale.png")


def plot(rows: list[dict], path: Path) -> None:
    """frames/s against environments per game, with ale-py's CPU figure as a line."""
    plt = pyplot()
    if plt is None:
        return

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for game in dict.fromkeys(r["game"] for r in rows):
        line = None
        for build in ("mapper", "game"):
            cuda = [r for r in rows if r["game"] == game and r["backend"] == "cule-cuda" and r["kernels"] == build]
            if cuda:
                kw = dict(color=line[0].get_color()) if line else {}
                drawn = ax.plot([r["envs"] for r in cuda], [r["fps"] for r in cuda], "o-" if build == "mapper" else
                                "x:", label=f"{game} (cule, {build}'s kernels)", **kw)
                line = line or drawn
        for r in rows:
            if r["game"] == game and r["backend"] == "ale-vector":
                ax.axhline(r["fps"], ls="--", lw=1, label=f"{game} (ale-py, {r['threads']} CPU threads)",
                           **(dict(color=line[0].get_color()) if line else {}))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("environments")
    ax.set_ylabel("emulated frames / s")
    device = rows[-1].get("device", "") if rows else ""
    ax.set_title(f"cule on {device or 'the GPU'}", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
