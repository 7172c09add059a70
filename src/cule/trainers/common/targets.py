"""Q-learning targets: truncated n-step returns and the C51 projection (shapes [K, ...] = K sampled transitions).

n-step (Sutton & Barto 1998; Hessel et al. 2018, eq. 2). A transition starting
at step t with rewards r_t .. r_{t+n-1} has the return

    G_t = sum_{k=0}^{m-1} gamma^k r_{t+k},    bootstrapped by gamma^m Q(S_{t+m}),

where m = n if the episode goes on, and m = j + 1 if it ends at step t + j < t + n
(the reward of the last step counts). A termination gives no bootstrap
(discount 0); a truncation (time limit) bootstraps from the episode's last
observation, S_{t+j+1}, with gamma^{j+1}.

C51 (Bellemare et al. 2017, eq. 7). With support z_i = v_min + i dz,
dz = (v_max - v_min) / (N - 1), the Bellman update T z_j = G + discount z_j of a
distribution p is projected back onto the support as

    (Phi T p)_i = sum_j [1 - |clip(T z_j, v_min, v_max) - z_i| / dz]_0^1 p_j,

i.e. each atom's mass is split between its two neighbours on the support in
proportion to closeness (all of it to one atom when T z_j lands on it).
"""
from __future__ import annotations

import torch


def n_step_return(rewards: torch.Tensor, terminated: torch.Tensor, truncated: torch.Tensor,
                  gamma: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Truncated n-step returns of K transitions from their next n steps.

    Args:
        rewards: [K, n] r_t .. r_{t+n-1}.
        terminated: [K, n] bool, the episode terminated at that step.
        truncated: [K, n] bool, the episode was cut (time limit) at that step.
        gamma: discount.

    Returns:
        returns: [K] G_t; discounts: [K] the bootstrap's discount (gamma^m, or 0
        after a termination); steps: [K] long, m, so the bootstrap state is S_{t+m}.
    """
    if not (rewards.shape == terminated.shape == truncated.shape) or rewards.dim() != 2:
        raise ValueError("rewards, terminated and truncated must all be [K, n]")
    n = rewards.shape[1]
    ended = terminated | truncated
    # alive[:, k]: no episode end strictly before step k, so reward k still belongs to this episode
    alive = torch.cumprod(torch.cat([torch.ones_like(ended[:, :1]), ~ended[:, :-1]], 1).to(rewards.dtype), 1)
    powers = gamma ** torch.arange(n, dtype=rewards.dtype, device=rewards.device)
    returns = (rewards * alive * powers).sum(1)
    steps = alive.sum(1).long()  # first end at j -> j + 1 steps; no end -> n
    last = (steps - 1).unsqueeze(1)
    # step m - 1 is the first end if there is one; with none in the window it is no termination either
    ended_by_termination = terminated.gather(1, last).squeeze(1)
    discounts = torch.where(ended_by_termination, torch.zeros_like(returns), gamma ** steps.to(rewards.dtype))
    return returns, discounts, steps


def c51_projection(probs: torch.Tensor, returns: torch.Tensor, discounts: torch.Tensor, v_min: float,
                   v_max: float) -> torch.Tensor:
    """Projects the distributions of G + discount * Z onto the fixed support (Bellemare et al. 2017, eq. 7).

    Args:
        probs: [K, N] probabilities p_j of the target distribution on z_0 .. z_{N-1}.
        returns: [K] G; discounts: [K] (0 at a termination: all mass goes to G).
        v_min, v_max: the support's ends.

    Returns:
        [K, N] the projected probabilities (rows still sum to 1).
    """
    K, N = probs.shape
    support = torch.linspace(v_min, v_max, N, dtype=probs.dtype, device=probs.device)
    dz = (v_max - v_min) / (N - 1)
    tz = (returns.unsqueeze(1) + discounts.unsqueeze(1) * support).clamp(v_min, v_max)
    b = (tz - v_min) / dz  # in [0, N - 1]
    lower = b.floor().long().clamp(max=N - 2)  # so upper = lower + 1 exists; b = N - 1 gives frac 1
    frac = b - lower.to(b.dtype)
    out = torch.zeros_like(probs)
    out.scatter_add_(1, lower, probs * (1 - frac))
    out.scatter_add_(1, lower + 1, probs * frac)
    return out
