"""cule.AtariVectorEnv against ale_py.vector.AtariVectorEnv under the same arguments.

Both run side by side with the same seed and the same random actions; every
step compares observations, rewards, terminations, truncations, lives, both
frame counters, env ids and (SameStep) final observations.

Tolerance: none. ale-py shrinks frames with OpenCV's INTER_AREA; cule
reproduces its tap tables and float arithmetic (cule/cpp/vector/preprocess.hpp), so
observations must be byte-equal, not merely within a grey level.
"""
import gymnasium
import numpy as np
import pytest
import torch
from ale_py.vector_env import AtariVectorEnv as AleVectorEnv
from gymnasium.vector import AutoresetMode

import cule
from ale_oracle import format_table
from conftest import report

ROWS = []
GAMES_8 = ["pong", "breakout", "ms_pacman", "space_invaders", "seaquest", "qbert", "asteroids", "enduro"]


def _first_difference(theirs, ours, done_mask=None):
    """Name of the first field that differs between an ale-py and a cule step result."""
    t_obs, *t_rest = theirs
    o_obs, *o_rest = ours
    if not np.array_equal(t_obs, o_obs.numpy()):
        d = np.abs(t_obs.astype(int) - o_obs.numpy().astype(int))
        return f"observation: {int((d > 0).sum())} bytes differ, by up to {int(d.max())}"
    t_info, o_info = t_rest[-1], o_rest[-1]
    for name, t, o in zip(("reward", "terminated", "truncated"), t_rest[:-1], o_rest[:-1]):
        if not np.array_equal(t, o.numpy()):
            return f"{name}: ale-py {t.tolist()} cule {o.numpy().tolist()}"
    for key in ("env_id", "lives", "frame_number", "episode_frame_number"):
        if not np.array_equal(t_info[key], o_info[key].numpy()):
            return f"info[{key}]: ale-py {t_info[key].tolist()} cule {o_info[key].numpy().tolist()}"
    if done_mask is not None and done_mask.any():
        if ("final_obs" in t_info) != ("final_obs" in o_info):
            return "final_obs present in one only"
        if not np.array_equal(t_info["final_obs"][done_mask], o_info["final_obs"].numpy()[done_mask]):
            return "final_obs differs"
    return None


def random_actions(rng, space, num_envs):
    """Random actions of one environment's action space, for num_envs: indices, or continuous (radius, theta,
    fire) float32 with radii up to 1.5, past the space's bound, since ale-py takes them (stronger paddles)."""
    if isinstance(space, gymnasium.spaces.Discrete):
        return rng.integers(0, space.n, size=num_envs)
    return rng.uniform(space.low, space.high * np.array([1.5, 1, 1], np.float32), (num_envs, 3)).astype(np.float32)


def compare(game, steps, seed=0, num_envs=4, **kwargs):
    """Steps both vector envs; returns (first mismatching step or None, what differed)."""
    kwargs = {"num_threads": 2, **kwargs}
    theirs = AleVectorEnv(game, num_envs, **kwargs)
    ours = cule.AtariVectorEnv(game, num_envs, **kwargs)
    try:
        t_obs, t_info = theirs.reset(seed=seed)
        o_obs, o_info = ours.reset(seed=seed)
        what = _first_difference((t_obs, t_info), (o_obs, o_info))
        if what:
            return 0, "reset " + what
        rng = np.random.default_rng(seed)
        for t in range(1, steps + 1):
            actions = random_actions(rng, theirs.single_action_space, num_envs)
            theirs_step = theirs.step(actions)
            ours_step = ours.step(torch.from_numpy(actions))
            done = theirs_step[2] | theirs_step[3]
            what = _first_difference(theirs_step, ours_step, done if "final_obs" in theirs_step[4] else None)
            if what:
                return t, what
        return None, ""
    finally:
        theirs.close()
        ours.close()


def _check(label, game, steps, **kwargs):
    first, what = compare(game, steps, **kwargs)
    ROWS.append((label, steps, first, what))
    assert first is None, f"{label}: step {first}: {what}"


@pytest.mark.parametrize("game", GAMES_8)
def test_default_arguments_2000_steps(game):
    """ale-py's defaults: 84x84 grey, stack 4, frameskip 4, max-pool, 30 no-ops, FIRE reset, clipping."""
    _check(game, game, 2000)


