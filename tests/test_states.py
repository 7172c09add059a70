"""Environment states as tensors: clone_state, restore_state, copy_state.

Against ale-py: a restore and replay in cule matches ALEInterface's
cloneState/restoreState on RAM and screen, with and without the RNG. Within
cule: after restore_state the same actions give bit-identical results on the
CPU backend and on the kernels' host launch shim, across resets, with sticky
actions, in both autoreset modes, on a game of every mapper; forks made with
copy_state follow identical trajectories; rows are the same bytes on both
backends and survive torch.save into another process; bad states are refused
with nothing changed.
"""
import subprocess
import sys
import textwrap

import ale_py
import numpy as np
import pytest
import torch

import cule
from ale_oracle import ale_interface

# One game per mapper: 2K (paddles), 4K (PAL), F8, F6, F8SC, F6SC, E0, FE, DPC.
GAMES = ["pong", "adventure", "ms_pacman", "crossbow", "elevator_action", "klax", "tutankham", "robotank", "pitfall2"]
STICKY = 0.25


def _single(game, seed=5):
    """One cule environment stepped as ALEInterface.act: frame_skip 1, no reset no-ops or FIRE, full actions."""
    env = cule.AtariVectorEnv(game, 1, frameskip=1, noop_max=0, use_fire_reset=False, full_action_space=True,
                              repeat_action_probability=STICKY, num_threads=1)
    env.reset(seed=seed)
    ale = ale_interface(game, seed=seed, repeat_action_probability=STICKY)
    ale.reset_game()  # cule's reset(seed) is loadROM and then reset_game, as the vector env does
    return env, ale


def _act_both(env, ale, rng, steps, *, compare=True):
    for t in range(steps):
        a = int(rng.integers(len(env.action_set)))
        _, reward, _, _, _ = env.step(torch.tensor([a]))
        theirs = ale.act(ale_py.Action(int(env.action_set[a])))
        if compare:
            assert np.array_equal(env.get_ram()[0].numpy(), ale.getRAM()), f"RAM differs at replay step {t}"
            assert np.array_equal(env.get_screen()[0].numpy(), ale.getScreen()), f"screen differs at replay step {t}"
            assert int(reward[0]) == int(np.clip(theirs, -1, 1)), f"reward differs at replay step {t}"
        if ale.game_over():
            return


@pytest.mark.parametrize("include_rng", [True, False])
@pytest.mark.parametrize("game", GAMES)
def test_restore_matches_ale_restore(game, include_rng):
    env, ale = _single(game)
    _act_both(env, ale, np.random.default_rng(1), 60)
    ours, theirs = env.clone_state(include_rng=include_rng), ale.cloneState(include_rng=include_rng)
    _act_both(env, ale, np.random.default_rng(2), 30, compare=False)  # wander off
    env.restore_state(ours)
    ale.restoreState(theirs)
    # Without the RNG both keep drawing sticky actions from where the detour left their streams.
    _act_both(env, ale, np.random.default_rng(3), 40)


def _trajectory(env, actions):
    out = []
    for a in actions:
        obs, rewards, terminated, truncated, info = env.step(a)
        final = info.get("final_obs")
        out.append((obs.clone(), rewards.clone(), terminated.clone(), truncated.clone(), info["lives"].clone(),
                    info["frame_number"].clone(), info["episode_frame_number"].clone(),
                    None if final is None else final.clone(), env.get_ram().clone()))
    return out


def _assert_same(a, b):
    for t, (x, y) in enumerate(zip(a, b)):
        for k, (u, v) in enumerate(zip(x, y)):
            assert (u is None and v is None) or torch.equal(u, v), f"step {t}, output {k} differs"


def _env(game, backend, autoreset_mode, n=6):
    # Short episodes (300 frames) put resets inside every trajectory.
    return cule.AtariVectorEnv(game, n, repeat_action_probability=STICKY, autoreset_mode=autoreset_mode,
                               max_num_frames_per_episode=300, num_threads=2, _shim=backend == "shim")


@pytest.mark.parametrize("autoreset_mode", ["NextStep", "SameStep"])
@pytest.mark.parametrize("backend", ["cpu", "shim"])
@pytest.mark.parametrize("game", GAMES)
def test_restore_replays_bit_for_bit(game, backend, autoreset_mode):
    env = _env(game, backend, autoreset_mode)
    env.reset(seed=11)
    actions = torch.from_numpy(np.random.default_rng(4).integers(0, env.single_action_space.n, size=(90, 6)))
    _trajectory(env, actions[:30])
    saved = env.clone_state()
    first = _trajectory(env, actions[30:])
    assert any(bool(s[2].any() or s[3].any()) for s in first), "no episode ended: the test would not cross a reset"
    env.restore_state(saved)
    _assert_same(first, _trajectory(env, actions[30:]))


