"""The frontier study: count error against W1 of the two-stage, one-stage and
hybrid frameworks, beside the limit, and a data-independent rule choosing among them.

One cell privatizes a whole data set with one *setting* (:data:`SETTINGS`: a
framework, an estimator of the distribution, a remap, a stage-1 fraction) at
one ``eps_t`` and measures that run:

- ``w1``, ``ks``, ``tv``: Wasserstein-1, Kolmogorov-Smirnov and total variation
  between the true distribution ``zeta`` and the distribution of the output;
- ``ce``: the realised count error, the mean of ``|output - input|`` over the
  rows (every setting has it);
- ``ce_expected``: ``<W_zeta, T>`` with ``W[i, j] = zeta_i |i - j|``, the
  expected count error of the mechanism the rows were drawn from, ``T = G R(z)``
  (from the sampler in ``O(n)``; none for the quantile remap, which is no row
  mechanism);
- ``w1_target``: W1 between ``zeta`` and the public target ``z``;
- ``eps_1``, ``eps_2``, ``seconds``.

**The limit** (method ``"limit"``, one per data set and ``eps_t``, replicated
like the settings): the northwest corner at the *true* ``zeta`` with the whole
``eps_t``, the optimum over F (docs/optimum_of_F.md, Theorem A). Its expected
count error is the line every figure draws; its rows are drawn too (a
non-private oracle), for its realised ``ce`` and ``w1``.

The seed depends on (data set, eps_t, replication) only: within a replication
all settings and the limit share their random stream, and the comparisons
with the two-stage baseline are **paired**: :func:`frontier_summary` gives, per
setting, the mean difference to ``"two-stage"`` over the replications and its
standard error (``d_ce``, ``d_ce_se``, ``d_w1``, ``d_w1_se``).

**Dominance** (:func:`dominance`): a setting is at least as good as the
two-stage baseline on a metric when its mean paired difference is at most one
standard error of that difference (``d <= se``); it dominates at ``eps_t`` when
that holds for both ``ce`` and ``w1`` on every data set. **The rule**
(:func:`choose_rule`): at every ``eps_t`` the acceptable settings are the
dominating ones (else those with the fewest failures); the rule is the
step function of ``eps_t`` with the fewest steps whose setting is acceptable
at every grid point it covers (greedy: the setting acceptable farthest to the
right), ties broken by the mean score (``(ce / ce_two-stage + w1 / w1_two-stage)
/ 2`` over data sets); its thresholds are the geometric midpoints of the grid
points where the setting changes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpfix.experiments.accuracy import grid_eps
from dpfix.experiments.cells import register, summarise
from dpfix.experiments.config import Config
from dpfix.experiments.plots import MIN_CI_REPLICATIONS, figure, legend_below, note, save
from dpfix.experiments.runs import default_upper, load_counts, true_distribution
from dpfix.numbers.deprecation import renamed_keywords
from dpfix.numbers.numeric import require
from dpfix.release.options import RULE_OF_THUMB, rule_of_thumb_split
from dpfix.release.pipeline import privatize_counts
from dpfix.release.privatizers.postprocess import DEFAULT_POSTPROCESS
from dpfix.theory.metrics import kolmogorov_smirnov, total_variation, wasserstein1

__all__ = ["Setting", "SETTINGS", "BASELINE", "LIMIT", "HYBRID_F", "METRICS", "frontier_cells",
           "frontier_cell", "limit_sampler", "limit_count_error", "frontier_summary",
           "dominance", "choose_rule", "apply_rule", "rule_statement", "limit_check",
           "draw_pareto", "draw_ratio", "rule_report", "LIMIT_TOLERANCE", "LIMIT_EPS"]


@dataclass(frozen=True)
class Setting:
    """One framework setting of the study: what :func:`privatize_counts` gets.

    Attributes
    ----------
    framework : ``"two-stage"``, ``"one-stage"`` or ``"hybrid"``.
    estimator : the deconvolution of ``y``'s histogram (None for two-stage).
    remap : ``"northwest"`` or ``"quantile"`` (None for two-stage).
    split : the stage-1 fraction (a float or ``"rule-of-thumb"``; None for one-stage).
    """

    framework: str
    estimator: str | None = None
    remap: str | None = None
    split: float | str | None = None

    @renamed_keywords(eps_t="eps")
    def fraction(self, eps: float) -> float:
        """The stage-1 fraction ``f = eps_1 / eps`` at ``eps``.

        Examples
        --------
        >>> Setting("one-stage", "em", "northwest").fraction(1.0)
        0.0
        >>> round(SETTINGS["hybrid/rot/em/northwest"].fraction(1.0), 4)
        0.1363
        """
        if self.split is None:
            return 0.0
        if self.split == "rule-of-thumb":
            return rule_of_thumb_split(eps)
        return float(self.split)

    def options(self) -> dict[str, Any]:
        """The keywords of :func:`dpfix.release.pipeline.privatize_counts` (besides the data
        and seed).

        The two-stage baseline gets none but the constructor: it is today's
        pipeline exactly (northwest corner, rule-of-thumb split).
        """
        kw: dict[str, Any] = {"constructor": "northwest"}
        if self.framework != "two-stage":
            kw.update(framework=self.framework, estimator=self.estimator, remap=self.remap)
            if self.split is not None:
                kw["split"] = self.split
        return kw


#: The stage-1 fractions of the hybrid settings (besides the paper's rule of thumb).
HYBRID_F = (0.02, 0.05, 0.1, 0.2, 0.35)

#: The baseline: today's pipeline (northwest corner, the paper's rule-of-thumb split).
BASELINE = "two-stage"

#: The method name of the limit cells (northwest corner at the true zeta, whole eps_t).
LIMIT = "limit"

#: setting name (a cell key's ``method``) -> Setting
SETTINGS: dict[str, Setting] = {
    BASELINE: Setting("two-stage", split="rule-of-thumb"),
    "one-stage/em/northwest": Setting("one-stage", "em", "northwest"),
    "one-stage/em/quantile": Setting("one-stage", "em", "quantile"),
    "one-stage/em-smooth/northwest": Setting("one-stage", "em-smooth", "northwest"),
    "one-stage/least-squares/northwest": Setting("one-stage", "least-squares", "northwest"),
    **{f"hybrid/f={f:g}/em/northwest": Setting("hybrid", "em", "northwest", f)
       for f in HYBRID_F},
    "hybrid/rot/em/northwest": Setting("hybrid", "em", "northwest", "rule-of-thumb"),
}

#: The metrics of a cell (means, CIs and standard errors in the summary).
METRICS = ("w1", "ks", "tv", "ce", "ce_expected", "w1_target", "eps_1", "eps_2", "seconds")

#: The study's target: at eps_t >= LIMIT_EPS the count error is within
#: LIMIT_TOLERANCE (relative) of the limit.
LIMIT_TOLERANCE = 0.05
LIMIT_EPS = 1.0


def frontier_cells(cfg: Config) -> list[dict]:
    """The cells of the study: every data set, eps_t, setting (and the limit), replication.

    The baseline and the limit are always included (every comparison needs them).

    Examples
    --------
    >>> from dpfix.experiments.config import make_config
    >>> cells = frontier_cells(make_config(quick=True))
    >>> len(cells), sorted({c["method"] for c in cells})[:2]
    (72, ['hybrid/f=0.1/em/northwest', 'hybrid/rot/em/northwest'])
    """
    methods = [BASELINE] + [s for s in cfg.frontier_settings if s != BASELINE] + [LIMIT]
    unknown = [m for m in methods if m != LIMIT and m not in SETTINGS]
    if unknown:
        raise ValueError(f"frontier_settings: unknown {unknown}; choose from "
                         f"{', '.join(SETTINGS)}")
    # stage 1's post-processing (the library's default) is in the key: a cache never mixes
    # releases under two of them
    return [{"experiment": "frontier", "dataset": d, "method": m, "eps": grid_eps(i),
             "replication": rep, "seed": cfg.seed, "postprocess": DEFAULT_POSTPROCESS}
            for d in cfg.frontier_datasets for i in cfg.frontier_eps_index for m in methods
            for rep in range(cfg.frontier_replications)]


@renamed_keywords(eps_t="eps")
def limit_sampler(zeta: Any, eps: float) -> Any:
    """The limit's ``G R`` sampler: the northwest corner at ``zeta`` with the whole ``eps``.

    The noise's ``lam`` is :func:`dpfix.sampling.rational_lam` of ``eps``, the
    one the one-stage framework draws ``y`` with.
    """
    from dpfix.constructors.remap import structured_sampler
    from dpfix.sampling import rational_lam

    zv = np.asarray(zeta, dtype=float)
    return structured_sampler("northwest", zv, lam=rational_lam(eps), n=zv.shape[0])


@renamed_keywords(eps_t="eps")
def limit_count_error(zeta: Any, eps: float) -> float:
    """The limit: ``<W_zeta, T>`` of the northwest corner ``T`` at ``zeta`` and ``eps``.

    The least expected count error of any mechanism with fixed point ``zeta``
    at ``eps`` (docs/optimum_of_F.md, Theorem A), in ``O(n)``.

    Examples
    --------
    >>> round(limit_count_error([0.5, 0.5], 1.0), 6)  # 1 / (1 + e): move iff the noise does
    0.268941
    """
    return float(limit_sampler(zeta, eps).count_error(np.asarray(zeta, dtype=float)))


def _measures(zeta: np.ndarray, d: np.ndarray, out: np.ndarray) -> dict[str, float]:
    zhat = np.bincount(out, minlength=zeta.shape[0]) / out.size
    return {"w1": float(wasserstein1(zeta, zhat)), "ks": float(kolmogorov_smirnov(zeta, zhat)),
            "tv": float(total_variation(zeta, zhat)),
            "ce": float(np.abs(out - d).mean())}


@register("frontier", seed_fields=("experiment", "dataset", "eps", "replication", "seed"))
def frontier_cell(key: dict, seed: int) -> dict:
    """Privatize the data set once with the cell's setting (or draw the limit); its errors."""
    from dpfix.sampling import random_source

    counts = load_counts(key["dataset"])
    upper = default_upper(key["dataset"])
    zeta = true_distribution(counts, upper)
    d = np.minimum(counts, upper)
    eps = key["eps"]
    start = time.perf_counter()
    if key["method"] == LIMIT:  # a non-private oracle: the optimum over F at the true zeta
        sampler = limit_sampler(zeta, eps)
        out = sampler.sample(d, random_source(seed))
        return {**_measures(zeta, d, out), "ce_expected": sampler.count_error(zeta),
                "w1_target": 0.0, "eps_1": 0.0, "eps_2": float(eps),
                "seconds": time.perf_counter() - start}
    setting = SETTINGS[key["method"]]
    r = privatize_counts(counts, eps, upper=upper, seed=seed, **setting.options())
    seconds = time.perf_counter() - start
    stage2 = getattr(r, "stage2", None)
    expected = None
    if stage2 is not None and hasattr(stage2, "count_error") and \
            getattr(r, "remap", None) != "quantile":
        expected = float(stage2.count_error(zeta))
    return {**_measures(zeta, d, r.counts), "ce_expected": expected,
            "w1_target": None if r.z is None else float(wasserstein1(zeta, r.z)),
            "eps_1": float(r.eps_1), "eps_2": float(r.eps_2), "seconds": seconds}


