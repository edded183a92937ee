"""The two-stage pipeline (paper Section 1.2 and Appendix F; docs/math_notes.md): privatize
a table of counts.

1. the counts ``d`` (top-coded at the public bound ``upper``) give the histogram
   ``eta`` and the distribution of counts ``zeta = eta / N``;
2. a distribution privatizer spends ``eps_1`` on ``zeta`` -> public target ``z``;
3. a constructor spends ``eps_2`` -> count mechanism ``T`` (fixed point ``z``
   for the fixed-point constructors);
4. every row's count ``d_i`` is replaced by a draw from row ``d_i`` of ``T``.

By sequential composition the release is ``eps_t = eps_1 + eps_2``-DP (plus
the ``delta`` of stage 1 for the cyclic Gaussian). The one-stage baselines skip
steps 2 and spend all of ``eps_t`` on the counts; the discrete Gaussian among them
is (eps_t, delta)-DP. The constructors are reached by their names in
:data:`dpfix.constructors.CONSTRUCTORS`. Privacy is never weakened silently:

- the split is reported (:attr:`PrivatizedCounts.split_rule`, ``split_fraction``);
- the float constructors meet their own ``eps`` only within
  :data:`dpfix.theory.mechanism.FLOAT_RTOL`, so ``T`` is built at
  ``eps_2 (1 - EPS_MARGIN)`` and its realized level ``privacy_level()`` is
  then required to be at most ``eps_2`` itself, with no tolerance, before any
  row is touched (else :class:`NotPrivateError`); the level is that of ``T``
  with its rows normalised in log space;
- what is drawn is itself exactly private (:mod:`dpfix.sampling`,
  docs/sampling.md): the northwest corner, Algorithm 2 and the truncated
  geometric mechanism are drawn as ``G R`` (exact two-sided geometric noise
  with a rational ``lam = p/q <= e^eps_2``, clamped, then a remap that depends
  only on the public ``z``: post-processing), in ``O(n)`` memory without
  building ``T`` beyond ``n = STRUCTURED_T_MAX``; every other pure-DP
  mechanism from integer weights checked exactly ``log(lam)``-DP before any
  draw; the randomness is the operating system's CSPRNG, or a seeded
  generator when ``seed`` is given (not for release). Only the discrete
  Gaussian (an (eps, delta) mechanism) is still drawn by numpy's multinomial on
  float rows of ``T``, as is a histogram input above ``EXACT_HISTOGRAM_MAX_N`` rows;
- the progress callback is told of fixed shares of the rows, never of group
  sizes (these make up the histogram).

The float path (:func:`apply_mechanism`) groups rows by input count: one
multinomial draw per count value, its outcomes shuffled onto the group's rows;
``O(N + n^2)`` in all (the grouping sort is numpy's radix sort, linear for
counts of 16 bits).
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.constructors import CONSTRUCTORS, SELECTORS, construct
from dpfix.constructors.remap import quantile_plan, structured_sampler
from dpfix.numbers.calibration import discrete_gaussian_delta
from dpfix.numbers.numeric import check_fraction, check_positive, check_probability
from dpfix.release.bounds import (
    DEFAULT_MAX_UPPER,
    UPPER_SHARE,
    TopCodingWarning,
    choose_upper,
    top_mass_message,
)
from dpfix.release.privatizers import POSTPROCESSORS, PRIVATIZERS, privatize_distribution
from dpfix.release.privatizers.deconvolve import ESTIMATORS, deconvolve
from dpfix.sampling import (
    STRUCTURED,
    SamplingCheckError,
    checked_table,
    random_source,
    rational_lam,
)
from dpfix.sampling.quantile import apportion, quantile_joint, quantile_remap
from dpfix.theory.mechanism import FLOAT_RTOL, Mechanism

__all__ = ["histogram", "RULE_OF_THUMB", "rule_of_thumb_split", "split_budget",
           "apply_mechanism", "apply_histogram", "privatize_counts",
           "PrivatizedCounts", "EPS_MARGIN", "NotPrivateError", "TimeLimitReached",
           "check_choices", "MAX_HISTOGRAM_N", "LP_MAX_UPPER", "LP_SOLVERS",
           "STRUCTURED_T_MAX", "EXACT_HISTOGRAM_MAX_N", "JOINT_MAX_N", "FRAMEWORKS",
           "REMAPS", "complete_no_split", "AUTO_RULE",
           "auto_setting", "auto_statement"]
__all__ += ["MIN_STAGE_EPSILON", "AUTO_MAX_UPPER_TABLE"]

#: Paper Appendix F: f = B + (A - B) exp(-K eps_t), fitted to Table 3.
RULE_OF_THUMB = {"A": 0.639, "B": 0.106, "K": 2.869}

#: The frameworks of :func:`privatize_counts` (docs/no_split.md); ``"auto"`` applies
#: :data:`AUTO_RULE`.
FRAMEWORKS = ("two-stage", "one-stage", "hybrid", "auto")

#: The data-independent rule of the frontier study (docs/no_split.md section 4,
#: ``dpfix reproduce frontier``): steps ``(from eps_t, framework, split, estimator)``,
#: the last step whose ``from`` is at most ``eps_t`` applies; the remap is northwest.
AUTO_RULE: tuple[tuple[float, str, Any, str | None], ...] = (
    (0.0, "hybrid", "rule-of-thumb", "em"),
    (1.88, "one-stage", None, "em-smooth"),
)

#: How the one-stage and hybrid frameworks map every released ``y`` to an output.
REMAPS = ("northwest", "quantile")


#: T is built at eps_2 (1 - EPS_MARGIN): a constructor meeting its own eps
#: within FLOAT_RTOL then has a realized level below eps_2 (1 - FLOAT_RTOL).
EPS_MARGIN = 2 * FLOAT_RTOL

#: The least budget a stage may spend (eps_1, eps_2; eps_t for a one-stage method): three
#: times the limit of the exact samplers, which need lam = e^eps away from 1 at a 2^-20
#: resolution (they fail at eps = 1e-6; far below, lam = 1 divides by zero). Every
#: constructor and framework works at it (``dpfix privatize`` takes its floor from here).
MIN_STAGE_EPSILON = 1e-5

#: Largest candidate of ``upper="auto"`` for a constructor that builds the ``n x n`` ``T``
#: (the structured ones take :data:`dpfix.release.bounds.DEFAULT_MAX_UPPER`).
AUTO_MAX_UPPER_TABLE = 10_000

#: Largest ``upper`` for ``constructor="lp"``: HiGHS solves n ~ 400 in about 60 s here.
LP_MAX_UPPER = 400

#: The HiGHS methods of ``constructor="lp"`` (``solver=``): dual simplex, interior point.
LP_SOLVERS = ("highs-ds", "highs-ipm")

#: A histogram input may describe up to this many rows (numpy's multinomial takes
#: int64 trial counts; the rows themselves are never materialised).
MAX_HISTOGRAM_N = 2**62

#: The structured constructors (sampled as ``G R``) build ``T`` itself, for the
#: report, only up to this ``n``; beyond it ``mechanism`` is None (nothing needs it:
#: building T took 21 of the 23 s of 10^6 rows at upper 10^4, benchmarks/bench_sampling.py).
STRUCTURED_T_MAX = 2_001

#: A histogram input returns the ``n x n`` joint histogram: ``n`` at most this.
JOINT_MAX_N = 10_001

#: A histogram input up to this many rows is drawn row by row with the exact
#: samplers; above it, by numpy's multinomial on float rows of ``T`` (labelled).
EXACT_HISTOGRAM_MAX_N = 10**8

#: Rows drawn per chunk by the exact samplers (memory ``O(chunk)``; progress ticks).
_CHUNK = 1 << 21


class NotPrivateError(ValueError):
    """The constructed mechanism is not ``eps_2``-DP; no row was drawn."""


class TimeLimitReached(RuntimeError):
    """The LP constructor hit ``time_limit``; no row was drawn.

    Attributes
    ----------
    z : numpy.ndarray
        Stage 1's public target (differentially private).
    eps_1, eps_2 : float
        The budgets of the two stages.
    seconds : dict
        Time spent per stage.
    """

    def __init__(self, message: str, z: np.ndarray, eps_1: float, eps_2: float,
                 seconds: dict) -> None:
        super().__init__(message)
        self.z, self.eps_1, self.eps_2, self.seconds = z, eps_1, eps_2, seconds


def histogram(counts: Any, upper: int) -> tuple[np.ndarray, int]:
    """The histogram of ``counts`` top-coded at ``upper`` (step 1 of the pipeline).

    Parameters
    ----------
    counts : array_like of int
        Non-negative integer counts, one per row.
    upper : int
        The public upper bound (``n = upper + 1`` count values ``0 .. upper``).

    Returns
    -------
    eta : numpy.ndarray of int64
        ``eta[i]`` rows with count ``i`` after top-coding (length ``upper + 1``).
    topcoded : int
        How many counts were above ``upper`` (derived from the data: confidential).

    Raises
    ------
    ValueError
        If ``upper < 1``.

    Examples
    --------
    >>> eta, top = histogram([0, 1, 5, 9, 3], 4)
    >>> eta.tolist(), top
    ([1, 1, 0, 1, 2], 2)
    """
    if upper < 1:
        raise ValueError(f"upper: must be >= 1, got {upper}")
    c = np.asarray(counts, dtype=np.int64)
    top = int((c > upper).sum())
    return np.bincount(np.minimum(c, upper), minlength=upper + 1), top


_histogram = histogram  # privatize_counts' keyword ``histogram`` shadows the function


def rule_of_thumb_split(eps_t: float) -> float:
    """The fraction ``f = eps_1 / eps_t`` of the paper's rule of thumb (Appendix F).

    Parameters
    ----------
    eps_t : float
        The total budget.

    Returns
    -------
    float
        ``f = B + (A - B) exp(-K eps_t)`` with :data:`RULE_OF_THUMB`.

    Examples
    --------
    >>> round(rule_of_thumb_split(1.0), 4)
    0.1363
    """
    a, b, k = RULE_OF_THUMB["A"], RULE_OF_THUMB["B"], RULE_OF_THUMB["K"]
    return b + (a - b) * math.exp(-k * eps_t)


def _split_fraction(epsilon: float, split: Any) -> tuple[float, str]:
    if split is None:
        split = "rule-of-thumb"
    if isinstance(split, str):
        if split != "rule-of-thumb":
            raise ValueError(f"split: 'rule-of-thumb' or a fraction in (0, 1), got {split!r}")
        return rule_of_thumb_split(epsilon), "rule-of-thumb"
    return check_fraction(split), "fixed fraction"


def split_budget(epsilon: float, split: Any = "rule-of-thumb") -> tuple[float, float]:
    """``(eps_1, eps_2)`` from the total budget and the split (paper Appendix F).

    Parameters
    ----------
    epsilon : float
        The total budget ``eps_t``.
    split : float or str
        The stage-1 fraction in ``(0, 1)``, or ``"rule-of-thumb"``
        (:func:`rule_of_thumb_split`).

    Returns
    -------
    (float, float)
        ``eps_1 + eps_2 = epsilon``.

    Raises
    ------
    ValueError
        On a bad split.

    Examples
    --------
    >>> split_budget(2.0, 0.25)
    (0.5, 1.5)
    """
    f, _ = _split_fraction(epsilon, split)
    eps_1 = f * epsilon
    return eps_1, epsilon - eps_1


class _Ticks:
    """Tells ``progress`` of fixed shares of the ``N`` rows at the end of each phase."""

    def __init__(self, progress: Callable[[int], Any] | None, total: int) -> None:
        self.progress, self.total, self.told = progress, total, 0

    def reach(self, share: float) -> None:
        target = round(self.total * share)
        if self.progress is not None and target > self.told:
            self.progress(target - self.told)
            self.told = target


def _row_probabilities(mech: Mechanism, i: int) -> np.ndarray:
    if mech.exact:
        row = np.array([float(x) for x in mech.matrix[i]])
    else:
        L = np.asarray(mech.log_matrix[i], dtype=float)
        row = np.exp(L - L.max())
    return row / row.sum()


def apply_mechanism(mech: Mechanism, counts: Any, rng: np.random.Generator,
                    progress: Callable[[int], Any] | None = None) -> np.ndarray:
    """Replace each count ``i`` by a draw from row ``i`` of ``T``, in ``O(N + n^2)``.

    The rows are grouped by input count (a stable radix sort, linear for
    16-bit keys); the ``m_i`` rows with count ``i`` get the outcomes of one
    multinomial draw ``Mult(m_i, T[i])`` in a uniformly random order (a
    shuffle within the group), so every row gets an independent draw from its
    row of ``T``. Reproducible for a given generator. ``progress(k)`` is told
    of fixed shares of the ``N`` rows as the phases end: never of group
    sizes, which make up the histogram.

    Parameters
    ----------
    mech : Mechanism
        ``T``, exact or float.
    counts : array_like of int
        One count per row, in ``0 .. n-1``.
    rng : numpy.random.Generator
        The randomness of the draws.
    progress : callable, optional
        Told of fixed shares of the rows.

    Returns
    -------
    numpy.ndarray
        int64 output counts, in the rows' order.

    Raises
    ------
    ValueError
        Counts that are not integers in ``0 .. n-1``.

    Examples
    --------
    >>> M = Mechanism.from_matrix([[1.0, 0.0], [0.0, 1.0]], eps=1.0)
    >>> apply_mechanism(M, [1, 0, 1], np.random.default_rng(0)).tolist()
    [1, 0, 1]
    """
    d = np.asarray(counts)
    if d.ndim != 1 or d.dtype.kind not in "iu":
        raise ValueError(f"counts: expected a vector of integers, got {d.dtype} of shape {d.shape}")
    n, N = mech.n, d.shape[0]
    if N and (d.min() < 0 or d.max() >= n):
        raise ValueError(f"counts: must lie in 0..{n - 1}")
    ticks = _Ticks(progress, N)
    small = np.uint16 if n <= 1 << 16 else np.uint32  # narrow values: the shuffles stay in cache
    key = d.astype(small)
    order = np.argsort(key, kind="stable")  # radix sort for 16-bit keys: O(N)
    ticks.reach(0.25)
    sizes = np.bincount(key, minlength=n)
    drawn = np.empty(N, dtype=small)
    start, values = 0, np.arange(n, dtype=small)
    for i in np.flatnonzero(sizes):
        m = int(sizes[i])
        part = drawn[start:start + m]
        part[:] = np.repeat(values, rng.multinomial(m, _row_probabilities(mech, i)))
        rng.shuffle(part)
        start += m
    ticks.reach(0.85)
    out = np.empty(N, dtype=np.int64)
    out[order] = drawn  # ascending positions within each group: a streaming write
    ticks.reach(1.0)
    return out


def apply_histogram(mech: Mechanism, eta: Any, rng: np.random.Generator,
                    progress: Callable[[int], Any] | None = None) -> np.ndarray:
    """The joint histogram ``J[i, j]`` (rows with input ``i`` and output ``j``) of
    applying ``T`` to ``eta[i]`` rows of each count ``i``, without materialising them.

    Row ``i`` of ``J`` is one draw ``Mult(eta_i, T[i])``: the output histogram
    ``J.sum(0)`` is a sum of multinomials, distributed exactly as the histogram
    of :func:`apply_mechanism`'s output. ``O(n^2)`` whatever ``N = sum eta``.

    Parameters
    ----------
    mech : Mechanism
        ``T``, exact or float.
    eta : array_like of int
        ``n`` non-negative counts of rows per input count.
    rng : numpy.random.Generator
        The randomness of the draws.
    progress : callable, optional
        Told of the number of rows once.

    Returns
    -------
    numpy.ndarray
        ``n x n`` int64 joint histogram.

    Raises
    ------
    ValueError
        A histogram of the wrong length, not integers, or negative.

    Examples
    --------
    >>> M = Mechanism.from_matrix([[1.0, 0.0], [0.0, 1.0]], eps=1.0)
    >>> apply_histogram(M, [10**15, 2], np.random.default_rng(0)).tolist()
    [[1000000000000000, 0], [0, 2]]
    """
    eta = np.asarray(eta)
    if eta.ndim != 1 or eta.dtype.kind not in "iu" or eta.shape[0] != mech.n:
        raise ValueError(f"eta: expected {mech.n} integer counts, got {eta.dtype} of shape "
                         f"{eta.shape}")
    if eta.min() < 0:
        raise ValueError("eta: must be non-negative")
    joint = np.zeros((mech.n, mech.n), dtype=np.int64)
    for i in np.flatnonzero(eta):
        joint[i] = rng.multinomial(int(eta[i]), _row_probabilities(mech, i))
    if progress is not None:
        progress(int(sum(int(v) for v in eta)))
    return joint


def _draw_rows(sampler: Any, d: np.ndarray, source: Any,
               progress: Callable[[int], Any] | None) -> np.ndarray:
    """Every row's draw from the exact sampler, in chunks (progress told of fixed shares)."""
    N = d.shape[0]
    ticks = _Ticks(progress, N)
    out = np.empty(N, dtype=np.int64)
    for s in range(0, N, _CHUNK):
        e = min(s + _CHUNK, N)
        out[s:e] = sampler.sample(d[s:e], source)
        ticks.reach(e / N)
    return out


