"""Soak test of the CPU backend: resident memory must stay flat.

Steps one AtariVectorEnv (ale-py's default preprocessing, sticky actions)
with random actions for --frames emulated frames, re-seeding every
environment now and then and resetting random subsets, and reads the raw
state (RAM, screens) from time to time. Resident memory is sampled as it
goes; the start figure is taken after a warm-up (thread pool, allocator and
torch caches settle in the first steps). Then it builds and closes
--recreate environments of several mappers, to catch leaks in construction.

    nice python -m cule.benchmarks.soak [--frames 10000000] [--game breakout] [--num-envs 32] [--num-threads 2]

Prints start and end RSS of both parts and exits 1 if either grew by more
than --max-growth-mib.
"""
import argparse
import gc
import os
import time

import numpy as np
import torch

import cule
from cule.benchmarks import at_least

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 2**20


def soak(args) -> tuple[float, float]:
    env = cule.AtariVectorEnv(args.game, args.num_envs, num_threads=args.num_threads, repeat_action_probability=0.25)
    rng = np.random.default_rng(args.seed)
    env.reset(seed=args.seed)
    frames, last = 0, np.zeros(args.num_envs, np.int64)
    start_rss = peak = None
    warmup = max(args.frames // 50, 1)
    samples = []
    t0 = time.perf_counter()
    step = 0
    while frames < args.frames:
        step += 1
        if step % 5000 == 0:  # re-seed every console (ALE's loadROM)
            obs, info = env.reset(seed=int(rng.integers(0, 2**31 - 1)))
        elif step % 997 == 0:  # a partial reset
            mask = rng.random(args.num_envs) < 0.25
            obs, info = env.reset(options={"reset_mask": mask})
        else:
            obs, _, _, _, info = env.step(torch.from_numpy(rng.integers(0, env.single_action_space.n, args.num_envs)))
        if step % 1000 == 0:
            env.get_ram(), env.get_screen(), env.lives()
        now = info["frame_number"].numpy().astype(np.int64)
        frames += int(np.maximum(now - last, 0).sum())  # frame_number restarts at 0 on a re-seed
        last = now
        if start_rss is None and frames >= warmup:
            start_rss = peak = rss_mib()
            print(f"warm-up done at {frames:,} frames: RSS {start_rss:.1f} MiB", flush=True)
        if start_rss is not None and step % 2000 == 0:
            r = rss_mib()
            peak = max(peak, r)
            samples.append((frames, r))
            rate = frames / (time.perf_counter() - t0)
            print(f"{frames:>12,} frames  RSS {r:7.1f} MiB  ({rate:,.0f} frames/s)", flush=True)
    env.close()
    end_rss = rss_mib()
    seconds = time.perf_counter() - t0
    print(f"soak: {frames:,} frames of {args.game}, {args.num_envs} envs, {args.num_threads} threads, {seconds:.0f} s "
          f"({frames / seconds:,.0f} frames/s); RSS start {start_rss:.1f} MiB, end {end_rss:.1f} MiB "
          f"(env closed; {samples[-1][1] if samples else end_rss:.1f} MiB before), peak {peak:.1f} MiB")
    return start_rss, samples[-1][1] if samples else end_rss


def recreate(args) -> tuple[float, float]:
    # One game per mapper: 2K, 4K, F8, F6, F6SC, F8SC, E0, FE, DPC.
    games = ["pong", "adventure", "ms_pacman", "solaris", "klax", "elevator_action", "tutankham", "robotank",
             "pitfall2"]
    start = None
    for i in range(args.recreate):
        env = cule.AtariVectorEnv(games[i % len(games)], 4, num_threads=args.num_threads)
        env.reset(seed=i)
        for _ in range(5):
            env.step(np.zeros(4, np.int64))
        env.close()
        del env
        gc.collect()
        if i == len(games) - 1:  # each game built once: caches are full
            start = rss_mib()
    end = rss_mib()
    print(f"recreate: {args.recreate} environments built, stepped and closed; RSS start {start:.1f} MiB, "
          f"end {end:.1f} MiB")
    return start, end


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=at_least(1), default=10_000_000,
                        help="emulated frames (ALE frames, all envs; default 10,000,000)")
    parser.add_argument("--game", default="breakout", help="the game stepped (default breakout)")
    parser.add_argument("--num-envs", type=at_least(1), default=32, help="environments (default 32)")
    parser.add_argument("--num-threads", type=at_least(1), default=2, help="emulation threads (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the environments and the actions (default 0)")
    parser.add_argument("--recreate", type=int, default=200,
                        help="environments built and closed after the soak (default 200)")
    parser.add_argument("--max-growth-mib", type=float, default=16.0,
                        help="resident memory the soak may add before it fails (MiB, default 16)")
    args = parser.parse_args()
    s0, s1 = soak(args)
    r0, r1 = recreate(args) if args.recreate >= 8 else (0.0, 0.0)
    grew = max(s1 - s0, r1 - r0)
    verdict = "ok" if grew <= args.max_growth_mib else "LEAK?"
    print(f"largest growth {grew:.1f} MiB (limit {args.max_growth_mib} MiB): {verdict}")
    raise SystemExit(0 if grew <= args.max_growth_mib else 1)


if __name__ == "__main__":
    main()
