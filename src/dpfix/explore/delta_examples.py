"""(eps, delta) counterexamples, found exactly on the exploration engine (``dpfix explore delta``).

:func:`find_delta_examples` searches the vertices of the (eps, delta) polytopes of
:mod:`dpfix.theory.delta` for the smallest instances of what changes with
``delta > 0`` (docs/open_questions.md section 5): a positive vertex of ``U_delta``
whose columns are not truncated scales, a vertex of U lost as ``delta`` grows, a
lifted vertex whose projection is not extreme, and a vertex of ``R_F^delta``
whose image is not extreme in ``F_delta``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache, partial
from typing import Any

import numpy as np

from dpfix.numbers.exact import (
    exact_lam,
)
from dpfix.numbers.numeric import check_n
from dpfix.numbers.results import Result
from dpfix.theory.delta import is_truncated_scale, lift, project, psi_delta_map
from dpfix.theory.polytopes import F, Polytope, U, check_delta

__all__ = ["DeltaExamples", "find_delta_examples"]


# -- counterexamples found by search (dpfix explore delta) -----------------------------------
@dataclass
class DeltaExamples(Result):
    """Exact instances of what changes with ``delta > 0`` (:func:`find_delta_examples`):
    every one exists at the default case (docs/open_questions.md section 5), so the search
    that finds none raises.

    Attributes
    ----------
    lam, delta, z : the case (``z`` for the R_F^delta example).
    positive_vertex : a vertex of ``U_delta`` with positive entries whose columns are
        not multiples of eps-scales (Theorem 2 fails).
    lost_vertex : a vertex of ``U`` (eps-DP) that is not a vertex of ``U_delta``.
    lifted_vertex : a vertex of the lifted form, with the least slack, whose
        projection is not a vertex of ``U_delta``.
    rf_vertex, rf_image : a vertex of ``R_F^delta`` whose image under ``Psi_delta`` is
        not a vertex of ``F_delta`` (Example 1's second phenomenon).
    visited : int
        The vertices the four searches visited, in all.
    """

    lam: Fraction
    delta: Fraction
    z: np.ndarray
    positive_vertex: np.ndarray
    lost_vertex: np.ndarray
    lifted_vertex: np.ndarray
    rf_vertex: np.ndarray
    rf_image: np.ndarray
    visited: int = 0


def find_delta_examples(lam: Any = 2, delta: Any = "1/10", n: int = 2) -> DeltaExamples:
    """Search the vertices at ``n`` (2 or 3; uniform ``z``) for the instances of
    :class:`DeltaExamples`, in :meth:`Polytope.vertices` order (the first found): four
    searches of :func:`dpfix.explore.search.smallest_counterexample` (over ``U_delta``, ``U``,
    ``U_lifted`` and ``RF_delta``).

    Parameters
    ----------
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.
    delta : int, Fraction or str
        ``0 < delta < 1``.
    n : int
        2 or 3.

    Returns
    -------
    DeltaExamples

    Raises
    ------
    ValueError
        ``delta = 0`` or ``n > 3``.
    LookupError
        An instance is missing at this ``(n, lam, delta)``.

    Examples
    --------
    >>> ex = find_delta_examples(2, "1/10")
    >>> ex.positive_vertex.tolist()
    [[Fraction(3, 10), Fraction(7, 10)], [Fraction(7, 10), Fraction(3, 10)]]
    """
    lam, delta, n = exact_lam(lam), check_delta(delta), check_n(n, minimum=2)
    if delta == 0 or n > 3:
        raise ValueError("find_delta_examples: needs delta > 0 and n in 2, 3")
    from dpfix.explore.search import smallest_counterexample

    z = np.array([Fraction(1, n)] * n, dtype=object)

    visited = []

    def first(predicate: Any, over: str, what: str) -> Any:
        found = smallest_counterexample(partial(predicate, delta), over=over, n=n, lam=lam,
                                        z=[tuple(z)], delta=None if over == "U" else delta)
        visited.append(found.visited)
        if not found:
            raise LookupError(f"find_delta_examples: no {what} at n = {n}, lam = {lam}, "
                              f"delta = {delta} ({found.visited} vertices visited)")
        return found.counterexample.witness

    positive = first(_not_positive_off_scales, "U_delta",
                     "positive vertex with a column that is not a scale")
    lost = first(_extreme_with_delta, "U", "vertex of U that is lost")
    lifted = first(_not_lifted_off_extreme, "U_lifted",
                   "lifted vertex with a non-extreme projection")
    B = first(_image_extreme_with_delta, "RF_delta",
              "vertex of R_F^delta with a non-extreme image")
    return DeltaExamples(lam, delta, z, positive, lost, lifted, B, psi_delta_map(B, lam),
                         sum(visited))


@lru_cache(maxsize=8)
def _u_delta(n: int, lam: Fraction, delta: Fraction) -> Polytope:
    return U(n, lam, delta)


@lru_cache(maxsize=8)
def _f_delta(n: int, lam: Fraction, z: tuple, delta: Fraction) -> Polytope:
    return F(n, lam, list(z), delta)


def _not_positive_off_scales(delta: Fraction, V: np.ndarray, inst: Any) -> bool:
    """Fails at a vertex with every entry positive and a column that is not a scale."""
    positive = all(v > 0 for v in V.flat)
    return not (positive and any(not is_truncated_scale(V[:, j], inst.lam)
                                 for j in range(inst.n)))


def _extreme_with_delta(delta: Fraction, V: np.ndarray, inst: Any) -> bool:
    """Fails at a vertex of U (delta = 0) that is not extreme in U_delta (it is lost)."""
    return _u_delta(inst.n, inst.lam, delta).is_extreme(V)


def _not_lifted_off_extreme(delta: Fraction, X: np.ndarray, inst: Any) -> bool:
    """Fails at a lifted vertex ``X = lift(project(X))`` whose projection is not extreme."""
    T = project(X)
    return not ((lift(T, inst.lam) == X).all()
                and not _u_delta(inst.n, inst.lam, delta).is_extreme(T))


def _image_extreme_with_delta(delta: Fraction, B: np.ndarray, inst: Any) -> bool:
    """Fails at a vertex of R_F^delta whose image is not extreme in F_delta."""
    F = _f_delta(inst.n, inst.lam, inst.z, delta)
    return F.is_extreme(psi_delta_map(B, inst.lam))
