"""cule's CUDA backend: frames per second and per-kernel GPU time against the number of environments.

Random actions, ale-py's default preprocessing (84x84 grey, stack 4,
frameskip 4), a few warm-up steps, then the mean over timed steps of the
whole step (wall clock, synchronised) and of each kernel (CUDA events).
In the same run, ale-py's vector env on the machine's CPU cores
(--ale-envs environments, --ale-threads threads; 0 to skip) gives the
yardstick. Writes gpu_scale.jsonl (one row per measurement) and
gpu_scale.png to --output-dir. Needs a GPU, a CUDA build of torch and cupy
(pip install -e ".[cuda]").

    python -m cule.kernels --precompile pong breakout   # first: compile the kernels in parallel
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


def measure(game: str, n: int, warmup: int, steps: int) -> dict:
    env = cule.AtariVectorEnv(game, n, device="cuda")
    env.reset(seed=0)
    launcher, events = env.backend.launcher, {"run": [], "render": [], "reset": [], "gather": []}
    launch = launcher.launch

    def timed(kernel, geometry, args):  # each launch timed with CUDA events on the current stream
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        launch(kernel, geometry, args)
        end.record()
        events[kernel.removeprefix("cule_")].append((start, end))
    launcher.launch = timed
    actions = torch.randint(0, env.single_action_space.n, (warmup + steps, n), device="cuda")
    for k in range(warmup):
        env.step(actions[k])
    torch.cuda.synchronize()
    for v in events.values():
        v.clear()
    t0 = time.perf_counter()
    for k in range(warmup, warmup + steps):
        env.step(actions[k])
    torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    ms = {k: sum(s.elapsed_time(e) for s, e in v) / len(v) for k, v in events.items()}
    stats = env.backend.render_stats()
    env.close()
    return dict(game=game, envs=n, fps=steps * 4 * n / seconds, step_ms=1e3 * seconds / steps,
                run_ms=ms["run"], render_ms=ms["render"], reset_ms=ms["reset"], gather_ms=ms["gather"],
                device=torch.cuda.get_device_name(), **stats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="+", default=["pong"], help="ALE game ids")
    parser.add_argument("--envs", nargs="+", type=int, default=[1024, 4096, 16384], help="environment counts")
    parser.add_argument("--warmup", type=int, default=4, help="untimed steps first")
    parser.add_argument("--steps", type=int, default=12, help="timed steps (x4 frames x envs = frames counted)")
    parser.add_argument("--ale-envs", type=int, default=256, help="ale-py vector env's environments (0: skip it)")
    parser.add_argument("--ale-threads", type=int, default=os.cpu_count(), help="ale-py vector env's threads")
    parser.add_argument("--ale-steps", type=int, default=200, help="ale-py vector env's timed steps")
    add_output_dir(parser, "gpu_scale")
    args = parser.parse_args()
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = []

    def keep(row: dict) -> None:
        rows.append(row)
        with open(out / "gpu_scale.jsonl", "a") as f:
            f.write(json.dumps(row) + "\n")

    for game in args.games:
        if args.ale_envs:
            from cule.benchmarks.fps import ale_vector

            fps = ale_vector(game, args.ale_envs, args.ale_steps, args.ale_threads)
            keep(dict(game=game, backend="ale-vector", envs=args.ale_envs, threads=args.ale_threads, fps=fps))
            print(f"{game:16s} ale-py vector env, {args.ale_envs} envs, {args.ale_threads} threads: "
                  f"{fps:12,.0f} frames/s", flush=True)
        for n in args.envs:
            row = measure(game, n, args.warmup, args.steps)
            keep(dict(row, backend="cule-cuda"))
            print(f"{game:16s} {n:7d} envs {row['fps']:12,.0f} frames/s  step {row['step_ms']:8.1f} ms  "
                  f"cule_run {row['run_ms']:8.1f} ms  cule_render {row['render_ms']:6.2f} ms  "
                  f"cule_reset {row['reset_ms']:6.2f} ms  cule_gather {row['gather_ms']:6.2f} ms", flush=True)
            torch.cuda.empty_cache()
    plot(rows, out / "gpu_scale.png")


def plot(rows: list[dict], path: Path) -> None:
    """frames/s against environments per game, with ale-py's CPU figure as a line."""
    plt = pyplot()
    if plt is None:
        return

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for game in dict.fromkeys(r["game"] for r in rows):
        cuda = [r for r in rows if r["game"] == game and r["backend"] == "cule-cuda"]
        line = ax.plot([r["envs"] for r in cuda], [r["fps"] for r in cuda], "o-", label=f"{game} (cule, GPU)")
        for r in rows:
            if r["game"] == game and r["backend"] == "ale-vector":
                ax.axhline(r["fps"], ls="--", color=line[0].get_color(), lw=1,
                           label=f"{game} (ale-py, {r['threads']} CPU threads)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("environments")
    ax.set_ylabel("emulated frames / s")
    ax.set_title(f"cule on {torch.cuda.get_device_name() if torch.cuda.is_available() else 'the GPU'}", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
