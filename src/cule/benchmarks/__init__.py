"""cule's benchmarks, run as modules: ``python -m cule.benchmarks.<name> --help``."""
from __future__ import annotations

import argparse
import os
from pathlib import Path


def add_output_dir(parser: argparse.ArgumentParser, name: str) -> None:
    """The one flag every benchmark and trainer writes its files under (default runs/<name>, ignored by git).
    The folder is made, and checked to be writable, as the arguments are read: a bad one stops the run before
    it measures anything, not after."""
    parser.add_argument("--output-dir", "--out-dir", dest="output_dir", default=f"runs/{name}", type=_writable_folder,
                        help=f"folder for the figures (CSV/JSON), plots and logs, made if missing (default "
                             f"runs/{name}; --out-dir is an alias)")


def _writable_folder(path: str) -> str:
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise argparse.ArgumentTypeError(f"cannot make the folder {path!r}: {e.strerror}") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"cannot write into the folder {path!r}")
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
