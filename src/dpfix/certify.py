"""Exact optimality certificates for count mechanisms over F and U (docs/optimum_of_F.md).

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

The dual points:

- over F, :func:`northwest_dual`: the explicit dual of the northwest corner
  (docs/optimum_of_F.md, Theorem A), feasible for every Monge cost (every
  ``W[i, j] = z_i f(i - j)`` with ``f`` convex) and then tight;
- over U, the complementary-slackness dual of Algorithm 2 (Theorem 8):
  ``s_m . u = min_j W[:, j] . s_m`` for every single-peaked scale ``s_m``;
- for any other weights, the same points repaired to feasibility (each ``v_j``
  lowered to the least ratio ``(W_j - u) . s / (z . s)`` over all scales, by
  Dinkelbach's iteration on the recursion), and for small ``n`` the exact
  optimum of the dual LP restricted to a growing set of scales (column
  generation with the recursion as separation oracle, solved by cdd.gmp):
  :func:`exact_optimum`.

Arithmetic is exact throughout: python-flint's ``fmpq`` inside, Fractions at
the interface; floats are refused with :class:`dpfix.exact.ExactnessError`.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from functools import partial
from typing import Any

import cdd
import cdd.gmp
import numpy as np
from flint import fmpq

from dpfix.exact import ExactnessError, exact_array, exact_lam, probability_vector, to_fraction
from dpfix.mechanism import Mechanism, loss, weight_matrix

__all__ = [
    "Certificate",
    "CertificateError",
    "UniversalCertificate",
    "NorthwestCounterexample",
    "certify_optimal",
    "certify_universal",
    "cone_minimum",
    "northwest_dual",
    "exact_optimum",
    "find_northwest_counterexample",
    "remap_of",
    "northwest_survey",
]

#: Largest ``n`` at which :func:`certify_optimal` (``dual="auto"``) falls back on
#: the exact dual LP when the explicit dual point leaves a gap.
LP_MAX_N = 10


class CertificateError(ValueError):
    """A certificate failed its exact re-verification (:meth:`Certificate.check`)."""


# ---------------------------------------------------------------- numbers
def _q(x: Any, name: str = "value") -> fmpq:
    """An exact number as ``fmpq`` (floats refused)."""
    if isinstance(x, fmpq):
        return x
    f = to_fraction(x, name)
    return fmpq(f.numerator, f.denominator)


def _f(x: fmpq) -> Fraction:
    return Fraction(int(x.p), int(x.q))


def _fractions(xs: Any) -> np.ndarray:
    return np.array([_f(x) for x in xs], dtype=object)


def _exact_matrix(M: Any, name: str) -> np.ndarray:
    if isinstance(M, np.ndarray) and M.dtype.kind == "f":
        raise ExactnessError(f"{name}: float array given where exact numbers are required")
    return exact_array(M, name, ndim=2)


def _weights(weights: Any, z: Any) -> np.ndarray:
    """The exact weight matrix (:func:`dpfix.mechanism.weight_matrix` on the exact
    target: a float loss value or matrix entry is refused)."""
    return weight_matrix(weights, probability_vector(z, exact=True), exact=True)


#: How a certificate's ``weights`` label starts when its ``W`` is not a named loss
#: (a matrix or a callable ``f``): :meth:`Certificate.check` cannot rebuild it from ``z``.
CUSTOM = "custom"


def _weights_label(weights: Any) -> str:
    """The ``weights`` label of a certificate: the loss name, or ``"custom ..."``.

    Examples
    --------
    >>> _weights_label("hinge:1"), _weights_label([[0, 1], [1, 0]]), _weights_label(abs)
    ('hinge:1', 'custom matrix', 'custom f abs')
    """
    if isinstance(weights, str):
        return weights
    if callable(weights):
        return f"{CUSTOM} f {getattr(weights, '__name__', 'callable')}"
    return f"{CUSTOM} matrix"


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
    g : a vector of exact numbers.
    lam : rational ``lam > 1``.

    Returns
    -------
    tuple
        ``(minimum, pattern)``: a Fraction and a tuple of ``n - 1`` steps.

    Examples
    --------
    >>> cone_minimum([1, -3, 1], 2)  # the walk 0, 1, 0: 1 - 3 * 2 + 1
    (Fraction(-4, 1), (1, -1))
    >>> cone_minimum(["1/2", -1], 2)[0], cone_minimum(["1/2", 1], 2)[0] >= 0
    (Fraction(-3, 2), True)
    """
    lq = _q(exact_lam(lam), "lam")
    val, pat = _walk_min([_q(v, "g") for v in g], lq, 1 / lq)
    return _f(val), pat


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


def _dot(a: list, b: list) -> fmpq:
    s = fmpq(0)
    for x, y in zip(a, b, strict=True):
        s += x * y
    return s


def _infeasible_columns(W: Any, u: Any, v: Any, z: Any, lam: Fraction,
                        first_only: bool = True) -> list[int]:
    """Columns ``j`` whose ``g_j = W[:, j] - u - v_j z`` is negative on some eps-scale.

    The walk recursion of :func:`cone_minimum` in integers: with ``lam = p/q``,
    ``A`` a common denominator of ``u``, ``v``, ``W`` and ``Z`` one of ``z``, the
    integers ``G_i = A Z g_j(i)`` and ``S_i = (pq)^(n-1-i) A Z Q_i`` satisfy
    ``S_(n-1) = G_(n-1)``, ``S_i = (pq)^(n-1-i) G_i + (p^2 if S_(i+1) < 0 else
    q^2) S_(i+1)``, and ``S_0`` has the sign of the minimum. Entries are
    Fractions (or ints); nothing is trusted but their values.
    """
    Wa = np.asarray(W, dtype=object)
    n = len(z)
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
        r = _dot(a, t) / _dot(d, t)


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


