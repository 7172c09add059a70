"""V-trace off-policy targets (Espeholt et al. 2018, IMPALA, section 4.1).

For a trajectory x_s .. x_{s+n} collected by a behaviour policy mu, the
n-step V-trace target of V(x_s) is

    v_s = V(x_s) + sum_{t=s}^{s+n-1} gamma^{t-s} (prod_{i=s}^{t-1} c_i) delta_t V,
    delta_t V = rho_t (r_t + gamma V(x_{t+1}) - V(x_t)),
    rho_t = min(rho_bar, pi(a_t|x_t) / mu(a_t|x_t)),  c_i = min(c_bar, pi(a_i|x_i) / mu(a_i|x_i)),

computed backwards with v_s - V(x_s) = delta_s V + gamma_s c_s (v_{s+1} - V(x_{s+1})).
The policy-gradient advantage is rho_s (r_s + gamma_s v_{s+1} - V(x_s)).
Per-step discounts gamma_s carry episode ends (0 where the episode ended).
"""
from __future__ import annotations

import torch


@torch.no_grad()
def vtrace(behaviour_log_probs: torch.Tensor, target_log_probs: torch.Tensor, rewards: torch.Tensor,
           discounts: torch.Tensor, values: torch.Tensor, bootstrap_value: torch.Tensor, clip_rho: float = 1.0,
           clip_c: float = 1.0, clip_pg_rho: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """V-trace targets and policy-gradient advantages.

    Args:
        behaviour_log_probs: [T, B] log mu(a_t | x_t) of the actions taken.
        target_log_probs: [T, B] log pi(a_t | x_t) under the policy being learned.
        rewards: [T, B] r_t.
        discounts: [T, B] gamma_t, 0 where the episode ended at step t.
        values: [T, B] V(x_t) under the current value function.
        bootstrap_value: [B] V(x_T).
        clip_rho: rho_bar (None: no clipping); clip_c: c_bar; clip_pg_rho: the
            clipping of rho in the advantage (default: clip_rho).

    Returns:
        vs: [T, B] value targets v_t; pg_advantages: [T, B].
    """
    if not (behaviour_log_probs.shape == target_log_probs.shape == rewards.shape == discounts.shape == values.shape):
        raise ValueError("behaviour_log_probs, target_log_probs, rewards, discounts and values must all be [T, B]")
    if bootstrap_value.shape != values.shape[1:]:
        raise ValueError(f"bootstrap_value must be [B] = {tuple(values.shape[1:])}, got {tuple(bootstrap_value.shape)}")
    ratios = torch.exp(target_log_probs - behaviour_log_probs)
    rhos = ratios if clip_rho is None else ratios.clamp(max=clip_rho)
    cs = ratios if clip_c is None else ratios.clamp(max=clip_c)
    next_values = torch.cat([values[1:], bootstrap_value[None]], 0)
    deltas = rhos * (rewards + discounts * next_values - values)
    corrections = torch.empty_like(values)  # v_t - V(x_t)
    acc = torch.zeros_like(bootstrap_value)
    for t in range(values.shape[0] - 1, -1, -1):
        acc = deltas[t] + discounts[t] * cs[t] * acc
        corrections[t] = acc
    vs = values + corrections
    next_vs = torch.cat([vs[1:], bootstrap_value[None]], 0)
    pg_clip = clip_rho if clip_pg_rho is None else clip_pg_rho
    pg_rhos = ratios if pg_clip is None else ratios.clamp(max=pg_clip)
    pg_advantages = pg_rhos * (rewards + discounts * next_vs - values)
    return vs, pg_advantages
