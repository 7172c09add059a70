"""Learning curves: a trainer on a game for a wall-clock budget, the time and frames to a target score, and the
final agent evaluated as the papers evaluate it.

Not a test. Runs one of cule's trainers (``--trainer a2c_vtrace``, ``ppo`` or
``rainbow``) on ``--device`` for ``--minutes`` of wall time or ``--frames``
emulator frames, whichever ends first, with that trainer's preset (below;
``--set NAME=VALUE`` changes any of the trainer's arguments). Then it
evaluates the final agent with 30 random no-ops at the start of each of
``--eval-episodes`` episodes (30), no sticky actions, episodes capped at
108,000 frames (Mnih et al. 2015; Rainbow acts epsilon-greedily with epsilon
0.001, the actor-critics sample their policy), and writes to ``--output-dir``:

  log.csv        the trainer's log: frames, wall time, the mean return of the
                 episodes finished since the previous line, losses
  tests.csv      with --test-every: the agent tested every that many frames
                 on --test-episodes episodes (10) by the same protocol,
                 training suspended meanwhile (CuLE's and the DQN papers'
                 test scores during training; the clocks leave the tests out)
  curve.png      score against frames and against wall time, the target
                 dashed, the tests as points
  eval.json      the evaluation's scores
  summary.json   frames, wall minutes and CPU minutes (all the trainer's
                 threads: a figure that other work on the machine does not
                 inflate) to the target (first log line at or above it, first
                 time the mean of 20 lines was, and first test that was) and
                 at the end, best and final score, the evaluation as a raw and
                 a human-normalised score, the preset and the machine

A log line averages the episodes that ended since the one before, so it
trails the agent by about one episode of every environment: with 1,200
Pong environments that is millions of frames. The tests have no such lag;
CuLE's convergence curves plot them.

``--resume`` continues the run in ``--output-dir`` from its last checkpoint for
another ``--minutes`` (its log and wall clock continue); a run stopped by a
crash or ``kill`` loses at most the updates since that checkpoint. Ctrl-C
stops the training at the end of its update with a checkpoint, and the
evaluation, summary and curve follow; a second Ctrl-C stops at once.
``--eval-only`` evaluates the checkpoint in ``--output-dir`` on ``--device``
without training and adds the evaluation to its summary.json: an agent
trained on a GPU can be evaluated on a CPU (the checkpoint may hold the
weights alone, without the optimizer's state).

Presets (why these: docs/trainers.md):
  a2c_vtrace  32 envs in 4 batches, the trainer's defaults (CuLE's Table 4)
  ppo         cleanrl's Atari PPO: 8 envs, 128 steps, lr 2.5e-4 annealed over
              40M frames (whatever --frames or --minutes stop at), Adam eps
              1e-5, 4 epochs of 4 minibatches, clip 0.1
  rainbow     data-efficient Rainbow (van Hasselt et al. 2019), what learns
              most per frame on a CPU: 8 envs, its two-layer torso, one
              gradient step per env step, 20-step returns, noise scale 0.1,
              lr 1e-4, target copy every 2,000 gradient steps, learning after
              1,600 transitions (Rainbow's own settings: --set network=nature
              --set env_steps_per_update=4 --set n_step=3 --set
              noisy_sigma0=0.5 --set learning_starts=20000)

    python -m cule.benchmarks.train --trainer ppo --game pong --minutes 120
    python -m cule.benchmarks.train --trainer ppo --game pong --minutes 60 --resume   # and then some
    python -m cule.benchmarks.train --trainer rainbow --game pong --minutes 120 --target -10
    python -m cule.benchmarks.train --trainer rainbow --set noisy=False --minutes 20 --output-dir runs/no_noisy
    python -m cule.benchmarks.train --device cuda --num-envs 1200 --set num_batches=20 --set lockstep=True --minutes 10
    python -m cule.benchmarks.train --minutes 60 --test-every 1000000   # the agent tested every 1M frames
    python -m cule.benchmarks.train --eval-only --output-dir runs/train   # that run's agent (its trainer, its game), here
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import datetime
import json
import os
import platform
import time
from pathlib import Path

from cule.benchmarks import add_output_dir
from cule.trainers.common.args import ARGUMENT_ERRORS
from cule.trainers.common.logger import TESTS

# Each trainer's settings for a curve, over its Args defaults; --set overrides them.
PRESETS: dict[str, dict] = {
    "a2c_vtrace": dict(num_envs=32, num_batches=4),
    "ppo": dict(num_envs=8, num_steps=128, learning_rate=2.5e-4, adam_eps=1e-5, update_epochs=4,
                num_minibatches=4, clip_coef=0.1, total_frames=40_000_000, schedule_frames=40_000_000),
    "rainbow": dict(num_envs=8, network="data-efficient", env_steps_per_update=1.0, learning_rate=1e-4, n_step=20,
                    noisy_sigma0=0.1, target_update_every=2000, learning_starts=1600, buffer_size=300_000,
                    log_every=250, num_threads=1),
}
DEFAULT_TRAINER, DEFAULT_GAME = "a2c_vtrace", "pong"
DEFAULT_TARGET = 18.0  # Pong's: the mean score CuLE and the papers time runs to
# The trainer's arguments this command sets from its own flags, on --resume too.
INVOCATION_ARGS = frozenset({"game", "seed", "device", "output_dir", "resume", "max_minutes", "eval_episodes",
                             "eval_noops", "quiet", "video"})
SMOOTHED_LINES = 20  # log lines whose mean is the smoothed score (the curve's bold line)


def trainer_module(name: str):
    import importlib

    return importlib.import_module(f"cule.trainers.{name}")


def trainer_settings(trainer: str, pairs: list[str]) -> dict:
    """The trainer's preset with --set NAME=VALUE pairs over it (typed as the trainer's Args fields)."""
    # the arguments this command sets from its own flags are not --set's: they would be overwritten
    defaults = {f.name: f.default for f in dataclasses.fields(trainer_module(trainer).Args)
                if f.name not in INVOCATION_ARGS}
    return {**PRESETS[trainer], **parse_sets(pairs, defaults)}


def parse_sets(pairs: list[str], fields: dict) -> dict:
    """--set NAME=VALUE pairs as typed values of the trainer's Args fields; names them when unknown."""
    out = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        name = name.replace("-", "_")
        if not sep or name not in fields:
            own = f" ({name} comes from this command's own flags: see --help)" if name in INVOCATION_ARGS else ""
            raise SystemExit(f"--set {pair!r}{own}: expected NAME=VALUE with NAME one of the trainer's arguments: "
                             f"{', '.join(sorted(fields))}")
        kind = type(fields[name])
        if kind is bool:
            if text.lower() not in ("true", "false", "1", "0"):
                raise SystemExit(f"--set {pair!r}: {name} takes True or False")
            out[name] = text.lower() in ("true", "1")
        else:
            try:
                out[name] = kind(text)
            except ValueError:
                what = {int: "an integer", float: "a number"}.get(kind, kind.__name__)
                raise SystemExit(f"--set {pair!r}: {name} takes {what}") from None
    return out


