"""The debug views generated from the structs' field lists (cule/cpp/host/field_views.hpp) show the real state.

Emulator.tia_state and Emulator.debug, and _core.render_log_dtype, are expanded from the X-macro lists the
structs are declared from; these tests check them against what is known another way: registers a small
cartridge sets, the bytes of a saved state row, the RAM and frame counters the other calls return.
"""
import numpy as np
import torch

import cule
from cule import _core
from cule.state import HEADER_BYTES
from cule.blocks import make_emulator
from timer_wait_rom import Assembler

COLUBK, COLUP0, NUSIZ0, GRP0, T1024T = 0x09, 0x06, 0x04, 0x1B, 0x297


def _known_writes_cartridge(tmp_path):
    """A cartridge that sets registers to known values, then spins in a JMP to itself."""
    a = Assembler()
    a.label("start")
    a.emit(0x78, 0xD8, 0xA2, 0xFF, 0x9A)  # SEI CLD LDX #$FF TXS
    for register, value in ((COLUBK, 0x42), (COLUP0, 0x3C), (NUSIZ0, 0x05), (GRP0, 0xA5)):
        a.emit(0xA9, value, 0x85, register)  # LDA #value; STA register
    a.emit(0xA9, 0x80, 0x8D, T1024T & 0xFF, T1024T >> 8)  # the timer: $80 at 1024 cycles a count
    a.emit(0xA9, 0x33, 0xA2, 0x11, 0xA0, 0x22)  # LDA #$33 LDX #$11 LDY #$22
    a.label("loop")
    a.jmp("loop")
    path = tmp_path / "views.bin"  # none of ALE's games: the bare console's game unit
    path.write_bytes(a.image())
    return cule.load_rom(str(path)), a.labels["loop"]


def test_views_show_the_registers_a_cartridge_set(tmp_path):
    rom, loop = _known_writes_cartridge(tmp_path)
    emu = make_emulator(rom, 1)
    emu.load(0, 0, 0, 0)
    for _ in range(3):
        emu.act(0, 0)
    debug = emu.debug(0)
    # SEI leaves I set; B and U always read set; the loads leave N and Z clear.
    assert debug["cpu"] == {"pc": loop, "a": 0x33, "x": 0x11, "y": 0x22, "sp": 0xFF, "p": 0x34, "jammed": 0}
    assert debug["riot"]["timer"] == 0x80 and debug["riot"]["interval_shift"] == 10
    assert "ram" not in debug["riot"]
    tia = emu.tia_state(0)
    assert (tia["colubk"], tia["colup0"], tia["nusiz0"], tia["grp0"]) == (0x42, 0x3C, 0x05, 0xA5)
    # Frames without VSYNC run to the scanline cap, so the console takes the cartridge for PAL.
    assert tia["config"] == {"ystart": 34, "height": emu.screen_height, "max_scanlines": 342 if emu.is_pal else 290,
                             "color_loss": int(emu.is_pal), "hmove_blanks": 1}
    assert debug["tia"] == tia


def test_views_agree_with_saved_rows_and_counters():
    env = cule.AtariVectorEnv("pong", num_envs=2, frameskip=1, noop_max=0, repeat_action_probability=0.0,
                              reset_mode="ale")
    env.reset(seed=3)
    for _ in range(40):
        env.step(torch.tensor([2, 3]))  # RIGHT and LEFT: the environments drift apart
    rows = env.clone_state(include_rng=False).numpy()[:, HEADER_BYTES:]
    emu = env.emulator
    for i, row in enumerate(rows):
        debug = emu.debug(i)
        # A row starts with the Machine: the 8-byte Cpu6507, then the Riot (the static_asserts pin both).
        assert bytes(row[24:152]) == bytes(emu.ram(i)), "the row's layout is not the one assumed here"
        cpu = debug["cpu"]
        assert (cpu["pc"], cpu["a"], cpu["x"], cpu["y"], cpu["sp"], cpu["p"]) == \
            (int(row[0]) | int(row[1]) << 8, *map(int, row[2:7]))
        riot = debug["riot"]
        assert (riot["timer"], riot["timer_set_cycle"], riot["interrupt_read_cycle"]) == \
            tuple(int(v) for v in row[8:20].view("<i4"))
        assert riot["interval_shift"] == row[20] and riot["ddra"] == row[22]
        assert (debug["env"]["frame_number"], debug["env"]["episode_frame_number"]) == emu.counters(i)
        assert debug["tia"] == emu.tia_state(i) and debug["machine"]["cycles"] > 0
    # Each environment's own view: the ALE actions of RIGHT and LEFT (pong's minimal set) it stored.
    assert [emu.debug(i)["env"]["action_a"] for i in range(2)] == [3, 4]


def test_render_log_dtype_is_the_structs_layout():
    dtype = np.dtype(_core.render_log_dtype)
    assert dtype.itemsize == _core.render_log_bytes
    assert dtype.names == ("frames", "accesses", "overflow", "pending", "replayed_steps", "inline_steps",
                           "peak_accesses")
    offsets = [dtype.fields[name][1] for name in dtype.names]
    ends = [offset + dtype.fields[name][0].itemsize for offset, name in zip(offsets, dtype.names)]
    assert offsets[0] == 0 and all(e <= o for e, o in zip(ends, offsets[1:])) and ends[-1] == dtype.itemsize
    logs = np.zeros(3, dtype)
    logs["replayed_steps"] = [1, 2, 3]
    assert np.frombuffer(logs.tobytes(), "<u4").reshape(3, -1)[:, 3].tolist() == [1, 2, 3]
