"""Speed of the 6507 core alone: Klaus Dormann's functional test on a flat bus.

Prints emulated instructions and cycles per second and the ratio to a real
NTSC 2600's CPU clock (1.193 MHz). The test image is the repository's
(tests/data/6502/dormann), found beside an editable install or with --image.

    python -m cule.benchmarks.cpu_core [--repeat 5] [--image path/to/6502_functional_test.bin]
"""
import argparse
import time
from pathlib import Path

import numpy as np

from cule import _core
from cule.benchmarks import at_least

NTSC_CPU_HZ = 3579545 / 3  # the colour clock divided by three


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=at_least(1), default=5, help="runs of the whole test; the best is reported")
    parser.add_argument("--image", type=Path, help="Dormann's 6502_functional_test.bin (default: the checkout's)",
                        default=Path(__file__).resolve().parents[3] / "tests/data/6502/dormann/6502_functional_test.bin")
    args = parser.parse_args()
    path = args.image
    if not path.is_file():
        parser.error(f"{path} not found: pass --image with the repository's "
                     f"tests/data/6502/dormann/6502_functional_test.bin")
    image = np.fromfile(path, dtype=np.uint8)
    best = None
    for i in range(args.repeat):
        memory = image.copy()
        t0 = time.perf_counter()
        pc, instructions, cycles, trapped, _ = _core.cpu_run_flat(memory, 0x0400, 200_000_000)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
        print(f"run {i + 1}/{args.repeat}: {dt:.3f} s, trap at ${pc:04X}", flush=True)
    print(f"Dormann functional test: {instructions:,} instructions, {cycles:,} cycles, "
          f"{'success' if pc == 0x3469 else 'FAILED'}")
    print(f"best of {args.repeat}: {instructions / best / 1e6:.1f} M instructions/s, "
          f"{cycles / best / 1e6:.1f} M cycles/s = {cycles / best / NTSC_CPU_HZ:.0f}x a real 2600's CPU")


if __name__ == "__main__":
    main()
