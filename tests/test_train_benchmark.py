"""python -m cule.benchmarks.train: every trainer's short run writes its log, curve and summary; resume continues
the log; the evaluation follows the papers' protocol; --set reaches the trainer and refuses what it does not know."""
import csv
import json
import re

import pytest

pytest.importorskip("matplotlib")

from cule.benchmarks import train  # noqa: E402


def _run(tmp_path, *extra):
    return train.main(["--game", "pong", "--quiet", "--output-dir", str(tmp_path), *extra])


@pytest.mark.parametrize("trainer,frames", [("a2c_vtrace", 8192), ("ppo", 8192), ("rainbow", 2048)])
def test_each_trainer_writes_its_curve_and_summary(tmp_path, trainer, frames):
    summary = _run(tmp_path, "--trainer", trainer, "--frames", str(frames), "--eval-episodes", "0",
                   "--num-envs", "8", "--set", "checkpoint_every=1")
    assert summary["trainer"] == trainer and summary["at_end"]["frames"] >= frames // 2
    assert summary["at_end"]["cpu_minutes"] > 0
    assert set(summary) >= {"reached", "smoothed_reached", "best_score", "final_score", "at_end", "machine",
                            "settings", "date"}
    assert summary["settings"]["total_frames"] == frames and summary["settings"]["num_envs"] == 8
    assert json.loads((tmp_path / "summary.json").read_text()) == summary
    train.plot(tmp_path, trainer, -21.0)
    assert (tmp_path / "curve.png").stat().st_size > 1000


def test_resume_continues_the_log_and_the_target_is_found(tmp_path):
    _run(tmp_path, "--trainer", "ppo", "--frames", "8192", "--num-envs", "8", "--eval-episodes", "0")
    first = list(csv.DictReader(open(tmp_path / "log.csv")))
    summary = _run(tmp_path, "--trainer", "ppo", "--frames", "16384", "--num-envs", "8", "--eval-episodes", "0",
                   "--resume")
    rows = list(csv.DictReader(open(tmp_path / "log.csv")))
    assert rows[:len(first)] == first and len(rows) > len(first)
    assert float(rows[-1]["frames"]) == 16384 and summary["at_end"]["frames"] == 16384
    assert float(rows[-1]["wall_time"]) >= float(first[-1]["wall_time"])
    # a target every logged score meets is reached at the first scored line; one none meets is not
    scored = [r for r in rows if r["episode_return"] not in ("", "nan")]
    low = train.summarise(tmp_path, -1000.0)
    if scored:
        assert low["reached"] == dict(minutes=round(float(scored[0]["wall_time"]) / 60, 2),
                                      frames=int(float(scored[0]["frames"])),
                                      cpu_minutes=round(float(scored[0]["cpu_time"]) / 60, 2))
    assert train.summarise(tmp_path, 1000.0)["reached"] is None


def test_resume_takes_the_runs_settings_and_refuses_others(tmp_path):
    """--resume alone continues the run as it was (trainer, envs, --set values); a flag that would change what it
    trains is refused before anything is written, so the checkpoint and the log stay the run's."""
    import torch

    _run(tmp_path, "--trainer", "a2c_vtrace", "--frames", "4096", "--num-envs", "8", "--eval-episodes", "0",
         "--set", "num_batches=2", "--set", "optimizer=rmsprop", "--seed", "3")
    summary = train.main(["--quiet", "--output-dir", str(tmp_path), "--frames", "8192", "--eval-episodes", "0",
                          "--resume"])
    assert summary["trainer"] == "a2c_vtrace" and 4096 < summary["at_end"]["frames"] <= 8192
    state = torch.load(tmp_path / "checkpoint.pt", weights_only=False)
    assert state["trainer"] == "a2c_vtrace"
    assert (state["args"]["num_envs"], state["args"]["num_batches"], state["args"]["optimizer"],
            state["args"]["seed"]) == (8, 2, "rmsprop", 3)
    before = (tmp_path / "checkpoint.pt").read_bytes(), (tmp_path / "log.csv").read_text()
    with pytest.raises(ValueError, match="num_envs: 8 in the checkpoint, 32 asked"):
        train.main(["--quiet", "--output-dir", str(tmp_path), "--frames", "12288", "--eval-episodes", "0",
                    "--resume", "--num-envs", "32"])
    with pytest.raises(SystemExit, match="trained a2c_vtrace, not ppo"):
        train.main(["--quiet", "--output-dir", str(tmp_path), "--resume", "--trainer", "ppo"])
    assert ((tmp_path / "checkpoint.pt").read_bytes(), (tmp_path / "log.csv").read_text()) == before
    with pytest.raises(SystemExit, match="no checkpoint.pt"):
        train.main(["--quiet", "--output-dir", str(tmp_path / "empty"), "--resume"])


