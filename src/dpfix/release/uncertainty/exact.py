"""Exact decisions about the two-sided geometric law: signs and floors of real numbers built
from ``rho = 1/lam`` (a rational), decided by arb balls (python-flint) and, when a ball cannot
decide, by Fractions (docs/uncertainty.md section 2.2).

A ball that lies on one side of 0 (or between two integers) proves the answer: arb's
arithmetic is rigorous (every operation returns a ball that contains the exact result).
Only when the ball straddles the point (the exact value is on it, or very near) are the
same formulas evaluated in Fractions, which is always right and slow only for large
powers of ``rho``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

from flint import arb, ctx, fmpq

__all__ = ["sign", "floor", "ceil", "cdf", "pmf"]

#: The arb precisions tried (bits) before Fractions decide.
PRECISIONS = (128, 2048)


@contextmanager
def _precision(bits: int) -> Any:
    old = ctx.prec
    ctx.prec = bits
    try:
        yield
    finally:
        ctx.prec = old


def _ball(x: Any) -> arb:
    f = Fraction(x)
    return arb(fmpq(f.numerator, f.denominator))


def sign(f: Callable[[Callable[[Any], Any]], Any]) -> int:
    """The sign (-1, 0 or 1) of the real number ``f(num)``, decided exactly.

    ``f`` builds its number from constants passed through ``num`` (``num(x)`` turns the
    rational ``x`` into the number system in use: an arb ball, then a Fraction).

    Examples
    --------
    >>> sign(lambda num: num(Fraction(2, 3)) ** 39 - num(Fraction(1, 10**7)))
    1
    >>> sign(lambda num: num(Fraction(1, 3)) * 3 - 1)
    0
    """
    for bits in PRECISIONS:
        with _precision(bits):
            v = f(_ball)
            if v > 0:
                return 1
            if v < 0:
                return -1
    v = f(Fraction)
    return (v > 0) - (v < 0)


def _rounded(f: Callable[[Callable[[Any], Any]], Any], up: bool) -> int:
    for bits in PRECISIONS:
        with _precision(bits):
            v = f(_ball)
            r = (v.ceil() if up else v.floor()).unique_fmpz()
            if r is not None:
                return int(r)
    v = f(Fraction)
    return math.ceil(v) if up else math.floor(v)


def floor(f: Callable[[Callable[[Any], Any]], Any]) -> int:
    """``floor(f(num))`` exactly (see :func:`sign`).

    Examples
    --------
    >>> floor(lambda num: num(Fraction(7, 2)) * 2)
    7
    """
    return _rounded(f, up=False)


def ceil(f: Callable[[Callable[[Any], Any]], Any]) -> int:
    """``ceil(f(num))`` exactly (see :func:`sign`).

    Examples
    --------
    >>> ceil(lambda num: num(Fraction(10, 3)))
    4
    """
    return _rounded(f, up=True)


def cdf(t: int, rho: Any) -> Any:
    """``Phi(t) = P(k <= t)`` for the two-sided geometric ``P(k) = (1-rho)/(1+rho) rho^|k|``.

    ``1 - rho^(t+1)/(1+rho)`` for ``t >= 0``, ``rho^(-t)/(1+rho)`` for ``t < 0``; ``rho`` in
    any number system (a Fraction gives the exact value).

    Examples
    --------
    >>> cdf(0, Fraction(1, 2)), cdf(-1, Fraction(1, 2))
    (Fraction(2, 3), Fraction(1, 3))
    """
    if t >= 0:
        return 1 - rho ** (t + 1) / (1 + rho)
    return rho ** (-t) / (1 + rho)


def pmf(t: int, rho: Any) -> Any:
    """``P(k = t) = (1-rho)/(1+rho) rho^|t|`` (any number system).

    Examples
    --------
    >>> pmf(-1, Fraction(1, 2))
    Fraction(1, 6)
    """
    return (1 - rho) / (1 + rho) * rho ** abs(t)
