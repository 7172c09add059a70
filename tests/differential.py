"""cule against ale-py, side by side, frame by frame (a helper module for tests).

``compare`` runs one game in both with the same seeded random actions from the
full action set (frame_skip 1, no sticky actions) and stops at the first step
where anything observable differs: RAM, screen (palette indices), reward,
game over, lives, or the two frame counters. Step ``t`` holds the state after
the t-th act() (t = 0: after loading the ROM); when the game is over, or every
``reset_every`` steps, both run reset_game() before the state is read.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import cule
import cule.games
from ale_oracle import N_ACTIONS, ale_interface
from cule.blocks import make_emulator


@dataclass
class Result:
    game: str
    frames: int                # steps compared (including step 0)
    resets: int
    mismatch: int | None       # first differing step, None if all matched
    what: str                  # description of the difference, "" if none


def _describe_screen(ours: np.ndarray, theirs: np.ndarray) -> str:
    rows, cols = np.nonzero(ours != theirs)
    return (f"screen: {rows.size} px differ in rows {rows.min()}-{rows.max()}, first ({rows[0]},{cols[0]}): "
            f"ours {ours[rows[0], cols[0]]} theirs {theirs[rows[0], cols[0]]}")


def _difference(emu, ale, reward_ours, reward_theirs) -> str:
    problems = []
    ram_o, ram_t = emu.ram(0), ale.getRAM()
    if not np.array_equal(ram_o, ram_t):
        idx = np.nonzero(ram_o != ram_t)[0]
        problems.append(f"ram: {idx.size} bytes differ, first ${0x80 + idx[0]:02X}: ours {ram_o[idx[0]]} theirs {ram_t[idx[0]]}")
    scr_o, scr_t = emu.screen(0), ale.getScreen()
    if scr_o.shape != scr_t.shape:
        problems.append(f"screen shape ours {scr_o.shape} theirs {scr_t.shape}")
    elif not np.array_equal(scr_o, scr_t):
        problems.append(_describe_screen(scr_o, scr_t))
    if reward_ours != reward_theirs:
        problems.append(f"reward ours {reward_ours} theirs {reward_theirs}")
    if emu.game_over(0) != ale.game_over():
        problems.append(f"game_over ours {emu.game_over(0)} theirs {ale.game_over()}")
    if emu.lives(0) != ale.lives():
        problems.append(f"lives ours {emu.lives(0)} theirs {ale.lives()}")
    counters = (ale.getFrameNumber(), ale.getEpisodeFrameNumber())
    if tuple(emu.counters(0)) != counters:
        problems.append(f"frame counters ours {tuple(emu.counters(0))} theirs {counters}")
    return "; ".join(problems)


def compare(game: str, frames: int, *, action_seed: int = 0, reset_every: int | None = None, seed: int = 0,
            mode: int | None = None, rom: str | None = None) -> Result:
    """``rom``: an image to run under ``game``'s settings instead of the bundled one."""
    ale = ale_interface(game, seed=seed, mode=mode, rom=rom)
    emu = make_emulator(cule.load_rom(rom or game), 1)
    # As ale_interface: loadROM in the default mode, then setMode and reset_game.
    emu.load(0, seed, cule.games.game_info(game)["default_mode"], 0)
    if mode is not None:
        emu.set_mode(0, mode, 0)
        emu.reset_game(0)
    actions = np.random.default_rng(action_seed).integers(0, N_ACTIONS, size=frames)
    resets = 0
    what = _difference(emu, ale, 0, 0)
    if what:
        return Result(game, 1, 0, 0, what)
    for t in range(1, frames + 1):
        a = int(actions[t - 1])
        reward_theirs = ale.act(a)
        reward_ours = emu.act(0, a)
        over = ale.game_over()
        if over or (reset_every and t % reset_every == 0):
            # compare the terminal step's reward before resetting
            if reward_ours != reward_theirs or emu.game_over(0) != over:
                return Result(game, t + 1, resets, t, f"before reset: reward ours {reward_ours} theirs {reward_theirs}, "
                              f"game_over ours {emu.game_over(0)} theirs {over}")
            ale.reset_game()
            emu.reset_game(0)
            resets += 1
            reward_ours = reward_theirs = 0
        what = _difference(emu, ale, reward_ours, reward_theirs)
        if what:
            return Result(game, t + 1, resets, t, what)
    return Result(game, frames + 1, resets, None, "")
