"""The CUDA kernels' source, the builds the backend asks for, and where prebuilt binaries are looked for.

A build (``KernelBuild``) is kernels.cu compiled for one mapper; a game and a
step policy may be compiled in as well, or left to the batch (the game id and
the vector env's ``gymnasium`` option, read at run time, as the launch shim
does). Its key is a digest of everything that decides the binary: the source
with the core headers it includes, the compile options and the
architecture. NVRTC's cache (CuPy's, keyed on source and options) and the
prebuilt binaries of ``python -m cule.kernels --build`` both hang off it, so
a binary built from other headers, options or for another architecture is
never loaded.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

KERNEL_SOURCE = Path(__file__).resolve().parent / "kernels.cu"
CORE_HEADERS = Path(__file__).resolve().parent.parent / "cpp"
# Folders of prebuilt kernel binaries, searched before the user's cache folder (os.pathsep-separated).
KERNEL_DIR_VARIABLE = "CULE_KERNEL_DIR"


def nvrtc_ptxas_threads(threads: int = 0) -> tuple[str, ...]:
    """NVRTC's option giving its ptxas `threads` threads (0: one per core)."""
    return (f"--ptxas-options=--split-compile={threads}",)


# NVRTC's options beside a build's: its ptxas compiles the kernels side by side, a thread per core. Nearly
# all of a build's time is ptxas on cule_run and cule_reset, each carrying the whole emulator, so this about
# halves a first use, and the machine code is the same bytes as one thread's (tests/test_nvrtc.py). Not in
# the key: nothing in the binary depends on it. (NVRTC's own --split-compile also splits its optimiser, and
# that changes the code.)
NVRTC_PARALLEL = nvrtc_ptxas_threads()


def game_type(game: str) -> str:
    """C++ name of a game's unit, as the core's game list (cule/cpp/ale/games/list.inc) declares it."""
    from .. import _core
    try:
        return _core.game_units[game]
    except KeyError:
        raise ValueError(f"no game unit for {game!r}: see cule.list_games()") from None


@dataclass(frozen=True)
class KernelBuild:
    """What one compile of kernels.cu is for: a mapper (``2K``, ``F8``, ... as mappers.inc names them) and,
    compiled in or left to the batch (None), a game and a step policy (the vector env's `gymnasium` option)."""

    cart: str
    game: str | None = None
    gymnasium: bool | None = None

    def __post_init__(self):
        from .. import _core

        if self.cart not in _core.mapper_types:
            raise ValueError(f"no mapper {self.cart!r}: one of {' '.join(_core.mapper_types)}")

    def defines(self) -> list[str]:
        """The -D options: the mapper always; the game and step policy when they are compiled in."""
        from .. import _core

        defines = [f"-DCULE_CART={_core.mapper_types[self.cart]}"]
        if self.game is not None:
            defines.append(f"-DCULE_GAMES=cule::OneGame<cule::games::{game_type(self.game)}>")
        if self.gymnasium is not None:
            defines.append(f"-DCULE_STEP={_core.step_policies[self.gymnasium]}")
        return defines

    def options(self) -> tuple[str, ...]:
        """The compile options, the same for NVRTC and nvcc (the include folder is named, not part of the key)."""
        return ("-std=c++17", f"-I{CORE_HEADERS}", *self.defines())

    @property
    def label(self) -> str:
        step = "any" if self.gymnasium is None else ("gymnasium" if self.gymnasium else "vector")
        return f"{self.cart}-{self.game or 'any'}-{step}"

    def key(self, arch: str) -> str:
        """The digest a binary of this build for `arch` (``sm_90``) is known by."""
        digest = hashlib.sha256(kernel_source().encode())
        for part in (*self.defines(), "-std=c++17", arch):
            digest.update(b"\0" + part.encode())
        return digest.hexdigest()

    def file_name(self, arch: str) -> str:
        return f"cule-{self.label}-{arch}-{self.key(arch)[:24]}.cubin"


