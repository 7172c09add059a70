"""Prioritized replay on the training device: a sum-tree and a ring that stores every frame once.

Shapes: B environments stepped together, R rows in the ring (one row per
vector step), S frames per stacked observation (4), H x W frames (84 x 84),
K transitions per sampled batch, n the return's steps.

Frames are stored once. A row holds each environment's newest frame of the
observation the agent acted on, not the whole [S, H, W] stack: the stack of
row t is rebuilt at sampling time from rows t-S+1 .. t of the same
environment. Frames from before an episode's first observation are zeros,
which is what cule's (and ale-py's) AtariVectorEnv puts in the stack after a
reset, so a rebuilt stack equals the observation the agent saw
(tests/test_rainbow.py checks this on Pong across episode ends).

Autoreset (NextStep, the default of AtariVectorEnv): after an episode ends the
next step only resets, returning the new episode's first observation. The row
of that step holds the ended episode's last observation: it is stored (the
bootstrap of a time-limit truncation needs it) but marked not valid, so it is
never sampled as a transition's start.

Prioritized replay (Schaul et al. 2016, proportional variant): transition i is
sampled with P(i) = p_i^alpha / sum_k p_k^alpha and weighted by
w_i = (N P(i))^-beta / max_j w_j; the max is taken over the sampled batch (as
Dopamine and Kaixhin's Rainbow do), which makes N cancel out. A leaf of
priority 0 is never sampled: that marks the slots that are not transitions
yet (their n steps are not all written), not valid, or whose frame history
was overwritten by the ring. alpha = 0 is uniform replay.
"""
from __future__ import annotations

import torch

from cule.trainers.common.targets import n_step_return


