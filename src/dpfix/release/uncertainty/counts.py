"""Per released count, a ``(1 - alpha)`` confidence set for the true (top-coded) count:
the Neyman construction inverted from the public mechanism (docs/uncertainty.md section 2).

Row ``x`` of the mechanism sampled, ``T[x, .]``, is the law of the released count ``y`` of
a row whose true count is ``x``. Its *equal-tailed acceptance region* is
``A(x) = {l(x), ..., u(x)}`` with

    l(x) = min{j : F(x, j) > alpha/2},   u(x) = min{j : F(x, j) >= 1 - alpha/2},

``F(x, j) = P(y <= j | x)``; then ``P(y < l(x)) <= alpha/2`` and ``P(y > u(x)) <= alpha/2``,
so ``P(y in A(x) | x) >= 1 - alpha``. The confidence set of a released ``y`` is
``CS(y) = {x : y in A(x)}``: whatever the true count ``x``, ``P(x in CS(y)) =
P(y in A(x)) >= 1 - alpha``. When ``T`` is stochastically monotone (every ``F(., j)``
non-increasing), ``l`` and ``u`` are non-decreasing and ``CS(y)`` is the interval
``[min{x : u(x) >= y}, max{x : l(x) <= y}]``.

What is sampled decides the method:

- the structured samplers ``T = G R`` (northwest corner, Algorithm 2, truncated geometric;
  any ``n``, ``T`` never built): ``l`` and ``u`` exactly, from the geometric law and the
  drawn integer thresholds of the monotone remap, in ``O(n log n)`` (section 2.2);
- an exactly checked table (every other pure-DP constructor): exactly, by integer
  comparisons of the cumulative weights with ``floor(alpha/2 2^bits)``;
- an exact matrix of Fractions: exactly, in Fractions;
- a float ``T`` (the discrete Gaussian; a histogram above the exact samplers' size, drawn by
  numpy's multinomial): the sets of the float rows, each threshold moved by ``1e-9`` in the
  conservative direction (``exact`` False: numpy's sampler is not proved to draw them);
- the one-stage and hybrid frameworks, whose remap depends on the released ``y``: the
  preimage sets of section 2.4 (conservative, ``exact`` False).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.release.uncertainty import exact
from dpfix.release.uncertainty.common import check_alpha, half_alpha, width_summary
from dpfix.sampling import CheckedTable, StructuredSampler
from dpfix.theory.mechanism import Mechanism

__all__ = ["ConfidenceSets", "neyman_sets", "preimage_sets", "acceptance_regions",
           "FLOAT_MARGIN"]

#: How far the float path moves each threshold of ``F`` in the conservative direction.
FLOAT_MARGIN = 1e-9


def _frozen(a: Any) -> np.ndarray:
    v = np.array(a, dtype=np.int64)
    v.flags.writeable = False
    return v


@dataclass(frozen=True)
class ConfidenceSets:
    """The ``(1 - alpha)`` confidence set of every released value ``y = 0 .. n-1``.

    Attributes
    ----------
    lower, upper : numpy.ndarray of int64
        ``CS(y)`` is within ``lower[y] .. upper[y]`` (exactly that interval when
        ``contiguous``); ``lower[y] > upper[y]``: the set is empty.
    alpha : float
        The sets have level ``1 - alpha`` for every true count.
    method : str
        How the sets were computed (for the report).
    exact : bool
        True when the acceptance regions were computed exactly from the law of what is
        sampled; False for a conservative construction (see ``method``).
    accept_lower, accept_upper : numpy.ndarray of int64
        The acceptance regions ``A(x) = l(x) .. u(x)`` of every true count ``x``.
    contiguous : bool
        Every set is an interval (False: ``lower .. upper`` is its hull, which covers at
        least as often).
    histogram : numpy.ndarray or None
        The released histogram the report's width summary is taken over.

    Examples
    --------
    >>> from dpfix.constructors.remap import structured_sampler
    >>> s = neyman_sets(structured_sampler("truncated-geometric", lam=3, n=4), 0.2)
    >>> s.lower.tolist(), s.upper.tolist()
    ([0, 0, 1, 2], [1, 2, 3, 3])
    """

    lower: np.ndarray
    upper: np.ndarray
    alpha: float
    method: str
    exact: bool
    accept_lower: np.ndarray
    accept_upper: np.ndarray
    contiguous: bool = True
    histogram: np.ndarray | None = field(default=None, repr=False)

    @property
    def n(self) -> int:
        """The number of count values."""
        return int(self.lower.size)

    @property
    def empty(self) -> np.ndarray:
        """Which values' sets are empty (no true count makes them likely enough)."""
        return self.lower > self.upper

    def at(self, released: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)`` of the set of every released count (one per row).

        Examples
        --------
        >>> from dpfix.constructors.remap import structured_sampler
        >>> s = neyman_sets(structured_sampler("truncated-geometric", lam=3, n=4), 0.2)
        >>> [v.tolist() for v in s.at([3, 0])]
        [[2, 0], [3, 1]]
        """
        y = _values(released, self.n, "released")
        return self.lower[y], self.upper[y]

    def covers(self, true: Any, released: Any) -> np.ndarray:
        """Whether the set of each released count holds the true count (row by row)."""
        x = _values(true, self.n, "true")
        y = _values(released, self.n, "released")
        if self.contiguous:
            return (self.lower[y] <= x) & (x <= self.upper[y])
        return (self.accept_lower[x] <= y) & (y <= self.accept_upper[x])

    def widths(self) -> np.ndarray:
        """``upper - lower`` of every value's set (``-1`` for an empty set)."""
        return np.where(self.empty, -1, self.upper - self.lower)

    def describe(self, histogram: Any = None) -> dict[str, Any]:
        """For the report: the level, the method, and the widths over the released rows.

        A function of the mechanism, ``alpha`` and the released histogram only (public).

        Examples
        --------
        >>> from dpfix.constructors.remap import structured_sampler
        >>> s = neyman_sets(structured_sampler("truncated-geometric", lam=3, n=4), 0.2)
        >>> d = s.describe([5, 0, 0, 5])
        >>> d["width"]["mean"], d["empty_rows"], d["exact"]
        (1.0, 0, True)
        """
        h = self.histogram if histogram is None else np.asarray(histogram, dtype=np.int64)
        if h is not None and h.shape != (self.n,):
            raise ValueError(f"histogram: expected {self.n} counts, got shape {h.shape}")
        weights = None if h is None else np.where(self.empty, 0, h)
        return {
            "kind": "confidence sets for the true top-coded count of each row",
            "alpha": self.alpha, "level": 1 - self.alpha, "method": self.method,
            "exact": self.exact, "contiguous": self.contiguous,
            "definition": "CS(y) = {x : l(x) <= y <= u(x)}, A(x) = l(x)..u(x) the "
                          "equal-tailed acceptance region of row x of the mechanism sampled: "
                          "P(x in CS(y) | x) >= 1 - alpha for every true count x",
            "over": "every value" if h is None else "the released rows",
            "width": width_summary(self.widths() if weights is not None
                                   else self.widths()[~self.empty], weights),
            "empty_rows": None if h is None else int(h[self.empty].sum()),
            "empty_values": int(self.empty.sum()),
        }

    def with_histogram(self, histogram: Any) -> ConfidenceSets:
        """The same sets, summarised over ``histogram`` (the released counts' histogram)."""
        h = np.asarray(histogram, dtype=np.int64)
        if h.shape != (self.n,):
            raise ValueError(f"histogram: expected {self.n} counts, got shape {h.shape}")
        return ConfidenceSets(self.lower, self.upper, self.alpha, self.method, self.exact,
                              self.accept_lower, self.accept_upper, self.contiguous, h)


