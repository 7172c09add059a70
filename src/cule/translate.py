"""python -m cule.translate GAME...: a game's own CPU frame loop, compiled on this machine (docs/translation.md).

The host's threaded loop ends every instruction in one indirect jump per
opcode, through the code map. Where a game sends the same opcode to many
different successors, the processor's predictor guesses that jump wrong often:
on pong it is half of the emulator's mispredicted branches. A translated loop
adds a label for each ROM byte the game was seen to run. Each such label runs
its instruction (the code map's entry for that byte: an opcode, or a direct
TIA store) and then jumps straight to the next instruction's label, or, after a
branch or a jump, compares the pc with the one or two targets it can have. RTS,
RTI, BRK, JMP indirect, and anything the trace did not see look the address up
in a table of labels, then fall back to the code map. On bank-switched images
the labels are per bank, and a jump after an instruction that might switch
banks first checks that the bank it assumes is still in place.

The labels come from a trace: the game is compiled once with a hook that marks
the image offset of every instruction it runs, and stepped with random actions
(TRACE_ENVS environments for TRACE_STEPS steps). Then the labels are generated
and the game's core is compiled with them, with the system's C++ compiler
($CXX, else g++), into a library kept in the user cache folder
($XDG_CACHE_HOME/cule/translated, ~/.cache/cule/translated) under a digest of
everything it was built from; the vector env loads it in place of the mapper's
core with ``AtariVectorEnv(game, ..., translated=True)``. It runs the same
instructions in the same order as the mapper's core: the observations, rewards
and saved states are the same, bit for bit.

A compile takes minutes (its time grows with the labels: pong's 700 about
1.5 minutes on one core, ms_pacman's 2,350 about 11), so it is opt-in and built
ahead of time here:

    python -m cule.translate pong breakout ms_pacman space_invaders seaquest

Only the CPU backend uses it; the mappers it takes are TRANSLATABLE.
"""
from __future__ import annotations

import argparse
import ctypes
import fcntl
import hashlib
import inspect
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

# The mappers whose translated loops were checked against ale-py (tests/test_translate.py): images of one
# 4K window (2K, 4K) and 4K banks switched by hotspots (F8, F6), with SuperChip RAM (F8SC, F6SC: its ports
# are outside the code map, so code run from it goes through the code map's dispatch).
TRANSLATABLE = ("2K", "4K", "F8", "F6", "F8SC", "F6SC")
TRACE_ENVS, TRACE_STEPS, TRACE_SEED = 16, 2000, 0
CXX = os.environ.get("CXX", "g++")
FLAGS = ("-std=c++17", "-g1", "-fPIC", "-shared", "-fvisibility=hidden")  # -g1: as the extension
# The extension's optimisation; the checked builds, which test the labels rather than their speed, take -O0:
# g++'s time on one function of thousands of labels grows fast with optimisation (ms_pacman's 1,268 checked
# labels: over 4 minutes at -O1, 2 at -O0).
OPTIMISE, CHECKED_OPTIMISE = "-O3", "-O0"
UNIT = Path(__file__).resolve().parent / "cpp" / "host" / "translated_unit.cpp"
LAYOUT_WORDS = 4  # cule_translated_layout's



def _length(op: int) -> int:
    """The 6507's instruction length of opcode `op`, in bytes."""
    if op in (0x00, 0x40, 0x60):  # BRK, RTI, RTS
        return 1
    if op == 0x20:  # JSR
        return 3
    cc, bbb = op & 3, (op >> 2) & 7
    if cc in (1, 3):
        return (2, 2, 2, 3, 2, 2, 3, 3)[bbb]
    if bbb == 0:
        return 2 if cc == 0 or op in (0x82, 0xA2, 0xC2, 0xE2) else 1
    return (0, 2, 1, 3, 1 if cc == 2 else 2, 2, 1, 3)[bbb]


# The JAMs end the frame through the code map's labels; they get none of their own.
_JAMS = {op for op in range(256) if (op & 0x1F) == 0x12 or op in (0x02, 0x22, 0x42, 0x62)}
_BRANCHES = {op for op in range(256) if (op & 0x1F) == 0x10}
_JUMPS = (0x4C, 0x20)  # JMP abs, JSR: one target
_RETURNS = (0x60, 0x40, 0x6C, 0x00)  # RTS, RTI, JMP ind, BRK: the table


