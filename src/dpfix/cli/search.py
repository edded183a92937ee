"""``dpfix search``: the smallest exact counterexample to a conjecture written in a file.

``dpfix search conj.py --over F --n 2..4 --lam 2,3/2 --z compositions:6 --jobs 2``
imports ``conj.py``, calls its function ``predicate`` (``--function`` for another
name) on every vertex of F of every instance, in the order of
:func:`dpfix.explore.search.smallest_counterexample` (``n`` ascending, then ``lam``, then
``z``), and prints the first one where it returns False, exactly: the instance, the
witness as aligned fractions, and the instance as Python.

Exit codes: 0 when the predicate held on every instance visited (the line says how
many, and whether a budget stopped the search), 1 when a counterexample is found, 2
for bad input (a missing file, no such function, a bad range or target, options that
give no instance at all, a predicate that raises: its traceback is printed first, then
the one line naming the instance; a predicate that returns something other than a bool
or calls ``sys.exit``: one line), 128 + N when signal N (SIGINT, SIGTERM, SIGHUP)
stops it: one line, and no worker process is left behind.

``--budget 30s`` also stops a predicate that never returns (:mod:`dpfix.explore.search`:
with ``--jobs 2`` its worker processes are terminated at the deadline; with one job
``SIGALRM`` interrupts it).
"""

from __future__ import annotations

import argparse
import sys
import traceback
import warnings
from typing import Any

from dpfix.cli._arguments import plain_int
from dpfix.explore.instances import parse_lams, parse_n, parse_targets

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dpfix search``."""
    p = sub.add_parser(
        "search", help="the smallest exact counterexample to a predicate in a Python file",
        description="Call the function `predicate` of a Python file on every object of "
                    "every small instance (n ascending, then lam, then z in the given "
                    "order) and print the first counterexample exactly. Over a polytope "
                    "(U, F, RF, RU, their -pairs and delta forms) the function is called as "
                    "predicate(vertex, instance); over 'instance' as predicate(instance); "
                    "over 'mechanism[:NAME]' as predicate(mechanism, instance). It returns "
                    "a bool: True where the conjecture holds.",
        epilog="example: dpfix search conj.py --over F --n 2..4 --lam 2,3/2 --z "
               "compositions:6 --jobs 2 --budget 30s. Exit 0: none found; 1: found; "
               "2: bad input (a predicate that raises, returns a non-bool or exits; no "
               "instance at all); 128 + N: stopped by signal N.")
    p.add_argument("file", help="the Python file defining the predicate")
    p.add_argument("--function", default="predicate",
                   help="the name of the function in the file (default predicate)")
    p.add_argument("--over", default="F",
                   help="what the predicate receives: instance, U, F, RF, RU, F-pairs, "
                        "RF-pairs, U-pairs, RU-pairs, U_delta, F_delta, RF_delta, RU_delta, "
                        "U_lifted, F_lifted (with --delta), mechanism or mechanism:NAME "
                        "(default F)")
    p.add_argument("--n", default="2..3", help="sizes: 3, 2..4 or 2,3 (default 2..3)")
    p.add_argument("--lam", default="2",
                   help="values of lam in order: 2,3/2, or height:H (every p/q > 1 with "
                        "max(p, q) <= H) (default 2)")
    p.add_argument("--z", default="named",
                   help="targets: named (default), compositions:N (every c/N' with N' <= N; "
                        "compositions:N:reversal up to reversal, compositions:N:positive "
                        "every entry > 0), random:COUNT[:SEED], or "
                        "explicit 1/2,1/3,1/6 (several separated by ;)")
    p.add_argument("--delta", help="the delta of the delta forms, a rational in [0, 1)")
    p.add_argument("--jobs", type=plain_int, default=1, help="worker processes (default 1)")
    p.add_argument("--budget",
                   help="stop after this many instances (1000) or this long (30s, 2m, 1h; "
                        "a predicate still running at the deadline is stopped)")
    p.add_argument("--cache", help="a JSON-lines file of visited instances: a rerun skips "
                                   "the instances where the predicate held")
    p.add_argument("--progress", action="store_true",
                   help="a progress bar on stderr (default: when stderr is a terminal)")
    return p


def _load(path: str, name: str) -> Any:
    from dpfix.explore.search import FilePredicate

    predicate = FilePredicate(path, name)  # OSError: a missing or unreadable file
    try:
        predicate.load()
    except LookupError as exc:
        raise ValueError(str(exc)) from None
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        raise ValueError(f"{path}: importing it raised {type(exc).__name__}: {exc}") from None
    return predicate


def run(args: argparse.Namespace) -> int:
    """Run ``dpfix search``: print the counterexample (1) or what was visited (0)."""
    from dpfix.explore.search import (
        BudgetReached,
        PredicateError,
        PredicateTypeError,
        smallest_counterexample,
    )

    ns, lams, targets = parse_n(args.n), parse_lams(args.lam), parse_targets(args.z)
    budget = int(args.budget) if args.budget and args.budget.isdigit() else args.budget
    predicate = _load(args.file, args.function)
    progress = args.progress or sys.stderr.isatty()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BudgetReached)  # printed from result.stopped
            result = smallest_counterexample(predicate, over=args.over, n=ns, lam=lams,
                                             z=targets, budget=budget, jobs=args.jobs,
                                             cache=args.cache, progress=progress,
                                             delta=args.delta)
    except PredicateTypeError as exc:
        raise ValueError(str(exc)) from None
    except PredicateError as exc:
        last = exc.traceback.strip().splitlines()[-1]
        if exc.exception_type == "SystemExit":
            raise ValueError(f"{predicate!r} called sys.exit ({last}) at {exc.instance!r}: a "
                             "predicate returns a bool (True where the conjecture holds)"
                             ) from None
        print(exc.traceback, file=sys.stderr, end="")
        raise ValueError(f"{predicate!r} raised {last} at {exc.instance!r}") from None
    if not result.found:
        stop = f"; {result.stopped}" if result.stopped else ""
        print(f"no counterexample: {predicate!r} held over {args.over} on every one of the "
              f"{result.visited} instances visited{stop}")
        return 0
    print(result.counterexample)
    print(f"instance: {result.counterexample.instance!r}")
    return 1
