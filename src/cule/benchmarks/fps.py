"""Frames per second of cule and ale-py on the CPU, side by side, measured in the same run.

Two comparisons, both with ale-py's AtariVectorEnv defaults for the
preprocessing (84x84 grey, 4-frame stack, frameskip 4, max-pool, up to 30
no-ops, FIRE reset, reward clipping) and random actions:

  vector: cule.AtariVectorEnv vs ale_py.vector.AtariVectorEnv, same games,
          same numbers of environments (default 16 and 64; --scale adds 256
          and 1,024) and threads (default: all cores);
  single: one cule thread stepping envs vs one ale_py.ALEInterface with
          frame_skip 4 in a Python loop (a frame count both emulate).

With ``--gymnasium`` it compares what a gymnasium user steps instead: one
``gymnasium.make("cule/<Game>-v5")`` against one ``gymnasium.make("ALE/<Game>-v5")``
(RGB frames, sticky actions, one int action per step from Python).

Each measurement records emulated frames (steps x frameskip x envs), wall
seconds and the process's CPU seconds (all threads). cule and ale-py
alternate ``--repeats`` times (default 5); each alternation gives a ratio
(ale-py's seconds per frame over cule's), and the table reports the median
ratio and its spread (lowest-highest) for wall time and for CPU time. CPU
time is the steadier figure on a shared machine; ratios, not absolute
numbers, are what to compare across machines. ``--draw N --seed S`` adds N
games drawn at random from the 104 (games nobody tuned for), reported beside
``--games``. ``--img-size H W`` gives both vector envs another observation
size (224 224 grows the screen; the single comparison, which reads no
screens, is left out).

    python -m cule.benchmarks.fps                     # 5 games, 16 and 64 envs; runs/fps/fps.json and fps.png
    python -m cule.benchmarks.fps --scale --games pong  # also 256 and 1,024 envs
    python -m cule.benchmarks.fps --games pong --envs 8 32 --repeats 7
    python -m cule.benchmarks.fps --draw 10 --seed 2026  # plus 10 random games; the seed is recorded
    python -m cule.benchmarks.fps --profile pong      # where cule's time goes (needs perf)
    python -m cule.benchmarks.fps --gymnasium         # one gymnasium env each, v5 settings
    python -m cule.benchmarks.fps --games pong --img-size 224 224  # observations larger than the screen
    python -m cule.benchmarks.fps --translated        # cule's side through each game's translated loop
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import cule
from cule.benchmarks import adapters, add_output_dir, check_games, pyplot

GAMES = ["pong", "breakout", "ms_pacman", "space_invaders", "seaquest"]
SCALE_ENVS = [256, 1024]


def steps_for(n: int, steps: int) -> int:
    """Vector steps timed at n environments: `steps` at 16, fewer for larger batches (same frames)."""
    return max(10, round(steps * 16 / max(n, 16)))


def cule_vector(game: str, n: int, steps: int, threads: int) -> float:
    return adapters.frames_per_second(adapters.make("cule-cpu", game, n, threads), steps)


def ale_vector(game: str, n: int, steps: int, threads: int) -> float:
    return adapters.frames_per_second(adapters.make("ale-vector", game, n, threads), steps)


def ale_single(game: str, steps: int) -> float:
    """One ALEInterface, frame_skip 4, random minimal actions, reset at game over, no screen read."""
    return adapters.frames_per_second(adapters.AleLoopEnv(game, 1, 1, screens=False), steps)


def per_frame(env, steps: int) -> tuple[float, float]:
    """(wall, CPU) seconds per emulated frame of `steps` timed steps of `env` (closed after)."""
    frames, wall, cpu = adapters.timed_steps(env, steps)
    return wall / frames, cpu / frames


def compare(make_ours, make_theirs, steps: int, repeats: int) -> dict:
    """cule and ale-py alternated `repeats` times: median frames/s, CPU microseconds per frame, and the ratios
    (ale-py's seconds per frame over cule's) of wall and CPU time, median and spread over the alternations."""
    ours, theirs = [], []
    for _ in range(repeats):
        ours.append(per_frame(make_ours(), steps))
        theirs.append(per_frame(make_theirs(), steps))
    ratios = {kind: [t[i] / o[i] for o, t in zip(ours, theirs)] for i, kind in enumerate(("wall", "cpu"))}
    return dict(cule_fps=1 / statistics.median(o[0] for o in ours), ale_fps=1 / statistics.median(t[0] for t in theirs),
                cule_cpu_us=1e6 * statistics.median(o[1] for o in ours),
                ale_cpu_us=1e6 * statistics.median(t[1] for t in theirs),
                ratio=statistics.median(ratios["wall"]), ratio_spread=[min(ratios["wall"]), max(ratios["wall"])],
                cpu_ratio=statistics.median(ratios["cpu"]), cpu_ratio_spread=[min(ratios["cpu"]), max(ratios["cpu"])])


def print_row(r: dict) -> None:
    print(f"{r['kind']:8s} {r['game']:15s} {r['envs']:4d} {r['cule_fps']:9.0f} {r['ale_fps']:10.0f} "
          f"{r['ratio']:6.2f} ({r['ratio_spread'][0]:.2f}-{r['ratio_spread'][1]:.2f}) "
          f"{r['cpu_ratio']:6.2f} ({r['cpu_ratio_spread'][0]:.2f}-{r['cpu_ratio_spread'][1]:.2f})", flush=True)


def drawn_games(count: int, seed: int, exclude: list[str]) -> list[str]:
    """`count` games drawn without replacement from the 104, none of `exclude`, reproducibly from `seed`."""
    pool = [g for g in cule.list_games() if g not in exclude]
    return sorted(np.random.default_rng(seed).choice(pool, size=count, replace=False).tolist())


def profile(game: str, envs: int, steps: int) -> None:
    """perf record of cule's vector env alone; prints the hottest functions."""
    if not shutil.which("perf"):
        sys.exit("--profile needs Linux perf (apt install linux-tools-generic)")
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        code = (f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); import fps; "
                f"fps.cule_vector({game!r}, {envs}, 50, 1); import time; t = time.perf_counter(); "
                f"print('fps', fps.cule_vector({game!r}, {envs}, {steps}, 1))")
        subprocess.run(["perf", "record", "-q", "-o", data, sys.executable, "-c", code], check=True)
        report = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--percent-limit", "1",
                                 "--sort", "dso,symbol"], capture_output=True, text=True).stdout
    for line in report.splitlines():
        if line.strip() and not line.startswith("#"):
            print(" ".join(line.split()).replace("_core.cpython-311-x86_64-linux-gnu.so", "_core.so")[:150])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="+", default=GAMES, help="ALE game ids to measure (default: %(default)s)")
    parser.add_argument("--envs", nargs="+", type=int, default=[16, 64],
                        help="numbers of environments (vector rows; default: %(default)s)")
    parser.add_argument("--scale", action="store_true", help=f"also measure {SCALE_ENVS} environments")
    parser.add_argument("--steps", type=int, default=200,
                        help="vector steps timed per measurement at 16 envs (larger batches: as many frames; "
                             "default %(default)s)")
    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="worker threads for both vector envs (default: all cores)")
    parser.add_argument("--repeats", type=int, default=5,
                        help="alternations of cule and ale-py; the median ratio and its spread are reported "
                             "(default %(default)s)")
    parser.add_argument("--draw", type=int, default=0, metavar="N",
                        help="also measure N games drawn at random from the 104 (not among --games)")
    parser.add_argument("--seed", type=int, default=0, help="the random draw's seed (recorded in fps.json)")
    add_output_dir(parser, "fps")
    parser.add_argument("--img-size", nargs=2, type=int, metavar=("H", "W"),
                        help="observation size of both vector envs (default ale-py's 84 84); leaves out the "
                             "single comparison")
    parser.add_argument("--profile", metavar="GAME", help="instead: perf profile of cule on GAME, one thread")
    parser.add_argument("--gymnasium", action="store_true",
                        help="instead: one gymnasium.make('cule/<Game>-v5') against one gymnasium.make('ALE/<Game>-v5') "
                             "per game (v5 settings, int actions from Python); --envs and --threads are not used")
    parser.add_argument("--translated", action="store_true",
                        help="cule steps each game through its translated frame loop (AtariVectorEnv(..., "
                             "translated=True), docs/translation.md), built first if not kept yet (minutes a game, "
                             "not timed); its games' mappers must be translatable")
    parser.add_argument("--replot", action="store_true", help="instead: redraw fps.png from --output-dir's fps.json")
    args = parser.parse_args()
    out = Path(args.output_dir)
    if args.replot:
        if not (out / "fps.json").exists():
            parser.error(f"--replot: {out / 'fps.json'} does not exist; run the benchmark into --output-dir first")
        with open(out / "fps.json") as f:
            plot(json.load(f)["rows"], out / "fps.png", parser)
        return
    if args.profile:
        profile(args.profile, args.envs[0], args.steps * 4)
        return

    if args.scale:
        args.envs = sorted(set(args.envs) | set(SCALE_ENVS))
    if args.repeats < 1 or args.steps < 1 or args.draw < 0 or min(args.envs) < 1:
        parser.error("--repeats, --steps and --envs must be at least 1 and --draw at least 0")
    size = {} if args.img_size is None else dict(img_height=args.img_size[0], img_width=args.img_size[1])
    if args.img_size is not None and not all(1 <= v <= cule._core.max_obs_side for v in args.img_size):
        parser.error(f"--img-size: each side in 1..{cule._core.max_obs_side}, got {args.img_size}")
    if args.img_size is not None and args.gymnasium:
        parser.error("--img-size sizes the vector envs; --gymnasium compares gymnasium's v5 envs at their own size")
    check_games(parser, args.games)
    if args.draw > len(set(cule.list_games()) - set(args.games)):
        parser.error(f"--draw {args.draw}: there are {len(cule.list_games())} games, --games among them")
    drawn = drawn_games(args.draw, args.seed, args.games) if args.draw else []
    ours = dict(size)
    if args.translated:
        if args.gymnasium:
            parser.error("--translated times the vector env; leave out --gymnasium")
        from cule import translate
        for game in list(args.games) + drawn:
            translate.build(game)
        ours["translated"] = True
    rows = []
    print(f"{'comparison':8s} {'game':15s} {'envs':>4s} {'cule fps':>9s} {'ale-py fps':>10s} "
          f"{'wall ratio (spread)':>20s} {'cpu ratio (spread)':>19s}", flush=True)
    for game in list(args.games) + drawn:
        if args.gymnasium:
            row = compare(lambda: adapters.GymnasiumEnv(game, 1, 1, "cule"),
                          lambda: adapters.GymnasiumEnv(game, 1, 1, "ALE"), args.steps, args.repeats)
            rows.append(dict(kind="gymnasium", game=game, envs=1, threads=1, drawn=game in drawn, **row))
            print_row(rows[-1])
            continue
        for n in args.envs:
            steps = steps_for(n, args.steps)
            row = compare(lambda: adapters.make("cule-cpu", game, n, args.threads, **ours),
                          lambda: adapters.make("ale-vector", game, n, args.threads, **size), steps, args.repeats)
            rows.append(dict(kind="vector", game=game, envs=n, threads=args.threads, drawn=game in drawn, **row))
        if not size:
            row = compare(lambda: adapters.make("cule-cpu", game, 4, 1, **ours),
                          lambda: adapters.AleLoopEnv(game, 1, 1, screens=False), args.steps, args.repeats)
            rows.append(dict(kind="single", game=game, envs=4, threads=1, drawn=game in drawn, **row))
        for r in rows[-len(args.envs) - (not size):]:
            print_row(r)
    for label, chosen in (("benchmark games", False), (f"{len(drawn)} drawn games (seed {args.seed})", True)):
        for kind, target in (("vector", 2.0), ("single", 1.5), ("gymnasium", None)):
            picked = [r for r in rows if r["kind"] == kind and r["drawn"] == chosen]
            if picked:
                wall, cpu = [r["ratio"] for r in picked], [r["cpu_ratio"] for r in picked]
                print(f"{label}, {kind}: cule/ale-py median wall {statistics.median(wall):.2f}, CPU "
                      f"{statistics.median(cpu):.2f} (lowest {min(cpu):.2f}); geometric mean wall "
                      f"{float(np.exp(np.mean(np.log(wall)))):.2f}" + (f" (target {target})" if target else ""))
    out.mkdir(parents=True, exist_ok=True)
    meta = dict(machine=platform.machine(), processor=platform.processor(), cpus=os.cpu_count(),
                steps=args.steps, gymnasium=args.gymnasium, repeats=args.repeats, draw=args.draw, seed=args.seed,
                img_size=args.img_size or [84, 84], translated=args.translated,
                drawn=drawn, date=time.strftime("%Y-%m-%d"))
    with open(out / "fps.json", "w") as f:
        json.dump(dict(meta=meta, rows=rows), f, indent=1)
    plot(rows, out / "fps.png", parser)
    print(f"wrote {out / 'fps.json'} and {out / 'fps.png'}")


def plot(rows: list[dict], path: str, parser: argparse.ArgumentParser) -> None:
    plt = pyplot()
    if plt is None:
        return

    fig, ax = plt.subplots(figsize=(9, 4.5))
    labels = [f"{r['game']} {r['kind']} {r['envs']}x{r['threads']}t" for r in rows]
    x = np.arange(len(rows))
    ax.bar(x - 0.2, [r["cule_fps"] for r in rows], 0.4, label="cule")
    ax.bar(x + 0.2, [r["ale_fps"] for r in rows], 0.4, label="ale-py")
    ax.set_xticks(x, labels, fontsize=7, rotation=35, ha="right")
    ax.set_ylabel("emulated frames / s")
    ax.set_title("cule vs ale-py on this CPU (vector: AtariVectorEnv, envs x threads; single: vs ALEInterface; "
                 "gymnasium: one v5 env each)",
                 fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)

if __name__ == "__main__":
    main()