def _may_switch_banks(op: int) -> bool:
    """Whether `op` may read or write a cartridge address besides its own bytes (an absolute, indexed or
    indirect operand, a hotspot among them): a bank-switched image's next label is checked after it."""
    cc, bbb = op & 3, (op >> 2) & 7
    if cc in (1, 3):
        return bbb in (0, 3, 4, 6, 7)
    return bbb in (3, 7)


def log_warning(line: str) -> None:
    logging.getLogger("cule").warning("cule.translate: %s", line)


def cache_dir() -> Path:
    """$XDG_CACHE_HOME/cule/translated (~/.cache/cule/translated), beside the kernels' user cache folder."""
    from .kernels import user_cache_dir

    return user_cache_dir().parent / "translated"


def _digest(*parts) -> str:
    """A digest of what a build is made from: the core's headers, the unit, the trace's, the generator's and
    the compile command's code, the compiler's version and `parts` (the rest of this module, its help and
    messages, leaves builds valid)."""
    from .kernels import CORE_HEADERS

    h = hashlib.sha256()
    for path in sorted([UNIT, *CORE_HEADERS.rglob("*.hpp"), *CORE_HEADERS.rglob("*.inc")]):
        h.update(path.read_bytes())
    for code in (trace, generate, _length, _may_switch_banks, _compile):
        h.update(inspect.getsource(code).encode())
    h.update(repr((FLAGS, TRACE_SEED, sorted(_JAMS), sorted(_BRANCHES), _JUMPS, _RETURNS)).encode())
    try:
        h.update(subprocess.run([CXX, "--version"], capture_output=True, text=True).stdout.encode())
    except OSError:
        raise RuntimeError(f"no C++ compiler: {CXX!r} was not found; install g++ (or set $CXX) to translate "
                           "a game") from None
    for part in parts:
        h.update(repr(part).encode())
    return h.hexdigest()[:16]


def _compile(game: str, cart: str, out: Path, defines: list[str], include: Path | None = None,
             optimise: str = OPTIMISE) -> float:
    """Compiles the game's unit into the library `out`; returns the seconds it took."""
    from .kernels import CORE_HEADERS, game_type

    command = [CXX, optimise, *FLAGS, f"-I{CORE_HEADERS}", *([f"-I{include}"] if include else []),
               f"-DCULE_UNIT_CART=cule::Cart{cart}", f"-DCULE_UNIT_GAME={game_type(game)}",
               *(f"-D{d}" for d in defines), str(UNIT), "-o", str(out)]
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"compiling {game}'s core failed ({' '.join(command)}):\n{done.stderr[-3000:]}")
    return time.perf_counter() - t0


_LOADED: dict[Path, ctypes.CDLL] = {}  # libraries stay loaded: emulators point into them


def _library(path: Path) -> ctypes.CDLL:
    if path not in _LOADED:
        _LOADED[path] = ctypes.CDLL(str(path))
    return _LOADED[path]


def use_library(emulator, path: Path) -> None:
    """Steps `emulator` (a cule._core.Emulator of the game it was built for) through the core in `path`."""
    lib = _library(path)
    lib.cule_translated_ops.restype = ctypes.c_void_p
    layout = (ctypes.c_uint64 * LAYOUT_WORDS)()
    lib.cule_translated_layout(layout)
    emulator.use_ops(lib.cule_translated_ops(), list(layout))


def _rom_and_cart(game: str):
    from .roms import load_rom

    rom = load_rom(game)
    if rom.game is None:
        raise ValueError(f"{game!r} is none of ALE's games: only a known game's core can be translated")
    if rom.bankswitch not in TRANSLATABLE:
        raise ValueError(f"{rom.game} uses the {rom.bankswitch} mapper; translation takes {', '.join(TRANSLATABLE)} "
                         "(AtariVectorEnv runs it with translated=False)")
    return rom