def saved_run(args, flag: str) -> tuple[dict, str, object, dict]:
    """The run in --output-dir, for --resume or --eval-only (`flag`): its checkpoint, its trainer (named in the
    checkpoint, or in summary.json for checkpoints that do not name it), its module and the arguments it was
    saved with. --trainer and --game may only agree with the run's."""
    from cule.trainers.common import checkpoint

    out = Path(args.output_dir)
    state = checkpoint.load(out)
    if state is None:
        raise SystemExit(f"{flag}: no {checkpoint.NAME} in {out}; give --output-dir the folder of a run")
    path = out / "summary.json"
    trainer = state.get("trainer") or (json.loads(path.read_text()).get("trainer") if path.exists() else None)
    trainer = trainer or args.trainer or DEFAULT_TRAINER
    if args.trainer and args.trainer != trainer:
        raise SystemExit(f"{flag}: the run in {out} trained {trainer}, not {args.trainer}; "
                         f"leave --trainer out or give --trainer {trainer}")
    module = trainer_module(trainer)
    fields = {f.name for f in dataclasses.fields(module.Args)}
    saved = {k: v for k, v in state["args"].items() if k in fields}
    game = saved.get("game") or args.game or DEFAULT_GAME
    if args.game and args.game != game:
        raise SystemExit(f"{flag}: the checkpoint in {out} was trained on {game}, not {args.game}; "
                         f"leave --game out or give --game {game}")
    saved["game"] = game
    return state, trainer, module, saved