def northwest_dual(z: Any, lam: Any, weights: Any = "abs") -> tuple[np.ndarray, np.ndarray]:
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
    z : exact target; lam : rational ``lam > 1``.
    weights : as in :func:`dpfix.mechanism.weight_matrix`.

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
    zv = probability_vector(z, exact=True)
    lq = _q(exact_lam(lam), "lam")
    W = _weights(weights, zv)
    Wc = [[_q(x) for x in W[:, j]] for j in range(W.shape[1])]
    u, v = _northwest_dual_q([_q(x) for x in zv], lq, Wc)
    return _fractions(u), _fractions(v)


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
    nv = n - 1 if fixed else 0
    work: list[list[tuple[int, ...]]] = [
        [tuple(1 if i < m else -1 for i in range(n - 1)) for m in range(n)] for _ in range(n)]
    seen = [set(ps) for ps in work]
    for rounds in range(1, max_rounds + 1):
        rows, keys = [], []
        for j in range(n):
            for pat in work[j]:
                t = _walk_weights(pat, lam, rho)
                row = [_f(_dot(Wc[j], t))] + [-_f(x) for x in t] + [Fraction(0)] * nv
                if fixed and j < n - 1:
                    row[1 + n + j] = -_f(_dot(zq, t))
                rows.append(row)
                keys.append((j, t))
        obj = [Fraction(0)] + [Fraction(1)] * n + ([_f(x) for x in zq[:n - 1]] if fixed else [])
        mat = cdd.gmp.matrix_from_array(rows, rep_type=cdd.RepType.INEQUALITY,
                                        obj_type=cdd.LPObjType.MAX, obj_func=obj)
        lp = cdd.gmp.linprog_from_matrix(mat)
        cdd.gmp.linprog_solve(lp)
        if lp.status != cdd.LPStatusType.OPTIMAL:
            raise RuntimeError(f"exact_optimum: cdd's exact LP ended with status {lp.status.name}")
        x = [_q(val) for val in lp.primal_solution]
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
            for r, y in lp.dual_solution:
                j, t = keys[r]
                yq = _q(y)
                for i in range(n):
                    T[i, j] += _f(yq * t[i])
            return u, v, T, rounds
    raise RuntimeError(f"exact_optimum: no convergence in {max_rounds} rounds")


