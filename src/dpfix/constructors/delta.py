"""(eps, delta)-DP count mechanisms: the delta-northwest corner and the delta LP.

Over the polytopes of :mod:`dpfix.theory.delta` (docs/open_questions.md section 5):
:func:`cumulative_family` gives the steepest cumulative columns the (eps, delta)
budget allows (through the map ``phi`` and its inverse), :func:`delta_northwest`
stacks them into the delta-northwest corner, an optimum over ``F_delta`` for
every convex loss (Theorem A_delta), and :func:`delta_northwest_corner` returns it
as a :class:`~dpfix.theory.mechanism.Mechanism` (registry name
``"delta-northwest"``); :func:`lp_optimum_delta` computes the LP optimum exactly
(cdd, small ``n``) or with HiGHS on the lifted form (``construct(..., constructor="lp",
delta=...)``).
"""

from __future__ import annotations

import time
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.numbers.deprecation import no_other, renamed
from dpfix.numbers.exact import (
    ExactnessError,
    exact_lam,
    probability_vector,
    resolve_lam,
    to_fraction,
)
from dpfix.theory.delta import F_lifted, U_lifted, is_approximately_dp, ordered_pairs, project
from dpfix.theory.mechanism import Mechanism
from dpfix.theory.polytopes import check_delta

__all__ = ["delta_northwest", "delta_northwest_corner", "cumulative_family", "loss_matrix",
           "lp_optimum_delta"]

_ZERO, _ONE = Fraction(0), Fraction(1)


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
    >>> from fractions import Fraction
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


def delta_northwest_corner(z: Any, eps: float | None = None, *, lam: Any = None,
                           delta: Any = 0) -> Mechanism:
    """The delta-northwest corner as a :class:`~dpfix.theory.mechanism.Mechanism`: the
    optimum of ``F_delta[z]`` for every convex loss (Theorem A_delta,
    docs/open_questions.md section 5), registered as ``"delta-northwest"``.

    Parameters
    ----------
    z : the target distribution, length ``n``; exact numbers with ``lam``.
    eps, lam : float ``eps`` (float path) or rational ``lam = e^eps`` (exact path).
    delta : ``0 <= delta < 1``, exact on the exact path.

    Returns
    -------
    Mechanism
        ``constructor="delta-northwest"``, ``fixed_point=z``, ``delta``; the matrix of
        :func:`delta_northwest`, checked (exactly (eps, delta)-DP on the exact path).

    Examples
    --------
    >>> M = delta_northwest_corner(["1/2", "1/2"], lam=2, delta="1/10")
    >>> M.matrix[0].tolist(), M.delta
    ([Fraction(7, 10), Fraction(3, 10)], 0.1)
    """
    start = time.perf_counter()
    lam_x, eps_f = resolve_lam(eps, lam)
    exact = lam_x is not None
    d = check_delta(delta) if exact else float(delta)
    if not 0 <= d < 1:
        raise ValueError(f"delta: must satisfy 0 <= delta < 1, got {delta}")
    zv = probability_vector(z, exact=exact)
    try:
        T = delta_northwest(zv, lam_x if exact else float(np.exp(eps_f)), d)
    except RuntimeError as exc:  # float precision lost: the input cannot be served
        raise ValueError(f"delta-northwest: {exc}") from None
    if exact and not is_approximately_dp(T, lam_x, d):
        raise RuntimeError("delta_northwest_corner: the matrix is not (eps, delta)-DP")
    if exact:
        mech = Mechanism(matrix=T, eps=eps_f, lam=lam_x, delta=float(d), fixed_point=zv,
                         constructor="delta-northwest", params={"delta": d})
    else:
        with np.errstate(divide="ignore"):  # log 0 = -inf: an impossible output
            mech = Mechanism(log_matrix=np.log(T.astype(float)), eps=eps_f, delta=d,
                             fixed_point=zv, constructor="delta-northwest",
                             params={"delta": d})
    mech.check()  # rows, z T = z and the privacy level (exactly, or within FLOAT_RTOL)
    mech.build_seconds = time.perf_counter() - start
    return mech


