"""A pair (or a triple) of count columns released with its joint distribution as the fixed
point (docs/joint.md sections 5-7 and 9).

:func:`privatize_joint` takes the columns of counts (two or three), the budget each
column's mechanism runs at (the unit's composition is the caller's: :func:`dpfix.release.
table.privatize_table` gives each column its share over ``c``) and one of two frameworks:

- ``"one-stage"`` (default): every row's tuple gets independent exact geometric noise
  per column (the whole budget); the joint distribution is estimated from the noisy
  tuples by an EM deconvolution and apportioned to ``N`` rows; the noisy tuples are
  matched to the apportioned estimate by an optimal integer transport plan whose cost is
  the expected count error under the estimate. The released joint histogram is the
  apportioned estimate exactly. Post-processing of the noisy tuples.
- ``"two-stage"``: stage 1 :func:`~dpfix.release.privatizers.joint.joint_laplace` at
  ``eps_1``; stage 2 the product of truncated geometric mechanisms then the optimal
  transport remap onto the target (:func:`dpfix.constructors.joint.joint_sampler`),
  each row drawn exactly.

:func:`privatize_pair` is the pair's call (``a``, ``b``). The state space is bounded by
:data:`MAX_STATES` (per framework), refused above it in one line.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.constructors.joint import joint_sampler, posterior_cost
from dpfix.numbers.deprecation import renamed_keywords
from dpfix.numbers.numeric import require
from dpfix.release.bounds import (
    PrivateBound,
    TopCodingWarning,
    capped_change,
    choose_upper,
    joint_mass_message,
    top_mass_message,
)
from dpfix.release.budget import exact_budgets, fit_shares, mechanism_budget
from dpfix.release.options import NoSplit, TwoStage, given_options, split_fraction
from dpfix.release.privatizers.joint import deconvolve_joint, geometric_float, joint_laplace
from dpfix.release.privatizers.noise import add_laplace
from dpfix.release.seeds import BOUND, SELECTOR, STAGE1, STAGE2, seed_child, stage_seeds
from dpfix.sampling.joint import JointSampler, apply_axes
from dpfix.sampling.quantile import apportion
from dpfix.sampling.source import RandomSource, random_source, rational_lam
from dpfix.sampling.structured import Remap

__all__ = ["privatize_pair", "privatize_joint", "PrivatizedJoint", "PrivatizedPair",
           "JOINT_FRAMEWORKS", "joint_histogram", "ZERO_SHARE", "ZERO_SHARE_MAX", "zero_share_rule",
           "TWO_STAGE_SPLIT",
           "MAX_STATES", "JointColumn", "check_joint", "check_states", "joint_framework",
           "release_joint", "stage_budgets", "auto_max_upper"]

JOINT_FRAMEWORKS = ("one-stage", "two-stage")
#: The share of the budget stage 1 spends in the two-stage framework.
TWO_STAGE_SPLIT = 0.5
#: The share of the budget the one-stage framework spends on the count of the rows with
#: every count zero at a tuple budget of 1 and above (docs/joint.md section 8: chosen on the
#: county pair MURDER, RAPE, the least share whose zero-zero error meets its target);
#: below 1 the count keeps the absolute budget ``ZERO_SHARE`` up to :data:`ZERO_SHARE_MAX`
#: of the budget (:func:`zero_share_rule`).
ZERO_SHARE = 0.02
ZERO_SHARE_MAX = 0.1
#: The largest number of states ``n_a n_b (n_c)`` per framework (docs/joint.md section 9):
#: the one-stage EM holds a few arrays of the states (memory and time ``O(N sum n_c)`` per
#: step); the two-stage remap is a dense transport problem over states x support.
MAX_STATES = {"one-stage": 10**6, "two-stage": 2 * 10**4}


@dataclass(eq=False, repr=False)
class PrivatizedJoint:
    """What :func:`privatize_joint` returns: the released tuples and their provenance.

    ``counts`` the released columns (int64, one vector per column; ``a``, ``b``, ``c``
    name them); ``z`` the public joint target (``n_a x n_b (x n_c)``); ``report`` the
    public facts (budgets, framework, sampler); ``seconds`` the timings (confidential:
    they may depend on the data).
    """

    counts: tuple
    z: np.ndarray
    report: dict
    seconds: dict = field(default_factory=dict)

    @property
    def a(self) -> np.ndarray:
        """The first column's released counts."""
        return self.counts[0]

    @property
    def b(self) -> np.ndarray:
        """The second column's released counts."""
        return self.counts[1]

    @property
    def c(self) -> np.ndarray:
        """The third column's released counts (a triple)."""
        return self.counts[2]

    def __repr__(self) -> str:
        return (f"PrivatizedJoint(shape={self.z.shape}, rows={self.a.size}, "
                f"framework={self.report['framework']!r})")


