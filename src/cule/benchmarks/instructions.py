"""Instructions per vector step, cule against ALE, counted by callgrind: a figure machine noise cannot move.

One environment on one thread, ale-py's default preprocessing (frameskip 4,
max-pool of the last two frames, grey, INTER_AREA to 84x84 or ``--img-size
H W``, a stack of 4, random actions from the minimal set):

  cule: ``cule.AtariVectorEnv(game, 1, num_threads=1)`` stepped from Python,
        everything included (Python, torch, the C++ backend);
  ALE:  ``ale_py.ALEInterface`` acting frame by frame plus the same
        preprocessing in numpy and OpenCV (ale-py's vector env runs a thread
        pool whose waiting an instruction count cannot judge fairly).

Each side runs twice under ``valgrind --tool=callgrind`` with two numbers of
steps; the difference divided by the difference in steps is the cost of a
step with start-up (imports, ROM load, reset) subtracted. cule's steps are
also broken down by stage from callgrind's per-source-file attribution,
which follows inlined code to the header it came from.

With ``--envs N --threads T [T ...]`` it instead counts cule alone, N
environments stepped on each number of threads, per environment-step (every
thread's instructions summed): what threads add to the work, in locks,
waiting and handing out environments, independent of how many cores run
them. valgrind runs one thread at a time, so this says nothing of caches
shared between cores; only the totals are compared.

With ``--branches`` it runs both sides under ``valgrind --tool=cachegrind
--branch-sim=yes --cache-sim=yes`` instead and reports per step the
instructions, branches, simulated mispredicts (conditional and indirect) and
first-level data-cache misses of cule and ALE, with cule's mispredicts and
branches split by the same stages. The simulated predictor is simpler than
a modern core's, so the counts rank causes rather than predict cycles.
``--translated`` counts cule's side with each game's translated frame loop
(``AtariVectorEnv(..., translated=True)``, docs/translation.md), built
before the runs if it is not kept yet.

With ``--memory N [N ...]`` it measures what a batch of N environments asks
of memory instead: cule alone on one thread under ``valgrind
--tool=cachegrind``, whose simulated last-level cache (``--llc-mb``,
default 32 MB, 16-way) stands for a many-core CPU's shared cache. It reports
per environment-step the cache lines that missed it (read and written) and
the kilobytes they carry. While a batch's per-environment state (frame
buffers, captured frames, the resize memo, the observation stack) fits the
cache, a step misses nearly nothing; past it, every environment's state
comes from memory at every step, which all cores share.

    python -m cule.benchmarks.instructions                    # pong breakout ms_pacman space_invaders seaquest
    python -m cule.benchmarks.instructions --branches --steps 30 130   # branches, mispredicts, D1 misses
    python -m cule.benchmarks.instructions --branches --translated --steps 20 60   # the translated loops
    python -m cule.benchmarks.instructions --games pong --steps 40 200
    python -m cule.benchmarks.instructions --games pong --img-size 224 224   # observations larger than the screen
    python -m cule.benchmarks.instructions --games pong --envs 256 --threads 1 16 --steps 2 6
    python -m cule.benchmarks.instructions --games pong --memory 64 256 --steps 3 8
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cule.benchmarks import add_output_dir, check_games

GAMES = ["pong", "breakout", "ms_pacman", "space_invaders", "seaquest"]

# GC_NOTE: both children freeze what start-up allocated (gc.freeze) before
# stepping. Otherwise a full collection, which walks every object torch's or
# OpenCV's import made, lands in one run length and not the other, and
# moves the difference by up to 0.1M instructions a step between runs.

CULE_CHILD = """
import gc, os, sys
if os.environ.get("CULE_BENCH_FROM"):  # --cule-from: drop finders that would import the installed cule
    import importlib.machinery
    sys.meta_path[:] = [f for f in sys.meta_path if f is importlib.machinery.PathFinder
                        or not hasattr(f, "find_spec") or f.find_spec("cule", None) is None]
    sys.path.insert(0, os.environ["CULE_BENCH_FROM"])