def _draw_histogram(sampler: Any, eta: np.ndarray, n: int, source: Any,
                    progress: Callable[[int], Any] | None) -> np.ndarray:
    """The joint histogram drawn row by row with the exact sampler (``N`` at most
    :data:`EXACT_HISTOGRAM_MAX_N`), without materialising more than a chunk of rows."""
    joint = np.zeros((n, n), dtype=np.int64)
    for i in np.flatnonzero(eta):
        left = int(eta[i])
        while left:
            m = min(left, _CHUNK)
            joint[i] += np.bincount(sampler.sample(np.full(m, i), source), minlength=n)
            left -= m
    if progress is not None:
        progress(int(sum(int(v) for v in eta)))
    return joint


@dataclass
class PrivatizedCounts:
    """What :func:`privatize_counts` returns.

    ``counts`` (``None`` for a histogram input: then ``joint``, the ``n x n``
    histogram of (input, output) pairs, whose column sums are the private
    output histogram, while its rows are the true ``eta``: confidential), ``z``,
    the output distribution and everything derived from
    ``z`` and ``T`` are differentially private; ``n``, ``N`` and the budgets
    are public. ``topcoded`` (how many true counts exceeded ``upper``) is
    derived from the true data without noise: it is for the data holder and
    :meth:`public_report` leaves it out, as it leaves out ``seconds`` (the
    draw's time grows with the number of non-empty count groups).
    ``mechanism`` is None for a structured constructor above
    :data:`STRUCTURED_T_MAX` (``T`` is not built); ``sampler`` describes how
    stage 2 drew its rows, with its privacy statement (None: numpy's
    multinomial on float rows of ``T``); ``stage2`` is that exact sampler itself
    (a function of the public ``z`` and ``T`` only), which draws further rows with
    the same mechanism (``stage2.sample(counts, source)``: the Dask engine).
    The one-stage and hybrid frameworks add ``framework``, ``estimator``,
    ``remap``, ``deconvolution`` (the estimate's result) and
    ``released_histogram`` (the histogram of ``y``, itself private).
    ``eps_upper`` and ``bound`` (``upper="auto"``): the budget spent on the DP
    bound and its public description (:meth:`dpfix.release.bounds.PrivateUpper.describe`).
    ``confidential`` (the Dask engine: the true histogram ``eta`` and the
    realized count errors ``abs`` and ``squared``) is derived from the true
    data without noise, like ``topcoded``, and stays out of :meth:`public_report`.
    """

    counts: np.ndarray
    z: np.ndarray | None
    eps_1: float
    eps_2: float
    mechanism: Mechanism | None
    estimated_count_error: float | None
    n: int
    N: int
    topcoded: int
    privatizer: str | None
    constructor: str
    seconds: dict = field(default_factory=dict)
    stage1: Any = None
    split_rule: str = "rule-of-thumb"
    split_fraction: float = 0.0
    eps_construction: float = 0.0
    privacy_level: float = 0.0
    delta: float = 0.0
    seed: int | None = None
    selector: str | None = None
    joint: np.ndarray | None = None
    sampler: dict | None = None
    stage2: Any = field(default=None, repr=False)
    drawn_histogram: np.ndarray | None = None
    framework: str = "two-stage"
    estimator: str | None = None
    remap: str | None = None
    deconvolution: Any = field(default=None, repr=False)
    released_histogram: np.ndarray | None = field(default=None, repr=False)
    confidential: dict | None = field(default=None, repr=False)
    chosen_by: str | None = None
    eps_upper: float = 0.0
    bound: dict | None = None

    @property
    def epsilon(self) -> float:
        """``eps_t = eps_upper + eps_1 + eps_2`` (``eps_upper``: the bound of ``upper="auto"``)."""
        return self.eps_upper + self.eps_1 + self.eps_2

    @property
    def output_distribution(self) -> np.ndarray:
        """``zhat``: the share of output rows at each count ``0 .. n-1`` (private)."""
        return self.output_histogram / self.N

    @property
    def output_histogram(self) -> np.ndarray:
        """How many output rows have each count ``0 .. n-1`` (private)."""
        if self.drawn_histogram is not None:  # rows drawn by the caller (draw=False)
            return self.drawn_histogram
        if self.counts is None:
            if self.joint is None:
                raise ValueError("no rows were drawn (draw=False) and none reported")
            return self.joint.sum(axis=0)
        return np.bincount(self.counts, minlength=self.n)

    def samplers(self) -> dict[str, str]:
        """How stage 1 and stage 2 drew their randomness (for the report)."""
        if self.stage1 is None:
            s1 = "none (one-stage constructor)"
        elif self.stage1.secure:
            s1 = f"OpenDP {self.stage1.noise.get('distribution', '')} (secure sampler)"
        else:
            s1 = (f"numpy {self.stage1.noise.get('distribution', '')} with seed {self.seed}: "
                  "NOT FOR PRODUCTION (tests and experiments only)")
        if self.sampler is None or self.sampler.get("kind") == "float multinomial":
            s2 = ("numpy PCG64 multinomial on float64 rows of T, "
                  + ("seeded from fresh OS randomness (not recorded)" if self.seed is None
                     else f"seed {self.seed}: NOT FOR PRODUCTION"))
            return {"stage1": s1, "stage2": s2}
        s = self.sampler
        if self.framework != "two-stage":
            s2 = (f"y = G(x): exact two-sided geometric noise, lam = {s['lam']}: {s['source']}; "
                  f"then the {self.remap} remap onto the estimated z (post-processing)")
            return {"stage1": s1, "stage2": s2, "privacy_statement": self._no_split_statement()}
        s2 = f"{s['kind']} ({s['constructor']}, lam = {s['lam']}): {s['source']}"
        return {"stage1": s1, "stage2": s2, "privacy_statement": s["privacy_statement"]}

    def _no_split_statement(self) -> str:
        lam = self.sampler["lam"]
        released = ("y" if self.stage1 is None else
                    f"(V, y), V the cyclic Laplace release of the histogram at eps_1 = "
                    f"{self.eps_1:.12g}")
        total = ("ln(lam)" if self.stage1 is None else "eps_1 + ln(lam)")
        return (f"Every row's count x is released once as y = clamp(x + k, 0, {self.n - 1}), k "
                f"drawn from the exact two-sided geometric law P(k) proportional to lam^-|k|, "
                f"lam = {lam} <= e^eps_2 (proved in rational arithmetic), by integer "
                f"comparisons of uniform integers: the truncated geometric mechanism G, exactly "
                f"ln(lam)-DP for a change of one row's count by 1. The target z is computed "
                f"from the histogram of {released} only ({self.estimator}), and every output is "
                f"a function of its row's y, z and randomness independent of the data "
                f"({self.remap} remap): post-processing of {released}, so the release is "
                f"{total} <= eps_t-DP by sequential composition (docs/no_split.md).")

    def _dp_check(self) -> str:
        if self.framework != "two-stage":
            return (f"y drawn exactly with lam = {self.sampler['lam']} <= e^eps_2 (proved in "
                    "rational arithmetic); z and the outputs are post-processing")
        if self.constructor == "discrete-gaussian":
            return ("(eps_2, delta): delta of the discrete Gaussian recomputed at eps_2 "
                    "(CKS20 Theorem 7) and checked <= delta before any row was drawn")
        kind = (self.sampler or {}).get("kind")
        if kind == "structured G R":
            return (f"noise drawn exactly with lam = {self.sampler['lam']} <= e^eps_2 (proved "
                    "in rational arithmetic); the remap is post-processing"
                    + ("; privacy_level of T <= eps_2 checked" if self.mechanism else ""))
        if kind == "checked table":
            return ("privacy_level <= eps_2 checked, and the integer sampling table checked "
                    f"exactly ln(lam)-DP with lam = {self.sampler['lam']} <= e^eps_2, before "
                    "any row was drawn")
        return "privacy_level <= eps_2 checked before any row was drawn"

    def public_report(self) -> dict[str, Any]:
        """Budgets, target, estimate and provenance: public or private values only.

        Examples
        --------
        >>> r = privatize_counts([0, 1, 1, 2], 1.0, upper=2, seed=0).public_report()
        >>> r["budget"]["split"]["rule"], r["n"], r["N"]
        ('rule-of-thumb', 3, 4)
        """
        mech = self.mechanism
        split = {"rule": self.split_rule, "fraction": self.split_fraction}
        if self.split_rule == "rule-of-thumb":
            split.update(formula="f = B + (A - B) exp(-K eps_t)", constants=dict(RULE_OF_THUMB))
        stage1 = None
        if self.stage1 is not None:
            s = self.stage1
            stage1 = {"privatizer": s.method, "postprocess": s.postprocess, "notion": s.notion,
                      "budget": s.budget, "secure": s.secure, "noise": s.noise}
        composition = {
            "two-stage": "sequential: stage 1 (eps_1) then T (eps_2)",
            "one-stage": "one release y = G(x) at eps_2 = eps_t; the rest is post-processing",
            "hybrid": "sequential: stage 1 V (eps_1) and y = G(x) (eps_2); the rest is "
                      "post-processing of (V, y)"}[self.framework]
        if self.bound is not None:
            rest = composition.removeprefix("sequential: ").replace(
                "eps_2 = eps_t", "eps_2 = eps_t - eps_upper")
            composition = (f"sequential: the DP bound upper = {self.bound['upper']} "
                           f"(eps_upper), then {rest}")
        framework = {"name": self.framework, "chosen_by": self.chosen_by}
        if self.framework != "two-stage":
            fit = self.deconvolution
            framework.update(estimator=self.estimator, remap=self.remap,
                             converged=getattr(fit, "converged", None),
                             iterations=getattr(fit, "iterations", None))
        return {
            "framework": framework,
            "budget": {"eps_t": self.epsilon, "eps_upper": self.eps_upper, "eps_1": self.eps_1,
                       "eps_2": self.eps_2, "delta": self.delta, "split": split,
                       "composition": composition},
            "upper_bound": self.bound or {
                "upper": self.n - 1, "chosen_by": "given: a public parameter, not computed "
                                                  "from the data", "eps_upper": 0.0},
            "n": self.n, "N": self.N,
            "target_z": None if self.z is None else self.z.tolist(),
            "estimated_count_error": {
                "value": self.estimated_count_error, "weights": "abs",
                "definition": "<W, T>, W[i, j] = z_i |i - j|: expected |output - input| "
                              "when counts follow z; from z and T only, no privacy cost"},
            "mechanism": {"constructor": self.constructor,
                          "name": self.constructor if mech is None else mech.constructor,
                          "selector": self.selector, "eps_construction": self.eps_construction,
                          "privacy_level": self.privacy_level,
                          "dp_check": self._dp_check(),
                          "fixed_point": CONSTRUCTORS[self.constructor].fixed_point,
                          "row_sum_error": None if mech is None
                          else float(mech.row_sum_error()),
                          "fixed_point_error": None if mech is None or mech.fixed_point is None
                          else float(mech.fixed_point_error()),
                          "build_seconds": None if mech is None else mech.build_seconds,
                          "built": mech is not None},
            "stage1": stage1,
            "samplers": self.samplers(),
            "seed": self.seed,
            "output_distribution": self.output_distribution.tolist(),
        }