def resumed_run(args) -> tuple[str, dict]:
    """--resume: the trainer and the settings of the run in --output-dir (saved_run), with --set and --num-envs
    over them; the trainer refuses those if they change what the run trains. Fills args.game, args.seed and
    args.device from the run when they were not given."""
    _, trainer, module, saved = saved_run(args, "--resume")
    fields = {f.name: f.default for f in dataclasses.fields(module.Args)}
    # the run's settings, its pace and checkpoints included; this command's own flags give the rest
    settings = {k: v for k, v in saved.items() if k not in INVOCATION_ARGS}
    settings.update(parse_sets(args.set, fields))
    if args.num_envs:
        settings["num_envs"] = args.num_envs
    args.game = saved["game"]
    args.seed = saved.get("seed", 1) if args.seed is None else args.seed
    args.device = args.device or saved.get("device", "cpu")
    return trainer, settings


def _at(row: dict) -> dict:
    """A log row's frames, wall minutes and CPU minutes (all the trainer's threads; None in older logs)."""
    cpu = row.get("cpu_time")
    return dict(minutes=round(float(row["wall_time"]) / 60, 2), frames=int(float(row["frames"])),
                cpu_minutes=round(float(cpu) / 60, 2) if cpu not in (None, "") else None)


def first_reaching(rows: list[dict], scores: list[float], target: float) -> dict | None:
    """Frames, wall and CPU minutes of the first row whose score is at least target, or None."""
    row = next((r for r, s in zip(rows, scores) if s >= target), None)
    return None if row is None else _at(row)


def summarise(output_dir: Path, target: float | None) -> dict:
    """The curve's figures from log.csv: first time and frames at the target (one line, and the mean of
    SMOOTHED_LINES lines; left out when target is None), best and final scores; and from tests.csv, when the
    run tested its agent, the same of the tests."""
    from cule.trainers.common.evaluate import rolling_mean

    every = list(csv.DictReader(open(output_dir / "log.csv")))
    rows = [r for r in every if r.get("episode_return") not in (None, "", "nan")]
    scores = [float(r["episode_return"]) for r in rows]
    smooth = rolling_mean(scores, SMOOTHED_LINES)
    reaching = {} if target is None else dict(target=target, reached=first_reaching(rows, scores, target),
                                              smoothed_reached=first_reaching(rows, smooth, target))
    return dict(**reaching, smoothed_lines=SMOOTHED_LINES,
                best_score=max(scores, default=None), final_score=scores[-1] if scores else None,
                best_smoothed_score=round(max(smooth), 2) if smooth else None,
                final_smoothed_score=round(smooth[-1], 2) if smooth else None,
                at_end=_at(every[-1]) if every else None, **tests_summary(output_dir, target))


def tests_summary(output_dir: Path, target: float | None) -> dict:
    """summary.json's block of the tests during training (tests.csv; empty when there were none): the first
    test at or above the target, the best and the last, each with its frames and training minutes."""
    path = output_dir / TESTS
    rows = [r for r in csv.DictReader(open(path)) if r.get("score") not in (None, "")] if path.exists() else []
    if not rows:
        return {}
    scores = [float(r["score"]) for r in rows]
    best = max(range(len(rows)), key=scores.__getitem__)
    return dict(tests=dict(
        count=len(rows), episodes=int(float(rows[-1]["episodes"])),
        **({} if target is None else dict(reached=first_reaching(rows, scores, target))),
        best=dict(score=scores[best], **_at(rows[best])), last=dict(score=scores[-1], **_at(rows[-1]))))


def plot(output_dir: Path, title: str, target: float) -> Path | None:
    from cule.benchmarks import pyplot
    from cule.trainers.common.evaluate import plot_curve

    return None if pyplot() is None else plot_curve(output_dir, title=title, target=target)


def evaluation_summary(out: Path, trainer: str, game: str) -> dict:
    """summary.json's evaluation block from eval.json (empty when there is none)."""
    from cule.trainers.common.human_scores import RANDOM_AND_HUMAN, human_normalised

    if not (out / "eval.json").exists():
        return {}
    scores = json.loads((out / "eval.json").read_text())["scores"]
    mean = sum(scores) / len(scores)
    return dict(evaluation=dict(
        protocol="30 random no-ops, no sticky actions, 108,000-frame cap" +
                 (", epsilon 0.001" if trainer == "rainbow" else ", policy sampled"),
        episodes=len(scores), mean=round(mean, 2), min=min(scores), max=max(scores),
        human_normalised=round(human_normalised(game, mean), 1) if game in RANDOM_AND_HUMAN else None))


