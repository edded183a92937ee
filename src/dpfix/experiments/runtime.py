"""Figure 7 (paper Section 6.3): wall time of a whole privatization vs ``n``.

The county homicides top-coded at ``n - 1`` (as the paper's Figure 7),
``eps_t = 1``. A cell times one complete privatization of the table (stage 1,
construction with its privacy check, drawing every row). ``n`` grows in
waves: a method leaves once a run of it takes longer than the cap (the LPs:
HiGHS gets the cap as its time limit). With ``jobs > 1`` cells run in
parallel processes, so a timing includes their contention for the cores.
"""

from __future__ import annotations

from typing import Any

from dpfix.experiments.cells import CellCache, register, run_cells, summarise
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
from dpfix.experiments.runs import METHODS, load_counts, run_method

__all__ = ["runtime_cells", "runtime_cell", "run_runtime", "draw_runtime", "RUNTIME_EPS"]

RUNTIME_EPS = 1.0
RUNTIME_DATASET = "crime"


def runtime_cells(cfg: Config, n: int, methods: Any) -> list[dict]:
    """The cells of one wave (one ``n``) of Figure 7.

    Examples
    --------
    >>> from dpfix.experiments.config import make_config
    >>> [c["method"] for c in runtime_cells(make_config(quick=True), 50, ["unfixed", "lp-ipm"])]
    ['unfixed', 'lp-ipm']
    """
    return [{"experiment": "runtime", "dataset": RUNTIME_DATASET, "method": method,
             "eps": RUNTIME_EPS, "replication": rep, "seed": cfg.seed, "n": n,
             "cap": cfg.fig7_lp_cap}
            for method in methods for rep in range(cfg.fig7_replications)]


#: methods this process has already run once (imports and numba's compiled kernels loaded)
_WARM: set[str] = set()


@register("runtime", seed_fields=("experiment", "dataset", "eps", "n", "replication", "seed"))
def runtime_cell(key: dict, seed: int) -> dict:
    """Time one privatization (the LP with the cap as HiGHS's time limit).

    The first cell of a method in a process first runs it once untimed at
    ``n = 10``: loading modules and numba's compiled kernel is not the
    method's cost.
    """
    counts = load_counts(key["dataset"])
    if key["method"] not in _WARM:
        run_method(key["method"], counts, 9, key["eps"], seed)
        _WARM.add(key["method"])
    limit = key["cap"] if key["method"].startswith("lp-") else None
    run = run_method(key["method"], counts, key["n"] - 1, key["eps"], seed, time_limit=limit)
    build = None if run.mechanism is None else run.mechanism.build_seconds
    return {"seconds": run.seconds, "construct_seconds": build, "timed_out": run.timed_out,
            "lp_retried": run.retried}


def run_runtime(cfg: Config, cache: CellCache, jobs: int, quiet: bool
                ) -> tuple[list[dict], list[dict], int]:
    """Run the waves in increasing ``n``; a method stops after a wave in which a run
    exceeded ``cfg.fig7_lp_cap`` seconds (or hit the LP's time limit)."""
    active, cells, results, computed = list(cfg.fig7_methods), [], [], 0
    for n in sorted(cfg.fig7_n):
        if not active:
            break
        wave = runtime_cells(cfg, n, active)
        res, k = run_cells(wave, cache, jobs=jobs, quiet=quiet, desc=f"fig7 n={n}")
        cells += wave
        results += res
        computed += k
        slow = {c["method"] for c, r in zip(wave, res, strict=True)
                if r["timed_out"] or r["seconds"] > cfg.fig7_lp_cap}
        active = [m for m in active if m not in slow]
    return cells, results, computed


def runtime_summary(cells: list[dict], results: list[dict]) -> Any:
    """Mean wall time per (method, n); timed-out runs are kept, flagged ``timed_out``."""
    df = summarise(cells, results, ["seconds", "construct_seconds"])
    flags: dict[tuple, bool] = {}
    for c, r in zip(cells, results, strict=True):
        flags[(c["method"], c["n"])] = flags.get((c["method"], c["n"]), False) or r["timed_out"]
    df["timed_out"] = [flags[(m, n)] for m, n in zip(df.method, df.n, strict=True)]
    return df


def draw_runtime(summary: Any, cfg: Config, path: Any) -> Any:
    """Figure 7: seconds vs n, log-log; where a run hit the cap, a triangle at the cap."""
    fig, axes = figure(1, 1, width=7.5, height=5.0)
    ax = axes[0, 0]
    ax.set_xscale("log")
    ax.set_yscale("log")
    for method in cfg.fig7_methods:
        m = summary[(summary.method == method) & ~summary.timed_out]
        if len(m):
            band(ax, m.n, m.seconds, m.seconds_ci, METHODS[method].label, STYLES[method],
                 show=cfg.fig7_replications >= MIN_CI_REPLICATIONS)
        over = summary[(summary.method == method) & summary.timed_out]
        if len(over):
            ax.plot(over.n, [cfg.fig7_lp_cap] * len(over), "^", ms=8, mfc="none",
                    color=STYLES[method]["color"])
    ax.axhline(cfg.fig7_lp_cap, color="gray", lw=0.8, ls=":")
    ax.text(min(cfg.fig7_n), cfg.fig7_lp_cap * 1.15,
            f"cap {cfg.fig7_lp_cap:g} s (open triangle: a run hit it)", fontsize=7)
    ax.set_xlabel("n (county homicides top-coded at n - 1)")
    ax.set_ylabel("seconds per privatization (N = 3,136 rows)")
    ax.grid(True, which="both", alpha=0.3)
    bottom = legend_below(fig, ax, ncol=3)
    note(fig, f"eps_t = {RUNTIME_EPS:g}; stage 1 + construction (with its privacy check) + "
              f"drawing every row. Means of {cfg.fig7_replications} run(s); a method stops at "
              f"the first n where a run passes {cfg.fig7_lp_cap:g} s (HiGHS's time limit). "
              "With --jobs above 1, cells run in parallel processes: the timings include "
              "their contention for the cores.")
    return save(fig, path, bottom=bottom)