def _seeds(seed: int | None) -> tuple[Any, Any, Any]:
    """Seeds of stage 1, stage 2 and the random selector.

    With a seed, three children of ``SeedSequence(seed)`` (reproducible; the
    seed is in the report anyway). Without one, three independent draws of OS
    randomness: children of one ``SeedSequence()`` would share its entropy, so
    whatever reveals the selector's randomness would rebuild stage 2's generator.
    """
    if seed is not None:
        return tuple(np.random.SeedSequence(seed).spawn(3))
    return np.random.SeedSequence(), np.random.SeedSequence(), None


def _missing(name: str, positions: np.ndarray, kind: str) -> ValueError:
    k = positions.size
    return ValueError(f"{name}: {k} missing value{'s' if k > 1 else ''} ({kind}), first at "
                      f"position {int(positions[0])}; counts must be integers: drop or fill "
                      "the missing ones")


def _integer_vector(values: Any, name: str) -> np.ndarray:
    """``values`` as a numpy array, refusing by name what numpy would turn into other
    numbers: masked entries (``np.asarray`` keeps their hidden data), missing values
    (pandas NA becomes a float NaN) and uint64 values above ``2^63 - 1`` (they wrap to
    negative int64; a negative number cast to unsigned lands there)."""
    if np.ma.isMaskedArray(values):
        masked = int(np.ma.count_masked(values))
        if masked:
            raise ValueError(f"{name}: a masked array with {masked} masked entr"
                             f"{'y' if masked == 1 else 'ies'}; masked values are not data: "
                             "drop them (.compressed()) or fill them (.filled(v))")
        values = np.ma.getdata(values)
    isna = getattr(values, "isna", None)  # pandas Series, Index and extension arrays
    if callable(isna):
        missing = np.flatnonzero(np.asarray(isna(), dtype=bool))
        if missing.size:
            raise _missing(name, missing, "NA")
    d = np.asarray(values)
    if d.dtype.kind == "f":
        missing = np.flatnonzero(np.isnan(d))
        if missing.size:
            raise _missing(name, missing, "NaN")
    if d.dtype.kind == "u" and d.size and d.max() > np.iinfo(np.int64).max:
        i = int(np.argmax(d > np.iinfo(np.int64).max))
        raise ValueError(f"{name}: {int(d.flat[i])} at position {i} is above 2^63 - 1, the "
                         f"largest count (a {d.dtype} input; a negative number cast to "
                         "unsigned lands there)")
    return d