# ------------------------------------------------------------------------------- summary
def _long(cells: list[dict], results: list[dict]) -> Any:
    pd = require("pandas")

    rows = [{**k, **{m: r.get(m) for m in METRICS}} for k, r in zip(cells, results, strict=True)]
    df = pd.DataFrame(rows)
    for m in METRICS:
        df[m] = pd.to_numeric(df[m], errors="coerce")
    return df


def _se(x: Any) -> float:
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    return float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else math.nan


def frontier_summary(cells: list[dict], results: list[dict]) -> Any:
    """One row per (data set, method, eps_t): means, 95% CI half-widths, standard errors,
    the paired differences to the baseline and the limit.

    Columns: the key fields (but ``replication``); ``framework``, ``estimator``,
    ``remap``, ``f`` (the stage-1 fraction); for every metric ``m`` of
    :data:`METRICS` ``m``, ``m_ci`` (:func:`dpfix.experiments.cells.mean_ci`) and
    ``m_se`` (standard error of the mean); ``replications``; for ``m`` in ce,
    w1, ks, tv the paired difference to ``"two-stage"`` ``d_m`` (mean over the
    replications of ``m - m_two-stage``) and ``d_m_se``; ``ce_base`` and ``w1_base``
    (the baseline's means); ``ce_limit`` (the limit's expected count error),
    ``ce_limit_realised`` and ``w1_limit`` (its draws); ``ce_ratio = ce / ce_limit``
    and ``ce_ratio_se``, ``ce_expected_ratio``; ``w1_rel = w1 / w1_base``.
    The limit's own rows are kept (``method == "limit"``).
    """
    pd = require("pandas")

    df = summarise(cells, results, METRICS)
    long = _long(cells, results)
    groups = ["dataset", "method", "eps"]
    se = long.groupby(groups)[list(METRICS)].agg(_se).add_suffix("_se").reset_index()
    df = df.merge(se, on=groups, how="left")
    pair = ["dataset", "eps", "replication"]
    base = long.loc[long.method == BASELINE, pair + ["ce", "w1", "ks", "tv"]]
    paired = long.merge(base, on=pair, how="left", suffixes=("", "_b"))
    for m in ("ce", "w1", "ks", "tv"):
        paired[f"d_{m}"] = paired[m] - paired[f"{m}_b"]
    diffs = paired.groupby(groups).agg(
        **{f"d_{m}": (f"d_{m}", "mean") for m in ("ce", "w1", "ks", "tv")},
        **{f"d_{m}_se": (f"d_{m}", _se) for m in ("ce", "w1", "ks", "tv")}).reset_index()
    df = df.merge(diffs, on=groups, how="left")
    b = df[df.method == BASELINE].set_index(["dataset", "eps"])[["ce", "w1"]]
    df = df.join(b.rename(columns={"ce": "ce_base", "w1": "w1_base"}), on=["dataset", "eps"])
    lim = df[df.method == LIMIT].set_index(["dataset", "eps"])[["ce_expected", "ce", "w1"]]
    df = df.join(lim.rename(columns={"ce_expected": "ce_limit", "ce": "ce_limit_realised",
                                     "w1": "w1_limit"}), on=["dataset", "eps"])
    df["ce_ratio"] = df.ce / df.ce_limit
    df["ce_ratio_se"] = df.ce_se / df.ce_limit
    df["ce_expected_ratio"] = df.ce_expected / df.ce_limit
    df["w1_rel"] = df.w1 / df.w1_base
    spec = {m: SETTINGS.get(m) for m in df.method}
    df.insert(3, "framework", [spec[m].framework if spec[m] else "limit (oracle)"
                               for m in df.method])
    df.insert(4, "estimator", [spec[m].estimator if spec[m] else None for m in df.method])
    df.insert(5, "remap", [spec[m].remap if spec[m] else "northwest (true zeta)"
                           for m in df.method])
    df.insert(6, "f", [spec[m].fraction(e) if spec[m] else 0.0
                       for m, e in zip(df.method, df.eps, strict=True)])
    return pd.DataFrame(df).sort_values(["dataset", "eps", "method"]).reset_index(drop=True)


