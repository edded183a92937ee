"""Benchmark: exact optimality certificates of the northwest corner (dpfix.certify).

Measures (medians of repeated runs, wall-clock seconds) at n = 51, 100, 200,
``lam`` in {3/2, 2}, a random exact target (integer weights 1..99, seed 0) and
the absolute deviation:

- ``build``: ``northwest_corner(z, lam=lam)`` on the exact path (Fractions);
- ``certify``: ``certify_optimal(T, z, lam, "abs")`` (the explicit dual of
  docs/optimum_of_F.md, its exact feasibility test and the exact count error);
- ``check``: ``Certificate.check()``, the re-verification from scratch;
- ``universal`` (n = 51 only): ``certify_universal``, all 101 hinges.

The targets for the certificate: under 2 s at n = 51, 10 s at n = 100,
60 s at n = 200. Writes ``benchmarks/results/certify.json`` and prints a
table. Run: ``python benchmarks/bench_certify.py [--quick]`` (quick: one
repetition, lam = 3/2 only).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

from dpfix.certify import certify_optimal, certify_universal
from dpfix.constructors import northwest_corner

RESULTS = Path(__file__).resolve().parent / "results" / "certify.json"
TARGETS = {51: 2.0, 100: 10.0, 200: 60.0}


def _z(n: int, seed: int = 0) -> list[Fraction]:
    w = [int(x) for x in np.random.default_rng(seed).integers(1, 100, size=n)]
    return [Fraction(x, sum(w)) for x in w]


def _timed(fn, *args, **kw):
    start = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - start


def bench(n: int, lam: Fraction, repeats: int) -> dict:
    z = _z(n)
    builds, certs, checks = [], [], []
    for _ in range(repeats):
        M, t = _timed(northwest_corner, z, lam=lam)
        builds.append(t)
        cert, t = _timed(certify_optimal, M, z, lam, "abs")
        certs.append(t)
        _, t = _timed(cert.check)
        checks.append(t)
        assert cert.optimal, f"n = {n}, lam = {lam}: the northwest corner was not certified"
    digits = max(int(x.denominator.bit_length() * 0.30103) + 1 for x in cert.u)
    return {"n": n, "lam": str(lam), "weights": "abs", "optimal": cert.optimal,
            "dual": cert.dual, "build_median_s": statistics.median(builds),
            "certify_median_s": statistics.median(certs),
            "check_median_s": statistics.median(checks), "builds": builds,
            "certifies": certs, "checks": checks, "dual_denominator_digits": digits,
            "target_s": TARGETS[n], "within_target": statistics.median(certs) < TARGETS[n]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one repetition, lam = 3/2 only")
    args = parser.parse_args()
    lams = (Fraction(3, 2),) if args.quick else (Fraction(3, 2), Fraction(2))
    rows = []
    for lam in lams:
        for n in TARGETS:
            reps = 1 if args.quick else (3 if n <= 100 else 2)
            rows.append(bench(n, lam, reps))
            r = rows[-1]
            print(f"n = {n:4d}, lam = {lam}: build {r['build_median_s']:7.3f} s, certify "
                  f"{r['certify_median_s']:7.3f} s (target {TARGETS[n]:.0f} s), check "
                  f"{r['check_median_s']:7.3f} s, dual denominators up to "
                  f"{r['dual_denominator_digits']} digits", flush=True)
    z = _z(51)
    uc, t = _timed(certify_universal, z, Fraction(3, 2))
    assert uc.optimal
    universal = {"n": 51, "lam": "3/2", "hinges": len(uc.hinges), "seconds": t}
    print(f"certify_universal n = 51, lam = 3/2: {len(uc.hinges)} hinges in {t:.2f} s")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "benchmark": "certify", "quick": args.quick, "rows": rows, "universal": universal,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "platform": platform.platform()},
    }, indent=2) + "\n")
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
