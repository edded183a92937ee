"""Benchmark: exact, secure stage-2 sampling (``dpfix.sampling``) against the float path.

Every case runs in its own subprocess, so that its peak memory
(``ru_maxrss``) is its own. Cases (wall-clock seconds; medians where repeated):

- ``noise``: the exact two-sided geometric sampler (10^7 draws, secure source)
  against OpenDP's discrete Laplace (``make_laplace`` on a vector of 10^5
  integer zeros), microseconds per sample;
- ``noise-eps``: the two-sided geometric sampler at small budgets (``eps`` 1,
  0.1, 0.01, 0.001, 1e-4; ``cap`` 50 and 10^6; 10^6 draws, secure source),
  the block algorithm (``method="blocks"``, O(1) words per draw) against the
  digit algorithm it replaced at small ``eps`` (``method="digits"``, about
  ``1/(J eps)`` passes), and the default choice; medians of 3 (one run when
  a run takes over 5 s; the digits at ``eps = 1e-4`` uncapped on 10^5 draws,
  reported per 10^6 scaled by 10) and the time to build the block thresholds;
- ``rows-1e7``: ``privatize_counts`` on 10^7 rows, upper 50, the northwest
  corner (the default), secure: stage 2 is ``G R`` with exact noise; against
  today's float path in the same process (the same northwest ``T``, rows drawn
  by ``apply_mechanism``: numpy's multinomial on float rows);
- ``upper-1e6``: 10^6 rows, upper 10^6 (``T`` would be 8 TB: the float path
  cannot run; it refuses ``upper`` above 10,000);
- ``upper-1e4``: 10^6 rows, upper 10^4, exact ``G R`` against the float path
  (build ``T``, multinomial rows), each in its own process (peak memory);
- ``dask``: :func:`dpfix.release.dask.privatize_dataset` on 2 x 10^7 rows in 8
  Parquet partitions (generated), upper 50, secure, on a ``LocalCluster`` of 2
  workers; peak memory per worker.

Writes ``benchmarks/results/sampling.json`` and prints a table. Timings are
wall-clock and vary with what else runs on the machine.
Run: ``python benchmarks/bench_sampling.py [--quick] [--only CASE ...]``
(``--quick``: one repeat, 10^6 instead of 10^7 rows; ``--only``: run these
cases (``noise``, ``noise-eps``, ``rows``, ``upper``, ``dask``) and replace
them in the results file, keeping the others).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results" / "sampling.json"


def peak_mb() -> float:
    """This process's peak resident memory in MB (Linux: ru_maxrss is in kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def counts(N: int, upper: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    scale = max(1, upper // 50)
    d = rng.negative_binomial(2, 0.25, size=N) * scale + rng.integers(0, scale, N)
    d[rng.random(N) < 0.35] = 0
    return np.minimum(d, upper)


def case_noise(rows: int) -> dict:
    from dpfix.release.privatizers.noise import add_laplace
    from dpfix.sampling import SecureSource, TwoSidedGeometric, rational_lam

    lam = rational_lam(1.0)
    g = TwoSidedGeometric(lam)
    src = SecureSource()
    g.sample(1000, src)
    ours = []
    for _ in range(3):
        start = time.perf_counter()
        g.sample(rows, src)
        ours.append((time.perf_counter() - start) / rows * 1e6)
    m = 100_000
    theirs = []
    for _ in range(3):
        start = time.perf_counter()
        add_laplace(np.zeros(m, dtype=np.int64), 1 / math.log(lam), rng=None)
        theirs.append((time.perf_counter() - start) / m * 1e6)
    o, t = statistics.median(ours), statistics.median(theirs)
    return {"case": "noise", "lam": str(lam), "ours_us_per_sample": o, "ours_draws": rows,
            "opendp_us_per_sample": t, "opendp_draws": m, "speedup": t / o,
            "peak_mb": peak_mb()}


