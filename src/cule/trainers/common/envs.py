"""Environments for the trainers: cule's AtariVectorEnv, or a tiny on-device sanity task.

Both return (obs uint8 [N, 4, 84, 84], reward [N], terminated [N], truncated
[N], info) as torch tensors on the training device, with NextStep autoreset.
"""
from __future__ import annotations

import torch


class SideTask:
    """The sanity task: the frame shows a bright block on the left or the right half; action 0 is right for
    left, 1 for right. One-step episodes, reward 1 for the right answer, 0 otherwise: a policy that reads the
    pixels reaches a mean return near 1, chance is 0.5.

    Every observation is an episode's first, so, as in AtariVectorEnv's stack after a reset, only the newest
    of its 4 frames is drawn and the older three are zeros (a replay that rebuilds stacks from single
    frames gives back exactly what the agent saw). The step that ends an episode already returns the next
    one's first observation: there is no reset-only step as with NextStep autoreset."""

    frameskip = 1
    same_step_reset = True

    def __init__(self, num_envs: int, device: str | torch.device = "cpu", seed: int = 0):
        self.num_envs = num_envs
        self.device = torch.device(device)
        self.n_actions = 2
        self.generator = torch.Generator(device=self.device).manual_seed(seed)
        self.side = torch.zeros(num_envs, dtype=torch.long, device=self.device)

    def _observe(self) -> torch.Tensor:
        self.side = torch.randint(0, 2, (self.num_envs,), generator=self.generator, device=self.device)
        obs = torch.zeros(self.num_envs, 4, 84, 84, dtype=torch.uint8, device=self.device)
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


def make_env(game: str, num_envs: int, device: str, seed: int, num_threads: int = 0):
    """'sanity' gives SideTask; anything else an Atari game with ale-py's vector-env preprocessing, unclipped
    rewards (the trainer clips them, and logs the game's score)."""
    if game == "sanity":
        return SideTask(num_envs, device, seed)
    import cule

    env = cule.AtariVectorEnv(game, num_envs, device=device, reward_clipping=False, num_threads=num_threads)
    env.n_actions = env.single_action_space.n
    return env
