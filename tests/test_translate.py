"""cule.translate: a game's translated frame loop against ale-py's vector env, beside the mapper's own loop.

The builds here are the checked kind (every direct jump first checks the pc and bank it assumed, and a wrong
one stops the process) from a short trace: fewer labels compile faster, and the run goes on well past the
trace, so the code map's fallback and the table of labels are exercised too. One game of a 2K image, one of
F8's two switched banks, one of F6's four. With --extended, the five benchmark games with the full trace, as
users get them, and the other F6, F8SC and F6SC games with the short one.
"""
import json
import shutil

import numpy as np
import pytest
import torch
from ale_py.vector_env import AtariVectorEnv as AleVectorEnv

import cule
from cule import translate
from test_vector_env_ale import _first_difference, random_actions

pytestmark = pytest.mark.skipif(shutil.which(translate.CXX) is None, reason=f"needs a C++ compiler ({translate.CXX})")

SHORT = dict(envs=4, steps=10)  # the short trace of the default run: fewer labels, a shorter compile


def _ale_and_translated(game, library, steps, num_envs=4, seed=5, **kwargs):
    """Steps ale-py's vector env, cule's translated env and cule's plain env side by side; returns the first
    difference (step, what) or None, and the translated env's RAM equal to the plain env's at the end."""
    kwargs = dict(num_threads=2, repeat_action_probability=0.25, **kwargs)
    theirs = AleVectorEnv(game, num_envs, **kwargs)
    ours, plain = cule.AtariVectorEnv(game, num_envs, **kwargs), cule.AtariVectorEnv(game, num_envs, **kwargs)
    translate.use_library(ours.blocks[0].emulator, library)
    try:
        first = _first_difference(theirs.reset(seed=seed), ours.reset(seed=seed))
        plain.reset(seed=seed)
        if first:
            return (0, first), None
        rng = np.random.default_rng(seed)
        for t in range(1, steps + 1):
            actions = random_actions(rng, theirs.single_action_space, num_envs)
            theirs_step = theirs.step(actions)
            ours_step = ours.step(torch.from_numpy(actions))
            plain.step(torch.from_numpy(actions))
            done = theirs_step[2] | theirs_step[3]
            what = _first_difference(theirs_step, ours_step, done if "final_obs" in theirs_step[4] else None)
            if what:
                return (t, what), None
        return None, torch.equal(ours.get_ram(), plain.get_ram()) and torch.equal(ours.clone_state(),
                                                                                    plain.clone_state())
    finally:
        theirs.close()


@pytest.mark.parametrize("game", ["pong", "ms_pacman", "crossbow"])
def test_a_checked_translation_equals_ale_py(game):
    library = translate.build(game, checked=True, **SHORT)
    difference, states_equal = _ale_and_translated(game, library, 1200)
    assert difference is None, f"{game}, translated: step {difference[0]}: {difference[1]}"
    assert states_equal, "the translated env's saved state differs from the plain env's"


# Every game of the banked mappers the default run does not take: F6's others, and the SuperChip's (whose
# RAM ports sit in the window, outside the code map, so code there would run through it).
OTHER_BANKED = [g for g in cule.list_games() if cule.load_rom(g).bankswitch in ("F6", "F8SC", "F6SC")
                and g != "crossbow"]


@pytest.mark.extended
@pytest.mark.parametrize("game", OTHER_BANKED)
def test_checked_translations_of_the_other_banked_games_equal_ale_py(game):
    difference, states_equal = _ale_and_translated(game, translate.build(game, checked=True, **SHORT), 600)
    assert difference is None, f"{game}, translated: step {difference[0]}: {difference[1]}"
    assert states_equal


@pytest.mark.extended
@pytest.mark.parametrize("game", ["pong", "breakout", "ms_pacman", "space_invaders", "seaquest"])
def test_the_full_translation_equals_ale_py(game):
    difference, states_equal = _ale_and_translated(game, translate.build(game), 3000, num_envs=8)
    assert difference is None, f"{game}, translated: step {difference[0]}: {difference[1]}"
    assert states_equal


def test_the_env_argument_loads_the_games_build(monkeypatch):
    """translated=True asks cule.translate for the game's build and steps through it (the short checked build
    of the test above, so nothing new is compiled)."""
    asked, original = [], translate.build

    def build(game, **kwargs):
        asked.append(game)
        return original(game, checked=True, **SHORT)

    monkeypatch.setattr(translate, "build", build)
    env = cule.AtariVectorEnv("pong", 2, translated=True)
    plain = cule.AtariVectorEnv("pong", 2)
    assert asked == ["pong"]
    assert torch.equal(env.reset(seed=1)[0], plain.reset(seed=1)[0])
    for _ in range(100):
        a = torch.randint(0, env.single_action_space.n, (2,))
        assert torch.equal(env.step(a)[0], plain.step(a)[0])


def test_the_trace_becomes_labels():
    """Nearly every offset the trace marked gets a label (the rest: JAMs, bytes outside the code window)."""
    for game in ("pong", "ms_pacman"):
        built = json.loads(translate.build(game, checked=True, **SHORT).with_suffix(".json").read_text())
        assert built["traced"] > 100 and built["labels"] > 0.9 * built["traced"], built


def test_refusals_name_what_to_do():
    e0 = next(g for g in cule.list_games() if cule.load_rom(g).bankswitch == "E0")
    with pytest.raises(ValueError, match="E0 mapper; translation takes 2K, 4K, F8, F6, F8SC, F6SC"):
        cule.AtariVectorEnv(e0, 1, translated=True)
    with pytest.raises(ValueError, match="CUDA kernels"):
        cule.AtariVectorEnv("pong", 1, translated=True, _shim=True)
    env = cule.AtariVectorEnv("pong", 1)
    with pytest.raises(ValueError, match="not built from the extension's headers"):
        env.blocks[0].emulator.use_ops(1, [1, 2, 3, 4])
