"""Reliability through the Python API: ROMs that are none of ALE's
games, bad input of every kind, and determinism across threads and processes.

(The C++ core under sanitizers: tests/test_fuzz.py.)
"""
import hashlib
import os
import subprocess
import sys
import time
import warnings

import gymnasium
import numpy as np
import pytest
import torch

import cule
from cule import RomError, UnknownRomWarning
from conftest import REPO

RAW = dict(frameskip=1, grayscale=False, img_height=None, img_width=None, stack_num=1, maxpool=False, noop_max=0,
           use_fire_reset=False, reward_clipping=False, repeat_action_probability=0.0, reset_mode="ale")

# A 4K homebrew ROM: a 262-line NTSC frame whose background colour is SWCHA,
# so each joystick direction gives its own colour on screen.
_HOMEBREW_CODE = bytes.fromhex(
    "78 d8 a2ff 9a"                    # F000: SEI CLD LDX #$FF TXS
    "a902 8500 8502 8502 8502 a900 8500"  # F005: VSYNC on, 3 lines, VSYNC off
    "a225 8502 ca d0fb"                # 37 lines of VBLANK time
    "ad8002 8509"                      # LDA SWCHA; STA COLUBK
    "a2c0 8502 ca d0fb"                # 192 picture lines
    "a21e 8502 ca d0fb"                # 30 lines of overscan
    "4c05f0")                          # JMP $F005
# ALE's actions 0-17 as joystick directions, and the SWCHA pin each pulls low.
DIRECTIONS = ["", "", "U", "R", "L", "D", "UR", "UL", "DR", "DL", "U", "R", "L", "D", "UR", "UL", "DR", "DL"]
PIN = {"U": 0x10, "D": 0x20, "L": 0x40, "R": 0x80}


def _background(action):
    """The palette index the homebrew ROM shows for an action: SWCHA with the pins pulled low, bit 0 dropped."""
    return (0xFF & ~sum(PIN[d] for d in DIRECTIONS[action])) & 0xFE


# A frame longer than ALE's 25,000-instruction budget, drawn only by TIA
# reads: a new background colour at line 0, then ~30,000 instructions of
# reading CXM0P before the next VSYNC, so ALE cuts the frame with the picture
# caught up by the reads alone (and finishes it in the next frame's call).
_LONG_FRAME_CODE = bytes.fromhex(
    "78 d8 a2ff 9a"                    # F000: SEI CLD LDX #$FF TXS
    "a902 8500 8502 8502 8502 a900 8500"  # F005: VSYNC on, 3 lines, VSYNC off
    "e680 a580 8509"                   # F013: INC $80; LDA $80; STA COLUBK
    "a027 a200 a500 ca d0fb 88 d0f6"   # F019: 39 x 256 x (LDA CXM0P; DEX; BNE)
    "4c05f0")                          # JMP $F005


def _homebrew(tmp_path, name="homebrew.bin", code=_HOMEBREW_CODE):
    image = bytearray([0xEA] * 4096)
    image[: len(code)] = code
    image[0xFFC:] = bytes([0x00, 0xF0, 0x00, 0xF0])  # reset and BRK vectors: $F000
    path = tmp_path / name
    path.write_bytes(bytes(image))
    return path


def _make_quietly(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownRomWarning)
        return cule.AtariVectorEnv(*args, **kwargs)


# ---- ROMs that are none of ALE's games: the bare console


def test_unknown_rom_runs_as_a_bare_console(tmp_path):
    path = _homebrew(tmp_path)
    md5 = hashlib.md5(path.read_bytes()).hexdigest()
    with pytest.warns(UnknownRomWarning, match=f"md5 {md5}.*bare console"):
        env = cule.AtariVectorEnv(str(path), 2, full_action_space=False, max_num_frames_per_episode=300, **RAW)
    assert env.game is None and env.single_action_space.n == 18  # the full set, even when minimal is asked for
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    truncations, resetting = 0, False
    for t in range(400):
        actions = rng.integers(0, 18, size=2)
        _, rewards, terminated, truncated, info = env.step(actions)
        assert not rewards.any() and not terminated.any(), f"step {t}"
        assert info["lives"].tolist() == [1, 1]
        truncations += int(truncated.sum())
        if not resetting:  # the console ran the action: its direction shows as the background
            shown = env.get_screen()[:, 100, 80].tolist()
            assert shown == [_background(a) for a in actions], f"step {t}, actions {actions}"
        resetting = bool(truncated.any())  # the next step resets (NextStep) and ignores its action
    assert truncations == 2  # episodes still end at the frame limit (400 steps, a limit of 300 frames)


