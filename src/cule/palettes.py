"""Palette tables: what ALE 0.12.1 returns for each frame-buffer value.

The frame buffer holds TIA colour-register bytes (palette indices 0-255, as
Stella's TIA::updateFrameScanline writes them). ALE turns them into
pixels with a 256-entry table per TV standard (``common/Palettes.hpp``):

* the 128 colours sit at the even indices;
* odd index ``i`` holds the grey of colour ``i - 1``. Odd indices only reach
  the frame buffer under PAL colour loss (Stella's TIA::startFrame), which ALE turns on
  exactly when it uses the PAL table, so NTSC odd entries are never seen.

Screen APIs (``common/ColourPalette.cpp``):

* ``getScreenRGB()`` returns ``table[i]``: ``NTSC_RGB`` / ``PAL_RGB`` below.
* ``getScreenGrayscale()`` returns the *blue byte of entry* ``i + 1``. For an
  even ``i`` that is the grey of colour ``i``; for an odd ``i`` it is the blue
  channel of the next colour, not a grey at all. For ``i = 255`` it reads one
  word past the table:

  - PAL: the word after ``PALPalette`` in ale-py 0.12.1's binary is
    ``NTSCPalette[0] = 0``, and ALE returns 0 (measured with a test ROM that
    shows index 255).
  - NTSC: the word after ``NTSCPalette`` is unrelated memory (a pointer at
    run time), but NTSC frames never contain index 255, so the value is
    unobservable. We use 0.

Greys are ``round(0.2989 R + 0.5870 G + 0.1140 B)`` in double precision,
rounding halves away from zero (C ``round``); this reproduces every odd entry
of ALE's tables.
"""
from __future__ import annotations

import numpy as np

# The 128 colours (0xRRGGBB) of colour-register values 0x00, 0x02, ..., 0xFE.
# Rows are the 16 hues (register bits 7-4), columns the 8 luminances (bits 3-1).
_NTSC_COLOURS = (
    0x000000, 0x4a4a4a, 0x6f6f6f, 0x8e8e8e, 0xaaaaaa, 0xc0c0c0, 0xd6d6d6, 0xececec,
    0x484800, 0x69690f, 0x86861d, 0xa2a22a, 0xbbbb35, 0xd2d240, 0xe8e84a, 0xfcfc54,
    0x7c2c00, 0x904811, 0xa26221, 0xb47a30, 0xc3903d, 0xd2a44a, 0xdfb755, 0xecc860,
    0x901c00, 0xa33915, 0xb55328, 0xc66c3a, 0xd5824a, 0xe39759, 0xf0aa67, 0xfcbc74,
    0x940000, 0xa71a1a, 0xb83232, 0xc84848, 0xd65c5c, 0xe46f6f, 0xf08080, 0xfc9090,
    0x840064, 0x97197a, 0xa8308f, 0xb846a2, 0xc659b3, 0xd46cc3, 0xe07cd2, 0xec8ce0,
    0x500084, 0x68199a, 0x7d30ad, 0x9246c0, 0xa459d0, 0xb56ce0, 0xc57cee, 0xd48cfc,
    0x140090, 0x331aa3, 0x4e32b5, 0x6848c6, 0x7f5cd5, 0x956fe3, 0xa980f0, 0xbc90fc,
    0x000094, 0x181aa7, 0x2d32b8, 0x4248c8, 0x545cd6, 0x656fe4, 0x7580f0, 0x8490fc,
    0x001c88, 0x183b9d, 0x2d57b0, 0x4272c2, 0x548ad2, 0x65a0e1, 0x75b5ef, 0x84c8fc,
    0x003064, 0x185080, 0x2d6d98, 0x4288b0, 0x54a0c5, 0x65b7d9, 0x75cceb, 0x84e0fc,
    0x004030, 0x18624e, 0x2d8169, 0x429e82, 0x54b899, 0x65d1ae, 0x75e7c2, 0x84fcd4,
    0x004400, 0x1a661a, 0x328432, 0x48a048, 0x5cba5c, 0x6fd26f, 0x80e880, 0x90fc90,
    0x143c00, 0x355f18, 0x527e2d, 0x6e9c42, 0x87b754, 0x9ed065, 0xb4e775, 0xc8fc84,
    0x303800, 0x505916, 0x6d762b, 0x88923e, 0xa0ab4f, 0xb7c25f, 0xccd86e, 0xe0ec7c,
    0x482c00, 0x694d14, 0x866a26, 0xa28638, 0xbb9f47, 0xd2b656, 0xe8cc63, 0xfce070,
)

