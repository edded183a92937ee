"""Benchmark: a file released to a file with a key, against the pyarrow floor, side by side.

Each run is a fresh process (its time measured inside it from the call to its return,
its start-up and imports excluded; its peak resident memory, the imports included: Linux's
``VmHWM``, else ``ru_maxrss``, which also counts the pages of the parent it was forked
from, the files' maker) on a table of ``N`` rows: a text key ``id`` (unique, in a random
order) and a count ``k`` (a zero-inflated negative binomial; upper 50, eps 1, secure randomness: no
seed), its output in key order:

- ``csv floor``: pyarrow's CSV reader (typed columns), numpy float Laplace noise of scale
  ``1/eps`` rounded and clipped to ``0 .. 50`` (numpy's PCG64: insecure, no accounting),
  pyarrow's sort by the key, pyarrow's CSV writer;
- ``csv dpfix``: ``privatize_table(path, "k", 1.0, upper=50, keys=["id"], out=...)``: a CSV
  file to a CSV file, the streamed engine (two passes, the external shuffle and the merge
  of sorted runs, docs/release.md section 7);
- ``parquet floor`` and ``parquet dpfix``: the same with Parquet files (pyarrow's Parquet
  reader and writer; dpfix's streamed engine, Parquet read in blocks and written by row
  groups); the Parquet file is the CSV file as pyarrow's CSV reader types it, so its key
  ``id`` is int64 (sorted by value);
- ``pairs dpfix`` (``--pairs``): a joint release of two count columns of the CSV file
  (``joint=[("k", "m")]``, in memory) against the floor of the same two columns;
- ``dask dpfix`` (``--dask``): ``Dataset`` of the Parquet file, shuffled (the Dask engine
  does not sort) against the Parquet floor.

The variants run in turn, ``--repeats`` times (interleaved: the machine's load hits each
alike); each one's median is printed with its ratio to its floor's median of the same run,
with the load average before and after. Writes ``benchmarks/results/stream.json``. Run:
``python benchmarks/bench_stream.py [--sizes 1e6 1e7] [--repeats 3] [--pairs] [--dask]
[--only VARIANT ...] [--results PATH]``.
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

RESULTS = Path(__file__).resolve().parent / "results" / "stream.json"
#: Rows of the block the files are made of (each block its own ids: ``BBBBiiiiii``).
_BLOCK = 10**6

_CHILD = """
import resource, sys, time, warnings
warnings.simplefilter("ignore")
import numpy as np
import pyarrow as pa, pyarrow.compute as pc, pyarrow.csv as pv, pyarrow.parquet as pq
from dpfix.release.inputs import Dataset
from dpfix.release.table import privatize_table
what, path, out = sys.argv[1:4]
cols = ["k", "m"] if what.startswith("pairs") else ["k"]

def noisy(t):
    rng = np.random.default_rng()
    for c in cols:
        d = t.column(c).to_numpy()
        x = d + rng.laplace(0.0, 1.0, d.size)
        np.rint(x, out=x)
        np.clip(x, 0, 50, out=x)
        t = t.set_column(t.column_names.index(c), c, pa.array(x.astype(np.int64)))
    return t.take(pc.sort_indices(t, sort_keys=[("id", "ascending")]))

start = time.perf_counter()
if what in ("csv floor", "pairs floor"):
    pv.write_csv(noisy(pv.read_csv(path)), out)
elif what == "parquet floor":
    pq.write_table(noisy(pq.read_table(path)), out)
elif what == "dask dpfix":
    privatize_table(Dataset(path), "k", 1.0, upper=50, out=out)
elif what == "pairs dpfix":
    privatize_table(path, cols, 1.0, upper=50, keys=["id"], joint=[tuple(cols)], out=out)
else:
    privatize_table(path, "k", 1.0, upper=50, keys=["id"], out=out)
seconds = time.perf_counter() - start
try:  # the peak of this process's own memory (ru_maxrss counts the parent's, forked)
    with open("/proc/self/status") as f:
        peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
