"""Count-error optima by linear programming over ``F[z]`` or ``U``.

Paper Sections 5 and 6; docs/math_notes.md (HiGHS tolerances and presolve).

Minimise ``<W, T>`` over the ``n^2`` entries of ``T``: ``2n(n-1)`` neighbour
inequalities with two non-zeros each, ``n`` row sums and, over ``F``, ``n - 1``
fixed-point equalities (the ``n``-th follows from the others and the row sums,
since ``z`` sums to 1). :func:`lp_formulation` is that LP as written, for cdd's
exact LP (and :mod:`dpfix.certify`); HiGHS (dual simplex or interior point, via
:func:`scipy.optimize.linprog`) gets it in a reduced and rescaled form:

- over ``F[z]``, a column ``j`` with ``z_j = 0`` is zero (``sum_i z_i T[i, j]
  = 0`` empties it on the support of ``z``, its bounded ratios everywhere), so
  it is left out; the rows with ``z_i = 0`` stay (no weight, no fixed-point
  coefficient, but a row sum and ratio rows). Handed over whole, each pinned
  to 0 only through a chain of degenerate rows, they made HiGHS end "Unknown,
  primal infeasible", with presolve and without (2 of 200 random sparse
  targets, ``n < 10``, eps 0.01 to 10; 1 of 200 with the rescaling below);
- each ratio row ``T[a] <= lam T[b]`` is divided by ``lam``, so that no
  coefficient exceeds 1: with ``lam`` itself in the matrix HiGHS loses the
  optimum from eps of about 8 (count error 5e-8 off at 8, 1e-6 at 12, status
  "Unbounded" at 30) and refuses ``lam > 1e15`` ("Model error", eps > 34.5).

Divided, the coefficient ``1/lam`` must stay above the ``1e-9`` under which
HiGHS drops a matrix entry, and the optimum (about ``e^-eps`` at large eps)
above its ``1e-10`` tolerance: the HiGHS solvers take ``eps <=``
:data:`HIGHS_EPS_MAX` (20) and refuse larger eps with a ``ValueError``. Over
that range their count error is within about ``2.3e-10`` (absolute) of the
optimum (measured against Theorem A's northwest corner, ``n <= 12``), also at
tiny eps, where the optimum tends to ``z``-rows (every row ``z``) and its gain
over them, ``O(eps)``, falls under the tolerance once eps is below ``1e-9``.
The exact solver has no such range.

HiGHS answers within its tolerances: entries slightly below 0 and neighbour
ratios slightly above ``lam``. In an exact optimum every column is all zero or
all positive (each ratio is at most ``lam``), so an entry HiGHS rounds to 0 next
to a positive one is a positive number too small to represent; ratios, not
absolute sizes, are what the privacy check measures. The float result is
therefore repaired in log space and then verified:

1. clip negatives to 0;
2. replace each column ``v`` by its least eps-DP majorant
   ``u[i] = max_k v[k] lam^-|i-k|`` (exactly eps-DP; ``u - v`` is at most the
   absolute violation ``/ (lam - 1)``), rounding each step up so that the
   float log ratios are at most ``eps`` exactly;
3. divide each row by its sum, and take the majorant once more (the division
   moves the log ratios by about the LP's violations, which at ``eps = 1e-9``
   is a tenth of ``eps``; the rows stay within ``FLOAT_RTOL`` of 1).

The result must pass :meth:`Mechanism.check` (rows sum to 1, ``z T = z`` over
``F``, privacy level at most ``eps (1 + 1e-9)``), or ``RuntimeError`` is raised.
"""

from __future__ import annotations

import time
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from dpfix.numbers.deprecation import no_other, renamed
from dpfix.numbers.exact import probability_vector, resolve_lam
from dpfix.numbers.exact_lp import exact_lp
from dpfix.theory.mechanism import FLOAT_RTOL, Mechanism, weight_matrix

__all__ = ["LP_METHODS", "lp_formulation", "lp_optimum", "HIGHS_TOL", "HIGHS_EPS_MAX"]

