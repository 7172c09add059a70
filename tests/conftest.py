"""Shared test options, fixtures, and the summary lines the issues ask the test run to print."""
import concurrent.futures
import os
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import pytest

REPO = Path(__file__).resolve().parent.parent
# External test data, with its origins and licences (tests/data/README.md).
DATA = REPO / "tests" / "data"

# Tests append human-readable result lines here; they are printed at the end.
SUMMARY: dict[str, list[str]] = {}


def report(section: str, line: str) -> None:
    SUMMARY.setdefault(section, []).append(line)


def cubin_code(path) -> dict[str, bytes]:
    """A cubin's sections by name (SHT_NOBITS ones empty), less those that may differ between builds of the
    same machine code: the symbol table's order, and the toolkit's note, which records the options."""
    data = path.read_bytes()
    table, = struct.unpack_from("<Q", data, 0x28)
    entry, count, names = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, table + i * entry) for i in range(count)]
    strings = headers[names][4]
    sections = {}
    for name, kind, _, _, offset, size, *_ in headers:
        label = data[strings + name:data.index(b"\0", strings + name)].decode()
        if label not in (".symtab", ".strtab", ".note.nv.tkinfo"):
            sections[label] = b"" if kind == 8 else data[offset:offset + size]
    return sections


def differing_code(first, second) -> list[str]:
    """The sections in which two cubins of every kernel differ (cubin_code's), after checking that the first
    holds each kernel's code."""
    from cule import _core

    a, b = cubin_code(first), cubin_code(second)
    assert sorted(n for n in a if n.startswith(".text.")) == sorted(f".text.{k}" for k in _core.kernel_signatures)
    return sorted(name for name in a.keys() | b.keys() if a.get(name) != b.get(name))


# A job in a process group of its own, so that a run that ends early stops the compiler's children too. Not a
# session of its own: where the kernel groups the scheduling by session (Linux's autogroup), a new session
# competes with the tests as an equal and its low priority counts for nothing.
_GROUP = {"process_group": 0} if sys.version_info >= (3, 11) else {}


@dataclass
class Finished:
    """A background job's outcome; `folder` is its own empty folder, given to the command, removed after the run."""
    returncode: int
    stdout: str
    stderr: str
    folder: Path
    priority: int

    def took(self, seconds: float) -> str:
        """`seconds` as a report gives them, saying when they were spent beside the other tests."""
        return f"{seconds:.0f} s" + (", beside the other tests at low priority" if self.priority else "")


class BackgroundJob:
    """A long subprocess (a compile, a dry run) that starts as the test run starts, at the lowest CPU priority,
    so that it takes only the cycles the other tests leave idle; the modules that read it run last.

    `command(folder)` gives the command line (run in the repository) or None where there is nothing to run (a
    build that is there already); a job whose tests are all skipped does not start. Put `job.mark` on the tests
    that read it; `job.result()` waits for it and returns a Finished, or None. A job that no marked test started
    runs, at normal priority, when first read.
    The timeout guards against a hang; it is no budget, as a job at low priority may wait long for a core.
    """
    jobs: dict[str, "BackgroundJob"] = {}
    lock = threading.Lock()
    pool: Optional[concurrent.futures.ThreadPoolExecutor] = None
    stopping = False

    def __init__(self, name: str, command: Callable[[Path], Optional[list[str]]], timeout: float = 3600):
        assert name not in self.jobs, f"two background jobs named {name}"
        self.name, self.command, self.timeout = name, command, timeout
        self.mark = pytest.mark.background(name)
        self.future: Optional[concurrent.futures.Future] = None
        self.process: Optional[subprocess.Popen] = None
        self.folder: Optional[Path] = None
        self.jobs[name] = self

    def start(self, priority: int = 19) -> None:
        with self.lock:
            if self.future is None:
                if BackgroundJob.pool is None:
                    BackgroundJob.pool = concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1, "background")
                self.future = self.pool.submit(self._run, priority)

    def _run(self, priority: int) -> Optional[Finished]:
        self.folder = Path(tempfile.mkdtemp(prefix=f"cule-{self.name}-"))
        cmd = self.command(self.folder)
        if cmd is None:
            return None
        if priority and shutil.which("nice"):
            cmd = ["nice", "-n", str(priority), *cmd]
        with self.lock:
            if self.stopping:
                return None
            self.process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                            cwd=REPO, **_GROUP)
        try:
            out, err = self.process.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            out, err = self.process.communicate()
            err += f"\n{self.name}: stopped after {self.timeout:.0f} s"
        return Finished(self.process.returncode, out, err, self.folder, priority)

    def kill(self) -> None:
        if _GROUP:
            os.killpg(self.process.pid, signal.SIGKILL)
        else:
            self.process.kill()

    def result(self) -> Optional[Finished]:
        self.start(priority=0)
        return self.future.result()

    @classmethod
    def stop_all(cls) -> None:
        """Ends the jobs still running, drops those not begun, and removes the jobs' folders."""
        with cls.lock:
            cls.stopping = True
            for job in cls.jobs.values():
                if job.process is not None and job.process.poll() is None:
                    job.kill()
        if cls.pool is not None:
            cls.pool.shutdown(wait=True, cancel_futures=True)
        for job in cls.jobs.values():
            if job.folder is not None:
                shutil.rmtree(job.folder, ignore_errors=True)