except (OSError, StopIteration):
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(seconds, peak)
"""

#: Each variant: its input file's kind and its floor.
_VARIANTS = {"csv floor": ("csv", None), "csv dpfix": ("csv", "csv floor"),
             "parquet floor": ("parquet", None), "parquet dpfix": ("parquet", "parquet floor"),
             "pairs floor": ("pairs", None), "pairs dpfix": ("pairs", "pairs floor"),
             "dask dpfix": ("parquet", "parquet floor")}


def make_files(folder: Path, N: int, pairs: bool, parquet: bool = True) -> dict:
    """``id,k`` (and with ``pairs`` ``id,k,m``) as CSV and Parquet: ids ``BBBBiiiiii``
    (text, unique, in a random order), counts a zero-inflated negative binomial, one block
    of counts repeated."""
    import pyarrow.csv as pv
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    m = min(N, _BLOCK)
    d = rng.negative_binomial(2, 0.25, size=m)
    d[rng.random(m) < 0.35] = 0
    e = rng.permutation(d)
    perm = rng.permutation(m)
    paths = {"csv": folder / "t.csv", "parquet": folder / "t.parquet"}
    if pairs:
        paths["pairs"] = folder / "pairs.csv"
    for kind, path in paths.items():
        if kind == "parquet":
            continue
        cells = (f"XXXX{perm[i]:06d},{v},{w}\n" for i, (v, w) in enumerate(zip(d, e, strict=True)))
        if kind == "csv":
            cells = (f"XXXX{perm[i]:06d},{v}\n" for i, v in enumerate(d))
        block = "".join(cells).encode()
        with open(path, "wb") as f:
            f.write(b"id,k,m\n" if kind == "pairs" else b"id,k\n")
            for b in rng.permutation(N // m):
                f.write(block.replace(b"XXXX", b"%04d" % b))
    if parquet:
        pq.write_table(pv.read_csv(paths["csv"]), paths["parquet"])
    else:
        del paths["parquet"]
    return paths


def run(what: str, path: Path, folder: Path) -> dict:
    out = folder / ("out.parquet" if "parquet" in what else "out" if "dask" in what
                    else "out.csv")
    start = time.perf_counter()
    text = subprocess.run([sys.executable, "-c", _CHILD, what, str(path), str(out)],
                          check=True, capture_output=True, text=True).stdout.split()
    wall = time.perf_counter() - start
    if out.is_dir():
        import shutil

        shutil.rmtree(out)
    else:
        out.unlink()
    return {"seconds": float(text[0]), "process_seconds": wall,
            "peak_rss_mb": int(text[1]) / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e6, 1e7])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pairs", action="store_true", help="the joint release too")
    parser.add_argument("--dask", action="store_true", help="the Dask engine too")
    parser.add_argument("--only", nargs="+", choices=list(_VARIANTS),
                        help="these variants only (and their floors)")
    parser.add_argument("--results", type=Path, default=RESULTS,
                        help=f"where the results go (default {RESULTS.name})")
    args = parser.parse_args()
    names = [v for v in _VARIANTS if (args.pairs or not v.startswith("pairs"))
             and (args.dask or not v.startswith("dask"))]
    if args.only:
        keep = set(args.only) | {_VARIANTS[v][1] for v in args.only if _VARIANTS[v][1]}
        names = [v for v in names if v in keep]
    sizes = [int(n) for n in args.sizes]
    table = []
    for N in sizes:
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            paths = make_files(folder, N, args.pairs,
                               any(_VARIANTS[v][0] == "parquet" for v in names))
            load_before = os.getloadavg()
            runs: dict = {v: [] for v in names}
            for _ in range(args.repeats):
                for v in names:
                    runs[v].append(run(v, paths[_VARIANTS[v][0]], folder))
            load_after = os.getloadavg()
            med = {v: statistics.median(r["seconds"] for r in rs) for v, rs in runs.items()}
            peak = {v: max(r["peak_rss_mb"] for r in rs) for v, rs in runs.items()}
            ratio = {v: med[v] / med[f] for v, (_, f) in _VARIANTS.items()
                     if v in med and f in med}
            table.append({"N": N, "file_mb": {k: p.stat().st_size / 1e6 for k, p in
                                              paths.items()},
                          "load_average_before": load_before, "load_average_after": load_after,
                          "median_s": med, "peak_rss_mb": peak, "ratio_to_floor": ratio,
                          "runs": runs})
        load = ", ".join(f"{x:.2f}" for x in load_before)
        print(f"N = {N:,d} (medians of {args.repeats}; load average {load} before, "
              f"{', '.join(f'{x:.2f}' for x in load_after)} after)")
        for v in names:
            r = f"  x{ratio[v]:5.2f} its floor" if v in ratio else ""
            print(f"  {v:14s} {med[v]:8.2f} s  {peak[v]:8.1f} MB peak{r}", flush=True)
    result = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                          "platform": platform.platform()},
              "setting": "a file to a file with a text key (key order), one count column "
                         "(upper 50, eps 1), secure randomness; the floor: pyarrow read, "
                         "float Laplace noise clipped, pyarrow sort by key, pyarrow write",
              "sizes": table}
    args.results.parent.mkdir(exist_ok=True)
    args.results.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
