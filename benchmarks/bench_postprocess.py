"""Which post-processing turns a noisy histogram into the best target ``z``?

For every data set, every privatizer and every ``eps_1`` in {0.1, 0.3, 1, 3}, draw
``--reps`` seeded releases (``secure=False``, reproducible) and post-process each *same*
noisy vector with every method of ``dpfix.release.privatizers.POSTPROCESSORS``: a paired
comparison. The error is the Wasserstein-1 distance to the true ``zeta``
(``dpfix.theory.metrics.wasserstein1``, in units of the count). Two regimes
(``--sets``):

- ``short``: short-range histograms: the county homicides top-coded at 50 (``n = 51``),
  the binomial (``n = 21``) and the six synthetic ones;
- ``long``: long-tailed ones: county columns of ``crime_data.csv`` at their full range
  (``n`` = the largest count + 1, up to 49,108), where most counties have small counts
  and a sparse tail reaches far.

The data are read by the library's readers (``dpfix.experiments.bounds.bound_counts`` for
the county columns, ``dpfix.io.tables.read_histogram`` for the histogram files, which keeps
their empty top cells), from ``$DPFIX_DATA``, else ``../shared/data``. Prints Markdown
tables (mean and 95% CI, ``1.96 sd / sqrt(reps)``) and, with ``--write FILE``, puts them
between the ``<!-- bench:start -->`` and ``<!-- bench:end -->`` markers of FILE.

    .venv/bin/python benchmarks/bench_postprocess.py --reps 200 --write docs/postprocessing.md
    .venv/bin/python benchmarks/bench_postprocess.py --reps 50 --sets short   # seconds
"""

from __future__ import annotations

import argparse
import inspect
import math
import sys
import time
from pathlib import Path

import numpy as np

from dpfix.experiments.bounds import BOUND_DATASETS, bound_counts
from dpfix.io.data import data_path
from dpfix.io.tables import read_histogram
from dpfix.release.privatizers import (
    NONCYCLIC_POSTPROCESS,
    POSTPROCESSORS,
    PRIVATIZERS,
    privatize_distribution,
)
from dpfix.theory.metrics import kolmogorov_smirnov, total_variation, wasserstein1

EPSILONS = (0.1, 0.3, 1.0, 3.0)
SYNTHETIC = ("uniform", "left-skewed", "right-skewed", "bimodal", "top-inflated",
             "zero-inflated")
#: County columns released at their full range (the long-tailed regime).
LONG_TAILED = ("RAPE", "ROBBERY", "BURGLRY", "MVTHEFT", "ARSON")
REGIMES = ("short", "long")
START, END = "<!-- bench:start -->", "<!-- bench:end -->"
METRICS = {"w1": wasserstein1, "ks": kolmogorov_smirnov, "tv": total_variation}
#: Relative difference of mean errors below which post-processings tie.
TIE = 1e-9


def load_datasets(sets: str = "all") -> dict[str, tuple[str, np.ndarray]]:
    """Name -> (regime, histogram): the short-range sets (crime = MURDER top-coded at 50,
    binomial, synthetic) and the long-tailed county columns at their full range."""
    out: dict[str, tuple[str, np.ndarray]] = {}
    if sets in ("short", "all"):
        murders = bound_counts("crime:MURDER")
        out["crime"] = ("short", np.bincount(np.minimum(murders, 50), minlength=51))
        for name in ("binomial", *SYNTHETIC):  # the file's own range, empty top cells kept
            out[name] = ("short", read_histogram(data_path(BOUND_DATASETS[name][0])))
    if sets in ("long", "all"):
        for column in LONG_TAILED:
            out[column] = ("long", np.bincount(bound_counts(f"crime:{column}")))
    return out


def support_floor(z: np.ndarray, zeta: np.ndarray) -> float:
    """``sum_i zeta_i min_(j: z_j > 0) |i - j|``: a lower bound on the count error
    (``loss="abs"``) of every eps-DP mechanism with the fixed point ``z``.

    Such a mechanism releases only counts in the support of ``z``: a column ``j`` with
    ``z_j = 0`` has ``sum_i z_i T_ij = z_j = 0``, so it vanishes on a row, and the ratio
    constraints of eps-DP carry the zero along the whole column. So each row of count ``i``
    moves at least to the nearest count of the support, and a target that drops a tail
    releases every count above its support at its top.

    Examples
    --------
    >>> round(support_floor(np.array([0.5, 0.5, 0, 0]), np.array([0.4, 0.4, 0.1, 0.1])), 12)
    0.3
    """
    at = np.arange(len(z), dtype=float)
    inside = z > 0
    below = np.maximum.accumulate(np.where(inside, at, -np.inf))      # nearest at or below
    above = np.minimum.accumulate(np.where(inside, at, np.inf)[::-1])[::-1]  # at or above
    return float(np.dot(zeta, np.minimum(at - below, above - at)))