def _will_run(item) -> bool:
    """Whether an item is neither marked skip nor marked skipif with a true condition."""
    if item.get_closest_marker("skip") is not None:
        return False
    return not any(m.args and m.args[0] is True for m in item.iter_markers("skipif"))


def pytest_addoption(parser):
    parser.addoption("--extended", action="store_true", default=False,
                     help="also run the long sweeps marked 'extended'")


def pytest_configure(config):
    config.addinivalue_line("markers", "background(name): the test reads the BackgroundJob of that name")


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--extended"):
        skip = pytest.mark.skip(reason="long sweep: run with --extended")
        for item in items:
            if "extended" in item.keywords:
                item.add_marker(skip)
    # the modules that read background jobs last, each in one piece (their module fixtures are set up once)
    readers = {item.getparent(pytest.Module) for item in items if item.get_closest_marker("background") is not None}
    items.sort(key=lambda item: item.getparent(pytest.Module) in readers)


def pytest_collection_finish(session):
    if session.config.option.collectonly:
        return
    for item in session.items:
        if _will_run(item):
            for mark in item.iter_markers("background"):
                BackgroundJob.jobs[mark.args[0]].start()


def pytest_sessionfinish(session):
    BackgroundJob.stop_all()


# How fast this machine ran a fixed piece of work as the run began, before the background jobs started: the
# same suite's time moves with it (2-core VMs of one kind have differed threefold from day to day).
MACHINE: dict[str, float] = {}


def _ale_frames_per_cpu_second(frames: int = 3000) -> float:
    """ale-py's ALEInterface stepping pong, in frames per CPU second of this process."""
    from ale_oracle import ale_interface

    ale = ale_interface("pong")
    actions = ale.getMinimalActionSet()
    started = time.process_time()
    for i in range(frames):
        ale.act(actions[i % len(actions)])
    return frames / (time.process_time() - started)


def pytest_sessionstart(session):
    MACHINE["started"] = time.perf_counter()
    if not session.config.option.collectonly:
        MACHINE["ale_fps"] = _ale_frames_per_cpu_second()


def _run_line() -> str:
    """The run's wall time, the CPU time of the tests and every job they waited for, and the machine's speed."""
    wall = time.perf_counter() - MACHINE["started"]
    cpu = sum(u.ru_utime + u.ru_stime for u in map(resource.getrusage, (resource.RUSAGE_SELF,
                                                                          resource.RUSAGE_CHILDREN)))
    return (f"{wall / 60:.1f} min wall, {cpu / 60:.1f} CPU-minutes (the tests and the jobs they started) on "
            f"{os.cpu_count()} cores, where ale-py's ALEInterface steps pong at {MACHINE['ale_fps']:,.0f} frames "
            f"per CPU second")


def pytest_terminal_summary(terminalreporter):
    if "ale_fps" in MACHINE:
        report("the test run and this machine", _run_line())
    for section, lines in SUMMARY.items():
        terminalreporter.section(section)
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def device_code():
    """Every mapper's library of the device's code (cule.kernels.device_shim), built before the first test
    needs one, as many compiles at a time as there are cores; then the value of `_shim` that runs it."""
    from cule import _core
    from cule.kernels import device_shim

    if shutil.which(device_shim.CXX) is None:
        pytest.skip(f"the device shim needs a C++ compiler ({device_shim.CXX}; set CXX)")
    with concurrent.futures.ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1))) as pool:
        list(pool.map(device_shim.build, _core.mapper_types))
    return "device"


@pytest.fixture(params=["host", "device"])
def shim(request):
    """The value of `_shim` for the host's side of the code (True) and for the device's."""
    return request.getfixturevalue("device_code") if request.param == "device" else True
