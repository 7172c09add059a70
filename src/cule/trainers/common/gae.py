"""Generalized advantage estimation (Schulman et al. 2016, eq. 16).

    delta_t = r_t + gamma (1 - d_t) V(x_{t+1}) - V(x_t)
    A_t = delta_t + gamma lambda (1 - d_t) A_{t+1}

d_t marks a step after which the episode ended (terminated; a truncated
episode should bootstrap from its last observation's value instead, which the
caller folds into r_t or leaves as d_t = 0).
"""
from __future__ import annotations

import torch


@torch.no_grad()
def gae(rewards: torch.Tensor, values: torch.Tensor, dones: torch.Tensor, bootstrap_value: torch.Tensor,
        gamma: float = 0.99, lam: float = 0.95) -> tuple[torch.Tensor, torch.Tensor]:
    """Advantages and returns.

    Args:
        rewards: [T, B] r_t; values: [T, B] V(x_t); dones: [T, B] 1 where the
            episode ended at step t (bool or float); bootstrap_value: [B] V(x_T).
    Returns:
        advantages: [T, B]; returns: [T, B] = advantages + values.
    """
    if not rewards.shape == values.shape == dones.shape:
        raise ValueError("rewards, values and dones must all be [T, B]")
    if bootstrap_value.shape != values.shape[1:]:
        raise ValueError(f"bootstrap_value must be [B] = {tuple(values.shape[1:])}, got {tuple(bootstrap_value.shape)}")
    not_done = 1.0 - dones.to(values.dtype)
    advantages = torch.empty_like(values)
    acc = torch.zeros_like(bootstrap_value)
    next_value = bootstrap_value
    for t in range(values.shape[0] - 1, -1, -1):
        delta = rewards[t] + gamma * not_done[t] * next_value - values[t]
        acc = delta + gamma * lam * not_done[t] * acc
        advantages[t] = acc
        next_value = values[t]
    return advantages, advantages + values
