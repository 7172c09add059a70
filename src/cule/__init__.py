"""cule: a batched Atari 2600 emulator that reproduces ALE (ale-py 0.12.1) exactly."""
from .errors import (CudaUnavailableError, RomError, StateError, UnknownGameError, UnknownRomWarning,
                     UnsupportedCartridgeError)
from .games import ATARI_57
from .roms import Rom, detect_bankswitch, list_games, load_rom
from .make import make
from .vector_env import AtariVectorEnv
from .atari_env import AtariEnv, register_envs

register_envs()  # gymnasium.make("cule/Pong-v5"), gymnasium.make_vec("cule/Pong-v5", num_envs=...)

__all__ = [
    "ATARI_57",
    "AtariEnv",
    "AtariVectorEnv",
    "CudaUnavailableError",
    "Rom",
    "RomError",
    "StateError",
    "UnknownGameError",
    "UnknownRomWarning",
    "UnsupportedCartridgeError",
    "detect_bankswitch",
    "make",
    "list_games",
    "load_rom",
    "register_envs",
]
__version__ = "0.1.0"