# ---------------------------------------------------------------- certificates
@dataclass
class Certificate:
    """An exact certificate of (sub)optimality of a count mechanism over F or U.

    Parameters
    ----------
    optimal : True iff ``gap == 0`` and the dual point is feasible (then ``T``
        minimises ``<W, T>`` over F, resp. U); a ``bool``.
    value : ``<W, T>``, exact.
    lower_bound : ``sum_i u_i + sum_j z_j v_j`` (over U: ``sum_i u_i``), a lower
        bound on the optimum proved by the dual point (weak duality).
    gap : ``value - lower_bound >= 0``; ``T`` is within ``gap`` of the optimum.
    u, v : the dual point (``v`` all zero over U).
    T, W, z, lam, over : what is certified (exact arrays, Fractions); ``n = len(z)``.
    dual : how the dual point was found (``"northwest"``, ``"unfixed"``,
        ``"repaired"``, ``"lp"``, ``"highs"``).
    weights : the loss: a name of :data:`dpfix.mechanism.LOSSES` (then ``W`` is
        ``z_i f(i - j)`` for that loss, and :meth:`check` rebuilds it from ``z``),
        or a label starting with ``"custom"`` (``"custom matrix"``, ``"custom f
        NAME"``) for weights given as a matrix or a callable: the certificate
        is then about the stored ``W`` alone, and says so.
    seconds : time to build the certificate; details : what the construction
        reports (not certified).

    Examples
    --------
    >>> cert = certify_optimal([["2/3", "1/3"], ["1/3", "2/3"]], ["1/2", "1/2"], 2)
    >>> cert.optimal, cert.value, cert.gap
    (True, Fraction(1, 3), Fraction(0, 1))
    >>> cert.check().optimal
    True
    >>> print(cert)  # doctest: +ELLIPSIS
    optimal over F (n = 2, lam = 2, weights = abs): value 1/3, lower bound 1/3 [northwest dual, ...]
    >>> print(certify_optimal(cert.T, cert.z, 2, [[0, 1], [1, 0]]))  # doctest: +ELLIPSIS
    optimal over F (n = 2, lam = 2, weights = custom matrix, the stored W): value 2/3, ...
    """

    optimal: bool
    value: Fraction
    lower_bound: Fraction
    gap: Fraction
    u: np.ndarray
    v: np.ndarray
    T: np.ndarray
    W: np.ndarray
    z: np.ndarray
    lam: Fraction
    over: str = "F"
    dual: str = ""
    weights: str = ""
    seconds: float = 0.0
    details: dict = field(default_factory=dict)

    @property
    def custom_weights(self) -> bool:
        """True when ``W`` is not a named loss (a matrix or callable was given)."""
        return isinstance(self.weights, str) and self.weights.startswith(CUSTOM)

    def check(self) -> Certificate:
        """Re-verify everything from the stored numbers alone, in exact arithmetic.

        Checks, independently of the code that built the dual point: ``optimal``
        is a bool and ``over`` is ``"F"`` or ``"U"``; ``lam > 1`` and every
        number is exact; ``z`` is a probability vector, ``n = len(z)`` and ``T``,
        ``W``, ``u``, ``v`` have the shapes ``n x n``, ``n x n``, ``n``, ``n``;
        ``W`` is the named loss's ``z_i f(i - j)`` (unless ``weights`` says
        ``"custom ..."``); ``T`` is in F (resp. U) exactly; over U, ``v = 0``;
        ``value == <W, T>``; every ``g_j = W[:, j] - u - v_j z`` is non-negative
        on the cone of eps-DP columns (Lemma 1: the minimum over lattice walks,
        by its own recursion); ``lower_bound == sum u + z . v``; ``gap == value -
        lower_bound``; ``optimal == (gap == 0)``.

        Returns
        -------
        Certificate
            ``self``, when every check passes.

        Raises
        ------
        CertificateError
            Naming the first check that fails.

        Examples
        --------
        >>> from dataclasses import replace
        >>> cert = certify_optimal([["2/3", "1/3"], ["1/3", "2/3"]], ["1/2", "1/2"], 2)
        >>> replace(cert, W=2 * cert.W, value=2 * cert.value, u=2 * cert.u, v=2 * cert.v,
        ...         lower_bound=2 * cert.lower_bound).check()
        Traceback (most recent call last):
        CertificateError: certificate (F, abs): W is not the loss abs on z ...
        """
        def fail(msg: str) -> None:
            raise CertificateError(f"certificate ({self.over}, {self.weights}): {msg}")

        def exact(xs: Any, name: str, ndim: int) -> Any:
            arr = np.asarray(xs, dtype=object)
            if arr.ndim != ndim:
                fail(f"{name} must have {ndim} dimension(s), not {arr.ndim}")
            try:
                if ndim == 0:
                    return _q(arr.item(), name)
                if ndim == 1:
                    return [_q(x, name) for x in arr]
                return [[_q(x, name) for x in row] for row in arr]
            except (TypeError, ValueError) as e:  # ExactnessError is a TypeError
                fail(f"{name} is not exact: {e}")

        if not isinstance(self.optimal, bool):
            fail(f"optimal must be a bool, not {self.optimal!r}")
        if self.over not in ("F", "U"):
            fail(f"over must be 'F' or 'U', not {self.over!r}")
        if not isinstance(self.weights, str):
            fail(f"weights must be a label (str), not {self.weights!r}")
        lam = exact(self.lam, "lam", 0)
        if lam <= 1:
            fail("lam must be > 1")
        z = exact(self.z, "z", 1)
        T = exact(self.T, "T", 2)
        W = exact(self.W, "W", 2)
        u = exact(self.u, "u", 1)
        v = exact(self.v, "v", 1)
        n = len(z)
        if not (n >= 1 and len(T) == len(W) == len(u) == len(v) == n
                and all(len(r) == n for r in T) and all(len(r) == n for r in W)):
            fail("shapes of T, W, u, v and z do not agree")
        if any(x < 0 for x in z) or sum(z, fmpq(0)) != 1:
            fail("z is not a probability vector")
        self._check_weights(z, W, fail)
        self._check_polytope(z, T, lam, fail)
        if self.over == "U" and any(x != 0 for x in v):
            fail("over U the dual point has no v: v must be 0")
        value = fmpq(0)
        for i in range(n):
            for j in range(n):
                value += W[i][j] * T[i][j]
        if value != exact(self.value, "value", 0):
            fail(f"value {self.value} != <W, T> = {_f(value)}")
        bad = _infeasible_columns(self.W, self.u, self.v, self.z, _f(lam))  # exact: checked
        if bad:
            fail(f"the dual point is infeasible: column {bad[0]} of W - u - z v is negative "
                 f"on an eps-scale")
        bound = sum(u, fmpq(0)) + _dot(z, v)
        if bound != exact(self.lower_bound, "lower_bound", 0):
            fail(f"lower_bound {self.lower_bound} != sum u + z.v = {_f(bound)}")
        if exact(self.gap, "gap", 0) != value - bound:
            fail(f"gap {self.gap} != value - lower_bound = {_f(value - bound)}")
        if self.optimal != (value == bound):
            fail(f"optimal = {self.optimal} but the gap is {_f(value - bound)}")
        return self

    def _check_weights(self, z: list, W: list, fail: Any) -> None:
        """``W`` is the named loss on ``z``; a custom ``W`` is taken as stored."""
        if self.custom_weights:
            return
        try:
            loss(self.weights)
        except ValueError:
            fail(f"weights {self.weights!r} is neither a loss name nor '{CUSTOM} ...'")
        want = weight_matrix(self.weights, _fractions(z), exact=True)
        n = len(z)
        for i in range(n):
            for j in range(n):
                if W[i][j] != _q(want[i, j]):
                    fail(f"W is not the loss {self.weights} on z: W[{i}, {j}] = {_f(W[i][j])}, "
                         f"z_i f(i - j) = {want[i, j]}")

    def _check_polytope(self, z: list, T: list, lam: fmpq, fail: Any) -> None:
        """``T`` in U (rows: probability vectors, columns eps-DP), and over F ``z T = z``."""
        n = len(z)
        for i in range(n):
            if any(x < 0 for x in T[i]):
                fail(f"T has a negative entry in row {i}")
            if sum(T[i], fmpq(0)) != 1:
                fail(f"row {i} of T does not sum to 1")
        for i in range(n - 1):
            for j in range(n):
                if T[i][j] > lam * T[i + 1][j] or T[i + 1][j] > lam * T[i][j]:
                    fail(f"T is not eps-DP: column {j}, rows {i} and {i + 1}")
        if self.over == "F":
            for j in range(n):
                if sum((z[i] * T[i][j] for i in range(n)), fmpq(0)) != z[j]:
                    fail(f"z T != z in column {j}")

    def __str__(self) -> str:
        def num(x: Fraction) -> str:
            if max(abs(x.numerator).bit_length(), x.denominator.bit_length()) <= 120:
                return str(x)
            return f"~{float(x):.12g}"
        head = "optimal" if self.optimal else f"not proved optimal: gap <= {num(self.gap)}"
        weights = self.weights + (", the stored W" if self.custom_weights else "")
        return (f"{head} over {self.over} (n = {len(self.z)}, lam = {self.lam}, "
                f"weights = {weights}): value {num(self.value)}, lower bound "
                f"{num(self.lower_bound)} [{self.dual} dual, {self.seconds:.3g} s]")

    def to_latex(self) -> str:
        """``T``, the dual point ``(u, v)``, the value, the lower bound and the gap as an
        exact LaTeX ``aligned`` block (matrices by :func:`dpfix.display.to_latex`).

        Examples
        --------
        >>> cert = certify_optimal([["2/3", "1/3"], ["1/3", "2/3"]], ["1/2", "1/2"], 2)
        >>> print(cert.to_latex().splitlines()[-2])
        \\text{gap} &= 0
        """
        from dpfix import display

        def q(x: Any) -> str:
            return display.to_latex([x]).splitlines()[1]  # the one entry of a 1 x 1 matrix

        lines = [f"T &= {display.to_latex(self.T)}", f"u &= {display.to_latex(self.u)}",
                 f"v &= {display.to_latex(self.v)}",
                 f"\\langle W, T \\rangle &= {q(self.value)}",
                 f"\\textstyle\\sum_i u_i + z \\cdot v &= {q(self.lower_bound)}",
                 f"\\text{{gap}} &= {q(self.gap)}"]
        return "\\begin{aligned}\n" + " \\\\\n".join(lines) + "\n\\end{aligned}"

    def to_sympy(self) -> dict[str, Any]:
        """The certificate's numbers as sympy objects: ``T``, ``W`` (Matrices), ``u``,
        ``v``, ``z`` (``1 x n`` Matrices), ``lam``, ``value``, ``lower_bound``, ``gap``
        (Rationals); see :func:`dpfix.display.to_sympy`.

        Examples
        --------
        >>> cert = certify_optimal([["2/3", "1/3"], ["1/3", "2/3"]], ["1/2", "1/2"], 2)
        >>> s = cert.to_sympy()
        >>> s["value"], (s["T"] * s["W"].T).trace() == s["value"]
        (1/3, True)
        """
        from dpfix import display

        out = {k: display.to_sympy(getattr(self, k)) for k in ("T", "W", "u", "v", "z")}
        for k in ("lam", "value", "lower_bound", "gap"):
            out[k] = display.to_sympy([getattr(self, k)])[0, 0]
        return out


