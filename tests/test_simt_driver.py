"""python -m cule.benchmarks.simt: its C++ driver (simt_driver.cpp, the core built with the trace hooks)
steps a game as the package does, and its replay of the threaded dispatch reads sensibly."""
import shutil

import numpy as np
import pytest
import torch

import cule
from cule.benchmarks import simt

pytestmark = pytest.mark.skipif(shutil.which(simt.CXX) is None, reason=f"no C++ compiler ({simt.CXX})")

ENVS, STEPS, SEED = 3, 6, 5


def fnv1a(data: bytes) -> str:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    # Unoptimised and without forced inlining, the driver compiles in seconds, where -O2 takes minutes.
    return simt.measure("pong", ENVS, STEPS, SEED, tmp_path_factory.mktemp("simt"),
                        options=("-O0", "-DCULE_NO_FORCE_INLINE"))


def test_the_traced_core_emulates_what_the_package_does(report):
    env = cule.AtariVectorEnv("pong", ENVS)
    env.reset(seed=SEED)
    taken = np.asarray(report["action_indices"]).reshape(STEPS, ENVS)
    for t in range(STEPS):
        env.step(torch.from_numpy(taken[t]))
    screens = env.get_screen().cpu().numpy()
    env.close()
    assert report["screen_fnv1a"] == [fnv1a(s.tobytes()) for s in screens]


def test_the_report_counts_what_ran(report):
    kept = ENVS * STEPS - report["reset_steps_left_out"]
    assert kept > 0 and report["frames"] == 4 * kept  # frameskip 4
    assert report["instructions"] > 1000 * report["frames"]  # a frame runs thousands of instructions
    # Regrouping more often keeps more lanes together (pong: 0.035, 0.045, 0.083 of 32 lanes with 3 envs).
    assert report["step"] <= report["frame"] < report["wsync"]
    missed = report["mispredicted"]
    assert set(missed) == {"opcode", "copies_4", "copies_8", "copies_16", "next_2", "next_4", "next_8", "site"}
    # A label per ROM address sees its successor change only where control flow does.
    assert 0 < missed["site"] < missed["copies_4"] <= missed["opcode"] < 1
    # Copies keyed by the next instruction's label: more copies separate more of pong's kernel.
    assert missed["site"] < missed["next_8"] < missed["next_2"] < missed["opcode"]
