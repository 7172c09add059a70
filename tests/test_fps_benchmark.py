"""python -m cule.benchmarks.fps --gymnasium: one gymnasium env of cule's against one of ale-py's."""
import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from cule.benchmarks import adapters


@pytest.mark.parametrize("namespace", ["cule", "ALE"])
def test_gymnasium_adapter_steps_one_v5_env(namespace):
    env = adapters.GymnasiumEnv("pong", 1, 1, namespace)
    obs = env.reset(0)
    assert obs.shape == (1, 210, 160, 3)
    for _ in range(3):
        obs, reward, done = env.step(torch.tensor([1]))
    assert obs.shape == (1, 210, 160, 3) and reward.shape == done.shape == (1,)
    np.testing.assert_array_equal(env.frame_numbers(), [3 * env.frameskip])  # v5: frameskip 4
    env.close()


def test_gymnasium_adapter_is_one_env():
    with pytest.raises(ValueError, match="one environment"):
        adapters.GymnasiumEnv("pong", 2, 1)


def test_gymnasium_comparison_writes_its_rows(tmp_path):
    done = subprocess.run([sys.executable, "-m", "cule.benchmarks.fps", "--gymnasium", "--games", "pong", "--steps",
                           "20", "--repeats", "1", "--output-dir", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "fps.json").read_text())
    assert data["meta"]["gymnasium"] is True
    [row] = data["rows"]
    assert row["kind"] == "gymnasium" and row["game"] == "pong" and row["envs"] == 1
    assert row["cpu_ratio"] == pytest.approx(row["ale_cpu_us"] / row["cule_cpu_us"])


@pytest.mark.parametrize("flags,message", [
    (["--games", "pong", "pongg"], "Unknown game 'pongg'. Did you mean 'pong'"),
    (["--steps", "0"], "--steps and --envs must be at least 1"),
    (["--draw", "200"], "--draw 200: there are 104 games"),
    (["--replot"], "fps.json does not exist"),
    (["--img-size", "84", "5000"], "--img-size: each side in 1..4096"),
    (["--img-size", "224", "224", "--gymnasium"], "--img-size sizes the vector envs"),
])
def test_bad_arguments_stop_before_anything_is_measured(flags, message, tmp_path):
    done = subprocess.run([sys.executable, "-m", "cule.benchmarks.fps", *flags, "--output-dir", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert done.stdout == ""  # no row was measured


def test_an_output_dir_that_cannot_be_made_stops_at_once(tmp_path):
    (tmp_path / "a_file").write_text("")
    done = subprocess.run([sys.executable, "-m", "cule.benchmarks.fps", "--games", "pong", "--output-dir",
                           str(tmp_path / "a_file" / "out")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "cannot make the folder" in done.stderr and done.stdout == ""


@pytest.mark.parametrize("module,flags,least", [
    ("mixed", ["--steps", "0"], 1), ("mixed", ["--repeats", "0"], 1), ("cpu_core", ["--repeat", "0"], 1),
    ("soak", ["--frames", "0"], 1), ("forks", ["--num-envs", "1"], 2), ("forks", ["--rollouts", "0"], 1),
])
def test_counts_below_their_least_value_stop_the_other_benchmarks(module, flags, least):
    done = subprocess.run([sys.executable, "-m", f"cule.benchmarks.{module}", *flags], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and f"{flags[0]}: must be at least {least}, got {flags[1]}" in done.stderr, done.stderr


def test_img_size_reaches_both_vector_envs_and_leaves_out_the_single_comparison(tmp_path):
    for kind in ("cule-cpu", "ale-vector"):
        env = adapters.make(kind, "pong", 2, 1, img_height=224, img_width=200)
        assert tuple(env.reset(0).shape) == (2, 4, 224, 200)
        env.close()
    with pytest.raises(ValueError, match="takes no environment arguments"):
        adapters.make("ale-loop", "pong", 1, 1, img_height=224)
    done = subprocess.run([sys.executable, "-m", "cule.benchmarks.fps", "--games", "pong", "--envs", "2", "--steps",
                           "5", "--repeats", "1", "--img-size", "224", "224", "--output-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "fps.json").read_text())
    assert data["meta"]["img_size"] == [224, 224] and [r["kind"] for r in data["rows"]] == ["vector"]
