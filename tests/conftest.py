"""Shared test options and the summary lines the issues ask the test run to print."""
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

