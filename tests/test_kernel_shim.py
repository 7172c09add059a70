"""The CUDA backend's code path, run on the CPU through the host launch shim (issue 6).

``AtariVectorEnv(..., _shim=True)`` keeps every environment's state in
separate tensors, addressed by a BatchView packed for them, and steps them
with cule/kernels/kernels.cu's ``cule_run`` / ``cule_gather`` compiled for the
host (cule/kernels/shim.hpp: grid and block as loops). The Python side is the
CUDA backend's (cule/backends/cuda.py) with the shim in place of NVRTC. Its
RAM, TIA frames, observations, rewards, flags and counters must equal the CPU
backend's bit for bit.
"""
import numpy as np
import pytest
import torch

import cule
from conftest import report

RESULTS = []


def _pair(game, n=2, **kwargs):
    kwargs = {"num_threads": 1, **kwargs}
    return cule.AtariVectorEnv(game, n, **kwargs), cule.AtariVectorEnv(game, n, _shim=True, **kwargs)


def _compare(game, steps, n=2, seed=0, **kwargs):
    cpu, shim = _pair(game, n, **kwargs)
    out_c, out_s = cpu.reset(seed=seed), shim.reset(seed=seed)
    assert torch.equal(out_c[0], out_s[0]), f"{game}: reset observation"
    rng = np.random.default_rng(seed)
    for t in range(steps):
        a = torch.from_numpy(rng.integers(0, cpu.single_action_space.n, size=n))
        rc, rs = cpu.step(a), shim.step(a)
        for name, x, y in zip(("observation", "reward", "terminated", "truncated"), rc[:4], rs[:4]):
            assert torch.equal(x, y), f"{game} step {t}: {name}"
        for key in ("lives", "frame_number", "episode_frame_number", "env_id"):
            assert torch.equal(rc[4][key], rs[4][key]), f"{game} step {t}: info[{key}]"
        if "final_obs" in rc[4]:
            done = rc[2] | rc[3]
            assert torch.equal(rc[4]["final_obs"][done], rs[4]["final_obs"][done]), f"{game} step {t}: final_obs"
    assert torch.equal(cpu.get_ram(), shim.get_ram()), f"{game}: RAM"
    assert torch.equal(cpu.get_screen(), shim.get_screen()), f"{game}: TIA frame"
    return steps * n * cpu.frameskip


@pytest.mark.parametrize("game", cule.list_games())
def test_shim_equals_cpu_backend(game):
    frames = _compare(game, 75)
    RESULTS.append((game, frames))


@pytest.mark.parametrize("kwargs", [dict(autoreset_mode="SameStep", max_num_frames_per_episode=300, grayscale=False),
                                    dict(reset_mode="cache", episodic_life=True),
                                    dict(img_height=105, img_width=80, noop_max=5, maxpool=False)])
def test_shim_equals_cpu_backend_other_settings(kwargs):
    _compare("breakout", 150, n=3, **kwargs)


def test_step_path_makes_no_host_transfer(monkeypatch):
    """Every way torch has to bring a tensor's value to the host fails while the CUDA path steps."""
    env = cule.AtariVectorEnv("pong", 4, _shim=True, num_threads=1)
    env.reset(seed=0)
    actions = torch.zeros(4, dtype=torch.long)

    def refuse(name):
        def guard(*args, **kwargs):
            raise AssertionError(f"host transfer in the step path: Tensor.{name}")
        return guard

    for name in ("cpu", "numpy", "item", "tolist", "__bool__", "__int__", "__float__", "__index__"):
        monkeypatch.setattr(torch.Tensor, name, refuse(name))
    for _ in range(20):
        obs, rew, term, trunc, info = env.step(actions)
    monkeypatch.undo()
    assert obs.shape == (4, 4, 84, 84) and info["lives"].shape == (4,)


def test_bad_action_on_the_device_path_is_reported_at_reset():
    env = cule.AtariVectorEnv("pong", 2, _shim=True, num_threads=1)
    env.reset(seed=0)
    env.step(torch.tensor([0, 99]))  # cannot be checked without waiting for the device: played as NOOP
    with pytest.raises(ValueError, match="outside the action set"):
        env.reset(seed=0)
    env.reset(seed=0)  # reported once; the environments stay usable
    env.step(torch.tensor([0, 1]))


def test_cuda_unavailable_says_what_is_missing():
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(cule.CudaUnavailableError, match="CUDA"):
        cule.AtariVectorEnv("pong", 2, device="cuda")
    with pytest.raises(cule.CudaUnavailableError):
        cule.make("ALE/Pong-v5", 2, device="cuda:0")


def test_report_shim_table():
    if not RESULTS:
        pytest.skip("no game was compared")
    report("CUDA kernels on the host launch shim vs the CPU backend",
           f"{len(RESULTS)}/104 games bit-identical (RAM, TIA frames, observations, rewards, flags, counters), "
           f"{RESULTS[0][1]} frames per game")
