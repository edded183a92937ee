"""What 20 releases resolve: the landing study's ratios with their sampling error
(docs/bounds.md section 3).

The bounds study's targets compare medians over 20 releases: the median ``ce`` of a rule
within 1.15x of the best fixed bound's, its 90th percentile within 1.3x, the median ``w1``
within 1.1x (:data:`dpfix.experiments.bounds.TARGETS`). Each median carries the spread of
the releases it is taken over, so a ratio near its target is met or missed by chance. Two
measures of that spread, on the cells of :func:`dpfix.experiments.bounds.landing_cells`
(with ``best``: the best fixed bound released at every base seed):

- :func:`paired_intervals`: per case and rule, the three ratios over every release of
  every seed with their percentile bootstrap intervals, the releases resampled in pairs
  (a rule's release and the fixed bound's at the same seed share their random streams, so
  they are resampled together). A case whose interval lies above a target misses it beyond
  the sampling error;
- :func:`study_intervals`: the same on the bounds study's own cells (one base seed, the
  fixed bound of least median ``ce`` per case), and :func:`intervals_report`, their table in
  ``bounds_targets.md``;
- :func:`fixed_against_itself`: the best fixed bound's 20 releases at one base seed
  against its own 20 at another: the true ratios are exactly 1, so every case this
  "misses" is a miss of the sampling error alone.

The bootstrap's generator is numpy's, seeded: it resamples the study's outputs, it
releases nothing.
"""

from __future__ import annotations

from itertools import permutations
from typing import Any

import numpy as np

from dpfix.experiments.bounds import TARGETS, best_fixed
from dpfix.numbers.numeric import require

__all__ = ["paired_intervals", "fixed_against_itself", "study_intervals", "intervals_report"]

#: The statistics of :data:`TARGETS`: the quantile of ``ce`` or ``w1`` each ratio compares.
_STATISTICS = {"ce_median": ("ce", 0.5), "ce_p90": ("ce", 0.9), "w1_median": ("w1", 0.5)}


def _frame(cells: list[dict], results: list[dict]) -> Any:
    """One row per cell: case, method, base seed, replication, ``ce`` and ``w1``."""
    pd = require("pandas")
    return pd.DataFrame([{"dataset": c["dataset"], "eps": c["eps"], "method": c["method"],
                          "seed": c["seed"], "replication": c["replication"],
                          "ce": r["ce"], "w1": r["w1"]}
                         for c, r in zip(cells, results, strict=True)])


def _met(ratio: dict[str, Any]) -> Any:
    """Whether every ratio of ``ratio`` (keyed like :data:`TARGETS`) is within its target."""
    return np.logical_and.reduce([np.asarray(ratio[k]) <= v for k, v in TARGETS.items()])


def paired_intervals(cells: list[dict], results: list[dict], *, level: float = 0.95,
                     resamples: int = 2000, seed: int = 0) -> Any:
    """The three target ratios of every rule against the fixed bound over all releases of a
    case, with paired percentile bootstrap intervals.

    Parameters
    ----------
    cells, results : list of dict
        The cells of :func:`dpfix.experiments.bounds.landing_cells` with ``best`` (one
        ``fixed`` bound per case) and their results (``ce``, ``w1``).
    level : float, optional
        The intervals' nominal level, in (0, 1).
    resamples : int, optional
        Bootstrap resamples per case.
    seed : int, optional
        The seed of the resampling.

    Returns
    -------
    pandas.DataFrame
        Per data set, ``eps`` and method: ``releases``; for each statistic ``S`` of
        :data:`TARGETS` the ratio ``S_ratio`` and its interval ``S_low``, ``S_high``;
        ``met`` (every ratio within its target), ``miss_resolved`` (some interval entirely
        above its target: a miss beyond the sampling error) and ``met_resolved`` (every
        interval within its target).

    Raises
    ------
    ValueError
        ``level`` outside (0, 1), ``resamples < 1``, or a case whose releases do not pair
        one to one with the fixed bound's.

    Examples
    --------
    >>> cells = [{"dataset": "d", "eps": 1.0, "method": m, "seed": 0, "replication": r}
    ...          for m in ("fixed", "auto") for r in range(4)]
    >>> results = [{"ce": 1.0, "w1": 0.1}] * 4 + [{"ce": 1.2, "w1": 0.1}] * 4
    >>> t = paired_intervals(cells, results, resamples=50)
    >>> t[["ce_median_ratio", "ce_median_low", "ce_median_high"]].round(3).values.tolist()
    [[1.2, 1.2, 1.2]]
    >>> t[["met", "miss_resolved", "met_resolved"]].values.tolist()
    [[False, True, False]]
    """
    if not 0 < level < 1:
        raise ValueError(f"level: expected a number in (0, 1), got {level!r}")
    if resamples < 1:
        raise ValueError(f"resamples: expected at least 1, got {resamples!r}")
    pd = require("pandas")
    df = _frame(cells, results)
    rng = np.random.default_rng(seed)
    tails = ((1 - level) / 2, (1 + level) / 2)
    rows = []
    for (dataset, eps), case in df.groupby(["dataset", "eps"], sort=True):
        fixed = case[case.method == "fixed"].set_index(["seed", "replication"]).sort_index()
        for method, part in case[case.method != "fixed"].groupby("method", sort=False):
            part = part.set_index(["seed", "replication"]).sort_index()
            if not part.index.equals(fixed.index):
                raise ValueError(f"{dataset} at eps {eps}: the releases of {method!r} do not "
                                 "pair one to one with the fixed bound's")
            n = len(part)
            draw = rng.integers(0, n, size=(resamples, n))  # the same pairs for both
            row = {"dataset": dataset, "eps": eps, "method": method, "releases": n}
            for name, (col, q) in _STATISTICS.items():
                a, f = part[col].to_numpy(), fixed[col].to_numpy()
                row[f"{name}_ratio"] = float(np.quantile(a, q) / np.quantile(f, q))
                boot = np.quantile(a[draw], q, axis=1) / np.quantile(f[draw], q, axis=1)
                row[f"{name}_low"], row[f"{name}_high"] = map(float, np.quantile(boot, tails))
            rows.append(row)
    out = pd.DataFrame(rows)
    out["met"] = _met({k: out[f"{k}_ratio"] for k in TARGETS})
    out["miss_resolved"] = ~_met({k: out[f"{k}_low"] for k in TARGETS})
    out["met_resolved"] = _met({k: out[f"{k}_high"] for k in TARGETS})
    return out


