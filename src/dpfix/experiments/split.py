"""Table 3 and Figure 8 (paper Appendix F): the best budget split and the rule of thumb.

For each synthetic histogram, ``eps_t`` and stage-1 fraction ``f`` on a grid,
the two-stage pipeline (cyclic Laplace, heuristic constructor with the best
of the three selectors) privatizes the table; each run gives the count error
``CE(f)`` (analytic, true ``zeta``) and the distribution error ``W1(f)``
(a real draw). The paper's Appendix F, which defines its criterion, is not in
our text, so we choose one and state it:

    **best f = argmin_f  CE(f) / min_g CE(g)  +  W1(f) / min_g W1(g)**,

the means over the replications, per data set and ``eps_t``: the sum of the
two relative losses, each 1 at its own best split, weighting the two kinds of
accuracy equally. The rule ``f = B + (A - B) exp(-K eps_t)`` is then fitted to
all best splits by least squares (``scipy.optimize.curve_fit``) and compared
with the paper's ``A = 0.639, B = 0.106, K = 2.869``; ``table3_fit.csv`` also
gives the fits for other weights of the W1 term (:data:`SENSITIVITY_WEIGHTS`),
to show how much the constants depend on the criterion. Within a replication all
``f`` share one seed, so the noise is common to the whole ``f`` grid.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpfix.experiments.accuracy import grid_eps
from dpfix.experiments.cells import register, summarise
from dpfix.experiments.config import Config
from dpfix.experiments.plots import figure, note, save
from dpfix.experiments.runs import SYNTHETIC, default_upper, load_counts, run_method
from dpfix.release.options import RULE_OF_THUMB
from dpfix.theory.metrics import wasserstein1

__all__ = ["split_cells", "split_cell", "best_splits", "fit_rule", "rule", "draw_split",
           "CRITERION", "with_loss", "SENSITIVITY_WEIGHTS"]

CRITERION = "argmin_f CE(f)/min CE + W1(f)/min W1 (sum of relative losses)"


def rule(eps: Any, A: float, B: float, K: float) -> Any:
    """``f = B + (A - B) exp(-K eps)``.

    Examples
    --------
    >>> round(float(rule(1.0, A=0.639, B=0.106, K=2.869)), 4)
    0.1363
    """
    return B + (A - B) * np.exp(-K * np.asarray(eps, dtype=float))


def split_cells(cfg: Config) -> list[dict]:
    """The cells of Table 3 (every data set, eps_t, f, post-processing, replication).

    Examples
    --------
    >>> from dpfix.experiments.config import make_config
    >>> len(split_cells(make_config(quick=True)))  # 6 data sets x 4 eps x 2 x 5 f x 2
    480
    """
    return [{"experiment": "split", "dataset": d, "method": cfg.split_method,
             "eps": grid_eps(i), "replication": rep, "seed": cfg.seed, "f": f,
             "postprocess": pp}
            for d in SYNTHETIC for i in cfg.split_eps_index for pp in cfg.postprocess
            for f in cfg.split_f for rep in range(cfg.replications)]


@register("split", seed_fields=("experiment", "dataset", "eps", "replication", "seed"))
def split_cell(key: dict, seed: int) -> dict:
    """One privatization at split ``f``: its count error and W1."""
    counts = load_counts(key["dataset"])
    upper = default_upper(key["dataset"])
    eta = np.bincount(np.minimum(counts, upper), minlength=upper + 1)
    zeta = eta / eta.sum()
    run = run_method(key["method"], counts, upper, key["eps"], seed, split=key["f"],
                    postprocess=key["postprocess"])
    zhat = np.bincount(run.counts, minlength=upper + 1) / run.counts.size
    return {"w1": float(wasserstein1(zeta, zhat)),
            "ce_abs": float(run.mechanism.count_error(zeta, "abs")),
            "w1_target": float(wasserstein1(zeta, run.z))}


#: Weights of the W1 term tried in the sensitivity rows of ``table3_fit.csv``.
SENSITIVITY_WEIGHTS = (0.5, 1.0, 2.0, 4.0)


def split_summary(cells: list[dict], results: list[dict]) -> Any:
    """Means and CIs per (data set, eps_t, post-processing, f) with the criterion ``loss``."""
    df = summarise(cells, results, ["w1", "ce_abs", "w1_target"])
    return with_loss(df)


def with_loss(summary: Any, weight: float = 1.0) -> Any:
    """``summary`` with ``loss = CE/min CE + weight * W1/min W1`` (per data set, eps_t,
    post-processing); ``weight = 1`` is :data:`CRITERION`."""
    group = summary.groupby(["dataset", "eps", "postprocess"])
    return summary.assign(loss=summary.ce_abs / group.ce_abs.transform("min")
                          + weight * summary.w1 / group.w1.transform("min"))


def best_splits(summary: Any) -> Any:
    """Table 3: the best ``f`` per (post-processing, data set, eps_t): least ``loss``."""
    idx = summary.groupby(["postprocess", "dataset", "eps"]).loss.idxmin()
    cols = ["postprocess", "dataset", "eps", "f", "loss", "ce_abs", "w1"]
    return summary.loc[idx, cols].reset_index(drop=True)


def fit_rule(best: Any) -> dict[str, float]:
    """Least-squares fit of ``f = B + (A - B) exp(-K eps_t)`` to the best splits.

    Returns A, B, K, their standard errors and the RMS residual; NaN when the
    fit fails or there are fewer than 4 points.
    """
    from scipy.optimize import curve_fit

    x, y = np.asarray(best.eps, dtype=float), np.asarray(best.f, dtype=float)
    out = {k: math.nan for k in ("A", "B", "K", "A_se", "B_se", "K_se", "rms")}
    if x.size < 4:
        return out
    p0 = [RULE_OF_THUMB[k] for k in ("A", "B", "K")]
    try:
        p, cov = curve_fit(rule, x, y, p0=p0, bounds=([0, 0, 0], [1, 1, 50]), maxfev=20000)
    except (RuntimeError, ValueError):
        return out
    se = np.sqrt(np.diag(cov)) if np.all(np.isfinite(cov)) else [math.nan] * 3
    out.update(A=float(p[0]), B=float(p[1]), K=float(p[2]), A_se=float(se[0]),
               B_se=float(se[1]), K_se=float(se[2]),
               rms=float(np.sqrt(np.mean((rule(x, *p) - y) ** 2))))
    return out


def draw_split(best: Any, fits: dict[str, dict], cfg: Config, path: Any) -> Any:
    """Figure 8: best splits per data set vs eps_t, our fitted rule and the paper's."""
    pps = list(cfg.postprocess)
    fig, axes = figure(1, len(pps))
    grid = np.geomspace(0.1, 5, 200)
    markers = dict(zip(SYNTHETIC, "osD^v<", strict=True))
    for c, pp in enumerate(pps):
        ax = axes[0, c]
        sub = best[best.postprocess == pp]
        for k, d in enumerate(SYNTHETIC):
            m = sub[sub.dataset == d]
            jitter = 1 + 0.02 * (k - 2.5)  # keep coinciding points visible
            ax.plot(m.eps * jitter, m.f, markers[d], ms=4.5, alpha=0.75, label=d)
        ax.plot(grid, rule(grid, **RULE_OF_THUMB), "k--", lw=1.2,
                label="paper: A=0.639, B=0.106, K=2.869")
        fit = fits[pp]
        if np.isfinite(fit["A"]):
            ax.plot(grid, rule(grid, fit["A"], fit["B"], fit["K"]), "r-", lw=1.4,
                    label=f"fit: A={fit['A']:.3f}, B={fit['B']:.3f}, K={fit['K']:.2f}")
        ax.set_xscale("log")
        ax.set_ylim(0, 1)
        ax.set_xlabel("total budget eps_t")
        ax.set_ylabel("best stage-1 fraction f = eps_1 / eps_t")
        ax.set_title(f"post-processing: {pp}" + (" (paper)" if pp == "clip-renormalise"
                                                  else " (dpfix default)"), fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6.5)
    note(fig, f"Best f on the grid {min(cfg.split_f):g}..{max(cfg.split_f):g} "
              f"({len(cfg.split_f)} values) by our criterion (the paper's Appendix F is not "
              f"in our text): {CRITERION}; CE = count error <W,T> with the true zeta, W1 of a "
              f"real draw; means of {cfg.replications} replications; heuristic (best of 3).")
    return save(fig, path)
