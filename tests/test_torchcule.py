"""cule.torchcule.Env, CuLE's environment class: ale-py's vector env beside it, and CuLE's semantics."""
import math

import numpy as np
import pytest
import torch
from ale_py.vector_env import AtariVectorEnv as AleVectorEnv

import cule
from cule.torchcule import Env


@pytest.mark.parametrize("game, episodic_life, rgb", [("breakout", True, False), ("pong", False, False),
                                                      ("ms_pacman", False, True)])
def test_steps_equal_ale_pys_vector_env_with_cules_settings(game, episodic_life, rgb):
    """CuLE's training settings (grey 84x84, frameskip 4, no sticky actions, max-pooled frames; and native RGB
    frames) against ale-py's vector env with one frame per observation and life losses
    reported without a reset: observations, rewards, done and lives, for as long as no game has ended (cule's
    later episodes start from cached states, CuLE's scheme, which ale-py does not have; sticky actions: below)."""
    n, seed = 4, 11
    size = dict(img_height=210, img_width=160, grayscale=False) if rgb else {}
    ours = Env(game, n, color_mode="rgb" if rgb else "gray", rescale=not rgb, frameskip=4, repeat_prob=0.0,
               episodic_life=episodic_life)
    theirs = AleVectorEnv(game, n, stack_num=1, frameskip=4, repeat_action_probability=0.0, reward_clipping=False,
                          life_loss_info=episodic_life, autoreset_mode="SameStep", num_threads=1, **size)
    try:
        ours.train()
        t_obs, _ = theirs.reset(seed=seed)
        o_obs = ours.reset(seeds=torch.arange(seed, seed + n), initial_steps=0)
        assert o_obs.shape == ((n, 210, 160, 3) if rgb else (n, 84, 84, 1)) and o_obs.dtype == torch.uint8
        frame = (lambda o: o) if rgb else (lambda o: o[..., 0])
        assert np.array_equal(frame(o_obs.numpy()), t_obs[:, 0])
        rng = np.random.default_rng(seed)
        lives_lost, frames = 0, np.zeros(n, np.int64)
        for t in range(150):
            actions = rng.integers(0, theirs.single_action_space.n, size=n)
            t_obs, t_rew, t_term, t_trunc, t_info = theirs.step(actions)
            o_obs, o_rew, o_done, o_info = ours.step(torch.from_numpy(actions).to(torch.uint8))
            if (t_info["episode_frame_number"] < frames).any():
                break  # a game ended, and ale-py started the next one without the start cache
            frames = t_info["episode_frame_number"]
            assert o_rew.dtype == torch.float32 and o_done.dtype == torch.bool, t
            assert np.array_equal(frame(o_obs.numpy()), t_obs[:, 0]), t
            assert np.array_equal(o_rew.numpy(), t_rew.astype(np.float32)), t
            assert np.array_equal(o_done.numpy(), t_term | t_trunc), t
            assert np.array_equal(o_info["ale.lives"].numpy(), t_info["lives"]), t
            lives_lost += int(o_done.sum())
        assert t > 100
        if episodic_life:
            assert lives_lost > 0  # done was set on a lost life, and the game played on
    finally:
        ours.close()
        theirs.close()


def test_sticky_actions_from_the_start_cache_are_not_ale_pys_stream():
    """What the docs say of the start cache: the RNG of sticky actions is not advanced by a start taken from it,
    so with sticky actions the episode leaves ale-py's; with ALE's resets the same Env's settings stay equal."""
    n, seed, steps = 4, 11, 150

    def run(env_step, env_reset):
        obs = [env_reset()]
        rng = np.random.default_rng(seed)
        for _ in range(steps):
            obs.append(env_step(rng.integers(0, 9, size=n)))
        return np.stack(obs)

    settings = dict(stack_num=1, frameskip=4, repeat_action_probability=0.25, reward_clipping=False,
                    autoreset_mode="SameStep", img_height=210, img_width=160, grayscale=False, num_threads=1)
    theirs = AleVectorEnv("ms_pacman", n, **settings)
    expected = run(lambda a: theirs.step(a)[0][:, 0], lambda: theirs.reset(seed=seed)[0][:, 0])
    theirs.close()
    cached = Env("ms_pacman", n, color_mode="rgb", frameskip=4, repeat_prob=0.25)
    got = run(lambda a: cached.step(torch.from_numpy(a))[0].numpy(),
              lambda: cached.reset(seeds=torch.arange(seed, seed + n)).numpy())
    cached.close()
    assert not np.array_equal(got, expected)
    ale = cule.AtariVectorEnv("ms_pacman", n, **settings)
    assert np.array_equal(run(lambda a: ale.step(torch.from_numpy(a))[0].numpy()[:, 0],
                              lambda: ale.reset(seed=seed)[0].numpy()[:, 0]), expected)
    ale.close()


