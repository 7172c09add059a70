"""NVIDIA CuLE's environment class, ``torchcule.atari.Env``, on cule's emulator.

A program written for CuLE moves over by changing one import::

    from torchcule.atari import Env as AtariEnv      # before
    from cule.torchcule import Env as AtariEnv       # after

    env = AtariEnv("PongNoFrameskip-v4", 1200, color_mode="gray", repeat_prob=0.0, device="cuda",
                   rescale=True, episodic_life=True, frameskip=4)
    env.train()
    obs = env.reset(initial_steps=4000, verbose=True)  # uint8 [N, 84, 84, 1]
    obs, reward, done, info = env.step(env.sample_random_actions())

The arguments, methods, shapes and dtypes are CuLE's (its last release,
NVlabs/cule ``torchcule/atari/env.py``): observations ``uint8 [N, H, W, C]``
(no frame stack: CuLE's examples stack frames themselves), rewards
``float32 [N]`` summed over the frameskip, ``done`` ``bool [N]``, and
``info = {"ale.lives": int32 [N]}``. The semantics are CuLE's as well:

- an environment whose game ends is reset within the step, which returns
  its new episode's first observation with ``done`` set;
- ``episodic_life=True`` sets ``done`` when a life is lost and plays on
  (the game is reset only when it ends);
- episodes start from cached start states, ``max_noop_steps`` of them, each
  ALE's reset followed by up to ``max_noop_steps`` no-ops (cule's
  ``reset_mode="cache"``);
- ``reset`` in training mode plays ``ceil(initial_steps / frameskip)``
  random steps, so the environments' episodes are out of step;
- each observation is the pixel-wise maximum of the step's last two frames.

What differs, because cule reproduces ALE where CuLE approximated it:

- ``rescale=True`` shrinks the screen to 84x84 with OpenCV's ``INTER_AREA``
  arithmetic, as ale-py's vector env does, where CuLE interpolated
  bilinearly; emulation, rewards and lives are exactly ALE's, and so are
  the episodes' starts, but a start taken from the cache draws nothing from
  the sticky-action RNG where ALE's reset frames would, so with sticky
  actions the stream runs offset from ale-py's;
- FIRE is pressed at every reset of games that have it, in evaluation mode
  too (CuLE pressed it only in training mode), as ALE does;
- ``max_episode_length`` caps an episode's emulated frames (``done`` is set
  where it is reached, as ALE's truncation). CuLE accepted the argument and
  did not apply it; its default here is ALE's 108,000 frames rather than
  10,000, which would cut off long games;
- the frameskip is fixed once the environments have been reset, so
  ``train(frameskip)`` with a new value after ``reset()`` raises an error
  (before it, the environments are rebuilt);
- ``get_states`` and ``set_states`` take and give cule's saved-state rows
  (``AtariVectorEnv.clone_state``), not CuLE's ``State`` objects;
- player B's actions are not supported: ``step(actions, player_b)`` raises;
- ``to(device)`` raises: make the Env on the device it is to run on.

``env.vector`` is the ``cule.AtariVectorEnv`` underneath, for everything else
(RAM, screens, saved states, seeds).
"""
from __future__ import annotations

import math

import numpy as np
import torch
from gymnasium import spaces

from . import checks
from .vector_env import AtariVectorEnv

# ALE's cap of an episode's emulated frames (v5's max_num_frames_per_episode)
ALE_FRAME_CAP = 108_000


