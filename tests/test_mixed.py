"""Mixed batches (cule.mixed): every environment of a batch of many games equals the same environment of a
single-game env of its game (full action set, same seed and actions), which the other exactness tests hold to
ale-py; the launch shim equals the CPU; bad arguments are refused."""
import numpy as np
import pytest
import torch

import cule
from cule.errors import StateError
from cule.games import game_info

# Every mapper (2K, 4K, F8, F6, E0, DPC, FE, F6SC, F8SC), two PAL games (klax, air_raid), two paddle games
# (pong, kaboom) and one with a smaller legal set (skiing: illegal actions are NOOP).
GAMES = ["pong", "ms_pacman", "seaquest", "solaris", "montezuma_revenge", "pitfall2", "robotank", "klax",
         "elevator_action", "kaboom", "air_raid", "skiing"]
OUTPUTS = ("obs", "rewards", "terminated", "truncated", "lives", "frame_number", "episode_frame_number")


def _record(step_out) -> dict:
    obs, rewards, terminated, truncated, info = step_out
    return {"obs": obs, "rewards": rewards, "terminated": terminated, "truncated": truncated, **info}


def _single_actions(game: str, ale_actions: np.ndarray) -> np.ndarray:
    """Indices into a full-action-space env's action set of ALE actions; illegal ones as NOOP, as ALE plays them."""
    legal = list(game_info(game)["legal_actions"])
    return np.array([legal.index(a) if a in legal else legal.index(0) for a in ale_actions], np.int64)


def _run_single(game, seeds, actions, **kwargs):
    env = cule.AtariVectorEnv(game, len(seeds), full_action_space=True, **kwargs)
    obs, info = env.reset(seed=[int(s) for s in seeds])
    records = [{"obs": obs, **info}]
    for a in actions:
        records.append(_record(env.step(torch.from_numpy(_single_actions(game, a)))))
    env.close()
    return records


def _run_mixed(games, per_game, seed, actions, **kwargs):
    env = cule.AtariVectorEnv(games, num_envs=per_game, **kwargs)
    obs, info = env.reset(seed=seed)
    records = [{"obs": obs, **info}]
    for a in actions:
        records.append(_record(env.step(torch.from_numpy(a))))
    env.close()
    return records


@pytest.mark.parametrize("kwargs", [
    dict(repeat_action_probability=0.25, frameskip=3),
    dict(autoreset_mode="SameStep", episodic_life=True, reset_mode="cache", reset_cache_size=4),
], ids=["sticky-frameskip3", "samestep-cache"])
def test_each_environment_equals_its_single_game_env(kwargs):
    per_game, steps, seed = 2, 40, 11
    rng = np.random.default_rng(0)
    actions = rng.integers(0, 18, (steps, per_game * len(GAMES)))
    mixed = _run_mixed(GAMES, per_game, seed, actions, **kwargs)
    assert mixed[0]["game"].tolist() == np.repeat(np.arange(len(GAMES)), per_game).tolist()
    for k, game in enumerate(GAMES):
        block = slice(k * per_game, (k + 1) * per_game)
        single = _run_single(game, range(seed + block.start, seed + block.stop), actions[:, block], **kwargs)
        for t, (m, s) in enumerate(zip(mixed, single)):
            for name in OUTPUTS + (("final_obs",) if "final_obs" in s else ()):
                if name in s:
                    assert torch.equal(m[name][block], s[name]), f"{game} step {t}: {name} differs"
            assert "final_obs" in m or "final_obs" not in s


@pytest.mark.parametrize("kwargs", [
    dict(repeat_action_probability=0.25),
    dict(autoreset_mode="SameStep", episodic_life=True, reset_mode="cache", reset_cache_size=3,
         max_num_frames_per_episode=150),
], ids=["sticky", "samestep-cache-short-episodes"])
def test_shim_equals_cpu_with_one_launch_per_mapper(kwargs, shim, monkeypatch):
    """Games that share a mapper step in one launch of each kernel (their BatchViews side by side, one reset
    list), and every output equals the CPU backend's, episodes ending and restarting from cached starts too."""
    from cule.backends import cuda

    games, per_game = ["pong", "ms_pacman", "breakout", "pitfall2", "seaquest", "klax"], 2  # 2K F8 2K DPC F8 F6SC
    mappers = {cule.roms.load_rom(g).bankswitch for g in games}
    launches = []
    real = cuda.ShimLauncher.launch
    monkeypatch.setattr(cuda.ShimLauncher, "launch", lambda self, kernel, *a, **k: (launches.append(kernel),
                                                                                   real(self, kernel, *a, **k))[1])
    actions = np.random.default_rng(1).integers(0, 18, (60, per_game * len(games)))
    cpu = _run_mixed(games, per_game, 5, actions, **kwargs)
    on_shim = _run_mixed(games, per_game, 5, actions, _shim=shim, **kwargs)
    steps = 1 + len(actions)  # the reset, then the steps
    for kernel in ("cule_run", "cule_render", "cule_reset", "cule_gather"):
        assert launches.count(kernel) == steps * len(mappers), (kernel, launches.count(kernel))
    for t, (a, b) in enumerate(zip(cpu, on_shim)):
        for name in OUTPUTS + ("env_id", "game", "final_obs"):
            if name in a:
                assert torch.equal(a[name], b[name]), f"step {t}: {name} differs on the shim"
    if "max_num_frames_per_episode" in kwargs:
        assert sum(int((r["truncated"] | r["terminated"]).sum()) for r in cpu[1:]) >= len(games) * per_game


