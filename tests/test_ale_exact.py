"""Frame-exact against ale-py on every ALE game.

Each game runs in cule and in ale-py side by side (tests/differential.py):
random actions from the full action set, frame_skip 1, no sticky actions,
reset_game every 400 steps (and on game over); RAM, screen, reward, game over,
lives and frame counters are compared after every step. The default run does
1,200 steps per game; ``--extended`` does 20,000. A table of the results is
printed at the end of the test run.
"""
import pytest

import cule
from ale_oracle import format_table
from conftest import report
from differential import compare

ROWS = []


def _run(game, frames, reset_every):
    result = compare(game, frames, reset_every=reset_every)
    ROWS.append((game, result.frames, result.mismatch, result.what))
    assert result.mismatch is None, f"{game}: step {result.mismatch}: {result.what}"
    assert result.resets >= 2


@pytest.mark.parametrize("game", cule.list_games())
def test_frame_exact(game):
    _run(game, 1200, 400)


@pytest.mark.extended
@pytest.mark.parametrize("game", cule.list_games())
def test_frame_exact_extended(game):
    _run(game, 20000, 5000)


def test_report_table():
    """Runs after the games above (same module): prints the table."""
    if not ROWS:
        pytest.skip("no game was compared")
    report("cule vs ale-py, frame by frame", format_table(sorted(ROWS)))