def test_evaluation_uses_noop_starts_and_reports_a_human_normalised_score(tmp_path, monkeypatch):
    from cule.trainers.common import evaluate as evaluation

    seen = {}
    real = evaluation.evaluate

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return real(*args, **{**kwargs, "max_frames": 2000})  # short episodes: the protocol, not the scores

    monkeypatch.setattr("cule.trainers.common.run.evaluate", spy)
    summary = _run(tmp_path, "--trainer", "rainbow", "--frames", "1024", "--num-envs", "4", "--eval-episodes", "3")
    assert seen["noops"] is True
    ev = summary["evaluation"]
    assert ev["episodes"] == 3 and "no-ops" in ev["protocol"] and "epsilon 0.001" in ev["protocol"]
    scores = json.loads((tmp_path / "eval.json").read_text())["scores"]
    random_score, human_score = evaluation_reference("pong")
    assert ev["human_normalised"] == pytest.approx(
        round(100 * (sum(scores) / 3 - random_score) / (human_score - random_score), 1))


def evaluation_reference(game):
    from cule.trainers.common.human_scores import RANDOM_AND_HUMAN

    return RANDOM_AND_HUMAN[game]


@pytest.mark.parametrize("pair,message", [("nosuch=1", "one of the trainer's arguments"),
                                          ("noisy=maybe", "True or False"), ("n_step=three", "takes an integer"),
                                          ("n_step", "NAME=VALUE")])
def test_set_refuses_what_the_trainer_does_not_take(tmp_path, pair, message):
    with pytest.raises(SystemExit, match=message):
        _run(tmp_path, "--trainer", "rainbow", "--frames", "1024", "--set", pair)


def test_set_reaches_the_trainer(tmp_path):
    summary = _run(tmp_path, "--trainer", "rainbow", "--frames", "1024", "--num-envs", "4", "--eval-episodes", "0",
                   "--set", "noisy=False", "--set", "n_step=1", "--set", "atoms=1")
    assert summary["settings"]["noisy"] is False and summary["settings"]["n_step"] == 1
    assert summary["settings"]["atoms"] == 1


def test_a_run_needs_an_end(tmp_path):
    with pytest.raises(SystemExit):
        _run(tmp_path, "--minutes", "0")


def _short_evaluation(seen=None, max_frames=2000):
    """The evaluation of run.py, its episodes capped at max_frames; records the weights and arguments in seen."""
    from cule.trainers.common import evaluate as evaluation

    real = evaluation.evaluate

    def spy(model, *args, **kwargs):
        if seen is not None:
            seen["weights"] = {k: v.clone() for k, v in model.state_dict().items()}
            seen.update(kwargs)
        return real(model, *args, **{**kwargs, "max_frames": max_frames})

    return spy


def test_eval_only_evaluates_the_saved_weights_without_training(tmp_path, monkeypatch):
    """A lockstep A2C run with cached starts, its checkpoint cut down to the weights (as one brought back from a
    GPU), then --eval-only: the saved weights are evaluated, nothing trains, summary.json gains the evaluation."""
    import torch

    from cule.trainers.common import checkpoint

    _run(tmp_path, "--trainer", "a2c_vtrace", "--frames", "8192", "--num-envs", "8", "--eval-episodes", "0",
         "--set", "num_batches=4", "--set", "lockstep=True", "--set", "reset_mode=cache")
    state = checkpoint.load(tmp_path)
    del state["optimizer"]
    checkpoint.save(tmp_path, state)
    rows = (tmp_path / "log.csv").read_text()
    seen = {}
    monkeypatch.setattr("cule.trainers.common.run.evaluate", _short_evaluation(seen))
    summary = _run(tmp_path, "--trainer", "a2c_vtrace", "--eval-only", "--eval-episodes", "2")
    assert seen["noops"] is True
    assert all(torch.equal(seen["weights"][k], v) for k, v in state["model"].items())
    assert summary["evaluation"]["episodes"] == 2 and summary["evaluation"]["frames"] == state["frames"]
    assert summary["settings"]["lockstep"] is True  # the training run's summary, kept
    assert (tmp_path / "log.csv").read_text() == rows and checkpoint.load(tmp_path)["update"] == state["update"]


def test_eval_only_needs_a_checkpoint(tmp_path):
    with pytest.raises(SystemExit, match="no checkpoint.pt"):
        _run(tmp_path, "--eval-only")