#: The pair's name for :class:`PrivatizedJoint` (what :func:`privatize_pair` returns).
PrivatizedPair = PrivatizedJoint


def joint_histogram(*args: Any) -> np.ndarray:
    """``eta[i, j]``: the rows with the pair ``(i, j)`` (counts already top-coded); the
    columns first, the shape last (a triple: ``eta[i, j, k]``).

    Examples
    --------
    >>> joint_histogram(np.array([0, 1, 1]), np.array([2, 0, 0]), (2, 3)).tolist()
    [[0, 0, 1], [2, 0, 0]]
    """
    *columns, shape = args
    shape = tuple(int(n) for n in shape)
    flat = np.ravel_multi_index(tuple(np.asarray(c, dtype=np.int64) for c in columns), shape)
    return np.bincount(flat, minlength=math.prod(shape)).reshape(shape)


def _match(y: np.ndarray, Z: np.ndarray, lams: tuple, source: RandomSource
           ) -> tuple[np.ndarray, ...]:
    """The noisy states ``y`` matched to the apportioned ``N Z`` by an optimal integer plan.

    Supplies: the histogram of ``y``; demands: the apportioned target; cost of ``m -> j``
    the expected count error ``K[m, j] / w_m`` under ``Z`` (docs/joint.md section 3),
    computed over the occupied noisy states only. POT's network simplex on integer masses
    keeps its flows integers (its pivots add and subtract them only). Rows of one noisy
    state take its pieces in a random order.
    """
    ot = require("ot")
    N = y.size
    h = np.bincount(y, minlength=Z.size)
    t = apportion(Z.ravel(), N)
    rows, cols = np.flatnonzero(h), np.flatnonzero(t)
    mats = [geometric_float(n, lam) for n, lam in zip(Z.shape, lams, strict=True)]
    w = apply_axes(Z, mats).ravel()
    K = posterior_cost(Z, *mats, cols=cols, rows=rows)
    C = K / np.maximum(w[rows], 1e-300)[:, None]
    P = ot.emd(h[rows].astype(float), t[cols].astype(float), np.ascontiguousarray(C),
               numItermax=10**9)
    P = np.rint(P).astype(np.int64)
    if (P.sum(1) != h[rows]).any() or (P.sum(0) != t[cols]).any():
        raise RuntimeError("privatize_joint: the integer plan does not match the histograms")
    out = np.empty(N, dtype=np.int64)
    perm = source.permutation(N)
    order = perm[np.argsort(y[perm], kind="stable")]  # rows grouped by state, random within
    starts = np.concatenate([[0], np.cumsum(h)])
    for r, m in enumerate(rows):
        targets = np.repeat(cols, P[r])
        out[order[starts[m]:starts[m + 1]]] = targets
    return tuple(np.asarray(v, dtype=np.int64) for v in np.unravel_index(out, Z.shape))


def _columns(columns: Any, upper: Any) -> tuple[list[np.ndarray], tuple[int, ...]]:
    """The columns top-coded at ``upper``, checked: two or three, of one positive length,
    non-negative."""
    if len(columns) not in (2, 3) or len(upper) != len(columns):
        raise ValueError(f"columns: two or three, each with its upper; got {len(columns)} "
                         f"columns and {len(upper)} uppers")
    shape = tuple(int(u) + 1 for u in upper)
    ds = [np.minimum(np.asarray(c, dtype=np.int64), u) for c, u in zip(columns, upper,
                                                                        strict=True)]
    names = ", ".join("abc"[:len(ds)])
    if len({d.shape for d in ds}) != 1 or ds[0].ndim != 1 or ds[0].size == 0:
        raise ValueError(f"{names}: columns of the same positive length")
    if any((d < 0).any() for d in ds):
        raise ValueError(f"{names}: counts must be non-negative")
    return ds, shape


def check_states(shape: tuple[int, ...], framework: str, flag: str = "upper") -> None:
    """Refuse a state space above :data:`MAX_STATES` for the framework, in one line.

    Examples
    --------
    >>> check_states((51, 101, 101), "one-stage")
    >>> check_states((51, 101, 101), "two-stage")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: upper: 520251 joint states (51 x 101 x 101) exceed the two-stage limit ...
    """
    N = math.prod(shape)
    if N > MAX_STATES[framework]:
        raise ValueError(f"{flag}: {N} joint states ({' x '.join(map(str, shape))}) exceed "
                         f"the {framework} limit of {MAX_STATES[framework]} (docs/joint.md "
                         "section 9); lower the uppers")