CONFIGS = {
    "rgb 84x84, sticky 0.25": ("pong", dict(grayscale=False, repeat_action_probability=0.25)),
    "episodic life, SameStep": ("breakout", dict(episodic_life=True, autoreset_mode=AutoresetMode.SAME_STEP)),
    "life_loss_info, rgb 105x80 (2x2 fast path), raw rewards":
        ("ms_pacman", dict(grayscale=False, img_height=105, img_width=80, life_loss_info=True, reward_clipping=False)),
    "PAL 250 lines, no max-pool, noop_max 1, stack 1, frameskip 3":
        ("adventure", dict(maxpool=False, noop_max=1, stack_num=1, frameskip=3)),
    "native 210x160, full action set, frameskip 5":
        ("qbert", dict(img_height=210, img_width=160, frameskip=5, full_action_space=True)),
    "rgb 50x33, 1000-frame truncation, SameStep":
        ("freeway", dict(img_height=50, img_width=33, grayscale=False, max_num_frames_per_episode=1000,
                         autoreset_mode="SameStep")),
    "70x80 (3x2 integer factors), no FIRE reset, no no-ops":
        ("space_invaders", dict(img_height=70, img_width=80, use_fire_reset=False, noop_max=0)),
    "grown to 224x224 (OpenCV's bilinear branch), stack 2":
        ("breakout", dict(img_height=224, img_width=224, stack_num=2)),
    "rgb 84x200 (shrunk down, grown across), PAL":
        ("adventure", dict(img_height=84, img_width=200, grayscale=False)),
}


@pytest.mark.parametrize("label", list(CONFIGS))
def test_other_arguments(label):
    game, kwargs = CONFIGS[label]
    _check(f"{game}: {label}", game, 400, **kwargs)


def _trajectories(env, steps, num_envs, n_actions, ale):
    """Per-environment trajectories under actions that depend only on (env id, its step count)."""
    traj = {i: [] for i in range(num_envs)}
    obs, info = env.reset(seed=3)
    count = np.zeros(num_envs, dtype=np.int64)
    ids = np.asarray(info["env_id"])
    for k, i in enumerate(ids):  # as async batches deliver a reset: reward 0, flags false
        traj[int(i)].append((np.asarray(obs[k]).tobytes(), 0, False, False, int(info["lives"][k])))
    for _ in range(steps):
        actions = (ids * 7 + count[ids] * 3) % n_actions
        count[ids] += 1
        obs, rew, term, trunc, info = env.step(torch.from_numpy(actions) if not ale else actions)
        ids = np.asarray(info["env_id"])
        for k, i in enumerate(ids):
            traj[int(i)].append((np.asarray(obs[k]).tobytes(), int(rew[k]), bool(term[k]), bool(trunc[k]),
                                 int(info["lives"][k])))
    return traj, count


def test_async_batches_match_ale_py_env_by_env():
    """batch_size < num_envs: ale-py returns environments in completion order, cule round-robin; each
    environment's own trajectory must be the same."""
    n, b = 6, 2
    theirs = AleVectorEnv("breakout", n, batch_size=b, num_threads=2)
    ours = cule.AtariVectorEnv("breakout", n, batch_size=b, num_threads=2)
    t_traj, t_count = _trajectories(theirs, 300, n, theirs.single_action_space.n, ale=True)
    o_traj, o_count = _trajectories(ours, 300, n, ours.single_action_space.n, ale=False)
    assert ours.observation_space.shape[0] == b and ours.action_space.shape == (b,)
    compared = 0
    for i in range(n):
        common = min(len(t_traj[i]), len(o_traj[i]))
        assert common > 10, f"env {i} was hardly stepped"
        assert t_traj[i][:common] == o_traj[i][:common], f"env {i} differs"
        compared += common
    ROWS.append(("breakout: batch_size 2 of 6 (async), per env", compared, None, ""))
    theirs.close()
    ours.close()


