"""Benchmark: Algorithm 2 at large n, and the LP optimum over F with HiGHS.

Measures (medians of repeated runs, wall-clock seconds):

- ``unfixed_optimum`` at n = 10,000 (eps = 5 and 0.01), without and with the
  final ``Mechanism.check()``;
- ``lp_optimum`` over F at n = 60 with ``highs-ds`` and ``highs-ipm``;
- for each HiGHS method, the largest n solved within a time cap (60 s; 10 s
  with ``--quick``): see :func:`largest_n` (the whole run takes about 5
  minutes; 1.5 with ``--quick``).

Writes ``benchmarks/results/unfixed_lp.json`` and prints a table. Run:
``python benchmarks/bench_unfixed_lp.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

from dpfix.constructors.lp import lp_optimum
from dpfix.constructors.unfixed import unfixed_optimum

RESULTS = Path(__file__).resolve().parent / "results" / "unfixed_lp.json"
LP_EPS = 1.0


def _z(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).dirichlet(np.ones(n))


def _median_time(repeats: int, fn, *args, **kw) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args, **kw)
        times.append(time.perf_counter() - start)
    return statistics.median(times), times


def bench_algorithm2(repeats: int) -> list[dict]:
    rows = []
    for n in (1_000, 10_000):
        z = _z(n)
        for eps in (5.0, 0.01):
            fast, t_fast = _median_time(repeats, unfixed_optimum, z, eps=eps, check=False)
            full, t_full = _median_time(1 if n > 1000 else repeats, unfixed_optimum, z, eps=eps)
            rows.append({"what": "unfixed_optimum", "n": n, "eps": eps, "median_s": fast,
                         "median_s_with_check": full, "times": t_fast, "times_with_check": t_full})
    return rows


def bench_lp60(repeats: int) -> list[dict]:
    rows = []
    z = _z(60)
    for method in ("highs-ds", "highs-ipm"):
        med, times = _median_time(repeats, lp_optimum, z, eps=LP_EPS, solver=method)
        rows.append({"what": "lp_optimum F", "method": method, "n": 60, "eps": LP_EPS,
                     "median_s": med, "times": times})
    return rows


def _solve_within(n: int, method: str, cap: float) -> tuple[bool, float]:
    start = time.perf_counter()
    try:
        lp_optimum(_z(n), eps=LP_EPS, solver=method, time_limit=cap)
        ok = True
    except RuntimeError:
        ok = False
    seconds = time.perf_counter() - start
    return ok and seconds <= cap, seconds


def largest_n(method: str, cap: float, budget: float) -> dict:
    """The largest n solved within ``cap`` seconds: double n from 60 while runs are
    quick (under ``cap / 8``); near the cap, step to the n that the growth of the
    last two runs predicts at 95% of the cap; after a failure, bisect. A run is
    started only if the budget could absorb a full ``cap``."""
    start = time.perf_counter()
    tried: list[dict] = []
    good, bad, n = None, None, 60
    while n is not None and time.perf_counter() - start + cap <= budget:
        ok, sec = _solve_within(n, method, cap)
        tried.append({"n": n, "ok": ok, "seconds": sec})
        if ok:
            good = n
        else:
            bad = n
        if bad is not None:
            lo = good if good is not None else 0
            n = (lo + bad) // 2 if bad - lo > max(4, lo // 16) else None
            continue
        wins = [t for t in tried if t["ok"]]
        if sec < cap / 8 or len(wins) < 2:
            n = 2 * n
            continue
        prev = wins[-2]
        power = max(2.0, math.log(sec / prev["seconds"]) / math.log(n / prev["n"]))
        factor = 0.95 * (cap / sec) ** (1 / power)
        n = int(n * min(2.0, factor)) if factor >= 1.03 else None
    return {"what": "largest n for lp_optimum F", "method": method, "eps": LP_EPS,
            "cap_s": cap, "largest_n": good, "smallest_failed_n": bad, "tried": tried}


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer repeats, 10 s cap, 1 min budget")
    args = p.parse_args(argv)
    repeats = 3 if args.quick else 5
    cap, budget = (10.0, 35.0) if args.quick else (60.0, 115.0)
    out = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                       "loadavg_start": os.getloadavg()}, "quick": args.quick,
           "algorithm2": bench_algorithm2(repeats), "lp60": bench_lp60(repeats),
           "largest_n": [largest_n(m, cap, budget) for m in ("highs-ds", "highs-ipm")]}
    out["machine"]["loadavg_end"] = os.getloadavg()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=1))
    print(f"{'benchmark':34} {'n':>7} {'eps':>6} {'median s':>10} {'with check':>11}")
    for r in out["algorithm2"]:
        print(f"{'unfixed_optimum (Algorithm 2)':34} {r['n']:>7} {r['eps']:>6} "
              f"{r['median_s']:>10.3f} {r['median_s_with_check']:>11.3f}")
    for r in out["lp60"]:
        print(f"{'lp_optimum over F, ' + r['method']:34} {r['n']:>7} {r['eps']:>6} "
              f"{r['median_s']:>10.3f}")
    for r in out["largest_n"]:
        tried = ", ".join(f"{t['n']}:{t['seconds']:.1f}s{'' if t['ok'] else ' (fail)'}"
                          for t in r["tried"])
        print(f"largest n within {r['cap_s']:.0f} s, {r['method']}: {r['largest_n']} "
              f"(first failure {r['smallest_failed_n']}; tried {tried})")
    print(f"results written to {RESULTS}")
    return out


if __name__ == "__main__":
    main()
