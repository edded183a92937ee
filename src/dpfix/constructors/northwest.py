"""The northwest-corner split of the geometric mechanism: an optimum of F (Theorem A).

A mechanism ``T = Sigma A`` with ``A >= 0`` (``Sigma``: the single-peaked scales)
is eps-DP by construction, and it lies in F iff ``A 1 = alpha`` (``Sigma alpha
= 1``) and ``w A = z`` (``w_m = z . s_m``). With ``X[m, j] = w_m A[m, j]`` this
is a transportation problem: supplies ``w_m alpha_m`` (summing to 1), demands
``z_j``, unit cost the expected ``f(I_m - j)`` with ``I_m ~ z_i s_m[i] / w_m``.
The ``I_m`` increase in the likelihood-ratio order, so for ``W[i, j] = z_i
f(i - j)`` with ``f`` convex the cost is Monge and the northwest-corner plan
is optimal among these mechanisms (proved). Equivalently ``T = G R``: the
truncated geometric mechanism ``G = Sigma diag(alpha)`` followed by the
monotone, z-preserving remapping ``R`` that spreads scale ``m`` over columns
consecutive among those with ``z_j > 0`` (columns with ``z_j = 0`` get nothing:
for ``z = (1/2, 0, 1/2)`` a scale is split over columns 0 and 2). It is an
optimum over all of F for every Monge cost, so for
every convex loss at once (Theorem A of docs/optimum_of_F.md, proved: the
northwest corner has the largest joint CDF in F), which answers the paper's
open question of Section 7 for convex losses; for non-convex losses (zero-one,
capped, ``sqrt|d|``) it is not optimal in general (same page, section 5).
"""

from __future__ import annotations

import math
import time
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.constructors.unfixed import log_side_sums, sigma_amounts
from dpfix.numbers.exact import probability_vector, resolve_lam
from dpfix.numbers.numeric import log_add_exp, log_geometric_amounts
from dpfix.theory.mechanism import Mechanism
from dpfix.theory.scales import sigma

__all__ = ["northwest_corner", "northwest_plan"]

_CLAIM = ("least count error over F for every Monge cost, in particular z_i f(i - j) with "
          "f convex (Theorem A, docs/optimum_of_F.md: proved); not in general for "
          "non-convex losses")


def northwest_plan(supply: Any, demand: Any) -> list[tuple[int, int, Any]]:
    """The northwest-corner plan as pieces ``(m, j, r)``: share ``r`` of supply ``m`` to ``j``.

    Supplies and demands each sum to 1 (exactly, or to rounding in floats). The
    shares of each ``m`` sum to 1 (the last is the remainder) and the ``m`` and
    ``j`` of successive pieces never decrease; columns with zero demand get
    nothing. In floats, a supply too small to register (underflow, or a rounding
    excess once the demand is used up) goes whole to the current column.

    Parameters
    ----------
    supply : sequence
        The supplies ``w_m alpha_m`` (Fractions or floats), summing to 1.
    demand : sequence
        The demands ``z_j``, summing to 1.

    Returns
    -------
    list of (int, int, Fraction or float)
        Pieces ``(m, j, share)`` in plan order.

    Raises
    ------
    ValueError
        No positive demand.

    Examples
    --------
    >>> F = Fraction
    >>> northwest_plan([F(1, 2), F(1, 2)], [F(1, 4), F(0), F(3, 4)])
    [(0, 0, Fraction(1, 2)), (0, 2, Fraction(1, 2)), (1, 2, Fraction(1, 1))]
    """
    cols = [j for j, d in enumerate(demand) if d > 0]
    if not cols:
        raise ValueError("demand: needs a positive entry")
    pieces: list[tuple[int, int, Any]] = []
    k, left = 0, demand[cols[0]]
    for m, s in enumerate(supply):
        share: Any = 1.0 if isinstance(s, (float, np.floating)) else Fraction(1)
        while True:
            if left <= 0 and k < len(cols) - 1:
                k += 1
                left = demand[cols[k]]
            if s <= left or k == len(cols) - 1:
                if share > 0:
                    pieces.append((m, cols[k], share))
                left -= s
                break
            r = left / s * share  # = left / supply[m]
            pieces.append((m, cols[k], r))
            share -= r
            s -= left
            left = 0
    return pieces