class Env:
    """CuLE's ``torchcule.atari.Env``: `num_envs` copies of `env_name`, stepped together on `device`.

    Args:
        env_name: the game, by any name cule takes ("PongNoFrameskip-v4", "ALE/Pong-v5", "pong", a path).
        num_envs: environments in the batch.
        color_mode: "rgb" or "gray".
        device: torch device of the emulators and of every returned tensor ("cpu", "cuda", "cuda:N").
        rescale: 84x84 observations (grayscale only) instead of the native screen.
        frameskip: emulated frames per step (``train()`` sets 4 by default).
        repeat_prob: sticky actions' probability of repeating the previous action.
        episodic_life: ``done`` when a life is lost (the game plays on).
        max_noop_steps: cached start states, and the most no-ops after ALE's reset in them.
        max_episode_length: the most emulated frames of an episode (None: no cap).
        clip_rewards: rewards as their sign (an argument of CuLE's earlier releases).
    """

    def __init__(self, env_name, num_envs, color_mode="rgb", device="cpu", rescale=False, frameskip=1,
                 repeat_prob=0.25, episodic_life=False, max_noop_steps=30, max_episode_length=ALE_FRAME_CAP,
                 *, clip_rewards=False):
        if color_mode not in ("rgb", "gray"):
            raise ValueError(f"color_mode must be 'rgb' or 'gray', got {color_mode!r}")
        checks.check_flags(rescale=rescale, episodic_life=episodic_life, clip_rewards=clip_rewards)
        if color_mode == "rgb" and rescale:
            raise ValueError("rescale=True is only valid with color_mode='gray', as in CuLE")
        if not checks.is_int(max_noop_steps) or max_noop_steps < 0:
            raise ValueError(f"max_noop_steps must be an int >= 0, got {max_noop_steps!r}")
        self.env_name, self.num_envs, self.color_mode = env_name, num_envs, color_mode
        self.rescale, self.repeat_prob = bool(rescale), repeat_prob
        self.episodic_life, self.clip_rewards = bool(episodic_life), bool(clip_rewards)
        self.max_noop_steps, self.max_episode_length = max_noop_steps, max_episode_length
        self.is_training = False
        self.num_channels = 3 if color_mode == "rgb" else 1
        self.vector = self._build(device, frameskip)
        self.height, self.width = self.vector.single_observation_space.shape[1:3]
        self.action_set = torch.as_tensor(self.vector.action_set, dtype=torch.uint8, device=self.device)
        self.action_space = spaces.Discrete(len(self.vector.action_set))
        self.observation_space = spaces.Box(0, 255, (self.num_channels, self.height, self.width), np.uint8)
        self._started = False

    @property
    def device(self) -> torch.device:
        return self.vector.device

    @property
    def frameskip(self) -> int:
        return self.vector.frameskip

    def _build(self, device, frameskip) -> AtariVectorEnv:
        return AtariVectorEnv(
            self.env_name, self.num_envs, device=device, grayscale=self.color_mode == "gray",
            img_height=84 if self.rescale else None, img_width=84 if self.rescale else None, stack_num=1,
            frameskip=frameskip, maxpool=True, repeat_action_probability=self.repeat_prob,
            reward_clipping=self.clip_rewards, life_loss_info=self.episodic_life,
            noop_max=self.max_noop_steps, reset_mode="cache", reset_cache_size=max(1, self.max_noop_steps),
            max_num_frames_per_episode=self.max_episode_length, autoreset_mode="SameStep")

    # ---- CuLE's methods

    def train(self, frameskip=4):
        """Training mode: `frameskip` frames a step, and ``reset`` plays its initial random steps."""
        if frameskip != self.frameskip:
            if self._started:
                raise RuntimeError(f"the frameskip is {self.frameskip} since reset(); cule fixes it once the "
                                   f"environments have reset: call train({frameskip}) before reset(), or make "
                                   f"the Env with frameskip={frameskip}")
            vector = self._build(self.device, frameskip)  # built first: a refused frameskip changes nothing
            self.vector.close()
            self.vector = vector
        self.is_training = True

    def eval(self):
        """Evaluation mode: ``reset`` plays no initial steps."""
        self.is_training = False

    def minimal_actions(self) -> torch.Tensor:
        """The game's action set as ALE action ids, uint8 on the env's device."""
        return self.action_set

    def sample_random_actions(self, asyn=False) -> torch.Tensor:
        """One uniformly drawn action index per environment, uint8 [num_envs] on the env's device."""
        return torch.randint(len(self.action_set), (self.num_envs,), device=self.device, dtype=torch.uint8)

    def screen_shape(self) -> tuple[int, int]:
        return self.height, self.width

    def reset(self, seeds=None, initial_steps=50, verbose=False, asyn=False) -> torch.Tensor:
        """Resets every environment (environment i with ``seeds[i]``; None: seeds drawn with torch's RNG) and, in
        training mode, plays ``ceil(initial_steps / frameskip)`` random steps. Returns the observations."""
        if seeds is None:
            seeds = torch.randint(np.iinfo(np.int32).max, (self.num_envs,), dtype=torch.int64)
        obs, info = self.vector.reset(seed=_on_host(seeds))
        self._started = True
        self.observations, self.lives = self._frames(obs), info["lives"]
        if self.is_training:
            steps = range(math.ceil(initial_steps / self.frameskip))
            if verbose:
                from tqdm import tqdm
                steps = tqdm(steps)
            for _ in steps:
                self.step(self.sample_random_actions())
        return self.observations

    def step(self, player_a_actions, player_b_actions=None, asyn=False):
        """Plays one action index per environment; returns (observations, rewards, done, info) as CuLE does."""
        if player_b_actions is not None:
            raise ValueError("cule plays player A only: call step(actions) without player B's actions")
        if not self._started:
            raise RuntimeError("call reset() before step()")
        actions = torch.as_tensor(player_a_actions)
        if actions.dim() > 1 and actions.shape[0] == actions.numel() == self.num_envs:
            actions = actions.reshape(-1)  # CuLE took [N, 1], as multinomial(1) draws them
        if actions.dtype == torch.uint8:
            actions = actions.long()
        obs, rewards, terminated, truncated, info = self.vector.step(actions)
        self.observations = self._frames(obs)
        self.lives = info["lives"]
        done = terminated | truncated
        return self.observations, rewards.to(torch.float32), done, {"ale.lives": self.lives}

    def get_states(self, indices) -> torch.Tensor:
        """Environments `indices`' saved states: cule's rows (``AtariVectorEnv.clone_state``)."""
        return self.vector.clone_state(_on_host(indices))

    def set_states(self, indices, states) -> None:
        """Puts rows from get_states() back into environments `indices`."""
        self.vector.restore_state(states, _on_host(indices))

    def to(self, device):
        """CuLE moved its emulators between devices; cule's live where they were made."""
        raise NotImplementedError(f"cule's Env stays on {self.device}: make a new Env with device={str(device)!r} "
                                  f"(get_states() and set_states() carry environments' states over)")

    def close(self):
        self.vector.close()

    # ---- internals

    def _frames(self, obs: torch.Tensor) -> torch.Tensor:
        """cule's [N, 1, H, W] (grey) or [N, 1, H, W, 3] (RGB) as CuLE's [N, H, W, C]."""
        return obs[:, 0].unsqueeze(-1) if self.num_channels == 1 else obs[:, 0]


def _on_host(values):
    """CuLE's seeds and indices, often tensors on the env's device, as the vector env's checks take them."""
    return values.cpu().numpy() if isinstance(values, torch.Tensor) else values
