"""Environments for the trainers: cule's AtariVectorEnv, or a tiny on-device sanity task.

Both are gymnasium vector envs returning (obs uint8 [N, *obs_shape], reward
[N], terminated [N], truncated [N], info) as torch tensors on the training
device. A trainer reads what it needs of one through EnvContract.of(env):
nothing is assumed about the game or probed by name.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from gymnasium.spaces import Box, Discrete
from gymnasium.vector import AutoresetMode

from cule.games import ATARI_57


@dataclass(frozen=True)
class EnvContract:
    """What a trainer needs to know of its environment, as the environment declares it."""

    obs_shape: tuple[int, ...]  # one observation: (stacked frames, height, width), uint8
    n_actions: int              # actions are indices 0..n_actions - 1
    frameskip: int              # emulated frames per step (the trainers count frames)
    # True: the step that ends an episode already returns the next one's first observation (SameStep
    # autoreset). False (NextStep): the step after it only resets, and its action is ignored.
    same_step_reset: bool

    @classmethod
    def of(cls, env) -> "EnvContract":
        return cls(tuple(env.single_observation_space.shape), int(env.single_action_space.n), int(env.frameskip),
                   env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP)


class SanityTask:
    """The sanity task: the frame shows a bright block on the left or the right half; action 0 is right for
    left, 1 for right. One-step episodes, reward 1 for the right answer, 0 otherwise: a policy that reads the
    pixels reaches a mean return near 1, chance is 0.5.

    Every observation is an episode's first, so, as in AtariVectorEnv's stack after a reset, only the newest
    of its 4 frames is drawn and the older three are zeros (a replay that rebuilds stacks from single
    frames gives back exactly what the agent saw). The step that ends an episode already returns the next
    one's first observation: there is no reset-only step as with NextStep autoreset."""

    frameskip = 1
    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}
    single_observation_space = Box(0, 255, (4, 84, 84), np.uint8)
    single_action_space = Discrete(2)

    def __init__(self, num_envs: int, device: str | torch.device = "cpu", seed: int = 0):
        self.num_envs = num_envs
        self.device = torch.device(device)
        self.generator = torch.Generator(device=self.device).manual_seed(seed)
        self.side = torch.zeros(num_envs, dtype=torch.long, device=self.device)

    def _observe(self) -> torch.Tensor:
        self.side = torch.randint(0, 2, (self.num_envs,), generator=self.generator, device=self.device)
        obs = torch.zeros(self.num_envs, *self.single_observation_space.shape, dtype=torch.uint8, device=self.device)
        left = self.side == 0
        obs[left, -1, 20:60, 5:35] = 255
        obs[~left, -1, 20:60, 49:79] = 255
        return obs

    def reset(self, seed: int | None = None):
        if seed is not None:
            self.generator.manual_seed(seed)
        return self._observe(), {}

    def step(self, actions: torch.Tensor):
        reward = (actions.to(self.device) == self.side).to(torch.int32)
        done = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)
        return self._observe(), reward, done, torch.zeros_like(done), {}

    def close(self):
        pass


def game_list(game: str) -> list[str]:
    """The games of a trainer's --game: comma-separated ids ("pong,breakout"), or "atari57" for IMPALA's 57."""
    if game.strip() == "atari57":
        return list(ATARI_57)
    games = [g.strip() for g in game.split(",") if g.strip()]
    if not games:
        raise ValueError(f"--game {game!r} names no game")
    return games


def split_evenly(games: list[str], num_envs: int) -> dict[str, int]:
    """{game: environments}: num_envs shared out as evenly as the division allows, the first games getting one
    more."""
    if num_envs < len(games):
        raise ValueError(f"{num_envs} environments cannot play {len(games)} games: every game needs at least one "
                         f"(raise --num-envs)")
    share, extra = divmod(num_envs, len(games))
    return {g: share + (i < extra) for i, g in enumerate(games)}


def make_env(game: str, num_envs: int, device: str, seed: int, num_threads: int = 0, reset_mode: str = "ale"):
    """'sanity' gives SanityTask; anything else Atari with ale-py's vector-env preprocessing, unclipped rewards
    (the trainer clips them, and logs the game's score), and AtariVectorEnv's `reset_mode`. Several games (see
    game_list) make one mixed batch over ALE's 18 actions, its environments shared out evenly, whose
    info["game"] indexes env.games."""
    if game == "sanity":
        return SanityTask(num_envs, device, seed)
    import cule

    games = game_list(game)
    if len(games) > 1:
        return cule.AtariVectorEnv(split_evenly(games, num_envs), device=device, reward_clipping=False,
                                   num_threads=num_threads, reset_mode=reset_mode)
    return cule.AtariVectorEnv(games[0], num_envs, device=device, reward_clipping=False, num_threads=num_threads,
                               reset_mode=reset_mode)