def _values(v: Any, n: int, name: str) -> np.ndarray:
    a = np.asarray(v)
    if a.ndim > 1 or (a.size and a.dtype.kind not in "iu"):
        raise ValueError(f"{name}: expected integer counts in 0..{n - 1}")
    a = a.astype(np.int64)
    if a.size and (a.min() < 0 or a.max() >= n):
        raise ValueError(f"{name}: counts must lie in 0..{n - 1}")
    return a


# ------------------------------------------------------------------ from acceptance regions
def _sets(l: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """``CS(y)`` for every ``y`` from the acceptance regions: its hull and whether it is one."""
    n = l.size
    if (np.diff(l) >= 0).all() and (np.diff(u) >= 0).all():
        y = np.arange(n)
        return (np.searchsorted(u, y, side="left"), np.searchsorted(l, y, side="right") - 1,
                True)
    lower = np.full(n, n, dtype=np.int64)
    upper = np.full(n, -1, dtype=np.int64)
    cover = np.zeros(n + 1, dtype=np.int64)
    for x in range(n):  # ascending x: the first to cover y is its least, the last its largest
        seg = slice(int(l[x]), int(u[x]) + 1)
        lower[seg] = np.minimum(lower[seg], x)
        upper[seg] = x
        cover[l[x]] += 1
        cover[u[x] + 1] -= 1
    members = np.cumsum(cover)[:n]
    full = np.where(upper >= lower, upper - lower + 1, 0)
    return lower, upper, bool((members == full).all())


def _result(l: Any, u: Any, alpha: float, method: str, is_exact: bool,
            histogram: Any) -> ConfidenceSets:
    l, u = np.asarray(l, dtype=np.int64), np.asarray(u, dtype=np.int64)
    lower, upper, contiguous = _sets(l, u)
    h = None if histogram is None else np.asarray(histogram, dtype=np.int64)
    return ConfidenceSets(_frozen(lower), _frozen(upper), alpha, method, is_exact, _frozen(l),
                          _frozen(u), contiguous, h)


# ------------------------------------------------------------------ structured G R
def _keys(sampler: StructuredSampler) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """For every output ``j``: ``(M_j, sigma_j)`` with ``F(x, j) = P(m < M_j | x) +
    sigma_j / D P(m = M_j | x)``, and the combined key ``M_j (D + 1) + sigma_j``.

    The remap's pieces must go to non-decreasing columns (a monotone remap); then the pieces
    at columns ``<= j`` are a prefix of them and at most one ``m`` (``M_j``) is split.
    """
    R, n = sampler.remap, sampler.n
    cols = R.cols
    if (np.diff(cols) < 0).any():
        raise ValueError(f"mechanism: the remap of {sampler.constructor!r} is not monotone "
                         "(its pieces' columns decrease): the G R method does not apply")
    D = 1 << R.bits
    total = cols.size
    P = np.searchsorted(cols, np.arange(n), side="right")  # pieces at columns <= j
    ms = np.repeat(np.arange(n, dtype=np.int64), np.diff(R.start))
    full = P == total
    M = np.where(full, n, ms[np.minimum(P, total - 1)])
    split = ~full & (P > R.start[np.minimum(M, n - 1)])  # piece P-1 belongs to M_j
    sigma = np.where(split, R.thresholds[np.maximum(P - 1, 0)], 0).astype(np.int64)
    return M.astype(np.int64), sigma, M.astype(np.int64) * (D + 1) + sigma, D


def _lower_index(rho: Fraction, a: Fraction, n: int) -> int:
    """``t* = min{t : Phi(t) > a}`` (``a < 1/2``: ``t* <= 0``), or ``-(n-1)`` if smaller."""
    g = math.log(float(a) * (1 + float(rho))) / math.log(float(rho))  # Phi(-s) > a iff s < g
    t = -min(max(math.ceil(g) - 1, 0), n - 1)

    def above(t: int) -> bool:  # Phi(t) > a
        return exact.sign(lambda num: exact.cdf(t, num(rho)) - num(a)) > 0

    while t > -(n - 1) and above(t - 1):
        t -= 1
    while not above(t):
        t += 1
    return t


def _upper_index(rho: Fraction, a: Fraction, n: int) -> int:
    """``t** = min{t : Phi(t) >= 1 - a}`` (``t** >= 0``), or ``n - 1`` if larger."""
    g = math.log(float(a) * (1 + float(rho))) / math.log(float(rho))  # Phi(t) >= 1-a: t+1 >= g
    t = min(max(math.ceil(g) - 1, 0), n - 1)

    def reaches(t: int) -> bool:  # Phi(t) >= 1 - a
        return exact.sign(lambda num: exact.cdf(t, num(rho)) - (1 - num(a))) >= 0

    while t > 0 and reaches(t - 1):
        t -= 1
    while t < n - 1 and not reaches(t):
        t += 1
    return t


def _first_failing(holds: Any, guess: int, lo: int, hi: int) -> int:
    """The least ``x`` in ``lo .. hi`` where the condition ``holds(x)``, true on a prefix of
    ``lo .. hi``, fails (``hi + 1`` if it never does), found from a float ``guess`` by exact
    steps: two exact checks when the guess is right."""
    x = min(max(int(guess), lo), hi + 1)
    while x > lo and not holds(x - 1):
        x -= 1
    while x <= hi and holds(x):
        x += 1
    return x


def _structured_acceptance(sampler: StructuredSampler, alpha: float
                           ) -> tuple[np.ndarray, np.ndarray]:
    """``l(x)`` and ``u(x)`` of ``T = G R`` exactly (docs/uncertainty.md section 2.2)."""
    n = sampler.n
    a = half_alpha(alpha)
    rho = 1 / Fraction(sampler.lam)
    M, sigma, key, D = _keys(sampler)
    x = np.arange(n, dtype=np.int64)
    l = np.empty(n, dtype=np.int64)
    u = np.empty(n, dtype=np.int64)

    # lower ends: m* = max(0, x + t*)
    ts = _lower_index(rho, a, n)
    interior = (x + ts >= 1) & (x + ts <= n - 2)
    if interior.any():  # u* = (a - Phi(t*-1)) / phi(t*), the same for every such x
        tau = exact.floor(lambda num: (num(a) - exact.cdf(ts - 1, num(rho)))
                          / exact.pmf(ts, num(rho)) * D) + 1
        l[interior] = np.searchsorted(key, (x[interior] + ts) * (D + 1) + tau, side="left")
    edge = x + ts <= 0  # m* = 0: F(x, j) > a iff M_j >= 1 or sigma_j Phi(-x) > a D
    if edge.any():
        last = int(x[edge].max())
        block = np.flatnonzero(M == 0)
        rf, af = float(rho), float(a)

        def below(v: int, s: int) -> bool:  # sigma Phi(-v) > a D
            return exact.sign(lambda num: s * exact.cdf(-v, num(rho)) - num(a) * D) > 0

        X = []
        for s in sigma[block].tolist():  # float guess: sigma rho^v / (1 + rho) > a D iff v < g
            g = (math.log(af * D * (1 + rf) / s) / math.log(rf)) if s > 0 else 0.0
            X.append(_first_failing(lambda v, s=s: below(v, s), math.ceil(g) if g > 0 else 0,
                                    0, last))
        l[edge] = np.searchsorted(np.asarray(X, dtype=np.int64), x[edge], side="right")
    top = (x + ts == n - 1) & (x + ts >= 1)  # t* = 0, x = n-1: m* = n-1
    if top.any():
        tau = exact.floor(lambda num: (num(a) - exact.cdf(-1, num(rho)))
                          / (1 - exact.cdf(-1, num(rho))) * D) + 1
        l[top] = np.searchsorted(key, (n - 1) * (D + 1) + tau, side="left")

    # upper ends: m** = min(x + t**, n-1)
    tu = _upper_index(rho, a, n)
    interior = (x + tu >= 1) & (x + tu <= n - 2)
    if interior.any():  # u** = (1 - a - Phi(t**-1)) / phi(t**)
        tau = exact.ceil(lambda num: (1 - num(a) - exact.cdf(tu - 1, num(rho)))
                         / exact.pmf(tu, num(rho)) * D)
        u[interior] = np.searchsorted(key, (x[interior] + tu) * (D + 1) + tau, side="left")
    if tu == 0:  # x = 0: m** = 0, u** = (1 - a) / Phi(0)
        tau = exact.ceil(lambda num: (1 - num(a)) / exact.cdf(0, num(rho)) * D)
        u[0] = np.searchsorted(key, tau, side="left")
    edge = x + tu >= n - 1  # m** = n-1: with w = Phi(n-2-x), F >= 1-a iff M_j >= n or
    if edge.any():          # (M_j = n-1 and sigma_j (1 - w) >= D (1 - a - w))
        first = int(x[edge].min())
        block = np.flatnonzero(M == n - 1)

        def holds(v: int, s: int) -> bool:
            return exact.sign(lambda num: s * (1 - exact.cdf(n - 2 - v, num(rho)))
                              - D * (1 - num(a) - exact.cdf(n - 2 - v, num(rho)))) >= 0

        # float guess: the condition is u**(v) <= sigma / D with
        # u**(v) = (1 - a - w) / (1 - w) = 1 - a (1 + rho) lam^(n-1-v), increasing in v
        v = np.arange(first, n)
        with np.errstate(over="ignore"):
            ustar = 1 - float(a) * (1 + float(rho)) * np.exp((n - 1 - v) * -math.log(float(rho)))
        guess = first + np.searchsorted(ustar, sigma[block] / D, side="right")
        Y = [_first_failing(lambda v, s=s: holds(v, s), g, first, n - 1)
             for s, g in zip(sigma[block].tolist(), guess.tolist(), strict=True)]
        start = int(block[0]) if block.size else int(np.searchsorted(M, n, side="left"))
        u[edge] = start + np.searchsorted(np.asarray(Y, dtype=np.int64), x[edge], side="right")
    return l, u


# ------------------------------------------------------------------ tables and matrices
def _table_acceptance(table: CheckedTable, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """``l`` and ``u`` of an integer table (rows summing to ``D = 2^bits``), exactly:
    ``F > a`` iff the cumulative weight exceeds ``floor(a D)``; ``F >= 1 - a`` iff it reaches
    ``ceil((1 - a) D)``."""
    a = half_alpha(alpha)
    D = 1 << table.bits
    low, high = math.floor(a * D), math.ceil((1 - a) * D)
    n = table.n
    l = np.empty(n, dtype=np.int64)
    u = np.empty(n, dtype=np.int64)
    for s in range(0, n, 256):
        cum = np.cumsum(table.weights[s:s + 256], axis=1)
        l[s:s + 256] = (cum <= low).sum(axis=1)
        u[s:s + 256] = (cum < high).sum(axis=1)
    return l, u


def _fraction_acceptance(T: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    a = half_alpha(alpha)
    n = T.shape[0]
    l = np.empty(n, dtype=np.int64)
    u = np.empty(n, dtype=np.int64)
    for x in range(n):
        acc, lx, ux = Fraction(0), None, None
        for j in range(n):
            acc += Fraction(T[x, j])
            if lx is None and acc > a:
                lx = j
            if ux is None and acc >= 1 - a:
                ux = j
                break
        if lx is None or ux is None:
            raise ValueError(f"mechanism: row {x} does not sum to 1")
        l[x], u[x] = lx, ux
    return l, u


def _float_acceptance(log_T: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The float rows' regions, each threshold moved by :data:`FLOAT_MARGIN` outwards."""
    a = float(alpha) / 2
    n = log_T.shape[0]
    l = np.empty(n, dtype=np.int64)
    u = np.empty(n, dtype=np.int64)
    for s in range(0, n, 256):
        L = np.asarray(log_T[s:s + 256], dtype=float)
        top = L.max(axis=1, keepdims=True)
        P = np.exp(L - top)
        cum = np.cumsum(P / P.sum(axis=1, keepdims=True), axis=1)
        l[s:s + 256] = (cum <= a - FLOAT_MARGIN).sum(axis=1)
        u[s:s + 256] = np.minimum((cum < 1 - a + FLOAT_MARGIN).sum(axis=1), n - 1)
    return l, u


def acceptance_regions(mechanism: Any, alpha: float) -> tuple[np.ndarray, np.ndarray, str, bool]:
    """``(l, u, method, exact)``: the equal-tailed acceptance region of every row.

    Parameters
    ----------
    mechanism : StructuredSampler, CheckedTable, Mechanism or array_like of Fractions
        What stage 2 samples (``PrivatizedCounts.stage2``), or a mechanism ``T``.
    alpha : float
        In ``(0, 1)``.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, str, bool)

    Raises
    ------
    ValueError
        ``alpha`` outside ``(0, 1)``; a structured sampler whose remap is not monotone; a
        matrix that is not square or whose rows do not sum to 1.

    Examples
    --------
    >>> l, u, method, is_exact = acceptance_regions([[Fraction(3, 4), Fraction(1, 4)],
    ...                                              [Fraction(1, 4), Fraction(3, 4)]], 0.5)
    >>> l.tolist(), u.tolist(), is_exact  # A(0) = {0}: P(y = 0 | 0) = 3/4 >= 1 - 1/2
    ([0, 1], [0, 1], True)
    """
    alpha = check_alpha(alpha)
    if isinstance(mechanism, StructuredSampler):
        l, u = _structured_acceptance(mechanism, alpha)
        lam = mechanism.lam
        return l, u, (f"Neyman, equal-tailed, exact: the law of G R ({mechanism.constructor}; "
                      f"two-sided geometric noise with lam = {lam.numerator}/{lam.denominator}, "
                      "the drawn integer thresholds of the monotone remap)"), True
    if isinstance(mechanism, CheckedTable):
        l, u = _table_acceptance(mechanism, alpha)
        return l, u, (f"Neyman, equal-tailed, exact: the integer table sampled "
                      f"({mechanism.constructor}, rows of 2^{mechanism.bits})"), True
    if isinstance(mechanism, Mechanism) and not mechanism.exact:
        l, u = _float_acceptance(mechanism.log_matrix, alpha)
        return l, u, (f"Neyman, equal-tailed, on the float rows of T ({mechanism.constructor}), "
                      f"each threshold moved {FLOAT_MARGIN:g} outwards: numpy's multinomial "
                      "draws these float rows, not a proved law"), False
    T = mechanism.matrix if isinstance(mechanism, Mechanism) else np.asarray(mechanism,
                                                                             dtype=object)
    if T.ndim != 2 or T.shape[0] != T.shape[1] or T.shape[0] < 1:
        raise ValueError(f"mechanism: expected a square matrix, got shape {T.shape}")
    if not all(isinstance(v, (int, Fraction)) for v in T.flat):
        raise ValueError("mechanism: an exact matrix must hold Fractions (or wrap a float "
                         "matrix in Mechanism.from_matrix(T, eps=...))")
    l, u = _fraction_acceptance(T, alpha)
    return l, u, "Neyman, equal-tailed, exact: the matrix in Fractions", True


def neyman_sets(mechanism: Any, alpha: float, histogram: Any = None) -> ConfidenceSets:
    """The ``(1 - alpha)`` confidence set of every released value (docs/uncertainty.md
    section 2), inverted from what is sampled.

    Parameters
    ----------
    mechanism : StructuredSampler, CheckedTable, Mechanism or array_like of Fractions
        What stage 2 samples (``PrivatizedCounts.stage2``; the float ``Mechanism`` when it
        was drawn by numpy's multinomial), or an exact ``T``.
    alpha : float
        In ``(0, 1)``.
    histogram : array_like of int, optional
        The released histogram, for the width summary of :meth:`ConfidenceSets.describe`.

    Returns
    -------
    ConfidenceSets

    Raises
    ------
    ValueError
        As :func:`acceptance_regions`.

    Examples
    --------
    >>> from dpfix.constructors.remap import structured_sampler
    >>> s = neyman_sets(structured_sampler("northwest", [0.5, 0.3, 0.2], lam=3), 0.1)
    >>> s.exact, s.contiguous, s.lower.tolist(), s.upper.tolist()
    (True, True, [0, 0, 0], [2, 2, 2])
    """
    l, u, method, is_exact = acceptance_regions(mechanism, alpha)
    return _result(l, u, check_alpha(alpha), method, is_exact, histogram)


def preimage_sets(G: StructuredSampler, first: Any, last: Any, alpha: float,
                  histogram: Any = None) -> ConfidenceSets:
    """Confidence sets when each released value ``j`` is a remap of ``y = G(x)`` that may depend
    on the released ``y`` themselves (the one-stage and hybrid frameworks; section 2.4).

    Every output ``j`` came from a ``y`` in its preimage ``first[j] .. last[j]`` (the remap is
    monotone, so the preimage is an interval). With ``A_G(x) = l(x) .. u(x)`` the exact
    acceptance regions of ``G``, ``CS(j) = {x : A_G(x) meets first[j] .. last[j]}``: on the
    event ``y in A_G(x)`` (probability at least ``1 - alpha``) ``x`` is in ``CS(j)``, whatever
    the remap was. Conservative.

    Parameters
    ----------
    G : StructuredSampler
        The truncated geometric sampler that drew ``y`` (identity remap).
    first, last : array_like of int
        The preimage of every output ``j = 0 .. n-1`` (``first > last``: never an output).
    alpha : float
    histogram : array_like of int, optional

    Returns
    -------
    ConfidenceSets
        ``exact`` False.

    Examples
    --------
    >>> from dpfix.constructors.remap import structured_sampler
    >>> G = structured_sampler("truncated-geometric", lam=3, n=4)
    >>> s = preimage_sets(G, [0, 2, 3, 1], [1, 2, 3, 0], 0.2)
    >>> s.lower.tolist(), s.upper.tolist()  # output 3 is never produced: an empty set
    ([0, 1, 2, 4], [2, 3, 3, -1])
    """
    alpha = check_alpha(alpha)
    l, u = _structured_acceptance(G, alpha)
    if (np.diff(l) < 0).any() or (np.diff(u) < 0).any():  # pragma: no cover - G is monotone
        raise AssertionError("G's acceptance regions are not monotone")
    lo, hi = np.asarray(first, dtype=np.int64), np.asarray(last, dtype=np.int64)
    n = G.n
    if lo.shape != (n,) or hi.shape != (n,):
        raise ValueError(f"first, last: expected {n} preimage bounds each")
    never = lo > hi
    lower = np.searchsorted(u, np.where(never, 0, lo), side="left")
    upper = np.searchsorted(l, np.where(never, 0, hi), side="right") - 1
    lower = np.where(never, n, lower)
    upper = np.where(never, -1, upper)
    h = None if histogram is None else np.asarray(histogram, dtype=np.int64)
    lam = G.lam
    method = (f"preimage of a remap chosen from the released y: CS(j) = {{x : A_G(x) meets the "
              f"y mapped to j}}, A_G the exact equal-tailed regions of y = G(x) (two-sided "
              f"geometric, lam = {lam.numerator}/{lam.denominator}); conservative")
    return ConfidenceSets(_frozen(lower), _frozen(upper), alpha, method, False, _frozen(l),
                          _frozen(u), True, h)
