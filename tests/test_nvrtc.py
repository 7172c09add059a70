"""NVRTC compiles the kernels' source: the CUDA backend's build at first use, wherever no binary was built ahead
of time, and `python -m cule.kernels --build --compiler nvrtc`. No GPU is needed, to PTX or to a cubin.

nvcc's builds passing says nothing about NVRTC: it has no standard library headers (so no offsetof and no
<cstring>), no __builtin_memcpy, and before CUDA 13.5 it compiles a lambda written inside a kernel as host
code. The library is the test extra's nvidia-cuda-nvrtc-cu12 (12.9), the NVRTC that the cuda extra's CuPy
brings, found by cule.kernels.nvrtc as the backend finds it; without one these tests skip.
"""
import json
import sys
import time

import pytest

from cule import _core
from cule.kernels import NVRTC_PARALLEL, KernelBuild, nvrtc
from conftest import BackgroundJob, cubin_code, differing_code, report

pytestmark = pytest.mark.skipif(nvrtc.library() is None, reason="no NVRTC library (pip install nvidia-cuda-nvrtc-cu12)")

# A game's build (the game and step policy compiled in: other code paths) by default, the other mappers with
# --extended, about 20 s each. 2K's build is compiled to a cubin by the build command's test below, with
# --extended: its ptxas is as long as nvcc's build of the same code, which the default run checks against the
# same budget (tests/test_kernels_compile.py), and what NVRTC alone can get wrong, the source, fails above.
BUILDS = [KernelBuild("F8", game="ms_pacman", gymnasium=False)] + [
    pytest.param(KernelBuild(cart), marks=pytest.mark.extended) for cart in _core.mapper_types if cart != "2K"]


@pytest.mark.parametrize("build", BUILDS, ids=lambda b: b.label)
def test_nvrtc_compiles_the_kernels(build):
    started = time.perf_counter()
    try:
        ptx, _ = nvrtc.compile_kernels(build, "compute_90")
    except nvrtc.NvrtcError as error:
        pytest.fail(f"NVRTC could not compile {build.label} ({time.perf_counter() - started:.0f} s):\n"
                    f"{str(error)[:4000]}")
    missing = [k for k in _core.kernel_signatures if f".entry {k}(" not in ptx.decode(errors="replace")]
    assert not missing, f"compiled, but the PTX lacks {missing}"


def test_an_error_names_the_build_and_keeps_nvrtcs_log():
    with pytest.raises(nvrtc.NvrtcError, match="(?s)F8-any-any.*unrecognized option --no-such-option"):
        nvrtc.compile_kernels(KernelBuild("F8"), "compute_90", ("--no-such-option",))


# about 3 minutes on two cores; started with a run that includes the test
BUILD_COMMAND = BackgroundJob("nvrtc-sm_90", lambda folder: [
    sys.executable, "-m", "cule.kernels", "--build", "pong", "--arch", "sm_90", "--compiler", "nvrtc",
    "--output-dir", str(folder)])


@pytest.mark.extended
@BUILD_COMMAND.mark
def test_build_command_compiles_with_nvrtc_what_the_backend_finds():
    """A cubin for sm_90 without the CUDA toolkit, named and recorded as nvcc's builds are, within the
    register budget's limits (no spill, the emulating kernels' stacks at most 1,024 bytes)."""
    done = BUILD_COMMAND.result()
    assert done.returncode == 0, done.stdout + done.stderr
    folder = done.folder
    build = KernelBuild("2K")
    cubin = folder / build.file_name("sm_90")
    assert sorted(p.name for p in folder.iterdir()) == sorted([cubin.name, cubin.with_suffix(".json").name])
    record = json.loads(cubin.with_suffix(".json").read_text())
    assert record["key"] == build.key("sm_90") and record["compiler"] == f"NVRTC {nvrtc.version()}"
    code = cubin_code(cubin)
    assert sorted(n for n in code if n.startswith(".text.")) == sorted(f".text.{k}" for k in _core.kernel_signatures)
    kernels = {r["kernel"]: r for r in record["kernels"]}
    assert set(kernels) == set(_core.kernel_signatures)
    for name, r in kernels.items():
        assert not any(r[k] for k in ("spill_stores", "spill_loads", "callee_spill_stores", "callee_spill_loads")), r
    assert max(kernels["cule_run"]["stack"], kernels["cule_reset"]["stack"]) <= 1024, kernels
    report(f"CUDA kernels: the 2K mapper's build for sm_90 by NVRTC {nvrtc.version()} ({done.took(record['seconds'])})",
           ", ".join(f"{k} {r['registers']} registers / {r['stack']} B" for k, r in sorted(kernels.items())
                     if k in ("cule_run", "cule_reset", "cule_render")))


@pytest.mark.extended
def test_ptxas_threads_leave_nvrtcs_machine_code_as_it_was(tmp_path):
    """The backend's NVRTC_PARALLEL must only spread ptxas over the cores: the same sm_90 code as without."""
    for extra in (NVRTC_PARALLEL, ()):
        (tmp_path / f"{len(extra)}.cubin").write_bytes(nvrtc.compile_kernels(KernelBuild("2K"), "sm_90", extra)[0])
    differ = differing_code(tmp_path / "0.cubin", tmp_path / "1.cubin")
    assert not differ, f"NVRTC with {NVRTC_PARALLEL} changed {differ}"
