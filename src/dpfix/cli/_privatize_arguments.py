"""``dpfix privatize``'s command line: its flags and their help (docs/release.md, section 8).

Every flag is parsed into the library's plan (:mod:`dpfix.cli._privatize_plan`); the help
texts state the library's policy in the command's words.
"""

from __future__ import annotations

import argparse
from typing import Any

from dpfix.constructors import CONSTRUCTORS, SELECTORS
from dpfix.release.bounds import BOUND_MARGIN, UPPER_MAX, UPPER_SHARE
from dpfix.release.budget import EPSILON_RANGE, MAX_UPPER, UNITS
from dpfix.release.privatizers import DEFAULT_POSTPROCESS, POSTPROCESSORS, PRIVATIZERS

__all__ = ["add_parser"]


def _records_flags(p: argparse.ArgumentParser) -> None:
    """The flags of ``--records`` (dpfix docs records), in a section of their own."""
    g = p.add_argument_group(
        "records (--records: INPUT holds one row per incident, not counts)",
        "each person's records are bounded (at most --max-contributions C in all, "
        "--max-per-group c in any one group: a uniformly random subset among the largest "
        "meeting both caps), counted per declared group of --groups and released under the "
        "privacy unit person:C:c: neighbouring record sets differ by one person, all their "
        "records added or removed; one person then changes at most C counts, by at most c in "
        "a row, so every count column may spend the whole --epsilon, its mechanisms at its "
        "share / C (the columns compose in parallel; proof: dpfix docs records). The report, "
        "the ledger and the confidential report state the unit. --column, --key, "
        "--histogram and --unit do not apply. Example: dpfix privatize records.csv "
        "--records --person person_id --group-by county --groups counties.csv --count "
        "offence --values MURDER,RAPE --epsilon 1 --upper auto --max-contributions 3 "
        "--out counts.csv")
    g.add_argument("--records", action="store_true",
                   help="INPUT is a CSV or Parquet file of records (a CSV file larger than "
                        "1 GiB is read in blocks and partitioned by person on disk, never "
                        "whole; --engine dask: a Parquet dataset or a glob of CSV files)")
    g.add_argument("--person", metavar="COL", help="the column of the persons (required)")
    g.add_argument("--group-by", action="append", metavar="COL[,COL]",
                   help="the column(s) of the groups, the rows of the output (required)")
    g.add_argument("--groups", metavar="FILE",
                   help="the declared groups, public (a CSV or Parquet file with the "
                        "--group-by columns and the --keep ones): every group a row, 0 when "
                        "no record falls in it; a record of another group is dropped")
    g.add_argument("--count", metavar="COL",
                   help="the column whose --values are counted, one count column each "
                        "(default: every record counted in one column count)")
    g.add_argument("--values", action="append", metavar="V[,V]",
                   help="with --count: the public values counted (a record with another "
                        "value is dropped); --column-epsilon V=EPS and --upper V=UPPER set "
                        "one value's column")
    g.add_argument("--max-contributions", metavar="C",
                   help="C, the most records a person keeps in all (required), or auto: C "
                        "chosen privately, a DP --contributions-quantile of the records per "
                        "person spending --contributions-share of --epsilon (reported)")
    g.add_argument("--max-per-group", metavar="c",
                   help="c <= C, the most records a person keeps in one group (default C)")
    g.add_argument("--contributions-share", metavar="FRACTION",
                   help="with --max-contributions auto: the share of --epsilon spent on C, in "
                        "(0, 1) (default 0.1); the release gets the rest")
    g.add_argument("--contributions-quantile", metavar="Q",
                   help="with --max-contributions auto: the share of persons whose records C "
                        "keeps whole, in (0, 1] (default 0.9)")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dpfix privatize``."""
    import inspect

    from dpfix.release.options import FRAMEWORKS, REMAPS
    from dpfix.release.pipeline import privatize_counts
    from dpfix.release.privatizers.deconvolve import ESTIMATORS

    default_framework = inspect.signature(privatize_counts).parameters["framework"].default
    one_stage = [k for k, v in CONSTRUCTORS.items() if v.stage == "one-stage"]
    p = sub.add_parser(
        "privatize", help="privatize columns of counts (two-stage pipeline)",
        description="Replace columns of counts by differentially private counts "
                    "(paper Section 1.2: a private target distribution z, then a count "
                    "mechanism T with fixed point z). Writes the table with the columns "
                    "replaced. Nothing derived from the true data without noise is printed "
                    "or written, except to --confidential-report.",
        epilog="examples: dpfix privatize crime_data.csv --column MURDER --epsilon 1 "
               "--upper 50 --out private.csv --report report.json --plot plot.png; "
               "dpfix privatize t.csv --column A --column B --epsilon 1 "
               "--column-epsilon A=0.3 --upper 50 --upper B=20 --out o.csv; "
               "dpfix privatize --demo --out-dir out/run")
    p.add_argument("input", nargs="?", metavar="INPUT",
                   help="CSV or Parquet table of counts (or a histogram file with --histogram); "
                        "- reads a CSV table or histogram from standard input")
    p.add_argument("--column", action="append", metavar="COL",
                   help="a column of non-negative integer counts; repeat it to privatize "
                        "several columns in one run, each independently with its own share "
                        "of --epsilon (sequential composition: the shares add up to the total)")
    p.add_argument("--sep", metavar="CHAR",
                   help="the field separator of a CSV table (default ','; 'tab' or '\\t' for "
                        "tabs); the output uses the same")
    p.add_argument("--histogram", action="store_true",
                   help="INPUT has rows count,number; the output is the histogram of the "
                        "privatized counts in the same format")
    p.add_argument("--header", action=argparse.BooleanOptionalAction, default=None,
                   help="with --histogram: the first line is (--header) or is not (--no-header) "
                        "a header. Default: a header exactly when one of its cells is empty or "
                        "not a number (count,number or ,0); a line of numbers such as 0.0,5, "
                        "\"0\",\"300\" or 0,300, is data (quotes and a trailing separator do "
                        "not count) and is never copied to the output as a header")
    names = {r: ", ".join(k for k, v in EPSILON_RANGE.items() if v == r)
             for r in EPSILON_RANGE.values()}
    ranges = "; ".join(f"{lo:g} to {hi:g} for {who}" for (lo, hi), who in names.items())
    p.add_argument("--epsilon", help="total privacy budget eps_t > 0 of the run, split "
                   "between the stages, and with several --column split equally over the "
                   f"columns (or by --column-epsilon); usable range per column {ranges}")
    p.add_argument("--unit", default=None, metavar="UNIT",
                   help="the privacy unit, what one individual can change (dpfix docs "
                        f"release): row (default: {UNITS['row'][0]}, c = 1; the columns compose "
                        f"sequentially: --epsilon is the sum of their shares) or cell "
                        f"({UNITS['cell'][0]}; the columns are then disjoint and compose in "
                        "parallel: every column may spend the whole --epsilon); row:C or "
                        "cell:C for a bound C > 1 (each mechanism then runs at its share / C: "
                        "group privacy). With --records the unit is person:C:c (one person "
                        "added or removed, all their records, bounded to at most C in all "
                        "and c per group: the columns compose in parallel, each at its share "
                        "/ C; dpfix docs records), set by --max-contributions and "
                        "--max-per-group: --unit is refused there")
    p.add_argument("--column-epsilon", action="append", metavar="COL=EPS",
                   help="with several --column: the budget of column COL (repeatable). The "
                        "columns without one split the rest of --epsilon equally; with one "
                        "for every column they must add up to --epsilon exactly (in decimal: "
                        "0.3 and 0.7 make 1)")
    p.add_argument("--upper", action="append", metavar="UPPER or COL=UPPER",
                   help="public upper bound on the counts: a parameter you choose, "
                   "not computed from the data (n = upper + 1 values, at most "
                   f"{MAX_UPPER}), or auto: chosen privately, by the exponential mechanism on "
                   "the top-coding loss of each candidate bound, spending --upper-share of "
                   "the column's budget (reported; dpfix docs bounds). Counts above it are "
                   "top-coded to it; how many were is "
                   "derived from the true data, so it is written to --confidential-report "
                   "only. With several --column: one value for every column, and/or "
                   "COL=UPPER for one column (repeatable; COL=auto too)")
    p.add_argument("--upper-share", metavar="FRACTION",
                   help="with --upper auto: the share of each such column's budget spent on "
                        f"its bound, in (0, 1) (default {UPPER_SHARE:g}, at most {UPPER_MAX:g} of "
                        "eps in all); the rest goes to the release (sequential composition). "
                        f"The bound is the candidate drawn plus round({BOUND_MARGIN} / "
                        "eps_upper) counts")
    p.add_argument("--out", help="output table (CSV or Parquet by its suffix); must not exist; "
                                 "- writes CSV to standard output (the summary then goes to "
                                 "stderr), only once everything else is complete")
    p.add_argument("--key", action="append", metavar="COL",
                   help="a key column written to the output as it is (repeatable); the "
                        "output holds only the privatized column, --key and --keep columns")
    p.add_argument("--order", default=None, choices=["key", "shuffled", "input", "groups"],
                   help="the order of the output's rows: key (default with --key: sorted by "
                        "the key columns, equal keys in random order), shuffled (default "
                        "without --key: a secure random permutation; reproducible with "
                        "--seed), input (the input's order, which may follow the "
                        "confidential data; the report says so). --engine dask: shuffled "
                        "(partitions and the rows within each) or input. --records: groups "
                        "(default: the declared order of --groups, public), key (sorted by "
                        "the --group-by columns) or shuffled")
    p.add_argument("--keep", action="append", metavar="COL",
                   help="pass another column through, declaring it public (repeatable); "
                        "every column not named is dropped (it is not private). With "
                        "--records: a column of the --groups file (the county's name)")
    p.add_argument("--escape-formulas", action="store_true",
                   help="a CSV output: prefix with a single quote every --key/--keep cell "
                        "(and header cell) that starts with =, +, -, @, a tab or a carriage "
                        "return and is not a plain number, which a spreadsheet would run as a "
                        "formula (without it such cells are written as they are, with one "
                        "warning per column)")
    released = [name for name, info in CONSTRUCTORS.items() if info.release]
    p.add_argument("--constructor", default=None, choices=released,
                   metavar="NAME",
                   help=f"stage 2, the count mechanism T: {', '.join(released)}. "
                        "Default northwest (the optimum of F for every convex loss, Theorem A; "
                        "heuristic is the paper's Algorithm 1); lp: small --upper only; "
                        f"{', '.join(one_stage)}: one-stage, all of eps_t on the counts")
    p.add_argument("--selector", default=None, choices=list(SELECTORS), metavar="NAME",
                   help=f"the heuristic's column selector: {', '.join(SELECTORS)} "
                        "(default best: every selector's mechanism, the least estimated "
                        "count error)")
    p.add_argument("--split", default=None,
                   help="fraction of eps_t for stage 1, or rule-of-thumb (the paper's, the "
                        "default of the two-stage framework; the hybrid framework has its own "
                        "rule by default, the one-stage framework no stage 1)")
    p.add_argument("--privatizer", default=None, choices=list(PRIVATIZERS),
                   metavar="NAME",
                   help=f"stage 1, the private target z: {', '.join(PRIVATIZERS)} "
                        "(default cyclic-laplace; cyclic-gaussian needs --delta)")
    p.add_argument("--postprocess", default=None, choices=list(POSTPROCESSORS), metavar="NAME",
                   help=f"stage 1 post-processing: {', '.join(POSTPROCESSORS)} "
                        f"(default {DEFAULT_POSTPROCESS})")
    p.add_argument("--framework", default=None, choices=list(FRAMEWORKS),
                   help=f"{', '.join(FRAMEWORKS)} (default {default_framework}): two-stage "
                        "is the paper's (a private target z, then T); one-stage releases "
                        "y = G(x) at the whole budget and estimates z from the histogram of y, "
                        "hybrid adds a cyclic Laplace release at eps_1 to that estimate; both "
                        "then remap every y onto z (post-processing; --constructor northwest "
                        "only). See dpfix docs no_split.")
    p.add_argument("--estimator", default=None, choices=list(ESTIMATORS),
                   help=f"one-stage and hybrid frameworks: how z is estimated from the "
                        f"histogram of y: {', '.join(ESTIMATORS)} (default {ESTIMATORS[0]})")
    p.add_argument("--remap", default=None, choices=list(REMAPS),
                   help=f"one-stage and hybrid frameworks: how every y is mapped onto z: "
                        f"{', '.join(REMAPS)} (default {REMAPS[0]}: the northwest remap R(z), "
                        "so every row follows T = G R(z); quantile: a monotone matching, the "
                        "output histogram is z apportioned to the rows)")
    p.add_argument("--joint", action="append", metavar="A,B[,C]",
                   help="release the --column pair A,B (or triple A,B,C) with their joint "
                        "distribution as the fixed point (product noise, a deconvolution, an "
                        "optimal transport remap; repeatable; with --split the two-stage "
                        "framework, stage 1 the joint Laplace mechanism). See dpfix docs "
                        "joint.")
    p.add_argument("--engine", default="local", choices=["local", "dask"],
                   help="local (default) or dask: INPUT is a Parquet dataset (folder) or a "
                        "glob of CSV files, --out a Parquet dataset folder; stage 1 on the "
                        "summed histogram, stage 2 per partition. With --records: INPUT the "
                        "records' dataset (shuffled by person, bounded per partition), --out "
                        "the table's file")
    p.add_argument("--dask-scheduler", metavar="ADDRESS",
                   help="with --engine dask: a dask.distributed scheduler to run on "
                        "(default: local threads)")
    p.add_argument("--time-limit", metavar="SECONDS",
                   help="--constructor lp only: seconds for the LP solver (HiGHS); reaching "
                        "it ends the run with one line (exit code 1), nothing written")
    p.add_argument("--delta", help="the delta of an (eps, delta) method, required by "
                   "--privatizer cyclic-gaussian (stage 1) and --constructor discrete-gaussian "
                   "(the release); with several --column the total, split equally")
    p.add_argument("--seed", help="reproducible run with numpy's samplers (NOT FOR "
                   "PRODUCTION); without it stage 1 uses OpenDP's secure samplers")
    p.add_argument("--report", help="JSON report: budgets and split, n, N, target z, "
                   "estimated count error, realized privacy level of T, samplers, time to build T; "
                   "with --ledger, the ledger's total, spent and balance after the run")
    p.add_argument("--plot", help="plot of z and the output distribution (png, pdf, svg, ...)")
    p.add_argument("--confidential-report", metavar="PATH",
                   help="JSON derived from the true data WITHOUT noise (true distribution, "
                        "realized errors, number of top-coded counts): do not publish")
    p.add_argument("--ledger", metavar="FILE",
                   help="a budget ledger (JSON lines): the run's eps (and delta) is charged to "
                        "it with the input's path, the columns and the --unit, and a run the "
                        "balance cannot pay is refused before anything is written; runs on one "
                        "ledger wait for each other; a --force rerun charges again. The report "
                        "gives the balance")
    p.add_argument("--ledger-total", metavar="EPS",
                   help="creating a --ledger: its total eps, fixed for good (an existing "
                        "ledger knows its own; a different value is refused)")
    p.add_argument("--ledger-delta-total", metavar="DELTA",
                   help="creating a --ledger: its total delta (default 0: pure eps-DP runs "
                        "only)")
    _records_flags(p)
    p.add_argument("--force", action="store_true", help="overwrite existing output files")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no warnings")
    p.add_argument("--demo", action="store_true",
                   help="run on the package's synthetic table and, when the shared data "
                        "folder exists, on crime_data.csv (MURDER, upper 50)")
    p.add_argument("--out-dir", help="folder of the --demo outputs (default out/privatize)")
    return p
