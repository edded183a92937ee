"""Algorithm 2: the two-stage unfixed optimum (paper Section 5.3; docs/math_notes.md).

The truncated geometric mechanism is ``Sigma diag(alpha)``: its column ``m`` is
the single-peaked scale at ``m`` times the amount ``alpha_m``, where
``Sigma alpha = 1``. Algorithm 2 re-maps each of those columns to the output
``g(m)`` of least cost ``W[:, g]^T s_m`` (Ghosh et al.'s post-processing), so
column ``g`` of the result is the sum of the geometric columns mapped to it.
For a row-wise concentrating weight matrix the result minimises ``<W, T>`` over
``U`` (Theorems 8 and 12); row-wise convexity makes ``g`` non-decreasing and
found by one forward sweep (Lemma 9), ``O(n^2)`` in all.

Note (checked exactly, see ``tests/test_unfixed.py``): convexity alone is not
enough for optimality; a row-wise convex ``W`` whose row ``i`` is not smallest
at column ``i`` can have ``<W, T>`` above the LP optimum over ``U``. Both
properties are therefore required, as the paper's examples (absolute and
squared deviation) have.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.numbers.deprecation import no_other, renamed, renamed_keywords
from dpfix.numbers.exact import probability_vector, resolve_lam
from dpfix.numbers.numeric import geometric_amounts, log_add_exp
from dpfix.theory.mechanism import Mechanism, weight_matrix
from dpfix.theory.scales import single_peaked

__all__ = ["sigma_amounts", "check_weights", "placement", "named_diff", "unfixed_optimum",
           "log_side_sums"]

#: Relative tolerance of float comparisons of costs: a next column within this
#: of the current one counts as "no worse" (ties go forward, as in exact arithmetic).
COST_TIE_RTOL = 1e-12
#: Tolerance of the float checks of row-wise convexity and concentration,
#: relative to the largest ``|W|`` of the row.
SHAPE_RTOL = 1e-12


def sigma_amounts(n: int, lam: Any = None, *, eps: float | None = None) -> np.ndarray:
    """The amounts ``alpha`` with ``Sigma alpha = 1`` (paper Section 5.3), in closed form.

    ``alpha_m = Z_m (K^-1 1)_m`` with ``Z_m = sum_i rho^|i-m|`` and ``rho = 1/lam``:
    ``alpha_m = (1 - rho^n) / (1 - rho^2)`` at the ends ``m = 0, n-1`` and
    ``((1 - rho^(m+1)) + rho (1 - rho^(n-m-1))) / (1 + rho)`` inside. Exact for a
    rational ``lam``; in floats every difference is an ``expm1``, so no
    cancellation for small ``eps`` and no overflow for large ``n * eps``.

    Parameters
    ----------
    n : int
        The size (``n >= 1``).
    lam, eps
        A rational ``lam = e^eps`` (exact amounts; a real algebraic ``lam``,
        :func:`dpfix.algebraic`, gives them in ``Q(lam)``) or a float ``eps`` (float64).

    Returns
    -------
    numpy.ndarray
        ``n`` amounts: Fractions (exact) or float64.

    Raises
    ------
    ValueError
        ``n < 1``, or ``lam``/``eps`` refused by :func:`dpfix.numbers.exact.resolve_lam`.

    Examples
    --------
    >>> sigma_amounts(3, 2).tolist()
    [Fraction(7, 6), Fraction(2, 3), Fraction(7, 6)]
    """
    if n < 1:
        raise ValueError(f"n: must be >= 1, got {n}")
    lam_x, eps_f = resolve_lam(eps, lam, algebraic=True)
    if lam_x is not None:
        rho = 1 / lam_x
        Z = [(1 + rho - rho ** (m + 1) - rho ** (n - m)) / (1 - rho) for m in range(n)]
        return np.array([a * b for a, b in zip(Z, geometric_amounts(n, rho), strict=True)],
                        dtype=object)
    if n == 1:
        return np.ones(1)
    rho = math.exp(-eps_f)
    m = np.arange(n)
    out = (-np.expm1(-(m + 1) * eps_f) - rho * np.expm1(-(n - m - 1) * eps_f)) / (1 + rho)
    out[0] = out[-1] = math.expm1(-n * eps_f) / math.expm1(-2 * eps_f)
    return out


def check_weights(W: np.ndarray) -> None:
    """Raise ``ValueError`` unless every row of ``W`` is convex and smallest on the diagonal.

    Row-wise convex: ``W[i, j+1] - W[i, j]`` non-decreasing in ``j``; row-wise
    concentrating: ``W[i, j]`` non-decreasing in ``|i - j|`` (for a convex row:
    column ``i`` is a minimum). Exact for exact ``W``; floats within
    ``SHAPE_RTOL`` of the row's largest ``|W|``.

    Parameters
    ----------
    W : numpy.ndarray
        ``n x n`` loss matrix, exact (object array) or float.

    Raises
    ------
    ValueError
        The message names the first row that is not convex, or not concentrating.

    Examples
    --------
    >>> check_weights(np.array([[0, 1], [1, 0]]))
    >>> check_weights(np.array([[0, 2, 3], [1, 0, 1], [0, 0, 0]]))
    Traceback (most recent call last):
    ...
    ValueError: loss: row 0 is not convex: W[0, j+1] - W[0, j] decreases at j = 1
    """
    n = W.shape[0]
    exact = W.dtype == object
    for i in range(n):
        row = W[i]
        tol = 0 if exact else SHAPE_RTOL * float(np.max(np.abs(row), initial=0.0))
        d = row[1:] - row[:-1]
        bad = [j for j in range(n - 2) if d[j + 1] - d[j] < -tol]
        if bad:
            raise ValueError(f"loss: row {i} is not convex: "
                             f"W[{i}, j+1] - W[{i}, j] decreases at j = {bad[0]}")
        up = [j for j in range(i) if d[j] > tol] + [j for j in range(i, n - 1) if d[j] < -tol]
        if up:
            raise ValueError(f"loss: row {i} is not concentrating (W[{i}, j] must not "
                             f"decrease away from column {i}; it does between columns "
                             f"{up[0]} and {up[0] + 1}); Algorithm 2 is optimal only then")


def log_side_sums(v: Any, eps: float, *, logs: bool = False) -> tuple[list[float], list[float]]:
    """Logs of the side sums ``L[m] = sum_{i<=m} v_i rho^(m-i)`` and
    ``R[m] = sum_{i>m} v_i rho^(i-m)``, ``rho = e^-eps``.

    By the recursions ``L[m] = rho L[m-1] + v_m``, ``R[m] = rho (v_{m+1} + R[m+1])``,
    in log space so that long runs of zeros do not underflow; ``L[m] + R[m]`` is
    ``sum_i v_i rho^|i-m|``, the ``z . s_m`` of Algorithm 2 (paper Section 5.3) up to
    the scale's normalisation. Shared with :mod:`dpfix.constructors.northwest`.

    Parameters
    ----------
    v : array_like
        Non-negative floats, or their natural logs when ``logs``.
    eps : float
        ``eps > 0``.
    logs : bool
        ``v`` holds ``log v`` (``-inf`` for 0).

    Returns
    -------
    (list of float, list of float)
        ``log L`` and ``log R`` (``-inf`` for an empty or zero sum).

    Examples
    --------
    >>> L, R = log_side_sums(np.array([1.0, 1.0]), math.log(2))
    >>> [round(math.exp(x), 12) for x in L + R]
    [1.0, 1.5, 0.5, 0.0]
    """
    if logs:
        lv = [float(x) for x in v]
    else:
        with np.errstate(divide="ignore"):
            lv = np.log(v).tolist()
    n = len(lv)
    L, R = [0.0] * n, [0.0] * n
    acc = -math.inf
    for m in range(n):
        acc = log_add_exp(acc - eps, lv[m])
        L[m] = acc
    acc = -math.inf
    for m in range(n - 1, -1, -1):
        R[m] = acc
        acc = log_add_exp(acc, lv[m]) - eps
    return L, R


@renamed_keywords(weights="loss")
def named_diff(z: np.ndarray, eps: float, loss: str):
    """``D(m, g) / S(m)`` for ``"abs"`` and ``"squared"`` in floats, ``O(1)`` per call.

    ``D(m, g) = sum_i (W[i, g+1] - W[i, g]) rho^|i-m|`` is the cost change of
    moving the scale at ``m`` from column ``g`` to ``g+1`` (up to the positive
    factor ``1/Z_m``); ``S(m) = sum_i z_i rho^|i-m|``. abs: ``D = 2 A - S`` with
    ``A = sum_{i<=g} z_i rho^|i-m|``; squared: ``D = (2g+1) S - 2 sum_i i z_i rho^|i-m|``.
    """
    L, R = log_side_sums(z, eps)
    logS = [log_add_exp(a, b) for a, b in zip(L, R, strict=True)]
    if loss == "abs":
        def diff(m: int, g: int) -> tuple[float, float]:
            if logS[m] == -math.inf:
                return 0.0, 0.0
            if g < m:
                frac = math.exp(L[g] - eps * (m - g) - logS[m])
            else:
                frac = -math.expm1(R[g] - eps * (g - m) - logS[m])
            return 2 * frac - 1, 1.0
        return diff
    L1, R1 = log_side_sums(z * np.arange(len(z)), eps)
    mean = [math.exp(log_add_exp(a, b) - s) if s > -math.inf else 0.0
            for a, b, s in zip(L1, R1, logS, strict=True)]

    def diff_sq(m: int, g: int) -> tuple[float, float]:
        return (2 * g + 1) - 2 * mean[m], (2 * g + 1) + 2 * mean[m]
    return diff_sq


def _matrix_diff(W: np.ndarray, lam_x: Fraction | None, eps: float):
    """``D(m, g)`` for a given matrix: exact, or in floats scaled by its largest term."""
    dW = W[:, 1:] - W[:, :-1]
    n = W.shape[0]
    idx = np.arange(n)
    if lam_x is not None:
        rho = 1 / lam_x
        powers = [rho ** k for k in range(n)]

        def diff_exact(m: int, g: int) -> tuple[Fraction, int]:
            return sum((dW[i, g] * powers[abs(i - m)] for i in range(n)), Fraction(0)), 0
        return diff_exact
    with np.errstate(divide="ignore"):
        logd = np.log(np.abs(dW))
    sign = np.sign(dW)

    def diff_float(m: int, g: int) -> tuple[float, float]:
        t = logd[:, g] - eps * np.abs(idx - m)
        top = t.max()
        if top == -np.inf:
            return 0.0, 0.0
        w = np.exp(t - top)
        return float((sign[:, g] * w).sum()), float(w.sum())
    return diff_float


def placement(diff, n: int) -> list[int]:
    """The forward sweep of Algorithm 2: ``g(m)`` for ``m = 0..n-1``.

    ``diff(m, g)`` returns ``(D, scale)``, ``D`` the cost change of moving scale
    ``m`` from column ``g`` to ``g+1``; the sweep moves while ``D <= COST_TIE_RTOL *
    scale`` (exact ``D <= 0`` when ``scale`` is 0), so each ``g(m)`` is the largest
    minimiser of a convex cost, and ``g`` is non-decreasing.

    Parameters
    ----------
    diff : callable
        ``diff(m, g) -> (D, scale)``.
    n : int
        The size.

    Returns
    -------
    list of int
        ``g(0) <= g(1) <= ... <= g(n-1)``.

    Examples
    --------
    >>> placement(lambda m, g: (2 * (g - m) + 1, 0), 3)  # cost (g - m)^2
    [0, 1, 2]
    """
    g, out = 0, []
    for m in range(n):
        while g < n - 1:
            d, scale = diff(m, g)
            if d > (COST_TIE_RTOL * scale if scale else 0):  # exact D: compared with 0 exactly
                break
            g += 1
        out.append(g)
    return out


def _exact_placement(g: list[int], n: int, lam: Fraction) -> np.ndarray:
    """Column ``g`` is ``sum_{m : g(m) = g} alpha_m s_m`` (direct sums of Fractions)."""
    alpha = sigma_amounts(n, lam)
    T = np.full((n, n), Fraction(0), dtype=object)
    for m in range(n):
        T[:, g[m]] += alpha[m] * single_peaked(m, n, lam)
    return T


def _log_matrix(g: list[int], n: int, eps: float) -> np.ndarray:
    """``log T`` from closed-form geometric sums; ``O(n^2)``, no overflow or underflow.

    The geometric column ``m`` is ``c_m rho^|i-m|`` with ``c_m = (1-rho)/(1+rho)``
    inside and ``1/(1+rho)`` at the ends. For the block ``[a, b]`` of scales placed
    in a column, ``Lf(a, e) = sum_{m=a}^e c_m rho^(m-a)`` and
    ``Rt(a, e) = sum_{m=a}^e c_m rho^(e-m)`` are ``((1 - rho^k) + end terms) / (1+rho)``,
    ``k = e-a+1``; then the column is ``rho^(a-i) Lf(a, b)`` above the block,
    ``rho^(i-b) Rt(a, b)`` below it and ``Rt(a, i) + rho Lf(i+1, b)`` inside. As
    ``g`` is non-decreasing, row ``i`` lies below every block left of column
    ``g(i)`` and above every block right of it, so each row is two shifted copies
    of a per-column vector. Entries carry an absolute log error of about
    ``n * eps * 1e-16``.
    """
    if n == 1:
        return np.zeros((1, 1))
    rho = math.exp(-eps)

    def sums(a: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        k = e - a + 1
        base = -np.expm1(-k * eps)
        rk = np.exp(-k * eps)
        lf = base + np.where(a == 0, rho, 0.0) + np.where(e == n - 1, rk, 0.0)
        rt = base + np.where(a == 0, rk, 0.0) + np.where(e == n - 1, rho, 0.0)
        return lf / (1 + rho), rt / (1 + rho)

    gv = np.asarray(g)
    used = np.unique(gv)
    first = np.searchsorted(gv, used, side="left")
    last = np.searchsorted(gv, used, side="right") - 1
    lf, rt = sums(first, last)
    above = np.full(n, -np.inf)  # log T[i, col] = above[col] + eps * i for i < a
    below = np.full(n, -np.inf)  # log T[i, col] = below[col] - eps * i for i > b
    above[used] = np.log(lf) - eps * first
    below[used] = np.log(rt) + eps * last
    i = np.arange(n)
    a_i, b_i = first[np.searchsorted(used, gv)], last[np.searchsorted(used, gv)]
    _, rt_in = sums(a_i, i)
    lf_in, _ = sums(np.minimum(i + 1, n - 1), b_i)
    lf_in[i == b_i] = 0.0
    inside = np.log(rt_in + rho * lf_in)
    LT = np.empty((n, n))
    for r in range(n):
        c = g[r]
        np.subtract(below[:c], eps * r, out=LT[r, :c])
        np.add(above[c + 1:], eps * r, out=LT[r, c + 1:])
        LT[r, c] = inside[r]
    return LT


def unfixed_optimum(z: Any, eps: float | None = None, *, lam: Any = None,
                    loss: Any = "abs", check: bool = True, **deprecated: Any) -> Mechanism:
    """Algorithm 2: the mechanism in ``U`` of least count error ``<W, T>`` (Theorems 7, 8, 12).

    Parameters
    ----------
    z : the (privatized) distribution of counts, length ``n``; exact numbers
        with ``lam``, floats (or exact numbers) with ``eps``.
    eps, lam : float ``eps`` (float path, entries in log space) or rational
        ``lam = e^eps`` (exact path, Fractions); a real algebraic ``lam``
        (:func:`dpfix.algebraic`) gives the exact matrix over ``Q(lam)``, for the
        checks there (:func:`dpfix.constructors.construct` takes rationals only).
    loss : ``"abs"`` (``z_i |i-j|``), ``"squared"`` (``z_i (i-j)^2``) or an
        ``n x n`` matrix ``W`` that is row-wise convex and row-wise concentrating.
    check : on the float path, run :meth:`Mechanism.check` (rows sum to 1 and
        eps-DP within ``FLOAT_RTOL``) before returning; an ``O(n^2)`` pass.
    **deprecated : ``weights=`` (now ``loss=``), with a ``DeprecationWarning``.

    Returns
    -------
    Mechanism
        ``constructor="unfixed"``, ``fixed_point=None``; ``params`` holds
        the placement ``g`` (scale ``m`` went to column ``g[m]``) and the number of
        cost comparisons made (at most ``2n - 1``, each ``O(n)``: Theorem 7).

    Raises
    ------
    ValueError
        On a bad ``z`` or a loss matrix that is not row-wise convex and concentrating.
    TypeError
        ``loss=`` and ``weights=`` given at once, or an unknown keyword.

    Examples
    --------
    >>> M = unfixed_optimum(["1/2", "0", "1/2"], lam=2)
    >>> M.params["placement"], M.count_error(["1/2", "0", "1/2"])
    ((0, 2, 2), Fraction(1, 2))
    >>> unfixed_optimum([0.5, 0.0, 0.5], eps=float(np.log(2))).params["placement"]
    (0, 2, 2)
    """
    start = time.perf_counter()
    loss = renamed("weights", "loss", deprecated, loss, "abs", where="unfixed_optimum")
    no_other(deprecated, "unfixed_optimum")
    lam_x, eps_f = resolve_lam(eps, lam, algebraic=True)
    zv = probability_vector(z, exact=lam_x is not None)
    n = zv.shape[0]
    named = isinstance(loss, str)
    if named and lam_x is None and loss in ("abs", "squared"):
        diff = named_diff(zv, eps_f, loss)
    else:
        W = weight_matrix(loss, zv)
        check_weights(W)
        diff = _matrix_diff(W, lam_x, eps_f)
    calls = [0]

    def counted(m: int, col: int):
        calls[0] += 1
        return diff(m, col)
    g = placement(counted, n)
    params = {"loss": loss if named else "matrix", "placement": tuple(g),
              "columns_used": len(set(g)), "cost_evaluations": calls[0]}
    if lam_x is not None:
        mech = Mechanism(matrix=_exact_placement(g, n, lam_x), eps=eps_f, lam=lam_x,
                         constructor="unfixed", params=params)
    else:
        mech = Mechanism(log_matrix=_log_matrix(g, n, eps_f), eps=eps_f,
                         constructor="unfixed", params=params)
        if check:
            mech.check()
    mech.build_seconds = time.perf_counter() - start
    return mech
