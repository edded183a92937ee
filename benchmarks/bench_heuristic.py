"""Benchmark: Algorithm 1 (the heuristic fixed-point constructor) from n = 500 to 10,000.

Uniform ``z``, ``eps = 1``, sandwich selector. For each n, the median of
``--repeats`` runs (wall-clock seconds, after one warm-up that loads the
compiled kernel) of

- ``heuristic(z, eps)``: the whole public call, with its final
  ``Mechanism.check()`` (rows sum to 1, ``z T = z``, eps-DP, on all n^2
  entries);
- ``construct``: Algorithm 1 alone (``dpfix.constructors._heuristic_kernel.run``),
  without building and checking the Mechanism;
- ``numpy``: the same without numba (the vectorised path), for n <= 2,000.

Also the CPU time of each (``time.process_time``), steadier than wall-clock on a
shared machine. Prints a table and the log-log slopes fitted from n = 500 to
10,000 (Algorithm 1 is O(n^2): slope near 2), and writes
``benchmarks/results/heuristic.json``.
Run: ``python benchmarks/bench_heuristic.py [--repeats 3] [--quick]``.
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

from dpfix.constructors._heuristic_kernel import HAVE_NUMBA, LogOps, run
from dpfix.constructors.heuristic import _selector, heuristic

RESULTS = Path(__file__).resolve().parent / "results" / "heuristic.json"
EPS = 1.0
SIZES = (500, 1_000, 2_000, 5_000, 10_000)
NUMPY_MAX_N = 2_000
TARGETS = {2_000: 0.25, 10_000: 5.0}  # seconds, for heuristic(z, eps) (the brief)


def _construct(z: np.ndarray, compiled: bool) -> None:
    ops = LogOps(EPS, z)
    run(ops, len(z), _selector("sandwich", z, ops, None), compiled)


def _median(repeats: int, fn, *args) -> tuple[float, float, list[float]]:
    """Median wall-clock and CPU seconds (CPU time is less disturbed by other
    processes on a shared machine), and the wall-clock times."""
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        fn(*args)
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return statistics.median(walls), statistics.median(cpus), walls


def _slope(ns: list[int], ts: list[float]) -> float:
    return float(np.polyfit(np.log(ns), np.log(ts), 1)[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="n up to 2,000 only")
    args = ap.parse_args(argv)
    sizes = [n for n in SIZES if not args.quick or n <= 2_000]
    heuristic(np.full(10, 0.1), EPS)  # warm-up: load (or compile) the numba kernel
    rows = []
    print(f"{'n':>7} {'passes':>7} {'heuristic s':>12} {'(cpu s)':>8} {'construct s':>12} "
          f"{'(cpu s)':>8} {'numpy s':>8}")
    for n in sizes:
        z = np.full(n, 1.0 / n)
        passes = heuristic(z, EPS).params["passes"]
        whole, whole_cpu, t_whole = _median(args.repeats, heuristic, z, EPS)
        core, core_cpu, t_core = _median(args.repeats, _construct, z, HAVE_NUMBA)
        row = {"n": n, "eps": EPS, "passes": passes, "heuristic_s": whole,
               "heuristic_cpu_s": whole_cpu, "construct_s": core, "construct_cpu_s": core_cpu,
               "heuristic_times": t_whole, "construct_times": t_core}
        if HAVE_NUMBA and n <= NUMPY_MAX_N:
            row["numpy_s"], _, row["numpy_times"] = _median(args.repeats, _construct, z, False)
        rows.append(row)
        numpy_s = f"{row['numpy_s']:8.3f}" if "numpy_s" in row else f"{'-':>8}"
        print(f"{n:>7} {passes:>7} {whole:12.3f} {whole_cpu:8.3f} {core:12.3f} {core_cpu:8.3f} "
              f"{numpy_s}", flush=True)
    ns = [r["n"] for r in rows]
    slopes = {key: _slope(ns, [r[key] for r in rows])
              for key in ("heuristic_s", "heuristic_cpu_s", "construct_s", "construct_cpu_s")}
    print("log-log slope " + ", ".join(f"{k}: {v:.2f}" for k, v in slopes.items()))
    for n, target in TARGETS.items():
        hit = [r for r in rows if r["n"] == n]
        if hit:
            ok = "ok" if hit[0]["heuristic_s"] <= target else "OVER"
            print(f"target n = {n}: heuristic {hit[0]['heuristic_s']:.3f} s <= {target} s: {ok}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "benchmark": "heuristic (Algorithm 1), uniform z, sandwich selector",
        "repeats": args.repeats, "numba": HAVE_NUMBA, "rows": rows, "loglog_slopes": slopes,
        "targets_s": {str(k): v for k, v in TARGETS.items()},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "numpy": np.__version__},
    }, indent=2) + "\n")
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
