"""A differentially private upper bound for a column of counts (docs/bounds.md).

The bound ``upper`` of :func:`dpfix.release.pipeline.privatize_counts` is public:
every count above it is top-coded to it. Chosen by looking at the data it would
leak; :func:`private_upper` chooses it with a share ``eps_u`` of the budget, as a
private ``quantile`` of the counts, by the exponential mechanism with a base
measure (McSherry and Talwar 2007) over a public grid of candidate bounds
``c_0 < ... < c_{K-1}`` (:func:`bound_grid`):

- the score of candidate ``c_j`` is ``s_j = |r_j - k|``, with ``r_j = #{i : x_i
  <= c_j}`` the rows that ``c_j`` leaves as they are and ``k = ceil(quantile N)``
  the rank asked for (``N`` rows, public);
- the base measure ``mu_j = 2^(-d_j)``, ``d_j = floor(log2(c_j / GRID_LINEAR))``
  above ``GRID_LINEAR`` (else 0), halves per doubling of the bound: every
  candidate above the largest count has the same score, and without it the
  many of them up to ``max_upper`` would take most of the mass at small
  ``eps_u``;
- the output is ``c_j`` with probability ``mu_j lam^(-s_j) / sum_l mu_l
  lam^(-s_l)``, for a rational ``lam = p/q <= e^(eps_u / 2)`` proved in
  rational arithmetic (:func:`dpfix.sampling.source.rational_lam`).

**Privacy** (``eps_u``-DP for a change of one row's count, by any amount).
Changing one row's count from ``a`` to ``b`` moves it across each candidate at
most once: every ``r_j`` changes by at most 1, and ``k`` depends on ``N``
only, so every score changes by at most 1 (sensitivity 1). Then for
neighbouring tables ``x, x'`` and every ``j``, ``mu_j lam^(-s_j(x)) <= lam
mu_j lam^(-s_j(x'))`` and ``Z(x') <= lam Z(x)`` (``Z`` the sum of the
weights), so ``P_x(j) / P_x'(j) <= lam^2 <= e^(eps_u)``. The grid and ``mu``
are fixed before the data are seen, so they cost nothing.

**Exact sampling.** No float probability is used: a trial proposes ``j`` with
probability ``mu_j / sum mu`` (an exact uniform integer below ``sum_l
2^(D - d_l)``, ``D = max d``, located in the cumulative sums) and accepts it
iff an exact two-sided geometric draw ``G`` (``P(G = g)`` proportional to
``lam^-|g|``, :class:`dpfix.sampling.geometric.TwoSidedGeometric`) has ``G >=
t_j``, with ``t_j = s_j - min_l s_l >= 0``. ``P(G >= t) = rho^t / (1 + rho)``
for every ``t >= 0`` (``rho = 1/lam``), so a trial accepts ``j`` with
probability ``mu_j rho^(t_j) / ((1 + rho) sum mu)``, proportional to the
mechanism's weight; the trials are independent, so the first accepted one has
exactly its law. A trial accepts with probability at least ``mu_j / (2 sum
mu)`` for a best candidate ``j``; the trials are drawn in growing batches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.numbers.numeric import check_positive
from dpfix.release.options import MIN_STAGE_EPSILON, stage_split
from dpfix.sampling.geometric import TwoSidedGeometric
from dpfix.sampling.source import RandomSource, random_source, rational_lam

__all__ = ["private_upper", "choose_upper", "PrivateUpper", "PrivateBound", "bound_grid",
           "upper_scores", "halvings", "exponential_weights", "exponential_pmf",
           "sample_exponential", "DEFAULT_QUANTILE", "DEFAULT_MAX_UPPER", "GRID_LINEAR",
           "GRID_STEPS_PER_DOUBLING",
           "UPPER_SHARE", "TOP_MASS_WARNING", "TopCodingWarning", "top_mass_message"]

#: The quantile of the counts the bound aims at.
DEFAULT_QUANTILE = 0.99
#: The largest candidate bound.
DEFAULT_MAX_UPPER = 10**6
#: The share of a column's budget that ``upper="auto"`` spends on the bound by default.
UPPER_SHARE = 0.1
#: A privatized target with more than this mass on ``upper`` (its last value) warns: many
#: counts are then likely top-coded, and the error against the true counts hidden.
TOP_MASS_WARNING = 0.05
#: The grid holds every integer ``1 .. GRID_LINEAR``, then ...
GRID_LINEAR = 32
#: ... ``GRID_STEPS_PER_DOUBLING`` geometric steps per doubling (about 9 % apart): few
#: candidates above the data, where every candidate has the same score.
GRID_STEPS_PER_DOUBLING = 8


def bound_grid(max_upper: int = DEFAULT_MAX_UPPER) -> np.ndarray:
    """The public candidate bounds: ``1 .. GRID_LINEAR``, then a geometric grid to ``max_upper``.

    Candidates ``round(GRID_LINEAR 2^(m / GRID_STEPS_PER_DOUBLING))`` (each
    distinct once), and ``max_upper`` itself. Data-independent.

    Examples
    --------
    >>> g = bound_grid(100)
    >>> g[:3].tolist(), g[-4:].tolist(), len(g)
    ([1, 2, 3], [83, 91, 99, 100], 46)
    """
    top = int(max_upper)
    if isinstance(max_upper, bool) or top != max_upper or top < 1:
        raise ValueError(f"max_upper: must be an integer >= 1, got {max_upper!r}")
    values = set(range(1, min(GRID_LINEAR, top) + 1))
    m = 1
    while (v := round(GRID_LINEAR * 2 ** (m / GRID_STEPS_PER_DOUBLING))) < top:
        values.add(v)
        m += 1
    values.add(top)
    return np.array(sorted(values), dtype=np.int64)


def _rank(quantile: Any, N: int) -> int:
    """``k = ceil(quantile N)``, computed exactly (a float quantile is taken exactly)."""
    if isinstance(quantile, str):
        quantile = Fraction(quantile)
    try:
        qv = Fraction(quantile)
    except (TypeError, ValueError):
        raise ValueError(f"quantile: a number in (0, 1], got {quantile!r}") from None
    if not 0 < qv <= 1:
        raise ValueError(f"quantile: a number in (0, 1], got {quantile!r}")
    return math.ceil(qv * N)


def _scores(r: np.ndarray, N: int, quantile: Any) -> np.ndarray:
    """``|r_j - ceil(quantile N)|`` (int64)."""
    return np.abs(np.asarray(r, dtype=np.int64) - _rank(quantile, N)).astype(np.int64)


def upper_scores(eta: Any, candidates: Any, quantile: Any = DEFAULT_QUANTILE) -> np.ndarray:
    """The scores ``s_j = |#{i : x_i <= c_j} - ceil(quantile N)|`` from the histogram ``eta``.

    Parameters
    ----------
    eta : array_like of int
        ``eta[v]`` rows with count ``v`` (the whole histogram: no top-coding).
    candidates : array_like of int
        Increasing candidate bounds.
    quantile : float, Fraction or str
        In ``(0, 1]``.

    Returns
    -------
    numpy.ndarray of int64

    Examples
    --------
    >>> upper_scores([1, 2, 0, 1], [1, 2, 3], 0.5).tolist()  # counts 0, 1, 1, 3; k = 2
    [1, 1, 2]
    """
    e = np.asarray(eta, dtype=np.int64)
    c = np.asarray(candidates, dtype=np.int64)
    N = int(e.sum())
    below = np.concatenate([[0], np.cumsum(e)])  # below[v] = #{x < v}
    return _scores(below[np.minimum(c + 1, e.size)], N, quantile)  # r_j = #{x <= c_j}


def halvings(candidates: Any) -> np.ndarray:
    """The base measure's exponents ``d_j = floor(log2(c_j / GRID_LINEAR))`` (0 up to
    ``2 GRID_LINEAR - 1``): ``mu_j = 2^(-d_j)`` halves per doubling of the bound.

    Examples
    --------
    >>> halvings([1, 32, 63, 64, 1000]).tolist()
    [0, 0, 0, 1, 4]
    """
    c = np.asarray(candidates, dtype=np.int64)
    return np.array([max(int(v) // GRID_LINEAR, 1).bit_length() - 1 for v in c],
                    dtype=np.int64)


def exponential_weights(scores: Any, lam: Any, halved: Any = None) -> list[int]:
    """The mechanism's weights ``mu_j lam^(-s_j)``, ``mu_j = 2^(-d_j)``, scaled to integers
    exactly.

    ``t_j = s_j - min s``, ``lam = p/q``, ``T = max t`` and ``D = max d``:
    ``w_j = 2^(D - d_j) q^(t_j) p^(T - t_j)``, so ``w_j / sum w = mu_j lam^(-s_j) /
    sum_l mu_l lam^(-s_l)``.

    Parameters
    ----------
    scores : array_like of int
    lam : Fraction, int or str
        Rational ``> 1``.
    halved : array_like of int, optional
        ``d_j >= 0`` (default 0: no base measure).

    Examples
    --------
    >>> exponential_weights([3, 4, 5], Fraction(3, 2))
    [9, 6, 4]
    >>> exponential_weights([3, 4, 5], Fraction(3, 2), [0, 0, 1])
    [18, 12, 4]
    """
    lam = Fraction(lam)
    t = [int(s) for s in scores]
    d = [0] * len(t) if halved is None else [int(v) for v in halved]
    low = min(t)
    t = [s - low for s in t]
    top, deep = max(t), max(d)
    p, q = lam.numerator, lam.denominator
    return [(q ** s * p ** (top - s)) << (deep - h) for s, h in zip(t, d, strict=True)]


def exponential_pmf(scores: Any, lam: Any, halved: Any = None) -> list[Fraction]:
    """The mechanism's exact law ``P(j) = mu_j lam^(-s_j) / sum_l mu_l lam^(-s_l)``.

    Examples
    --------
    >>> exponential_pmf([0, 1], 2)
    [Fraction(2, 3), Fraction(1, 3)]
    """
    w = exponential_weights(scores, lam, halved)
    total = sum(w)
    return [Fraction(x, total) for x in w]


def sample_exponential(scores: Any, lam: Any, source: RandomSource, size: int = 1,
                       halved: Any = None) -> np.ndarray:
    """``size`` independent draws of the index ``j`` with probability proportional to
    ``mu_j lam^(-s_j)``, exactly (module docstring: proposals by ``mu`` accepted by an
    exact geometric comparison).

    Parameters
    ----------
    scores : array_like of int
        Non-negative integer scores ``s_j``.
    lam : Fraction, int or str
        Rational ``> 1``.
    source : RandomSource
    size : int
    halved : array_like of int, optional
        The base measure's exponents ``d_j >= 0`` (:func:`halvings`; default 0).

    Returns
    -------
    numpy.ndarray of int64

    Examples
    --------
    >>> from dpfix.sampling.source import SeededSource
    >>> sample_exponential([5, 0, 5], 2**30, SeededSource(0), 4).tolist()
    [1, 1, 1, 1]
    """
    s = np.asarray(scores, dtype=np.int64)
    if s.ndim != 1 or s.size == 0:
        raise ValueError("scores: expected a non-empty vector of integers")
    d = np.zeros(s.size, np.int64) if halved is None else np.asarray(halved, dtype=np.int64)
    if d.shape != s.shape or (d < 0).any():
        raise ValueError("halved: expected one exponent >= 0 per score")
    deep = int(d.max())
    if sum(1 << (deep - int(h)) for h in d) > 1 << 62:  # the proposal's total, for below()
        raise ValueError("halved: the base measure spans too many halvings (2^62)")
    t = s - s.min()
    geometric = TwoSidedGeometric(lam)
    cap = max(int(t.max()), 1)  # G >= t_j is decided by min(G, cap) for every t_j <= cap
    cum = np.cumsum(np.left_shift(np.int64(1), deep - d))  # proposal weights 2^(D - d_j)
    out: list[int] = []
    batch = max(64, 4 * int(s.size))
    while len(out) < size:
        u = source.below(int(cum[-1]), batch).astype(np.int64)
        j = np.searchsorted(cum, u, side="right")
        g = geometric.sample(batch, source, cap=cap)
        out.extend(j[g >= t[j]].tolist())
        batch = min(2 * batch, 1 << 22)
    return np.array(out[:size], dtype=np.int64)


@dataclass(frozen=True)
class PrivateBound:
    """A bound ``upper`` to choose privately (``upper=PrivateBound()``, or ``upper="auto"``):
    a DP quantile of the column (:func:`choose_upper`) spending ``share`` of the column's
    budget, the release the rest (sequential composition). The bound chosen, and what it
    spent, is a :class:`PrivateUpper` in the report.

    Attributes
    ----------
    share : float or None
        The share of the column's budget spent on the bound, in ``(0, 1)``; None:
        :data:`UPPER_SHARE`.

    Examples
    --------
    >>> PrivateBound().fraction, PrivateBound(0.25).split(1.0)
    (0.1, (0.25, 0.75))
    >>> PrivateBound(1.5)
    Traceback (most recent call last):
    ...
    ValueError: upper_share: the share of epsilon spent on the bound must be in (0, 1), got 1.5
    """

    share: float | None = None

    def __post_init__(self) -> None:
        if self.share is None:
            return
        share = check_positive(self.share, "upper_share")
        if not share < 1:
            raise ValueError(f"upper_share: the share of epsilon spent on the bound must be in "
                             f"(0, 1), got {self.share!r}")
        object.__setattr__(self, "share", share)

    @property
    def fraction(self) -> float:
        """The share spent on the bound (:data:`UPPER_SHARE` when none is given)."""
        return UPPER_SHARE if self.share is None else self.share

    def split(self, eps_t: float) -> tuple[float, float]:
        """``(eps_upper, eps_rest)``: the bound's budget and the release's, their exact sum at
        most ``eps_t`` (:func:`dpfix.release.options.stage_split`), each at least
        :data:`dpfix.release.options.MIN_STAGE_EPSILON`."""
        eps_upper, eps_rest = stage_split(eps_t, self.fraction)
        if min(eps_upper, eps_rest) < MIN_STAGE_EPSILON:
            raise ValueError(f"upper_share: gives eps_upper = {eps_upper:.3g} and "
                             f"{eps_rest:.3g} for the release; each needs at least "
                             f"{MIN_STAGE_EPSILON:g}")
        return eps_upper, eps_rest


@dataclass(frozen=True)
class PrivateUpper:
    """A DP upper bound and what the public report states about it (all public).

    Attributes
    ----------
    upper : int
        The bound chosen (a DP output).
    eps : float
        The budget spent, ``>= 2 ln(lam)``.
    lam : Fraction
        ``p/q <= e^(eps/2)``, proved.
    quantile : float, Fraction or str
        The quantile aimed at.
    candidates : int
        How many candidate bounds (the grid of :func:`bound_grid`).
    max_upper : int
        The largest candidate.
    """

    upper: int
    eps: float
    lam: Fraction
    quantile: Any
    candidates: int
    max_upper: int

    def describe(self) -> dict[str, Any]:
        """The public report's entry (every value is public: parameters or the DP output)."""
        return {
            "upper": self.upper, "eps_upper": self.eps, "quantile": str(self.quantile),
            "lam": f"{self.lam.numerator}/{self.lam.denominator}",
            "candidates": {"count": self.candidates, "max_upper": self.max_upper,
                           "grid": f"1..{GRID_LINEAR}, then {GRID_STEPS_PER_DOUBLING} "
                                   "geometric steps per doubling, and max_upper",
                           "base_measure": f"2^-floor(log2(c / {GRID_LINEAR})) above "
                                           f"{GRID_LINEAR}: halves per doubling"},
            "mechanism": "exponential mechanism (McSherry-Talwar 2007) over the public grid "
                         "with the public base measure 2^-d, score |#{rows with count <= c} - "
                         "ceil(quantile N)| (sensitivity 1 for a change of one row's count), "
                         "weights 2^-d lam^-score with lam <= e^(eps_upper/2) proved in "
                         "rational arithmetic, drawn exactly: eps_upper-DP (docs/bounds.md)",
        }


