"""Benchmark: ``dpfix.parametric.chambers`` (the chambers and breakpoints in lam > 1).

Measures (wall-clock seconds, medians of repeated runs on the shared 2-core machine):

- ``chambers("U", 5)`` with 2 worker processes (the target: under 30 s on two cores)
  and with one;
- the walk with and without the polynomials kept per tight set (per vertex set for
  U) across sample points, side by side in one run: U(5), F(4) at the zero-entry
  target, and (``--slow``) F(4) at the geometric target without them, about a
  quarter of an hour;
- ``confirm()`` on U(5) and on F(4) at the geometric target: ``count_vertices`` at a
  rational point of each chamber and at each breakpoint (over ``Q(lam)`` for an
  irrational one), i.e. the time ``count_vertices`` takes at that n, once per piece;
- ``chambers`` of F(3), R_F(3) and F(4) at the standard targets.

Writes ``benchmarks/results/chambers.json`` and prints a table. Run:
``python benchmarks/bench_chambers.py [--quick] [--slow]`` (``--quick``: one run
each, F(4) left out).
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
from dpfix.numbers.exact import probability_vector
from dpfix.theory import parametric as pm
from dpfix.theory.parametric import chambers

RESULTS = Path(__file__).resolve().parent / "results" / "chambers.json"


class _Forgetful(dict):
    """A memory that keeps nothing: every sample point solves every vertex again."""

    def __setitem__(self, key, value) -> None:
        pass

    def setdefault(self, key, default=None):
        return default


def _timed(repeats: int, fn, *args, **kw) -> tuple[float, list[float], object]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn(*args, **kw)
        times.append(time.perf_counter() - start)
    return statistics.median(times), times, out


def _walk(kind: str, n: int, z, reuse: bool) -> list[int]:
    """The walk of :func:`chambers`, its engine's memory on or off; the merged counts."""
    roots = pm._Roots()
    engine = pm._UEngine(n, roots, 1) if kind == "U" else \
        pm._GenericEngine(kind, n, probability_vector(z, exact=True, n=n), roots)
    if not reuse:
        engine.known = _Forgetful()
    return [p.count for p in pm._merge(engine, pm._walk(engine, roots))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--slow", action="store_true")
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
    z4 = standard_z(4)
    pairs = [("U", 5, None, "U(5)", reps), ("F", 4, z4["zero"], "F(4, zero z)", reps)]
    if args.slow:
        pairs.append(("F", 4, z4["geometric"], "F(4, geometric z)", 1))
    for kind, n, z, label, r in pairs:
        if args.quick and kind == "F" and not args.slow:
            continue
        for reuse in (True, False):
            med, times, counts = _timed(r, _walk, kind, n, z, reuse)
            rows.append({"what": f"walk {label}, polynomials "
                                 f"{'kept per tight set' if reuse else 'solved at every sample'}",
                         "median_s": med, "times": times, "pieces": len(counts)})
        new, old = rows[-2]["median_s"], rows[-1]["median_s"]
        rows[-1]["ratio_to_kept"] = old / new
    for kind, n in (("F", 3), ("RF", 3)) + (() if args.quick else (("F", 4),)):
        for name, z in standard_z(n).items():
            med, times, c = _timed(1, chambers, kind, n, z)
            rows.append({"what": f"chambers('{kind}', {n}, {name} z)", "median_s": med,
                         "times": times, "pieces": len(c)})
            if (kind, n, name) == ("F", 4, "geometric"):
                med, times, confirmed = _timed(1, c.confirm)
                rows.append({"what": "chambers('F', 4, geometric z).confirm()",
                             "median_s": med, "times": times, "per_piece_s": med / len(c),
                             "confirmed": sum(r["ok"] is True for r in confirmed),
                             "not_confirmed": [r["piece"] for r in confirmed
                                               if r["ok"] is None]})
    out = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                       "loadavg_start": load, "loadavg_end": list(os.getloadavg())},
           "quick": args.quick, "slow": args.slow, "rows": rows}
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{'what':<72} {'median s':>9}")
    for r in rows:
        extra = f"  ({r['ratio_to_kept']:.1f}x)" if "ratio_to_kept" in r else ""
        print(f"{r['what']:<72} {r['median_s']:>9.2f}{extra}")


if __name__ == "__main__":
    main()
