"""Rainbow / Ape-X: the maths against naive implementations written from the papers' formulas, the
replay against the environment's own observations, learning the sanity task, a smoke run on a real game,
resume after kill -9, and --help.

Naive versions: C51's projection as eq. 7 of Bellemare et al. 2017 (a double sum over atoms); n-step
returns as a loop over the steps; the sum-tree against a linear scan of prefix sums and against sampling
frequencies; importance weights as Schaul et al. 2016's (N P(i))^-beta normalised by the batch's max.
"""
import copy
import dataclasses
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from cule.trainers.common import checkpoint
from cule.trainers.common.models import QNetwork
from cule.trainers.common.replay import FrameReplay, SumTree, next_flags
from cule.trainers.common.targets import c51_projection, n_step_return
from cule.trainers.rainbow import ActorPriorities, Args, Learner, apex_epsilons, train

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def one_torch_thread():
    """The network passes are small; on a busy 2-core machine a second intra-op thread only waits."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# ---------------------------------------------------------------- maths


def naive_n_step(rewards, terminated, truncated, gamma):
    K, n = rewards.shape
    G, disc, steps = torch.zeros(K, dtype=torch.float64), torch.zeros(K, dtype=torch.float64), torch.zeros(K)
    for k in range(K):
        total, m, d = 0.0, n, gamma ** n
        for j in range(n):
            total += gamma ** j * float(rewards[k, j])
            if terminated[k, j]:
                m, d = j + 1, 0.0
                break
            if truncated[k, j]:
                m, d = j + 1, gamma ** (j + 1)
                break
        G[k], disc[k], steps[k] = total, d, m
    return G, disc, steps


@pytest.mark.parametrize("n,gamma", [(1, 0.99), (3, 0.9), (5, 0.5)])
def test_n_step_return_equals_the_loop(n, gamma):
    g = torch.Generator().manual_seed(n)
    K = 400
    rewards = torch.randn(K, n, generator=g, dtype=torch.float64)
    terminated = torch.rand(K, n, generator=g) < 0.15
    truncated = torch.rand(K, n, generator=g) < 0.15
    G, disc, steps = n_step_return(rewards, terminated, truncated, gamma)
    G_n, disc_n, steps_n = naive_n_step(rewards, terminated, truncated, gamma)
    # the cases the loop distinguishes all occur: no end, a termination, a truncation (not the first step)
    assert (steps == n).any() and (disc == 0).any() and ((disc > 0) & (steps < n)).any() or n == 1
    torch.testing.assert_close(G, G_n, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(disc, disc_n, rtol=1e-12, atol=1e-12)
    assert torch.equal(steps, steps_n.long())


def naive_projection(probs, returns, discounts, v_min, v_max):
    """Bellemare et al. 2017, eq. 7: (Phi T p)_i = sum_j [1 - |clip(T z_j) - z_i| / dz]_0^1 p_j."""
    K, N = probs.shape
    dz = (v_max - v_min) / (N - 1)
    z = [v_min + i * dz for i in range(N)]
    out = torch.zeros(K, N, dtype=torch.float64)
    for k in range(K):
        for i in range(N):
            total = 0.0
            for j in range(N):
                tz = min(max(float(returns[k]) + float(discounts[k]) * z[j], v_min), v_max)
                total += min(max(1 - abs(tz - z[i]) / dz, 0.0), 1.0) * float(probs[k, j])
            out[k, i] = total
    return out


@pytest.mark.parametrize("atoms,v_min,v_max", [(51, -10.0, 10.0), (11, -1.0, 3.0)])
def test_c51_projection_equals_eq7(atoms, v_min, v_max):
    g = torch.Generator().manual_seed(atoms)
    K = 24
    probs = torch.softmax(torch.randn(K, atoms, generator=g, dtype=torch.float64) * 2, 1)
    returns = torch.empty(K, dtype=torch.float64).uniform_(2 * v_min, 2 * v_max, generator=g)  # beyond both ends
    discounts = torch.full((K,), 0.99 ** 3, dtype=torch.float64)
    discounts[:4] = 0.0  # terminations: all mass on G
    dz = (v_max - v_min) / (atoms - 1)
    returns[4:8] = torch.tensor([v_min, v_max, v_min + 3 * dz, 0.0], dtype=torch.float64)  # exactly on atoms
    discounts[4:8] = 1.0
    out = c51_projection(probs, returns, discounts, v_min, v_max)
    torch.testing.assert_close(out, naive_projection(probs, returns, discounts, v_min, v_max), rtol=1e-10,
                               atol=1e-10)
    torch.testing.assert_close(out.sum(1), torch.ones(K, dtype=torch.float64))


def naive_find(values, mass):
    """The leaf whose interval [prefix, prefix + value) holds mass, by a linear scan."""
    prefix = 0.0
    for i, v in enumerate(values):
        if v > 0 and mass < prefix + v:
            return i
        prefix += v
    raise AssertionError("mass beyond the total")


def test_sum_tree_find_equals_the_linear_scan():
    g = torch.Generator().manual_seed(0)
    size = 37  # not a power of two: padding leaves exist
    values = torch.rand(size, generator=g, dtype=torch.float64) * 5
    values[torch.rand(size, generator=g) < 0.3] = 0.0
    tree = SumTree(size)
    tree.update(torch.arange(size), values)
    assert math.isclose(tree.total.item(), values.sum().item(), rel_tol=1e-12)
    mass = torch.rand(2000, generator=g, dtype=torch.float64) * values.sum()
    found = tree.find(mass)
    assert found.tolist() == [naive_find(values.tolist(), m) for m in mass.tolist()]
    # integer leaves: masses exactly on the intervals' edges, where zero leaves must be skipped
    values = values.ceil()
    tree.update(torch.arange(size), values)
    edges = torch.cat([torch.zeros(1, dtype=torch.float64), values.cumsum(0)[:-1]])
    edges = edges[edges < values.sum()].unique()
    assert tree.find(edges).tolist() == [naive_find(values.tolist(), m) for m in edges.tolist()]


def _frequencies_match(tree, values, draws=200_000, seed=0):
    g = torch.Generator().manual_seed(seed)
    counts = torch.zeros(len(values), dtype=torch.float64)
    for _ in range(draws // 5000):
        counts += torch.bincount(tree.sample(5000, g), minlength=tree.leaves)[:len(values)].double()
    expected = values / values.sum()
    freq = counts / counts.sum()
    assert counts[values == 0].sum() == 0, "a zero-priority leaf was sampled"
    # every leaf within 5 standard deviations of its binomial count
    sigma = (expected * (1 - expected) / counts.sum()).sqrt()
    assert ((freq - expected).abs() <= 5 * sigma + 1e-12).all(), (freq - expected).abs().max()


def test_sum_tree_samples_in_proportion_and_follows_updates():
    g = torch.Generator().manual_seed(1)
    size = 100
    values = torch.rand(size, generator=g, dtype=torch.float64) ** 3 * 10  # spread over 3 decades
    values[::7] = 0.0
    tree = SumTree(size)
    tree.update(torch.arange(size), values)
    _frequencies_match(tree, values, seed=2)
    # update a third of the leaves: some to zero, some from zero, some much larger
    idx = torch.randperm(size, generator=g)[:34]
    new = torch.rand(34, generator=g, dtype=torch.float64) * 20
    new[:8] = 0.0
    tree.update(idx, new)
    values[idx] = new
    # every internal node is the sum of its children, the root the sum of all leaves
    inner = torch.arange(1, tree.leaves)
    torch.testing.assert_close(tree.tree[inner], tree.tree[2 * inner] + tree.tree[2 * inner + 1])
    assert math.isclose(tree.total.item(), values.sum().item(), rel_tol=1e-12)
    _frequencies_match(tree, values, seed=3)


def test_importance_weights_follow_schaul_et_al():
    B, alpha, beta = 4, 0.6, 0.5
    replay = FrameReplay(capacity=B * 20, num_envs=B, n_step=1, alpha=alpha)
    frame = torch.zeros(B, 84, 84, dtype=torch.uint8)
    ones, zeros = torch.ones(B, dtype=torch.bool), torch.zeros(B, dtype=torch.bool)
    g = torch.Generator().manual_seed(0)
    for t in range(12):
        replay.add(frame, torch.zeros(B, dtype=torch.long), torch.zeros(B), zeros, zeros, ones if t == 0 else zeros,
                   ones, priorities=torch.rand(B, generator=g) * 3 + 0.1)
    raw = replay.tree.get(torch.arange(replay.capacity)) ** (1 / alpha)  # back to the given priorities
    live = raw > 0
    assert live.sum() == 11 * B  # rows 0 .. 10 are complete (1-step), row 11 waits for row 12
    batch = replay.sample(64, beta, torch.Generator().manual_seed(1))
    P = raw[batch["leaves"]] ** alpha / (raw[live] ** alpha).sum()
    w = (live.sum() * P) ** -beta
    torch.testing.assert_close(batch["weights"], (w / w.max()).float())


def test_apex_epsilons():
    eps = apex_epsilons(8, 0.4, 7.0)
    expected = torch.tensor([0.4 ** (1 + 7 * i / 7) for i in range(8)])
    torch.testing.assert_close(eps, expected)
    assert eps[0] == pytest.approx(0.4) and eps[-1] == pytest.approx(0.4 ** 8)


# ---------------------------------------------------------------- replay against the environment


def test_replay_rebuilds_the_observations_across_episode_ends_and_ring_wraps():
    """Breakout with a lost life ending the episode and a 160-frame cap: terminations, truncations, NextStep
    resets and several wraps of a 25-row ring. Every sampleable transition's stack, n-step return and
    bootstrap stack must equal what the environment returned."""
    import cule

    B, n, gamma, R = 3, 3, 0.9, 25
    env = cule.AtariVectorEnv("breakout", B, episodic_life=True, max_num_frames_per_episode=160, num_threads=1,
                              reward_clipping=False)
    replay = FrameReplay(capacity=B * R, num_envs=B, n_step=n, gamma=gamma, alpha=1.0)
    obs, _ = env.reset(seed=3)
    first, valid = torch.ones(B, dtype=torch.bool), torch.ones(B, dtype=torch.bool)
    g = torch.Generator().manual_seed(0)
    history = []
    seen_term = seen_trunc = 0
    for t in range(110):
        action = torch.randint(0, env.single_action_space.n, (B,), generator=g)
        nobs, reward, term, trunc, _ = env.step(action)
        term, trunc = term & valid, trunc & valid
        seen_term += int(term.sum())
        seen_trunc += int(trunc.sum())
        replay.add(obs[:, -1], action, reward.float(), term, trunc, first, valid)
        history.append((obs.clone(), action, reward.float(), term, trunc, valid))
        first, valid = next_flags(valid, term | trunc)
        obs = nobs
        if t % 10 != 9:
            continue
        leaves = torch.nonzero(replay.tree.get(torch.arange(replay.capacity)) > 0).squeeze(1)
        slot, e = leaves // B, leaves % B
        absolute = t - (t - slot) % R  # the latest step written into that slot
        assert (absolute <= t - n).all() and (absolute >= t - R + 4).all()
        returns, discounts, steps = replay.n_step(slot, e)
        stacks = replay.stack(slot, e)
        boot = replay.stack((slot + steps) % R, e)
        # uint8 as stored: a wider stack costs the learner its bytes in copies and conversions
        assert stacks.dtype == boot.dtype == torch.uint8
        for k in range(len(leaves)):
            s, env_id = int(absolute[k]), int(e[k])
            assert history[s][5][env_id], "a reset-only step was sampleable"
            assert torch.equal(stacks[k], history[s][0][env_id])
            rew = torch.stack([history[s + j][2][env_id] for j in range(n)])[None].double()
            te = torch.stack([history[s + j][3][env_id] for j in range(n)])[None]
            tr = torch.stack([history[s + j][4][env_id] for j in range(n)])[None]
            G, d, m = naive_n_step(rew, te, tr, gamma)
            assert returns[k].item() == pytest.approx(G.item()) and discounts[k].item() == pytest.approx(d.item())
            assert torch.equal(boot[k], history[s + int(m.item())][0][env_id])
        # every valid row old enough and not at the ring's overwritten edge is sampleable
        for s in range(max(0, t - R + 4), t - n + 1):
            for env_id in range(B):
                leaf = (s % R) * B + env_id
                assert (replay.tree.get(torch.tensor([leaf])).item() > 0) == bool(history[s][5][env_id])
    env.close()
    assert seen_term > 0 and seen_trunc > 0 and replay.written > 4 * R


# ---------------------------------------------------------------- actors and learner


@pytest.mark.parametrize("atoms", [51, 1])
def test_actor_priorities_equal_the_learners_at_the_same_parameters(atoms):
    """Ape-X: the priorities the actors give new transitions from their own Q-values equal the learner's
    (|TD error|, or C51's KL) when the learner's online and target networks are the actor's."""
    B, n = 4, 3
    args = Args(atoms=atoms, n_step=n, noisy=False, double=True, gamma=0.9, v_min=-2, v_max=2)
    torch.manual_seed(0)
    model = QNetwork(4, 3, atoms=atoms, v_min=-2, v_max=2, noisy=False)
    learner = Learner(args, model, copy.deepcopy(model))
    replay = FrameReplay(capacity=B * 16, num_envs=B, n_step=n, gamma=0.9, alpha=1.0)
    actors = ActorPriorities(args, B, torch.device("cpu"))
    g = torch.Generator().manual_seed(1)
    obs = torch.zeros(B, 4, 84, 84, dtype=torch.uint8)
    first, valid = torch.ones(B, dtype=torch.bool), torch.ones(B, dtype=torch.bool)
    given = {}
    for t in range(12):
        frame = torch.randint(0, 256, (B, 84, 84), dtype=torch.uint8, generator=g)
        obs = torch.cat([obs[:, 1:] * ~first[:, None, None, None], frame[:, None]], 1)
        with torch.no_grad():
            q, logp = model(obs)
        action = q.argmax(1)
        actors.record(t, q, logp, action)
        p = actors.priorities(t, replay) if t >= n else None
        term = torch.rand(B, generator=g) < 0.2
        trunc = ~term & (torch.rand(B, generator=g) < 0.2)
        reward = torch.randn(B, generator=g).clamp(-1, 1)
        done = replay.add(frame, action, reward, term & valid, trunc & valid, first, valid, p)
        if done is not None:
            given[done] = p
        first, valid = next_flags(valid, (term | trunc) & valid)
    leaves = torch.nonzero(replay.tree.get(torch.arange(replay.capacity)) > 0).squeeze(1)
    slot, e = leaves // B, leaves % B
    returns, discounts, steps = replay.n_step(slot, e)
    batch = dict(obs=replay.stack(slot, e), actions=replay.actions[slot, e], returns=returns, discounts=discounts,
                 next_obs=replay.stack((slot + steps) % replay.R, e), weights=torch.ones(len(leaves)))
    with torch.no_grad():
        _, learner_p, _ = learner.loss(batch)
    torch.testing.assert_close(replay.tree.get(leaves).float(), learner_p.clamp(min=1e-6), rtol=1e-4, atol=1e-5)
    assert len(leaves) >= 12 and len(given) == 12 - n


def test_rainbow_learns_the_sanity_task(tmp_path):
    """Ape-X actors with every Rainbow part; the greedy policy (noise off) must read the pixels."""
    r = train(Args(game="sanity", num_envs=16, total_frames=16 * 40, learning_starts=128, env_steps_per_update=4,
                   learning_rate=1e-3, target_update_every=50, log_every=5, buffer_size=16 * 64,
                   output_dir=str(tmp_path), quiet=True))
    assert r["recent_returns"][0] < 0.75, "should start near chance"
    # the Ape-X epsilons (mean 0.07 over 16 envs) cap the behaviour's return near 0.96
    assert sum(r["recent_returns"][-3:]) / 3 > 0.9, r["recent_returns"]
    from cule.trainers.common.envs import SanityTask

    model = QNetwork(4, 2)
    model.load_state_dict(checkpoint.load(tmp_path)["model"])
    model.eval()
    task = SanityTask(512, seed=99)
    obs, _ = task.reset()
    with torch.no_grad():
        assert task.step(model(obs)[0].argmax(1))[1].float().mean() > 0.98


@pytest.mark.parametrize("switches", [
    dict(double=False, dueling=False, atoms=1, n_step=1, prioritized=False, noisy=False, apex=False),  # DQN
    dict(atoms=1, noisy=False, apex=False, actor_sync_every=3),  # Double + dueling + PER + 3-step, epsilon schedule
    dict(dueling=False, prioritized=False, apex=False),  # C51 + noisy, uniform replay
    dict(network="data-efficient", noisy_sigma0=0.1),  # data-efficient Rainbow's network and noise
])
def test_ablations_run(tmp_path, switches):
    r = train(Args(game="sanity", num_envs=8, total_frames=8 * 24, learning_starts=64, env_steps_per_update=8,
                   log_every=8, buffer_size=8 * 32, output_dir=str(tmp_path), quiet=True, epsilon_decay_frames=100,
                   **switches))
    # learning starts with the step that fills learning_starts (8 rows of 8 envs), then 8 / 8 = 1 per step
    assert r["grad_steps"] == 24 - 7
    assert math.isfinite(r["loss"])


def test_smoke_run_on_pong_with_actor_copies(tmp_path):
    """2,000 agent steps (4 environments x 500) on Pong, learning, checkpoints and the log."""
    r = train(Args(game="pong", num_envs=4, total_frames=4 * 500 * 4, learning_starts=400, env_steps_per_update=32,
                   batch_size=32, buffer_size=4 * 600, checkpoint_every=100, actor_sync_every=10, log_every=100,
                   output_dir=str(tmp_path), num_threads=1))
    assert r["update"] == 500 and r["frames"] == 8000
    # learning from step 99 (100 rows of 4 envs), then 4 / 32 gradient steps per step
    assert r["grad_steps"] == (500 - 99) * 4 // 32
    assert math.isfinite(r["loss"]) and math.isfinite(r["q"])
    state = checkpoint.load(tmp_path)
    assert state["update"] == 500 and state["frames"] == 8000 and state["extra"]["grad_steps"] == r["grad_steps"]
    assert "target" in state["extra"]
    assert (tmp_path / "log.csv").read_text().count("\n") == 6  # header + 5 lines


def test_evaluation_with_a_q_network_policy():
    from cule.trainers.common.evaluate import evaluate
    from cule.trainers.rainbow import epsilon_greedy

    model = QNetwork(4, 6).eval()
    scores = evaluate(model, "pong", episodes=2, max_frames=400,
                      act=lambda obs: epsilon_greedy(model(obs)[0], torch.tensor(0.001)))
    assert len(scores) == 2 and all(-21 <= s <= 0 for s in scores)


def test_resumes_after_kill_9(tmp_path):
    """Killed with SIGKILL, a run continues from its checkpoint: counters, target network, gradient steps."""
    cmd = [sys.executable, "-m", "cule.trainers.rainbow", "--game", "sanity", "--num-envs", "8", "--total-frames",
           "100000", "--learning-starts", "64", "--buffer-size", "512", "--env-steps-per-update", "8",
           "--checkpoint-every", "5", "--output-dir", str(tmp_path), "--quiet"]
    proc = subprocess.Popen(cmd, cwd=REPO, env={**os.environ, "OMP_NUM_THREADS": "1"})
    deadline = time.time() + 120
    while True:
        state = checkpoint.load(tmp_path) if (tmp_path / checkpoint.NAME).exists() else None
        if state is not None and state["update"] >= 15:
            break
        assert time.time() < deadline and proc.poll() is None, "no checkpoint written"
        time.sleep(0.5)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    saved = checkpoint.load(tmp_path)
    assert saved["frames"] == saved["update"] * 8 and saved["extra"]["grad_steps"] > 0
    r = train(Args(game="sanity", num_envs=8, total_frames=saved["frames"] + 8 * 12, learning_starts=64,
                   buffer_size=512, env_steps_per_update=8, checkpoint_every=5, output_dir=str(tmp_path),
                   quiet=True, resume=True))
    assert r["update"] == saved["update"] + 12 and r["frames"] == saved["frames"] + 8 * 12
    # the replay starts empty: learning resumes at the 8th step (64 transitions), one gradient step per step
    assert r["grad_steps"] == saved["extra"]["grad_steps"] + 12 - 7


def test_help_lists_and_explains_every_argument():
    out = subprocess.run([sys.executable, "-m", "cule.trainers.rainbow", "--help"], capture_output=True, text=True,
                         cwd=REPO)
    assert out.returncode == 0
    text = " ".join(out.stdout.split())
    for f in dataclasses.fields(Args):
        flag = "--" + f.name.replace("_", "-")
        assert flag in out.stdout, flag
        assert f.metadata.get("help") and " ".join(f.metadata["help"].split())[:30] in text, flag
    for unused in ("--ent-coef", "--vf-coef"):
        assert unused not in out.stdout