# ----------------------------------------------------------------------------- dominance
#: Relative slack of the dominance test for the rounding of means (not a statistical margin).
_ROUNDING = 1e-9

def _failure(row: Any, metric: str) -> str:
    return (f"{row.dataset}: {metric} {getattr(row, metric):.4g} vs "
            f"{getattr(row, metric + '_base'):.4g} (+{getattr(row, 'd_' + metric):.3g}, "
            f"se {getattr(row, 'd_' + metric + '_se'):.2g})")


def dominance(summary: Any) -> Any:
    """Per (eps_t, setting): is it at least as good as the baseline on both ce and w1,
    within one standard error of the paired difference, on every data set?

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`frontier_summary` (at least: dataset, method, eps, ce, w1,
        ce_base, w1_base, d_ce, d_ce_se, d_w1, d_w1_se).

    Returns
    -------
    pandas.DataFrame
        One row per (eps, method) but the baseline and the limit: ``datasets``,
        ``fails`` (how many (data set, metric) pairs fail ``d <= se``),
        ``dominates`` (``fails == 0``), ``fails_2se`` (how many fail even
        ``d <= 2 se``: with 2 metrics on 8 data sets, a setting exactly as good as
        the baseline passes all 16 one-SE tests only with probability about
        ``0.84^16 = 6%``, so the failures within 2 SE are mostly noise),
        ``score`` (mean over data sets of ``(ce / ce_base + w1 / w1_base) / 2``:
        1 is the baseline, lower is better), ``ce_rel_worst`` and
        ``w1_rel_worst`` (the largest ratios to the baseline over data sets),
        ``failures`` (which data set, which metric, by how much; empty when it
        dominates).

    Examples
    --------
    >>> import pandas as pd
    >>> s = pd.DataFrame({"dataset": ["a", "b"], "method": "x", "eps": 1.0,
    ...                   "ce": [1.0, 2.0], "w1": [0.1, 0.3], "ce_base": [1.1, 2.0],
    ...                   "w1_base": [0.1, 0.2], "d_ce": [-0.1, 0.0], "d_ce_se": 0.01,
    ...                   "d_w1": [0.0, 0.1], "d_w1_se": 0.01})
    >>> dominance(s)[["method", "fails", "dominates"]].values.tolist()
    [['x', 1, False]]
    """
    pd = require("pandas")

    s = summary[~summary.method.isin([BASELINE, LIMIT])]
    rows = []
    for (eps, method), g in s.groupby(["eps", "method"], sort=True):
        fails, fails_2se = [], 0
        for row in g.itertuples(index=False):
            for m in ("ce", "w1"):
                d, se = getattr(row, f"d_{m}"), getattr(row, f"d_{m}_se")
                se = se if np.isfinite(se) else 0.0  # one replication: no spread, d <= 0
                # equal results differ by float rounding of the means (1e-17), not by a loss
                slack = _ROUNDING * abs(getattr(row, f"{m}_base"))
                if not d <= se + slack:  # NaN fails too
                    fails.append(_failure(row, m))
                    fails_2se += not d <= 2 * se + slack
        ce_rel, w1_rel = g.ce / g.ce_base, g.w1 / g.w1_base
        rows.append({"eps": eps, "method": method, "datasets": int(g.dataset.nunique()),
                     "fails": len(fails), "dominates": not fails, "fails_2se": fails_2se,
                     "score": float(((ce_rel + w1_rel) / 2).mean()),
                     "ce_rel_worst": float(ce_rel.max()), "w1_rel_worst": float(w1_rel.max()),
                     "failures": "; ".join(fails)})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------- rule
