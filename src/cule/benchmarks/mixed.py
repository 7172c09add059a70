"""A batch of many games, measured in one run against what a multi-task run uses without it.

Three figures, in emulated frames per second (steps x frameskip x environments),
ale-py's vector-env preprocessing, ALE's full action set, random actions:

  mixed:   one cule.AtariVectorEnv over every game (`--per-game` environments each);
  ale-py:  one ale_py.vector.AtariVectorEnv per game, stepped in turn;
  single:  cule's single-game batches of the mixed batch's size, one per game,
           combined as the harmonic mean (the rate at which a batch spending equal
           time per environment on each game would run).

mixed / single says what mixing games costs (the aim: within 10%); mixed / ale-py
what a researcher gains over stepping one vector env per game.

    python -m cule.benchmarks.mixed                          # IMPALA's Atari-57, one env each
    python -m cule.benchmarks.mixed --per-game 4 --games pong breakout seaquest boxing
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

from cule.benchmarks import adapters, add_output_dir, at_least
from cule.games import ATARI_57


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="+", default=ATARI_57, help="ALE game ids (default: IMPALA's Atari-57)")
    parser.add_argument("--per-game", type=at_least(1), default=1, help="environments per game in the mixed batch")
    parser.add_argument("--steps", type=at_least(1), default=20, help="vector steps timed per measurement")
    parser.add_argument("--threads", type=at_least(1), default=os.cpu_count(), help="worker threads (default: all cores)")
    parser.add_argument("--repeats", type=at_least(1), default=1, help="interleaved repetitions; the median is reported")
    parser.add_argument("--device", default="cpu", help="cule's device: cpu, or cuda for the GPU backend")
    add_output_dir(parser, "mixed")
    args = parser.parse_args()
    cuda = args.device.startswith("cuda")
    n = args.per_game * len(args.games)

    def fps(backend: str, game, envs: int) -> float:
        return adapters.frames_per_second(adapters.make(backend, game, envs, args.threads), args.steps)

    mixed, ale, single, per_game = [], [], [], {g: [] for g in args.games}
    for _ in range(args.repeats):
        mixed.append(fps("cule-mixed-cuda" if cuda else "cule-mixed", args.games, args.per_game))
        ale.append(fps("ale-turns", args.games, args.per_game))
        for g in args.games:
            per_game[g].append(fps("cule-cuda" if cuda else "cule-cpu", g, n))
        single.append(len(args.games) / sum(1 / per_game[g][-1] for g in args.games))
    row = dict(games=len(args.games), per_game=args.per_game, envs=n, threads=args.threads, device=args.device,
               mixed_fps=statistics.median(mixed), ale_turns_fps=statistics.median(ale),
               single_fps=statistics.median(single),
               single_fps_by_game={g: statistics.median(f) for g, f in per_game.items()})
    row["mixed_vs_single"] = row["mixed_fps"] / row["single_fps"]
    row["mixed_vs_ale"] = row["mixed_fps"] / row["ale_turns_fps"]
    print(f"{len(args.games)} games x {args.per_game} env(s), {args.threads} threads, {args.device}:\n"
          f"  cule mixed batch       {row['mixed_fps']:9.0f} frames/s\n"
          f"  ale-py envs in turn    {row['ale_turns_fps']:9.0f} frames/s   (mixed / ale-py {row['mixed_vs_ale']:.2f})\n"
          f"  cule single-game       {row['single_fps']:9.0f} frames/s   (mixed / single {row['mixed_vs_single']:.2f}, "
          f"aim >= 0.90)")
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    meta = dict(machine=platform.machine(), cpus=os.cpu_count(), steps=args.steps, repeats=args.repeats,
                games=list(args.games), date=time.strftime("%Y-%m-%d"))
    with open(out / "mixed.json", "w") as f:
        json.dump(dict(meta=meta, rows=[row]), f, indent=1)
    print(f"wrote {out / 'mixed.json'}")


if __name__ == "__main__":
    main()