import numpy as np, torch, cule
game, steps = sys.argv[1], int(sys.argv[2])
envs, threads = (int(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) > 3 else (1, 1)
height, width = map(int, os.environ["CULE_BENCH_IMG"].split("x"))
env = cule.AtariVectorEnv(game, envs, num_threads=threads, img_height=height, img_width=width,
                          translated=bool(os.environ.get("CULE_BENCH_TRANSLATED")))
env.reset(seed=0)
actions = torch.from_numpy(np.random.default_rng(0).integers(0, env.single_action_space.n, size=(steps, envs)))
gc.collect()
gc.freeze()  # start-up objects out of the collector's way (see GC_NOTE)
for k in range(steps):
    env.step(actions[k])
"""

ALE_CHILD = """
import gc, os, sys, numpy as np, cv2, ale_py
game, steps = sys.argv[1], int(sys.argv[2])
height, width = map(int, os.environ["CULE_BENCH_IMG"].split("x"))
ale = ale_py.ALEInterface()
ale.setLoggerMode(ale_py.LoggerMode.Error)
ale.setInt("random_seed", 0)
ale.setFloat("repeat_action_probability", 0.0)
ale.loadROM(ale_py.roms.get_rom_path(game))
action_set = ale.getMinimalActionSet()
rng = np.random.default_rng(0)
frames = np.zeros((2, 210, 160), np.uint8)  # PAL games: resized from their own height below
stack = np.zeros((4, height, width), np.uint8)

def observe():
    h, w = ale.getScreenDims()
    if frames.shape[1] != h:
        frames.resize((2, h, w), refcheck=False)
    pooled = np.maximum(frames[0], frames[1])
    stack[:-1] = stack[1:]
    stack[-1] = cv2.resize(pooled, (width, height), interpolation=cv2.INTER_AREA)

def reset():
    ale.reset_game()
    for _ in range(int(rng.integers(0, 30))):
        ale.act(action_set[0])
    ale.getScreenGrayscale(frames[1])
    frames[0] = 0
    stack[:] = 0
    observe()

reset()
actions = rng.integers(0, len(action_set), size=steps)
gc.collect()
gc.freeze()  # start-up objects out of the collector's way (see GC_NOTE)
for k in range(steps):
    if ale.game_over():
        reset()
        continue
    reward = 0
    for skip in range(4):
        reward += ale.act(action_set[actions[k]])
        if ale.game_over():
            break
        if skip >= 2:
            ale.getScreenGrayscale(frames[skip - 2])
    observe()
    reward = max(-1, min(1, reward))
"""

# cule's stages, by the source file callgrind attributes an instruction to
# (inlined code keeps its header's name). Checked in order; the rest of the
# process (the interpreter, torch, numpy, libc called from Python) is
# "python and torch".
STAGES = [
    ("cpu core (decode, dispatch, ALU)", ("cpu6507.hpp", "opcodes.inc", "translated_labels.inc")),
    ("bus, riot and cartridge", ("console.hpp", "cart/", "riot.hpp", "mapper_unit.hpp")),
    ("tia pixels and collisions", ("tia.hpp:cule::tia::draw_pixels", "tia.hpp:cule::tia::paint")),
    ("tia registers and catch-up", ("tia.hpp", "render_log.hpp")),
    ("ale layer and games", ("environment.hpp", "ale.hpp", "games/", "mt19937.hpp")),
    ("preprocessing", ("preprocess.hpp", "vector.hpp")),
    ("backend glue (bindings, threads)", ("host/", "common.hpp", "pybind11")),
]


def child_env() -> dict[str, str]:
    """The children's environment: one BLAS/OpenMP thread (a pool's spinning is timed, not counted work) and a
    fixed string hash. With Python's random hash seed each process walks its dicts and sets in another order
    from start-up on, which moves cachegrind's global branch history and so its simulated mispredicts: two runs
    of the same code differed by thousands a step. With the seed fixed, two identical runs agree to a few."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PYTHONHASHSEED": "0"}
    env.pop("CULE_BENCH_FROM", None)
    env["CULE_BENCH_IMG"] = f"{IMG_SIZE[0]}x{IMG_SIZE[1]}"
    env["CULE_BENCH_TRANSLATED"] = "1" if TRANSLATED else ""
    return {**env, "CULE_BENCH_FROM": CULE_FROM} if CULE_FROM else env


CULE_FROM: str | None = None  # --cule-from: the folder cule's children import cule from
IMG_SIZE = (84, 84)  # --img-size: both sides' observation height and width
TRANSLATED = False  # --translated: cule's side runs the games' translated cores (cule.translate)


