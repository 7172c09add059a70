"""python -m cule.kernels --build | --report | --precompile: the CUDA kernels built ahead of time, or their
ptxas figures.

--build GAME|MAPPER... (or "all") compiles the kernels with nvcc, the CUDA
toolkit's compiler, or with NVRTC (--compiler nvrtc; the default where nvcc
is not found), into one cubin per mapper and architecture; no GPU is
needed. The CUDA backend loads a binary whose key (a digest of the kernels'
source, the core headers, the options and the architecture) matches the
build it needs from $CULE_KERNEL_DIR or the user cache folder
(~/.cache/cule/kernels), and only without one compiles it with NVRTC at
first use (minutes a mapper), into that folder. ptxas, nearly all of a
build's time, gets the cores: --jobs builds at a time share them. Each
binary gets a .json beside it with its key, its compiler and ptxas's
figures. Games name their mapper: all 104 games run from the nine mappers'
builds. --game-specific compiles each named game in (one
build per game; only for comparing against the mapper's build).

--report prints, for each architecture (default sm_75, sm_80, sm_90) and
kernel, the registers per thread, spill stores and loads (bytes) and stack
frame (bytes) that ``ptxas -v`` reports for one build, and exits non-zero on
a compile error, so CI can use it as the kernels' compile check.

--precompile GAME... compiles on a GPU machine what its first use would,
for that GPU, several mappers at a time (a process each).

    python -m cule.kernels --build all --arch sm_80 sm_90
    python -m cule.kernels --build pong breakout --arch sm_90 --output-dir kernels/
    python -m cule.kernels --report --arch sm_90 --cart F8
"""
from __future__ import annotations

import argparse
import concurrent.futures
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cule import _core
from cule.kernels import KERNEL_SOURCE, KernelBuild, kernel_source, parse_ptxas, save_binary, user_cache_dir

MAPPERS = tuple(_core.mappers)  # cule/cpp/cart/mappers.inc


@functools.lru_cache(maxsize=None)
def ptxas_splits(nvcc: str) -> bool:
    """Whether the ptxas beside `nvcc` takes --split-compile (older toolkits' does not)."""
    ptxas = Path(shutil.which(nvcc) or nvcc).resolve().with_name("ptxas")
    if not ptxas.is_file():
        return False
    return "--split-compile" in subprocess.run([str(ptxas), "--help"], capture_output=True, text=True).stdout


def nvcc_compile(build: KernelBuild, arch: str, output: Path, nvcc: str = "nvcc",
                 threads: int = 1) -> tuple[list[dict], float]:
    """Compiles `build` for `arch` into `output` (a cubin) with ptxas -v; returns (ptxas rows, seconds).
    An architecture this nvcc does not support gives [{"unsupported": True}]; any other error exits.

    With `threads` > 1 ptxas compiles the kernels side by side (--split-compile, as NVRTC_PARALLEL has NVRTC
    do), the machine code the same bytes as one thread's (tests/test_kernels_compile.py)."""
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "kernels.cu"  # the text the key is a digest of
        source.write_text(kernel_source())
        ptxas = ["-Xptxas", "-v"]
        if threads > 1 and ptxas_splits(nvcc):
            ptxas += ["-Xptxas", f"--split-compile={threads}"]
        cmd = [nvcc, *build.options(), f"-arch={arch}", "-cubin", *ptxas, str(source), "-o", str(output)]
        t0 = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True)
        seconds = time.perf_counter() - t0
    if done.returncode != 0 and "Unsupported gpu architecture" in done.stderr:
        return [dict(kernel="(all)", arch=arch, seconds=seconds, unsupported=True)], seconds
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"nvcc failed for {build.label} {arch} (exit {done.returncode}): {' '.join(cmd)}")
    return parse_ptxas(done.stdout + done.stderr, seconds), seconds


def compile_report(arch: str, build: KernelBuild, nvcc: str = "nvcc", threads: int = 1) -> list[dict]:
    """ptxas's figures of one build for one architecture (the binary is thrown away)."""
    with tempfile.TemporaryDirectory() as tmp:
        return nvcc_compile(build, arch, Path(tmp) / "kernels.cubin", nvcc, threads)[0]


def nvcc_version(nvcc: str) -> str:
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release [\d.]+, (V[\d.]+)", out)
    return m.group(1) if m else "unknown"


def build_one(build: KernelBuild, arch: str, output_dir: Path, nvcc: str, threads: int = 1) -> dict:
    """One cubin and its .json into output_dir, by nvcc, or by NVRTC where `nvcc` is "nvrtc". Returns the
    .json's content."""
    if nvcc == "nvrtc":
        from cule.kernels import nvrtc

        if arch not in nvrtc.supported_archs():
            return dict(build=build.label, arch=arch, unsupported=True)
        return nvrtc.build_binary(build, arch, output_dir, threads)
    with tempfile.TemporaryDirectory() as tmp:
        rows, seconds = nvcc_compile(build, arch, Path(tmp) / "kernels.cubin", nvcc, threads)
        if rows and rows[0].get("unsupported"):
            return dict(build=build.label, arch=arch, unsupported=True)
        return save_binary(build, arch, output_dir, (Path(tmp) / "kernels.cubin").read_bytes(),
                           compiler=f"nvcc {nvcc_version(nvcc)}", seconds=round(seconds, 1),
                           ptxas_threads=threads if ptxas_splits(nvcc) else 1, kernels=rows)


