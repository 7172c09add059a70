"""gymnasium.make("cule/<Game>-v5") and make_vec against ale-py's ALE/<Game>-v5, step by step, and gymnasium's own
env checker."""
import pickle
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
    ours = {k.split("/", 1)[1] for k in gymnasium.registry if k.startswith("cule/") and k.endswith("-v5")}
    theirs = {k.split("/", 1)[1] for k in gymnasium.registry if k.startswith("ALE/") and k.endswith("-v5")}
    assert ours == theirs and len(ours) == 104
    spec = gymnasium.spec("cule/MsPacman-v5")
    assert spec.kwargs == {**gymnasium.spec("ALE/MsPacman-v5").kwargs}
    # the ids of cleanrl's and Stable-Baselines3's scripts: ale-py's 62, with their settings, and the other games
    v4 = {k for k in gymnasium.registry if k.endswith("NoFrameskip-v4") and "/" not in k}
    assert len(v4) == 62
    for name in v4:
        assert gymnasium.spec(f"cule/{name}").kwargs == gymnasium.spec(name).kwargs, name
    assert len([k for k in gymnasium.registry if k.startswith("cule/") and k.endswith("NoFrameskip-v4")]) == 104


@pytest.mark.parametrize("name,obs_type,seed", [("Pong", "rgb", 11), ("Breakout", "rgb", 11),
                                                ("MsPacman", "grayscale", 11), ("Seaquest", "ram", 11),
                                                ("Breakout", "rgb", 2**40)])  # any seed SeedSequence takes
def test_make_equals_ale_py_step_for_step(name, obs_type, seed):
    ours = gymnasium.make(f"cule/{name}-v5", obs_type=obs_type, render_mode="rgb_array")
    theirs = gymnasium.make(f"ALE/{name}-v5", obs_type=obs_type, render_mode="rgb_array")
    assert ours.observation_space == theirs.observation_space and ours.action_space == theirs.action_space
    assert ours.unwrapped.get_action_meanings() == theirs.unwrapped.get_action_meanings()
    def also(t, a, b):
        assert type(a[1]) is float
        if t % 97 == 0:
            np.testing.assert_array_equal(ours.render(), theirs.render())

    # an unseeded reset keeps the console and its RNG, as ale-py's
    _side_by_side(ours, theirs, seed=seed, steps=600, actions_seed=7, reset_at=300, also=also)
    ours.close()
    theirs.close()


def _side_by_side(ours, theirs, *, seed, steps, actions_seed, reset_at=None, also=None) -> int:
    """Resets both envs with `seed` and steps them with the same random actions, asserting the same observation,
    reward, terminated, truncated and info every step (and `also(t, ours' step, theirs')`); an ended episode, or
    step `reset_at`, resets both without a seed. Returns how many episodes ended."""
    rng = np.random.default_rng(actions_seed)
    a, b = ours.reset(seed=seed), theirs.reset(seed=seed)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1] == {k: b[1][k] for k in a[1]}
    ended = 0
    for t in range(steps):
        action = int(rng.integers(ours.action_space.n))
        a, b = ours.step(action), theirs.step(action)
        np.testing.assert_array_equal(a[0], b[0], err_msg=f"step {t}")
        assert a[1:] == b[1:], (t, a[1:], b[1:])
        if also:
            also(t, a, b)
        ended += bool(a[2] or a[3])
        if a[2] or a[3] or t == reset_at:
            a, b = ours.reset(), theirs.reset()
            np.testing.assert_array_equal(a[0], b[0], err_msg=f"reset after step {t}")
    return ended


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