def callgrind(code: str, game: str, steps: int, out: Path, *extra: int) -> int:
    """Instructions of one child run, all threads (the total callgrind reports)."""
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-c", code, game,
           str(steps), *map(str, extra)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=child_env())
    if done.returncode != 0:
        raise RuntimeError(f"callgrind run failed ({' '.join(cmd[:3])} ...):\n{done.stderr[-2000:]}")
    for line in out.read_text(errors="replace").splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"no instruction total in {out}")


def per_file_costs(out: Path) -> dict[str, int]:
    """Exclusive instructions by 'file:function' (callgrind_annotate's grouping)."""
    text = subprocess.run(["callgrind_annotate", "--auto=no", "--inclusive=no", "--threshold=100", str(out)],
                          capture_output=True, text=True, check=True).stdout
    costs = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*)$", line)
        if m and ":" in m.group(2) and not m.group(2).startswith(("Ir", "file")):
            costs[m.group(2).strip()] = costs.get(m.group(2).strip(), 0) + int(m.group(1).replace(",", ""))
    return costs


def stage_of(name: str) -> str:
    for stage, keys in STAGES:
        if any(k in name for k in keys):
            return stage
    return "python and torch"


def stages(short: Path, long: Path, per: float) -> dict[str, float]:
    """The difference of two runs' costs by stage, divided by `per`."""
    a, b = per_file_costs(short), per_file_costs(long)
    breakdown = {stage: 0.0 for stage, _ in STAGES}
    breakdown["python and torch"] = 0.0
    for name in set(a) | set(b):
        breakdown[stage_of(name)] += (b.get(name, 0) - a.get(name, 0)) / per
    return breakdown


def measure(game: str, steps: tuple[int, int], work: Path) -> dict:
    row = {"game": game}
    for side, code in (("cule", CULE_CHILD), ("ale", ALE_CHILD)):
        files = [work / f"{side}-{game}-{n}.out" for n in steps]
        totals = [callgrind(code, game, n, f) for n, f in zip(steps, files)]
        row[f"{side}_per_step"] = (totals[1] - totals[0]) / (steps[1] - steps[0])
        if side == "cule":
            row["cule_stages"] = stages(*files, steps[1] - steps[0])
    row["ratio"] = row["cule_per_step"] / row["ale_per_step"]
    return row


def measure_threads(game: str, steps: tuple[int, int], envs: int, threads: int, work: Path) -> dict:
    """cule alone: instructions per environment-step with `envs` environments on `threads` threads."""
    files = [work / f"cule-{game}-{envs}-{threads}-{n}.out" for n in steps]
    totals = [callgrind(CULE_CHILD, game, n, f, envs, threads) for n, f in zip(steps, files)]
    per = (steps[1] - steps[0]) * envs
    return dict(game=game, envs=envs, threads=threads, cule_per_env_step=(totals[1] - totals[0]) / per,
                cule_stages=stages(*files, per))


def cachegrind(code: str, game: str, steps: int, out: Path, llc_mb: int, *extra: int,
               branches: bool = False) -> dict[str, int]:
    """cachegrind's totals of one child run (Ir, D1mr, DLmr, DLmw, ...) with a last-level cache of llc_mb MB
    (0: valgrind's default for this machine); `branches` adds the branch simulation (Bc, Bcm, Bi, Bim)."""
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=yes", *([f"--LL={llc_mb << 20},16,64"] if llc_mb else []),
           *(["--branch-sim=yes"] if branches else []),
           f"--cachegrind-out-file={out}", sys.executable, "-c", code, game, str(steps), *map(str, extra)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=child_env())
    if done.returncode != 0:
        raise RuntimeError(f"cachegrind run failed ({' '.join(cmd[:4])} ...):\n{done.stderr[-2000:]}")
    events = None
    for line in out.read_text(errors="replace").splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("summary:") and events:
            return dict(zip(events, map(int, line.split()[1:])))
    raise RuntimeError(f"no summary in {out}")


def cachegrind_costs(out: Path) -> tuple[list[str], dict[str, list[int]]]:
    """A cachegrind output file's events and exclusive counts by 'file:function' (the file of the inlined
    source line, as callgrind's grouping)."""
    events, costs, file, fn = [], {}, "?", "?"
    for line in out.read_text(errors="replace").splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("fl="):
            file = line[3:]
        elif line.startswith("fn="):
            fn = line[3:]
        elif line[:1].isdigit():
            counts = [int(v) for v in line.split()[1:]]
            row = costs.setdefault(f"{file}:{fn}", [0] * len(events))
            for i, v in enumerate(counts):
                row[i] += v
    return events, costs


