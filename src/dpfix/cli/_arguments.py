"""Argument helpers shared by the commands: numbers written in plain ASCII digits, and
renamed options.

Python's ``int()`` also reads ``"1_0"`` as 10 and digits of other scripts; an
option of ``dpfix`` takes neither (:func:`dpfix.numbers.numeric.plain_number`).
:func:`add_renamed` keeps an option's former name working for one release, with a
warning line on stderr (the command line's counterpart of
:func:`dpfix.numbers.deprecation.renamed`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dpfix.numbers.numeric import plain_number

__all__ = ["plain_int", "add_renamed"]


def plain_int(text: str) -> int:
    """An argparse ``type=`` for integer options: plain digits only.

    Examples
    --------
    >>> plain_int("12")
    12
    >>> plain_int("1_0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: '1_0' is not an integer written in plain digits (no '_')
    """
    try:
        return int(plain_number(text, "value", integer=True))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an integer written in plain digits (no '_')") from None


class _Renamed(argparse.Action):
    """Store the value under the new option's name, with a warning line on stderr."""

    def __init__(self, *args: Any, new: str, **kwargs: Any) -> None:
        self.new = new
        super().__init__(*args, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"{parser.prog}: warning: {option_string} is deprecated; use {self.new} (the "
              "old name goes in the next release)", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_renamed(parser: argparse.ArgumentParser, old: str, new: str) -> None:
    """Accept option ``old`` as a deprecated name of the (already added) option ``new``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The command's parser, where ``new`` is registered.
    old, new : str
        The option strings, e.g. ``"--weights"`` and ``"--loss"``.

    Examples
    --------
    >>> p = argparse.ArgumentParser(prog="dpfix certify")
    >>> _ = p.add_argument("--loss", default="abs")
    >>> add_renamed(p, "--weights", "--loss")
    >>> p.parse_args(["--weights", "squared"]).loss
    'squared'
    """
    target = next(a for a in parser._actions if new in a.option_strings)
    parser.add_argument(old, dest=target.dest, metavar=target.metavar or "NAME",
                        action=_Renamed, new=new, help=f"deprecated name of {new}")