@pytest.mark.parametrize("backend", ["cpu", "shim"])
@pytest.mark.parametrize("game", ["breakout", "ms_pacman", "pitfall2"])
def test_forks_follow_identical_trajectories(game, backend):
    env = _env(game, backend, "NextStep", n=8)
    env.reset(seed=2)
    for a in np.random.default_rng(5).integers(0, env.single_action_space.n, size=(25, 8)):
        env.step(torch.from_numpy(a))
    env.copy_state(3, [0, 1, 2, 4, 5, 6, 7])
    for a in np.random.default_rng(6).integers(0, env.single_action_space.n, size=40):
        obs, rewards, terminated, truncated, info = env.step(torch.full((8,), int(a)))
        ram = env.get_ram()
        for i in range(8):
            assert torch.equal(obs[i], obs[3]) and torch.equal(ram[i], ram[3])
            assert rewards[i] == rewards[3] and terminated[i] == terminated[3] and truncated[i] == truncated[3]


# pong and ms_pacman draw their playfields from the TIA's cache, which the two backends fill at different times.
@pytest.mark.parametrize("game, autoreset_mode", [("seaquest", "SameStep"), ("pong", "NextStep"),
                                                  ("ms_pacman", "NextStep")])
def test_rows_are_the_same_bytes_on_both_backends(game, autoreset_mode):
    from cule.state import differences

    cpu, shim = _env(game, "cpu", autoreset_mode, 5), _env(game, "shim", autoreset_mode, 5)
    cpu.reset(seed=9)
    shim.reset(seed=9)
    for a in np.random.default_rng(7).integers(0, cpu.single_action_space.n, size=(70, 5)):
        cpu.step(torch.from_numpy(a))
        shim.step(torch.from_numpy(a))
        assert differences(cpu.clone_state(), shim.clone_state(), cpu.emulator.state_layout(True)) == []
    assert torch.equal(cpu.clone_state([4, 0], include_rng=False), shim.clone_state([4, 0], include_rng=False))
    # A row of the CPU backend restores on the shim and the other way round.
    shim.restore_state(cpu.clone_state([1]), [2])
    cpu.restore_state(cpu.clone_state([1]), [2])
    assert torch.equal(cpu.clone_state(), shim.clone_state())



@pytest.mark.parametrize("game", cule.list_games())
def test_rows_of_every_game_are_the_same_bytes_on_both_backends(game, shim):
    """Whatever a backend keeps only for itself (a cache, a pointer) must stay out of the rows; with the
    host's and with the device's side of the kernels' code."""
    from cule.state import differences

    kw = dict(repeat_action_probability=STICKY, max_num_frames_per_episode=200, num_threads=1)
    cpu = cule.AtariVectorEnv(game, 3, **kw)
    shim = cule.AtariVectorEnv(game, 3, _shim=shim, **kw)
    cpu.reset(seed=5)
    shim.reset(seed=5)
    actions = np.random.default_rng(1).integers(0, cpu.single_action_space.n, size=(60, 3))
    for t, a in enumerate(torch.from_numpy(actions)):
        cpu.step(a)
        shim.step(a)
        if t % 6 == 5:
            assert differences(cpu.clone_state(), shim.clone_state(), cpu.emulator.state_layout(True)) == [], f"step {t}"

_CHILD = textwrap.dedent("""
    import sys, numpy as np, torch, cule
    path, out = sys.argv[1], sys.argv[2]
    env = cule.AtariVectorEnv("breakout", 3, repeat_action_probability=0.25, num_threads=1)
    env.reset(seed=123)  # another seed: the restore must bring everything back
    env.restore_state(torch.load(path))
    obs = [env.step(torch.from_numpy(a))[0] for a in np.random.default_rng(8).integers(0, 4, size=(40, 3))]
    torch.save(torch.stack(obs), out)
""")


def test_saved_states_restore_in_another_process(tmp_path):
    env = cule.AtariVectorEnv("breakout", 3, repeat_action_probability=0.25, num_threads=1)
    env.reset(seed=0)
    for a in np.random.default_rng(9).integers(0, 4, size=(50, 3)):
        env.step(torch.from_numpy(a))
    torch.save(env.clone_state(), tmp_path / "states.pt")
    expected = torch.stack([env.step(torch.from_numpy(a))[0]
                            for a in np.random.default_rng(8).integers(0, 4, size=(40, 3))])
    subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path / "states.pt"), str(tmp_path / "obs.pt")], check=True)
    assert torch.equal(torch.load(tmp_path / "obs.pt"), expected)