def _inputs(T: Any, z: Any, lam: Any, weights: Any, over: str
            ) -> tuple[np.ndarray, np.ndarray, Fraction, np.ndarray]:
    if over not in ("F", "U"):
        raise ValueError(f"over: 'F' or 'U', got {over!r}")
    if isinstance(T, Mechanism):
        if not T.exact:
            raise ExactnessError("T: a float mechanism; certificates need an exact one "
                                 "(build it with a rational lam)")
        z = T.fixed_point if z is None else z
        lam = T.lam if lam is None else lam
        T = T.matrix
    if z is None or lam is None:
        raise ValueError("give z and lam (or an exact Mechanism that holds them)")
    Tm = _exact_matrix(T, "T")
    zv = probability_vector(z, exact=True, n=Tm.shape[0])
    lam_x = exact_lam(lam)
    if Tm.shape != (zv.shape[0],) * 2:
        raise ValueError(f"T: expected shape {(zv.shape[0],) * 2}, got {Tm.shape}")
    return Tm, zv, lam_x, _weights(weights, zv)


def _build(Tm: np.ndarray, zv: np.ndarray, lam_x: Fraction, W: np.ndarray, over: str,
           dual: str, lp_max_n: int, label: str, start: float) -> Certificate:
    n = zv.shape[0]
    lq = _q(lam_x)
    zq = [_q(x) for x in zv]
    Wc = [[_q(W[i, j]) for i in range(n)] for j in range(n)]
    Tq = [[_q(x) for x in row] for row in Tm]
    value = fmpq(0)
    for i in range(n):
        for j in range(n):
            value += Wc[j][i] * Tq[i][j]
    rho = 1 / lq
    for i in range(n):  # refuse a T outside the polytope: its value bounds nothing
        if any(x < 0 for x in Tq[i]) or sum(Tq[i], fmpq(0)) != 1:
            raise ValueError(f"T: row {i} is not a probability vector")
        if i < n - 1 and any(a > lq * b or b > lq * a for a, b in zip(Tq[i], Tq[i + 1],
                                                                      strict=True)):
            raise ValueError(f"T: not eps-DP between rows {i} and {i + 1} (lam = {lam_x})")
    if over == "F" and any(_dot(zq, [Tq[i][j] for i in range(n)]) != zq[j] for j in range(n)):
        raise ValueError("T: z T != z (not in F); use over='U' for mechanisms without "
                         "the fixed point")
    details: dict[str, Any] = {}
    if dual == "lp":
        u, v, Topt, rounds = _scale_lp(zq if over == "F" else None, lq, Wc)
        how = "lp"
        details.update(lp_rounds=rounds, optimum_T=Topt)
    else:
        if over == "F":
            u, v = _northwest_dual_q(zq, lq, Wc)
        else:
            u, v = _unfixed_dual_q(lq, Wc), None
        bad = _infeasible_columns(W, _fractions(u), _fractions(v or [fmpq(0)] * n), zv,
                                  lam_x, first_only=False)
        u, v, repaired = _repair(zq if over == "F" else None, lq, Wc, u, v, bad)
        how = ("northwest" if over == "F" else "unfixed") if not repaired else "repaired"
        details["repaired_columns"] = repaired
        bound = sum(u, fmpq(0)) + (_dot(zq, v) if v is not None else 0)
        if dual == "auto" and bound != value and n <= lp_max_n:
            details["explicit_bound"] = _f(bound)
            u, v, Topt, rounds = _scale_lp(zq if over == "F" else None, lq, Wc)
            how = "lp"
            details.update(lp_rounds=rounds, optimum_T=Topt)
        elif dual == "auto" and bound != value:
            details["explicit_bound"] = _f(bound)
            guess = _highs_dual(zv if over == "F" else None, lam_x, W)
            if guess is not None:
                gu, gv = guess
                bad = _infeasible_columns(W, _fractions(gu), _fractions(gv or [fmpq(0)] * n),
                                          zv, lam_x, first_only=False)
                gu, gv, grep = _repair(zq if over == "F" else None, lq, Wc, gu, gv, bad)
                gbound = sum(gu, fmpq(0)) + (_dot(zq, gv) if gv is not None else 0)
                if gbound > bound:
                    u, v, how = gu, gv, "highs"
                    details["repaired_columns"] = grep
    if v is None:
        v = [fmpq(0)] * n
    bound = sum(u, fmpq(0)) + _dot(zq, v)
    gap = value - bound
    if gap < 0:  # impossible for a feasible dual point and T in the polytope
        raise RuntimeError(f"certify: negative gap {_f(gap)}: a bug, please report")
    del rho
    return Certificate(optimal=gap == 0, value=_f(value), lower_bound=_f(bound), gap=_f(gap),
                       u=_fractions(u), v=_fractions(v), T=Tm, W=W, z=zv, lam=lam_x, over=over,
                       dual=how, weights=label, seconds=time.perf_counter() - start,
                       details=details)


