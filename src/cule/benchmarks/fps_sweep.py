"""FPS sweeps side by side, as the CuLE paper measures them: python -m cule.benchmarks.fps_sweep [--full].

Every backend runs the same games with ale-py's vector-env preprocessing
(84x84 grey, 4-frame stack, frameskip 4, up to 30 no-ops, FIRE reset,
reward clipping) in the same run, so their ratios hold on a noisy machine:

  cule-cpu    cule.AtariVectorEnv on the CPU (--threads threads)
  cule-cuda   cule.AtariVectorEnv(device="cuda"), when a GPU and cupy are there
  ale-vector  ale_py.vector.AtariVectorEnv (--threads threads)
  ale-loop    one ale_py.ALEInterface per env (frame_skip 4) stepped in a Python
              loop, grey screen read each step (no resize or stack): the
              plain-ALE baseline, capped at --loop-max-envs environments
  envpool     envpool.make("<Game>-v5"), if envpool is installed
              (pip install -e ".[bench]")
  cule-envpool  cule.envpool.make("<Game>-v5"): cule behind EnvPool's
              interface, the same calls as envpool (only when named in
              --backends: it measures the interface, not another emulator)

and three load conditions:

  emulation   random actions (an upper bound on FPS)
  inference   a Nature CNN on --net-device picks each step's actions
  training    inference plus an A2C+V-trace update every --unroll steps

FPS counts emulated frames: steps x frameskip x envs, which the sweep checks
against the frame counters the emulators report (see tests/test_fps_sweep.py).
Outputs in --output-dir (default runs/fps_sweep): sweep.csv (one row per measurement), fps.png (FPS and
FPS per env against env count, per backend and mode, median over games),
games.png (per-game bars at one setting, with --bars), summary.md (the
table printed at the end).

    python -m cule.benchmarks.fps_sweep                        # quick: about 2 minutes on 2 cores
    python -m cule.benchmarks.fps_sweep --full                 # 1..4096 envs, 4 games, 3 modes, all-game bars
    python -m cule.benchmarks.fps_sweep --games pong --envs 1 64 1024 --modes emulation --backends cule-cpu ale-vector
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import os
import platform
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from cule.benchmarks import add_output_dir
from cule.benchmarks.adapters import BACKENDS, available, make

MODES = ["emulation", "inference", "training"]
QUICK = dict(games=["pong"], envs=[1, 8, 32], modes=MODES)
FULL = dict(games=["pong", "breakout", "ms_pacman", "space_invaders"], envs=[2 ** k for k in range(13)], modes=MODES)


# ---------------------------------------------------------------- load conditions
class Agent:
    """Picks actions for a mode: random (emulation), a Nature CNN (inference), the CNN trained by the
    A2C+V-trace trainer's update (cule.trainers.a2c_vtrace, its default arguments) on every `unroll` steps
    (training). Observations move to `net_device` first (a host copy for CPU backends on a GPU network, as
    in the paper's inference path)."""

    def __init__(self, mode: str, num_actions: int, n: int, net_device: torch.device, unroll: int, seed: int):
        from cule.trainers import a2c_vtrace
        from cule.trainers.common.models import NatureCNN

        self.mode, self.n, self.num_actions, self.unroll = mode, n, num_actions, unroll
        self.device = net_device
        self.generator = torch.Generator().manual_seed(seed)
        if mode != "emulation":
            torch.manual_seed(seed)
            self.net = NatureCNN(4, num_actions).to(net_device)
            self.trainer, self.args = a2c_vtrace, a2c_vtrace.Args()
            self.optimizer = torch.optim.Adam(self.net.parameters(), lr=self.args.learning_rate,
                                              eps=self.args.adam_eps)
            self.rollout = a2c_vtrace.Rollout.zeros(unroll, n, (4, 84, 84), net_device)
        self.t = 0

    def act(self, obs: torch.Tensor) -> torch.Tensor:
        if self.mode == "emulation":
            return torch.randint(0, self.num_actions, (self.n,), generator=self.generator)
        obs = obs.to(self.device, non_blocking=True)
        with torch.no_grad():
            logits, _ = self.net(obs)
        dist = torch.distributions.Categorical(logits=logits)
        actions = dist.sample()
        if self.mode == "training":
            ro = self.rollout
            ro.obs[self.t], ro.actions[self.t], ro.behaviour_logp[self.t] = obs, actions, dist.log_prob(actions)
        return actions

    def observe(self, rewards: torch.Tensor, dones: torch.Tensor, next_obs: torch.Tensor) -> None:
        if self.mode != "training":
            return
        ro = self.rollout
        ro.rewards[self.t], ro.dones[self.t] = rewards.to(self.device).clamp(-1, 1), dones.to(self.device)
        self.t += 1
        if self.t == self.unroll:
            ro.obs[self.t] = next_obs.to(self.device)
            loss = self.trainer.vtrace_loss(self.net, ro, self.args)[0]
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self.t = 0


@dataclass
class Row:
    backend: str
    game: str
    mode: str
    envs: int
    threads: int
    steps: int
    frames: int
    seconds: float
    fps: float
    fps_per_env: float
    reported_frames: int  # sum over envs of the emulators' own frame counters' advance
    machine: str


def measure(backend: str, game: str, mode: str, n: int, threads: int, seconds: float, min_steps: int,
            net_device: torch.device, unroll: int = 5, seed: int = 0) -> Row:
    """Steps one backend for at least `min_steps` steps and `seconds` seconds (after one warm-up step)."""
    env = make(backend, game, n, threads)
    try:
        agent = Agent(mode, env.num_actions, n, net_device, unroll, seed)
        obs = env.reset(seed)
        for _ in range(3):  # warm-up: kernel compilation, allocations, the network's first passes
            obs, rewards, dones = env.step(agent.act(obs).to(env.device))
            agent.observe(rewards, dones, obs)
        start_frames = env.frame_numbers().astype(np.int64)
        steps, t0 = 0, time.perf_counter()
        while steps < min_steps or time.perf_counter() - t0 < seconds:
            actions = agent.act(obs)
            obs, rewards, dones = env.step(actions.to(env.device))
            agent.observe(rewards, dones, obs)
            steps += 1
        if env.device.type == "cuda" or net_device.type == "cuda":
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - t0
        reported = int((env.frame_numbers().astype(np.int64) - start_frames).sum())
    finally:
        env.close()
    frames = steps * env.frameskip * n
    return Row(backend, game, mode, n, threads, steps, frames, elapsed, frames / elapsed, frames / elapsed / n,
               reported, machine_name())


def machine_name() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gpu = f", {torch.cuda.get_device_name()}" if torch.cuda.is_available() else ""
    return f"{cpu} ({os.cpu_count()} cores){gpu}"


# ---------------------------------------------------------------- outputs
def write_csv(rows: list[Row], path: Path) -> None:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=[f.name for f in dataclasses.fields(Row)])
        writer.writeheader()
        for r in rows:
            writer.writerow(dataclasses.asdict(r))


