"""The checks of AtariVectorEnv's arguments that need no emulator: sizes, modes, devices, seeds, memory.

Each raises an error that names the argument, what it got and what it takes, before anything is allocated.
"""
from __future__ import annotations

import collections.abc
import os

import numpy as np
import torch
from gymnasium.vector import AutoresetMode

from . import _core

RESET_MODES = ("ale", "cache")
MAX_SEED = 2**31 - 1  # ALE's random_seed is a C int; -1 means "keep"
MAX_GYMNASIUM_SEED = 2**63 - 1  # gymnasium's envs hand a seed to SeedSequence, which takes any int >= 0


def autoreset_mode(value) -> AutoresetMode:
    if isinstance(value, AutoresetMode):
        mode = value
    else:
        try:
            mode = AutoresetMode(value)
        except ValueError:
            mode = None
    if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
        raise ValueError(f"autoreset_mode must be AutoresetMode.NEXT_STEP ('NextStep') or SAME_STEP ('SameStep'), "
                         f"got {value!r}")
    return mode


def check_arguments(*, num_envs, frameskip, stack_num, batch_size, num_threads, noop_max, reset_cache_size,
                    repeat_action_probability, reset_mode) -> None:
    """The checks of the constructor's arguments that need no ROM, in the order their errors take."""
    # Upper bounds: what the C++ fields hold (int32), and for the start cache what a seeded reset rebuilds in time
    # (each entry is ALE's reset sequence, some 6 ms and 120 KB).
    # (num_envs and batch_size are bounded by the memory estimate.)
    for name, value, low, high in (("num_envs", num_envs, 1, None), ("frameskip", frameskip, 1, 1 << 16),
                                   ("stack_num", stack_num, 1, 1 << 10), ("batch_size", batch_size, 0, None),
                                   ("num_threads", num_threads, 0, 1 << 12), ("noop_max", noop_max, 0, 2**31 - 1),
                                   ("reset_cache_size", reset_cache_size, 1, 10_000)):
        if not is_int(value) or value < low:
            raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
        if high is not None and value > high:
            raise ValueError(f"{name} must be at most {high}, got {value!r}")
    if batch_size > num_envs:
        raise ValueError(f"batch_size ({batch_size}) cannot exceed num_envs ({num_envs})")
    if not _is_real(repeat_action_probability) or not 0.0 <= repeat_action_probability <= 1.0:
        raise ValueError(f"repeat_action_probability must be a number in [0, 1], got {repeat_action_probability!r}")
    if reset_mode not in RESET_MODES:
        raise ValueError(f"reset_mode must be one of {RESET_MODES}, got {reset_mode!r}")


def is_int(value) -> bool:
    """An int of Python or numpy, not a bool (which Python counts as an int)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_real(value) -> bool:
    return is_int(value) or isinstance(value, (float, np.floating))


def check_flags(**flags) -> None:
    """Each a bool (or 0 or 1): bool() would take the string "False" as true."""
    for name, value in flags.items():
        if not isinstance(value, (bool, np.bool_)) and not (is_int(value) and value in (0, 1)):
            raise TypeError(f"{name} must be a bool, got {value!r}")


def check_types(*, flags: dict, img_height, img_width, max_num_frames_per_episode, thread_affinity_offset) -> None:
    """The arguments a plain conversion would take wrongly: bool("False") is True, int(84.7) is 84."""
    check_flags(**flags)
    for name, value in (("img_height", img_height), ("img_width", img_width)):
        if value is not None and (not is_int(value) or not 1 <= value <= _core.max_obs_side):
            raise ValueError(f"{name} must be an int in 1..{_core.max_obs_side} (or None: the native size), "
                             f"got {value!r}")
    if max_num_frames_per_episode is not None and not is_int(max_num_frames_per_episode):
        raise ValueError(f"max_num_frames_per_episode must be an int (0, negative or None: no limit), "
                         f"got {max_num_frames_per_episode!r}")
    if not is_int(thread_affinity_offset):
        raise ValueError(f"thread_affinity_offset must be an int, got {thread_affinity_offset!r}")


def frame_limit(max_num_frames_per_episode) -> int:
    """The episode's frame limit as the emulator takes it (0: none)."""
    limit = int(max_num_frames_per_episode) if max_num_frames_per_episode and max_num_frames_per_episode > 0 else 0
    if limit > 2**31 - 1:
        raise ValueError(f"max_num_frames_per_episode must be at most {2**31 - 1} (or None/0: no limit), "
                         f"got {max_num_frames_per_episode!r}")
    return limit


def checked_device(given) -> torch.device:
    try:
        device = torch.device(given)
    except (RuntimeError, TypeError):  # "gpu", None
        device = None
    if device is None or device.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda[:N]', got {given!r}")
    if device.type == "cuda":
        from .backends.cuda import check_cuda
        check_cuda(device)
    return device


def check_game_options(unit: str, info: dict, mode, difficulty) -> None:
    for name, value, key in (("mode", mode, "modes"), ("difficulty", difficulty, "difficulties")):
        # ALE only checks a difficulty that is asked for (backgammon lists only 3, yet starts at 0).
        if value is not None and (not is_int(value) or value not in info[key]):
            raise ValueError(f"{unit} has {key} {info[key]}, not {value!r}; leave {name}=None for the default")


