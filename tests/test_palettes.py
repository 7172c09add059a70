"""cule.palettes against ale-py's getScreenRGB() / getScreenGrayscale(), pixel for pixel."""
import numpy as np
import pytest

from ale_oracle import ale_interface
from cule.palettes import NTSC_GRAY, NTSC_RGB, PAL_GRAY, PAL_RGB, palette_for


def _check_screens(ale, rgb_table, gray_table):
    """Asserts the tables turn ALE's current screen into its RGB and grey screens."""
    screen = ale.getScreen()
    np.testing.assert_array_equal(rgb_table[screen], ale.getScreenRGB())
    np.testing.assert_array_equal(gray_table[screen], ale.getScreenGrayscale())
    return screen


def test_table_shapes_and_rules():
    for rgb, gray in (palette_for(False), palette_for(True)):
        assert rgb.shape == (256, 3) and rgb.dtype == np.uint8 and not rgb.flags.writeable
        assert gray.shape == (256,) and gray.dtype == np.uint8 and not gray.flags.writeable
        # Odd entries are greys; the grey API reads entry i + 1's blue byte.
        assert (rgb[1::2] == rgb[1::2, :1]).all()
        np.testing.assert_array_equal(gray[:255], rgb[1:, 2])
        assert gray[255] == 0
    assert palette_for(False)[0] is NTSC_RGB and palette_for(True)[1] is PAL_GRAY
    # The first grey ramp of each table, as ALE's common/Palettes.hpp lists it.
    assert [int(c[0]) for c in NTSC_RGB[0:16:2]] == [0x00, 0x4A, 0x6F, 0x8E, 0xAA, 0xC0, 0xD6, 0xEC]
    assert [int(c[0]) for c in PAL_RGB[0:16:2]] == [0x00, 0x2B, 0x52, 0x76, 0x97, 0xB6, 0xD2, 0xEC]
    # Grey of a colour, e.g. NTSC 0x48 = #940000 -> round(0.2989 * 148) = 44.
    assert tuple(NTSC_RGB[0x41]) == (44, 44, 44) and NTSC_GRAY[0x40] == 44
    # Odd index: the blue byte of the next colour (PAL 0x21 -> blue of #96711A).
    assert PAL_GRAY[0x21] == 0x1A


# Games whose pixels ALE maps through each table, with random play. air_raid is
# the one bundled PAL game that puts odd indices (PAL colour loss) on screen.
GAMES = [
    ("pong", False), ("breakout", False), ("ms_pacman", False), ("space_invaders", False),
    ("adventure", True), ("pacman", True), ("air_raid", True),
]


@pytest.mark.parametrize("game,pal", GAMES)
def test_tables_match_ale_on_games(game, pal):
    ale = ale_interface(game)
    rgb, gray = palette_for(pal)
    rng = np.random.default_rng(0)
    seen = np.zeros(256, dtype=bool)
    for _ in range(150):
        ale.act(int(rng.integers(18)))
        if ale.game_over():
            ale.reset_game()
        seen[_check_screens(ale, rgb, gray)] = True
    if game == "air_raid":
        assert seen[1::2].any(), "air_raid should show odd (colour-loss) indices"
    if not pal:
        assert not seen[1::2].any(), "NTSC frames never hold odd indices"


def _palette_rom(filler_lines: int, alternate_parity: bool) -> bytes:
    """A 4K ROM whose background shows every colour, one per scanline.

    Each frame: 3 lines of VSYNC, 40 lines of colour 0 (above ALE's window,
    which starts at line 34), 128 lines with COLUBK = 0, 2, ..., 254, then
    ``filler_lines`` lines of colour 0 (+1 on every other frame if
    ``alternate_parity``). 3 + 40 + 128 + 120 = 291 lines makes ALE detect PAL,
    and alternating odd/even frame lengths turns PAL colour loss on and off, so
    the screen shows all 256 indices, 255 included, over two frames.
    """
    VSYNC, VBLANK, WSYNC, COLUBK, PARITY = 0x00, 0x01, 0x02, 0x09, 0x80
    code = bytearray()

    def emit(*op):
        code.extend(op)

    def branch_back(opcode, target):
        code.extend((opcode, (target - (len(code) + 2)) & 0xFF))

    emit(0x78, 0xD8, 0xA2, 0xFF, 0x9A)            # SEI; CLD; LDX #$FF; TXS
    emit(0xA9, 0x00, 0x85, PARITY)                # LDA #0; STA PARITY
    frame = len(code)
    emit(0xA9, 0x02, 0x85, VSYNC)                 # LDA #2; STA VSYNC
    emit(0x85, WSYNC, 0x85, WSYNC, 0x85, WSYNC)   # 3 lines of VSYNC
    emit(0xA9, 0x00, 0x85, VSYNC, 0x85, VBLANK)   # LDA #0; STA VSYNC; STA VBLANK
    emit(0x85, COLUBK, 0xA2, 40)                  # STA COLUBK; LDX #40
    top = len(code)
    emit(0x85, WSYNC, 0xCA)                       # top: STA WSYNC; DEX
    branch_back(0xD0, top)                        # BNE top
    emit(0xA0, 0x00)                              # LDY #0
    ramp = len(code)
    emit(0x98, 0x0A, 0x85, COLUBK, 0x85, WSYNC)   # ramp: TYA; ASL; STA COLUBK; STA WSYNC
    emit(0xC8, 0xC0, 0x80)                        # INY; CPY #128
    branch_back(0xD0, ramp)                       # BNE ramp
    emit(0xA9, 0x00, 0x85, COLUBK)                # LDA #0; STA COLUBK
    emit(0xA5, PARITY, 0x49, int(alternate_parity), 0x85, PARITY)  # PARITY ^= alternate
    emit(0x18, 0x69, filler_lines, 0xAA)          # CLC; ADC #filler; TAX
    bottom = len(code)
    emit(0x85, WSYNC, 0xCA)                       # bottom: STA WSYNC; DEX
    branch_back(0xD0, bottom)                     # BNE bottom
    emit(0x4C, frame & 0xFF, 0xF0)                # JMP frame
    rom = bytearray(4096)
    rom[:len(code)] = code
    rom[0xFFC:0xFFE] = (0x00, 0xF0)               # reset vector $F000
    return bytes(rom)


@pytest.mark.parametrize("pal", [False, True], ids=["ntsc", "pal"])
def test_every_palette_index_with_test_rom(tmp_path, pal):
    """All 128 NTSC colours, and all 256 PAL indices including 255 (the grey
    API reads past the table there; ale-py 0.12.1 gives 0)."""
    import ale_py

    # ALE loads an unknown ROM under a supported game's file name; boxing's
    # settings do not press SELECT, so any ROM gets through its reset.
    path = tmp_path / "boxing.bin"
    path.write_bytes(_palette_rom(120, True) if pal else _palette_rom(91, False))
    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
    ale = ale_py.ALEInterface()
    ale.setInt("frame_skip", 1)
    ale.loadROM(str(path))
    assert ale.getScreenDims()[0] == (250 if pal else 210)  # ALE's PAL/NTSC detection agrees
    rgb, gray = palette_for(pal)
    seen = np.zeros(256, dtype=bool)
    for _ in range(4):
        ale.act(0)
        seen[_check_screens(ale, rgb, gray)] = True
    expected = np.ones(256, dtype=bool) if pal else np.arange(256) % 2 == 0
    np.testing.assert_array_equal(seen, expected)

