"""Exactly checked sampling tables for every other mechanism (Algorithm 1, LP optima, staircase).

A mechanism without the ``G R`` structure is sampled from integer weights
``w[i, j]``, every row summing to ``D = 2^bits``: row ``i`` draws ``j`` with
probability exactly ``w[i, j] / D``, by comparing a uniform integer below
``D`` (the top ``bits`` of a random word) with the row's cumulative sums. The
table is proved ``log(lam)``-DP on those integers, for a rational
``lam = p/q <= e^eps`` (proved by :func:`dpfix.sampling.source.lam_at_most_exp`):
``q w[i, j] <= p w[i+1, j]`` and ``q w[i+1, j] <= p w[i, j]`` for every
neighbouring pair and every output (int64, no overflow as ``p D < 2^63``). No
float probability reaches the sampler (docs/sampling.md section 3).

Quantisation: ``w = a + F`` on the columns where ``T`` is positive, with
``a`` the largest-remainder apportionment of ``D - F k`` (``k`` positive
columns) by the row of ``T`` (``|a - (D - F k) T| <= c``) and the floor
``F = ceil(c (1 + lam) / (lam - 1))``: if ``T``'s neighbour ratios are at most
``lam``, then ``a + F <= lam (a' + F)`` whatever the rounding (docs/sampling.md
section 3). The floor moves at most ``F k / D`` of each row (about ``1e-9``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.numbers.deprecation import renamed_keywords
from dpfix.numbers.errors import Error
from dpfix.sampling.source import RandomSource, lam_at_most_exp, random_source, rational_lam

__all__ = ["CheckedTable", "checked_table", "SamplingCheckError", "apportion_rows"]


class SamplingCheckError(Error, ValueError):
    """The integer table failed its exact privacy check: nothing may be drawn from it."""


@dataclass
class CheckedTable:
    """Integer weights whose rows sum to ``2^bits``, checked ``log(lam)``-DP exactly.

    Attributes
    ----------
    weights : numpy.ndarray
        ``n x n`` int64.
    bits : int
        Every row sums to ``D = 2^bits``.
    lam : Fraction
        ``p/q``, the ratio bound checked.
    eps : float
        The budget ``lam <= e^eps`` was proved against.
    constructor : str
        Provenance.
    floor : int
        ``F``, added to every entry of the positive columns.
    """

    weights: np.ndarray
    bits: int
    lam: Fraction
    eps: float
    constructor: str = "given"
    floor: int = 0

    @property
    def n(self) -> int:
        """The number of counts."""
        return self.weights.shape[0]

    def check(self) -> None:
        """Raise :class:`SamplingCheckError` unless the table is exactly ``log(lam)``-DP.

        Integer checks only: entries non-negative, rows summing to ``2^bits``,
        ``q w[i, j] <= p w[i+1, j]`` and ``q w[i+1, j] <= p w[i, j]`` for all
        ``i, j`` (``p 2^bits < 2^63``: no overflow), and ``lam <= e^eps``.

        Examples
        --------
        >>> t = CheckedTable(np.array([[3, 1], [1, 3]]) * 2**58, 60, Fraction(3), math.log(3.5))
        >>> t.check()
        >>> t.weights[0, 1] -= 1; t.weights[0, 0] += 1
        >>> t.check()
        Traceback (most recent call last):
        ...
        dpfix.sampling.table.SamplingCheckError: ...
        """
        w, p, q = self.weights, self.lam.numerator, self.lam.denominator
        if w.dtype != np.int64 or w.ndim != 2 or w.shape[0] != w.shape[1]:
            raise SamplingCheckError("table: expected a square int64 array")
        if p * (1 << self.bits) >= 1 << 63 or not 1 <= q < p:
            raise SamplingCheckError(f"table: lam = {self.lam} and 2^{self.bits} overflow int64")
        if (w < 0).any():
            raise SamplingCheckError("table: a negative weight")
        total = 1 << self.bits
        sums = w.sum(axis=1)  # non-negative terms: no partial sum exceeds the row's total
        bad = np.flatnonzero(sums != total)
        if bad.size:
            raise SamplingCheckError(f"table: row {int(bad[0])} sums to {int(sums[bad[0]])}, "
                                     f"not 2^{self.bits}")
        pp, qq = np.int64(p), np.int64(q)
        for s in range(0, self.n - 1, 256):
            a, b = w[s:s + 257][:-1], w[s + 1:s + 257]
            viol = (qq * a > pp * b) | (qq * b > pp * a)
            if viol.any():
                i, j = np.argwhere(viol)[0]
                raise SamplingCheckError(
                    f"table: rows {s + i} and {s + i + 1}, output {j}: weights "
                    f"{int(a[i, j])} and {int(b[i, j])} differ by more than lam = {self.lam} "
                    "(a mechanism must be built with a margin below the eps it is checked at)")
        if not lam_at_most_exp(self.lam, self.eps):
            raise SamplingCheckError(f"table: lam = {self.lam} exceeds e^{self.eps!r}")

    @renamed_keywords(source="seed")
    def sample(self, counts: Any, seed: Any = None, out: np.ndarray | None = None) -> np.ndarray:
        """A draw from row ``d`` of the table for every count ``d`` (int64).

        Rows are grouped by input count; each row gets its own uniform integer
        below ``2^bits`` and the output whose cumulative interval holds it.
        ``seed`` and ``out``: as for
        :meth:`dpfix.sampling.structured.StructuredSampler.sample`.

        Examples
        --------
        >>> t = CheckedTable(np.array([[4, 0], [0, 4]]), 2, Fraction(3), 2.0)
        >>> t.sample([1, 0, 1], random_source(0)).tolist()
        [1, 0, 1]
        """
        source = random_source(seed)
        d = np.asarray(counts)
        if d.ndim != 1 or (d.size and d.dtype.kind not in "iu"):
            raise ValueError("counts: expected a vector of integers")
        if d.size and (d.min() < 0 or d.max() >= self.n):
            raise ValueError(f"counts: must lie in 0..{self.n - 1}")
        key = d.astype(np.uint16 if self.n <= 1 << 16 else np.int64)
        order = np.argsort(key, kind="stable")
        sizes = np.bincount(key, minlength=self.n)
        if out is None:
            out = np.empty(d.size, dtype=np.int64)
        elif out.shape != d.shape or out.dtype != np.int64:
            raise ValueError(f"out: expected an int64 vector of {d.size} entries, got "
                             f"{out.dtype} of shape {out.shape}")
        start, shift = 0, np.uint64(64 - self.bits)
        for i in np.flatnonzero(sizes):
            m = int(sizes[i])
            cum = np.cumsum(self.weights[i])
            u = (source.words(m) >> shift).astype(np.int64)
            out[order[start:start + m]] = np.searchsorted(cum, u, side="right")
            start += m
        return out

    def describe(self, source: RandomSource) -> dict[str, Any]:
        """The sampler for a report, with its privacy statement."""
        lam = f"{self.lam.numerator}/{self.lam.denominator}"
        return {"kind": "checked table", "constructor": self.constructor, "lam": lam,
                "eps_sampled": math.log(self.lam), "row_total": f"2^{self.bits}",
                "floor": self.floor, "source": source.description, "secure": source.secure,
                "privacy_statement": (
                    f"Each row i is drawn from integer weights w[i, j] / 2^{self.bits} "
                    f"(T quantised, every positive column lifted by {self.floor}) by comparing a "
                    f"uniform integer from {source.description} with the row's cumulative "
                    f"sums. Before any draw the weights were checked exactly: q w[i, j] <= "
                    f"p w[i+1, j] and q w[i+1, j] <= p w[i, j] for every neighbouring pair and "
                    f"output, with lam = p/q = {lam} <= e^eps proved in rational arithmetic: "
                    f"what is sampled is exactly ln(lam) = {math.log(self.lam):.12g}-DP "
                    "(docs/sampling.md).")}


def _rows(log_T: np.ndarray, s: int, e: int) -> np.ndarray:
    """Rows ``s .. e-1`` of ``T`` normalised, as floats, from ``log T`` (``-inf`` for 0)."""
    L = log_T[s:e]
    top = L.max(axis=1, keepdims=True)
    P = np.exp(L - top, where=L - top > -745.0, out=np.zeros_like(L))
    return P / P.sum(axis=1, keepdims=True)


def apportion_rows(V: np.ndarray, total: int) -> np.ndarray:
    """Integers ``A`` with every row summing to ``total`` and ``|A - V|`` small (Hamilton;
    :func:`dpfix.sampling.quantile.apportion` for one probability vector).

    Each row: the floors, then the rest ``r`` spread evenly (``r // k`` each) and
    one more unit to the ``r mod k`` entries rounded down the most.

    Examples
    --------
    >>> apportion_rows(np.array([[0.5, 1.25, 2.25]]), 4).tolist()
    [[1, 1, 2]]
    """
    A = np.floor(V).astype(np.int64)
    k = V.shape[1]
    r = total - A.sum(axis=1)  # exact int64 (k entries below 2^62 / p each)
    base = r // k
    A += base[:, None]
    rem = r - base * k
    for t in np.flatnonzero(rem):
        A[t, np.argpartition(A[t] - V[t], rem[t] - 1)[:rem[t]]] += 1
    return A


def _exact_row(row: np.ndarray, total: int) -> np.ndarray:
    """Largest-remainder apportionment of ``total`` by an exact row of Fractions."""
    v = [x * total for x in row]
    a = np.array([math.floor(x) for x in v], dtype=np.int64)
    rem = total - int(a.sum())
    order = sorted(range(len(v)), key=lambda t: -(v[t] - a[t]))
    for t in order[:rem]:
        a[t] += 1
    return a


def checked_table(T: Any = None, *, log_T: Any = None, eps: float | None = None,
                  lam: Any = None, rtol: float = 1e-10,
                  constructor: str = "given") -> CheckedTable:
    """Quantise a mechanism ``T`` to integer weights and check them exactly ``log(lam)``-DP.

    Parameters
    ----------
    T : array_like of Fractions, optional
        An exact ``n x n`` mechanism (rows summing to 1).
    log_T : array_like of float, optional
        Instead of ``T``: ``log T`` of a float mechanism (``-inf`` for 0).
    eps : float, optional
        The budget: ``lam = rational_lam(eps, rtol)`` is checked. Required with
        ``log_T``; with an exact ``T`` and ``lam``, the budget ``lam`` is proved
        against (default: just above ``log(lam)``).
    lam : int, Fraction or str, optional
        The ratio bound to check instead of one chosen from ``eps``.
    rtol : float
        The share of ``eps`` that may be given up choosing ``lam``; ``T``'s own
        neighbour ratios must stay below ``lam`` (build ``T`` with a margin).
    constructor : str
        Provenance, for the report.

    Returns
    -------
    CheckedTable
        Already checked.

    Raises
    ------
    SamplingCheckError
        The quantised table is not ``log(lam)``-DP (``T``'s ratios exceed ``lam``).
    ValueError
        Neither or both of ``T`` and ``log_T``, or no ``eps``/``lam``.

    Examples
    --------
    >>> T = [[Fraction(2, 3), Fraction(1, 3)], [Fraction(1, 3), Fraction(2, 3)]]
    >>> t = checked_table(T, lam=2)
    >>> t.lam, t.bits, [int(x) for x in t.weights.sum(axis=1)] == [2 ** 60] * 2
    (Fraction(2, 1), 60, True)
    """
    if (T is None) == (log_T is None):
        raise ValueError("give T (exact) or log_T (float), not both and not neither")
    exact = T is not None
    M = np.asarray(T, dtype=object) if exact else np.asarray(log_T, dtype=float)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"T: expected a square matrix, got shape {M.shape}")
    if lam is not None:
        lam_s = Fraction(lam)
        if eps is None:
            budget = math.nextafter(math.log(lam_s), math.inf)  # float log may round down
            while not lam_at_most_exp(lam_s, budget):
                budget = math.nextafter(budget, math.inf)
        else:
            budget = float(eps)
    elif eps is None:
        raise ValueError("eps: give the budget eps (or lam)")
    else:
        budget = float(eps)
        lam_s = rational_lam(budget, rtol)
    p = lam_s.numerator
    bits = 62 - p.bit_length()
    if bits < 20:
        raise ValueError(f"lam: {lam_s} has too large a numerator for a 2^20 resolution")
    n, total = M.shape[0], 1 << bits
    if exact:
        positive = np.array([any(x > 0 for x in M[:, j]) for j in range(n)], dtype=bool)
    else:
        positive = np.isfinite(M).any(axis=0)
    k = int(positive.sum())
    cols: Any = slice(None) if k == n else positive  # a slice avoids copies
    ratio = float(lam_s)
    c = 2.0
    for _ in range(4):
        F = math.ceil(c * (1 + ratio) / (ratio - 1))
        share = total - F * k
        W = np.zeros((n, n), dtype=np.int64)
        worst = 0.0
        for s in range(0, n, 256):
            e = min(s + 256, n)
            if exact:
                for i in range(s, e):
                    W[i, positive] = _exact_row(M[i, positive], share)
                worst = max(worst, 1.0)
                continue
            V = _rows(M, s, e)[:, cols]
            V *= share
            A = apportion_rows(V, share)
            A -= V.astype(np.int64)  # |A - V| <= |A - floor(V)| + 1
            worst = max(worst, float(np.abs(A).max()) + 1)
            A += V.astype(np.int64)
            W[s:e, cols] = A
        if worst <= c:
            break
        c = 2 * worst
    else:  # pragma: no cover - the rounding error is at most a few units
        raise SamplingCheckError(f"{constructor}: rounding error {worst} units persists")
    W[:, cols] += F
    table = CheckedTable(W, bits, lam_s, budget, constructor, F)
    table.check()
    return table