def _exact_corner(zv: np.ndarray, lam: Fraction) -> tuple[np.ndarray, list]:
    """``T = Sigma A`` with ``A[m, j] = X[m, j] / w_m``, in Fractions."""
    n = zv.shape[0]
    S = sigma(n, lam)
    alpha = sigma_amounts(n, lam)
    supply = [w * a for w, a in zip(zv.dot(S), alpha, strict=True)]
    pieces = northwest_plan(supply, list(zv))
    T = np.full((n, n), Fraction(0), dtype=object)
    for m, j, r in pieces:  # column m of G = Sigma diag(alpha), times R[m, j]
        T[:, j] += S[:, m] * (alpha[m] * r)
    return T, pieces


def _float_supply(zv: np.ndarray, eps: float) -> tuple[list[float], list[float]]:
    """``log c_m`` and the supplies ``z . G[:, m] = c_m sum_i z_i rho^|i-m|``.

    ``G[i, m] = c_m rho^|i-m|`` is the truncated geometric mechanism
    (``c_m = (1-rho)/(1+rho)`` inside, ``1/(1+rho)`` at the ends). The side sums
    run as recursions ``L[m] = rho L[m-1] + z_m`` of positive terms (stable; an
    underflowing supply is harmless, :func:`northwest_plan` places it whole).
    """
    n = zv.shape[0]
    if n == 1:
        return [0.0], [1.0]
    logc = log_geometric_amounts(n, eps).tolist()
    left, right = log_side_sums(zv, eps)  # logs of the two side sums (Algorithm 2's)
    return logc, [math.exp(c + log_add_exp(a, b))
                  for c, a, b in zip(logc, left, right, strict=True)]


def _log_matrix(zv: np.ndarray, eps: float) -> tuple[np.ndarray, list]:
    """``log T`` for ``T = G R`` in ``O(n^2)``, one ``n x n`` array, no under- or overflow.

    Column ``j`` is ``sum_{m=a}^{b} v_m rho^|i-m|`` over its block ``[a, b]`` of
    scales (``v_m = c_m R[m, j]``): ``P rho^(a-i)`` above the block, ``Q rho^(i-b)``
    below it, and inside the sum of a left and a right geometric recursion (run
    in log space). The blocks move right with ``j``, so row ``i`` lies below the
    blocks of a prefix of the columns and above those of a suffix. Entries carry
    an absolute log error of about ``n * eps * 1e-16``.
    """
    n = zv.shape[0]
    logc, supply = _float_supply(zv, eps)
    pieces = northwest_plan(supply, zv.tolist())
    blocks: dict[int, list[tuple[int, float]]] = {}
    for m, j, r in pieces:
        blocks.setdefault(j, []).append((m, logc[m] + math.log(r)))
    cols = sorted(blocks)
    first, last, top, bottom = [], [], [], []
    inside: dict[int, list[tuple[int, float]]] = {}  # row -> [(column, log T)]
    for j in cols:
        ms = [m for m, _ in blocks[j]]
        lv = [v for _, v in blocks[j]]
        lft, rgt = log_side_sums(lv, eps, logs=True)  # the block's scales are consecutive
        for t in range(len(ms)):
            inside.setdefault(ms[t], []).append((j, log_add_exp(lft[t], rgt[t])))
        first.append(ms[0])
        last.append(ms[-1])
        top.append(log_add_exp(lv[0], rgt[0]) - eps * ms[0])  # log T[i, j] = top + eps i, i < a
        bottom.append(lft[-1] + eps * ms[-1])  # log T[i, j] = bottom - eps i, i > b
    cols_a, first_a, last_a = np.array(cols), np.array(first), np.array(last)
    top_a, bottom_a = np.array(top), np.array(bottom)
    full = len(cols) == n
    LT = np.full((n, n), -np.inf)
    row = np.empty(len(cols))
    for i in range(n):
        lo = int(np.searchsorted(last_a, i, side="left"))  # columns [0, lo): block above i
        hi = int(np.searchsorted(first_a, i, side="right"))  # columns [hi, end): below i
        np.subtract(bottom_a[:lo], eps * i, out=row[:lo])
        np.add(top_a[hi:], eps * i, out=row[hi:])
        for t, (_, v) in enumerate(inside.get(i, [])):
            row[lo + t] = v  # the blocks containing i are the columns lo .. hi-1, in order
        if full:
            LT[i] = row
        else:
            LT[i, cols_a] = row
    return LT, pieces


