"""(eps, delta)-DP count mechanisms as polytopes: the paper's third open question.

Paper Section 7; docs/open_questions.md section 5 (the findings, proofs and counts).

Under the paper's neighbouring relation (counts ``i`` and ``i + 1``), a
row-stochastic ``T`` is ``(eps, delta)``-DP (``lam = e^eps``, ``0 <= delta < 1``)
when for every ``i``, every set ``S`` of outputs and both orders of the pair,

    T_i(S) <= lam T_(i+1)(S) + delta    and    T_(i+1)(S) <= lam T_i(S) + delta.

The worst ``S`` collects the columns where ``T_ij - lam T_(i+1)j`` is positive, so
the condition is ``sum_j max(0, T_ij - lam T_(i+1)j) <= delta`` (both orders).
This module holds both H-representations as :class:`dpfix.polytopes.Polytope`
objects (so ``.contains``, ``.is_extreme``, ``.vertices``, ``.graph``,
``.dimension`` and ``.maximize`` are the usual exact ones):

- the **subset form** :func:`U_delta`, :func:`F_delta`: ``T >= 0`` and one row per
  pair, order and non-empty proper subset ``S`` (``2 (n-1) (2^n - 2)`` rows), for
  vertex enumeration at small ``n``. ``delta = 0`` gives exactly the rows of
  :func:`dpfix.polytopes.U` and :func:`dpfix.polytopes.F`;
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

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache, partial
from typing import Any

import cdd
import cdd.gmp
import numpy as np

from dpfix.exact import (
    ExactnessError,
    exact_array,
    exact_lam,
    probability_vector,
    rank,
    to_fraction,
)
from dpfix.numeric import check_n
from dpfix.polytopes import Polytope, check_delta, delta_rows, u_rows
from dpfix.scales import pattern_from_index, psi, scale

__all__ = [
    "DeltaPolytope",
    "check_delta",
    "subset_rows",
    "U_delta",
    "F_delta",
    "U_lifted",
    "F_lifted",
    "lift",
    "project",
    "positive_parts",
    "is_approximately_dp",
    "truncated_scales",
    "psi_delta",
    "scale_costs",
    "psi_delta_map",
    "RU_delta",
    "RF_delta",
    "representation_of",
    "face_dimensions",
    "tight_budgets",
    "column_pieces",
    "is_extreme_by_pieces",
    "vertex_type",
    "catalogue",
    "delta_northwest",
    "cumulative_family",
    "loss_matrix",
    "lp_optimum_delta",
    "DeltaExamples",
    "find_delta_examples",
]

Row = dict[int, Fraction]
_ZERO, _ONE = Fraction(0), Fraction(1)


class DeltaPolytope(Polytope):
    """A :class:`~dpfix.polytopes.Polytope` that also records ``delta`` and its form.

    ``name`` stays ``"U"``, ``"F"``, ``"R_U"`` or ``"R_F"`` (so the vertex
    enumeration guards of :data:`dpfix.polytopes.VERTEX_LIMITS` apply); ``form`` is
    ``"subset"``, ``"lifted"`` or ``"representation"``.

    Examples
    --------
    >>> U_delta(2, 2, "1/10")
    U(n=2, lam=2, delta=1/10, subset form)
    """

    def __init__(self, name: str, n: int, lam: Fraction, z: np.ndarray | None,
                 shape: tuple[int, int], ub: list[tuple[Row, Fraction]],
                 eq: list[tuple[Row, Fraction]], *, delta: Fraction, form: str) -> None:
        super().__init__(name, n, lam, z, shape, ub, eq)
        self.delta, self.form = delta, form

    def __repr__(self) -> str:  # Polytope's repr names delta when it is not 0
        base = super().__repr__()[:-1]
        return f"{base}{'' if self.delta else ', delta=0'}, {self.form} form)"


# -- validation ------------------------------------------------------------------------------
def _pairs(n: int) -> list[tuple[int, int]]:
    """``(a, b)`` for the bound ``T_a(S) <= lam T_b(S) + delta``, in slack-row order
    ``2i + d``: ``(i, i+1)`` then ``(i+1, i)``."""
    return [p for i in range(n - 1) for p in ((i, i + 1), (i + 1, i))]


# -- the subset form ---------------------------------------------------------------------------
def subset_rows(n: int, lam: Any, delta: Any = 0
                ) -> tuple[list[tuple[Row, Fraction]], list[tuple[Row, Fraction]]]:
    """Rows ``(coefficients, bound)`` of ``U_delta`` over ``T`` flattened row-major.

    ``delta = 0``: exactly the rows of :func:`dpfix.polytopes.U` (per column ``j``
    and pair ``i``, ``T_ij - lam T_(i+1)j <= 0`` then the reverse; ``T >= 0``
    follows). ``delta > 0``: ``-T_ij <= 0`` for every entry, then for each pair
    ``i``, order ``(a, b)`` (as :func:`_pairs`) and non-empty proper subset ``S``
    (bit ``j`` of ``mask``, ``mask = 1 .. 2^n - 2``):
    ``sum_(j in S) T_aj - lam T_bj <= delta``. The equalities are the row sums.

    Parameters
    ----------
    n : int
    lam : int, Fraction or str
    delta : int, Fraction or str

    Returns
    -------
    (ub, eq) : lists of ``(dict column -> Fraction, Fraction)``.

    Examples
    --------
    >>> ub, eq = subset_rows(3, 2, "1/10")
    >>> len(ub), len(eq)
    (33, 3)
    """
    n, lam, delta = check_n(n, minimum=2), exact_lam(lam), check_delta(delta)
    return u_rows(n, lam) if delta == 0 else delta_rows(n, lam, delta)


def _fixed_rows(n: int, zv: np.ndarray, weights: Any, width: int) -> list[tuple[Row, Fraction]]:
    """``sum_m weights[m] X[m, j] = z_j`` over the first ``len(weights)`` rows of a point
    whose rows have ``width`` entries."""
    return [({m * width + j: weights[m] for m in range(len(weights)) if weights[m] != 0}, zv[j])
            for j in range(n)]


def U_delta(n: int, lam: Any, delta: Any = 0) -> DeltaPolytope:
    """``U_delta``: the (eps, delta)-DP count mechanisms, subset form.

    Parameters
    ----------
    n : int
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.
    delta : int, Fraction or str
        ``0 <= delta < 1``; 0 gives the rows of :func:`dpfix.polytopes.U`.

    Returns
    -------
    DeltaPolytope

    Examples
    --------
    >>> len(U_delta(2, 2, "1/10").vertices()), len(U_delta(2, 2).vertices())
    (8, 4)
    """
    n, lam, delta = check_n(n, minimum=2), exact_lam(lam), check_delta(delta)
    ub, eq = subset_rows(n, lam, delta)
    return DeltaPolytope("U", n, lam, None, (n, n), ub, eq, delta=delta, form="subset")


def F_delta(n: int, lam: Any, z: Any, delta: Any = 0) -> DeltaPolytope:
    """``F_delta[z]``: the mechanisms of :func:`U_delta` with ``z T = z``, subset form.

    Parameters
    ----------
    n : int
        The number of counts (``>= 2``).
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.
    z : array_like
        The target, an exact probability vector of length ``n``.
    delta : int, Fraction or str
        ``0 <= delta < 1``.

    Returns
    -------
    DeltaPolytope
        Subset form; ``delta = 0`` gives the rows of :func:`dpfix.polytopes.F`.

    Examples
    --------
    >>> F_delta(2, 2, ["1/2", "1/2"], "1/10").dimension()
    1
    """
    n, lam, delta = check_n(n, minimum=2), exact_lam(lam), check_delta(delta)
    zv = probability_vector(z, exact=True, n=n)
    ub, eq = subset_rows(n, lam, delta)
    return DeltaPolytope("F", n, lam, zv, (n, n), ub, eq + _fixed_rows(n, zv, zv, n),
                         delta=delta, form="subset")


# -- the lifted form ---------------------------------------------------------------------------
def _lifted_rows(n: int, lam: Fraction, delta: Fraction
                 ) -> tuple[list[tuple[Row, Fraction]], list[tuple[Row, Fraction]]]:
    ub: list[tuple[Row, Fraction]] = [({v: Fraction(-1)}, _ZERO) for v in range(3 * n * n - 2 * n)]
    for k, (a, b) in enumerate(_pairs(n)):
        s = (n + k) * n
        for j in range(n):  # T_aj - lam T_bj - s_kj <= 0
            ub.append(({a * n + j: _ONE, b * n + j: -lam, s + j: Fraction(-1)}, _ZERO))
        ub.append(({s + j: _ONE for j in range(n)}, delta))  # sum_j s_kj <= delta
    eq = [({i * n + j: _ONE for j in range(n)}, _ONE) for i in range(n)]
    return ub, eq


def U_lifted(n: int, lam: Any, delta: Any = 0) -> DeltaPolytope:
    """``U_delta`` lifted with slack variables: points ``[T; S]`` of shape ``(3n-2) x n``.

    ``S[n + 2i + d, j] >= max(0, T_aj - lam T_bj)`` for the pair ``(a, b)`` of
    :func:`_pairs` and ``sum_j S[n + 2i + d, j] <= delta``; ``T >= 0``, ``T 1 = 1``.
    ``3n(n-1)`` variables and ``O(n^2)`` rows, for LPs at large ``n``.

    Parameters
    ----------
    n : int
        The number of counts (``>= 2``).
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.
    delta : int, Fraction or str
        ``0 <= delta < 1``.

    Returns
    -------
    DeltaPolytope
        Lifted form, points of shape ``(3n - 2) x n``.

    Examples
    --------
    >>> P = U_lifted(2, 2, "1/10")
    >>> P.shape, P.contains(lift([["1/10", "9/10"], [0, 1]], 2))
    ((4, 2), True)
    """
    n, lam, delta = check_n(n, minimum=2), exact_lam(lam), check_delta(delta)
    ub, eq = _lifted_rows(n, lam, delta)
    return DeltaPolytope("U", n, lam, None, (3 * n - 2, n), ub, eq, delta=delta, form="lifted")


def F_lifted(n: int, lam: Any, z: Any, delta: Any = 0) -> DeltaPolytope:
    """``F_delta[z]`` lifted (:func:`U_lifted` plus ``z T = z`` on the ``T`` rows).

    Parameters
    ----------
    n : int
        The number of counts (``>= 2``).
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.
    z : array_like
        The target, an exact probability vector of length ``n``.
    delta : int, Fraction or str
        ``0 <= delta < 1``.

    Returns
    -------
    DeltaPolytope
        Lifted form, points of shape ``(3n - 2) x n``.

    Examples
    --------
    >>> F_lifted(3, 2, ["1/3", "1/3", "1/3"], "1/10").num_variables
    21
    """
    n, lam, delta = check_n(n, minimum=2), exact_lam(lam), check_delta(delta)
    zv = probability_vector(z, exact=True, n=n)
    ub, eq = _lifted_rows(n, lam, delta)
    return DeltaPolytope("F", n, lam, zv, (3 * n - 2, n), ub, eq + _fixed_rows(n, zv, zv, n),
                         delta=delta, form="lifted")


def positive_parts(T: Any, lam: Any) -> np.ndarray:
    """The least slacks: ``[2i + d, j] = max(0, T_aj - lam T_bj)`` (``(a, b)`` as
    :func:`_pairs`); exact, shape ``2(n-1) x n``. A row sum is the largest
    ``T_a(S) - lam T_b(S)`` over the sets ``S``.

    Parameters
    ----------
    T : array_like
        An exact ``n x n`` matrix (Fractions, ints or strings such as ``"1/3"``).
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.

    Returns
    -------
    numpy.ndarray
        Exact, ``2(n-1) x n``.

    Examples
    --------
    >>> positive_parts([["1/10", "9/10"], [0, 1]], 2).tolist()
    [[Fraction(1, 10), Fraction(0, 1)], [Fraction(0, 1), Fraction(0, 1)]]
    """
    Tm = exact_array(T, "T", ndim=2)
    lam = exact_lam(lam)
    n = Tm.shape[0]
    out = np.full((2 * (n - 1), Tm.shape[1]), _ZERO, dtype=object)
    for k, (a, b) in enumerate(_pairs(n)):
        for j in range(Tm.shape[1]):
            out[k, j] = max(_ZERO, Tm[a, j] - lam * Tm[b, j])
    return out


def lift(T: Any, lam: Any) -> np.ndarray:
    """``[T; positive_parts(T)]``: the point of the lifted form over ``T`` with the
    least slack (it is in :func:`U_lifted` iff ``T`` is in :func:`U_delta`).

    Parameters
    ----------
    T : array_like
        An exact ``n x n`` matrix (Fractions, ints or strings such as ``"1/3"``).
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.

    Returns
    -------
    numpy.ndarray
        Exact, ``(3n - 2) x n``.

    Examples
    --------
    >>> lift([[1, 0], [1, 0]], 2).shape
    (4, 2)
    """
    Tm = exact_array(T, "T", ndim=2)
    return np.vstack([Tm, positive_parts(Tm, lam)])


def project(X: Any) -> np.ndarray:
    """The ``T`` rows of a lifted point ``[T; S]`` (shape ``(3n-2) x n``).

    Parameters
    ----------
    X : array_like
        A lifted point, ``(3n - 2) x n``.

    Returns
    -------
    numpy.ndarray
        Its first ``n`` rows.

    Raises
    ------
    ValueError
        ``X`` does not have ``3n - 2`` rows.

    Examples
    --------
    >>> project(lift([[1, 0], [1, 0]], 2)).tolist()
    [[Fraction(1, 1), Fraction(0, 1)], [Fraction(1, 1), Fraction(0, 1)]]
    """
    Xm = exact_array(X, "X", ndim=2)
    n = Xm.shape[1]
    if Xm.shape[0] != 3 * n - 2:
        raise ValueError(f"X: expected {3 * n - 2} rows for n = {n}, got {Xm.shape[0]}")
    return Xm[:n].copy()


def is_approximately_dp(T: Any, lam: Any, delta: Any) -> bool:
    """Whether ``T >= 0`` is (eps, delta)-DP: every row of :func:`positive_parts`
    sums to at most ``delta`` (rows need not sum to 1).

    Parameters
    ----------
    T : array_like
        An exact ``n x n`` matrix (Fractions, ints or strings such as ``"1/3"``).
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.
    delta : int, Fraction or str
        ``0 <= delta < 1``.

    Returns
    -------
    bool

    Examples
    --------
    >>> is_approximately_dp([["1/10", "9/10"], [0, 1]], 2, "1/10")
    True
    """
    Tm = exact_array(T, "T", ndim=2)
    delta = check_delta(delta)
    return (all(v >= 0 for v in Tm.flat)
            and all(sum(row, _ZERO) <= delta for row in positive_parts(Tm, lam)))


# -- the representation: truncated scales ------------------------------------------------------
def truncated_scales(n: int) -> list[tuple[int, int, tuple[int, ...]]]:
    """The truncated scales' labels ``(a, b, pattern)``: an eps-scale on counts
    ``a .. b`` (pattern of length ``b - a``), zero outside.

    Order: first the ``2^(n-1)`` full scales (``a = 0``, ``b = n - 1``) in the
    canonical order of :func:`dpfix.scales.psi`, then by ``(a, b)`` and pattern
    index. There are ``2^(n+1) - n - 2`` of them.

    Parameters
    ----------
    n : int
        The number of counts (``>= 2``).

    Returns
    -------
    list of (int, int, tuple)

    Examples
    --------
    >>> len(truncated_scales(3)), truncated_scales(3)[4:7]
    (11, [(0, 0, ()), (0, 1, (-1,)), (0, 1, (1,))])
    """
    n = check_n(n, minimum=2)
    out = [(0, n - 1, pattern_from_index(m, n)) for m in range(2 ** (n - 1))]
    for a in range(n):
        for b in range(a, n):
            if (a, b) != (0, n - 1):
                L = b - a + 1
                out += [(a, b, pattern_from_index(m, L)) for m in range(2 ** (L - 1))]
    return out


def psi_delta(n: int, lam: Any) -> np.ndarray:
    """``Psi_delta``: ``n x (2^(n+1) - n - 2)``, column ``r`` the truncated scale
    ``truncated_scales(n)[r]`` (a probability vector). Its first ``2^(n-1)`` columns
    are :func:`dpfix.scales.psi`.

    Parameters
    ----------
    n : int
        The number of counts (``>= 2``).
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.

    Returns
    -------
    numpy.ndarray
        Exact, ``n x (2^(n+1) - n - 2)``.

    Examples
    --------
    >>> psi_delta(2, 2).tolist()
    [[Fraction(2, 3), Fraction(1, 3), Fraction(1, 1), Fraction(0, 1)], \
[Fraction(1, 3), Fraction(2, 3), Fraction(0, 1), Fraction(1, 1)]]
    """
    n, lam = check_n(n, minimum=2), exact_lam(lam)
    labels = truncated_scales(n)
    out = np.full((n, len(labels)), _ZERO, dtype=object)
    for r, (a, b, pattern) in enumerate(labels):
        out[a:b + 1, r] = scale(pattern, lam)
    assert (out[:, :2 ** (n - 1)] == psi(n, lam)).all()
    return out


def scale_costs(n: int, lam: Any) -> np.ndarray:
    """``c[2i + d, r]``: the positive part of truncated scale ``r`` in pair ``i``,
    order ``d`` (its height at the interval's end; 0 for full scales).

    Parameters
    ----------
    n : int
        The number of counts (``>= 2``).
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.

    Returns
    -------
    numpy.ndarray
        Exact, ``2(n-1) x (2^(n+1) - n - 2)``.

    Examples
    --------
    >>> scale_costs(2, 2).tolist()
    [[Fraction(0, 1), Fraction(0, 1), Fraction(1, 1), Fraction(0, 1)], \
[Fraction(0, 1), Fraction(0, 1), Fraction(0, 1), Fraction(1, 1)]]
    """
    return positive_parts(psi_delta(n, lam), lam)


def psi_delta_map(B: Any, lam: Any) -> np.ndarray:
    """``T = Psi_delta B`` for a ``k x n`` amount matrix ``B`` (``k = 2^(n+1) - n - 2``).

    Parameters
    ----------
    B : array_like
        Exact amounts, one row per truncated scale, one column per output.
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.

    Returns
    -------
    numpy.ndarray
        Exact ``n x n``.

    Raises
    ------
    ValueError
        ``B`` has the wrong number of rows.

    Examples
    --------
    >>> psi_delta_map([[0, 0], [0, 0], [1, 0], [0, 1]], 2).tolist()
    [[Fraction(1, 1), Fraction(0, 1)], [Fraction(0, 1), Fraction(1, 1)]]
    """
    Bm = exact_array(B, "B", ndim=2)
    n = Bm.shape[1]
    P = psi_delta(n, lam)
    if Bm.shape[0] != P.shape[1]:
        raise ValueError(f"B: expected {P.shape[1]} rows (truncated scales) for n = {n}, "
                         f"got {Bm.shape[0]}")
    return P.dot(Bm)


def _representation_rows(n: int, lam: Fraction, delta: Fraction
                         ) -> tuple[np.ndarray, list[tuple[Row, Fraction]],
                                    list[tuple[Row, Fraction]]]:
    P, c = psi_delta(n, lam), scale_costs(n, lam)
    k = P.shape[1]
    ub: list[tuple[Row, Fraction]] = [({v: Fraction(-1)}, _ZERO) for v in range(k * n)]
    for q in range(c.shape[0]):  # sum_j sum_r c[q, r] B[r, j] <= delta
        ub.append(({r * n + j: c[q, r] for r in range(k) if c[q, r] for j in range(n)}, delta))
    eq = [({m * n + j: P[i, m] for m in range(k) if P[i, m] for j in range(n)}, _ONE)
          for i in range(n)]
    return P, ub, eq


def RU_delta(n: int, lam: Any, delta: Any = 0) -> DeltaPolytope:
    """``R_U^delta``: amounts ``B >= 0`` of the truncated scales with ``Psi_delta B 1 = 1``
    and total cost ``sum_j c B_j <= delta`` in every pair and order. ``Psi_delta`` maps
    it onto :func:`U_delta` (docs/open_questions.md section 5, Theorem 10_delta).

    Parameters
    ----------
    n : int
        The number of counts (``>= 2``).
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.
    delta : int, Fraction or str
        ``0 <= delta < 1``.

    Returns
    -------
    DeltaPolytope
        Points ``B`` of shape ``(2^(n+1) - n - 2) x n``.

    Examples
    --------
    >>> RU_delta(2, 2, "1/10").shape
    (4, 2)
    """
    n, lam, delta = check_n(n, minimum=2), exact_lam(lam), check_delta(delta)
    P, ub, eq = _representation_rows(n, lam, delta)
    return DeltaPolytope("R_U", n, lam, None, (P.shape[1], n), ub, eq, delta=delta,
                         form="representation")


def RF_delta(n: int, lam: Any, z: Any, delta: Any = 0) -> DeltaPolytope:
    """``R_F^delta``: :func:`RU_delta` with ``z Psi_delta B = z``; ``Psi_delta`` maps it onto
    :func:`F_delta` (Theorem 3_delta).

    Parameters
    ----------
    n : int
        The number of counts (``>= 2``).
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.
    z : array_like
        The target, an exact probability vector of length ``n``.
    delta : int, Fraction or str
        ``0 <= delta < 1``.

    Returns
    -------
    DeltaPolytope
        Points ``B`` of shape ``(2^(n+1) - n - 2) x n``.

    Examples
    --------
    >>> B = RF_delta(2, 2, ["1/2", "1/2"], "1/10").vertices()[0]
    >>> F_delta(2, 2, ["1/2", "1/2"], "1/10").contains(psi_delta_map(B, 2))
    True
    """
    n, lam, delta = check_n(n, minimum=2), exact_lam(lam), check_delta(delta)
    zv = probability_vector(z, exact=True, n=n)
    P, ub, eq = _representation_rows(n, lam, delta)
    return DeltaPolytope("R_F", n, lam, zv, (P.shape[1], n), ub,
                         eq + _fixed_rows(n, zv, zv.dot(P), n), delta=delta,
                         form="representation")


def _cdd_feasible_point(eq: list[list[Fraction]], nonneg: int) -> list[Fraction] | None:
    """A point of ``{x >= 0 : A x = b}`` (rows ``[b, -a]``) by cdd's exact LP, or None."""
    d = nonneg
    rows = [list(r) for r in eq]
    rows += [[_ZERO] + [_ONE if c == v else _ZERO for c in range(d)] for v in range(d)]
    mat = cdd.gmp.matrix_from_array(rows, lin_set=range(len(eq)),
                                    rep_type=cdd.RepType.INEQUALITY,
                                    obj_type=cdd.LPObjType.MIN, obj_func=[_ZERO] * (d + 1))
    lp = cdd.gmp.linprog_from_matrix(mat)
    cdd.gmp.linprog_solve(lp)
    if lp.status != cdd.LPStatusType.OPTIMAL:
        return None
    return [Fraction(v) for v in lp.primal_solution]


def representation_of(T: Any, lam: Any) -> np.ndarray:
    """Amounts ``B >= 0`` with ``Psi_delta B = T`` and cost exactly the positive parts:
    ``c B_j = positive_parts(T)[:, j]`` for every column ``j`` (no cancellation).

    Such a ``B`` exists for every ``T >= 0`` (the truncated scales and the unit
    slacks are the extreme rays of the lifted column cone, docs/open_questions.md
    section 5); it is found column by column with cdd's exact LP. If ``T`` is in
    ``U_delta`` (``F_delta``) then ``B`` is in ``R_U^delta`` (``R_F^delta``).

    Parameters
    ----------
    T : array_like
        An exact ``n x n`` matrix (Fractions, ints or strings such as ``"1/3"``).
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.

    Returns
    -------
    numpy.ndarray
        Exact ``B``, ``(2^(n+1) - n - 2) x n``.

    Raises
    ------
    ValueError
        ``T`` has a negative entry.
    RuntimeError
        No representation was found (would contradict the theorem).

    Examples
    --------
    >>> B = representation_of([["1/10", "9/10"], [0, 1]], 2)
    >>> psi_delta_map(B, 2).tolist()
    [[Fraction(1, 10), Fraction(9, 10)], [Fraction(0, 1), Fraction(1, 1)]]
    """
    Tm = exact_array(T, "T", ndim=2)
    if any(v < 0 for v in Tm.flat):
        raise ValueError("T: has a negative entry; only T >= 0 has a representation")
    n, lam = Tm.shape[0], exact_lam(lam)
    P, c = psi_delta(n, lam), scale_costs(n, lam)
    s = positive_parts(Tm, lam)
    k = P.shape[1]
    B = np.full((k, Tm.shape[1]), _ZERO, dtype=object)
    for j in range(Tm.shape[1]):
        eq = [[Tm[i, j]] + [-v for v in P[i]] for i in range(n)]
        eq += [[s[q, j]] + [-v for v in c[q]] for q in range(c.shape[0])]
        x = _cdd_feasible_point(eq, k)
        if x is None:
            raise RuntimeError(f"representation_of: column {j} has no representation")
        B[:, j] = x
    return B


# -- extreme points by type --------------------------------------------------------------------
def face_dimensions(T: Any, lam: Any) -> list[int]:
    """Per column ``j``: the dimension of the least face of the lifted column cone
    ``K`` containing ``(T_j, positive_parts(T)_j)``. It is the number of blocks of
    ``T_j``: maximal runs of positive entries whose neighbour ratios are exactly
    ``lam`` or ``1/lam`` (docs/open_questions.md section 5, Lemma K).

    Parameters
    ----------
    T : array_like
        An exact ``n x n`` matrix (Fractions, ints or strings such as ``"1/3"``).
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.

    Returns
    -------
    list of int

    Examples
    --------
    >>> face_dimensions([["1/10", "9/10"], [0, 1]], 2)
    [1, 2]
    """
    Tm = exact_array(T, "T", ndim=2)
    lam = exact_lam(lam)
    out = []
    for t in Tm.T:
        blocks = 0
        for i, v in enumerate(t):
            linked = i > 0 and t[i - 1] > 0 and (t[i - 1] == lam * v or v == lam * t[i - 1])
            if v > 0 and not linked:
                blocks += 1
        out.append(blocks)
    return out


def _is_truncated_scale(t: np.ndarray, lam: Fraction) -> bool:
    """A positive multiple of a truncated scale: support an interval, ratios ``lam^(+-1)``."""
    support = [i for i, v in enumerate(t) if v > 0]
    if not support or support != list(range(support[0], support[-1] + 1)):
        return False
    return all(t[i] == lam * t[i + 1] or t[i + 1] == lam * t[i]
               for i in range(support[0], support[-1]))


def tight_budgets(T: Any, lam: Any, delta: Any) -> list[bool]:
    """Per pair and order ``2i + d`` (as :func:`positive_parts`): is the budget tight,
    ``sum_j max(0, T_aj - lam T_bj) = delta``? At ``delta = 0`` every one is (the
    ratio constraints are the eps-DP ones, all present).

    Parameters
    ----------
    T : array_like
        An exact ``n x n`` matrix (Fractions, ints or strings such as ``"1/3"``).
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.
    delta : int, Fraction or str
        ``0 <= delta < 1``.

    Returns
    -------
    list of bool
        ``2(n-1)`` entries.

    Examples
    --------
    >>> tight_budgets([["1/10", "9/10"], [0, 1]], 2, "1/10")
    [True, False]
    """
    delta = check_delta(delta)
    return [sum(row, _ZERO) == delta for row in positive_parts(T, lam)]


def column_pieces(T: Any, lam: Any, delta: Any) -> list[list[tuple[int, int]]]:
    """Per column, its pieces: the intervals ``[p, q]`` of the components of the graph
    on its positive entries with an edge ``i - 1 -- i`` when the ratio is exactly
    ``lam`` or ``1/lam``: ``T[i-1, j] = lam T[i, j]`` with the budget of ``(i-1, i)``
    tight, or ``T[i, j] = lam T[i-1, j]`` with that of ``(i, i-1)`` tight
    (:func:`tight_budgets`; at ``delta = 0`` every budget is ``0 = delta``, tight).

    On a piece the column is a multiple of a truncated scale. Theorem 2_delta
    (docs/open_questions.md section 5): ``T`` is extreme iff the pieces' amounts are
    fixed by the row sums and the tight budgets (:func:`is_extreme_by_pieces`). At
    ``delta = 0`` a positive extreme column is one piece, a scale (Theorem 2).

    Parameters
    ----------
    T : array_like
        An exact ``n x n`` matrix (Fractions, ints or strings such as ``"1/3"``).
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.
    delta : int, Fraction or str
        ``0 <= delta < 1``.

    Returns
    -------
    list of list of (int, int)

    Examples
    --------
    >>> column_pieces([["1/10", "9/10"], [0, 1]], 2, "1/10")
    [[(0, 0)], [(0, 0), (1, 1)]]
    """
    Tm = exact_array(T, "T", ndim=2)
    lam = exact_lam(lam)
    tight = tight_budgets(Tm, lam, delta)
    out = []
    for j in range(Tm.shape[1]):
        t, pieces = Tm[:, j], []
        for i, v in enumerate(t):
            if v <= 0:
                continue
            linked = i > 0 and t[i - 1] > 0 and (
                (t[i - 1] == lam * v and tight[2 * (i - 1)])
                or (v == lam * t[i - 1] and tight[2 * (i - 1) + 1]))
            if linked:
                pieces[-1] = (pieces[-1][0], i)
            else:
                pieces.append((i, i))
        out.append(pieces)
    return out


def is_extreme_by_pieces(T: Any, lam: Any, delta: Any, z: Any = None) -> bool:
    """Theorem 2_delta: ``T`` in ``U_delta`` (``F_delta[z]`` when ``z`` is given) is
    extreme iff the only way to move the amounts of its :func:`column_pieces` keeping
    every row sum, every tight budget (the sum over its positive columns) and
    ``z T`` is not to move them: the pieces-by-constraints matrix has full column rank.

    Independent of the polytope's rank test (:meth:`Polytope.is_extreme`); the tests
    compare the two. Points outside the polytope give False.

    Parameters
    ----------
    T : array_like
        An exact ``n x n`` matrix (Fractions, ints or strings such as ``"1/3"``).
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.
    delta : int, Fraction or str
        ``0 <= delta < 1``.
    z : array_like, optional
        The target: decide extremality in ``F_delta[z]`` (default: in ``U_delta``).

    Returns
    -------
    bool

    Examples
    --------
    >>> is_extreme_by_pieces([["1/10", "9/10"], [0, 1]], 2, "1/10")
    True
    >>> is_extreme_by_pieces([["1/2", "1/2"], ["1/2", "1/2"]], 2, "1/10")
    False
    """
    Tm = exact_array(T, "T", ndim=2)
    lam, delta = exact_lam(lam), check_delta(delta)
    n = Tm.shape[0]
    rowsums_ok = all(sum(row, _ZERO) == 1 for row in Tm)
    if not (rowsums_ok and is_approximately_dp(Tm, lam, delta)):
        return False
    zv = None if z is None else probability_vector(z, exact=True, n=n)
    if zv is not None and any(v != w for v, w in zip(zv.dot(Tm), zv, strict=True)):
        return False
    pieces = [(j, p, q) for j, ps in enumerate(column_pieces(Tm, lam, delta)) for p, q in ps]
    tight = tight_budgets(Tm, lam, delta) if delta > 0 else [False] * (2 * n - 2)
    cols = []
    for j, p, q in pieces:
        u = [Tm[i, j] if p <= i <= q else _ZERO for i in range(n)]
        col = list(u)  # row sums: row i moves by u_i
        for k, (a, b) in enumerate(_pairs(n)):
            if tight[k]:  # the budget's active row: its positive columns
                col.append(u[a] - lam * u[b] if Tm[a, j] - lam * Tm[b, j] > 0 else _ZERO)
        if zv is not None:
            col += [sum((zv[i] * u[i] for i in range(n)), _ZERO) if jj == j else _ZERO
                    for jj in range(n)]
        cols.append(col)
    if not cols:
        return True
    M = np.array(cols, dtype=object).T
    return rank(M) == len(pieces)


def vertex_type(T: Any, lam: Any, delta: Any) -> dict[str, Any]:
    """The type of a mechanism ``T`` in ``U_delta`` (used to catalogue vertices):

    - ``tight``: how many of the ``2(n-1)`` pair budgets are exhausted (all at
      ``delta = 0``);
    - ``pieces``: the sorted numbers of :func:`column_pieces` per column, and
      ``total`` their sum (Theorem 2_delta: at most ``n + tight`` at a vertex);
    - ``faces``: the sorted :func:`face_dimensions` (the lifted cone's faces);
    - ``zeros``: the number of zero entries;
    - ``truncated``: how many columns are a multiple of one truncated scale, and
      ``scales`` how many of one full eps-scale;
    - ``pure``: whether ``T`` is eps-DP (in ``U``).

    Parameters
    ----------
    T : array_like
        An exact ``n x n`` matrix (Fractions, ints or strings such as ``"1/3"``).
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.
    delta : int, Fraction or str
        ``0 <= delta < 1``.

    Returns
    -------
    dict

    Examples
    --------
    >>> t = vertex_type([["1/10", "9/10"], [0, 1]], 2, "1/10")
    >>> t["tight"], t["pieces"], t["truncated"], t["pure"]
    (1, (1, 2), 1, False)
    """
    Tm = exact_array(T, "T", ndim=2)
    lam, delta = exact_lam(lam), check_delta(delta)
    sums = [sum(row, _ZERO) for row in positive_parts(Tm, lam)]
    pieces = [len(ps) for ps in column_pieces(Tm, lam, delta)]
    cols = list(Tm.T)
    return {
        "tight": sum(1 for v in sums if v == delta),
        "pieces": tuple(sorted(pieces)),
        "total": sum(pieces),
        "faces": tuple(sorted(face_dimensions(Tm, lam))),
        "zeros": sum(1 for v in Tm.flat if v == 0),
        "truncated": sum(1 for t in cols if _is_truncated_scale(t, lam)),
        "scales": sum(1 for t in cols if all(v > 0 for v in t) and _is_truncated_scale(t, lam)),
        "pure": all(v == 0 for v in sums),
    }


def catalogue(vertices: list[np.ndarray], lam: Any, delta: Any) -> Counter:
    """Counts of ``(tight, pieces)`` (see :func:`vertex_type`) over the given vertices.

    Parameters
    ----------
    vertices : list of numpy.ndarray
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.
    delta : int, Fraction or str
        ``0 <= delta < 1``.

    Returns
    -------
    collections.Counter

    Examples
    --------
    >>> sorted(catalogue(U_delta(2, 2, "1/10").vertices(), 2, "1/10").items())
    [((0, (0, 2)), 2), ((1, (1, 2)), 4), ((2, (2, 2)), 2)]
    """
    out: Counter = Counter()
    for V in vertices:
        t = vertex_type(V, lam, delta)
        out[(t["tight"], t["pieces"])] += 1
    return out


# -- the optimum over F_delta ------------------------------------------------------------------
def _phi(x: Any, lam: Any, delta: Any) -> Any:
    """``phi_delta(x) = max((x - delta) / lam, 1 - delta - lam (1 - x), 0)``: the least
    next entry of a cumulative column (Lemma B1_delta)."""
    return max((x - delta) / lam, 1 - delta - lam * (1 - x), 0 * x)


def _phi_inverse(v: Any, lam: Any, delta: Any) -> Any:
    """The ``x`` with ``phi_delta(x) = v`` for ``0 < v <= 1 - delta`` (phi increases there)."""
    x_b = (lam + delta) / (lam + 1)  # the two branches of phi meet here
    if v <= (x_b - delta) / lam:
        return lam * v + delta
    return 1 - (1 - delta - v) / lam


def _member(stage: int, p: Any, n: int, lam: Any, delta: Any) -> list:
    """Member ``(stage, p)`` of the cumulative family: stage -1: the phi-orbit from
    ``x_0 = p``; stage ``c >= 0``: ones up to ``c``, ``x_(c+1) = p``, then the orbit."""
    one = 1 + 0 * p
    x = [one] * (stage + 1) + [p]
    while len(x) < n:
        x.append(_phi(x[-1], lam, delta))
    return x


def cumulative_family(n: int, lam: Any, delta: Any, total: Any, z: Any) -> list:
    """The least member ``x`` of the delta-northwest family with ``z . x = total``: a
    non-increasing vector, ``x_(i+1) = phi_delta(x_i)`` after an initial run of ones
    (docs/open_questions.md section 5). "Least": the first on the family's path where
    ``z . x`` is flat (zeros in ``z``), so the members chosen for growing totals are
    nested. Exact for rational input, float otherwise.

    Parameters
    ----------
    n : int
        The number of counts (``>= 2``).
    lam, delta : rational (exact) or float
    total : the wanted ``z . x``, in ``[0, 1]``.
    z : array_like
        The target, an exact probability vector of length ``n``.

    Returns
    -------
    list
        ``x``, length ``n``.

    Raises
    ------
    RuntimeError
        No member found (float rounding).

    Examples
    --------
    >>> [str(v) for v in cumulative_family(3, 2, 0, Fraction(1, 3), ["1/3"] * 3)]
    ['4/7', '2/7', '1/7']
    """
    exact = not isinstance(lam, float)
    if exact:
        lam, delta, total = exact_lam(lam), check_delta(delta), to_fraction(total, "total")
        zv = probability_vector(z, exact=True, n=n)
        zero, one = _ZERO, _ONE
    else:
        zv, zero, one = np.asarray(z, dtype=float), 0.0, 1.0
        delta, total = float(delta), float(total)

    def f(stage: int, p: Any) -> Any:
        return sum((a * b for a, b in zip(zv, _member(stage, p, n, lam, delta), strict=True)),
                   zero)

    stages = [(-1, zero, one)] + ([(c, 1 - delta, one) for c in range(n - 1)] if delta else [])
    for stage, lo, hi in stages:
        if f(stage, hi) < total and stage < n - 2:
            continue
        start = stage + 1  # the coordinate that p sets
        points = {lo, hi}
        x_b = (lam + delta) / (lam + 1)
        for i in range(start, n - 1):  # where x_i crosses delta or x_b: back to coordinate start
            for v in (delta, x_b):
                for _ in range(i - start):
                    if not 0 < v <= 1 - delta:
                        v = None
                        break
                    v = _phi_inverse(v, lam, delta)
                if v is not None and lo < v < hi:
                    points.add(v)
        grid = sorted(points)
        values = [f(stage, p) for p in grid]
        for k in range(len(grid) - 1):
            (p0, v0), (p1, v1) = (grid[k], values[k]), (grid[k + 1], values[k + 1])
            if v0 <= total <= v1:
                p = p0 if v1 == v0 else p0 + (total - v0) * (p1 - p0) / (v1 - v0)
                return _member(stage, p, n, lam, delta)
        break
    raise RuntimeError(f"cumulative_family: no member with z . x = {total}")


def delta_northwest(z: Any, lam: Any, delta: Any = 0) -> np.ndarray:
    """The delta-northwest corner ``T*_delta``: cumulative columns
    ``C_l = cumulative_family(z_0 + ... + z_l)``, ``C_(n-1) = 1``.

    ``C_(n-1) = 1`` is imposed, not chosen from the family (whose least member with
    ``z . x = 1`` need not be all ones when ``z`` ends in zeros). It is in
    ``F_delta[z]`` and is an optimum of every Monge cost (every convex loss
    ``z_i f(i - j)``) over ``F_delta[z]`` (Theorem A_delta, docs/open_questions.md
    section 5); at ``delta = 0`` it is the northwest corner of
    docs/optimum_of_F.md. Exact for rational ``lam``, ``delta`` and ``z``;
    float64 when ``lam`` is a float, which loses precision when cumulative columns
    must be told apart within rounding of 1 (small ``delta``, large ``n eps``):
    then ``RuntimeError`` (checked: ``|z T - z| <= 1e-9``).

    Parameters
    ----------
    z : array_like
        The target, an exact probability vector of length ``n``.
    lam : int, Fraction, str or float
        ``e^eps``; a float gives a float64 matrix.
    delta : int, Fraction or str
        ``0 <= delta < 1``.

    Returns
    -------
    numpy.ndarray
        ``n x n``, exact or float64.

    Raises
    ------
    RuntimeError
        Float precision lost (see above).

    Examples
    --------
    >>> delta_northwest(["1/2", "1/2"], 2, "1/10").tolist()
    [[Fraction(7, 10), Fraction(3, 10)], [Fraction(3, 10), Fraction(7, 10)]]
    """
    exact = not isinstance(lam, float)
    zv = probability_vector(z, exact=exact)
    n = zv.shape[0]
    C = []
    total = _ZERO if exact else 0.0
    for j in range(n - 1):
        total += zv[j]
        C.append(cumulative_family(n, lam, delta, total, zv))
    C.append([_ONE if exact else 1.0] * n)
    Cm = np.array(C, dtype=object if exact else float).T
    T = Cm.copy()
    T[:, 1:] = Cm[:, 1:] - Cm[:, :-1]
    if not exact:
        err = float(np.abs(zv @ T - zv).max())
        if err > 1e-9:  # float orbits near 1 lose the digits that tell them apart
            raise RuntimeError(f"delta_northwest: float precision lost (z T - z up to {err:.1e}"
                               f" at n = {n}); use rational lam, delta and z (exact), or "
                               "dpfix.constructors.northwest_corner for delta = 0")
    return T


def loss_matrix(z: Any, weights: Any = "abs") -> np.ndarray:
    """``W[i, j] = z_i |i - j|`` (``"abs"``), ``z_i (i - j)^2`` (``"squared"``) or a given
    matrix; exact for exact ``z``.

    Parameters
    ----------
    z : array_like
        The target, an exact probability vector of length ``n``.
    weights : ``"abs"``, ``"squared"`` or an ``n x n`` matrix

    Returns
    -------
    numpy.ndarray
        Object array (exact for exact ``z``).

    Raises
    ------
    ValueError
        An unknown weights name.

    Examples
    --------
    >>> loss_matrix(["1/2", "1/2"]).tolist()
    [[Fraction(0, 1), Fraction(1, 2)], [Fraction(1, 2), Fraction(0, 1)]]
    """
    if not isinstance(weights, str):
        return np.array(weights, dtype=object)
    power = {"abs": 1, "squared": 2}.get(weights)
    if power is None:
        raise ValueError(f"weights: use 'abs', 'squared' or a matrix, got {weights!r}")
    try:
        zv = probability_vector(z, exact=True)
    except ExactnessError:
        zv = probability_vector(z, exact=False)
    n = len(zv)
    return np.array([[zv[i] * abs(i - j) ** power for j in range(n)] for i in range(n)],
                    dtype=object)


def lp_optimum_delta(z: Any, lam: Any, delta: Any = 0, *, weights: Any = "abs",
                     fixed: bool = True, method: str = "exact") -> tuple[Any, np.ndarray]:
    """The least count error ``<W, T>`` over ``F_delta[z]`` (or ``U_delta``), by LP on
    the lifted form.

    Parameters
    ----------
    z : the target (also the loss weights).
    lam, delta : rational for ``"exact"``; floats allowed for ``"highs"``.
    weights : ``"abs"``, ``"squared"`` or an ``n x n`` matrix.
    fixed : over ``F_delta[z]`` (True) or ``U_delta`` (False).
    method : ``"exact"`` (cdd.gmp, a vertex of the lifted polytope; ``n`` up to
        about 6) or ``"highs"`` (scipy's HiGHS dual simplex, float, ``n`` up to about
        100; ``"highs-ds"`` and ``"highs-ipm"`` choose the HiGHS method).

    Returns
    -------
    (value, T) : Fraction and exact ``T`` (``"exact"``), or float and float64 ``T``.

    Examples
    --------
    >>> value, T = lp_optimum_delta(["1/2", "1/2"], 2, "1/10")
    >>> value, T.tolist()
    (Fraction(3, 10), [[Fraction(7, 10), Fraction(3, 10)], [Fraction(3, 10), Fraction(7, 10)]])
    """
    if method == "exact":
        lam_x, delta_x = exact_lam(lam), check_delta(delta)
        zv = probability_vector(z, exact=True)
        n = len(zv)
        P = F_lifted(n, lam_x, zv, delta_x) if fixed else U_lifted(n, lam_x, delta_x)
        W = loss_matrix(zv, weights)
        C = np.vstack([-W, np.full((2 * n - 2, n), _ZERO, dtype=object)])
        value, X = P.maximize(C)
        return -value, project(X)
    if method not in ("highs", "highs-ds", "highs-ipm"):
        raise ValueError(f"method: use 'exact', 'highs', 'highs-ds' or 'highs-ipm', got {method!r}")
    return _highs(z, float(lam), float(delta), weights, fixed,
                  "highs-ds" if method == "highs" else method)


def _highs(z: Any, lam: float, delta: float, weights: Any, fixed: bool, method: str
           ) -> tuple[float, np.ndarray]:
    from scipy import sparse
    from scipy.optimize import linprog

    zv = np.asarray(probability_vector(z, exact=False), dtype=float)
    n = len(zv)
    W = np.asarray(loss_matrix(zv, weights), dtype=float)
    nt, m = n * n, 2 * (n - 1)
    rows, cols, vals = [], [], []
    r = 0
    for k, (a, b) in enumerate(_pairs(n)):
        for j in range(n):
            rows += [r, r, r]
            cols += [a * n + j, b * n + j, nt + k * n + j]
            vals += [1.0, -lam, -1.0]
            r += 1
    for k in range(m):
        rows += [r] * n
        cols += [nt + k * n + j for j in range(n)]
        vals += [1.0] * n
        r += 1
    A_ub = sparse.csr_matrix((vals, (rows, cols)), shape=(r, nt + m * n))
    b_ub = np.concatenate([np.zeros(m * n), np.full(m, delta)])
    er, ec, ev = [], [], []
    for i in range(n):
        er += [i] * n
        ec += [i * n + j for j in range(n)]
        ev += [1.0] * n
    b_eq = [1.0] * n
    if fixed:
        for j in range(n - 1):
            er += [n + j] * n
            ec += [i * n + j for i in range(n)]
            ev += list(zv)
            b_eq.append(zv[j])
    A_eq = sparse.csr_matrix((ev, (er, ec)), shape=(len(b_eq), nt + m * n))
    c = np.concatenate([W.ravel(), np.zeros(m * n)])
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=np.array(b_eq), bounds=(0, None),
                  method=method, options={"primal_feasibility_tolerance": 1e-10,
                                              "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:
        raise RuntimeError(f"lp_optimum_delta: HiGHS did not solve the LP (n = {n}): "
                           f"{res.message}")
    return float(res.fun), res.x[:nt].reshape(n, n)



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
    searches of :func:`dpfix.search.smallest_counterexample` (over ``U_delta``, ``U``,
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
    from dpfix.search import smallest_counterexample

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
