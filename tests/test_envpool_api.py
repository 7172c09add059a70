"""cule.envpool, EnvPool's Atari interface: ale-py's vector env beside it for the values, EnvPool beside it for
the shapes, dtypes, keys, spaces and config."""
import shutil

import numpy as np
import pytest
import torch
from ale_py.vector_env import AtariVectorEnv as AleVectorEnv

import cule
import cule.envpool as cule_envpool
from cule.atari_env import env_name

envpool = pytest.importorskip("envpool", reason="EnvPool's Linux x86-64 wheel (the test extra) is not installed")


def _life_lost(lives, before, restarted):
    """EnvPool's test for a life lost within a step (AtariEnv::Step): lives fell and some remain."""
    return ~restarted & (lives > 0) & (lives < before)


@pytest.mark.parametrize("game, episodic_life, reward_clip", [("breakout", True, True), ("seaquest", True, False),
                                                              ("pong", False, True)])
def test_steps_equal_ale_pys_vector_env_under_envpools_names(game, episodic_life, reward_clip):
    """Observations, lives, truncation and the unclipped reward equal ale-py's vector env's; the reward, the
    episode ends and elapsed_step follow EnvPool's rules from ale-py's outputs; with episodic_life every
    terminal also equals ale-py's own life-loss signal (life_loss_info) wherever a life is lost with some left."""
    n, seed, steps = 6, 5, 1200
    ours = cule_envpool.make(f"{env_name(game)}-v5", env_type="gymnasium", num_envs=n, seed=seed,
                             episodic_life=episodic_life, reward_clip=reward_clip, max_episode_steps=300)
    plain = AleVectorEnv(game, n, reward_clipping=False, max_num_frames_per_episode=1200, num_threads=1)
    life = AleVectorEnv(game, n, reward_clipping=False, max_num_frames_per_episode=1200, life_loss_info=True,
                        num_threads=1)
    try:
        obs, info = ours.reset()
        t_obs, t_info = plain.reset(seed=seed)
        life.reset(seed=seed)
        assert np.array_equal(obs, t_obs) and np.array_equal(info["lives"], t_info["lives"])
        assert (info["elapsed_step"] == 0).all() and (info["reward"] == 0).all() and (info["terminated"] == 0).all()
        before, restarted, elapsed = t_info["lives"], np.zeros(n, bool), np.zeros(n, np.int32)
        rng = np.random.default_rng(seed)
        ends = lost_count = 0
        for t in range(steps):
            actions = rng.integers(0, ours.action_space.n, size=n).astype(np.int32)
            obs, reward, terminated, truncated, info = ours.step(actions, np.arange(n, dtype=np.int32))
            t_obs, t_rew, t_term, t_trunc, t_info = plain.step(actions)
            _, _, l_term, _, _ = life.step(actions)
            assert np.array_equal(obs, t_obs), t
            assert np.array_equal(info["lives"], t_info["lives"]) and np.array_equal(truncated, t_trunc), t
            assert np.array_equal(info["reward"], t_rew.astype(np.float32)), t
            assert np.array_equal(reward, np.sign(t_rew).astype(np.float32) if reward_clip else t_rew), t
            assert np.array_equal(info["terminated"], t_term.astype(np.int32)), t
            lost = _life_lost(t_info["lives"], before, restarted) if episodic_life else np.zeros(n, bool)
            assert np.array_equal(terminated, (t_term | lost) & ~t_trunc), t
            if episodic_life:
                some_left = ~lost | (t_info["lives"] > 0)
                assert np.array_equal(terminated[some_left], (l_term & ~t_trunc)[some_left]), t
            elapsed = np.where(restarted, 0, elapsed + 1)
            assert np.array_equal(info["elapsed_step"], elapsed), t
            assert np.array_equal(info["env_id"], np.arange(n)) and np.array_equal(info["players"]["env_id"],
                                                                                  np.arange(n)), t
            before, restarted = t_info["lives"], t_term | t_trunc
            ends += int((t_term | t_trunc).sum())
            lost_count += int(lost.sum())
        assert ends > 0  # episodes ended (game over or the 300-step cap) and restarted
        if episodic_life:
            assert lost_count > 0
    finally:
        ours.close()
        plain.close()
        life.close()


@pytest.mark.parametrize("batch_size", [0, 2])
def test_ram_is_each_returned_consoles(batch_size):
    """info["ram"] holds the RAM of the batch's environments, row by row (get_ram() is ALE's getRAM: its own
    tests), also while other batches step in the background."""
    ours = cule_envpool.make("Breakout-v5", num_envs=4, batch_size=batch_size, seed=1)
    try:
        ours.async_reset()
        for _ in range(5):
            *_, info = ours.recv()
            ram = info["ram"].copy()
            ours.vector._queue.drain()
            assert np.array_equal(ram, ours.vector.get_ram().numpy()[info["env_id"]])
            ours.send(np.ones(len(info["env_id"]), np.int32), info["env_id"])
    finally:
        ours.close()


