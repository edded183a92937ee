"""``dpfix verify``: run the checks of the paper's results and print a table.

The checks are the scripts ``proofs_checks/check_*.py`` (in an installed
dpfix, the package ``dpfix.proofs_checks``); :mod:`dpfix.verification` loads
and runs them. The exit code is 1 if any check fails or checks no case.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dpfix.verification import find_checks_dir, format_table, load_checks, run_checks

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dpfix verify``."""
    p = sub.add_parser(
        "verify", help="check the paper's results on exhaustive small cases",
        description="Check the paper's results on exhaustive small cases, one script per "
                    "result, and print a table: result, statement, cases checked, outcome, "
                    "seconds. Progress goes to standard error; the exit code is 1 if any "
                    "check fails or checks no case.",
        epilog="examples: dpfix verify --quick; dpfix verify --only \"Theorem 4\"")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", dest="mode", action="store_const", const="quick",
                   help="the CI subset (default; under 2 minutes)")
    g.add_argument("--full", dest="mode", action="store_const", const="full",
                   help="the exhaustive grid (about 25 minutes)")
    p.add_argument("--only", metavar="NAME",
                   help="run the checks whose file name or result contains NAME as whole "
                        "words, e.g. \"Theorem 1\" (not Theorem 10)")
    p.add_argument("--dir", help="folder of check scripts (default: $DPFIX_CHECKS, "
                   "./proofs_checks, or the installed checks)")
    p.set_defaults(mode="quick")
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``dpfix verify``: 0 if every check passed, else 1."""
    checks = load_checks(find_checks_dir(args.dir), args.only)
    rows = []
    for name, module in checks:
        (row,) = run_checks([(name, module)], args.mode)
        rows.append(row)
        print(f"  {row.result}: {row.outcome} ({row.cases} cases, {row.seconds:.1f} s)",
              file=sys.stderr, flush=True)
    print(format_table(rows))
    bad = [r for r in rows if r.outcome != "ok"]
    for r in bad:
        print(f"\n{r.result} ({r.name}): {r.outcome}\n{r.detail}")
    total = sum(r.seconds for r in rows)
    print(f"\n{len(rows) - len(bad)} passed, {len(bad)} failed ({args.mode} mode, {total:.1f} s)")
    return 1 if bad else 0
