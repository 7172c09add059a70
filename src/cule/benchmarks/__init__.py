"""cule's benchmarks, run as modules: ``python -m cule.benchmarks.<name> --help``."""
from __future__ import annotations

import argparse
import os
from pathlib import Path


def add_output_dir(parser: argparse.ArgumentParser, name: str) -> None:
    """The one flag every benchmark and trainer writes its files under (default runs/<name>, ignored by git).
    The folder is checked as the arguments are read (nothing is made then): one that could not be made or
    written stops the run before it measures anything, not after."""
    parser.add_argument("--output-dir", "--out-dir", dest="output_dir", default=f"runs/{name}", type=_writable_folder,
                        help=f"folder for the figures (CSV/JSON), plots and logs, made if missing (default "
                             f"runs/{name}; --out-dir is an alias)")


def _writable_folder(path: str) -> str:
    """`path` if it is a writable folder or could be made as one: its nearest existing ancestor is a writable
    folder."""
    folder = Path(path).absolute()
    existing = next(p for p in (folder, *folder.parents) if p.exists())
    if not existing.is_dir():
        raise argparse.ArgumentTypeError(f"cannot make the folder {path!r}: {str(existing)!r} is a file")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"cannot write into {str(existing)!r} (for the folder {path!r})")
    return path


def pyplot():
    """matplotlib.pyplot drawing to files (no display needed), or None with a hint when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        print("no plot: pip install matplotlib (the figures were written)")
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def check_games(parser: argparse.ArgumentParser, games) -> None:
    """Stops with argparse's one-line error at the first name that is no game, before anything is measured."""
    from cule.errors import RomError
    from cule.roms import load_rom

    for game in games:
        try:
            load_rom(game)
        except RomError as e:
            parser.error(str(e))


def at_least(least: int):
    """An argparse type: an int of at least `least`, else argparse's one-line error naming the flag."""
    def parse(text: str) -> int:
        value = int(text)
        if value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, got {value}")
        return value
    parse.__name__ = "int"  # argparse's message for a non-number: "invalid int value"
    return parse