def _check_counts(counts: Any) -> np.ndarray:
    d = _integer_vector(counts, "counts")
    if d.ndim != 1:
        raise ValueError(f"counts: expected one count per row (1 dimension), got shape {d.shape}")
    if d.size == 0:
        raise ValueError("counts: the table has no rows")
    if d.dtype.kind not in "iu":
        raise ValueError(f"counts: must be integers, got dtype {d.dtype}")
    if d.min() < 0:
        raise ValueError(f"counts: must be non-negative, got {d.min()}")
    return d.astype(np.int64, copy=False)


def check_choices(constructor: str = "heuristic", selector: Any = "best",
                  privatizer: str = "cyclic-laplace", postprocess: Any = None) -> None:
    """Raise ``ValueError`` naming the first unknown method name.

    The names are those of :data:`dpfix.constructors.CONSTRUCTORS`,
    :data:`dpfix.constructors.SELECTORS`, :data:`dpfix.release.privatizers.PRIVATIZERS`
    and :data:`dpfix.release.privatizers.POSTPROCESSORS`.

    Parameters
    ----------
    constructor, selector, privatizer, postprocess : str
        The names to check (a callable selector or postprocess is not checked).

    Raises
    ------
    ValueError
        The message names the option and its choices.

    Examples
    --------
    >>> check_choices(constructor="simplex")
    Traceback (most recent call last):
    ...
    ValueError: constructor: unknown 'simplex'; choose from heuristic, lp, northwest, unfixed, ...
    """
    released = [name for name, info in CONSTRUCTORS.items() if info.release]
    if constructor not in released:
        what = "a research constructor, not released" if constructor in CONSTRUCTORS \
            else "unknown"
        raise ValueError(f"constructor: {what} {constructor!r}; choose from "
                         f"{', '.join(released)}")
    if isinstance(selector, str) and selector not in SELECTORS:
        raise ValueError(f"selector: unknown {selector!r}; choose from {', '.join(SELECTORS)}")
    if privatizer not in PRIVATIZERS:
        raise ValueError(f"privatizer: unknown {privatizer!r}; choose from "
                         f"{', '.join(PRIVATIZERS)}")
    if isinstance(postprocess, str) and postprocess not in POSTPROCESSORS:
        raise ValueError(f"postprocess: unknown {postprocess!r}; choose from "
                         f"{', '.join(POSTPROCESSORS)}")


