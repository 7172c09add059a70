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
