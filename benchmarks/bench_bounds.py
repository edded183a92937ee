"""Benchmark: the bounds study and the speed of the private bound (docs/bounds.md).

- ``study``: ``dpfix reproduce bounds`` (:mod:`dpfix.experiments.bounds`): every rule of
  ``upper="auto"`` against the best fixed bound in hindsight, on the eight count columns
  of the county data and the seven histograms at eps in {0.3, 1, 3} (and 0.5 on MURDER
  and RAPE), 20 releases per cell (``--quick``: 3 data sets, 5 releases). Cells are
  cached in ``--out`` (a rerun computes only the missing ones). Printed and stored: the
  per-method summary (how many cases meet all three targets, the worst ratios) and
  ``upper="auto"``'s ratios per data set and eps;
- ``draw``: seconds per bound drawn by :func:`dpfix.release.bounds.choose_upper` (the
  loss rule; median of repeats) on the county homicides (rows) and on a histogram of
  ``10^12`` rows, at ``eps_upper`` from 0.003 to 0.15: the exact sampler's proposal
  resolves ``24 / eps_upper`` levels of the score in integers.

``study_seconds`` is this run's wall time (the cached cells cost nothing), and
``study_cell_seconds`` the sum of the seconds each cell of the study took to compute.

Writes ``benchmarks/results/bounds.json``. Run:
``python benchmarks/bench_bounds.py [--quick] [--jobs J] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

from dpfix.experiments import make_config
from dpfix.experiments.bounds import bound_counts, bounds_cells, share_report
from dpfix.experiments.cells import key_id
from dpfix.experiments.targets import reproduce
from dpfix.release.bounds import UPPER_MAX, UPPER_SHARE, choose_upper

RESULTS = Path(__file__).resolve().parent / "results" / "bounds.json"


def _draws(reps: int) -> list[dict]:
    murder = np.asarray(bound_counts("crime:MURDER"))
    eta = np.zeros(400, dtype=np.int64)
    eta[:300] = np.random.default_rng(0).multinomial(10**12, np.full(300, 1 / 300))
    rows = []
    for eps in (0.003, 0.015, 0.05, 0.15):
        for name, kw in (("MURDER rows", {"counts": murder}),
                         ("histogram of 10^12 rows", {"histogram": eta})):
            times = []
            for seed in range(reps):
                start = time.perf_counter()
                choose_upper(eps=eps, seed=seed, **kw)
                times.append(time.perf_counter() - start)
            rows.append({"eps_upper": eps, "input": name,
                         "seconds_per_draw": statistics.median(times)})
            print(rows[-1], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 data sets, 5 releases")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", default=os.path.join("out", "bounds"),
                        help="the study's folder (cells cached there)")
    args = parser.parse_args()
    start = time.perf_counter()
    cfg = make_config(quick=args.quick)
    reproduce(["bounds"], cfg, args.out, jobs=args.jobs, quiet=True)
    seconds = time.perf_counter() - start
    import pandas as pd

    table = pd.read_csv(Path(args.out) / "bounds.csv")
    wanted = {key_id(k) for k in bounds_cells(cfg.quick, cfg.bounds_replications, cfg.seed)}
    seconds_of = {}  # what the study's cells took to compute, cached or not
    for line in (Path(args.out) / "cells.jsonl").read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if key_id(row["key"]) in wanted:
            seconds_of[key_id(row["key"])] = float(row["result"].get("cell_seconds", 0.0))
    cell_seconds = sum(seconds_of.values())
    summary = share_report(table)
    print(summary.to_string(index=False))
    auto = table[table.method == "auto"]
    cols = ["dataset", "eps", "best_fixed", "ce_median_ratio", "ce_p90_ratio",
            "w1_median_ratio", "upper_min", "upper_max", "met"]
    print(auto[cols].to_string(index=False))
    draws = _draws(3 if args.quick else 9)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({
        "machine": platform.platform(), "cpus": os.cpu_count(), "jobs": args.jobs,
        "quick": args.quick, "default_share": UPPER_SHARE, "default_max": UPPER_MAX,
        "study_seconds": seconds, "study_cell_seconds": cell_seconds,
        "methods": summary.to_dict(orient="records"),
        "auto": auto[cols].to_dict(orient="records"), "draw": draws}, indent=1,
        default=lambda v: v.item() if hasattr(v, "item") else str(v)))


if __name__ == "__main__":
    main()
