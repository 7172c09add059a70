"""The C++ core under sanitizers: tests/fuzz/fuzz.cpp built with
AddressSanitizer + UndefinedBehaviorSanitizer and with ThreadSanitizer, run
over random and mutated ROM images of every mapper with random actions.

Saved states are fuzzed the same way (``--states``: rows mutated, checked,
loaded where they pass, stepped), with a canary run that loads them
unchecked and must end in a sanitizer report.

The default run is short (CI); ``--extended`` runs the long ones: 10^6
frames under ASan+UBSan (with long hauls: ROMs that never end a frame or
never write VSYNC, run until the 32-bit clocks wrap), 10^5 mutated saved
states under ASan+UBSan, and 10^5 frames under TSan. CULE_FUZZ_FRAMES, CULE_FUZZ_TSAN_FRAMES and CULE_FUZZ_SEED override
the figures. A failure prints the case's seed; replay it with the binary
named in the message and ``--case SEED`` (or ``--haul SEED``).
"""
import functools
import hashlib
import os
import re
import shutil
import subprocess

import pytest

import cule
from conftest import REPO, BackgroundJob, report

SOURCE = REPO / "tests" / "fuzz" / "fuzz.cpp"
HEADERS = REPO / "src" / "cule" / "cpp"
CXX = os.environ.get("CXX", "g++")
# Forced inlining of instrumented code takes g++ minutes; the core lets a
# sanitizer build turn it off (common.hpp). -g1 keeps the file and line of
# every frame in a report and builds in 70% of -g's time.
COMMON = ["-std=c++17", "-O1", "-g1", "-fno-omit-frame-pointer", "-DCULE_NO_FORCE_INLINE", f"-I{HEADERS}"]
FLAGS = {
    "asan": COMMON + ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"],
    "tsan": COMMON + ["-fsanitize=thread"],
}
# Any report ends the run with a non-zero status.
SANITIZER_ENV = {
    "ASAN_OPTIONS": "halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
    "TSAN_OPTIONS": "halt_on_error=1:second_deadlock_stack=1",
}
SUMMARY = re.compile(r"fuzz: (\d+) cases \((\d+) run twice\), (\d+) frames in ([\d.]+) s: (\d+) complete, (\d+) cut by "
                     r"the instruction budget, (\d+) jammed, (\d+) past 2\^31 colour clocks \((\d+) of them ended by a "
                     r"TIA write\); most bus accesses in a frame (\d+) \(bound (\d+)\); failures 0")
REPORTS = ("AddressSanitizer", "LeakSanitizer", "ThreadSanitizer", "runtime error:", "UndefinedBehaviorSanitizer")


def _binary(kind):
    """Where the build of these sources and flags goes (build/fuzz, kept between runs)."""
    digest = hashlib.sha256(" ".join([CXX] + FLAGS[kind]).encode())
    for path in sorted([SOURCE, *HEADERS.rglob("*.hpp"), *HEADERS.rglob("*.inc")]):
        digest.update(path.read_bytes())
    return REPO / "build" / "fuzz" / f"fuzz-{kind}-{digest.hexdigest()[:16]}"


def _build_command(kind, _folder):
    """The compile of one variant, or None where it is built already or there is no compiler."""
    binary = _binary(kind)
    if binary.exists() or shutil.which(CXX) is None:
        return None
    binary.parent.mkdir(parents=True, exist_ok=True)
    for stale in binary.parent.glob(f"fuzz-{kind}-*"):  # builds of older sources
        stale.unlink()
    return [CXX, *FLAGS[kind], str(SOURCE), "-o", str(binary) + ".tmp", "-lpthread"]


# Both builds take 3-4 minutes side by side on two cores; they start with the test run.
BUILDS = {kind: BackgroundJob(f"fuzz-{kind}", functools.partial(_build_command, kind)) for kind in FLAGS}
pytestmark = [job.mark for job in BUILDS.values()]


@pytest.fixture(scope="module")
def fuzzers():
    """Both sanitizer builds."""
    if shutil.which(CXX) is None:
        pytest.skip(f"no C++ compiler ({CXX}) to build the fuzz driver")
    binaries = {kind: _binary(kind) for kind in FLAGS}
    for kind, job in BUILDS.items():
        done = job.result()
        if done is not None:
            log = done.stdout + done.stderr
            assert done.returncode == 0, f"building the {kind} fuzz driver failed:\n{log[-4000:]}"
            os.replace(str(binaries[kind]) + ".tmp", binaries[kind])
    return binaries


def _seed_roms():
    """ALE's ROMs of every game with their mappers: the images the fuzzer mutates."""
    args = []
    for game in cule.list_games():
        rom = cule.load_rom(game)
        args += ["--rom", f"{rom.bankswitch}:{rom.path}"]
    return args


