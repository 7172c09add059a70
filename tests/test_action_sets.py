"""Action sets of all 104 games against ale-py: getMinimalActionSet (the default) and getLegalActionSet
(full_action_space=True), in AtariVectorEnv and in cule.make, as ale-py's vector env and gymnasium give them;
and every other game fact of cule/data/games.json (modes, default mode, difficulties)."""
import numpy as np
import pytest

import cule

ale_py = pytest.importorskip("ale_py")


@pytest.fixture(scope="module")
def ale_action_sets():
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    sets = {}
    for game in cule.list_games():
        ale.loadROM(ale_py.roms.get_rom_path(game))
        sets[game] = ([int(a.value) for a in ale.getMinimalActionSet()], [int(a.value) for a in ale.getLegalActionSet()],
                      [int(m) for m in ale.getAvailableModes()], [int(d) for d in ale.getAvailableDifficulties()])
    return sets


def test_vector_env_action_sets_match_ale(ale_action_sets):
    wrong = []
    for game, (minimal, legal, _, _) in ale_action_sets.items():
        for full, expected in ((False, minimal), (True, legal)):
            env = cule.AtariVectorEnv(game, 1, full_action_space=full)
            got = env.get_action_set().tolist()
            if got != expected or env.single_action_space.n != len(expected):
                wrong.append((game, full, got, expected))
            env.close()
    assert not wrong
    # the games whose legal set is not all 18 actions are covered by the comparison above
    assert {g for g, (_, legal, _, _) in ale_action_sets.items() if len(legal) != 18} == {"skiing", "lost_luggage"}


def test_game_facts_match_ale(ale_action_sets):
    """cule/data/games.json, the one source of per-game facts on the Python side, against ale-py: the modes and
    difficulties a game offers, and a default mode among them."""
    from cule.games import game_info

    wrong = []
    for game, (minimal, _, modes, difficulties) in ale_action_sets.items():
        info = game_info(game)
        got = (list(info["modes"]), list(info["difficulties"]), list(info["minimal_actions"]))
        if got != (modes, difficulties, minimal) or info["default_mode"] not in modes:
            wrong.append((game, got, (modes, difficulties, minimal), info["default_mode"]))
    assert not wrong


@pytest.mark.parametrize("game, gym_id", [("skiing", "ALE/Skiing-v5"), ("lost_luggage", "ALE/LostLuggage-v5"),
                                           ("pong", "ALE/Pong-v5")])
def test_make_action_space_matches_gymnasium(game, gym_id, ale_action_sets):
    import gymnasium

    gymnasium.register_envs(ale_py)
    for full in (False, True):
        ours = cule.make(gym_id, 2, full_action_space=full)
        theirs = gymnasium.make(gym_id, full_action_space=full)
        assert ours.single_action_space == theirs.action_space
        assert ours.get_action_set().tolist() == [int(a.value) for a in theirs.unwrapped._action_set]
        ours.close()
        theirs.close()


def test_vector_env_matches_ale_vector_env_action_space():
    from ale_py.vector_env import AtariVectorEnv

    for game in ("skiing", "pong"):
        for full in (False, True):
            theirs = AtariVectorEnv(game, num_envs=1, full_action_space=full)
            ours = cule.AtariVectorEnv(game, 1, full_action_space=full)
            assert ours.single_action_space == theirs.single_action_space
            theirs.close()
            ours.close()
