"""Which post-processing turns a noisy histogram into the best target ``z``?

For every data set of ``../shared/data`` (``$DPFIX_DATA``), every privatizer
and every ``eps_1`` in {0.1, 0.3, 1, 3}, draw ``--reps`` seeded releases
(``secure=False``, reproducible) and post-process each *same* noisy vector with
every method of ``dpfix.release.privatizers.POSTPROCESSORS``: a paired comparison. The
error is the Wasserstein-1 distance to the true ``zeta``
(``dpfix.theory.metrics.wasserstein1``). Prints Markdown tables (mean and 95% CI,
``1.96 sd / sqrt(reps)``) and, with ``--write FILE``, puts them between the
``<!-- bench:start -->`` and ``<!-- bench:end -->`` markers of FILE.

    .venv/bin/python benchmarks/bench_postprocess.py --reps 200 --write docs/postprocessing.md
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from dpfix.release.privatizers import POSTPROCESSORS, PRIVATIZERS, privatize_distribution
from dpfix.theory.metrics import kolmogorov_smirnov, total_variation, wasserstein1

EPSILONS = (0.1, 0.3, 1.0, 3.0)
SYNTHETIC = ("uniform", "left-skewed", "right-skewed", "bimodal", "top-inflated",
             "zero-inflated")
START, END = "<!-- bench:start -->", "<!-- bench:end -->"
METRICS = {"w1": wasserstein1, "ks": kolmogorov_smirnov, "tv": total_variation}


def data_dir() -> Path:
    """``$DPFIX_DATA``, else ``../shared/data`` beside the repository."""
    env = os.environ.get("DPFIX_DATA")
    path = Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "data"
    if not path.is_dir():
        raise FileNotFoundError(f"data folder {path} not found; set DPFIX_DATA")
    return path


def _histogram_file(path: Path) -> np.ndarray:
    """Rows ``count,number`` (a header line such as ``,0`` is skipped)."""
    pairs = []
    with path.open(newline="", encoding="utf-8-sig") as fh:
        for row in csv.reader(fh):
            if len(row) == 2 and row[0].strip().isdigit():
                pairs.append((int(row[0]), int(row[1])))
    eta = np.zeros(max(i for i, _ in pairs) + 1, dtype=np.int64)
    for i, count in pairs:
        eta[i] += count
    return eta


def load_datasets(folder: Path) -> dict[str, np.ndarray]:
    """Histograms: crime (MURDER top-coded at 50, n = 51), binomial (n = 21), synthetic."""
    with (folder / "crime_data.csv").open(newline="", encoding="utf-8-sig") as fh:
        murders = np.array([int(row["MURDER"]) for row in csv.DictReader(fh)])
    out = {"crime": np.bincount(np.minimum(murders, 50), minlength=51),
           "binomial": _histogram_file(folder / "binom_hist_data.csv")}
    for name in SYNTHETIC:
        out[name] = _histogram_file(folder / f"{name}_hist.csv")
    return out


def measure(eta: np.ndarray, method: str, eps: float, reps: int, seed: np.random.SeedSequence,
            metric=wasserstein1) -> dict[str, np.ndarray]:
    """Errors (W1 by default) of every post-processing on ``reps`` paired releases."""
    zeta = eta / eta.sum()
    rng = np.random.default_rng(seed)
    extra = {"delta": 1.0 / (eta.sum() + 1)} if method == "cyclic-gaussian" else {}
    errors = {name: np.empty(reps) for name in POSTPROCESSORS}
    for r in range(reps):
        out = privatize_distribution(eta, eps, privatizer=method, seed=rng, secure=False, **extra)
        v = out.raw / out.N
        for name, function in POSTPROCESSORS.items():
            errors[name][r] = metric(function(v), zeta)
    return errors


def _best(errs: dict[str, np.ndarray]) -> str:
    """The post-processing of least mean error, or ``"tie"`` when all agree to 1e-9."""
    means = {k: v.mean() for k, v in errs.items()}
    best = min(means, key=means.get)
    if max(means.values()) - means[best] <= 1e-9 * means[best]:
        return "tie"
    return best


def ci(x: np.ndarray) -> str:
    half = 1.96 * x.std(ddof=1) / math.sqrt(len(x))
    return f"{x.mean():.4f} ± {half:.4f}"


def run(reps: int, methods: list[str], metric=wasserstein1) -> tuple[str, dict]:
    datasets = load_datasets(data_dir())
    root = np.random.SeedSequence(20260101)
    names = list(POSTPROCESSORS)
    results: dict = {}
    lines = []
    for method in methods:
        lines += [f"\n### {method}\n",
                  "| data set | n | N | eps_1 | " + " | ".join(names) + " | best |",
                  "|---|---|---|---|" + "---|" * len(names) + "---|"]
        for d, (dname, eta) in enumerate(datasets.items()):
            for e, eps in enumerate(EPSILONS):
                key = (method, dname, eps)
                seed = np.random.SeedSequence(root.entropy,
                                              spawn_key=(methods.index(method), d, e))
                errs = measure(eta, method, eps, reps, seed, metric)
                results[key] = errs
                best = _best(errs)
                cells = [f"**{ci(errs[k])}**" if k == best else ci(errs[k]) for k in names]
                lines.append(f"| {dname} | {len(eta)} | {eta.sum()} | {eps:g} | "
                             + " | ".join(cells) + f" | {best} |")
    return "\n".join(lines), results


def summary(results: dict, methods: list[str]) -> str:
    """Per privatizer: wins, mean ratio to the best, paired differences against the winner."""
    names = list(POSTPROCESSORS)
    lines = ["Cells won (least mean error; ties, where no release had a negative cell "
             "and all coincide, counted apart) and the mean over cells of the ratio of "
             "the mean error to the cell's best:", "",
             "| privatizer | ties | " + " | ".join(f"{k}: wins, ratio" for k in names)
             + " |", "|---|---|" + "---|" * len(names)]
    for method in methods:
        keys = [k for k in results if k[0] == method]
        wins = dict.fromkeys([*names, "tie"], 0)
        ratios = {k: [] for k in names}
        for key in keys:
            means = {k: results[key][k].mean() for k in names}
            best = min(means.values())
            wins[_best(results[key])] += 1
            for k in names:
                ratios[k].append(means[k] / best)
        lines.append(f"| {method} | {wins['tie']} | " + " | ".join(
            f"{wins[k]}, {np.mean(ratios[k]):.3f}" for k in names) + " |")
    lines += ["", "Paired differences (row's error minus the default's, mean and 95% CI; "
              "negative favours the row), cells where the CI excludes 0:", ""]
    default = names[0]
    for method in methods:
        for k in names[1:]:
            better = worse = 0
            for key in (x for x in results if x[0] == method):
                diff = results[key][k] - results[key][default]
                diff[np.abs(diff) <= 1e-12] = 0.0  # float rounding of identical answers
                half = 1.96 * diff.std(ddof=1) / math.sqrt(len(diff))
                better += bool(diff.mean() + half < 0)
                worse += bool(diff.mean() - half > 0)
            lines.append(f"- {method}: {k} significantly better than {default} in {better}, "
                         f"worse in {worse} of {sum(1 for x in results if x[0] == method)}")
    return "\n".join(lines)


def privatizer_table(results: dict, methods: list[str]) -> str:
    """Mean error of every privatizer under the default post-processing, per cell."""
    default = next(iter(POSTPROCESSORS))
    cells = sorted({(k[1], k[2]) for k in results}, key=lambda c: (list(
        dict.fromkeys(k[1] for k in results)).index(c[0]), c[1]))
    lines = ["| data set | eps_1 | " + " | ".join(methods) + " |",
             "|---|---|" + "---|" * len(methods)]
    for dname, eps in cells:
        means = {m: results[(m, dname, eps)][default].mean() for m in methods}
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
    parser.add_argument("--metric", choices=list(METRICS), default="w1",
                        help="distribution error (default Wasserstein-1)")
    parser.add_argument("--write", metavar="FILE", help="Markdown file with bench markers")
    args = parser.parse_args(argv)
    if args.reps < 2:
        parser.error("--reps must be at least 2")
    start = time.perf_counter()
    tables, results = run(args.reps, args.methods, METRICS[args.metric])
    text = (f"{args.reps} paired releases per cell, seeded (secure=False), "
            f"post-processings in the order of POSTPROCESSORS; {args.metric.upper()} "
            f"mean ± 95% CI, "
            f"the best in bold.\n\n## Summary\n\n{summary(results, args.methods)}\n\n"
            f"## Privatizers compared (default post-processing `{next(iter(POSTPROCESSORS))}`; "
            f"bold: the best pure-DP one; cyclic-gaussian is (eps, 1/(N+1))-DP)\n\n"
            f"{privatizer_table(results, args.methods)}\n\n"
            f"## Tables\n{tables}\n\n(run time {time.perf_counter() - start:.0f} s)\n")
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
