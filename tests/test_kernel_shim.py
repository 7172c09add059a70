"""The CUDA backend's code path, run on the CPU through the host launch shim.

``AtariVectorEnv(..., _shim=True)`` keeps every environment's state in
separate tensors, addressed by a BatchView packed for them, and steps them
with cule/kernels/kernels.cu's ``cule_run`` / ``cule_gather`` compiled for the
host (cule/kernels/shim.hpp: grid and block as loops). The Python side is the
CUDA backend's (cule/backends/cuda.py) with the shim in place of NVRTC. Its
RAM, TIA frames, observations, rewards, flags and counters must equal the CPU
backend's bit for bit. On this path the state update records the TIA writes
of the frames a step shows and cule_render draws them (the CPU backend draws
as it emulates), and ended episodes reset in cule_reset.

``_shim=True`` runs the kernels as the CPU backend's core is compiled (the
host's side of every CULE_DEVICE_CODE switch); ``_shim="device"`` runs the
device's side, built by the host compiler (cule.kernels.device_shim: each
mapper's library built once and kept, under a minute of a core), so the code
the GPU runs is held to the CPU backend on every game too.
"""
import numpy as np
import pytest
import torch

import cule
from cule import backends
from cule.backends import cuda
from cule.kernels import device_shim
from conftest import report

RESULTS = {"host": [], "device": []}  # per side of the code: (game, frames, render stats)


def _pair(game, n=2, _shim=True, **kwargs):
    kwargs = {"num_threads": 1, **kwargs}
    return cule.AtariVectorEnv(game, n, **kwargs), cule.AtariVectorEnv(game, n, _shim=_shim, **kwargs)


def _compare(game, steps, n=2, seed=0, **kwargs):
    """Steps both backends with the same random actions; returns the shim env."""
    cpu, shim = _pair(game, n, **kwargs)
    out_c, out_s = cpu.reset(seed=seed), shim.reset(seed=seed)
    assert torch.equal(out_c[0], out_s[0]), f"{game}: reset observation"
    rng = np.random.default_rng(seed)
    for t in range(steps):
        a = torch.from_numpy(rng.integers(0, cpu.single_action_space.n, size=n))
        rc, rs = cpu.step(a), shim.step(a)
        for name, x, y in zip(("observation", "reward", "terminated", "truncated"), rc[:4], rs[:4]):
            assert torch.equal(x, y), f"{game} step {t}: {name}"
        for key in ("lives", "frame_number", "episode_frame_number", "env_id"):
            assert torch.equal(rc[4][key], rs[4][key]), f"{game} step {t}: info[{key}]"
        if "final_obs" in rc[4]:
            done = rc[2] | rc[3]
            assert torch.equal(rc[4]["final_obs"][done], rs[4]["final_obs"][done]), f"{game} step {t}: final_obs"
    assert torch.equal(cpu.get_ram(), shim.get_ram()), f"{game}: RAM"
    assert torch.equal(cpu.get_screen(), shim.get_screen()), f"{game}: TIA frame"
    return shim


@pytest.mark.parametrize("game", cule.list_games())
def test_shim_equals_cpu_backend(game, shim):
    """With the host's code, and with the kernels as the GPU compiles them (the opcode switch, the scanline
    loop that ends at WSYNC, the TIA without the host's tables) built by the host compiler."""
    env = _compare(game, 75, _shim=shim)
    RESULTS["device" if shim == "device" else "host"].append((game, 75 * 2 * env.frameskip,
                                                              env.backend.render_stats()))


@pytest.mark.extended
@pytest.mark.parametrize("game", cule.list_games())
def test_shim_equals_cpu_backend_long(game, shim):
    """2,000 steps of 4 environments: episodes end and restart in the reset kernel, levels change."""
    _compare(game, 2000, n=4, seed=1, _shim=shim)


@pytest.mark.parametrize("kwargs", [dict(autoreset_mode="SameStep", max_num_frames_per_episode=300, grayscale=False),
                                    dict(reset_mode="cache", episodic_life=True),
                                    dict(img_height=105, img_width=80, noop_max=5, maxpool=False),
                                    dict(img_height=224, img_width=200, grayscale=False, stack_num=1)])
