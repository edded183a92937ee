"""(eps, delta)-DP count mechanisms as polytopes: the paper's third open question.

Paper Section 7; docs/open_questions.md section 5 (the findings, proofs and counts).

Under the paper's neighbouring relation (counts ``i`` and ``i + 1``), a
row-stochastic ``T`` is ``(eps, delta)``-DP (``lam = e^eps``, ``0 <= delta < 1``)
when for every ``i``, every set ``S`` of outputs and both orders of the pair,

    T_i(S) <= lam T_(i+1)(S) + delta    and    T_(i+1)(S) <= lam T_i(S) + delta.

The worst ``S`` collects the columns where ``T_ij - lam T_(i+1)j`` is positive, so
the condition is ``sum_j max(0, T_ij - lam T_(i+1)j) <= delta`` (both orders).
This module holds both H-representations as :class:`dpfix.theory.polytopes.Polytope`
objects (so ``.contains``, ``.is_extreme``, ``.vertices``, ``.graph``,
``.dimension`` and ``.maximize`` are the usual exact ones):

- the **subset form** :func:`U_delta`, :func:`F_delta`: ``T >= 0`` and one row per
  pair, order and non-empty proper subset ``S`` (``2 (n-1) (2^n - 2)`` rows), for
  vertex enumeration at small ``n``. ``delta = 0`` gives exactly the rows of
  :func:`dpfix.theory.polytopes.U` and :func:`dpfix.theory.polytopes.F`;
- the **lifted form** :func:`U_lifted`, :func:`F_lifted`: a point is ``[T; S]``
  (shape ``(3n - 2) x n``), slack row ``n + 2i + d`` of ``S`` bounding the positive
  parts of pair ``i`` in order ``d`` (``d = 0``: ``T_i - lam T_(i+1)``; ``d = 1``:
  ``T_(i+1) - lam T_i``) and summing to at most ``delta``. Its projection on ``T``
  is the subset form's polytope (:func:`lift` gives the least slack);

and the analogue of Psi and R_U, R_F: **truncated scales** (an eps-scale on an
interval of counts, zero outside; :func:`truncated_scales`), each with a cost in
every pair and order (its jump at the interval's ends), :func:`RU_delta`,
:func:`RF_delta`, :func:`psi_delta_map`. The delta-northwest corner
:func:`delta_northwest` is an optimum over ``F_delta`` for every convex loss
(Theorem A_delta of docs/open_questions.md section 5), and :func:`lp_optimum_delta`
computes the LP optimum exactly (cdd, small ``n``) or with HiGHS (lifted form).
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
from dpfix.theory.delta import (
    DeltaPolytope,
    F_delta,
    U_delta,
    _is_truncated_scale,
    lift,
    project,
    psi_delta_map,
)
from dpfix.theory.polytopes import check_delta

__all__ = ["DeltaExamples", "find_delta_examples"]


# -- counterexamples found by search (dpfix explore delta) -----------------------------------
@dataclass
class DeltaExamples:
    """Exact instances of what changes with ``delta > 0`` (:func:`find_delta_examples`).

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
    """

    lam: Fraction
    delta: Fraction
    z: np.ndarray
    positive_vertex: np.ndarray
    lost_vertex: np.ndarray
    lifted_vertex: np.ndarray
    rf_vertex: np.ndarray
    rf_image: np.ndarray


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

    def first(predicate: Any, over: str, what: str) -> Any:
        ce = smallest_counterexample(partial(predicate, delta), over=over, n=n, lam=lam,
                                     z=[tuple(z)], delta=None if over == "U" else delta)
        if ce is None:
            raise LookupError(f"find_delta_examples: no {what} at n = {n}, lam = {lam}, "
                              f"delta = {delta}")
        return ce.witness

    positive = first(_not_positive_off_scales, "U_delta",
                     "positive vertex with a column that is not a scale")
    lost = first(_extreme_with_delta, "U", "vertex of U that is lost")
    lifted = first(_not_lifted_off_extreme, "U_lifted",
                   "lifted vertex with a non-extreme projection")
    B = first(_image_extreme_with_delta, "RF_delta",
              "vertex of R_F^delta with a non-extreme image")
    return DeltaExamples(lam, delta, z, positive, lost, lifted, B, psi_delta_map(B, lam))


@lru_cache(maxsize=8)
def _u_delta(n: int, lam: Fraction, delta: Fraction) -> DeltaPolytope:
    return U_delta(n, lam, delta)


@lru_cache(maxsize=8)
def _f_delta(n: int, lam: Fraction, z: tuple, delta: Fraction) -> DeltaPolytope:
    return F_delta(n, lam, list(z), delta)


def _not_positive_off_scales(delta: Fraction, V: np.ndarray, inst: Any) -> bool:
    """Fails at a vertex with every entry positive and a column that is not a scale."""
    positive = all(v > 0 for v in V.flat)
    return not (positive and any(not _is_truncated_scale(V[:, j], inst.lam)
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