def certify_optimal(T: Any, z: Any = None, lam: Any = None, weights: Any = "abs",
                    over: str = "F", *, dual: str = "auto", lp_max_n: int = LP_MAX_N
                    ) -> Certificate:
    """An exact certificate that ``T`` minimises ``<W, T>`` over F (or U), or of how far
    it can be from the minimum.

    Over F the dual point is the northwest corner's (Theorem A of
    docs/optimum_of_F.md: feasible and tight for every Monge cost, so the
    northwest corner gets ``optimal=True`` for every convex ``f``); over U it is
    Algorithm 2's (Theorem 8). Dual feasibility is decided by the walk
    recursion over eps-scales (Lemma 1). When the explicit point leaves a gap
    (a suboptimal ``T``, or weights outside the theorem) it is repaired to
    feasibility, so ``lower_bound`` is always a proved bound, and for
    ``n <= lp_max_n`` replaced by the exact optimum of the dual LP: then
    ``lower_bound`` is the optimum itself and ``gap`` the exact distance.

    Parameters
    ----------
    T : an exact :class:`~dpfix.mechanism.Mechanism` or an ``n x n`` matrix of
        exact numbers, in F (resp. U).
    z : the target (defaults to the mechanism's fixed point); also weighs the
        rows of the count error.
    lam : rational ``lam = e^eps > 1`` (defaults to the mechanism's).
    weights : ``"abs"``, ``"squared"``, another name of :data:`dpfix.mechanism.LOSSES`, a callable
        ``f`` (``W[i, j] = z_i f(i - j)``, exact values) or an ``n x n`` matrix.
    over : ``"F"`` (with the fixed point ``z``) or ``"U"`` (without).
    dual : ``"auto"`` (explicit point, then the exact LP if a gap remains and
        ``n <= lp_max_n``), ``"explicit"`` (never the LP) or ``"lp"`` (always).
    lp_max_n : the largest ``n`` at which ``"auto"`` runs the exact LP.

    Returns
    -------
    Certificate
        Check it with :meth:`Certificate.check`.

    Raises
    ------
    ExactnessError
        A float ``T``, ``z``, ``lam`` or weight.
    ValueError
        ``T`` is not in F (resp. U), or bad arguments.

    Examples
    --------
    >>> from dpfix.constructors import northwest_corner
    >>> z = ["1/4", "1/8", "1/8", "1/2"]
    >>> cert = certify_optimal(northwest_corner(z, lam=2), z, 2, weights="squared")
    >>> cert.optimal, cert.dual, cert.gap
    (True, 'northwest', Fraction(0, 1))
    >>> from dpfix.constructors import heuristic
    >>> bad = certify_optimal(heuristic(z, lam=2, selector="min"), z, 2)
    >>> bad.optimal, bad.gap > 0, bad.check() is bad
    (False, True, True)
    """
    start = time.perf_counter()
    if dual not in ("auto", "explicit", "lp"):
        raise ValueError(f"dual: 'auto', 'explicit' or 'lp', got {dual!r}")
    Tm, zv, lam_x, W = _inputs(T, z, lam, weights, over)
    return _build(Tm, zv, lam_x, W, over, dual, lp_max_n, _weights_label(weights), start)


