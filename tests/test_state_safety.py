"""Saved states whatever their bytes: every field the emulator uses as an index, a loop bound or a shift is checked
before a row is loaded, a damaged payload is caught by its header's digest, and a refusal changes nothing.

The fuzzing of whole rows, in child processes, is tests/test_state_fuzz.py."""
import numpy as np
import pytest
import torch

import cule
from cule import _core
from cule import state as state_format
from cule.errors import StateError

H = state_format.HEADER_BYTES
# One game per mapper: 2K 4K F8 F6 F8SC F6SC E0 FE DPC.
MAPPER_GAMES = ["pong", "space_invaders", "ms_pacman", "road_runner", "elevator_action", "darkchambers",
                "montezuma_revenge", "robotank", "pitfall2"]


def _env(game, shim=False, **kwargs):
    env = cule.AtariVectorEnv(game, 4, device="cpu", _shim=shim, **kwargs)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(25):
        env.step(torch.from_numpy(rng.integers(0, env.single_action_space.n, 4)))
    return env


def _field(env, name, with_rng=True):
    """(absolute offset in a row, bytes) of a checked field."""
    part, offset, size = _core.state_checked_fields[name]
    start = H
    for part_name, part_bytes in env.emulator.state_layout(with_rng):
        if part_name == part:
            return start + offset, size
        start += part_bytes
    raise KeyError(part)


def _set(rows, at, value, dtype):
    """Writes `value` as `dtype` at byte `at` of every row, then the rows' digests, as a crafted row would."""
    raw = np.frombuffer(np.array([value], dtype=dtype).tobytes(), np.uint8)
    rows[:, at:at + raw.size] = torch.from_numpy(raw.copy())
    _redigest(rows)


def _redigest(rows):
    payload = rows[:, H:].numpy()
    words = payload.view("<u4").astype(np.uint64)
    state_format.set_digests(rows, torch.from_numpy(words.sum(axis=1, dtype=np.uint64).view(np.int64)))


@pytest.mark.parametrize("shim", [False, True], ids=["cpu", "shim"])
def test_every_game_saves_rows_that_pass_their_checks(shim):
    """A copy of every game's rows (not the tensor clone_state handed out, so the digests are summed too) passes,
    on both backends; mode and difficulty other than the default too."""
    games = cule.list_games() if not shim else MAPPER_GAMES
    for game in games:
        env = _env(game, shim)
        rows = env.clone_state().clone()
        faults = env.backend.check_states(np.arange(len(rows), dtype=np.int32), rows, H, True, state_format.digests(rows))
        assert not faults.any(), (game, faults, [_core.state_faults[f - 1] for f in faults if f])
        env.restore_state(rows)
        env.close()
    env = _env("space_invaders", shim, mode=2, difficulty=1)
    env.restore_state(env.clone_state().clone())


def test_digest_is_the_sum_of_the_payloads_words_and_catches_a_flipped_bit():
    env = _env("seaquest")
    rows = env.clone_state()
    expected = rows[:, H:].numpy().view("<u4").astype(np.uint64).sum(axis=1, dtype=np.uint64)
    assert np.array_equal(state_format.digests(rows).numpy().view(np.uint64), expected)
    before = env.clone_state()
    rng = np.random.default_rng(5)
    for part_byte in rng.integers(H, rows.shape[1], 20):
        damaged = rows.clone()
        damaged[2, part_byte] ^= np.uint8(1 << int(rng.integers(8)))
        with pytest.raises(StateError, match="does not sum to the digest") as caught:
            env.restore_state(damaged)
        assert caught.value.row == 2 and caught.value.field == "digest"
        assert torch.equal(env.clone_state()[:, H:], before[:, H:]), "a refused restore changed an environment"
    # the tensor clone_state handed out, changed in place, is no longer trusted
    rows[1, rows.shape[1] - 10] ^= 4
    with pytest.raises(StateError, match="digest"):
        env.restore_state(rows)