def _lams(eps: Any) -> tuple:
    return tuple(rational_lam(float(e)) for e in eps)


def auto_max_upper(uppers: Sequence, framework: str) -> int:
    """The largest candidate of every bound chosen privately (a :class:`~dpfix.release.bounds.
    PrivateBound`) in a joint tuple whose other bounds are the given integers: the largest
    ``U`` with ``prod (u + 1) (U + 1)^a`` at most :data:`MAX_STATES` of the framework, ``a``
    the bounds chosen privately. A function of public parameters only.

    Raises
    ------
    ValueError
        The given bounds leave no room (``U < 1``).

    Examples
    --------
    >>> auto_max_upper([PrivateBound(), PrivateBound()], "one-stage")
    999
    >>> auto_max_upper([50, PrivateBound()], "one-stage"), auto_max_upper([PrivateBound()] * 3,
    ...                                                                   "two-stage")
    (19606, 26)
    """
    fixed = math.prod(int(u) + 1 for u in uppers if not isinstance(u, PrivateBound))
    chosen = sum(isinstance(u, PrivateBound) for u in uppers)
    room = MAX_STATES[framework] // fixed
    states = max(1, int(round(room ** (1 / chosen))))
    while states ** chosen > room:
        states -= 1
    while (states + 1) ** chosen <= room:
        states += 1
    if states < 2:
        raise ValueError(f"upper: the given bounds of the joint tuple take {fixed} states of the "
                         f"{framework} limit of {MAX_STATES[framework]}: no room for a bound "
                         "chosen privately; lower them")
    return states - 1


def _pair_total(eps: tuple, unit: str) -> Any:
    """What the tuple spends: the sum of its columns' budgets under ``row``, the maximum
    under ``cell`` (docs/joint.md section 2); exact for Fractions."""
    return sum(eps) if unit == "row" else max(eps)


def _exact(e: Any) -> Fraction:
    """A budget as the exact rational it is (a float at its binary value)."""
    return Fraction(e) if isinstance(e, (Fraction, int)) else Fraction(float(e))


def stage_budgets(eps: Sequence, unit: str, share: float) -> tuple[float, tuple[float, ...]]:
    """The budgets of the shared stage (stage 1, or the one-stage framework's zero count) and
    of each column's noise: ``share`` of the tuple's budget and ``1 - share`` of each
    column's, split exactly and rounded so that the floats never spend more than the tuple.

    The tuple's budget ``E`` is the exact sum of the columns' budgets ``eps`` under ``row``
    (their maximum under ``cell``). The exact shares are ``e_1 = share E`` and
    ``e_c = (1 - share) eps_c``; their floats are fitted by
    :func:`dpfix.release.budget.fit_shares` (as the columns' shares of a release are), so
    that exactly ``e_1 + sum_c e_c <= E`` under ``row`` and ``e_1 + e_c <= E`` for every
    column under ``cell``: what runs never exceeds what is charged, however the floats
    round.

    Examples
    --------
    >>> stage_budgets((0.5, 0.5), "row", 0.5)
    (0.5, (0.25, 0.25))
    >>> e1, (ea, eb) = stage_budgets((0.1, 0.2), "row", 0.3)
    >>> Fraction(e1) + Fraction(ea) + Fraction(eb) <= Fraction(0.1) + Fraction(0.2)
    True
    """
    q = [_exact(e) for e in eps]
    total, s = _pair_total(tuple(q), unit), Fraction(share)
    e1, rest = s * total, [(1 - s) * c for c in q]
    if unit == "row":
        first, *others = fit_shares([e1, *rest], total)
        return first, tuple(others)
    fits = [fit_shares([e1, r], total) for r in rest]  # each column with the shared stage
    return min(f[0] for f in fits), tuple(f[1] for f in fits)


@renamed_keywords(eps_total="eps")
def zero_share_rule(eps: float) -> float:
    """The default share of the all-zero count at the tuple's budget ``eps``:
    :data:`ZERO_SHARE` from 1 up, ``ZERO_SHARE / eps`` (the count at the absolute
    budget ``ZERO_SHARE``, its error ``1 / (ZERO_SHARE N)`` rows' share) below, at most
    :data:`ZERO_SHARE_MAX` (docs/joint.md section 8). A public function of the budget.

    Examples
    --------
    >>> [round(zero_share_rule(e), 4) for e in (5.0, 1.0, 0.5, 0.1)]
    [0.02, 0.02, 0.04, 0.1]
    """
    return min(ZERO_SHARE_MAX, ZERO_SHARE / min(float(eps), 1.0))


