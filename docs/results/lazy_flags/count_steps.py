"""Steps cule.AtariVectorEnv for callgrind's instruction count: 16 envs, one thread, random actions.

    valgrind --tool=callgrind --callgrind-out-file=OUT python count_steps.py GAME 60
    BASE=/path/to/site valgrind ... python count_steps.py GAME 60     # a build installed with pip install --target

The emulation's count is ThreadPool::run's inclusive figure in callgrind_annotate --inclusive=yes
(the reset and the 60 steps).
"""
import os
import sys

if os.environ.get("BASE"):
    sys.meta_path[:] = [f for f in sys.meta_path if "ScikitBuild" not in type(f).__name__]
    sys.path.insert(0, os.environ["BASE"])
import numpy as np  # noqa: E402
import torch  # noqa: E402

import cule  # noqa: E402

torch.set_num_threads(1)
game, steps = sys.argv[1], int(sys.argv[2])
env = cule.AtariVectorEnv(game, num_envs=16, num_threads=1, device="cpu")
env.reset(seed=0)
rng = np.random.default_rng(0)
for _ in range(steps):
    env.step(torch.as_tensor(rng.integers(0, env.single_action_space.n, 16)))