def test_partial_reset_with_mask_matches_ale_py():
    n = 4
    theirs = AleVectorEnv("pong", n, num_threads=2)
    ours = cule.AtariVectorEnv("pong", n, num_threads=2)
    theirs.reset(seed=1)
    ours.reset(seed=1)
    rng = np.random.default_rng(1)
    for t in range(60):
        a = rng.integers(0, 6, size=n)
        assert _first_difference(theirs.step(a), ours.step(torch.from_numpy(a))) is None
        if t % 20 == 19:
            mask = rng.random(n) < 0.5
            mask[0] = True
            seed = np.arange(100, 100 + mask.sum())
            what = _first_difference(theirs.reset(seed=seed, options={"reset_mask": mask}),
                                     ours.reset(seed=seed, options={"reset_mask": mask}))
            assert what is None, f"reset_mask {mask}: {what}"


def test_spaces_and_gymnasium_vector_api():
    env = cule.AtariVectorEnv("breakout", 3, num_threads=1)
    ale = AleVectorEnv("breakout", 3, num_threads=1)
    assert isinstance(env, gymnasium.vector.VectorEnv)
    assert env.single_observation_space == ale.single_observation_space
    assert env.observation_space == ale.observation_space
    assert env.single_action_space == ale.single_action_space and env.action_space == ale.action_space
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs.numpy())
    for _ in range(20):
        obs, rew, term, trunc, info = env.step(torch.from_numpy(env.action_space.sample()))
        assert env.observation_space.contains(obs.numpy())
        assert rew.dtype == torch.int32 and term.dtype == torch.bool and trunc.dtype == torch.bool
        assert set(info) >= {"env_id", "lives", "frame_number", "episode_frame_number"}
    rgb = cule.AtariVectorEnv("breakout", 2, grayscale=False, num_threads=1)
    assert rgb.single_observation_space.shape == (4, 84, 84, 3)
    assert rgb.observation_space.contains(rgb.reset(seed=0)[0].numpy())
    env.close()
    ale.close()


def _run_until_done(env, n_actions, seed=2, limit=3000):
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for t in range(limit):
        out = env.step(torch.from_numpy(rng.integers(0, n_actions, size=env.num_envs)))
        if (out[2] | out[3]).any():
            return t, out, env.step(torch.from_numpy(rng.integers(0, n_actions, size=env.num_envs)))
    raise AssertionError("no episode ended")


def test_autoreset_next_step_semantics():
    """NextStep: the step after an episode's end returns the new episode's first observation, reward 0,
    flags false, episode frame number 0 plus the reset's no-op frames."""
    env = cule.AtariVectorEnv("pong", 2, num_threads=1, episodic_life=False, max_num_frames_per_episode=400)
    t, ended, after = _run_until_done(env, 6)
    done = (ended[2] | ended[3]).numpy()
    assert ended[3].numpy()[done].all(), "pong cannot end in 100 steps: truncation must end it"
    assert (ended[4]["episode_frame_number"].numpy()[done] >= 400).all()
    assert (after[1].numpy()[done] == 0).all() and not after[2].numpy()[done].any()
    assert not after[3].numpy()[done].any()
    assert (after[4]["episode_frame_number"].numpy()[done] < 31).all()
    first = after[0].numpy()[done]
    assert (first[:, :-1] == 0).all(), "a fresh stack holds only the reset frame"


def test_autoreset_same_step_semantics():
    """SameStep: the ending step reports the end and the new episode's observation; final_obs holds the old."""
    env = cule.AtariVectorEnv("pong", 2, num_threads=1, max_num_frames_per_episode=400, autoreset_mode="SameStep")
    t, ended, after = _run_until_done(env, 6)
    done = (ended[2] | ended[3]).numpy()
    info = ended[4]
    assert "final_obs" in info and info["final_obs"].shape == ended[0].shape
    assert (info["episode_frame_number"].numpy()[done] < 31).all(), "already the new episode's counters"
    assert (ended[0].numpy()[done][:, :-1] == 0).all(), "observation is the new episode's first"
    assert (info["final_obs"].numpy()[done][:, :-1] != 0).any(), "final_obs is the ended episode's stack"
    assert not (after[2] | after[3]).numpy()[done].any()