def reset_seeds(seed, powered: np.ndarray, gymnasium: bool = False) -> np.ndarray:
    """int64 seeds of the environments a reset resets (`powered`: bool, whether each holds a console yet), -1
    where None keeps a console and its RNG. One never powered on draws a fresh seed, as ale-py's random_device
    would. gymnasium's AtariEnv turns a seed into (numpy seed, ALE seed) with SeedSequence(seed); ALE gets the
    second, so there any seed SeedSequence takes will do (as int64)."""
    seeds = given_seeds(seed, len(powered), MAX_GYMNASIUM_SEED if gymnasium else MAX_SEED)
    fresh = (seeds < 0) & ~powered
    if fresh.any():
        seeds[fresh] = np.random.SeedSequence().generate_state(int(fresh.sum())) & MAX_SEED
    if gymnasium:
        seeds = np.array([np.random.SeedSequence(int(s)).generate_state(2)[1] if s >= 0 else -1 for s in seeds],
                         dtype=np.int64)
    return seeds


def given_seeds(seed, count: int, high: int = MAX_SEED) -> np.ndarray:
    """int64 [count] seeds in [0, high] from reset's `seed` argument, -1 for None."""
    why = " (ALE's random_seed is a C int)" if high == MAX_SEED else ""
    if seed is None:
        return np.full(count, -1, dtype=np.int64)
    if is_int(seed):
        if not 0 <= int(seed) <= high - (count - 1):
            raise ValueError(f"seeds must lie in [0, {high}]{why}: seed {seed!r} seeds {seed!r} .. "
                             f"{int(seed) + count - 1}")
        return np.arange(int(seed), int(seed) + count, dtype=np.int64)
    if isinstance(seed, (list, tuple, np.ndarray, torch.Tensor)):
        seeds = np.asarray(seed.cpu() if isinstance(seed, torch.Tensor) else seed)
        if seeds.shape != (count,) or not np.issubdtype(seeds.dtype, np.integer):
            raise ValueError(f"seed must be an int or {count} integer seeds (one per environment reset), "
                             f"got shape {seeds.shape} dtype {seeds.dtype}")
        # compared before any conversion: a uint64 above 2**63 must not wrap to a negative int64
        if seeds.size and (seeds.min() < 0 or seeds.max() > high):
            raise ValueError(f"seeds must lie in [0, {high}]{why}, got {seeds.min()}..{seeds.max()}")
        return seeds.astype(np.int64)
    raise TypeError(f"seed must be None, an int or an array of ints, got {type(seed).__name__}")


def reset_mask(options, num_envs: int) -> np.ndarray:
    """The ids (int32) a reset with these options resets: all, or those of options["reset_mask"]."""
    if options is not None and not isinstance(options, collections.abc.Mapping):
        raise TypeError(f"options must be a dict such as {{'reset_mask': mask}}, got {type(options).__name__}")
    unknown = set(options or ()) - {"reset_mask"}
    if unknown:  # ale-py's vector env reads reset_mask alone; anything else would be ignored without a word
        raise ValueError(f"reset() knows the option 'reset_mask' only, got {sorted(unknown)}")
    if not options or "reset_mask" not in options:
        return np.arange(num_envs, dtype=np.int32)
    mask = options["reset_mask"]
    if isinstance(mask, torch.Tensor):
        mask = mask.cpu().numpy()
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
        raise TypeError(f"reset_mask must be a boolean array, got {type(mask).__name__} "
                        f"with dtype {getattr(mask, 'dtype', None)}")
    if mask.shape != (num_envs,):
        raise ValueError(f"reset_mask must have shape {(num_envs,)}, got {mask.shape}")
    return np.flatnonzero(mask).astype(np.int32)


def env_ids(ids, name: str, num_envs: int) -> np.ndarray:
    """Environment ids (int32) from an int, a sequence, an array or a tensor (None: all)."""
    if ids is None:
        return np.arange(num_envs, dtype=np.int32)
    if isinstance(ids, torch.Tensor):
        ids = ids.cpu().numpy()
    array = np.atleast_1d(np.asarray(ids))
    if array.size == 0:
        raise ValueError(f"{name} is empty: name at least one environment")
    if array.ndim != 1 or not (np.issubdtype(array.dtype, np.integer) and array.dtype != np.bool_):
        raise TypeError(f"{name} must be an int or a 1-D sequence of ints, got {ids!r}")
    if array.min() < 0 or array.max() >= num_envs:
        raise ValueError(f"{name} must lie in [0, {num_envs - 1}], got {array.min()}..{array.max()}")
    return array.astype(np.int32)


def bytes_per_env(stack: int, height: int, width: int, channels: int) -> int:
    """Upper bound of one environment's memory: console and ALE state with its snapshot and RNGs (9 KB,
    16 KB allowed), two TIA frames and three processed frames at the largest (PAL, RGB) size (the third
    is the resize's memo, with one observation), and three observation stacks (the ring, SameStep's final
    observations, the batch returned)."""
    return 16_000 + 3 * 250 * 160 * 3 + 2 * 250 * 160 + (3 * stack + 1) * height * width * channels


def estimate_memory(num_envs: int, stack: int, height: int, width: int, channels: int, cache_size: int = 0):
    """Refuses batches that would not fit in memory before allocating anything (reset_mode "cache"'s start
    states, one console and two screens each, included)."""
    per_env = bytes_per_env(stack, height, width, channels)
    need = num_envs * per_env + cache_size * (2 * 250 * 160 + 2 * height * width * channels + 1024)
    try:
        available = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return
    if need > available:
        advice = ("use fewer environments" if per_env < available else
                  f"one environment alone does not fit, with observations of {stack} x {height} x {width} x "
                  f"{channels} bytes: use a smaller img_height and img_width or a shorter stack")
        raise MemoryError(f"{num_envs} environments need about {need / 2**30:.1f} GiB "
                          f"({per_env / 2**10:.0f} KiB each) but this machine has {available / 2**30:.1f} GiB; "
                          f"{advice}")