LP_METHODS: tuple[str, ...] = ("highs-ds", "highs-ipm", "exact")
#: HiGHS primal and dual feasibility tolerance (its default is 1e-7).
HIGHS_TOL = 1e-10
#: The largest eps the HiGHS solvers take. Past it the ratio rows' coefficient
#: ``e^-eps`` nears the ``1e-9`` below which HiGHS drops a matrix entry (it does
#: past ``eps = 20.7``, and then solves the LP without any ratio constraint),
#: and the optimum, about ``e^-eps``, sinks under the ``1e-10`` tolerance.
#: Measured against Theorem A's optimum (northwest corner, n <= 12): within
#: 2.3e-10 up to eps = 20, 1.7e-9 (and 6e6 times the optimum) at eps = 21.
HIGHS_EPS_MAX = 20.0


def lp_formulation(n: int, lam: Any, z: Any = None) -> dict[str, Any]:
    """The LP's constraints in coordinate form, variable ``i*n + j`` for ``T[i, j]``.

    Returns a dict with ``ub`` and ``eq``: triples ``(rows, cols, vals)`` of
    ``A_ub x <= 0`` and ``A_eq x = b_eq``, and ``b_eq``. ``vals`` and ``b_eq``
    are object arrays of Fractions when ``lam`` and ``z`` are exact, else float.
    ``z=None`` gives ``U``; a target ``z`` gives ``F[z]``.

    Parameters
    ----------
    n : int
        The size.
    lam : int, Fraction or float
        ``e^eps``; a float gives float coefficients.
    z : array_like, optional
        The target (over ``F[z]``); None: ``U``.

    Returns
    -------
    dict
        ``ub`` and ``eq`` as coordinate triples, and ``b_eq``.

    Examples
    --------
    >>> f = lp_formulation(3, 2, ["1/3", "1/3", "1/3"])
    >>> len(f["ub"][0]) // 2, f["b_eq"].shape
    (12, (5,))
    """
    exact = not isinstance(lam, float)
    one = Fraction(1) if exact else 1.0
    # column j outer, i inner: rows 2k and 2k+1 bound T[i,j] / T[i+1,j] both ways
    a = (np.arange(n)[:, None] + n * np.arange(n - 1)[None, :]).ravel()
    b = a + n
    k = np.arange(a.size)
    ub_rows = np.concatenate([2 * k, 2 * k, 2 * k + 1, 2 * k + 1])
    ub_cols = np.concatenate([a, b, b, a])
    ones, lams = np.full(a.size, one, dtype=object), np.full(a.size, -lam, dtype=object)
    ub_vals = np.concatenate([ones, lams, ones, lams])
    eq_rows = [np.repeat(np.arange(n), n)]
    eq_cols = [np.arange(n * n)]
    eq_vals = [np.full(n * n, one, dtype=object)]
    b_eq = [np.full(n, one, dtype=object)]
    if z is not None:
        zv = np.asarray(z, dtype=object)
        pos = np.flatnonzero([v != 0 for v in zv])
        for j in range(n - 1):
            eq_rows.append(np.full(pos.size, n + j))
            eq_cols.append(pos * n + j)
            eq_vals.append(zv[pos])
        b_eq.append(zv[: n - 1])
    out = {
        "ub": (ub_rows, ub_cols, ub_vals),
        "eq": (np.concatenate(eq_rows), np.concatenate(eq_cols), np.concatenate(eq_vals)),
        "b_eq": np.concatenate(b_eq),
    }
    if not exact:
        out["ub"] = (ub_rows, ub_cols, ub_vals.astype(float))
        out["eq"] = (*out["eq"][:2], out["eq"][2].astype(float))
        out["b_eq"] = out["b_eq"].astype(float)
    return out