def _one_stage(ds: list, shape: tuple, eps_in: tuple, unit: str, zero_share: float | None,
               seed: Any, max_iter: int, seconds: dict) -> tuple:
    """The one-stage framework: the zero count, the product noise, the EM, the matching."""
    if zero_share is None:
        zero_share = zero_share_rule(float(_pair_total(eps_in, unit)))
    if not 0 <= zero_share < 1:
        raise ValueError(f"zero_share: in [0, 1), got {zero_share!r}")
    start = time.perf_counter()
    seeds = (None, None, None) if seed is None else stage_seeds(seed)
    source = random_source(seeds[STAGE2])
    e1, eps_2 = stage_budgets(eps_in, unit, zero_share)
    lams = _lams(eps_2)
    noise = JointSampler(shape, lams, Remap.from_placement(np.arange(math.prod(shape))),
                         constructor="product-noise")
    ys = noise.sample(*ds, seed=source)
    seconds["noise"] = time.perf_counter() - start
    H = joint_histogram(*ys, shape)
    zero = None
    if e1 > 0:  # one row changes the count of all-zero rows by at most 1
        count = np.array([int(np.sum(np.logical_and.reduce([d == 0 for d in ds])))])
        rng = None if seed is None else np.random.default_rng(seeds[STAGE1])
        noisy, _ = add_laplace(count, 1.0 / e1, rng=rng, sensitivity=1, budget=e1)
        zero = float(noisy[0]) / ds[0].size
    Z = deconvolve_joint(H, lams, max_iter=max_iter, zero=zero)
    seconds["deconvolve"] = time.perf_counter() - start - seconds["noise"]
    out = _match(np.ravel_multi_index(ys, shape), Z, lams,
                 random_source(seeds[SELECTOR]))
    origin = "(" + ", ".join("0" * len(shape)) + ")"
    stage = {"estimator": f"{len(shape)}-D EM deconvolution ({max_iter} steps at most)"
                          + ("" if zero is None else
                             f", the {origin} share fixed to a Laplace count at {e1:.6g}"),
             "remap": "optimal integer transport of the noisy tuples onto the apportioned "
                      "estimate, cost the expected L1 count error (POT network simplex)"}
    return out, Z, e1, eps_2, noise.describe(source), stage, zero_share


def _two_stage(ds: list, shape: tuple, eps_in: tuple, unit: str, split: float, seed: Any,
               seconds: dict) -> tuple:
    """The two-stage framework: the joint Laplace target, then product noise and the remap."""
    if not 0 < split < 1:
        raise ValueError(f"split: in (0, 1), got {split!r}")
    start = time.perf_counter()
    seeds = (None, None, None) if seed is None else stage_seeds(seed)
    source = random_source(seeds[STAGE2])
    e1, eps_2 = stage_budgets(eps_in, unit, split)
    eta = joint_histogram(*ds, shape)
    rng = None if seed is None else np.random.default_rng(seeds[STAGE1])
    stage1 = joint_laplace(eta, e1, seed=rng, secure=seed is None)
    seconds["stage1"] = time.perf_counter() - start
    Z = stage1.z.reshape(shape)
    s = joint_sampler(Z, eps=None, lam=_lams(eps_2), unit="row")
    out = s.sample(*ds, seed=source)
    return out, Z, e1, eps_2, s.describe(source), {"privatizer": "joint-laplace",
                                                   "noise": stage1.noise}


