"""Where a CPU step's time goes as threads and environments grow: the account of cule's thread pool.

For each game, number of environments and number of threads, cule's
AtariVectorEnv (ale-py's default preprocessing, random actions) takes
untimed warm-up steps, then timed steps, and the pool's own account
(`Emulator.pool_stats`) splits the threads' time:

  work      each thread working (stepping and copying results), per
            environment-step: flat across threads when they scale; growing
            with threads means each works more slowly (caches, memory,
            clock speed, or threads that outnumber cores);
  cpu       the CPU time within that (below work when threads outnumber cores);
  wake      threads not yet started on a job (being woken), share of capacity;
  wait      threads done and waiting for the slowest one, share of capacity;
  outside   the step's time outside the pool (Python, torch, bindings), share
            of the step;
  faults    minor page faults per step (memory the step allocates anew).

Capacity is threads x each job's wall time, so work + wake + wait = 100%.
With `--ale`, ale-py's vector env runs with the same numbers of environments
and the most threads asked for, right after cule's measurement with those,
and the ratio is printed (once per batch size: building ale-py's
environments takes about a tenth of a second each). Writes threads.json and
threads.md into --output-dir.

    python -m cule.benchmarks.threads                                  # pong; 64, 256, 1,024 envs; 1, 2, all cores
    python -m cule.benchmarks.threads --threads 1 2 4 8 16 --ale       # on a machine with 16 cores
    python -m cule.benchmarks.threads --games seaquest --envs 256 --steps 20
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path

import torch

from cule.benchmarks import adapters, add_output_dir

COLUMNS = [  # (key, header, format)
    ("game", "game", "{}"), ("envs", "envs", "{}"), ("threads", "threads", "{}"), ("fps", "cule fps", "{:.0f}"),
    ("work_us", "work us/env-step", "{:.1f}"), ("cpu_us", "cpu us/env-step", "{:.1f}"), ("wake", "wake", "{:.1%}"),
    ("wait", "wait", "{:.1%}"), ("outside", "outside", "{:.1%}"), ("faults", "faults/step", "{:.1f}"),
    ("ale_fps", "ale-py fps", "{:.0f}"), ("ratio", "ratio", "{:.2f}"),
]


def measure(game: str, n: int, threads: int, steps: int, warmup: int, seed: int = 0) -> dict:
    """One cule measurement: frames/s and the pool's account over `steps` steps after `warmup` steps."""
    env = adapters.make("cule-cpu", game, n, threads)
    try:
        env.reset(seed)
        gen = torch.Generator().manual_seed(seed)
        actions = [torch.randint(0, env.num_actions, (n,), generator=gen) for _ in range(warmup + steps)]
        for a in actions[:warmup]:
            env.step(a)
        emulator = env.env.backend.emulator
        emulator.clear_pool_stats()
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        start = time.perf_counter()
        for a in actions[warmup:]:
            env.step(a)
        seconds = time.perf_counter() - start
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
        s = emulator.pool_stats()
    finally:
        env.close()
    env_steps = steps * n
    capacity = max(s["capacity"], 1)
    return dict(game=game, envs=n, threads=threads, pool_threads=s["threads"], steps=steps,
                fps=steps * 4 * n / seconds, work_us=s["busy"] / 1e3 / env_steps, cpu_us=s["cpu"] / 1e3 / env_steps,
                wake=s["wake"] / capacity, wait=max(0.0, 1 - (s["wake"] + s["busy"]) / capacity),
                outside=max(0.0, 1 - s["wall"] / 1e9 / seconds), faults=faults / steps, jobs=s["jobs"])


def table(rows: list[dict]) -> list[str]:
    cols = [c for c in COLUMNS if any(c[0] in r for r in rows)]
    lines = ["| " + " | ".join(h for _, h, _ in cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(fmt.format(r[k]) if k in r else "" for k, _, fmt in cols) + " |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="+", default=["pong"], help="ALE game ids")
    parser.add_argument("--envs", nargs="+", type=int, default=[64, 256, 1024], help="numbers of environments")
    parser.add_argument("--threads", nargs="+", type=int, default=sorted({1, 2, os.cpu_count() or 1}),
                        help="numbers of threads (default: 1, 2 and all cores)")
    parser.add_argument("--steps", type=int, default=0,
                        help="timed steps per measurement (default: 12,800 environment-steps' worth, at least 10)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first (first touches of memory)")
    parser.add_argument("--repeats", type=int, default=1, help="measurements per row; the fastest is kept")
    parser.add_argument("--ale", action="store_true",
                        help="also time ale-py's vector env with the same environments and the most threads")
    add_output_dir(parser, "threads")
    args = parser.parse_args(argv)
    for name in ("envs", "threads"):
        if min(getattr(args, name)) < 1:
            parser.error(f"--{name} needs positive numbers")
    if args.steps < 0 or args.warmup < 0 or args.repeats < 1:
        parser.error("--steps and --warmup cannot be negative, --repeats must be positive")

    rows = []
    cols = [c for c in COLUMNS if args.ale or c[0] not in ("ale_fps", "ratio")]
    print(" ".join(f"{h:>{max(len(h), 6)}}" for _, h, _ in cols), flush=True)
    for game in args.games:
        for n in args.envs:
            steps = args.steps or max(10, 12800 // n)
            for threads in args.threads:
                runs = [measure(game, n, threads, steps, args.warmup) for _ in range(args.repeats)]
                row = max(runs, key=lambda r: r["fps"])
                if args.ale and threads == max(args.threads):
                    ale = [adapters.frames_per_second(adapters.make("ale-vector", game, n, threads), steps)
                           for _ in range(args.repeats)]
                    row["ale_fps"] = max(ale)
                    row["ratio"] = row["fps"] / row["ale_fps"]
                rows.append(row)
                print(" ".join(f"{fmt.format(row[k]) if k in row else '':>{max(len(h), 6)}}" for k, h, fmt in cols),
                      flush=True)

    for game in args.games:  # how each thread's work per environment-step grows with threads, at the largest batch
        mine = [r for r in rows if r["game"] == game and r["envs"] == max(args.envs)]
        base = min(mine, key=lambda r: r["threads"])
        for r in mine:
            r["work_vs_fewest_threads"] = r["work_us"] / base["work_us"]
            r["cpu_vs_fewest_threads"] = r["cpu_us"] / base["cpu_us"]
        print(f"{game}, {max(args.envs)} envs: work (CPU time) per environment-step on "
              + ", ".join(f"{r['threads']} threads {r['work_vs_fewest_threads']:.2f}x ({r['cpu_vs_fewest_threads']:.2f}x)"
                          for r in mine)
              + f" that on {base['threads']}")
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    meta = dict(machine=platform.machine(), processor=platform.processor(), cpus=os.cpu_count(),
                usable_cpus=len(os.sched_getaffinity(0)), warmup=args.warmup, repeats=args.repeats,
                date=time.strftime("%Y-%m-%d"))
    with open(out / "threads.json", "w") as f:
        json.dump(dict(meta=meta, rows=rows), f, indent=1)
    with open(out / "threads.md", "w") as f:
        command = " ".join(["python -m cule.benchmarks.threads", *(sys.argv[1:] if argv is None else argv)])
        f.write(f"{meta['date']}, {meta['usable_cpus']} usable CPUs, `{command}`\n\n")
        f.write("\n".join(table([{k: r[k] for k, _, _ in cols if k in r} for r in rows])) + "\n")
    print(f"wrote {out / 'threads.json'} and {out / 'threads.md'}")


if __name__ == "__main__":
    main()
