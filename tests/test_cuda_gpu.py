"""The CUDA backend on a real GPU: skipped cleanly where there is none.

On a GPU machine: pip install -e ".[test,cuda]" && python -m pytest -q tests/test_cuda_gpu.py
(CULE_GPU_GAMES=pong,breakout,... or =all chooses the games compared with the CPU backend one at a time;
CULE_GPU_ALL_GAMES_STEPS=N steps all 104 in one batch beside it, about 90 s for 100 steps on an H200;
python -m cule.benchmarks.gpu_session runs it with the benchmarks).
"""
import os
import time

import numpy as np
import pytest
import torch

import cule

try:
    import cupy  # noqa: F401
    HAVE_CUPY = True
except ImportError:
    HAVE_CUPY = False

pytestmark = pytest.mark.skipif(not (torch.cuda.is_available() and HAVE_CUPY),
                                reason="needs a CUDA GPU, a CUDA build of torch and cupy (pip install 'cule[cuda]')")


_GAMES = os.environ.get("CULE_GPU_GAMES", "pong,breakout,ms_pacman,space_invaders,pitfall,video_pinball,tutankham")
GAMES = cule.list_games() if _GAMES == "all" else _GAMES.split(",")


@pytest.mark.parametrize("game", GAMES)
def test_cuda_equals_cpu_backend(game):
    n = 8
    cpu = cule.AtariVectorEnv(game, n)
    gpu = cule.AtariVectorEnv(game, n, device="cuda")
    assert torch.equal(cpu.reset(seed=0)[0], gpu.reset(seed=0)[0].cpu())
    rng = np.random.default_rng(0)
    for t in range(300):
        a = torch.from_numpy(rng.integers(0, cpu.single_action_space.n, size=n))
        rc, rg = cpu.step(a), gpu.step(a.cuda())
        for name, x, y in zip(("obs", "reward", "terminated", "truncated"), rc[:4], rg[:4]):
            assert torch.equal(x, y.cpu()), f"{game} step {t}: {name}"
    assert torch.equal(cpu.get_ram(), gpu.get_ram().cpu())
    assert torch.equal(cpu.get_screen(), gpu.get_screen().cpu())
    stats = gpu.backend.render_stats()
    assert stats["replayed_steps"] > 0, stats  # frames drawn by cule_render
    assert not set(cule._core.host_loop_arrays) & set(gpu.backend.arrays)  # the host loop's code maps stay there


@pytest.mark.parametrize("kwargs", [dict(autoreset_mode="SameStep", max_num_frames_per_episode=200),
                                    dict(reset_mode="cache", episodic_life=True)])
def test_cuda_resets_equal_cpu_backend(kwargs):
    """Episodes end and restart through cule_reset (the atomic reset list) as on the CPU backend."""
    n = 64
    cpu = cule.AtariVectorEnv("breakout", n, **kwargs)
    gpu = cule.AtariVectorEnv("breakout", n, device="cuda", **kwargs)
    assert torch.equal(cpu.reset(seed=1)[0], gpu.reset(seed=1)[0].cpu())
    rng = np.random.default_rng(1)
    ended = 0
    for t in range(150):
        a = torch.from_numpy(rng.integers(0, cpu.single_action_space.n, size=n))
        rc, rg = cpu.step(a), gpu.step(a.cuda())
        for name, x, y in zip(("obs", "reward", "terminated", "truncated"), rc[:4], rg[:4]):
            assert torch.equal(x, y.cpu()), f"step {t}: {name}"
        ended += int((rc[2] | rc[3]).sum())
    assert ended > 0


def test_cuda_fps_is_printed():
    n, steps = 1024, 50
    env = cule.AtariVectorEnv("pong", n, device="cuda")
    env.reset(seed=0)
    actions = torch.zeros(n, dtype=torch.long, device="cuda")
    env.step(actions)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        env.step(actions)
    torch.cuda.synchronize()
    fps = steps * n * 4 / (time.perf_counter() - t0)
    print(f"pong, {n} envs on {torch.cuda.get_device_name()}: {fps:,.0f} frames/s")
    assert fps > 0


@pytest.mark.parametrize("n, steps", [(3200, 40), (34000, 8)])
def test_cuda_launch_geometry_equals_cpu_backend(n, steps):
    """A few environments per warp (3,200 on an H100: three per warp) and whole warps (34,000), each stepped once:
    the CPU backend's observations, rewards and RAM."""
    from cule.backends import cuda

    cpu = cule.AtariVectorEnv("breakout", n)
    gpu = cule.AtariVectorEnv("breakout", n, device="cuda")
    per_warp = cuda.launch_geometry(n, gpu.backend.launcher.sms).per_warp
    assert torch.equal(cpu.reset(seed=3)[0], gpu.reset(seed=3)[0].cpu())
    rng = np.random.default_rng(3)
    for t in range(steps):
        a = torch.from_numpy(rng.integers(0, cpu.single_action_space.n, size=n))
        rc, rg = cpu.step(a), gpu.step(a.cuda())
        assert torch.equal(rc[0], rg[0].cpu()) and torch.equal(rc[1], rg[1].cpu()), f"step {t} ({per_warp} per warp)"
    assert torch.equal(cpu.get_ram(), gpu.get_ram().cpu())


