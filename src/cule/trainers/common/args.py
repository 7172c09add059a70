"""A dataclass of documented arguments -> an argparse command line (cleanrl style, no extra dependency).

Each field's help is its metadata["help"]; booleans take --flag / --no-flag; output_dir also answers to
--out-dir, as in the benchmarks.
"""
from __future__ import annotations

import argparse
import dataclasses
import typing


class _Formatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Defaults after each flag's help, and the description (a trainer's docstring) kept as written."""


def parse(cls, argv: list[str] | None = None, description: str | None = None):
    """Builds cls from the command line; `--help` lists every field with its help and default."""
    parser = argparse.ArgumentParser(description=description or cls.__doc__, formatter_class=_Formatter)
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        kind = hints[f.name]
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        help_text = f.metadata.get("help", "")
        names = [flag, "--out-dir"] if f.name == "output_dir" else [flag]  # one name everywhere, and the alias
        if kind is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default, help=help_text)
        else:
            base = typing.get_args(kind)[0] if typing.get_origin(kind) is typing.Union else kind
            parser.add_argument(*names, dest=f.name, type=base, default=default, help=help_text)
    try:
        return cls(**vars(parser.parse_args(argv)))
    except ValueError as e:  # the dataclass's own checks (__post_init__): one line, as argparse's
        parser.error(str(e))


def check_minimums(args) -> None:
    """A count below its least sensible value (a field's metadata "min") stops here, naming the flag, instead of
    failing deep in a run; for a dataclass's __post_init__."""
    for f in dataclasses.fields(args):
        least = f.metadata.get("min")
        if least is not None and getattr(args, f.name) < least:
            raise ValueError(f"--{f.name.replace('_', '-')} must be at least {least}, got {getattr(args, f.name)}")
