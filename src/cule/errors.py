"""Errors raised by cule. Each message names the problem and what to do about it."""


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
    or not a state at all. Nothing was changed."""
