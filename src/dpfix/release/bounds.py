"""A differentially private upper bound for a column of counts (docs/bounds.md).

The bound ``upper`` of :func:`dpfix.release.pipeline.privatize_counts` is public:
every count above it is top-coded to it. Chosen by looking at the data it would
leak; :func:`private_upper` chooses it with a share ``eps_u`` of the budget by the
exponential mechanism with a base measure (McSherry and Talwar 2007) over a public
grid of candidate bounds ``c_0 < ... < c_{K-1}`` (:func:`bound_grid`), with the
base measure ``mu_j = 2^(-d_j)``, ``d_j = floor(log2(c_j / GRID_LINEAR))`` above
``GRID_LINEAR`` (else 0): it halves per doubling of the bound, so that the many
candidates up to ``max_upper`` do not take most of the mass. Two rules (``rule=``)
score the candidates:

- ``"loss"`` (the default), on the grid of :data:`LOSS_GRID_STEPS` steps per doubling:
  the score of ``c_j`` is ``s_j = min(L_j + floor(c_j / 4), SCORE_CAP)``, the
  top-coding loss ``L_j = sum_i max(0, x_i - c_j)`` (:func:`topcoding_loss`, in count
  units) plus the public penalty :data:`BOUND_PENALTY` ``c_j`` (:func:`loss_scores`);
  the output is ``c_j`` with probability ``mu_j lam^(-s_j) / sum_l mu_l lam^(-s_l)``
  for a rational ``lam = p/q <= e^(eps_u)``. The error of a release at bound ``c``
  against the true counts is ``L(c) / N`` plus the mechanism's error on the top-coded
  counts, and so is the Wasserstein-1 distance of its distribution from the true one
  (docs/bounds.md section 1); the study of :mod:`dpfix.experiments.bounds` measures the
  second term changing little near the largest count, and the rule places the bound
  within a few ``1 / eps_u`` counts of it (docs/bounds.md sections 2 and 3). The bound
  is the candidate drawn plus the margin ``round(BOUND_MARGIN / eps_u)`` counts
  (:func:`bound_margin`, at most ``max_upper``): post-processing, no privacy cost; it
  moves the bound off the side of the largest count where a count costs every row above
  the bound.
- ``"quantile"``: a private ``quantile`` of the counts, the score ``|r_j - k|`` with
  ``r_j = #{i : x_i <= c_j}`` and ``k = ceil(quantile N)`` (``N`` rows, public), and
  ``lam <= e^(eps_u / 2)``.

**Privacy of the loss rule** (``eps_u``-DP for a change of one row's count by at
most 1, the neighbouring tables of the release, docs/release.md). A count moving
from ``a`` to ``a + 1`` raises ``max(0, a - c)`` by 1 for every ``c <= a`` and
leaves it for every ``c > a``: every score moves by 0 or 1, all in the same
direction (a monotone score, sensitivity 1; the public penalty and the cap keep both
properties). Then ``Z(x') <= Z(x) <= lam Z(x')`` for the sums ``Z`` of the weights, and
each weight moves by a factor in ``[1/lam, 1]``: ``P_x(j) / P_x'(j) <= lam <=
e^(eps_u)`` both ways, with no factor 2. A change of a count by ``c`` is a path of
``c`` such changes (group privacy: ``c eps_u``), which is how a release under the unit
``row:C`` charges it (each mechanism at its share over ``c``).

**Privacy of the quantile rule** (``eps_u``-DP for a change of one row's count, by
any amount). Changing one row's count from ``a`` to ``b`` moves it across each
candidate at most once: every ``r_j`` changes by at most 1, and ``k`` depends on
``N`` only, so every score changes by at most 1 (sensitivity 1). Then for
neighbouring tables ``x, x'`` and every ``j``, ``mu_j lam^(-s_j(x)) <= lam
mu_j lam^(-s_j(x'))`` and ``Z(x') <= lam Z(x)``, so ``P_x(j) / P_x'(j) <= lam^2 <=
e^(eps_u)``. The grid and ``mu`` are fixed before the data are seen, so they cost
nothing.

**Exact sampling** (:func:`sample_exponential`). No float probability is used. With
``t_j = s_j - min_l s_l``, ``M = min(max t, exact_levels(lam))`` and ``a_j = min(t_j,
M)``, a trial proposes ``j`` with the exact integer weight ``2^(D - d_j) q^(a_j) p^(M
- a_j)`` (``D = max d``; an exact uniform integer below their sum, located in the
cumulative sums) and accepts it iff an exact two-sided geometric draw ``G`` (``P(G =
g)`` proportional to ``lam^-|g|``, :class:`dpfix.sampling.geometric.TwoSidedGeometric`)
has ``G >= t_j - a_j``. ``P(G >= e) = rho^e / (1 + rho)`` for every ``e >= 0`` (``rho
= 1/lam``), so a trial accepts ``j`` with probability proportional to ``mu_j
rho^(t_j)``, the mechanism's weight; the trials are independent, so the first accepted
one has exactly its law (:func:`trial_law`). Every ``j`` with ``t_j <= M`` is accepted
with probability ``1 / (1 + rho) >= 1/2``, and the others' proposal weights are at most
``(mu_j / mu_*) e^-EXACT_NATS`` times a best one's (``mu_*`` its base measure): about two
trials per draw.
"""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from flint import fmpz

from dpfix.numbers.deprecation import renamed_keywords
from dpfix.numbers.numeric import check_positive
from dpfix.release.options import MIN_STAGE_EPSILON, stage_split
from dpfix.sampling.geometric import TwoSidedGeometric
from dpfix.sampling.source import RandomSource, random_source, rational_lam