def _trajectory(**kwargs):
    env = cule.AtariVectorEnv("ms_pacman", 6, **kwargs)
    obs, _ = env.reset(seed=9)
    rng = np.random.default_rng(4)
    frames = [obs.clone()]
    for _ in range(150):
        obs, rew, term, trunc, _ = env.step(torch.from_numpy(rng.integers(0, 9, size=6)))
        frames.append(torch.cat([obs.flatten(1), rew[:, None], term[:, None].int(), trunc[:, None].int()], 1))
    return frames


def test_same_seed_same_results_any_thread_count():
    runs = [_trajectory(num_threads=t) for t in (1, 2, 3)]
    for other in runs[1:]:
        assert all(torch.equal(a, b) for a, b in zip(runs[0], other))


def test_async_batch_size_does_not_change_an_environments_trajectory():
    n = 4
    traj = []
    for b, threads in ((4, 1), (2, 2), (1, 1)):
        env = cule.AtariVectorEnv("breakout", n, batch_size=b, num_threads=threads)
        traj.append(_trajectories(env, 60 * n // b, n, 4, ale=False)[0])
    for i in range(n):
        common = min(len(t[i]) for t in traj)
        assert common > 20
        assert traj[0][i][:common] == traj[1][i][:common] == traj[2][i][:common], f"env {i}"


def test_bad_input_is_refused_and_env_stays_usable():
    env = cule.AtariVectorEnv("pong", 2, num_threads=1)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(torch.tensor([0, 0]))
    env.reset(seed=0)
    with pytest.raises(TypeError, match="boolean"):
        env.reset(options={"reset_mask": np.array([1, 0])})
    with pytest.raises(ValueError, match="shape"):
        env.reset(options={"reset_mask": np.array([True, False, True])})
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=np.array([1, 2, 3]))
    with pytest.raises(ValueError, match="seeds must lie"):
        env.reset(seed=2**31)
    with pytest.raises(ValueError, match="outside the action set"):
        env.step(np.array([0, 6]))
    with pytest.raises(TypeError, match="integer"):
        env.step(np.array([0.0, 1.0]))
    env.step(np.array([0, 1]))  # still usable
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.step(np.array([0, 1]))
    for size in (0, 4097):
        with pytest.raises(ValueError, match=r"img_height must be an int in 1\.\.4096"):
            cule.AtariVectorEnv("pong", 1, img_height=size)
    with pytest.raises(ValueError, match="batch_size"):
        cule.AtariVectorEnv("pong", 2, batch_size=3)
    with pytest.raises(ValueError, match="autoreset_mode"):
        cule.AtariVectorEnv("pong", 2, autoreset_mode="Sometimes")
    with pytest.raises(ValueError, match="partial resets"):
        e = cule.AtariVectorEnv("pong", 2, batch_size=1)
        e.reset(seed=0)
        e.reset(options={"reset_mask": np.array([True, False])})
    with pytest.raises(MemoryError, match="fewer environments"):
        cule.AtariVectorEnv("pong", 10**9)


def test_report_vector_env_table():
    if not ROWS:
        pytest.skip("nothing was compared")
    report("cule.AtariVectorEnv vs ale_py.vector.AtariVectorEnv (steps per row; 4 envs unless noted)",
           format_table(sorted(ROWS)))


@pytest.mark.parametrize("limit", [0, -1])
def test_a_frame_limit_of_0_or_less_is_no_limit_as_in_ale_interface(limit):
    """ALEInterface takes max_num_frames_per_episode 0 or below as no limit, and so does cule. (ale-py 0.12.1's
    vector env truncates every step instead; docs/vector_env.md says which one cule follows.)"""
    from ale_py import ALEInterface, LoggerMode, roms

    ALEInterface.setLoggerMode(LoggerMode.Error)
    ale = ALEInterface()
    ale.setInt("max_num_frames_per_episode", limit)
    ale.loadROM(roms.get_rom_path("pong"))
    env = cule.AtariVectorEnv("pong", 1, max_num_frames_per_episode=limit, noop_max=0, repeat_action_probability=0.0)
    env.reset(seed=0)
    truncated = []
    for _ in range(300):  # 1,200 frames
        for _ in range(4):
            ale.act(0)
        truncated.append((ale.game_truncated(), bool(env.step(torch.zeros(1, dtype=torch.int64))[3][0])))
    assert truncated == [(False, False)] * 300 and ale.getEpisodeFrameNumber() == 1200
