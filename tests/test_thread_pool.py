"""The CPU backend's thread pool keeps an account of its threads' time, and the threads benchmark reports it."""
import json

import numpy as np
import pytest

import cule
from cule.benchmarks import threads as bench

# Two clocks (the threads' wall clock, and each thread's CPU clock) read a few
# nanoseconds apart: comparisons between them get this much room.
CLOCKS_NS = 100_000


def stepped(num_envs, num_threads, steps, games="pong"):
    env = cule.AtariVectorEnv(games, num_envs=num_envs, num_threads=num_threads)
    env.reset(seed=0)
    pool = env.backend._pool if isinstance(games, list) else None
    clear = pool.clear_stats if pool else env.backend.emulator.clear_pool_stats
    clear()
    rng = np.random.default_rng(0)
    for _ in range(steps):
        env.step(rng.integers(0, env.single_action_space.n, env.num_envs))
    stats = pool.stats() if pool else env.backend.emulator.pool_stats()
    env.close()
    return stats


def test_two_threads_account_for_every_job_task_and_nanosecond():
    s = stepped(8, 2, 5)
    # each step is two jobs on the pool: the step itself, then the copy of its results
    assert s["threads"] == 2 and s["jobs"] == 10 and s["tasks"] == 2 * 5 * 8
    assert s["capacity"] == 2 * s["wall"]
    assert s["busy"] > 0 and s["wake"] >= 0
    # every thread's wake and work end before its job returns, and the last one to stop sets the critical path
    assert s["wake"] + s["busy"] <= s["capacity"]
    assert s["busy"] / 2 <= s["critical"] <= s["wall"]
    assert s["cpu"] <= s["busy"] + CLOCKS_NS


def test_one_thread_is_the_callers_time_alone():
    s = stepped(4, 1, 3)
    assert s["threads"] == 1 and s["jobs"] == 6 and s["tasks"] == 2 * 3 * 4
    assert s["wake"] == 0 and s["busy"] == s["wall"] == s["capacity"] == s["critical"] > 0
    assert s["cpu"] <= s["busy"] + CLOCKS_NS


def test_the_shared_pool_of_a_batch_of_many_games_keeps_the_same_account():
    s = stepped(3, 2, 4, games=["pong", "breakout"])  # 3 environments of each game
    assert s["threads"] == 2 and s["jobs"] == 8 and s["tasks"] == 2 * 4 * 6
    assert s["capacity"] == 2 * s["wall"] and s["wake"] + s["busy"] <= s["capacity"]


def test_pool_figures_start_with_the_first_run_and_clear_to_zero():
    env = cule.AtariVectorEnv("pong", num_envs=2, num_threads=2)
    emulator = env.backend.emulator
    assert emulator.pool_stats() is None  # no run yet, so no pool
    env.reset(seed=0)
    assert emulator.pool_stats()["jobs"] > 0
    emulator.clear_pool_stats()
    assert all(v == 0 for k, v in emulator.pool_stats().items() if k != "threads")
    env.close()


def test_benchmark_writes_rows_whose_shares_add_up(tmp_path, capsys):
    bench.main(["--envs", "4", "--threads", "1", "2", "--steps", "3", "--warmup", "1", "--ale",
                "--output-dir", str(tmp_path)])
    data = json.loads((tmp_path / "threads.json").read_text())
    rows = data["rows"]
    assert [(r["envs"], r["threads"], r["pool_threads"]) for r in rows] == [(4, 1, 1), (4, 2, 2)]
    assert "ale_fps" not in rows[0]  # ale-py runs with the most threads only
    assert rows[1]["ale_fps"] > 0 and rows[1]["ratio"] == pytest.approx(rows[1]["fps"] / rows[1]["ale_fps"])
    for r in rows:
        assert r["jobs"] == 2 * 3 and r["fps"] > 0
        assert 0 < r["cpu_us"] <= r["work_us"] * 1.01
        assert 0 <= r["wake"] <= 1 and 0 <= r["wait"] <= 1 and 0 <= r["outside"] < 1
    assert rows[0]["wake"] == 0 and rows[0]["wait"] == pytest.approx(0, abs=1e-9)
    assert rows[0]["work_vs_fewest_threads"] == rows[0]["cpu_vs_fewest_threads"] == 1.0
    md = (tmp_path / "threads.md").read_text().splitlines()
    assert "--envs 4 --threads 1 2" in md[0] and md[2].startswith("| game |") and len(md) == 6
    assert "pong, 4 envs: work (CPU time) per environment-step on 1 threads 1.00x (1.00x)" in capsys.readouterr().out


@pytest.mark.parametrize("bad", [["--threads", "0"], ["--envs", "-4"], ["--repeats", "0"], ["--steps", "-1"]])
def test_benchmark_refuses_bad_numbers(bad, capsys):
    with pytest.raises(SystemExit) as e:
        bench.main(bad)
    assert e.value.code == 2 and "error:" in capsys.readouterr().err


def test_benchmark_help_explains_every_flag(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--help"])
    out = capsys.readouterr().out
    for flag in ("--games", "--envs", "--threads", "--steps", "--warmup", "--repeats", "--ale", "--output-dir"):
        assert flag in out
