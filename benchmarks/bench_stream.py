"""Benchmark: a CSV file released to a CSV file, streamed (``privatize_table(..., out=)``,
:mod:`dpfix.release.stream`) against the in-memory path (``privatize_table(path)`` then
``Release.write``).

Each run is a fresh process (``ru_maxrss``: its peak resident memory, the imports
included) on a CSV file of ``N`` rows, a text key ``id`` and a count ``k`` (upper 50,
eps 1, secure randomness: no seed), its rows sorted by the key (the default order with a
key column). The streamed path at N = 10^6, 10^7, 10^8; the in-memory one at 10^6 and
10^7 (at 10^8 it would hold every row). The files are made in the temporary folder and
removed after.

Writes ``benchmarks/results/stream.json`` and prints a table. Run:
``python benchmarks/bench_stream.py [--quick] [--order key|input|shuffled]``
(``--quick``: 10^5 and 10^6 rows).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results" / "stream.json"
#: Rows of the block the files are made of (each block its own ids: ``BBBBiiiiii``).
_BLOCK = 10**6

_CHILD = """
import resource, sys, time, warnings
warnings.simplefilter("ignore")
from dpfix.release.table import privatize_table
path, how, order, out = sys.argv[1:5]
start = time.perf_counter()
if how == "streamed":
    privatize_table(path, "k", 1.0, upper=50, keys=["id"], order=order, out=out)
else:
    privatize_table(path, "k", 1.0, upper=50, keys=["id"], order=order).write(out)
print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def make_file(path: Path, N: int) -> None:
    """``id,k``: ids ``BBBBiiiiii`` (text, unique), counts a zero-inflated negative binomial
    (the recipe of bench_release.py), one block of counts repeated."""
    rng = np.random.default_rng(0)
    m = min(N, _BLOCK)
    d = rng.negative_binomial(2, 0.25, size=m)
    d[rng.random(m) < 0.35] = 0
    block = "".join(f"XXXX{i:06d},{v}\n" for i, v in enumerate(d)).encode()
    with open(path, "wb") as f:
        f.write(b"id,k\n")
        for b in range(N // m):
            f.write(block.replace(b"XXXX", b"%04d" % b))


def run(path: Path, how: str, order: str, folder: Path) -> dict:
    out = folder / "out.csv"
    start = time.perf_counter()
    text = subprocess.run([sys.executable, "-c", _CHILD, str(path), how, order, str(out)],
                          check=True, capture_output=True, text=True).stdout.split()
    wall = time.perf_counter() - start
    out.unlink()
    return {"how": how, "seconds": float(text[0]), "process_seconds": wall,
            "peak_rss_mb": int(text[1]) / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^5 and 10^6 rows")
    parser.add_argument("--order", default="key", choices=["key", "input", "shuffled"])
    args = parser.parse_args()
    sizes = [10**5, 10**6] if args.quick else [10**6, 10**7, 10**8]
    in_memory = set(sizes[:2])
    rows = []
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for N in sizes:
            path = folder / f"t{N}.csv"
            make_file(path, N)
            mb = path.stat().st_size / 1e6
            for how in ["streamed", "in-memory"] if N in in_memory else ["streamed"]:
                row = {"N": N, "file_mb": mb, "order": args.order, **run(path, how, args.order,
                                                                         folder)}
                rows.append(row)
                print(f"  N = {N:>11,d}  {how:9s}  {row['seconds']:8.1f} s  "
                      f"{row['peak_rss_mb']:8.1f} MB peak", flush=True)
            path.unlink()
    ratio = {}
    for N in in_memory:
        s = {r["how"]: r["seconds"] for r in rows if r["N"] == N}
        ratio[str(N)] = s["streamed"] / s["in-memory"]
    result = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                          "platform": platform.platform(),
                          "load_average": os.getloadavg()},
              "setting": "CSV -> CSV, one count column (upper 50, eps 1) and a text key, "
                         f"order {args.order}, secure randomness; one run each",
              "runs": rows, "time_ratio_streamed_to_in_memory": ratio}
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print("streamed / in-memory time:", {k: round(v, 3) for k, v in ratio.items()})


if __name__ == "__main__":
    main()