def _check_histogram(eta: Any, upper: int) -> tuple[np.ndarray, int]:
    """``(eta top-coded at upper, topcoded)`` for a histogram input, refusing bad ones."""
    e = _integer_vector(eta, "eta")
    if e.ndim != 1 or e.size == 0:
        raise ValueError(f"eta: expected a histogram (1 dimension, >= 1 entry), got shape "
                         f"{e.shape}")
    if e.dtype.kind not in "iu":
        raise ValueError(f"eta: must be integers, got dtype {e.dtype}")
    if e.min() < 0:
        raise ValueError(f"eta: must be non-negative, got {e.min()}")
    total = sum(int(v) for v in e)  # Python ints: no overflow
    if total == 0:
        raise ValueError("eta: the histogram has no rows (every number is 0)")
    if total > MAX_HISTOGRAM_N:
        raise ValueError(f"eta: N = {total} rows exceeds the cap {MAX_HISTOGRAM_N} (2^62)")
    top = sum(int(v) for v in e[upper + 1:])
    out = np.zeros(upper + 1, dtype=np.int64)
    out[:min(e.size, upper + 1)] = e[:upper + 1]
    out[upper] += top
    return out, top


def auto_setting(eps_t: float) -> dict[str, Any]:
    """The setting :data:`AUTO_RULE` chooses at ``eps_t`` (``framework="auto"``).

    Parameters
    ----------
    eps_t : float
        The total budget.

    Returns
    -------
    dict
        ``framework``, ``split``, ``estimator`` and ``remap`` for :func:`privatize_counts`.

    Examples
    --------
    >>> auto_setting(0.5)["framework"], auto_setting(3.0)["framework"]
    ('hybrid', 'one-stage')
    """
    eps_t = check_positive(eps_t, "eps_t")
    step = [s for s in AUTO_RULE if s[0] <= eps_t][-1]
    return {"framework": step[1], "split": step[2], "estimator": step[3], "remap": "northwest"}


def auto_statement() -> str:
    """:data:`AUTO_RULE` in words, for reports."""
    parts = []
    for k, (lo, fw, split, est) in enumerate(AUTO_RULE):
        hi = AUTO_RULE[k + 1][0] if k + 1 < len(AUTO_RULE) else None
        where = (f"eps_t < {hi:g}" if lo == 0 else f"eps_t >= {lo:g}" if hi is None
                 else f"{lo:g} <= eps_t < {hi:g}")
        how = fw if split is None else f"{fw} (split {split})"
        parts.append(f"{where}: {how}, {est} estimate, northwest remap")
    return "; ".join(parts)


def _check_framework(framework: str, constructor: str, split: Any, privatizer: str,
                     postprocess: Any, delta: Any, estimator: Any, remap: Any) -> None:
    """Refuse, by name, a framework unknown or an option it would ignore."""
    if framework not in FRAMEWORKS:
        raise ValueError(f"framework: unknown {framework!r}; choose from {', '.join(FRAMEWORKS)}")
    if framework == "two-stage":
        for name, value in (("estimator", estimator), ("remap", remap)):
            if value is not None:
                raise ValueError(f"{name}: applies to the one-stage and hybrid frameworks "
                                 "only; drop it")
        return
    if constructor != "northwest":
        raise ValueError(f"constructor: the {framework} framework remaps G through the "
                         f"northwest corner; {constructor!r} does not apply")
    if estimator is not None and estimator not in ESTIMATORS:
        raise ValueError(f"estimator: unknown {estimator!r}; choose from {', '.join(ESTIMATORS)}")
    if remap is not None and remap not in REMAPS:
        raise ValueError(f"remap: unknown {remap!r}; choose from {', '.join(REMAPS)}")
    why = ("the one-stage framework has no stage 1" if framework == "one-stage" else
           "the hybrid framework combines the raw cyclic Laplace release with y")
    for name, value, default in (("split", split if framework == "one-stage" else None, None),
                                 ("privatizer", privatizer, "cyclic-laplace"),
                                 ("postprocess", postprocess, None), ("delta", delta, None)):
        if value != default:
            raise ValueError(f"{name}: does not apply: {why}; drop the {name}")


def _check_stage_budgets(eps_t: float, split: Any, two: bool) -> None:
    """Refuse a budget that leaves a stage less than :data:`MIN_STAGE_EPSILON` (``two``: two
    stages, split by ``split``; else all of ``eps_t`` on one), before anything is drawn.

    Examples
    --------
    >>> _check_stage_budgets(1.0, 0.9999999999, True)
    Traceback (most recent call last):
    ...
    ValueError: split: 0.9999999999 gives eps_1 = 1 and eps_2 = 1e-10; each stage needs at \
least 1e-05: at epsilon 1, a split in [1e-05, 0.99999]
    """
    need = MIN_STAGE_EPSILON * (2 if two else 1)
    if not eps_t >= need:
        each = f" (each of its two stages needs at least {MIN_STAGE_EPSILON:g})" if two else ""
        raise ValueError(f"epsilon: must be at least {need:g}{each}, got {eps_t!r}")
    if not two:
        return
    fraction, _ = _split_fraction(eps_t, split)
    eps_1 = fraction * eps_t
    eps_2 = eps_t - eps_1
    if not min(eps_1, eps_2) >= MIN_STAGE_EPSILON:
        lo = MIN_STAGE_EPSILON / eps_t
        raise ValueError(f"split: {split!r} gives eps_1 = {eps_1:.3g} and eps_2 = {eps_2:.3g}; "
                         f"each stage needs at least {MIN_STAGE_EPSILON:g}: at epsilon "
                         f"{eps_t:g}, a split in [{lo:.3g}, {1 - lo:.6g}]")


def _no_split(framework: str, d: np.ndarray | None, eta: np.ndarray, n: int, N: int,
              topcoded: int, eps_t: float, split: Any, estimator: str, remap: str,
              seed: int | None, seeds: tuple[Any, Any], stage: Callable[[str], Any],
              progress: Callable[[int], Any] | None, draw: bool) -> PrivatizedCounts:
    """The one-stage and hybrid frameworks (docs/no_split.md): release ``y = G(x)``
    [and stage 1's ``V``], then post-process (:func:`complete_no_split`)."""
    seconds: dict[str, float] = {}
    if framework == "hybrid":
        # None: the paper's rule of thumb, the best hybrid split of the frontier study
        fraction, rule = _split_fraction(eps_t, split)
    else:
        fraction, rule = 0.0, "none (one-stage framework: all of eps_t on G)"
    eps_1 = fraction * eps_t
    eps_2 = eps_t - eps_1
    stage1 = None
    if framework == "hybrid":
        stage("stage 1")
        start = time.perf_counter()
        stage1 = privatize_distribution(
            eta, eps_1, method="cyclic-laplace", secure=seed is None,
            rng=None if seed is None else np.random.default_rng(seeds[0]))
        seconds["stage1"] = time.perf_counter() - start
    lam = rational_lam(eps_2)  # lam <= e^eps_2, proved: y = G(x) is exactly ln(lam)-DP
    G = structured_sampler("truncated-geometric", lam=lam, n=n)
    source = random_source(None if seed is None else seeds[1])
    partial = PrivatizedCounts(
        None, None, eps_1, eps_2, None, None, n, N, topcoded,
        "cyclic-laplace" if stage1 is not None else None, "northwest", seconds, stage1,
        split_rule=rule, split_fraction=fraction, eps_construction=math.log(lam),
        privacy_level=math.log(lam), delta=0.0, seed=seed, sampler=G.describe(source),
        stage2=G, framework=framework, estimator=estimator, remap=remap)
    if not draw:  # the caller draws y with result.stage2, then calls complete_no_split
        return partial
    stage("draw")
    start = time.perf_counter()
    if d is not None:
        y = _draw_rows(G, d, source, progress)
        h = np.bincount(y, minlength=n)
    else:
        joint_y = _draw_histogram(G, eta, n, source, progress)
        h = joint_y.sum(axis=0)
    seconds["apply"] = time.perf_counter() - start
    stage("construct")
    result = complete_no_split(partial, h)
    start = time.perf_counter()
    if d is not None:
        result.counts = (_remap_rows(result.stage2.remap, y, source) if remap == "northwest"
                         else quantile_remap(y, apportion(result.z, N), source))
    else:
        result.joint = (_remap_joint(result.stage2.remap, joint_y, source)
                        if remap == "northwest"
                        else quantile_joint(joint_y, quantile_plan(h, apportion(result.z, N)),
                                            source))
    result.seconds["apply"] += time.perf_counter() - start
    return result


