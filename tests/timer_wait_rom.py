"""A 4K test cartridge whose frames are timer waits of every form (a helper module for tests).

Games spin on the RIOT's timer (`LDA INTIM; BNE *-3` and its kin) for a large
share of their instructions, and the core runs the turns of such a loop whose
reads change nothing at once. This cartridge exercises that against ale-py:
every frame sets the timer through each of TIM1T/TIM8T/TIM64T/T1024T with a
start that depends on the frame counter, shifts the phase by a variable
delay, then waits with LDA/LDX/LDY/BIT of INTIM/TIMINT (and a mirror) under
every branch that can close such a loop, one loop across a page boundary.
After each wait it stores the register read, the flags and a fresh INTIM read
(which pins the exact cycle) to RAM. Every eighth frame ends with a wait long
enough that ALE's 25,000-instruction frame budget cuts it, across frames.
"""
from __future__ import annotations

VSYNC, WSYNC = 0x00, 0x02
TIMERS = {"TIM1T": 0x294, "TIM8T": 0x295, "TIM64T": 0x296, "T1024T": 0x297}
INTIM, TIMINT = 0x284, 0x285
FRAME_COUNTER = 0xF0  # RAM; pong (the name the cartridge is run under) reads $8D, $8E and $96
RESULTS = 0xA0        # four bytes per wait from here

# (read opcode, read address, branch opcode, timer, start ORed onto the frame's base, A before)
WAITS = [
    (0xAD, INTIM, 0xD0, "TIM64T", 0x01, 0x00),   # LDA INTIM; BNE
    (0xAE, INTIM, 0xD0, "TIM8T", 0x01, 0x00),    # LDX INTIM; BNE
    (0xAC, 0x294, 0xD0, "TIM64T", 0x01, 0x00),   # LDY (a mirror of INTIM); BNE
    (0xAD, INTIM, 0xD0, "TIM1T", 0x20, 0x00),    # counts 7 a turn: passes 0 and waits out expiry
    (0x2C, TIMINT, 0x10, "T1024T", 0x01, 0x00),  # BIT TIMINT; BPL
    (0xAD, INTIM, 0x10, "TIM8T", 0x01, 0x00),    # LDA INTIM; BPL: until the count wraps
    (0xAD, INTIM, 0x30, "TIM8T", 0x90, 0x00),    # LDA INTIM; BMI: while the count is above $7F
    (0x2C, INTIM, 0x70, "TIM8T", 0x70, 0x00),    # BIT INTIM; BVS: while bit 6 is set
    (0x2C, 0x28C, 0x50, "TIM8T", 0x20, 0x00),    # BIT (a mirror); BVC: while bit 6 is clear
    (0x2C, INTIM, 0xF0, "TIM64T", 0x01, 0x80),   # BIT INTIM; BEQ: while A & count is 0
    (0xAD, INTIM, 0xB0, "TIM64T", 0x01, 0x00),   # BCS after CLC: loads keep C, not taken
]
PAGE_CROSSING = 0  # the wait whose branch crosses into the next page (TIM1T would never read 0 in 8-cycle turns)


class Assembler:
    """Bytes of a 4K image at $F000, with labels for branches and jumps."""

    def __init__(self) -> None:
        self.code = bytearray()
        self.labels: dict[str, int] = {}
        self.fixups: list[tuple[int, str, str]] = []

    @property
    def pc(self) -> int:
        return 0xF000 + len(self.code)

    def label(self, name: str) -> None:
        self.labels[name] = self.pc

    def emit(self, *data: int) -> None:
        self.code.extend(b & 0xFF for b in data)

    def branch(self, opcode: int, target: str) -> None:
        self.emit(opcode, 0)
        self.fixups.append((len(self.code) - 1, target, "rel"))

    def jmp(self, target: str) -> None:
        self.emit(0x4C, 0, 0)
        self.fixups.append((len(self.code) - 2, target, "abs"))

    def pad_to(self, low_byte: int) -> None:
        while self.pc & 0xFF != low_byte:
            self.emit(0xEA)  # NOP

    def image(self) -> bytes:
        for at, target, kind in self.fixups:
            address = self.labels[target]
            if kind == "rel":
                offset = address - (0xF000 + at + 1)
                assert -128 <= offset <= 127, (target, offset)
                self.code[at] = offset & 0xFF
            else:
                self.code[at], self.code[at + 1] = address & 0xFF, address >> 8
        assert len(self.code) <= 0xFFC
        body = self.code + bytes(0xFFC - len(self.code))
        start = self.labels["start"]
        return bytes(body) + bytes([start & 0xFF, start >> 8, start & 0xFF, start >> 8])


def build() -> bytes:
    a = Assembler()
    a.label("start")
    a.emit(0x78, 0xD8, 0xA2, 0xFF, 0x9A)  # SEI CLD LDX #$FF TXS
    a.emit(0xA2, 0x7F, 0xA9, 0x00)        # LDX #$7F LDA #0
    a.label("clear")
    a.emit(0x95, 0x80, 0xCA)              # STA $80,X DEX
    a.branch(0x10, "clear")               # BPL: RAM starts at zero, so pong's score reads 0
    a.label("frame")
    a.emit(0xA9, 0x02, 0x85, VSYNC, 0x85, WSYNC, 0x85, WSYNC, 0x85, WSYNC, 0xA9, 0x00, 0x85, VSYNC)
    for i, (read, address, branch, timer, start, a_before) in enumerate(WAITS):
        # The start: the frame counter's low bits ORed with this wait's own.
        a.emit(0xA5, FRAME_COUNTER, 0x29, 0x1F, 0x09, start, 0x8D, TIMERS[timer] & 0xFF, TIMERS[timer] >> 8)
        # A delay of 1-8 turns of DEX; BNE by the frame counter: reads fall on every phase of the interval.
        a.emit(0xA5, FRAME_COUNTER, 0x29, 0x07, 0xAA, 0xE8)  # LDA fc AND #7 TAX INX
        a.label(f"delay{i}")
        a.emit(0xCA)
        a.branch(0xD0, f"delay{i}")
        a.emit(0xA9, a_before, 0x18)  # LDA #a CLC
        if i == PAGE_CROSSING:
            a.pad_to(0xFC)
        a.label(f"wait{i}")
        a.emit(read, address & 0xFF, address >> 8)
        a.branch(branch, f"wait{i}")
        a.emit(0x08, 0x85, RESULTS + 4 * i, 0x86, RESULTS + 4 * i + 1, 0x84, RESULTS + 4 * i + 2)  # PHP STA STX STY
        a.emit(0xAD, INTIM & 0xFF, INTIM >> 8, 0x85, RESULTS + 4 * i + 3)  # the clock, through a fresh read
        a.emit(0x68, 0x85, 0xE0 + i)  # PLA (the flags) STA
    a.emit(0xE6, FRAME_COUNTER, 0xA5, FRAME_COUNTER, 0x29, 0x07)  # INC fc; LDA fc; AND #7
    a.branch(0xF0, "long")
    a.jmp("frame")
    # Every eighth frame: T1024T from $FF is 261,000 cycles of LDA INTIM; BNE,
    # 75,000 instructions, which ALE's frame budget cuts three times.
    a.label("long")
    a.emit(0xA9, 0xFF, 0x8D, 0x97, 0x02)
    a.label("long_wait")
    a.emit(0xAD, INTIM & 0xFF, INTIM >> 8)
    a.branch(0xD0, "long_wait")
    a.jmp("frame")
    return a.image()
