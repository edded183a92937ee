"""Figure 3 (paper Section 3): distribution error of the privatizers vs ``n`` at eps_1 = 1.

The paper uses the schools data (not available here); we top-code the county
homicides at ``n - 1`` for each ``n`` instead. One cell draws one release of a
privatizer and post-processes the same noisy vector both ways (the paper's
clip-and-renormalise and the library's isotonic-cdf), so the two are paired.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpfix.experiments.cells import register, summarise
from dpfix.experiments.config import Config
from dpfix.experiments.plots import MIN_CI_REPLICATIONS, STYLES, band, figure, note, save
from dpfix.experiments.runs import load_counts
from dpfix.release.frameworks import histogram
from dpfix.theory.metrics import kolmogorov_smirnov, wasserstein1

__all__ = ["privatizer_cells", "privatizer_cell", "draw_privatizers", "LABELS", "FIG3_DATASET"]

FIG3_DATASET = "crime"
LABELS = {"laplace": "Laplace", "privelet": "Privelet (Haar)",
          "hierarchical": "QYL (hierarchical, b = 16)", "cyclic-laplace": "cyclic Laplace"}
POSTPROCESS = ("clip-renormalise", "isotonic-cdf")


def privatizer_cells(cfg: Config) -> list[dict]:
    """The cells of Figure 3.

    Examples
    --------
    >>> from dpfix.experiments.config import make_config
    >>> cells = privatizer_cells(make_config(quick=True))
    >>> len(cells), sorted({c["n"] for c in cells})
    (24, [10, 51, 201])
    """
    return [{"experiment": "privatizers", "dataset": FIG3_DATASET, "method": method,
             "eps": cfg.fig3_eps, "replication": rep, "seed": cfg.seed, "n": n}
            for n in cfg.fig3_n for method in cfg.fig3_methods
            for rep in range(cfg.replications)]


@register("privatizers", seed_fields=("experiment", "dataset", "method", "eps", "n",
                                      "replication", "seed"))
def privatizer_cell(key: dict, seed: int) -> dict:
    """One release; W1 and KS between ``zeta`` and ``z`` under both post-processings."""
    from dpfix.release.privatizers import POSTPROCESSORS, privatize_distribution

    eta, _ = histogram(load_counts(key["dataset"]), key["n"] - 1)
    zeta = eta / eta.sum()
    rel = privatize_distribution(eta, key["eps"], privatizer=key["method"], secure=False,
                                 seed=np.random.default_rng(seed))
    out: dict[str, Any] = {}
    for pp in POSTPROCESS:
        z = POSTPROCESSORS[pp](rel.raw / rel.N)
        out[f"w1_{pp}"] = float(wasserstein1(zeta, z))
        out[f"ks_{pp}"] = float(kolmogorov_smirnov(zeta, z))
    return out


def privatizer_summary(cells: list[dict], results: list[dict]) -> Any:
    """Means and CIs per (privatizer, n)."""
    return summarise(cells, results, [f"{m}_{pp}" for m in ("w1", "ks") for pp in POSTPROCESS])


def draw_privatizers(summary: Any, cfg: Config, path: Any) -> Any:
    """Figure 3: W1 vs n, one panel per post-processing."""
    fig, axes = figure(1, len(POSTPROCESS))
    reps = int(summary.replications.max()) if len(summary) else 0
    for c, pp in enumerate(POSTPROCESS):
        ax = axes[0, c]
        ax.set_xscale("log")
        ax.set_yscale("log")
        for method in cfg.fig3_methods:
            m = summary[summary.method == method]
            band(ax, m.n, m[f"w1_{pp}"], m[f"w1_{pp}_ci"], LABELS[method], STYLES[method],
                 show=reps >= MIN_CI_REPLICATIONS)
        ax.set_xlabel("n (counts top-coded at n - 1)")
        ax.set_ylabel("Wasserstein-1 (zeta vs z)")
        ax.set_title(f"post-processing: {pp}" + (" (paper)" if pp == "clip-renormalise"
                                                  else " (dpfix default)"), fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    note(fig, f"Data: US county homicides (crime_data.csv, MURDER, N = 3,136), NOT the "
              f"paper's schools data (unavailable). eps_1 = {cfg.fig3_eps:g}; numpy noise; "
              f"means of {reps} releases" + (" with 95% CI bands." if reps >= MIN_CI_REPLICATIONS
                                                else "."))
    return save(fig, path)