__all__ = ["private_upper", "choose_upper", "PrivateUpper", "PrivateBound", "bound_grid",
           "upper_scores",
           "topcoding_loss", "loss_scores", "halvings", "exponential_weights",
           "exponential_pmf", "sample_exponential", "trial_law", "exact_levels",
           "default_share", "bound_margin", "BOUND_MARGIN", "RULES", "DEFAULT_RULE", "SCORE_CAP",
           "BOUND_PENALTY", "EXACT_NATS", "LAM_RTOL", "DEFAULT_QUANTILE", "DEFAULT_MAX_UPPER",
           "GRID_LINEAR", "GRID_STEPS_PER_DOUBLING", "LOSS_GRID_STEPS", "UPPER_SHARE",
           "UPPER_MAX", "TOP_MASS_WARNING", "ADVISED_SHARE_MAX", "TopCodingWarning",
           "top_mass_message", "top_mass", "advised_share", "top_coding_warnings",
           "cap_change", "at_cap", "capped_change", "joint_capped_change",
           "joint_mass_message"]

#: The rules scoring the candidates: the top-coding loss (the default) and a quantile.
RULES = ("loss", "quantile")
DEFAULT_RULE = "loss"
#: The loss rule's scores are capped here (a public constant: the cap keeps the
#: sensitivity and the monotonicity, and the scores within int64).
SCORE_CAP = 1 << 62
#: The loss rule's score adds ``floor(BOUND_PENALTY c)`` to the top-coding loss of ``c``:
#: below one count per unit of the bound, the least slope of the loss wherever a row lies
#: above ``c``, so it never trades a row's top-coding for a smaller bound; above the
#: largest count (no loss) it prefers the smaller bound. At ``1/4`` the draw lands below a
#: lone largest count about one time in four (the bound, after :data:`BOUND_MARGIN`, about
#: one in six): a count top-coded costs the distribution more than an empty count above it
#: (docs/bounds.md sections 2 and 3).
BOUND_PENALTY = Fraction(1, 4)
#: The exact sampler's proposal resolves score differences up to ``EXACT_NATS / ln(lam)``
#: (:func:`exact_levels`); beyond, the geometric comparison decides.
EXACT_NATS = 24
#: The loss rule's ``lam <= e^eps_upper`` gives up at most this share of ``eps_upper``
#: (:func:`dpfix.sampling.source.rational_lam`): small ``p`` and ``q``, small exact weights.
LAM_RTOL = 1e-3
#: The quantile of the counts the quantile rule aims at.
DEFAULT_QUANTILE = 0.99
#: The largest candidate bound.
DEFAULT_MAX_UPPER = 10**6
#: ``upper="auto"`` spends this share of a column's budget ``eps`` on the bound by default,
#: and at most :data:`UPPER_MAX` (:func:`default_share`): every per cent of the budget
#: taken from the release costs it about 1 to 1.5 % of its error at small budgets
#: (docs/bounds.md section 3), and the bound lands within a few ``1 / eps_upper`` counts.
UPPER_SHARE = 0.04
#: The most ``upper="auto"`` spends on the bound by default (reached at ``eps = 0.5``): at
#: large budgets the release's error falls like ``e^-eps``, so ``eps_upper`` costs it about
#: ``eps_upper`` of its error whatever ``eps``.
UPPER_MAX = 0.02
#: The loss rule's bound is the candidate drawn plus the margin ``round(BOUND_MARGIN /
#: eps_upper)`` counts (:func:`bound_margin`; at most ``max_upper``): a public function of
#: the DP output, so free. The rule lands within about ``1 / eps_upper`` counts of the
#: largest count on either side; below, every count costs each row above the bound one
#: count, above, an empty count costs the release little (docs/bounds.md sections 2 and 3).
BOUND_MARGIN = Fraction(1, 2)
#: A privatized target with more than this mass on ``upper`` (its last value) warns: many
#: counts are then likely top-coded, and the error against the true counts hidden.
TOP_MASS_WARNING = 0.05
#: The largest share of a column's budget the top-coding warning advises for the bound.
ADVISED_SHARE_MAX = 0.5
#: The grid holds every integer ``1 .. GRID_LINEAR``, then ...
GRID_LINEAR = 32
#: ... ``GRID_STEPS_PER_DOUBLING`` geometric steps per doubling (about 9 % apart): few
#: candidates above the data, where every candidate has the same score.
GRID_STEPS_PER_DOUBLING = 8
#: The loss rule's grid: ``LOSS_GRID_STEPS`` steps per doubling (about 0.14 % apart; every
#: integer up to 767), since its score places the bound within about ``1 / eps_upper`` counts
#: of the largest count: where the candidates lie farther apart than that, where the largest
#: count falls between two of them decides on which side of it the bound lands
#: (docs/bounds.md sections 2 and 3).
LOSS_GRID_STEPS = 512


def bound_grid(max_upper: int = DEFAULT_MAX_UPPER,
               steps: int = GRID_STEPS_PER_DOUBLING) -> np.ndarray:
    """The public candidate bounds: ``1 .. GRID_LINEAR``, then a geometric grid to ``max_upper``.

    Candidates ``round(GRID_LINEAR 2^(m / steps))`` (each distinct once), and
    ``max_upper`` itself. Data-independent. The quantile rule takes ``steps =
    GRID_STEPS_PER_DOUBLING`` (about 9 % apart), the loss rule ``LOSS_GRID_STEPS``.

    Examples
    --------
    >>> g = bound_grid(100)
    >>> g[:3].tolist(), g[-4:].tolist(), len(g)
    ([1, 2, 3], [83, 91, 99, 100], 46)
    >>> len(bound_grid(10**6, LOSS_GRID_STEPS)), bound_grid(10**6, LOSS_GRID_STEPS)[-3:].tolist()
    (6065, [997346, 998697, 1000000])
    """
    top = int(max_upper)
    if isinstance(max_upper, bool) or top != max_upper or top < 1:
        raise ValueError(f"max_upper: must be an integer >= 1, got {max_upper!r}")
    values = set(range(1, min(GRID_LINEAR, top) + 1))
    m = 1
    while (v := round(GRID_LINEAR * 2 ** (m / steps))) < top:
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


