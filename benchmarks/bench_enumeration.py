"""Benchmark: exact vertex enumeration with Normaliz against cddlib.

Measures, each on the same polytope in the same run (wall-clock seconds; peak
memory of the process; every run in a fresh subprocess so that no cache is
shared and a run past the cap can be stopped):

- U(5, lam), lam in {3/2, 2, 3}: all vertices as a compact VertexArray
  (target: under 20 s each);
- R_F(4, lam, z) for lam in {3/2, 2, 3} and the four standard targets z
  (uniform, geometric, asymmetric, zero-entry): all vertices (target: under
  10 s each);
- F(5, 2, uniform z): counted (target: under 4 minutes within 4 GB);
- U's vertices also counted through their structure (``backend="structure"``,
  two processes): U(5, lam) beside Normaliz, and U(6, 2), beyond Normaliz
  (``--no-u6`` skips it: several minutes).

Normaliz runs are repeated (``--repeats``, median; once for F(5)); cdd runs
once with a time cap (``--cdd-cap``, default 600 s) and is reported as
``"> cap"`` when it does not finish. The ratio is cdd's time over Normaliz's
median (a lower bound when cdd hit the cap).

Writes ``benchmarks/results/enumeration.json`` and prints a table. Run:
``python benchmarks/bench_enumeration.py [--quick] [--cdd-cap SECONDS]``
(``--quick``: U(5, 2), R_F(4, 2, uniform z) and F(5, 2, uniform z) only, cdd
capped at 60 s).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "enumeration.json"
LAMS = ("3/2", "2", "3")
ZNAMES = ("uniform", "geometric", "asymmetric", "zero")
TARGETS = {"U": 20.0, "R_F": 10.0, "F": 240.0}


def _polytope(kind: str, n: int, lam: str, zname: str | None):
    from dpfix.explore.cases import standard_z
    from dpfix.theory.polytopes import RF, F, U

    lam_x = Fraction(lam)
    if kind == "U":
        return U(n, lam_x)
    z = standard_z(n)[zname]
    return F(n, lam_x, z) if kind == "F" else RF(n, lam_x, z)


def worker(kind: str, n: int, lam: str, zname: str | None, backend: str, what: str) -> dict:
    """One measurement in this process (run by the parent in a subprocess)."""
    P = _polytope(kind, n, lam, zname)
    start = time.perf_counter()
    if backend == "structure":
        count = P.count_vertices(limit=None, backend=backend, processes=2)
    elif what == "count":
        count = P.count_vertices(limit=None, backend=backend)
    else:
        count = len(P.vertex_array(limit=None, backend=backend))
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "vertices": count,
            "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6}


def measure(case: dict, backend: str, cap: float) -> dict:
    cmd = [sys.executable, __file__, "--worker", case["kind"], str(case["n"]), case["lam"],
           case["z"] or "-", backend, case["what"]]
    start = time.perf_counter()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=cap, check=True)
    except subprocess.TimeoutExpired:
        return {"seconds": None, "capped_at": cap,
                "wall_seconds": round(time.perf_counter() - start, 1)}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _load() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="three cases, cdd capped at 60 s")
    parser.add_argument("--cdd-cap", type=float, default=None,
                        help="seconds before a cdd run is stopped (default 600; 60 quick)")
    parser.add_argument("--repeats", type=int, default=3, help="Normaliz runs per case")
    parser.add_argument("--no-u6", action="store_true", help="skip U(6, 2) (structure)")
    parser.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        kind, n, lam, zname, backend, what = args.worker
        print(json.dumps(worker(kind, int(n), lam, None if zname == "-" else zname,
                                backend, what)))
        return 0
    cap = args.cdd_cap or (60.0 if args.quick else 600.0)
    cases = [{"kind": "U", "n": 5, "lam": lam, "z": None, "what": "vertices"}
             for lam in (("2",) if args.quick else LAMS)]
    cases += [{"kind": "R_F", "n": 4, "lam": lam, "z": z, "what": "vertices"}
              for lam in (("2",) if args.quick else LAMS)
              for z in (("uniform",) if args.quick else ZNAMES)]
    cases.append({"kind": "F", "n": 5, "lam": "2", "z": "uniform", "what": "count"})
    rows = []
    print(f"cdd cap {cap:.0f} s; load average at start {_load()}", flush=True)
    header = f"{'polytope':34} {'vertices':>9} {'Normaliz s':>10} {'GB':>5} " \
             f"{'cdd s':>9} {'ratio':>8} {'target':>7} {'structure s':>11}"
    print(header, flush=True)
    for case in cases:
        repeats = 1 if case["kind"] == "F" else args.repeats
        runs = [measure(case, "normaliz", 3600.0) for _ in range(repeats)]
        times = [r["seconds"] for r in runs]
        med = statistics.median(times)
        cdd = measure(case, "cdd", cap)
        if cdd["seconds"] is None:
            cdd_text, ratio, ratio_text = f"> {cap:.0f}", cap / med, f"> {cap / med:.0f}"
        else:
            assert cdd["vertices"] == runs[0]["vertices"], "the backends disagree on the count"
            cdd_text, ratio = f"{cdd['seconds']:.2f}", cdd["seconds"] / med
            ratio_text = f"{ratio:.1f}"
        structure = (measure({**case, "what": "count"}, "structure", 3600.0)
                     if case["kind"] == "U" else None)
        if structure is not None:
            assert structure["vertices"] == runs[0]["vertices"], "structure disagrees"
        target = TARGETS[case["kind"]]
        name = (f"{case['kind']}({case['n']}, {case['lam']}"
                + (f", {case['z']} z)" if case["z"] else ")"))
        row = {**case, "polytope": name, "vertices": runs[0]["vertices"],
               "normaliz_median_s": med, "normaliz_times": times,
               "normaliz_peak_gb": max(r["peak_gb"] for r in runs),
               "cdd_s": cdd["seconds"], "cdd_cap_s": cap, "cdd_peak_gb": cdd.get("peak_gb"),
               "ratio_cdd_over_normaliz": ratio, "ratio_is_lower_bound": cdd["seconds"] is None,
               "structure_s": structure and structure["seconds"],
               "target_s": target, "target_met": med < target, "load_after": _load()}
        rows.append(row)
        print(f"{name:34} {row['vertices']:>9} {med:>10.2f} {row['normaliz_peak_gb']:>5.2f} "
              f"{cdd_text:>9} {ratio_text:>8} {'ok' if med < target else 'MISSED':>7} "
              f"{'' if structure is None else format(structure['seconds'], '.2f'):>11}",
              flush=True)
    if not args.quick and not args.no_u6:
        case = {"kind": "U", "n": 6, "lam": "2", "z": None, "what": "count"}
        u6 = measure(case, "structure", 3600.0)
        rows.append({**case, "polytope": "U(6, 2)", "vertices": u6["vertices"],
                     "structure_s": u6["seconds"], "structure_peak_gb": u6["peak_gb"],
                     "normaliz_median_s": None, "cdd_s": None,
                     "note": "counted through its structure only (two processes)",
                     "load_after": _load()})
        print(f"{'U(6, 2) (structure, 2 processes)':34} {u6['vertices']:>9} "
              f"{u6['seconds']:>10.2f}", flush=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                    "python": platform.python_version()},
        "cdd_cap_s": cap, "quick": args.quick, "repeats": args.repeats, "rows": rows,
        "note": "wall-clock seconds on a shared machine; see the load averages per row",
    }, indent=2) + "\n")
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
