"""The remaps ``R`` of the structured constructors, in ``O(n)``: their ``G R`` samplers.

The northwest corner (docs/optimum_of_F.md, Theorem A), Algorithm 2
(Theorems 7-8) and the truncated geometric mechanism are ``T = G R``; this
module computes ``R`` from the public target without building ``T`` (the
northwest-corner plan from the supplies ``z . G[:, m]``, Algorithm 2's
placement by its forward sweep, the identity) and hands it to
:class:`dpfix.sampling.structured.StructuredSampler`, which draws rows with
exact geometric noise (docs/sampling.md section 2).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.constructors.northwest import northwest_plan
from dpfix.constructors.unfixed import named_diff, placement, sigma_amounts, unfixed_optimum
from dpfix.numbers.exact import probability_vector
from dpfix.numbers.numeric import geometric_amounts
from dpfix.sampling.structured import (
    STRUCTURED,
    Remap,
    StructuredSampler,
    side_sums,
)
from dpfix.theory.scales import sigma

__all__ = ["structured_sampler", "northwest_remap", "unfixed_remap", "quantile_plan"]


def _northwest_pieces(zv: np.ndarray, lam: Fraction, exact: bool) -> list:
    """The northwest-corner plan ``(m, j, share)`` from the supplies ``z . G[:, m]``, ``O(n)``."""
    n = zv.shape[0]
    if exact:
        supply = list(zv.dot(sigma(n, lam)) * sigma_amounts(n, lam))
        return northwest_plan(supply, list(zv))
    rho = float(1 / lam)
    A, B = side_sums(zv, rho)
    supply = geometric_amounts(n, rho) * (A + B)  # z . G[:, m]
    return northwest_plan(supply.tolist(), zv.tolist())


def northwest_remap(z: Any, lam: Any) -> Remap:
    """The remap ``R`` of the northwest corner ``T = G R`` for ``z`` and a rational ``lam``.

    Exact (Fraction shares) for an exact ``z``; floats otherwise, ``O(n)``.

    Examples
    --------
    >>> northwest_remap(["1/2", "1/2"], 2).matrix().tolist()
    [[Fraction(1, 1), Fraction(0, 1)], [Fraction(0, 1), Fraction(1, 1)]]
    """
    exact = _is_exact(z)
    zv = probability_vector(z, exact=exact)
    return Remap.from_pieces(zv.shape[0], _northwest_pieces(zv, Fraction(lam), exact))


def quantile_plan(h: Any, target: Any) -> np.ndarray:
    """The monotone plan from the histogram ``h`` of ``y`` to ``target`` (integer counts).

    The northwest-corner plan (:func:`dpfix.constructors.northwest.northwest_plan`)
    of the supplies ``h / N`` and demands ``target / N``, in Fractions, scaled back
    to rows: ``P[m, j]`` of the ``h_m`` rows with ``y = m`` go to ``j`` (the
    quantile remap of a histogram input, :func:`dpfix.sampling.quantile.quantile_joint`).

    Examples
    --------
    >>> quantile_plan([1, 3, 0], [2, 0, 2]).tolist()
    [[1, 0, 0], [1, 0, 2], [0, 0, 0]]
    """
    hv = [int(v) for v in np.asarray(h).ravel()]
    t = [int(v) for v in np.asarray(target).ravel()]
    N = sum(hv)
    if N == 0 or sum(t) != N or min(hv + t) < 0:
        raise ValueError("target: non-negative counts summing to the rows of h (> 0)")
    P = np.zeros((len(hv), len(t)), dtype=np.int64)
    for m, j, r in northwest_plan([Fraction(v, N) for v in hv], [Fraction(v, N) for v in t]):
        P[m, j] += int(r * hv[m])  # exact: plan amounts are multiples of 1/N
    return P


def unfixed_remap(z: Any, lam: Any) -> Remap:
    """The placement remap of Algorithm 2 (absolute deviation) for ``z`` and ``lam``.

    Examples
    --------
    >>> unfixed_remap(["1/2", "0", "1/2"], 2).cols.tolist()
    [0, 2, 2]
    """
    exact = _is_exact(z)
    zv = probability_vector(z, exact=exact)
    if exact:
        return Remap.from_placement(unfixed_optimum(zv, lam=Fraction(lam)).params["placement"])
    # Algorithm 2's placement for abs weights, the comparison unfixed_optimum makes
    diff = named_diff(zv, math.log(Fraction(lam)), "abs")
    return Remap.from_placement(placement(diff, zv.shape[0]))


def _is_exact(z: Any) -> bool:
    return all(not isinstance(v, (float, np.floating)) for v in np.asarray(z, dtype=object).flat)


def structured_sampler(constructor: str, z: Any = None, *, lam: Any, n: int | None = None
                       ) -> StructuredSampler:
    """The ``G R`` sampler of a structured constructor, in ``O(n)`` memory.

    Parameters
    ----------
    constructor : str
        ``"northwest"``, ``"unfixed"`` (Algorithm 2, absolute deviation) or
        ``"truncated-geometric"``.
    z : array_like, optional
        The public target (floats, or exact numbers for an exact remap); not
        for ``"truncated-geometric"``.
    lam : int, Fraction or str
        The rational ``lam = p/q > 1`` of the noise (``R`` is computed for it).
    n : int, optional
        The size when ``z`` is None.

    Returns
    -------
    StructuredSampler

    Examples
    --------
    >>> s = structured_sampler("northwest", ["1/4"] * 4, lam=2)
    >>> s.matrix()[0].tolist()
    [Fraction(8, 15), Fraction(3, 10), Fraction(1, 10), Fraction(1, 15)]
    """
    if constructor not in STRUCTURED:
        raise ValueError(f"constructor: {constructor!r} is not sampled as G R; choose from "
                         f"{', '.join(STRUCTURED)}")
    lam = Fraction(lam)
    if not lam > 1:
        raise ValueError(f"lam: must be a rational > 1, got {lam}")
    if constructor == "truncated-geometric":
        if n is None:
            if z is None:
                raise ValueError("n: give n (or z) for the truncated geometric mechanism")
            n = len(z)
        return StructuredSampler(constructor, int(n), lam,
                                 Remap.from_placement(np.arange(int(n))))
    if z is None:
        raise ValueError(f"z: constructor {constructor!r} needs the public target z")
    exact = _is_exact(z)
    zv = probability_vector(z, exact=exact)
    remap = northwest_remap(zv, lam) if constructor == "northwest" else unfixed_remap(zv, lam)
    return StructuredSampler(constructor, zv.shape[0], lam, remap,
                             np.array([float(v) for v in zv]) if exact else zv)