def choose_rule(dom: Any, candidates: Any = None) -> tuple[Any, dict]:
    """The data-independent rule: a step function of eps_t with the fewest steps.

    At every ``eps_t`` of ``dom`` the acceptable settings are the candidates
    with the fewest failures (the dominating ones, when any dominates). From
    the smallest ``eps_t`` up, the next step's setting is the acceptable one
    that stays acceptable over the most consecutive grid points (this greedy
    choice gives the fewest steps), ties broken by the lower mean score over
    those points. A threshold between two steps is the geometric mean of the
    two grid points around it.

    Parameters
    ----------
    dom : pandas.DataFrame
        :func:`dominance`.
    candidates : iterable of str, optional
        The settings the rule may choose (default: every one in ``dom``; the
        baseline is never in ``dom``).

    Returns
    -------
    (pandas.DataFrame, dict)
        Per ``eps_t``: the rule's ``setting``, whether it ``dominates``, its
        ``fails``, ``failures`` and ``score``, and the per-point ``best`` (the
        acceptable setting of least score); and the rule: ``steps`` (list of
        ``{"from", "to", "setting", "f"}``, ``from``/``to`` thresholds, 0 and inf at
        the ends), ``thresholds`` and ``statement`` (:func:`rule_statement`).

    Examples
    --------
    >>> import pandas as pd
    >>> dom = pd.DataFrame({"eps": [0.1, 0.1, 1.0, 1.0, 3.0, 3.0],
    ...                     "method": ["hybrid/f=0.2/em/northwest", "one-stage/em/northwest"] * 3,
    ...                     "fails": [0, 2, 0, 0, 1, 0], "score": [0.9, 1.1, 0.8, 0.7, 1, 0.6],
    ...                     "failures": ""})
    >>> _, rule = choose_rule(dom)
    >>> [(round(s["from"], 3), s["setting"]) for s in rule["steps"]]
    [(0.0, 'hybrid/f=0.2/em/northwest'), (1.732, 'one-stage/em/northwest')]
    """
    pd = require("pandas")

    if candidates is not None:
        dom = dom[dom.method.isin(list(candidates))]
    if not len(dom):
        raise ValueError("dominance: no candidate settings to choose from")
    grid = sorted(dom.eps.unique())
    table = {(r.eps, r.method): r for r in dom.itertuples(index=False)}
    acceptable = []
    for eps in grid:
        g = dom[dom.eps == eps]
        acceptable.append(set(g.method[g.fails == g.fails.min()]))
    chosen: list[str] = []
    i = 0
    while i < len(grid):
        best = None
        for m in sorted(acceptable[i]):
            j = i
            while j < len(grid) and m in acceptable[j]:
                j += 1
            score = float(np.mean([table[grid[k], m].score for k in range(i, j)]))
            if best is None or (j, -score) > (best[1], -best[2]):
                best = (m, j, score)
        chosen += [best[0]] * (best[1] - i)
        i = best[1]
    rows = []
    for eps, m, ok in zip(grid, chosen, acceptable, strict=True):
        r = table[eps, m]
        least = min(ok, key=lambda name: table[eps, name].score)
        rows.append({"eps": eps, "setting": m, "dominates": bool(r.fails == 0),
                     "fails": int(r.fails), "fails_2se": int(getattr(r, "fails_2se", r.fails)),
                     "score": float(r.score), "failures": r.failures,
                     "best": least, "best_score": float(table[eps, least].score),
                     "acceptable": ", ".join(sorted(ok))})
    steps, thresholds = [], []
    for k, (eps, m) in enumerate(zip(grid, chosen, strict=True)):
        if k == 0 or m != chosen[k - 1]:
            lo = 0.0 if k == 0 else math.sqrt(grid[k - 1] * eps)
            if k:
                thresholds.append(lo)
                steps[-1]["to"] = lo
            steps.append({"from": lo, "to": math.inf, "setting": m, "f": _f_text(m)})
    rule = {"steps": steps, "thresholds": thresholds}
    rule["statement"] = rule_statement(rule)
    return pd.DataFrame(rows), rule