def _run(binary, args, timeout):
    proc = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **SANITIZER_ENV})
    output = proc.stdout + proc.stderr
    return proc.returncode, output


def _fuzz(binary, args, timeout, label):
    """Runs the driver; fails on a non-zero status or any sanitizer report; returns the summary's numbers."""
    rc, output = _run(binary, [*args, *_seed_roms()], timeout)
    reports = [r for r in REPORTS if r in output]
    assert rc == 0 and not reports, f"{label}: exit {rc}, reports {reports} ({binary}):\n{output[-6000:]}"
    m = SUMMARY.search(output)
    assert m, f"{label}: no summary line:\n{output[-2000:]}"
    keys = ("cases", "repeated", "frames", "seconds", "complete", "budget", "jammed", "wrapped", "wrapped_ended",
            "max_accesses", "bound")
    stats = {k: float(v) if k == "seconds" else int(v) for k, v in zip(keys, m.groups())}
    by = {}
    for line in output.splitlines():
        if line.startswith("frames by "):
            by[line.split(":")[0]] = line.split(":", 1)[1].strip()
    report("fuzzing (tests/test_fuzz.py)",
           f"{label}: {stats['frames']} frames, {stats['cases']} cases ({stats['repeated']} run twice, identical), "
           f"{stats['seconds']:.0f} s: {stats['complete']} complete, {stats['budget']} cut by the instruction budget, "
           f"{stats['jammed']} jammed, {stats['wrapped']} past 2^31 colour clocks; no sanitizer report")
    for name, line in by.items():
        report("fuzzing (tests/test_fuzz.py)", f"  {name}: {line}")
    assert stats["max_accesses"] <= stats["bound"]
    return stats, by


def _frames(name, default):
    return int(os.environ.get(name, default))


SEED = os.environ.get("CULE_FUZZ_SEED", "1")
# The thread pool under TSan: 2-4 threads over up to 8 environments of mutated real ROMs (whose frames do
# the most work; random images mostly jam).
TSAN_ARGS = ["--seed", SEED, "--threads", "4", "--min-threads", "2", "--max-envs", "8", "--kind", "mutated",
             "--verbose"]


@pytest.mark.parametrize("kind, canary, expect", [("asan", "overflow", "AddressSanitizer: heap-buffer-overflow"),
                                                  ("asan", "signed", "runtime error: signed integer overflow"),
                                                  ("tsan", "race", "ThreadSanitizer: data race")])
def test_sanitizers_catch_a_planted_bug(fuzzers, kind, canary, expect):
    """The builds really are instrumented, and a report really fails a run."""
    rc, output = _run(fuzzers[kind], ["--canary", canary], 120)
    assert rc != 0 and expect in output, output[-2000:]


def test_fuzz_regressions(fuzzers):
    """What the fuzzer found, reduced to direct checks (see run_regressions in fuzz.cpp)."""
    rc, output = _run(fuzzers["asan"], ["--regressions"], 120)
    assert rc == 0 and "regressions: ok" in output and not [r for r in REPORTS if r in output], output[-4000:]


def test_fuzz_asan_ubsan_short(fuzzers):
    frames = _frames("CULE_FUZZ_FRAMES", 10000)
    stats, _ = _fuzz(fuzzers["asan"], ["--frames", str(frames), "--seed", SEED, "--threads", "2", "--verbose"],
                     900, "ASan+UBSan")
    assert stats["frames"] >= frames and stats["complete"] > 0


def test_fuzz_rom_that_never_ends_a_frame_returns(fuzzers):
    """Haul 1 (odd: code that never ends a frame): every frame stops at the instruction budget, and the run
    goes on until its clock has stayed past 2^31 colour clocks (the TIA's int32 clocks wrap) for 1,000
    frames, with no report."""
    stats, _ = _fuzz(fuzzers["asan"], ["--haul", "1", "--haul-frames", "24000"], 900, "ASan+UBSan haul")
    assert stats["budget"] >= stats["frames"] - 10 and stats["wrapped"] >= 1000  # (a TIA write may end a few)


def test_fuzz_rom_that_never_writes_vsync_or_hmove(fuzzers):
    """Haul 2 (even: a display loop without VSYNC or HMOVE): 34,000 frames, each ended by the scanline cap;
    the VSYNC-finish and last-HMOVE clocks drift back a frame's clocks per frame and wrap through -2^31
    (which once was signed overflow in the TIA's RESBL/RESMx checks)."""
    stats, _ = _fuzz(fuzzers["asan"], ["--haul", "2", "--haul-frames", "34000"], 900, "ASan+UBSan VSYNC-less haul")
    assert stats["complete"] == stats["frames"] >= 34000