def exact_optimum(z: Any, lam: Any, weights: Any = "abs", over: str = "F") -> Certificate:
    """The exact optimum of ``<W, T>`` over F (or U) and its certificate, for any weights.

    Parameters
    ----------
    z : exact target; lam : rational ``lam > 1``.
    weights : as in :func:`dpfix.mechanism.weight_matrix` (any weights, convex or not).
    over : ``"F"`` or ``"U"``.

    Column generation on the dual LP (``2n`` variables), with the walk
    recursion of :func:`cone_minimum` as the separation oracle (Lemma 1) and
    cdd.gmp for the exact restricted LPs; the optimal ``T`` is read off their
    multipliers. Far smaller LPs than the ``n^2``-variable primal of
    :func:`dpfix.constructors.lp_optimum`; meant for ``n`` up to about 10.

    Returns
    -------
    Certificate
        Of the optimal ``T`` (``optimal=True``, ``dual="lp"``);
        ``details["lp_rounds"]`` counts the LPs solved.

    Examples
    --------
    >>> opt = exact_optimum(["1/3", "1/3", "1/3"], 2, weights="zero-one")
    >>> opt.optimal, opt.value
    (True, Fraction(10, 21))
    """
    start = time.perf_counter()
    zv = probability_vector(z, exact=True)
    lam_x = exact_lam(lam)
    W = _weights(weights, zv)
    n = zv.shape[0]
    lq = _q(lam_x)
    zq = [_q(x) for x in zv]
    Wc = [[_q(W[i, j]) for i in range(n)] for j in range(n)]
    _, _, Topt, _ = _scale_lp(zq if over == "F" else None, lq, Wc)
    cert = _build(Topt, zv, lam_x, W, over, "lp", n, _weights_label(weights), start)
    cert.details.pop("optimum_T", None)
    return cert


# ---------------------------------------------------------------- universal
@dataclass
class UniversalCertificate:
    """Certificates of the northwest corner for every hinge ``(d - a)^+``.

    A convex ``f`` on ``-(n-1) .. n-1`` is an affine function plus a non-negative
    combination of these hinges; the affine part is constant on F, so when every
    hinge certificate is optimal the northwest corner is optimal for every
    convex loss on this instance (docs/optimum_of_F.md).
    """

    optimal: bool
    T: np.ndarray
    z: np.ndarray
    lam: Fraction
    hinges: list[tuple[int, Certificate]]
    seconds: float = 0.0

    def check(self) -> UniversalCertificate:
        """Re-verify every hinge certificate (:meth:`Certificate.check`), that all certify
        this ``T``, ``z``, ``lam`` with the hinge weights, and the ``optimal`` flag."""
        if not isinstance(self.optimal, bool):
            raise CertificateError(f"universal: optimal must be a bool, not {self.optimal!r}")
        n = len(self.z)
        have = sorted(a for a, _ in self.hinges)
        if have != list(range(-(n - 1), n)):
            raise CertificateError(f"universal: hinges {have} != -(n-1) .. n-1")
        for a, cert in self.hinges:
            cert.check()
            W = _weights(f"hinge:{a}", self.z)
            if not ((cert.T == self.T).all() and (cert.W == W).all()
                    and (cert.z == self.z).all() and cert.lam == self.lam and cert.over == "F"):
                raise CertificateError(f"universal: hinge {a} certifies another instance")
        if self.optimal != all(c.optimal for _, c in self.hinges):
            raise CertificateError("universal: optimal flag disagrees with the hinges")
        return self

    def to_latex(self) -> str:
        """``T`` and, for each hinge ``a``, its value and lower bound, as an exact LaTeX
        ``aligned`` block (:meth:`Certificate.to_latex` gives one hinge in full).

        Examples
        --------
        >>> u = certify_universal(["1/2", "1/2"], 2)
        >>> print("\\n".join(u.to_latex().splitlines()[-4:-1]))
        (d + 1)^+ &: 1 = 1 \\\\
        d^+ &: \\frac{1}{6} = \\frac{1}{6} \\\\
        (d - 1)^+ &: 0 = 0
        """
        from dpfix import display

        def q(x: Any) -> str:
            return display.to_latex([x]).splitlines()[1]

        def hinge(a: int) -> str:
            return "d^+" if a == 0 else f"(d {'-' if a > 0 else '+'} {abs(a)})^+"

        lines = [f"T &= {display.to_latex(self.T)}"]
        lines += [f"{hinge(a)} &: {q(c.value)} {'=' if c.optimal else '>'} {q(c.lower_bound)}"
                  for a, c in self.hinges]
        return "\\begin{aligned}\n" + " \\\\\n".join(lines) + "\n\\end{aligned}"

    def to_sympy(self) -> dict[str, Any]:
        """``T``, ``z`` (sympy Matrices), ``lam`` (a Rational) and ``hinges``: hinge ``a``
        -> that hinge's :meth:`Certificate.to_sympy`.

        Examples
        --------
        >>> u = certify_universal(["1/2", "1/2"], 2).to_sympy()
        >>> sorted(u["hinges"]), u["T"] == u["hinges"][0]["T"]
        ([-1, 0, 1], True)
        """
        from dpfix import display

        return {"T": display.to_sympy(self.T), "z": display.to_sympy(self.z),
                "lam": display.to_sympy([self.lam])[0, 0],
                "hinges": {a: c.to_sympy() for a, c in self.hinges}}


def certify_universal(z: Any, lam: Any, T: Any = None, *, dual: str = "explicit"
                      ) -> UniversalCertificate:
    """Certify the northwest corner of ``z`` for all ``2n - 1`` hinge losses at once.

    ``optimal=True`` proves, on this instance, that the northwest corner
    minimises ``sum_ij z_i f(i - j) T_ij`` over F for **every** convex ``f``
    (the fixed-point analogue of Ghosh et al.'s universal optimality; Theorem A
    of docs/optimum_of_F.md proves it for every instance).

    Parameters
    ----------
    z, lam : exact target and rational ``lam > 1``.
    T : the mechanism to certify (default: ``northwest_corner(z, lam=lam)``).
    dual : passed to :func:`certify_optimal`.

    Examples
    --------
    >>> uc = certify_universal(["1/2", "0", "1/4", "1/4"], "3/2")
    >>> uc.optimal, len(uc.hinges), uc.check() is uc
    (True, 7, True)
    """
    from dpfix.constructors import northwest_corner

    start = time.perf_counter()
    zv = probability_vector(z, exact=True)
    lam_x = exact_lam(lam)
    n = zv.shape[0]
    Tm = northwest_corner(zv, lam=lam_x).matrix if T is None else T
    hinges = [(a, certify_optimal(Tm, zv, lam_x, f"hinge:{a}", dual=dual))
              for a in range(-(n - 1), n)]
    Tx = hinges[0][1].T
    return UniversalCertificate(optimal=all(c.optimal for _, c in hinges), T=Tx, z=zv,
                                lam=lam_x, hinges=hinges, seconds=time.perf_counter() - start)


