"""The CPU backend: builds cule._core.Emulator for a ROM with its properties."""
from __future__ import annotations

from .. import _core
from ..roms import Rom


def make_emulator(rom: Rom, num_envs: int, *, repeat_action_probability: float = 0.0,
                  max_num_frames_per_episode: int = 0) -> "_core.Emulator":
    if rom.game is None:
        raise ValueError(f"ROM {rom.path!r} is not one of ALE's games, so it has no rewards or terminals.")
    return _core.Emulator(rom.data, rom.bankswitch, rom.game, num_envs,
                          repeat_action_probability=repeat_action_probability,
                          max_num_frames_per_episode=max_num_frames_per_episode, **rom.properties)