def choose_upper(counts: Any = None, eps: float = 0.1, *, histogram: Any = None,
                 quantile: Any = DEFAULT_QUANTILE, max_upper: int = DEFAULT_MAX_UPPER,
                 seed: Any = None) -> PrivateUpper:
    """:func:`private_upper` with what the report states (a :class:`PrivateUpper`).

    ``histogram`` (``eta[v]`` rows with count ``v``) may replace ``counts``.

    Examples
    --------
    >>> b = choose_upper(list(range(1, 41)) * 100, 30.0, quantile=0.5, seed=0)
    >>> b.upper, b.lam, b.candidates
    (20, Fraction(9807052, 3), 152)
    """
    budget = check_positive(eps, "eps")
    if (counts is None) == (histogram is None):
        raise ValueError("counts: give the counts or histogram=, not both and not neither")
    grid = bound_grid(max_upper)
    if histogram is None:
        d = np.asarray(counts)
        if d.ndim != 1 or d.size == 0 or d.dtype.kind not in "iu" or d.min() < 0:
            raise ValueError("counts: expected a non-empty vector of non-negative integers")
        ranks = np.searchsorted(np.sort(d.astype(np.int64)), grid, side="right")  # #{x <= c}
        scores = _scores(ranks, int(d.size), quantile)
    else:
        eta = np.asarray(histogram)
        if eta.ndim != 1 or eta.size == 0 or eta.dtype.kind not in "iu" or eta.min() < 0 \
                or eta.sum() <= 0:
            raise ValueError("histogram: expected non-negative integers with a positive sum")
        scores = upper_scores(eta, grid, quantile)
    lam = rational_lam(budget / 2)
    j = int(sample_exponential(scores, lam, random_source(seed), halved=halvings(grid))[0])
    return PrivateUpper(int(grid[j]), budget, lam, quantile, int(grid.size), int(max_upper))