def _f_text(method: str) -> str:
    s = SETTINGS.get(method)
    if s is None or s.framework == "two-stage":
        return "two-stage (rule of thumb)"
    if s.split is None:
        return "0"
    if s.split == "rule-of-thumb":
        a, b, k = RULE_OF_THUMB["A"], RULE_OF_THUMB["B"], RULE_OF_THUMB["K"]
        return f"{b} + ({a} - {b}) exp(-{k} eps_t)"
    return f"{float(s.split):g}"


@renamed_keywords(eps_t="eps")
def apply_rule(rule: dict, eps: float) -> str:
    """The setting the rule chooses at ``eps``.

    Examples
    --------
    >>> rule = {"steps": [{"from": 0.0, "to": 1.5, "setting": "a"},
    ...                   {"from": 1.5, "to": math.inf, "setting": "b"}]}
    >>> apply_rule(rule, 1.0), apply_rule(rule, 1.5), apply_rule(rule, 9.0)
    ('a', 'b', 'b')
    """
    for step in rule["steps"]:
        if step["from"] <= eps < step["to"]:
            return step["setting"]
    raise ValueError(f"eps: {eps!r} is outside the rule's steps")


def rule_statement(rule: dict) -> str:
    """The rule in words: the setting (framework, estimator, remap, stage-1 fraction f)
    on each interval of eps_t.

    Examples
    --------
    >>> print(rule_statement({"steps": [
    ...     {"from": 0.0, "to": 0.5, "setting": "hybrid/f=0.2/em/northwest", "f": "0.2"},
    ...     {"from": 0.5, "to": math.inf, "setting": "one-stage/em/northwest", "f": "0"}]}))
    eps_t < 0.5: hybrid/f=0.2/em/northwest (f = 0.2); eps_t >= 0.5: one-stage/em/northwest (f = 0)
    """
    parts = []
    for step in rule["steps"]:
        lo, hi = step["from"], step["to"]
        if lo == 0 and math.isinf(hi):
            where = "every eps_t"
        elif lo == 0:
            where = f"eps_t < {hi:.3g}"
        elif math.isinf(hi):
            where = f"eps_t >= {lo:.3g}"
        else:
            where = f"{lo:.3g} <= eps_t < {hi:.3g}"
        parts.append(f"{where}: {step['setting']} (f = {step.get('f', _f_text(step['setting']))})")
    return "; ".join(parts)


