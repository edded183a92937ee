"""Standard small cases on which the theory is checked (tests and ``proofs_checks``).

The grid: ``n`` in {2, 3, 4}, ``lam`` in
{3/2, 2, 3}, and for each ``n`` a uniform ``z``, a geometric ``z``, a ``z``
with a zero entry and an asymmetric ``z``; all exact.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from functools import cache
from typing import Any

import numpy as np

from dpfix.numbers.algebraic import to_exact
from dpfix.numbers.deprecation import renamed_keywords
from dpfix.numbers.exact import one_or_many

__all__ = ["LAMS", "NS", "standard_z", "grid", "ns_for", "random_z", "random_lam",
           "random_convex_point", "midpoints", "polytope", "rf_grid", "rf_vertices", "RF_N4_Z"]

LAMS: tuple[Fraction, ...] = (Fraction(3, 2), Fraction(2), Fraction(3))
NS: tuple[int, ...] = (2, 3, 4)


def _normalised(weights: list[int]) -> np.ndarray:
    total = sum(weights)
    return np.array([Fraction(w, total) for w in weights], dtype=object)


def standard_z(n: int) -> dict[str, np.ndarray]:
    """Named exact target distributions of length ``n``.

    Parameters
    ----------
    n : int
        The size.

    Returns
    -------
    dict
        Name -> object array of Fractions summing to 1.

    Examples
    --------
    >>> sorted(standard_z(3))
    ['asymmetric', 'geometric', 'uniform', 'zero']
    >>> standard_z(3)["zero"].tolist()
    [Fraction(2, 3), Fraction(0, 1), Fraction(1, 3)]
    """
    if n < 2:
        raise ValueError(f"n: must be >= 2, got {n}")
    out = {
        "uniform": _normalised([1] * n),
        "geometric": _normalised([2 ** (n - 1 - i) for i in range(n)]),
        # 1, 3, 2, 5, 4, ...: neither monotone nor symmetric
        "asymmetric": _normalised([i + 1 + (2 if i % 2 else 0) for i in range(n)]),
    }
    zero = [2] + [1] * (n - 1)
    zero[1 if n > 2 else n - 1] = 0
    if n == 2:
        zero = [1, 0]
    out["zero"] = _normalised(zero)
    return out


@renamed_keywords(ns="n", lams="lam")
def grid(n: Any = NS, lam: Any = LAMS) -> Iterator[tuple[int, Fraction, str, np.ndarray]]:
    """Every ``(n, lam, z_name, z)`` of the standard grid.

    Parameters
    ----------
    n : int or iterable of int
        The sizes (one or many).
    lam : Fraction or iterable of Fraction
        The values of ``lam`` (one or many).

    Yields
    ------
    (int, Fraction, str, numpy.ndarray)
    """
    for size in one_or_many(n):
        for x in one_or_many(lam):
            for name, z in standard_z(size).items():
                yield size, x, name, z


def ns_for(mode: str) -> tuple[int, ...]:
    """The ``n`` of the grid in a verify mode: (2, 3) quick, (2, 3, 4) full.

    Parameters
    ----------
    mode : str
        ``"quick"`` or ``"full"``.

    Returns
    -------
    tuple of int
        The sizes of that mode.

    Raises
    ------
    ValueError
        Another mode.
    """
    if mode not in ("quick", "full"):
        raise ValueError(f"mode: 'quick' or 'full', got {mode!r}")
    return NS if mode == "full" else NS[:2]


def random_z(rng: np.random.Generator, n: int, zeros: int = 0, denominator: int = 12
             ) -> np.ndarray:
    """A random exact probability vector with ``zeros`` zero entries (at least one
    entry stays positive).

    Parameters
    ----------
    rng : numpy.random.Generator
    n : int
        The size.
    zeros : int
        How many entries are 0.
    denominator : int
        The largest denominator of the random weights.

    Returns
    -------
    numpy.ndarray
        Object array of Fractions summing to 1.

    Examples
    --------
    >>> z = random_z(np.random.default_rng(0), 4, zeros=1)
    >>> sum(z) == 1 and sum(v == 0 for v in z) == 1
    True
    """
    zeros = min(zeros, n - 1)
    w = [int(x) for x in rng.integers(1, denominator + 1, size=n)]
    for i in rng.choice(n, size=zeros, replace=False):
        w[int(i)] = 0
    return _normalised(w)


def random_lam(rng: np.random.Generator) -> Fraction:
    """A random rational ``lam`` in ``(1, 4]`` with a small denominator.

    Parameters
    ----------
    rng : numpy.random.Generator

    Returns
    -------
    Fraction
        A rational in ``(1, 4]``.
    """
    q = int(rng.integers(1, 5))
    p = int(rng.integers(q + 1, 4 * q + 1))
    return Fraction(p, q)


def random_convex_point(rng: np.random.Generator, vertices: list[np.ndarray], k: int = 3
                        ) -> np.ndarray:
    """An exact random convex combination of ``k`` distinct vertices (all
    weights positive), a point that is not extreme when ``k >= 2`` and the
    vertices are distinct.

    Parameters
    ----------
    rng : numpy.random.Generator
    vertices : list of numpy.ndarray
        Exact vertices.
    k : int
        How many to combine.

    Returns
    -------
    numpy.ndarray
        The exact convex combination.
    """
    idx = rng.choice(len(vertices), size=min(k, len(vertices)), replace=False)
    w = [Fraction(int(rng.integers(1, 6))) for _ in idx]
    total = sum(w)
    return sum((wi / total) * vertices[int(i)] for wi, i in zip(w, idx, strict=True))


def midpoints(vertices: list[np.ndarray], limit: int) -> list[np.ndarray]:
    """Midpoints of the first ``limit`` pairs of vertices (exact).

    Parameters
    ----------
    vertices : list of numpy.ndarray
        Exact vertices.
    limit : int
        How many pairs.

    Returns
    -------
    list of numpy.ndarray
        Exact midpoints.
    """
    pairs = ((a, b) for i, a in enumerate(vertices) for b in vertices[i + 1:])
    return [(a + b) / 2 for _, (a, b) in zip(range(limit), pairs, strict=False)]


#: R_F at n = 4 is enumerated (full mode only) just for the z with a zero entry:
#: 4421 vertices in about a minute, where the uniform z runs past 14 minutes.
RF_N4_Z = ("zero",)


@cache
def _polytope(kind: str, n: int, lam: Any, z: tuple | None) -> Any:
    from dpfix.theory import polytopes

    make = {"U": polytopes.U, "RU": polytopes.RU, "F": polytopes.F, "RF": polytopes.RF}[kind]
    return make(n, lam) if z is None else make(n, lam, list(z))


def polytope(kind: str, n: int, lam: Fraction, z: Any = None) -> Any:
    """A cached polytope (``"U"``, ``"F"``, ``"RF"``, ``"RU"``), so that the checks
    of one ``dpfix verify`` run enumerate each vertex set once.

    Parameters
    ----------
    kind : str
        ``"U"``, ``"F"``, ``"RF"`` or ``"RU"``.
    n : int
        The size.
    lam : Fraction or Algebraic
        ``e^eps``: rational, or a real algebraic number (the polytope over ``Q(lam)``).
    z : array_like, optional
        The target (``F`` and ``RF``).

    Returns
    -------
    a polytope of :mod:`dpfix.theory.polytopes`
        Built once per argument tuple.
    """
    from dpfix.theory.polytopes import check_kind

    kind = check_kind(kind, ("U", "F", "RF", "RU"))
    return _polytope(kind, n, to_exact(lam, "lam"), None if z is None else tuple(z))


def rf_grid(mode: str) -> Iterator[tuple[int, Fraction, str, np.ndarray]]:
    """The grid cases whose R_F vertex enumeration fits: every case with
    ``n <= 3``, and at ``n = 4`` (full mode) the z named in :data:`RF_N4_Z`.

    Parameters
    ----------
    mode : str
        ``"quick"`` or ``"full"``.

    Yields
    ------
    (int, Fraction, str, numpy.ndarray)
    """
    for n, lam, name, z in grid(ns_for(mode)):
        if n <= 3 or name in RF_N4_Z:
            yield n, lam, name, z


def rf_vertices(n: int, lam: Fraction, z: Any) -> list[np.ndarray]:
    """Vertices of R_F for a case of :func:`rf_grid` (the guard is lifted at n = 4,
    which :func:`rf_grid` admits only where enumeration is known to finish).

    Parameters
    ----------
    n : int
        The size.
    lam : Fraction
        ``e^eps``.
    z : array_like
        The target.

    Returns
    -------
    list of numpy.ndarray
        The exact vertices (cdd.gmp).
    """
    return polytope("RF", n, lam, z).vertices(limit=None)
