"""python -m cule.benchmarks.instructions: its arguments and its arithmetic (valgrind itself is too slow for CI)."""
import subprocess
import sys
from pathlib import Path

import pytest

from cule.benchmarks import instructions


def run(*args):
    return subprocess.run([sys.executable, "-m", "cule.benchmarks.instructions", *args], capture_output=True, text=True)


@pytest.mark.parametrize("args, message", [
    (["--memory", "0"], "positive numbers"),
    (["--memory", "16", "--llc-mb", "24"], "power of two"),
    (["--steps", "8", "3"], "LONG > SHORT"),
    (["--cule-from", "/nonexistent"], "no cule package there"),
    (["--img-size", "0", "84"], "each side in 1..4096"),
])
def test_bad_arguments_say_what_to_change(args, message):
    done = run(*args)
    assert done.returncode == 2
    assert message in done.stderr


def test_memory_counts_are_per_environment_step(monkeypatch, tmp_path):
    # Two runs of 3 and 8 vector steps of 4 environments: 20 environment-steps apart.
    totals = {3: dict(Ir=1000, DLmr=100, DLmw=50), 8: dict(Ir=5000, DLmr=900, DLmw=450)}
    seen = []

    def fake(code, game, steps, out, llc_mb, envs, threads):
        seen.append((game, steps, llc_mb, envs, threads))
        return totals[steps]

    monkeypatch.setattr(instructions, "cachegrind", fake)
    row = instructions.measure_memory("pong", (3, 8), 4, 32, Path(tmp_path))
    assert seen == [("pong", 3, 32, 4, 1), ("pong", 8, 32, 4, 1)]
    assert row["instructions"] == 200
    assert row["ll_read_misses"] == 40 and row["ll_write_misses"] == 20
    assert row["kb_from_memory"] == 60 * 64 / 1024
    table = instructions.memory_table([row])
    assert "| pong | 4 | 40 | 20 | 4 | 0.000M |" in table


def write_cachegrind(path, rows):
    """A cachegrind output file in valgrind's format: rows of (file, function, Ir, Bc, Bcm, Bi, Bim, D1mr, D1mw)."""
    lines = ["desc: I1 cache: 32768 B, 64 B, 8-way associative", "cmd: python", "events: Ir Bc Bcm Bi Bim D1mr D1mw"]
    for file, fn, *counts in rows:
        lines += [f"fl={file}", f"fn={fn}", "12 " + " ".join(map(str, counts))]
    totals = [sum(r[i] for r in rows) for i in range(2, 9)]
    lines.append("summary: " + " ".join(map(str, totals)))
    path.write_text("\n".join(lines) + "\n")


def test_branch_counts_are_per_step_and_split_by_stage(tmp_path):
    core, tia, py = "/src/cule/cpp/chips/cpu6507.hpp", "/src/cule/cpp/chips/tia.hpp", "Objects/ceval.c"
    short, long = tmp_path / "a.out", tmp_path / "b.out"
    write_cachegrind(short, [(core, "cule::cpu::step", 1000, 100, 10, 5, 1, 7, 3),
                             (py, "_PyEval_EvalFrameDefault", 500, 50, 5, 0, 0, 2, 2)])
    write_cachegrind(long, [(core, "cule::cpu::step", 5000, 500, 50, 25, 5, 27, 13),
                            (core, "cule::cpu::step", 1000, 100, 10, 0, 0, 0, 0),  # the same function again
                            (tia, "cule::tia::draw_pixels", 2000, 300, 60, 0, 0, 10, 0),
                            (py, "_PyEval_EvalFrameDefault", 900, 90, 9, 0, 0, 2, 2)])
    f = instructions.branch_figures(short, long, 4)
    assert f["instructions"] == (8900 - 1500) / 4
    assert f["branches"] == (1015 - 155) / 4 and f["mispredicts"] == (134 - 16) / 4
    assert f["d1_misses"] == (54 - 14) / 4
    stages = f["mispredicts_by_stage"]
    assert stages["cpu core (decode, dispatch, ALU)"] == (65 - 11) / 4
    assert stages["tia pixels and collisions"] == 60 / 4 and stages["python and torch"] == 4 / 4
    assert sum(stages.values()) == f["mispredicts"]
    assert f["branches_by_stage"]["tia pixels and collisions"] == 300 / 4
    assert f["indirect_mispredicts"] == (5 - 1) / 4
    assert f["indirect_mispredicts_by_stage"]["cpu core (decode, dispatch, ALU)"] == (5 - 1) / 4
    text = instructions.branches_table([dict(game="pong", cule=f, ale=f)])
    assert "| pong | cule | 0.00M | 0k | 0.0k (13.7%) | 0.0k | 15.9 | 0.0k |" in text
    assert "| cpu core (decode, dispatch, ALU) | 0.0 (0) / 0.0 |" in text


def test_the_handlers_of_the_threaded_dispatch_count_as_the_cpu_core():
    assert instructions.stage_of("/src/cule/cpp/chips/opcodes.inc:cule::console::run_frame<cule::Cart2K>") == \
        "cpu core (decode, dispatch, ALU)"


def test_children_hash_strings_alike():
    """Python's random string hashing moved cachegrind's simulated branch history between two runs of the same
    code; the children fix the seed so that a difference of two runs is the steps' alone."""
    code = "print(hash('pong'), sorted({'a', 'b', 'c'}) == list({'a', 'b', 'c'}))"
    outs = {subprocess.run([sys.executable, "-c", code], env=instructions.child_env(), capture_output=True,
                           text=True, check=True).stdout for _ in range(3)}
    assert len(outs) == 1


def test_cule_from_imports_the_other_build(monkeypatch, tmp_path):
    """--cule-from: cule's child imports the package in that folder, not the installed (editable) one."""
    (tmp_path / "cule").mkdir()
    (tmp_path / "cule" / "__init__.py").write_text("WHERE = 'other build'\n")
    monkeypatch.setattr(instructions, "CULE_FROM", str(tmp_path))
    prologue = instructions.CULE_CHILD.split("import numpy")[0]
    done = subprocess.run([sys.executable, "-c", prologue + "import cule; print(cule.WHERE, cule.__file__)"],
                          env=instructions.child_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("other build " + str(tmp_path))
    monkeypatch.setattr(instructions, "CULE_FROM", None)
    done = subprocess.run([sys.executable, "-c", prologue + "import cule; print(hasattr(cule, 'WHERE'))"],
                          env=instructions.child_env(), capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize("side, shown", [("CULE_CHILD", "tuple(env.single_observation_space.shape)"),
                                          ("ALE_CHILD", "tuple(stack.shape)")])
def test_both_children_step_at_the_size_asked(monkeypatch, side, shown):
    """--img-size reaches cule's and ALE's child alike (run here without valgrind, for two steps)."""
    monkeypatch.setattr(instructions, "IMG_SIZE", (224, 200))
    code = getattr(instructions, side) + f"\nprint({shown})"
    done = subprocess.run([sys.executable, "-c", code, "pong", "2"], env=instructions.child_env(),
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(4, 224, 200)"