def test_bare_console_through_make_and_modes(tmp_path):
    path = _homebrew(tmp_path, "my_game.a26")
    with pytest.warns(UnknownRomWarning):
        env = cule.make(str(path), 1, difficulty=3)  # the difficulty switches are the console's own
    env.reset(seed=1)
    for _ in range(50):
        _, reward, terminated, _, _ = env.step(np.array([3]))
        assert reward.item() == 0 and not terminated.item()
    with pytest.raises(ValueError, match=r"bare has modes \[0\]"):
        _make_quietly(str(path), 1, mode=1)


def test_a_changed_game_rom_is_a_bare_console(tmp_path):
    data = bytearray(cule.load_rom("space_invaders").data)
    data[100] ^= 0x01
    path = tmp_path / "invaders_hack.bin"
    path.write_bytes(bytes(data))
    with pytest.warns(UnknownRomWarning, match=hashlib.md5(bytes(data)).hexdigest()):
        env = cule.AtariVectorEnv(str(path), 1, **RAW)
    env.reset(seed=0)
    for _ in range(100):
        _, reward, terminated, _, _ = env.step(np.array([1]))
        assert reward.item() == 0 and not terminated.item()


def test_bare_console_on_the_device_path(tmp_path):
    """The CUDA backend's code (run on the CPU through the kernel host shim) gives the same bits."""
    path = str(_homebrew(tmp_path))
    cpu, shim = _make_quietly(path, 2, num_threads=1), _make_quietly(path, 2, num_threads=1, _shim=True)
    outs = [cpu.reset(seed=3), shim.reset(seed=3)]
    assert torch.equal(outs[0][0], outs[1][0])
    rng = np.random.default_rng(1)
    for t in range(100):
        actions = torch.from_numpy(rng.integers(0, 18, size=2))
        a, b = cpu.step(actions), shim.step(actions)
        assert all(torch.equal(x, y) for x, y in zip(a[:4], b[:4])), f"step {t}"
    assert torch.equal(cpu.get_screen(), shim.get_screen())


def test_frames_cut_by_the_instruction_budget_on_the_device_path(tmp_path):
    """A frame ALE cuts after 25,000 instructions shows what the TIA reads drew: the render pass must replay the
    last read (cule/cpp/chips/render_log.hpp), since no write follows it in that frame's call."""
    path = str(_homebrew(tmp_path, code=_LONG_FRAME_CODE))
    cpu, shim = _make_quietly(path, 1, num_threads=1, **RAW), _make_quietly(path, 1, num_threads=1, _shim=True, **RAW)
    assert torch.equal(cpu.reset(seed=0)[0], shim.reset(seed=0)[0])
    colours = set()
    for t in range(12):
        a, b = cpu.step(np.array([0])), shim.step(np.array([0]))
        assert torch.equal(a[0], b[0]), f"step {t}"
        colours.add(int(a[0][0, 0, -1, -1, 0]))  # bottom-right pixel: drawn only by the reads
    assert len(colours) >= 3  # the picture changes from long frame to long frame
    assert shim.backend.render_stats()["replayed_steps"] == 12


@pytest.mark.parametrize("size", [1000, 3000, 6144, 8448, 12288, 32768, 40000])
def test_unsupported_size_is_a_clear_error(tmp_path, size):
    path = tmp_path / "odd.bin"
    path.write_bytes(bytes(size))
    with pytest.raises(RomError, match=f"{size} bytes.*(Supported sizes|Supported:)"):
        cule.AtariVectorEnv(str(path), 1)


