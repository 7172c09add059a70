"""Random and human reference scores of the Atari-57 games, and human-normalised scores.

Source of the numbers: the table of DeepMind's DQN Zoo, ``dqn_zoo/atari_data.py``
(https://github.com/google-deepmind/dqn_zoo, Quan & Ostrovski 2020), taken
game by game. As that file describes them: each score is an undiscounted
return averaged over at least 3 episodes, every episode started after a
uniformly random 1-30 no-ops and capped at 108,000 frames; "random" picks
actions uniformly at random, "human" is a professional game tester. These are
the random and human columns of the 57-game tables that DQN-family and IMPALA
results are normalised with. One known variant: some tables (e.g.
google-research/reincarnating_rl's ``atari_scores.py``) give Video Pinball a
random score of 0.0 rather than 16256.9.

The human-normalised score of a game is ``100 * (score - random) / (human - random)``:
0 is random play, 100 the human tester.
"""
from __future__ import annotations

import math
import statistics

# game id (cule / ALE snake_case) -> (random score, human score)
RANDOM_AND_HUMAN: dict[str, tuple[float, float]] = {
    "alien": (227.8, 7127.7),
    "amidar": (5.8, 1719.5),
    "assault": (222.4, 742.0),
    "asterix": (210.0, 8503.3),
    "asteroids": (719.1, 47388.7),
    "atlantis": (12850.0, 29028.1),
    "bank_heist": (14.2, 753.1),
    "battle_zone": (2360.0, 37187.5),
    "beam_rider": (363.9, 16926.5),
    "berzerk": (123.7, 2630.4),
    "bowling": (23.1, 160.7),
    "boxing": (0.1, 12.1),
    "breakout": (1.7, 30.5),
    "centipede": (2090.9, 12017.0),
    "chopper_command": (811.0, 7387.8),
    "crazy_climber": (10780.5, 35829.4),
    "defender": (2874.5, 18688.9),
    "demon_attack": (152.1, 1971.0),
    "double_dunk": (-18.6, -16.4),
    "enduro": (0.0, 860.5),
    "fishing_derby": (-91.7, -38.7),
    "freeway": (0.0, 29.6),
    "frostbite": (65.2, 4334.7),
    "gopher": (257.6, 2412.5),
    "gravitar": (173.0, 3351.4),
    "hero": (1027.0, 30826.4),
    "ice_hockey": (-11.2, 0.9),
    "jamesbond": (29.0, 302.8),
    "kangaroo": (52.0, 3035.0),
    "krull": (1598.0, 2665.5),
    "kung_fu_master": (258.5, 22736.3),
    "montezuma_revenge": (0.0, 4753.3),
    "ms_pacman": (307.3, 6951.6),
    "name_this_game": (2292.3, 8049.0),
    "phoenix": (761.4, 7242.6),
    "pitfall": (-229.4, 6463.7),
    "pong": (-20.7, 14.6),
    "private_eye": (24.9, 69571.3),
    "qbert": (163.9, 13455.0),
    "riverraid": (1338.5, 17118.0),
    "road_runner": (11.5, 7845.0),
    "robotank": (2.2, 11.9),
    "seaquest": (68.4, 42054.7),
    "skiing": (-17098.1, -4336.9),
    "solaris": (1236.3, 12326.7),
    "space_invaders": (148.0, 1668.7),
    "star_gunner": (664.0, 10250.0),
    "surround": (-10.0, 6.5),
    "tennis": (-23.8, -8.3),
    "time_pilot": (3568.0, 5229.2),
    "tutankham": (11.4, 167.6),
    "up_n_down": (533.4, 11693.2),
    "venture": (0.0, 1187.5),
    "video_pinball": (16256.9, 17667.9),
    "wizard_of_wor": (563.5, 4756.5),
    "yars_revenge": (3092.9, 54576.9),
    "zaxxon": (32.5, 9173.3),
}



def human_normalised(game: str, score: float) -> float:
    """100 * (score - random) / (human - random) for a game of the table; nan for any other game."""
    if game not in RANDOM_AND_HUMAN:
        return math.nan
    random, human = RANDOM_AND_HUMAN[game]
    return 100.0 * (score - random) / (human - random)


def summary(returns: dict[str, float]) -> dict[str, float]:
    """Log scalars from mean returns per game: ``hns/<game>`` for each game of the table, and ``hns_mean``,
    ``hns_median`` over them. The mean and median stay nan until every such game has a (finite) return, so
    they never average a changing subset of the games."""
    scores = {g: human_normalised(g, r) for g, r in returns.items() if g in RANDOM_AND_HUMAN}
    out = {f"hns/{g}": s for g, s in scores.items()}
    complete = bool(scores) and all(math.isfinite(s) for s in scores.values())
    out["hns_mean"] = statistics.fmean(scores.values()) if complete else math.nan
    out["hns_median"] = statistics.median(scores.values()) if complete else math.nan
    return out


def log_scalars(returns: dict[str, float]) -> dict[str, float]:
    """A multi-task log line from mean returns per game: ``return/<game>``, then summary's."""
    return {**{f"return/{g}": r for g, r in returns.items()}, **summary(returns)}
