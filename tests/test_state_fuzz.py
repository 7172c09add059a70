"""Saved states fuzzed through the Python API, each batch of trials in a child process (tests/state_fuzz_child.py),
so a crash fails its case instead of the suite: every mapper on the CPU backend and on the launch shim, both step
policies (ale-py's vector env, cule.make's gymnasium steps).

The default run: each mapper on both backends, the policy alternating, 60 trials each. ``--extended``: every
mapper x backend x policy, 1,000 trials each. The C++ core under ASan+UBSan gets the same mutations in
tests/test_fuzz.py (test_state_fuzz_*).
"""
import concurrent.futures
import subprocess
import sys

import pytest

from conftest import REPO, report

CHILD = REPO / "tests" / "state_fuzz_child.py"
# One game per mapper: 2K 4K F8 F6 F8SC F6SC E0 FE DPC.
MAPPER_GAMES = ["pong", "space_invaders", "ms_pacman", "road_runner", "elevator_action", "darkchambers",
                "montezuma_revenge", "robotank", "pitfall2"]


def _run(case: tuple[str, str, str], trials: int, seed: int) -> tuple[tuple, int, str]:
    game, backend, policy = case
    done = subprocess.run([sys.executable, str(CHILD), game, backend, policy, str(trials), str(seed)],
                          capture_output=True, text=True, timeout=1800, cwd=REPO)
    return case, done.returncode, done.stdout[-3000:] + done.stderr[-3000:]


def _fuzz(cases: list[tuple[str, str, str]], trials: int, label: str) -> None:
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda c: _run(c[1], trials, 100 + c[0]), enumerate(cases)))
    failures = [f"{case}: exit {rc} (a negative exit is the signal that killed it)\n{out}"
                for case, rc, out in results if rc != 0 or "states:" not in out]
    assert not failures, "\n\n".join(failures)
    loaded = sum(int(out.split("trials, ")[1].split(" loaded")[0]) for _, _, out in results)
    refused = sum(int(out.split("stepped, ")[1].split(" refused")[0]) for _, _, out in results)
    assert loaded > 0 and refused > 0
    report("saved states fuzzed in child processes (tests/test_state_fuzz.py)",
           f"{label}: {len(cases)} children x {trials} trials: {loaded} loaded and stepped, {refused} refused, "
           f"no crash")


def test_state_fuzz_every_mapper_cpu_and_shim():
    cases = [(game, backend, ("vector", "gymnasium")[(k + (backend == "shim")) % 2])
             for k, game in enumerate(MAPPER_GAMES) for backend in ("cpu", "shim")]
    _fuzz(cases, 60, "every mapper on the CPU backend and the shim")


@pytest.mark.extended
def test_state_fuzz_long():
    cases = [(game, backend, policy) for game in MAPPER_GAMES for backend in ("cpu", "shim")
             for policy in ("vector", "gymnasium")]
    _fuzz(cases, 1000, "every mapper x backend x step policy")
