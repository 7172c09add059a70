"""benchmarks/fps_sweep.py: its frame counts against the emulators' own counters, its table and files."""
import csv
import importlib.util

import pytest
import torch

import cule
from cule.benchmarks import fps_sweep as sweep


@pytest.mark.parametrize("backend", ["cule-cpu", "ale-vector", "ale-loop", "envpool"])
@pytest.mark.parametrize("mode", ["emulation", "training"])
def test_counted_frames_equal_the_emulators_frame_counters(backend, mode):
    if backend == "envpool" and importlib.util.find_spec("envpool") is None:
        pytest.skip("envpool is not installed (pip install -e '.[bench]')")
    # Pong does not end an episode within these steps, so no reset frames are mixed in.
    row = sweep.measure(backend, "pong", mode, 3, 2, seconds=0.0, min_steps=7, net_device=torch.device("cpu"))
    assert row.steps == 7 and row.frames == 7 * 4 * 3
    assert row.reported_frames == row.frames, f"{backend}: emulators report {row.reported_frames} frames"
    assert row.fps == pytest.approx(row.frames / row.seconds) and row.fps_per_env == pytest.approx(row.fps / 3)


def _row(backend, mode, envs, fps, game="pong"):
    return sweep.Row(backend, game, mode, envs, 2, 10, 40 * envs, 40 * envs / fps, fps, fps / envs, 40 * envs, "m")


def test_summary_table_takes_medians_over_games_and_ratios_to_ale():
    rows = [_row("cule-cpu", "emulation", 8, f, g) for f, g in ((100, "a"), (300, "b"), (200, "c"))]
    rows += [_row("ale-vector", "emulation", 8, f, g) for f, g in ((50, "a"), (80, "b"), (400, "c"))]
    rows += [_row("cule-cpu", "training", 8, 10)]
    lines = sweep.summary_table(rows).splitlines()
    assert lines[0].startswith("| mode | envs | cule-cpu | ale-vector |")
    assert "| emulation | 8 | 200 | 80 | 2.50x |" in lines  # medians 200 and 80
    assert "| training | 8 | 10 | — | — |" in lines


def test_sweep_writes_csv_plot_and_summary(tmp_path, capsys):
    sweep.main(["--games", "pong", "--envs", "2", "--modes", "emulation", "inference", "--backends", "cule-cpu",
                "cule-cuda", "--seconds", "0", "--min-steps", "3", "--threads", "1", "--out-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert "cule-cuda   skipped" in out or torch.cuda.is_available()
    with open(tmp_path / "sweep.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["backend"], r["mode"], r["envs"]) for r in rows] == [("cule-cpu", "emulation", "2"),
                                                                    ("cule-cpu", "inference", "2")]
    assert (tmp_path / "fps.png").stat().st_size > 10_000
    assert "| emulation | 2 |" in (tmp_path / "summary.md").read_text()
    assert sweep.read_csv(tmp_path / "sweep.csv")[0].frames == 3 * 4 * 2


def test_help_explains_every_flag(capsys):
    with pytest.raises(SystemExit):
        sweep.main(["--help"])
    text = capsys.readouterr().out
    for flag in ("--full", "--games", "--envs", "--modes", "--backends", "--threads", "--seconds", "--min-steps",
                 "--loop-max-envs", "--net-device", "--unroll", "--bars", "--bars-envs", "--out-dir", "--replot"):
        assert flag in text
    with pytest.raises(SystemExit):
        sweep.main(["--envs", "0"])


def test_training_mode_applies_the_a2c_vtrace_trainers_update(monkeypatch):
    """The sweep's training load is the trainer's own loss, once every `unroll` steps, and it moves the weights."""
    from cule.trainers import a2c_vtrace

    calls = []
    loss = a2c_vtrace.vtrace_loss
    monkeypatch.setattr(a2c_vtrace, "vtrace_loss", lambda *a: calls.append(a) or loss(*a))
    agent = sweep.Agent("training", 6, 2, torch.device("cpu"), unroll=3, seed=0)
    before = [p.detach().clone() for p in agent.net.parameters()]
    gen = torch.Generator().manual_seed(1)
    obs = torch.randint(0, 256, (2, 4, 84, 84), dtype=torch.uint8, generator=gen)
    for t in range(5):
        actions = agent.act(obs)
        assert actions.shape == (2,) and int(actions.max()) < 6
        obs = torch.randint(0, 256, (2, 4, 84, 84), dtype=torch.uint8, generator=gen)
        agent.observe(torch.tensor([1.0, -3.0]), torch.tensor([False, t == 1]), obs)
    assert len(calls) == 1
    assert any(not torch.equal(a, b) for a, b in zip(before, agent.net.parameters()))


def test_fps_benchmark_times_the_shared_adapters():
    from cule.benchmarks import adapters, fps

    assert fps.cule_vector("pong", 2, 3, 1) > 0 and fps.ale_vector("pong", 2, 3, 1) > 0
    assert fps.ale_single("pong", 3) > 0
    env = adapters.AleLoopEnv("pong", 2, 1, screens=False)
    env.reset(0)
    obs, rewards, dones = env.step(torch.zeros(2, dtype=torch.long))
    assert int(obs.sum()) == 0 and env.frame_numbers().tolist() == [4, 4]


def test_fps_benchmark_reports_wall_and_cpu_ratios_with_their_spread():
    from cule.benchmarks import adapters, fps

    frames, wall, cpu = adapters.timed_steps(adapters.make("cule-cpu", "pong", 2, 1), 5)
    assert frames == 5 * 4 * 2 and wall > 0 and cpu > 0
    row = fps.compare(lambda: adapters.make("cule-cpu", "pong", 2, 1),
                      lambda: adapters.make("ale-vector", "pong", 2, 1), 3, 3)
    for kind in ("ratio", "cpu_ratio"):
        low, high = row[f"{kind}_spread"]
        assert 0 < low <= row[kind] <= high
    assert row["cule_cpu_us"] > 0 and row["ale_cpu_us"] > 0
    drawn = fps.drawn_games(10, 2026, fps.GAMES)
    assert drawn == fps.drawn_games(10, 2026, fps.GAMES) and len(set(drawn)) == 10
    assert not set(drawn) & set(fps.GAMES) and set(drawn) <= set(cule.list_games())
    assert drawn != fps.drawn_games(10, 2027, fps.GAMES)