def measure(eta: np.ndarray, method: str, eps: float, reps: int, seed: np.random.SeedSequence,
            metric=wasserstein1) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Errors (W1 by default) and :func:`support_floor` of every post-processing on ``reps``
    paired releases."""
    zeta = eta / eta.sum()
    rng = np.random.default_rng(seed)
    extra = {"delta": 1.0 / (eta.sum() + 1)} if method == "cyclic-gaussian" else {}
    errors = {name: np.empty(reps) for name in POSTPROCESSORS}
    floors = {name: np.empty(reps) for name in POSTPROCESSORS}
    for r in range(reps):
        out = privatize_distribution(eta, eps, privatizer=method, seed=rng, secure=False, **extra)
        v = out.raw / out.N
        for name, function in POSTPROCESSORS.items():
            z = function(v)
            errors[name][r] = metric(z, zeta)
            floors[name][r] = support_floor(z, zeta)
    return errors, floors


def _winners(errs: dict[str, np.ndarray]) -> list[str]:
    """The post-processings of least mean error (all within :data:`TIE` of the least)."""
    means = {k: v.mean() for k, v in errs.items()}
    best = min(means.values())
    return [k for k, m in means.items() if m - best <= TIE * best]


def _best(errs: dict[str, np.ndarray]) -> str:
    """The winner's name, ``"tie"`` when all agree, or the winners joined by ``=``."""
    winners = _winners(errs)
    return "tie" if len(winners) == len(errs) else " = ".join(winners)


def ci(x: np.ndarray) -> str:
    half = 1.96 * x.std(ddof=1) / math.sqrt(len(x))
    return f"{x.mean():.4f} ± {half:.4f}"