def _float_problem(lam: float, z: np.ndarray | None, cols: np.ndarray
                   ) -> tuple[sparse.csr_matrix, sparse.csr_matrix, np.ndarray]:
    """The float LP over the columns ``cols`` of ``T`` (variable ``i * k + c``).

    Over ``F[z]``, ``cols`` is the support of ``z``: a column ``j`` with
    ``z_j = 0`` has ``sum_i z_i T[i, j] = 0``, so it is 0 on every row with
    ``z_i > 0`` and, its neighbour ratios being bounded, on every row. Those
    columns are left out rather than handed to HiGHS as ``n`` variables pinned
    to 0 through a chain of ratio rows. Rows with ``z_i = 0`` stay: they carry
    no weight and no fixed-point coefficient but keep their row sum and ratio
    rows. Of the ``k`` fixed-point rows the last is dropped (it follows from
    the others and the row sums). ``z=None``: ``U``, ``cols`` all columns.
    """
    n, k = (len(z) if z is not None else int(cols.size)), int(cols.size)
    a = np.arange((n - 1) * k)  # T[i, c] for i < n - 1, row-major
    b = a + k  # T[i + 1, c]
    r = np.arange(a.size)
    rows = np.concatenate([2 * r, 2 * r, 2 * r + 1, 2 * r + 1])
    vcols = np.concatenate([a, b, b, a])
    # T[a] <= lam T[b] as T[a] / lam - T[b] <= 0: coefficients at most 1. With
    # (1, -lam) HiGHS' own scaling loses the optimum past eps ~ 8 (count error
    # 5e-8 off at eps = 8, 1e-6 at 12, Model error once lam > 1e15); divided,
    # within 2.3e-10 up to eps = 20 (docs in lp_optimum).
    vals = np.repeat([1.0 / lam, -1.0, 1.0 / lam, -1.0], a.size)
    A_ub = sparse.csr_matrix((vals, (rows, vcols)), shape=(2 * a.size, n * k))
    eq_rows, eq_cols, eq_vals = [np.repeat(np.arange(n), k)], [np.arange(n * k)], [np.ones(n * k)]
    b_eq = [np.ones(n)]
    if z is not None:
        pos = np.flatnonzero(z > 0)
        for c in range(k - 1):
            eq_rows.append(np.full(pos.size, n + c))
            eq_cols.append(pos * k + c)
            eq_vals.append(z[pos])
        b_eq.append(z[cols[:-1]])
    b = np.concatenate(b_eq)
    A_eq = sparse.csr_matrix((np.concatenate(eq_vals),
                              (np.concatenate(eq_rows), np.concatenate(eq_cols))),
                             shape=(b.size, n * k))
    return A_ub, A_eq, b


def _solve_exact(f: dict[str, Any], c: np.ndarray) -> tuple[list[Fraction], Any, str]:
    """:func:`lp_formulation`'s LP, exactly (:func:`dpfix.numbers.exact_lp.exact_lp`)."""
    zero = Fraction(0)
    eq: list[tuple[dict[int, Any], Any]] = [({}, b) for b in f["b_eq"]]
    for r, col, v in zip(*f["eq"], strict=True):
        eq[r][0][int(col)] = v
    r_ub = f["ub"][0]
    ub: list[tuple[dict[int, Any], Any]] = [
        ({}, zero) for _ in range(int(r_ub.max()) + 1 if r_ub.size else 0)]
    for r, col, v in zip(*f["ub"], strict=True):
        ub[r][0][int(col)] = v
    lp = exact_lp(c.tolist(), ub, eq, who="lp_optimum")
    return lp.primal, lp.optimum, lp.status


def _majorant(L: np.ndarray, eps: float) -> None:
    """In place: each column of ``log T`` raised to its least eps-DP majorant.

    ``u[i] = max_k v[k] - eps |i - k|`` by a forward and a backward pass. A
    step ``L[k] - eps`` that rounds down is moved up to the next float, so the
    float difference :meth:`Mechanism.privacy_level` takes is at most ``eps``
    exactly: rounding to nearest leaves up to half an ulp of ``log T``
    (``1e-16``), which is ``1e-7 eps`` at ``eps = 1e-9``, past the check's
    relative ``FLOAT_RTOL``.
    """
    def step(prev: np.ndarray) -> np.ndarray:
        cand = prev - eps
        with np.errstate(invalid="ignore"):  # -inf - -inf: a zero stays zero
            for _ in range(3):  # one move up suffices but at a binade boundary
                low = prev - cand > eps
                if not low.any():
                    break
                cand[low] = np.nextafter(cand[low], np.inf)
        return cand

    for i in range(1, L.shape[0]):
        np.maximum(L[i], step(L[i - 1]), out=L[i])
    for i in range(L.shape[0] - 2, -1, -1):
        np.maximum(L[i], step(L[i + 1]), out=L[i])