def after_the_run(args, flag: str, **settings) -> tuple[dict, dict, str, str]:
    """The run in --output-dir (its checkpoint) taken up again on args.device without training, with the
    trainer's `settings` over its own: the trainer goes straight to the end of a run (tests of snapshots, the
    evaluation). Returns the checkpoint, summary.json's contents so far, the trainer and the game."""
    state, trainer, module, saved = saved_run(args, flag)
    out, game = Path(args.output_dir), saved["game"]
    path = out / "summary.json"
    summary = json.loads(path.read_text()) if path.exists() else {}
    summary.setdefault("trainer", trainer)
    summary.setdefault("game", game)
    # total_frames 0: the run is past its end, so nothing trains; the fewest environments its arguments allow,
    # since none of them steps
    module.train(module.Args(**{**saved, "device": args.device, "output_dir": str(out), "resume": True,
                                "total_frames": 0, "max_minutes": 0.0, "eval_episodes": 0, "eval_noops": True,
                                "num_envs": saved.get("num_batches", 1), "quiet": args.quiet, **settings}))
    return state, summary, trainer, game


def evaluate_only(args) -> dict:
    """--eval-only: the checkpoint's agent evaluated on args.device without training, added to summary.json."""
    if not args.eval_episodes:
        raise SystemExit("--eval-only needs --eval-episodes above 0")
    state, summary, trainer, game = after_the_run(args, "--eval-only", eval_episodes=args.eval_episodes)
    out = Path(args.output_dir)
    summary.update(evaluation_summary(out, trainer, game))
    summary["evaluation"].update(device=args.device, date=datetime.date.today().isoformat(), frames=state["frames"])
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    if not args.quiet:
        print(json.dumps(summary["evaluation"], indent=1))
    return summary


def test_snapshots(args) -> dict:
    """--test-snapshots: the snapshots a run with --test-later kept, tested on args.device into its tests.csv;
    summary.json's tests and the curve follow."""
    from cule.trainers.common.run import SNAPSHOTS

    out = Path(args.output_dir)
    if not any((out / SNAPSHOTS).glob("test_*.pt")):
        raise SystemExit(f"--test-snapshots: no snapshots in {out / SNAPSHOTS}; they are kept by a run with "
                         f"--test-every and --test-later")
    settings = {} if args.test_episodes is None else {"test_episodes": args.test_episodes}
    # the tests are written through the run's log, which a quiet trainer does not keep (--quiet: no bar, below)
    _, summary, trainer, game = after_the_run(args, "--test-snapshots", test_snapshots=True, quiet=False,
                                              **settings)
    summary.update(tests=tests_summary(out, args.target).get("tests"))
    summary["tests"] = dict(summary["tests"] or {}, device=args.device, date=datetime.date.today().isoformat())
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    plot(out, f"{trainer} on {game}", args.target)
    if not args.quiet:
        print(json.dumps(summary["tests"], indent=1))
    return summary