def kernel_source() -> str:
    """kernels.cu headed by a digest of the core headers it includes.

    CuPy keys its disk cache on the source text and options only, so without
    the digest a changed header would load a stale binary from the cache.
    """
    digest = hashlib.sha256()
    for path in sorted(CORE_HEADERS.rglob("*")):
        # host/ holds the Python bindings, which no kernel includes: a change there keeps the binaries
        if path.suffix in (".hpp", ".inc", ".h") and path.relative_to(CORE_HEADERS).parts[0] != "host":
            digest.update(path.relative_to(CORE_HEADERS).as_posix().encode() + b"\0" + path.read_bytes())
    return f"// cule core headers {digest.hexdigest()}\n" + KERNEL_SOURCE.read_text()


def user_cache_dir() -> Path:
    """Where ``--build`` writes by default and the backend looks last: $XDG_CACHE_HOME/cule/kernels
    (~/.cache/cule/kernels)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cule" / "kernels"


def search_dirs() -> list[Path]:
    """The folders searched for prebuilt binaries, in order: $CULE_KERNEL_DIR's, then the user cache folder."""
    named = [Path(p) for p in os.environ.get(KERNEL_DIR_VARIABLE, "").split(os.pathsep) if p]
    return [*named, user_cache_dir()]


def find_binary(build: KernelBuild, arch: str) -> Path | None:
    """The prebuilt binary of `build` for `arch` whose key matches today's source and options, or None.

    A binary is found by its file name, which holds the key: one built from
    other headers or options, or for another architecture, has another name.
    """
    name = build.file_name(arch)
    for folder in search_dirs():
        path = folder / name
        if path.is_file():
            return path
    return None


def save_binary(build: KernelBuild, arch: str, output_dir: Path, cubin: bytes, **record) -> dict:
    """Writes `cubin` under the name the backend looks for, and beside it a .json of the build, its key and
    `record` (the compiler, its seconds, ptxas's figures), each under a temporary name first and then renamed,
    so that a reader (another process compiling the same build) never sees half a file. Returns the .json's
    content, the binary's path under "path"."""
    output_dir.mkdir(parents=True, exist_ok=True)
    path = output_dir / build.file_name(arch)
    content = dict(file=path.name, build=build.label, cart=build.cart, game=build.game, gymnasium=build.gymnasium,
                   arch=arch, key=build.key(arch), **record, built=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    for target, data in ((path.with_suffix(".json"), (json.dumps(content, indent=1) + "\n").encode()), (path, cubin)):
        partial = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.partial")
        partial.write_bytes(data)
        os.replace(partial, target)
    return {**content, "path": path}


_LINE = re.compile(r"Compiling entry function '(\w+)' for '(sm_\d+)'")
_PROPS = re.compile(r"Function properties for (\S+)")
_USED = re.compile(r"Used (\d+) registers")
_SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")


def parse_ptxas(text: str, seconds: float) -> list[dict]:
    """ptxas -v's report (nvcc's output, or NVRTC's log) as one dict per kernel: registers, spill_stores,
    spill_loads, stack (bytes) and the out-of-line functions' largest figures (callee_*), which count towards a
    kernel's spills too."""
    rows, current, props, callees = [], None, None, dict(stack=0, spill_stores=0, spill_loads=0)
    for line in text.splitlines():
        if m := _LINE.search(line):
            current = dict(kernel=m.group(1), arch=m.group(2), seconds=seconds)
            rows.append(current)
        elif m := _PROPS.search(line):
            props = m.group(1)
        elif m := _SPILL.search(line):
            figures = dict(stack=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
            if current is not None and props == current["kernel"]:
                current.update(figures)
            else:
                for k, v in figures.items():
                    callees[k] = max(callees[k], v)
        elif current is not None and (m := _USED.search(line)):
            current["registers"] = int(m.group(1))
    for r in rows:
        r.update({f"callee_{k}": v for k, v in callees.items()})
    return rows
