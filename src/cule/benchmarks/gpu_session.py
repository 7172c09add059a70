"""Everything measured on a GPU, in one command that fits a time budget, headline first.

Parts, in this order, each printing its start time and writing its results
as it goes (a part cut off by its budget keeps what it wrote):

  throughput  frames/s and ms per kernel for --games at --envs environments
              (python -m cule.benchmarks.gpu_scale), ale-py's vector env
              (256 envs) on all the machine's cores in the same run;
  jax         a jitted lax.scan over cule.jax.make's step on CUDA (the
              kernels on XLA's stream) against ale-py's XLA interface
              (python -m cule.benchmarks.jax_loop);
  specialised (only when --parts names it) the game's own build (game
              and step policy compiled in) against the mapper's build,
              pong and ms_pacman at 4,096 and 16,384 envs;
  tests       tests/test_cuda_gpu.py: CUDA equal to the CPU backend, saved
              states, resets, the launch geometry, the mixed batch; the
              backend contract's CUDA cases and the JAX interop's (four
              processes at a time where pytest-xdist is installed);
  train       each of --trainers on Pong on the GPU for the time left (the
              JAX example cule.trainers.ppo_jax among them), A2C+V-trace
              with twice the others' share, in lockstep from staggered cached
              starts with CuLE's optimizer and normalised frames
              (python -m cule.benchmarks.train): frames/s while training,
              score against wall time, A2C+V-trace's weights kept every
              1.776M frames (--test-later: a test's few environments step
              slowly on a GPU), to be tested on 30 episodes afterwards on
              any machine (the time to 18 as CuLE measures it):
              python -m cule.benchmarks.train --test-snapshots
              --output-dir WORK_DIR/train_a2c_vtrace;
  ncu         Nsight Compute on cule_run (pong, 4,096 envs): occupancy,
              active threads per warp, the top stall reasons;
  memcheck    (only when --parts names it) mutated saved states of
              pitfall2 checked and loaded on the GPU under
              compute-sanitizer memcheck (tests/state_fuzz_child.py).

Each part gets its budget in seconds plus what earlier parts left unused,
and never more than the session's --budget leaves. The kernels should be
built ahead of time (python -m cule.kernels --build ... --arch sm_90, found
through CULE_KERNEL_DIR or the user cache folder): a missing binary is
compiled by NVRTC at first use, minutes a mapper. The output
folder gets at most eight files: session.log, session.json,
throughput.jsonl, throughput.png, jax_loop.jsonl, train.tar.gz (each
trainer's log.csv, tests.csv, summary.json and curve.png), ncu.txt; bulky
outputs (checkpoints) go to --work-dir.

--dry-run runs every part's command on this machine without a GPU (the
launch shim, a few environments, seconds per part), so a typo or a missing
file shows before GPU time is spent.

    python -m cule.kernels --build all --arch sm_90
    python -m cule.benchmarks.gpu_session --output-dir runs/gpu_session --budget 560
    python -m cule.benchmarks.gpu_session --dry-run
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

PY = sys.executable
THROUGHPUT_GAMES = ["pong", "breakout", "ms_pacman", "space_invaders"]
THROUGHPUT_ENVS = [1024, 4096, 16384, 65536]
TRAINERS = ["a2c_vtrace", "ppo", "rainbow", "ppo_jax"]
# Environments per trainer on a GPU: the actor-critics as CuLE's runs (about a thousand), Rainbow as many as its
# replay ratio (one gradient step per four transitions) keeps busy.
TRAIN_ENVS = {"a2c_vtrace": 1200, "ppo": 512, "rainbow": 64, "ppo_jax": 256}
# Settings over the benchmark's presets on a GPU: A2C+V-trace as CuLE's fastest Pong run (20 batches in
# lockstep, an update every step) with CuLE's optimizer and input (RMSprop at 6.5e-4, per-pixel normalised
# frames, its value-loss weight), episodes staggered by 400 random-play steps and started from cached states
# (a full reset holds up its warp), and checkpoints every 1,000 updates rather than every second. On a 2-core
# CPU these settings tested at 19.0 after 9.8M frames; without the normalised frames the run did not learn, with
# Adam it learned later, and the value-loss weight moved it either way with two seeds (docs/trainers.md). The
# agent's weights are kept every 1.776M frames and tested afterwards (test_later): on one H200 a 30-episode
# evaluation ran past 180 s, longer than half the training, since each of a test's few environments steps at
# one GPU thread's pace. The tests give the time to 18 as CuLE measures it; the log's lines trail the agent by
# one episode of each of the 1,200 environments.
# PPO and Rainbow keep their presets (the 2-core CPU's curves: PPO at 18 after 4.67M frames, Rainbow at -10
# after 1.25M, docs/trainers.md) and have their agents kept for tests afterwards as well, about five times in
# those frame counts.
TRAIN_SETS = {"a2c_vtrace": ["num_batches=20", "lockstep=True", "reset_mode=cache", "optimizer=rmsprop",
                             "learning_rate=6.5e-4", "normalize_obs=True", "vf_coef=1.0", "start_steps=400",
                             "checkpoint_every=1000", "test_every=1776000"],
              "ppo": ["test_every=1000000"],
              "rainbow": ["test_every=250000"]}
TRAIN_TESTS = ["test_episodes=30", "test_later=True"]  # every trainer's, after its own
TRAIN_TARGET = {"rainbow": -10.0}  # the score each trainer's curve is timed to (others: train's default)
TRAIN_WEIGHT = {"a2c_vtrace": 2.0}  # shares of the train part's time (others: 1)
TEST_FILES = ["tests/test_cuda_gpu.py", "tests/test_backend_contract.py", "tests/test_jax_interop.py"]


@dataclass
class Part:
    """One part of the session: its name, its budget (seconds) and what it is for."""
    name: str
    budget: float
    what: str
    minimum: float = 0.0  # what it must be left to be worth starting
    record: dict = field(default_factory=dict)


PARTS = [
    Part("throughput", 260, "frames/s of the four games at 1,024 to 65,536 envs, ale-py's vector env beside", 60),
    Part("jax", 60, "a jitted JAX loop: cule.jax.make on CUDA against ale-py's XLA interface", 30),
    Part("specialised", 50, "pong and ms_pacman: the game's own build against the mapper's", 20),
    Part("tests", 300, "tests/test_cuda_gpu.py (CULE_GPU_GAMES=pong,ms_pacman for the frame-by-frame comparison), "
         "the backend contract's and the JAX interop's CUDA cases", 40),
    Part("train", 60, "the trainers on Pong on the GPU for the time left", 45),
    Part("ncu", 60, "Nsight Compute on cule_run", 40),
    Part("memcheck", 90, "mutated saved states on the GPU under compute-sanitizer memcheck", 60),
]
# The parts a session runs unless --parts says otherwise; "specialised" answered its question on an H100
# (docs/cuda.md) and is there to ask it again; "memcheck" takes a session with a minute to spare.
DEFAULT_PARTS = ["throughput", "jax", "tests", "train", "ncu"]


def command(part: str, args, seconds: float) -> list[str] | None:
    """The command line of a part (None: nothing to run here). `seconds` is the time the part is given."""
    out, work, dry = Path(args.output_dir), Path(args.work_dir), ["--dry-run"] if args.dry_run else []
    if part == "throughput":  # a command per game, each with its share: a slow game cannot starve the others
        # ale-py once, beside the first game: building its ALEInterfaces takes minutes at 1,024 envs, and 256
        # keep 16 threads busy
        return [[PY, "-m", "cule.benchmarks.gpu_scale", "--games", game, "--envs", *map(str, args.envs),
                 "--warmup", "2", "--seconds", "1.5", "--min-steps", "3", "--ale-envs", "256" if i == 0 else "0",
                 "--ale-steps", "50", "--output-dir", str(work / "throughput"), *dry]
                for i, game in enumerate(args.games)]
    if part == "specialised":
        return [PY, "-m", "cule.benchmarks.gpu_scale", "--games", "pong", "ms_pacman", "--envs", "4096", "16384",
                "--kernels", "both", "--warmup", "2", "--seconds", "1.5", "--min-steps", "3", "--ale-envs", "0",
                "--output-dir", str(work / "throughput"), *dry]
    if part == "jax":
        if args.dry_run:
            return [PY, "-m", "cule.benchmarks.jax_loop", "--device", "cpu", "--envs", "8", "--ale-envs",
                    "--steps", "10", "--repeats", "1", "--output-dir", str(work / "jax")]
        return [PY, "-m", "cule.benchmarks.jax_loop", "--device", "cuda", "--envs", "1024", "4096", "16384",
                "--ale-envs", "64", "--steps", "50", "--repeats", "2", "--output-dir", str(work / "jax")]
    if part == "tests":
        if args.dry_run:
            return [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only", "-k", "cuda or gpu",
                    *TEST_FILES]
        import importlib.util
        parallel = ["-n", "4"] if importlib.util.find_spec("xdist") else []
        return [PY, "-m", "pytest", "-q", "-rfs", "-p", "no:cacheprovider", *parallel, "-k", "cuda or gpu",
                *TEST_FILES]
    if part == "train":  # a command per trainer, in --trainers' order, each with its weighted share
        from cule.benchmarks import train  # the target, and the preset and --set parsing train.py applies

        cmds, weights = [], [TRAIN_WEIGHT.get(t, 1.0) for t in args.trainers]
        for trainer, weight in zip(args.trainers, weights):
            minutes = max(0.2, (seconds * weight / sum(weights) - 25) / 60)  # set-up and summary take the rest
            where = ["--output-dir", str(work / f"train_{trainer}"), "--trainer", trainer, "--eval-episodes", "0",
                     "--target", str(TRAIN_TARGET.get(trainer, train.DEFAULT_TARGET))]
            if trainer == "ppo_jax":  # the JAX example (cule.jax.make inside jit), its own command line
                envs = "4" if args.dry_run else str(args.train_envs or TRAIN_ENVS[trainer])
                cmds.append([PY, "-m", "cule.trainers.ppo_jax", "--game", "pong", "--device",
                             "cpu" if args.dry_run else "cuda", "--num-envs", envs,
                             *(["--num-steps", "16", "--total-frames", "512"] if args.dry_run else []),
                             "--minutes", f"{minutes:.2f}", "--output-dir", str(work / f"train_{trainer}")])
                continue
            sets = [arg for item in TRAIN_SETS[trainer] + TRAIN_TESTS for arg in ("--set", item)]
            if args.dry_run:  # the GPU's settings, on as few environments as they allow
                batches = train.trainer_settings(trainer, TRAIN_SETS[trainer]).get("num_batches")
                envs = str(2 * batches if batches else 8)
                cmds.append([PY, "-m", "cule.benchmarks.train", "--device", "cpu", "--num-envs", envs, "--frames",
                             "1280", "--minutes", "0.2", *sets, *where])
            else:
                envs = args.train_envs or TRAIN_ENVS.get(trainer, 1024)
                cmds.append([PY, "-m", "cule.benchmarks.train", "--device", "cuda", "--num-envs", str(envs),
                             "--minutes", f"{minutes:.2f}", *sets, *where])
        return cmds, weights
    if part == "memcheck":
        child = [PY, "tests/state_fuzz_child.py", "pitfall2", "cpu" if args.dry_run else "cuda", "vector", "20", "1"]
        if args.dry_run or not shutil.which("compute-sanitizer"):
            return child
        return ["compute-sanitizer", "--tool", "memcheck", "--error-exitcode", "1", *child]
    if part == "ncu":
        inner = [PY, "-m", "cule.benchmarks.gpu_scale", "--games", "pong", "--envs", "4096", "--warmup", "2",
                 "--steps", "1", "--min-steps", "1", "--ale-envs", "0", "--output-dir", str(work / "ncu"), *dry]
        if args.dry_run or not shutil.which("ncu"):
            return inner
        return ["ncu", "--kernel-name", "cule_run", "--launch-skip", "2", "--launch-count", "1",
                "--section", "LaunchStats", "--section", "Occupancy", "--section", "WarpStateStats",
                "--section", "SchedulerStats", "--section", "SpeedOfLight",
                "--metrics", "smsp__thread_inst_executed_per_inst_executed.ratio,"
                             "smsp__warps_active.avg.pct_of_peak_sustained_active", *inner]
    raise ValueError(part)


def keep(part: str, args) -> None:
    """Copies a part's figures from the work folder into the output folder, under the session's names."""
    out, work = Path(args.output_dir), Path(args.work_dir)
    pairs = {"throughput": [("throughput/gpu_scale.jsonl", "throughput.jsonl"),
                            ("throughput/gpu_scale.png", "throughput.png")],
             "jax": [("jax/jax_loop.jsonl", "jax_loop.jsonl")]}
    pairs["specialised"] = pairs["throughput"]
    if part == "train":  # one file for every trainer's log, summary and curve
        import tarfile
        with tarfile.open(out / "train.tar.gz", "w:gz") as tar:
            for trainer in args.trainers:
                for name in ("log.csv", "tests.csv", "summary.json", "curve.png"):
                    path = work / f"train_{trainer}" / name
                    if path.is_file():
                        tar.add(path, arcname=f"train_{trainer}/{name}")
    for src, dst in pairs.get(part, []):
        if (work / src).is_file():
            shutil.copyfile(work / src, out / dst)


def machine() -> str:
    """What the figures were measured on."""
    lines = [f"date {time.strftime('%Y-%m-%d %H:%M:%S %Z')}", f"python {platform.python_version()}",
             f"cpus {os.cpu_count()}"]
    try:
        import torch
        lines.append(f"torch {torch.__version__}, cuda {torch.version.cuda}")
        if torch.cuda.is_available():
            p = torch.cuda.get_device_properties(0)
            lines.append(f"gpu {p.name}, {p.multi_processor_count} SMs, {p.total_memory / 2**30:.0f} GiB, "
                         f"capability {p.major}.{p.minor}")
    except ImportError:
        pass
    if shutil.which("nvidia-smi"):
        lines.append(subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm",
                                     "--format=csv,noheader"], capture_output=True, text=True).stdout.strip())
    if shutil.which("lscpu"):
        info = subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines()
        lines += [line for line in info if line.startswith(("Model name", "L3 cache"))]
    from cule import _core
    from cule.kernels import KernelBuild, find_binary, search_dirs
    arch = "sm_90"
    try:
        import torch
        if torch.cuda.is_available():
            arch = "sm_{}{}".format(*torch.cuda.get_device_capability(0))
    except ImportError:
        pass
    found = {cart: find_binary(KernelBuild(cart), arch) for cart in _core.mappers}
    lines.append(f"kernels for {arch} in {' '.join(map(str, search_dirs()))}: prebuilt for "
                 f"{' '.join(c for c, p in found.items() if p) or 'no mapper'}; NVRTC would build "
                 f"{' '.join(c for c, p in found.items() if not p) or 'none'}")
    return "\n".join(lines)


def run_part(part: Part, cmd: list[str], seconds: float, log) -> dict:
    """Runs one part's command with a deadline, its output to the console and the session log."""
    t0 = time.perf_counter()
    log(f"\n=== {part.name} ({time.strftime('%H:%M:%S')}, {seconds:.0f} s): {part.what}\n$ {' '.join(cmd)}")
    # JAX would otherwise take three quarters of the GPU's memory at its first use, beside torch's
    env = dict(os.environ, PYTHONUNBUFFERED="1", XLA_PYTHON_CLIENT_PREALLOCATE="false")
    if part.name == "tests":
        env.setdefault("CULE_GPU_GAMES", "pong,ms_pacman")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1, env=env,
                            start_new_session=True)
    stopped = threading.Event()

    def stop() -> None:  # the whole process group: a part's own children too
        stopped.set()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    watchdog = threading.Timer(seconds, stop)
    watchdog.start()
    for line in proc.stdout:
        log(line.rstrip("\n"))
    proc.wait()
    watchdog.cancel()
    timed_out = stopped.is_set()
    if timed_out:
        log(f"--- {part.name}: stopped at its budget of {seconds:.0f} s")
    elapsed = time.perf_counter() - t0
    log(f"--- {part.name}: exit {proc.returncode}, {elapsed:.0f} s")
    return dict(part=part.name, rc=proc.returncode, seconds=round(elapsed, 1), budget=round(seconds),
                timed_out=timed_out, command=" ".join(cmd))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m cule.benchmarks.gpu_session", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output-dir", "--out-dir", dest="output_dir", default="runs/gpu_session",
                        help="the session's figures and log (at most eight files)")
    parser.add_argument("--work-dir", default=None, help="bulky outputs (default: OUTPUT_DIR/../gpu_session_work)")
    parser.add_argument("--budget", type=float, default=560, help="seconds for all parts together")
    parser.add_argument("--parts", nargs="+", default=DEFAULT_PARTS, choices=[p.name for p in PARTS],
                        help="parts to run, in the session's order")
    parser.add_argument("--games", nargs="+", default=THROUGHPUT_GAMES, help="throughput: ALE game ids")
    parser.add_argument("--envs", nargs="+", type=int, default=THROUGHPUT_ENVS, help="throughput: environment counts")
    parser.add_argument("--trainers", nargs="+", default=["a2c_vtrace"], choices=TRAINERS,
                        help="train: the trainers run on Pong, in this order")
    parser.add_argument("--train-envs", type=int, default=0,
                        help="train: environments of every trainer (0: " +
                             ", ".join(f"{k} {v}" for k, v in TRAIN_ENVS.items()) + ")")
    parser.add_argument("--part-budget", nargs="+", default=[], metavar="PART=SECONDS",
                        help="a part's budget instead of its default (" +
                             ", ".join(f"{p.name} {p.budget:.0f}" for p in PARTS) + ")")
    parser.add_argument("--dry-run", action="store_true",
                        help="no GPU: each part's command on the CPU (the launch shim, a few environments)")
    args = parser.parse_args(argv)
    budgets = {}
    for item in args.part_budget:
        name, _, value = item.partition("=")
        if name not in {p.name for p in PARTS} or not value.replace(".", "", 1).isdigit():
            parser.error(f"--part-budget takes PART=SECONDS with PART one of {', '.join(p.name for p in PARTS)}; "
                         f"got {item!r}")
        budgets[name] = float(value)
    out = Path(args.output_dir)
    args.work_dir = args.work_dir or str(out.parent / f"{out.name}_work")
    out.mkdir(parents=True, exist_ok=True)
    Path(args.work_dir).mkdir(parents=True, exist_ok=True)
    log_file = open(out / "session.log", "a")

    def log(text: str) -> None:
        print(text, flush=True)
        log_file.write(text + "\n")
        log_file.flush()

    start = time.perf_counter()
    log(f"cule GPU session{' (dry run: no GPU, the launch shim)' if args.dry_run else ''}\n{machine()}")
    parts = [Part(p.name, budgets.get(p.name, p.budget), p.what, p.minimum) for p in PARTS if p.name in args.parts]
    records, slack = [], 0.0
    for i, part in enumerate(parts):
        left = args.budget - (time.perf_counter() - start)
        # the trainer takes the time left, but leaves later parts their budgets; others leave their minimums
        later = sum(p.budget if part.name == "train" else p.minimum for p in parts[i + 1:])
        seconds = left - later if part.name == "train" else min(part.budget + slack, left - later)
        if args.dry_run:
            seconds = max(seconds, 120)  # the shim and the CPU are slow; the budget is the GPU's
        if seconds < part.minimum and not args.dry_run:
            log(f"\n=== {part.name}: skipped, {seconds:.0f} s left of the budget (needs {part.minimum:.0f})")
            records.append(dict(part=part.name, skipped=True))
            continue
        cmds = command(part.name, args, seconds)
        cmds, weights = cmds if isinstance(cmds, tuple) else (cmds, None)
        cmds = cmds if isinstance(cmds[0], list) else [cmds]
        weights = weights or [1.0] * len(cmds)
        t_part, part_records = time.perf_counter(), []
        for j, cmd in enumerate(cmds):
            share = (seconds - (time.perf_counter() - t_part)) * weights[j] / sum(weights[j:])
            part_records.append(run_part(part, cmd, share, log))
            keep(part.name, args)
        record = dict(part=part.name, rc=max((r["rc"] for r in part_records), key=abs),
                      seconds=round(time.perf_counter() - t_part, 1), budget=round(seconds),
                      timed_out=any(r["timed_out"] for r in part_records),
                      commands=[r["command"] for r in part_records])
        records.append(record)
        slack = max(0.0, seconds - record["seconds"])
        (out / "session.json").write_text(json.dumps(dict(parts=records, dry_run=args.dry_run), indent=1) + "\n")
    if "ncu" in args.parts and not args.dry_run:
        ncu_log = Path(out / "session.log").read_text().split("=== ncu", 1)
        if len(ncu_log) == 2:
            (out / "ncu.txt").write_text("=== ncu" + ncu_log[1])
    log(f"\nsession: {time.perf_counter() - start:.0f} s of {args.budget:.0f}; "
        f"{sum(r.get('rc') == 0 for r in records)} of {len(records)} parts exited 0")
    (out / "session.json").write_text(json.dumps(dict(parts=records, dry_run=args.dry_run), indent=1) + "\n")
    if any(r.get("rc") not in (0, None) for r in records):
        raise SystemExit(1)
    if not any("rc" in r for r in records):
        raise SystemExit(f"no part ran: the budget ({args.budget:.0f} s) is below what the parts asked for need")


if __name__ == "__main__":
    main()