@pytest.mark.parametrize("side", ["cpu", "host", "device"])  # the CPU backend; the kernels' code, either side
@pytest.mark.parametrize("height, width, stack, grayscale", [(3, 5, 3, True), (1, 1, 1, False)])
def test_rows_of_any_observation_size_are_whole_words_and_restore_from_storage(height, width, stack, grayscale,
                                                                                side, request):
    """Observations of odd byte counts make byte parts of odd sizes: each is rounded up to a word in the row, so
    the digest a save sums part by part is the one a load checks word by word, and no byte is left out of it."""
    shim = {"cpu": False, "host": True}.get(side) or request.getfixturevalue("device_code")
    env = _env("pong", shim, img_height=height, img_width=width, stack_num=stack, grayscale=grayscale,
               autoreset_mode="SameStep")
    rows = env.clone_state()
    assert (rows.shape[1] - H) % 4 == 0
    expected = rows[:, H:].numpy().view("<u4").astype(np.uint64).sum(axis=1, dtype=np.uint64)
    assert np.array_equal(state_format.digests(rows).numpy().view(np.uint64), expected)
    env.restore_state(rows.clone())  # a stored copy: the digest is checked
    start = H
    for part, size in env.emulator.state_layout(True):
        for at in (start, start + size - 1):  # each part's first byte and its last (a zero after a byte part)
            damaged = rows.clone()
            damaged[1, at] ^= 0x10
            with pytest.raises(StateError, match="does not sum to the digest"):
                env.restore_state(damaged)
        start += size
    assert start == rows.shape[1]
    env.close()


# (field, game, value, dtype): a value the emulator never makes, which the checks must refuse
BAD_VALUES = [
    ("tia.config", "pong", 0xFFFF, "<u2"), ("tia.current_buffer", "pong", 2, "u1"),
    ("tia.clocks_to_end_of_line", "pong", -1, "<i4"), ("tia.clocks_to_end_of_line", "pong", 229, "<i4"),
    ("tia.last_update_clock", "pong", 1 << 30, "<i4"), ("tia.stop_display_clock", "breakout", -5, "<i4"),
    ("tia.frame_pixel", "pong", 0xFFFFFF00, "<u4"), ("tia.frame_pixel", "breakout", 1, "<u4"),
    ("tia.pos_p0", "pong", 160, "<i2"), ("tia.pos_bl", "pong", -1, "<i2"), ("tia.mask_p0.pos", "pong", 300, "<i2"),
    ("tia.mask_m1.pos", "breakout", -40, "<i2"), ("tia.mask_m0.size", "pong", 6, "u1"),
    ("tia.hmp0", "pong", 16, "u1"), ("tia.hmbl", "breakout", 255, "u1"),
    ("riot.timer", "pong", 256, "<u4"), ("riot.interval_shift", "pong", 32, "u1"),
    ("riot.interval_shift", "pong", 4, "u1"), ("cart.bank", "ms_pacman", 2, "u1"), ("cart.bank", "road_runner", 4, "u1"),
    ("cart.bank", "elevator_action", 255, "u1"), ("cart.bank", "pitfall2", 2, "u1"),
    ("cart.slice", "montezuma_revenge", 8, "u1"), ("cart.counter", "pitfall2", 0x0800, "<u2"),
    ("cart.music_fraction_bits", "pitfall2", np.float64("nan").view(np.uint64), "<u8"),
    ("cart.music_fraction_bits", "pitfall2", np.float64(1.0).view(np.uint64), "<u8"),
    ("ale.mode", "pong", 7, "<u2"), ("ale.difficulty", "pong", 3, "u1"),
    ("ale.paddle", "pong", 2**31 - 1, "<i4"), ("events.paddle_resistance", "kaboom", -100, "<i4"),
    ("paddle_step_a", "pong", 2**22 + 1, "<i4"), ("paddle_step_a", "kaboom", -1, "<i4"),
    ("sticky_rng.index", "pong", 625, "<u4"), ("noop_rng.index", "pong", 1 << 20, "<u4"),
    ("stack_index", "pong", 4, "<i4"), ("stack_index", "seaquest", -1, "<i4"),
]


# the fault (cule._core.state_faults) each field's bad value must be refused with
EXPECTED = {"tia.config": "kTiaConfig", "tia.current_buffer": "kTiaBuffer", "tia.clocks_to_end_of_line": "kTiaLineClock",
            "tia.last_update_clock": "kTiaFrameClocks", "tia.stop_display_clock": "kTiaFrameClocks",
            "tia.frame_pixel": "kTiaFramePixel", "tia.pos_p0": "kTiaPosition", "tia.pos_bl": "kTiaPosition",
            "tia.mask_p0.pos": "kTiaPosition", "tia.mask_m1.pos": "kTiaPosition", "tia.mask_m0.size": "kTiaMaskSize",
            "tia.hmp0": "kTiaMotion", "tia.hmbl": "kTiaMotion", "riot.timer": "kRiotTimer",
            "riot.interval_shift": "kRiotTimer", "cart.bank": "kCartBank", "cart.slice": "kCartBank",
            "cart.counter": "kCartFetchers", "cart.music_fraction_bits": "kCartFetchers", "ale.mode": "kAleMode",
            "ale.difficulty": "kAleMode", "ale.paddle": "kAlePaddles", "events.paddle_resistance": "kAlePaddles",
            "paddle_step_a": "kAlePaddles",
            "sticky_rng.index": "kStickyRng", "noop_rng.index": "kNoopRng", "stack_index": "kStackIndex"}