def resolve_builds(names: list[str], game_specific: bool, gymnasium: bool | None) -> list[KernelBuild]:
    """Games and mapper names (or "all") as the builds they need, each once, in the order named."""
    import cule
    from cule.roms import load_rom

    if names == ["all"]:
        names = list(MAPPERS) if not game_specific else cule.list_games()
    builds = []
    for name in names:
        if name in MAPPERS:
            if game_specific:
                raise SystemExit(f"--game-specific needs games, not the mapper {name!r}")
            build = KernelBuild(name, None, gymnasium)
        elif name in cule.list_games():
            build = KernelBuild(load_rom(name).bankswitch, name if game_specific else None, gymnasium)
        else:
            raise SystemExit(f"{name!r} is neither a game (cule.list_games()) nor a mapper ({' '.join(MAPPERS)})")
        if build not in builds:
            builds.append(build)
    return builds


def build_all(builds: list[KernelBuild], archs: list[str], output_dir: Path, nvcc: str, jobs: int) -> list[dict]:
    """Every build for every architecture, `jobs` nvcc processes at a time, the cores shared among them as
    ptxas threads; prints a line per binary."""
    output_dir.mkdir(parents=True, exist_ok=True)
    work = [(b, a) for b in builds for a in archs]
    jobs = max(1, min(jobs, len(work)))
    threads = max(1, (os.cpu_count() or 1) // jobs)
    print(f"{len(work)} build(s) into {output_dir}, {jobs} at a time, {threads} ptxas thread(s) each "
          f"(a build is a few minutes of one core)", flush=True)
    print(f"{'build':28s} {'arch':6s} {'kernel':16s} {'regs':>5s} {'stack B':>8s} {'spill st/ld':>12s} "
          f"{'out-of-line fns':>16s} {'nvcc s':>7s}", flush=True)
    records, t0 = [], time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for record in pool.map(lambda w: build_one(*w, output_dir, nvcc, threads), work):
            records.append(record)
            if record.get("unsupported"):
                print(f"{record['build']:28s} {record['arch']:6s} not supported by this compiler; not built",
                      flush=True)
                continue
            for r in record["kernels"]:
                spills = f"{r.get('spill_stores', 0)}/{r.get('spill_loads', 0)}"
                callees = f"{r['callee_spill_stores']}/{r['callee_spill_loads']}"
                print(f"{record['build']:28s} {r['arch']:6s} {r['kernel']:16s} {r.get('registers', 0):5d} "
                      f"{r.get('stack', 0):8d} {spills:>12s} {callees:>16s} {record['seconds']:7.0f}", flush=True)
    print(f"{sum(not r.get('unsupported') for r in records)} binaries in {time.perf_counter() - t0:.0f} s; "
          f"the CUDA backend finds them in {output_dir}"
          + ("" if output_dir == user_cache_dir() else f" through CULE_KERNEL_DIR={output_dir}"), flush=True)
    return records


def precompile(games: list[str], jobs: int) -> None:
    """Compiles the mappers of `games` for this machine's GPU as their first use would (the backend's
    load_kernels), `jobs` compiles at a time (a process each); needs a GPU."""
    builds = resolve_builds(games, False, None)
    code = ("import sys; from cule.backends.cuda import load_kernels; from cule.kernels import KernelBuild; "
            "load_kernels(KernelBuild(sys.argv[1]))")

    def one(build: KernelBuild) -> tuple[KernelBuild, float, subprocess.CompletedProcess]:
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", code, build.cart], capture_output=True, text=True)
        return build, time.perf_counter() - t0, done

    t0, failed = time.perf_counter(), []
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for build, seconds, done in pool.map(one, builds):
            print(f"{build.label:24s} {seconds:6.1f} s{'' if done.returncode == 0 else '  FAILED'}", flush=True)
            if done.returncode != 0:
                failed.append(build.label)
                sys.stderr.write(done.stderr[-4000:])
    print(f"{len(builds) - len(failed)} of {len(builds)} build(s) ready in {time.perf_counter() - t0:.0f} s")
    if failed:
        raise SystemExit(f"NVRTC failed for {', '.join(failed)}")


def report(builds: list[KernelBuild], archs: list[str], nvcc: str) -> None:
    print(f"{'build':28s} {'arch':6s} {'kernel':16s} {'regs':>5s} {'spill st':>9s} {'spill ld':>9s} {'stack B':>8s} "
          f"{'out-of-line fns: spill st/ld, stack':>36s} {'nvcc s':>7s}")
    spills = False
    for build in builds:
        for arch in archs:
            for r in compile_report(arch, build, nvcc, os.cpu_count() or 1):
                if r.get("unsupported"):
                    print(f"{build.label:28s} {arch:6s} not supported by this nvcc ({nvcc}); not compiled")
                    continue
                callee = f"{r['callee_spill_stores']}/{r['callee_spill_loads']}, {r['callee_stack']}"
                print(f"{build.label:28s} {r['arch']:6s} {r['kernel']:16s} {r.get('registers', 0):5d} "
                      f"{r.get('spill_stores', 0):9d} {r.get('spill_loads', 0):9d} {r.get('stack', 0):8d} "
                      f"{callee:>36s} {r['seconds']:7.0f}", flush=True)
                spills |= (r.get("spill_stores", 0) + r["callee_spill_stores"]) > 0 and r["arch"] in ("sm_80", "sm_90")
    if spills:
        print("note: spills on sm_80/sm_90 (target: none)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m cule.kernels", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    task = parser.add_mutually_exclusive_group(required=True)
    task.add_argument("--build", nargs="+", metavar="GAME|MAPPER",
                      help="compile these games' mappers (or mappers by name, or 'all' nine) into cubins with nvcc")
    task.add_argument("--report", action="store_true", help="compile --cart's build with nvcc; print ptxas's figures")
    task.add_argument("--precompile", nargs="+", metavar="GAME|MAPPER",
                      help="compile these games' mappers ('all': every mapper) as their first use on this "
                           "machine's GPU would; needs a GPU")
    parser.add_argument("--arch", nargs="+", default=None,
                        help="GPU architectures, as nvcc names them (--build: sm_80 sm_90; --report: sm_75 sm_80 "
                             "sm_90); one this nvcc does not support is listed as such, not an error")
    parser.add_argument("--output-dir", type=Path, default=None,
                        help=f"--build: where the binaries go (default: the user cache folder, {user_cache_dir()}, "
                             "which the backend searches without further set-up)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count(),
                        help="nvcc or NVRTC compiles at a time (default: one per core); --build shares the cores "
                             "among its compiles as ptxas threads, so one mapper alone gets them all")
    parser.add_argument("--game-specific", action="store_true",
                        help="--build, --report: compile the game in (one build per game) instead of reading it "
                             "from the batch")
    parser.add_argument("--step", choices=("vector", "gymnasium"), default=None,
                        help="--build, --report: compile one step policy in (ale-py's vector env's, or gymnasium's "
                             "AtariEnv's for cule.make) instead of reading it from the batch")
    parser.add_argument("--cart", default="2K", choices=MAPPERS, help="--report: the mapper")
    parser.add_argument("--game", default=None, help="--report: a game compiled in (with --game-specific)")
    parser.add_argument("--nvcc", default=shutil.which("nvcc") or "nvcc", help="the nvcc to use")
    parser.add_argument("--compiler", choices=("nvcc", "nvrtc"), default=None,
                        help="--build: nvcc (the CUDA toolkit's) or NVRTC (the library the cuda extra installs, "
                             "as the backend compiles at first use: no toolkit and no GPU needed); default nvcc "
                             "where it is found, else NVRTC")
    args = parser.parse_args(argv)
    gymnasium = None if args.step is None else args.step == "gymnasium"
    if args.precompile:
        return precompile(args.precompile, max(1, args.jobs))
    if args.build and (args.compiler == "nvrtc" or (args.compiler is None and not shutil.which(args.nvcc))):
        from cule.kernels import nvrtc

        if nvrtc.library() is None:
            raise SystemExit("neither nvcc nor NVRTC found: pip install nvidia-cuda-nvrtc-cu12 (or the cuda "
                             "extra, 'cule[cuda]'), or install the CUDA toolkit")
        builds = resolve_builds(args.build, args.game_specific, gymnasium)
        build_all(builds, args.arch or ["sm_80", "sm_90"], args.output_dir or user_cache_dir(), "nvrtc",
                  max(1, args.jobs))
        return print(f"kernels.cu: {KERNEL_SOURCE} (NVRTC {nvrtc.version()})")
    if not shutil.which(args.nvcc):
        raise SystemExit(f"nvcc not found ({args.nvcc}): install the CUDA toolkit, or pass --nvcc PATH "
                         "(--build --compiler nvrtc, and device='cuda' itself, need no toolkit)")
    if args.report:
        game = args.game if args.game_specific else None
        if args.game_specific and game is None:
            parser.error("--report --game-specific needs --game")
        return report([KernelBuild(args.cart, game, gymnasium)], args.arch or ["sm_75", "sm_80", "sm_90"], args.nvcc)
    builds = resolve_builds(args.build, args.game_specific, gymnasium)
    build_all(builds, args.arch or ["sm_80", "sm_90"], args.output_dir or user_cache_dir(), args.nvcc,
              max(1, args.jobs))
    print(f"kernels.cu: {KERNEL_SOURCE}")


if __name__ == "__main__":
    main()
