"""Argument types shared by the commands: numbers written in plain ASCII digits.

Python's ``int()`` also reads ``"1_0"`` as 10 and digits of other scripts; an
option of ``dpfix`` takes neither (:func:`dpfix.numbers.numeric.plain_number`).
"""

from __future__ import annotations

import argparse

from dpfix.numbers.numeric import plain_number

__all__ = ["plain_int"]


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