def limit_check(summary: Any, choice: Any, eps_min: float = LIMIT_EPS,
                tol: float = LIMIT_TOLERANCE) -> Any:
    """The study's target at ``eps_t >= eps_min``: is the count error within ``tol`` of the limit?

    Per data set and ``eps_t >= eps_min``: the rule's setting (from ``choice``,
    :func:`choose_rule`'s table), its ``ce_ratio = ce / ce_limit`` (realised
    count error over the limit's expected one) and standard error, ``ok``
    (``ratio <= 1 + tol``), ``ok_within_se`` (``ratio - se <= 1 + tol``); the
    baseline's ratio and the least ratio of any setting (and which).
    """
    pd = require("pandas")

    # the grid is rounded to 12 digits: 1.046 passes eps_min = 1 but 0.999999... would not
    pick = dict(zip(choice.eps, choice.setting, strict=True))
    s = summary[(summary.eps >= eps_min * (1 - 1e-9)) & (summary.method != LIMIT)]
    rows = []
    for (dataset, eps), g in s.groupby(["dataset", "eps"], sort=True):
        g = g.set_index("method")
        m = pick.get(eps)
        best = g.ce_ratio.idxmin()
        r = g.loc[m] if m in g.index else None
        ratio = float(r.ce_ratio) if r is not None else math.nan
        se = float(r.ce_ratio_se) if r is not None else math.nan
        rows.append({"dataset": dataset, "eps": eps, "setting": m, "ce_ratio": ratio,
                     "ce_ratio_se": se, "ok": bool(ratio <= 1 + tol),
                     "ok_within_se": bool(ratio - (se if np.isfinite(se) else 0) <= 1 + tol),
                     "ce_limit": float(g.ce_limit.iloc[0]),
                     "two_stage_ratio": float(g.ce_ratio.get(BASELINE, math.nan)),
                     "best_setting": best, "best_ratio": float(g.ce_ratio[best])})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------- figures
_COLORS = {"two-stage": "black", "one-stage/em/northwest": "tab:blue",
           "one-stage/em/quantile": "tab:cyan", "one-stage/em-smooth/northwest": "tab:purple",
           "one-stage/least-squares/northwest": "tab:pink",
           "hybrid/rot/em/northwest": "tab:green"}
_HYBRID_COLORS = ("#fdd49e", "#fdbb84", "#fc8d59", "#e34a33", "#b30000")


def _style(method: str) -> dict[str, Any]:
    s = SETTINGS[method]
    if method in _COLORS:
        color = _COLORS[method]
    else:
        k = HYBRID_F.index(float(s.split)) if s.split in HYBRID_F else 0
        color = _HYBRID_COLORS[k % len(_HYBRID_COLORS)]
    marker = {"two-stage": "s", "one-stage": "o", "hybrid": "D"}[s.framework]
    if s.split == "rule-of-thumb" and s.framework == "hybrid":
        marker = "P"  # the hybrid at the paper's split: the two-stage budget, one likelihood
    ls = {"two-stage": "-", "one-stage": "--", "hybrid": ":"}[s.framework]
    return {"color": color, "marker": marker, "ls": ls}


def _log_ticks(ax: Any, axis: str = "both") -> None:
    """Log axes labelled at 1, 2, 5 times powers of ten in plain numbers (matplotlib's
    default labels every minor tick of a narrow range, overprinting them)."""
    ticker = require("matplotlib.ticker")

    for name in ("x", "y") if axis == "both" else (axis,):
        a = getattr(ax, f"{name}axis")
        lo, hi = getattr(ax, f"get_{name}lim")()
        narrow = lo > 0 and hi / lo < 2.5  # a narrow range: label 1..9 times 10^k
        subs = tuple(range(1, 10)) if narrow else (1.0, 2.0, 5.0)
        a.set_major_locator(ticker.LogLocator(base=10, subs=subs))
        a.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        a.set_minor_formatter(ticker.NullFormatter())


def _settings_in(summary: Any) -> list[str]:
    present = set(summary.method)
    return [m for m in SETTINGS if m in present]