@pytest.mark.parametrize("kwargs", [{}, dict(continuous=True)], ids=["discrete", "continuous"])
def test_gymnasiums_env_checker_passes(kwargs):
    env = gymnasium.make("cule/Pong-v5", render_mode="rgb_array", **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # ale-py's continuous space ([0, 1] x [-pi, pi] x [0, 1]) is not the normalised box the checker advises
        warnings.filterwarnings("ignore", message=".*symmetric and normalized space")
        check_env(env.unwrapped)
    env.close()


@pytest.mark.parametrize("kwargs,message", [
    (dict(obs_type="pixels"), "obs_type"),
    (dict(frameskip=(2, 5)), "stochastic frameskip"),
    (dict(sound_obs=True), "sound"),
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


# gymnasium's AtariPreprocessing steps a frameskip-1 env, reads lives and screens from env.unwrapped.ale between
# frames and draws its no-ops from env.unwrapped.np_random, so everything it sees must be ale-py's.
@pytest.mark.parametrize("name,kwargs", [
    ("Pong", {}),
    ("Breakout", dict(terminal_on_life_loss=True, grayscale_obs=False)),
    ("MsPacman", dict(screen_size=64, scale_obs=True, noop_max=10)),
])
def test_gymnasiums_atari_preprocessing_over_cule_equals_over_ale_py(name, kwargs):
    from gymnasium.wrappers import AtariPreprocessing
    ours, theirs = (AtariPreprocessing(gymnasium.make(f"{ns}/{name}-v5", frameskip=1), **kwargs)
                    for ns in ("cule", "ALE"))
    ended = _side_by_side(ours, theirs, seed=5, steps=700, actions_seed=1)
    assert ended >= (4 if "terminal_on_life_loss" in kwargs else 0)
    ours.close()
    theirs.close()


def test_stable_baselines3_atari_wrapper_over_no_frameskip_v4_equals_ale_py():
    # cleanrl's Atari scripts: gym.make("<Game>NoFrameskip-v4") under these wrappers (no-op and FIRE starts,
    # frame skip with max-pooling, a life as an episode, 84x84 grey frames by OpenCV, clipped rewards)
    from stable_baselines3.common.atari_wrappers import AtariWrapper
    ours, theirs = (AtariWrapper(gymnasium.make(f"{ns}BreakoutNoFrameskip-v4")) for ns in ("cule/", ""))
    assert _side_by_side(ours, theirs, seed=9, steps=600, actions_seed=2) >= 4  # a life lost ends an episode
    ours.close()
    theirs.close()


def test_ale_view_reads_what_ale_pys_interface_reads():
    ours, theirs = (gymnasium.make(f"{ns}/Breakout-v5", max_num_frames_per_episode=1000).unwrapped
                    for ns in ("cule", "ALE"))
    mine, ale = ours.ale, theirs.ale
    rng = np.random.default_rng(4)
    ours.reset(seed=3), theirs.reset(seed=3)
    np.testing.assert_array_equal(mine.getMinimalActionSet(), [a.value for a in ale.getMinimalActionSet()])
    np.testing.assert_array_equal(mine.getLegalActionSet(), [a.value for a in ale.getLegalActionSet()])
    ended = truncated = False
    for t in range(600):
        action = int(rng.integers(ours.action_space.n))
        ours.step(action), theirs.step(action)
        assert (mine.lives(), mine.getFrameNumber(), mine.getEpisodeFrameNumber()) == \
               (ale.lives(), ale.getFrameNumber(), ale.getEpisodeFrameNumber()), t
        assert (mine.game_over(), mine.game_over(with_truncation=False), mine.game_truncated()) == \
               (ale.game_over(), ale.game_over(with_truncation=False), ale.game_truncated()), t
        ended |= mine.game_over(with_truncation=False)
        truncated |= mine.game_truncated()
        if t % 50 == 0:
            np.testing.assert_array_equal(mine.getRAM(), ale.getRAM())
            for read in ("getScreen", "getScreenRGB", "getScreenGrayscale"):
                expected = getattr(ale, read)()
                np.testing.assert_array_equal(getattr(mine, read)(), expected, err_msg=f"{read} at {t}")
                buffer = np.zeros_like(expected)
                assert getattr(mine, read)(buffer) is None
                np.testing.assert_array_equal(buffer, expected, err_msg=f"{read} into a buffer at {t}")
        if mine.game_over():
            ours.reset(), theirs.reset()
    assert ended and truncated
    with pytest.raises(ValueError, match="uint8 numpy array of 100800"):
        mine.getScreenRGB(np.zeros((210, 160), np.uint8))
    ours.close()
    theirs.close()
    with pytest.raises(RuntimeError, match="closed"):
        mine.lives()


@pytest.mark.parametrize("full_action_space", [False, True])
def test_keys_to_action_are_ale_pys_for_every_game(full_action_space):
    for game in cule.list_games():
        ours = cule.AtariEnv(game, full_action_space=full_action_space)
        theirs = ale_py.AtariEnv(game, full_action_space=full_action_space)
        assert ours.get_keys_to_action() == theirs.get_keys_to_action(), game
        ours.close()
        theirs.close()


def test_clone_and_restore_state_replay_the_same_steps():
    env = gymnasium.make("cule/Breakout-v5").unwrapped  # sticky actions 0.25
    env.reset(seed=1)
    actions = np.random.default_rng(5).integers(env.action_space.n, size=80)
    for a in actions[:30]:
        env.step(int(a))
    with_rng, without = env.clone_state(include_rng=True), env.ale.cloneState()
    first = [env.step(int(a)) for a in actions[30:]]
    env.restore_state(pickle.loads(pickle.dumps(with_rng)))  # rows pickle, as ale-py's ALEState does
    again = [env.step(int(a)) for a in actions[30:]]
    for x, y in zip(first, again):
        np.testing.assert_array_equal(x[0], y[0])
        assert x[1:] == y[1:]
    env.ale.restoreState(without)  # the console goes back, the sticky-action RNG goes on from where it is
    assert env.ale.getFrameNumber() == first[0][4]["frame_number"] - 4
    other = gymnasium.make("cule/Pong-v5").unwrapped
    other.reset(seed=0)
    with pytest.raises(cule.StateError):
        env.restore_state(other.clone_state())
    broken = with_rng.copy()
    broken[len(broken) // 2] ^= 0xFF
    with pytest.raises(cule.StateError):
        env.restore_state(broken)
    env.restore_state(with_rng)  # still whole: the refused rows changed nothing
    assert env.step(int(actions[30]))[4] == first[0][4]
    env.close()
    other.close()


def test_render_without_a_render_mode_raises_as_ale_pys():
    for ns in ("cule", "ALE"):
        env = gymnasium.make(f"{ns}/Pong-v5", disable_env_checker=True).unwrapped
        env.reset(seed=0)
        with pytest.raises(gymnasium.error.Error, match="render"):
            env.render()
        env.close()


def test_numpy_outputs_run_under_gymnasiums_vector_wrappers_as_ale_pys():
    from gymnasium.wrappers.vector import RecordEpisodeStatistics
    ours, theirs = (RecordEpisodeStatistics(gymnasium.make_vec(f"{ns}/Breakout-v5", num_envs=3,
                                                               max_num_frames_per_episode=600, **kwargs))
                    for ns, kwargs in (("cule", dict(outputs="numpy")), ("ALE", {})))
    a, b = ours.reset(seed=2), theirs.reset(seed=2)
    assert type(a[0]) is np.ndarray and all(type(v) is np.ndarray for v in a[1].values())
    np.testing.assert_array_equal(a[0], b[0])
    rng = np.random.default_rng(3)
    episodes = 0
    for t in range(400):
        actions = rng.integers(ours.single_action_space.n, size=3)
        a, b = ours.step(actions), theirs.step(actions)
        np.testing.assert_array_equal(a[0], b[0], err_msg=f"step {t}")
        for i in (1, 2, 3):
            np.testing.assert_array_equal(a[i], b[i], err_msg=f"step {t} output {i}")
        assert ("episode" in a[4]) == ("episode" in b[4]), t
        if "episode" in a[4]:
            episodes += int(a[4]["_episode"].sum())
            np.testing.assert_array_equal(a[4]["_episode"], b[4]["_episode"])
            for key in ("r", "l"):  # returns and lengths ("t" is each env's wall clock)
                np.testing.assert_array_equal(a[4]["episode"][key], b[4]["episode"][key], err_msg=f"{key} at {t}")
    assert episodes >= 3
    ours.close()
    theirs.close()
    with pytest.raises(ValueError, match="outputs must be 'torch' or 'numpy'"):
        cule.AtariVectorEnv("pong", 2, outputs="np")


def test_deep_copies_and_pickles_go_on_as_the_original_and_ale_py_do():
    import copy
    ours, theirs = (gymnasium.make(f"{ns}/Breakout-v5") for ns in ("cule", "ALE"))  # sticky actions 0.25
    ours.reset(seed=6), theirs.reset(seed=6)
    rng = np.random.default_rng(8)
    for a in rng.integers(ours.action_space.n, size=40):
        ours.step(int(a)), theirs.step(int(a))
    # the copies must go on as ale-py's original does (ale-py's own deep copy does not: its screens differ)
    copies = [copy.deepcopy(ours), pickle.loads(pickle.dumps(ours))]
    assert copies[0].spec.id == "cule/Breakout-v5"
    for t, a in enumerate(rng.integers(ours.action_space.n, size=150)):
        steps = [env.step(int(a)) for env in (ours, *copies, theirs)]
        for s in steps[1:]:
            np.testing.assert_array_equal(s[0], steps[0][0], err_msg=f"step {t}")
            assert s[1:] == steps[0][1:], t
        if steps[0][2] or steps[0][3]:  # past its end ale-py plays on the finished game, cule starts the next
            break
    assert t >= 60
    fresh = copy.deepcopy(gymnasium.make("cule/Pong-v5").unwrapped)  # before any reset
    np.testing.assert_array_equal(fresh.reset(seed=1)[0], gymnasium.make("ALE/Pong-v5").reset(seed=1)[0])