def complete_no_split(partial: PrivatizedCounts, h: Any) -> PrivatizedCounts:
    """The target and the remap of the one-stage and hybrid frameworks, from the released ``y``.

    Step 2 of docs/no_split.md: ``z`` is estimated from the histogram ``h`` of
    ``y = G(x)`` (and stage 1's raw release for the hybrid framework); for the
    northwest remap, ``stage2`` becomes the sampler of ``T = G R(z)`` whose
    ``remap`` sends every ``y`` to its output. Post-processing: ``h`` is the
    only input from the data.

    Parameters
    ----------
    partial : PrivatizedCounts
        What ``privatize_counts(..., framework=..., draw=False)`` returned
        (its ``stage2`` drew ``y``).
    h : array_like of int
        The histogram of every row's ``y`` (``n`` entries summing to ``N``).

    Returns
    -------
    PrivatizedCounts
        With ``z``, ``deconvolution``, ``released_histogram`` and, for the
        northwest remap, ``mechanism`` (``n <= STRUCTURED_T_MAX``), the
        estimated count error and ``stage2 = G R(z)``; no row drawn
        (``counts`` and ``joint`` None).

    Examples
    --------
    >>> p = privatize_counts(None, 1.0, upper=3, histogram=[40, 30, 20, 10], seed=0,
    ...                      framework="one-stage", draw=False)
    >>> r = complete_no_split(p, [38, 33, 18, 11])
    >>> round(float(r.z.sum()), 12), r.stage2.constructor
    (1.0, 'northwest')
    """
    if partial.framework == "two-stage" or partial.z is not None:
        raise ValueError("partial: expected a one-stage or hybrid result drawn with draw=False")
    hv = _integer_vector(h, "h")
    if hv.shape != (partial.n,) or (hv < 0).any() or int(hv.sum()) != partial.N:
        raise ValueError(f"h: expected {partial.n} non-negative integers summing to N = "
                         f"{partial.N}")
    start = time.perf_counter()
    G, n = partial.stage2, partial.n
    fit = deconvolve(hv, G.lam, method=partial.estimator,
                     stage1=None if partial.stage1 is None
                     else (partial.stage1.raw, partial.eps_1))
    z = np.array(fit.z, dtype=float)  # the result's own, writable copy
    mech = estimate = None
    stage2 = G
    if partial.remap == "northwest":
        stage2 = structured_sampler("northwest", z, lam=G.lam, n=n)
        if n <= STRUCTURED_T_MAX:  # T = G R(z) for the report and its checks
            mech = construct(z, partial.privacy_level, method="northwest").normalised()
            mech.check(z)
        estimate = stage2.count_error(z)
    seconds = dict(partial.seconds, construct=time.perf_counter() - start)
    _warn_top_mass(z, n)
    return replace(partial, z=z, mechanism=mech, estimated_count_error=estimate,
                   stage2=stage2, deconvolution=fit, released_histogram=hv.astype(np.int64),
                   seconds=seconds)


def _remap_rows(R: Any, y: np.ndarray, source: Any) -> np.ndarray:
    """``R`` applied to every released ``y``, in chunks."""
    out = np.empty_like(y)
    for s in range(0, y.shape[0], _CHUNK):
        out[s:s + _CHUNK] = R.apply(y[s:s + _CHUNK], source)
    return out


def _remap_joint(R: Any, joint_y: np.ndarray, source: Any) -> np.ndarray:
    """The (input, output) joint histogram: every (input, ``y = m``) group through ``R``."""
    n = joint_y.shape[0]
    joint = np.zeros_like(joint_y)
    for i, m in zip(*np.nonzero(joint_y), strict=True):
        left = int(joint_y[i, m])
        if R.start[m + 1] - R.start[m] == 1:  # one piece: no draw
            joint[i, R.cols[R.start[m]]] += left
            continue
        while left:
            k = min(left, _CHUNK)
            joint[i] += np.bincount(R.apply(np.full(k, m, dtype=np.int64), source),
                                    minlength=n)
            left -= k
    return joint


def _warn_top_mass(z: np.ndarray | None, n: int) -> None:
    """:class:`TopCodingWarning` when the private target ``z`` piles up on ``upper``."""
    message = None if z is None else top_mass_message(z, n - 1)
    if message is not None:
        warnings.warn(message, TopCodingWarning, stacklevel=3)


def _auto_upper(counts: Any, eps_t: float, histogram: Any, upper_share: float | None,
                options: dict[str, Any]) -> PrivatizedCounts:
    """``upper="auto"``: a DP bound with ``upper_share`` of ``eps_t``, then the release with
    the rest (sequential composition; the two floats add up to at most ``eps_t`` exactly)."""
    share = UPPER_SHARE if upper_share is None else check_positive(upper_share, "upper_share")
    if not share < 1:
        raise ValueError(f"upper_share: the share of epsilon spent on the bound must be in "
                         f"(0, 1), got {upper_share!r}")
    eps_upper = share * eps_t
    eps_rest = eps_t - eps_upper
    while Fraction(eps_upper) + Fraction(eps_rest) > Fraction(eps_t):
        eps_rest = math.nextafter(eps_rest, 0.0)
    if min(eps_upper, eps_rest) < MIN_STAGE_EPSILON:
        raise ValueError(f"upper_share: gives eps_upper = {eps_upper:.3g} and {eps_rest:.3g} "
                         f"for the release; each needs at least {MIN_STAGE_EPSILON:g}")
    constructor = options["constructor"]
    top = DEFAULT_MAX_UPPER if constructor in STRUCTURED else AUTO_MAX_UPPER_TABLE
    if constructor == "lp":
        top = LP_MAX_UPPER
    if histogram is not None:
        top = min(top, JOINT_MAX_N - 1)
        histogram = _integer_vector(histogram, "histogram")
    else:
        counts = _check_counts(counts)
    seed = options["seed"]
    # the fourth child of SeedSequence(seed): stage 1, stage 2 and the selector keep theirs
    source = random_source(None if seed is None else np.random.SeedSequence(seed).spawn(4)[3])
    bound = choose_upper(counts, eps_upper, histogram=histogram, max_upper=top, seed=source)
    result = privatize_counts(counts, eps_rest, upper=bound.upper, histogram=histogram,
                              **options)
    return replace(result, eps_upper=eps_upper, bound=bound.describe())


