"""Frames/s of a jitted JAX loop: cule.jax.make's step against ale-py's XLA interface, in the same run.

Each emulator is stepped by one jitted ``lax.scan`` of --steps steps whose
actions are drawn inside the scan (a uniform random policy, as an agent's
sampling would be), on JAX's default device: cule's kernels on XLA's own
stream with ``--device cuda`` (the CPU backend with ``--device cpu``), and
ale-py's ``AtariVectorEnv.xla()`` (its host emulators, with its GPU
handlers copying to the device where JAX runs on a GPU). A scan is
compiled and run once, then timed --repeats times; frames/s counts emulator
frames (frameskip 4). Results are printed and appended to
OUTPUT_DIR/jax_loop.jsonl.

    python -m cule.benchmarks.jax_loop --device cuda --envs 1024 4096 16384 --ale-envs 1024
    python -m cule.benchmarks.jax_loop --device cpu --envs 16 --ale-envs 16 --steps 50
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from cule.benchmarks import add_output_dir

FRAMESKIP = 4


def timed_scan(reset, step, n: int, actions: int, steps: int, repeats: int) -> tuple[float, float]:
    """(compile-and-first-run seconds, best seconds of a timed scan) of `steps` random steps."""
    import jax
    import jax.numpy as jnp

    @jax.jit
    def rollout(state, key):
        def body(carry, _):
            state, key, total = carry
            key, draw = jax.random.split(key)
            state, rewards = step(state, jax.random.randint(draw, (n,), 0, actions, dtype=jnp.int32))
            return (state, key, total + rewards.sum()), None
        (state, key, total), _ = jax.lax.scan(body, (state, key, jnp.float32(0)), None, length=steps)
        return state, total

    state = reset()
    key = jax.random.key(0)
    t0 = time.perf_counter()
    state, total = jax.block_until_ready(rollout(state, key))
    first = time.perf_counter() - t0
    best = float("inf")
    for i in range(repeats):
        t0 = time.perf_counter()
        state, total = jax.block_until_ready(rollout(state, jax.random.key(i + 1)))
        best = min(best, time.perf_counter() - t0)
    return first, best


def cule_loop(game: str, n: int, device: str, steps: int, repeats: int) -> dict:
    import cule.jax as cj

    env = cj.make(game, n, **({"device": "cuda"} if device == "cuda" else {}))

    def step(state, a):
        state, obs, rewards, *_ = env.step(state, a)
        return state, rewards.astype("float32")
    first, best = timed_scan(lambda: env.reset(0)[0], step, n, env.env.single_action_space.n, steps, repeats)
    env.close()
    return dict(backend=f"cule-jax-{device}", first_s=round(first, 2), scan_s=best)


def ale_loop(game: str, n: int, threads: int, steps: int, repeats: int) -> dict:
    from ale_py.vector_env import AtariVectorEnv

    import gymnasium

    envs = AtariVectorEnv(game, n, num_threads=threads)
    try:
        handle, reset, step_fn = envs.xla()
    except gymnasium.error.DependencyNotInstalled as error:
        envs.close()
        raise SystemExit(f"ale-py's XLA interface is missing a dependency ({error}); pip install 'cule[jax]' "
                         "(adds chex), or run with --ale-envs and no counts to time cule alone") from error

    def step(state, a):
        state, (obs, rewards, *_) = step_fn(state, a)
        return state, rewards.astype("float32")
    first, best = timed_scan(lambda: reset(handle, seed=0)[0], step, n, envs.single_action_space.n, steps, repeats)
    envs.close()
    return dict(backend=f"ale-xla-{threads}-threads", first_s=round(first, 2), scan_s=best)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m cule.benchmarks.jax_loop", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="pong", help="ALE game id")
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda", help="cule's backend")
    parser.add_argument("--envs", nargs="+", type=int, default=[1024, 4096, 16384], help="cule's environment counts")
    parser.add_argument("--ale-envs", nargs="*", type=int, default=[1024], help="ale-py's environment counts")
    parser.add_argument("--ale-threads", type=int, default=os.cpu_count(), help="ale-py's threads (all cores)")
    parser.add_argument("--steps", type=int, default=100, help="steps per scan")
    parser.add_argument("--repeats", type=int, default=3, help="timed scans (the best counts)")
    add_output_dir(parser, "jax_loop")
    args = parser.parse_args(argv)
    import jax

    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    runs = [("ale", n) for n in args.ale_envs] + [("cule", n) for n in args.envs]
    for which, n in runs:
        if which == "ale":
            row = ale_loop(args.game, n, args.ale_threads, args.steps, args.repeats)
        else:
            row = cule_loop(args.game, n, args.device, args.steps, args.repeats)
        row.update(game=args.game, envs=n, steps=args.steps, jax_device=str(jax.devices()[0]),
                   fps=n * args.steps * FRAMESKIP / row["scan_s"], date=time.strftime("%Y-%m-%d %H:%M:%S"))
        print(f"{args.game:12} {row['backend']:22} {n:6} envs  {row['fps']:>12,.0f} frames/s  "
              f"(scan of {args.steps} steps {row['scan_s'] * 1e3:.1f} ms; compile and first run {row['first_s']} s)",
              flush=True)
        with open(out / "jax_loop.jsonl", "a") as f:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
