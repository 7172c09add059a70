"""Per-game facts the Python side needs: action sets, modes, difficulties.

From ALE 0.12.1's game settings (see cule/games_catalogue.json, where every
entry was checked against ale-py); the reward, terminal and lives logic lives
in the C++ core (cule/cpp/games/).
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

# ALE's action ids, in the order of the full action set.
ACTION_NAMES = (
    "NOOP", "FIRE", "UP", "RIGHT", "LEFT", "DOWN", "UPRIGHT", "UPLEFT", "DOWNRIGHT", "DOWNLEFT",
    "UPFIRE", "RIGHTFIRE", "LEFTFIRE", "DOWNFIRE", "UPRIGHTFIRE", "UPLEFTFIRE", "DOWNRIGHTFIRE", "DOWNLEFTFIRE",
)
FULL_ACTION_SET = tuple(range(18))


@functools.lru_cache(maxsize=None)
def _table() -> dict:
    return json.loads((Path(__file__).parent / "data" / "games.json").read_text())


def game_info(game: str) -> dict:
    """minimal_actions, modes, default_mode and difficulties of an ALE game id."""
    return _table()[game]