def test_cules_shapes_spaces_and_actions():
    env = Env("PongNoFrameskip-v4", 3, color_mode="rgb", frameskip=4)
    assert env.screen_shape() == (210, 160)
    assert env.observation_space.shape == (3, 210, 160)  # CuLE's (C, H, W); the tensors are [N, H, W, C]
    assert env.action_space.n == 6 and env.minimal_actions().tolist() == [0, 1, 3, 4, 11, 12]
    actions = env.sample_random_actions()
    assert actions.dtype == torch.uint8 and actions.shape == (3,) and int(actions.max()) < 6
    obs = env.reset(seeds=[1, 2, 3])
    assert obs.shape == (3, 210, 160, 3)
    obs, reward, done, info = env.step(actions)
    assert obs.shape == (3, 210, 160, 3) and reward.shape == done.shape == (3,)
    env.step(torch.ones(3, 1, dtype=torch.long))  # [N, 1], as CuLE's examples draw them with multinomial(1)
    with pytest.raises(ValueError):
        env.step(torch.ones(1, 3, dtype=torch.long))
    assert set(info) == {"ale.lives"} and info["ale.lives"].dtype == torch.int32
    env.close()


def test_reset_in_training_mode_plays_the_initial_random_steps():
    """reset(initial_steps=k) in training mode equals a reset in evaluation mode followed by ceil(k / frameskip)
    steps of sample_random_actions() drawn from the same torch RNG."""
    seeds = [5, 6, 7, 8]
    trained, plain = (Env("breakout", 4, color_mode="gray", rescale=True, frameskip=4) for _ in range(2))
    trained.train()
    plain.train()
    plain.eval()
    torch.manual_seed(3)
    a = trained.reset(seeds=seeds, initial_steps=50)
    b = plain.reset(seeds=seeds)
    torch.manual_seed(3)
    for _ in range(math.ceil(50 / 4)):
        b = plain.step(plain.sample_random_actions())[0]
    assert torch.equal(a, b)
    assert not torch.equal(b, plain.reset(seeds=seeds))  # the steps moved the game on
    trained.close()
    plain.close()


def test_a_finished_episode_is_reset_within_the_step():
    """done at the frame cap, and the next episode starts in the same step: the cap comes round again after
    as many steps."""
    env = Env("pong", 2, color_mode="gray", rescale=True, frameskip=4, max_episode_length=200)
    env.train()
    env.reset(seeds=[0, 1], initial_steps=0)
    done_at = [t for t in range(1, 121) if env.step(torch.zeros(2, dtype=torch.uint8))[2].all()]
    assert done_at == [50, 100]
    env.close()


def test_states_move_between_environments():
    env = Env("breakout", 2, color_mode="gray", rescale=True, frameskip=4, repeat_prob=0.0)
    env.train()
    env.reset(seeds=[1, 2], initial_steps=40)
    env.set_states(torch.tensor([1]), env.get_states(torch.tensor([0])))
    for _ in range(30):
        obs = env.step(env.sample_random_actions()[:1].repeat(2))[0]
        assert torch.equal(obs[0], obs[1])
    env.close()


def test_what_cule_does_not_do_is_refused_by_name():
    with pytest.raises(ValueError, match="only valid with color_mode='gray'"):
        Env("pong", 1, color_mode="rgb", rescale=True)
    with pytest.raises(ValueError, match="color_mode must be 'rgb' or 'gray'"):
        Env("pong", 1, color_mode="grey")
    with pytest.raises(TypeError, match="episodic_life must be a bool"):
        Env("pong", 1, episodic_life="yes")
    env = Env("pong", 2)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(torch.zeros(2, dtype=torch.uint8))
    with pytest.raises(ValueError, match="frameskip"):
        env.train(frameskip=0)
    assert env.frameskip == 1 and env.vector.frameskip == 1  # the refused value changed nothing
    env.train(frameskip=4)  # before reset(): rebuilt with the new frameskip
    assert env.vector.frameskip == 4
    env.reset(seeds=[0, 1], initial_steps=0)
    with pytest.raises(ValueError, match="2 integer seeds"):
        env.reset(seeds=["a", "b"])
    with pytest.raises(ValueError, match="2 integer seeds"):
        env.reset(seeds=torch.tensor([1, 2, 3]))
    with pytest.raises(ValueError, match="player A only"):
        env.step(torch.zeros(2, dtype=torch.uint8), torch.zeros(2, dtype=torch.uint8))
    with pytest.raises(RuntimeError, match=r"call train\(2\) before reset\(\)"):
        env.train(frameskip=2)
    with pytest.raises(NotImplementedError, match="make a new Env with device='cpu'"):
        env.to("cpu")
    env.step(torch.zeros(2, dtype=torch.uint8))  # still usable
    env.close()
