"""Continuous actions (continuous=True) against ale-py, which takes them as (radius, theta, fire).

The vector env is stepped beside ale_py.vector.AtariVectorEnv and cule.AtariEnv beside gymnasium's
ALE/<Game>-v5, both with continuous=True, sticky actions and random actions whose radius (the paddle
strength) goes past 1: on the paddle games every frame's paddle step depends on it, so any difference in
the strength arithmetic or in what a sticky repeat keeps shows in the observations within a few steps.
"""
import gymnasium
import numpy as np
import pytest
import torch
from ale_py.env import AtariEnv as AleAtariEnv

import cule
from cule import continuous
from test_vector_env_ale import compare, random_actions

PADDLE_GAMES = ["pong", "breakout", "kaboom", "casino"]


def test_joystick_table_is_ale_pys():
    for h in (-1, 0, 1):
        for v in (-1, 0, 1):
            for fire in (0, 1):
                assert continuous.JOYSTICK[h + 1, v + 1, fire] == AleAtariEnv.map_action_idx(h, v, bool(fire)).value


@pytest.mark.parametrize("game", [*PADDLE_GAMES, "space_invaders"])
def test_vector_env_matches_ale_py(game):
    first, what = compare(game, 300, seed=5, continuous=True, repeat_action_probability=0.25)
    assert first is None, f"step {first}: {what}"


def test_vector_env_threshold_matches_ale_py():
    first, what = compare("breakout", 200, seed=2, continuous=True, continuous_action_threshold=0.2,
                          repeat_action_probability=0.25)
    assert first is None, f"step {first}: {what}"


def _gymnasium_pair(game, **kwargs):
    import ale_py
    gymnasium.register_envs(ale_py)
    theirs = gymnasium.make(f"ALE/{cule.atari_env.env_name(game)}-v5", continuous=True, **kwargs)
    ours = cule.AtariEnv(game, continuous=True, repeat_action_probability=0.25, max_num_frames_per_episode=108_000,
                         **kwargs)
    return theirs, ours


# skiing has 9 legal actions: ALE turns the joystick directions it lacks into NOOP (noopIllegalActions)
@pytest.mark.parametrize("game", ["pong", "kaboom", "skiing"])
def test_gymnasium_env_matches_ale_py(game):
    theirs, ours = _gymnasium_pair(game)
    assert ours.action_space == theirs.action_space
    obs_t, _ = theirs.reset(seed=7)
    obs_o, _ = ours.reset(seed=7)
    assert np.array_equal(obs_t, obs_o)
    rng = np.random.default_rng(7)
    for step in range(300):
        action = random_actions(rng, theirs.action_space, 1)[0]
        t, o = theirs.step(action), ours.step(action)
        assert np.array_equal(t[0], o[0]) and t[1:4] == o[1:4], f"{game}: step {step} differs"
        assert t[4]["lives"] == o[4]["lives"] and t[4]["frame_number"] == o[4]["frame_number"]
        if t[2] or t[3]:
            theirs.reset()
            ours.reset()
    with pytest.raises(AttributeError, match="continuous"):
        ours.get_keys_to_action()


def test_full_strength_is_the_discrete_action_and_a_weaker_one_differs():
    """Radius 1 pushed left is discrete LEFT; radius 0.6, still left, moves the paddle less."""
    def run(actions, **kwargs):
        env = cule.AtariVectorEnv("breakout", 1, full_action_space=True, **kwargs)
        env.reset(seed=0)
        for a in actions:
            obs = env.step(a)[0]
        return obs, env.get_ram()
    left = continuous.JOYSTICK[0, 1, 0]
    discrete = run([np.array([left])] * 3)
    full = run([np.array([[1.0, np.pi, 0.0]], np.float32)] * 3, continuous=True)
    weak = run([np.array([[0.6, np.pi, 0.0]], np.float32)] * 3, continuous=True)
    assert all(torch.equal(a, b) for a, b in zip(discrete, full))
    assert not torch.equal(full[1], weak[1])


def test_shim_equals_cpu_with_states():
    """The CUDA backend's launch code computes the action words on its device with torch: the same steps as the
    CPU backend, and a saved state keeps the stored paddle step with the sticky action."""
    kwargs = dict(continuous=True, repeat_action_probability=0.5)
    cpu = cule.AtariVectorEnv("pong", 4, **kwargs)
    shim = cule.AtariVectorEnv("pong", 4, _shim=True, **kwargs)
    rng = np.random.default_rng(3)
    for env in (cpu, shim):
        env.reset(seed=11)
    actions = [torch.from_numpy(random_actions(rng, cpu.single_action_space, 4)) for _ in range(60)]
    for t, a in enumerate(actions[:30]):
        assert torch.equal(cpu.step(a)[0], shim.step(a)[0]), f"step {t}"
    saved = cpu.clone_state()
    later = [cpu.step(a)[0] for a in actions[30:]]
    cpu.restore_state(saved)
    shim.restore_state(saved)
    for t, a in enumerate(actions[30:]):
        again, on_shim = cpu.step(a)[0], shim.step(a)[0]
        assert torch.equal(again, later[t]) and torch.equal(on_shim, later[t]), f"step {30 + t} after restore"


@pytest.mark.parametrize("bad, error, match", [
    (np.array([[np.nan, 0, 0]] * 2, np.float32), ValueError, "environment 0 is not finite"),
    (np.array([[0.5, 0, 0], [0.5, np.inf, 0]], np.float32), ValueError, "environment 1 is not finite"),
    (np.array([[1e5, 0, 0]] * 2, np.float32), ValueError, "radius 100000.0: at most 65536"),
    (np.array([0, 1]), TypeError, "must be floats"),
    (np.zeros((2, 2), np.float32), ValueError, r"shape \(2, 3\)"),
])
@pytest.mark.parametrize("shim", [False, True], ids=["cpu", "shim-host-actions"])
def test_bad_actions_are_refused_before_anything_steps(bad, error, match, shim):
    env = cule.AtariVectorEnv("pong", 2, continuous=True, _shim=shim)
    env.reset(seed=0)
    before = env.clone_state()
    # on the shim, numpy actions are on its device (the host): the dtype and shape checks still come first
    if shim and error is ValueError and "shape" not in match:
        env.step(bad)  # played as NOOP where bad, reported at the next reset
        with pytest.raises(ValueError, match="not finite or had a radius"):
            env.reset(seed=0)
        return
    with pytest.raises(error, match=match):
        env.step(bad)
    assert torch.equal(env.clone_state(), before)


@pytest.mark.parametrize("threshold", [float("nan"), "0.5", True, None])
def test_bad_threshold_is_refused(threshold):
    with pytest.raises(ValueError, match="continuous_action_threshold"):
        cule.AtariVectorEnv("pong", 1, continuous=True, continuous_action_threshold=threshold)
