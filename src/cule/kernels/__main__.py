"""python -m cule.kernels --report | --precompile GAME...: the CUDA kernels' build report, or a warm cache.

--precompile compiles the kernels of the named games (or "all") with NVRTC
into CuPy's disk cache, several at a time, so that the first
``AtariVectorEnv(game, n, device="cuda")`` does not wait ~40 s per game;
with ``--gymnasium``, for ``cule.make``'s envs (their step policy is compiled
in). Needs a GPU and cupy (the cache is per architecture).

--report:

For each architecture (default sm_70, sm_75, sm_80, sm_90) and kernel (cule_run,
cule_render, cule_reset, cule_gather), the registers per thread, spill
stores and loads (bytes) and stack frame (bytes) that ``ptxas -v`` reports. The kernels are built as the
CUDA backend builds them at run time: for one mapper, one game and one step
policy (``--cart``, ``--game``, ``--gymnasium``). Exits non-zero on a compile error, so CI can use it
as the kernels' compile check. Needs nvcc (the CUDA toolkit), not a GPU.

    python -m cule.kernels --report
    python -m cule.kernels --report --arch sm_80 --cart F8 --game breakout
    python -m cule.kernels --precompile pong breakout --jobs 8
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cule.kernels import CORE_HEADERS, KERNEL_SOURCE, build_defines
_LINE = re.compile(r"Compiling entry function '(\w+)' for '(sm_\d+)'")
_PROPS = re.compile(r"Function properties for (\S+)")
_USED = re.compile(r"Used (\d+) registers")
_SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")


def compile_report(arch: str, cart: str, game: str, nvcc: str = "nvcc", gymnasium: bool = False) -> list[dict]:
    """Runs nvcc -Xptxas -v for one architecture; returns one dict per kernel."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [nvcc, "-std=c++17", f"-arch={arch}", "-Xptxas", "-v", "-c", str(KERNEL_SOURCE), f"-I{CORE_HEADERS}",
               *build_defines(cart, game, gymnasium), "-o", str(Path(tmp) / "kernels.o")]
        t0 = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True)
        seconds = time.perf_counter() - t0
    if done.returncode != 0 and "Unsupported gpu architecture" in done.stderr:
        return [dict(kernel="(all)", arch=arch, seconds=seconds, unsupported=True)]
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"nvcc failed for {arch} (exit {done.returncode}): {' '.join(cmd)}")
    # The out-of-line phases (CULE_PHASE) report their own frames; a spill
    # anywhere counts, so callee figures are summed into the table too.
    rows, current, props, callees = [], None, None, dict(stack=0, spill_stores=0, spill_loads=0)
    for line in (done.stdout + done.stderr).splitlines():
        if m := _LINE.search(line):
            current = dict(kernel=m.group(1), arch=m.group(2), seconds=seconds)
            rows.append(current)
        elif m := _PROPS.search(line):
            props = m.group(1)
        elif m := _SPILL.search(line):
            figures = dict(stack=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
            if current is not None and props == current["kernel"]:
                current.update(figures)
            else:
                for k, v in figures.items():
                    callees[k] = max(callees[k], v)
        elif current is not None and (m := _USED.search(line)):
            current["registers"] = int(m.group(1))
    for r in rows:
        r.update({f"callee_{k}": v for k, v in callees.items()})
    return rows


def precompile(games: list[str], jobs: int, gymnasium: bool = False) -> None:
    """Fills CuPy's kernel cache for `games`, `jobs` NVRTC compiles at a time (one process each)."""
    import concurrent.futures

    import cule

    games = cule.list_games() if games == ["all"] else games
    code = ("import sys; from cule.backends.cuda import compile_kernels; from cule.roms import load_rom; "
            "compile_kernels(load_rom(sys.argv[1]).bankswitch, sys.argv[1], gymnasium=sys.argv[2] == '1')")

    def one(game: str) -> tuple[str, float, subprocess.CompletedProcess]:
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", code, game, "1" if gymnasium else "0"], capture_output=True,
                              text=True)
        return game, time.perf_counter() - t0, done

    t0, failed = time.perf_counter(), []
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for game, seconds, done in pool.map(one, games):
            print(f"{game:24s} {seconds:6.1f} s{'' if done.returncode == 0 else '  FAILED'}", flush=True)
            if done.returncode != 0:
                failed.append(game)
                sys.stderr.write(done.stderr[-4000:])
    print(f"{len(games) - len(failed)} of {len(games)} game(s) compiled in {time.perf_counter() - t0:.0f} s")
    if failed:
        raise SystemExit(f"NVRTC failed for {', '.join(failed)}")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m cule.kernels", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--report", action="store_true", help="compile with nvcc and print ptxas's figures")
    parser.add_argument("--precompile", nargs="+", metavar="GAME",
                        help="fill CuPy's NVRTC cache for these games ('all': every game); needs a GPU")
    parser.add_argument("--jobs", type=int, default=os.cpu_count(), help="--precompile: compiles at a time")
    parser.add_argument("--arch", nargs="+", default=["sm_70", "sm_75", "sm_80", "sm_90"],
                        help="GPU architectures (one this nvcc no longer supports, e.g. sm_70 on CUDA 13, is listed "
                             "as such, not an error)")
    parser.add_argument("--cart", default="2K", help="mapper the kernels are built for (2K 4K F8 F6 F8SC F6SC E0 FE DPC)")
    parser.add_argument("--game", default="pong", help="ALE game id the kernels are built for")
    parser.add_argument("--gymnasium", action="store_true",
                        help="build the kernels for cule.make's gymnasium steps (the step policy compiled in; "
                             "AtariVectorEnv's steps by default)")
    parser.add_argument("--nvcc", default=shutil.which("nvcc") or "nvcc", help="the nvcc to use")
    args = parser.parse_args()
    if args.precompile:
        return precompile(args.precompile, max(1, args.jobs), args.gymnasium)
    if not args.report:
        parser.error("nothing to do: pass --report or --precompile")
    if not shutil.which(args.nvcc):
        raise SystemExit("nvcc not found: install the CUDA toolkit (only this report needs it; "
                         "device='cuda' compiles with NVRTC through CuPy)")
    print(f"kernels.cu for mapper {args.cart}, game {args.game}, {'gymnasium' if args.gymnasium else 'vector env'} steps")
    print(f"{'arch':6s} {'kernel':12s} {'registers':>9s} {'spill st':>9s} {'spill ld':>9s} {'stack B':>8s} "
          f"{'out-of-line fns: spill st/ld, stack':>36s} {'nvcc s':>7s}")
    spills = False
    for arch in args.arch:
        for r in compile_report(arch, args.cart, args.game, args.nvcc, args.gymnasium):
            if r.get("unsupported"):
                print(f"{arch:6s} not supported by this nvcc ({args.nvcc}); not compiled")
                continue
            callee = f"{r['callee_spill_stores']}/{r['callee_spill_loads']}, {r['callee_stack']}"
            print(f"{r['arch']:6s} {r['kernel']:12s} {r.get('registers', 0):9d} {r.get('spill_stores', 0):9d} "
                  f"{r.get('spill_loads', 0):9d} {r.get('stack', 0):8d} {callee:>36s} {r['seconds']:7.0f}", flush=True)
            spills |= (r.get("spill_stores", 0) + r["callee_spill_stores"]) > 0 and r["arch"] in ("sm_80", "sm_90")
    if spills:
        print("note: spills on sm_80/sm_90 (target: none)")


if __name__ == "__main__":
    main()
