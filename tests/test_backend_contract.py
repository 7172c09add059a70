"""The backend contract (cule/backends/__init__.py), run over every backend: the CPU's threads, the CUDA
backend's launch code on the host launch shim, and CUDA itself when a GPU is there. One batch of two games
(cule.mixed) is a backend too."""
import numpy as np
import pytest
import torch

import cule
from cule.backends import cuda

BACKENDS = ["cpu", "shim", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU"))]


def make(backend, game="breakout", n=3, **kwargs):
    kwargs = {"num_threads": 1, **kwargs}
    if backend == "shim":
        return cule.AtariVectorEnv(game, n, _shim=True, **kwargs)
    return cule.AtariVectorEnv(game, n, device=backend, **kwargs)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("game", ["breakout", ["pong", "breakout"]])
def test_final_obs_is_there_on_every_same_step_step_and_zero_where_no_episode_ended(backend, game):
    env = make(backend, game, 2, autoreset_mode="SameStep", max_num_frames_per_episode=200)
    env.reset(seed=0)
    ended_somewhere = False
    for t in range(60):
        _, _, terminated, truncated, info = env.step(torch.zeros(env.num_envs, dtype=torch.long))
        done = (terminated | truncated).cpu()
        final = info["final_obs"].cpu()
        assert final.shape == (env.num_envs, *env.single_observation_space.shape)
        assert not final[~done].any(), f"step {t}: final_obs of an episode that did not end"
        if done.any():
            ended_somewhere = True
            assert final[done].flatten(1).any(1).all()
    assert ended_somewhere
    next_step = make(backend, game, 2)
    next_step.reset(seed=0)
    assert "final_obs" not in next_step.step(torch.zeros(next_step.num_envs, dtype=torch.long))[4]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("actions", [np.array([0, 1, 4]), torch.tensor([0, -1, 2]), [0, 1, 99]])
def test_host_actions_outside_the_set_raise_at_once_and_nothing_steps(backend, actions):
    """On the shim the batch's device is the host, so its actions count as already on the device: played as NOOP,
    reported at the next reset, as a GPU does with actions on it."""
    env = make(backend)
    env.reset(seed=0)
    before = env.clone_state()
    if backend == "shim":
        env.step(actions)
        with pytest.raises(ValueError, match="outside the action set"):
            env.reset(seed=0)
    else:
        with pytest.raises(ValueError, match="outside the action set"):
            env.step(actions)
        assert torch.equal(env.clone_state(), before)
    env.step(torch.tensor([0, 1, 2]))  # the env goes on


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_device_actions_outside_the_set_are_reported_at_the_next_reset():
    env = make("cuda")
    env.reset(seed=0)
    env.step(torch.tensor([0, 1, 9], device="cuda"))  # no wait for the device: played as NOOP
    with pytest.raises(ValueError, match="outside the action set"):
        env.reset(seed=0)
    env.reset(seed=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_raw_reads_agree_with_the_cpu_backend_and_lives_with_the_step(backend):
    cpu, other = make("cpu", reset_mode="cache"), make(backend, reset_mode="cache")
    rng = np.random.default_rng(3)
    for env in (cpu, other):
        env.reset(seed=5)
    for t in range(40):
        a = torch.from_numpy(rng.integers(0, 4, 3))
        info_c, info_o = cpu.step(a)[4], other.step(a)[4]
        assert torch.equal(other.lives().cpu(), info_o["lives"].cpu()), f"step {t}"
        assert torch.equal(cpu.lives(), info_c["lives"])
    assert torch.equal(cpu.get_ram(), other.get_ram().cpu())
    assert torch.equal(cpu.get_screen(), other.get_screen().cpu())
    assert torch.equal(cpu.get_screen_rgb(), other.get_screen_rgb().cpu())
    assert torch.equal(cpu.lives(), other.lives().cpu())
    saved = other.clone_state()
    other.copy_state(0, [1, 2])
    assert other.lives().cpu().tolist() == [other.lives().cpu()[0].item()] * 3
    other.restore_state(saved)
    assert torch.equal(cpu.lives(), other.lives().cpu())


def test_lives_copies_nothing_back_from_the_device(monkeypatch):
    env = make("shim")
    env.reset(seed=0)
    env.step(torch.tensor([0, 1, 2]))
    monkeypatch.setattr(cuda.CudaBackend, "host_array", lambda *a: pytest.fail("lives() copied an array back"))
    assert env.lives().tolist() == [5, 5, 5]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_mixed_batch_keeps_the_contract_of_its_games(backend):
    games = make(backend, ["pong", "breakout"], 2)
    alone = [make("cpu", g, 2, full_action_space=True) for g in ("pong", "breakout")]
    seeds = np.array([1, 2, 1, 2])
    games.reset(seed=seeds)
    for k, env in enumerate(alone):
        env.reset(seed=seeds[2 * k:2 * k + 2])
    rng = np.random.default_rng(0)
    for _ in range(30):
        a = rng.integers(0, 18, 4)
        obs = games.step(torch.from_numpy(a))[0].cpu()
        for k, env in enumerate(alone):
            assert torch.equal(obs[2 * k:2 * k + 2], env.step(torch.from_numpy(a[2 * k:2 * k + 2]))[0])
    assert torch.equal(games.lives().cpu(), torch.cat([e.lives() for e in alone]))
    rows = games.clone_state()
    games.step(torch.zeros(4, dtype=torch.long))
    games.restore_state(rows)
    assert torch.equal(games.clone_state()[:, 64:], rows[:, 64:])