def case_noise_eps(draws: int) -> dict:
    """Seconds per ``draws`` draws, blocks against digits, at small ``eps``."""
    from dpfix.sampling import SecureSource, TwoSidedGeometric, rational_lam

    src = SecureSource()
    rows = []
    for eps in (1.0, 0.1, 0.01, 0.001, 1e-4):
        lam = rational_lam(eps)
        start = time.perf_counter()
        default = TwoSidedGeometric(lam)
        default._first_floors(), default._more_floors()  # the block thresholds (then cached)
        build = time.perf_counter() - start
        for cap in (50, 10**6):
            row = {"eps": eps, "lam": str(lam), "cap": cap, "default": default.method,
                   "block": default.block, "digits_K_J": [default.digits, default.more_digits]}
            for method in ("blocks", "digits"):
                g = TwoSidedGeometric(lam, method=method)
                g.sample(1000, src, cap=cap)  # warm-up (and the cached thresholds)
                n = draws
                if method == "digits" and eps <= 1e-4 and cap > 50:
                    n = draws // 10  # about 6 minutes per 10^6 draws
                times = []
                while len(times) < 3 and sum(times) < 5:
                    t0 = time.perf_counter()
                    x = g.sample(n, src, cap=cap)
                    times.append((time.perf_counter() - t0) * draws / n)
                row[f"{method}_seconds"] = statistics.median(times)
                row[f"{method}_runs"] = len(times)
                row[f"{method}_draws"] = n
                row[f"{method}_mean_abs"] = float(np.abs(x).mean())
            row["speedup"] = row["digits_seconds"] / row["blocks_seconds"]
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
        rows[-1]["build_seconds"] = rows[-2]["build_seconds"] = build  # per lam, once
    return {"case": "noise-eps", "draws": draws, "source": "SecureSource", "rows": rows,
            "peak_mb": peak_mb()}


def case_rows(rows: int, repeats: int) -> dict:
    from dpfix.constructors import construct
    from dpfix.release.frameworks import EPS_MARGIN, apply_mechanism
    from dpfix.release.pipeline import privatize_counts

    d = counts(rows, 50)
    privatize_counts(d[:1000], 1.0, upper=50)  # warm-up
    exact, phases = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        r = privatize_counts(d, 1.0, upper=50)  # secure, northwest, exact G R
        exact.append(time.perf_counter() - start)
        phases.append(r.seconds)
    mech = construct(r.z, r.eps_2 * (1 - EPS_MARGIN), constructor="northwest").normalised()
    floats = []
    for k in range(repeats):
        start = time.perf_counter()
        apply_mechanism(mech, d, np.random.default_rng(k))
        floats.append(time.perf_counter() - start)
    apply_exact = statistics.median(p["apply"] for p in phases)
    return {"case": "rows-1e7" if rows == 10**7 else f"rows-{rows}", "rows": rows, "upper": 50,
            "constructor": "northwest", "source": r.sampler["source"], "lam": r.sampler["lam"],
            "total_seconds": statistics.median(exact),
            "stage1_seconds": statistics.median(p["stage1"] for p in phases),
            "construct_seconds": statistics.median(p["construct"] for p in phases),
            "stage2_exact_seconds": apply_exact,
            "stage2_float_seconds": statistics.median(floats),
            "ratio_exact_over_float": apply_exact / statistics.median(floats),
            "repeats": repeats, "peak_mb": peak_mb()}


