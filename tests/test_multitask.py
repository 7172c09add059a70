"""Multi-task training: one agent on several games in a mixed batch, per-game returns and human-normalised
scores in the log, and the Atari-57 reference table."""
import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import cule
from cule.games import ATARI_57
from cule.trainers.common.envs import game_list, split_evenly
from cule.trainers.common.episodes import EpisodeScores
from cule.trainers.common.human_scores import RANDOM_AND_HUMAN, human_normalised, summary

REPO = Path(__file__).resolve().parent.parent


def test_impala_57_are_cule_games_and_the_table_covers_them():
    assert len(ATARI_57) == len(set(ATARI_57)) == 57
    assert set(ATARI_57) <= set(cule.list_games())
    assert set(RANDOM_AND_HUMAN) == set(ATARI_57)
    assert all(human > random for random, human in RANDOM_AND_HUMAN.values())
    hard = {"montezuma_revenge", "pitfall", "private_eye", "skiing", "surround", "video_pinball"}
    assert hard <= set(ATARI_57)


def test_atari57_is_one_mixed_batch():
    """--game atari57 builds one batch of the 57 games (PAL and tall screens resized alike) that steps."""
    from cule.trainers.common.envs import make_env

    env = make_env("atari57", 57, "cpu", seed=1, num_threads=2)
    assert env.games == list(ATARI_57) and env.single_action_space.n == 18
    env.reset(seed=1)
    for _ in range(5):
        obs, _, _, _, info = env.step(torch.randint(0, 18, (57,)))
    assert obs.shape == (57, 4, 84, 84) and info["game"].tolist() == list(range(57))
    env.close()


def test_human_normalised_score_by_hand():
    """100 (score - random) / (human - random): random play 0, the human tester 100, from the table's rows
    pong (-20.7, 14.6), breakout (1.7, 30.5), skiing (-17098.1, -4336.9)."""
    assert human_normalised("pong", -20.7) == pytest.approx(0.0)
    assert human_normalised("pong", 14.6) == pytest.approx(100.0)
    assert human_normalised("pong", 21.0) == pytest.approx(100 * 41.7 / 35.3)
    assert human_normalised("breakout", 16.1) == pytest.approx(50.0)  # 100 * 14.4 / 28.8
    assert human_normalised("skiing", -17098.1) == pytest.approx(0.0)
    assert human_normalised("skiing", -4336.9) == pytest.approx(100.0)
    assert math.isnan(human_normalised("adventure", 1.0))  # not one of the 57


def test_summary_mean_and_median_over_games():
    s = summary({"pong": 14.6, "breakout": 16.1, "skiing": -17098.1, "adventure": 5.0})
    assert set(s) == {"hns/pong", "hns/breakout", "hns/skiing", "hns_mean", "hns_median"}
    assert s["hns_mean"] == pytest.approx(50.0) and s["hns_median"] == pytest.approx(50.0)
    s = summary({"pong": 14.6, "breakout": 1.7, "boxing": 12.1, "freeway": 29.6})  # 100, 0, 100, 100
    assert s["hns_mean"] == pytest.approx(75.0) and s["hns_median"] == pytest.approx(100.0)
    waiting = summary({"pong": 14.6, "breakout": math.nan})  # breakout has not finished an episode yet
    assert waiting["hns/pong"] == pytest.approx(100.0)
    assert math.isnan(waiting["hns_mean"]) and math.isnan(waiting["hns_median"])


def test_games_argument_and_even_split():
    assert game_list("pong") == ["pong"]
    assert game_list("pong, breakout,boxing") == ["pong", "breakout", "boxing"]
    assert game_list("atari57") == list(ATARI_57)
    assert split_evenly(["pong", "breakout", "boxing"], 8) == {"pong": 3, "breakout": 3, "boxing": 2}
    with pytest.raises(ValueError, match="at least one"):
        split_evenly(["pong", "breakout", "boxing"], 2)


