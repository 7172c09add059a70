"""Per-game facts the Python side needs: action sets, modes, difficulties.

From ALE 0.12.1's game settings (src/ale/games/supported/*.cpp), kept in
cule/data/games.json and checked against ale-py by the tests; the reward,
terminal and lives logic lives in the C++ core (cule/cpp/ale/games/).
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

# The Atari-57 benchmark: the 57 games IMPALA's multi-task agent trains on (Espeholt et al. 2018, appendix).
ATARI_57 = (
    "alien", "amidar", "assault", "asterix", "asteroids", "atlantis", "bank_heist", "battle_zone", "beam_rider",
    "berzerk", "bowling", "boxing", "breakout", "centipede", "chopper_command", "crazy_climber", "defender",
    "demon_attack", "double_dunk", "enduro", "fishing_derby", "freeway", "frostbite", "gopher", "gravitar", "hero",
    "ice_hockey", "jamesbond", "kangaroo", "krull", "kung_fu_master", "montezuma_revenge", "ms_pacman",
    "name_this_game", "phoenix", "pitfall", "pong", "private_eye", "qbert", "riverraid", "road_runner", "robotank",
    "seaquest", "skiing", "solaris", "space_invaders", "star_gunner", "surround", "tennis", "time_pilot",
    "tutankham", "up_n_down", "venture", "video_pinball", "wizard_of_wor", "yars_revenge", "zaxxon",
)

# The core's game unit for a ROM that is none of ALE's games (cule/cpp/ale/games/bare.hpp):
# no reward, never over, every action legal; the difficulty switches are the console's own.
BARE_GAME = "bare"
_BARE_INFO = {"default_mode": 0, "modes": [0], "difficulties": [0, 1, 2, 3], "minimal_actions": list(FULL_ACTION_SET)}


@functools.lru_cache(maxsize=None)
def _table() -> dict:
    return json.loads((Path(__file__).parent / "data" / "games.json").read_text())


def game_info(game: str) -> dict:
    """minimal_actions, legal_actions, modes, default_mode and difficulties of an ALE game id (or BARE_GAME).

    The legal actions come from the game's unit in the core (the actions ALE
    does not turn into NOOP), the rest from ALE's game settings.
    """
    from . import _core

    info = dict(_BARE_INFO) if game == BARE_GAME else dict(_table()[game])
    info["legal_actions"] = list(_core.legal_actions(game))
    return info