@pytest.mark.parametrize("game", ["pong", "ms_pacman", "pitfall2"])
def test_cuda_states_equal_cpu_rows_and_replay(game):
    """Rows, replay and forks are checked apart, and a failure names the parts of the row that differ."""
    from cule.state import differences

    n = 40
    kw = dict(repeat_action_probability=0.25, max_num_frames_per_episode=300)
    cpu = cule.AtariVectorEnv(game, n, **kw)
    gpu = cule.AtariVectorEnv(game, n, device="cuda", **kw)
    cpu.reset(seed=1)
    gpu.reset(seed=1)
    rng = np.random.default_rng(2)
    actions = torch.from_numpy(rng.integers(0, cpu.single_action_space.n, size=(100, n)))
    for a in actions[:30]:
        cpu.step(a)
        gpu.step(a.cuda())
    saved = gpu.clone_state()
    failures = []
    if not saved.is_cuda:
        failures.append("clone_state left the device")
    diff = differences(saved, cpu.clone_state(), gpu.emulator.state_layout(True))
    if diff:
        failures.append(f"GPU rows differ from the CPU backend's in {len(diff)} row-part(s): " + "; ".join(diff[:12]))
    first = [gpu.step(a.cuda())[0].cpu() for a in actions[30:]]
    gpu.restore_state(saved)
    replay = [t for t, (o, a) in enumerate(zip(first, actions[30:])) if not torch.equal(o, gpu.step(a.cuda())[0].cpu())]
    if replay:
        failures.append(f"after restore_state, steps {replay[:10]} (of {len(first)}) differ from the first run")
    gpu.copy_state(0, torch.arange(1, n))
    obs = gpu.step(torch.zeros(n, dtype=torch.long).cuda())[0]
    forks = [i for i in range(n) if not torch.equal(obs[i], obs[0])]
    if forks:
        failures.append(f"after copy_state(0, 1..{n - 1}), environments {forks[:10]} differ from environment 0")
    assert not failures, "\n".join(failures)


def test_mixed_batch_on_cuda_equals_cpu():
    """A batch of several games: each game's kernels in turn, the outputs joined in batch order on the device."""
    games = ["pong", "ms_pacman", "pitfall2", "klax", "montezuma_revenge"]
    cpu = cule.AtariVectorEnv(games, num_envs=3, repeat_action_probability=0.25)
    gpu = cule.AtariVectorEnv(games, num_envs=3, repeat_action_probability=0.25, device="cuda")
    assert torch.equal(cpu.reset(seed=2)[0], gpu.reset(seed=2)[0].cpu())
    rng = np.random.default_rng(2)
    for t in range(200):
        a = torch.from_numpy(rng.integers(0, 18, size=cpu.num_envs))
        rc, rg = cpu.step(a), gpu.step(a.cuda())
        for name, x, y in zip(("obs", "reward", "terminated", "truncated"), rc[:4], rg[:4]):
            assert y.device.type == "cuda" and torch.equal(x, y.cpu()), f"step {t}: {name}"
        assert torch.equal(rc[4]["game"], rg[4]["game"].cpu())
    assert torch.equal(cpu.get_ram(), gpu.get_ram().cpu())


def every_game_in_one_batch(steps: int, gpu_kwargs: dict, n: int = 2, log=print) -> dict[str, str]:
    """All 104 games as one mixed batch (one launch per mapper), stepped beside the CPU backend with sticky
    actions; returns, per game that differs, the first step and output that did."""
    games = cule.list_games()
    kw = dict(num_envs=n, repeat_action_probability=0.25)
    cpu = cule.AtariVectorEnv(games, **kw)
    gpu = cule.AtariVectorEnv(games, **kw, **gpu_kwargs)
    first: dict[str, str] = {}

    def compare(t, outputs, index):
        for name, x, y in outputs:
            rows = (x != y.cpu()).reshape(x.shape[0], -1).any(1).nonzero().flatten()
            for g in {int(index[i]) for i in rows}:
                first.setdefault(games[g], f"step {t}: {name}")

    index = torch.repeat_interleave(torch.arange(len(games)), n)
    t0 = time.perf_counter()
    compare("reset", [("obs", cpu.reset(seed=3)[0], gpu.reset(seed=3)[0])], index)
    rng = np.random.default_rng(3)
    for t in range(steps):
        a = torch.from_numpy(rng.integers(0, 18, size=cpu.num_envs))
        rc, rg = cpu.step(a), gpu.step(a.to(gpu.device))
        compare(t, zip(("obs", "reward", "terminated", "truncated"), rc[:4], rg[:4]), rc[4]["game"])
        if t % 10 == 9 or t == steps - 1:
            log(f"  step {t + 1}/{steps}, {time.perf_counter() - t0:.0f} s: {len(first)} game(s) differ")
    compare("end", [("ram", cpu.get_ram(), gpu.get_ram())], index)
    return first


