"""cule.make("ALE/<Game>-v5") against gymnasium's ALE/<Game>-v5, step by step.

Same seed, same random actions from the minimal action set, v5 defaults
(frameskip 4, sticky actions 0.25, RGB observations): reward, terminated,
truncated, lives, episode frame number and the observation are compared after
every step. When an episode ends, gymnasium's env is reset and cule's resets
itself on the next step (NextStep autoreset); the comparison goes on.
Default run: 500 steps per game, and one other mode and difficulty for 150;
``--extended``: 10,000, and every mode and every difficulty for 300.
"""
import gymnasium
import numpy as np
import pytest
import torch

import ale_py
import cule
from ale_oracle import format_table
from conftest import report

gymnasium.register_envs(ale_py)
ROWS = []


def _gym_id(game):
    return "ALE/" + ale_py.registration.rom_id_to_name(game) + "-v5"


def compare_v5(game, steps, seed=0, mode=None, difficulty=None):
    kwargs = {} if mode is None else {"mode": mode}
    if difficulty is not None:
        kwargs["difficulty"] = difficulty
    theirs = gymnasium.make(_gym_id(game), **kwargs)
    ours = cule.make(_gym_id(game), num_envs=1, **kwargs)
    obs_t, info_t = theirs.reset(seed=seed)
    obs_o, info_o = ours.reset(seed=seed)
    rng = np.random.default_rng(seed)
    done = False
    episodes = 1
    for t in range(steps + 1):
        if t:
            a = int(rng.integers(0, theirs.action_space.n))
            if done:
                obs_t, info_t = theirs.reset()
                r_t, term_t, trunc_t = 0, False, False
                episodes += 1
            else:
                obs_t, r_t, term_t, trunc_t, info_t = theirs.step(a)
            obs_o, r_o, term_o, trunc_o, info_o = ours.step(torch.tensor([a]))
            got = (int(r_o[0]), bool(term_o[0]), bool(trunc_o[0]))
            if got != (int(r_t), term_t, trunc_t):
                return t, episodes, f"(reward, terminated, truncated) ours {got} theirs {(r_t, term_t, trunc_t)}"
            done = term_t or trunc_t
        for key in ("lives", "episode_frame_number"):
            if int(info_o[key][0]) != int(info_t[key]):
                return t, episodes, f"{key} ours {int(info_o[key][0])} theirs {int(info_t[key])}"
        if not np.array_equal(obs_o[0].numpy(), obs_t):
            return t, episodes, f"observation: {(obs_o[0].numpy() != obs_t).any(-1).sum()} pixels differ"
    return None, episodes, ""


def _check(game, steps, **kwargs):
    mismatch, episodes, what = compare_v5(game, steps, **kwargs)
    label = game if not kwargs else f"{game} {kwargs}"
    ROWS.append((label, steps + 1, mismatch, what))
    assert mismatch is None, f"{label}: step {mismatch}: {what}"


@pytest.mark.parametrize("game", cule.list_games())
def test_v5_exact(game):
    _check(game, 500)


@pytest.mark.parametrize("game", cule.list_games())
def test_v5_other_mode_and_difficulty(game):
    info = cule.games.game_info(game)
    modes = [m for m in info["modes"] if m != info["default_mode"]]
    difficulties = [d for d in info["difficulties"] if d != 0]
    if not modes and not difficulties:
        pytest.skip(f"{game} has one mode and one difficulty")
    _check(game, 150, mode=modes[-1] if modes else None, difficulty=difficulties[-1] if difficulties else None)


@pytest.mark.extended
@pytest.mark.parametrize("game", cule.list_games())
def test_v5_every_mode_and_difficulty(game):
    """Each mode at the default difficulty and each difficulty at the default mode: a mode switches the ROM's
    own game logic (other speeds, targets, number of players), paths random play in one mode never takes."""
    info = cule.games.game_info(game)
    settings = [{"mode": m} for m in info["modes"] if m != info["default_mode"]]
    settings += [{"difficulty": d} for d in info["difficulties"] if d != 0]
    if not settings:
        pytest.skip(f"{game} has one mode and one difficulty")
    failed = []
    for kwargs in settings:
        mismatch, _, what = compare_v5(game, 300, seed=2, **kwargs)
        ROWS.append((f"{game} {kwargs}", 301, mismatch, what))
        if mismatch is not None:
            failed.append(f"{kwargs}: step {mismatch}: {what}")
    assert not failed, f"{game}: " + "; ".join(failed)


@pytest.mark.extended
@pytest.mark.parametrize("game", cule.list_games())
def test_v5_exact_extended(game):
    _check(game, 10000, seed=1)


@pytest.mark.extended
def test_v5_truncation_at_108000_frames():
    """adventure never ends under random play: both must truncate at frame 108,000 together."""
    mismatch, episodes, what = compare_v5("adventure", 27_010, seed=3)
    ROWS.append(("adventure (108,000-frame truncation)", 27_011, mismatch, what))
    assert mismatch is None, what
    assert episodes >= 2, "the episode was never truncated"


def test_report_v5_table():
    if not ROWS:
        pytest.skip("no game was compared")
    report("cule.make vs gymnasium ALE/<Game>-v5", format_table(sorted(ROWS)))
