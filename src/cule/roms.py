"""ROM catalogue: game names, ale-py's bundled ROMs, and bank-switching detection.

A game is named by its ALE id (``"pong"``), a gymnasium name (``"ALE/Pong-v5"``,
``"Pong"``, ``"PongNoFrameskip-v4"``), or a path to a ``.bin`` file. ROMs come
from ale-py's bundled set; nothing is downloaded.

Bank switching is detected from the image the way Stella's
``Cartridge::autodetectType`` does in ALE 0.12.1 (by size, then byte
signatures), so a ROM gets the same mapper in cule as in ALE.
"""
from __future__ import annotations

import difflib
import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import _core
from .errors import RomError, UnknownGameError, UnsupportedCartridgeError

# Mappers the core emulates; they cover all 104 ALE games.
SUPPORTED_BANKSWITCH = tuple(_core.mappers)  # cule/cpp/cart/mappers.inc

# Bundled ROMs that ALE refuses to load because it has no game settings for them.
_BUNDLED_WITHOUT_SETTINGS = frozenset({"combat", "joust", "maze_craze", "warlords"})

# The largest image any scheme Stella detects can have (128K MC); anything
# bigger is rejected before it is read.
_MAX_ROM_BYTES = 128 * 1024
# Sizes for which Stella's detection picks a scheme by size (not by a guess).
_CARTRIDGE_SIZES = (2048, 4096, 8192, 10240, 10495, 10496, 12288, 16384, 32768, 65536, 131072)


# Stella properties (DefProps) of ALE's ROMs that differ from the defaults,
# by game id; they apply only to the bundled image (Stella keys them by md5).
# Defaults: YStart 34, Height 210, AUTO-DETECT format, HMOVE blanks on,
# joysticks, difficulty B/B (SWCHB $3F).
_PROPERTY_OVERRIDES: dict[str, dict] = {
    "amidar": dict(initial_switches=0xFF),  # difficulty A/A
    "backgammon": dict(left_paddles=True),
    "blackjack": dict(left_paddles=True),
    "breakout": dict(left_paddles=True),
    "casino": dict(left_paddles=True),
    "kaboom": dict(left_paddles=True),
    "pong": dict(left_paddles=True, right_paddles=True, swap_paddles=True),
    "carnival": dict(ystart=26, height=214),
    "journey_escape": dict(height=230),
    "pooyan": dict(ystart=26, height=220),
    "qbert": dict(ystart=40),
    "up_n_down": dict(ystart=30),
    "surround": dict(swap_ports=True),
    "wizard_of_wor": dict(swap_ports=True),
    "asteroids": dict(hmove_blanks=False),
    "battle_zone": dict(hmove_blanks=False),
    "darkchambers": dict(hmove_blanks=False),
    "ms_pacman": dict(hmove_blanks=False),
}
_DEFAULT_PROPERTIES = dict(ystart=34, height=210, hmove_blanks=True, format="AUTO-DETECT", left_paddles=False,
                           right_paddles=False, swap_ports=False, swap_paddles=False, initial_switches=0x3F)


@dataclass(frozen=True)
class Rom:
    """A cartridge image ready for the emulator."""

    game: str | None  # ALE game id, or None for a ROM ALE has no settings for
    path: str
    data: bytes = field(repr=False)
    md5: str
    bankswitch: str  # one of SUPPORTED_BANKSWITCH

    @property
    def properties(self) -> dict:
        """The Stella properties the console uses for this image (display window, controllers, ...)."""
        props = dict(_DEFAULT_PROPERTIES)
        if self.game is not None and _md5_to_bundled_id().get(self.md5) == self.game:
            props.update(_PROPERTY_OVERRIDES.get(self.game, {}))
        return props


def _ale_roms_dir() -> Path:
    from ale_py import roms as ale_roms

    return Path(ale_roms.get_rom_path("pong")).parent


@functools.lru_cache(maxsize=None)
def _bundled_ids() -> tuple[str, ...]:
    from ale_py import roms as ale_roms

    return tuple(sorted(ale_roms.get_all_rom_ids()))


@functools.lru_cache(maxsize=None)
def _md5_to_bundled_id() -> dict[str, str]:
    table = json.loads((_ale_roms_dir() / "md5.json").read_text())
    return {md5: Path(name).stem for name, md5 in table.items()}


def list_games() -> list[str]:
    """The 104 ALE game ids (snake_case, as ale-py names them), sorted."""
    return [g for g in _bundled_ids() if g not in _BUNDLED_WITHOUT_SETTINGS]


