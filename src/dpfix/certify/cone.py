"""The cone test of dual feasibility (docs/optimum_of_F.md section 3).

Minimising the count error ``<W, T>`` over ``F`` (rows sum to 1, ``z T = z``,
every column eps-DP) is a linear programme. Its dual has a variable ``u_i`` per
row sum and ``v_j`` per fixed-point equation; eliminating the multipliers of
the ratio constraints column by column, ``(u, v)`` is dual feasible iff for
every column ``j`` the vector ``g_j = W[:, j] - u - v_j z`` is non-negative on
the cone ``C = {t >= 0 : t_(i+1) / t_i in [1/lam, lam]}``. The extreme rays of
``C`` are the eps-scales (the paper's Lemma 1), so the test is
``min_h sum_i g_j(i) lam^(h_i) >= 0`` over lattice walks ``h`` (``h_0 = 0``,
steps of +-1). That minimum is a backward recursion, ``O(n)`` arithmetic
operations per column:
``Q_(n-1) = g(n-1)``, ``Q_i = g(i) + min(lam Q_(i+1), Q_(i+1) / lam)``
(:func:`cone_minimum`). Weak duality: a feasible ``(u, v)`` proves
``sum_i u_i + sum_j z_j v_j <= <W, T'>`` for every ``T'`` in F; equality with
``<W, T>`` proves ``T`` optimal. Over U drop ``v`` (Theorem 8's setting).

Arithmetic is exact throughout: python-flint's ``fmpq`` inside, Fractions at
the interface; floats are refused with :class:`dpfix.numbers.exact.ExactnessError`.
Over ``Q(lam)`` (``lam`` algebraic, :func:`dpfix.algebraic`) the recursion runs on
elements of the field, which mix exactly with ``fmpq``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from flint import fmpq

from dpfix.numbers.algebraic import is_algebraic
from dpfix.numbers.errors import Error
from dpfix.numbers.exact import exact_lam, from_fmpq, to_fmpq, to_fraction

__all__ = ["CertificateError", "cone_minimum"]


class CertificateError(Error, ValueError):
    """A certificate failed its exact re-verification (:meth:`Certificate.check`)."""


# ---------------------------------------------------------------- the cone test
def cone_minimum(g: Any, lam: Any) -> tuple[Fraction, tuple[int, ...]]:
    """``min`` over lattice walks ``h`` (``h_0 = 0``, steps +-1) of ``sum_i g_i lam^(h_i)``.

    ``g . t >= 0`` for every ``t`` in the cone ``C`` of eps-DP columns iff this
    minimum is ``>= 0``: the extreme rays of ``C`` are the eps-scales (Lemma 1,
    docs/optimum_of_F.md). Backward recursion, ``O(n)`` arithmetic operations.
    Returns the minimum
    and the pattern (steps ``+1``/``-1``) of a walk attaining it.

    Parameters
    ----------
    g : a vector of exact numbers (in ``Q``, or in ``Q(lam)``).
    lam : exact ``lam > 1``: rational, or a real algebraic number (the recursion runs in
        ``Q(lam)``, its comparisons exact).

    Returns
    -------
    tuple
        ``(minimum, pattern)``: a Fraction (an element of ``Q(lam)``) and a tuple of
        ``n - 1`` steps.

    Examples
    --------
    >>> cone_minimum([1, -3, 1], 2)  # the walk 0, 1, 0: 1 - 3 * 2 + 1
    (Fraction(-4, 1), (1, -1))
    >>> cone_minimum(["1/2", -1], 2)[0], cone_minimum(["1/2", 1], 2)[0] >= 0
    (Fraction(-3, 2), True)
    """
    lq = to_fmpq(exact_lam(lam, algebraic=True), "lam")
    val, pat = _walk_min([to_fmpq(v, "g") for v in g], lq, 1 / lq)
    return from_fmpq(val), pat


def _walk_min(g: list, lam: fmpq, rho: fmpq) -> tuple[fmpq, tuple[int, ...]]:
    n = len(g)
    Q = g[-1]
    steps = [0] * (n - 1)
    for i in range(n - 2, -1, -1):
        if Q < 0:
            Q = g[i] + lam * Q
            steps[i] = 1
        else:
            Q = g[i] + rho * Q
            steps[i] = -1
    return Q, tuple(steps)


def _walk_weights(pattern: tuple[int, ...], lam: fmpq, rho: fmpq) -> list:
    t = [fmpq(1)]
    for p in pattern:
        t.append(t[-1] * (lam if p == 1 else rho))
    return t


def _infeasible_columns(W: Any, u: Any, v: Any, z: Any, lam: Fraction,
                        first_only: bool = True) -> list[int]:
    """Columns ``j`` whose ``g_j = W[:, j] - u - v_j z`` is negative on some eps-scale.

    The walk recursion of :func:`cone_minimum` in integers: with ``lam = p/q``,
    ``A`` a common denominator of ``u``, ``v``, ``W`` and ``Z`` one of ``z``, the
    integers ``G_i = A Z g_j(i)`` and ``S_i = (pq)^(n-1-i) A Z Q_i`` satisfy
    ``S_(n-1) = G_(n-1)``, ``S_i = (pq)^(n-1-i) G_i + (p^2 if S_(i+1) < 0 else
    q^2) S_(i+1)``, and ``S_0`` has the sign of the minimum. Entries are
    Fractions (or ints); nothing is trusted but their values. Over ``Q(lam)`` (``lam``
    or an entry an algebraic number, of any degree) the same recursion runs in the
    field, exactly: ``Q_i = g(i) + min(lam Q_(i+1), Q_(i+1) / lam)``, the sign of ``Q_0``.
    """
    Wa = np.asarray(W, dtype=object)
    n = len(z)
    if any(is_algebraic(x) for x in [lam, *Wa.ravel(), *u, *v, *z]):
        return _infeasible_columns_field(Wa, u, v, z, lam, first_only)
    fr = [[to_fraction(x, "W") for x in row] for row in Wa]
    uf = [to_fraction(x, "u") for x in u]
    vf = [to_fraction(x, "v") for x in v]
    zf = [to_fraction(x, "z") for x in z]
    p, q = lam.numerator, lam.denominator
    A = math.lcm(*(x.denominator for x in uf), *(x.denominator for x in vf),
                 *{x.denominator for row in fr for x in row})
    Zd = math.lcm(*(x.denominator for x in zf))
    per: dict[int, int] = {}

    def scaled(x: Fraction) -> int:
        d = x.denominator
        if d not in per:
            per[d] = A // d
        return per[d] * x.numerator

    AU = [scaled(x) for x in uf]
    AV = [scaled(x) for x in vf]
    ZZ = [Zd // x.denominator * x.numerator for x in zf]
    pw = [(p * q) ** k for k in range(n)]
    p2, q2 = p * p, q * q
    bad = []
    for j in range(n):
        S = 0
        for i in range(n - 1, -1, -1):
            G = Zd * (scaled(fr[i][j]) - AU[i]) - AV[j] * ZZ[i]
            S = G if i == n - 1 else pw[n - 1 - i] * G + (p2 if S < 0 else q2) * S
        if S < 0:
            bad.append(j)
            if first_only:
                break
    return bad




def _infeasible_columns_field(W: np.ndarray, u: Any, v: Any, z: Any, lam: Any,
                              first_only: bool) -> list[int]:
    """:func:`_infeasible_columns` in exact field arithmetic (the walk recursion of
    :func:`cone_minimum` on ``g_j = W[:, j] - u - v_j z``)."""
    lq = to_fmpq(lam, "lam")
    uq, vq, zq = ([to_fmpq(x, name) for x in xs] for xs, name in ((u, "u"), (v, "v"), (z, "z")))
    bad = []
    for j in range(len(zq)):
        g = [to_fmpq(W[i, j], "W") - uq[i] - vq[j] * zq[i] for i in range(len(zq))]
        if _walk_min(g, lq, 1 / lq)[0] < 0:
            bad.append(j)
            if first_only:
                break
    return bad
