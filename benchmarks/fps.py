"""Frames per second of cule and ale-py, side by side, measured in the same run.

For each game and number of environments, steps cule's AtariVectorEnv and
ale-py's AtariVectorEnv with the same settings (frameskip 4, sticky actions
0.25, grayscale, native 210x160 frames, 4-frame stack, max-pool, random
actions) and reports emulated frames per second (steps x frameskip x envs)
and their ratio. Ratios, not absolute numbers, are what to compare across
machines: both run on the same cores at the same time.

    python benchmarks/fps.py                       # quick: 4 games, 1/2/8 envs
    python benchmarks/fps.py --games pong --envs 1 4 16 --steps 500
    python benchmarks/fps.py --out benchmarks/results/cpu_fps.json --plot benchmarks/results/cpu_fps.png
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np


def _settings(n: int) -> dict:
    return dict(num_envs=n, frameskip=4, repeat_action_probability=0.25, grayscale=True, img_height=210,
                img_width=160, stack_num=4, maxpool=True, noop_max=0, use_fire_reset=False, reward_clipping=True,
                full_action_space=False)


def run_cule(game: str, n: int, steps: int, threads: int) -> float:
    import torch

    import cule

    env = cule.AtariVectorEnv(game, num_threads=threads, **_settings(n))
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = [torch.from_numpy(rng.integers(0, len(env.action_set), size=n)) for _ in range(steps)]
    env.step(actions[0])  # warm up
    t0 = time.perf_counter()
    for a in actions:
        env.step(a)
    return steps * 4 * n / (time.perf_counter() - t0)


def run_ale(game: str, n: int, steps: int, threads: int) -> float:
    from ale_py.vector_env import AtariVectorEnv

    kwargs = _settings(n)
    if threads:
        kwargs["num_threads"] = threads
    env = AtariVectorEnv(game, **kwargs)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = [rng.integers(0, env.single_action_space.n, size=n) for _ in range(steps)]
    env.step(actions[0])
    t0 = time.perf_counter()
    for a in actions:
        env.step(a)
    fps = steps * 4 * n / (time.perf_counter() - t0)
    env.close()
    return fps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="+", default=["pong", "breakout", "ms_pacman", "space_invaders"],
                        help="ALE game ids to measure")
    parser.add_argument("--envs", nargs="+", type=int, default=[1, 2, 8], help="numbers of environments")
    parser.add_argument("--steps", type=int, default=300, help="vector steps timed per measurement")
    parser.add_argument("--threads", type=int, default=0, help="worker threads for both (0: all cores)")
    parser.add_argument("--out", help="write the figures as JSON here")
    parser.add_argument("--plot", help="write a bar chart (PNG) here; needs matplotlib")
    args = parser.parse_args()

    rows = []
    print(f"{'game':16s} {'envs':>4s} {'cule fps':>10s} {'ale-py fps':>11s} {'ratio':>6s}", flush=True)
    for game in args.games:
        for n in args.envs:
            ours = run_cule(game, n, args.steps, args.threads)
            theirs = run_ale(game, n, args.steps, args.threads)
            rows.append(dict(game=game, envs=n, cule_fps=ours, ale_fps=theirs, ratio=ours / theirs))
            print(f"{game:16s} {n:4d} {ours:10.0f} {theirs:11.0f} {ours / theirs:6.2f}", flush=True)
    ratios = [r["ratio"] for r in rows]
    print(f"geometric mean ratio cule/ale-py: {float(np.exp(np.mean(np.log(ratios)))):.2f}")
    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        meta = dict(machine=platform.machine(), cpus=os.cpu_count(), steps=args.steps, settings=_settings(0))
        with open(args.out, "w") as f:
            json.dump(dict(meta=meta, rows=rows), f, indent=1)
    if args.plot:
        try:
            import matplotlib
        except ImportError:
            parser.error("--plot needs matplotlib: pip install matplotlib (the JSON figures were written)")

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8, 4))
        labels = [f"{r['game']}\n{r['envs']} env" for r in rows]
        x = np.arange(len(rows))
        ax.bar(x - 0.2, [r["cule_fps"] for r in rows], 0.4, label="cule")
        ax.bar(x + 0.2, [r["ale_fps"] for r in rows], 0.4, label="ale-py")
        ax.set_xticks(x, labels, fontsize=7)
        ax.set_ylabel("emulated frames / s")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)


if __name__ == "__main__":
    main()
