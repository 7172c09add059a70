"""The CPU backend: builds cule._core.Emulator for a ROM with its properties."""
from __future__ import annotations

from .. import _core
from ..games import BARE_GAME
from ..roms import Rom


def make_emulator(rom: Rom, num_envs: int, *, repeat_action_probability: float = 0.0,
                  max_num_frames_per_episode: int = 0) -> "_core.Emulator":
    """A ROM that is none of ALE's games (rom.game None) gets the bare console's game unit."""
    return _core.Emulator(rom.data, rom.bankswitch, rom.game or BARE_GAME, num_envs,
                          repeat_action_probability=repeat_action_probability,
                          max_num_frames_per_episode=max_num_frames_per_episode, **rom.properties)
