"""Benchmark: a table released in one call (``dpfix.release.table.privatize_table``).

Measures, side by side in one run (medians of interleaved repeats, wall-clock seconds):

- the float floor: numpy float Laplace noise of scale ``1/eps`` (numpy's PCG64: insecure,
  no accounting) added to the same column, rounded and clipped to ``0 .. upper``, what
  a release of the counts costs at the least;
- ``privatize_counts`` on one column of N = 10^7 rows, upper = 50, eps = 1, secure
  randomness (no seed: OpenDP's samplers in stage 1, the secure source of
  :mod:`dpfix.sampling` in stage 2);
- ``privatize_table`` on the same column as a one-column DataFrame, rows in the input's
  order (the same work plus the policy, the report and the released DataFrame), and
  with its default order (a secure random permutation of the rows);
- the secure random permutation of the N rows alone (``RandomSource.permutation``), and
  the secure shuffle of the column alone (``RandomSource.shuffle``: its values sorted with
  the permutation's words, what the shuffled order of a table of privatized columns
  alone costs);
- the peak memory (``ru_maxrss`` of a fresh process) of ``privatize_table`` on a CSV
  file of N rows (a key and a count), for N growing: whether it is flat in N.

Each variant runs once untimed first (imports, OpenDP, the process's first touch of its
memory), then the timed repeats. Each variant's median is printed with its ratio to the
float floor's median of the same run, and the machine's load average
(``os.getloadavg``) before and after, since other jobs on the machine slow every variant
alike. Writes ``benchmarks/results/release.json``.
Run: ``python benchmarks/bench_release.py [--quick] [--no-memory]`` (``--quick``: 10^6
rows, fewer sizes; ``--no-memory``: the side-by-side timings only).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dpfix.release.pipeline import privatize_counts
from dpfix.release.table import privatize_table
from dpfix.sampling import random_source

RESULTS = Path(__file__).resolve().parent / "results" / "release.json"


def table(N: int, upper: int = 50, seed: int = 0) -> np.ndarray:
    """A zero-inflated negative binomial column (the recipe of bench_pipeline.py)."""
    rng = np.random.default_rng(seed)
    d = rng.negative_binomial(2, 0.25, size=N) * max(1, upper // 50)
    d[rng.random(N) < 0.35] = 0
    return d


def float_floor(d: np.ndarray, eps: float, upper: int, rng: np.random.Generator) -> np.ndarray:
    """The floor: ``clip(rint(d + Laplace(1/eps)), 0, upper)`` in numpy floats (insecure)."""
    noisy = d + rng.laplace(0.0, 1.0 / eps, d.size)
    np.rint(noisy, out=noisy)
    np.clip(noisy, 0, upper, out=noisy)
    return noisy.astype(np.int64)


def bench_side_by_side(N: int, repeats: int) -> dict:
    d = table(N)
    frame = pd.DataFrame({"k": d})
    rng = np.random.default_rng()
    runs = {
        "float floor (numpy Laplace, clipped)": lambda: float_floor(d, 1.0, 50, rng),
        "privatize_counts": lambda: privatize_counts(d, 1.0, upper=50),
        "privatize_table (order input)": lambda: privatize_table(frame, "k", 1.0, upper=50,
                                                                 order="input"),
        "privatize_table (shuffled)": lambda: privatize_table(frame, "k", 1.0, upper=50),
        "secure permutation alone": lambda: random_source(None).permutation(N),
        "secure shuffle of the column alone": lambda: random_source(None).shuffle(d),
    }
    for run in runs.values():  # warm-up, untimed: imports, OpenDP, the first touch of memory
        run()
    load_before = os.getloadavg()
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(repeats):  # interleaved: the machine's load hits every variant alike
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    med = {k: statistics.median(v) for k, v in times.items()}
    floor = med["float floor (numpy Laplace, clipped)"]
    base = med["privatize_counts"]
    return {"N": N, "upper": 50, "eps": 1.0, "randomness": "secure (no seed)",
            "source": random_source(None).description,
            "load_average_before": load_before, "load_average_after": os.getloadavg(),
            "median_s": med, "ratio_to_float_floor": {k: v / floor for k, v in med.items()},
            "ratio_to_privatize_counts": {k: v / base for k, v in med.items()},
            "times": times}


_CHILD = """
import resource, sys, time
from dpfix.release.table import privatize_table
from dpfix.sampling import random_source
start = time.perf_counter()
r = privatize_table(sys.argv[1], "k", 1.0, upper=50, keys=["id"], order="input")
print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def bench_memory(sizes: list[int]) -> list[dict]:
    """Peak resident memory of one privatize_table run on a CSV file, per N."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for N in sizes:
            path = Path(folder) / f"t{N}.csv"
            pd.DataFrame({"id": np.arange(N), "k": table(N)}).to_csv(path, index=False)
            out = subprocess.run([sys.executable, "-c", _CHILD, str(path)], check=True,
                                 capture_output=True, text=True).stdout.split()
            seconds, kib = float(out[0]), int(out[1])
            rows.append({"N": N, "file_mb": path.stat().st_size / 1e6, "seconds": seconds,
                         "peak_rss_mb": kib / 1024, "bytes_per_row": kib * 1024 / N})
            path.unlink()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^6 rows, fewer sizes")
    parser.add_argument("--no-memory", action="store_true",
                        help="the side-by-side timings only (no CSV files, no subprocesses)")
    args = parser.parse_args()
    N = 10**6 if args.quick else 10**7
    side = bench_side_by_side(N, 3 if args.quick else 5)
    memory = [] if args.no_memory else \
        bench_memory([10**5, 10**6] if args.quick else [10**6, 3 * 10**6, 10**7])
    result = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                          "platform": platform.platform()},
              "side_by_side": side, "csv_memory": memory}
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    k = len(side["times"]["privatize_counts"])
    load = ", ".join(f"{x:.2f}" for x in side["load_average_before"])
    print(f"N = {N}, upper 50, eps 1, secure randomness (medians of {k}; load average "
          f"{load} before)")
    print(f"  {'':38s} {'median':>9s}  {'/ floor':>8s}")
    for name, s in side["median_s"].items():
        print(f"  {name:38s} {s:7.3f} s  x{side['ratio_to_float_floor'][name]:7.2f}")
    if memory:
        print("privatize_table on a CSV file: peak memory against N")
    for row in memory:
        print(f"  N = {row['N']:>10,d}  {row['file_mb']:7.1f} MB file  {row['seconds']:6.1f} s  "
              f"{row['peak_rss_mb']:8.1f} MB peak  {row['bytes_per_row']:6.0f} B/row")


if __name__ == "__main__":
    main()
