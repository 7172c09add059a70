"""mkcfg.py GAME ENVS STEPS: the driver's settings as python -m cule.benchmarks.simt writes them, into GAME.cfg."""
import sys
from pathlib import Path

from cule.benchmarks.simt import driver_config

game, envs, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
Path(f"{game}.cfg").write_text("".join(f"{k} {v}\n" for k, v in driver_config(game, envs, steps, 0).items()))
