"""Klaus Dormann's 6502 functional test must reach its success trap at $3469."""
import numpy as np
import pytest

from conftest import DATA, report

core = pytest.importorskip("cule._core")

SUCCESS = 0x3469


def test_dormann_functional():
    image = np.fromfile(DATA / "6502" / "dormann" / "6502_functional_test.bin", dtype=np.uint8)
    assert image.size == 65536
    pc, instructions, cycles, trapped, jammed = core.cpu_run_flat(image, 0x0400, 200_000_000)
    report("6502 Dormann functional test",
           f"trapped at ${pc:04X} after {instructions:,} instructions, {cycles:,} cycles "
           f"({'success' if pc == SUCCESS else 'FAILED: look the address up in 6502_functional_test.lst.gz'})")
    assert trapped and not jammed
    assert pc == SUCCESS, f"trapped at ${pc:04X}, not the success address ${SUCCESS:04X}"
