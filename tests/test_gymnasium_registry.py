"""gymnasium.make("cule/<Game>-v5") and make_vec against ale-py's ALE/<Game>-v5, step by step, and gymnasium's own
env checker."""
import warnings

import ale_py
import gymnasium
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env

import cule

gymnasium.register_envs(ale_py)


def test_the_registry_holds_every_game_ale_py_registers():
    ours = {k.split("/", 1)[1] for k in gymnasium.registry if k.startswith("cule/")}
    theirs = {k.split("/", 1)[1] for k in gymnasium.registry if k.startswith("ALE/") and k.endswith("-v5")}
    assert ours == theirs and len(ours) == 104
    spec = gymnasium.spec("cule/MsPacman-v5")
    assert spec.kwargs == {**gymnasium.spec("ALE/MsPacman-v5").kwargs}


@pytest.mark.parametrize("name,obs_type,seed", [("Pong", "rgb", 11), ("Breakout", "rgb", 11),
                                                ("MsPacman", "grayscale", 11), ("Seaquest", "ram", 11),
                                                ("Breakout", "rgb", 2**40)])  # any seed SeedSequence takes
def test_make_equals_ale_py_step_for_step(name, obs_type, seed):
    ours = gymnasium.make(f"cule/{name}-v5", obs_type=obs_type, render_mode="rgb_array")
    theirs = gymnasium.make(f"ALE/{name}-v5", obs_type=obs_type, render_mode="rgb_array")
    assert ours.observation_space == theirs.observation_space and ours.action_space == theirs.action_space
    assert ours.unwrapped.get_action_meanings() == theirs.unwrapped.get_action_meanings()
    rng = np.random.default_rng(7)
    a, b = ours.reset(seed=seed), theirs.reset(seed=seed)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1] == {k: b[1][k] for k in a[1]}
    episodes = 1
    for t in range(600):
        action = int(rng.integers(ours.action_space.n))
        a, b = ours.step(action), theirs.step(action)
        np.testing.assert_array_equal(a[0], b[0], err_msg=f"{name} step {t}")
        assert a[1:4] == b[1:4] and type(a[1]) is float, (name, t, a[1:4], b[1:4])
        assert a[4] == b[4], (name, t)
        if t % 97 == 0:
            np.testing.assert_array_equal(ours.render(), theirs.render())
        if a[2] or a[3] or t == 300:  # an unseeded reset keeps the console and its RNG, as ale-py's
            episodes += 1
            a, b = ours.reset(), theirs.reset()
            np.testing.assert_array_equal(a[0], b[0])
    assert episodes >= 2
    ours.close()
    theirs.close()


def test_make_vec_gives_cule_vector_env_equal_to_ale_pys():
    ours = gymnasium.make_vec("cule/Breakout-v5", num_envs=4)
    theirs = gymnasium.make_vec("ALE/Breakout-v5", num_envs=4)
    assert isinstance(ours, cule.AtariVectorEnv) and ours.device.type == "cpu"
    assert ours.single_observation_space == theirs.single_observation_space
    a, b = ours.reset(seed=3), theirs.reset(seed=3)
    np.testing.assert_array_equal(a[0].numpy(), b[0])
    rng = np.random.default_rng(0)
    for t in range(200):
        actions = rng.integers(ours.single_action_space.n, size=4)
        a, b = ours.step(actions), theirs.step(actions)
        np.testing.assert_array_equal(a[0].numpy(), b[0], err_msg=f"step {t}")
        for i in (1, 2, 3):
            np.testing.assert_array_equal(a[i].numpy(), b[i], err_msg=f"step {t} output {i}")
        np.testing.assert_array_equal(a[4]["lives"].numpy(), b[4]["lives"])
    ours.close()
    theirs.close()
    # cule's own arguments pass through
    env = gymnasium.make_vec("cule/Pong-v5", num_envs=2, device="cpu", img_height=42, img_width=42)
    assert tuple(env.reset(seed=0)[0].shape) == (2, 4, 42, 42) and isinstance(env.reset()[0], torch.Tensor)
    env.close()


def test_gymnasiums_env_checker_passes():
    env = gymnasium.make("cule/Pong-v5", render_mode="rgb_array")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    env.close()


@pytest.mark.parametrize("kwargs,message", [
    (dict(obs_type="pixels"), "obs_type"),
    (dict(frameskip=(2, 5)), "stochastic frameskip"),
    (dict(continuous=True), "continuous"),
    (dict(volume=3), "unknown arguments"),
])
def test_unsupported_arguments_say_what_is_wrong(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        gymnasium.make("cule/Pong-v5", **kwargs)


def test_human_rendering_is_gymnasiums_wrapper_over_rgb_arrays():
    with pytest.raises(ValueError, match="render_mode must be None or 'rgb_array'"):
        cule.AtariEnv("pong", render_mode="human")
    assert gymnasium.make("cule/Pong-v5", render_mode="human").render_mode == "human"


def test_step_before_reset_and_bad_actions_raise():
    env = gymnasium.make("cule/Pong-v5", disable_env_checker=True).unwrapped
    with pytest.raises(gymnasium.error.ResetNeeded):
        env.step(0)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="not in Discrete"):
        env.step(6)
    env.close()