def _refused(env, states, ids=None, match="."):
    before = env.clone_state()
    with pytest.raises((cule.StateError, ValueError, TypeError), match=match):
        env.restore_state(states, ids)
    assert torch.equal(env.clone_state(), before), "a refused restore changed the environments"


def test_bad_states_are_refused_and_change_nothing():
    env = cule.AtariVectorEnv("breakout", 2, num_threads=1)
    env.reset(seed=0)
    env.step(torch.tensor([1, 2]))
    good = env.clone_state()
    other_game = cule.AtariVectorEnv("pong", 2, num_threads=1)
    other_game.reset(seed=0)
    _refused(env, other_game.clone_state(), match="of 'pong', this environment plays 'breakout'")
    other_options = cule.AtariVectorEnv("breakout", 2, frameskip=3, num_threads=1)
    other_options.reset(seed=0)
    _refused(env, other_options.clone_state(), match="other options")
    old = good.clone()
    old[:, 4] = 0  # format version 0
    _refused(env, old, match="format version 0")
    _refused(env, torch.zeros_like(good), match="not cule states")
    _refused(env, good[:, :-1], match="bytes, expected")
    _refused(env, good.to(torch.int32), match="uint8")
    _refused(env, good[:1], match="1 state row")
    _refused(env, good, [0, 2], match="must lie in")
    _refused(env, "state", match="uint8 tensor")
    mixed = good.clone()
    mixed[1, 20] = 0  # row 1 claims to hold no RNG
    _refused(env, mixed, match=r"row 1's header differs from row 0's in its include_rng flag \(byte 20\)")
    damaged = good.clone()
    damaged[1, 30] ^= 1  # a flipped bit in row 1's game name
    _refused(env, damaged, match="differs from row 0's in its game name .* or a header was damaged")
    with pytest.raises(ValueError, match="both sources and destinations"):
        env.copy_state([0, 1], [1, 0])
    with pytest.raises(ValueError, match="twice"):
        env.copy_state([0, 0], [1, 1])
    env.restore_state(good)  # the good rows still restore


def test_states_need_a_reset_and_whole_batches():
    env = cule.AtariVectorEnv("pong", 2, num_threads=1)
    with pytest.raises(RuntimeError, match="reset"):
        env.clone_state()
    partial = cule.AtariVectorEnv("pong", 4, batch_size=2, num_threads=1)
    partial.reset(seed=0)
    with pytest.raises(ValueError, match="batch_size == num_envs"):
        partial.clone_state()


def test_fork_benchmark_runs(tmp_path):
    out = subprocess.run([sys.executable, "-m", "cule.benchmarks.forks", "--seconds", "0.05", "--decisions", "2",
                          "--rollouts", "1", "--depth", "2", "--num-envs", "4", "--output-dir", str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    assert "forks/s" in out and "restores/s" in out
    assert (tmp_path / "forks.json").exists()


def test_gymnasium_envs_restore_bit_for_bit():
    env = cule.make("ALE/MsPacman-v5", num_envs=3, max_num_frames_per_episode=200, num_threads=1)
    env.reset(seed=4)
    actions = torch.from_numpy(np.random.default_rng(10).integers(0, env.single_action_space.n, size=(80, 3)))
    _trajectory(env, actions[:20])
    saved = env.clone_state()
    first = _trajectory(env, actions[20:])
    assert any(bool(s[3].any()) for s in first), "no episode was truncated"
    env.restore_state(saved)
    _assert_same(first, _trajectory(env, actions[20:]))


@pytest.mark.parametrize("autoreset_mode", ["NextStep", "SameStep"])
def test_state_layout_names_the_part_that_differs(autoreset_mode):
    from cule.state import HEADER_BYTES, differences

    env = _env("pong", "cpu", autoreset_mode, 3)
    env.reset(seed=3)
    for with_rng in (True, False):
        layout = env.emulator.state_layout(with_rng)
        assert sum(size for _, size in layout) == env.emulator.state_bytes(with_rng)
        assert ("sticky_rng" in dict(layout)) == with_rng
        assert ("final_stack" in dict(layout)) == (autoreset_mode == "SameStep")
    layout = env.emulator.state_layout(True)
    rows = env.clone_state()
    assert differences(rows, rows.clone(), layout) == []
    changed = rows.clone()
    start = HEADER_BYTES + sum(size for name, size in layout[:[n for n, _ in layout].index("captures")])
    changed[2, start + 5] ^= 1
    changed[2, start + 9] ^= 1
    assert differences(rows, changed, layout) == [f"row 2, captures: 2 of {dict(layout)['captures']} bytes differ, "
                                                  f"first at +5"]