def test_game_units_over_random_ram(fuzzers):
    """The 105 game units (104 games and the bare console) over random RAM: a ROM with an unknown md5 under a
    game's file name runs that game's unit over whatever RAM it makes."""
    steps = 200_000
    rc, output = _run(fuzzers["asan"], ["--games", str(steps), "--seed", SEED], 600)
    reports = [r for r in REPORTS if r in output]
    assert rc == 0 and not reports and f"games: {105 * steps} steps" in output, output[-4000:]
    report("fuzzing (tests/test_fuzz.py)", "ASan+UBSan: " + output.strip().splitlines()[-1])


def test_fuzz_tsan_short(fuzzers):
    frames = _frames("CULE_FUZZ_TSAN_FRAMES", 2000)
    stats, _ = _fuzz(fuzzers["tsan"], [*TSAN_ARGS, "--frames", str(frames)], 900, "TSan")
    assert stats["frames"] >= frames


STATES = re.compile(r"states: (\d+) trials in (\d+) cases, ([\d.]+) s: (\d+) loaded and stepped, (\d+) refused "
                    r"\((\d+) rows by their digest\); failures 0")


def _fuzz_states(binary, trials, timeout, label):
    """Saved states, mutated, checked and (where they pass) loaded and stepped (fuzz.cpp fuzz_states); fails on
    a non-zero status or any report; every mapper and both step policies must have had trials."""
    rc, output = _run(binary, ["--states", str(trials), "--trials-per-case", "100", "--seed", SEED, *_seed_roms()],
                      timeout)
    reports = [r for r in REPORTS if r in output]
    m = STATES.search(output)
    assert rc == 0 and not reports and m, f"{label}: exit {rc}, reports {reports} ({binary}):\n{output[-6000:]}"
    done, cases, seconds, loaded, refused, by_digest = (float(v) if i == 2 else int(v) for i, v in enumerate(m.groups()))
    assert done >= trials and loaded > 0 and refused > 0 and by_digest > 0
    by = dict(line.split(":", 1) for line in output.splitlines() if line.startswith("states by "))
    assert all(int(n) > 0 for n in re.findall(r" (\d+);", by["states by mapper"])), by
    assert all(int(n) > 0 for n in re.findall(r" (\d+);", by["states by step policy"])), by
    report("fuzzing (tests/test_fuzz.py)",
           f"{label}: {done} mutated saves in {cases} cases, {seconds:.0f} s: {loaded} loaded and stepped, {refused} "
           f"refused ({by_digest} rows by their digest); no sanitizer report")
    for name, line in by.items():
        report("fuzzing (tests/test_fuzz.py)", f"  {name}: {line.strip()}")


def test_state_fuzz_asan_ubsan_short(fuzzers):
    _fuzz_states(fuzzers["asan"], int(os.environ.get("CULE_FUZZ_STATES", 3000)), 900, "ASan+UBSan saved states")


def test_state_fuzz_without_the_checks_reaches_memory_out_of_bounds(fuzzers):
    """The canary: loading every mutated row unchecked ends in a sanitizer report, so the checks are what
    keeps the fuzz above clean."""
    rc, output = _run(fuzzers["asan"], ["--states", "20000", "--seed", SEED, "--skip-state-checks"], 900)
    assert rc != 0 and any(r in output for r in REPORTS), output[-3000:]


@pytest.mark.extended
def test_state_fuzz_asan_ubsan_long(fuzzers):
    _fuzz_states(fuzzers["asan"], int(os.environ.get("CULE_FUZZ_STATES", 100_000)), 4 * 3600,
                 "ASan+UBSan saved states, long")


@pytest.mark.extended
def test_fuzz_asan_ubsan_long(fuzzers):
    frames = _frames("CULE_FUZZ_FRAMES", 1_000_000)
    stats, by = _fuzz(fuzzers["asan"], ["--frames", str(frames), "--seed", SEED, "--threads", "2", "--haul-every",
                                        "100", "--verbose"], 4 * 3600, "ASan+UBSan long")
    assert stats["frames"] >= frames and stats["wrapped"] > 0
    assert all(int(n) > 0 for n in re.findall(r" (\d+);", by["frames by mapper"])), by


@pytest.mark.extended
def test_fuzz_tsan_long(fuzzers):
    frames = _frames("CULE_FUZZ_TSAN_FRAMES", 100_000)
    stats, _ = _fuzz(fuzzers["tsan"], [*TSAN_ARGS, "--frames", str(frames)], 4 * 3600, "TSan long")
    assert stats["frames"] >= frames
