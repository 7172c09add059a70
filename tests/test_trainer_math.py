"""Trainer maths against naive implementations written from the papers' formulas.

V-trace: IMPALA's definition as an explicit sum of products (eq. 1), not the
recursion the implementation uses; GAE: the explicit sum of discounted TD
errors (Schulman et al. 2016, eq. 16) cut at episode ends. Importance ratios
range over 0.05..8 so they cross both clipping thresholds.
"""
import math

import pytest
import torch

from cule.trainers.common import gae, vtrace


def naive_vtrace(mu_logp, pi_logp, rewards, discounts, values, bootstrap, clip_rho, clip_c):
    T, B = values.shape
    vs = torch.zeros(T, B, dtype=torch.float64)
    adv = torch.zeros(T, B, dtype=torch.float64)
    V = torch.cat([values, bootstrap[None]], 0)
    for b in range(B):
        ratio = [math.exp(pi_logp[t, b] - mu_logp[t, b]) for t in range(T)]
        rho = [min(clip_rho, r) for r in ratio]
        c = [min(clip_c, r) for r in ratio]
        for s in range(T):
            total = 0.0
            for t in range(s, T):
                # gamma^{t-s} with per-step discounts, and prod_{i=s}^{t-1} c_i
                weight = 1.0
                for i in range(s, t):
                    weight *= discounts[i, b] * c[i]
                delta = rho[t] * (rewards[t, b] + discounts[t, b] * V[t + 1, b] - V[t, b])
                total += weight * delta
            vs[s, b] = V[s, b] + total
        for s in range(T):
            next_v = vs[s + 1, b] if s + 1 < T else bootstrap[b]
            adv[s, b] = rho[s] * (rewards[s, b] + discounts[s, b] * next_v - V[s, b])
    return vs, adv


def _inputs(T=7, B=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    mu = -torch.rand(T, B, generator=g, dtype=torch.float64) * 2
    # log ratios in [log 0.05, log 8]: ratios on both sides of 1 and of the clips
    pi = mu + torch.empty(T, B, dtype=torch.float64).uniform_(math.log(0.05), math.log(8), generator=g)
    rewards = torch.randn(T, B, generator=g, dtype=torch.float64)
    discounts = 0.99 * (torch.rand(T, B, generator=g, dtype=torch.float64) > 0.2).double()
    values = torch.randn(T, B, generator=g, dtype=torch.float64)
    bootstrap = torch.randn(B, generator=g, dtype=torch.float64)
    return mu, pi, rewards, discounts, values, bootstrap


@pytest.mark.parametrize("clip_rho,clip_c", [(1.0, 1.0), (2.0, 0.5), (0.7, 1.3)])
def test_vtrace_equals_the_papers_sum(clip_rho, clip_c):
    mu, pi, r, d, v, boot = _inputs(seed=int(clip_rho * 10))
    ratios = torch.exp(pi - mu)
    assert (ratios > max(clip_rho, clip_c)).any() and (ratios < min(clip_rho, clip_c)).any()
    vs, adv = vtrace(mu, pi, r, d, v, boot, clip_rho=clip_rho, clip_c=clip_c)
    vs_n, adv_n = naive_vtrace(mu, pi, r, d, v, boot, clip_rho, clip_c)
    torch.testing.assert_close(vs, vs_n, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(adv, adv_n, rtol=1e-10, atol=1e-10)


def test_vtrace_on_policy_is_the_n_step_return():
    """pi = mu and no clipping in effect: v_s is the discounted n-step return bootstrapped from V(x_T)."""
    mu, _, r, d, v, boot = _inputs(seed=3)
    vs, _ = vtrace(mu, mu, r, d, v, boot)
    T = r.shape[0]
    for s in range(T):
        ret, disc = torch.zeros_like(boot), torch.ones_like(boot)
        for t in range(s, T):
            ret = ret + disc * r[t]
            disc = disc * d[t]
        torch.testing.assert_close(vs[s], ret + disc * boot)


def test_vtrace_rejects_mismatched_shapes():
    mu, pi, r, d, v, boot = _inputs()
    with pytest.raises(ValueError, match="bootstrap_value"):
        vtrace(mu, pi, r, d, v, boot[:-1])
    with pytest.raises(ValueError, match=r"\[T, B\]"):
        vtrace(mu[:-1], pi, r, d, v, boot)


@pytest.mark.parametrize("gamma,lam", [(0.99, 0.95), (0.9, 1.0), (0.5, 0.0)])
def test_gae_equals_the_explicit_sum(gamma, lam):
    _, _, r, d, v, boot = _inputs(T=9, B=4, seed=7)
    dones = (d == 0)
    adv, ret = gae(r, v, dones, boot, gamma=gamma, lam=lam)
    T, B = r.shape
    V = torch.cat([v, boot[None]], 0)
    for b in range(B):
        for s in range(T):
            total, weight = 0.0, 1.0
            for t in range(s, T):
                nd = 0.0 if dones[t, b] else 1.0
                delta = r[t, b] + gamma * nd * V[t + 1, b] - V[t, b]
                total += weight * delta
                if dones[t, b]:
                    break
                weight *= gamma * lam
            assert abs(adv[s, b].item() - total) < 1e-10
    torch.testing.assert_close(ret, adv + v)


def _splitmix64_naive(x: int) -> int:
    """splitmix64's finaliser on Python ints (Vigna), the reference for cule.trainers.common.sampling."""
    m = (1 << 64) - 1
    z = (x + 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


def test_counter_sampler_matches_splitmix64_and_the_policy():
    from cule.trainers.common import sampling

    seed, step, ids, num = 7, 123, torch.tensor([0, 5, 1000, 2 ** 40]), 3
    got = sampling.uniforms(seed, step, ids, num)
    base = _splitmix64_naive((_splitmix64_naive(seed) + step) & ((1 << 64) - 1))
    for i, e in enumerate(ids.tolist()):
        for a in range(num):
            bits = _splitmix64_naive((base + e * num + a) & ((1 << 64) - 1)) >> 11
            assert got[i, a].item() == (bits + 0.5) / 2.0 ** 53
    # batching does not matter: a slice of the envs draws what the whole batch draws for them
    logits = torch.randn(64, 6)
    ids = torch.arange(64)
    whole = sampling.sample(logits, ids, 9, seed)
    assert torch.equal(torch.cat([sampling.sample(logits[:32], ids[:32], 9, seed),
                                  sampling.sample(logits[32:], ids[32:], 9, seed)]), whole)
    # frequencies follow softmax(logits): 20,000 steps of one env
    probs = torch.tensor([0.5, 0.3, 0.15, 0.05])
    draws = torch.stack([sampling.sample(probs.log()[None], torch.tensor([3]), t, seed) for t in range(20_000)])
    freq = torch.bincount(draws.flatten(), minlength=4).double() / 20_000
    assert torch.allclose(freq, probs.double(), atol=0.01), freq