# PAL hues 0, 1, 14 and 15 are all grey.
_PAL_COLOURS = (
    0x000000, 0x2b2b2b, 0x525252, 0x767676, 0x979797, 0xb6b6b6, 0xd2d2d2, 0xececec,
    0x000000, 0x2b2b2b, 0x525252, 0x767676, 0x979797, 0xb6b6b6, 0xd2d2d2, 0xececec,
    0x805800, 0x96711a, 0xab8732, 0xbe9c48, 0xcfaf5c, 0xdfc06f, 0xeed180, 0xfce090,
    0x445c00, 0x5e791a, 0x769332, 0x8cac48, 0xa0c25c, 0xb3d76f, 0xc4ea80, 0xd4fc90,
    0x703400, 0x89511a, 0xa06b32, 0xb68448, 0xc99a5c, 0xdcaf6f, 0xecc280, 0xfcd490,
    0x006414, 0x1a8035, 0x329852, 0x48b06e, 0x5cc587, 0x6fd99e, 0x80ebb4, 0x90fcc8,
    0x700014, 0x891a35, 0xa03252, 0xb6486e, 0xc95c87, 0xdc6f9e, 0xec80b4, 0xfc90c8,
    0x005c5c, 0x1a7676, 0x328e8e, 0x48a4a4, 0x5cb8b8, 0x6fcbcb, 0x80dcdc, 0x90ecec,
    0x70005c, 0x841a74, 0x963289, 0xa8489e, 0xb75cb0, 0xc66fc1, 0xd380d1, 0xe090e0,
    0x003c70, 0x195a89, 0x2f75a0, 0x448eb6, 0x57a5c9, 0x68badc, 0x79ceec, 0x88e0fc,
    0x580070, 0x6e1a89, 0x8332a0, 0x9648b6, 0xa75cc9, 0xb76fdc, 0xc680ec, 0xd490fc,
    0x002070, 0x193f89, 0x2f5aa0, 0x4474b6, 0x578bc9, 0x68a1dc, 0x79b5ec, 0x88c8fc,
    0x340080, 0x4a1a96, 0x5f32ab, 0x7248be, 0x835ccf, 0x936fdf, 0xa280ee, 0xb090fc,
    0x000088, 0x1a1a9d, 0x3232b0, 0x4848c2, 0x5c5cd2, 0x6f6fe1, 0x8080ef, 0x9090fc,
    0x000000, 0x2b2b2b, 0x525252, 0x767676, 0x979797, 0xb6b6b6, 0xd2d2d2, 0xececec,
    0x000000, 0x2b2b2b, 0x525252, 0x767676, 0x979797, 0xb6b6b6, 0xd2d2d2, 0xececec,
)

# Grey read for index 255, which runs one entry past ALE's table (see above).
_GRAY_PAST_END = 0


def _rgb_table(colours: tuple[int, ...]) -> np.ndarray:
    """[256, 3] uint8: colours at even indices, their greys at odd ones."""
    packed = np.asarray(colours, dtype=np.uint32)
    rgb = np.stack([(packed >> 16) & 0xFF, (packed >> 8) & 0xFF, packed & 0xFF], axis=1)
    r, g, b = rgb.astype(np.float64).T
    grey = np.floor(r * 0.2989 + g * 0.5870 + b * 0.1140 + 0.5)  # C round(); all values > 0
    table = np.empty((256, 3), dtype=np.uint8)
    table[0::2] = rgb
    table[1::2] = grey.astype(np.uint8)[:, None]
    return table


def _gray_table(rgb: np.ndarray) -> np.ndarray:
    """[256] uint8: the blue byte of entry i + 1, as getScreenGrayscale reads it."""
    gray = np.empty(256, dtype=np.uint8)
    gray[:255] = rgb[1:, 2]
    gray[255] = _GRAY_PAST_END
    return gray


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


NTSC_RGB = _frozen(_rgb_table(_NTSC_COLOURS))
"""[256, 3] uint8: getScreenRGB() value of each palette index, NTSC games."""
PAL_RGB = _frozen(_rgb_table(_PAL_COLOURS))
"""[256, 3] uint8: getScreenRGB() value of each palette index, PAL games."""
NTSC_GRAY = _frozen(_gray_table(NTSC_RGB))
"""[256] uint8: getScreenGrayscale() value of each palette index, NTSC games."""
PAL_GRAY = _frozen(_gray_table(PAL_RGB))
"""[256] uint8: getScreenGrayscale() value of each palette index, PAL games."""


def palette_for(pal: bool) -> tuple[np.ndarray, np.ndarray]:
    """(rgb [256, 3], gray [256]) read-only uint8 tables for a PAL or NTSC game.

    ``pal`` is ALE's detected display format (PAL also means colour loss).
    Index a screen of palette indices with them: ``rgb[screen]``, ``gray[screen]``.
    """
    return (PAL_RGB, PAL_GRAY) if pal else (NTSC_RGB, NTSC_GRAY)