def _paired(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Mean and 95% half-width of the paired difference ``a - b`` (float rounding of
    identical answers set to 0)."""
    diff = a - b
    diff[np.abs(diff) <= 1e-12 * np.maximum(np.abs(a), 1e-300)] = 0.0
    return diff.mean(), 1.96 * diff.std(ddof=1) / math.sqrt(len(diff))


def run(reps: int, methods: list[str], metric=wasserstein1, sets: str = "all"
        ) -> tuple[str, dict, dict, dict]:
    """Tables per privatizer; errors and floors per ``(privatizer, data set, eps)``; the
    data sets."""
    datasets = load_datasets(sets)
    every = list(_ALL_NAMES)
    root = np.random.SeedSequence(20260101)
    names = list(POSTPROCESSORS)
    results: dict = {}
    floors: dict = {}
    lines = []
    for method in methods:
        lines += [f"\n#### {method}\n",
                  "| data set | n | N | eps_1 | " + " | ".join(names) + " | best |",
                  "|---|---|---|---|" + "---|" * len(names) + "---|"]
        for dname, (_, eta) in datasets.items():
            for e, eps in enumerate(EPSILONS):
                key = (method, dname, eps)
                seed = np.random.SeedSequence(root.entropy, spawn_key=(
                    list(PRIVATIZERS).index(method), every.index(dname), e))
                errs, floors[key] = measure(eta, method, eps, reps, seed, metric)
                results[key] = errs
                winners = _winners(errs)
                cells = [f"**{ci(errs[k])}**" if k in winners else ci(errs[k]) for k in names]
                lines.append(f"| {dname} | {len(eta)} | {eta.sum()} | {eps:g} | "
                             + " | ".join(cells) + f" | {_best(errs)} |")
    return "\n".join(lines), results, floors, datasets


#: Every data set in a fixed order: a cell's seed does not depend on ``--sets``.
_ALL_NAMES = ("crime", "binomial", *SYNTHETIC, *LONG_TAILED)


def _keys(results: dict, method: str, datasets: dict, regime: str) -> list[tuple]:
    return [k for k in results if k[0] == method and datasets[k[1]][0] == regime]


def _regime_title(regime: str, datasets: dict) -> str:
    sets = [d for d, v in datasets.items() if v[0] == regime]
    return (f"{'Short-range' if regime == 'short' else 'Long-tailed'} histograms "
            f"({', '.join(sets)})")


def _wins(results: dict, methods: list[str], datasets: dict, regime: str) -> list[str]:
    """Cells won and the mean ratio to each cell's best, per privatizer."""
    names = list(POSTPROCESSORS)
    lines = ["Cells won (least mean error; every method within 1e-9 of the least shares the "
             "win; ties, where all coincide, counted apart) and the mean over cells of the "
             "ratio of the mean error to the cell's best:", "",
             "| privatizer | ties | " + " | ".join(f"{k}: wins, ratio" for k in names) + " |",
             "|---|---|" + "---|" * len(names)]
    for method in methods:
        wins = dict.fromkeys([*names, "tie"], 0)
        ratios = {k: [] for k in names}
        for key in _keys(results, method, datasets, regime):
            means = {k: results[key][k].mean() for k in names}
            best = min(means.values())
            winners = _winners(results[key])
            for k in (["tie"] if len(winners) == len(names) else winners):
                wins[k] += 1
            for k in names:
                ratios[k].append(means[k] / best if best > 0 else 1.0)
        lines.append(f"| {method} | {wins['tie']} | " + " | ".join(
            f"{wins[k]}, {np.mean(ratios[k]):.3f}" for k in names) + " |")
    return lines


def _against_former(results: dict, methods: list[str], datasets: dict, regime: str,
                    what: str) -> list[str]:
    """The offset fit against the plain isotonic fit (the first two of POSTPROCESSORS), per
    cell: the measurement behind each privatizer's default."""
    names = list(POSTPROCESSORS)
    default, former = names[0], names[1]
    lines = [f"`{default}` against `{former}`, {what} (paired, per cell): cells where every "
             "release gives the same value, cells "
             "significantly better / worse (the 95% CI of the paired difference excludes 0; "
             "the worse ones named when at most 6), "
             f"the mean over cells of the ratio `{default}` / `{former}` of means (cells "
             "where both are 0 left out), and the cells of least and greatest ratio:", "",
             "| privatizer | identical | better | worse | mean ratio | least ratio "
             "| greatest ratio |", "|---|---|---|---|---|---|---|"]
    for method in methods:
        same = better = 0
        worse = []
        ratio = {}
        for key in _keys(results, method, datasets, regime):
            a, b = results[key][default], results[key][former]
            same += bool(np.all(np.abs(a - b) <= 1e-12 * np.maximum(np.abs(b), 1e-300)))
            mean, half = _paired(a.copy(), b)
            better += bool(mean + half < 0)
            if mean - half > 0:
                worse.append(f"{key[1]} {key[2]:g}")
            if b.mean() > 0:
                ratio[key] = a.mean() / b.mean()
        if ratio:
            lo, hi = min(ratio, key=ratio.get), max(ratio, key=ratio.get)
            spread = (f"{np.mean(list(ratio.values())):.3f} | {ratio[lo]:.3f} ({lo[1]}, "
                      f"{lo[2]:g}) | {ratio[hi]:.3f} ({hi[1]}, {hi[2]:g})")
        else:
            spread = "- | - | -"
        named = f" ({', '.join(worse)})" if 0 < len(worse) <= 6 else ""
        lines.append(f"| {method} | {same} | {better} | {len(worse)}{named} | {spread} |")
    return lines


def own_default(method: str) -> str:
    """The privatizer's own default post-processing (what ``postprocess=None`` picks)."""
    return inspect.signature(PRIVATIZERS[method]).parameters["postprocess"].default


def _paired_list(results: dict, methods: list[str], datasets: dict, regime: str) -> list[str]:
    names = list(POSTPROCESSORS)
    lines = ["Paired differences (row's error minus that of the privatizer's own default, "
             "mean and 95% CI; negative favours the row), cells where the CI excludes 0:", ""]
    for method in methods:
        keys = _keys(results, method, datasets, regime)
        default = own_default(method)
        for k in (name for name in names if name != default):
            better = worse = 0
            for key in keys:
                mean, half = _paired(results[key][k].copy(), results[key][default])
                better += bool(mean + half < 0)
                worse += bool(mean - half > 0)
            lines.append(f"- {method}: {k} significantly better than {default} in "
                         f"{better}, worse in {worse} of {len(keys)}")
    return lines


def summary(results: dict, floors: dict, methods: list[str], datasets: dict,
            metric: str = "W1") -> str:
    """Per regime: wins and mean ratio to the best, the default against the former one (the
    error and the :func:`support_floor`), and paired differences against the default."""
    lines = []
    for regime in (r for r in REGIMES if any(v[0] == r for v in datasets.values())):
        lines += [f"#### {_regime_title(regime, datasets)}", "",
                  *_wins(results, methods, datasets, regime), "",
                  *_against_former(results, methods, datasets, regime, metric), "",
                  *_against_former(floors, methods, datasets, regime,
                                   "the count-error floor (support_floor)"), "",
                  *_paired_list(results, methods, datasets, regime), ""]
    return "\n".join(lines)


def floor_table(floors: dict, method: str, datasets: dict) -> str:
    """Mean :func:`support_floor` of every post-processing for one privatizer, per cell of the
    long-tailed sets."""
    names = list(POSTPROCESSORS)
    lines = ["| data set | n | eps_1 | " + " | ".join(names) + " |",
             "|---|---|---|" + "---|" * len(names)]
    for (m, dname, eps), cell in floors.items():
        if m == method and datasets[dname][0] == "long":
            lines.append(f"| {dname} | {len(datasets[dname][1])} | {eps:g} | " + " | ".join(
                ci(cell[k]) for k in names) + " |")
    return "\n".join(lines)


def privatizer_table(results: dict, methods: list[str]) -> str:
    """Mean error of every privatizer under its own default post-processing, per cell."""
    cells = list(dict.fromkeys((k[1], k[2]) for k in results))
    lines = ["| data set | eps_1 | " + " | ".join(methods) + " |",
             "|---|---|" + "---|" * len(methods)]
    for dname, eps in cells:
        means = {m: results[(m, dname, eps)][own_default(m)].mean() for m in methods}
        pure = [m for m in methods if m != "cyclic-gaussian"]
        best = min(pure, key=means.get) if pure else None
        lines.append(f"| {dname} | {eps:g} | " + " | ".join(
            f"**{means[m]:.4f}**" if m == best else f"{means[m]:.4f}" for m in methods) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=200, help="releases per cell (>= 50)")
    parser.add_argument("--methods", nargs="+", default=list(PRIVATIZERS),
                        choices=list(PRIVATIZERS))
    parser.add_argument("--sets", choices=["all", *REGIMES], default="all",
                        help="short-range histograms, long-tailed ones, or both (default)")
    parser.add_argument("--metric", choices=list(METRICS), default="w1",
                        help="distribution error (default Wasserstein-1)")
    parser.add_argument("--write", metavar="FILE", help="Markdown file with bench markers")
    args = parser.parse_args(argv)
    if args.reps < 2:
        parser.error("--reps must be at least 2")
    start = time.perf_counter()
    tables, results, floors, datasets = run(args.reps, args.methods, METRICS[args.metric],
                                            args.sets)
    default = next(iter(POSTPROCESSORS))
    metric = args.metric.upper()
    pipeline = "cyclic-laplace"
    floor_section = (
        f"### The count-error floor on the long-tailed sets ({pipeline}; support_floor: "
        f"mean ± 95% CI, in counts)\n\n{floor_table(floors, pipeline, datasets)}\n\n"
        if pipeline in args.methods and any(v[0] == "long" for v in datasets.values())
        else "")
    text = (f"{args.reps} paired releases per cell, seeded (secure=False), "
            f"post-processings in the order of POSTPROCESSORS; {metric} "
            f"mean ± 95% CI, the best in bold.\n\n"
            f"### Summary\n\n{summary(results, floors, args.methods, datasets, metric)}\n"
            f"### Privatizers compared (each under its own default post-processing: "
            f"`{default}` for the cyclic ones, `{NONCYCLIC_POSTPROCESS}` for the others; "
            f"bold: the best pure-DP one; cyclic-gaussian is (eps, 1/(N+1))-DP)\n\n"
            f"{privatizer_table(results, args.methods)}\n\n{floor_section}"
            f"### Tables\n{tables}\n\n(run time {time.perf_counter() - start:.0f} s)\n")
    print(text)
    if args.write:
        path = Path(args.write)
        doc = path.read_text()
        if START not in doc or END not in doc:
            raise SystemExit(f"{path}: missing the {START} / {END} markers")
        head, rest = doc.split(START, 1)
        path.write_text(head + START + "\n" + text + END + rest.split(END, 1)[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
