"""The built extension keeps the threaded dispatch: one indirect jump per label in each frame loop.

console::run_frame expands every opcode (and every TIA-store entry of the
code map) into a label ending in its own computed goto. A compiler is free
to merge those gotos into one shared jump ("tail merging"), which would
silently bring back the single switch's mispredicts; only the machine code
shows it. FE, the one mapper without a code window, keeps cpu::step's
switch and so stands for what a merged loop looks like.
"""
import functools
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


# Register names by width, for the x86-64 check below.
_WIDTH = {}
for _r in "abcd":
    _WIDTH.update({f"%r{_r}x": 8, f"%e{_r}x": 4, f"%{_r}x": 2, f"%{_r}l": 1, f"%{_r}h": 1})
for _r in ("si", "di", "bp"):
    _WIDTH.update({f"%r{_r}": 8, f"%e{_r}": 4, f"%{_r}": 2, f"%{_r}l": 1})
for _i in range(8, 16):
    _WIDTH.update({f"%r{_i}": 8, f"%r{_i}d": 4, f"%r{_i}w": 2, f"%r{_i}b": 1})
_SUFFIX = {"b": 1, "w": 2, "l": 4, "q": 8}
_STACK = re.compile(r"^(-?(?:0x[0-9a-f]+|\d+))?\(%rsp\)$")


def _stack_access(op: str, operands: str):
    """('store' or 'load', offset, bytes) of a plain move between a register and N(%rsp), else None."""
    if not op.startswith("mov") or "," not in operands:
        return None
    src, dst = (s.strip() for s in operands.rsplit(",", 1))
    store = bool(_STACK.match(dst))
    slot, other = (dst, src) if store else (src, dst)
    m = _STACK.match(slot)
    if not m or "(" in other:
        return None
    if op.startswith(("movz", "movs")):
        width = _SUFFIX.get(op[4])
    elif op in ("movb", "movw", "movl", "movq"):
        width = _SUFFIX[op[3]]
    elif op == "mov":
        width = _WIDTH.get(other)
    else:
        return None
    if width is None:
        return None
    return ("store" if store else "load", int(m.group(1) or "0", 0), width)


def rsp_moved(op: str, operands: str) -> int:
    """Bytes an instruction moves %rsp down by (push, sub $n,%rsp) or up by (negative: pop, add)."""
    if op == "push":
        return 8
    if op == "pop":
        return -8
    if op in ("sub", "add") and operands.startswith("$") and operands.endswith(",%rsp"):
        return (1 if op == "sub" else -1) * int(operands.split(",")[0].lstrip("$"), 0)
    return 0


def disassemble(so: str, start: int, size: int) -> list[tuple[int, str, str]]:
    """(address, mnemonic, operands) of the code in [start, start + size)."""
    text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={start}",
                           f"--stop-address={start + size}", so], capture_output=True, text=True, check=True).stdout
    code = []
    for line in text.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s+(\S+)\s*([^#<]*)", line)
        if m:
            code.append((int(m.group(1), 16), m.group(2), m.group(3).strip()))
    return code


@functools.lru_cache(maxsize=None)
def _symbol_spans(so: str) -> dict[str, tuple[int, int]]:
    """Address and size of each sized symbol."""
    spans = {}
    for line in subprocess.run(["nm", "-S", so], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 4:
            spans[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
    return spans


@functools.lru_cache(maxsize=None)
def _relocated_pointers(so: str) -> dict[int, int]:
    """Where each relative relocation points: the label tables hold the labels' addresses as these."""
    targets = {}
    for line in subprocess.run(["readelf", "-rW", so], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] == "R_X86_64_RELATIVE":
            targets[int(parts[0], 16)] = int(parts[3], 16)
    return targets


def wide_reloads(cart: str) -> list[int]:
    """Entries of `cart`'s label table whose code, from the label to its jump, loads a stack slot
    wider than the store to it before: such a load waits for the store to retire, since
    store-to-load forwarding serves only loads inside the stored bytes."""
    so = _core.__file__
    mangled = f"run_frameINS_{len(cart)}{cart}EE"
    table = loop = None
    for name, span in _symbol_spans(so).items():
        if mangled in name:
            if name.endswith("9kHandlers"):
                table = span
            elif name.startswith("_ZN4cule7console9"):
                loop = span
    assert table and loop, f"no label table or frame loop for {cart} in {so}"
    targets = _relocated_pointers(so)
    code = disassemble(so, *loop)
    index = {address: i for i, (address, _, _) in enumerate(code)}
    found = []
    for entry in range(table[1] // 8):
        stored, pushed = {}, 0
        for _, op, operands in code[index[targets[table[0] + 8 * entry]]:]:
            pushed += rsp_moved(op, operands)
            access = _stack_access(op, operands)
            if access:
                kind, offset, width = access
                offset -= pushed
                if kind == "store":
                    stored[offset] = width
                elif any(s <= offset < s + w < offset + width for s, w in stored.items()):
                    found.append(entry)
                    break
            if op == "jmp" and operands.startswith("*"):
                break
    return found


@pytest.mark.skipif(platform.machine() != "x86_64" or not shutil.which("readelf"), reason="reads x86-64 code")
def test_no_label_reloads_a_stack_slot_wider_than_it_stored_it():
    """Covers the documented opcodes' labels and the TIA stores'. Every opcode whose two low bits are
    set is undocumented, rare in games, and left out; JSR reads its second operand through a spilled
    pc and is allowed."""
    loops = [cart for cart in frame_loops() if cart != "FE"]
    assert len(loops) >= 8, loops
    bad = {}
    for cart in loops:
        labels = [e for e in wide_reloads("Cart" + cart) if not (e < OPCODES and e & 3 == 3) and e != 0x20]
        if labels:
            bad[cart] = [hex(e) if e < OPCODES else f"TIA store entry {e}" for e in labels]
    assert not bad, f"labels that load a stack slot wider than they stored it (a store-forwarding stall): {bad}"