def private_upper(counts: Any, eps: float, *, quantile: Any = DEFAULT_QUANTILE,
                  max_upper: int = DEFAULT_MAX_UPPER, seed: Any = None) -> int:
    """An ``eps``-DP upper bound for the counts: a private ``quantile`` (docs/bounds.md).

    The exponential mechanism over the public grid :func:`bound_grid`
    ``(max_upper)`` with the base measure ``2^(-d)`` (:func:`halvings`), the
    score ``|#{i : x_i <= c} - ceil(quantile N)|`` and ``lam <= e^(eps/2)``,
    drawn exactly (module docstring, with the proof that it is ``eps``-DP for a
    change of one row's count).

    Parameters
    ----------
    counts : array_like of int
        The non-negative counts, one per row.
    eps : float
        The budget spent on the bound.
    quantile : float, Fraction or str
        The share of rows the bound should leave as they are, in ``(0, 1]``.
    max_upper : int
        The largest candidate.
    seed : int or RandomSource, optional
        None: the secure source (AES-128 in counter mode keyed by the operating system's
        CSPRNG; for release); an int: reproducible (not for release).

    Returns
    -------
    int
        A candidate of the grid.

    Examples
    --------
    >>> private_upper(list(range(1, 41)) * 100, 30.0, quantile=0.9, seed=0)
    35
    """
    return choose_upper(counts, eps, quantile=quantile, max_upper=max_upper, seed=seed).upper


class TopCodingWarning(UserWarning):
    """The privatized target puts more than :data:`TOP_MASS_WARNING` of its mass on ``upper``."""


def top_mass_message(z: Any, upper: int) -> str | None:
    """The warning for a privatized target ``z`` on ``0 .. upper``, or None when it fits.

    A function of the private ``z`` and the public ``upper`` only: post-processing,
    no privacy cost.

    Examples
    --------
    >>> top_mass_message([0.5, 0.45, 0.05], 2) is None
    True
    >>> print(top_mass_message([0.5, 0.4, 0.1], 2))
    upper = 2: the privatized target puts 10.0% of its mass on the bound (more than 5%), so \
many counts are likely top-coded; raise the bound (upper=) or choose it privately \
(upper='auto')
    """
    mass = float(np.asarray(z, dtype=float)[-1])
    if not mass > TOP_MASS_WARNING:
        return None
    return (f"upper = {upper}: the privatized target puts {100 * mass:.1f}% of its mass on "
            f"the bound (more than {100 * TOP_MASS_WARNING:g}%), so many counts are likely "
            "top-coded; raise the bound (upper=) or choose it privately (upper='auto')")
