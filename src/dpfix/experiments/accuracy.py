"""Figures 5 and 6 (paper Section 6.1-6.2): accuracy of distribution and of counts vs eps_t.

One cell privatizes a whole table with one method at one ``eps_t`` and
measures both errors of that run:

- the distribution error: Wasserstein-1 (also KS and TV) between the true
  distribution ``zeta`` and the distribution of the privatized counts (a real
  draw of every row);
- the count error ``<W, T>`` with ``W[i, j] = zeta_i |i - j|`` (expected
  absolute deviation, analytic, with the *true* ``zeta``; also the squared
  error), and the data holder's estimate with ``z`` in place of ``zeta``.

Two-stage methods split ``eps_t`` by the paper's rule of thumb and run under
two post-processings of stage 1: the least-squares CDF fit ``isotonic-cdf`` (which
the cyclic privatizers' default ``isotonic-cdf-offset`` equals wherever the fit lies
in ``[0, 1]``) and the paper's ``clip-renormalise``. The seed depends on (data set, eps_t,
replication) only, so within a replication all two-stage methods and both
post-processings share the same noise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpfix.experiments.cells import register, summarise
from dpfix.experiments.config import Config
from dpfix.experiments.plots import (
    MIN_CI_REPLICATIONS,
    STYLES,
    band,
    figure,
    legend_below,
    note,
    save,
)
from dpfix.experiments.runs import (
    METHODS,
    default_upper,
    eps_grid,
    load_counts,
    run_method,
    true_distribution,
)
from dpfix.numbers.numeric import require
from dpfix.theory.metrics import kolmogorov_smirnov, total_variation, wasserstein1

__all__ = ["accuracy_cells", "accuracy_cell", "draw_accuracy", "comparison", "PAPER",
           "METRICS", "grid_eps"]

METRICS = ("w1", "ks", "tv", "ce_abs", "ce_sq", "ce_abs_estimate", "w1_target", "eps_1",
           "eps_2", "seconds")

#: The numbers the paper reports in Section 6 (dataset, eps grid index, metric,
#: methods (the first is compared), value).
PAPER: list[tuple[str, int, str, tuple[str, ...], float, str]] = [
    ("binomial", 4, "w1", ("unfixed",), 0.64, "W1, two-stage unfixed optimum"),
    ("binomial", 4, "w1", ("lp-simplex", "heuristic-best"), 0.04, "W1, fixed-point methods"),
    ("crime", 4, "ce_abs", ("unfixed",), 1.27, "count error, two-stage unfixed optimum"),
    ("crime", 4, "ce_abs", ("lp-simplex",), 1.32, "count error, LP fixed point"),
    ("crime", 6, "ce_abs", ("truncated-geometric",), 0.55, "count error, truncated geometric"),
    ("crime", 6, "ce_abs", ("lp-simplex",), 0.64, "count error, LP fixed point"),
    ("crime", 6, "ce_abs", ("heuristic-sandwich",), 0.66, "count error, heuristic (sandwich)"),
    ("crime", 0, "w1", ("unfixed",), 1.44, "W1, two-stage unfixed optimum"),
    ("crime", 0, "w1", ("lp-simplex", "heuristic-best"), 2.17, "W1, fixed-point methods"),
]

#: The relative decreases of W1 the paper reports at eps_t = 0.48 when switching
#: from the two-stage unfixed optimum to a fixed-point method (dataset, index, value).
PAPER_DECREASE = [("binomial", 4, 0.94), ("crime", 4, 0.74)]


def grid_eps(index: int) -> float:
    """Grid point ``index`` of eps_t, rounded to 12 significant digits (a stable key)."""
    return float(f"{eps_grid()[index]:.12g}")


def accuracy_cells(cfg: Config) -> list[dict]:
    """The cells of Figures 5 and 6 for a configuration.

    Examples
    --------
    >>> from dpfix.experiments.config import make_config
    >>> cells = accuracy_cells(make_config(quick=True))
    >>> len(cells), cells[0]["method"], cells[0]["postprocess"], cells[0]["eps"]
    (180, 'heuristic-max', 'isotonic-cdf', 0.1)
    """
    cells = []
    for dataset in cfg.accuracy_datasets:
        for i in cfg.eps_index:
            for method in cfg.accuracy_methods:
                two = METHODS[method].stage == "two-stage"
                for pp in (cfg.postprocess if two else ("none",)):
                    for rep in range(cfg.replications):
                        cells.append({"experiment": "accuracy", "dataset": dataset,
                                      "method": method, "eps": grid_eps(i), "replication": rep,
                                      "seed": cfg.seed, "postprocess": pp,
                                      "split": "rule-of-thumb" if two else "none"})
    return cells


@register("accuracy", seed_fields=("experiment", "dataset", "eps", "replication", "seed"))
def accuracy_cell(key: dict, seed: int) -> dict:
    """Privatize the data set once; both errors of that run."""
    counts = load_counts(key["dataset"])
    upper = key.get("upper") or default_upper(key["dataset"])
    zeta = true_distribution(counts, upper)
    split = key["split"] if key["split"] != "none" else "rule-of-thumb"
    if isinstance(split, str) and split.startswith("f="):
        split = float(split[2:])
    pp = None if key["postprocess"] == "none" else key["postprocess"]
    run = run_method(key["method"], counts, upper, key["eps"], seed, split=split, postprocess=pp)
    zhat = np.bincount(run.counts, minlength=upper + 1) / run.counts.size
    mech = run.mechanism
    out = {"w1": float(wasserstein1(zeta, zhat)), "ks": float(kolmogorov_smirnov(zeta, zhat)),
           "tv": float(total_variation(zeta, zhat)),
           "ce_abs": float(mech.count_error(zeta, "abs")),
           "ce_sq": float(mech.count_error(zeta, "squared")),
           "eps_1": run.eps_1, "eps_2": run.eps_2, "seconds": run.seconds,
           "ce_abs_estimate": None, "w1_target": None}
    if run.z is not None:
        out["ce_abs_estimate"] = float(mech.count_error(run.z, "abs"))
        out["w1_target"] = float(wasserstein1(zeta, run.z))
    if key["method"] == "heuristic-best":
        out["chosen"] = mech.params.get("chosen")
    if key["method"].startswith("lp-"):
        out["lp_retried"] = run.retried
    return out


def _label(method: str) -> str:
    return METHODS[method].label


def draw_accuracy(summary: Any, cfg: Config, metric: str, path: Any) -> Any:
    """Figure 5 (``metric="w1"``) or 6 (``"ce_abs"``): one panel per data set and
    post-processing, every method against eps_t with 95% CI bands."""
    datasets, pps = list(cfg.accuracy_datasets), list(cfg.postprocess)
    fig, axes = figure(len(pps), len(datasets), width=5.4)
    ylabel = {"w1": "Wasserstein-1 (zeta vs output)",
              "ce_abs": "expected absolute deviation <W, T>"}[metric]
    names = {"binomial": "binomial (n = 21)", "crime": "county homicides (n = 51)"}
    reps = int(summary.replications.max()) if len(summary) else 0
    for r, pp in enumerate(pps):
        for c, dataset in enumerate(datasets):
            ax = axes[r, c]
            ax.set_xscale("log")
            ax.set_yscale("log")
            sub = summary[summary.dataset == dataset]
            for method in cfg.accuracy_methods:
                two = METHODS[method].stage == "two-stage"
                m = sub[(sub.method == method) & (sub.postprocess == (pp if two else "none"))]
                if len(m):
                    band(ax, m.eps, m[metric], m[f"{metric}_ci"], _label(method), STYLES[method],
                         show=reps >= MIN_CI_REPLICATIONS)
            ax.set_xlabel("total budget eps_t")
            ax.set_ylabel(ylabel)
            ax.set_title(f"{names.get(dataset, dataset)}; stage 1: {pp}"
                         + (" (paper)" if pp == "clip-renormalise" else " (dpfix)"), fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
    bottom = legend_below(fig, axes[0, 0], ncol=4)
    note(fig, f"Two-stage methods: cyclic Laplace stage 1, split by the rule of thumb "
              f"f = B + (A-B) exp(-K eps_t); one-stage baselines spend all of eps_t. "
              f"Means of {reps} replications" + (", 95% CI bands. " if reps >= MIN_CI_REPLICATIONS
                                                   else " (too few for CI bands). ")
              + ("Count error analytic with the true distribution." if metric == "ce_abs"
                 else "W1 of a real draw of every row."))
    return save(fig, path, bottom=bottom)


def comparison(summary: Any) -> Any:
    """The paper's reported numbers beside ours (both post-processings), one row each.

    Columns: dataset, eps_t, metric, what, method, paper, then mean and CI
    half-width under ``isotonic-cdf`` (ours) and ``clip-renormalise`` (paper's);
    one-stage methods have one value (no stage 1).
    """
    pd = require("pandas")

    rows = []
    for dataset, idx, metric, methods, value, what in PAPER:
        eps = grid_eps(idx)
        for method in methods:
            row = {"dataset": dataset, "eps_t": round(eps, 3), "metric": metric, "what": what,
                   "method": method, "paper": value}
            for pp in ("isotonic-cdf", "clip-renormalise"):
                want = pp if METHODS[method].stage == "two-stage" else "none"
                m = summary[(summary.dataset == dataset) & (summary.method == method)
                            & (summary.postprocess == want) & np.isclose(summary.eps, eps)]
                mean, ci = (float(m[metric].iloc[0]), float(m[f"{metric}_ci"].iloc[0])) \
                    if len(m) else (np.nan, np.nan)
                row[f"ours_{pp}"], row[f"ci_{pp}"] = mean, ci
            rows.append(row)
    for dataset, idx, value in PAPER_DECREASE:
        eps = grid_eps(idx)
        row = {"dataset": dataset, "eps_t": round(eps, 3), "metric": "w1 decrease",
               "what": "1 - W1(LP fixed point) / W1(unfixed optimum)", "method": "lp-simplex",
               "paper": value}
        for pp in ("isotonic-cdf", "clip-renormalise"):
            sel = summary[(summary.dataset == dataset) & (summary.postprocess == pp)
                          & np.isclose(summary.eps, eps)].set_index("method")
            ok = {"lp-simplex", "unfixed"} <= set(sel.index)
            row[f"ours_{pp}"] = 1 - sel.w1["lp-simplex"] / sel.w1["unfixed"] if ok else np.nan
            row[f"ci_{pp}"] = np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def accuracy_summary(cells: list[dict], results: list[dict]) -> Any:
    """The per-(data set, method, eps, post-processing) means and CIs."""
    return summarise(cells, results, METRICS)
