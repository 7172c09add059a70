"""The device's side of the core, run on the CPU: the CUDA kernels built by a host compiler with every
host/device switch on the device's side.

The launch shim in ``cule._core`` (``AtariVectorEnv(..., _shim=True)``) runs the kernels' launch code
and their lane-laid state, but compiled as the CPU backend's core is: threaded dispatch, the code map,
the host's TIA tables. The GPU runs other code for the same results (``CULE_DEVICE_CODE`` in
cule/cpp/common.hpp). ``_shim="device"`` runs that code instead, from a library built here with
``-DCULE_DEVICE_CODE=1`` (device_shim.cpp, one per mapper, kept in the user cache folder under a digest
of its sources and flags), so the tests can hold the device's code to the CPU backend's results on
every game without a GPU. Building one mapper takes 10-30 s of one core.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import subprocess
from pathlib import Path

from . import CORE_HEADERS, kernel_source, user_cache_dir

SOURCE = Path(__file__).resolve().parent / "device_shim.cpp"
SHIM_HEADER = Path(__file__).resolve().parent / "shim.hpp"
CXX = os.environ.get("CXX", "g++")
# -O2: with g++ 12 it builds F8's library in 14 s, where -O1 takes 24 s.
# The resize rounds as OpenCV does only without contraction, as in the package's build (CMakeLists.txt).
OPTIONS = ("-std=c++17", "-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-fvisibility-inlines-hidden",
           "-ffp-contract=off", "-DCULE_DEVICE_CODE=1")

_LOADED: dict[str, ctypes._CFuncPtr] = {}  # each mapper's entry point, once loaded


def options(cart: str) -> list[str]:
    """The compile options of mapper `cart`'s library (the include folder is named, not part of the key)."""
    from .. import _core
    if cart not in _core.mapper_types:
        raise ValueError(f"no mapper {cart!r}: one of {' '.join(_core.mapper_types)}")
    return [*OPTIONS, f"-DCULE_CART={_core.mapper_types[cart]}"]


def library_path(cart: str, folder: Path | None = None) -> Path:
    """Where mapper `cart`'s library is, or goes: its name holds a digest of the sources and options."""
    digest = hashlib.sha256(" ".join([CXX, *options(cart)]).encode())
    digest.update(kernel_source().encode())
    for path in (SOURCE, SHIM_HEADER):
        digest.update(path.read_bytes())
    return (folder or user_cache_dir()) / f"cule-device-shim-{cart}-{digest.hexdigest()[:24]}.so"


def build(cart: str, folder: Path | None = None) -> Path:
    """Mapper `cart`'s library, compiled unless a build of these sources and flags is there already."""
    path = library_path(cart, folder)
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + f".{os.getpid()}.part")
    try:
        done = subprocess.run([CXX, *options(cart), f"-I{CORE_HEADERS}", str(SOURCE), "-o", str(partial)],
                              capture_output=True, text=True)
    except FileNotFoundError:
        raise RuntimeError(f"the device shim needs a C++ compiler: {CXX!r} was not found (set CXX)") from None
    if done.returncode != 0:
        partial.unlink(missing_ok=True)
        raise RuntimeError(f"compiling the device shim for {cart} failed:\n{done.stderr[-3000:]}")
    os.replace(partial, path)  # atomic: a parallel build of the same library writes the same bytes
    for older in path.parent.glob(f"cule-device-shim-{cart}-*.so"):  # builds of earlier sources
        if older != path:
            older.unlink(missing_ok=True)
    return path


def launcher(cart: str):
    """A function (kernel, grid, block, args, kinds) for mapper `cart`, as ``_core.shim_launch`` takes
    them after the mapper: it builds the library at first use."""
    if cart not in _LOADED:
        lib = ctypes.CDLL(str(build(cart)))
        entry = lib.cule_device_shim_launch
        entry.restype = ctypes.c_char_p
        entry.argtypes = [ctypes.c_char_p, ctypes.c_uint, ctypes.c_uint, ctypes.POINTER(ctypes.c_uint64),
                          ctypes.POINTER(ctypes.c_uint8), ctypes.c_size_t]
        _LOADED[cart] = entry
    entry = _LOADED[cart]

    def launch(kernel: str, grid: int, block: int, args: list[int], kinds: list[int]) -> None:
        words = (ctypes.c_uint64 * len(args))(*args)
        codes = (ctypes.c_uint8 * len(kinds))(*kinds)
        error = entry(kernel.encode(), grid, block, words, codes, len(args))
        if error is not None:
            raise ValueError(f"device shim, {cart} {kernel}: {error.decode()}")

    return launch