def draw_pareto(summary: Any, cfg: Config, path: Any) -> Any:
    """Count error against W1, one panel per data set (rows) and eps_t (columns): every
    setting with its standard errors, the limit as a star and a dotted line."""
    datasets = [d for d in cfg.frontier_datasets if d in set(summary.dataset)]
    eps_all = sorted(summary.eps.unique())
    cols = [grid_eps(i) for i in cfg.frontier_pareto_eps_index if grid_eps(i) in eps_all] \
        or eps_all[:4]
    fig, axes = figure(len(datasets), len(cols), width=3.6, height=2.7)
    reps = int(summary.replications.max()) if len(summary) else 0
    for r, dataset in enumerate(datasets):
        for c, eps in enumerate(cols):
            ax = axes[r, c]
            sub = summary[(summary.dataset == dataset) & np.isclose(summary.eps, eps)]
            for m in _settings_in(sub):
                row = sub[sub.method == m].iloc[0]
                st = _style(m)
                show = reps >= MIN_CI_REPLICATIONS
                ax.errorbar(row.w1, row.ce, xerr=row.w1_se if show else None,
                            yerr=row.ce_se if show else None, color=st["color"],
                            marker=st["marker"], ms=5, ls="none", lw=0.8, label=m)
            lim = sub[sub.method == LIMIT]
            if len(lim):
                row = lim.iloc[0]
                ax.axhline(row.ce_limit, color="gray", ls=":", lw=1)
                ax.plot(row.w1, row.ce_limit, "k*", ms=9, label="limit: northwest at true zeta")
            ax.set_xscale("log")
            ax.set_yscale("log")
            _log_ticks(ax)
            ax.set_title(f"{dataset}, eps_t = {eps:.3g}", fontsize=8.5)
            ax.tick_params(labelsize=7)
            if r == len(datasets) - 1:
                ax.set_xlabel("W1(zeta, output)", fontsize=8)
            if c == 0:
                ax.set_ylabel("count error", fontsize=8)
            ax.grid(True, which="both", alpha=0.3)
    bottom = legend_below(fig, axes[0, 0], ncol=4)
    note(fig, f"Means of {reps} replications" + (" with one standard error" if reps >=
                                                 MIN_CI_REPLICATIONS else "")
         + "; count error = mean |output - input| over rows (realised), the limit's is "
           "<W_zeta, T> of the northwest corner at the true zeta with the whole eps_t "
           "(dotted line). Lower left is better.")
    return save(fig, path, bottom=bottom)


