"""Benchmark: the two-stage pipeline on large tables (``dpfix.release.pipeline``).

Measures (medians of repeated runs, wall-clock seconds):

- ``privatize_counts`` end to end (heuristic, best selector, eps_t = 1,
  seeded) on N = 10^5, 10^6, 10^7 rows with upper = 50, with its phases
  (stage 1, construction of T, drawing the rows);
- ``apply_mechanism`` alone at N = 10^7 for n = 51 and n = 501, and the
  time per row across N (``O(N + n^2)``: the time per row should be flat in N).

The rows are a zero-inflated negative binomial (``dpfix.io.data.synthetic_counts``'s
recipe at size N). Writes ``benchmarks/results/pipeline.json`` and prints a
table. Run: ``python benchmarks/bench_pipeline.py [--quick]`` (``--quick``
stops at 10^6 rows).
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

from dpfix.constructors import heuristic
from dpfix.release.frameworks import apply_mechanism
from dpfix.release.pipeline import privatize_counts

RESULTS = Path(__file__).resolve().parent / "results" / "pipeline.json"


def table(N: int, upper: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    d = rng.negative_binomial(2, 0.25, size=N) * max(1, upper // 50)
    d[rng.random(N) < 0.35] = 0
    return d


def bench_pipeline(sizes: list[int], repeats: int) -> list[dict]:
    rows = []
    privatize_counts(table(1000, 50), 1.0, upper=50, seed=0)  # JIT warm-up
    for N in sizes:
        d = table(N, 50)
        runs = []
        for r in range(repeats if N < 10**7 else max(3, repeats // 2)):
            start = time.perf_counter()
            res = privatize_counts(d, 1.0, upper=50, seed=r)
            runs.append({"total": time.perf_counter() - start, **res.seconds})
        med = {k: statistics.median(run[k] for run in runs) for k in runs[0]}
        rows.append({"what": "privatize_counts", "N": N, "n": 51, "median_s": med,
                     "times_total": [run["total"] for run in runs]})
    return rows


def bench_apply(sizes: list[int], repeats: int) -> list[dict]:
    rows = []
    for n in (51, 501):
        z = np.bincount(np.minimum(table(10**6, n - 1), n - 1), minlength=n) / 10**6
        mech = heuristic(z, 0.8, selector="sandwich")
        for N in sizes:
            d = np.minimum(table(N, n - 1), n - 1)
            times = []
            for r in range(repeats if N < 10**7 else max(3, repeats // 2)):
                rng = np.random.default_rng(r)
                start = time.perf_counter()
                apply_mechanism(mech, d, rng)
                times.append(time.perf_counter() - start)
            med = statistics.median(times)
            rows.append({"what": "apply_mechanism", "N": N, "n": n, "median_s": med,
                         "ns_per_row": 1e9 * med / N, "times": times})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="stop at 10^6 rows")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    sizes = [10**5, 10**6] + ([] if args.quick else [10**7])
    out = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                       "loadavg_start": list(os.getloadavg())},
           "quick": args.quick}
    out["pipeline"] = bench_pipeline(sizes, args.repeats)
    out["apply"] = bench_apply(sizes, args.repeats)
    out["machine"]["loadavg_end"] = list(os.getloadavg())
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")
    print("| what | N | n | median s | phases (s) |")
    print("|---|---|---|---|---|")
    for row in out["pipeline"]:
        m = row["median_s"]
        phases = ", ".join(f"{k} {v:.3f}" for k, v in m.items() if k != "total")
        print(f"| privatize_counts | {row['N']:,} | {row['n']} | {m['total']:.3f} | {phases} |")
    for row in out["apply"]:
        print(f"| apply_mechanism | {row['N']:,} | {row['n']} | {row['median_s']:.3f} | "
              f"{row['ns_per_row']:.0f} ns/row |")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
