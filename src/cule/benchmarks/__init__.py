"""cule's benchmarks, run as modules: ``python -m cule.benchmarks.<name> --help``."""
from __future__ import annotations

import argparse


def add_output_dir(parser: argparse.ArgumentParser, name: str) -> None:
    """The one flag every benchmark and trainer writes its files under (default runs/<name>, ignored by git)."""
    parser.add_argument("--output-dir", "--out-dir", dest="output_dir", default=f"runs/{name}",
                        help="folder for the figures (CSV/JSON), plots and logs (--out-dir is an alias)")


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