def test_core_refuses_an_image_smaller_than_its_mapper():
    rom = cule.load_rom("pong")
    with pytest.raises(ValueError, match="too small for its mapper"):
        cule._core.Emulator(rom.data[:1024], "F6", "pong", 1, repeat_action_probability=0.0,
                            max_num_frames_per_episode=0, **rom.properties)


# ---- bad input: a clear error, and the environments carry on as if it never came


def _bad_calls(n, num_envs):
    """(description, call, expected exception, message pattern); each call gets the env; n = batch size."""
    meta = torch.zeros(n, dtype=torch.int64, device="meta")
    return [
        ("float actions", lambda e: e.step(np.zeros(n, np.float32)), TypeError, "integer indices"),
        ("bool actions", lambda e: e.step(np.zeros(n, bool)), TypeError, "integer indices"),
        ("string actions", lambda e: e.step(np.array(["UP"] * n)), TypeError, "integer indices"),
        ("float tensor", lambda e: e.step(torch.zeros(n)), TypeError, "integer indices"),
        ("too many actions", lambda e: e.step(np.zeros(n + 1, np.int64)), ValueError, f"expected {n} actions"),
        ("2-d actions", lambda e: e.step(np.zeros((1, n), np.int64)), ValueError, f"expected {n} actions"),
        ("scalar action", lambda e: e.step(np.int64(0)), ValueError, f"expected {n} actions"),
        ("negative action", lambda e: e.step(np.full(n, -1)), ValueError, "outside the action set"),
        ("action past the set", lambda e: e.step(np.full(n, 6)), ValueError,
         r"outside the action set \(valid: 0\.\.5\)"),
        ("huge action", lambda e: e.step(np.full(n, 2**40)), ValueError, "outside the action set"),
        ("actions on another device", lambda e: e.step(meta), ValueError, r"move them with \.to\('cpu'\)"),
        ("short reset_mask", lambda e: e.reset(options={"reset_mask": np.ones(num_envs - 1, bool)}), ValueError,
         rf"reset_mask must have shape \({num_envs},\)"),
        ("2-d reset_mask", lambda e: e.reset(options={"reset_mask": np.ones((1, num_envs), bool)}), ValueError,
         "reset_mask must have shape"),
        ("long tensor mask", lambda e: e.reset(options={"reset_mask": torch.ones(num_envs + 1, dtype=torch.bool)}),
         ValueError, "reset_mask must have shape"),
        ("int reset_mask", lambda e: e.reset(options={"reset_mask": np.ones(num_envs, int)}), TypeError,
         "boolean array"),
        ("list reset_mask", lambda e: e.reset(options={"reset_mask": [True] * num_envs}), TypeError, "boolean array"),
        ("negative seed", lambda e: e.reset(seed=-5), ValueError, "seeds must lie"),
        ("seed too large", lambda e: e.reset(seed=2**31), ValueError, "seeds must lie"),
        ("float seed", lambda e: e.reset(seed=1.5), TypeError, "seed must be"),
        ("wrong number of seeds", lambda e: e.reset(seed=np.arange(num_envs + 1)), ValueError,
         f"{num_envs} integer seeds"),
        ("uint64 seeds past int64", lambda e: e.reset(seed=np.full(num_envs, 2**64 - 1, np.uint64)), ValueError,
         "seeds must lie"),
        ("negative seeds", lambda e: e.reset(seed=np.full(num_envs, -1)), ValueError, "seeds must lie"),
        ("bool seed", lambda e: e.reset(seed=True), TypeError, "seed must be"),
        ("seed past int64", lambda e: e.reset(seed=2**63), ValueError, "seeds must lie"),
        ("an option other than reset_mask", lambda e: e.reset(options={"env_ids": [0]}), ValueError,
         "knows the option 'reset_mask' only"),
    ] + ([("state ids twice", lambda e: e.restore_state(e.clone_state([0, 1]), [1, 1]), ValueError,
           "lists an environment twice"),
          ("no state ids", lambda e: e.clone_state([]), ValueError, "ids is empty")] if n == num_envs else [])