def northwest_corner(z: Any, eps: float | None = None, *, lam: Any = None) -> Mechanism:
    """The northwest-corner split of the geometric mechanism: a mechanism in F.

    ``T = Sigma A`` with ``A`` the northwest-corner plan of the transportation
    problem of docs/open_questions.md section 4: single-peaked scale ``m`` (the
    building blocks of Algorithm 2, Theorems 7-8) is spread over columns
    consecutive among those with ``z_j > 0`` until each column ``j`` has received
    ``z_j``. It has the least
    count error over all of F for every convex loss at once (Theorem A,
    docs/optimum_of_F.md; :func:`dpfix.certify.certify_optimal` certifies it
    exactly). ``O(n^2)`` arithmetic operations.

    Parameters
    ----------
    z : the target distribution, length ``n``; exact numbers with ``lam``.
    eps, lam : float ``eps`` (float path, ``log T`` stored) or rational
        ``lam = e^eps`` (exact path, Fractions end to end); a real algebraic ``lam``
        (:func:`dpfix.algebraic`) gives the exact matrix over ``Q(lam)``, for the
        checks there (:func:`dpfix.constructors.construct` takes rationals only).

    Returns
    -------
    Mechanism
        ``constructor="northwest"``, ``fixed_point=z``, checked (rows
        sum to 1, ``z T = z``, eps-DP: exactly, or within ``FLOAT_RTOL``).
        ``params``: ``pieces`` (positive entries of ``A``, at most
        ``2n - 1``), ``split_scales`` (scales sent to more than one column)
        and ``optimality`` (what is proved, Theorem A).

    Examples
    --------
    >>> M = northwest_corner(["1/4"] * 4, lam=2)
    >>> M.count_error(), M.params["pieces"]
    (Fraction(43, 60), 6)
    >>> M.matrix[0].tolist()
    [Fraction(8, 15), Fraction(3, 10), Fraction(1, 10), Fraction(1, 15)]
    >>> round(northwest_corner([0.25] * 4, eps=float(np.log(2))).count_error(), 12)
    0.716666666667
    """
    start = time.perf_counter()
    lam_x, eps_f = resolve_lam(eps, lam, algebraic=True)
    zv = probability_vector(z, exact=lam_x is not None)
    if lam_x is not None:
        T, pieces = _exact_corner(zv, lam_x)
        mech = Mechanism(matrix=T, eps=eps_f, lam=lam_x, fixed_point=zv,
                         constructor="northwest")
    else:
        LT, pieces = _log_matrix(zv, eps_f)
        mech = Mechanism(log_matrix=LT, eps=eps_f, fixed_point=zv,
                         constructor="northwest")
    scales = [m for m, _, _ in pieces]
    mech.params = {"pieces": len(pieces),
                   "split_scales": len(scales) - len(set(scales)), "optimality": _CLAIM}
    mech.check()
    mech.build_seconds = time.perf_counter() - start
    return mech
