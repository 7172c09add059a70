"""The CUDA kernels build ahead of time with the installed nvcc; ptxas's figures go into the test summary.

Skipped where there is no nvcc. `python -m cule.kernels --build pong breakout
--arch sm_90` must write one cubin (both games use the 2K mapper's build) with
its record, named by the build's key; ptxas must report every kernel, the
emulating kernels' stacks at most 1,024 bytes and no spill in any kernel or
the out-of-line functions they call (kernels.cu's register budget,
__maxnreg__, needs nvcc 12.4 or later). With --extended, sm_75 and sm_80
compile too (sm_70 is listed as unsupported by CUDA 13's nvcc), and ptxas
with two threads must give the same machine code as with one.
"""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from cule import _core
from cule.kernels import KernelBuild
from cule.kernels.__main__ import compile_report, nvcc_compile, ptxas_splits
from conftest import BackgroundJob, differing_code, report

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc (the CUDA toolkit)")


def _nvcc_version() -> tuple[int, int]:
    out = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release (\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def _check(rows: list[dict], where: str) -> list[str]:
    kernels = {r["kernel"]: r for r in rows}
    assert set(kernels) == set(_core.kernel_signatures), f"{where}: {sorted(kernels)}"
    lines = []
    for name, r in sorted(kernels.items()):
        lines.append(f"{where} {name}: {r['registers']} registers, spills {r.get('spill_stores', 0)}/"
                     f"{r.get('spill_loads', 0)} B (out-of-line {r['callee_spill_stores']}/{r['callee_spill_loads']}"
                     f" B), stack {r.get('stack', 0)} B")
    if _nvcc_version() >= (12, 4):
        for name, r in kernels.items():
            spilled = [r.get(k, 0) for k in ("spill_stores", "spill_loads", "callee_spill_stores", "callee_spill_loads")]
            assert not any(spilled), f"{where} {name} spills (kernel st/ld, out-of-line st/ld): {spilled}"
    for name in ("cule_run", "cule_reset"):
        assert kernels[name].get("stack", 0) <= 1024, f"{where} {name}: {kernels[name].get('stack')} B of stack"
    return lines


# about 3 minutes on two cores; started with the test run
BUILD_COMMAND = BackgroundJob("nvcc-sm_90", lambda folder: [
    sys.executable, "-m", "cule.kernels", "--build", "pong", "breakout", "--arch", "sm_90",
    "--output-dir", str(folder)])


@BUILD_COMMAND.mark
def test_build_command_writes_the_mappers_cubin_for_sm_90():
    done = BUILD_COMMAND.result()
    assert done.returncode == 0, done.stdout + done.stderr
    folder = done.folder
    build = KernelBuild("2K")
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [build.file_name("sm_90"), build.file_name("sm_90").replace(".cubin", ".json")])
    cubin = folder / build.file_name("sm_90")
    assert cubin.read_bytes()[:4] == b"\x7fELF"
    record = json.loads(cubin.with_suffix(".json").read_text())
    assert record["key"] == build.key("sm_90") and record["arch"] == "sm_90" and record["cart"] == "2K"
    assert record["game"] is None and record["gymnasium"] is None
    # one build alone gets every core as a ptxas thread
    assert record["ptxas_threads"] == ((os.cpu_count() or 1) if ptxas_splits("nvcc") else 1)
    lines = _check(record["kernels"], "sm_90 (2K, any game)")
    assert "1 binaries" in done.stdout and "cule_run" in done.stdout
    assert record["compiler"].startswith("nvcc V")
    report(f"CUDA kernels: the 2K mapper's build for sm_90 ({record['compiler']}, {done.took(record['seconds'])})",
           "\n".join(lines))


@pytest.mark.extended
def test_kernels_compile_for_older_architectures():
    lines = []
    for arch in ("sm_70", "sm_75", "sm_80"):
        rows = compile_report(arch, KernelBuild("2K"))
        if rows and rows[0].get("unsupported"):
            assert arch == "sm_70", f"{arch} should be supported"
            lines.append(f"{arch}: not supported by this nvcc")
            continue
        lines += _check(rows, arch) if arch == "sm_80" else [f"{arch}: compiled"]
    report("CUDA kernels: older architectures (2K mapper's build)", "\n".join(lines))


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


@pytest.mark.extended
def test_ptxas_threads_leave_the_machine_code_as_it_was(tmp_path):
    """--build gives ptxas the cores (--split-compile); the kernels it writes must not change with them."""
    if not ptxas_splits("nvcc"):
        pytest.skip("this toolkit's ptxas has no --split-compile")
    for threads in (1, 2):
        nvcc_compile(KernelBuild("2K"), "sm_90", tmp_path / f"{threads}.cubin", threads=threads)
    differ = differing_code(tmp_path / "1.cubin", tmp_path / "2.cubin")
    assert not differ, f"ptxas with two threads changed {differ}"
