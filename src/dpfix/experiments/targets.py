"""Run the experiments of the paper's Section 6 and write their CSVs and PNGs.

Output folder layout (``--out``):

=======================  ===========================================================
``cells.jsonl``          every finished cell (the resumable cache)
``privatizers.csv``      Figure 3 data; ``fig3_privatizers.png``
``accuracy.csv``         Figures 5 and 6 data; ``fig5_wasserstein.png``,
                         ``fig6_count_error.png``; ``comparison.csv`` / ``.md``: the
                         paper's reported numbers beside ours
``runtime.csv``          Figure 7 data; ``fig7_runtime.png``
``split.csv``            every split ``f`` of Table 3's runs; ``table3.csv`` / ``.md``
                         (best ``f``), ``table3_fit.csv`` (the fitted rule of
                         thumb), ``fig8_split.png``
``frontier.csv``         the frontier study: every setting and the limit
                         per data set and eps_t (means, CIs, standard errors, paired
                         differences to two-stage, ratios to the limit);
                         ``frontier_dominance.csv``, ``frontier_rule.csv`` / ``.md``
                         (the data-independent rule), ``frontier_limit.csv`` (the
                         5% target at eps_t >= 1); ``frontier_pareto.png``,
                         ``frontier_ce_ratio.png``, ``frontier_w1_ratio.png``
``joint.csv``            the joint study (``joint``, not part of ``all``): every measure
                         of docs/joint.md section 8 per data set, eps_t and method
                         (means, standard errors); ``joint_targets.md``
``bounds.csv``           the bounds study (``bounds``, not part of ``all``): every rule
                         of ``upper="auto"`` against the best fixed bound in hindsight
                         per data set and eps (docs/bounds.md section 3);
                         ``bounds_fixed.csv`` (every fixed bound),
                         ``bounds_intervals.csv`` (``upper="auto"``'s paired
                         bootstrap intervals), ``bounds_targets.md``;
                         ``bounds-isotonic``: the same under ``isotonic-cdf``,
                         ``bounds_isotonic_cdf.csv`` (``_fixed.csv``,
                         ``_intervals.csv``, ``_targets.md``)
``run.json``             configuration, cells computed and seconds per target
=======================  ===========================================================
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dpfix.experiments import (
    accuracy,
    bounds,
    frontier,
    joint,
    privatizer_error,
    resolution,
    runtime,
    split,
)
from dpfix.experiments.cells import CellCache, run_cells
from dpfix.experiments.config import Config
from dpfix.experiments.runs import DATASETS, SYNTHETIC, required_files
from dpfix.numbers.numeric import require

__all__ = ["TARGETS", "EXTRA_TARGETS", "reproduce", "TargetReport", "check_data", "target_files",
           "markdown_table"]

TARGETS = ("fig3", "fig5", "fig6", "fig7", "table3", "frontier")
#: Studies run by name only (not by ``all``): the joint release (docs/joint.md), the
#: private bound (docs/bounds.md), and the same with stage 1 post-processed by
#: ``isotonic-cdf`` (its comparison column, docs/bounds.md section 3).
EXTRA_TARGETS = ("joint", "bounds", "bounds-isotonic")

_DATASETS = {"fig3": ("crime",), "fig5": ("binomial", "crime"), "fig6": ("binomial", "crime"),
             "fig7": ("crime",), "table3": SYNTHETIC, "frontier": tuple(DATASETS),
             "joint": ("crime",), "bounds": tuple(DATASETS),
             "bounds-isotonic": tuple(DATASETS)}


@dataclass
class TargetReport:
    """What one target did: files written, cells computed now and from the cache, seconds."""

    target: str
    files: list[str] = field(default_factory=list)
    computed: int = 0
    cached: int = 0
    seconds: float = 0.0


def target_files(target: str) -> list[str]:
    """The data files one target reads (from :func:`dpfix.io.data.data_dir`).

    Parameters
    ----------
    target : str
        A name in :data:`TARGETS`.

    Returns
    -------
    list of str
        The file names, sorted.

    Examples
    --------
    >>> target_files("fig5")
    ['binom_hist_data.csv', 'crime_data.csv']
    """
    return required_files(_DATASETS[target])


def check_data(targets: Any) -> None:
    """Raise a one-line ``FileNotFoundError`` naming the missing files and ``DPFIX_DATA``.

    Parameters
    ----------
    targets : iterable of str
        Names in :data:`TARGETS`.

    Raises
    ------
    FileNotFoundError
        A data file the targets read is missing: the message names every file
        the targets need, the folder looked in (or, without one, the places
        looked for it) and ``DPFIX_DATA``.

    Examples
    --------
    >>> import os, shutil, tempfile
    >>> before = os.environ.get("DPFIX_DATA")
    >>> os.environ["DPFIX_DATA"] = tempfile.mkdtemp()
    >>> check_data(["fig3"])
    Traceback (most recent call last):
    ...
    FileNotFoundError: fig3 needs crime_data.csv ...
    >>> shutil.rmtree(os.environ.pop("DPFIX_DATA"))
    >>> if before is not None:
    ...     os.environ["DPFIX_DATA"] = before
    """
    from dpfix.io.data import data_dir

    targets = list(targets)
    files = sorted({f for t in targets for f in target_files(t)})
    need = f"{', '.join(targets)} {'needs' if len(targets) == 1 else 'need'} {', '.join(files)}"
    try:
        folder = data_dir()
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"{need} (the paper's data sets): {exc}") from None
    missing = [f for f in files if not (folder / f).is_file()]
    if missing:
        raise FileNotFoundError(f"{need} (the paper's data sets): {', '.join(missing)} not in "
                                f"{folder}; set DPFIX_DATA to the folder that holds them")


def markdown_table(df: Any, digits: int = 3) -> str:
    """A pandas DataFrame as a GitHub markdown table (floats rounded).

    Examples
    --------
    >>> import pandas as pd
    >>> print(markdown_table(pd.DataFrame({"a": [1.23456], "b": ["x"]})))
    | a | b |
    |---|---|
    | 1.235 | x |
    """
    def cell(v: Any) -> str:
        if isinstance(v, float):
            return "" if math.isnan(v) else f"{v:.{digits}f}"
        return str(v)
    lines = ["| " + " | ".join(map(str, df.columns)) + " |",
             "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |"
              for row in df.itertuples(index=False)]
    return "\n".join(lines)


def _write(df: Any, path: Path, report: TargetReport, float_format: str | None = None) -> None:
    df.to_csv(path, index=False, float_format=float_format)
    report.files.append(path.name)


def _fig3(cfg: Config, out: Path, cache: CellCache, jobs: int, quiet: bool,
          report: TargetReport) -> None:
    cells = privatizer_error.privatizer_cells(cfg)
    results, report.computed = run_cells(cells, cache, jobs=jobs, quiet=quiet, desc="fig3")
    summary = privatizer_error.privatizer_summary(cells, results)
    _write(summary.sort_values(["method", "n"]), out / "privatizers.csv", report)
    privatizer_error.draw_privatizers(summary, cfg, out / "fig3_privatizers.png")
    report.files.append("fig3_privatizers.png")
    report.cached = len(cells) - report.computed


def _accuracy(cfg: Config, out: Path, cache: CellCache, jobs: int, quiet: bool,
              report: TargetReport, metric: str, png: str) -> None:
    cells = accuracy.accuracy_cells(cfg)
    results, report.computed = run_cells(cells, cache, jobs=jobs, quiet=quiet,
                                         desc="fig5/6 accuracy")
    report.cached = len(cells) - report.computed
    summary = accuracy.accuracy_summary(cells, results)
    _write(summary.sort_values(["dataset", "method", "postprocess", "eps"]),
           out / "accuracy.csv", report)
    accuracy.draw_accuracy(summary, cfg, metric, out / png)
    report.files.append(png)
    comp = accuracy.comparison(summary)
    _write(comp, out / "comparison.csv", report)
    (out / "comparison.md").write_text(markdown_table(comp) + "\n", encoding="utf-8")
    report.files.append("comparison.md")


def _fig7(cfg: Config, out: Path, cache: CellCache, jobs: int, quiet: bool,
          report: TargetReport) -> None:
    cells, results, report.computed = runtime.run_runtime(cfg, cache, jobs, quiet)
    report.cached = len(cells) - report.computed
    summary = runtime.runtime_summary(cells, results)
    _write(summary.sort_values(["method", "n"]), out / "runtime.csv", report)
    runtime.draw_runtime(summary, cfg, out / "fig7_runtime.png")
    report.files.append("fig7_runtime.png")


def _table3(cfg: Config, out: Path, cache: CellCache, jobs: int, quiet: bool,
            report: TargetReport) -> None:
    cells = split.split_cells(cfg)
    results, report.computed = run_cells(cells, cache, jobs=jobs, quiet=quiet, desc="table3")
    report.cached = len(cells) - report.computed
    summary = split.split_summary(cells, results)
    _write(summary.sort_values(["postprocess", "dataset", "eps", "f"]), out / "split.csv",
           report)
    best = split.best_splits(summary)
    wide = best.assign(eps=best.eps.round(3)).pivot(index=["postprocess", "dataset"],
                                                    columns="eps", values="f").reset_index()
    _write(wide, out / "table3.csv", report)
    (out / "table3.md").write_text(markdown_table(wide, 2) + "\n", encoding="utf-8")
    report.files.append("table3.md")
    fits = {pp: split.fit_rule(best[best.postprocess == pp]) for pp in cfg.postprocess}
    pd = require("pandas")

    fit_rows = [{"postprocess": pp, "w1_weight": 1.0, **fit} for pp, fit in fits.items()]
    for weight in split.SENSITIVITY_WEIGHTS:  # how much the constants owe to the criterion
        if weight != 1.0:
            other = split.best_splits(split.with_loss(summary, weight))
            fit_rows += [{"postprocess": pp, "w1_weight": weight,
                          **split.fit_rule(other[other.postprocess == pp])}
                         for pp in cfg.postprocess]
    fit_rows.append({"postprocess": "paper", "w1_weight": math.nan, **split.RULE_OF_THUMB})
    _write(pd.DataFrame(fit_rows), out / "table3_fit.csv", report)
    split.draw_split(best, fits, cfg, out / "fig8_split.png")
    report.files.append("fig8_split.png")


def _frontier(cfg: Config, out: Path, cache: CellCache, jobs: int, quiet: bool,
              report: TargetReport) -> None:
    cells = frontier.frontier_cells(cfg)
    results, report.computed = run_cells(cells, cache, jobs=jobs, quiet=quiet, desc="frontier")
    report.cached = len(cells) - report.computed
    summary = frontier.frontier_summary(cells, results)
    _write(summary, out / "frontier.csv", report, "%.6g")  # 1056 rows x 100 columns
    dom = frontier.dominance(summary)
    _write(dom, out / "frontier_dominance.csv", report)
    choice, rule = frontier.choose_rule(dom)
    _write(choice, out / "frontier_rule.csv", report)
    check = frontier.limit_check(summary, choice)
    _write(check, out / "frontier_limit.csv", report)
    (out / "frontier_rule.md").write_text(frontier.rule_report(summary, dom, choice, rule, check,
                                                              markdown_table),
                                          encoding="utf-8")
    report.files.append("frontier_rule.md")
    frontier.draw_pareto(summary, cfg, out / "frontier_pareto.png")
    frontier.draw_ratio(summary, cfg, out / "frontier_ce_ratio.png", "ce_ratio")
    frontier.draw_ratio(summary, cfg, out / "frontier_w1_ratio.png", "w1_rel")
    report.files += ["frontier_pareto.png", "frontier_ce_ratio.png", "frontier_w1_ratio.png"]


def _joint(cfg: Config, out: Path, cache: CellCache, jobs: int, quiet: bool,
           report: TargetReport) -> None:
    cells = joint.joint_cells(cfg.quick, cfg.replications, cfg.seed)
    results, report.computed = run_cells(cells, cache, jobs=jobs, quiet=quiet, desc="joint")
    report.cached = len(cells) - report.computed
    summary = joint.joint_summary(cells, results)
    _write(summary, out / "joint.csv", report, "%.6g")
    (out / "joint_targets.md").write_text(joint.targets_report(summary), encoding="utf-8")
    report.files.append("joint_targets.md")


def _bounds(cfg: Config, out: Path, cache: CellCache, jobs: int, quiet: bool,
            report: TargetReport, postprocess: str | None = None) -> None:
    """The bounds study; with ``postprocess``, under that stage-1 post-processing, its
    files named ``bounds_<postprocess>...`` (the same seeds, its own best fixed bounds)."""
    options = {} if postprocess is None else {"postprocess": postprocess}
    cells = bounds.bounds_cells(cfg.quick, cfg.bounds_replications, cfg.seed, **options)
    results, report.computed = run_cells(cells, cache, jobs=jobs, quiet=quiet, desc="bounds")
    report.cached = len(cells) - report.computed
    summary = bounds.bounds_summary(cells, results)
    stem = "bounds" if postprocess is None else f"bounds_{postprocess.replace('-', '_')}"
    _write(summary[summary.method == "fixed"], out / f"{stem}_fixed.csv", report, "%.6g")
    _write(bounds.ratios(summary), out / f"{stem}.csv", report, "%.6g")
    intervals = resolution.study_intervals(cells, results, summary)
    _write(intervals, out / f"{stem}_intervals.csv", report, "%.6g")
    (out / f"{stem}_targets.md").write_text(
        bounds.targets_report(summary, markdown_table) + "\n"
        + resolution.intervals_report(intervals, markdown_table), encoding="utf-8")
    report.files.append(f"{stem}_targets.md")


_RUNNERS: dict[str, Callable[..., None]] = {
    "fig3": _fig3,
    "fig5": lambda *a: _accuracy(*a, metric="w1", png="fig5_wasserstein.png"),
    "fig6": lambda *a: _accuracy(*a, metric="ce_abs", png="fig6_count_error.png"),
    "fig7": _fig7,
    "table3": _table3,
    "frontier": _frontier,
    "joint": _joint,
    "bounds": _bounds,
    "bounds-isotonic": lambda *a: _bounds(*a, postprocess="isotonic-cdf"),
}


def reproduce(targets: Any, cfg: Config, out: str | Path, *, jobs: int = 1,
              quiet: bool = False, log: Callable[[str], Any] | None = None
              ) -> list[TargetReport]:
    """Run the named targets (see :data:`TARGETS`) into the folder ``out``.

    Finished cells are read from ``out/cells.jsonl`` and not recomputed.
    Returns one :class:`TargetReport` per target and writes ``out/run.json``.

    Parameters
    ----------
    targets : str or iterable of str
        Names in :data:`TARGETS` (``"all"`` for every one).
    cfg : Config
        The experiment's configuration (:func:`dpfix.experiments.config.make_config`).
    out : str or Path
        The output folder (cells, CSV tables, figures, ``run.json``).
    jobs : int
        Worker processes.
    quiet : bool
        No progress bars.
    log : callable, optional
        Told one line per finished target.

    Returns
    -------
    list of TargetReport
        One per target.

    Raises
    ------
    ValueError
        An unknown target, or ``jobs < 1``.
    FileNotFoundError
        A data file is missing (one line naming ``DPFIX_DATA``).
    """
    targets = list(targets)
    unknown = [t for t in targets if t not in TARGETS + EXTRA_TARGETS]
    if unknown:
        raise ValueError(f"target: unknown {unknown[0]!r}; choose from "
                         f"{', '.join(TARGETS + EXTRA_TARGETS)} or all")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs: must be an integer >= 1, got {jobs!r}")
    check_data(targets)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cache = CellCache(out / "cells.jsonl")
    reports = []
    for target in targets:
        start = time.perf_counter()
        report = TargetReport(target)
        _RUNNERS[target](cfg, out, cache, jobs, quiet, report)
        report.seconds = time.perf_counter() - start
        reports.append(report)
        if log is not None:
            log(f"{target}: {report.computed} cells computed, {report.cached} from cache, "
                f"{report.seconds:.1f} s -> {', '.join(report.files)}")
    info = {"config": asdict(cfg), "jobs": jobs, "targets": [asdict(r) for r in reports]}
    (out / "run.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    return reports
