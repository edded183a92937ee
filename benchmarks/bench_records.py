"""Benchmark: records to released counts (``privatize_records``, docs/records.md) against
pyarrow's group-by count of the same file, side by side in one run.

The file: ``N`` synthetic incident records (:func:`dpfix.experiments.incidents.incidents`:
``person_id`` int, ``county`` among 3,136 declared counties, ``offence`` among 7; most
persons one record, a few dozens), written as CSV in the temporary folder. Each
measurement is a fresh process timing its work (the imports excluded), the two methods
alternating, ``--reps`` times each:

- **floor**: ``pyarrow.csv.read_csv(path)`` then ``Table.group_by(["county",
  "offence"]).aggregate([("person_id", "count")])``: the counts per county and offence,
  no bounding, no privacy;
- **records**: ``privatize_records(Records(path, person="person_id", group_by="county",
  count="offence"), <the 3,136 counties>, 1, values=<the 7 offences>, upper=1000,
  max_contributions=5, max_per_group=2)`` with secure randomness: the plan, the file read
  (as text), every record indexed, each person bounded, the counts released (a tiny
  release first, untimed: the imports and first calls, as the floor's warm-up).

Writes ``benchmarks/results/records.json`` (medians of wall and CPU seconds, their ratio)
and prints a table. Run: ``python benchmarks/bench_records.py [--quick] [--reps 3]``
(``--quick``: 10^6 records).
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

RESULTS = Path(__file__).resolve().parent / "results" / "records.json"

_FLOOR = """
import sys, time
import pyarrow as pa, pyarrow.csv as pcsv
path = sys.argv[1]
pa.table({"county": [1], "offence": ["x"], "person_id": [1]}).group_by(
    ["county", "offence"]).aggregate([("person_id", "count")])  # warm
w, c = time.perf_counter(), time.process_time()
t = pcsv.read_csv(path)
r = t.group_by(["county", "offence"]).aggregate([("person_id", "count")])
print(time.perf_counter() - w, time.process_time() - c, r.num_rows)
"""

_RECORDS = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
from dpfix.experiments.incidents import OFFENCES
from dpfix.release.records import Records, privatize_records
path, groups, C, c = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
UPPER = int(sys.argv[5])
counties = open(groups).read().split()
warm = {"person_id": [1, 1], "county": counties[:2], "offence": ["RAPE"] * 2}
privatize_records(Records(warm, "person_id", "county", "offence"), counties, 1.0,
                  values=list(OFFENCES), upper=UPPER, max_contributions=C,
                  max_per_group=c)  # warm: the imports and first calls
w, t = time.perf_counter(), time.process_time()
r, s = privatize_records(Records(path, "person_id", "county", "offence"), counties, 1.0,
                         values=list(OFFENCES), upper=UPPER, max_contributions=C,
                         max_per_group=c, confidential=True)
wall, cpu = time.perf_counter() - w, time.process_time() - t
print(wall, cpu, json.dumps(s.report["records"]["seconds"]))
"""


def _run(code: str, *args: str) -> tuple:
    out = subprocess.run([sys.executable, "-c", code, *args], check=True,
                         capture_output=True, text=True).stdout.split(maxsplit=2)
    return float(out[0]), float(out[1]), out[2].strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^6 records")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--max-contributions", type=int, default=5)
    parser.add_argument("--max-per-group", type=int, default=2)
    parser.add_argument("--upper", type=int, default=1000)
    args = parser.parse_args()
    from dpfix.experiments.incidents import incidents

    N = 10**6 if args.quick else 10**7
    load = os.getloadavg()
    C, c = args.max_contributions, args.max_per_group
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        data = incidents(N, counties=3136, seed=0)
        path, _ = data.write(folder)
        groups = Path(folder) / "groups.txt"
        groups.write_text("\n".join(data.groups["county"]))
        persons = int(data.records["person_id"].nunique())
        largest = int(data.records.groupby("person_id").size().max())
        del data
        made = time.perf_counter() - start
        size = os.path.getsize(path)
        runs: dict = {"floor": [], "records": []}
        for _ in range(args.reps):
            runs["floor"].append(_run(_FLOOR, str(path)))
            runs["records"].append(_run(_RECORDS, str(path), str(groups), str(C), str(c),
                                        str(args.upper)))
    med = {k: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v))
           for k, v in runs.items()}
    steps = [json.loads(r[2]) for r in runs["records"]]
    stages = {k: statistics.median(st[k] for st in steps) for k in steps[0]}
    result = {
        "records": N, "persons": persons, "largest_contribution": largest,
        "file_mb": size / 2**20, "make_seconds": made, "max_contributions": C,
        "max_per_group": c, "upper": args.upper, "reps": args.reps,
        "runs": {k: [r[:2] for r in v] for k, v in runs.items()},
        "records_stages_wall": stages,
        "median_wall": {k: v[0] for k, v in med.items()},
        "median_cpu": {k: v[1] for k, v in med.items()},
        "ratio_wall": med["records"][0] / med["floor"][0],
        "ratio_cpu": med["records"][1] / med["floor"][1],
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "load_average_before": load, "load_average_after": os.getloadavg()},
    }
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{N} records ({size / 2**20:.0f} MB CSV, {persons} persons, largest "
          f"{largest}), C = {C}, c = {c}, {args.reps} runs each")
    print(f"{'':10} {'wall s':>8} {'cpu s':>8}")
    for k, (w, t) in med.items():
        print(f"{k:10} {w:8.2f} {t:8.2f}")
    print(f"{'ratio':10} {result['ratio_wall']:8.2f} {result['ratio_cpu']:8.2f}")
    print(f"load average before {load}, after {os.getloadavg()}")
    print("records, wall seconds by stage: " + ", ".join(f"{k} {v:.2f}"
                                                      for k, v in stages.items()))


if __name__ == "__main__":
    main()