def test_counts_async_batches_and_thread_counts():
    games = {"breakout": 3, "seaquest": 1, "robotank": 2}
    n, steps = 6, 24
    actions = np.random.default_rng(2).integers(0, 18, (steps, n))
    sync = _run_mixed(games, None, 3, actions, num_threads=1)
    env = cule.AtariVectorEnv(games, batch_size=2, num_threads=2)
    assert env.games == list(games) and env.num_envs == n
    obs, info = env.reset(seed=3)
    taken = np.zeros(n, int)  # steps each environment has taken
    ids = info["env_id"].numpy()
    for _ in range(steps * n // 2):
        obs, rewards, term, trunc, info = env.step(torch.from_numpy(actions[taken[ids], ids]))
        taken[ids] += 1
        ids = info["env_id"].numpy()
        assert info["game"].tolist() == [[0, 0, 0, 1, 2, 2][i] for i in ids]
        for j, i in enumerate(ids):
            expected = sync[taken[i]]
            assert torch.equal(obs[j], expected["obs"][i])
            if taken[i]:  # else the reset's observation, which no step has replaced yet
                assert rewards[j] == expected["rewards"][i]
    env.close()


def test_states_round_trip_and_reset_mask():
    env = cule.AtariVectorEnv(["pong", "pitfall2", "klax"], num_envs=2)
    env.reset(seed=9)
    actions = torch.from_numpy(np.random.default_rng(3).integers(0, 18, (20, 6)))
    for a in actions[:10]:
        env.step(a)
    rows = env.clone_state()
    first = [_record(env.step(a)) for a in actions[10:]]
    env.restore_state(rows)
    again = [_record(env.step(a)) for a in actions[10:]]
    for a, b in zip(first, again):
        for name in OUTPUTS:
            assert torch.equal(a[name], b[name])
    env.copy_state([0], [1])
    assert torch.equal(env.get_ram()[0], env.get_ram()[1])
    with pytest.raises(ValueError, match="different games"):
        env.copy_state([0], [2])
    other = cule.AtariVectorEnv(["pitfall2", "pong", "klax"], num_envs=2)
    other.reset(seed=9)
    with pytest.raises(StateError, match="pong"):
        other.restore_state(rows)  # rows 0-1 are pong's, the env's first block pitfall2
    mask = np.zeros(6, bool)
    mask[[1, 4]] = True
    obs, info = env.reset(seed=1, options={"reset_mask": mask})
    assert info["game"].tolist() == [0, 0, 1, 1, 2, 2]
    env.close()
    other.close()


@pytest.mark.parametrize("args, kwargs, error, match", [
    (([],), {}, ValueError, "at least one game"),
    ((["pong", "pong"],), {}, ValueError, "listed twice"),
    ((["pong", "ALE/Pong-v5"],), {}, ValueError, "listed twice"),
    ((["pong", str(cule.load_rom("pong").path)],), {}, ValueError, "listed twice"),
    (({"PongNoFrameskip-v4": 1, "breakout": 1, "Pong": 2},), {}, ValueError, "listed twice"),
    (({"pong": 2, "breakout": 1},), {"num_envs": 4}, ValueError, "disagrees"),
    (({"pong": 0},), {}, ValueError, "int >= 1"),
    ((["pong", 3],), {}, TypeError, "str"),
    ((["pong", "breakout"],), {"mode": 0}, ValueError, "default mode"),
    ((["pong", "breakout"],), {"full_action_space": False}, ValueError, "full action set"),
    ((["pong", "carnival"],), {"img_height": None, "img_width": None}, ValueError, "one shape"),
    ((["pong", "nosuchgame"],), {}, ValueError, "nosuchgame"),
])
def test_bad_arguments(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        cule.AtariVectorEnv(*args, **kwargs)


def test_is_an_atari_vector_env_with_the_full_action_set():
    env = cule.AtariVectorEnv(["skiing", "pong"], num_envs=1)
    assert isinstance(env, cule.AtariVectorEnv) and env.games == ["skiing", "pong"]
    assert env.single_action_space.n == 18 and env.get_action_set().tolist() == list(range(18))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="outside the action set"):
        env.step(torch.tensor([18, 0]))
    env.close()


@pytest.mark.parametrize("games, num_envs", [(["pong"], 2), ({"ALE/Pong-v5": 2}, None)])
def test_a_batch_of_one_game_given_as_a_list_or_dict(games, num_envs):
    """A list or dict of one game is a mixed batch of that game alone: ALE's 18 actions, info["game"]."""
    env, single = cule.AtariVectorEnv(games, num_envs), cule.AtariVectorEnv("pong", 2, full_action_space=True)
    assert env.games == ["pong"] and env.single_action_space.n == 18
    assert torch.equal(env.reset(seed=3)[0], single.reset(seed=3)[0])
    for a in np.random.default_rng(1).integers(0, 18, (20, 2)):
        mine, theirs = env.step(a), single.step(a)
        assert torch.equal(mine[0], theirs[0]) and mine[4]["game"].tolist() == [0, 0]
    env.close()
    single.close()


def test_make_with_several_ids_equals_make_per_game():
    ids = ["ALE/Pong-v5", "ALE/Seaquest-v5", "ALE/Pitfall2-v5"]
    actions = np.random.default_rng(4).integers(0, 18, (25, 2 * len(ids)))
    mixed = cule.make(ids, 2)
    records = [mixed.reset(seed=7)[0]] + [mixed.step(torch.from_numpy(a))[0] for a in actions]
    for k, env_id in enumerate(ids):
        single = cule.make(env_id, 2, full_action_space=True)
        game = single.game
        block = slice(2 * k, 2 * k + 2)
        mine = [single.reset(seed=[7 + block.start, 8 + block.start])[0]]
        mine += [single.step(torch.from_numpy(_single_actions(game, a[block])))[0] for a in actions]
        for t, (m, s) in enumerate(zip(records, mine)):
            assert torch.equal(m[block], s), f"{env_id} step {t}"
        single.close()
    mixed.close()


@pytest.mark.parametrize("backend", ["cule-mixed", "ale-turns"])
def test_benchmark_adapters_emulate_four_frames_a_step_per_environment(backend):
    from cule.benchmarks import adapters

    env = adapters.make(backend, ["pong", "skiing"], 2, 1)  # skiing: 9 legal actions, which ale-py must get
    env.reset(0)
    env.step(torch.zeros(env.n, dtype=torch.long))
    before = env.frame_numbers()
    for _ in range(3):
        obs, rewards, dones = env.step(torch.randint(0, 18, (env.n,)))
    assert obs.shape == (4, 4, 84, 84) and (env.frame_numbers() - before).tolist() == [12] * 4
    env.close()


def test_benchmark_writes_its_figures(tmp_path, monkeypatch, capsys):
    import json
    import sys

    from cule.benchmarks import mixed

    monkeypatch.setattr(sys, "argv", ["mixed", "--games", "pong", "boxing", "--steps", "2", "--threads", "1",
                                      "--output-dir", str(tmp_path)])
    mixed.main()
    row = json.loads((tmp_path / "mixed.json").read_text())["rows"][0]
    assert row["envs"] == 2 and row["mixed_vs_single"] == pytest.approx(row["mixed_fps"] / row["single_fps"])
    assert "mixed / ale-py" in capsys.readouterr().out


def test_a_busy_pool_runs_another_job_on_the_calling_thread():
    """Two batches stepped at the same moment on one pool, from two threads: the call that finds the pool busy
    runs on its own thread, and both batches end as they would alone."""
    import threading

    pool = cule._core.ThreadPool(2)
    n, steps = 8, 30
    ids = np.arange(n, dtype=np.int32)
    actions = np.random.default_rng(0).integers(0, 18, (steps, n)).astype(np.int32)  # ALE action ids
    envs = [cule.AtariVectorEnv("breakout", n, num_threads=1) for _ in range(3)]
    for env in envs:
        env.reset(seed=1)
    for a in actions:  # the reference, alone
        envs[0].backend.emulator.vector_run(ids, a, None, False, 1)
    start = threading.Barrier(2)

    def stepper(env):
        for a in actions:
            start.wait()
            cule._core.run_batches(pool, [env.backend.emulator], [ids], [a], [None], False)

    threads = [threading.Thread(target=stepper, args=(env,)) for env in envs[1:]]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
        assert not t.is_alive(), "a pool given two jobs at once hung"
    for env in envs[1:]:
        assert torch.equal(env.get_ram(), envs[0].get_ram())
        assert torch.equal(env.get_screen(), envs[0].get_screen())
