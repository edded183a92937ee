"""Dual points of the count-error LP over F and U (docs/optimum_of_F.md).

A dual point ``(u, v)`` is feasible when every column passes the cone test of
:mod:`dpfix.certify.cone`. The dual points:

- over F, :func:`northwest_dual`: the explicit dual of the northwest corner
  (docs/optimum_of_F.md, Theorem A), feasible for every Monge cost (every
  ``W[i, j] = z_i f(i - j)`` with ``f`` convex) and then tight;
- over U, the complementary-slackness dual of Algorithm 2 (Theorem 8):
  ``s_m . u = min_j W[:, j] . s_m`` for every single-peaked scale ``s_m``;
- for any other loss, the same points repaired to feasibility (each ``v_j``
  lowered to the least ratio ``(W_j - u) . s / (z . s)`` over all scales, by
  Dinkelbach's iteration on the recursion), and for small ``n`` the exact
  optimum of the dual LP restricted to a growing set of scales (column
  generation with the recursion as separation oracle, solved by cdd.gmp):
  :func:`exact_optimum`.

Arithmetic is exact throughout: python-flint's ``fmpq`` inside, Fractions at
the interface; floats are refused with :class:`dpfix.numbers.exact.ExactnessError`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from flint import fmpq

from dpfix.certify.cone import _walk_min, _walk_weights
from dpfix.numbers.deprecation import no_other, renamed
from dpfix.numbers.exact import (
    exact_dot,
    exact_lam,
    from_fmpq,
    from_fmpq_array,
    probability_vector,
    to_fmpq,
)
from dpfix.numbers.exact_lp import exact_lp
from dpfix.theory.mechanism import exact_weights

__all__ = ["northwest_dual", "single_peaked_optimum"]


def _least_ratio(a: list, d: list, start: fmpq, lam: fmpq, rho: fmpq) -> fmpq:
    """The largest ``r <= start`` with ``a - r d`` non-negative on C (``d . s > 0`` on
    every scale): ``start`` when feasible, else ``min_s (a . s) / (d . s)`` by
    Dinkelbach's iteration (each step moves to a strictly smaller ratio of a scale)."""
    r = start
    while True:
        val, pat = _walk_min([x - r * y for x, y in zip(a, d, strict=True)], lam, rho)
        if val >= 0:
            return r
        t = _walk_weights(pat, lam, rho)
        r = exact_dot(a, t) / exact_dot(d, t)


# ---------------------------------------------------------------- dual points
def _rho_sums(x: list, rho: fmpq) -> list:
    """``sum_i rho^|i - m| x_i`` for every ``m``, by two geometric recursions."""
    n = len(x)
    out = [fmpq(0)] * n
    acc = fmpq(0)
    for m in range(n):
        acc = acc * rho + x[m]
        out[m] = acc
    acc = fmpq(0)
    for m in range(n - 2, -1, -1):
        acc = (acc + x[m + 1]) * rho
        out[m] += acc
    return out


def _crossings(zq: list, rho: fmpq) -> list[int]:
    """``m*_l`` for ``l = 0 .. n-2`` (docs/optimum_of_F.md section 1): the least ``m``
    whose cumulative supply ``S_m = sum_(k<=m) w_k alpha_k`` reaches ``Z_l = z_0 + ..
    + z_l``, the single-peaked scale at which the northwest plan crosses from column
    ``l`` to the next column with ``z_j > 0`` (``m*_l = m*_(l-1)`` when ``z_l = 0``)."""
    n = len(zq)
    if n == 1:
        return []
    Kz = _rho_sums(zq, rho)
    ends, inner = 1 / (1 + rho), (1 - rho) / (1 + rho)
    supply = [Kz[m] * (ends if m in (0, n - 1) else inner) for m in range(n)]
    out, m, S, cz = [], 0, supply[0], fmpq(0)
    for j in range(n - 1):
        cz += zq[j]
        while S < cz and m < n - 1:
            m += 1
            S += supply[m]
        out.append(m)
    return out


