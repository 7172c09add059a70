"""Shared test options, fixtures, and the summary lines the issues ask the test run to print."""
import concurrent.futures
import os
import shutil
import struct
from pathlib import Path

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


def pytest_addoption(parser):
    parser.addoption("--extended", action="store_true", default=False,
                     help="also run the long sweeps marked 'extended'")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--extended"):
        return
    skip = pytest.mark.skip(reason="long sweep: run with --extended")
    for item in items:
        if "extended" in item.keywords:
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter):
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
