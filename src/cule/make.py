"""cule.make: gymnasium's ALE/<Game>-v5 environments, batched, as torch tensors."""
from __future__ import annotations

import torch

from .vector_env import AtariVectorEnv


def make(env_id: str | list[str] | dict[str, int], num_envs: int | None = None, *, device: str | torch.device = "cpu",
         mode: int | None = None, difficulty: int | None = None, obs_type: str = "rgb", frameskip: int = 4,
         repeat_action_probability: float = 0.25, full_action_space: bool | None = None,
         max_num_frames_per_episode: int | None = 108000, num_threads: int = 0, continuous: bool = False,
         continuous_action_threshold: float = 0.5) -> AtariVectorEnv:
    """`num_envs` (default 1) copies of ``gymnasium.make(env_id)`` for an ALE game, stepped together.

    The defaults are those of ``ALE/<Game>-v5``: RGB observations of the native
    screen (210x160, 250x160 for PAL games), frameskip 4 with rewards summed,
    sticky actions 0.25, the minimal action set, a 108,000-frame episode cap
    (``truncated``). Each step is gymnasium's ``AtariEnv.step``: the observation
    is the last frame, ``terminated`` is the game's end and ``truncated`` ALE's
    frame limit. ``reset(seed=s)`` seeds environment i as
    ``gymnasium.make(env_id).reset(seed=s + i)``; finished environments are
    reset by the following step (gymnasium's NextStep autoreset). ``info`` has
    lives, episode_frame_number and frame_number. ``continuous=True`` takes
    gymnasium's continuous actions, (radius, theta, fire) floats
    [num_envs, 3] (cule.continuous).

    Several ids (a list, `num_envs` each, or a dict of counts) make one mixed
    batch (cule.mixed): ALE's full action set for every game, ``info["game"]``
    naming each environment's game in ``env.games``; the games' native screens
    must then have one size.
    """
    several = isinstance(env_id, (list, tuple, dict))
    if num_envs is None and not isinstance(env_id, dict):  # a dict gives the counts itself
        num_envs = 1
    if full_action_space is None:
        full_action_space = several
    if obs_type not in ("rgb", "grayscale"):
        raise ValueError(f"obs_type must be 'rgb' or 'grayscale', got {obs_type!r} ('ram': use env.get_ram())")
    return AtariVectorEnv(
        env_id, num_envs, num_threads=num_threads, max_num_frames_per_episode=max_num_frames_per_episode or 0,
        repeat_action_probability=repeat_action_probability, full_action_space=full_action_space,
        img_height=None, img_width=None, grayscale=obs_type == "grayscale", stack_num=1, frameskip=frameskip,
        maxpool=False, noop_max=0, episodic_life=False, reward_clipping=False, use_fire_reset=False,
        device=device, mode=mode, difficulty=difficulty, continuous=continuous,
        continuous_action_threshold=continuous_action_threshold, _gymnasium=True)
