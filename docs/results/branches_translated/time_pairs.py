"""CPU time per env-step through Python, a game's translated loop against the threaded one, alternated.

python time_pairs.py LIBRARY_FOLDER [PAIRS [STEPS]]: for each of the five games whose translated library
(cule.translate.build, GAME-KEY.so) is in LIBRARY_FOLDER, 16 environments on one thread, ale-py's
preprocessing, random actions; PAIRS alternations of the two (default 9) of STEPS steps (default 300);
prints the paired median of translated / threaded and its range.
"""
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

import cule
from cule import translate

folder = Path(sys.argv[1])
pairs, steps = (int(sys.argv[2]) if len(sys.argv) > 2 else 9), (int(sys.argv[3]) if len(sys.argv) > 3 else 300)


def cpu_per_step(game, library):
    env = cule.AtariVectorEnv(game, 16, num_threads=1)
    if library:
        translate.use_library(env.blocks[0].emulator, library)
    env.reset(seed=0)
    actions = torch.from_numpy(np.random.default_rng(0).integers(0, env.single_action_space.n, (steps, 16)))
    for a in actions[:20]:
        env.step(a)
    t0 = time.process_time()
    for a in actions:
        env.step(a)
    env.close()
    return (time.process_time() - t0) / (steps * 16)


for game in ["pong", "breakout", "ms_pacman", "space_invaders", "seaquest"]:
    library = next(p for p in folder.glob(f"{game}-*.so") if "checked" not in p.name)
    ratios, base = [], []
    for _ in range(pairs):
        plain = cpu_per_step(game, None)
        ratios.append(cpu_per_step(game, library) / plain)
        base.append(plain)
    print(f"{game:15s} translated / threaded {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}), "
          f"threaded {1e6 * statistics.median(base):.1f} us per env-step", flush=True)