def test_shim_equals_cpu_backend_other_settings(kwargs, shim):
    _compare("breakout", 150, n=3, _shim=shim, **kwargs)


@pytest.mark.parametrize("n, sms", [(5, 1), (40, 2), (70, 3), (33, 132)])
def test_launch_geometry_covers_every_environment_once(n, sms):
    """Small batches run a few environments per warp (launch_geometry): on the shim, with the kernels' own
    indexing, every environment is stepped exactly once (a skipped or doubled one would differ from the CPU)."""
    geometry = cuda.launch_geometry(n, sms)
    assert geometry.per_warp < 32
    _compare("breakout", 40, n=n, _shim=sms)


def test_launch_geometry_rule():
    """per_warp = count / (SMs x 8 warps), rounded down, within 1..32; enough two-warp blocks for every environment,
    and at least 8 warps per SM whenever there are that many environments."""
    h100 = 132
    assert [cuda.launch_geometry(n, h100).per_warp for n in (1, 1024, 1056, 1057, 4096, 16384, 33792, 65536)] == \
        [1, 1, 1, 1, 3, 15, 32, 32]
    for n, sms in [(1, 1), (1000, 7), (4096, 132), (65536, 132), (100, 1)]:
        g = cuda.launch_geometry(n, sms)
        warps = g.grid * g.block // 32
        assert warps * g.per_warp >= n > (warps - 2) * g.per_warp  # enough, and at most one block too many
        assert g.shared_bytes == (g.block // 32) * g.per_warp * cule._core.machine_slot_bytes
        if n >= sms * cuda.WARPS_PER_SM:  # every SM gets its warps
            assert -(-n // g.per_warp) >= sms * cuda.WARPS_PER_SM


def test_shim_equals_cpu_backend_gymnasium_steps(shim):
    """cule.make's steps (gymnasium's AtariEnv: the last emulated frame) draw as they go on the device path too."""
    kwargs = dict(img_height=None, img_width=None, stack_num=1, maxpool=False, noop_max=0, reward_clipping=False,
                  use_fire_reset=False, max_num_frames_per_episode=400, _gymnasium=True, _shim=shim)
    stats = _compare("breakout", 120, n=2, **kwargs).backend.render_stats()
    assert stats["replayed_steps"] == 0 and stats["inline_steps"] > 0, stats


def test_frames_come_from_the_render_pass(monkeypatch):
    """Every step of a game without resets is drawn by cule_render; skipping it leaves the observations stale."""
    cpu, shim = _pair("pong", 2)
    cpu.reset(seed=1), shim.reset(seed=1)
    actions = torch.tensor([2, 3])
    for _ in range(30):
        assert torch.equal(cpu.step(actions)[0], shim.step(actions)[0])
    stats = shim.backend.render_stats()
    assert (stats["replayed_steps"], stats["inline_steps"]) == (60, 0), stats
    launch = shim.backend.launcher.launch
    monkeypatch.setattr(shim.backend.launcher, "launch",
                        lambda kernel, geometry, **args: None if kernel == "cule_render" else launch(kernel, geometry, **args))
    assert not torch.equal(cpu.step(actions)[0], shim.step(actions)[0])


@pytest.mark.parametrize("room", ["none", "some"])
def test_steps_that_overflow_the_render_log_are_drawn_inline(monkeypatch, room):
    """With too little log room a step runs again drawing as it goes; the results stay the CPU backend's."""
    peak = _compare("breakout", 40).backend.render_stats()["peak_accesses"]
    monkeypatch.setattr(cuda, "LOG_ACCESSES_PER_ENV", 16 if room == "none" else peak - 1)
    stats = _compare("breakout", 40).backend.render_stats()
    if room == "none":
        assert stats["replayed_steps"] == 0 and stats["inline_steps"] == 80, stats
    else:
        assert stats["replayed_steps"] > 0 and stats["inline_steps"] > 0, stats


@pytest.mark.parametrize("autoreset_mode", ["NextStep", "SameStep"])
def test_ended_episodes_reset_in_the_reset_kernel(autoreset_mode):
    """cule_run lists the environments to reset (NextStep: those that ended the step before; SameStep: those
    ending now) and cule_reset resets them; the results equal the CPU backend's."""
    n = 4
    cpu, shim = _pair("breakout", n, autoreset_mode=autoreset_mode, max_num_frames_per_episode=200)
    cpu.reset(seed=2), shim.reset(seed=2)
    rng = np.random.default_rng(2)
    ended_before = torch.zeros(n, dtype=torch.bool)
    listed = 0
    for t in range(120):
        a = torch.from_numpy(rng.integers(0, 4, size=n))
        rc, rs = cpu.step(a), shim.step(a)
        for x, y in zip(rc[:4], rs[:4]):
            assert torch.equal(x, y), f"step {t}"
        ended = rc[2] | rc[3]
        expected = ended if autoreset_mode == "SameStep" else ended_before
        assert int(shim.backend.reset_count) == int(expected.sum()), f"step {t}"
        listed += int(expected.sum())
        ended_before = ended
    assert listed >= n  # every environment reached the frame limit at least once


def test_device_state_is_in_lane_layout():
    """The device keeps the consoles, ALE states and step snapshots in lane layout (cule/cpp/common.hpp): tiles of
    32 environments, 4-byte word w of lane l at tile word 32 w + l, so a warp's loads of one field coalesce. After
    steps with resets, each device array equals the CPU backend's structs rearranged here by numpy (40
    environments: a whole tile and part of one, zeros in the unused lanes)."""
    n, lanes = 40, cuda.LANES
    assert lanes == 32
    cpu, shim = _pair("breakout", n, max_num_frames_per_episode=120)
    cpu.reset(seed=5), shim.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(40):
        a = torch.from_numpy(rng.integers(0, 4, size=n))
        cpu.step(a), shim.step(a)
    host = cpu.emulator.arrays()
    lane_arrays = shim.emulator.lane_arrays()
    assert set(lane_arrays) == {"machines", "envs", "rngs", "saved_machines", "saved_envs", "saved_rngs"}
    for name, item in lane_arrays.items():
        words = host[name].view(np.uint32).reshape(n, item // 4)
        tiles = np.zeros((2 * lanes, item // 4), np.uint32)
        tiles[:n] = words
        expected = tiles.reshape(2, lanes, item // 4).transpose(0, 2, 1).ravel()
        device = shim.backend.arrays[name].numpy().view(np.uint32)
        assert device.shape == expected.shape and np.array_equal(device, expected), name
        assert np.array_equal(shim.backend.host_array(name), host[name]), name


def test_step_path_makes_no_host_transfer(monkeypatch):
    """Every way torch has to bring a tensor's value to the host fails while the CUDA path steps."""
    env = cule.AtariVectorEnv("pong", 4, _shim=True, num_threads=1)
    env.reset(seed=0)
    actions = torch.zeros(4, dtype=torch.long)

    def refuse(name):
        def guard(*args, **kwargs):
            raise AssertionError(f"host transfer in the step path: Tensor.{name}")
        return guard

    for name in ("cpu", "numpy", "item", "tolist", "__bool__", "__int__", "__float__", "__index__"):
        monkeypatch.setattr(torch.Tensor, name, refuse(name))
    for _ in range(20):
        obs, rew, term, trunc, info = env.step(actions)
    monkeypatch.undo()
    assert obs.shape == (4, 4, 84, 84) and info["lives"].shape == (4,)


def test_bad_action_on_the_device_path_is_reported_at_reset():
    env = cule.AtariVectorEnv("pong", 2, _shim=True, num_threads=1)
    env.reset(seed=0)
    env.step(torch.tensor([0, 99]))  # cannot be checked without waiting for the device: played as NOOP
    with pytest.raises(ValueError, match="outside the action set"):
        env.reset(seed=0)
    env.reset(seed=0)  # reported once; the environments stay usable
    env.step(torch.tensor([0, 1]))


def test_cuda_unavailable_says_what_is_missing():
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(cule.CudaUnavailableError, match="CUDA"):
        cule.AtariVectorEnv("pong", 2, device="cuda")
    with pytest.raises(cule.CudaUnavailableError):
        cule.make("ALE/Pong-v5", 2, device="cuda:0")


@pytest.mark.parametrize("which", ["host", "device"])
def test_report_shim_table(which):
    results = RESULTS[which]
    if not results:
        pytest.skip("no game was compared")
    replayed = sum(r[2]["replayed_steps"] for r in results)
    drawn_inline = sum(r[2]["inline_steps"] for r in results)
    peaks = sorted((r[2]["peak_accesses"], r[0]) for r in results)
    report(f"CUDA kernels on the host launch shim ({which} code) vs the CPU backend",
           f"{len(results)}/104 games bit-identical (RAM, TIA frames, observations, rewards, flags, counters), "
           f"{results[0][1]} frames per game; steps drawn by cule_render {replayed}, by the state update "
           f"{drawn_inline}; TIA accesses recorded per step: median {peaks[len(peaks) // 2][0]}, "
           f"most {peaks[-1][0]} ({peaks[-1][1]}); log room {cuda.LOG_ACCESSES_PER_ENV}")


def test_kernel_signatures_come_from_the_core_and_the_shim_checks_each_argument():
    """The launchers build every argument list by name from cule._core.kernel_signatures
    (cule/cpp/vector/kernel_abi.hpp); the shim refuses a count or a kind that differs from the kernel's own
    parameter types, and Python refuses a missing, unknown or wrongly typed argument before launching."""
    from cule import _core

    assert tuple(cuda.SIGNATURES) == cuda.KERNELS and "cule_run" in cuda.SIGNATURES
    gather = [name for name, _, _ in cuda.SIGNATURES["cule_gather"]]
    assert gather[4:-1] == list(_core.step_outputs)  # one array per step output, in the declared order
    env = cule.AtariVectorEnv("pong", 2, _shim=True)
    env.reset(seed=0)
    view = env.backend.view
    ok = dict(batches=view, per_warp=1)
    cuda.ShimLauncher("2K").launch("cule_reset", cuda.Geometry(1, 64, 0, 32), **ok)
    with pytest.raises(TypeError, match="cule_reset takes batches, per_warp"):
        cuda.ShimLauncher("2K").launch("cule_reset", cuda.Geometry(1, 64, 0, 32), batches=view)
    with pytest.raises(TypeError, match="per_warp is an int32_t"):
        cuda.ShimLauncher("2K").launch("cule_reset", cuda.Geometry(1, 64, 0, 32), batches=view, per_warp=2**40)
    with pytest.raises(TypeError, match="batches is a const cule::BatchView"):
        cuda.ShimLauncher("2K").launch("cule_reset", cuda.Geometry(1, 64, 0, 32), batches=1.5, per_warp=1)
    # below the Python check: the shim compares each kind with the kernel's parameter type
    with pytest.raises(ValueError, match="argument 1 of the kernel is of kind int32"):
        _core.shim_launch("2K", "cule_reset", 1, 64, [view.data_ptr(), 1], [1, 1])
    with pytest.raises(ValueError, match="takes 2 arguments, got 3"):
        _core.shim_launch("2K", "cule_reset", 1, 64, [view.data_ptr(), 1, 0], [1, 2, 2])
    assert _core.threads_per_block == cuda.THREADS_PER_BLOCK == 64
    assert backends.torch_dtype(np.dtype(np.uint16)) == torch.uint16 and backends.torch_dtype(np.float32) == torch.float32


def test_device_shim_refuses_a_bad_launch_and_a_bad_mapper(device_code):
    launch = device_shim.launcher("2K")
    with pytest.raises(ValueError, match="takes .* arguments, got 1"):
        launch("cule_run", 1, 32, [0], [1])
    with pytest.raises(ValueError, match="no kernel named 'cule_nothing'"):
        launch("cule_nothing", 1, 32, [], [])
    with pytest.raises(ValueError, match="no mapper 'XY'"):
        device_shim.launcher("XY")
    with pytest.raises(ValueError, match="_shim='gpu'"):
        cule.AtariVectorEnv("pong", 1, _shim="gpu")