def _capped(values: Any) -> np.ndarray:
    """Non-negative integers (Python ints or int64) as int64, each capped at :data:`SCORE_CAP`."""
    return np.array([min(int(v), SCORE_CAP) for v in values], dtype=np.int64)


def topcoding_loss(eta: Any, candidates: Any) -> np.ndarray:
    """The loss rule's scores ``L_j = sum_i max(0, x_i - c_j)`` from the histogram ``eta``,
    capped at :data:`SCORE_CAP`: what top-coding at ``c_j`` takes off the counts, in all.

    ``L(c) = A(c) - c B(c)`` with ``B(c) = sum_{v > c} eta_v`` and ``A(c) = sum_{v > c} v
    eta_v``, in int64 when ``N (len(eta) - 1)`` fits it, else in Python integers: exact.

    Parameters
    ----------
    eta : array_like of int
        ``eta[v]`` rows with count ``v`` (the whole histogram: no top-coding).
    candidates : array_like of int
        Increasing candidate bounds.

    Returns
    -------
    numpy.ndarray of int64

    Examples
    --------
    >>> topcoding_loss([1, 2, 0, 1], [1, 2, 3]).tolist()  # counts 0, 1, 1, 3
    [2, 1, 0]
    """
    e = np.asarray(eta, dtype=np.int64)
    c = np.asarray(candidates, dtype=np.int64)
    wide = int(e.sum()) * max(e.size - 1, 1) >= 1 << 62
    kind = object if wide else np.int64
    v = np.arange(e.size, dtype=np.int64).astype(kind)
    ek = e.astype(kind)
    zero = np.zeros(1, dtype=kind)
    # above[k] = sum_{v >= k} eta_v, mass[k] = sum_{v >= k} v eta_v (k = 0 .. len)
    above = np.concatenate([np.cumsum(ek[::-1])[::-1], zero])
    mass = np.concatenate([np.cumsum((v * ek)[::-1])[::-1], zero])
    k = np.minimum(c + 1, e.size)  # the first value above c_j
    return _capped(mass[k] - c.astype(kind) * above[k])


