"""Benchmark: what the private bound's landing costs, and the targets on releases the best
fixed bound was not chosen on (docs/bounds.md section 3).

The rules of :data:`dpfix.experiments.bounds.LANDING_METHODS` (``upper="auto"``, the former
default, the default without its margin, and the default with the penalties 1/8 and 3/8)
against the release at the largest count itself paying the default's share
(:data:`LANDING_REFERENCE`, not private), and
the study's best fixed bound in hindsight (chosen on the base seed 0, read from
``docs/figures/bounds.csv``), on every case of the bounds study, with 20 releases at each
of the base seeds 0, 1 and 2: 60 paired releases per case, three times the study's, so
that what the landing costs is told apart from the spread of 20 medians. Cells are cached
in ``--out`` (with the base seed 0 they are cells of ``dpfix reproduce bounds``: give its
folder to reuse them).

Printed and stored: per rule, the median and the largest over the 47 cases of the ratios
of the median ``w1``, the median and the 90th percentile of ``ce`` to the reference's, and
the cases above 1.05 and 1.1; per case, the ratios of ``w1`` and the share of the bounds
drawn below the largest count; and the cases meeting the study's three targets against the
best fixed bound's releases at the same seeds (:func:`landing_targets`): at each base seed
(``met_seed0`` is the study's own count) and over all 60 releases (``met_all``).

What 20 releases resolve (:mod:`dpfix.experiments.resolution`): per rule, the cases whose
paired 95 % bootstrap intervals of the three ratios to the best fixed bound's lie above a
target (``miss_resolved``: a miss beyond the sampling error) or within every target
(``met_resolved``), over all 60 releases and over the study's own 20 (base seed 0), with the
intervals per case of ``auto`` and the reference (``intervals``, ``intervals_seed0``); and
the best fixed bound's 20 releases at each base seed measured by the targets against its own
at each other seed (``fixed_against_itself``: every ratio is 1 in law, so what it misses is
the medians' sampling error alone).

``seconds`` is this run's wall time (cached cells cost
nothing), ``cell_seconds`` the sum of the seconds each cell took to compute. Writes
``benchmarks/results/bounds_landing.json``. Run: ``python benchmarks/bench_bounds_landing.py
[--quick] [--jobs J] [--out DIR]`` (``--quick``: the three data sets of the study's quick
run, 5 releases per seed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from dpfix.experiments.bounds import (
    LANDING_METHODS,
    LANDING_REFERENCE,
    LANDING_SEEDS,
    QUICK_DATASETS,
    landing_cells,
    landing_summary,
    landing_targets,
)
from dpfix.experiments.cells import CellCache, run_cells
from dpfix.experiments.resolution import fixed_against_itself, paired_intervals

RESULTS = Path(__file__).resolve().parent / "results" / "bounds_landing.json"
STUDY = Path(__file__).resolve().parents[1] / "docs" / "figures" / "bounds.csv"


def _best() -> dict[tuple[str, float], int]:
    """The study's best fixed bound per case, as ``docs/figures/bounds.csv`` records it."""
    import pandas as pd

    auto = pd.read_csv(STUDY).query("method == 'auto'")
    return {(d, float(e)): int(b)
            for d, e, b in zip(auto.dataset, auto.eps, auto.best_fixed, strict=True)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="the study's three quick data sets, 5 releases per seed")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", default=os.path.join("out", "bounds"),
                        help="the folder whose cells.jsonl caches the cells")
    args = parser.parse_args()
    start = time.perf_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cells = landing_cells(replications=5, datasets=QUICK_DATASETS, best=_best()) \
        if args.quick else landing_cells(best=_best())
    cache = CellCache(out / "cells.jsonl")
    results, computed = run_cells(cells, cache, jobs=args.jobs, desc="landing")
    seconds = time.perf_counter() - start
    # what the cells took to compute, cached or not
    cell_seconds = sum(float(cache.get(c).get("cell_seconds", 0.0)) for c in cells)
    table = landing_summary(cells, results)
    met = landing_targets(cells, results)
    intervals = paired_intervals(cells, results)
    study = [i for i, c in enumerate(cells) if c["seed"] == 0]
    intervals0 = paired_intervals([cells[i] for i in study], [results[i] for i in study])
    itself = fixed_against_itself(cells, results)
    rows = []
    for method in LANDING_METHODS:
        part = table[table.method == method]
        rows.append({"method": method, "cases": len(part),
                     **{f"{stat}_{col}": float(getattr(part[col], stat)())
                        for col in ("w1_ratio", "ce_ratio", "p90_ratio")
                        for stat in ("median", "max")},
                     "w1_above_1.05": int((part.w1_ratio > 1.05).sum()),
                     "w1_above_1.1": int((part.w1_ratio > 1.1).sum()),
                     "below_mean": float(part.below.mean()),
                     **{("met_all" if s < 0 else f"met_seed{s}"): int(m)
                        for s, m in zip(met.seed[met.method == method],
                                        met.met[met.method == method], strict=True)},
                     **{f"{col}_{name}": int(part_i[col].sum())
                        for name, part_i in (("all", intervals[intervals.method == method]),
                                             ("seed0", intervals0[intervals0.method == method]))
                        for col in ("miss_resolved", "met_resolved")}})
        print(rows[-1], flush=True)
    print(itself.round(3).to_string(index=False))
    wide = table.pivot_table(index=["dataset", "eps"], columns="method",
                             values=["w1_ratio", "below"])
    print(wide.round(3).to_string())
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({
        "machine": platform.platform(), "cpus": os.cpu_count(), "jobs": args.jobs,
        "quick": args.quick, "seeds": list(LANDING_SEEDS), "reference": LANDING_REFERENCE,
        "seconds": seconds, "cell_seconds": cell_seconds, "cells": len(cells),
        "computed": computed,
        "methods": rows, "cases": table.to_dict(orient="records"),
        **{name: part[part.method.isin(["auto", LANDING_REFERENCE])].round(4)
           .to_dict(orient="records")
           for name, part in (("intervals", intervals), ("intervals_seed0", intervals0))},
        "fixed_against_itself": itself.to_dict(orient="records")}, indent=1,
        default=lambda v: v.item() if hasattr(v, "item") else str(v)))


if __name__ == "__main__":
    main()