def privatize_joint(columns: Any, eps: Any, *, upper: Any, unit: str = "row",
                    framework: str = "one-stage", split: float = TWO_STAGE_SPLIT,
                    zero_share: float | None = None, seed: int | None = None,
                    max_iter: int = 100) -> PrivatizedJoint:
    """Release two or three count columns with their joint distribution fixed.

    Parameters
    ----------
    columns : sequence of array_like of int
        Two or three columns (one tuple per row), non-negative; top-coded at ``upper``.
    eps : sequence of float or Fraction
        The budget each column's mechanism runs at (the unit's share over ``c``), taken
        exactly (a float at its binary value). Under unit ``row`` the tuple spends the
        sum, under ``cell`` the maximum (docs/joint.md section 2); the stages split it
        exactly, their floats never above it (:func:`stage_budgets`).
    upper : sequence of int
        The public bounds; the states ``prod (upper_c + 1)`` at most
        :data:`MAX_STATES` of the framework.
    unit : ``"row"`` or ``"cell"``
        How the columns' budgets compose (sum or maximum): the two-stage framework's
        stage 1 spends ``split`` of that once, on the joint histogram.
    framework : ``"one-stage"`` or ``"two-stage"``
    split : float
        Two-stage: the share of the tuple's budget spent by stage 1 (each column's
        stage 2 runs at ``(1 - split)`` of its budget).
    zero_share : float
        One-stage: the share of the tuple's budget spent on a Laplace count of the rows
        with every count zero (sensitivity 1 for every unit; held fixed by the EM), each
        column's noise at ``(1 - zero_share)`` of its budget (default: :func:`zero_share_rule`;
        0: no count, docs/joint.md section 7).
    seed : int, optional
        Reproducible (NOT FOR PRODUCTION).
    max_iter : int
        The one-stage EM's steps.

    Returns
    -------
    PrivatizedJoint

    Examples
    --------
    >>> r = privatize_joint([[0, 0, 3, 3], [1, 1, 0, 0], [2, 2, 0, 1]], (1.0, 1.0, 1.0),
    ...                     upper=(3, 1, 2), seed=0)
    >>> r.c.size, r.report["framework"], r.z.shape
    (4, 'one-stage', (4, 2, 3))
    """
    if unit not in ("row", "cell"):
        raise ValueError(f"unit: 'row' or 'cell', got {unit!r}")
    if framework not in JOINT_FRAMEWORKS:
        raise ValueError(f"framework: one of {', '.join(JOINT_FRAMEWORKS)}, got {framework!r}")
    start = time.perf_counter()
    ds, shape = _columns(columns, upper)
    if len(eps) != len(ds):
        raise ValueError(f"eps: one budget per column, {len(eps)} for {len(ds)}")
    check_states(shape, framework)
    eps_in = tuple(_exact(e) for e in eps)  # the stages split it exactly (stage_budgets)
    seconds: dict[str, float] = {}
    if framework == "one-stage":
        out, Z, e1, eps_2, sampler, stage, zero_share = _one_stage(
            ds, shape, eps_in, unit, zero_share, seed, max_iter, seconds)
    else:
        out, Z, e1, eps_2, sampler, stage = _two_stage(ds, shape, eps_in, unit, split, seed,
                                                       seconds)
    seconds["total"] = time.perf_counter() - start
    kind = "pair" if len(ds) == 2 else "triple"
    report = {"framework": framework, "unit": unit,
              "split_fraction": zero_share if framework == "one-stage" else split,
              "shape": list(shape), "eps_columns": [float(e) for e in eps_in],
              "eps_2": list(eps_2), "eps_1": e1, "stage1": stage, "samplers": sampler,
              "seed": seed, "fixed_point": f"the joint distribution of the {kind}"}
    return PrivatizedJoint(out, Z, report, seconds)


def privatize_pair(a: Any, b: Any, eps: tuple[float, float], *, upper: tuple[int, int],
                   **options: Any) -> PrivatizedJoint:
    """Release the pair of count columns ``(a, b)`` with the joint distribution fixed:
    :func:`privatize_joint` of the two columns (the same keywords).

    Examples
    --------
    >>> r = privatize_pair([0, 0, 3, 3], [1, 1, 0, 0], (1.0, 1.0), upper=(3, 1), seed=0)
    >>> r.a.size, r.report["framework"], r.z.shape
    (4, 'one-stage', (4, 2))
    """
    return privatize_joint((a, b), eps, upper=upper, **options)


@dataclass(eq=False, repr=False)
class JointColumn:
    """One column of a released pair, as :func:`dpfix.release.table.privatize_table` uses it:
    its released counts, ``n``, its public column report, and (confidential) the number of
    top-coded counts and the pair's timings."""

    counts: np.ndarray
    n: int
    report: dict
    topcoded: int = 0
    seconds: dict = field(default_factory=dict)

    def confidential_entry(self, d: np.ndarray) -> dict:
        """The column's confidential report from its true counts ``d``: derived from the true
        data without noise."""
        top = np.minimum(np.asarray(d, dtype=np.int64), self.n - 1)
        return {"topcoded": self.topcoded,
                "true_distribution_zeta": (np.bincount(top, minlength=self.n) / top.size
                                           ).tolist(),
                "realized_count_error": float(np.mean(np.abs(self.counts - top))),
                "joint_with": self.report["framework"]["joint_with"],
                "timings_seconds": dict(self.seconds)}


