"""AtariVectorEnv's raw configuration behaves as ALEInterface(frame_skip=1)."""
import numpy as np
import pytest
import torch

import cule
from ale_oracle import ale_interface

RAW = dict(frameskip=1, grayscale=False, img_height=210, img_width=160, stack_num=1, maxpool=False, noop_max=0,
           use_fire_reset=False, reward_clipping=False, repeat_action_probability=0.0, full_action_space=True,
           reset_mode="ale")


@pytest.mark.parametrize("game", ["pong", "space_invaders", "breakout", "adventure"])
def test_raw_env_matches_ale_interface(game):
    if game not in cule._core.games:
        pytest.skip(f"{game}: no game unit yet")
    n = 2
    ales = []
    for i in range(n):
        ale = ale_interface(game, seed=7 + i)  # ale-py's vector env: env i gets random_seed = seed + i
        ale.reset_game()  # its reset(seed) = setInt("random_seed"), loadROM, reset_game
        ales.append(ale)
    height = ales[0].getScreen().shape[0]  # 250 for PAL games
    env = cule.AtariVectorEnv(game, num_envs=n, **{**RAW, "img_height": height})
    obs, _ = env.reset(seed=7)
    rng = np.random.default_rng(3)
    for t in range(300):
        for i, ale in enumerate(ales):
            assert np.array_equal(env.get_ram()[i].numpy(), ale.getRAM()), f"RAM env {i} step {t}"
            assert np.array_equal(env.get_screen()[i].numpy(), ale.getScreen()), f"screen env {i} step {t}"
            assert np.array_equal(obs[i, 0].numpy(), ale.getScreenRGB()), f"RGB env {i} step {t}"
        actions = rng.integers(0, 18, size=n)
        obs, rewards, terminated, truncated, info = env.step(torch.from_numpy(actions))
        for i, ale in enumerate(ales):
            assert rewards[i].item() == ale.act(int(actions[i]))
            assert terminated[i].item() == ale.game_over()
            assert info["lives"][i].item() == ale.lives()
        if terminated.any():
            break


def test_ram_rows_refuse_ids_outside_the_batch():
    """The batched RAM read behind get_ram() and cule.envpool checks its ids: an error, never a read past the
    consoles."""
    env = cule.AtariVectorEnv("pong", 3)
    try:
        env.reset(seed=0)
        emulator = env.backend.emulator
        rows = emulator.ram_rows(np.array([2, 0], np.int32))
        assert rows.shape == (2, 128) and np.array_equal(rows, env.get_ram().numpy()[[2, 0]])
        for bad in ([3], [-1], [0, 1 << 30]):
            with pytest.raises(IndexError, match="out of range"):
                emulator.ram_rows(np.array(bad, np.int32))
        with pytest.raises(ValueError, match="1-D"):
            emulator.ram_rows(np.zeros((1, 2), np.int32))
    finally:
        env.close()


def test_bad_arguments_say_what_to_do():
    with pytest.raises(ValueError, match="num_envs"):
        cule.AtariVectorEnv("pong", num_envs=0, **RAW)
    with pytest.raises(ValueError, match="frameskip"):
        cule.AtariVectorEnv("pong", num_envs=1, **{**RAW, "frameskip": 0})
    with pytest.raises(ValueError, match="repeat_action_probability"):
        cule.AtariVectorEnv("pong", num_envs=1, **{**RAW, "repeat_action_probability": 1.5})
    with pytest.raises(ValueError, match="reset_mode"):
        cule.AtariVectorEnv("pong", num_envs=1, **{**RAW, "reset_mode": "bogus"})
    with pytest.raises(ValueError, match="modes"):
        cule.AtariVectorEnv("pong", num_envs=1, mode=7, **RAW)
    with pytest.raises(cule.UnknownGameError):
        cule.AtariVectorEnv("pongg", num_envs=1, **RAW)
    env = cule.AtariVectorEnv("pong", num_envs=2, **RAW)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="outside the action set"):
        env.step(torch.tensor([0, 18]))
    with pytest.raises(ValueError, match="expected 2 actions"):
        env.step(torch.tensor([0, 1, 2]))
    with pytest.raises(TypeError, match="integer"):
        env.step(torch.tensor([0.0, 1.0]))
    ram_before = env.get_ram().clone()
    with pytest.raises(ValueError):
        env.step(torch.tensor([[0, 1]]))
    assert torch.equal(env.get_ram(), ram_before)  # a refused step changes nothing
    with pytest.raises(ValueError, match="difficulties"):
        cule.AtariVectorEnv("pong", num_envs=1, difficulty=9, **RAW)


def test_same_seed_same_trajectory_any_thread_count():
    """More threads than cores and than runs of work, episodes ending (and resetting) inside a step."""
    runs = []
    for threads in (1, 2, 16):
        env = cule.AtariVectorEnv("pong", num_envs=37, num_threads=threads, max_num_frames_per_episode=60, **RAW)
        env.reset(seed=11)
        rng = np.random.default_rng(0)
        for _ in range(100):
            env.step(torch.from_numpy(rng.integers(0, 18, size=37)))
        runs.append((env.get_ram().clone(), env.get_screen().clone()))
    for ram, screen in runs[1:]:
        assert torch.equal(runs[0][0], ram) and torch.equal(runs[0][1], screen)


def test_cpu_device_spelled_with_an_index():
    env = cule.AtariVectorEnv("pong", num_envs=2, device="cpu:0", **RAW)
    env.reset(seed=0)
    obs, *_ = env.step(torch.tensor([0, 1]))
    assert obs.device.type == "cpu"


