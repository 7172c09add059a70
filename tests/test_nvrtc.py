"""NVRTC compiles the kernels' source: the CUDA backend's build at first use, wherever no binary was built ahead
of time (python -m cule.kernels --build). No GPU is needed to compile to PTX.

nvcc's builds passing says nothing about NVRTC: it has no standard library headers (so no offsetof and no
<cstring>), no __builtin_memcpy, and before CUDA 13.5 it compiles a lambda written inside a kernel as host
code. The library is the test extra's nvidia-cuda-nvrtc-cu12 (12.9), the NVRTC that the cuda extra's CuPy
brings; without one these tests skip.
"""
import ctypes
import glob
import os
import time

import pytest

from cule import _core
from cule.kernels import NVRTC_PARALLEL, KernelBuild, kernel_source
from conftest import cubin_code


def _nvrtc_folders() -> list[str]:
    """Folders that may hold libnvrtc: the NVIDIA wheels' (CUDA 12's nvidia/cuda_nvrtc/lib, CUDA 13's
    nvidia/cu13/lib), then $CUDA_PATH's."""
    folders = []
    try:
        import nvidia

        for base in nvidia.__path__:
            folders += [os.path.join(base, "cuda_nvrtc", "lib"), os.path.join(base, "cu13", "lib")]
    except ImportError:
        pass
    if os.environ.get("CUDA_PATH"):
        folders.append(os.path.join(os.environ["CUDA_PATH"], "lib64"))
    return folders


def _load_nvrtc():
    for folder in _nvrtc_folders():
        libraries = sorted(p for p in glob.glob(os.path.join(folder, "libnvrtc.so*")) if ".alt." not in p)
        if not libraries:
            continue
        # NVRTC opens its builtins library by name; one loaded first (where the wheel ships it apart) is found
        for builtins in glob.glob(os.path.join(folder, "libnvrtc-builtins.so*")):
            if ".alt." not in builtins:
                ctypes.CDLL(builtins, mode=ctypes.RTLD_GLOBAL)
        return ctypes.CDLL(libraries[0])
    return None


NVRTC = _load_nvrtc()
pytestmark = pytest.mark.skipif(NVRTC is None, reason="no NVRTC library (pip install nvidia-cuda-nvrtc-cu12)")


def nvrtc_compile(build: KernelBuild, arch: str = "compute_90", extra=NVRTC_PARALLEL) -> tuple[int, str, bytes]:
    """NVRTC's result code, log and output for kernels.cu with `build`'s options and the backend's `extra`
    ones: PTX for a compute_ `arch` (a virtual one), a cubin for an sm_ one."""
    program = ctypes.c_void_p()
    assert NVRTC.nvrtcCreateProgram(ctypes.byref(program), kernel_source().encode(), b"kernels.cu", 0, None,
                                    None) == 0
    try:
        options = [o.encode() for o in (*build.options(), *extra, f"--gpu-architecture={arch}")]
        result = NVRTC.nvrtcCompileProgram(program, len(options), (ctypes.c_char_p * len(options))(*options))
        size = ctypes.c_size_t()
        NVRTC.nvrtcGetProgramLogSize(program, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        NVRTC.nvrtcGetProgramLog(program, log)
        output, kind = b"", "PTX" if arch.startswith("compute_") else "CUBIN"
        if result == 0:
            getattr(NVRTC, f"nvrtcGet{kind}Size")(program, ctypes.byref(size))
            buffer = ctypes.create_string_buffer(size.value)
            getattr(NVRTC, f"nvrtcGet{kind}")(program, buffer)
            output = buffer.raw
        if kind == "PTX" and result == 0:  # the PTX holds every kernel the backend loads
            missing = [k for k in ("cule_run", "cule_render", "cule_reset", "cule_gather")
                       if f".entry {k}(" not in output.decode(errors="replace")]
            if missing:
                return -1, f"compiled, but the PTX lacks {missing}", output
        return result, log.value.decode(errors="replace"), output
    finally:
        NVRTC.nvrtcDestroyProgram(ctypes.byref(program))


# Two builds by default (a mapper's, and one with a game and the step policy compiled in, whose code paths
# differ); every mapper with --extended. About 20 s each.
BUILDS = [KernelBuild("2K"), KernelBuild("F8", game="ms_pacman", gymnasium=False)] + [
    pytest.param(KernelBuild(cart), marks=pytest.mark.extended) for cart in _core.mapper_types if cart != "2K"]


@pytest.mark.parametrize("build", BUILDS, ids=lambda b: b.label)
def test_nvrtc_compiles_the_kernels(build):
    started = time.perf_counter()
    result, log, _ = nvrtc_compile(build)
    assert result == 0, f"NVRTC could not compile {build.label} ({time.perf_counter() - started:.0f} s):\n{log[:4000]}"


@pytest.mark.extended
def test_ptxas_threads_leave_nvrtcs_machine_code_as_it_was(tmp_path):
    """The backend's NVRTC_PARALLEL must only spread ptxas over the cores: the same sm_90 code as without."""
    cubins = {}
    for extra in (NVRTC_PARALLEL, ()):
        result, log, cubins[extra] = nvrtc_compile(KernelBuild("2K"), "sm_90", extra)
        assert result == 0, log[:4000]
        (tmp_path / f"{len(extra)}.cubin").write_bytes(cubins[extra])
    one, many = cubin_code(tmp_path / "0.cubin"), cubin_code(tmp_path / "1.cubin")
    assert sorted(n for n in one if n.startswith(".text.")) == sorted(f".text.{k}" for k in _core.kernel_signatures)
    differ = [name for name in one.keys() | many.keys() if one.get(name) != many.get(name)]
    assert not differ, f"NVRTC with {NVRTC_PARALLEL} changed {differ}"