@renamed_keywords(eps_total="eps")
def joint_framework(options: Any, eps: float) -> tuple[str, float | None]:
    """The framework of the joint tuples from ``privatize_table``'s options, and the
    two-stage split: ``TwoStage`` with a given ``split`` is the two-stage framework at that
    share (``"rule-of-thumb"``: the rule at the tuple's budget); ``TwoStage()`` with no
    split (the default) and ``NoSplit("one-stage")`` the one-stage framework.

    Examples
    --------
    >>> joint_framework(TwoStage(), 1.0), joint_framework(TwoStage(split=0.25), 1.0)
    (('one-stage', None), ('two-stage', 0.25))
    """
    if isinstance(options, NoSplit) or options is None or options.split is None:
        return "one-stage", None
    return "two-stage", split_fraction(eps, options.split)[0]


def check_joint(joint: Any, names: list, uppers: dict, options: Any,
                delta: Any) -> list[tuple[str, ...]]:
    """The tuples of ``joint=`` checked: two or three distinct privatized columns each, no
    column in two tuples, a given integer ``upper`` or a bound chosen privately (its
    candidates up to :func:`auto_max_upper`), the state space within
    :data:`MAX_STATES`, the default method or a split (``TwoStage``) or
    ``NoSplit("one-stage")``, pure DP.

    Examples
    --------
    >>> check_joint([("a", "b")], ["a", "b", "c"], {"a": 3, "b": 4, "c": 2}, None, None)
    [('a', 'b')]
    """
    if joint is None:
        return []
    tuples = []
    seen: set = set()
    for group in joint:
        group = tuple(group)
        if len(group) not in (2, 3) or len(set(group)) != len(group):
            raise ValueError(f"joint: two distinct columns (a pair) or three (a triple), got "
                             f"{group!r}")
        for name in group:
            if name not in names:
                raise ValueError(f"joint: {name!r} is not a privatized column (columns=)")
            if name in seen:
                raise ValueError(f"joint: {name!r} is in two pairs or triples")
            if not isinstance(uppers.get(name), (int, PrivateBound)):
                raise ValueError(f"joint: {name!r} needs an integer upper= or "
                                 "upper=PrivateBound()")
            seen.add(name)
        framework = joint_framework(options, 1.0)[0] if _joint_options(options) else None
        given = [uppers[n] for n in group]
        if any(isinstance(u, PrivateBound) for u in given):
            cap = auto_max_upper(given, framework or "one-stage")
            given = [cap if isinstance(u, PrivateBound) else u for u in given]
        check_states(tuple(u + 1 for u in given), framework or "one-stage", "joint")
        tuples.append(group)
    if tuples and delta is not None:
        raise ValueError("joint: the joint release is pure eps-DP; drop delta=")
    if tuples and not _joint_options(options):
        raise ValueError("joint: the joint release runs the one-stage framework or the "
                         "two-stage one with a split (TwoStage(split=...)); drop constructor=")
    ignored = given_options(options, read=("split", "framework")) if tuples else []
    if ignored:
        given = ", ".join(f"{name}={value!r}" for name, value in ignored)
        raise ValueError(f"joint: the joint release runs its own mechanisms (product noise, a "
                         "joint deconvolution, a transport remap) and reads only the split "
                         f"of the options; it would ignore {given}: drop it")
    return tuples


def _joint_options(options: Any) -> bool:
    """Options the joint release reads: none, ``TwoStage`` or ``NoSplit("one-stage")``."""
    return options is None or isinstance(options, TwoStage) or (
        isinstance(options, NoSplit) and options.framework == "one-stage")


def _stage1_entry(r: PrivatizedJoint) -> dict | None:
    """The column's ``stage1`` in the report's shape: what was released before the noise on
    the rows (the all-zero count, or the joint Laplace histogram), or None."""
    e1 = r.report["eps_1"]
    if e1 == 0:
        return None
    secure = bool(r.report["samplers"]["secure"])
    if r.report["framework"] == "two-stage":
        noise = r.report["stage1"]["noise"]
        return {"privatizer": "joint-laplace", "postprocess": "project-simplex",
                "notion": "pure-DP", "budget": f"eps={e1:g} (pure-DP)", "secure": secure,
                "noise": {"distribution": str(noise["distribution"]),
                          "scale": float(noise["scale"]), "sensitivity": 2}}
    return {"privatizer": "zero-zero count",
            "postprocess": f"held fixed by the {len(r.z.shape)}-D EM",
            "notion": "pure-DP", "budget": f"eps={e1:g} (pure-DP)", "secure": secure,
            "noise": {"distribution": "discrete Laplace" if secure else "Laplace",
                      "scale": 1.0 / e1, "sensitivity": 1}}