def _northwest_dual_q(zq: list, lam: fmpq, Wc: list[list]) -> tuple[list, list]:
    """The explicit dual of the northwest corner (docs/optimum_of_F.md, Theorem A)."""
    n = len(zq)
    rho = 1 / lam
    pw = [fmpq(1)]
    for _ in range(n):
        pw.append(pw[-1] * rho)
    mstar = _crossings(zq, rho)
    B = [fmpq(0)] * n
    mu = []
    for l, m in enumerate(mstar):
        D = [a - b for a, b in zip(Wc[l], Wc[l + 1], strict=True)]
        num = den = fmpq(0)
        for i in range(n):
            num += pw[abs(i - m)] * D[i]
            den += pw[abs(i - m)] * zq[i]
        mu_l = num / den
        mu.append(mu_l)
        acc = fmpq(0)
        for i in range(m):
            y = D[i] - mu_l * zq[i]
            B[i] -= y
            acc = (acc + y) * rho
        B[m] += acc
    u = [a - b for a, b in zip(Wc[n - 1], B, strict=True)]
    v = [fmpq(0)] * n
    for j in range(n - 2, -1, -1):
        v[j] = v[j + 1] + mu[j]
    return u, v


def _unfixed_dual_q(lam: fmpq, Wc: list[list]) -> list:
    """Algorithm 2's dual (Theorem 8): ``K u = c`` with ``c_m = min_j sum_i rho^|i-m| W_ij``."""
    n = len(Wc)
    rho = 1 / lam
    sums = [_rho_sums(col, rho) for col in Wc]
    c = [min(s[m] for s in sums) for m in range(n)]
    if n == 1:
        return c
    k = 1 / (1 - rho * rho)
    u = [(c[0] - rho * c[1]) * k]
    for i in range(1, n - 1):
        u.append(((1 + rho * rho) * c[i] - rho * (c[i - 1] + c[i + 1])) * k)
    u.append((c[n - 1] - rho * c[n - 2]) * k)
    return u


def _repair(zq: list | None, lam: fmpq, Wc: list[list], u: list, v: list | None,
            columns: list[int]) -> tuple[list, list | None, int]:
    """Make ``(u, v)`` dual feasible, given the infeasible ``columns``: over F lower
    each of their ``v_j`` to its least ratio; over U shift ``u`` by the least
    (negative) ratio against ``1``. Returns the repaired point and the number of
    columns that needed it."""
    rho = 1 / lam
    n = len(Wc)
    repaired = 0
    if zq is not None:
        v = list(v)
        for j in columns:
            a = [w - x for w, x in zip(Wc[j], u, strict=True)]
            r = _least_ratio(a, zq, v[j], lam, rho)
            if r != v[j]:
                repaired += 1
                v[j] = r
        return u, v, repaired
    ones = [fmpq(1)] * n
    shift = fmpq(0)
    for j in columns:
        a = [w - x for w, x in zip(Wc[j], u, strict=True)]
        r = _least_ratio(a, ones, fmpq(0), lam, rho)
        if r < 0:
            repaired += 1
            shift = min(shift, r)
    return [x + shift for x in u], None, repaired