def loss_scores(losses: Any, candidates: Any, penalty: Any = BOUND_PENALTY) -> np.ndarray:
    """The loss rule's scores ``min(L_j + floor(penalty c_j), SCORE_CAP)`` from the
    top-coding losses ``L_j`` (:func:`topcoding_loss`) of the candidates ``c_j``.

    Examples
    --------
    >>> loss_scores([2, 1, 0, 0], [1, 2, 3, 8]).tolist()
    [2, 1, 0, 2]
    """
    penalty = Fraction(penalty)
    if not 0 <= penalty < 1:
        raise ValueError(f"penalty: a number in [0, 1), got {penalty}")
    a, b = penalty.numerator, penalty.denominator
    return _capped(int(v) + int(c) * a // b for v, c in zip(losses, candidates, strict=True))


def _loss_from_sorted(xs: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """:func:`topcoding_loss` from the sorted counts (no histogram of their range)."""
    N = int(xs.size)
    wide = N * int(xs[-1]) >= 1 << 62
    vals = xs.astype(object) if wide else xs
    tail = np.concatenate([np.cumsum(vals[::-1])[::-1], np.zeros(1, dtype=vals.dtype)])
    k = np.searchsorted(xs, candidates, side="right")  # rows with x <= c_j
    c = candidates.astype(object) if wide else candidates
    return _capped(tail[k] - c * (N - k))


def halvings(candidates: Any, linear: int = GRID_LINEAR) -> np.ndarray:
    """The base measure's exponents ``d_j = floor(log2(c_j / linear))`` (0 up to ``2 linear -
    1``; ``linear`` is :data:`GRID_LINEAR` in the library): ``mu_j = 2^(-d_j)`` halves per
    doubling of the bound.

    Examples
    --------
    >>> halvings([1, 32, 63, 64, 1000]).tolist()
    [0, 0, 0, 1, 4]
    >>> halvings([1, 32, 63, 64, 1000], linear=8).tolist()
    [0, 2, 2, 3, 6]
    """
    c = np.asarray(candidates, dtype=np.int64)
    return np.array([max(int(v) // int(linear), 1).bit_length() - 1 for v in c],
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
    # q^s p^(top - s), from one distinct s to the next, on FLINT's integers: at a small
    # eps the weights run to hundreds of thousands of bits and the division by p^(gap)
    # dominates (GMP's is several times CPython's); the values are the same integers
    p, q = fmpz(lam.numerator), fmpz(lam.denominator)
    power, w, last = {}, p ** top, 0
    for v in sorted(set(t)):
        w = w * q ** (v - last) // p ** (v - last)  # exact: p^(top - last) holds p^(v - last)
        power[v], last = int(w), v
    return [power[s] << (deep - h) for s, h in zip(t, d, strict=True)]


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


def exact_levels(lam: Any) -> int:
    """``M``: the score differences the sampler's proposal resolves exactly,
    ``ceil(EXACT_NATS / ln(lam))`` (so ``lam^-M <= e^-EXACT_NATS``).

    Examples
    --------
    >>> exact_levels(2), exact_levels(Fraction(1001, 1000))
    (35, 24012)
    """
    return max(1, math.ceil(EXACT_NATS / math.log(Fraction(lam))))


def _below(source: RandomSource, bound: int) -> int:
    """One integer uniform on ``0 .. bound-1`` for any ``bound >= 1``: the top
    ``bound.bit_length()`` bits of whole 64-bit words, refused while ``>= bound`` (at most
    half the time)."""
    if bound <= 1 << 63:
        return int(source.below(bound, 1)[0])
    bits = bound.bit_length()
    words = -(-bits // 64)
    while True:  # the words as one integer, word i at bits 64 i .. 64 i + 63
        v = int.from_bytes(source.words(words).astype("<u8").tobytes(), "little")
        v >>= 64 * words - bits
        if v < bound:
            return v


def trial_law(scores: Any, lam: Any, halved: Any = None) -> tuple[list[int], list[int]]:
    """One trial of :func:`sample_exponential`: the exact proposal weights ``2^(D - d_j)
    q^(a_j) p^(M - a_j)`` (``a_j = min(t_j, M)``, ``t_j = s_j - min s``, ``M = min(max t,
    exact_levels(lam))``) and the excesses ``e_j = t_j - a_j`` that the geometric
    comparison decides (a trial accepts ``j`` with probability ``rho^(e_j) / (1 + rho)``).

    Examples
    --------
    >>> trial_law([0, 1, 90], 2)  # M = 35: the third score's excess is 55
    ([34359738368, 17179869184, 1], [0, 0, 55])
    """
    t = [int(v) for v in scores]
    low = min(t)
    t = [v - low for v in t]
    d = [0] * len(t) if halved is None else [int(v) for v in halved]
    levels = min(max(t), exact_levels(lam))
    a = [min(v, levels) for v in t]
    weights = exponential_weights(a + [levels], lam, d + [0])[:-1]  # M in, so q^a p^(M - a)
    return weights, [v - w for v, w in zip(t, a, strict=True)]


def sample_exponential(scores: Any, lam: Any, source: RandomSource, size: int = 1,
                       halved: Any = None) -> np.ndarray:
    """``size`` independent draws of the index ``j`` with probability proportional to
    ``mu_j lam^(-s_j)``, exactly.

    With ``t_j = s_j - min s`` and ``M = min(max t, exact_levels(lam))``, a trial proposes
    ``j`` with the exact integer weight ``2^(D - d_j) q^(a_j) p^(M - a_j)``, ``a_j =
    min(t_j, M)`` (:func:`exponential_weights` of the capped scores: proportional to
    ``mu_j lam^(-a_j)``), and accepts it iff an exact two-sided geometric draw ``G`` has
    ``G >= t_j - a_j``: with probability ``lam^-(t_j - a_j) / (1 + rho)`` (module
    docstring), so the accepted ``j`` has probability proportional to ``mu_j
    lam^(-t_j)``, exactly. Every ``j`` with ``t_j <= M`` is accepted with probability
    ``1 / (1 + rho) >= 1/2``; the others have proposal weights at most ``(mu_j / mu_*)
    e^-EXACT_NATS`` times a best one's (``mu_*`` its base measure): the trials are few
    whatever the scores and the base measure.

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
    >>> sample_exponential([10**15, 0], Fraction(1001, 1000), SeededSource(0), 2,
    ...                    halved=[0, 40]).tolist()  # far scores, a deep base measure
    [1, 1]
    """
    s = np.asarray(scores, dtype=np.int64)
    if s.ndim != 1 or s.size == 0:
        raise ValueError("scores: expected a non-empty vector of integers")
    d = np.zeros(s.size, np.int64) if halved is None else np.asarray(halved, dtype=np.int64)
    if d.shape != s.shape or (d < 0).any():
        raise ValueError("halved: expected one exponent >= 0 per score")
    weights, excess_list = trial_law(s, lam, d)
    excess = np.array(excess_list, dtype=np.int64)  # decided by the geometric comparison
    cum = list(itertools.accumulate(weights))
    geometric = TwoSidedGeometric(lam)
    cap = max(int(excess.max()), 1)  # G >= e_j is decided by min(G, cap) for every e_j <= cap
    out: list[int] = []
    if cum[-1] <= 1 << 63:  # vectorised trials
        table = np.array(cum, dtype=np.uint64)
        batch = max(64, 4 * int(s.size))
        while len(out) < size:
            u = source.below(cum[-1], batch)
            j = np.searchsorted(table, u, side="right")
            g = geometric.sample(batch, source, cap=cap)
            out.extend(j[g >= excess[j]].tolist())
            batch = min(2 * batch, 1 << 22)
        return np.array(out[:size], dtype=np.int64)
    while len(out) < size:  # one trial at a time on Python integers
        j = bisect.bisect_right(cum, _below(source, cum[-1]))
        if int(geometric.sample(1, source, cap=cap)[0]) >= excess[j]:
            out.append(j)
    return np.array(out, dtype=np.int64)


def bound_margin(eps: float, margin: Any = BOUND_MARGIN) -> int:
    """The loss rule's margin: ``round(margin / eps)`` counts for a bound drawn with ``eps``,
    in exact arithmetic (``floor(margin / eps + 1/2)``, the float ``eps`` taken exactly).

    Examples
    --------
    >>> bound_margin(0.02), bound_margin(0.012), bound_margin(30.0), bound_margin(0.02, 0)
    (25, 42, 0, 0)
    """
    m = Fraction(margin)
    if m < 0:
        raise ValueError(f"margin: a number >= 0, got {margin}")
    return math.floor(m / Fraction(check_positive(eps, "eps")) + Fraction(1, 2))


def default_share(eps: float) -> float:
    """The share of ``eps`` that ``upper="auto"`` spends on the bound by default:
    ``min(UPPER_SHARE, UPPER_MAX / eps)``, i.e. ``eps_upper = min(UPPER_SHARE eps,
    UPPER_MAX)``.

    Examples
    --------
    >>> default_share(0.25), default_share(4.0)
    (0.04, 0.005)
    """
    return min(UPPER_SHARE, UPPER_MAX / eps)


@dataclass(frozen=True)
class PrivateBound:
    """A bound ``upper`` to choose privately (``upper=PrivateBound()``, or ``upper="auto"``):
    a DP bound of the column (:func:`choose_upper`, the loss rule by default) spending
    ``share`` of the column's budget, the release the rest (sequential composition). The
    bound chosen, and what it spent, is a :class:`PrivateUpper` in the report.

    Attributes
    ----------
    share : float or None
        The share of the column's budget spent on the bound, in ``(0, 1)``; None:
        :func:`default_share` of the column's budget.

    Examples
    --------
    >>> PrivateBound().share_at(1.0), PrivateBound(0.25).split(1.0)
    (0.02, (0.25, 0.75))
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

    @renamed_keywords(eps_t="eps")
    def share_at(self, eps: float) -> float:
        """The share of ``eps`` spent on the bound (:func:`default_share` when none is
        given)."""
        return default_share(eps) if self.share is None else self.share

    @renamed_keywords(eps_t="eps")
    def split(self, eps: float) -> tuple[float, float]:
        """``(eps_upper, eps_rest)``: the bound's budget and the release's, their exact sum at
        most ``eps`` (:func:`dpfix.release.options.stage_split`), each at least
        :data:`dpfix.release.options.MIN_STAGE_EPSILON`."""
        eps_upper, eps_rest = stage_split(eps, self.share_at(eps))
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
        The budget spent: ``>= ln(lam)`` (loss rule), ``>= 2 ln(lam)`` (quantile rule).
    lam : Fraction
        ``p/q <= e^eps`` (loss rule) or ``<= e^(eps/2)`` (quantile rule), proved.
    rule : str
        ``"loss"`` or ``"quantile"`` (:data:`RULES`).
    quantile : float, Fraction, str or None
        The quantile aimed at (the quantile rule; None for the loss rule).
    candidates : int
        How many candidate bounds (the grid of :func:`bound_grid`).
    max_upper : int
        The largest candidate.
    margin : int
        The counts added to the candidate drawn (:func:`bound_margin`; 0 for the quantile
        rule): ``upper = min(drawn + margin, max_upper)``.
    drawn : int
        The candidate the exponential mechanism drew (a DP output; default ``upper``).
    """

    upper: int
    eps: float
    lam: Fraction
    rule: str
    quantile: Any
    candidates: int
    max_upper: int
    margin: int = 0
    drawn: int | None = None

    def __post_init__(self) -> None:
        if self.drawn is None:
            object.__setattr__(self, "drawn", self.upper)

    @property
    def grid_steps(self) -> int:
        """The grid's steps per doubling (:func:`bound_grid`) for the rule."""
        return LOSS_GRID_STEPS if self.rule == "loss" else GRID_STEPS_PER_DOUBLING

    def describe(self) -> dict[str, Any]:
        """The public report's entry (every value is public: parameters or the DP output)."""
        if self.rule == "loss":
            score = ("the top-coding loss sum_i max(0, x_i - c) (a count moved by 1 moves every "
                     "score by 0 or 1, all the same way: monotone, sensitivity 1), weights "
                     "2^-d lam^-score with lam <= e^eps_upper proved in rational arithmetic, "
                     "drawn exactly: eps_upper-DP for a change of one row's count by 1")
        else:
            score = ("|#{rows with count <= c} - ceil(quantile N)| (sensitivity 1 for a change "
                     "of one row's count), weights 2^-d lam^-score with lam <= e^(eps_upper/2) "
                     "proved in rational arithmetic, drawn exactly: eps_upper-DP")
        entry: dict[str, Any] = {"upper": self.upper, "eps_upper": self.eps, "rule": self.rule}
        if self.rule == "quantile":
            entry["quantile"] = str(self.quantile)
        if self.rule == "loss":
            entry["margin"] = {"drawn": int(self.drawn), "counts": int(self.margin),
                               "rule": "upper = min(drawn + counts, max_upper), counts a "
                                       "public function of eps_upper (by default round("
                                       f"{BOUND_MARGIN} / eps_upper)): post-processing of the "
                                       "drawn candidate, no privacy cost"}
        entry.update({
            "lam": f"{self.lam.numerator}/{self.lam.denominator}",
            "candidates": {"count": self.candidates, "max_upper": self.max_upper,
                           "grid": f"1..{GRID_LINEAR}, then {self.grid_steps} geometric "
                                   "steps per doubling, and max_upper",
                           "base_measure": f"2^-floor(log2(c / {GRID_LINEAR})) above "
                                           f"{GRID_LINEAR}: halves per doubling"},
            "mechanism": "exponential mechanism (McSherry-Talwar 2007) over the public grid "
                         f"with the public base measure 2^-d, score {score} (docs/bounds.md)",
        })
        return entry


def _rule_scores(rule: str, counts: Any, histogram: Any, grid: np.ndarray,
                 quantile: Any) -> np.ndarray:
    """The scores of ``rule`` on the grid, from the counts or the histogram (checked)."""
    if histogram is None:
        d = np.asarray(counts)
        if d.ndim != 1 or d.size == 0 or d.dtype.kind not in "iu" or d.min() < 0:
            raise ValueError("counts: expected a non-empty vector of non-negative integers")
        xs = np.sort(d.astype(np.int64))
        if rule == "loss":
            return loss_scores(_loss_from_sorted(xs, grid), grid)
        return _scores(np.searchsorted(xs, grid, side="right"), int(d.size), quantile)
    eta = np.asarray(histogram)
    if eta.ndim != 1 or eta.size == 0 or eta.dtype.kind not in "iu" or eta.min() < 0 \
            or eta.sum() <= 0:
        raise ValueError("histogram: expected non-negative integers with a positive sum")
    if rule == "loss":
        return loss_scores(topcoding_loss(eta, grid), grid)
    return upper_scores(eta, grid, quantile)


def choose_upper(counts: Any = None, eps: float = 0.1, *, histogram: Any = None,
                 rule: str = DEFAULT_RULE, quantile: Any = None,
                 max_upper: int = DEFAULT_MAX_UPPER, margin: Any = None,
                 seed: Any = None) -> PrivateUpper:
    """:func:`private_upper` with what the report states (a :class:`PrivateUpper`).

    ``histogram`` (``eta[v]`` rows with count ``v``) may replace ``counts``. ``margin``
    (the loss rule): the bound is the candidate drawn plus :func:`bound_margin` ``(eps,
    margin)`` counts, at most ``max_upper`` (default :data:`BOUND_MARGIN`; 0: the candidate
    itself), post-processing of the DP draw.

    Examples
    --------
    >>> b = choose_upper(list(range(1, 44)) * 100, 30.0, seed=0)
    >>> b.upper, b.rule, b.candidates  # the largest count, 43, is a candidate
    (43, 'loss', 6065)
    >>> b = choose_upper(list(range(1, 44)) * 100, 0.05, seed=0)
    >>> b.margin, b.upper == b.drawn + 10  # round(1/2 / 0.05) counts above the draw
    (10, True)
    >>> b = choose_upper(list(range(1, 41)) * 100, 30.0, rule="quantile", quantile=0.5, seed=0)
    >>> b.upper, b.lam, b.candidates
    (20, Fraction(9807052, 3), 152)
    """
    budget = check_positive(eps, "eps")
    if rule not in RULES:
        raise ValueError(f"rule: one of {', '.join(RULES)}, got {rule!r}")
    if rule == "loss" and quantile is not None:
        raise ValueError("quantile: applies to rule='quantile' only; drop it")
    if rule == "quantile" and margin is not None:
        raise ValueError("margin: applies to rule='loss' only; drop it")
    added = bound_margin(budget, BOUND_MARGIN if margin is None else margin) \
        if rule == "loss" else 0
    if rule == "quantile":
        quantile = DEFAULT_QUANTILE if quantile is None else quantile
        _rank(quantile, 1)  # a bad quantile is refused before the data are read
    if (counts is None) == (histogram is None):
        raise ValueError("counts: give the counts or histogram=, not both and not neither")
    steps = LOSS_GRID_STEPS if rule == "loss" else GRID_STEPS_PER_DOUBLING
    grid = bound_grid(max_upper, steps)
    scores = _rule_scores(rule, counts, histogram, grid, quantile)
    lam = rational_lam(budget, LAM_RTOL) if rule == "loss" else rational_lam(budget / 2)
    j = int(sample_exponential(scores, lam, random_source(seed), halved=halvings(grid))[0])
    drawn = int(grid[j])
    return PrivateUpper(min(drawn + added, int(max_upper)), budget, lam, rule, quantile,
                        int(grid.size), int(max_upper), added, drawn)


def private_upper(counts: Any, eps: float, *, rule: str = DEFAULT_RULE, quantile: Any = None,
                  max_upper: int = DEFAULT_MAX_UPPER, margin: Any = None,
                  seed: Any = None) -> int:
    """An ``eps``-DP upper bound for the counts (docs/bounds.md).

    The exponential mechanism over the public grid :func:`bound_grid`
    ``(max_upper)`` with the base measure ``2^(-d)`` (:func:`halvings`), drawn
    exactly (module docstring, with the proofs). ``rule="loss"`` (default): the
    score is the top-coding loss ``sum_i max(0, x_i - c)`` and ``lam <= e^eps``
    (``eps``-DP for a change of one row's count by 1); ``rule="quantile"``: the
    score ``|#{i : x_i <= c} - ceil(quantile N)|`` and ``lam <= e^(eps/2)``
    (``eps``-DP for a change of one row's count by any amount).

    Parameters
    ----------
    counts : array_like of int
        The non-negative counts, one per row.
    eps : float
        The budget spent on the bound.
    rule : str
        ``"loss"`` or ``"quantile"`` (:data:`RULES`).
    quantile : float, Fraction or str, optional
        ``rule="quantile"`` only: the share of rows the bound should leave as they are,
        in ``(0, 1]`` (default :data:`DEFAULT_QUANTILE`).
    max_upper : int
        The largest candidate.
    margin : number, optional
        ``rule="loss"`` only: the bound is the candidate drawn plus :func:`bound_margin`
        ``(eps, margin)`` counts, at most ``max_upper`` (default :data:`BOUND_MARGIN`).
    seed : int or RandomSource, optional
        None: the secure source (AES-128 in counter mode keyed by the operating system's
        CSPRNG; for release); an int: reproducible (not for release).

    Returns
    -------
    int
        A candidate of the grid.

    Raises
    ------
    ValueError
        Bad counts, budget, rule or quantile, or a quantile with the loss rule.

    Examples
    --------
    >>> private_upper(list(range(1, 44)) * 100, 30.0, seed=0)  # the largest count
    43
    >>> private_upper(list(range(1, 41)) * 100, 30.0, rule="quantile", quantile=0.9, seed=0)
    35
    """
    return choose_upper(counts, eps, rule=rule, quantile=quantile, max_upper=max_upper,
                        margin=margin, seed=seed).upper


class TopCodingWarning(UserWarning):
    """The privatized target puts more than :data:`TOP_MASS_WARNING` of its mass on ``upper``."""


def top_mass_message(z: Any, upper: int, share: float | None = None,
                     capped: str | None = None) -> str | None:
    """The warning for a privatized target ``z`` on ``0 .. upper``, or None when it fits.

    A function of the private ``z``, the public ``upper`` and, for a bound chosen privately,
    the public ``share`` of the column's budget it spent: post-processing, no privacy cost.
    The advice names what to change: a fixed bound is raised or chosen privately
    (``upper=PrivateBound()``); a bound chosen privately gets a larger share
    (``upper=PrivateBound(share=...)``, twice the share, at most :data:`ADVISED_SHARE_MAX`)
    or gives way to a larger fixed bound; a bound chosen privately that is its largest
    candidate (``capped``: what to change then, :func:`cap_change`) cannot be raised by a
    larger share, so the advice is ``capped``.

    Examples
    --------
    >>> top_mass_message([0.5, 0.45, 0.05], 2) is None
    True
    >>> print(top_mass_message([0.5, 0.4, 0.1], 2))
    upper = 2: the privatized target puts 10.0% of its mass on the bound (more than 5%), so \
many counts are likely top-coded; raise the bound (upper=) or choose it privately \
(upper=PrivateBound())
    >>> print(top_mass_message([0.5, 0.4, 0.1], 2, share=0.02))
    upper = 2 (chosen privately with 2% of the column's budget): the privatized target puts \
10.0% of its mass on the bound (more than 5%), so many counts are likely top-coded; give the \
bound a larger share (upper=PrivateBound(share=0.04)) or a larger fixed bound (upper=)
    >>> print(top_mass_message([0.5, 0.4, 0.1], 2, share=0.02, capped=cap_change()))
    upper = 2 (chosen privately with 2% of the column's budget): the privatized target puts \
10.0% of its mass on the bound (more than 5%), so many counts are likely top-coded; the bound \
is its largest candidate (max_upper = 2), which a larger share cannot raise: a larger fixed \
bound (upper=)
    """
    mass = top_mass(z)
    if not mass > TOP_MASS_WARNING:
        return None
    what = (f"the privatized target puts {100 * mass:.1f}% of its mass on the bound (more "
            f"than {100 * TOP_MASS_WARNING:g}%), so many counts are likely top-coded")
    if share is None:
        return (f"upper = {upper}: {what}; raise the bound (upper=) or choose it privately "
                "(upper=PrivateBound())")
    chosen = f"upper = {upper} (chosen privately with {100 * share:.3g}% of the column's budget)"
    if capped is not None:
        return (f"{chosen}: {what}; the bound is its largest candidate (max_upper = {upper}), "
                f"which a larger share cannot raise: {capped}")
    return (f"{chosen}: {what}; give the bound a larger share (upper=PrivateBound(share="
            f"{advised_share(share):g})) or a larger fixed bound (upper=)")


def cap_change(limit: str | None = None) -> str:
    """What to change when a bound chosen privately is its largest candidate: a larger share
    cannot raise it. ``limit``: why the candidates stop there where a fixed bound cannot
    pass it either, with its own way out (the LP constructor, a histogram input, a joint
    tuple's state space); None: a larger fixed bound is the change.

    Examples
    --------
    >>> cap_change()
    'a larger fixed bound (upper=)'
    >>> cap_change("the LP constructor takes bounds up to 400: another constructor")
    'the LP constructor takes bounds up to 400: another constructor, with a larger fixed \
bound (upper=)'
    """
    return "a larger fixed bound (upper=)" if limit is None else \
        f"{limit}, with a larger fixed bound (upper=)"


def capped_change(bound: dict | None) -> str | None:
    """:func:`cap_change` for the report's ``upper_bound`` entry ``bound`` when it is its
    largest candidate (:func:`at_cap`; its ``candidates.limit``, if any, says why), else None.

    Examples
    --------
    >>> capped_change({"upper": 26, "candidates": {"max_upper": 26, "limit": "fewer columns"}})
    'fewer columns, with a larger fixed bound (upper=)'
    >>> capped_change({"upper": 25, "candidates": {"max_upper": 26}}) is None
    True
    """
    if not at_cap(bound):
        return None
    return cap_change(bound["candidates"].get("limit"))


def at_cap(bound: dict | None) -> bool:
    """Whether the report's ``upper_bound`` entry ``bound`` is a bound chosen privately that
    is its largest candidate (``upper == candidates.max_upper``).

    Examples
    --------
    >>> at_cap({"upper": 400, "candidates": {"max_upper": 400}}), at_cap(None)
    (True, False)
    """
    top = ((bound or {}).get("candidates") or {}).get("max_upper")
    return top is not None and int(bound["upper"]) >= int(top)


def top_mass(z: Any) -> float:
    """The mass of a privatized target ``z`` on its last value, the bound ``upper``.

    Examples
    --------
    >>> top_mass([0.5, 0.4, 0.1])
    0.1
    """
    return float(np.asarray(z, dtype=float)[-1])


def advised_share(share: float) -> float:
    """The share the warning advises after a bound chosen privately with ``share``: twice it,
    at most :data:`ADVISED_SHARE_MAX`, on three significant digits.

    Examples
    --------
    >>> advised_share(0.02), advised_share(0.4)
    (0.04, 0.5)
    """
    return float(f"{min(2 * share, ADVISED_SHARE_MAX):.3g}")


def joint_mass_message(z: Any, names: list, shares: list,
                       capped: list | None = None) -> str | None:
    """The warning for a privatized joint target ``z`` (an array of shape ``upper_c + 1``
    per column ``names``), or None when it fits: more than :data:`TOP_MASS_WARNING` of its
    mass on the states with some count on its bound (the rows top-coded in at least one
    column). ``shares``: per column the share of its budget spent on a bound chosen
    privately, or None for a given bound; ``capped``: per column, for a bound chosen
    privately that is its largest candidate, what to change instead of its share
    (:func:`cap_change`), else None. When every bound chosen privately is capped, a larger
    share raises none of them and the advice is theirs. Post-processing of ``z``, no
    privacy cost.

    Examples
    --------
    >>> z = np.array([[0.9, 0.02], [0.04, 0.04]])
    >>> print(joint_mass_message(z, ["a", "b"], [None, None]))
    a = 1 or b = 1: the privatized joint target puts 10.0% of its mass on a bound (more than \
5%), so many rows are likely top-coded; raise the bounds (upper=) or choose them privately \
(upper=PrivateBound())
    """
    z = np.asarray(z, dtype=float)
    mass = float(1 - z[tuple(slice(0, k - 1) for k in z.shape)].sum())
    if not mass > TOP_MASS_WARNING:
        return None
    where = " or ".join(f"{n} = {k - 1}" for n, k in zip(names, z.shape, strict=True))
    what = (f"the privatized joint target puts {100 * mass:.1f}% of its mass on a bound (more "
            f"than {100 * TOP_MASS_WARNING:g}%), so many rows are likely top-coded")
    chosen = [s for s in shares if s is not None]
    if not chosen:
        return f"{where}: {what}; raise the bounds (upper=) or choose them privately " \
               "(upper=PrivateBound())"
    stuck = joint_capped_change(shares, capped)
    if stuck is not None:
        return (f"{where}: {what}; the bounds chosen privately are their largest candidates, "
                f"which larger shares cannot raise: {stuck}")
    return (f"{where}: {what}; give the bounds chosen privately a larger share "
            f"(upper=PrivateBound(share={advised_share(max(chosen)):g})) or larger fixed "
            "bounds (upper=)")


def joint_capped_change(shares: list, capped: list | None) -> str | None:
    """The change a joint tuple's warning advises when every bound chosen privately in it
    (``shares`` not None) is its largest candidate (``capped`` not None, :func:`cap_change`):
    larger shares raise none of them. None when some bound chosen privately is below its cap
    or none is chosen privately.

    Examples
    --------
    >>> joint_capped_change([0.02, None], ["fewer columns", None])
    'fewer columns'
    >>> joint_capped_change([0.02, 0.02], ["fewer columns", None]) is None
    True
    """
    stuck = [c for s, c in zip(shares, capped or [None] * len(shares), strict=True)
             if s is not None]
    return stuck[0] if stuck and all(c is not None for c in stuck) else None


def top_coding_warnings(columns: list[dict], joint: Any = ()) -> list[dict]:
    """The public report's ``warnings``: one entry per column whose privatized target puts
    more than :data:`TOP_MASS_WARNING` of its mass on ``upper``, and one per joint tuple
    (the report's ``joint`` entries) whose joint target does on its bounds
    (:func:`joint_mass_message`).

    Built from the public report's entries only (``target_z``, ``upper``, ``upper_bound``,
    a tuple's ``shape``: differentially private or public): post-processing, no privacy
    cost.

    Examples
    --------
    >>> w = top_coding_warnings([{"column": "a", "upper": 2, "target_z": [0.5, 0.4, 0.1],
    ...                           "upper_bound": {"upper": 2, "eps_upper": 0}}])
    >>> w[0]["kind"], w[0]["mass_on_upper"], w[0]["change"]
    ('top-coding', 0.1, 'upper=PrivateBound() or a larger upper=')
    """
    out = []
    for entry in columns:
        z = entry.get("target_z")
        if z is None:
            continue
        bound, upper = entry.get("upper_bound") or {}, int(entry["upper"])
        share = None
        if bound.get("eps_upper"):
            share = float(bound.get("share") or bound["eps_upper"] / entry["budget"]["eps_t"])
        capped = capped_change(bound) if share is not None else None
        message = top_mass_message(z, upper, share, capped)
        if message is None:
            continue
        change = "upper=PrivateBound() or a larger upper=" if share is None else (
            f"upper=PrivateBound(share={advised_share(share):g}) or a larger fixed upper="
            if capped is None else capped)
        out.append({"column": entry.get("column"), "kind": "top-coding", "upper": upper,
                    "mass_on_upper": top_mass(z), "threshold": TOP_MASS_WARNING,
                    "bound": "given" if share is None else "chosen privately",
                    "change": change,
                    "message": message,
                    "source": "the column's target_z (differentially private) and upper "
                              "(public): no privacy cost"})
    by_name = {entry.get("column"): entry for entry in columns}
    for tuple_ in joint or ():
        names = list(tuple_["columns"])
        bounds = [by_name.get(n, {}).get("upper_bound") or {} for n in names]
        shares = [b.get("share") for b in bounds]
        capped = [capped_change(b) for b in bounds]
        z = np.asarray(tuple_["target_z"], dtype=float).reshape(tuple_["shape"])
        message = joint_mass_message(z, names, shares, capped)
        if message is None:
            continue
        chosen = [x for x in shares if x is not None]
        stuck = joint_capped_change(shares, capped)
        out.append({"column": ", ".join(map(str, names)), "kind": "top-coding",
                    "upper": int(max(tuple_["shape"]) - 1),
                    "mass_on_upper": float(1 - z[tuple(slice(0, k - 1) for k in z.shape)].sum()),
                    "threshold": TOP_MASS_WARNING,
                    "bound": "chosen privately" if chosen else "given",
                    "change": "upper=PrivateBound() or larger upper=" if not chosen else (
                        stuck if stuck is not None else
                        f"upper=PrivateBound(share={advised_share(max(chosen)):g}) or "
                        "larger fixed upper="),
                    "message": message,
                    "source": "the tuple's joint target_z (differentially private) and its "
                              "shape (public): no privacy cost"})
    return out
