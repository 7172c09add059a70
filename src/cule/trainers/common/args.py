"""A dataclass of documented arguments -> an argparse command line (cleanrl style, no extra dependency).

Each field's help is its metadata["help"]; booleans take --flag / --no-flag; output_dir also answers to
--out-dir, as in the benchmarks.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import typing

from cule.errors import CudaUnavailableError

# What an Args dataclass's checks raise (__post_init__: check_fields, check_games_and_device, cross-checks);
# a command line turns them into argparse's one-line error.
ARGUMENT_ERRORS = (ValueError, CudaUnavailableError)


class _Formatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Defaults after each flag's help, and the description (a trainer's docstring) kept as written."""


def parse(cls, argv: list[str] | None = None, description: str | None = None):
    """Builds cls from the command line; `--help` lists every field with its help and default."""
    spec = getattr(sys.modules.get(cls.__module__), "__spec__", None)  # run as -m, the module is __main__
    parser = argparse.ArgumentParser(prog=f"python -m {spec.name if spec else cls.__module__}",
                                     description=description or cls.__doc__, formatter_class=_Formatter)
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
            parser.add_argument(*names, dest=f.name, type=base, default=default, help=help_text,
                                choices=f.metadata.get("choices"))
    try:
        return cls(**vars(parser.parse_args(argv)))
    except ARGUMENT_ERRORS as e:
        parser.error(str(e))


def check_fields(args) -> None:
    """A value outside its field's range stops here, naming the flag, instead of failing deep in a run: a count
    below its least sensible value (metadata "min"), a name that is none of its choices (metadata "choices",
    which --help lists too); for a dataclass's __post_init__."""
    for f in dataclasses.fields(args):
        value, flag = getattr(args, f.name), f"--{f.name.replace('_', '-')}"
        least, choices = f.metadata.get("min"), f.metadata.get("choices")
        if least is not None and value < least:
            raise ValueError(f"{flag} must be at least {least}, got {value}")
        if choices is not None and value not in choices:
            raise ValueError(f"{flag} must be one of {', '.join(map(repr, choices))}, got {value!r}")


def check_games_and_device(games: list[str], device: str | None = None) -> None:
    """The games of --game, as the trainer reads them, and --device (when given: a trainer whose device is
    torch's) checked as cule's env checks them, so that a misspelt game or a device this machine lacks stops
    before the run with cule's message (the close game names, what to install) instead of a traceback."""
    from cule.checks import checked_device
    from cule.roms import load_rom

    for name in games:
        load_rom(name)  # RomError (a ValueError) names the close ids
    if device is not None:
        checked_device(device)
