"""``dpfix reproduce``: the paper's Section 6 experiments with one command.

``dpfix reproduce fig3|fig5|fig6|fig7|table3|frontier|all [--quick] [--replications R]
[--out DIR] [--jobs J] [--seed S] [--quiet]`` computes each experiment's cells
(seeded per cell: results do not depend on ``--jobs`` or on the order),
stores every finished cell in ``DIR/cells.jsonl`` (a rerun computes only what
is missing), and writes CSVs and PNGs into ``DIR`` (see
:mod:`dpfix.experiments.targets` for the list). ``--quick`` runs a small
version of every target in under a minute on 2 cores (the README gives the
measurement); ``docs/reproduction.md`` compares the full run with the paper.
``frontier`` is not the paper's: it compares the two-stage, one-stage and
hybrid frameworks against the limit (50 replications in the full run;
docs/no_split.md). ``joint`` and ``bounds`` run by name only: the joint release of pairs of
columns (docs/joint.md) and ``upper="auto"`` against the best fixed bound in hindsight on
the shared data sets (20 replications, 5 with ``--quick``; docs/bounds.md); ``bounds-isotonic``
runs the same with stage 1 post-processed by ``isotonic-cdf``.

The experiments read the paper's data sets from ``$DPFIX_DATA``, else from
``../shared/data`` beside the repository or the current folder; a missing file
stops the command with one line naming the files the targets need, where they
were looked for and ``DPFIX_DATA`` (:func:`dpfix.experiments.check_data`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from dpfix.experiments import TARGETS
from dpfix.experiments.targets import EXTRA_TARGETS
from dpfix.numbers.numeric import plain_number

__all__ = ["add_parser", "run", "CHOICES"]

#: Every target of :data:`dpfix.experiments.TARGETS`, the studies run by name only
#: (``joint``: docs/joint.md; ``bounds`` and ``bounds-isotonic``: docs/bounds.md), and
#: ``all`` (the targets of ``TARGETS``).
CHOICES = (*TARGETS, *EXTRA_TARGETS, "all")


def _positive_int(name: str, text: str) -> int:
    try:
        value = int(plain_number(text, name, integer=True))
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected an integer in plain digits, got {text!r}") from None
    if value < 1:
        raise ValueError(f"{name}: must be >= 1, got {value}")
    return value


def run(args: argparse.Namespace) -> int:
    """Run ``dpfix reproduce`` (bad input raises ValueError or FileNotFoundError)."""
    from dpfix.experiments import make_config, reproduce

    targets = list(TARGETS) if args.target == "all" else [args.target]
    jobs = (os.cpu_count() or 1) if args.jobs is None else _positive_int("--jobs", args.jobs)
    reps = None if args.replications is None else _positive_int("--replications",
                                                                args.replications)
    try:
        seed = int(args.seed)
    except (TypeError, ValueError):
        raise ValueError(f"--seed: expected a non-negative integer, got {args.seed!r}") from None
    cfg = make_config(quick=args.quick, replications=reps, seed=seed)
    start = time.perf_counter()

    def log(message: str) -> None:
        if not args.quiet:
            print(f"dpfix reproduce: {message}", file=sys.stderr)

    try:
        reproduce(targets, cfg, args.out, jobs=jobs, quiet=args.quiet, log=log)
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP (dpfix.cli): say what is kept
        exc.outcome = (f"finished cells are kept in {os.path.join(args.out, 'cells.jsonl')} "
                       "(a rerun continues from them)")
        raise
    print(f"dpfix reproduce: {args.target} done in {time.perf_counter() - start:.1f} s; "
          f"outputs in {args.out}")
    return 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dpfix reproduce``."""
    p = sub.add_parser(
        "reproduce", help="reproduce the paper's experiments (Figures 3, 5-8, Table 3) and the "
                          "frontier study",
        description="Reproduce the experiments of the paper's Section 6: fig3 (distribution "
                    "privatizers vs n), fig5 (Wasserstein-1 vs eps_t), fig6 (count error vs "
                    "eps_t), fig7 (runtime vs n), table3 (best budget split, Figure 8, the "
                    "fitted rule of thumb), frontier (count error against W1 of the two-stage, "
                    "one-stage and hybrid frameworks beside the limit, and a data-independent "
                    "rule choosing among them; 50 replications), or all of these; joint (the "
                    "joint release of pairs of count columns against the per-column release, "
                    "dpfix docs joint), bounds (upper=auto against the best fixed bound "
                    "in hindsight, dpfix docs bounds) and bounds-isotonic (the same with "
                    "stage 1 post-processed by isotonic-cdf) run by name only. Results are "
                    "cached "
                    "per cell in "
                    "OUT/cells.jsonl: a rerun computes only the missing cells. The data sets "
                    "are read from $DPFIX_DATA, else ../shared/data beside the repository or "
                    "the current folder (the README lists the files of each target).",
        epilog="example: dpfix reproduce all --quick --out out/quick")
    p.add_argument("target", choices=CHOICES, help="what to reproduce")
    p.add_argument("--quick", action="store_true",
                   help="small version (2 replications, 3 eps_t values, n <= 100 for fig7, "
                        "LP capped at 2 s, frontier on 2 data sets and 5 settings): every "
                        "target together in under a minute on 2 cores")
    p.add_argument("--replications", help="replications per cell (default 10, frontier 50; "
                   "quick 2); fig7 times at most 3")
    p.add_argument("--out", default=os.path.join("out", "reproduce"),
                   help="output folder (default out/reproduce)")
    p.add_argument("--jobs", help="worker processes (default: the number of cores)")
    p.add_argument("--seed", default="0", help="base seed of every cell (default 0)")
    p.add_argument("--quiet", action="store_true", help="no progress bars or log lines")
    return p
