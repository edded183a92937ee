"""Benchmark: what the exploration engine (dpfix.explore.search) adds to the enumeration it drives.

The same 1,000 instances (``n`` in 2..3, ``lam = 2``, the targets ``z = c / N`` of
:func:`dpfix.explore.instances.compositions` up to ``N = 18``, in the engine's order: the first
1,000), and the same predicate on every vertex of F, measured three ways in one run:

- ``plain``: a hand-written loop, ``F(n, lam, z).vertices()`` and the predicate on each;
- ``engine``: :func:`dpfix.explore.search.smallest_counterexample` with ``budget=1000``, ``jobs=1``
  (target: within 1.5x of ``plain``);
- ``engine_jobs2``: the same with ``jobs=2`` (target: close to 2x faster than ``jobs=1``
  on two free cores; the worker processes' start, by spawn, is included).

Medians over ``--repeats`` runs (default 3), wall-clock seconds; the load average of
the machine at the start and the end is recorded beside them (the figures are only
as good as the cores were free). Writes ``benchmarks/results/search.json`` and
prints a table. Run: ``python benchmarks/bench_search.py [--quick]`` (``--quick``:
200 instances, one repeat).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

from dpfix.explore.instances import Instance, compositions
from dpfix.explore.search import BudgetReached, smallest_counterexample
from dpfix.theory.polytopes import F

RESULTS = Path(__file__).resolve().parent / "results" / "search.json"
N_MAX = 18


def nonnegative_corner(T, inst) -> bool:
    """A cheap predicate (true on every vertex), so that the engine's own cost shows."""
    return bool(T[0, 0] >= 0)


def instances(count: int) -> list[Instance]:
    family = compositions(N_MAX)
    out = [Instance(n, 2, z) for n in (2, 3) for z in family.for_n(n)]
    if len(out) < count:
        raise SystemExit(f"only {len(out)} instances up to N = {N_MAX}")
    return out[:count]


def plain(insts: list[Instance]) -> int:
    vertices = 0
    for inst in insts:
        for V in F(inst.n, inst.lam, inst.z_array()).vertices():
            vertices += 1
            if not nonnegative_corner(V, inst):
                raise AssertionError(inst)
    return vertices


def engine(count: int, jobs: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BudgetReached)
        found = smallest_counterexample(nonnegative_corner, over="F", n=[2, 3], lam=[2],
                                        z=compositions(N_MAX), budget=count, jobs=jobs)
    assert not found


def timed(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="200 instances, one repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--count", type=int, default=1000)
    args = parser.parse_args()
    count, repeats = (200, 1) if args.quick else (args.count, args.repeats)
    insts = instances(count)
    load_start = os.getloadavg()
    times: dict[str, list[float]] = {"plain": [], "engine": [], "engine_jobs2": []}
    for _ in range(repeats):  # interleaved, so that a change of load hits all three
        times["plain"].append(timed(plain, insts))
        times["engine"].append(timed(engine, count, 1))
        times["engine_jobs2"].append(timed(engine, count, 2))
    med = {k: statistics.median(v) for k, v in times.items()}
    result = {
        "instances": count, "vertices": plain(insts), "repeats": repeats,
        "median_seconds": med, "all_seconds": times,
        "engine_over_plain": med["engine"] / med["plain"],
        "jobs2_speedup": med["engine"] / med["engine_jobs2"],
        "targets": {"engine_over_plain": "<= 1.5", "jobs2_speedup": "close to 2"},
        "load_average_start": load_start, "load_average_end": os.getloadavg(),
        "cpu_count": os.cpu_count(), "python": platform.python_version(),
        "quick": args.quick,
    }
    print(f"{count} instances ({result['vertices']} vertices of F), n in 2..3, lam = 2; "
          f"medians of {repeats}")
    for k, v in med.items():
        print(f"  {k:13s} {v:8.3f} s")
    print(f"  engine / plain  {result['engine_over_plain']:.2f}x (target <= 1.5x)")
    print(f"  jobs=1 / jobs=2 {result['jobs2_speedup']:.2f}x (target close to 2x)")
    print(f"  load average {load_start[0]:.1f} -> {result['load_average_end'][0]:.1f} on "
          f"{os.cpu_count()} cores")
    if not args.quick:
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
