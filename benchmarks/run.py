"""Run every benchmark (``bench_*.py``) in turn; ``--quick`` passes on to each.

Each script prints its own table of medians and writes ``benchmarks/results/*.json``;
the README quotes those figures. Timings are medians of repeated runs, never
timed assertions in tests.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the short version of each")
    parser.add_argument("--only", help="run the scripts whose name contains this")
    args = parser.parse_args()
    failed = []
    for script in sorted(Path(__file__).parent.glob("bench_*.py")):
        if args.only and args.only not in script.name:
            continue
        if script.name == "bench_postprocess.py":
            cmd = [sys.executable, str(script), "--reps", "50" if args.quick else "200"]
        else:
            cmd = [sys.executable, str(script)] + (["--quick"] if args.quick else [])
        print(f"== {script.name}", flush=True)
        if subprocess.run(cmd).returncode:
            failed.append(script.name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