def test_episode_scores_per_game():
    """Returns summed per game from info["game"], over several envs and steps, and kept until a game's next
    finished episode."""
    scores = EpisodeScores(4, torch.device("cpu"), games=["pong", "breakout"])
    game = torch.tensor([0, 0, 1, 1], dtype=torch.int32)
    scores.add(torch.tensor([1, 2, 3, 4]), torch.tensor([False, True, False, True]), game=game)
    scores.add(torch.tensor([5, 1, 1, 1]), torch.tensor([True, False, False, False]), game=game)
    assert scores.drain() == pytest.approx((2 + 6 + 4) / 3)
    assert scores.by_game()["return/pong"] == pytest.approx(4.0) and scores.by_game()["return/breakout"] == 4.0
    scores.add(torch.tensor([0, 0, 6, 0]), torch.tensor([False, False, True, False]), game=game)  # breakout: 3+1+6
    scores.drain()
    logged = scores.by_game()
    assert logged["return/pong"] == pytest.approx(4.0) and logged["return/breakout"] == pytest.approx(10.0)
    assert logged["hns/pong"] == pytest.approx(human_normalised("pong", 4.0))
    assert EpisodeScores(4, torch.device("cpu")).by_game() == {}  # a single game logs as before


def _log(path: Path) -> tuple[list[str], list[dict]]:
    with open(path / "log.csv", newline="") as f:
        reader = csv.DictReader(f)
        return reader.fieldnames, list(reader)


def test_a2c_vtrace_multitask_smoke_run(tmp_path):
    """A2C+V-trace on 4 games in mixed batches (2 batches of 4 environments, one per game), 300 steps each:
    one network over 18 actions, and per-game returns and human-normalised scores in log.csv."""
    from cule.trainers.a2c_vtrace import Args, train

    torch.set_num_threads(2)
    games = ["breakout", "pong", "boxing", "freeway"]
    r = train(Args(game=",".join(games), num_envs=8, num_batches=2, num_steps=20, total_frames=8 * 300 * 4,
                   output_dir=str(tmp_path), num_threads=2, checkpoint_every=100))
    assert r["frames"] == 8 * 300 * 4 and r["model"](torch.zeros((1, 4, 84, 84), dtype=torch.uint8))[0].shape == (1, 18)
    fields, rows = _log(tmp_path)
    for g in games:
        assert f"return/{g}" in fields and f"hns/{g}" in fields
    assert {"hns_mean", "hns_median", "episode_return", "loss"} <= set(fields)
    breakout = [float(row["return/breakout"]) for row in rows if row["return/breakout"] != "nan"]
    assert breakout and all(0 <= b < 50 for b in breakout), "breakout's episodes (about 200 random steps) end"
    assert (tmp_path / "curve.png").stat().st_size > 1000


def test_single_game_log_is_unchanged(tmp_path):
    from cule.trainers.a2c_vtrace import Args, train

    train(Args(game="sanity", num_envs=8, num_batches=2, num_steps=4, total_frames=8 * 4 * 4,
               output_dir=str(tmp_path)))
    assert _log(tmp_path)[0] == ["frames", "wall_time", "cpu_time", "fps", "episode_return", "loss", "value_loss",
                                 "entropy"]  # no per-game columns


def test_ppo_multitask_logs_per_game_and_evaluates_each(tmp_path):
    from cule.trainers.ppo import Args, train

    r = train(Args(game="breakout,pong", num_envs=4, num_steps=32, total_frames=4 * 32 * 4 * 3,
                   output_dir=str(tmp_path), num_threads=2, eval_episodes=1))
    fields, _ = _log(tmp_path)
    assert {"return/breakout", "return/pong", "hns_mean", "value_loss"} <= set(fields)
    evaluation = json.loads((tmp_path / "eval.json").read_text())
    assert set(evaluation["scores"]) == {"breakout", "pong"} and -21 <= evaluation["scores"]["pong"][0] <= 21
    assert r["eval_hns/pong"] == pytest.approx(human_normalised("pong", evaluation["scores"]["pong"][0]))
    assert math.isfinite(r["eval_hns_median"])


def test_help_explains_several_games():
    out = subprocess.run([sys.executable, "-m", "cule.trainers.a2c_vtrace", "--help"], capture_output=True, text=True,
                         cwd=REPO)
    assert out.returncode == 0 and "comma-separated" in out.stdout and "atari57" in out.stdout
