"""The core's C++ checks, built with the machine's C++ compiler against the
core headers and run:

  test_carts.cpp:    the mappers: bank switching, SuperChip RAM, the DPC's
                     fetchers and LFSR, and that every read the bus takes
                     directly from ROM matches the mapper's peek;
  test_tia_bits.cpp: the TIA's object bitsets against a per-pixel reading of
                     the NUSIZ copies, widths and the wrap at pixel 160."""
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMPILER = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")


@pytest.mark.skipif(COMPILER is None, reason="no C++ compiler on this machine")
@pytest.mark.parametrize("source", ["test_carts.cpp", "test_tia_bits.cpp"])
def test_cpp_checks(tmp_path, source):
    exe = tmp_path / Path(source).stem
    subprocess.run([COMPILER, "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", f"-I{ROOT / 'src/cule/cpp'}",
                    str(ROOT / "tests/cpp" / source), "-o", str(exe)], check=True)
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "all checks passed" in run.stdout
