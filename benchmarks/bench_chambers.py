"""Benchmark: ``dpfix.parametric.chambers`` (the chambers and breakpoints in lam > 1).

Measures (wall-clock seconds, medians of repeated runs on the shared 2-core machine):

- ``chambers("U", 5)`` with 2 worker processes (the target: under 30 s on two cores)
  and with one;
- ``confirm()`` on U(5): Normaliz's ``count_vertices`` at a rational point of each
  chamber and at the rational breakpoint, i.e. the time ``count_vertices`` takes at
  n = 5, once per piece it can take;
- ``chambers`` of F(3), R_F(3) and F(4) at the standard targets.

Writes ``benchmarks/results/chambers.json`` and prints a table. Run:
``python benchmarks/bench_chambers.py [--quick]`` (``--quick``: one run each, F(4)
left out).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

from dpfix.explore.cases import standard_z
from dpfix.theory.parametric import chambers

RESULTS = Path(__file__).resolve().parent / "results" / "chambers.json"


def _timed(repeats: int, fn, *args, **kw) -> tuple[float, list[float], object]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn(*args, **kw)
        times.append(time.perf_counter() - start)
    return statistics.median(times), times, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    reps = 1 if args.quick else 3
    rows = []
    load = list(os.getloadavg())
    for processes in (2, 1):
        med, times, ch = _timed(reps if processes == 2 else 1, chambers, "U", 5,
                                processes=processes)
        rows.append({"what": f"chambers('U', 5), processes={processes}", "median_s": med,
                     "times": times, "pieces": len(ch), "counts": ch.counts()})
    med, times, confirmed = _timed(1, ch.confirm)
    rows.append({"what": "chambers('U', 5).confirm() (Normaliz count_vertices per piece)",
                 "median_s": med, "times": times, "per_piece_s": med / len(ch),
                 "confirmed": sum(r["ok"] is True for r in confirmed),
                 "not_confirmed": [r["piece"] for r in confirmed if r["ok"] is None]})
    for kind, n in (("F", 3), ("RF", 3)) + (() if args.quick else (("F", 4),)):
        for name, z in standard_z(n).items():
            med, times, c = _timed(1, chambers, kind, n, z)
            rows.append({"what": f"chambers('{kind}', {n}, {name} z)", "median_s": med,
                         "times": times, "pieces": len(c)})
    out = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                       "loadavg_start": load, "loadavg_end": list(os.getloadavg())},
           "quick": args.quick, "rows": rows}
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{'what':<66} {'median s':>9}")
    for r in rows:
        print(f"{r['what']:<66} {r['median_s']:>9.2f}")


if __name__ == "__main__":
    main()
