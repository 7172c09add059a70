"""The built extension keeps the threaded dispatch: one indirect jump per label in each frame loop.

console::run_frame expands every opcode (and every TIA-store entry of the
code map) into a label ending in its own computed goto. A compiler is free
to merge those gotos into one shared jump ("tail merging"), which would
silently bring back the single switch's mispredicts; only the machine code
shows it. FE, the one mapper without a code window, keeps cpu::step's
switch and so stands for what a merged loop looks like.
"""
import platform
import re
import shutil
import subprocess

import pytest

from cule import _core

# An indirect jump, as objdump prints it: x86-64 `jmp *%rax` / `jmp *(...)`, AArch64 `br x1`.
INDIRECT = {"x86_64": re.compile(r"\sjmp\s+\*"), "aarch64": re.compile(r"\sbr\s+x\d+")}
OPCODES = 256

pytestmark = pytest.mark.skipif(
    platform.machine() not in INDIRECT or not (shutil.which("nm") and shutil.which("objdump")),
    reason="needs binutils (nm, objdump) on x86-64 or AArch64")


def frame_loops() -> dict[str, str]:
    """The mangled run_frame symbol of each mapper in the extension, by mapper (Cart2K -> '2K')."""
    symbols = subprocess.run(["nm", _core.__file__], capture_output=True, text=True, check=True).stdout.split()
    loops = {}
    for name in symbols:
        m = re.match(r"_ZN4cule7console9run_frameINS_(\d+)", name)
        if m:
            cart = name[m.end():m.end() + int(m.group(1))]
            loops[cart.removeprefix("Cart")] = name
    return loops


def indirect_jumps(symbol: str) -> int:
    text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--disassemble={symbol}", _core.__file__],
                          capture_output=True, text=True, check=True).stdout
    return len(INDIRECT[platform.machine()].findall(text))


def test_every_windowed_mapper_keeps_a_jump_per_label():
    loops = frame_loops()
    assert {"2K", "4K", "F8", "F6", "FE"} <= set(loops), f"frame loops found: {sorted(loops)}"
    counts = {cart: indirect_jumps(symbol) for cart, symbol in loops.items()}
    assert counts["FE"] <= 4, f"FE's switch should be one jump (a handful at most): {counts}"
    merged = {cart: n for cart, n in counts.items() if cart != "FE" and n <= OPCODES}
    assert not merged, f"threaded frame loops with fewer indirect jumps than opcodes (merged gotos?): {counts}"