def read_csv(path: Path) -> list[Row]:
    types = {f.name: f.type for f in dataclasses.fields(Row)}
    cast = {"int": int, "float": float, "str": str}
    with path.open() as f:
        return [Row(**{k: cast[types[k]](v) for k, v in r.items()}) for r in csv.DictReader(f)]


def median_by(rows: list[Row], key) -> dict:
    groups: dict = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r.fps)
    return {k: statistics.median(v) for k, v in groups.items()}


def summary_table(rows: list[Row], reference: str = "ale-vector") -> str:
    """Markdown: median FPS over games per (mode, envs) and backend, with the ratio to `reference`."""
    fps = median_by(rows, lambda r: (r.mode, r.envs, r.backend))
    backends = [b for b in BACKENDS if any(r.backend == b for r in rows)]
    lines = ["| mode | envs | " + " | ".join(backends) + f" | cule-cpu / {reference} |",
             "|---|---|" + "---|" * (len(backends) + 1)]
    for mode in MODES:
        for n in sorted({r.envs for r in rows if r.mode == mode}):
            cells = [f"{fps[(mode, n, b)]:,.0f}" if (mode, n, b) in fps else "—" for b in backends]
            ref, ours = fps.get((mode, n, reference)), fps.get((mode, n, "cule-cpu"))
            ratio = f"{ours / ref:.2f}x" if ref and ours else "—"
            lines.append(f"| {mode} | {n} | " + " | ".join(cells) + f" | {ratio} |")
    return "\n".join(lines)