def test_eval_only_takes_the_runs_trainer_and_refuses_another(tmp_path, monkeypatch):
    _run(tmp_path, "--trainer", "ppo", "--frames", "4096", "--num-envs", "8", "--eval-episodes", "0")
    with pytest.raises(SystemExit, match="give --trainer ppo"):
        _run(tmp_path, "--trainer", "a2c_vtrace", "--eval-only")
    with pytest.raises(SystemExit, match="give --game pong"):
        _run(tmp_path, "--game", "breakout", "--eval-only")
    real = train.trainer_module
    loaded = []
    monkeypatch.setattr(train, "trainer_module", lambda name: loaded.append(name) or real(name))
    monkeypatch.setattr("cule.trainers.common.run.evaluate", _short_evaluation())
    summary = _run(tmp_path, "--eval-only", "--eval-episodes", "1")  # neither --trainer nor --game
    assert loaded == ["ppo"] and summary["trainer"] == "ppo" and summary["evaluation"]["episodes"] == 1


def _losses(path):
    return [(r["frames"], r["loss"]) for r in csv.DictReader(open(path / "log.csv"))]


@pytest.mark.parametrize("trainer,frames,every,sets", [("a2c_vtrace", 4096, 1024, []),
                                                       ("ppo", 2048, 1024, ["--set", "num_steps=32"]),
                                                       ("rainbow", 1024, 512, [])])