def trace(game: str, envs: int = TRACE_ENVS, steps: int = TRACE_STEPS, seed: int = TRACE_SEED,
          log=print) -> np.ndarray:
    """The image offsets `game` runs instructions at (bool per byte), over `steps` steps of `envs` environments
    with random actions from its minimal action set, under the vector env's default settings (its block of
    environments, stepped as the CPU backend steps it)."""
    from . import _core
    from .blocks import GameBlock

    rom = _rom_and_cart(game)
    key = _digest("trace", rom.md5, OPTIMISE)
    library = cache_dir() / f"trace-{rom.game}-{key}.so"
    log = log or (lambda line: None)
    if not library.is_file():
        cache_dir().mkdir(parents=True, exist_ok=True)
        log(f"compiling {rom.game}'s core with the trace hook ({CXX}; about a minute)")
        partial = library.with_suffix(f".{os.getpid()}.tmp")
        _compile(rom.game, rom.bankswitch, partial, ["CULE_TRANSLATION_TRACE"])
        partial.replace(library)
    settings = {name: default for name, (default, _) in _core.vector_options.items()}
    block = GameBlock(rom.game, envs, mode=None, difficulty=None, full_action_space=False, action_set=None,
                      repeat_action_probability=0.0, emulator_limit=0, img_height=settings["img_height"],
                      img_width=settings["img_width"], settings=settings, key={})
    use_library(block.emulator, library)
    lib = _library(library)
    marks = np.zeros(len(rom.data), np.uint8)
    lib.cule_trace_take(marks.ctypes.data_as(ctypes.c_void_p), ctypes.c_uint32(len(marks)))  # clear
    ids = np.arange(envs, dtype=np.int32)
    block.emulator.vector_run(ids, np.zeros(envs, np.int32), np.arange(envs, dtype=np.int64) + seed, True, 0)
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    for t in range(steps):
        block.emulator.vector_run(ids, block.action_set[rng.integers(0, len(block.action_set), size=envs)], None,
                                  False, 0)
        if (t + 1) % 500 == 0:
            log(f"  traced {t + 1}/{steps} steps, {time.perf_counter() - t0:.0f} s")
    lib.cule_trace_take(marks.ctypes.data_as(ctypes.c_void_p), ctypes.c_uint32(len(marks)))
    return marks.astype(bool)


