"""The JAX PPO example: its maths against naive formulas and torch's Adam, and a short run that writes its log."""
import csv
import json
import math

import numpy as np
import pytest
import torch

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from cule.trainers import ppo_jax  # noqa: E402


def test_gae_equals_the_naive_sum():
    """A_t = sum_k (gamma lambda)^k delta_{t+k}, stopping at the end of an episode."""
    rng = np.random.default_rng(0)
    T, n, gamma, lam = 12, 3, 0.97, 0.9
    rewards, values = rng.normal(size=(T, n)), rng.normal(size=(T, n))
    dones = (rng.random((T, n)) < 0.2).astype(np.float64)
    last = rng.normal(size=n)
    got = np.asarray(ppo_jax.gae(*(jnp.asarray(x, jnp.float32) for x in (rewards, values, dones, last)), gamma, lam))
    nxt = np.concatenate([values[1:], last[None]])
    delta = rewards + gamma * nxt * (1 - dones) - values
    for t in range(T):
        for i in range(n):
            total, scale = 0.0, 1.0
            for k in range(t, T):
                total += scale * delta[k, i]
                if dones[k, i]:
                    break
                scale *= gamma * lam
            assert math.isclose(got[t, i], total, rel_tol=1e-4, abs_tol=1e-4), (t, i)


def test_adam_step_equals_torch_adam_with_clipping():
    args = ppo_jax.Args(max_grad_norm=0.5, adam_eps=1e-5)
    rng = np.random.default_rng(1)
    p0, grads = rng.normal(size=(4, 3)).astype(np.float32), [rng.normal(size=(4, 3)).astype(np.float32)
                                                             for _ in range(3)]
    theirs = torch.nn.Parameter(torch.tensor(p0))
    opt = torch.optim.Adam([theirs], lr=1e-2, eps=1e-5)
    mine, state = {"w": jnp.asarray(p0)}, ppo_jax.adam_init({"w": jnp.asarray(p0)})
    for g in grads:
        opt.zero_grad()
        theirs.grad = torch.tensor(g)
        torch.nn.utils.clip_grad_norm_([theirs], 0.5)
        opt.step()
        mine, state = ppo_jax.adam_step(args, mine, {"w": jnp.asarray(g)}, state, 1e-2)
    np.testing.assert_allclose(np.asarray(mine["w"]), theirs.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_a_short_run_logs_every_update(tmp_path):
    args = ppo_jax.Args(game="pong", num_envs=4, num_steps=16, total_frames=4 * 16 * 4 * 3, output_dir=str(tmp_path))
    result = ppo_jax.train(args)
    rows = list(csv.DictReader(open(tmp_path / "log.csv")))
    assert [int(r["frames"]) for r in rows] == [256, 512, 768] and result["frames"] == 768
    assert all(math.isfinite(float(r["loss"])) and float(r["entropy"]) > 0 for r in rows)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert "reached" not in summary and summary["settings"]["target"] is None  # no target given: none reported


def test_a_target_is_reported_as_the_train_benchmark_reports_it(tmp_path):
    args = ppo_jax.Args(game="pong", num_envs=4, num_steps=16, total_frames=4 * 16 * 4 * 2, output_dir=str(tmp_path),
                        target=-1000.0)
    ppo_jax.train(args)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["target"] == -1000.0 and {"reached", "smoothed_reached"} <= set(summary)
