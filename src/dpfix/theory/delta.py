"""(eps, delta)-DP count mechanisms as polytopes: the paper's third open question.

Paper Section 7; docs/open_questions.md section 5 (the findings, proofs and counts).

Under the paper's neighbouring relation (counts ``i`` and ``i + 1``), a
row-stochastic ``T`` is ``(eps, delta)``-DP (``lam = e^eps``, ``0 <= delta < 1``)
when for every ``i``, every set ``S`` of outputs and both orders of the pair,

    T_i(S) <= lam T_(i+1)(S) + delta    and    T_(i+1)(S) <= lam T_i(S) + delta.

The worst ``S`` collects the columns where ``T_ij - lam T_(i+1)j`` is positive, so
the condition is ``sum_j max(0, T_ij - lam T_(i+1)j) <= delta`` (both orders).
The polytopes are :class:`dpfix.theory.polytopes.Polytope` objects (so ``.contains``,
``.is_extreme``, ``.vertices``, ``.graph``, ``.dimension`` and ``.maximize`` are the
usual exact ones), built by one function, :func:`delta_polytope`, in three forms:

- the **subset form**: :func:`dpfix.theory.polytopes.U` and
  :func:`~dpfix.theory.polytopes.F` with ``delta``, ``T >= 0`` and one row per pair,
  order and non-empty proper subset ``S`` (``2 (n-1) (2^n - 2)`` rows), for vertex
  enumeration at small ``n``; ``delta = 0`` gives exactly the rows of U and F;
- the **lifted form** :func:`U_lifted`, :func:`F_lifted`: a point is ``[T; S]``
  (shape ``(3n - 2) x n``), slack row ``n + 2i + d`` of ``S`` bounding the positive
  parts of pair ``i`` in order ``d`` (``d = 0``: ``T_i - lam T_(i+1)``; ``d = 1``:
  ``T_(i+1) - lam T_i``) and summing to at most ``delta``. Its projection on ``T``
  is the subset form's polytope (:func:`lift` gives the least slack);
- the **representation form**, the analogue of Psi and R_U, R_F: **truncated scales**
  (an eps-scale on an interval of counts, zero outside; :func:`truncated_scales`), each
  with a cost in every pair and order (its jump at the interval's ends),
  :func:`RU_delta`, :func:`RF_delta`, :func:`psi_delta_map`.

Then the extreme points by type (Theorem 2_delta: :func:`column_pieces`,
:func:`is_extreme_by_pieces`, :func:`vertex_type`). One room: every function speaks of
the same pairs, positive parts and truncated scales, and the tests hold the forms
against each other. The constructors over these polytopes (the delta-northwest corner,
the delta LP) are in :mod:`dpfix.constructors.delta`, the searches for counterexamples
in :mod:`dpfix.explore.delta_examples`.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.numbers.deprecation import warn_deprecated
from dpfix.numbers.exact import (
    exact_array,
    exact_lam,
    probability_vector,
    rank,
)
from dpfix.numbers.exact_lp import ExactLPError, exact_lp
from dpfix.numbers.numeric import check_n
from dpfix.theory import polytopes
from dpfix.theory.polytopes import Polytope, check_delta, fixed_point_rows, u_rows
from dpfix.theory.scales import pattern_from_index, psi, scale

__all__ = ["DeltaPolytope", "FORMS", "delta_polytope", "ordered_pairs", "U_lifted", "F_lifted",
           "lift", "project", "positive_parts", "is_approximately_dp", "truncated_scales",
           "psi_delta", "scale_costs", "psi_delta_map", "RU_delta", "RF_delta",
           "representation_of", "face_dimensions", "tight_budgets", "column_pieces",
           "is_extreme_by_pieces", "is_truncated_scale", "vertex_type", "catalogue"]


Row = dict[int, Fraction]
_ZERO, _ONE = Fraction(0), Fraction(1)


class DeltaPolytope(Polytope):
    """A :class:`~dpfix.theory.polytopes.Polytope` of the lifted or the representation form
    (:func:`delta_polytope`), which also records its form.

    ``name`` stays ``"U"``, ``"F"``, ``"R_U"`` or ``"R_F"`` (so the vertex
    enumeration guards of :data:`dpfix.theory.polytopes.VERTEX_LIMITS` apply); ``form`` is
    ``"lifted"`` or ``"representation"`` (the subset form is a plain ``Polytope``, that
    of :func:`dpfix.theory.polytopes.U` and :func:`~dpfix.theory.polytopes.F`).

    Examples
    --------
    >>> U_lifted(2, 2, "1/10")
    U(n=2, lam=2, delta=1/10, lifted form)
    """

    def __init__(self, name: str, n: int, lam: Fraction, z: np.ndarray | None,
                 shape: tuple[int, int], ub: list[tuple[Row, Fraction]],
                 eq: list[tuple[Row, Fraction]], *, delta: Fraction, form: str) -> None:
        super().__init__(name, n, lam, z, shape, ub, eq)
        self.delta, self.form = delta, form

    def __repr__(self) -> str:  # Polytope's repr names delta when it is not 0
        base = super().__repr__()[:-1]
        return f"{base}{'' if self.delta else ', delta=0'}, {self.form} form)"


# -- the pairs and the forms ------------------------------------------------------------------
def ordered_pairs(n: int) -> list[tuple[int, int]]:
    """``(a, b)`` for the bound ``T_a(S) <= lam T_b(S) + delta``, in slack-row order
    ``2i + d``: ``(i, i+1)`` then ``(i+1, i)``.

    Examples
    --------
    >>> ordered_pairs(3)
    [(0, 1), (1, 0), (1, 2), (2, 1)]
    """
    return [p for i in range(n - 1) for p in ((i, i + 1), (i + 1, i))]


#: The forms of :func:`delta_polytope`.
FORMS = ("subset", "lifted", "representation")


def delta_polytope(kind: str, n: int, lam: Any, z: Any = None, delta: Any = 0, *,
                   form: str = "subset") -> Polytope:
    """The (eps, delta)-DP mechanisms ``U_delta`` (``kind="U"``) or those with the fixed
    point, ``F_delta[z]`` (``kind="F"``), as a polytope in one of three forms:

    - ``"subset"``: :func:`dpfix.theory.polytopes.U` (``F``) with ``delta``, points ``T``
      (``n x n``), one row per pair, order and set of outputs;
    - ``"lifted"``: points ``[T; S]`` (``(3n - 2) x n``), the slack row ``n + 2i + d`` of
      ``S`` bounding the positive parts of pair ``i`` in order ``d`` (as
      :func:`ordered_pairs`) and summing to at most ``delta``; ``3n(n-1)`` variables and
      ``O(n^2)`` rows, for LPs at large ``n`` (:func:`lift`, :func:`project`);
    - ``"representation"``: ``R_U^delta`` (``R_F^delta``), amounts ``B >= 0``
      (``(2^(n+1) - n - 2) x n``) of the truncated scales with ``Psi_delta B 1 = 1`` and
      total cost ``sum_j c B_j <= delta`` in every pair and order; ``Psi_delta`` maps it
      onto the subset form (docs/open_questions.md section 5, Theorems 10_delta and
      3_delta).

    Parameters
    ----------
    kind : ``"U"`` or ``"F"``
    n : int
        The number of counts (``>= 2``).
    lam : int, Fraction or str
        ``e^eps``, rational and ``> 1``.
    z : array_like, optional
        The target, an exact probability vector of length ``n`` (``kind="F"`` only).
    delta : int, Fraction or str
        ``0 <= delta < 1``; 0 gives, in the subset form, the rows of ``U`` and ``F``.
    form : one of :data:`FORMS`.

    Returns
    -------
    Polytope
        The subset form is the :class:`~dpfix.theory.polytopes.Polytope` of ``U`` and
        ``F``; the others a :class:`DeltaPolytope`, named ``"U"``, ``"F"``, ``"R_U"`` or
        ``"R_F"``.

    Examples
    --------
    >>> delta_polytope("U", 2, 2, delta="1/10")
    U(n=2, lam=2, delta=1/10)
    >>> delta_polytope("F", 2, 2, ["1/2", "1/2"], "1/10", form="lifted").shape
    (4, 2)
    >>> delta_polytope("U", 2, 2, delta="1/10", form="representation")
    R_U(n=2, lam=2, delta=1/10, representation form)
    """
    if kind not in ("U", "F"):
        raise ValueError(f"kind: 'U' or 'F', got {kind!r}")
    if form not in FORMS:
        raise ValueError(f"form: one of {', '.join(FORMS)}, got {form!r}")
    if (z is None) != (kind == "U"):
        raise ValueError("z: F takes a target z, U none")
    if form == "subset":
        return polytopes.U(n, lam, delta) if kind == "U" else polytopes.F(n, lam, z, delta)
    n, lam, delta = check_n(n, minimum=2), exact_lam(lam), check_delta(delta)
    zv = None if z is None else probability_vector(z, exact=True, n=n)
    if form == "lifted":
        ub, eq = _lifted_rows(n, lam, delta)
        name, shape, weights = kind, (3 * n - 2, n), zv
    else:
        P, ub, eq = _representation_rows(n, lam, delta)
        name, shape = "R_" + kind, (P.shape[1], n)
        weights = None if zv is None else zv.dot(P)
    if zv is not None:
        eq = eq + fixed_point_rows(n, zv, weights)
    return DeltaPolytope(name, n, lam, zv, shape, ub, eq, delta=delta, form=form)


def U_lifted(n: int, lam: Any, delta: Any = 0) -> DeltaPolytope:
    """``U_delta`` lifted with slack variables: :func:`delta_polytope` ``("U", n, lam,
    delta=delta, form="lifted")``, points ``[T; S]`` of shape ``(3n-2) x n``.

    Examples
    --------
    >>> P = U_lifted(2, 2, "1/10")
    >>> P.shape, P.contains(lift([["1/10", "9/10"], [0, 1]], 2))
    ((4, 2), True)
    """
    return delta_polytope("U", n, lam, delta=delta, form="lifted")


def F_lifted(n: int, lam: Any, z: Any, delta: Any = 0) -> DeltaPolytope:
    """``F_delta[z]`` lifted: :func:`delta_polytope` ``("F", n, lam, z, delta,
    form="lifted")`` (:func:`U_lifted` plus ``z T = z`` on the ``T`` rows).

    Examples
    --------
    >>> F_lifted(3, 2, ["1/3", "1/3", "1/3"], "1/10").num_variables
    21
    """
    return delta_polytope("F", n, lam, z, delta, form="lifted")


def RU_delta(n: int, lam: Any, delta: Any = 0) -> DeltaPolytope:
    """``R_U^delta``: :func:`delta_polytope` ``("U", n, lam, delta=delta,
    form="representation")``, amounts ``B`` of the truncated scales that ``Psi_delta``
    maps onto ``U(n, lam, delta)`` (Theorem 10_delta).

    Examples
    --------
    >>> RU_delta(2, 2, "1/10").shape
    (4, 2)
    """
    return delta_polytope("U", n, lam, delta=delta, form="representation")


def RF_delta(n: int, lam: Any, z: Any, delta: Any = 0) -> DeltaPolytope:
    """``R_F^delta``: :func:`delta_polytope` ``("F", n, lam, z, delta,
    form="representation")``, :func:`RU_delta` with ``z Psi_delta B = z``; ``Psi_delta``
    maps it onto ``F(n, lam, z, delta)`` (Theorem 3_delta).

    Examples
    --------
    >>> B = RF_delta(2, 2, ["1/2", "1/2"], "1/10").vertices()[0]
    >>> polytopes.F(2, 2, ["1/2", "1/2"], "1/10").contains(psi_delta_map(B, 2))
    True
    """
    return delta_polytope("F", n, lam, z, delta, form="representation")


#: Former names, kept for one release (each warns with
#: :class:`~dpfix.numbers.deprecation.DpfixDeprecationWarning`): the subset form is the
#: polytope of :func:`dpfix.theory.polytopes.U` and :func:`~dpfix.theory.polytopes.F` with
#: ``delta``, its rows :func:`dpfix.theory.polytopes.u_rows`.
_FORMER = {
    "U_delta": ("dpfix.theory.polytopes.U(n, lam, delta)", lambda: polytopes.U),
    "F_delta": ("dpfix.theory.polytopes.F(n, lam, z, delta)", lambda: polytopes.F),
    "subset_rows": ("dpfix.theory.polytopes.u_rows(n, lam, delta)", lambda: _subset_rows),
}


def _subset_rows(n: int, lam: Any, delta: Any = 0) -> tuple[list, list]:
    """The former ``subset_rows``: :func:`dpfix.theory.polytopes.u_rows` on checked input."""
    return u_rows(check_n(n, minimum=2), exact_lam(lam), check_delta(delta))


def __getattr__(name: str) -> Any:
    if name in _FORMER:
        new, get = _FORMER[name]
        warn_deprecated(f"dpfix.theory.delta.{name} is deprecated; use {new} (the same "
                        "polytope; the old name goes in the next release)")
        return get()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- the lifted form ---------------------------------------------------------------------------
def _lifted_rows(n: int, lam: Fraction, delta: Fraction
                 ) -> tuple[list[tuple[Row, Fraction]], list[tuple[Row, Fraction]]]:
    ub: list[tuple[Row, Fraction]] = [({v: Fraction(-1)}, _ZERO) for v in range(3 * n * n - 2 * n)]
    for k, (a, b) in enumerate(ordered_pairs(n)):
        s = (n + k) * n
        for j in range(n):  # T_aj - lam T_bj - s_kj <= 0
            ub.append(({a * n + j: _ONE, b * n + j: -lam, s + j: Fraction(-1)}, _ZERO))
        ub.append(({s + j: _ONE for j in range(n)}, delta))  # sum_j s_kj <= delta
    eq = [({i * n + j: _ONE for j in range(n)}, _ONE) for i in range(n)]
    return ub, eq


def positive_parts(T: Any, lam: Any) -> np.ndarray:
    """The least slacks: ``[2i + d, j] = max(0, T_aj - lam T_bj)`` (``(a, b)`` as
    :func:`ordered_pairs`); exact, shape ``2(n-1) x n``. A row sum is the largest
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
    for k, (a, b) in enumerate(ordered_pairs(n)):
        for j in range(Tm.shape[1]):
            out[k, j] = max(_ZERO, Tm[a, j] - lam * Tm[b, j])
    return out