def generate(image: bytes, cart: str, code_maps: np.ndarray, executed: np.ndarray,
             checked: bool = False) -> tuple[str, str, int]:
    """The labels (translated_labels.inc), the table (translated_table.inc) and how many labels, for an image
    of mapper `cart` whose code maps are `code_maps` (cule._core.Emulator.code_maps) and whose run offsets are
    `executed`."""
    size = {"2K": 2048, "4K": 4096}.get(cart, len(image))
    banked = size > 4096
    mask = 0xFFF if banked else size - 1
    blocks = max(1, size // 4096)
    per_block = len(code_maps) // blocks

    def entry(key: int) -> int:
        return int(code_maps[(key >> 12 if banked else 0) * per_block + (0x1000 | (key & mask))])

    entries = {k: entry(k) for k in np.flatnonzero(executed[:size]).tolist()}
    labels = {k: e for k, e in entries.items() if e != 256 and not (e < 256 and e in _JAMS)}
    check = (lambda key: f"CULE_TR_CHECK({key}) ") if checked else (lambda key: "")
    out = []
    for key, e in labels.items():
        op = image[key]
        base, off = key & ~mask, key & mask
        bank = f"CULE_TR_IN_BANK({key >> 12})" if banked else ""
        body = [f"tr_{key:04X}: {{  // {off:03X}{f' in bank {key >> 12}' if banked else ''}: {op:02X}",
                "  c.pc = (uint16_t)(c.pc + 1);", f"  run_entry<{e}, Cart>(c, bus);", "  CULE_INSTRUCTION_DONE();",
                "  if (!bus.next_instruction()) goto scanline_done;"]
        targets = []
        if op in _BRANCHES:
            rel = image[base + ((off + 1) & mask)]
            targets = [off + 2 + (rel - 256 if rel >= 128 else rel), off + 2]
        elif op in _JUMPS:
            word = image[base + ((off + 1) & mask)] | image[base + ((off + 2) & mask)] << 8
            targets = [word & mask] if word & 0x1000 else []
        elif op not in _RETURNS:
            after = off + _length(op)
            if after <= mask and base + after in labels:
                go = f"{check(base + after)}goto tr_{base + after:04X};"
                if banked and _may_switch_banks(op):
                    body.append(f"  if ({bank}) {{ {go} }}")
                else:
                    body += [f"  {go}", "}"]
                    out.append("\n".join(body))
                    continue
        for t in targets:
            if 0 <= t <= mask and base + t in labels:
                at = f"(c.pc & {0x1000 | mask:#x}) == {0x1000 | t:#x}" + (f" && {bank}" if banked else "")
                body.append(f"  if ({at}) {{ {check(base + t)}goto tr_{base + t:04X}; }}")
        body += ["  CULE_TR_FALLBACK();", "}"]
        out.append("\n".join(body))
    table = ",\n".join(f"&&tr_{k:04X}" if k in labels else "nullptr" for k in range(size))
    return "\n".join(out) + "\n", table + "\n", len(labels)


def build(game: str, *, envs: int = TRACE_ENVS, steps: int = TRACE_STEPS, checked: bool = False,
          rebuild: bool = False, log=print) -> Path:
    """The translated core of `game` (a library in cache_dir()), traced, generated and compiled unless a
    build of the same sources and settings is there. One process builds; others that want it wait."""
    from .blocks import make_emulator

    rom = _rom_and_cart(game)
    key = _digest("translated", rom.md5, envs, steps, checked, CHECKED_OPTIMISE if checked else OPTIMISE)
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    library = folder / f"{rom.game}{'-checked' if checked else ''}-{key}.so"
    with open(folder / f".{library.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if library.is_file() and not rebuild:
            return library
        t0 = time.perf_counter()
        executed = trace(rom.game, envs, steps, log=log)
        labels, table, count = generate(rom.data, rom.bankswitch, make_emulator(rom, 1).code_maps(), executed,
                                        checked)
        with tempfile.TemporaryDirectory(prefix="cule-translate-") as scratch:
            (Path(scratch) / "translated_labels.inc").write_text(labels)
            (Path(scratch) / "translated_table.inc").write_text(table)
            log(f"compiling {rom.game}'s translated core: {count} labels ({CXX}; minutes, once)")
            partial = library.with_suffix(f".{os.getpid()}.tmp")
            seconds = _compile(rom.game, rom.bankswitch, partial,
                               ["CULE_TRANSLATED", *(["CULE_TRANSLATED_CHECKED"] if checked else [])], Path(scratch),
                               CHECKED_OPTIMISE if checked else OPTIMISE)
            partial.replace(library)
        library.with_suffix(".json").write_text(json.dumps(dict(
            game=rom.game, cart=rom.bankswitch, labels=count, traced=int(executed.sum()), trace_envs=envs,
            trace_steps=steps, checked=checked, compile_seconds=round(seconds, 1), compiler=CXX,
            optimise=CHECKED_OPTIMISE if checked else OPTIMISE), indent=1) + "\n")
        log(f"{rom.game}: {count} labels, compiled in {seconds:.0f} s ({time.perf_counter() - t0:.0f} s in all) "
            f"into {library}")
        return library


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m cule.translate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("games", nargs="+", metavar="GAME", help="games to translate (their mapper must be one of "
                                                                  f"{', '.join(TRANSLATABLE)})")
    parser.add_argument("--envs", type=int, default=TRACE_ENVS, help="environments the trace steps (default "
                                                                     f"{TRACE_ENVS})")
    parser.add_argument("--steps", type=int, default=TRACE_STEPS, help="steps of the trace, random actions "
                                                                       f"(default {TRACE_STEPS})")
    parser.add_argument("--checked", action="store_true",
                        help="every direct jump checks the pc and bank it assumed, and stops the process if they "
                             "differ (for tests; a separate build)")
    parser.add_argument("--rebuild", action="store_true", help="trace and compile again even if a build is kept")
    parser.add_argument("--jobs", type=int, default=1,
                        help="games built at a time (each compile holds one core and about 1 GB)")
    args = parser.parse_args(argv)
    if not shutil.which(CXX):
        raise SystemExit(f"no C++ compiler: {CXX!r} was not found; install g++ (or set $CXX)")
    for game in args.games:  # a wrong name or mapper is refused before any compile
        try:
            _rom_and_cart(game)
        except ValueError as error:
            parser.error(str(error))
    kw = dict(envs=args.envs, steps=args.steps, checked=args.checked, rebuild=args.rebuild)
    if args.jobs > 1:
        import concurrent.futures

        with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
            for path in pool.map(_build_quietly, args.games, [kw] * len(args.games)):
                print(path)
    else:
        for game in args.games:
            print(build(game, **kw))


def _build_quietly(game: str, kw: dict) -> Path:
    return build(game, **kw, log=lambda line: print(f"[{game}] {line}", flush=True))


if __name__ == "__main__":
    sys.exit(main())