# ---------------------------------------------------------------- counterexamples
@dataclass
class NorthwestCounterexample:
    """An exact instance where the northwest corner is not optimal over F.

    ``gap = northwest_value - optimum > 0``; ``optimum_T`` attains ``optimum``
    (``certificate`` proves it); ``searched`` counts the instances tried before.
    """

    weights: str
    n: int
    lam: Fraction
    z: np.ndarray
    northwest_value: Fraction
    optimum: Fraction
    gap: Fraction
    northwest_T: np.ndarray
    optimum_T: np.ndarray
    certificate: Certificate
    searched: int

    def __str__(self) -> str:
        def mat(M: np.ndarray) -> str:
            return "\n".join("  [" + ", ".join(str(x) for x in row) + "]" for row in M)
        return (f"weights {self.weights}: n = {self.n}, lam = {self.lam}, "
                f"z = ({', '.join(str(x) for x in self.z)})\n"
                f"northwest corner: {self.northwest_value}\noptimum over F: {self.optimum}\n"
                f"gap: {self.gap} (~{float(self.gap):.6g}); "
                f"{self.searched} instances searched\n"
                f"northwest T:\n{mat(self.northwest_T)}\noptimal T:\n{mat(self.optimum_T)}")


def _northwest_and_optimum(weights: Any, inst: Any, matrix_weights: bool
                           ) -> tuple[np.ndarray, np.ndarray, Fraction, Certificate]:
    """The northwest corner ``T`` of an instance, the loss matrix ``W``, ``W . T`` and the
    exact optimum over F (for the loss given by name, or by its matrix ``W``)."""
    from dpfix.constructors import northwest_corner

    zv = inst.z_array()
    T = northwest_corner(zv, lam=inst.lam).matrix
    W = _weights(weights, zv)
    opt = exact_optimum(zv, inst.lam, W if matrix_weights else weights)
    return T, W, (W * T).sum(), opt


def _northwest_is_optimal(weights: Any, matrix_weights: bool, inst: Any) -> bool:
    """The predicate of the northwest searches: no mechanism of F does better."""
    _, _, nw, opt = _northwest_and_optimum(weights, inst, matrix_weights)
    return not opt.value < nw


def _northwest_instances(n_values: Iterable[int], lams: Iterable[Any], denominator_max: int
                         ) -> Iterator[Any]:
    """The instances of the northwest searches: ``n``, then ``z`` (least denominator
    first, :func:`dpfix.instances.targets_by_denominator`), then ``lam``."""
    from dpfix.instances import Instance, targets_by_denominator

    lam_values = [exact_lam(lam) for lam in lams]
    for n in n_values:
        for z in targets_by_denominator(n, denominator_max):
            for lam in lam_values:
                yield Instance(n, lam, z)


def find_northwest_counterexample(weights: Any, *, n_max: int = 5,
                                  lams: tuple = (2, 3, Fraction(3, 2)),
                                  denominator_max: int = 6,
                                  limit: int | None = None) -> NorthwestCounterexample | None:
    """The smallest exact instance where the northwest corner is not optimal over F.

    Searches ``n = 2 .. n_max``; for each ``n`` the targets ``z = c / N`` for
    ``N = 1 .. denominator_max`` and every composition ``c`` of ``N`` into ``n``
    non-negative parts (zeros at the ends and inside included), and each ``lam``
    in ``lams``, in this order; compares the northwest corner with the exact
    optimum of :func:`exact_optimum`. "Smallest": least ``n``, then least ``N``.
    The search is :func:`dpfix.search.smallest_counterexample` over these instances.

    Parameters
    ----------
    weights : a loss name (:data:`dpfix.mechanism.LOSSES`) or a callable ``f`` (``z_i f(i - j)``).
    n_max, lams, denominator_max : the search space.
    limit : stop after this many instances (None: no limit).

    Returns
    -------
    NorthwestCounterexample or None
        None when every instance searched has the northwest corner optimal
        (for a convex loss that is Theorem A; for others, evidence only).

    Examples
    --------
    >>> ce = find_northwest_counterexample("zero-one", n_max=3)
    >>> ce.n, ce.gap > 0
    (3, True)
    >>> find_northwest_counterexample("abs", n_max=3, denominator_max=3) is None
    True
    """
    from dpfix.search import BudgetReached, smallest_counterexample

    instances = _northwest_instances(range(2, n_max + 1), lams, denominator_max)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BudgetReached)  # limit: None, as documented
        ce = smallest_counterexample(partial(_northwest_is_optimal, weights, False),
                                     over="instance", instances=instances, budget=limit)
    if ce is None:
        return None
    T, _, nw, opt = _northwest_and_optimum(weights, ce.instance, False)
    return NorthwestCounterexample(
        weights=_weights_label(weights), n=ce.n, lam=ce.lam, z=ce.instance.z_array(),
        northwest_value=nw, optimum=opt.value, gap=nw - opt.value, northwest_T=T,
        optimum_T=opt.T, certificate=opt, searched=ce.visited)