def _column_report(name: str, other: str, k: int, r: PrivatizedJoint, eps_col: float,
                   upper: int, N: int, seed: Any, bound: dict | None = None) -> dict:
    """The column entry of one column of a pair or triple, in the report's per-column shape
    (dpfix/release/report.schema.json); the tuple itself is the report's ``joint`` entry.
    ``other`` names the tuple's other columns; ``bound`` describes a bound chosen privately
    (its ``eps_upper`` spent before the joint release)."""
    from dpfix import __version__

    z = r.z.sum(axis=tuple(d for d in range(r.z.ndim) if d != k))
    out = np.bincount(r.counts[k], minlength=upper + 1) / N
    one = r.report["framework"] == "one-stage"
    eps_2 = float(r.report["eps_2"][k])
    framework = {"name": r.report["framework"], "chosen_by": "joint= (docs/joint.md)",
                 "joint_with": str(other)}
    if one:
        framework.update({"estimator": f"joint {r.z.ndim}-D EM", "remap": "transport",
                          "converged": None, "iterations": None})
    return {
        "report": "dpfix privatize",
        "privacy": "every value here is public (parameters, N, n) or computed from the "
                   "differentially private releases; nothing is derived from the true data "
                   "without noise",
        "dpfix_version": __version__,
        "upper": upper,
        "top_coding": {"upper": upper, "bound": (
                           "a public parameter given by the user" if bound is None else
                           "chosen privately with eps_upper (upper_bound: a DP output)")
                       + "; counts above it are replaced by it before privatization",
                       "count": "in the confidential report only: it is derived from the true "
                       "data without noise"},
        "framework": framework,
        "budget": {"eps_t": eps_col,
                   "eps_upper": 0.0 if bound is None else float(bound["eps_upper"]),
                   "eps_1": float(r.report["eps_1"]),
                   "eps_2": eps_2, "delta": 0.0,
                   "split": {"rule": "joint", "fraction": float(r.report["split_fraction"])},
                   "exact": exact_budgets(
                       eps_t=eps_col, eps_upper=0.0 if bound is None else bound["eps_upper"],
                       eps_1=r.report["eps_1"], eps_2=eps_2),
                   "composition": ("" if bound is None else
                                   f"sequential: the DP bound upper = {upper} (eps_upper), "
                                   "then ")
                                  + f"jointly with {other!r}: see the report's joint entry "
                                  "(docs/joint.md section 7)"},
        "upper_bound": bound or {"upper": upper, "chosen_by": "given: a public parameter, not "
                                 "computed from the data", "eps_upper": 0},
        "n": upper + 1, "N": N, "target_z": z.tolist(),
        "estimated_count_error": {"value": None, "loss": "abs",
                                  "definition": "the pair's count error is that of the joint "
                                                "release (docs/joint.md section 8)"},
        "mechanism": {"constructor": "product-transport", "name": "product-transport",
                      "selector": None, "eps_construction": eps_2, "privacy_level": eps_2,
                      "dp_check": r.report["samplers"]["privacy_statement"],
                      "fixed_point": True, "row_sum_error": None, "fixed_point_error": None,
                      "build_seconds": None, "built": False},
        "stage1": _stage1_entry(r),
        "samplers": {"stage1": "none" if r.report["eps_1"] == 0 else
                     "joint-laplace" if not one else "a Laplace count of the (0, 0) rows",
                     "stage2": str(r.report["samplers"]["kind"]),
                     "privacy_statement": r.report["samplers"]["privacy_statement"]},
        "seed": seed, "output_distribution": out.tolist(),
        "timings_seconds": {"construct": 0.0},
        "timings_note": "the joint release's timings depend on the data: in the confidential "
                        "report"}


