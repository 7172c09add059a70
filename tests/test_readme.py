"""The README's quick start runs as written, its GPU lines left out, and gives what its comments say."""
from pathlib import Path

import pytest
import torch
from gymnasium.spaces import Discrete

README = Path(__file__).resolve().parent.parent / "README.md"


def quick_start() -> str:
    """The first Python block under "## Quick start", without the lines that need a GPU."""
    block = README.read_text().split("## Quick start", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    return "\n".join(line for line in block.splitlines() if 'device="cuda"' not in line)


def test_quick_start_runs_and_its_comments_hold():
    pytest.importorskip("jax")
    code = quick_start()
    assert "AtariVectorEnv" in code and "cule.jax" in code  # the block was found
    ns: dict = {}
    exec(compile(code, str(README), "exec"), ns)
    obs, env = ns["obs"], ns["env"]
    assert obs.dtype == torch.uint8 and obs.shape == (8, 4, 84, 84)  # "obs: torch.uint8 [8, 4, 84, 84]"
    assert env.get_ram().dtype == torch.uint8 and env.get_ram().shape == (8, 128)
    assert ns["saved"].dtype == torch.uint8 and ns["saved"].shape[0] == 8
    gym = ns["gym"]  # "4 x gymnasium's ALE/Breakout-v5: RGB 210x160"
    assert gym.num_envs == 4 and gym.single_observation_space.shape == (210, 160, 3)
    assert ns["one"].spec.id == "cule/Breakout-v5" and ns["vec"].num_envs == 64
    mix = ns["mix"]  # "many games in one batch: 114 envs, Discrete(18)"
    assert mix.num_envs == 114 and mix.single_action_space == Discrete(18)
    frames = ns["cenv"].reset()  # "obs uint8 [64, 84, 84, 1]"
    assert frames.dtype == torch.uint8 and frames.shape == (64, 84, 84, 1)
    for name in ("env", "gym", "vec", "mix", "one"):
        ns[name].close()