def fixed_against_itself(cells: list[dict], results: list[dict]) -> Any:
    """The best fixed bound's releases at each base seed measured by the three targets
    against its own releases at each other base seed.

    The two sets of releases come from one mechanism at one bound, so every ratio is 1 in
    law: the cases a pair of seeds counts as missed are what the sampling error of the
    medians alone misses.

    Parameters
    ----------
    cells, results : list of dict
        As :func:`paired_intervals` (at least two base seeds).

    Returns
    -------
    pandas.DataFrame
        One row per ordered pair of base seeds (``seed``, measured against ``against``):
        ``cases``, ``missed`` (the cases failing some target), ``w1_missed`` (the
        median ``w1`` above 1.1x), the largest ``w1`` ratio ``w1_worst`` and the standard
        deviation of the log ``w1`` ratios over the cases, ``w1_log_sd``.

    Examples
    --------
    >>> cells = [{"dataset": "d", "eps": 1.0, "method": "fixed", "seed": s, "replication": r}
    ...          for s in (0, 1) for r in range(3)]
    >>> results = [{"ce": 1.0, "w1": 0.1}] * 3 + [{"ce": 1.0, "w1": 0.12}] * 3
    >>> fixed_against_itself(cells, results)[["seed", "against", "missed"]].values.tolist()
    [[0, 1, 0], [1, 0, 1]]
    """
    pd = require("pandas")
    df = _frame(cells, results)
    fixed = df[df.method == "fixed"]
    medians = {name: fixed.groupby(["dataset", "eps", "seed"])[col].quantile(q)
               .unstack("seed") for name, (col, q) in _STATISTICS.items()}
    rows = []
    for a, b in permutations(sorted(fixed.seed.unique()), 2):
        ratio = {k: (m[a] / m[b]).to_numpy() for k, m in medians.items()}
        w1 = ratio["w1_median"]
        rows.append({"seed": int(a), "against": int(b), "cases": int(w1.size),
                     "missed": int((~_met(ratio)).sum()),
                     "w1_missed": int((w1 > TARGETS["w1_median"]).sum()),
                     "w1_worst": float(w1.max()), "w1_log_sd": float(np.log(w1).std())})
    return pd.DataFrame(rows)


def study_intervals(cells: list[dict], results: list[dict], summary: Any,
                    methods: Any = ("auto",), **options: Any) -> Any:
    """:func:`paired_intervals` on the cells of the bounds study itself: each method of
    ``methods`` against the best fixed bound in hindsight of its case
    (:func:`dpfix.experiments.bounds.best_fixed` of ``summary``), on the study's releases.

    Parameters
    ----------
    cells, results : list of dict
        The cells of :func:`dpfix.experiments.bounds.bounds_cells` and their results.
    summary : pandas.DataFrame
        Their :func:`dpfix.experiments.bounds.bounds_summary`.
    methods : sequence of str, optional
        The methods to measure (every one in the cells).
    **options
        ``level``, ``resamples``, ``seed`` of :func:`paired_intervals`.

    Returns
    -------
    pandas.DataFrame
        As :func:`paired_intervals`, with the bound ``best_fixed`` of each case.
    """
    best = best_fixed(summary)["fixed"].astype(int).to_dict()
    keep = set(methods)
    pick = [i for i, c in enumerate(cells)
            if c["method"] in keep or (c["method"] == "fixed"
                                       and c.get("upper") == best.get((c["dataset"], c["eps"])))]
    out = paired_intervals([cells[i] for i in pick], [results[i] for i in pick], **options)
    out.insert(3, "best_fixed", [best[k] for k in zip(out.dataset, out.eps, strict=True)])
    return out


def intervals_report(intervals: Any, markdown_table: Any) -> str:
    """The Markdown section of :func:`study_intervals`: per method the cases met, met beyond
    the sampling error and missed beyond it, then every case's ratios and intervals."""
    lines = ["## What the releases resolve: paired 95 % bootstrap intervals", "",
             "Each ratio to the best fixed bound's with its percentile bootstrap interval, "
             "the releases resampled in pairs (a method's release and the fixed bound's share "
             "their streams). `miss_resolved`: some interval lies above its target; "
             "`met_resolved`: every interval lies within its target.", ""]
    counts = intervals.groupby("method", sort=False)[["met", "met_resolved",
                                                      "miss_resolved"]].sum()
    lines += [markdown_table(counts.reset_index(), 3), ""]
    cols = ["dataset", "eps", "method", "best_fixed", "releases"] + [
        f"{k}_{part}" for k in TARGETS for part in ("ratio", "low", "high")] + [
        "met", "met_resolved", "miss_resolved"]
    lines += [markdown_table(intervals[cols], 3), ""]
    return "\n".join(lines) + "\n"
