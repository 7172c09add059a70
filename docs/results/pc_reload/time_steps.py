"""CPU time per environment-step of cule.AtariVectorEnv: 16 envs, one thread, random actions.

    python time_steps.py GAME [STEPS]                   # the installed cule
    BASE=/path/to/site python time_steps.py GAME        # a build installed with pip install --target

BASE drops an editable install's import hook so that the build under BASE is the one imported.
"""
import os
import sys
import time

import numpy as np

if os.environ.get("BASE"):
    sys.meta_path[:] = [f for f in sys.meta_path if "ScikitBuild" not in type(f).__name__]
    sys.path.insert(0, os.environ["BASE"])
import torch  # noqa: E402

import cule  # noqa: E402

torch.set_num_threads(1)
game = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 300
env = cule.AtariVectorEnv(game, num_envs=16, num_threads=1, device="cpu")
env.reset(seed=0)
rng = np.random.default_rng(0)
actions = [torch.as_tensor(rng.integers(0, env.single_action_space.n, 16)) for _ in range(steps)]
for a in actions[:50]:
    env.step(a)
start = time.process_time()
for a in actions:
    env.step(a)
seconds = time.process_time() - start
print(f"{game} {seconds / steps / 16 * 1e6:.2f} us/env-step")