def lift(T: Any, lam: Any) -> np.ndarray:
    """``[T; positive_parts(T)]``: the point of the lifted form over ``T`` with the
    least slack (it is in :func:`U_lifted` iff ``T`` is in ``U(n, lam, delta)``).

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
    canonical order of :func:`dpfix.theory.scales.psi`, then by ``(a, b)`` and pattern
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
    are :func:`dpfix.theory.scales.psi`.

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


def _feasible_point(eq: list[tuple[Row, Fraction]], d: int) -> list[Fraction] | None:
    """A point of ``{x >= 0 : a . x = b for every (a, b) of eq}`` in ``d`` variables by
    cdd's exact LP, or None when there is none."""
    ub = [({v: Fraction(-1)}, _ZERO) for v in range(d)]
    try:
        return exact_lp([_ZERO] * d, ub, eq, who="representation_of").primal
    except ExactLPError as exc:
        if exc.status == "INCONSISTENT":
            return None
        raise


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
        eq = [({r: v for r, v in enumerate(P[i]) if v}, Tm[i, j]) for i in range(n)]
        eq += [({r: v for r, v in enumerate(c[q]) if v}, s[q, j]) for q in range(c.shape[0])]
        x = _feasible_point(eq, k)
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


def is_truncated_scale(t: np.ndarray, lam: Fraction) -> bool:
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
        for k, (a, b) in enumerate(ordered_pairs(n)):
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
        "truncated": sum(1 for t in cols if is_truncated_scale(t, lam)),
        "scales": sum(1 for t in cols if all(v > 0 for v in t) and is_truncated_scale(t, lam)),
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
    >>> sorted(catalogue(polytopes.U(2, 2, "1/10").vertices(), 2, "1/10").items())
    [((0, (0, 2)), 2), ((1, (1, 2)), 4), ((2, (2, 2)), 2)]
    """
    out: Counter = Counter()
    for V in vertices:
        t = vertex_type(V, lam, delta)
        out[(t["tight"], t["pieces"])] += 1
    return out