@pytest.mark.parametrize("batch_size", [0, 1])
def test_bad_input_is_refused_and_changes_nothing(batch_size):
    """Every bad call raises a clear error; the env that saw them all gives, step for step, exactly the
    results of an env that never did (sync, and async with batch_size 1)."""
    n = 3
    kwargs = dict(num_threads=2, repeat_action_probability=0.25, batch_size=batch_size)
    clean, noisy = cule.AtariVectorEnv("pong", n, **kwargs), cule.AtariVectorEnv("pong", n, **kwargs)
    batch = noisy.batch_size
    results = [clean.reset(seed=5), noisy.reset(seed=5)]
    rng = np.random.default_rng(0)
    calls = _bad_calls(batch, n)
    for t in range(3 * len(calls)):
        if t % 3 == 0:
            what, call, error, pattern = calls[t // 3]
            with pytest.raises(error, match=pattern):
                call(noisy)
        actions = rng.integers(0, 6, size=batch)
        a, b = clean.step(actions), noisy.step(torch.from_numpy(actions))
        for x, y in zip(a[:4], b[:4]):
            assert torch.equal(x, y), f"step {t}, after {what}"
        assert all(torch.equal(a[4][k], b[4][k]) for k in ("env_id", "lives", "frame_number"))
    assert torch.equal(clean.get_ram(), noisy.get_ram())


@pytest.mark.parametrize("batch_size", [0, 2])
def test_send_and_recv_out_of_turn_are_refused_and_lose_nothing(batch_size):
    """send() steps the batch returned last and recv() returns the next: a recv() before that batch is sent
    would pass over its environments for good, and a second send() would have no batch to step."""
    kwargs = dict(num_threads=2, batch_size=batch_size)
    clean, noisy = cule.AtariVectorEnv("pong", 4, **kwargs), cule.AtariVectorEnv("pong", 4, **kwargs)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before recv\(\)"):
        noisy.recv()
    clean.reset(seed=2)
    noisy.reset(seed=2)
    batch, rng, seen = clean.batch_size, np.random.default_rng(0), set()
    for t in range(12):
        actions = rng.integers(0, 6, size=batch)
        if t % 4 == 0:
            with pytest.raises(RuntimeError, match=r"recv\(\) before send\(\): environments \["):
                noisy.recv()
        noisy.send(actions)
        if t % 4 == 1:
            with pytest.raises(RuntimeError, match=r"send\(\) twice"):
                noisy.send(actions)
        a, b = clean.step(actions), noisy.recv()
        for x, y in zip(a[:4], b[:4]):
            assert torch.equal(x, y), f"step {t}"
        assert torch.equal(a[4]["env_id"], b[4]["env_id"])
        seen.update(b[4]["env_id"].tolist())
    assert seen == {0, 1, 2, 3}  # every environment kept its turn
    assert torch.equal(clean.get_ram(), noisy.get_ram())


def test_closed_env_refuses_everything():
    env = cule.AtariVectorEnv("pong", 2)
    env.reset(seed=0)
    env.close()
    env.close()  # twice is fine
    for name, call in [("step", lambda: env.step(np.zeros(2, int))), ("reset", lambda: env.reset(seed=0)),
                       ("send", lambda: env.send(np.zeros(2, int))), ("recv", env.recv), ("get_ram", env.get_ram),
                       ("get_screen", env.get_screen), ("get_screen_rgb", env.get_screen_rgb), ("lives", env.lives)]:
        with pytest.raises(RuntimeError, match="closed; create a new one"):
            call()
    fresh = cule.AtariVectorEnv("pong", 2)  # and another env works as usual
    fresh.reset(seed=0)
    fresh.step(np.zeros(2, int))


@pytest.mark.parametrize("kwargs, pattern", [
    (dict(frameskip=2**32 + 4), "frameskip must be at most"), (dict(noop_max=2**31), "noop_max must be at most"),
    (dict(num_threads=2**31), "num_threads must be at most"),
    (dict(reset_mode="cache", reset_cache_size=10**6), "reset_cache_size must be at most"),
    (dict(max_num_frames_per_episode=2**31), "max_num_frames_per_episode must be at most"),
])
def test_values_past_what_the_core_holds_are_refused_not_truncated(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        cule.AtariVectorEnv("pong", 1, **kwargs)


@pytest.mark.parametrize("kwargs, error, pattern", [
    (dict(grayscale="False"), TypeError, "grayscale must be a bool, got 'False'"),
    (dict(reward_clipping=None), TypeError, "reward_clipping must be a bool, got None"),
    (dict(full_action_space="yes"), TypeError, "full_action_space must be a bool"),
    (dict(episodic_life=2), TypeError, "episodic_life must be a bool, got 2"),
    (dict(img_height=84.7), ValueError, r"img_height must be an int in 1\.\.4096 \(or None"),
    (dict(img_width=True), ValueError, "img_width must be an int in 1..4096"),
    (dict(img_height="84"), ValueError, "img_height must be an int in 1..4096"),
    (dict(img_height=0), ValueError, "img_height must be an int in 1..4096"),
    (dict(max_num_frames_per_episode=float("nan")), ValueError, "max_num_frames_per_episode must be an int"),
    (dict(max_num_frames_per_episode="100"), ValueError, "max_num_frames_per_episode must be an int"),
    (dict(max_num_frames_per_episode=1.5), ValueError, "max_num_frames_per_episode must be an int"),
    (dict(repeat_action_probability="0.25"), ValueError, r"repeat_action_probability must be a number in \[0, 1\]"),
    (dict(repeat_action_probability=None), ValueError, "repeat_action_probability must be a number"),
    (dict(repeat_action_probability=float("nan")), ValueError, "repeat_action_probability must be a number"),
    (dict(thread_affinity_offset="0"), ValueError, "thread_affinity_offset must be an int"),
    (dict(device="gpu"), ValueError, r"device must be 'cpu' or 'cuda\[:N\]', got 'gpu'"),
    (dict(device=None), ValueError, "device must be .*, got None"),
])
def test_arguments_of_the_wrong_type_are_refused_not_converted(kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        cule.AtariVectorEnv("pong", 1, **kwargs)


def test_flags_take_bools_of_numpy_and_zero_or_one():
    env = cule.AtariVectorEnv("pong", 1, grayscale=np.bool_(False), maxpool=0, episodic_life=1,
                              repeat_action_probability=np.float32(0.25), img_height=np.int64(42))
    assert env.single_observation_space.shape == (4, 42, 84, 3)
    env.reset(seed=0)
    with pytest.raises(TypeError, match="include_rng must be a bool, got 'no'"):
        env.clone_state(include_rng="no")
    with pytest.raises(TypeError, match="options must be a dict"):
        env.reset(options="reset_mask")
    obs, _ = env.reset(options={"reset_mask": np.ones(1, bool)})
    assert obs.shape == (1, 4, 42, 84, 3)


def test_an_observation_too_large_for_the_machine_is_named_not_the_number_of_environments():
    with pytest.raises(MemoryError, match=r"one environment alone does not fit, with observations of "
                                          r"1024 x 4096 x 4096 x 3 bytes: use a smaller img_height"):
        # The largest observation the core allows: about 144 GiB for one environment.
        cule.AtariVectorEnv("pong", 2, img_height=4096, img_width=4096, stack_num=1024, grayscale=False)


def test_a_closed_gymnasium_env_says_so_by_its_own_name():
    env = gymnasium.make("cule/Pong-v5")
    env.reset(seed=0)
    env.close()
    for call in (lambda: env.reset(seed=0), lambda: env.step(0), env.unwrapped.render):
        with pytest.raises(RuntimeError, match="this AtariEnv is closed; make a new one"):
            call()


def test_numpy_num_envs_cannot_slip_past_the_memory_estimate():
    with pytest.raises(MemoryError, match="use fewer environments"):
        cule.AtariVectorEnv("pong", np.int32(2**30))


def test_core_calls_with_bad_rows_ids_or_order_raise():
    """The extension's own methods, which a user can call directly, refuse what would reach memory out of
    bounds: a state offset that wraps, calls before configure_vector, an environment twice in one run, rows that
    are not the caller's array, and rows that fail their checks (load_states loads none)."""
    env = cule.AtariVectorEnv("pong", 2, num_threads=1)
    env.reset(seed=0)
    em, ids = env.emulator, np.arange(2, dtype=np.int32)
    width = em.state_bytes(True) + 64
    rows = np.zeros((2, width), np.uint8)
    with pytest.raises(ValueError, match="cannot hold"):
        em.save_states(ids, rows, 2**64 - 64, True)
    with pytest.raises(ValueError, match="cannot hold"):
        em.load_states(ids, rows, 2**64 - 4096, True)
    with pytest.raises(ValueError, match="cannot hold"):
        em.check_states(rows, 2**63, True)
    with pytest.raises(ValueError, match="writable, C-contiguous uint8"):
        em.save_states(ids, np.zeros((4, width), np.uint8)[::2], 64, True)
    with pytest.raises(ValueError, match="listed twice"):
        em.vector_run(np.zeros(2, np.int32), np.zeros(2, np.int32), None, False, 2)
    with pytest.raises(ValueError, match="no row was loaded"):
        em.load_states(ids, np.full((2, width), 0xFF, np.uint8), 64, True)
    em.save_states(ids, rows, 64, True)
    em.load_states(ids, rows, 64, True)  # its own rows load
    rom = cule.load_rom("pong")
    bare = cule._core.Emulator(rom.data, rom.bankswitch, rom.game, 2, repeat_action_probability=0.0,
                               max_num_frames_per_episode=0, **rom.properties)
    with pytest.raises(RuntimeError, match=r"configure_vector\(\) first"):
        bare.vector_run(ids, np.zeros(2, np.int32), None, False, 1)
    with pytest.raises(RuntimeError, match=r"configure_vector\(\) first"):
        bare.save_states(ids, np.zeros((2, 200_000), np.uint8), 0, True)
    with pytest.raises(ValueError, match="outside"):
        bare.configure_vector(np.zeros((256, 3), np.uint8), np.zeros(256, np.uint8), frameskip=2**32 + 4)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.uint16, torch.uint32, torch.uint64])
def test_unsigned_actions_on_the_device_code_path(dtype):
    """As on the CPU backend: unsigned action tensors are indices like any other."""
    shim = cule.AtariVectorEnv("pong", 2, _shim=True)
    shim.reset(seed=0)
    shim.step(torch.tensor([0, 5], dtype=dtype))
    with pytest.raises(ValueError, match="outside the action set"):
        shim.step(torch.tensor([0, 6], dtype=dtype))
        shim.reset(seed=0)  # the device path reports it at the next reset


@pytest.mark.parametrize("num_envs", [0, -1, 2.5, True, "4", None])
def test_num_envs_must_be_a_positive_int(num_envs):
    with pytest.raises(ValueError, match=f"num_envs must be an int >= 1, got {num_envs!r}"):
        cule.AtariVectorEnv("pong", num_envs)


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.parametrize("num_envs", [10**7, 10**9, 2**62])
def test_absurd_num_envs_is_refused_before_allocating(num_envs):
    before, start = _rss_bytes(), time.perf_counter()
    with pytest.raises(MemoryError, match=r"environments need about [\d.]+ GiB .* use fewer environments"):
        cule.AtariVectorEnv("pong", num_envs, img_height=None, img_width=None, grayscale=False)
    assert _rss_bytes() - before < 64 * 2**20 and time.perf_counter() - start < 5


@pytest.mark.parametrize("game", ["pong", "adventure"])  # NTSC and PAL
def test_memory_estimate_covers_what_an_env_allocates(game):
    from cule.checks import bytes_per_env

    n = 16
    env = cule.AtariVectorEnv(game, n, img_height=None, img_width=None, grayscale=False, stack_num=4,
                              autoreset_mode="SameStep")
    obs, _ = env.reset(seed=0)
    shared = env.emulator.arrays()["rng_draws"].nbytes  # one table for the whole batch
    allocated = sum(a.nbytes for a in env.emulator.arrays().values()) - shared + obs.numel() * obs.element_size()
    assert allocated / n <= bytes_per_env(4, env.img_height, 160, 3)


@pytest.mark.parametrize("kwargs, pattern", [
    (dict(mode=99), r"pong has modes \[0, 1\], not 99"),
    (dict(mode="1"), r"pong has modes .*, not '1'"),
    (dict(mode=True), "pong has modes"),
    (dict(mode=1.0), "pong has modes"),
    (dict(difficulty=4), r"pong has difficulties \[0, 1, 2, 3\], not 4"),
    (dict(difficulty=-1), "pong has difficulties"),
    (dict(difficulty=2.0), "pong has difficulties"),
])
def test_invalid_mode_or_difficulty(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        cule.AtariVectorEnv("pong", 1, **kwargs)


# ---- determinism: the same seed gives the same bits, on any thread count, in any process

_DIGEST = """
import hashlib, numpy as np, torch, cule
def digest(num_threads, reset_mode="ale"):
    env = cule.AtariVectorEnv("breakout", 4, num_threads=num_threads, repeat_action_probability=0.25,
                              reset_mode=reset_mode)
    h = hashlib.sha256()
    obs, info = env.reset(seed=123)
    h.update(obs.numpy().tobytes())
    rng = np.random.default_rng(7)
    for _ in range(150):
        out = env.step(rng.integers(0, 4, size=4))
        for x in out[:4]:
            h.update(x.numpy().tobytes())
        for k in ("lives", "frame_number", "episode_frame_number"):
            h.update(out[4][k].numpy().tobytes())
    h.update(env.get_ram().numpy().tobytes())
    return h.hexdigest()
"""


def _digest_in_subprocess(num_threads, reset_mode, hash_seed):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           "PYTHONHASHSEED": str(hash_seed)}
    code = _DIGEST + f"\nprint(digest({num_threads}, {reset_mode!r}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("reset_mode", ["ale", "cache"])
def test_same_seed_same_bits_across_threads_and_processes(reset_mode):
    scope = {}
    exec(_DIGEST, scope)
    here = {threads: scope["digest"](threads, reset_mode) for threads in (1, 3)}
    there = [_digest_in_subprocess(threads, reset_mode, hash_seed) for threads, hash_seed in ((2, 1), (4, 2))]
    assert len(set(here.values()) | set(there)) == 1, (here, there)


# ---- a fork's child: it inherits the environments but none of their threads

_FORK = """
import hashlib, os, select, signal, sys, numpy as np, cule
game, kwargs = GAME, KWARGS
env = cule.AtariVectorEnv(game, **kwargs)
env.reset(seed=3)
batch = env.batch_size
def run(steps):
    h, rng = hashlib.sha256(), np.random.default_rng(1)
    for _ in range(steps):
        out = env.step(rng.integers(0, 4, size=batch))
        h.update(out[0].numpy().tobytes() + out[4]["env_id"].numpy().tobytes())
    return h.hexdigest()
run(5)
read, write = os.pipe()
pid = os.fork()
if pid == 0:
    os.write(write, run(40).encode())
    os._exit(0)
mine = run(40)
if not select.select([read], [], [], 120)[0]:
    os.kill(pid, signal.SIGKILL)
    sys.exit("the child did not step within 120 s")
theirs = os.read(read, 64).decode()
os.waitpid(pid, 0)
print(mine == theirs, mine, theirs)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("game, kwargs", [
    ("pong", dict(num_envs=4, num_threads=2)),
    ("pong", dict(num_envs=4, num_threads=2, batch_size=2)),  # asynchronous: a Python thread steps the batch
    (["pong", "breakout"], dict(num_envs=2, num_threads=2)),  # a mixed batch's own pool
])
def test_a_forked_child_steps_as_its_parent(game, kwargs):
    """A fork's child (multiprocessing's default start on Linux) steps its copy of the environments with threads
    of its own, bit for bit as the parent steps the original."""
    code = _FORK.replace("GAME", repr(game)).replace("KWARGS", repr(kwargs))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[0] == "True", out.stdout