def test_tests_during_training_leave_the_training_as_it_was(tmp_path, monkeypatch, trainer, frames, every, sets):
    """--test-every tests the agent once per that many frames into tests.csv, as the final evaluation plays
    (Rainbow: its own epsilon-greedy act, noise off), and the run trains exactly as without the tests: the
    random streams are restored and the network goes back to training mode."""
    seen = {}
    monkeypatch.setattr("cule.trainers.common.run.evaluate", _short_evaluation(seen, max_frames=400))
    common = ["--trainer", trainer, "--frames", str(frames), "--num-envs", "8", "--eval-episodes", "0", *sets]
    plain = _run(tmp_path / "plain", *common)
    summary = _run(tmp_path / "tested", *common, "--test-every", str(every), "--test-episodes", "2")
    assert _losses(tmp_path / "tested") == _losses(tmp_path / "plain")
    rows = list(csv.DictReader(open(tmp_path / "tested" / "tests.csv")))
    assert [int(r["frames"]) // every for r in rows] == list(range(1, summary["at_end"]["frames"] // every + 1))
    assert all(float(r["episodes"]) == 2 and float(r["min"]) <= float(r["score"]) <= float(r["max"]) for r in rows)
    assert seen["noops"] is True and (seen["act"] is not None) == (trainer == "rainbow")
    assert not (tmp_path / "plain" / "tests.csv").exists() and "tests" not in plain
    assert summary["tests"]["count"] == len(rows) and summary["tests"]["episodes"] == 2


@pytest.mark.parametrize("trainer,frames,every", [("a2c_vtrace", 4096, 1024), ("rainbow", 1024, 512)])
def test_snapshots_tested_after_the_run_score_what_tests_during_it_scored(tmp_path, monkeypatch, trainer, frames,
                                                                         every):
    """--test-later keeps the weights at each test point and trains as a tested run does; --test-snapshots then
    tests them, same episodes and seeds, into the tests.csv that testing during the run writes (the clocks of
    each test point, not of the later run), and a second --test-snapshots tests nothing twice."""
    monkeypatch.setattr("cule.trainers.common.run.evaluate", _short_evaluation(max_frames=400))
    common = ["--trainer", trainer, "--frames", str(frames), "--num-envs", "8", "--eval-episodes", "0",
              "--test-every", str(every), "--test-episodes", "2"]
    now = _run(tmp_path / "now", *common)
    later = _run(tmp_path / "later", *common, "--test-later")
    assert _losses(tmp_path / "later") == _losses(tmp_path / "now")
    assert not (tmp_path / "later" / "tests.csv").exists() and "tests" not in later
    assert len(list((tmp_path / "later" / "snapshots").glob("test_*.pt"))) == now["tests"]["count"] >= 2

    def scores(folder):
        return [(r["frames"], r["score"], r["min"], r["max"]) for r in csv.DictReader(open(folder / "tests.csv"))]

    tested = train.main(["--test-snapshots", "--quiet", "--output-dir", str(tmp_path / "later")])
    assert scores(tmp_path / "later") == scores(tmp_path / "now")
    assert tested["tests"]["count"] == now["tests"]["count"] and tested["at_end"] == later["at_end"]
    import torch  # the clocks are those the snapshots kept, from their moments in training

    kept = [torch.load(p, weights_only=True)["clocks"]["wall_time"]
            for p in sorted((tmp_path / "later" / "snapshots").glob("test_*.pt"))]
    walls = [float(r["wall_time"]) for r in csv.DictReader(open(tmp_path / "later" / "tests.csv"))]
    assert walls == kept == sorted(kept)
    train.main(["--test-snapshots", "--quiet", "--output-dir", str(tmp_path / "later")])
    assert scores(tmp_path / "later") == scores(tmp_path / "now")


def test_test_snapshots_says_where_snapshots_come_from(tmp_path):
    _run(tmp_path, "--trainer", "ppo", "--frames", "1024", "--num-envs", "8", "--eval-episodes", "0")
    with pytest.raises(SystemExit, match="--test-later"):
        train.main(["--test-snapshots", "--quiet", "--output-dir", str(tmp_path)])


def test_the_summary_finds_the_first_test_at_the_target(tmp_path, monkeypatch):
    monkeypatch.setattr("cule.trainers.common.run.evaluate", _short_evaluation(max_frames=400))
    summary = _run(tmp_path, "--trainer", "ppo", "--frames", "8192", "--num-envs", "8", "--eval-episodes", "0",
                   "--test-every", "2048", "--test-episodes", "1")
    rows = list(csv.DictReader(open(tmp_path / "tests.csv")))
    first = dict(minutes=round(float(rows[0]["wall_time"]) / 60, 2), frames=int(rows[0]["frames"]),
                 cpu_minutes=round(float(rows[0]["cpu_time"]) / 60, 2))
    assert train.summarise(tmp_path, -1000.0)["tests"]["reached"] == first
    assert train.summarise(tmp_path, 1000.0)["tests"]["reached"] is None
    scores = [float(r["score"]) for r in rows]
    assert summary["tests"]["best"]["score"] == max(scores) and summary["tests"]["last"]["score"] == scores[-1]
    # the tests' clocks are the training's: never behind the log line of the same update
    log = {r["frames"]: float(r["wall_time"]) for r in csv.DictReader(open(tmp_path / "log.csv"))}
    assert all(float(r["wall_time"]) >= log[r["frames"]] for r in rows if r["frames"] in log)
    train.plot(tmp_path, "ppo", -21.0)
    assert (tmp_path / "curve.png").stat().st_size > 1000


@pytest.mark.parametrize("flags,message", [
    (["--test-every", "-1"], "--test-every must be at least 0, got -1"),
    (["--test-every", "1000", "--test-episodes", "0"], "--test-episodes must be at least 1, got 0"),
    (["--game", "pongg"], "Unknown game 'pongg'. Did you mean 'pong'"),
    (["--trainer", "a2c_vtrace", "--num-envs", "6"], "--num-envs \\(6\\) must be a multiple of --num-batches \\(4\\)"),
    (["--set", "optimizer=sgd"], "--optimizer must be one of 'adam', 'rmsprop', got 'sgd'"),
])
def test_the_trainers_checks_stop_the_command_with_one_line(tmp_path, flags, message, capsys):
    with pytest.raises(SystemExit) as stop:
        train.main(["--trainer", "ppo", "--frames", "1024", "--num-envs", "8", "--quiet", "--output-dir",
                    str(tmp_path), *flags])
    assert stop.value.code == 2 and re.search(message, capsys.readouterr().err)
    assert not any(tmp_path.iterdir())


def test_set_refuses_what_the_commands_own_flags_set():
    from cule.benchmarks.train import INVOCATION_ARGS, trainer_settings
    for name in ("game", "seed", "device", "output_dir"):
        assert name in INVOCATION_ARGS
        with pytest.raises(SystemExit, match=f"{name} comes from this command's own flags"):
            trainer_settings("ppo", [f"{name}=x"])
    assert trainer_settings("ppo", ["num_steps=64"])["num_steps"] == 64


def test_frames_stop_the_ppo_preset_without_shortening_its_schedule(tmp_path):
    """--frames is where the run stops: the preset's learning rate still anneals over its 40M frames."""
    summary = _run(tmp_path, "--trainer", "ppo", "--frames", "1024", "--num-envs", "8", "--eval-episodes", "0",
                   "--set", "num_steps=16")
    assert summary["settings"]["total_frames"] == 1024 and summary["settings"]["schedule_frames"] == 40_000_000
    rates = [float(r["learning_rate"]) for r in csv.DictReader(open(tmp_path / "log.csv"))]
    assert rates == [2.5e-4 * (1 - frames / 40_000_000) for frames in (0, 512)]  # 8 envs x 16 steps x 4 frames


def test_ctrl_c_ends_the_training_and_the_summary_follows(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-m", "cule.benchmarks.train", "--game", "pong", "--num-envs", "8",
                             "--minutes", "10", "--eval-episodes", "0", "--set", "num_steps=5",
                             "--output-dir", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TQDM_DISABLE": "1"})
    deadline = time.monotonic() + 120
    while not ((tmp_path / "log.csv").exists() and len((tmp_path / "log.csv").read_text().splitlines()) > 2):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "Traceback" not in err, err
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert json.loads(out) == summary and summary["this_run_minutes"] < 2
    assert summary["at_end"]["frames"] > 0 and (tmp_path / "curve.png").exists()
