# The five full translated builds (-O3, the default trace) against ale-py's vector env: 8 envs, 3,000 steps,
# sticky actions 0.25; saved states against the threaded loop's. python full_exact.py FOLDER
import sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))

from test_translate import _ale_and_translated
folder = Path(sys.argv[1])  # the builds (cule.translate.build), GAME-KEY.so
for game in ["pong", "breakout", "ms_pacman", "space_invaders", "seaquest"]:
    lib = sorted(p for p in folder.glob(f"{game}-*.so") if "checked" not in p.name)[0]
    t0 = time.time()
    diff, states = _ale_and_translated(game, lib, 3000, num_envs=8)
    print(game, lib.name, "difference:", diff, "states equal:", states, f"{time.time() - t0:.0f} s", flush=True)