_NAMESPACES = ("ALE/", "cule/")  # gymnasium's namespaces of Atari ids: ale-py's and cule's own


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _game_from_name(name: str) -> str | None:
    """Maps "pong", "Pong", "ALE/Pong-v5", "cule/Pong-v5", "PongNoFrameskip-v4" to "pong"."""
    stem = name.strip()
    for namespace in _NAMESPACES:
        if stem.startswith(namespace):
            stem = stem[len(namespace):]
    stem = re.sub(r"-v\d+$", "", stem)
    stem = re.sub(r"(NoFrameskip|Deterministic)$", "", stem)
    # Comparing without case or separators also maps TicTacToe3D and UpNDown.
    by_squashed = {_squash(g): g for g in _bundled_ids()}
    return by_squashed.get(_squash(stem))


def game_key(game: str | os.PathLike) -> str:
    """What every spelling of one game shares ("pong", "ALE/Pong-v5", a path to its ROM or to a copy of it):
    the md5 of the ROM it loads."""
    return load_rom(game).md5


def _unknown_game_message(name: str) -> str:
    games = list_games()
    close = difflib.get_close_matches(name.lower(), games, n=3)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return (
        f"Unknown game {name!r}.{hint} Give an ALE game id (cule.list_games() lists "
        f"all {len(games)}), a gymnasium name such as 'ALE/Pong-v5', or a path to a .bin ROM."
    )


def _looks_like_path(name: str) -> bool:
    if name.startswith(_NAMESPACES):  # a gymnasium id: "ALE/Pong-v5", "cule/Pong-v5"
        name = name.split("/", 1)[1]
    return name.lower().endswith((".bin", ".a26", ".rom")) or os.sep in name or "/" in name


def load_rom(game: str | os.PathLike) -> Rom:
    """Finds and reads a ROM by game id, gymnasium name or path; detects its mapper.

    Raises UnknownGameError for a name that is none of those, RomError for a
    file that is missing, unreadable, empty or of impossible size, and
    UnsupportedCartridgeError for a bank-switching scheme cule does not emulate.
    """
    if isinstance(game, os.PathLike) or (isinstance(game, str) and _looks_like_path(game)):
        return _load_path(Path(game))
    if not isinstance(game, str):
        raise TypeError(f"game must be a str or a path, not {type(game).__name__}")
    game_id = _game_from_name(game)
    if game_id is None:
        if Path(game).is_file():
            return _load_path(Path(game))
        raise UnknownGameError(_unknown_game_message(game))
    if game_id in _BUNDLED_WITHOUT_SETTINGS:
        raise UnknownGameError(
            f"{game!r} is bundled with ale-py but ALE has no game settings for it (no rewards, "
            f"terminals or actions), so ALE refuses to load it and so does cule. "
            f"Pick one of cule.list_games()."
        )
    path = _ale_roms_dir() / f"{game_id}.bin"
    rom = _load_path(path)
    return Rom(game_id, rom.path, rom.data, rom.md5, rom.bankswitch)


def _load_path(path: Path) -> Rom:
    if not path.exists():
        raise RomError(f"ROM file {str(path)!r} does not exist. Check the path, or name a game id such as 'pong'.")
    if not path.is_file():
        raise RomError(f"ROM path {str(path)!r} is not a file. Give the path of a .bin cartridge image.")
    size = path.stat().st_size
    if size == 0:
        raise RomError(f"ROM file {str(path)!r} is empty (0 bytes). Re-copy the ROM; a cartridge image is 2-128 KiB.")
    if size > _MAX_ROM_BYTES:
        raise RomError(
            f"ROM file {str(path)!r} is {size} bytes, larger than any Atari 2600 cartridge "
            f"({_MAX_ROM_BYTES} bytes at most). Is it an archive or another console's ROM?"
        )
    try:
        data = path.read_bytes()
    except OSError as e:
        raise RomError(f"ROM file {str(path)!r} could not be read: {e.strerror or e}.") from e
    md5 = hashlib.md5(data).hexdigest()
    if size not in _CARTRIDGE_SIZES and size % 8448 != 0:
        # Stella would still guess (3E/3F for odd sizes), but no scheme cule
        # emulates has this size: most likely the file was cut short.
        raise RomError(_bad_size_message(f"ROM file {str(path)!r}", size))
    bankswitch = detect_bankswitch(data)
    if bankswitch not in SUPPORTED_BANKSWITCH:
        raise UnsupportedCartridgeError(
            f"ROM {str(path)!r} ({size} bytes) uses bank switching '{bankswitch}', which cule does not "
            f"emulate. Supported: {', '.join(SUPPORTED_BANKSWITCH)} (every ALE game uses one of these)."
        )
    game = _md5_to_bundled_id().get(md5)
    if game is None and path.stem in _bundled_ids():
        game = path.stem  # ALE, too, accepts an unknown md5 under a game's file name
    if game in _BUNDLED_WITHOUT_SETTINGS:
        game = None
    return Rom(game, str(path), data, md5, bankswitch)


