"""An interval for the true top-coded total (and mean) of a group of rows, from their released
counts (docs/uncertainty.md section 4).

The rows ``r`` of a group ``S`` (``k`` rows) are released independently, ``y_r ~ T[x_r, .]``;
the target is the top-coded total ``s = sum x_r`` (``x_r = min(count, upper)``). No exact
method is known to us (the law of ``Y = sum y_r`` depends on every ``x_r``, not only on
``s``); two conservative ones are given:

- ``"chernoff"`` (default): Chernoff bounds with the exact per-row cumulant generating
  function ``K(theta, x) = log E[exp(theta (y - x)) | x]``, made uniform over every ``x`` with
  ``sum x_r = s`` by the least concave majorant ``H_theta`` of ``K(theta, .)`` (Jensen):
  ``P(Y >= s + t | x) <= exp(-theta t + k H_theta(s/k))``. Inverting the two one-sided tests at
  ``alpha/2`` each over ``s`` gives the interval; its width grows like ``sqrt(k)``.
- ``"bonferroni"``: the sum of the rows' confidence sets at level ``1 - alpha/k``
  (section 2): on the event that every row's set holds its count (probability at least
  ``1 - alpha`` by the union bound) the sum of the lower ends is below ``s`` and the sum of
  the upper ends above it; exact for ``k = 1``, its width grows like ``k log k``.

The interval covers the TOP-CODED total. The true total exceeds it by the counts' excesses
over ``upper`` (the top-coding bias, at least 0 and unknown from the release): ``[lower,
infinity)`` covers the true total whenever ``[lower, upper]`` covers the top-coded one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.signal import lfilter

from dpfix.release.uncertainty.common import check_alpha, check_rows
from dpfix.release.uncertainty.counts import ConfidenceSets, neyman_sets, preimage_sets
from dpfix.sampling import CheckedTable, StructuredSampler
from dpfix.sampling.structured import geometric_amounts
from dpfix.theory.mechanism import Mechanism

__all__ = ["TotalInterval", "RowLaw", "row_law", "total_intervals", "TOTAL_METHODS",
           "THETAS", "CGF_SLACK", "ROWS"]

#: The methods of :func:`total_intervals`.
TOTAL_METHODS = ("chernoff", "bonferroni")

#: How many values of ``theta`` (each sign) the Chernoff bounds are minimised over.
THETAS = 32

#: Added per row to the exponent of every Chernoff bound, for the float rounding of ``K``.
CGF_SLACK = 1e-9

#: The largest group of a mechanism that is not stochastically monotone (every total
#: ``0 .. k (n-1)`` is then tested).
SCAN_MAX = 1 << 22


@dataclass(frozen=True)
class TotalInterval:
    """A ``(1 - alpha)`` interval for the top-coded total of a group of ``rows`` rows.

    Attributes
    ----------
    lower, upper : int
        ``lower <= sum_r x_r <= upper`` with probability at least ``1 - alpha``
        (``lower > upper``: empty, no total is consistent with the release).
    alpha : float
    method : str
    exact : bool
        True only for ``"bonferroni"`` with one row of an exact sampler (the row's set).
    rows : int
        ``k``, the group's size.
    released : tuple of int
        The released total, or the bounds ``(Y_lo, Y_hi)`` on the total of the ``y`` behind a
        remap (the one-stage and hybrid frameworks).
    private_upper : bool
        ``upper`` was chosen privately (``upper="auto"``).
    """

    lower: int
    upper: int
    alpha: float
    method: str
    exact: bool
    rows: int
    released: tuple
    private_upper: bool = False

    @property
    def mean_lower(self) -> float:
        """``lower / k``: the interval for the group's mean top-coded count."""
        return self.lower / self.rows

    @property
    def mean_upper(self) -> float:
        """``upper / k``."""
        return self.upper / self.rows

    @property
    def width(self) -> int:
        """``upper - lower`` (``-1``: empty)."""
        return self.upper - self.lower if self.upper >= self.lower else -1

    def covers(self, total: int) -> bool:
        """Whether ``total`` (a top-coded total) is in the interval."""
        return self.lower <= total <= self.upper

    def describe(self) -> dict[str, Any]:
        """For the report: the interval, its mean, the method and the top-coding statement."""
        how = ("upper was chosen privately (upper='auto')" if self.private_upper
               else "upper is a public parameter")
        return {"kind": "interval for the top-coded total of a group of rows",
                "alpha": self.alpha, "level": 1 - self.alpha, "method": self.method,
                "exact": self.exact, "rows": self.rows, "released_total": list(self.released),
                "total": [self.lower, self.upper],
                "mean": [self.mean_lower, self.mean_upper],
                "top_coding": (f"{how}: the interval covers the top-coded total sum_r "
                               "min(count_r, upper); the true total exceeds it by the counts' "
                               "excesses over upper (the top-coding bias: at least 0, unknown "
                               f"from the release), so only [{self.lower}, infinity) covers "
                               "the true total")}


# ------------------------------------------------------------------ the law of a row
@dataclass
class RowLaw:
    """What the totals need of the mechanism: its cumulant generating function, whether it is
    stochastically monotone, its per-row confidence sets and how a released value bounds the
    ``y`` it came from.

    Attributes
    ----------
    mechanism : StructuredSampler, CheckedTable, Mechanism or array
        The law of ``y`` given ``x`` (for a remap chosen from the ``y``: ``G``).
    n : int
    theta_max : float
        ``|theta|`` stays below it (the generating function is finite and in float range).
    monotone : bool
        Every ``P(y <= j | x)`` is non-increasing in ``x``.
    first, last : numpy.ndarray or None
        For a remap chosen from the ``y``: the preimage ``first[j] .. last[j]`` of each output.
    """

    mechanism: Any
    n: int
    theta_max: float
    monotone: bool
    first: np.ndarray | None = None
    last: np.ndarray | None = None

    def cgf(self, thetas: np.ndarray) -> np.ndarray:
        """``K(theta, x) = log E[exp(theta (y - x)) | x]`` for every theta and ``x``."""
        m = self.mechanism
        if isinstance(m, StructuredSampler):
            return _structured_cgf(m, thetas)
        return _matrix_cgf(m, thetas)

    def sets(self, alpha: float) -> ConfidenceSets:
        """The per-row confidence sets at ``alpha``."""
        if self.first is not None:
            return preimage_sets(self.mechanism, self.first, self.last, alpha)
        return neyman_sets(self.mechanism, alpha)

    def bounds(self, released: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row, the least and largest ``y`` behind each released value."""
        if self.first is None:
            return released, released
        return self.first[released], self.last[released]


#: Rows of a table or matrix handled at once (memory ``O(ROWS n)``).
ROWS = 256


def _log_rows(m: Any, start: int = 0, stop: int | None = None) -> np.ndarray:
    """``log P(y = j | x)`` for the rows ``start .. stop-1`` of a table or matrix (floats,
    ``-inf`` for 0)."""
    with np.errstate(divide="ignore"):
        if isinstance(m, CheckedTable):
            return np.log(m.weights[start:stop].astype(float)) - m.bits * math.log(2)
        if isinstance(m, Mechanism) and not m.exact:
            L = np.asarray(m.log_matrix[start:stop], dtype=float)
            top = L.max(axis=1, keepdims=True)
            return L - (top + np.log(np.exp(L - top).sum(axis=1, keepdims=True)))
        T = m.matrix if isinstance(m, Mechanism) else np.asarray(m, dtype=object)
        return np.log(np.array([[float(v) for v in row] for row in T[start:stop]]))


def _size(m: Any) -> int:
    if isinstance(m, CheckedTable):
        return m.n
    if isinstance(m, Mechanism):
        return m.n
    return len(m)


def _blocks(m: Any) -> Any:
    """``(start, log rows)`` of a table or matrix, :data:`ROWS` rows at a time."""
    n = _size(m)
    for start in range(0, n, ROWS):
        yield start, _log_rows(m, start, min(start + ROWS, n))


def _matrix_cgf(m: Any, thetas: np.ndarray) -> np.ndarray:
    n = _size(m)
    out = np.empty((thetas.size, n))
    for start, logP in _blocks(m):
        d = np.arange(n)[None, :] - np.arange(start, start + logP.shape[0])[:, None]  # j - x
        for i, th in enumerate(thetas):
            E = logP + th * d
            top = E.max(axis=1)
            out[i, start:start + logP.shape[0]] = top + np.log(
                np.exp(E - top[:, None]).sum(axis=1))
    return out


def _structured_cgf(s: StructuredSampler, thetas: np.ndarray) -> np.ndarray:
    """``K(theta, .)`` of ``G R`` in ``O(n + pieces)`` per theta: with ``v_m = c_m psi(m)``,
    ``psi(m) = sum_pieces share e^(theta (j - m))``, ``E[e^(theta (y - x))] = sum_(m<=x) v_m
    (rho e^-theta)^(x-m) + sum_(m>x) v_m (rho e^theta)^(m-x)``: two linear recursions."""
    n, R = s.n, s.remap
    rho = float(1 / s.lam)
    c = geometric_amounts(n, rho)
    ms = np.repeat(np.arange(n), np.diff(R.start))
    share = R.drawn_shares() / float(1 << R.bits)
    shift = (R.cols - ms).astype(float)
    out = np.empty((thetas.size, n))
    for i, th in enumerate(thetas):
        v = c * np.bincount(ms, weights=share * np.exp(th * shift), minlength=n)
        a, b = rho * math.exp(-th), rho * math.exp(th)
        A = lfilter([1.0], [1.0, -a], v)
        Dn = lfilter([1.0], [1.0, -b], v[::-1])[::-1]  # sum_(m>=x) v_m b^(m-x)
        B = np.zeros(n)
        B[:-1] = b * Dn[1:]
        out[i] = np.log(A + B)
    return out


def _stochastically_monotone(m: Any) -> bool:
    """Every ``P(y <= j | x)`` non-increasing in ``x`` (within ``1e-12``)."""
    previous = None
    for _, logP in _blocks(m):
        P = np.exp(logP)
        cum = np.cumsum(P / P.sum(axis=1, keepdims=True), axis=1)
        if previous is not None:
            cum = np.vstack([previous, cum])
        if (np.diff(cum, axis=0) > 1e-12).any():
            return False
        previous = cum[-1:]
    return True


def row_law(mechanism: Any, first: Any = None, last: Any = None) -> RowLaw:
    """The :class:`RowLaw` of what is sampled (``first``/``last``: the preimages of a remap
    chosen from the ``y``, with ``mechanism`` the ``G`` that drew them).

    Examples
    --------
    >>> from dpfix.constructors.remap import structured_sampler
    >>> law = row_law(structured_sampler("truncated-geometric", lam=3, n=5))
    >>> law.monotone, round(law.theta_max, 4)
    (True, 1.0437)
    """
    if isinstance(mechanism, StructuredSampler):
        if (np.diff(mechanism.remap.cols) < 0).any():
            raise ValueError("mechanism: the remap is not monotone: the G R method does not "
                             "apply")
        R = mechanism.remap
        ms = np.repeat(np.arange(mechanism.n), np.diff(R.start))
        spread = float(np.abs(R.cols - ms).max(initial=0))
        theta_max = min(0.95 * math.log(mechanism.lam), 300.0 / max(spread, 1.0))
        law = RowLaw(mechanism, mechanism.n, theta_max, True)
    else:
        if not isinstance(mechanism, (CheckedTable, Mechanism)):
            mechanism = np.asarray(mechanism, dtype=object)
            if mechanism.ndim != 2 or mechanism.shape[0] != mechanism.shape[1]:
                raise ValueError(f"mechanism: expected a square matrix, got shape "
                                 f"{mechanism.shape}")
        eps = (math.log(mechanism.lam) if isinstance(mechanism, CheckedTable)
               else float(getattr(mechanism, "eps", math.nan)))
        if not (math.isfinite(eps) and eps > 0):
            eps = 1.0
        law = RowLaw(mechanism, _size(mechanism), 0.95 * eps, _stochastically_monotone(mechanism))
    if first is not None:
        law.first = np.asarray(first, dtype=np.int64)
        law.last = np.asarray(last, dtype=np.int64)
    return law


# ------------------------------------------------------------------ Chernoff
def _majorants(K: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The least concave majorant of every row of ``K`` over ``x = 0 .. n-1``: its vertices,
    raised by the largest float shortfall so that it lies above every point."""
    n = K.shape[1]
    out = []
    xs = np.arange(n, dtype=float)
    for row in K:
        hull: list[int] = []
        for x in range(n):  # upper hull, monotone chain
            while len(hull) >= 2:
                x1, x2 = hull[-2], hull[-1]
                if (row[x2] - row[x1]) * (x - x1) <= (row[x] - row[x1]) * (x2 - x1):
                    hull.pop()
                else:
                    break
            hull.append(x)
        hx = np.asarray(hull, dtype=float)
        hy = row[hull].astype(float)
        short = float((row - np.interp(xs, hx, hy)).max())
        out.append((hx, hy + max(short, 0.0)))
    return out


class _Chernoff:
    """The thresholds ``U(s) = s + min_theta (k H_theta(s/k) + L) / theta`` and
    ``Lw(s) = s - min_theta (k H_-theta(s/k) + L) / theta`` of one mechanism."""

    def __init__(self, law: RowLaw, alpha: float, k_max: int) -> None:
        top = law.theta_max
        low = top * 1e-3 / max(1.0, math.sqrt(k_max / 1e6))
        self.thetas = np.geomspace(low, top, THETAS)
        K = law.cgf(np.concatenate([self.thetas, -self.thetas]))
        self.up = _majorants(K[:THETAS])
        self.down = _majorants(K[THETAS:])
        self.log2a = math.log(2 / alpha)

    def _terms(self, hulls: list, s: np.ndarray, k: np.ndarray) -> np.ndarray:
        u = s / k
        L = self.log2a + CGF_SLACK * (k + 1)
        best = np.full(s.shape, np.inf)
        for th, (hx, hy) in zip(self.thetas, hulls, strict=True):
            best = np.minimum(best, (k * np.interp(u, hx, hy) + L) / th)
        return best

    def U(self, s: np.ndarray, k: np.ndarray) -> np.ndarray:
        """``P(Y >= U(s)) <= alpha/2`` for every ``x`` with total ``s``."""
        return s + self._terms(self.up, s, k)

    def Lw(self, s: np.ndarray, k: np.ndarray) -> np.ndarray:
        """``P(Y <= Lw(s)) <= alpha/2`` for every ``x`` with total ``s``."""
        return s - self._terms(self.down, s, k)


def _chernoff_intervals(law: RowLaw, alpha: float, k: np.ndarray, ylo: np.ndarray,
                        yhi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``[min{s : U(s) > Y_lo}, max{s : Lw(s) < Y_hi}]`` for every group (bisection when the
    mechanism is monotone, as then ``U`` and ``Lw`` are non-decreasing in ``s``)."""
    ch = _Chernoff(law, alpha, int(k.max()))
    S = k * (law.n - 1)
    kf = k.astype(float)
    if law.monotone:
        lo, hi = np.zeros_like(S), S + 1  # first s with U(s) > Y_lo; S + 1: none
        while (lo < hi).any():
            mid = (lo + hi) // 2
            ok = ch.U(np.minimum(mid, S).astype(float), kf) > ylo
            move = lo < hi
            hi = np.where(move & ok, mid, hi)
            lo = np.where(move & ~ok, mid + 1, lo)
        first = lo
        lo, hi = np.full_like(S, -1), S.copy()  # last s with Lw(s) < Y_hi; -1: none
        while (lo < hi).any():
            mid = (lo + hi + 1) // 2
            ok = ch.Lw(mid.astype(float), kf) < yhi
            move = lo < hi
            lo = np.where(move & ok, mid, lo)
            hi = np.where(move & ~ok, mid - 1, hi)
        return first, lo
    if int(S.sum()) > SCAN_MAX:
        raise ValueError(f"rows: the mechanism is not stochastically monotone, so every total "
                         f"is tested; these groups have {int(S.sum())} totals in all, above "
                         f"{SCAN_MAX}: use method='bonferroni'")
    first = np.empty_like(S)
    last = np.empty_like(S)
    for g in range(S.size):
        s = np.arange(int(S[g]) + 1, dtype=float)
        kk = np.full(s.shape, kf[g])
        ok = np.flatnonzero((ch.U(s, kk) > ylo[g]) & (ch.Lw(s, kk) < yhi[g]))
        first[g], last[g] = (ok[0], ok[-1]) if ok.size else (S[g] + 1, -1)
    return first, last


def total_intervals(mechanism: Any, released: Any, groups: list, alpha: float, *,
                    method: str = "chernoff", private_upper: bool = False,
                    first: Any = None, last: Any = None) -> list[TotalInterval]:
    """A ``(1 - alpha)`` interval for the top-coded total of every group of rows.

    Parameters
    ----------
    mechanism : StructuredSampler, CheckedTable, Mechanism or array_like of Fractions
        What stage 2 samples (for a remap chosen from the ``y``: the ``G`` that drew them,
        with ``first`` and ``last``).
    released : array_like of int
        Every row's released count (the table's column), in ``0 .. n-1``.
    groups : list of array_like
        The rows of each group (positions into ``released``, or boolean masks).
    alpha : float
        In ``(0, 1)``; each interval has level ``1 - alpha`` on its own.
    method : str
        ``"chernoff"`` or ``"bonferroni"`` (module docstring).
    private_upper : bool
        ``upper`` was chosen privately (stated in :meth:`TotalInterval.describe`).
    first, last : array_like of int, optional
        The preimage of each output under a remap chosen from the ``y``.

    Returns
    -------
    list of TotalInterval

    Raises
    ------
    ValueError
        ``alpha`` outside ``(0, 1)``, an unknown method, rows not in the table, released
        counts outside ``0 .. n-1``.

    Examples
    --------
    >>> from dpfix.constructors.remap import structured_sampler
    >>> s = structured_sampler("northwest", [0.4, 0.3, 0.2, 0.1], lam=3)
    >>> [(t.lower, t.upper) for t in total_intervals(s, [0, 1, 3, 2, 0], [[0, 1, 2], [3, 4]],
    ...                                             0.05)]
    [(0, 9), (0, 6)]
    """
    alpha = check_alpha(alpha)
    if method not in TOTAL_METHODS:
        raise ValueError(f"method: unknown {method!r}; use one of {', '.join(TOTAL_METHODS)}")
    law = row_law(mechanism, first, last)
    y = np.asarray(released)
    if y.ndim != 1 or (y.size and y.dtype.kind not in "iu"):
        raise ValueError("released: expected one integer count per row")
    y = y.astype(np.int64)
    if y.size and (y.min() < 0 or y.max() >= law.n):
        raise ValueError(f"released: counts must lie in 0..{law.n - 1}")
    rows = [check_rows(g, y.size) for g in groups]
    if not rows:
        return []
    k = np.array([r.size for r in rows], dtype=np.int64)
    ylo_r, yhi_r = law.bounds(y)
    ylo = np.array([int(ylo_r[r].sum()) for r in rows], dtype=np.int64)
    yhi = np.array([int(yhi_r[r].sum()) for r in rows], dtype=np.int64)
    remapped = law.first is not None
    if method == "chernoff":
        lo, hi = _chernoff_intervals(law, alpha, k, ylo, yhi)
        how = (f"Chernoff bounds with the exact per-row cumulant generating function "
               f"K(theta, x) = log E[exp(theta (y - x)) | x], uniform over the true counts by its "
               f"least concave majorant in x, minimised over {THETAS} values of theta per side; "
               "conservative")
        exact_rows = np.zeros(k.size, dtype=bool)
    else:
        lo = np.empty_like(k)
        hi = np.empty_like(k)
        exact_rows = np.zeros(k.size, dtype=bool)
        for size in np.unique(k):
            sets = law.sets(alpha / int(size))
            for g in np.flatnonzero(k == size):
                if remapped:
                    a, b = sets.lower[y[rows[g]]], sets.upper[y[rows[g]]]
                else:
                    a, b = sets.at(y[rows[g]])
                empty = bool((a > b).any())
                lo[g] = int(k[g] * law.n) if empty else int(a.sum())
                hi[g] = -1 if empty else int(b.sum())
                exact_rows[g] = sets.exact and size == 1
        how = ("the sum of the rows' confidence sets at level 1 - alpha/k (union bound); "
               "conservative (exact for one row)")
    if remapped:
        how += "; the released counts bound the y behind the data-dependent remap"
    return [TotalInterval(int(lo[g]), int(hi[g]), alpha, how, bool(exact_rows[g]), int(k[g]),
                          (int(ylo[g]),) if ylo[g] == yhi[g] else (int(ylo[g]), int(yhi[g])),
                          private_upper)
            for g in range(k.size)]
