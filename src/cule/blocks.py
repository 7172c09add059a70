"""One game's block of a batch: its ROM, the host emulator holding its environments, and the key of its states.

An ``AtariVectorEnv`` of one game has one block; a batch of several games
(``cule.mixed``) has one per game, side by side in batch order. The backend
then steps the blocks' environments (``cule.backends``).
"""
from __future__ import annotations

import warnings

import numpy as np

from . import _core
from . import state as state_format
from .checks import check_game_options
from .errors import UnknownRomWarning
from .games import BARE_GAME, game_info
from .palettes import palette_for
from .roms import Rom, load_rom

FIRE = 1  # ALE's action id


def make_emulator(rom: Rom, num_envs: int, *, repeat_action_probability: float = 0.0,
                  max_num_frames_per_episode: int = 0) -> "_core.Emulator":
    """The host batch for a ROM with its properties. A ROM that is none of ALE's games (rom.game None)
    gets the bare console's game unit."""
    return _core.Emulator(rom.data, rom.bankswitch, rom.game or BARE_GAME, num_envs,
                          repeat_action_probability=repeat_action_probability,
                          max_num_frames_per_episode=max_num_frames_per_episode, **rom.properties)


class GameBlock:
    """`count` environments of one game: the ROM (``rom``, ``game``: None for a ROM that is none of ALE's),
    ``mode``, ``difficulty``, ``action_set`` (ALE ids), the configured ``emulator`` and the observation size.

    `settings` are the vector env's options (cule._core.vector_options) common to every block; the block adds
    its own (observation size, FIRE, modes). `key` is what else decides a saved state's meaning; with the
    settings and the ROM it keys the block's state rows.
    """

    def __init__(self, game: str, count: int, *, mode, difficulty, full_action_space: bool,
                 action_set: np.ndarray | None, repeat_action_probability: float, emulator_limit: int,
                 img_height: int | None, img_width: int | None, settings: dict, key: dict, warn_depth: int = 1):
        self.rom = load_rom(game)
        self.game = self.rom.game
        self.count = count
        if self.game is None:
            # ALE refuses such ROMs; cule runs them (homebrew, hacks, test carts), but says so, at the line that
            # built the env
            warnings.warn(f"ROM {self.rom.path!r} (md5 {self.rom.md5}) is not one of ALE's games: it runs as a bare "
                          f"console (reward always 0, never terminated, all 18 actions, mode 0)",
                          UnknownRomWarning, stacklevel=2 + warn_depth)
        unit = self.game or BARE_GAME
        info = game_info(unit)
        check_game_options(unit, info, mode, difficulty)
        self.mode = info["default_mode"] if mode is None else int(mode)
        self.difficulty = 0 if difficulty is None else int(difficulty)
        # ALE's getLegalActionSet (all 18 but for a few games) or getMinimalActionSet; a mixed batch gives its own
        own = np.array(info["legal_actions"] if full_action_space else info["minimal_actions"], dtype=np.int32)
        self.action_set = own if action_set is None else np.asarray(action_set, dtype=np.int32)
        self.emulator = make_emulator(self.rom, count, repeat_action_probability=repeat_action_probability,
                                      max_num_frames_per_episode=emulator_limit)
        self.screen_height = self.emulator.screen_height
        self.img_height = self.screen_height if img_height is None else int(img_height)
        self.img_width = 160 if img_width is None else int(img_width)
        self.is_pal = self.emulator.is_pal
        settings = dict(settings, img_height=self.img_height, img_width=self.img_width,
                        has_fire=FIRE in own, default_mode=info["default_mode"], mode=self.mode,
                        difficulty=self.difficulty)
        settings = {name: settings[name] for name in _core.vector_options}  # in the declared order
        rgb, gray = palette_for(self.is_pal)
        self.emulator.configure_vector(rgb, gray, **settings)
        self.state_name = self.game or self.rom.md5
        self.state_key = state_format.state_key(dict(
            settings, **key, rom=self.rom.md5, cart=self.emulator.cart, layout=self.emulator.state_bytes(True),
            full_action_space=bool(full_action_space)))

    @property
    def name(self) -> str:
        """The game id, or the md5 of a ROM that is none of ALE's games."""
        return self.state_name

    def header(self, with_rng: bool) -> np.ndarray:
        """The 64-byte header of this block's state rows (cule.state), the digest still zero."""
        return state_format.header(self.state_name, self.state_key, self.emulator.state_bytes(with_rng), with_rng)

    def read_headers(self, rows) -> bool:
        """Checks rows' headers against this block's game, options and layout; returns whether they hold the
        sticky-action RNG. Raises StateError."""
        return state_format.read_headers(rows, self.state_name, self.state_key, self.emulator.state_bytes)

    def rgb(self, screens: np.ndarray) -> np.ndarray:
        """RGB of palette indices [..., H, 160] with this block's palette (NTSC or PAL)."""
        return palette_for(self.is_pal)[0][screens]

    def gray(self, screens: np.ndarray) -> np.ndarray:
        """ALE's grayscale (the palette's luminance) of palette indices [..., H, 160], NTSC or PAL."""
        return palette_for(self.is_pal)[1][screens]


def blocks_of(blocks: list[GameBlock], backend, ids: np.ndarray) -> list[tuple[GameBlock, np.ndarray]]:
    """(block, positions in ids of its environments) for each block with environments among ids; `backend`
    splits a batch of several (cule.mixed.MixedBackend.split)."""
    if len(blocks) == 1:
        return [(blocks[0], np.arange(len(ids)))]
    return [(blocks[k], positions) for k, positions, _ in backend.split(ids)]


def rgb_of(blocks: list[GameBlock], backend, screens: np.ndarray) -> np.ndarray:
    """RGB, uint8 [N, H, 160, 3], of every environment's palette indices [N, H, 160], each with its game's
    palette."""
    rgb = np.zeros((*screens.shape, 3), np.uint8)
    for block, rows in blocks_of(blocks, backend, np.arange(len(screens))):
        rgb[rows] = block.rgb(screens[rows])
    return rgb
