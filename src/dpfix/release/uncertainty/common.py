"""What the three kinds of stated uncertainty share: the check of ``alpha``, of the rows of a
group, and the summary of widths for the report (docs/uncertainty.md section 1)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["check_alpha", "half_alpha", "check_rows", "width_summary"]


def check_alpha(alpha: Any) -> float:
    """``alpha`` as a float in ``(0, 1)``, or one clear line naming it.

    Parameters
    ----------
    alpha : float
        One minus the level: ``0.05`` for 95% sets.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Not a real number strictly between 0 and 1 (a bool, a string, NaN, 0, 1, ...).

    Examples
    --------
    >>> check_alpha(0.05)
    0.05
    >>> check_alpha(1.5)
    Traceback (most recent call last):
    ...
    ValueError: alpha: must be a number in (0, 1) (0.05 for 95% sets), got 1.5
    """
    ok = isinstance(alpha, (int, float, np.integer, np.floating, Fraction)) \
        and not isinstance(alpha, (bool, np.bool_))
    value = float(alpha) if ok else math.nan
    if not (ok and math.isfinite(value) and 0 < value < 1):
        raise ValueError(f"alpha: must be a number in (0, 1) (0.05 for 95% sets), got {alpha!r}")
    return value


def half_alpha(alpha: float) -> Fraction:
    """``alpha / 2`` exactly: the float ``alpha`` is a dyadic rational, halved without rounding.

    Examples
    --------
    >>> half_alpha(0.5)
    Fraction(1, 4)
    """
    return Fraction(check_alpha(alpha)) / 2


def check_rows(rows: Any, N: int) -> np.ndarray:
    """The positions of a group of rows of a table of ``N`` rows (int64, sorted, distinct).

    Parameters
    ----------
    rows : array_like of int or of bool
        Positions ``0 .. N-1`` (each at most once), or a boolean mask of length ``N``.
    N : int
        The number of rows of the table.

    Returns
    -------
    numpy.ndarray of int64

    Raises
    ------
    ValueError
        An empty group, a position outside ``0 .. N-1`` or given twice, a mask of another
        length, or values that are neither integers nor booleans.

    Examples
    --------
    >>> check_rows([3, 0], 5).tolist()
    [0, 3]
    >>> check_rows([0, 7], 5)
    Traceback (most recent call last):
    ...
    ValueError: rows: position 7 is not a row of the table (it has 5 rows: 0 .. 4)
    """
    r = np.asarray(rows)
    if r.ndim != 1:
        raise ValueError(f"rows: expected a vector of row positions or a mask, got shape "
                         f"{r.shape}")
    if r.dtype == bool:
        if r.size != N:
            raise ValueError(f"rows: a mask must have one entry per row ({N}), got {r.size}")
        r = np.flatnonzero(r)
    elif r.size and r.dtype.kind not in "iu":
        raise ValueError(f"rows: expected integer positions or a boolean mask, got {r.dtype}")
    r = r.astype(np.int64)
    if r.size == 0:
        raise ValueError("rows: the group has no rows")
    bad = r[(r < 0) | (r >= N)]
    if bad.size:
        raise ValueError(f"rows: position {int(bad[0])} is not a row of the table (it has {N} "
                         f"rows: 0 .. {N - 1})")
    r = np.sort(r)
    twice = r[1:][r[1:] == r[:-1]]
    if twice.size:
        raise ValueError(f"rows: position {int(twice[0])} is given twice")
    return r


def width_summary(widths: Any, weights: Any = None) -> dict[str, Any]:
    """Mean, median, 90th percentile, minimum and maximum of widths (weighted by ``weights``).

    Parameters
    ----------
    widths : array_like of float
    weights : array_like of int, optional
        How many rows have each width (a histogram); default one each.

    Returns
    -------
    dict

    Examples
    --------
    >>> width_summary([0, 2, 4], [1, 1, 2])
    {'mean': 2.5, 'median': 3.0, 'p90': 4.0, 'min': 0.0, 'max': 4.0}
    """
    w = np.asarray(widths, dtype=float)
    c = np.ones(w.size) if weights is None else np.asarray(weights, dtype=float)
    keep = c > 0
    w, c = w[keep], c[keep]
    if w.size == 0:
        return {"mean": None, "median": None, "p90": None, "min": None, "max": None}
    order = np.argsort(w, kind="stable")
    w, c = w[order], c[order]
    cum = np.cumsum(c)
    total = cum[-1]

    def quantile(q: float) -> float:
        # the lower median of the weighted sample, averaged with the next at an exact split
        k = int(np.searchsorted(cum, q * total, side="left"))
        if cum[k] == q * total and k + 1 < w.size:
            return float((w[k] + w[k + 1]) / 2)
        return float(w[k])

    return {"mean": float((w * c).sum() / total), "median": quantile(0.5),
            "p90": quantile(0.9), "min": float(w[0]), "max": float(w[-1])}
