"""eps-scales: the building blocks of DP count mechanisms (paper Section 4.2, Definition 6).

A pattern ``p`` in ``{-1, +1}^(n-1)`` has heights ``h[0] = 0``,
``h[i+1] = h[i] + p[i]``; its scale is ``s[i] = lam^h[i] / sum_k lam^h[k]``
(the paper's Definition 6). Every function dispatches on the number type of
``lam``: a rational ``lam`` (int, Fraction, string) gives exact Fractions, an
algebraic one (:func:`dpfix.algebraic`) exact elements of ``Q(lam)``; a
float ``lam``, or ``eps=``, gives float64 computed as
``exp(eps * (h - max h))`` so that ``n * eps`` in the tens of thousands neither
overflows nor loses the neighbour ratios.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpfix.numbers.algebraic import to_exact
from dpfix.numbers.exact import resolve_lam

__all__ = [
    "heights",
    "pattern_index",
    "pattern_from_index",
    "single_peaked_pattern",
    "scale",
    "log_scale",
    "psi",
    "single_peaked",
    "sigma",
    "pattern_of",
    "PSI_MAX_N",
]

#: Psi has ``2^(n-1)`` columns; refuse to build it beyond this ``n``.
PSI_MAX_N = 20


def _check_pattern(pattern: Sequence[int]) -> tuple[int, ...]:
    p = tuple(int(v) for v in pattern)
    if any(v not in (-1, 1) for v in p):
        raise ValueError(f"pattern: entries must be -1 or +1, got {list(pattern)}")
    return p


def heights(pattern: Sequence[int]) -> np.ndarray:
    """Heights ``h`` of a pattern: ``h[0] = 0``, ``h[i+1] = h[i] + p[i]``.

    Parameters
    ----------
    pattern : sequence of int
        Entries ``-1`` or ``+1`` (length ``n - 1``).

    Returns
    -------
    numpy.ndarray
        ``n`` int64 heights.

    Raises
    ------
    ValueError
        An entry other than ``-1`` or ``+1``.

    Examples
    --------
    >>> heights([1, -1, -1]).tolist()
    [0, 1, 0, -1]
    """
    p = _check_pattern(pattern)
    return np.concatenate([[0], np.cumsum(p, dtype=np.int64)]).astype(np.int64)


def pattern_index(pattern: Sequence[int]) -> int:
    """Column of ``psi`` holding this pattern's scale: bit ``i`` set iff ``p[i] = +1``.

    Parameters
    ----------
    pattern : sequence of int
        As for :func:`heights`.

    Returns
    -------
    int
        In ``0 .. 2^(n-1) - 1``.

    Raises
    ------
    ValueError
        As :func:`heights`: a bad pattern.

    Examples
    --------
    >>> pattern_index([1, -1, 1])
    5
    """
    p = _check_pattern(pattern)
    return sum(1 << i for i, v in enumerate(p) if v == 1)


def pattern_from_index(m: int, n: int) -> tuple[int, ...]:
    """Inverse of :func:`pattern_index` for scales of length ``n``.

    Parameters
    ----------
    m : int
        The column of ``psi``.
    n : int
        The scale's length.

    Returns
    -------
    tuple of int
        The pattern of column ``m``.

    Raises
    ------
    ValueError
        ``n < 1`` or ``m`` outside ``0 .. 2^(n-1) - 1``.

    Examples
    --------
    >>> pattern_from_index(5, 4)
    (1, -1, 1)
    """
    if n < 1:
        raise ValueError(f"n: must be >= 1, got {n}")
    if not 0 <= m < 2 ** (n - 1):
        raise ValueError(f"m: must be in 0..{2 ** (n - 1) - 1} for n = {n}, got {m}")
    return tuple(1 if (m >> i) & 1 else -1 for i in range(n - 1))


def single_peaked_pattern(j: int, n: int) -> tuple[int, ...]:
    """Pattern of the single-peaked scale at ``j``: up before ``j``, down after.

    Parameters
    ----------
    j : int
        The peak, in ``0 .. n-1``.
    n : int
        The scale's length.

    Returns
    -------
    tuple of int
        ``+1`` before ``j``, ``-1`` after.

    Raises
    ------
    ValueError
        ``j`` outside ``0 .. n-1``.

    Examples
    --------
    >>> single_peaked_pattern(1, 4)
    (1, -1, -1)
    """
    if not 0 <= j < n:
        raise ValueError(f"j: must be in 0..{n - 1}, got {j}")
    return tuple(1 if i < j else -1 for i in range(n - 1))


def scale(pattern: Sequence[int], lam: Any = None, *, eps: float | None = None) -> np.ndarray:
    """The eps-scale with the given pattern (Definition 6), a probability vector.

    Exact (Fractions) for rational ``lam``; float64 for float ``lam`` or ``eps``.

    Parameters
    ----------
    pattern : sequence of int
        Entries ``-1`` or ``+1`` (length ``n - 1``).
    lam : int, Fraction, str or float, optional
        ``e^eps``: rational for Fractions, float for float64.
    eps : float, optional
        The privacy parameter instead of ``lam`` (float64).

    Returns
    -------
    numpy.ndarray
        Object array of Fractions, or float64; sums to 1.

    Raises
    ------
    ValueError
        A bad pattern, or bad ``lam``/``eps`` (see :func:`dpfix.numbers.exact.resolve_lam`).

    Examples
    --------
    >>> scale([1, -1], 2).tolist()
    [Fraction(1, 4), Fraction(1, 2), Fraction(1, 4)]
    >>> scale([1, -1], eps=float(np.log(2))).round(6).tolist()
    [0.25, 0.5, 0.25]
    """
    h = heights(pattern)
    lam_x, eps_f = resolve_lam(eps, lam)
    if lam_x is not None:
        lo = int(h.min())
        w = [lam_x ** int(v - lo) for v in h]
        total = sum(w)
        return np.array([v / total for v in w], dtype=object)
    w = np.exp(eps_f * (h - h.max()))
    return w / w.sum()


def log_scale(pattern: Sequence[int], eps: float) -> np.ndarray:
    """Natural log of the float scale: ``eps*h - logsumexp(eps*h)``.

    Representable for any ``n * eps`` (entries such as ``e^-50000`` that
    underflow float64 stay finite here).

    Parameters
    ----------
    pattern : sequence of int
        Entries ``-1`` or ``+1`` (length ``n - 1``).
    eps : float
        The privacy parameter.

    Returns
    -------
    numpy.ndarray
        float64 logs.

    Examples
    --------
    >>> float(log_scale([1], 1.0)[1] - log_scale([1], 1.0)[0])
    1.0
    """
    h = heights(pattern).astype(float) * float(eps)
    top = h.max()
    return h - (top + np.log(np.exp(h - top).sum()))


def psi(n: int, lam: Any = None, *, eps: float | None = None) -> np.ndarray:
    """The ``n x 2^(n-1)`` matrix of all eps-scales, in canonical column order.

    Column ``m`` is the scale whose pattern has ``p[i] = +1`` iff bit ``i`` of
    ``m`` is set (paper Section 4.2, Definition 6).

    Parameters
    ----------
    n : int
        The length of the scales (``n <= PSI_MAX_N``).
    lam, eps
        As for :func:`scale`: a rational ``lam`` gives Fractions, a float one or ``eps`` float64.

    Returns
    -------
    numpy.ndarray
        ``n x 2^(n-1)``, exact or float64.

    Raises
    ------
    ValueError
        ``n < 1`` or ``n > PSI_MAX_N``.

    Examples
    --------
    >>> psi(2, 3).tolist()
    [[Fraction(3, 4), Fraction(1, 4)], [Fraction(1, 4), Fraction(3, 4)]]
    """
    if n < 1:
        raise ValueError(f"n: must be >= 1, got {n}")
    if n > PSI_MAX_N:
        raise ValueError(
            f"psi: n = {n} would have 2^{n - 1} columns; the limit is n <= {PSI_MAX_N} "
            "(dpfix.theory.scales.PSI_MAX_N); work with single scales via scale() instead"
        )
    cols = [scale(pattern_from_index(m, n), lam, eps=eps) for m in range(2 ** (n - 1))]
    return np.stack(cols, axis=1)


def single_peaked(j: int, n: int, lam: Any = None, *, eps: float | None = None) -> np.ndarray:
    """The single-peaked scale at ``j``: ``s[i]`` proportional to ``lam^-|i-j|``.

    Parameters
    ----------
    j : int
        The peak.
    n : int
        The length.
    lam, eps
        As for :func:`scale`: a rational ``lam`` gives Fractions, a float one or ``eps`` float64.

    Returns
    -------
    numpy.ndarray
        The single-peaked scale at ``j``, a probability vector.

    Raises
    ------
    ValueError
        As :func:`single_peaked_pattern`: no peak ``j`` in ``0 .. n-1``.

    Examples
    --------
    >>> single_peaked(0, 3, 2).tolist()
    [Fraction(4, 7), Fraction(2, 7), Fraction(1, 7)]
    """
    return scale(single_peaked_pattern(j, n), lam, eps=eps)


def sigma(n: int, lam: Any = None, *, eps: float | None = None) -> np.ndarray:
    """``Sigma``: the ``n x n`` matrix whose column ``j`` is the single-peaked scale at ``j``.

    Parameters
    ----------
    n : int
        The size.
    lam, eps
        As for :func:`scale`: a rational ``lam`` gives Fractions, a float one or ``eps`` float64.

    Returns
    -------
    numpy.ndarray
        ``n x n``, exact or float64.

    Raises
    ------
    ValueError
        ``n < 1``.

    Examples
    --------
    >>> sigma(2, 2).tolist()
    [[Fraction(2, 3), Fraction(1, 3)], [Fraction(1, 3), Fraction(2, 3)]]
    """
    if n < 1:
        raise ValueError(f"n: must be >= 1, got {n}")
    return np.stack([single_peaked(j, n, lam, eps=eps) for j in range(n)], axis=1)


def pattern_of(
    s: Any, lam: Any = None, *, eps: float | None = None, rtol: float = 1e-9
) -> tuple[int, ...]:
    """Pattern of ``s`` when ``s`` is a positive multiple of an eps-scale.

    Raises ``ValueError`` otherwise. Exact comparison for rational ``lam``;
    for floats, each neighbour ratio must match ``lam`` or ``1/lam`` within the
    relative tolerance ``rtol`` (compared in log space).

    Parameters
    ----------
    s : array_like
        A positive vector.
    lam, eps
        As for :func:`scale`: a rational ``lam`` gives Fractions, a float one or ``eps`` float64.
    rtol : float
        Float path: relative tolerance of the neighbour ratios, in log space.

    Returns
    -------
    tuple of int
        The pattern ``p`` with ``s`` proportional to the scale of ``p``.

    Raises
    ------
    ValueError
        ``s`` is not a positive multiple of a scale.

    Examples
    --------
    >>> pattern_of(scale([1, -1, 1], 3), 3)
    (1, -1, 1)
    """
    lam_x, eps_f = resolve_lam(eps, lam)
    if lam_x is not None:
        v = [to_exact(x, "s") for x in np.asarray(s, dtype=object).ravel()]
        if any(x <= 0 for x in v):
            raise ValueError("s: not a multiple of a scale (an entry is not positive)")
        out = []
        for i in range(len(v) - 1):
            if v[i + 1] == lam_x * v[i]:
                out.append(1)
            elif v[i] == lam_x * v[i + 1]:
                out.append(-1)
            else:
                raise ValueError(f"s: not a multiple of a scale (ratio at {i} is not lam or 1/lam)")
        return tuple(out)
    v = np.asarray(s, dtype=float).ravel()
    if np.any(~(v > 0)):
        raise ValueError("s: not a multiple of a scale (an entry is not positive)")
    steps = np.diff(np.log(v)) / eps_f
    p = np.where(steps > 0, 1, -1)
    if np.any(np.abs(np.abs(steps) - 1) > rtol * max(1.0, 1 / eps_f)):
        bad = int(np.argmax(np.abs(np.abs(steps) - 1)))
        raise ValueError(f"s: not a multiple of a scale (ratio at {bad} is not lam or 1/lam)")
    return tuple(int(x) for x in p)