def branch_figures(short: Path, long: Path, per: float) -> dict:
    """Per step (the difference of two runs over `per`): instructions, branches, mispredicts, D1 misses, and
    mispredicts and branches by stage."""
    (events, a), (_, b) = cachegrind_costs(short), cachegrind_costs(long)
    index = {e: i for i, e in enumerate(events)}

    def total(costs, names):
        return sum(row[index[n]] for row in costs.values() for n in names if n in index)

    def step(names):
        return (total(b, names) - total(a, names)) / per

    kinds = (("Bcm", "Bim"), ("Bc", "Bi"), ("Bim",))
    by_stage = {stage: [0.0] * len(kinds) for stage, _ in STAGES}
    by_stage["python and torch"] = [0.0] * len(kinds)
    for name in set(a) | set(b):
        for k, names in enumerate(kinds):
            diff = sum(b.get(name, [0] * len(events))[index[n]] - a.get(name, [0] * len(events))[index[n]]
                       for n in names if n in index)
            by_stage[stage_of(name)][k] += diff / per
    return dict(instructions=step(("Ir",)), branches=step(("Bc", "Bi")), mispredicts=step(("Bcm", "Bim")),
                indirect_mispredicts=step(("Bim",)), d1_misses=step(("D1mr", "D1mw")),
                mispredicts_by_stage={k: v[0] for k, v in by_stage.items()},
                branches_by_stage={k: v[1] for k, v in by_stage.items()},
                indirect_mispredicts_by_stage={k: v[2] for k, v in by_stage.items()})


def measure_branches(game: str, steps: tuple[int, int], work: Path) -> dict:
    """cule and ALE, one environment each, under cachegrind's branch and cache simulation."""
    row = {"game": game}
    for side, code in (("cule", CULE_CHILD), ("ale", ALE_CHILD)):
        files = [work / f"br-{side}-{game}-{n}.out" for n in steps]
        for n, f in zip(steps, files):
            cachegrind(code, game, n, f, 0, branches=True)
        row[side] = branch_figures(*files, steps[1] - steps[0])
    return row


