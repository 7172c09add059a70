"""The CUDA kernels compile with the installed nvcc; ptxas's figures go into the test summary.

Skipped where there is no nvcc. sm_70 is listed as unsupported by CUDA 13's
nvcc rather than compiled; sm_75, sm_80 and sm_90 must compile, and on sm_80
and sm_90 neither the kernels nor the out-of-line functions they call may
spill (kernels.cu's register budget, __maxnreg__, needs nvcc 12.4 or later).
"""
import re
import shutil
import subprocess

import pytest

from cule import _core
from cule.kernels.__main__ import compile_report
from conftest import report

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc (the CUDA toolkit)")


def _nvcc_version() -> tuple[int, int]:
    out = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release (\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def test_kernels_compile_for_each_architecture():
    lines = []
    for arch in ("sm_70", "sm_75", "sm_80", "sm_90"):
        rows = compile_report(arch, "2K", "pong")
        if rows and rows[0].get("unsupported"):
            assert arch == "sm_70", f"{arch} should be supported"
            lines.append(f"{arch}: not supported by this nvcc")
            continue
        kernels = {r["kernel"]: r for r in rows}
        assert set(kernels) == set(_core.kernel_names), f"{arch}: {sorted(kernels)}"
        for name, r in sorted(kernels.items()):
            lines.append(f"{arch} {name}: {r['registers']} registers, spills {r.get('spill_stores', 0)}/"
                         f"{r.get('spill_loads', 0)} B, stack {r.get('stack', 0)} B ({r['seconds']:.0f} s)")
        if arch in ("sm_80", "sm_90") and _nvcc_version() >= (12, 4):
            for name, r in kernels.items():
                spilled = [r.get(k, 0) for k in ("spill_stores", "spill_loads", "callee_spill_stores",
                                                 "callee_spill_loads")]
                assert not any(spilled), f"{arch} {name} spills (kernel st/ld, callees st/ld): {spilled}"
    report("CUDA kernels: nvcc/ptxas per architecture (mapper 2K, pong)", "\n".join(lines))


def test_kernel_source_changes_with_any_core_header(tmp_path, monkeypatch):
    """CuPy's cache is keyed on the source text: a header edit must change that text."""
    import cule.kernels as kernels

    copy = tmp_path / "cpp"
    shutil.copytree(kernels.CORE_HEADERS, copy, ignore=shutil.ignore_patterns("*.cpp"))
    monkeypatch.setattr(kernels, "CORE_HEADERS", copy)
    before = kernels.kernel_source()
    assert before.endswith(kernels.KERNEL_SOURCE.read_text())
    for header in (copy / "chips" / "tia.hpp", copy / "ale" / "games" / "list.inc"):
        original = header.read_text()
        header.write_text(original + "\n// edited\n")
        assert kernels.kernel_source() != before, header.name
        header.write_text(original)
        assert kernels.kernel_source() == before