def _joint_bounds(group: tuple, columns: dict, budgets: dict, c: int, uppers: dict,
                  seeds: dict, framework: str) -> tuple[tuple, dict]:
    """The budgets each column of ``group`` runs the joint release at, and the bounds chosen
    privately (column -> the report's ``upper_bound``): a column with a given bound runs at
    its exact budget over ``c``; one with a :class:`~dpfix.release.bounds.PrivateBound`
    first spends its share of its mechanisms' budget (the float of
    :func:`dpfix.release.budget.mechanism_budget`, at most the budget over ``c``) on a DP
    bound among the candidates up to :func:`auto_max_upper` (public), then runs at the rest
    (sequential composition: the two floats add up to at most that budget exactly)."""
    cap = auto_max_upper([uppers[n] for n in group], framework) \
        if any(isinstance(uppers[n], PrivateBound) for n in group) else None
    eps_m, chosen = [], {}
    for name in group:
        bound = uppers[name]
        if not isinstance(bound, PrivateBound):
            eps_m.append(_exact(budgets[name]) / c)  # the exact share over c
            continue
        m = mechanism_budget(float(budgets[name]), c)
        eps_upper, eps_rest = bound.split(m)
        seed = seeds[name]
        picked = choose_upper(np.asarray(columns[name], dtype=np.int64), eps_upper,
                              max_upper=cap, seed=random_source(
                                  None if seed is None else seed_child(seed, BOUND)))
        described = picked.describe()
        described["candidates"] = {
            **described["candidates"],
            "limit": f"the joint tuple's state space caps its bounds chosen privately at {cap}: "
                     "smaller fixed bounds for its other columns, or fewer columns"}
        chosen[name] = {**described, "share": bound.share_at(m)}
        eps_m.append(Fraction(eps_rest))
    return tuple(eps_m), chosen


def release_joint(tuples: list, columns: dict, budgets: dict, unit: Any, uppers: dict,
                  seeds: dict, options: Any = None) -> tuple[dict, list]:
    """Every pair or triple released (:func:`privatize_joint`, the framework of
    :func:`joint_framework`): column -> :class:`JointColumn`, and the report's ``joint``
    entries."""
    made: dict = {}
    entries = []
    # the unit person composes in parallel: its changes are steps of the grid, as cell's
    graph = "row" if unit.composition == "sequential" else "cell"
    for group in tuples:
        framework = joint_framework(options, 1.0)[0]
        eps_m, chosen = _joint_bounds(group, columns, budgets, unit.bound, uppers, seeds,
                                      framework)
        upper = {n: chosen[n]["upper"] if n in chosen else uppers[n] for n in group}
        framework, split = joint_framework(options, float(_pair_total(eps_m, unit.name)))
        r = privatize_joint([columns[n] for n in group], eps_m,
                            upper=tuple(upper[n] for n in group), unit=graph,
                            framework=framework, seed=seeds[group[0]],
                            **({} if split is None else {"split": split}))
        N = int(r.a.size)
        for k, name in enumerate(group):
            other = ", ".join(str(n) for n in group if n != name)
            counts = np.asarray(columns[name], dtype=np.int64)
            report = _column_report(name, other, k, r, float(budgets[name]), upper[name], N,
                                    seeds[group[0]], chosen.get(name))
            message = top_mass_message(report["target_z"], upper[name],
                                       chosen[name]["share"] if name in chosen else None,
                                       capped_change(chosen.get(name)))
            if message is not None:
                warnings.warn(f"{name}: {message}", TopCodingWarning, stacklevel=3)
            made[name] = JointColumn(r.counts[k], upper[name] + 1, report,
                                     int((counts > upper[name]).sum()), dict(r.seconds))
        message = joint_mass_message(r.z, list(group), [
            chosen[n]["share"] if n in chosen else None for n in group],
            [capped_change(chosen.get(n)) for n in group])
        if message is not None:
            warnings.warn(message, TopCodingWarning, stacklevel=3)
        spent = "sum" if unit.name == "row" else "maximum"
        letters = "abc"[:len(group)]
        entries.append({
            "columns": list(group), "unit": unit.name, "framework": r.report["framework"],
            "shape": r.report["shape"], "eps_columns": [float(budgets[n]) for n in group],
            "mechanism_eps": [float(e) for e in eps_m], "eps_1": r.report["eps_1"],
            "composition": (f"the {'pair' if len(group) == 2 else 'triple'} spends the "
                            f"{spent} of its columns' budgets: product noise is "
                            + ", ".join(f"lam_{c}-DP in {c}" for c in letters)
                            + " and the product of the lam of the columns that change for "
                            "several (docs/joint.md section 2), the rest post-processing"),
            "fixed_point": r.report["fixed_point"], "stage1": r.report["stage1"],
            "samplers": r.report["samplers"], "target_z": r.z.ravel().tolist(),
            "output_distribution": (joint_histogram(*r.counts, r.z.shape).ravel() / N
                                    ).tolist(),
            "seed": seeds[group[0]]})
    return made, entries