def remap_of(T: Any, lam: Any) -> np.ndarray:
    """``R`` with ``T = G R``, ``G`` the truncated geometric mechanism (exact).

    ``R = diag(alpha)^-1 Sigma^-1 T`` (``Sigma^-1 = diag(Z) K^-1``, ``K^-1``
    tridiagonal), so its rows sum to 1; ``T`` is the geometric mechanism
    followed by a (randomised) remapping iff ``R >= 0`` (docs/optimum_of_F.md
    section 5).

    Parameters
    ----------
    T : an exact ``n x n`` matrix; lam : rational ``lam > 1``.

    Returns
    -------
    numpy.ndarray
        ``R``, Fractions.

    Examples
    --------
    >>> from dpfix.constructors import northwest_corner
    >>> remap_of(northwest_corner(["1/2", "1/2"], lam=2).matrix, 2).tolist()
    [[Fraction(1, 1), Fraction(0, 1)], [Fraction(0, 1), Fraction(1, 1)]]
    """
    lam_x = exact_lam(lam)
    Tm = _exact_matrix(T, "T")
    n = Tm.shape[0]
    rho = 1 / lam_x
    if n == 1:
        return Tm.copy()
    k = 1 / (1 - rho * rho)
    KiT = np.empty((n, n), dtype=object)
    for i in range(n):
        row = Tm[i] * (1 + rho * rho if 0 < i < n - 1 else 1)
        if i > 0:
            row = row - rho * Tm[i - 1]
        if i < n - 1:
            row = row - rho * Tm[i + 1]
        KiT[i] = row * k
    Z = [sum(rho ** abs(i - m) for i in range(n)) for m in range(n)]
    ends, inner = 1 / (1 + rho), (1 - rho) / (1 + rho)
    alpha = [Z[m] * (ends if m in (0, n - 1) else inner) for m in range(n)]
    return np.array([KiT[m] * (Z[m] / alpha[m]) for m in range(n)], dtype=object)


def _monotone(R: np.ndarray) -> bool:
    """Support of ``R`` a staircase: row ``m``'s columns all at or left of row ``m+1``'s."""
    last = -1
    for row in R:
        cols = [j for j, x in enumerate(row) if x != 0]
        if cols[0] < last:
            return False
        last = cols[-1]
    return True


def northwest_survey(weights: Any, *, n_values: tuple = (3, 4), lams: tuple = (2, 3),
                     denominator_max: int = 4) -> dict[str, Any]:
    """How far the northwest corner is from the optimum over F, on every small instance.

    The instances of :func:`find_northwest_counterexample` (``z = c / N``, every
    composition ``c``, ``N <= denominator_max``) for each ``n`` and ``lam``; the
    optimum by :func:`exact_optimum`. Where the northwest corner is not optimal,
    also the best mechanism of the form ``G R`` (the truncated geometric
    mechanism followed by a randomised remapping, i.e. ``T = Sigma A``,
    ``A >= 0``: the exact LP over single-peaked scales), to tell whether an
    optimum of that form exists and whether a monotone remapping suffices.

    Parameters
    ----------
    weights : a loss name (:data:`dpfix.mechanism.LOSSES`) or a callable ``f``.
    n_values, lams, denominator_max : the instances.

    Returns
    -------
    dict
        ``instances``, ``not_optimal``, ``max_gap``, ``max_relative_gap``,
        ``worst`` (``n, lam, z, gap``); among the non-optimal instances:
        ``remap_optimal`` (the best ``G R`` is optimal over F),
        ``remap_beats_northwest`` (the best ``G R`` is below the northwest
        corner: a non-monotone or non-northwest remapping), ``remap_monotone``
        (the best ``G R`` found has a staircase remapping); ``by_n`` (``n ->
        [instances, not optimal]``).

    Examples
    --------
    >>> s = northwest_survey("zero-one", n_values=(3,), lams=(3,), denominator_max=4)
    >>> s["instances"], s["not_optimal"], s["max_gap"], s["remap_optimal"]
    (22, 2, Fraction(1, 252), 2)
    """
    from dpfix.search import survey

    result = survey(partial(_northwest_is_optimal, weights, True), over="instance",
                    instances=_northwest_instances(n_values, lams, denominator_max))
    if result.errors:
        raise result.errors[0]
    out: dict[str, Any] = {"weights": _weights_label(weights), "instances": result.visited,
                           "not_optimal": len(result.failures), "max_gap": Fraction(0),
                           "max_relative_gap": Fraction(0), "worst": None,
                           "remap_optimal": 0, "remap_beats_northwest": 0,
                           "remap_monotone": 0, "by_n": {}}
    for (n, _), c in result.counts.items():
        counts = out["by_n"].setdefault(n, [0, 0])
        counts[0] += c["held"] + c["failed"]
        counts[1] += c["failed"]
    for ce in result.failures:
        _, W, nw, opt = _northwest_and_optimum(weights, ce.instance, True)
        n, lam_x, zv = ce.n, ce.lam, ce.instance.z_array()
        gap = nw - opt.value
        rel = gap / opt.value if opt.value else Fraction(0)
        if gap > out["max_gap"]:
            out["max_gap"] = gap
        if rel > out["max_relative_gap"]:
            out["max_relative_gap"] = rel
            out["worst"] = {"n": n, "lam": lam_x, "z": list(zv), "gap": gap,
                            "northwest": nw, "optimum": opt.value}
        Wc = [[_q(W[i, j]) for i in range(n)] for j in range(n)]
        _, _, Tr, _ = _scale_lp([_q(x) for x in zv], _q(lam_x), Wc, single_peaked=True)
        best_remap = (W * Tr).sum()
        out["remap_optimal"] += best_remap == opt.value
        out["remap_beats_northwest"] += best_remap < nw
        out["remap_monotone"] += _monotone(remap_of(Tr, lam_x))
    return out