def machine() -> dict:
    import torch

    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else None
    return dict(cpu=cpu, cpus=os.cpu_count(), gpu=gpu, torch=torch.__version__)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m cule.benchmarks.train", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trainer", choices=sorted(PRESETS), default=None,
                        help=f"which trainer (default {DEFAULT_TRAINER}; with --eval-only, the run's)")
    parser.add_argument("--game", default=None, help=f"ALE game id (default {DEFAULT_GAME}; with --eval-only, the run's)")
    parser.add_argument("--minutes", type=float, default=60.0, help="wall-clock budget of this run (or this resume)")
    parser.add_argument("--frames", type=int, default=0,
                        help="emulator frames to stop at, counted over resumes too (0: only the minutes decide)")
    parser.add_argument("--target", type=float, default=DEFAULT_TARGET,
                        help="score whose first time and frame count are reported (Pong: 18)")
    parser.add_argument("--device", default=None,
                        help="torch device of the environments and the network (default cpu; with --resume, the run's)")
    parser.add_argument("--num-envs", type=int, default=0, help="environments (0: the preset's)")
    parser.add_argument("--torch-threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
    parser.add_argument("--eval-episodes", type=int, default=30, help="episodes of the final evaluation (0: none)")
    parser.add_argument("--test-every", type=int, default=None, metavar="FRAMES",
                        help="test the agent every this many emulator frames, training suspended meanwhile, into "
                             "tests.csv (default 0, none; with --resume, the run's)")
    parser.add_argument("--test-episodes", type=int, default=None,
                        help="episodes of each test (default 10; with --resume, the run's)")
    parser.add_argument("--test-later", action="store_true",
                        help="with --test-every: keep the agent's weights at each test point (output-dir/snapshots/) "
                             "instead of testing it then; on a GPU, where a test's few environments step slowly, "
                             "training runs on and --test-snapshots tests them afterwards, on any device")
    parser.add_argument("--test-snapshots", action="store_true",
                        help="no training: test the snapshots that --test-later kept in --output-dir on --device, "
                             "as their tests would have run during training, into tests.csv and summary.json")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of the environments, the network and the sampling (default 1; with --resume, the run's)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="any argument of the trainer (python -m cule.trainers.TRAINER --help), over the preset; "
                             "repeatable: --set noisy=False --set n_step=1")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in --output-dir from its checkpoint, with its trainer, game and "
                             "settings (flags given must agree with them)")
    parser.add_argument("--eval-only", action="store_true",
                        help="no training: evaluate the checkpoint in --output-dir on --device, into its summary.json")
    parser.add_argument("--quiet", action="store_true", help="no progress bar, no printed summary")
    add_output_dir(parser, "train")
    args = parser.parse_args(argv)
    if args.minutes <= 0 and args.frames <= 0:
        parser.error("give --minutes or --frames a positive value: the run needs an end")
    if args.quiet:
        os.environ["TQDM_DISABLE"] = "1"  # tqdm's own switch; the log is written all the same
    if args.torch_threads:
        import torch
        torch.set_num_threads(args.torch_threads)

    if args.eval_only or args.test_snapshots:
        args.device = args.device or "cpu"
        if args.test_snapshots:
            summary = test_snapshots(args)
        return evaluate_only(args) if args.eval_only else summary
    if args.resume:
        args.trainer, settings = resumed_run(args)
    else:
        args.trainer = args.trainer or DEFAULT_TRAINER
        args.game = args.game or DEFAULT_GAME
        args.seed = 1 if args.seed is None else args.seed
        args.device = args.device or "cpu"
        settings = trainer_settings(args.trainer, args.set)
        if args.num_envs:
            settings["num_envs"] = args.num_envs
        settings.setdefault("total_frames", 10**10)  # the minutes decide
    if args.frames:
        settings["total_frames"] = args.frames
    for name in ("test_every", "test_episodes"):
        if getattr(args, name) is not None:
            settings[name] = getattr(args, name)
    if args.test_later:
        settings["test_later"] = True
    module = trainer_module(args.trainer)
    out = Path(args.output_dir)
    from cule.trainers.common.run import ctrl_c_stops

    try:  # the trainer's own checks (counts, names, game, device): one line, before anything runs
        run_args = module.Args(**{**settings, "game": args.game, "device": args.device, "seed": args.seed,
                                  "output_dir": str(out), "max_minutes": args.minutes if args.minutes > 0 else 0.0,
                                  "resume": args.resume, "eval_episodes": args.eval_episodes, "eval_noops": True})
    except ARGUMENT_ERRORS as e:
        parser.error(str(e))

    started = time.perf_counter()
    with ctrl_c_stops(str(out)):  # the first Ctrl-C ends the training; the summary and curve follow
        module.train(run_args)
    summary = dict(trainer=args.trainer, game=args.game, device=args.device,
                   date=datetime.date.today().isoformat(), this_run_minutes=round((time.perf_counter() - started) / 60, 2),
                   **summarise(out, args.target), settings={k: v for k, v in settings.items()},
                   machine=machine())
    if args.eval_episodes:
        summary.update(evaluation_summary(out, args.trainer, args.game))
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    plot(out, f"{args.trainer} on {args.game}", args.target)
    if not args.quiet:
        print(json.dumps(summary, indent=1))
    return summary


if __name__ == "__main__":
    main()
