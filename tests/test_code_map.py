"""The code map (console.hpp's CodeMap) against the ROM bytes and the mappers' documented hotspots.

The host's threaded loop fetches each opcode through the map: the opcode when
the instruction's three bytes are plain ROM of the bank in place, else 256,
which sends the instruction down the ordinary bus. A store of A, X or Y to a
zero-page TIA address ($00-$7F, register $00-$2C) has an entry per opcode and
register instead, 257 + kind * 45 + register, the kinds in the order of
TIA_STORES. An entry that names a byte other than the ROM's,
or a register other than the store's, would run the wrong instruction; an
entry that lets an
instruction's bytes reach a hotspot or cartridge RAM would skip the bank
switch or the RAM read. The exactness tests meet the map only where a game's
code goes; this checks every entry of one game per mapper.

The hotspots and RAM windows are the mappers' (Stella's CartF8.cxx, CartF6.cxx,
CartF8SC.cxx, CartF6SC.cxx, CartDPC.cxx):
  F8: $1FF8-$1FF9; F6: $1FF6-$1FF9; the SC variants add 128 bytes of RAM
  written at $1000-$107F and read at $1080-$10FF; DPC's registers span
  $1000-$107F and its bank switches are F8's.
"""
import numpy as np
import pytest

import cule

OUTSIDE = 256
TIA_STORES = [0x85, 0x86, 0x84]  # STA, STX, STY zero page
TIA_REGISTERS = 0x2D  # VSYNC to CXCLR
RAM_SC = range(0x1000, 0x1100)
SPECIAL = {
    "2K": [],
    "4K": [],
    "F8": [range(0x1FF8, 0x1FFA)],
    "F6": [range(0x1FF6, 0x1FFA)],
    "F8SC": [range(0x1FF8, 0x1FFA), RAM_SC],
    "F6SC": [range(0x1FF6, 0x1FFA), RAM_SC],
    "DPC": [range(0x1FF8, 0x1FFA), range(0x1000, 0x1080)],
}
GAMES = {"2K": "pong", "4K": "space_invaders", "F8": "ms_pacman", "F6": "road_runner",
         "F8SC": "elevator_action", "F6SC": "klax", "DPC": "pitfall2"}


def _maps(game):
    env = cule.AtariVectorEnv(game, 1)
    try:
        assert env.emulator.cart == cule.load_rom(game).bankswitch
        return env.emulator.arrays()["code_maps"].view(np.uint16).copy(), env.emulator.cart
    finally:
        env.close()


def _tia_entries(rom, address):
    """The entries of opcodes `rom` whose first operand bytes are `address`."""
    expected = rom.astype(np.int64)
    for kind, opcode in enumerate(TIA_STORES):
        tia = (rom == opcode) & (address < 0x80) & ((address & 0x3F) < TIA_REGISTERS)
        expected[tia] = OUTSIDE + 1 + kind * TIA_REGISTERS + (address[tia] & 0x3F)
    return expected


@pytest.mark.parametrize("mapper", sorted(GAMES))
def test_every_entry_is_the_rom_byte_or_outside(mapper):
    game = GAMES[mapper]
    maps, cart = _maps(game)
    with open(cule.load_rom(game).path, "rb") as f:
        image = np.frombuffer(f.read(), dtype=np.uint8)
    code = image[:8192] if mapper == "DPC" else image  # DPC's last 2K are graphics, not banks
    block = min(len(code), 4096)
    blocks = len(code) // block
    entries = 0x1000 + block  # indexed by pc & (A12 | the bank's offset bits)
    maps = maps.reshape(blocks, entries)

    special = np.zeros(0x2000, dtype=bool)
    for r in SPECIAL[mapper]:
        special[list(r)] = True
    pcs = np.arange(0x1000, 0x2000)
    # Three bytes from pc, on the 13-bit bus: past $1FFF the address wraps to the TIA.
    touches = np.zeros(len(pcs), dtype=bool)
    for k in range(3):
        a = (pcs + k) & 0x1FFF
        touches |= special[a] | (a < 0x1000)
    offsets = pcs & (block - 1)
    for b in range(blocks):
        m = maps[b]
        assert (m[:0x1000] == OUTSIDE).all(), "an address with A12 clear is never ROM"
        entry = m[0x1000 + offsets]  # what a fetch at each pc of $1000-$1FFF sees
        inside = entry != OUTSIDE
        at = b * block
        address = code[at + ((offsets + 1) & (block - 1))].astype(np.int64)
        expected = _tia_entries(code[at + offsets], address)
        assert (entry[inside] == expected[inside]).all()
        assert not (inside & touches).any(), "an instruction in the map reaches a hotspot, RAM or the TIA"
        # What may be in the map mostly is: the map is what makes most fetches cheap.
        assert inside.sum() >= 0.9 * (~touches).sum(), (cart, b, int(inside.sum()), int((~touches).sum()))


@pytest.mark.parametrize("game", ["tutankham", "montezuma_revenge"])
def test_e0_maps_each_slice_in_each_page(game):
    """E0 (CartE0.cxx): four 1K pages, the first three switched among the 8K's eight slices by the hotspots
    $1FE0-$1FF7, the last fixed to slice 7. Per slice, 8K entries indexed by pc & $1FFF as if the slice filled
    every page, 256 where A12 is clear: an entry is the slice's byte (or its store's TIA register) unless the
    instruction's bytes reach a hotspot; in a page's last two bytes the operands lie in the next page, another
    bank, so no store entry."""
    maps, cart = _maps(game)
    assert cart == "E0"
    with open(cule.load_rom(game).path, "rb") as f:
        image = np.frombuffer(f.read(), dtype=np.uint8)
    slices, size = len(image) // 1024, 1024
    assert maps.size == slices * 0x2000
    maps = maps.reshape(slices, 0x2000)
    assert (maps[:, :0x1000] == OUTSIDE).all(), "an address with A12 clear is never ROM"
    i = np.arange(size)
    for s in range(slices):
        data = image[s * size:(s + 1) * size]
        expected = _tia_entries(data, data[np.minimum(i + 1, size - 1)].astype(np.int64))
        crosses = i + 2 >= size
        expected[crosses] = data[crosses]
        for page in range(4):
            pc = 0x1000 + page * size + i
            reaches_hotspot = pc + 2 >= 0x1FE0
            entry = maps[s, pc]
            assert (entry[reaches_hotspot] == OUTSIDE).all()
            assert (entry[~reaches_hotspot] == expected[~reaches_hotspot]).all(), (s, page)


def test_mappers_without_a_map_hold_none():
    """FE's stack-watching switch leaves every fetch to the bus."""
    maps, cart = _maps("robotank")
    assert cart == "FE" and maps.size == 0