def branches_table(rows: list[dict]) -> str:
    lines = ["| game | side | instructions | branches | mispredicted | of them indirect | per 1k instructions | "
             "D1 misses |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        for side, label in (("ale", "ALE"), ("cule", "cule")):
            f = r[side]
            lines.append(f"| {r['game']} | {label} | {f['instructions'] / 1e6:.2f}M | {f['branches'] / 1e3:.0f}k | "
                         f"{f['mispredicts'] / 1e3:.1f}k ({100 * f['mispredicts'] / f['branches']:.1f}%) | "
                         f"{f.get('indirect_mispredicts', math.nan) / 1e3:.1f}k | "
                         f"{1e3 * f['mispredicts'] / f['instructions']:.1f} | {f['d1_misses'] / 1e3:.1f}k |")
    stages = list(rows[0]["cule"]["mispredicts_by_stage"])
    lines += ["", "cule's mispredicts per step by stage, thousands (branches in brackets; the indirect jumps' "
              "mispredicts after the slash):", "",
              "| stage | " + " | ".join(r["game"] for r in rows) + " |", "|---|" + "---|" * len(rows)]
    for s in stages:
        lines.append(f"| {s} | " + " | ".join(
            f"{r['cule']['mispredicts_by_stage'][s] / 1e3:.1f} ({r['cule']['branches_by_stage'][s] / 1e3:.0f})"
            f" / {r['cule'].get('indirect_mispredicts_by_stage', {}).get(s, math.nan) / 1e3:.1f}"
            for r in rows) + " |")
    # Python's share moves by thousands between runs of the same code (its allocator and caches), so the
    # emulator's own figure is the one to compare across builds.
    lines.append("| **cule without python and torch** | " + " | ".join(
        f"**{(r['cule']['mispredicts'] - r['cule']['mispredicts_by_stage']['python and torch']) / 1e3:.1f}**"
        for r in rows) + " |")
    return "\n".join(lines)


def measure_memory(game: str, steps: tuple[int, int], envs: int, llc_mb: int, work: Path) -> dict:
    """cule alone, envs environments on one thread: last-level cache misses per environment-step."""
    runs = [cachegrind(CULE_CHILD, game, n, work / f"cg-{game}-{envs}-{n}.out", llc_mb, envs, 1) for n in steps]
    per = (steps[1] - steps[0]) * envs
    d = {k: (runs[1][k] - runs[0][k]) / per for k in runs[0]}
    return dict(game=game, envs=envs, llc_mb=llc_mb, instructions=d["Ir"], ll_read_misses=d["DLmr"],
                ll_write_misses=d["DLmw"], kb_from_memory=(d["DLmr"] + d["DLmw"]) * 64 / 1024)


def memory_table(rows: list[dict]) -> str:
    lines = ["| game | envs | LL read misses per env-step | LL write misses | KB of lines | instructions per env-step |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['game']} | {r['envs']} | {r['ll_read_misses']:,.0f} | {r['ll_write_misses']:,.0f} | "
                     f"{r['kb_from_memory']:.0f} | {r['instructions'] / 1e6:.3f}M |")
    return "\n".join(lines)


def table(rows: list[dict]) -> str:
    lines = ["| game | cule instr/step | ALE instr/step | cule / ALE |", "|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['game']} | {r['cule_per_step'] / 1e6:.2f}M | {r['ale_per_step'] / 1e6:.2f}M | "
                     f"{r['ratio']:.2f} |")
    geo = math.exp(sum(math.log(r["ratio"]) for r in rows) / len(rows))
    lines.append(f"| geometric mean | | | {geo:.2f} |")
    stages = list(rows[0]["cule_stages"])
    lines += ["", "cule's instructions per step by stage (millions):", "",
              "| stage | " + " | ".join(r["game"] for r in rows) + " |", "|---|" + "---|" * len(rows)]
    for s in stages:
        lines.append(f"| {s} | " + " | ".join(f"{r['cule_stages'][s] / 1e6:.2f}" for r in rows) + " |")
    return "\n".join(lines)


def threads_table(rows: list[dict]) -> str:
    lines = ["| game | envs | threads | cule instr per env-step | vs 1 thread | backend glue (bindings, threads) |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        one = next((o for o in rows if o["game"] == r["game"] and o["threads"] == 1), None)
        vs = f"{r['cule_per_env_step'] / one['cule_per_env_step']:.3f}" if one else ""
        glue = r["cule_stages"]["backend glue (bindings, threads)"]
        lines.append(f"| {r['game']} | {r['envs']} | {r['threads']} | {r['cule_per_env_step'] / 1e6:.3f}M | {vs} | "
                     f"{glue / 1e3:.1f}k |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m cule.benchmarks.instructions", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="+", default=GAMES, help="ALE game ids")
    parser.add_argument("--steps", nargs=2, type=int, default=[50, 250], metavar=("SHORT", "LONG"),
                        help="vector steps of the two runs whose difference is counted")
    parser.add_argument("--envs", type=int, default=1,
                        help="with --threads: environments of the batch (cule only, per environment-step)")
    parser.add_argument("--threads", nargs="+", type=int,
                        help="count cule alone on each of these numbers of threads (e.g. 1 16) instead of "
                             "comparing one environment against ALE")
    parser.add_argument("--memory", nargs="+", type=int, metavar="ENVS",
                        help="instead: last-level cache misses per environment-step of cule with these numbers of "
                             "environments on one thread (cachegrind; try --steps 3 8)")
    parser.add_argument("--llc-mb", type=int, default=32,
                        help="with --memory: the simulated last-level cache, in MB (a power of two; default 32)")
    parser.add_argument("--branches", action="store_true",
                        help="instead: branches, simulated mispredicts and D1 misses per step, cule and ALE, with "
                             "cule's mispredicts by stage (cachegrind)")
    parser.add_argument("--cule-from", metavar="DIR",
                        help="cule's side imports cule from DIR, another build installed there with `pip install "
                             "--target DIR <checkout>`, so two commits are counted by the same children (ALE's side "
                             "is unchanged)")
    parser.add_argument("--img-size", nargs=2, type=int, metavar=("H", "W"), default=[84, 84],
                        help="observation height and width of both sides (default 84 84; larger than the screen "
                             "takes OpenCV's bilinear branch, as ale-py does)")
    parser.add_argument("--translated", action="store_true",
                        help="cule's side runs each game's translated frame loop (AtariVectorEnv(..., "
                             "translated=True), cule.translate), built here first if it is not kept yet (minutes "
                             "a game, not counted)")
    add_output_dir(parser, "instructions")
    args = parser.parse_args()
    global CULE_FROM, IMG_SIZE, TRANSLATED
    from cule import _core
    if not all(1 <= v <= _core.max_obs_side for v in args.img_size):
        parser.error(f"--img-size: each side in 1..{_core.max_obs_side}, got {args.img_size}")
    IMG_SIZE = tuple(args.img_size)
    if args.cule_from:
        if not (Path(args.cule_from) / "cule" / "__init__.py").is_file():
            parser.error(f"--cule-from {args.cule_from}: no cule package there (pip install --target DIR <checkout>)")
        CULE_FROM = str(Path(args.cule_from).resolve())
    if args.steps[1] <= args.steps[0]:
        parser.error("--steps SHORT LONG needs LONG > SHORT")
    if args.envs < 1 or (args.threads and min(args.threads) < 1) or (args.memory and min(args.memory) < 1):
        parser.error("--envs, --threads and --memory need positive numbers")
    if args.llc_mb < 1 or args.llc_mb & (args.llc_mb - 1):
        parser.error("--llc-mb needs a power of two (cachegrind's cache sets)")
    if shutil.which("valgrind") is None:
        parser.error("needs valgrind (Debian/Ubuntu: apt install valgrind)")
    check_games(parser, args.games)
    if args.translated:
        if args.cule_from:
            parser.error("--translated builds with the installed cule; leave out --cule-from")
        from cule import translate
        TRANSLATED = True
        for game in args.games:
            translate.build(game)
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    if args.threads:
        count_threads(args, out)
        return
    if args.memory:
        count_memory(args, out)
        return
    if args.branches:
        count_branches(args, out)
        return
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for game in args.games:
            t0 = time.perf_counter()
            rows.append(measure(game, tuple(args.steps), Path(work)))
            r = rows[-1]
            print(f"{game:16s} cule {r['cule_per_step'] / 1e6:6.2f}M  ALE {r['ale_per_step'] / 1e6:6.2f}M  "
                  f"ratio {r['ratio']:.2f}  ({time.perf_counter() - t0:.0f} s)", flush=True)
    write(out / "instructions", rows, table(rows), args.steps)


def write(stem: Path, rows: list[dict], text: str, steps: list[int]) -> None:
    """Prints the table and keeps it, with the rows, as stem.md and stem.json."""
    print("\n" + text)
    meta = dict(date=time.strftime("%Y-%m-%d"), steps=steps, command=" ".join(["python", "-m",
                "cule.benchmarks.instructions"] + sys.argv[1:]))
    stem.with_suffix(".json").write_text(json.dumps(dict(meta=meta, rows=rows), indent=1))
    stem.with_suffix(".md").write_text(f"{meta['date']}, `{meta['command']}`\n\n{text}\n")
    print(f"\nwrote {stem.with_suffix('.json')} and {stem.with_suffix('.md')}")


def count_threads(args, out: Path) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for game in args.games:
            for threads in args.threads:
                t0 = time.perf_counter()
                rows.append(measure_threads(game, tuple(args.steps), args.envs, threads, Path(work)))
                print(f"{game:16s} {args.envs} envs, {threads:2d} threads: "
                      f"{rows[-1]['cule_per_env_step'] / 1e6:.3f}M per env-step ({time.perf_counter() - t0:.0f} s)",
                      flush=True)
    write(out / "threads", rows, threads_table(rows), args.steps)


def count_branches(args, out: Path) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for game in args.games:
            t0 = time.perf_counter()
            rows.append(measure_branches(game, tuple(args.steps), Path(work)))
            c, a = rows[-1]["cule"], rows[-1]["ale"]
            print(f"{game:16s} mispredicts per step: cule {c['mispredicts'] / 1e3:.1f}k, ALE {a['mispredicts'] / 1e3:.1f}k "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
    write(out / "branches", rows, branches_table(rows), args.steps)


def count_memory(args, out: Path) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for game in args.games:
            for envs in args.memory:
                t0 = time.perf_counter()
                rows.append(measure_memory(game, tuple(args.steps), envs, args.llc_mb, Path(work)))
                r = rows[-1]
                print(f"{game:16s} {envs:5d} envs: {r['kb_from_memory']:.0f} KB of lines from memory per env-step "
                      f"({args.llc_mb} MB last-level cache, {time.perf_counter() - t0:.0f} s)", flush=True)
    write(out / "memory", rows, memory_table(rows), args.steps)


if __name__ == "__main__":
    main()