FAULTS = {name: (part, field) for name, part, field, rule in _core.state_faults}


@pytest.mark.parametrize("shim", [False, True], ids=["cpu", "shim"])
def test_each_checked_field_is_refused_by_name_and_nothing_changes(shim):
    refused, envs = set(), {}
    for field, game, value, dtype in BAD_VALUES:
        env = envs.get(game) or envs.setdefault(game, _env(game, shim))
        rows = env.clone_state()
        before = rows.clone()
        at, size = _field(env, field)
        _set(rows, at + (size - np.dtype(dtype).itemsize if field == "tia.config" else 0), value, dtype)
        with pytest.raises(StateError) as caught:
            env.restore_state(rows)
        error = caught.value
        assert (error.row, error.part, error.field) == (0, *FAULTS[EXPECTED[field]]), (field, str(error))
        assert "nothing was restored" in str(error) and error.field in str(error)
        assert torch.equal(env.clone_state()[:, H:], before[:, H:]), f"{field}: a refused restore changed the env"
        refused.add(EXPECTED[field])
    # the noop generator's all-zero state: its draw would never end
    env = envs["pong"]
    rows = env.clone_state()
    at, size = _field(env, "noop_rng.words")
    rows[:, at:at + size] = 0
    _redigest(rows)
    with pytest.raises(StateError, match="noop_rng"):
        env.restore_state(rows)
    # every fault the checks know of is reached (the payload digest by the test above)
    assert refused | {"kNoopRng", "kStateDigest"} == set(FAULTS), set(FAULTS) - refused
    # a row of several, and the count of refused rows
    rows = env.clone_state()
    at, _ = _field(env, "tia.current_buffer")
    rows[1:3, at] = 9
    _redigest(rows)
    with pytest.raises(StateError, match=r"state row 1 .*\(2 of 4 rows were refused\)"):
        env.restore_state(rows)


@pytest.mark.parametrize("shim", [False, True], ids=["cpu", "shim"])
def test_values_inside_the_checks_load_and_step(shim):
    """The checks refuse only what the emulator never makes: in-range values of the checked fields load and
    step (they are what some console could hold), and any value of an unchecked field loads."""
    env = _env("breakout", shim)
    rng = np.random.default_rng(7)
    for field, value, dtype in [("tia.pos_p0", 159, "<i2"), ("tia.hmp0", 15, "u1"), ("tia.mask_bl.size", 3, "u1"),
                                ("riot.interval_shift", 10, "u1"), ("riot.timer", 255, "<u4"),
                                ("stack_index", 3, "<i4"), ("sticky_rng.index", 624, "<u4")]:
        rows = env.clone_state()
        _set(rows, _field(env, field)[0], value, dtype)
        env.restore_state(rows)
        env.step(torch.from_numpy(rng.integers(0, 4, 4)))
    rows = env.clone_state()
    machine, ram = H, H + 8 + 16  # RIOT RAM: pure data
    rows[:, ram:ram + 128] = torch.from_numpy(rng.integers(0, 256, (4, 128), dtype=np.uint8))
    pixels = rows.shape[1] - 5000
    rows[:, pixels:pixels + 1000] = torch.from_numpy(rng.integers(0, 256, (4, 1000), dtype=np.uint8))
    _redigest(rows)
    env.restore_state(rows)
    for _ in range(5):
        env.step(torch.from_numpy(rng.integers(0, 4, 4)))
    assert machine == H


def test_mixed_batch_checks_every_game_before_loading_any():
    env = cule.AtariVectorEnv(["pong", "ms_pacman"], num_envs=2)
    env.reset(seed=1)
    rows = env.clone_state()
    before = rows.clone()
    at, _ = _field(env.blocks[1], "cart.bank")
    rows[3, at] = 9  # ms_pacman's second environment
    part = rows[2:4, :state_format.stated_bytes(rows[2:4])]
    _redigest(part)
    rows[2:4, :part.shape[1]] = part
    with pytest.raises(StateError, match="cart.bank"):
        env.restore_state(rows)
    assert torch.equal(env.clone_state()[:, H:], before[:, H:])
    env.restore_state(before)  # the tensor clone_state handed out, unchanged: restored without its digest pass
