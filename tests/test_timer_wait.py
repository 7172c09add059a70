"""Timer waits run at once, exactly as ale-py runs them turn by turn.

The core applies the side-effect-free turns of a loop spinning on the RIOT's
timer in one go (console.hpp, skip_timer_wait). Every game's frames go
through it (test_ale_exact.py); this cartridge (timer_wait_rom.py) covers the
forms the games do not: each read instruction and branch, TIM1T to T1024T,
every phase of the interval, a branch across a page, and waits that the
frame's instruction budget cuts.
"""
import pytest

import timer_wait_rom
from differential import compare


@pytest.fixture(scope="module")
def cartridge(tmp_path_factory):
    # Under pong's name, both emulators run it with pong's settings.
    path = tmp_path_factory.mktemp("timer_wait") / "pong.bin"
    path.write_bytes(timer_wait_rom.build())
    return str(path)


@pytest.mark.parametrize("seed", [0, 1])
def test_timer_waits_match_ale(cartridge, seed):
    # 400 steps: some 35 of the long waits, each cut by the budget across several frames.
    result = compare("pong", 400, seed=seed, action_seed=seed, reset_every=170, rom=cartridge)
    assert result.mismatch is None, f"step {result.mismatch}: {result.what}"


def test_cartridge_reaches_every_wait(cartridge):
    """The cartridge is a test only if its waits run: each stores its flags."""
    import numpy as np

    import cule
    from cule.blocks import make_emulator

    emu = make_emulator(cule.load_rom(cartridge), 1)
    emu.load(0, 0, 0, 0)
    for _ in range(20):
        emu.act(0, 0)
    flags = np.asarray(emu.ram(0))[0x60:0x60 + len(timer_wait_rom.WAITS)]
    assert (flags & 0x30 == 0x30).all(), flags  # PHP pushes bits 4 and 5 set