@pytest.mark.skipif(not os.environ.get("CULE_GPU_ALL_GAMES_STEPS"),
                    reason="CULE_GPU_ALL_GAMES_STEPS=N steps all 104 games in one batch beside the CPU (minutes)")
def test_every_game_in_one_batch_on_cuda_equals_cpu():
    differ = every_game_in_one_batch(int(os.environ["CULE_GPU_ALL_GAMES_STEPS"]), dict(device="cuda"))
    assert not differ, differ


def test_cuda_refuses_damaged_and_crafted_rows_and_fuzzes_clean():
    """Rows checked on the device before anything loads: a flipped bit (digest) and a crafted out-of-range field
    are refused and change nothing; then mutated rows of pong and pitfall2 (tests/state_fuzz_child.py)."""
    import subprocess
    import sys

    from cule import state as state_format
    from cule.errors import StateError
    from conftest import REPO

    env = cule.AtariVectorEnv("ms_pacman", 8, device="cuda")
    env.reset(seed=4)
    for _ in range(20):
        env.step(torch.randint(0, 9, (8,), device="cuda"))
    rows = env.clone_state()
    damaged = rows.cpu().clone()
    damaged[3, 5000] ^= 1
    with pytest.raises(StateError, match="digest"):
        env.restore_state(damaged)
    crafted = rows.cpu().clone()
    crafted[1, state_format.HEADER_BYTES + 328] = 7  # tia.current_buffer
    payload = crafted[:, state_format.HEADER_BYTES:].numpy()
    state_format.set_digests(crafted, torch.from_numpy(
        payload.view("<u4").astype(np.uint64).sum(axis=1, dtype=np.uint64).view(np.int64)))
    with pytest.raises(StateError, match="current_buffer"):
        env.restore_state(crafted)
    assert torch.equal(env.clone_state()[:, state_format.HEADER_BYTES:], rows[:, state_format.HEADER_BYTES:])
    env.restore_state(rows)
    for game, policy in (("pong", "vector"), ("pitfall2", "gymnasium")):
        done = subprocess.run([sys.executable, str(REPO / "tests" / "state_fuzz_child.py"), game, "cuda", policy, "40",
                               "7"], capture_output=True, text=True, timeout=600, cwd=REPO)
        assert done.returncode == 0 and "states:" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]


def test_cules_env_class_on_cuda_equals_the_cpu():
    """cule.torchcule.Env as CuLE's programs use it on a GPU (grey 84x84, episodic life, cached starts), its
    tensors on the GPU, against the same Env on the CPU (the same actions: torch's CPU and CUDA generators
    draw different random initial steps)."""
    from cule.torchcule import Env
    envs = [Env("PongNoFrameskip-v4", 64, color_mode="gray", rescale=True, episodic_life=True, frameskip=4,
                repeat_prob=0.0, device=device, max_episode_length=2000) for device in ("cpu", "cuda")]
    seeds = torch.arange(64)
    for env in envs:
        env.train()
        env.reset(seeds=seeds, initial_steps=0)
    rng = np.random.default_rng(0)
    dones = 0
    for t in range(700):
        a = torch.from_numpy(rng.integers(0, 6, size=64)).to(torch.uint8)
        (oc, rc, dc, ic), (og, rg, dg, ig) = envs[0].step(a), envs[1].step(a.cuda())
        assert og.is_cuda and og.shape == (64, 84, 84, 1)
        for name, x, y in (("obs", oc, og), ("reward", rc, rg), ("done", dc, dg), ("lives", ic["ale.lives"],
                                                                                     ig["ale.lives"])):
            assert torch.equal(x, y.cpu()), f"step {t}: {name}"
        dones += int(dc.sum())
    assert dones >= 64  # every episode reached the frame cap and restarted from the start cache


def test_a_checkpoint_resumes_and_is_evaluated_and_tested_on_cuda(tmp_path):
    """A run's checkpoint loads onto the GPU with everything in it, the torch RNG state included (which
    torch.set_rng_state takes on the CPU only): --resume, --test-snapshots and --eval-only on cuda."""
    from cule.benchmarks import train

    common = ["--quiet", "--output-dir", str(tmp_path), "--eval-episodes", "0"]
    train.main(["--trainer", "a2c_vtrace", "--game", "pong", "--device", "cpu", "--num-envs", "8", "--frames",
                "2048", "--test-every", "1024", "--test-episodes", "2", "--test-later", *common])
    resumed = train.main(["--resume", "--device", "cuda", "--frames", "4096", *common])
    frames = resumed["at_end"]["frames"]
    assert 2048 < frames <= 4096 and resumed["device"] == "cuda"
    tested = train.main(["--test-snapshots", "--device", "cuda", *common])
    assert tested["tests"]["count"] == frames // 1024 and tested["tests"]["device"] == "cuda"
    evaluated = train.main(["--eval-only", "--device", "cuda", "--quiet", "--output-dir", str(tmp_path),
                            "--eval-episodes", "2"])
    assert evaluated["evaluation"]["episodes"] == 2 and evaluated["evaluation"]["device"] == "cuda"