def test_vector_settings_are_declared_once_with_ale_py_defaults(monkeypatch):
    """cule._core.vector_options (cule/cpp/vector/vector_options.inc) is the one list: the env passes every setting
    in it and no other, its defaults are ale-py AtariVectorEnv's, and an unknown setting is refused."""
    import inspect

    from ale_py.vector_env import AtariVectorEnv as AleVectorEnv

    declared = cule._core.vector_options
    ale_defaults = {name: p.default for name, p in inspect.signature(AleVectorEnv.__init__).parameters.items()}
    ale_name = {"fire_reset": "use_fire_reset"}
    shared = [n for n in declared if ale_name.get(n, n) in ale_defaults]
    assert len(shared) == 11, shared
    for name in shared:
        assert declared[name][0] == int(ale_defaults[ale_name.get(name, name)]), name

    passed = []
    configure = cule._core.Emulator.configure_vector
    monkeypatch.setattr(cule._core.Emulator, "configure_vector",
                        lambda self, rgb, gray, **kw: passed.append(kw) or configure(self, rgb, gray, **kw))
    cule.AtariVectorEnv("pong", 1)
    assert list(passed[0]) == list(declared)

    env = cule.AtariVectorEnv("pong", 1)
    rgb, gray = cule.palettes.palette_for(False)
    with pytest.raises(TypeError, match="unknown setting"):
        configure(env.emulator, rgb, gray, framesikp=4)


def test_step_outputs_are_declared_once_and_checked():
    """cule._core.step_outputs (CULE_STEP_OUTPUTS in cule/cpp/vector/vector.hpp) names what a gather fills and what
    a step returns, in that order and of those dtypes; an observation shape of the wrong size is refused."""
    env = cule.AtariVectorEnv("pong", 2)
    obs, info = env.reset(seed=3)
    out = env.step(torch.zeros(2, dtype=torch.long))
    returned = dict(zip(("rewards", "terminated", "truncated"), out[1:4]))
    names = list(cule._core.step_outputs)
    assert names[:3] == list(returned) and list(out[4]) == ["env_id", *names[3:]]
    for name, dtype in cule._core.step_outputs.items():
        value = returned.get(name, out[4].get(name))
        assert value.numpy().dtype == dtype and value.shape == (2,), name
    ids = np.arange(2, dtype=np.int32)
    frames, final, arrays, env_ids = env.emulator.results(ids, (4, 84, 84), False)
    assert np.array_equal(frames, out[0].numpy()) and final is None
    assert [a.dtype for a in arrays] == list(cule._core.step_outputs.values())
    assert arrays[4].tolist() == out[4]["frame_number"].tolist()
    assert env_ids.dtype == np.int32 and env_ids.tolist() == [0, 1] and not np.shares_memory(env_ids, ids)
    with pytest.raises(ValueError, match="obs_shape holds 27888 bytes, an observation 28224"):
        env.emulator.results(ids, (4, 84, 83), False)
    with pytest.raises(ValueError, match="env_ids .int32. needs one entry per environment"):
        cule._core.results_at([env.emulator], [ids], [None], (4, 84, 84), False, None, np.arange(3, dtype=np.int32))


def test_step_outputs_are_fresh_buffers_apart_from_each_other():
    """A step's outputs are new buffers, each on a 64-byte boundary (cule.jax hands them to XLA without a copy):
    writing into one leaves the others as they were, and the next step leaves the last step's alone."""
    env = cule.AtariVectorEnv("pong", 3, num_threads=1)
    env.reset(seed=0)
    actions = torch.zeros(3, dtype=torch.long)
    for _ in range(5):
        env.step(actions)
    obs, rewards, terminated, truncated, info = env.step(actions)
    outputs = [obs, rewards, terminated, truncated, *info.values()]
    assert all(t.data_ptr() % 64 == 0 for t in outputs)
    kept = [t.clone() for t in outputs]
    for k, t in enumerate(outputs):
        t.fill_(1 if t.dtype == torch.bool else 7 + k)
        assert all(torch.equal(u, v) for u, v in zip(outputs[k + 1:], kept[k + 1:])), k
    written = [t.clone() for t in outputs]
    env.step(actions)
    assert all(torch.equal(u, v) for u, v in zip(outputs, written))


def test_step_equals_send_then_recv():
    """step() on whole synchronous batches skips the queue's bookkeeping; it gives what send() + recv() give,
    and the two may be mixed."""
    envs = [cule.AtariVectorEnv("breakout", 4, num_threads=2, repeat_action_probability=0.25) for _ in range(2)]
    for env in envs:
        env.reset(seed=11)
    rng = np.random.default_rng(0)
    for k in range(40):
        actions = torch.from_numpy(rng.integers(0, 4, 4))
        a = envs[0].step(actions)
        if k % 3:
            envs[1].send(actions)
            b = envs[1].recv()
        else:
            b = envs[1].step(actions)
        for u, v in zip(a[:4], b[:4]):
            assert torch.equal(u, v), k
        assert all(torch.equal(a[4][name], b[4][name]) for name in a[4]), k
    envs[0].send(torch.zeros(4, dtype=torch.long))
    with pytest.raises(RuntimeError, match="send\\(\\) twice"):
        envs[0].step(torch.zeros(4, dtype=torch.long))
    envs[0].close()
    with pytest.raises(RuntimeError, match="closed"):
        envs[0].step(torch.zeros(4, dtype=torch.long))
