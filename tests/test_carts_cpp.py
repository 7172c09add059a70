"""The mappers' C++ checks (tests/cpp/test_carts.cpp), built with the machine's
C++ compiler against the core headers: bank switching, SuperChip RAM, the
DPC's fetchers and LFSR, and that every read the bus takes directly from ROM
matches the mapper's peek."""
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMPILER = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")


@pytest.mark.skipif(COMPILER is None, reason="no C++ compiler on this machine")
def test_mapper_checks(tmp_path):
    exe = tmp_path / "test_carts"
    subprocess.run([COMPILER, "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", f"-I{ROOT / 'src/cule/cpp'}",
                    str(ROOT / "tests/cpp/test_carts.cpp"), "-o", str(exe)], check=True)
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "all checks passed" in run.stdout
