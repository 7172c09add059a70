"""Action sampling that depends on (seed, step, global env id) alone, not on how the envs are batched.

A policy's sample for env e at step t is argmax(logits + Gumbel noise), the
noise drawn from a counter-based hash (splitmix64) of (seed, t, e, action).
So K processes with n/K envs each draw exactly the actions one process with n
envs would (the torchrun equivalence, trainers/common/distributed.py), on any
device, with no generator state to checkpoint.
"""
from __future__ import annotations

import torch

_GOLDEN = -7046029254386353131   # 0x9E3779B97F4A7C15 as int64
_MIX1 = -4658895280553007687     # 0xBF58476D1CE4E5B9
_MIX2 = -7723592293110705685     # 0x94D049BB133111EB


def _shr(x: torch.Tensor, k: int) -> torch.Tensor:
    """Logical right shift of int64 bit patterns (torch's >> is arithmetic)."""
    return (x >> k) & ((1 << (64 - k)) - 1)


def splitmix64(x: torch.Tensor) -> torch.Tensor:
    """splitmix64's finaliser on int64 tensors (wrapping arithmetic), elementwise."""
    z = x + _GOLDEN
    z = (z ^ _shr(z, 30)) * _MIX1
    z = (z ^ _shr(z, 27)) * _MIX2
    return z ^ _shr(z, 31)


def uniforms(seed: int, step: int, env_ids: torch.Tensor, num: int) -> torch.Tensor:
    """[B, num] float64 in (0, 1): the draws of envs `env_ids` [B] (int64, global ids) at `step`."""
    base = splitmix64(splitmix64(torch.tensor(seed, dtype=torch.int64, device=env_ids.device)) + step)
    keys = base + env_ids.to(torch.int64)[:, None] * num + torch.arange(num, device=env_ids.device)
    bits = _shr(splitmix64(keys), 11)  # 53 random bits
    return (bits.to(torch.float64) + 0.5) / 2.0 ** 53


def sample(logits: torch.Tensor, env_ids: torch.Tensor, step: int, seed: int) -> torch.Tensor:
    """Categorical(logits) samples [B] (long) for logits [B, A], by the Gumbel-max trick."""
    gumbel = -torch.log(-torch.log(uniforms(seed, step, env_ids, logits.shape[-1])))
    return torch.argmax(logits.double() + gumbel, dim=-1)
