"""Errors raised by cule. Each message names the problem and what to do about it."""
from __future__ import annotations


class RomError(ValueError):
    """A ROM could not be used: missing, unreadable, empty, or of a size no cartridge has."""


class UnknownGameError(RomError):
    """A game name that is neither an ALE game id, a gymnasium ALE name, nor a ROM path."""


class UnsupportedCartridgeError(RomError):
    """The ROM's bank-switching scheme is one cule does not emulate."""


class UnknownRomWarning(UserWarning):
    """A ROM that is none of ALE's games runs as a bare console: reward 0, never terminated, all 18 actions."""


class CudaUnavailableError(RuntimeError):
    """device='cuda' was asked for on a machine or install that cannot run it; the message names what is missing."""


class StateError(ValueError):
    """A saved state that this environment cannot restore: another game, other options, another format version,
    not a state at all, or a row whose payload is damaged or holds a value the emulator never makes. Nothing was
    changed. ``row``, ``part`` and ``field`` name what was refused when it is one row's payload (else None)."""

    def __init__(self, message: str, *, row: int | None = None, part: str | None = None, field: str | None = None):
        super().__init__(message)
        self.row, self.part, self.field = row, part, field