def draw_ratio(summary: Any, cfg: Config, path: Any, metric: str = "ce_ratio") -> Any:
    """``ce / ce_limit`` (``metric="ce_ratio"``) or ``w1 / w1_two-stage`` (``"w1_rel"``)
    against eps_t, one panel per data set, every setting."""
    datasets = [d for d in cfg.frontier_datasets if d in set(summary.dataset)]
    cols = min(4, len(datasets))
    rows = -(-len(datasets) // cols)
    fig, axes = figure(rows, cols, width=3.8, height=3.4)
    ylabel = {"ce_ratio": "count error / limit", "w1_rel": "W1 / W1 of two-stage"}[metric]
    for k, dataset in enumerate(datasets):
        ax = axes[k // cols, k % cols]
        sub = summary[summary.dataset == dataset]
        for m in _settings_in(sub):
            g = sub[sub.method == m].sort_values("eps")
            st = _style(m)
            ax.plot(g.eps, g[metric], color=st["color"], marker=st["marker"], ls=st["ls"],
                    ms=3.5, lw=1.1, label=m)
        ax.axhline(1.0, color="gray", lw=0.8)
        if metric == "ce_ratio":
            ax.axhline(1 + LIMIT_TOLERANCE, color="gray", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_yscale("log")
        _log_ticks(ax)
        ax.set_title(dataset, fontsize=9)
        ax.set_xlabel("total budget eps_t", fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, which="both", alpha=0.3)
    for k in range(len(datasets), rows * cols):
        axes[k // cols, k % cols].set_visible(False)
    bottom = legend_below(fig, axes[0, 0], ncol=4)
    reps = int(summary.replications.max()) if len(summary) else 0
    note(fig, f"Means of {reps} replications. "
         + ("Realised count error over the limit's expected one (northwest corner at the true "
            f"zeta, whole eps_t); dashed: 1 + {LIMIT_TOLERANCE:g}." if metric == "ce_ratio"
            else "W1 between zeta and the output over that of today's two-stage pipeline "
                 "(northwest, rule-of-thumb split); below 1 is better."))
    return save(fig, path, bottom=bottom)


# -------------------------------------------------------------------------------- report
def rule_report(summary: Any, dom: Any, choice: Any, rule: dict, check: Any,
                markdown_table: Callable[..., str]) -> str:
    """``frontier_rule.md``: the rule, where it dominates and where not (why), the 5% target.

    Every claim of the findings is regenerated from the summary by this function.
    ``markdown_table(df, digits)`` formats a table (the targets module's: passed
    in, since that module imports this one).
    """
    pd = require("pandas")

    reps = int(summary.replications.max()) if len(summary) else 0
    lines = ["# Frontier study: the data-independent rule", "",
             f"{summary.dataset.nunique()} data sets, {summary.eps.nunique()} values of eps_t, "
             f"{reps} replications per cell. A setting is *at least as good* as `two-stage` on "
             "a metric when its mean paired difference is at most one standard error of that "
             "difference; it *dominates* at eps_t when that holds for count error and W1 on "
             "every data set.", "",
             "## The rule", "", rule_statement(rule), "",
             "Thresholds (geometric midpoints of the grid): "
             + (", ".join(f"{t:.4g}" for t in rule["thresholds"]) or "none") + ".", ""]
    table = choice.assign(eps=choice.eps.round(3))[
        ["eps", "setting", "dominates", "fails", "fails_2se", "score", "best", "best_score"]]
    lines += ["## Per eps_t", "", markdown_table(table), ""]
    where = choice[~choice.dominates]
    lines += ["## Where the rule's setting does not dominate", ""]
    if len(where):
        for r in where.itertuples(index=False):
            lines.append(f"- eps_t = {r.eps:.3g}, {r.setting}: {r.failures}")
    else:
        lines.append("Nowhere: at every eps_t of the grid the rule's setting is at least as "
                     "good as two-stage on both metrics on every data set.")
    lines.append("")
    dominating = dom[dom.dominates].groupby("eps").method.apply(lambda m: ", ".join(sorted(m)))
    lines += ["## Every dominating setting per eps_t", ""]
    for eps in sorted(dom.eps.unique()):
        lines.append(f"- {eps:.3g}: {dominating.get(eps, 'none')}")
    lines.append("")
    if len(check):
        ok = int(check.ok.sum())
        worst = check.loc[check.ce_ratio.idxmax()]
        lines += [f"## Count error within {LIMIT_TOLERANCE:.0%} of the limit at eps_t >= "
                  f"{LIMIT_EPS:g}", "",
                  f"The rule's setting: {ok} of {len(check)} (data set, eps_t) points within "
                  f"(ratio <= {1 + LIMIT_TOLERANCE:g}), {int(check.ok_within_se.sum())} within "
                  f"one standard error; worst {worst.ce_ratio:.3f} ({worst.dataset}, eps_t = "
                  f"{worst.eps:.3g}, {worst.setting}). Two-stage: worst "
                  f"{check.two_stage_ratio.max():.3f}.", "",
                  markdown_table(check.assign(eps=check.eps.round(3))[
                      ["dataset", "eps", "setting", "ce_ratio", "ce_ratio_se", "ok",
                       "two_stage_ratio", "best_setting", "best_ratio"]]), ""]
    lines += _target_conflict(summary, dom, markdown_table)
    pick = dict(zip(choice.eps, choice.setting, strict=True))
    rows = []
    for r in summary[summary.method.isin([BASELINE])].itertuples(index=False):
        m = pick.get(r.eps)
        c = summary[(summary.dataset == r.dataset) & (summary.eps == r.eps)
                    & (summary.method == m)]
        if not len(c):
            continue
        c = c.iloc[0]
        rows.append({"dataset": r.dataset, "eps": round(r.eps, 3), "setting": m,
                     "ce": c.ce, "ce_two_stage": r.ce, "ce_limit": r.ce_limit,
                     "w1": c.w1, "w1_two_stage": r.w1, "w1_limit": r.w1_limit})
    if rows:
        lines += ["## The rule's setting against two-stage and the limit", "",
                  markdown_table(pd.DataFrame(rows), 4), ""]
    return "\n".join(lines)


def _target_conflict(summary: Any, dom: Any, markdown_table: Callable[..., str]) -> list[str]:
    """Per eps_t >= LIMIT_EPS: the settings within LIMIT_TOLERANCE of the limit on every data
    set, and what they cost in W1 against two-stage (the two targets can conflict)."""
    pd = require("pandas")

    s = summary[(summary.eps >= LIMIT_EPS * (1 - 1e-9))
                & ~summary.method.isin([LIMIT, BASELINE])]
    worst = s.groupby(["eps", "method"]).ce_ratio.max().rename("ce_ratio_worst").reset_index()
    worst = worst.merge(dom[["eps", "method", "fails", "w1_rel_worst", "failures"]],
                        on=["eps", "method"], how="left")
    meet = worst[worst.ce_ratio_worst <= 1 + LIMIT_TOLERANCE]
    rows = []
    for eps in sorted(s.eps.unique()):
        m = meet[meet.eps == eps]
        if not len(m):
            rows.append({"eps": round(eps, 3), "settings within the target": "none",
                         "least W1 cost (worst W1 / W1 two-stage)": math.nan,
                         "dominates too": False})
            continue
        best = m.loc[m.w1_rel_worst.idxmin()]
        rows.append({"eps": round(eps, 3),
                     "settings within the target": ", ".join(sorted(m.method)),
                     "least W1 cost (worst W1 / W1 two-stage)": float(best.w1_rel_worst),
                     "dominates too": bool((m.fails == 0).any())})
    return [f"## The {LIMIT_TOLERANCE:.0%} target against W1 at eps_t >= {LIMIT_EPS:g}", "",
            "Settings whose count error is within the target on every data set, and the least "
            "worst-case W1 ratio to two-stage among them:", "",
            markdown_table(pd.DataFrame(rows), 3), ""]
