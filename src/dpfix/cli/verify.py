"""``dpfix verify``: run the checks of the paper's results and print a table.

The checks are the scripts ``proofs_checks/check_*.py`` (in an installed
dpfix, the package ``dpfix.proofs_checks``); :mod:`dpfix.explore.verification` loads
and runs them. The exit code is 1 if any check fails or checks no case; a
check that needs an optional extra which is not installed is skipped with one
line naming the extra, and counted in the summary.

The stated times (:data:`QUICK_TIME`, :data:`FULL_TIME`) are the README's,
which gives the measurements they round.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dpfix.cli._arguments import plain_int
from dpfix.explore.verification import (
    EVERY_LAM_NS,
    checked,
    find_checks_dir,
    format_table,
    load_checks,
)

__all__ = ["add_parser", "run", "QUICK_TIME", "FULL_TIME"]

#: How long ``--quick`` takes (README, ``dpfix verify``: measured 21-43 s).
QUICK_TIME = "under a minute on 2 cores"
#: How long ``--full`` takes (README, ``dpfix verify``: measured 620 s).
FULL_TIME = "about 10 minutes on 2 cores"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dpfix verify``."""
    p = sub.add_parser(
        "verify", help="check the paper's results on exhaustive small cases",
        description="Check the paper's results on exhaustive small cases, one script per "
                    "result, and print a table: result, statement, cases checked, outcome, "
                    "seconds. Progress goes to standard error; the exit code is 1 if any "
                    "check fails or checks no case. A check that needs an optional extra "
                    "which is not installed is skipped with one line naming it.",
        epilog="examples: dpfix verify --quick --jobs 2; dpfix verify --only \"Theorem 4\"")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", dest="mode", action="store_const", const="quick",
                   help=f"the CI subset (default; {QUICK_TIME})")
    g.add_argument("--full", dest="mode", action="store_const", const="full",
                   help=f"the exhaustive grid ({FULL_TIME})")
    g.add_argument("--every-lam", dest="mode", action="store_const", const="every-lam",
                   help="at size --n, every chamber and every breakpoint of lam instead "
                        "of the lam grid, an irrational breakpoint exactly over Q(lam) "
                        "(Lemma 1, Theorems 2, 3, 4, Corollaries 2, 3, Theorem A; dpfix "
                        "docs every_lam)")
    p.add_argument("--n", type=plain_int, default=3,
                   help="with --every-lam: the size, 2 or 3 (default 3)")
    p.add_argument("--only", metavar="NAME",
                   help="run the checks whose file name or result contains NAME as whole "
                        "words, e.g. \"Theorem 1\" (not Theorem 10)")
    p.add_argument("--jobs", type=plain_int, default=1,
                   help="worker processes, each running whole checks (default 1)")
    p.add_argument("--dir", help="folder of check scripts (default: $DPFIX_CHECKS, "
                   "./proofs_checks, or the installed checks)")
    p.set_defaults(mode="quick")
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``dpfix verify``: 0 if no check failed and at least one passed, else 1."""
    if args.mode == "every-lam" and args.n not in EVERY_LAM_NS:
        raise ValueError(f"--n: every-lam checks run at n in {EVERY_LAM_NS}, got {args.n}")
    checks = load_checks(find_checks_dir(args.dir), args.only)
    if args.mode == "every-lam":
        checks = [(name, m) for name, m in checks if hasattr(m, "every_lam")]
    if args.jobs < 1:
        raise ValueError(f"--jobs: a number of processes >= 1, got {args.jobs}")
    rows = []
    for row in checked(checks, args.mode, n=args.n, jobs=args.jobs):
        rows.append(row)
        state = row.detail if row.outcome == "skipped" else row.outcome
        print(f"  {row.result}: {state} ({row.cases} cases, {row.seconds:.1f} s)",
              file=sys.stderr, flush=True)
    print(format_table(rows))
    if args.mode == "every-lam":
        print()
        for r in rows:
            if r.outcome == "ok":
                print(f"{r.result}: {r.detail}")
    skipped = [r for r in rows if r.outcome == "skipped"]
    bad = [r for r in rows if r.outcome not in ("ok", "skipped")]
    if skipped:
        print()
    for r in skipped:
        print(f"{r.result} ({r.name}): {r.detail}")
    for r in bad:
        print(f"\n{r.result} ({r.name}): {r.outcome}\n{r.detail}")
    total = sum(r.seconds for r in rows)
    passed = len(rows) - len(bad) - len(skipped)
    print(f"\n{passed} passed, {len(bad)} failed, {len(skipped)} skipped "
          f"({args.mode} mode, {total:.1f} s)")
    if not passed and not bad:
        print("nothing was verified: every check chosen was skipped")
    return 1 if bad or not passed else 0