def _repair(X: np.ndarray, eps: float) -> np.ndarray:
    """``log T`` after clipping, the least eps-DP column majorant and row normalisation.

    The normalisation moves the neighbour log ratios by the log ratio of two
    row sums (about the LP's violations, 1e-10, a tenth of ``eps = 1e-9``), so
    the majorant is taken once more after it; that raises entries by about
    the same relative amount and leaves the rows within ``FLOAT_RTOL`` of 1.
    """
    with np.errstate(divide="ignore"):
        L = np.log(np.clip(X, 0.0, None))
    _majorant(L, eps)
    top = L.max(axis=1, keepdims=True)
    L = L - (top + np.log(np.exp(L - top).sum(axis=1, keepdims=True)))
    _majorant(L, eps)
    return L


def _violations(X: np.ndarray, lam: float, z: np.ndarray | None) -> dict[str, float]:
    """Absolute constraint violations of a raw LP solution."""
    dp = np.maximum(X[:-1] - lam * X[1:], X[1:] - lam * X[:-1])
    out = {"min_entry": float(X.min()), "dp_violation": float(max(dp.max(initial=0.0), 0.0)),
           "row_sum_error": float(np.abs(X.sum(axis=1) - 1).max())}
    if z is not None:
        out["fixed_point_error"] = float(np.abs(z @ X - z).max())
    return out


def _with_delta(z: Any, eps: Any, lam: Any, loss: Any, fixed: bool, solver: str,
                delta: Any, start: float) -> Mechanism:
    """:func:`lp_optimum` with ``delta > 0``: the lifted LP of :mod:`dpfix.constructors.delta`."""
    from dpfix.constructors.delta import lp_optimum_delta
    from dpfix.theory.delta import is_approximately_dp
    from dpfix.theory.polytopes import check_delta

    lam_x, eps_f = resolve_lam(eps, lam)
    exact = solver == "exact"
    if exact and lam_x is None:
        raise ValueError("solver='exact' needs a rational lam (e.g. lam=2), not eps")
    d = check_delta(delta) if exact else float(delta)
    if not 0 <= d < 1:
        raise ValueError(f"delta: must satisfy 0 <= delta < 1, got {delta}")
    zv = probability_vector(z, exact=exact)
    W = weight_matrix(loss, zv)
    params: dict[str, Any] = {"solver": solver, "fixed": fixed, "delta": d,
                              "loss": loss if isinstance(loss, str) else "matrix"}
    if exact:
        value, T = lp_optimum_delta(zv, lam_x, d, loss=W, fixed=fixed, solver="exact")
        if not is_approximately_dp(T, lam_x, d):
            raise RuntimeError("lp_optimum: the exact optimum is not (eps, delta)-DP")
        params.update(status="OPTIMAL", message="cdd.gmp, lifted form", objective=value)
        mech = Mechanism(matrix=T, eps=eps_f, lam=lam_x, delta=float(d),
                         fixed_point=zv if fixed else None, constructor="lp", params=params)
    else:
        lam_f = float(np.exp(eps_f)) if lam_x is None else float(lam_x)
        value, X = lp_optimum_delta(zv, lam_f, d, loss=W, fixed=fixed, solver=solver)
        X = np.clip(X, 0.0, None)
        X /= X.sum(axis=1, keepdims=True)
        budget = max(np.maximum(X[a] - lam_f * X[b], 0).sum()
                     for i in range(len(zv) - 1) for a, b in ((i, i + 1), (i + 1, i)))
        params.update(status=0, objective=value, budget_violation=float(max(budget - d, 0)))
        if budget > d + FLOAT_RTOL:
            raise RuntimeError(f"lp_optimum: the HiGHS solution spends {budget} > delta {d}")
        with np.errstate(divide="ignore"):
            mech = Mechanism(log_matrix=np.log(X), eps=eps_f, delta=d,
                             fixed_point=zv if fixed else None, constructor="lp",
                             params=params)
    mech.check(rtol=FLOAT_RTOL)
    mech.build_seconds = time.perf_counter() - start
    return mech


