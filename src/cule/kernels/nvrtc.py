"""NVRTC, CUDA's runtime compiler, called through ctypes: the kernels compiled into a cubin for one GPU
architecture with neither the CUDA toolkit nor a GPU.

The CUDA backend uses it at first use where no binary was built ahead of time, and keeps what it compiles in
the user cache folder under the name ``python -m cule.kernels --build`` gives it, so a later run finds it
like any prebuilt binary; ``--build --compiler nvrtc`` builds the same way on a machine without nvcc. The
library is the one the cuda extra installs (the nvidia-cuda-nvrtc wheel: nvidia/cuda_nvrtc/lib for CUDA 12,
nvidia/cu13/lib for CUDA 13), else $CUDA_PATH's, else the system's. ctypes lets go of the GIL during a
call, so compiles in threads run side by side.
"""
from __future__ import annotations

import ctypes
import functools
import glob
import os
import time
from pathlib import Path

from . import NVRTC_PARALLEL, KernelBuild, kernel_source, nvrtc_ptxas_threads, parse_ptxas, save_binary


class NvrtcError(RuntimeError):
    """NVRTC refused an option or the source; the message holds its log."""


def _folders() -> list[str]:
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


@functools.lru_cache(maxsize=None)
def library() -> ctypes.CDLL | None:
    """The NVRTC library, or None where none is installed."""
    for folder in _folders():
        found = sorted(p for p in glob.glob(os.path.join(folder, "libnvrtc.so*")) if ".alt." not in p)
        if found:
            # NVRTC opens its builtins library by name; where a wheel ships it apart, loading it first finds it
            for builtins in glob.glob(os.path.join(folder, "libnvrtc-builtins.so*")):
                if ".alt." not in builtins:
                    ctypes.CDLL(builtins, mode=ctypes.RTLD_GLOBAL)
            return ctypes.CDLL(found[0])
    for name in ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            pass
    return None


def version() -> str:
    """NVRTC's version, "12.9"."""
    major, minor = ctypes.c_int(), ctypes.c_int()
    _check(library().nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
    return f"{major.value}.{minor.value}"


def supported_archs() -> list[str]:
    """The architectures NVRTC compiles machine code for, as nvcc names them ("sm_90"). NvrtcError where this
    NVRTC is older than the call that lists them (CUDA 11.2)."""
    nvrtc, count = library(), ctypes.c_int()
    if not hasattr(nvrtc, "nvrtcGetSupportedArchs"):
        raise NvrtcError(f"NVRTC {version()} cannot list its architectures (nvrtcGetSupportedArchs, CUDA 11.2)")
    _check(nvrtc.nvrtcGetNumSupportedArchs(ctypes.byref(count)), "nvrtcGetNumSupportedArchs")
    archs = (ctypes.c_int * count.value)()
    _check(nvrtc.nvrtcGetSupportedArchs(archs), "nvrtcGetSupportedArchs")
    return [f"sm_{a}" for a in archs]


def _check(result: int, call: str, log: str = "") -> None:
    if result != 0:
        nvrtc = library()
        nvrtc.nvrtcGetErrorString.restype = ctypes.c_char_p
        raise NvrtcError(f"{call}: {nvrtc.nvrtcGetErrorString(result).decode()}" + (f"\n{log}" if log else ""))


def compile_kernels(build: KernelBuild, arch: str, extra=NVRTC_PARALLEL) -> tuple[bytes, str]:
    """kernels.cu with `build`'s options and `extra`: PTX for a virtual architecture ("compute_90"), a cubin
    for a real one ("sm_90"). Returns (output, NVRTC's log, which holds ptxas -v's report of a cubin)."""
    nvrtc, program = library(), ctypes.c_void_p()
    _check(nvrtc.nvrtcCreateProgram(ctypes.byref(program), kernel_source().encode(), b"kernels.cu", 0, None, None),
           "nvrtcCreateProgram")
    try:
        cubin = arch.startswith("sm_")
        options = [o.encode() for o in (*build.options(), *extra, f"--gpu-architecture={arch}",
                                        *(["--ptxas-options=-v"] if cubin else []))]
        result = nvrtc.nvrtcCompileProgram(program, len(options), (ctypes.c_char_p * len(options))(*options))
        size = ctypes.c_size_t()
        _check(nvrtc.nvrtcGetProgramLogSize(program, ctypes.byref(size)), "nvrtcGetProgramLogSize")
        log = ctypes.create_string_buffer(size.value)
        _check(nvrtc.nvrtcGetProgramLog(program, log), "nvrtcGetProgramLog")
        log = log.value.decode(errors="replace")
        _check(result, f"NVRTC could not compile the {build.label} kernels for {arch}", log)
        kind = "CUBIN" if cubin else "PTX"
        _check(getattr(nvrtc, f"nvrtcGet{kind}Size")(program, ctypes.byref(size)), f"nvrtcGet{kind}Size")
        output = ctypes.create_string_buffer(size.value)
        _check(getattr(nvrtc, f"nvrtcGet{kind}")(program, output), f"nvrtcGet{kind}")
        return output.raw, log
    finally:
        nvrtc.nvrtcDestroyProgram(ctypes.byref(program))


def build_binary(build: KernelBuild, arch: str, output_dir: Path, threads: int = 0) -> dict:
    """Compiles `build` for `arch` (an "sm_" one) into output_dir as --build names it, with its .json, ptxas
    on `threads` threads (0: a thread per core); returns the .json's content, its path under "path"."""
    started = time.perf_counter()
    try:
        cubin, log = compile_kernels(build, arch, nvrtc_ptxas_threads(threads))
    except NvrtcError as error:  # an NVRTC older than the option: ptxas on one thread
        if "unrecognized option --ptxas-options" not in str(error):
            raise
        cubin, log = compile_kernels(build, arch, ())
        threads = 1
    seconds = time.perf_counter() - started
    return save_binary(build, arch, output_dir, cubin, compiler=f"NVRTC {version()}", seconds=round(seconds, 1),
                       ptxas_threads=threads or os.cpu_count() or 1, kernels=parse_ptxas(log, seconds))