def next_flags(valid: torch.Tensor, ended: torch.Tensor, same_step: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """(first [B], valid [B]) of the next step's row from this step's valid [B] and ended [B] (bool).

    NextStep autoreset: the step after an episode's end only resets (its row is not valid) and the
    one after it holds the new episode's first observation. same_step (SanityTask): the ending step
    already returns the next episode's first observation, and every row is valid.
    """
    if same_step:
        return ended, torch.ones_like(valid)
    return ~valid, ~ended


class SumTree:
    """Sums of non-negative leaf values in a flat binary tree on a device, for proportional sampling.

    `tree` is [2P] float64 with P = the next power of two >= size: leaf i sits at
    P + i, node k's children at 2k and 2k + 1, tree[1] is the total. float64 so
    that the descent's subtractions stay exact enough over millions of leaves.
    """

    def __init__(self, size: int, device: torch.device | str = "cpu"):
        if size < 1:
            raise ValueError(f"a sum-tree needs at least one leaf, got size={size}")
        self.size = size
        self.leaves = 1 << max(1, (size - 1).bit_length())
        self.depth = self.leaves.bit_length() - 1
        self.tree = torch.zeros(2 * self.leaves, dtype=torch.float64, device=device)

    @property
    def total(self) -> torch.Tensor:
        """[] the sum of all leaves (a device scalar)."""
        return self.tree[1]

    def get(self, index: torch.Tensor) -> torch.Tensor:
        """[M] values of leaves index [M]."""
        return self.tree[index + self.leaves]

    def update(self, index: torch.Tensor, value: torch.Tensor) -> None:
        """Sets leaves index [M] (long) to value [M] (>= 0), then recomputes their ancestors level by level.

        Parents are recomputed from their children rather than shifted by deltas, so rounding never
        accumulates, and a leaf listed twice is harmless (both writes recompute the same sums).
        """
        node = index + self.leaves
        self.tree[node] = value.to(self.tree.dtype)
        for _ in range(self.depth):
            node = node // 2
            self.tree[node] = self.tree[2 * node] + self.tree[2 * node + 1]

    def find(self, mass: torch.Tensor) -> torch.Tensor:
        """[K] leaf indices i with prefix(i) <= mass < prefix(i) + leaf(i) for mass [K] in [0, total).

        Leaves of value 0 are never returned (a rounding overshoot at a subtree's edge falls back left).
        """
        mass = mass.to(self.tree.dtype).clone()
        node = torch.ones_like(mass, dtype=torch.long)
        for _ in range(self.depth):
            left = self.tree[2 * node]
            go_right = (mass >= left) & (self.tree[2 * node + 1] > 0)
            mass = torch.where(go_right, mass - left, mass)
            node = 2 * node + go_right.long()
        return node - self.leaves

    def sample(self, count: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """[count] leaves drawn with probability value / total, stratified: one draw per 1/count of the mass."""
        u = torch.rand(count, dtype=self.tree.dtype, device=self.tree.device, generator=generator)
        mass = (torch.arange(count, dtype=self.tree.dtype, device=self.tree.device) + u) * (self.total / count)
        return self.find(mass.clamp(max=self.total * (1 - 1e-12)))


class FrameReplay:
    """A prioritized n-step replay of B lock-stepped environments, frames stored once, all on one device.

    Storage (R = capacity // B rows, a ring):
        frames [R, B, H, W] uint8: each env's newest frame of the observation acted on at that step;
        actions [R, B] long, rewards [R, B] float32 (already clipped by the trainer);
        terminated, truncated [R, B] bool: the step ended the episode;
        first [R, B] bool: the observation is its episode's first (older stack frames are zeros);
        valid [R, B] bool: the row is a transition (False: the reset step after an episode's end);
        tree: SumTree over R * B leaves, leaf = row * B + env, holding p^alpha.

    A row becomes sampleable when the row n steps later has been written (its
    n-step return and bootstrap frame exist): `add` returns that row, and the
    row's priority is the one given to that `add` (Ape-X: computed by the
    actors) or the largest priority seen so far.
    """

    def __init__(self, capacity: int, num_envs: int, n_step: int = 3, gamma: float = 0.99, alpha: float = 0.5,
                 stack: int = 4, frame_shape: tuple[int, int] = (84, 84), device: torch.device | str = "cpu",
                 priority_eps: float = 1e-6):
        self.B, self.n, self.S, self.gamma, self.alpha = num_envs, n_step, stack, gamma, alpha
        self.R = capacity // num_envs
        if self.R < stack + n_step + 1:
            raise ValueError(f"replay capacity {capacity} holds {self.R} steps of {num_envs} environments; it needs "
                             f"at least stack + n_step + 1 = {stack + n_step + 1} (raise --buffer-size)")
        self.device = torch.device(device)
        R, B = self.R, self.B
        # empty, not zeros: on the CPU untouched pages stay unmapped, so memory grows as the ring fills. A slot
        # is read before it is written only as history of a stack that starts an episode, where it is masked.
        self.frames = torch.empty((R, B, *frame_shape), dtype=torch.uint8, device=self.device)
        self.actions = torch.zeros((R, B), dtype=torch.long, device=self.device)
        self.rewards = torch.zeros((R, B), dtype=torch.float32, device=self.device)
        self.terminated, self.truncated, self.first, self.valid = (
            torch.zeros((R, B), dtype=torch.bool, device=self.device) for _ in range(4))
        self.tree = SumTree(R * B, self.device)
        self.priority_eps = priority_eps
        self.max_priority = torch.ones((), device=self.device)  # raw (before alpha), for new transitions
        self.written = 0  # rows written so far (a host counter: no device sync needed)
        self._envs = torch.arange(B, device=self.device)
        self._history = torch.arange(1, stack, device=self.device)

    @property
    def capacity(self) -> int:
        return self.R * self.B

    def add(self, frame: torch.Tensor, action: torch.Tensor, reward: torch.Tensor, terminated: torch.Tensor,
            truncated: torch.Tensor, first: torch.Tensor, valid: torch.Tensor,
            priorities: torch.Tensor | None = None) -> int | None:
        """Writes one step of all B environments (each [B], frame [B, H, W]); returns the absolute row that
        this completes (its n steps are now written: row written - 1 - n) or None while there is none yet.

        The completed row gets raw `priorities` [B] (Ape-X: computed by the actors, who can do it before
        this add since they hold the newest observation) or, if None, the largest priority seen so far.
        """
        slot = self.written % self.R
        self.frames[slot] = frame
        self.actions[slot], self.rewards[slot] = action, reward
        self.terminated[slot], self.truncated[slot] = terminated, truncated
        self.first[slot], self.valid[slot] = first, valid
        # this slot is not a transition yet, and the next S - 1 (the oldest rows) just lost a frame of their stack
        stale = (slot + torch.arange(self.S, device=self.device)) % self.R
        self.tree.update((stale[:, None] * self.B + self._envs).reshape(-1),
                         torch.zeros(self.S * self.B, device=self.device))
        self.written += 1
        done = self.written - 1 - self.n
        if done < 0:
            return None
        self.set_priorities(done, priorities)
        return done

    def set_priorities(self, row: int, priorities: torch.Tensor | None) -> None:
        """Gives absolute row `row` (all B envs) raw priorities [B] (None: the max so far); not-valid rows get 0."""
        slot = row % self.R
        if priorities is None:
            priorities = self.max_priority.expand(self.B)
        else:
            priorities = priorities.detach().float().clamp(min=self.priority_eps)
            self.max_priority = torch.maximum(self.max_priority, priorities.max())
        leaves = slot * self.B + self._envs
        self.tree.update(leaves, priorities.pow(self.alpha) * self.valid[slot])

    def update_priorities(self, leaves: torch.Tensor, priorities: torch.Tensor) -> None:
        """The learner's new raw priorities [K] (e.g. |TD error|) of sampled leaves [K]."""
        priorities = priorities.detach().float().clamp(min=self.priority_eps)
        self.max_priority = torch.maximum(self.max_priority, priorities.max())
        self.tree.update(leaves, priorities.pow(self.alpha))

    def stack(self, row: torch.Tensor, env: torch.Tensor) -> torch.Tensor:
        """[K, S, H, W] uint8 observations of ring slots row [K] of envs env [K], oldest frame first.

        The frame d steps back is kept only if none of the rows t, t-1, .., t-d+1 starts an episode.
        """
        back = torch.arange(self.S - 1, -1, -1, device=self.device)  # S-1 .. 0 steps back, oldest first
        rows = (row[:, None] - back) % self.R  # [K, S]
        # index_select on the flat [R * B, H, W] view: several times faster than 2-D advanced indexing
        frames = self.frames.view(-1, *self.frames.shape[2:]).index_select(0, (rows * self.B + env[:, None]).view(-1))
        frames = frames.view(*rows.shape, *self.frames.shape[2:])  # [K, S, H, W]
        starts = self.first[(row[:, None] - self._history + 1) % self.R, env[:, None]]  # [K, S-1]: rows t .. t-S+2
        # keep[:, d-1]: frame d back stays. A running minimum keeps uint8 where cumprod would widen to int64, and
        # an int64 mask would make the product below int64 (8x the bytes: a quarter of a CPU gradient step)
        keep = (~starts).to(torch.uint8).cummin(1).values
        keep = torch.cat([keep.flip(1), torch.ones_like(keep[:, :1])], 1)  # oldest first, newest always kept
        return frames.mul_(keep[:, :, None, None])  # in place: index_select's output is a fresh copy

    def n_step(self, row: torch.Tensor, env: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """n-step (returns [K], discounts [K], steps [K]) of transitions at ring slots row [K], envs env [K]."""
        rows = (row[:, None] + torch.arange(self.n, device=self.device)) % self.R  # [K, n]
        e = env[:, None]
        return n_step_return(self.rewards[rows, e], self.terminated[rows, e], self.truncated[rows, e], self.gamma)

    def sample(self, batch_size: int, beta: float, generator: torch.Generator | None = None) -> dict:
        """A prioritized batch of K = batch_size transitions.

        Returns a dict: leaves [K] (for update_priorities), obs [K, S, H, W] uint8, actions [K],
        returns [K], discounts [K] (gamma^m, 0 after a termination), next_obs [K, S, H, W] uint8
        (S_{t+m}), weights [K] importance-sampling weights (max 1).
        """
        leaves = self.tree.sample(batch_size, generator)
        row, env = leaves // self.B, leaves % self.B
        returns, discounts, steps = self.n_step(row, env)
        probs = self.tree.get(leaves) / self.tree.total
        weights = probs.pow(-beta)
        weights = (weights / weights.max()).float()
        return dict(leaves=leaves, obs=self.stack(row, env), actions=self.actions[row, env], returns=returns,
                    discounts=discounts, next_obs=self.stack((row + steps) % self.R, env), weights=weights)