def northwest_dual(z: Any, lam: Any, loss: Any = "abs", **deprecated: Any
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The explicit dual point ``(u, v)`` of the northwest corner over F.

    For each boundary ``l`` between columns ``l`` and ``l + 1`` let ``m*_l`` be
    the single-peaked scale the northwest plan splits there, ``D_l = W[:, l] -
    W[:, l+1]``, ``mu_l = D_l . s_m* / z . s_m*`` and ``y_l = D_l - mu_l z``.
    Then ``v_j = sum_(l >= j) mu_l`` and ``u = W[:, n-1] - sum_l b_l`` with
    ``b_l(i) = -y_l(i)`` for ``i < m*_l``, ``b_l(m*_l) = sum_(k < m*_l)
    rho^(m*_l - k) y_l(k)``. Feasible for every Monge cost (Lemma C of
    docs/optimum_of_F.md), with dual value ``<W, T_nw>``. ``O(n^2)`` arithmetic
    operations.

    Parameters
    ----------
    z : exact target; lam : exact ``lam > 1`` (rational, or algebraic: over ``Q(lam)``).
    loss : as in :func:`dpfix.theory.mechanism.weight_matrix`.
    **deprecated : ``weights=`` (now ``loss=``), with a ``DeprecationWarning``.

    Returns
    -------
    tuple of numpy.ndarray
        ``(u, v)``, Fractions; feasible (and optimal) when the cost is Monge.

    Examples
    --------
    >>> u, v = northwest_dual(["1/2", "1/2"], 2)
    >>> u.tolist(), v.tolist()
    ([Fraction(1, 2), Fraction(0, 1)], [Fraction(-1, 3), Fraction(0, 1)])
    >>> sum(u) + v.dot([Fraction(1, 2), Fraction(1, 2)])  # = <W, T> of the northwest corner
    Fraction(1, 3)
    """
    loss = renamed("weights", "loss", deprecated, loss, "abs", where="northwest_dual")
    no_other(deprecated, "northwest_dual")
    zv = probability_vector(z, exact=True)
    lq = to_fmpq(exact_lam(lam, algebraic=True), "lam")
    W = exact_weights(loss, zv)
    Wc = [[to_fmpq(x) for x in W[:, j]] for j in range(W.shape[1])]
    u, v = _northwest_dual_q([to_fmpq(x) for x in zv], lq, Wc)
    return from_fmpq_array(u), from_fmpq_array(v)


def _highs_dual(zv: np.ndarray | None, lam: Fraction, W: np.ndarray
                ) -> tuple[list, list | None] | None:
    """A guess of the optimal dual point from HiGHS (floats), read exactly.

    Solves the primal LP of :func:`dpfix.constructors.lp_formulation` in floats and
    takes the marginals of its equalities (``u``: row sums, ``v``: fixed point,
    ``v_(n-1) = 0``) as exact binary fractions. Nothing is trusted: the point is
    then repaired to exact feasibility and its bound re-verified like any other.
    Returns None when HiGHS fails.
    """
    from scipy import sparse
    from scipy.optimize import linprog

    from dpfix.constructors import lp_formulation

    n = W.shape[0]
    lam_f = float(lam)
    zf = None if zv is None else np.array([float(x) for x in zv])
    f = lp_formulation(n, lam_f, zf)
    m_ub = 2 * n * (n - 1)
    A_ub = sparse.csr_matrix((f["ub"][2], f["ub"][:2]), shape=(m_ub, n * n))
    A_eq = sparse.csr_matrix((f["eq"][2], f["eq"][:2]), shape=(len(f["b_eq"]), n * n))
    c = np.array([float(x) for x in W.flat])
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(m_ub), A_eq=A_eq, b_eq=f["b_eq"],
                  bounds=(0, None), method="highs-ds",
                  options={"primal_feasibility_tolerance": 1e-10,
                           "dual_feasibility_tolerance": 1e-10})
    if res.status != 0 or getattr(res, "eqlin", None) is None:
        return None
    y = [fmpq(*Fraction(float(x)).as_integer_ratio()) for x in res.eqlin.marginals]
    u = y[:n]
    v = (y[n:2 * n - 1] + [fmpq(0)]) if zv is not None else None
    return u, v


# ---------------------------------------------------------------- exact dual LP
def _scale_lp(zq: list | None, lam: fmpq, Wc: list[list], max_rounds: int = 10_000,
              single_peaked: bool = False) -> tuple[list, list | None, np.ndarray, int]:
    """The exact optimum of the dual LP by column generation over scales.

    Maximise ``sum u + z . v`` subject to ``(W_j - u - v_j z) . s >= 0`` for the
    scales ``s`` of a working set per column (at first the single-peaked ones;
    the restricted primal is then feasible, so the LP is bounded), adding the
    walk of :func:`cone_minimum` of every violated column until none is
    violated. The restricted LPs are solved exactly by cdd.gmp; their
    multipliers give a primal optimum ``T`` (columns: combinations of the
    working scales). Over F, ``v_(n-1) = 0`` (the dual is invariant under
    ``u + c z, v - c``). Returns ``u, v, T, rounds``. With ``single_peaked``
    only the first LP is solved: the optimum over ``T = Sigma A``, ``A >= 0``
    (the geometric mechanism followed by a remapping); its ``(u, v)`` need not
    be feasible for the full dual.
    """
    n = len(Wc)
    rho = 1 / lam
    fixed = zq is not None
    work: list[list[tuple[int, ...]]] = [
        [tuple(1 if i < m else -1 for i in range(n - 1)) for m in range(n)] for _ in range(n)]
    seen = [set(ps) for ps in work]
    for rounds in range(1, max_rounds + 1):
        rows, keys = [], []
        for j in range(n):  # (u + v_j z) . t <= W_j . t for each working scale t
            for pat in work[j]:
                t = _walk_weights(pat, lam, rho)
                row = {i: from_fmpq(x) for i, x in enumerate(t)}
                if fixed and j < n - 1:
                    row[n + j] = from_fmpq(exact_dot(zq, t))
                rows.append((row, from_fmpq(exact_dot(Wc[j], t))))
                keys.append((j, t))
        obj = [Fraction(1)] * n + ([from_fmpq(x) for x in zq[:n - 1]] if fixed else [])
        lp = exact_lp(obj, rows, maximize=True, dual=True, who="exact_optimum")
        x = [to_fmpq(val) for val in lp.primal]
        u = x[:n]
        v = (x[n:] + [fmpq(0)]) if fixed else None
        added = False
        for j in range(0 if single_peaked else n):
            g = [w - a - ((v[j] * zz) if fixed else 0)
                 for w, a, zz in zip(Wc[j], u, zq if fixed else [0] * n, strict=True)]
            val, pat = _walk_min(g, lam, rho)
            if val < 0 and pat not in seen[j]:
                work[j].append(pat)
                seen[j].add(pat)
                added = True
        if not added:
            T = np.full((n, n), Fraction(0), dtype=object)
            for r in lp.basis:  # the multipliers of the scale rows: T's amounts
                j, t = keys[r]
                yq = to_fmpq(lp.ub_dual[r])
                for i in range(n):
                    T[i, j] += from_fmpq(yq * t[i])
            return u, v, T, rounds
    raise RuntimeError(f"exact_optimum: no convergence in {max_rounds} rounds")


def single_peaked_optimum(z: Any, lam: Any, loss: Any = "abs") -> np.ndarray:
    """The least count error ``<W, T>`` over the ``T`` of F of the form ``T = Sigma A``,
    ``A >= 0`` (the truncated geometric mechanism followed by a remapping), exactly: the
    first LP of :func:`dpfix.certify.exact_optimum`'s column generation, restricted to
    the single-peaked scales (solved by cdd). Returns an optimal ``T``.

    Parameters
    ----------
    z : exact target; lam : rational ``lam > 1``.
    loss : as in :func:`dpfix.theory.mechanism.weight_matrix` (a name, a callable ``f``
        or the matrix ``W``).

    Returns
    -------
    numpy.ndarray
        ``T``, ``n x n`` Fractions.

    Examples
    --------
    >>> single_peaked_optimum(["1/2", "1/2"], 2).tolist()
    [[Fraction(2, 3), Fraction(1, 3)], [Fraction(1, 3), Fraction(2, 3)]]
    """
    zv = probability_vector(z, exact=True)
    W = exact_weights(loss, zv)
    Wc = [[to_fmpq(x) for x in W[:, j]] for j in range(W.shape[1])]
    _, _, T, _ = _scale_lp([to_fmpq(x) for x in zv], to_fmpq(exact_lam(lam)), Wc,
                           single_peaked=True)
    return T
