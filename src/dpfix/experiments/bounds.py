"""The bounds study (docs/bounds.md section 3): ``upper="auto"`` against the best fixed bound
in hindsight, on the shared data sets.

For every data set (the eight count columns of the county data and the seven histograms)
and every budget ``eps`` of the column (:data:`EPS`; ``0.5`` too on the county homicides
and rapes, the README's two-column table at ``eps_t = 1``), each cell is one release by
:func:`dpfix.release.pipeline.privatize_counts`, measured against the TRUE counts ``x``
(not the top-coded ones):

- ``ce``: the count error ``mean_i |y_i - x_i|``;
- ``w1``: the Wasserstein-1 distance between the distributions of ``y`` and ``x``
  (``mean |sort(y) - sort(x)|``: the mass above the bound counts as moved to it);
- ``upper``: the bound the release used.

The methods (:data:`METHODS`), each ``RULE/SHARE``: ``SHARE`` is ``f=F`` (``F eps`` on the
bound), ``c=F`` (``F min(eps, 1)``), ``s=F`` (``F sqrt(eps)``) or ``d=F`` (``min(F eps,
X)``: the default's form, :func:`dpfix.release.bounds.default_share`, with the cap ``X =
UPPER_MAX`` unless the option ``u=X`` gives another); the release then runs at the rest.
Every loss rule adds the default's margin (:func:`dpfix.release.bounds.bound_margin`) to
the candidate drawn unless the option ``k=K`` gives another (``k=0``: none):

- ``fixed`` at every bound of :func:`hindsight_grid` with the whole budget on the release:
  the best fixed bound in hindsight is the one of least median ``ce``;
- ``auto``: ``upper="auto"`` as the library runs it (the default rule and share);
- ``max/d=F``: a reference, not private: the release at the largest count itself,
  paying the share (what a bound known exactly would give after its share), at the
  default's share and at smaller and larger ones (:data:`DEFAULT_FORM_SHARES`), and at the
  former default's (``max/u=0.05/d=0.02``);
- ``loss``: the loss rule (:func:`dpfix.release.bounds.choose_upper`); ``loss/d=F`` with
  ``F = UPPER_SHARE`` draws the same bound and the same rows as ``auto``. Its variants:
  :data:`FORMER_DEFAULT`, the margins :data:`MARGINS` and the caps :data:`CAPS` at the
  default's share, ``loss/m=M/l=B`` with the base measure ``2^(-M d_j)``, ``d_j =
  floor(log2(c_j / B))`` (:func:`choose_by`; not in the study's list),
  ``loss/g=S`` on the grid of ``S`` steps per doubling (:data:`GRIDS` at the default's
  share; 8 and 32 at ``c=0.05``), ``loss/d=F`` at other shares of
  the default's form, ``loss/t=T`` with the penalty :func:`jump_penalty` (a public model
  of the error's jump above the largest count), ``loss/b=0.5`` (the penalty ``floor(c /
  2)``, twice the default's), and at ``c=0.05``, as the three rules
  below, ``loss/b=B`` with the penalty ``floor(B c)``, ``loss/b=0`` without it (above
  the largest count only the base measure then decides);
- ``quantile:Q``: the quantile rule at ``Q`` (``0.99`` at ``f=0.1`` was the default);
- ``two-step``: half the share on the quantile rule at ``0.99``, giving ``U_1``, half on the
  loss rule over the candidates ``>= U_1`` (an adaptive split of the share);
- ``loss+model``: the loss rule with the score ``L(c) + floor(c / 4) + round(N m(c))``,
  ``m`` the truncated geometric mechanism's expected ``|error|`` on the uniform
  distribution over ``0 .. c`` at the release's ``eps_2`` (:func:`geometric_model`,
  public).

All methods of one replication share the random streams (the seed of a cell depends on the
data set, ``eps`` and the replication only): stage 1 and stage 2 draw from the same seeds,
so the comparisons are paired.

``dpfix reproduce bounds`` computes the cells of :func:`bounds_cells` (cached like every
experiment's, :mod:`dpfix.experiments.cells`) and writes ``bounds.csv`` (every method),
``bounds_fixed.csv`` (the fixed bounds), ``bounds_intervals.csv``
(:func:`dpfix.experiments.resolution.study_intervals`) and ``bounds_targets.md``
(:func:`targets_report` and :func:`dpfix.experiments.resolution.intervals_report`);
:func:`study` runs the same in one process. :func:`landing_cells`, :func:`landing_summary`
and :func:`landing_targets` are the landing study (``benchmarks/bench_bounds_landing.py``):
each rule against the release at the largest count itself paying the same share, and the
targets against the study's best fixed bound held at every seed, 60 paired releases per
case over three base seeds; :mod:`dpfix.experiments.resolution` puts intervals on its
ratios.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction
from functools import cache
from typing import Any

import numpy as np

from dpfix.experiments.cells import register
from dpfix.numbers.numeric import require
from dpfix.release.bounds import (
    BOUND_MARGIN,
    BOUND_PENALTY,
    DEFAULT_MAX_UPPER,
    DEFAULT_RULE,
    GRID_LINEAR,
    LAM_RTOL,
    LOSS_GRID_STEPS,
    SCORE_CAP,
    UPPER_MAX,
    UPPER_SHARE,
    TopCodingWarning,
    bound_grid,
    bound_margin,
    choose_upper,
    halvings,
    loss_scores,
    sample_exponential,
    topcoding_loss,
)
from dpfix.release.options import split_fraction, stage_split
from dpfix.release.pipeline import privatize_counts
from dpfix.release.privatizers.postprocess import DEFAULT_POSTPROCESS
from dpfix.sampling.source import random_source, rational_lam

__all__ = ["BOUND_DATASETS", "EPS", "README_EPS", "SHARES", "METHODS", "QUICK_DATASETS",
           "GRIDS", "DEFAULT_FORM_SHARES", "MARGINS", "CAPS", "FORMER_DEFAULT",
           "QUICK_METHODS", "TARGETS", "CAPPED_SHARES", "ROOT_SHARES", "RULE_VERSION",
           "bound_counts", "hindsight_grid", "geometric_model", "jump_penalty",
           "choose_by", "run_release", "bounds_cells", "bounds_summary", "best_fixed",
           "ratios", "targets_report", "share_report", "study", "SEED_FIELDS",
           "LANDING_METHODS", "LANDING_REFERENCE", "LANDING_SEEDS", "landing_cells",
           "landing_summary", "landing_targets"]

#: name -> (file, column of a table or None for a histogram file).
BOUND_DATASETS: dict[str, tuple[str, str | None]] = {
    **{f"crime:{c}": ("crime_data.csv", c)
       for c in ("MURDER", "RAPE", "ROBBERY", "AGASSLT", "BURGLRY", "LARCENY", "MVTHEFT",
                 "ARSON")},
    "binomial": ("binom_hist_data.csv", None),
    "uniform": ("uniform_hist.csv", None),
    "left-skewed": ("left-skewed_hist.csv", None),
    "right-skewed": ("right-skewed_hist.csv", None),
    "bimodal": ("bimodal_hist.csv", None),
    "top-inflated": ("top-inflated_hist.csv", None),
    "zero-inflated": ("zero-inflated_hist.csv", None),
}
#: The column budgets of the study.
EPS = (0.3, 1.0, 3.0)
#: The README's two-column table (``eps_t = 1`` over MURDER and RAPE, unit ``row``): each
#: column's budget.
README_EPS = {"crime:MURDER": 0.5, "crime:RAPE": 0.5}
#: The shares of the loss rule compared.
SHARES = (0.02, 0.05, 0.1, 0.2, 0.3)
CAPPED_SHARES = (0.02, 0.03, 0.05, 0.08, 0.1)
ROOT_SHARES = (0.03, 0.05)
#: The targets against the best fixed bound: median and 90th percentile of ``ce`` and the
#: median ``w1``, as ratios.
TARGETS = {"ce_median": 1.15, "ce_p90": 1.3, "w1_median": 1.1}


#: The grids (steps per doubling) compared with the default's at the default share.
GRIDS = (128, 256, 1024)
#: The default's form ``d=F`` at other ``F``, for the rule and for the largest count itself.
DEFAULT_FORM_SHARES = (0.01, 0.02, 0.08)
#: The margins ``k=K`` (``round(K / eps_upper)`` counts) compared with the default's.
MARGINS = (0, 0.25, 1)
#: The caps ``u=X`` of the default's form (``eps_upper <= X``) compared with the default's.
CAPS = (0.01, 0.05)
#: The former default: the loss rule at ``eps_upper = min(0.02 eps, 0.05)``, no margin.
FORMER_DEFAULT = "loss/k=0/u=0.05/d=0.02"


def _methods(share: float) -> tuple[str, ...]:
    at = "c=0.05"  # the variants of the rule, at one share
    d = f"d={share:g}"
    return ("auto", f"max/{d}", *(f"max/d={f:g}" for f in DEFAULT_FORM_SHARES),
            "max/u=0.05/d=0.02", FORMER_DEFAULT,
            *(f"loss/k={k:g}/{d}" for k in MARGINS if k != BOUND_MARGIN),
            *(f"loss/u={u:g}/{d}" for u in CAPS if u != UPPER_MAX),
            *(f"loss/g={g}/{d}" for g in GRIDS if g != LOSS_GRID_STEPS),
            *(f"loss/d={f:g}" for f in DEFAULT_FORM_SHARES), f"loss/t=100/{d}",
            f"loss/b=0.5/{d}",
            *(f"loss/c={f:g}" for f in CAPPED_SHARES),
            *(f"loss/f={f:g}" for f in SHARES), *(f"loss/s={f:g}" for f in ROOT_SHARES),
            f"loss/g=8/{at}", f"loss/g=32/{at}", f"loss/b=0/{at}", f"loss/b=0.5/{at}",
            f"loss/b=0.75/{at}", "quantile:0.99/f=0.1", "quantile:0.999/f=0.1",
            "quantile:1/f=0.1", f"quantile:0.99/{at}", f"two-step/{at}",
            f"loss+model/{at}")


#: Every method of the full study but ``fixed`` (module docstring).
METHODS = tuple(dict.fromkeys(_methods(UPPER_SHARE)))
#: The library's default rule and share, in the key of every ``auto`` cell: a cached cell
#: of another default is not reused.
DEFAULT = f"{DEFAULT_RULE}/d={UPPER_SHARE:g}/max={UPPER_MAX:g}"
#: The loss rule's public constants, in the key of every cell but ``fixed``.
RULE_VERSION = f"g={LOSS_GRID_STEPS}/b={BOUND_PENALTY}/k={BOUND_MARGIN}"
QUICK_DATASETS = ("crime:MURDER", "binomial", "uniform")
QUICK_METHODS = ("auto", "quantile:0.99/f=0.1")


@cache
def _counts(name: str) -> np.ndarray:
    from dpfix.io.counts import counts_from_column
    from dpfix.io.data import data_path
    from dpfix.io.tables import read_histogram, read_table

    if name not in BOUND_DATASETS:
        raise ValueError(f"dataset: unknown {name!r}; choose from {', '.join(BOUND_DATASETS)}")
    file, column = BOUND_DATASETS[name]
    if column is not None:
        x = counts_from_column(read_table(data_path(file)), column)
    else:
        eta = read_histogram(data_path(file))
        x = np.repeat(np.arange(eta.shape[0], dtype=np.int64), eta)
    x = np.asarray(x, dtype=np.int64)
    x.flags.writeable = False
    return x


def bound_counts(name: str) -> np.ndarray:
    """The true counts of a data set of :data:`BOUND_DATASETS` (a histogram file expanded to
    its rows). Read-only, cached.

    Raises
    ------
    ValueError
        An unknown data set.
    FileNotFoundError
        Its file is missing.
    """
    return _counts(name)


def hindsight_grid(x: Any, quick: bool = False) -> list[int]:
    """The fixed bounds searched for the best in hindsight (they may look at the data).

    Every integer from the median to the largest count when that is at most 100, else the
    candidates of :func:`dpfix.release.bounds.bound_grid` from the median on (two per
    doubling below the 0.9-quantile, four up to the 0.99-quantile, all eight above) and
    the largest count itself; then the candidates up to 1.25 times the largest count (at
    least one: the error is flat above it, docs/bounds.md section 3). ``quick``: at most
    about a dozen, near the largest count.

    Examples
    --------
    >>> hindsight_grid(np.repeat(np.arange(11), 5))
    [5, 6, 7, 8, 9, 10, 11, 12]
    """
    x = np.asarray(x, dtype=np.int64)
    top = int(x.max())
    lo = max(1, int(np.quantile(x, 0.5)))
    q90, q99 = (float(np.quantile(x, q)) for q in (0.9, 0.99))
    grid = [int(c) for c in bound_grid(DEFAULT_MAX_UPPER)]
    if top <= 100:
        below = list(range(lo, top + 1))
    else:
        body = [c for c in grid if lo <= c < top]
        below = [c for k, c in enumerate(body)
                 if c >= q99 or (c >= q90 and k % 2 == 0) or k % 4 == 0] + [top]
    above = [c for c in grid if top < c <= 1.25 * top] or [c for c in grid if c > top][:1]
    out = sorted(set(below + above))
    if quick:
        near = [c for c in out if c >= 0.5 * top]
        out = sorted(set(near[:: max(1, len(near) // 10)] + [top, out[0]]))
    return out


def geometric_model(candidates: Any, eps_2: float) -> np.ndarray:
    """``m(c)``: the truncated geometric mechanism's expected ``|output - input|`` at
    ``eps_2`` (``rho = e^-eps_2``) when the inputs are uniform on ``0 .. c``, in closed
    form: ``m(c) = 2 rho / ((1 - rho^2) (c + 1)) (c + 1 - (1 - rho^(c+1)) / (1 - rho))``
    (``E min(Z, a)^+ = sum_{k=1..a} P(Z >= k) = rho (1 - rho^a) / (1 - rho^2)``). Public:
    a function of the candidate and the budget only.

    Examples
    --------
    >>> geometric_model([1, 10, 10**6], 1.0).round(4).tolist()
    [0.2689, 0.7285, 0.8509]
    """
    c = np.asarray(candidates, dtype=float)
    rho = math.exp(-eps_2)
    return 2 * rho / ((1 - rho * rho) * (c + 1)) * (c + 1 - (1 - rho ** (c + 1)) / (1 - rho))


def jump_penalty(candidates: Any, eps_upper: float, t: float) -> np.ndarray:
    """The penalty of the loss rule's variant ``t=T``: ``floor(c / 2)`` up to ``c_0 = T /
    eps_upper``, then ``floor(c - sqrt(c c_0) + c_0 / 2)`` (slope ``1 - sqrt(c_0 / c) / 2``,
    from 1/2 towards 1). A public model of a release whose error jumps by ``J = kappa c``
    once its bound passes the largest count and grows by one count per unit of top-coding
    below it: the score's slopes ``1 - b`` below and ``b`` above the largest count land the
    bound above it with probability about ``1 - b`` and about ``1 / (eps_upper (1 - b))``
    counts below it otherwise, an expected cost ``(1 - b) J + 1 / (eps_upper (1 - b))``
    least at ``1 - b = 1 / sqrt(eps_upper J)``; ``T = 4 / kappa`` (``T = 100``: a jump of
    4 % of the bound, about what the county columns show). Public: a function of the
    candidate and the budget only.

    Examples
    --------
    >>> jump_penalty([100, 5000, 20000], 0.02, 100).tolist()
    [50, 2500, 12500]
    """
    c = np.asarray(candidates, dtype=float)
    c0 = float(t) / eps_upper
    return np.floor(np.where(c <= c0, c / 2, c - np.sqrt(c * c0) + c0 / 2)).astype(np.int64)


def _method(name: str, eps: float) -> tuple[str, dict, float]:
    """``(rule, options, share of eps)`` of a method name (module docstring)."""
    parts = name.split("/")
    unknown = ValueError(f"method: unknown {name!r}")
    if len(parts) < 2 or parts[-1][:2] not in ("f=", "c=", "s=", "d="):
        raise unknown
    try:
        f = float(parts[-1][2:])
        options = {k: float(v) for k, _, v in (p.partition("=") for p in parts[1:-1])}
    except ValueError:
        raise unknown from None
    rule = parts[0]
    if not (rule in ("loss", "two-step", "loss+model", "max") or rule.startswith("quantile:")) \
            or not set(options) <= {"g", "b", "t", "m", "l", "u", "k"} or not 0 < f < 1:
        raise unknown
    cap = options.pop("u", UPPER_MAX)  # the default's form's cap on eps_upper
    share = {"f": f, "c": f * min(1.0, 1.0 / eps), "s": f / math.sqrt(eps),
             "d": min(f, cap / eps)}[parts[-1][0]]
    return rule, options, share


def _bound_source(seed: int) -> Any:
    """The randomness ``upper="auto"`` draws its bound from: the fourth child of
    ``SeedSequence(seed)`` (stage 1, stage 2 and the selector keep the first three)."""
    return random_source(np.random.SeedSequence(seed).spawn(4)[3])


def choose_by(rule: str, x: np.ndarray, eps_upper: float, eps_rest: float, seed: int,
              options: dict | None = None) -> int:
    """The bound one of the study's rules draws from the counts ``x`` with ``eps_upper``
    (module docstring; ``options``: ``g``, the grid's steps per doubling, ``b``, the
    penalty, ``t``, the penalty :func:`jump_penalty`); ``eps_rest`` is what the release
    then spends (the model's ``eps_2``). Every
    rule is ``eps_upper``-DP for a change of one count by 1 (docs/bounds.md; the two-step
    rule by sequential composition of its halves)."""
    options = options or {}
    source = _bound_source(seed)
    if rule == "max":  # the reference: the largest count itself (not private)
        return int(x.max())
    if rule == "loss" and not options:
        return choose_upper(x, eps_upper, max_upper=DEFAULT_MAX_UPPER, seed=source).upper
    if rule.startswith("quantile:"):
        return choose_upper(x, eps_upper, rule="quantile", quantile=rule.split(":")[1],
                            max_upper=DEFAULT_MAX_UPPER, seed=source).upper
    if rule not in ("loss", "two-step", "loss+model"):
        raise ValueError(f"rule: unknown {rule!r}")
    grid = bound_grid(DEFAULT_MAX_UPPER, int(options.get("g", LOSS_GRID_STEPS)))
    eps = eps_upper
    if rule == "two-step":
        first = choose_upper(x, eps_upper / 2, rule="quantile", max_upper=DEFAULT_MAX_UPPER,
                             seed=source).upper
        grid, eps = grid[grid >= first], eps_upper / 2
    penalty = Fraction(options.get("b", BOUND_PENALTY)).limit_denominator(1000)
    losses = topcoding_loss(np.bincount(x), grid)
    if "t" in options:
        scores = np.minimum(losses + jump_penalty(grid, eps, options["t"]), SCORE_CAP)
    else:
        scores = loss_scores(losses, grid, penalty)
    if rule == "loss+model":
        fraction, _ = split_fraction(eps_rest, None)
        model = geometric_model(grid, eps_rest * (1 - fraction))
        scores = scores + np.rint(x.size * (model - model.min())).astype(np.int64)
    lam = rational_lam(eps, LAM_RTOL)
    # the base measure 2^(-m d_j), d_j = floor(log2(c_j / l)): the library's at m = 1, l = 32
    halved = halvings(grid, int(options.get("l", GRID_LINEAR))) * int(options.get("m", 1))
    bound = int(grid[sample_exponential(scores, lam, source, halved=halved)[0]])
    # the margin: a public function of the DP output and of the budget it was drawn with
    margin = Fraction(options.get("k", BOUND_MARGIN)).limit_denominator(1000)
    return min(bound + bound_margin(eps, margin), DEFAULT_MAX_UPPER)



def run_release(x: np.ndarray, eps: float, method: str, seed: int,
                upper: int | None = None, postprocess: str = DEFAULT_POSTPROCESS
                ) -> dict[str, float]:
    """One release of the counts ``x`` by ``method`` (``fixed`` at ``upper``, stage 1
    post-processed by ``postprocess``), measured against the true counts: ``ce``, ``w1``
    and the bound used (module docstring).

    Examples
    --------
    >>> x = np.repeat(np.arange(30), 20)
    >>> r = run_release(x, 1.0, "auto", seed=0)
    >>> sorted(r), r["upper"] >= 29
    (['ce', 'upper', 'w1'], True)
    """
    with warnings.catch_warnings():  # a fixed bound below the data warns: it is measured here
        warnings.simplefilter("ignore", TopCodingWarning)
        if method == "fixed":
            out = privatize_counts(x, eps, upper=upper, seed=seed, postprocess=postprocess)
        elif method == "auto":
            out = privatize_counts(x, eps, upper="auto", seed=seed, postprocess=postprocess)
        else:
            rule, options, share = _method(method, eps)
            eps_upper, eps_rest = stage_split(eps, share)
            bound = choose_by(rule, x, eps_upper, eps_rest, seed, options)
            out = privatize_counts(x, eps_rest, upper=bound, seed=seed,
                                   postprocess=postprocess)
    y = out.counts
    return {"ce": float(np.abs(y - x).mean()),
            "w1": float(np.abs(np.sort(y) - np.sort(x)).mean()),
            "upper": int(out.n - 1)}


#: The key fields a cell's random stream depends on: all methods of one replication share it.
SEED_FIELDS = ("experiment", "dataset", "eps", "replication", "seed")


@register("bounds", seed_fields=SEED_FIELDS)
def _cell(key: dict, seed: int) -> dict:
    """One bounds-study cell: the data set released by the key's method at its eps."""
    return run_release(bound_counts(key["dataset"]), float(key["eps"]), key["method"], seed,
                       key.get("upper"), key.get("postprocess", DEFAULT_POSTPROCESS))


def bounds_cells(quick: bool = False, replications: int | None = None, seed: int = 0,
                 datasets: Any = None, methods: Any = None, eps: Any = None,
                 counts: dict | None = None, postprocess: str = DEFAULT_POSTPROCESS,
                 fixed: bool = True) -> list[dict]:
    """The cells: every data set, eps, method (``fixed`` at every bound of
    :func:`hindsight_grid`, unless ``fixed`` is false) and replication. Quick: three data
    sets, 5 replications, a dozen fixed bounds, ``auto`` and the quantile rule
    (:data:`QUICK_METHODS`). ``counts``
    (name -> counts) gives the data sets' counts instead of :func:`bound_counts` (then
    :func:`study` computes the cells). ``postprocess``, in every cell's key: stage 1's
    post-processing of every release (the default's unless given; ``"isotonic-cdf"`` in
    the comparison of docs/bounds.md section 3).

    Examples
    --------
    >>> x = np.repeat(np.arange(30), 20)
    >>> cells = bounds_cells(quick=True, eps=[1.0], counts={"toy": x})
    >>> len(cells) > 10, {c["method"] for c in cells} == {"fixed", *QUICK_METHODS}
    (True, True)
    """
    reps = replications or (5 if quick else 20)
    if counts is not None:
        names = list(counts)
    else:
        names = list(datasets or (QUICK_DATASETS if quick else BOUND_DATASETS))
    methods = list(methods or (QUICK_METHODS if quick else METHODS))
    out = []
    for name in names:
        x = bound_counts(name) if counts is None else np.asarray(counts[name])
        budgets = list(eps or EPS)
        if eps is None and not quick and name in README_EPS:
            budgets.append(README_EPS[name])
        grid = hindsight_grid(x, quick)
        for e in budgets:
            for r in range(reps):
                base = {"experiment": "bounds", "dataset": name, "eps": float(e),
                        "replication": r, "seed": seed, "postprocess": postprocess}
                out += [{**base, "method": "fixed", "upper": int(u)} for u in grid if fixed]
                out += [{**base, "method": m, "upper": None, "rule": RULE_VERSION,
                         **({"default": DEFAULT} if m == "auto" else {})} for m in methods]
    return out


#: The landing study's rules: the default, the former default, the default without its
#: margin, and the default with the penalties ``floor(B c)`` of slope ``B`` on either side
#: of its 1/4.
LANDING_METHODS = ("auto", FORMER_DEFAULT, f"loss/k=0/d={UPPER_SHARE:g}",
                   *(f"loss/b={b:g}/d={UPPER_SHARE:g}" for b in (0.125, 0.375)))
#: What they are measured against: the release at the largest count itself, paying the
#: default share (not private; ``max/d=F`` of :func:`bounds_cells`).
LANDING_REFERENCE = f"max/d={UPPER_SHARE:g}"
#: The base seeds: three independent sets of 20 releases per case.
LANDING_SEEDS = (0, 1, 2)


def landing_cells(seeds: Any = LANDING_SEEDS, methods: Any = LANDING_METHODS,
                  replications: int = 20, datasets: Any = None, eps: Any = None,
                  best: dict | None = None) -> list[dict]:
    """The cells of the landing study (docs/bounds.md section 3): every rule of
    ``methods`` and :data:`LANDING_REFERENCE` on every case of :func:`bounds_cells`, with
    ``replications`` releases at each base seed of ``seeds`` and no fixed bound but, when
    ``best`` maps ``(dataset, eps)`` to a bound, ``fixed`` at that bound (the study's best
    fixed bound, chosen on the base seed 0, then held fixed and released at every seed:
    on the other seeds the targets are measured on releases the choice never saw). With
    the base seed 0 they are cells of the study itself (one cache serves both).

    Examples
    --------
    >>> cells = landing_cells(seeds=(0, 1), replications=2, datasets=["uniform"], eps=[1.0])
    >>> len(cells), sorted({c["seed"] for c in cells})  # 6 methods, 2 seeds, 2 releases
    (24, [0, 1])
    >>> LANDING_REFERENCE in {c["method"] for c in cells}
    True
    >>> cells = landing_cells(seeds=(0, 1), replications=2, datasets=["uniform"], eps=[1.0],
    ...                       best={("uniform", 1.0): 29})
    >>> sorted({c["upper"] for c in cells if c["method"] == "fixed"}), len(cells)
    ([29], 28)
    """
    methods = list(dict.fromkeys([*methods, LANDING_REFERENCE]))
    out = []
    for s in seeds:
        cells = bounds_cells(replications=replications, seed=int(s), datasets=datasets,
                             methods=methods, eps=eps, fixed=False)
        for c in cells:
            out.append(c)
            key = (c["dataset"], c["eps"])
            if best is not None and key in best and c["method"] == methods[0]:
                out.append({k: v for k, v in c.items() if k not in ("rule", "default")}
                           | {"method": "fixed", "upper": int(best[key])})
    return out


def landing_summary(cells: list[dict], results: list[dict]) -> Any:
    """Per data set, eps and method of :func:`landing_cells`: :func:`bounds_summary` over
    every release of every seed, each of the median ``w1``, the median ``ce`` and its 90th
    percentile as a ratio to :data:`LANDING_REFERENCE`'s (``w1_ratio``, ``ce_ratio``,
    ``p90_ratio``; the releases paired, the same seeds), and ``below``, the share of the
    bounds drawn below the largest count. What the rule's landing costs, with three times
    the releases of the study's medians.

    Examples
    --------
    >>> cells = landing_cells(seeds=(0,), replications=2, datasets=["uniform"], eps=[3.0])
    >>> results = [run_release(bound_counts(c["dataset"]), c["eps"], c["method"], 7)
    ...            for c in cells]
    >>> t = landing_summary(cells, results)
    >>> t.loc[t.method == LANDING_REFERENCE, "w1_ratio"].tolist()
    [1.0]
    """
    out = bounds_summary(cells, results).drop(columns="fixed")
    top = {name: int(bound_counts(name).max()) for name in out.dataset.unique()}
    below: dict[tuple, list[bool]] = {}
    for c, r in zip(cells, results, strict=True):
        below.setdefault((c["dataset"], c["eps"], c["method"]), []).append(
            r["upper"] < top[c["dataset"]])
    out["below"] = [float(np.mean(below[k]))
                    for k in zip(out.dataset, out.eps, out.method, strict=True)]
    ref = out[out.method == LANDING_REFERENCE].set_index(["dataset", "eps"])
    keys = list(zip(out.dataset, out.eps, strict=True))
    for col, name in (("w1_median", "w1_ratio"), ("ce_median", "ce_ratio"),
                      ("ce_p90", "p90_ratio")):
        out[name] = out[col].to_numpy() / ref.loc[keys, col].to_numpy()
    return out


def landing_targets(cells: list[dict], results: list[dict]) -> Any:
    """Per method of :func:`landing_cells` (with ``best``) and base seed, and over every
    seed (``seed`` -1): the cases whose releases meet the three :data:`TARGETS` against the
    fixed bound's releases at the same seeds (:func:`ratios`; ``met`` of ``cases``). At the
    base seed 0 these are the study's figures; at the others the best fixed bound was
    chosen without them, so its medians carry no winner's bias.

    Examples
    --------
    >>> cells = landing_cells(seeds=(0, 1), replications=2, datasets=["uniform"], eps=[3.0],
    ...                       best={("uniform", 3.0): 29})
    >>> results = [run_release(bound_counts(c["dataset"]), c["eps"], c["method"], 7,
    ...                        c.get("upper")) for c in cells]
    >>> t = landing_targets(cells, results)
    >>> sorted(set(t.seed)), sorted(set(t.method)) == sorted({*LANDING_METHODS, LANDING_REFERENCE})
    ([-1, 0, 1], True)
    """
    pd = require("pandas")
    rows = []
    for seed in [*sorted({c["seed"] for c in cells}), -1]:
        pick = [i for i, c in enumerate(cells) if seed in (-1, c["seed"])]
        table = ratios(bounds_summary([cells[i] for i in pick], [results[i] for i in pick]))
        for method, part in table.groupby("method", sort=False):
            rows.append({"method": method, "seed": int(seed), "met": int(part.met.sum()),
                         "cases": len(part)})
    return pd.DataFrame(rows)


def bounds_summary(cells: list[dict], results: list[dict]) -> Any:
    """Per data set, eps, method and fixed bound: median and 90th percentile of ``ce``,
    median and mean of ``w1``, and the bounds drawn (min, median, max)."""
    pd = require("pandas")
    df = pd.DataFrame([{"dataset": c["dataset"], "eps": c["eps"], "method": c["method"],
                        "fixed": c.get("upper"), **r}
                       for c, r in zip(cells, results, strict=True)])
    df["fixed"] = df["fixed"].fillna(-1).astype(int)
    g = df.groupby(["dataset", "eps", "method", "fixed"], sort=True)
    out = g.agg(ce_median=("ce", "median"), ce_p90=("ce", lambda v: float(np.quantile(v, 0.9))),
                ce_mean=("ce", "mean"), w1_median=("w1", "median"), w1_mean=("w1", "mean"),
                upper_min=("upper", "min"), upper_median=("upper", "median"),
                upper_max=("upper", "max"), replications=("ce", "size")).reset_index()
    return out


def best_fixed(summary: Any) -> Any:
    """Per data set and eps: the fixed bound of least median ``ce`` (ties: the smallest)."""
    fixed = summary[summary.method == "fixed"].sort_values(["dataset", "eps", "ce_median",
                                                            "fixed"])
    return fixed.groupby(["dataset", "eps"], sort=True).head(1).set_index(["dataset", "eps"])


def ratios(summary: Any) -> Any:
    """Every method against the best fixed bound: the three ratios of :data:`TARGETS`, and
    whether each is met; and the ratios of the means of ``ce`` and ``w1`` to that bound's
    (``ce_mean_ratio``, ``w1_mean_ratio``: no target, steadier than the medians where the
    errors of 20 releases fall in two groups)."""
    best = best_fixed(summary)
    rows = summary[summary.method != "fixed"].copy()
    keys = list(zip(rows.dataset, rows.eps, strict=True))
    for col in TARGETS:
        rows[f"best_{col}"] = [best.loc[k, col] for k in keys]
        rows[f"{col}_ratio"] = rows[col] / rows[f"best_{col}"]
        rows[f"{col}_met"] = rows[f"{col}_ratio"] <= TARGETS[col]
    for col in ("ce_mean", "w1_mean"):
        rows[f"{col}_ratio"] = rows[col] / [best.loc[k, col] for k in keys]
    rows["best_fixed"] = [int(best.loc[k, "fixed"]) for k in keys]
    rows["met"] = rows[[f"{c}_met" for c in TARGETS]].all(axis=1)
    return rows.drop(columns=["fixed"]).reset_index(drop=True)


def share_report(table: Any) -> Any:
    """Per method: how many (data set, eps) meet all three targets, the worst and the
    median ratio of each over the data sets and budgets, and the worst ratios of the
    means."""
    pd = require("pandas")
    rows = []
    for method, part in table.groupby("method", sort=False):
        rows.append({"method": method, "cases": len(part), "all_met": int(part.met.sum()),
                     **{f"worst_{c}_ratio": float(part[f"{c}_ratio"].max()) for c in TARGETS},
                     **{f"median_{c}_ratio": float(part[f"{c}_ratio"].median())
                        for c in TARGETS},
                     **{f"worst_{c}_ratio": float(part[f"{c}_ratio"].max())
                        for c in ("ce_mean", "w1_mean")}})
    return pd.DataFrame(rows)


def targets_report(summary: Any, markdown_table: Any) -> str:
    """The targets per data set and eps, met or not, as Markdown: every method's ratios
    against the best fixed bound, and the summary per method."""
    table = ratios(summary)
    lines = ["# upper=\"auto\" against the best fixed bound in hindsight", "",
             f"Targets: median count error within {TARGETS['ce_median']}x of the best fixed "
             f"bound's, 90th percentile within {TARGETS['ce_p90']}x, median W1 within "
             f"{TARGETS['w1_median']}x (errors against the TRUE counts). Library default: "
             f"the loss rule with eps_upper = min({UPPER_SHARE:g} eps, {UPPER_MAX:g}).", "",
             "## Per method (all cases)", "",
             markdown_table(share_report(table), 3), ""]
    auto = table[table.method == "auto"]
    cols = ["dataset", "eps", "best_fixed", "best_ce_median", "ce_median", "ce_median_ratio",
            "best_ce_p90", "ce_p90", "ce_p90_ratio", "best_w1_median", "w1_median",
            "w1_median_ratio", "ce_mean_ratio", "w1_mean_ratio", "upper_min", "upper_max",
            "met"]
    lines += ["## upper=\"auto\" (the library's default)", "",
              markdown_table(auto[cols], 3), ""]
    for method in [m for m in table.method.unique() if m != "auto"]:
        part = table[table.method == method]
        lines += [f"## {method}", "", markdown_table(part[cols], 3), ""]
    return "\n".join(lines) + "\n"


def study(datasets: Any, eps: Any = EPS, *, reps: int = 20, methods: Any = ("auto",),
          seed: int = 0, quick: bool = False, postprocess: str = DEFAULT_POSTPROCESS) -> Any:
    """The study in this process (no cache): the cells of :func:`bounds_cells`, seeded
    as ``dpfix reproduce bounds`` seeds them, and their ratios (:func:`ratios`).

    Parameters
    ----------
    datasets : list of str or dict
        Names of :data:`BOUND_DATASETS`, or a mapping name -> counts.

    Examples
    --------
    >>> x = np.repeat(np.arange(30), 100)
    >>> t = study({"toy": x}, (3.0,), reps=2, quick=True)
    >>> t.method.tolist(), bool(t.ce_median_ratio.iloc[0] < 1.15)
    (['auto'], True)
    """
    from dpfix.experiments.cells import cell_seed

    data = dict(datasets) if isinstance(datasets, dict) else \
        {name: bound_counts(name) for name in datasets}
    cells = bounds_cells(quick, reps, seed, methods=methods, eps=eps, counts=data,
                         postprocess=postprocess)
    results = [run_release(np.asarray(data[c["dataset"]]), float(c["eps"]), c["method"],
                           cell_seed(c, SEED_FIELDS), c.get("upper"), c["postprocess"])
               for c in cells]
    return ratios(bounds_summary(cells, results))