def plot_sweep(rows: list[Row], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    modes = [m for m in MODES if any(r.mode == m for r in rows)]
    fig, axes = plt.subplots(2, len(modes), figsize=(5 * len(modes), 8), squeeze=False)
    fps = median_by(rows, lambda r: (r.mode, r.backend, r.envs))
    for col, mode in enumerate(modes):
        for backend in BACKENDS:
            points = sorted((n, v) for (m, b, n), v in fps.items() if m == mode and b == backend)
            if not points:
                continue
            ns, vs = zip(*points)
            axes[0][col].plot(ns, vs, marker="o", label=backend)
            axes[1][col].plot(ns, [v / n for n, v in points], marker="o", label=backend)
        for row, ylabel in ((0, "frames / s"), (1, "frames / s per env")):
            ax = axes[row][col]
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("environments")
            ax.set_ylabel(ylabel)
            ax.grid(True, which="both", alpha=0.3)
        axes[0][col].set_title(f"{mode} (median over {len({r.game for r in rows})} game(s))")
        axes[0][col].legend()
    fig.suptitle(rows[0].machine, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_bars(rows: list[Row], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    games = sorted({r.game for r in rows})
    backends = [b for b in BACKENDS if any(r.backend == b for r in rows)]
    fps = {(r.game, r.backend): r.fps for r in rows}
    fig, ax = plt.subplots(figsize=(max(8.0, 0.17 * len(games)), 5))
    width = 0.8 / len(backends)
    for k, backend in enumerate(backends):
        ax.bar([i + k * width for i in range(len(games))], [fps.get((g, backend), 0) for g in games], width,
               label=backend)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(games))], games, rotation=90, fontsize=7)
    ax.set_ylabel("frames / s")
    r = rows[0]
    ax.set_title(f"{r.mode}, {r.envs} envs, {r.threads} threads — {r.machine}", fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------- main
def progress(total: int):
    try:
        from tqdm import tqdm

        return tqdm(total=total, unit="run", dynamic_ncols=True)
    except ImportError:
        class Plain:
            def __init__(self):
                self.done = 0

            def set_description(self, text):
                self.text = text

            def update(self, k=1):
                self.done += k
                print(f"[{self.done}/{total}] {self.text}", flush=True)

            def close(self):
                pass
        return Plain()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m cule.benchmarks.fps_sweep", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true",
                        help=f"the full sweep: games {FULL['games']}, envs 1..4096, all modes, and --bars")
    parser.add_argument("--games", nargs="+", help=f"ALE game ids (quick: {QUICK['games']})")
    parser.add_argument("--envs", nargs="+", type=int, help=f"environment counts (quick: {QUICK['envs']})")
    parser.add_argument("--modes", nargs="+", choices=MODES, help="load conditions (default: all three)")
    parser.add_argument("--backends", nargs="+", choices=BACKENDS,
                        default=[b for b in BACKENDS if b != "cule-envpool"],
                        help="backends to run (default: all but cule-envpool); unavailable ones are reported "
                             "and skipped")
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="CPU threads of the vector backends")
    parser.add_argument("--seconds", type=float, default=1.0, help="timed seconds per measurement (at least)")
    parser.add_argument("--min-steps", type=int, default=10, help="timed steps per measurement (at least)")
    parser.add_argument("--loop-max-envs", type=int, default=64, help="largest env count for ale-loop")
    parser.add_argument("--net-device", default="cuda" if torch.cuda.is_available() else "cpu",
                        help="device of the network in the inference and training modes")
    parser.add_argument("--unroll", type=int, default=5, help="training mode: steps per A2C+V-trace update")
    parser.add_argument("--bars", action="store_true",
                        help="also measure every game (cule.list_games()) at --bars-envs, emulation mode, "
                             "for the per-game bar chart (cule-cpu, cule-cuda, ale-vector)")
    parser.add_argument("--bars-envs", type=int, default=16, help="env count of the per-game bars")
    add_output_dir(parser, "fps_sweep")
    parser.add_argument("--replot", action="store_true",
                        help="only redraw the plots and table from --output-dir's CSVs")
    args = parser.parse_args(argv)

    preset = FULL if args.full else QUICK
    games, envs, modes = args.games or preset["games"], args.envs or preset["envs"], args.modes or preset["modes"]
    bars = args.bars or args.full
    if any(n <= 0 for n in envs):
        parser.error("--envs must be positive")
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    if args.replot:
        if not (out / "sweep.csv").exists():
            parser.error(f"--replot: {out / 'sweep.csv'} does not exist; run the sweep into --output-dir first")
        return report(read_csv(out / "sweep.csv"), out, read_csv(out / "games.csv") if (out / "games.csv").exists() else [])

    backends = []
    for b in args.backends:
        why = available(b)
        print(f"{b:11s} {'ok' if why is None else 'skipped: ' + why}")
        if why is None:
            backends.append(b)
    if not backends:
        parser.error(f"none of the backends asked for ({', '.join(args.backends)}) can run here: see above")
    net_device = torch.device(args.net_device)
    plan = [(b, g, m, n) for m in modes for n in envs for g in games for b in backends
            if not (b == "ale-loop" and n > args.loop_max_envs)]
    bar_plan = ([(b, g, "emulation", args.bars_envs) for g in __import__("cule").list_games()
                 for b in backends if b in ("cule-cpu", "cule-cuda", "ale-vector")] if bars else [])
    rows, bar_rows, bar = [], [], progress(len(plan) + len(bar_plan))
    for target, todo in ((rows, plan), (bar_rows, bar_plan)):
        for backend, game, mode, n in todo:
            bar.set_description(f"{backend} {game} {mode} {n} envs")
            target.append(measure(backend, game, mode, n, args.threads, args.seconds, args.min_steps, net_device,
                                  args.unroll))
            bar.update()
        write_csv(rows, out / "sweep.csv")
        if bar_rows:
            write_csv(bar_rows, out / "games.csv")
    bar.close()
    report(rows, out, bar_rows)


def report(rows: list[Row], out: Path, bar_rows: list[Row]) -> None:
    table = summary_table(rows)
    text = f"Machine: {rows[0].machine}; {rows[0].threads} threads; median FPS over games.\n\n{table}\n"
    (out / "summary.md").write_text(text)
    print("\n" + text)
    try:
        plot_sweep(rows, out / "fps.png")
        if bar_rows:
            plot_bars(bar_rows, out / "games.png")
    except ImportError:
        print("matplotlib is not installed, so no plots: pip install -e '.[bench]', then --replot")
    print(f"wrote {out / 'sweep.csv'}, {out / 'fps.png'}, {out / 'summary.md'}"
          + (f", {out / 'games.png'}" if bar_rows else ""))


if __name__ == "__main__":
    main()
