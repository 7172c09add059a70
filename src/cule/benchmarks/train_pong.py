"""Training benchmark: a trainer on Pong for a wall-clock budget; the curve and the time to a mean score of 18.

Not a test. Runs `cule.trainers.a2c_vtrace` (or `--trainer ppo`, `--trainer rainbow`)
on this machine's CPU (or `--device cuda`) for `--minutes` of wall time or
`--frames` emulator frames, whichever ends first, then reads its log.csv and reports the first time
and frame count at which the mean score of the episodes finished since the
previous log line reached `--target` (default 18),
and when the mean of 20 such lines (about 20 episodes with 32 environments)
did, with the learning curve as a PNG and the figures as JSON in `--output-dir`.
`--resume` continues a run in `--output-dir` for another `--minutes` (its log and
wall clock continue from the last checkpoint).

    python -m cule.benchmarks.train_pong --minutes 60
    python -m cule.benchmarks.train_pong --minutes 20 --resume    # and then some
    python -m cule.benchmarks.train_pong --trainer ppo --minutes 20 --num-envs 16
    python -m cule.benchmarks.train_pong --trainer rainbow --game breakout --frames 160000 --num-envs 8 --torch-threads 1
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import time
from pathlib import Path

from cule.benchmarks import add_output_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trainer", choices=["a2c_vtrace", "ppo", "rainbow"], default="a2c_vtrace",
                        help="which trainer")
    parser.add_argument("--game", default="pong", help="ALE game id")
    parser.add_argument("--minutes", type=float, default=60.0, help="wall-clock budget")
    parser.add_argument("--frames", type=int, default=0, help="frame budget (0: none, the minutes decide)")
    parser.add_argument("--torch-threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
    parser.add_argument("--num-envs", type=int, default=32, help="environments")
    parser.add_argument("--device", default="cpu", help="torch device")
    parser.add_argument("--target", type=float, default=18.0, help="mean score whose first time is reported")
    add_output_dir(parser, "train_pong")
    parser.add_argument("--resume", action="store_true", help="continue the run in --output-dir from its checkpoint")
    args = parser.parse_args()
    if args.torch_threads:
        import torch
        torch.set_num_threads(args.torch_threads)
    total_frames = args.frames or 10**9

    if args.trainer == "ppo":
        from cule.trainers.ppo import Args, train
        run = Args(game=args.game, num_envs=args.num_envs, device=args.device, output_dir=args.output_dir,
                   total_frames=total_frames, max_minutes=args.minutes, learning_rate=2.5e-4, resume=args.resume)
    elif args.trainer == "rainbow":
        # Rainbow with Ape-X actors, tuned towards early learning for a short CPU run: 5,000 transitions
        # before learning, learning rate 1e-4 (data-efficient Rainbow's), target copies every 1,000 steps
        from cule.trainers.rainbow import Args, train
        run = Args(game=args.game, num_envs=args.num_envs, device=args.device, output_dir=args.output_dir,
                   total_frames=total_frames, max_minutes=args.minutes, learning_starts=5000, learning_rate=1e-4,
                   target_update_every=1000, buffer_size=200_000, log_every=max(1, 2000 // args.num_envs),
                   num_threads=1, resume=args.resume)
    else:
        from cule.trainers.a2c_vtrace import Args, train
        run = Args(game=args.game, num_envs=args.num_envs, num_batches=4, device=args.device, output_dir=args.output_dir,
                   total_frames=total_frames, max_minutes=args.minutes, resume=args.resume)
    from cule.trainers.common.evaluate import SMOOTHING, rolling_mean
    start = time.perf_counter()
    result = train(run)
    wall = time.perf_counter() - start

    rows = [r for r in csv.DictReader(open(Path(args.output_dir) / "log.csv")) if r.get("episode_return") not in ("", "nan")]
    reached = next((r for r in rows if float(r["episode_return"]) >= args.target), None)
    smooth = rolling_mean([float(r["episode_return"]) for r in rows], SMOOTHING)
    reached_smooth = next((r for r, m in zip(rows, smooth) if m >= args.target), None)
    summary = dict(trainer=args.trainer, game=args.game, minutes=args.minutes, frame_budget=args.frames,
                   wall_minutes=round(wall / 60, 2), num_envs=args.num_envs,
                   device=args.device, machine=platform.processor() or platform.machine(), cpus=os.cpu_count(),
                   frames=result["frames"], final_score=rows[-1]["episode_return"] if rows else None,
                   best_score=max((float(r["episode_return"]) for r in rows), default=None),
                   target=args.target, reached_after_minutes=float(reached["wall_time"]) / 60 if reached else None,
                   reached_after_frames=int(float(reached["frames"])) if reached else None,
                   smoothing_lines=SMOOTHING, final_smoothed_score=round(smooth[-1], 2) if smooth else None,
                   best_smoothed_score=round(max(smooth), 2) if smooth else None,
                   smoothed_reached_after_minutes=float(reached_smooth["wall_time"]) / 60 if reached_smooth else None,
                   smoothed_reached_after_frames=int(float(reached_smooth["frames"])) if reached_smooth else None,
                   wall_minutes_total=round(float(rows[-1]["wall_time"]) / 60, 2) if rows else None)
    with open(Path(args.output_dir) / "summary.json", "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