# ---- Stella's auto-detection (emucore/Cart.cxx), as facts rewritten here.

def _count_signature(image: bytes, signature: bytes, min_hits: int) -> bool:
    # Stella's search stops one position short of the end and, after a hit,
    # resumes one byte past the end of the match; both matter for min_hits > 1.
    hits, i, n = 0, 0, len(signature)
    last = len(image) - n
    while i < last:
        if image[i : i + n] == signature:
            hits += 1
            i += n
        if hits >= min_hits:
            return True
        i += 1
    return False


def _any_signature(image: bytes, signatures: list[bytes]) -> bool:
    return any(_count_signature(image, s, 1) for s in signatures)


def _is_superchip(image: bytes) -> bool:
    # SuperChip RAM hides the first 256 bytes of every 4K bank, which
    # assemblers fill with one value.
    return all(len(set(image[b : b + 256])) == 1 for b in range(0, len(image) - len(image) % 4096, 4096))


def _is_3f(image: bytes) -> bool:
    return _count_signature(image, bytes([0x85, 0x3F]), 2)  # STA $3F twice


def _is_3e(image: bytes) -> bool:
    return _count_signature(image, bytes([0x85, 0x3E, 0xA9, 0x00]), 1)  # STA $3E; LDA #0


def _is_e0(image: bytes) -> bool:
    return _any_signature(image, [bytes.fromhex(s) for s in ("8de01f", "8de05f", "8de9ff", "ade9ff", "adedff", "adf3bf")])


def _is_e7(image: bytes) -> bool:
    first = image[0x3800]
    if any(b != first for b in image[0x3800:0x3A00]):
        return False
    return any(b != first for b in image[0x3800 - 32 : 0x3800]) or any(b != first for b in image[0x3A00 : 0x3A20])


def _is_ua(image: bytes) -> bool:
    return _count_signature(image, bytes([0x8D, 0x40, 0x02]), 1)  # STA $240


def _is_cv(image: bytes) -> bool:
    return _any_signature(image, [bytes.fromhex("9dfff3"), bytes.fromhex("9900f4")])


def _is_fe(image: bytes) -> bool:
    return _any_signature(image, [bytes.fromhex(s) for s in ("2000d0c6c5", "20c3f8a582", "d0fb2073fe", "2000f084d6")])


def detect_bankswitch(image: bytes) -> str:
    """The bank-switching type Stella (as vendored in ALE 0.12.1) detects for an image.

    May return a type cule does not emulate (e.g. "3F", "E7"); raises RomError
    for a size no scheme has.
    """
    size = len(image)
    if size == 0:
        raise RomError("ROM image is empty")
    if size % 8448 == 0:
        return "AR"
    if size == 2048 or (size == 4096 and image[:2048] == image[2048:]):
        return "CV" if _is_cv(image) else "2K"
    if size == 4096:
        return "CV" if _is_cv(image) else "4K"
    if size == 8192:
        if _is_superchip(image):
            return "F8SC"
        if image[:4096] == image[4096:]:
            return "4K"
        for name, test in (("E0", _is_e0), ("3E", _is_3e), ("3F", _is_3f), ("UA", _is_ua), ("FE", _is_fe)):
            if test(image):
                return name
        return "F8"
    if size in (10240, 10495, 10496):
        return "DPC"
    if size == 12288:
        return "FASC"
    if size == 16384:
        for name, test in (("F6SC", _is_superchip), ("E7", _is_e7), ("3E", _is_3e), ("3F", _is_3f)):
            if test(image):
                return name
        return "F6"
    if size in (32768, 65536, 131072):
        fallback = {32768: "F4", 65536: "MB", 131072: "MC"}[size]
        if size == 32768 and _is_superchip(image):
            return "F4SC"
        return "3E" if _is_3e(image) else "3F" if _is_3f(image) else fallback
    if _is_3e(image):
        return "3E"
    if _is_3f(image):
        return "3F"
    raise RomError(_bad_size_message("ROM image", size))


def _bad_size_message(what: str, size: int) -> str:
    return (
        f"{what} is {size} bytes, a size none of cule's cartridge types has. Supported sizes: 2048 (2K), "
        f"4096 (4K), 8192 (F8, F8SC, E0, FE), 10240/10495/10496 (DPC), 16384 (F6, F6SC). "
        f"Is the file truncated? Re-copy it, or name a game id such as 'pong' to use ale-py's ROM."
    )