def _structure(value):
    if isinstance(value, dict):
        return {k: _structure(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_structure(v) for v in value)
    return (type(value).__name__, value.dtype.str, value.shape)


@pytest.mark.parametrize("config", [dict(num_envs=4), dict(num_envs=3, gray_scale=False, stack_num=2, img_height=60,
                                                               img_width=50, episodic_life=True, reward_clip=True),
                                    dict(num_envs=2, full_action_space=True, frame_skip=2)])
def test_outputs_spaces_and_config_are_envpools(config):
    """reset and step give the types, dtypes, shapes and info keys EnvPool gives for the same config; the spaces
    and the config's names are EnvPool's (cule adds device)."""
    ours = cule_envpool.make("MsPacman-v5", env_type="gymnasium", **config)
    theirs = envpool.make("MsPacman-v5", env_type="gymnasium", **config)
    try:
        assert _structure(ours.reset()) == _structure(theirs.reset())
        action = np.zeros(config["num_envs"], np.int32)
        assert _structure(ours.step(action)) == _structure(theirs.step(action))
        assert ours.observation_space == theirs.observation_space
        assert ours.action_space == theirs.action_space
        assert ours.single_observation_space == theirs.single_observation_space
        assert set(ours.config) - {"device"} == set(theirs.config)
        for name in set(theirs.config) - {"base_path", "batch_size"}:
            assert ours.config[name] == theirs.config[name], name
        assert len(ours) == len(theirs) and np.array_equal(ours.all_env_ids, theirs.all_env_ids)
        assert ours.is_async == theirs.is_async is False
    finally:
        ours.close()
        theirs.close()


def test_rgb_stacks_are_laid_out_as_envpools():
    """EnvPool's RGB observation is [B, stack * 3, H, W]: frame i's channel c at 3 i + c (AtariEnv::PushStack);
    the frames are ale-py's."""
    n = 2
    ours = cule_envpool.make("Pong-v5", num_envs=n, gray_scale=False, stack_num=3, seed=2)
    theirs = AleVectorEnv("pong", n, grayscale=False, stack_num=3, reward_clipping=False, num_threads=1)
    try:
        ours.reset()
        theirs.reset(seed=2)
        for _ in range(5):
            obs, *_ = ours.step(np.full(n, 2, np.int32))
            t_obs, *_ = theirs.step(np.full(n, 2))
        for i in range(3):
            for c in range(3):
                assert np.array_equal(obs[:, 3 * i + c], t_obs[:, i, :, :, c])
    finally:
        ours.close()
        theirs.close()


def test_async_batches_as_envpool_steps_them():
    """async_reset, then recv and send(action, env_id) (or EnvPool's dict of both): batches of batch_size,
    EnvPool's outputs; each batch's env ids are the ones send() steps next."""
    ours = cule_envpool.make("Breakout-v5", num_envs=4, batch_size=2, seed=3)
    theirs = envpool.make("Breakout-v5", env_type="gymnasium", num_envs=4, batch_size=2, seed=3)
    try:
        assert ours.is_async and theirs.is_async
        ours.async_reset()
        theirs.async_reset()
        seen = []
        for k in range(6):
            out, t_out = ours.recv(), theirs.recv()
            assert _structure(out) == _structure(t_out)
            ids = out[-1]["env_id"].copy()
            seen.append(ids.tolist())
            out[-1]["env_id"][:] = ids[::-1]  # the caller's arrays are its own: send() still knows the batch
            if k % 2:  # EnvPool's dict form
                ours.send({"action": np.ones(2, np.int32), "env_id": ids})
            else:
                ours.send(np.ones(2, np.int32), ids)
            theirs.send(np.ones(2, np.int32), t_out[-1]["env_id"])
        assert seen == [[0, 1], [2, 3]] * 3
        with pytest.raises(ValueError, match="not the batch returned last"):
            ours.recv()
            ours.send(np.ones(2, np.int32), np.array([3, 0], np.int32))
    finally:
        ours.close()
        theirs.close()


def test_partial_resets_seeds_and_reset_without_info():
    ours = cule_envpool.make("Pong-v5", num_envs=3, seed=9)
    again = cule_envpool.make("Pong-v5", num_envs=3, seed=9, gym_reset_return_info=False)
    seeded = cule_envpool.make("Pong-v5", num_envs=3, env_seed=[9, 10, 11])
    try:
        obs, _ = ours.reset()
        assert np.array_equal(again.reset(), obs)  # an array alone, the same seeds
        assert np.array_equal(seeded.reset()[0], obs)  # env_seed[i] for seed + i
        for _ in range(20):
            ours.step(np.full(3, 2, np.int32))
        obs, info = ours.reset(np.array([1], np.int32))
        assert obs.shape == (1, 4, 84, 84) and info["env_id"].tolist() == [1] and info["elapsed_step"].tolist() == [0]
        _, info = ours.reset(options={"reset_mask": np.array([True, False, True])})
        assert info["env_id"].tolist() == [0, 2]
        with pytest.warns(UserWarning, match="ignored"):
            ours.reset(seed=3)
    finally:
        for env in (ours, again, seeded):
            env.close()


def test_a_rom_under_base_path_is_loaded(tmp_path):
    """EnvPool reads <base_path>/atari/roms/<task>.bin: here pong's ROM under breakout's name, which then plays
    pong, with pong's actions."""
    roms = tmp_path / "atari" / "roms"
    roms.mkdir(parents=True)
    shutil.copy(cule.load_rom("pong").path, roms / "breakout.bin")
    ours = cule_envpool.make("Breakout-v5", num_envs=2, seed=4, base_path=str(tmp_path))
    pong = cule_envpool.make("Pong-v5", num_envs=2, seed=4)
    try:
        assert ours.action_space == pong.action_space
        assert np.array_equal(ours.reset()[0], pong.reset()[0])
    finally:
        ours.close()
        pong.close()
    with pytest.raises(FileNotFoundError, match="atari/roms"):
        cule_envpool.make("Pong-v5", base_path=str(tmp_path))


def test_task_ids_are_envpools():
    ours = cule_envpool.list_all_envs()
    assert len(ours) == 104 and set(ours) <= set(envpool.list_all_envs())
    assert "TicTacToe3d-v5" in ours and "Pong-v5" in ours


@pytest.mark.parametrize("call, error, match", [
    (lambda: cule_envpool.make("Pong-v5", env_type="dm"), ValueError, "dm_env"),
    (lambda: cule_envpool.make("Pong-v5", frameskip=4), TypeError, "frameskip"),
    (lambda: cule_envpool.make("Pong-v5", task="breakout"), TypeError, "task_id"),
    (lambda: cule_envpool.make("CartPole-v1"), ValueError, "Atari task"),
    (lambda: cule_envpool.make("Ant-v5"), cule.UnknownGameError, "Ant"),
    (lambda: cule_envpool.make("Pong-v5", use_inter_area_resize=False), ValueError, "INTER_AREA"),
    (lambda: cule_envpool.make("Pong-v5", max_num_players=2), ValueError, "one player"),
    (lambda: cule_envpool.make("Pong-v5", num_envs=2, env_seed=[1]), ValueError, "one seed per environment"),
    (lambda: cule_envpool.make("Pong-v5", max_episode_steps=0), ValueError, "max_episode_steps"),
    (lambda: cule_envpool.make("Pong-v5", num_envs=2, batch_size=3), ValueError, "batch_size"),
])
def test_bad_configs_say_what_is_wrong(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_send_after_async_reset_wants_recv_first():
    ours = cule_envpool.make("Pong-v5", num_envs=2, batch_size=1)
    try:
        ours.async_reset()
        with pytest.raises(RuntimeError, match="recv"):
            ours.send(np.zeros(1, np.int32))
    finally:
        ours.close()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_outputs_on_a_gpu_stay_tensors_on_it():
    """On a GPU the outputs are the vector env's tensors, on the device; the values are the CPU's."""
    gpu = cule_envpool.make("Pong-v5", num_envs=2, seed=6, device="cuda", episodic_life=True)
    cpu = cule_envpool.make("Pong-v5", num_envs=2, seed=6, episodic_life=True)
    try:
        obs, info = gpu.reset()
        assert obs.is_cuda and info["lives"].is_cuda and info["ram"].is_cuda
        assert np.array_equal(obs.cpu().numpy(), cpu.reset()[0])
        for _ in range(50):
            out = gpu.step(torch.full((2,), 2, dtype=torch.int32, device="cuda"))
            ref = cpu.step(np.full(2, 2, np.int32))
            for got, want in zip(out[:4], ref[:4]):
                assert got.is_cuda and np.array_equal(got.cpu().numpy(), want)
            assert np.array_equal(out[4]["elapsed_step"].cpu().numpy(), ref[4]["elapsed_step"])
    finally:
        gpu.close()
        cpu.close()
