"""Shared test options, fixtures, and the summary lines the issues ask the test run to print."""
import concurrent.futures
import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# External test data, with its origins and licences (tests/data/README.md).
DATA = REPO / "tests" / "data"

# Tests append human-readable result lines here; they are printed at the end.
SUMMARY: dict[str, list[str]] = {}


def report(section: str, line: str) -> None:
    SUMMARY.setdefault(section, []).append(line)


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