def privatize_counts(
    counts: Any,
    epsilon: float,
    *,
    upper: int | str,
    histogram: Any = None,
    constructor: str = "northwest",
    selector: str = "best",
    split: Any = None,
    privatizer: str = "cyclic-laplace",
    seed: int | None = None,
    delta: float | None = None,
    postprocess: str | None = None,
    solver: str | None = None,
    time_limit: float | None = None,
    progress: Callable[[int], Any] | None = None,
    on_stage: Callable[[str], Any] | None = None,
    draw: bool = True,
    framework: str = "two-stage",
    estimator: str | None = None,
    remap: str | None = None,
    upper_share: float | None = None,
) -> PrivatizedCounts:
    """Privatize a table of counts with the two-stage framework (paper Section 1.2).

    The table is given either row by row (``counts``) or as its histogram
    (``counts=None, histogram=eta``, ``eta[i]`` rows with count ``i``): then the
    ``N = sum eta`` rows are never materialised, the result has ``counts=None``
    and ``joint``, the ``n x n`` histogram of (input, output) pairs, whose column
    sums are the private output histogram (one multinomial draw per input
    count, :func:`apply_histogram`). Everything else is the same for both.

    Parameters
    ----------
    counts : array_like of int or None
        The non-negative integer counts, one per row (category); None when
        ``histogram`` is given.
    epsilon : float
        The total budget ``eps_t``.
    upper : int or "auto"
        The public upper bound; counts above it are top-coded to it
        (``n = upper + 1`` count values). ``"auto"``: chosen privately with the
        share ``upper_share`` of ``epsilon`` (:func:`dpfix.release.bounds.choose_upper`,
        a DP quantile; docs/bounds.md), the release then runs with the rest:
        ``eps_upper + eps_1 + eps_2 = epsilon`` by sequential composition, and the
        report states the bound, its budget and its quantile (``upper_bound``).
    histogram : array_like of int, optional
        The table as a histogram instead of ``counts`` (at most
        ``MAX_HISTOGRAM_N`` rows; entries above ``upper`` are top-coded).
    constructor : str
        A name in :data:`dpfix.constructors.CONSTRUCTORS`: ``"northwest"``
        (default: the northwest-corner split, fixed point ``z``, optimal over F
        for every convex loss, docs/optimum_of_F.md Theorem A; drawn as ``G R``
        in ``O(n)`` memory, so any ``upper``), ``"heuristic"`` (Algorithm 1, the
        paper's), ``"lp"`` (count-error optimum over F, HiGHS;
        ``upper <= LP_MAX_UPPER``), ``"unfixed"`` (Algorithm 2), or the one-stage baselines
        ``"truncated-geometric"``, ``"staircase"`` and ``"discrete-gaussian"``
        (all of ``epsilon`` on the counts, no target; a split, privatizer or
        postprocess is refused rather than ignored).
    selector : str
        The heuristic's column selector (``"best"`` by default); any other
        value with another constructor is refused (it would be ignored).
    split : float or str, optional
        The fraction of ``epsilon`` for stage 1, or ``"rule-of-thumb"`` (paper
        Appendix F, :func:`rule_of_thumb_split`). None: the framework's default
        (the rule of thumb for the two-stage and hybrid frameworks: for the
        hybrid it was the best split of the frontier study, docs/no_split.md;
        none for the one-stage framework and constructors).
    privatizer : str
        The distribution privatizer of stage 1, a name in
        :data:`dpfix.release.privatizers.PRIVATIZERS`.
    seed : int, optional
        Makes the run reproducible (numpy's seeded samplers in stage 1, a
        seeded PCG64 feeding the exact samplers of stage 2: tests and
        experiments, not for release); ``None`` (production) uses OpenDP's
        secure samplers for stage 1 and the operating system's CSPRNG for the
        exact samplers of stage 2 (:mod:`dpfix.sampling`).
    delta : float, optional
        With ``privatizer="cyclic-gaussian"``: the delta of stage 1 (an
        (eps_1, delta) guarantee). With ``constructor="discrete-gaussian"``
        (required there): the delta of the release, (eps_t, delta)-DP; the
        paper uses ``1 / (N + 1)``. Refused otherwise.
    postprocess : str, optional
        Stage 1's post-processing (None: the privatizers' default).
    solver : str, optional
        ``constructor="lp"`` only: ``"highs-ds"`` (dual simplex, default) or
        ``"highs-ipm"`` (interior point).
    time_limit : float, optional
        ``constructor="lp"`` only: seconds for HiGHS; reaching it raises
        :class:`TimeLimitReached` (no row is drawn).
    progress : callable, optional
        Called with numbers of rows done (fixed shares of ``N``).
    on_stage : callable, optional
        Called with ``"stage 1"``, ``"construct"``, ``"draw"``.
    draw : bool
        False: stop before stage 2 draws (a histogram input only; ``joint`` is
        None): the caller draws the rows with ``result.stage2``. In the
        one-stage and hybrid frameworks ``stage2`` is ``G``: the caller draws
        ``y``, then :func:`complete_no_split` with its histogram gives the
        target and the remap (the Dask engine).
    framework : str
        ``"two-stage"`` (default: the paper's framework, above), ``"one-stage"``,
        ``"hybrid"`` or ``"auto"`` (docs/no_split.md; ``"auto"``: the setting
        :data:`AUTO_RULE` chooses by ``epsilon``, reported in
        ``chosen_by``). One-stage and hybrid: every row is released as
        ``y = G(x)``, the truncated geometric mechanism at the whole budget
        (one-stage) or at ``eps_2`` after a cyclic Laplace release of the
        histogram at ``eps_1`` (hybrid); the target ``z`` is estimated from the
        histogram of ``y`` (and stage 1's release), and every ``y`` is remapped
        onto it. Everything after the releases is post-processing. Only the
        northwest constructor.
    estimator : str, optional
        One-stage and hybrid: how ``z`` is estimated from the histogram of
        ``y``, a name in :data:`dpfix.release.privatizers.deconvolve.ESTIMATORS`
        (default ``"em"``, maximum likelihood).
    remap : str, optional
        One-stage and hybrid: ``"northwest"`` (default: row ``y`` drawn from
        the northwest remap ``R(z)``, so every row follows ``T = G R(z)``, a
        fixed-point mechanism for ``z``) or ``"quantile"`` (all ``y`` matched
        monotonically onto ``z``: the output histogram is ``z`` apportioned to
        ``N`` rows).
    upper_share : float, optional
        With ``upper="auto"``: the share of ``epsilon`` spent on the bound, in ``(0, 1)``
        (default :data:`dpfix.release.bounds.UPPER_SHARE`).

    Returns
    -------
    PrivatizedCounts
        The private output, the budgets, the mechanism and the reports.

    Warns
    -----
    TopCodingWarning
        The privatized target puts more than
        :data:`dpfix.release.bounds.TOP_MASS_WARNING` of its mass on ``upper``
        (post-processing of private outputs: no privacy cost).

    Raises
    ------
    NotPrivateError
        The mechanism's realized level exceeds ``eps_2``, its sampling table
        fails the exact check (or the discrete Gaussian's delta exceeds
        ``delta``): no row is touched.
    TimeLimitReached
        The LP hit ``time_limit``.
    ValueError
        On bad input, named by its cause: masked entries of a masked array,
        missing values (pandas NA, NaN), uint64 values above ``2^63 - 1``.

    Examples
    --------
    >>> r = privatize_counts([0, 0, 1, 3, 9], 1.0, upper=3, split=0.5, seed=1)
    >>> r.eps_1, r.eps_2, r.n, r.N, r.topcoded, r.privacy_level <= r.eps_2
    (0.5, 0.5, 4, 5, 1, True)
    >>> bool(r.estimated_count_error == r.mechanism.count_error("abs", r.z))
    True
    >>> h = privatize_counts(None, 1.0, upper=2, histogram=[5 * 10**13, 3 * 10**13, 2 * 10**13],
    ...                      seed=0)
    >>> h.N, h.counts, int(h.output_histogram.sum())
    (100000000000000, None, 100000000000000)
    """
    eps_t = check_positive(epsilon)
    if isinstance(upper, str) and upper == "auto":
        return _auto_upper(counts, eps_t, histogram, upper_share, dict(
            constructor=constructor, selector=selector, split=split, privatizer=privatizer,
            seed=seed, delta=delta, postprocess=postprocess, solver=solver,
            time_limit=time_limit, progress=progress, on_stage=on_stage, draw=draw,
            framework=framework, estimator=estimator, remap=remap))
    if upper_share is not None:
        raise ValueError("upper_share: applies to upper='auto' only; drop it")
    if not isinstance(upper, (int, np.integer)) or isinstance(upper, bool) or upper < 1:
        raise ValueError(f"upper: must be an integer >= 1 or 'auto', got {upper!r}")
    if (counts is None) == (histogram is None):
        raise ValueError("counts: give the counts or histogram=, not both and not neither")
    if not draw and (histogram is None or constructor == "discrete-gaussian"):
        raise ValueError("draw: only a histogram input with an exact sampler may stop before "
                         "stage 2 draws")
    check_choices(constructor, selector, privatizer, postprocess)
    chosen_by = None
    if framework == "auto":
        if constructor != "northwest":
            raise ValueError(f"constructor: framework 'auto' chooses among the northwest "
                             f"frameworks; {constructor!r} does not apply")
        for name, value in (("split", split), ("estimator", estimator), ("remap", remap)):
            if value is not None:
                raise ValueError(f"{name}: framework 'auto' chooses it (docs/no_split.md); "
                                 "name the framework to set it")
        auto = auto_setting(check_positive(epsilon))
        framework, split, estimator, remap = (auto["framework"], auto["split"],
                                              auto["estimator"], auto["remap"])
        if framework == "two-stage":
            estimator = remap = None
        chosen_by = "auto: " + auto_statement()
    _check_framework(framework, constructor, split, privatizer, postprocess, delta, estimator,
                     remap)
    if seed is not None and (not isinstance(seed, (int, np.integer)) or isinstance(seed, bool)
                             or seed < 0):
        raise ValueError(f"seed: must be a non-negative integer or None, got {seed!r}")
    if constructor == "lp" and upper > LP_MAX_UPPER:
        raise ValueError(f"upper: constructor 'lp' solves an LP with (upper + 1)^2 variables: "
                         f"upper at most {LP_MAX_UPPER}, got {upper}; use the heuristic")
    two_stage = CONSTRUCTORS[constructor].stage == "two-stage"
    gaussian = constructor == "discrete-gaussian"
    if selector != "best" and constructor != "heuristic":
        raise ValueError(f"selector: applies to the heuristic constructor only, not "
                         f"{constructor!r}; drop it")
    for name, value in (("solver", solver), ("time_limit", time_limit)):
        if value is not None and constructor != "lp":
            raise ValueError(f"{name}: applies to the lp constructor only, not "
                             f"{constructor!r}; drop it")
    if solver is not None and solver not in LP_SOLVERS:
        raise ValueError(f"solver: unknown {solver!r}; choose from {', '.join(LP_SOLVERS)}")
    if time_limit is not None:
        time_limit = check_positive(time_limit, "time_limit")
    if not two_stage:  # options of stage 1 would be silently ignored
        one = f"constructor {constructor!r} is one-stage (all of epsilon on the counts)"
        for name, value, default in (("split", split, None),
                                     ("privatizer", privatizer, "cyclic-laplace"),
                                     ("postprocess", postprocess, None),
                                     ("delta", None if gaussian else delta, None)):
            if value != default:
                raise ValueError(f"{name}: does not apply: {one}; drop the {name}")
        fraction, rule = 0.0, "none (one-stage constructor)"
    else:
        fraction, rule = _split_fraction(eps_t, split)
    if gaussian:
        if delta is None:
            raise ValueError("delta: the discrete Gaussian is (eps, delta)-DP; give delta "
                             "(the paper uses 1/(N+1))")
        delta = check_probability(delta)
    else:
        if privatizer == "cyclic-gaussian" and two_stage and delta is None:
            raise ValueError("delta: the cyclic Gaussian privatizer needs delta (eps_1, delta)")
        if delta is not None and privatizer != "cyclic-gaussian":
            raise ValueError(f"delta: privatizer {privatizer!r} is pure eps-DP; drop delta")
    upper = int(upper)
    n = upper + 1
    if histogram is None:
        d = _check_counts(counts)
        eta, topcoded = _histogram(d, upper)
        d = np.minimum(d, upper)
        N = int(d.size)
    else:
        if n > JOINT_MAX_N:
            raise ValueError(f"upper: a histogram input returns the n x n joint histogram: "
                             f"upper at most {JOINT_MAX_N - 1}, got {upper}")
        d = None
        eta, topcoded = _check_histogram(histogram, upper)
        N = sum(int(v) for v in eta)
    _check_stage_budgets(eps_t, split, two_stage and framework != "one-stage")
    if framework != "two-stage" and d is None and draw and N > EXACT_HISTOGRAM_MAX_N:
        # y = G(x) is drawn exactly for every row (no float fallback): time grows with N
        raise ValueError(f"histogram: N = {N} rows exceeds {EXACT_HISTOGRAM_MAX_N}, the most "
                         f"the {framework} framework draws from a histogram (every row is "
                         "drawn); use the two-stage framework")
    stage1_seed, stage2_seed, selector_seed = _seeds(seed)
    stage = on_stage or (lambda name: None)
    seconds: dict[str, float] = {}
    if framework != "two-stage":
        result = _no_split(framework, d, eta, n, N, topcoded, eps_t, split,
                           estimator or ESTIMATORS[0], remap or REMAPS[0], seed,
                           (stage1_seed, stage2_seed), stage, progress, draw)
        result.chosen_by = chosen_by
        return result

    z = stage1 = None
    eps_1, eps_2 = (fraction * eps_t, eps_t - fraction * eps_t) if two_stage else (0.0, eps_t)
    if two_stage:
        stage("stage 1")
        start = time.perf_counter()
        extra: dict[str, Any] = {} if delta is None else {"delta": delta}
        if postprocess is not None:
            extra["postprocess"] = postprocess
        stage1 = privatize_distribution(
            eta, eps_1, method=privatizer, secure=seed is None,
            rng=None if seed is None else np.random.default_rng(stage1_seed), **extra)
        z = np.asarray(stage1.z, dtype=float)
        seconds["stage1"] = time.perf_counter() - start

    stage("construct")
    start = time.perf_counter()
    # the discrete Gaussian's guarantee is its delta, recomputed below at eps_2 itself
    eps_build = eps_2 if gaussian else eps_2 * (1 - EPS_MARGIN)
    structured = constructor in STRUCTURED
    lam_s = None
    if structured:  # G R is drawn with lam_s <= e^eps_build (proved); T is built for it
        lam_s = rational_lam(eps_build)
        eps_build = math.log(lam_s)
    options: dict[str, Any] = {}
    if constructor == "heuristic":
        options = {"selector": selector, "seed": selector_seed}
    elif constructor == "lp":
        options = {"fixed": True, "solver": solver or LP_SOLVERS[0], "time_limit": time_limit}
    elif gaussian:
        options = {"delta": delta}
    mech = None
    level = eps_build
    if not structured or n <= STRUCTURED_T_MAX:
        try:
            mech = construct(z, eps_build, method=constructor, n=None if two_stage else n,
                             **options)
        except RuntimeError as exc:
            if time_limit is not None and "time limit" in str(exc).lower():
                seconds["construct"] = time.perf_counter() - start
                raise TimeLimitReached(str(exc), z, eps_1, eps_2, seconds) from exc
            raise
        mech = mech.normalised()  # the matrix checked is the matrix sampled
        level = mech.privacy_level()
        if gaussian:
            achieved = discrete_gaussian_delta(float(mech.params["sigma"]), eps_2)
            if not (mech.delta == delta and achieved <= delta and mech.eps <= eps_2):
                raise NotPrivateError(f"{mech.constructor}: delta {achieved!r} at eps_2 = "
                                      f"{eps_2!r} exceeds delta = {delta!r}; refusing to "
                                      "apply it")
        elif mech.delta or not level <= eps_2:  # no tolerance: the margin is already spent
            raise NotPrivateError(f"{mech.constructor}: privacy level {level!r} exceeds eps_2 "
                                  f"= {eps_2!r}; refusing to apply it")
        mech.check(z if mech.fixed_point is not None else None)
    sampler: Any = None
    if structured:
        sampler = structured_sampler(constructor, z, lam=lam_s, n=n)
    elif not gaussian:
        try:
            sampler = checked_table(log_T=mech.log_matrix, eps=eps_2,
                                    constructor=constructor) if not mech.exact else \
                checked_table(mech.matrix, eps=eps_2, lam=mech.lam, constructor=constructor)
        except SamplingCheckError as exc:
            raise NotPrivateError(f"{constructor}: {exc}; refusing to apply it") from exc
    seconds["construct"] = time.perf_counter() - start

    stage("draw")
    start = time.perf_counter()
    source = random_source(None if seed is None else stage2_seed)
    out = joint = None
    exact_rows = sampler is not None and (d is not None or N <= EXACT_HISTOGRAM_MAX_N)
    if not draw:
        if d is not None or sampler is None:
            raise ValueError("draw: only a histogram input with an exact sampler may stop "
                             "before stage 2 draws")
        described = sampler.describe(source)
    elif not exact_rows:
        if mech is None:
            raise ValueError(f"histogram: N = {N} rows exceeds {EXACT_HISTOGRAM_MAX_N} for the "
                             f"exact samplers and T is not built above n = {STRUCTURED_T_MAX}")
        rng = np.random.default_rng(stage2_seed)
        if d is not None:
            out = apply_mechanism(mech, d, rng, progress)
        else:
            joint = apply_histogram(mech, eta, rng, progress)
        described = {"kind": "float multinomial"}
    else:
        if d is not None:
            out = _draw_rows(sampler, d, source, progress)
        else:
            joint = _draw_histogram(sampler, eta, n, source, progress)
        described = sampler.describe(source)
    seconds["apply"] = time.perf_counter() - start
    if z is None:
        estimate = None
    elif mech is not None:
        estimate = float(mech.count_error("abs", z))
    else:
        estimate = sampler.count_error(z)  # O(n), no T
    _warn_top_mass(z, n)
    return PrivatizedCounts(
        out, z, eps_1, eps_2, mech, estimate, n, N, topcoded,
        privatizer if two_stage else None, constructor, seconds, stage1,
        split_rule=rule, split_fraction=fraction, eps_construction=eps_build,
        privacy_level=level, delta=0.0 if delta is None else float(delta), seed=seed,
        selector=selector if constructor == "heuristic" else None, joint=joint,
        sampler=described, stage2=sampler, chosen_by=chosen_by)