def case_upper(rows: int, upper: int, path: str) -> dict:
    from dpfix.constructors import construct
    from dpfix.release.frameworks import EPS_MARGIN, apply_mechanism
    from dpfix.release.options import split_budget
    from dpfix.release.pipeline import privatize_counts

    d = counts(rows, upper)
    start = time.perf_counter()
    if path == "exact":
        r = privatize_counts(d, 1.0, upper=upper)
        total = time.perf_counter() - start
        return {"case": f"upper-{upper}-exact", "rows": rows, "upper": upper, "path": path,
                "total_seconds": total, "seconds": r.seconds, "T_built": r.mechanism is not None,
                "estimated_count_error": r.estimated_count_error, "peak_mb": peak_mb()}
    # today's float path: stage 1, T built in floats and checked, multinomial rows
    from dpfix.release.frameworks import histogram
    from dpfix.release.privatizers import privatize_distribution

    eps_1, eps_2 = split_budget(1.0)
    eta, _ = histogram(d, upper)
    z = np.asarray(privatize_distribution(eta, eps_1, privatizer="cyclic-laplace", secure=True).z,
                   dtype=float)
    t0 = time.perf_counter()
    mech = construct(z, eps_2 * (1 - EPS_MARGIN), constructor="northwest").normalised()
    assert mech.privacy_level() <= eps_2
    mech.check(z)
    t1 = time.perf_counter()
    apply_mechanism(mech, d, np.random.default_rng())
    t2 = time.perf_counter()
    return {"case": f"upper-{upper}-float", "rows": rows, "upper": upper, "path": path,
            "construct_seconds": t1 - t0, "stage2_seconds": t2 - t1,
            "total_seconds": t2 - start, "peak_mb": peak_mb()}


def case_dask(rows: int, parts: int) -> dict:
    """``privatize_dataset`` on a LocalCluster of 2 workers (1 thread each), secure."""
    import tempfile

    import pandas as pd
    from distributed import Client, LocalCluster

    from dpfix.release.dask import privatize_dataset

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "data"
        folder.mkdir()
        for i in range(parts):
            pd.DataFrame({"id": np.arange(i * rows // parts, (i + 1) * rows // parts),
                          "k": counts(rows // parts, 50, seed=i)}).to_parquet(
                folder / f"part-{i:03d}.parquet")
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            start = time.perf_counter()
            privatize_dataset(folder, "k", 1.0, upper=50, out=Path(tmp) / "out", keys=["id"])
            seconds = time.perf_counter() - start
            workers = client.run(peak_mb)
    return {"case": "dask", "rows": rows, "partitions": parts, "workers": 2,
            "total_seconds": seconds, "peak_mb_per_worker": max(workers.values()),
            "client_peak_mb": peak_mb()}


def run_case(args: list[str]) -> dict:
    out = subprocess.run([sys.executable, __file__, "--case", *args], capture_output=True,
                         text=True, check=False)
    if out.returncode:
        return {"case": " ".join(args), "error": out.stderr.strip().splitlines()[-1:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", nargs="+", metavar="CASE",
                        help="run only these cases and replace them in the results file")
    parser.add_argument("--case", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        name, *rest = args.case
        if name == "noise":
            res = case_noise(int(rest[0]))
        elif name == "noise-eps":
            res = case_noise_eps(int(rest[0]))
        elif name == "rows":
            res = case_rows(int(rest[0]), int(rest[1]))
        elif name == "dask":
            res = case_dask(int(rest[0]), int(rest[1]))
        else:
            res = case_upper(int(rest[0]), int(rest[1]), rest[2])
        print(json.dumps(res))
        return 0
    big = 10**6 if args.quick else 10**7
    reps = "1" if args.quick else "3"
    plan = {"noise": [["noise", str(big)]],
            "noise-eps": [["noise-eps", str(10**6)]],
            "rows": [["rows", str(big), reps]],
            "upper": [["upper", "1000000", "1000000", "exact"],
                      ["upper", "1000000", "10000", "exact"],
                      ["upper", "1000000", "10000", "float"]],
            "dask": [["dask", str(2 * big), "8"]]}
    names = args.only or list(plan)
    unknown = set(names) - set(plan)
    if unknown:
        parser.error(f"--only: unknown cases {sorted(unknown)}; known: {list(plan)}")
    cases = [run_case(c) for name in names for c in plan[name]]
    quick = args.quick
    if args.only and RESULTS.exists():  # replace those cases, keep the others in place
        old = json.loads(RESULTS.read_text())
        fresh = {c["case"]: c for c in cases}
        kept = [fresh.pop(c["case"], c) for c in old["cases"]]
        cases, quick = kept + list(fresh.values()), old.get("quick", quick)
    for c in cases:
        print(json.dumps(c))
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                    "note": "2 cores shared with 4-5 other agents' jobs while measured"},
        "quick": quick, "cases": cases}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