def loss_matrix(z: Any, loss: Any = "abs", **deprecated: Any) -> np.ndarray:
    """``W[i, j] = z_i |i - j|`` (``"abs"``), ``z_i (i - j)^2`` (``"squared"``) or a given
    matrix; exact for exact ``z``.

    Parameters
    ----------
    z : array_like
        The target, an exact probability vector of length ``n``.
    loss : ``"abs"``, ``"squared"`` or an ``n x n`` matrix
    **deprecated : ``weights=`` (now ``loss=``), with a ``DeprecationWarning``.

    Returns
    -------
    numpy.ndarray
        Object array (exact for exact ``z``).

    Raises
    ------
    ValueError
        An unknown loss name.

    Examples
    --------
    >>> loss_matrix(["1/2", "1/2"]).tolist()
    [[Fraction(0, 1), Fraction(1, 2)], [Fraction(1, 2), Fraction(0, 1)]]
    """
    loss = renamed("weights", "loss", deprecated, loss, "abs", where="loss_matrix")
    no_other(deprecated, "loss_matrix")
    if not isinstance(loss, str):
        return np.array(loss, dtype=object)
    power = {"abs": 1, "squared": 2}.get(loss)
    if power is None:
        raise ValueError(f"loss: use 'abs', 'squared' or a matrix, got {loss!r}")
    try:
        zv = probability_vector(z, exact=True)
    except ExactnessError:
        zv = probability_vector(z, exact=False)
    n = len(zv)
    return np.array([[zv[i] * abs(i - j) ** power for j in range(n)] for i in range(n)],
                    dtype=object)


def lp_optimum_delta(z: Any, lam: Any, delta: Any = 0, *, loss: Any = "abs",
                     fixed: bool = True, solver: str = "exact", **deprecated: Any
                     ) -> tuple[Any, np.ndarray]:
    """The least count error ``<W, T>`` over ``F_delta[z]`` (or ``U_delta``), by LP on
    the lifted form.

    Parameters
    ----------
    z : the target (also the loss's row weights).
    lam, delta : rational for ``"exact"``; floats allowed for ``"highs"``.
    loss : ``"abs"``, ``"squared"`` or an ``n x n`` matrix ``W``.
    fixed : over ``F_delta[z]`` (True) or ``U_delta`` (False).
    solver : ``"exact"`` (cdd.gmp, a vertex of the lifted polytope; ``n`` up to
        about 6) or ``"highs"`` (scipy's HiGHS dual simplex, float, ``n`` up to about
        100; ``"highs-ds"`` and ``"highs-ipm"`` choose the HiGHS method).
    **deprecated : ``weights=`` (now ``loss=``) and ``method=`` (now ``solver=``),
        accepted with a ``DeprecationWarning``.

    Returns
    -------
    (value, T) : Fraction and exact ``T`` (``"exact"``), or float and float64 ``T``.

    Examples
    --------
    >>> value, T = lp_optimum_delta(["1/2", "1/2"], 2, "1/10")
    >>> value, T.tolist()
    (Fraction(3, 10), [[Fraction(7, 10), Fraction(3, 10)], [Fraction(3, 10), Fraction(7, 10)]])
    """
    loss = renamed("weights", "loss", deprecated, loss, "abs", where="lp_optimum_delta")
    solver = renamed("method", "solver", deprecated, solver, "exact", where="lp_optimum_delta")
    no_other(deprecated, "lp_optimum_delta")
    if solver == "exact":
        lam_x, delta_x = exact_lam(lam), check_delta(delta)
        zv = probability_vector(z, exact=True)
        n = len(zv)
        P = F_lifted(n, lam_x, zv, delta_x) if fixed else U_lifted(n, lam_x, delta_x)
        W = loss_matrix(zv, loss)
        C = np.vstack([-W, np.full((2 * n - 2, n), _ZERO, dtype=object)])
        value, X = P.maximize(C)
        return -value, project(X)
    if solver not in ("highs", "highs-ds", "highs-ipm"):
        raise ValueError(f"solver: use 'exact', 'highs', 'highs-ds' or 'highs-ipm', "
                         f"got {solver!r}")
    return _highs(z, float(lam), float(delta), loss, fixed,
                  "highs-ds" if solver == "highs" else solver)


def _highs(z: Any, lam: float, delta: float, loss: Any, fixed: bool, solver: str
           ) -> tuple[float, np.ndarray]:
    from scipy import sparse
    from scipy.optimize import linprog

    zv = np.asarray(probability_vector(z, exact=False), dtype=float)
    n = len(zv)
    W = np.asarray(loss_matrix(zv, loss), dtype=float)
    nt, m = n * n, 2 * (n - 1)
    rows, cols, vals = [], [], []
    r = 0
    for k, (a, b) in enumerate(ordered_pairs(n)):
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
                  method=solver, options={"primal_feasibility_tolerance": 1e-10,
                                          "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:
        raise RuntimeError(f"lp_optimum_delta: HiGHS did not solve the LP (n = {n}): "
                           f"{res.message}")
    return float(res.fun), res.x[:nt].reshape(n, n)