def lp_optimum(z: Any, eps: float | None = None, *, lam: Any = None, loss: Any = "abs",
               fixed: bool = True, solver: str = "highs-ds",
               time_limit: float | None = None, options: dict | None = None,
               delta: Any = 0, **deprecated: Any) -> Mechanism:
    """The least count error ``<W, T>`` over ``F[z]`` (``fixed=True``) or ``U``, by LP.

    Parameters
    ----------
    z : target distribution (length ``n``); exact numbers for ``solver="exact"``.
    eps, lam : float ``eps``, or rational ``lam = e^eps`` (required by ``"exact"``;
        the HiGHS solvers use ``float(lam)``).
    loss : ``"abs"``, ``"squared"`` or an ``n x n`` matrix ``W`` (paper Section 1.1).
    fixed : optimise over ``F[z]`` (True) or ``U`` (False).
    solver : ``"highs-ds"`` (dual simplex), ``"highs-ipm"`` (interior point) or
        ``"exact"`` (cdd.gmp, rational arithmetic; small ``n`` only).
    time_limit : seconds for HiGHS (None: no limit; ignored with ``delta``).
    options : further HiGHS options for :func:`scipy.optimize.linprog` (e.g.
        ``{"simplex_dual_edge_weight_strategy": "dantzig"}``), applied over the
        defaults (feasibility tolerances ``HIGHS_TOL``; HiGHS's own 1e-7 lets the
        objective drop about 1e-6 relative at ``n = 60`` by violating constraints).

    delta : the ``delta`` of (eps, delta)-DP (default 0: eps-DP). Positive: the optimum
        over ``F_delta[z]`` (or ``U_delta``) of :mod:`dpfix.theory.delta`, on its lifted
        form; rational for ``"exact"``, where its value is the delta-northwest
        corner's (Theorem A_delta, docs/open_questions.md section 5). The result has
        ``delta`` set and is checked for (eps, delta)-DP (to ``1e-9`` for HiGHS).
    **deprecated : ``weights=`` (now ``loss=``) and ``method=`` (now ``solver=``),
        accepted with a ``DeprecationWarning``.

    Returns
    -------
    Mechanism
        ``constructor="lp"``; exact for ``"exact"``, float (log space) for
        HiGHS. ``params`` holds the solver, its status, message and
        objective; for HiGHS also the raw solution's violations, the count
        error after the repair described in the module docstring, and
        ``zero_columns`` (columns with ``z_j = 0``, left out of the LP).

    Raises
    ------
    ValueError
        Unknown solver, ``"exact"`` without rational ``lam`` and ``z``, or a
        HiGHS solver at ``eps >`` :data:`HIGHS_EPS_MAX` (the module docstring
        says why).
    RuntimeError
        The solver fails (or hits ``time_limit``), or its solution cannot be
        made valid to ``1e-9``.
    TypeError
        A new name and its deprecated alias given at once, or an unknown keyword.

    Examples
    --------
    >>> M = lp_optimum(["1/2", "1/2"], lam=2, solver="exact")
    >>> M.matrix.tolist(), M.params["objective"]
    ([[Fraction(2, 3), Fraction(1, 3)], [Fraction(1, 3), Fraction(2, 3)]], Fraction(1, 3))
    >>> round(float(lp_optimum([0.5, 0.5], eps=float(np.log(2))).params["objective"]), 12)
    0.333333333333
    """
    start = time.perf_counter()
    loss = renamed("weights", "loss", deprecated, loss, "abs", where="lp_optimum")
    solver = renamed("method", "solver", deprecated, solver, "highs-ds", where="lp_optimum")
    no_other(deprecated, "lp_optimum")
    if solver not in LP_METHODS:
        raise ValueError(f"solver: unknown {solver!r}; use one of {', '.join(LP_METHODS)}")
    if delta:
        return _with_delta(z, eps, lam, loss, fixed, solver, delta, start)
    lam_x, eps_f = resolve_lam(eps, lam)
    if solver == "exact" and lam_x is None:
        raise ValueError("solver='exact' needs a rational lam (e.g. lam=2), not eps")
    zv = probability_vector(z, exact=solver == "exact")
    n = zv.shape[0]
    W = weight_matrix(loss, zv)
    params: dict[str, Any] = {"solver": solver, "fixed": fixed,
                              "loss": loss if isinstance(loss, str) else "matrix"}
    if solver == "exact":
        f = lp_formulation(n, lam_x, zv if fixed else None)
        x, value, status = _solve_exact(f, W.ravel())
        T = np.array(x, dtype=object).reshape(n, n)
        params.update(status=status, message="cdd.gmp dual simplex", objective=value)
        mech = Mechanism(matrix=T, eps=eps_f, lam=lam_x, fixed_point=zv if fixed else None,
                         constructor="lp", params=params)
        mech.check()
        if (W * T).sum() != value:
            raise RuntimeError(f"lp_optimum: cdd's value {value} != <W, T> = {(W * T).sum()}")
    else:
        if eps_f > HIGHS_EPS_MAX:
            raise ValueError(f"eps: the HiGHS LP is usable for eps <= {HIGHS_EPS_MAX:g}, got "
                             f"{eps_f:g} (its ratio coefficient e^-eps falls under HiGHS' "
                             "1e-9 entry floor); use solver='exact' with a rational lam, or "
                             "the northwest corner (optimal for convex losses)")
        lam_f = float(np.exp(eps_f)) if lam_x is None else float(lam_x)
        cols = np.flatnonzero(zv > 0) if fixed else np.arange(n)
        A_ub, A_eq, b_eq = _float_problem(lam_f, zv if fixed else None, cols)
        c = np.asarray(W, dtype=float)[:, cols].ravel()
        highs: dict[str, Any] = {"primal_feasibility_tolerance": HIGHS_TOL,
                                 "dual_feasibility_tolerance": HIGHS_TOL}
        if time_limit is not None:
            highs["time_limit"] = float(time_limit)
        highs.update(options or {})

        def solve(opts: dict[str, Any]) -> Any:
            return linprog(c, A_ub=A_ub, b_ub=np.zeros(A_ub.shape[0]), A_eq=A_eq, b_eq=b_eq,
                           bounds=(0, None), method=solver, options=opts)

        res = solve(highs)
        # HiGHS' presolve has reported "Unknown", infeasible or a solve error on
        # some targets with tiny entries, where the same LP then solves without
        # presolve. A time or iteration limit (status 1) is not retried.
        params["presolve_retry"] = res.status not in (0, 1) and highs.get("presolve", True)
        if params["presolve_retry"]:
            params["first_attempt"] = str(res.message)
            res = solve({**highs, "presolve": False})
        params.update(status=int(res.status), message=str(res.message),
                      objective=float(res.fun) if res.x is not None else None,
                      zero_columns=int(n - cols.size))
        if res.status != 0 or res.x is None:
            raise RuntimeError(f"lp_optimum: HiGHS {solver} did not solve the LP "
                               f"(n = {n}): {res.message}")
        X = np.zeros((n, n))
        X[:, cols] = res.x.reshape(n, cols.size)
        params["raw_violations"] = _violations(X, lam_f, zv if fixed else None)
        mech = Mechanism(log_matrix=_repair(X, eps_f), eps=eps_f,
                         fixed_point=zv if fixed else None, constructor="lp",
                         params=params)
        try:
            mech.check(rtol=FLOAT_RTOL)
        except ValueError as err:
            raise RuntimeError(f"lp_optimum: the HiGHS {solver} solution cannot be made "
                               f"valid to {FLOAT_RTOL}: {err}") from None
        params["count_error"] = float(mech.count_error(zv, W))
    mech.build_seconds = time.perf_counter() - start
    return mech
