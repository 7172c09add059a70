"""cule's CUDA backend: frames per second and per-kernel GPU time against the number of environments.

Random actions, ale-py's default preprocessing (84x84 grey, stack 4,
frameskip 4), a few warm-up steps, then the mean over timed steps of the
whole step (wall clock, synchronised) and of each kernel (CUDA events).
Needs a GPU, a CUDA build of torch and cupy (pip install -e ".[cuda]").

    python -m cule.benchmarks.gpu_scale --games pong breakout --envs 1024 4096 16384 32768
    python -m cule.kernels --precompile pong breakout   # first: compile the kernels in parallel
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

import cule
from cule.benchmarks import add_output_dir


def measure(game: str, n: int, warmup: int, steps: int) -> dict:
    env = cule.AtariVectorEnv(game, n, device="cuda")
    env.reset(seed=0)
    launcher, events = env._device.launcher, {"run": [], "render": [], "reset": [], "gather": []}
    launch = launcher.launch

    def timed(kernel, threads, args):  # each launch timed with CUDA events on the current stream
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        launch(kernel, threads, args)
        end.record()
        events[kernel.removeprefix("cule_")].append((start, end))
    launcher.launch = timed
    actions = torch.randint(0, env.single_action_space.n, (warmup + steps, n), device="cuda")
    for k in range(warmup):
        env.step(actions[k])
    torch.cuda.synchronize()
    for v in events.values():
        v.clear()
    t0 = time.perf_counter()
    for k in range(warmup, warmup + steps):
        env.step(actions[k])
    torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    ms = {k: sum(s.elapsed_time(e) for s, e in v) / len(v) for k, v in events.items()}
    stats = env._device.render_stats()
    env.close()
    return dict(game=game, envs=n, fps=steps * 4 * n / seconds, step_ms=1e3 * seconds / steps,
                run_ms=ms["run"], render_ms=ms["render"], reset_ms=ms["reset"], gather_ms=ms["gather"],
                device=torch.cuda.get_device_name(), **stats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="+", default=["pong"], help="ALE game ids")
    parser.add_argument("--envs", nargs="+", type=int, default=[1024, 4096, 16384], help="environment counts")
    parser.add_argument("--warmup", type=int, default=4, help="untimed steps first")
    parser.add_argument("--steps", type=int, default=12, help="timed steps (x4 frames x envs = frames counted)")
    add_output_dir(parser, "gpu_scale")
    args = parser.parse_args()
    for game in args.games:
        for n in args.envs:
            row = measure(game, n, args.warmup, args.steps)
            print(f"{game:16s} {n:7d} envs {row['fps']:12,.0f} frames/s  step {row['step_ms']:8.1f} ms  "
                  f"cule_run {row['run_ms']:8.1f} ms  cule_render {row['render_ms']:6.2f} ms  "
                  f"cule_reset {row['reset_ms']:6.2f} ms  cule_gather {row['gather_ms']:6.2f} ms", flush=True)
            out = Path(args.output_dir)
            out.mkdir(parents=True, exist_ok=True)
            with open(out / "gpu_scale.jsonl", "a") as f:
                f.write(json.dumps(row) + "\n")
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
