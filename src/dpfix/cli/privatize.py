"""``dpfix privatize``: replace columns of counts by differentially private counts.

``dpfix privatize INPUT --column COL --epsilon 1 --upper 50 --out OUTPUT`` runs
the two-stage pipeline (:func:`dpfix.release.pipeline.privatize_counts`) on a column
of a CSV or Parquet table (or on several: ``--column A --column B``) and
writes the privatized columns with the columns named by ``--key`` and
``--keep``, rows in key order or shuffled (``--order``). ``--demo`` runs it on
the package's own synthetic table and, when the shared data folder exists, on
the county homicides.

Decisions
---------
- **Only private or declared columns are written**. The output
  holds the privatized columns and the columns named by ``--key`` (keys) and
  ``--keep`` (declared public), in the table's order; every other column is
  dropped, since it is not private (on the county data ``INDEX``, the sum of
  the crime columns, gives back the true ``MURDER`` of most counties). The
  report lists the kept and the dropped columns. The table is read and
  written by :mod:`dpfix.io` (:func:`~dpfix.io.tables.read_counts`,
  :func:`~dpfix.io.tables.write_counts`): a CSV file as text, so the kept cells are
  written back byte for byte; a Parquet file with its dtypes (the
  privatized columns as int64: an input dtype such as ``uint8`` would reveal
  that every true count is below 256).
- **Histogram input** (``--histogram``: rows ``count,number`` with an optional
  header line): its ``N = sum(number)`` rows are never materialised; the
  histogram of the privatized counts is written in the same format. The first
  line is a header exactly when one of its cells is empty or not a number
  (``count,number``, ``,0``); a line of numbers (``0.0,5``, ``"0","300"``,
  ``0,300,``: quotes and a trailing separator do not count) is data.
  ``--header``/``--no-header`` decide instead (:func:`dpfix.io.tables.read_histogram`);
  a first line of numbers is never copied to the output as a header. The file is
  released by :func:`dpfix.release.table.privatize_table` with a
  :class:`~dpfix.release.table.Histogram` input, its reports the library's.
- **Nothing derived from the true data without noise is printed or written**,
  except to ``--confidential-report`` (:mod:`dpfix.io.reports`). ``N`` and
  ``n = upper + 1`` are public.
- **Errors** follow :mod:`dpfix.cli`: bad input exits 2, an internal failure
  (a RuntimeError of the LP solver or of a construction check, MemoryError,
  OverflowError, a numerical RuntimeWarning, which is an error here) exits 1,
  each with one line on stderr and nothing written.
- **All or nothing.** Every output goes to a temporary file in its own folder
  (:class:`dpfix.io.commit.StagedFiles`). When all of them are complete the summary
  is printed (so a full disk or a closed pipe on standard output stops the run
  before any file is in place), then every destination is checked and the
  files are moved into place together; a failure takes back the ones moved and
  restores any file ``--force`` replaced. Without ``--force`` a file that
  appears at an output path during the run is never replaced. SIGINT
  (Ctrl-C), SIGTERM and SIGHUP remove the temporaries and end the run with
  one line and exit code 130, 143 or 129 (:mod:`dpfix.cli`).
- **Budget range.** ``--epsilon`` must lie in :data:`EPSILON_RANGE` of the
  constructor (measured: below it the float constructions or the privacy
  check lose every digit, above it ``e^eps`` overflows the float privacy
  check), and with a split each stage gets at least :data:`MIN_STAGE_EPSILON`.
- **Randomness.** Without ``--seed`` stage 1 uses OpenDP's secure samplers
  and stage 2 the exact samplers of :mod:`dpfix.sampling` on the operating
  system's CSPRNG (docs/sampling.md); ``--seed`` makes the run reproducible
  with numpy's samplers in stage 1 and a seeded PCG64 feeding the exact
  samplers in stage 2, labelled "not for production" in the report (and with
  a warning).
- **Time limit.** ``--constructor lp`` takes ``--time-limit SECONDS`` (HiGHS);
  reaching it ends the run with one line, exit code 1, nothing written.
- **Formats and streams**. ``--out`` is CSV or Parquet by its
  suffix, whatever the input (CSV cells stay text in Parquet); ``--sep``
  sets a CSV table's separator (kept on output); ``-`` reads standard input
  (a CSV table or histogram) and writes standard output (CSV, only once every
  other output is in place, since standard output cannot be taken back: a
  failure or a signal while it is streamed says that standard output received
  a partial table; the summary then goes to stderr). ``--upper``
  goes up to :data:`MAX_UPPER_STRUCTURED` for the constructors drawn as
  ``G R`` without ``T``.
- **Outputs are regular files.** An existing output path that is not a
  regular file (a device, a FIFO, a socket, a symbolic link) is refused at the
  start, even with ``--force`` (:func:`dpfix.io.commit.not_a_regular_file`). The
  confidential report is created with mode 0600 (or the stricter mode of the
  file it replaces).
- **Row order** (``--order``). The input's order may follow the confidential
  data, so by default the rows come sorted by the ``--key`` columns (equal
  keys in random order) or, without keys, in a secure random order (with
  ``--seed``: reproducible); ``--order input`` keeps the input's order. The
  report's ``row_order`` says which (:func:`dpfix.release.order.row_order`; with
  ``--engine dask``: partitions and the rows within each shuffled, or input).
- **Several columns in one run**: ``--column A --column B``. Each
  column is privatized on its own (its own stage 1, target, mechanism and
  randomness), so the release is ``(sum of the columns' eps)``-DP by
  sequential composition. ``--epsilon`` is the **total** of the run: split
  equally over the columns by default; ``--column-epsilon COL=EPS``
  (repeatable) sets a column's share, the columns without one split the rest
  equally, and with a share for every column the shares must add up to the
  total **exactly** (the decimal texts are added as rationals: ``0.3`` and
  ``0.7`` make ``1``; ``0.3`` and ``0.6`` are refused in one line). We chose a
  fixed total over "explicit budgets, report their sum" because the total is
  what a user promises: it never grows by a typo. Each share is then rounded
  to a float so that the exact sum of the floats spent is at most the total
  (:func:`fit_shares`; ``0.1 + 0.2`` exceeds ``0.3`` in floats, so one share
  loses one ulp). ``--delta`` is likewise the total, split equally. Each
  column's share must lie in :data:`EPSILON_RANGE`. ``--upper`` is one value
  for every column, and/or ``COL=UPPER`` per column (a bare value given twice
  is refused, as is a column without a bound). The output holds every
  privatized column in the table's order, all or nothing as for one column.
  The public report keeps its shared entries once and lists each column's
  report (budget, split, target, mechanism, samplers) under ``columns`` with
  a ``composition`` entry (the shares, their exact sum, the rule); the
  confidential report lists each column's under ``columns``; ``--plot`` is
  one figure, one panel per column (one file: the outputs stay one set,
  staged and committed together). Randomness: unseeded, every column draws
  fresh secure randomness; with ``--seed`` column ``i`` gets the seed
  ``SeedSequence(seed).spawn(k)[i]`` as a 128-bit integer (independent
  streams; one column keeps the seed itself, so one-column runs are
  unchanged). Refused in one line, nothing written: a column named twice, an
  unknown column, a column both privatized and ``--key``/``--keep``, a share
  or bound for a column not privatized. ``--histogram`` stays one column (a
  histogram file has none); ``--engine dask`` privatizes several columns in the
  same passes over the partitions (one sampler and one generator per column
  and partition).
- **The privacy unit** (``--unit``, docs/release.md): ``row`` (default: one
  individual may change every column of one row, each count by at most 1; the
  columns compose sequentially, as above) or ``cell`` (one count of one row: the
  columns compose in parallel and each may spend the whole ``--epsilon``);
  ``row:C`` and ``cell:C`` for a bound ``C > 1`` (every mechanism at its share over
  ``C``). The report states the unit, the composition and the proof; the ledger's
  charge records it. The whole policy (unit, shares, ranges, row order, the
  columns written) is the library's (:func:`dpfix.release.table.privatize_table`,
  :mod:`dpfix.release.budget`): the command parses its flags and calls it.
- **Frameworks** (docs/no_split.md). ``--framework`` (choices
  :data:`dpfix.release.options.FRAMEWORKS`; default: ``privatize_counts``' own,
  the two-stage framework), ``--estimator`` (choices
  :data:`dpfix.release.privatizers.deconvolve.ESTIMATORS`) and ``--remap`` (choices
  :data:`dpfix.release.options.REMAPS`) are passed through when given, so the
  library's defaults and its refusals apply (one line, exit 2: an estimator
  or remap with the two-stage framework, a constructor other than
  northwest, a split with the one-stage framework, ...). ``--split`` has no
  default of its own: the framework's (the paper's rule of thumb for
  two-stage and hybrid, the frontier study's best hybrid split). The summary and the report name
  the framework, the estimator and the remap. With ``--engine dask`` the
  one-stage and hybrid frameworks take two passes over the partitions (``y``
  drawn, the target estimated from the summed histogram, ``y`` remapped in
  place: :func:`dpfix.release.dask.privatize_dataset`); the quantile remap, which
  sorts all rows together, is refused there in one line.
- **Joint tuples** (``--joint A,B``, docs/joint.md). The joint release runs its own
  mechanisms and reads only ``--split`` and ``--framework one-stage``: a method flag it
  would ignore (:data:`JOINT_IGNORES`: ``--constructor``, ``--privatizer``, ...) given
  with ``--joint`` is refused in one line, exit 2, even at its default value.
- **Bounds** (docs/bounds.md). ``--upper auto`` (or ``COL=auto``) chooses the
  column's bound privately: a DP quantile (:func:`dpfix.release.bounds.choose_upper`)
  spending ``--upper-share`` of the column's budget, the release the rest
  (sequential composition); the report's ``upper_bound`` states the bound, its
  budget and its quantile. Refused with ``--engine dask``. A privatized target
  with more than :data:`dpfix.release.bounds.TOP_MASS_WARNING` of its mass on
  ``upper`` prints one warning (post-processing of the private target).
- **Beyond one machine.** ``--engine dask`` calls
  :func:`dpfix.release.table.privatize_table` with a
  :class:`~dpfix.release.table.Dataset` input (which runs
  :func:`dpfix.release.dask.privatize_dataset`) on a Parquet dataset or a glob of
  CSV files and writes a Parquet dataset folder (``--dask-scheduler`` names a
  ``dask.distributed`` scheduler); its reports are the library's.
- **Budget ledger** (``--ledger FILE``, :class:`dpfix.release.ledger.Ledger`).
  The run's total eps (and delta), the exact sum of the budgets its columns
  spend, is charged to the ledger with the input's resolved path, the columns
  and the privacy unit (:data:`LEDGER_UNIT`). The charge is reserved after the
  options are checked and before the input is read or any randomness drawn,
  holding the ledger's lock (a flock on the ledger file itself, whatever name
  reaches it) until the end of the run; a run the balance cannot pay is
  refused there in one line, exit 2, nothing written. The charge is recorded
  once every output is complete, just before the outputs are moved into
  place: so a run whose outputs then fail to move has spent budget for
  nothing (safe; its error says that the charge stays), and no output is ever
  in place without its charge (a missing charge would be a privacy failure).
  A run with ``--force`` over existing outputs is charged like any other: each
  release spends budget, whatever files it replaces. Creating a ledger needs
  ``--ledger-total`` (and ``--ledger-delta-total`` for (eps, delta) runs),
  fixed for good (a new period, a new ledger); a run the new total cannot pay
  creates nothing; an existing ledger knows its own, and a different one given
  is refused. The public report's
  ``ledger`` entry gives the ledger's name, total, spent and balance after
  the run. With ``--engine dask`` the charge is recorded once every partition
  is written, just before the engine gives the dataset its staged name
  (``.OUT.staged-PID-HOST-HEX``); the commit then moves it onto ``--out`` with the
  other outputs: no dataset is in place without its charge. Not with ``--demo``.
- **Progress.** On a terminal a bar shows the stage and its elapsed time while
  ``T`` is built, then the rows; off a terminal one line on success, no
  carriage-return frames; ``--quiet``: nothing.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpfix.constructors import CONSTRUCTORS, SELECTORS
from dpfix.numbers.numeric import plain_number, require
from dpfix.release.bounds import UPPER_SHARE
from dpfix.release.budget import (
    CLI_LABELS,
    EPSILON_RANGE,
    MAX_UPPER,
    UNITS,
    column_budgets,
    column_deltas,
    column_seeds,
    column_uppers,
    privacy_unit,
)
from dpfix.release.options import check_budget, method_options
from dpfix.release.privatizers import DEFAULT_POSTPROCESS, POSTPROCESSORS, PRIVATIZERS

__all__ = ["add_parser", "run", "STRICT_WARNINGS", "JOINT_IGNORES"]

DEMO_EPSILON = 1.0
DEMO_SYNTHETIC_UPPER = 40
DEMO_CRIME = ("crime_data.csv", "MURDER", 50)
#: The key column each demo table keeps (every other column is dropped: not private).
DEMO_KEYS = {"synthetic": ["category"], "crime": ["county_name"]}
DEMO_FILES = ("privatized.csv", "report.json", "plot.png", "confidential_report.json")
#: dpfix.cli turns numerical RuntimeWarnings (overflow, invalid value) into errors here:
#: a privacy mechanism built through an overflow is refused, not released (the library's
#: privatize_table does the same).
STRICT_WARNINGS = True


# ------------------------------------------------------------------ options
def _split(text: str | None) -> Any:
    if text is None or text == "rule-of-thumb":  # None: the framework's default
        return text
    try:
        f = float(plain_number(text, "--split"))
    except ValueError:
        raise ValueError(f"--split: 'rule-of-thumb' or a fraction in (0, 1), got {text!r}") \
            from None
    if not 0 < f < 1:
        raise ValueError(f"--split: the stage-1 fraction must be in (0, 1), got {text!r}")
    return f


def _seed(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        seed = int(plain_number(text, "--seed", integer=True))
    except ValueError:
        raise ValueError(f"--seed: must be a non-negative integer, got {text!r}") from None
    if seed < 0:
        raise ValueError(f"--seed: must be a non-negative integer, got {text!r}")
    return seed


def _delta(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        delta = float(plain_number(text, "--delta"))
    except ValueError:
        raise ValueError(f"--delta: not a number: {text!r}") from None
    if not 0 < delta < 1:
        raise ValueError(f"--delta: must be in (0, 1), got {text!r}")
    return delta


def _upper_share(text: Any) -> float | None:
    if text is None:
        return None
    try:
        share = float(plain_number(text, "--upper-share"))
    except ValueError:
        raise ValueError(f"--upper-share: a fraction in (0, 1), got {text!r}") from None
    if not 0 < share < 1:
        raise ValueError(f"--upper-share: the share of a column's budget spent on the bound "
                         f"must be in (0, 1), got {text!r}")
    return share


def _time_limit(text: Any) -> float | None:
    if text is None:
        return None
    try:
        seconds = float(plain_number(text, "--time-limit"))
    except (TypeError, ValueError):
        raise ValueError(f"--time-limit: not a number of seconds: {text!r}") from None
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"--time-limit: must be a finite number of seconds > 0, got {text!r}")
    return seconds


# ------------------------------------------------------------------ several columns
@dataclass
class _Column:
    """One column's share of the run: its budget, bound, delta and seed."""

    name: str | None  # None: a histogram file
    epsilon: float
    upper: int
    delta: float | None = None
    seed: int | None = None


def _names(columns: list | None) -> list[str]:
    """The ``--column`` names in the order given, each once."""
    names = list(columns or [])
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ValueError(f"--column: {name!r} named twice")
    return names


def _per_column(values: list | None, flag: str, names: list[str | None]) -> dict:
    """``--upper 50`` (every column) and ``--upper COL=50`` (that column, the text after
    the last ``=``): ``{name: text}`` for every column, the bare value where none is given."""
    shared, specific = None, {}
    for text in values or []:
        col, eq, value = str(text).rpartition("=")
        if not eq:
            if shared is not None:
                raise ValueError(f"{flag}: given twice ({shared}, {text}); give one value for "
                                 f"every column, or {flag} COL=VALUE per column")
            shared = text
            continue
        if col not in names:
            known = ", ".join(str(n) for n in names if n is not None) or "none: a histogram"
            raise ValueError(f"{flag}: {col!r} in {text!r} is not a --column (columns: "
                             f"{known})")
        if col in specific:
            raise ValueError(f"{flag}: column {col!r} given twice")
        specific[col] = value
    out = {}
    for name in names:
        if name not in specific and shared is None:
            if names == [name] and not values:
                raise ValueError(f"{flag} is required")
            raise ValueError(f"{flag}: no value for column {name!r}; give {flag} VALUE (every "
                             f"column) or {flag} {name}=VALUE")
        out[name] = specific.get(name, shared)
    return out


def _assignments(values: list | None, names: list[str | None]) -> dict[str, str]:
    """``--column-epsilon COL=EPS`` as ``{COL: EPS}`` (each a --column, each once)."""
    out: dict[str, str] = {}
    for text in values or []:
        col, eq, value = str(text).rpartition("=")
        if not eq:
            raise ValueError(f"--column-epsilon: expected COL=EPS, got {text!r}")
        if col not in names:
            known = ", ".join(str(n) for n in names if n is not None) or "none: a histogram"
            raise ValueError(f"--column-epsilon: {col!r} is not a --column (columns: {known})")
        if col in out:
            raise ValueError(f"--column-epsilon: column {col!r} given twice")
        out[col] = value
    return out


def _plan(args: argparse.Namespace, options: dict) -> dict:
    """Every column's budget, bound, delta and seed, checked by the library's policy
    (:mod:`dpfix.release.budget`), and the keywords of
    :func:`dpfix.release.table.privatize_table` (``options`` keeps the method's)."""
    names: list[str | None] = _names(args.column)
    if args.histogram and names:
        raise ValueError("--column: a histogram file has no columns; drop --column")
    if not args.histogram and not names:
        raise ValueError("--column: name the column of counts (or give --histogram)")
    if args.histogram:
        names = [None]
    if args.epsilon is None:
        raise ValueError("--epsilon is required")
    unit = privacy_unit(getattr(args, "unit", None) or "row", "--unit")
    delta, seed = options.pop("delta"), options.pop("seed")
    share = options.pop("upper_share", None)
    method = method_options(**options)
    constructor = method.constructor
    shares = _assignments(args.column_epsilon, names)
    upper = _per_column(args.upper, "--upper", names)
    budgets, rule = column_budgets(args.epsilon, names, shares, constructor, unit, CLI_LABELS)
    uppers = column_uppers(upper, names, constructor, CLI_LABELS)
    if share is not None and "auto" not in uppers.values():
        raise ValueError("--upper-share: applies to --upper auto only; drop it")
    plans = [_Column(name, eps, uppers[name], d, s) for name, eps, d, s in
             zip(names, budgets, column_deltas(delta, len(names), unit),
                 column_seeds(seed, len(names)), strict=True)]
    for plan in plans:
        if plan.upper != "auto":  # an "auto" column's stages get the rest (checked there)
            check_budget(method, plan.epsilon / unit.bound)
    return {"plans": plans, "rule": rule, "unit": unit, "method": method, "upper_share": share,
            "call": {"columns": None if args.histogram else names, "eps": args.epsilon,
                     "upper": upper[None] if args.histogram else upper, "unit": unit,
                     "shares": shares, "delta": delta, "seed": seed, "options": method,
                     "upper_share": share, **_joint(getattr(args, "joint", None), args)}}


#: The flags of a method that the joint release does not read (it runs its own mechanisms;
#: it reads --split, and --framework one-stage).
JOINT_IGNORES = ("constructor", "selector", "privatizer", "postprocess", "estimator", "remap",
                 "time_limit")


def _joint(values: list | None, args: argparse.Namespace | None = None) -> dict:
    """``--joint A,B`` or ``A,B,C`` (repeatable): the ``joint=`` tuples of privatize_table,
    if any; a flag of :data:`JOINT_IGNORES` given with them is refused (the library
    refuses the options it would ignore too, by their parameters' names)."""
    if not values:
        return {}
    given = [f"--{name.replace('_', '-')}" for name in JOINT_IGNORES
             if getattr(args, name, None) is not None]
    if given:
        raise ValueError(f"--joint: the joint release runs its own mechanisms (product noise, "
                         f"a joint deconvolution, a transport remap) and reads only --split and "
                         f"--framework; it would ignore {', '.join(given)}: drop "
                         f"{'it' if len(given) == 1 else 'them'}")
    pairs = []
    for text in values:
        parts = [p.strip() for p in str(text).split(",")]
        if len(parts) not in (2, 3) or not all(parts):
            raise ValueError(f"--joint: two columns as A,B or three as A,B,C, got {text!r}")
        pairs.append(tuple(parts))
    return {"joint": pairs}


def _method_options(args: argparse.Namespace) -> dict:
    """The pipeline's options (the names were checked by argparse's choices)."""
    constructor = args.constructor or "northwest"
    options = {"constructor": constructor, "selector": args.selector or "best",
               "split": _split(args.split), "privatizer": args.privatizer or "cyclic-laplace",
               "postprocess": args.postprocess, "seed": _seed(args.seed),
               "delta": _delta(args.delta),
               "upper_share": _upper_share(getattr(args, "upper_share", None))}
    for name in ("framework", "estimator", "remap"):  # given: passed on (else the library's
        value = getattr(args, name, None)              # defaults apply)
        if value is not None:
            options[name] = value
    limit = _time_limit(getattr(args, "time_limit", None))
    if limit is not None:
        if constructor != "lp":
            raise ValueError(f"--time-limit: applies to --constructor lp only, not "
                             f"{constructor!r}; drop it")
        options["time_limit"] = limit
    return options


def _check_outputs(outputs: dict[str, Path | None], force: bool, inputs: list[Path],
                   missing_folders_ok: bool = False) -> None:
    """Refuse output paths that clash, overwrite an input, exist without --force, or exist
    and are not regular files (a device, a FIFO, a socket, a symbolic link: even with
    --force), at the start, before any randomness is drawn, so that no work is wasted;
    :class:`dpfix.io.commit.StagedFiles` checks again at the end."""
    from dpfix.io.commit import not_a_regular_file

    seen: dict[Path, str] = {}
    for flag, path in outputs.items():
        if path is None:
            continue
        full = path.resolve()
        if full in seen:
            raise ValueError(f"{flag} and {seen[full]} name the same file {path}")
        seen[full] = flag
        if any(full == p.resolve() for p in inputs):
            raise ValueError(f"{flag}: {path} is the input file; choose another path")
        if not path.parent.is_dir() and not missing_folders_ok:
            raise FileNotFoundError(f"{flag}: folder {path.parent} does not exist")
        odd = not_a_regular_file(path)
        if odd is not None:
            raise ValueError(f"{flag}: {path} is {odd}, not a regular file; dpfix writes "
                             "regular files only")
        if path.is_dir():
            raise ValueError(f"{flag}: {path} is a folder")
        if path.exists() and not force:
            raise ValueError(f"{flag}: {path} exists (use --force to overwrite)")


def _check_targets(outputs: dict[str, Path | None], dataset: bool = False) -> None:
    """Refuse, before any work, the output paths that could only fail when they are written.

    - a name too long for its file system once made into the staged temporary
      (:class:`dpfix.io.commit.StagedFiles` writes ``.NAME.<12 hex>.part`` beside it;
      a Dask dataset, ``dataset``, is written as ``.NAME.staged-PID-HOST-<8 hex>``
      (:func:`_staged_dataset`) through the engine's ``..NAME.staged-PID-HOST-<8
      hex>.partial-PID-HOST-<8 hex>``), or a path too long;
    - a folder the user cannot write into.

    A folder that does not exist, and a path that exists but is not a regular
    file (a symbolic link, dangling or not, included), are left to
    :func:`_check_outputs`, which runs first.
    """
    from dpfix.io.commit import leftover_tag

    for flag, path in outputs.items():
        if path is None or not path.parent.is_dir():
            continue
        tag = leftover_tag()
        temp = (f"..{path.name}.staged-{tag}-{'0' * 8}.partial-{tag}-{'0' * 8}" if dataset
                else f".{path.name}.{'0' * 12}.part")
        longest = max(_limit(path.parent, "PC_NAME_MAX", 255), 1)
        if len(os.fsencode(temp)) > longest:
            raise ValueError(f"{flag}: the name {path.name!r} is too long: "
                             f"{len(os.fsencode(path.name))} bytes, and its temporary "
                             f"{len(os.fsencode(temp))}; the file system of {path.parent} takes "
                             f"names of at most {longest} bytes")
        full = len(os.fsencode(os.path.abspath(path.parent / temp)))
        if full >= _limit(path.parent, "PC_PATH_MAX", 4096):
            raise ValueError(f"{flag}: the path {path} is too long ({full} bytes with its "
                             "temporary's name)")
        if not os.access(path.parent, os.W_OK | os.X_OK):
            raise PermissionError(f"{flag}: folder {path.parent} is not writable")


def _limit(folder: Path, name: str, default: int) -> int:
    """``os.pathconf(folder, name)``, or ``default`` where the system does not say."""
    try:
        value = os.pathconf(folder, name)
    except (AttributeError, OSError, ValueError):
        return default
    return value if value and value > 0 else default


# ------------------------------------------------------------------ the job
class _Progress:
    """Progress on stderr: a tqdm bar on a terminal, one line at the end otherwise.

    On a terminal the bar opens with the pipeline's first stage and shows the
    stage and its elapsed time while ``T`` is built (no row count stuck at 0%),
    then the rows drawn. When stderr is not a terminal (a log file, a pipe) no
    carriage-return frames are written: one line when the run succeeds, nothing
    when it fails (the error stays one line). ``--quiet``: nothing.
    """

    def __init__(self, total: int, quiet: bool, label: str) -> None:
        self.total, self.quiet, self.label, self.bar = total, quiet, label, None
        self.stages: list[str] = []
        self.done = 0
        self.tty = bool(getattr(sys.stderr, "isatty", lambda: False)())

    def stage(self, name: str) -> None:
        if self.quiet:
            return
        self.stages.append(name)
        if not self.tty:
            return
        if self.bar is None:
            tqdm = require("tqdm").tqdm
            self.bar = tqdm(total=self.total, unit="row", unit_scale=True, file=sys.stderr,
                            mininterval=0.5, dynamic_ncols=True,
                            bar_format="{desc}{elapsed}")
        if name == "draw":
            self.bar.bar_format = None  # the row bar from now on
        self.bar.set_description(f"{self.label}: {name}")

    def update(self, rows: int) -> None:
        self.done += rows
        if self.bar is not None:
            self.bar.update(rows)

    def close(self, failed: bool = False) -> None:
        if self.bar is not None:
            self.bar.leave = not failed  # an error message replaces the bar
            self.bar.close()
            self.bar = None
        elif not (self.tty or self.quiet or failed or not self.stages):
            share = 100 * self.done // self.total if self.total else 100
            print(f"dpfix privatize: {self.label}: {', '.join(self.stages)} done; "
                  f"{self.done} rows ({share}%)", file=sys.stderr)


class _Bars:
    """One :class:`_Progress` per column, opened when the library first tells of it.

    On a terminal one bar at a time: a column's bar closes when the next column's opens.
    Off a terminal each column's line is printed at the end, in the columns' order, with
    every row it drew: a streamed release builds every column's ``T`` in its first pass
    and draws the rows of all the columns together in its second.
    """

    def __init__(self, quiet: bool, label: str, several: bool) -> None:
        self.quiet, self.label, self.several = quiet, label, several
        self.bars: dict = {}
        self.current: _Progress | None = None

    def bar(self, column: Any, rows: int = 0) -> _Progress:
        if column not in self.bars:
            if self.current is not None and self.current.tty:
                self.current.close()
            name = f"{self.label} ({column})" if self.several else self.label
            self.current = self.bars[column] = _Progress(rows, self.quiet, name)
        return self.bars[column]

    def close(self, failed: bool = False) -> None:
        for bar in self.bars.values():
            bar.close(failed=failed)
        self.bars, self.current = {}, None


def _privatize_file(input_path: str | Path, *, plan: dict, out: str | Path,
                    staged: Any, histogram: bool = False, header: bool | None = None,
                    report: str | Path | None = None, plot: str | Path | None = None,
                    confidential_report: str | Path | None = None, force: bool = False,
                    quiet: bool = False, label: str | None = None,
                    read_from: str | Path | None = None, key: list | None = None,
                    keep: list | None = None, sep: str | None = None,
                    order: str | None = None, escape_formulas: bool = False,
                    ledger: dict | None = None) -> dict:
    """Read, privatize and stage the outputs: the body of ``dpfix privatize``.

    Every output is written to a temporary of ``staged`` (a
    :class:`dpfix.io.commit.StagedFiles`); the caller commits them. A table, or a
    histogram file (a :class:`dpfix.release.table.Histogram`), is released by
    :func:`dpfix.release.table.privatize_table` with ``plan["call"]`` (what
    :func:`_plan` checked). ``read_from`` is the file actually
    read when it is not ``input_path`` yet (the demo's staged input). ``key`` and
    ``keep`` name the other columns written (declared public); every other column is
    dropped. ``order`` is the output's row order (None: ``"key"`` with ``key``, else
    ``"shuffled"``). ``escape_formulas``: a CSV output's cells that a spreadsheet may run
    as formulas are prefixed with a single quote. ``ledger``: the ledger's state after this
    run's charge (:meth:`dpfix.release.ledger.Reservation.statement`), the public report's
    ``ledger`` entry. Returns the public report.
    """
    from dpfix.io import reports
    from dpfix.io.tables import check_input_file, is_parquet
    from dpfix.release import figures

    start = time.perf_counter()
    input_path = Path(input_path)
    source = Path(read_from) if read_from is not None else input_path
    check_input_file(source, shown=input_path)
    paths = {"--out": Path(out), "--report": report and Path(report),
             "--plot": plot and Path(plot),
             "--confidential-report": confidential_report and Path(confidential_report)}
    _check_outputs(paths, force, [input_path])
    _check_targets(paths)
    out_format = "parquet" if is_parquet(paths["--out"]) else "csv"
    if histogram and out_format == "parquet":
        raise ValueError(f"--out: {paths['--out']} must be a CSV file like the histogram "
                         "input")
    fmt = reports.plot_format(paths["--plot"]) if paths["--plot"] is not None else None
    if header is not None and not histogram:
        raise ValueError("--header/--no-header: only with --histogram (a table's first line "
                         "is always its header)")
    key, keep = list(key or []), list(keep or [])
    if histogram and (key or keep):
        raise ValueError(f"{'--key' if key else '--keep'}: a histogram file has no other "
                         "columns; drop it")
    if histogram and order is not None:
        raise ValueError("--order: a histogram has no rows to order; drop it")
    if sep is not None and (histogram or is_parquet(input_path)):
        raise ValueError("--sep: only for a CSV table; drop it")
    sep = {"tab": "\t", "\\t": "\t"}.get(sep, sep) if sep is not None else ","
    title = label or input_path.name
    from dpfix.release.table import Histogram, privatize_table

    names = plan["call"]["columns"] or [None]  # None: a histogram file
    bars = _Bars(quiet, title, len(names) > 1)
    # a CSV table to a CSV file: staged by the library itself (streamed, memory flat in N)
    to_file = {} if out_format == "parquet" or is_parquet(input_path) else {
        "out": paths["--out"], "staged": staged, "escape_formulas": escape_formulas}
    try:
        release, secret = privatize_table(
            Histogram(source, header) if histogram else source, **plan["call"], keys=key,
            keep=keep, order=order, sep=sep,
            confidential=True, labels=CLI_LABELS,
            progress=lambda column, k: bars.bar(column).update(k),
            on_stage=lambda column, stage, rows: bars.bar(column, rows).stage(stage),
            **to_file)
    except BaseException:
        bars.close(failed=True)
        raise
    bars.close()
    public = release.report_for(paths["--out"])
    public["input"]["path"] = str(input_path)
    if ledger is not None:
        public["ledger"] = ledger
    write_start = time.perf_counter()
    if release.table is not None:
        release.write_table(staged.temp(paths["--out"], "--out"), fmt=out_format,
                            escape_formulas=escape_formulas)
    if fmt is not None:
        fig = (figures.make_figures(public["columns"], [f"{title} ({n})" for n in names])
               if len(names) > 1 else figures.make_figure(public["columns"][0], title))
        fig.savefig(staged.temp(paths["--plot"], "--plot"), format=fmt, dpi=120)
    if paths["--confidential-report"] is not None:
        now = time.perf_counter()
        body = dict(secret.report, input=str(input_path))
        body["timings_seconds"] = {**body["timings_seconds"], "write": now - write_start,
                                   "total": now - start}
        reports.write_json(body, staged.temp(paths["--confidential-report"],
                                             "--confidential-report", private=True))
    if paths["--report"] is not None:
        reports.write_json(public, staged.temp(paths["--report"], "--report"))
    return public


def _announce(columns: list[dict], paths: dict[str, Path | None], file: Any = None,
              composed: dict | None = None) -> None:
    """The summary, printed before the outputs are moved into place: one line per column
    (from its public report), their total by the unit's composition, then the files."""
    for c in columns:
        fw = c["framework"]
        how = (c["mechanism"]["constructor"] if fw["name"] == "two-stage" else
               f"{fw['name']} framework ({fw['estimator']} estimate, {fw['remap']} remap)")
        b = c["budget"]
        who = "" if len(columns) == 1 else f"{c['column']}: "
        spent = ("" if not b.get("eps_upper") else f"eps_upper = {b['eps_upper']:.6g} for the "
                 f"DP bound upper = {c['upper_bound']['upper']}, ")
        print(f"dpfix privatize: {who}eps_t = {b['eps_t']:g} ({spent}eps_1 = {b['eps_1']:.6g}, "
              f"eps_2 = {b['eps_2']:.6g}, split {b['split']['rule']}), {how}, "
              f"N = {c['N']}, n = {c['n']}", file=file)
    if len(columns) > 1 and composed is not None:
        kind = composed["rule"].split(":")[0]
        print(f"dpfix privatize: {len(columns)} columns, eps = {composed['eps_spent']:g} in "
              f"all ({kind})", file=file)
    for what, p in paths.items():
        if p is not None:
            print(f"  {what}: {p}", file=file)


def _warn(seed: int | None, quiet: bool) -> None:
    """A run that succeeds (an error stays a single line on stderr)."""
    if seed is not None and not quiet:
        print("dpfix privatize: warning: --seed used numpy's seeded samplers: reproducible, "
              "NOT FOR PRODUCTION", file=sys.stderr)


def _commit(staged: Any, say: Any, charge: Any = None) -> None:
    """Print the summary (``say()``), record the ledger's ``charge`` (a
    :class:`dpfix.release.ledger.Reservation`, if any), then move every output into place
    (all or nothing).

    Standard output is written and flushed first: when it cannot be written
    (``> /dev/full``) the run ends with an error and no file; a closed pipe ends
    it with exit code 141 (:mod:`dpfix.cli`), no file either.
    """
    try:
        say()
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OSError(f"standard output: {exc.strerror or exc}; nothing written") from None
    if charge is None:
        staged.commit()
        return
    if not charge.committed:  # before any output is visible: no release without its charge
        charge.commit()
    try:
        staged.commit()
    except OSError as exc:  # nothing moved, the budget spent: the message says so
        raise type(exc)(f"{' '.join(str(exc).split())}; {charge.recorded()}") from None


def _placed(committed: list[Path]) -> str:
    """What a signal's line says was written: the outputs in place, or nothing."""
    if not committed:
        return "nothing written"
    return f"the outputs were complete and are in place ({', '.join(map(str, committed))})"


def _in_place(committed: list[Path]) -> str:
    """``"; the other outputs are complete and in place (...)"``, or ``""`` without any."""
    if not committed:
        return ""
    return f"; the other outputs are complete and in place ({', '.join(map(str, committed))})"


def _stream(table: Path, committed: list[Path], args: argparse.Namespace) -> None:
    """Copy the staged table to standard output, after every other output is in place.

    Standard output cannot be taken back: a failure or a signal while the table
    is streamed leaves a partial table there, and the message says so (with the
    other outputs, complete and in place), never "nothing written"; a signal once it
    is all written says that (``args.outcome``).
    """
    partial = ("standard output received a partial table (it cannot be taken back)"
               + _in_place(committed))
    try:
        with open(table, "rb") as f:
            while chunk := f.read(1 << 16):
                sys.stdout.buffer.write(chunk)
        sys.stdout.flush()
        args.outcome = "standard output received the whole table" + _in_place(committed)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OSError(f"standard output: {exc.strerror or exc}; {partial}") from None
    except KeyboardInterrupt as exc:
        exc.outcome = partial
        raise


def _demo(args: argparse.Namespace, staged: Any) -> int:
    from dpfix.io import tables as io

    pd = require("pandas")

    given = [flag for flag, v in (("INPUT", args.input), ("--column", args.column),
                                  ("--upper", args.upper), ("--out", args.out),
                                  ("--report", args.report), ("--plot", args.plot),
                                  ("--confidential-report", args.confidential_report),
                                  ("--histogram", args.histogram),
                                  ("--key", args.key), ("--keep", args.keep),
                                  ("--engine dask", args.engine == "dask"),
                                  ("--sep", args.sep),
                                  ("--column-epsilon", args.column_epsilon),
                                  ("--ledger", getattr(args, "ledger", None)),
                                  ("--header/--no-header", args.header is not None)) if v]
    if given:
        raise ValueError(f"--demo chooses its own inputs and outputs; drop {', '.join(given)}")
    options = _method_options(args)
    seed = options["seed"]
    if options.pop("upper_share") is not None:
        raise ValueError("--upper-share: applies to --upper auto only; --demo sets its bounds")
    root = Path(args.out_dir or "out/privatize")
    jobs = [("synthetic", root / "synthetic" / "input.csv", "count", DEMO_SYNTHETIC_UPPER)]
    if os.environ.get("DPFIX_DATA"):
        jobs.append(("crime", io.data_path(DEMO_CRIME[0]), *DEMO_CRIME[1:]))
    else:
        try:
            io.data_dir()
            jobs.append(("crime", io.data_path(DEMO_CRIME[0]), *DEMO_CRIME[1:]))
        except FileNotFoundError:
            print("dpfix privatize: shared data not found (set DPFIX_DATA): "
                  "crime demo skipped")
    eps = str(DEMO_EPSILON) if args.epsilon is None else args.epsilon
    plans = {name: _plan(argparse.Namespace(**{**vars(args), "column": [column], "epsilon": eps,
                                               "upper": [str(upper)], "column_epsilon": None}),
                         dict(options))
             for name, _, column, upper in jobs}
    outs = {f"{name}/{f}": root / name / f for name, *_ in jobs for f in DEMO_FILES}
    _check_outputs({"input.csv": jobs[0][1], **outs}, args.force,
                   [p for _, p, _, _ in jobs[1:]], missing_folders_ok=True)
    created = [d for d in [root, *(root / name for name, *_ in jobs)] if not d.exists()]
    for d in created:
        d.mkdir(parents=True, exist_ok=True)
    try:
        table = pd.DataFrame({"category": [f"c{i:05d}" for i in range(2000)],
                              "count": io.synthetic_counts()})
        synthetic_input = staged.temp(jobs[0][1], "input.csv")
        summary = []
        table.to_csv(synthetic_input, index=False)
        for name, path, column, _ in jobs:
            d = root / name
            secret = d / DEMO_FILES[3] if name == "synthetic" else None
            result = _privatize_file(path, plan=plans[name], key=DEMO_KEYS[name],
                                        out=d / DEMO_FILES[0], report=d / DEMO_FILES[1],
                                        plot=d / DEMO_FILES[2], confidential_report=secret,
                                        force=args.force, quiet=args.quiet, staged=staged,
                                        label=f"{name} ({column})",
                                        read_from=synthetic_input if name == "synthetic"
                                        else None, order=getattr(args, "order", None))
            summary.append((result, {"out": d / DEMO_FILES[0], "report": d / DEMO_FILES[1],
                                     "plot": d / DEMO_FILES[2], "confidential-report": secret}))

        def say() -> None:
            for result, paths in summary:
                _announce(result["columns"], paths)
            print(f"dpfix privatize: demo outputs in {root}")
            _warn(seed, args.quiet)
        _commit(staged, say)
    except BaseException:
        staged.discard()
        for d in reversed(created):  # the folders this run made, if still empty
            try:
                d.rmdir()
            except OSError:
                pass
        raise
    return 0


def run(args: argparse.Namespace) -> int:
    """Run ``dpfix privatize``.

    Bad input raises ValueError or OSError (exit code 2). An internal failure
    to produce a valid mechanism (RuntimeError: the LP solver, the heuristic's
    pass bound, a post-processing check; a numerical RuntimeWarning),
    MemoryError and OverflowError are re-raised with "nothing written" in
    their message (exit code 1). An interruption (KeyboardInterrupt, also the
    SIGTERM and SIGHUP of :mod:`dpfix.cli`) gets the attribute ``outcome``:
    "nothing written", or the files already in place when it came after the
    commit. No output exists in any failure before the commit.
    """
    from dpfix.io.commit import StagedFiles

    staged = StagedFiles(force=bool(getattr(args, "force", False)))
    if isinstance(args.column, str):  # a caller's Namespace: one column
        args.column = [args.column]
    for name, default in (("column_epsilon", None), ("upper", None)):
        if not hasattr(args, name):
            setattr(args, name, default)
    if isinstance(args.upper, (str, int)):
        args.upper = [str(args.upper)]
    args.outcome = None
    try:
        with staged:
            code = _demo(args, staged) if args.demo else _run(args, staged)
        args.outcome = args.outcome or _placed(staged.committed)  # for a signal from now on
        return code
    except KeyboardInterrupt as exc:
        if getattr(exc, "outcome", None) is None:  # set by _stream: standard output's state
            exc.outcome = args.outcome or _placed(staged.committed)
        raise
    except MemoryError:
        raise MemoryError("out of memory (try a smaller --upper); nothing written") from None
    except (RuntimeError, OverflowError, RuntimeWarning) as exc:
        text = " ".join(str(exc).split()) or type(exc).__name__
        if isinstance(exc, Warning):
            text = f"numerical problem ({type(exc).__name__}: {text})"
        kind = OverflowError if isinstance(exc, OverflowError) else RuntimeError
        raise kind(f"{text}; no valid mechanism or output produced, nothing written") \
            from None


def _run(args: argparse.Namespace, staged: Any) -> int:
    if args.out_dir is not None:
        raise ValueError("--out-dir: only with --demo; use --out")
    if args.input is None:
        raise ValueError("INPUT: name the table of counts (or use --demo)")
    for flag, value in (("--epsilon", args.epsilon), ("--upper", args.upper),
                        ("--out", args.out)):
        if value is None:
            raise ValueError(f"{flag} is required")
    options = _method_options(args)
    if getattr(args, "engine", "local") == "dask":
        return _run_dask(args, staged, options)
    plan = _plan(args, options)
    ledger = _ledger(args, plan)
    if getattr(args, "dask_scheduler", None):
        raise ValueError("--dask-scheduler: only with --engine dask; drop it")
    import shutil
    import tempfile

    from dpfix.io.commit import leftover_tag, remove_stale

    to_stdout, from_stdin = str(args.out) == "-", str(args.input) == "-"
    remove_stale(tempfile.gettempdir(), "dpfix-")  # the scratch folders of killed runs
    scratch = (Path(tempfile.mkdtemp(prefix=f"dpfix-{leftover_tag()}-"))
               if to_stdout or from_stdin else None)
    stdin_fd, charge = None, None
    try:
        read_from = None
        if from_stdin:  # standard input (a CSV table or a histogram), read whole as a file
            read_from, stdin_fd = _stdin_file(scratch)
        out = scratch / "stdout.csv" if to_stdout else args.out
        charge = _charge(ledger, args, plan, from_stdin)
        results = _privatize_file(Path("<stdin>") if from_stdin else args.input,
                                  plan=plan, out=out, histogram=args.histogram,
                                  header=args.header, report=args.report, plot=args.plot,
                                  confidential_report=args.confidential_report, staged=staged,
                                  force=args.force, quiet=args.quiet, key=args.key,
                                  keep=args.keep, sep=args.sep, read_from=read_from,
                                  order=getattr(args, "order", None),
                                  escape_formulas=bool(getattr(args, "escape_formulas", False)),
                                  ledger=charge.statement() if charge is not None else None)

        def say() -> None:
            if not (to_stdout and args.quiet):  # with --out -, the summary goes to stderr
                _announce(results["columns"], {"out": Path(args.out), "report": args.report,
                                    "plot": args.plot,
                                    "confidential-report": args.confidential_report},
                          file=sys.stderr if to_stdout else None,
                          composed=results["composition"])
            if charge is not None:
                _announce_charge(charge, file=sys.stderr if to_stdout else None)
            _warn(plan["call"]["seed"], args.quiet)
        try:
            _commit(staged, say, charge)
            others = [p for p in staged.committed if p != Path(out)]
            if to_stdout:
                args.outcome = "standard output received nothing" + _in_place(others)
        except KeyboardInterrupt as exc:  # held during the moves, raised once they are done
            if to_stdout and staged.committed:
                exc.outcome = "standard output received nothing" + _in_place(
                    [p for p in staged.committed if p != Path(out)])
            raise
        if to_stdout:  # every other output is in place: only now the table, which stays
            _stream(Path(out), others, args)
    finally:
        if charge is not None:  # the ledger's lock: held until the outputs are in place
            charge.__exit__(None, None, None)
        if stdin_fd is not None:
            os.close(stdin_fd)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


def _ledger(args: argparse.Namespace, plan: dict) -> Any:
    """The ``--ledger`` of the run (a :class:`dpfix.release.ledger.Ledger`), or None; its path
    checked against the run's files. A ledger to create is created only if its total pays the
    run (a refused run creates nothing)."""
    path, total = getattr(args, "ledger", None), getattr(args, "ledger_total", None)
    delta_total = getattr(args, "ledger_delta_total", None)
    if path is None:
        for flag, value in (("--ledger-total", total), ("--ledger-delta-total", delta_total)):
            if value is not None:
                raise ValueError(f"{flag}: only with --ledger FILE; drop it")
        return None
    from dpfix.release.ledger import Budget, Ledger, ledger_amount

    path = Path(path)
    if str(path) == "-":
        raise ValueError("--ledger: a file, not standard input or output")
    for flag in ("input", "out", "report", "plot", "confidential_report"):
        other = getattr(args, flag, None)
        if other is not None and str(other) != "-" and Path(other).resolve() == path.resolve():
            name = "INPUT" if flag == "input" else f"--{flag.replace('_', '-')}"
            raise ValueError(f"--ledger and {name} name the same file {path}")
    if path.is_dir():
        raise ValueError(f"--ledger: {path} is a folder")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"--ledger: folder {path.parent} does not exist")
    given = {}
    if total is not None:
        given["total"] = ledger_amount(total, "--ledger-total", positive=True)
    if delta_total is not None:
        if total is None:
            raise ValueError("--ledger-delta-total: only with --ledger-total (creating a "
                             "ledger); an existing ledger knows its own")
        given["delta_total"] = ledger_amount(delta_total, "--ledger-delta-total",
                                             positive=True)
        if given["delta_total"] >= 1:
            raise ValueError(f"--ledger-delta-total: must be below 1, got {delta_total!r}")
    if not os.path.lexists(path):
        if total is None:
            raise ValueError(f"--ledger: {path} does not exist; give --ledger-total EPS to "
                             "create it")
        need = Budget(*_spending(args, plan))
        if need.eps > given["total"] or need.delta > given.get("delta_total", 0):
            raise ValueError(f"--ledger: the run needs eps {float(need.eps):g}, delta "
                             f"{float(need.delta):g}, more than the total eps "
                             f"{float(given['total']):g}, delta "
                             f"{float(given.get('delta_total', 0)):g} given to create "
                             f"{path.name}; refused, nothing created")
    return Ledger(path, **given)


def _spending(args: argparse.Namespace, plan: dict) -> tuple:
    """What the run spends, ``(eps, delta)`` exactly, by its unit's composition
    (:func:`dpfix.release.report.composition`): the sum of the columns' budgets (their
    floats, as :func:`dpfix.release.budget.fit_shares` made them) and deltas under unit
    ``row``, their maximum under unit ``cell``."""
    from dpfix.release.report import composition

    columns = plan["plans"]
    spent = composition([c.name for c in columns], [c.epsilon for c in columns],
                        args.epsilon, plan["rule"], plan["unit"], [c.delta for c in columns],
                        exact=True)
    return spent["eps_spent"], spent["delta_spent"]


def _charge(ledger: Any, args: argparse.Namespace, plan: dict, from_stdin: bool) -> Any:
    """The run's reservation on ``ledger`` (entered: its balance checked) of what the run
    spends (:func:`_spending`), or None."""
    if ledger is None:
        return None
    eps, delta = _spending(args, plan)
    columns, unit = plan["plans"], plan["unit"]
    dataset = "<stdin>" if from_stdin else str(Path(args.input).resolve())
    names = [c.name for c in columns if c.name is not None]
    quiet = args.quiet

    def waiting() -> None:
        if not quiet:
            print(f"dpfix privatize: waiting for {ledger.path}: another run holds it",
                  file=sys.stderr)
    reservation = ledger.reserve(eps, delta, dataset=dataset, columns=names,
                                 unit=unit.statement(),
                                 on_wait=waiting)
    return reservation.__enter__()


def _announce_charge(charge: Any, file: Any = None) -> None:
    """The summary's line about the ledger: this run's charge and the balance after it."""
    s = charge.statement()
    delta = (f", delta {s['this_release']['delta']:g} (balance {s['delta_balance']:g})"
             if s["delta_total"] else "")
    print(f"dpfix privatize: ledger {charge.ledger.path}: this run eps "
          f"{s['this_release']['eps']:g}; spent {s['spent']:g} of {s['total']:g}, balance "
          f"{s['balance']:g}{delta}", file=file)


def _stdin_file(scratch: Path) -> tuple[Path, int | None]:
    """Standard input copied to a file that the readers open by name: ``(path, fd)``.

    Where the system has anonymous memory files (Linux ``memfd_create``), the copy
    is one, read through ``/proc/self/fd/FD`` (``fd`` stays open until the run
    ends): no copy of the confidential table ever reaches a disk, and none
    outlives the process, even after SIGKILL. Elsewhere it is a file created
    0600 in the private (0700) ``scratch`` folder, removed at the end of the run,
    or after SIGKILL by the next run (:func:`dpfix.io.commit.remove_stale`).
    """
    import shutil

    memfd = getattr(os, "memfd_create", None)
    if memfd is not None and Path("/proc/self/fd").is_dir():
        fd = memfd("dpfix-stdin")
        try:
            with open(fd, "wb", closefd=False) as f:
                shutil.copyfileobj(sys.stdin.buffer, f)
        except BaseException:
            os.close(fd)
            raise
        return Path(f"/proc/self/fd/{fd}"), fd
    path = scratch / "stdin.csv"
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
        shutil.copyfileobj(sys.stdin.buffer, f)
    return path, None


def _run_dask(args: argparse.Namespace, staged: Any, options: dict) -> int:
    """``--engine dask``: a partitioned dataset in, a Parquet dataset out, released by
    :func:`dpfix.release.table.privatize_table` with a
    :class:`~dpfix.release.table.Dataset` input (its report and confidential report).

    The engine writes the dataset under a name of this run's (:func:`_staged_dataset`,
    beside ``--out``), which the commit moves onto ``--out`` together with the other
    outputs (:meth:`dpfix.io.commit.StagedFiles.folder`): all or nothing, whatever
    fails or whatever signal arrives; ``--ledger``'s charge is recorded before the
    engine names the dataset, so before it is in place."""
    import shutil

    from dpfix.io import reports
    from dpfix.io.commit import remove_stale
    from dpfix.release.table import Dataset, privatize_table

    if args.histogram:
        raise ValueError("--histogram: not with --engine dask (a histogram file is one "
                         "partition); drop --engine dask")
    plan = _plan(args, options)
    ledger = _ledger(args, plan)
    out = Path(args.out)
    report = Path(args.report) if args.report else None
    plot = Path(args.plot) if args.plot else None
    secret = Path(args.confidential_report) if args.confidential_report else None
    _check_outputs({"--out": out, "--report": report, "--plot": plot,
                    "--confidential-report": secret}, args.force, [Path(args.input)])
    _check_targets({"--out": out}, dataset=True)
    _check_targets({"--report": report, "--plot": plot, "--confidential-report": secret})
    fmt = reports.plot_format(plot) if plot is not None else None
    if args.force and out.is_dir():
        raise ValueError(f"--out: {out} is a folder; remove it first (--force replaces files)")
    if os.path.lexists(out):  # --force: a file there; the dataset never replaces anything
        raise ValueError(f"--out: {out} exists; a dataset folder replaces nothing, remove it "
                         "first")
    call = dict(plan["call"], keys=args.key or [], keep=args.keep or [],
                order=getattr(args, "order", None), labels=CLI_LABELS, confidential=True)
    for prefix in (f".{out.name}.staged-", f"..{out.name}.staged-"):  # of killed runs
        remove_stale(out.parent, prefix)
    written = _staged_dataset(out)
    client, charge = None, None
    try:
        charge = _charge(ledger, args, plan, False)
        if args.dask_scheduler:
            client = require("distributed").Client(args.dask_scheduler)
        try:
            release, confidential = privatize_table(Dataset(args.input), out=written,
                                                    ledger=charge, **call)
        finally:
            if client is not None:
                client.close()
        staged.folder(written, out, "--out")
        _stage_dask(release, confidential, staged, out, report, plot, fmt, secret,
                    Path(args.input).name)

        def say() -> None:
            _announce(release.report["columns"], {"out": out, "report": report,
                                                  "plot": plot, "confidential-report": secret},
                      composed=release.report["composition"])
            if charge is not None:
                _announce_charge(charge)
            _warn(plan["call"]["seed"], args.quiet)
        _commit(staged, say, charge)
    except BaseException:
        shutil.rmtree(written, ignore_errors=True)  # this run's name: nothing else's
        raise
    finally:
        if charge is not None:  # the ledger's lock: held until the outputs are in place
            charge.__exit__(None, None, None)
    return 0


def _staged_dataset(out: Path) -> Path:
    """Where the engine writes ``--out``'s dataset before the commit moves it into place:
    ``.NAME.staged-PID-HOST-HEX`` beside it (:func:`dpfix.io.commit.leftover_tag`: a killed
    run's is removed by the next run writing ``NAME``)."""
    import secrets

    from dpfix.io.commit import leftover_tag

    return out.parent / f".{out.name}.staged-{leftover_tag()}-{secrets.token_hex(4)}"


def _stage_dask(release: Any, confidential: Any, staged: Any, out: Path,
                report: Path | None, plot: Path | None, fmt: str | None, secret: Path | None,
                title: str) -> None:
    """Stage a Dask release's report (naming ``out``, where its dataset goes), figure and
    confidential report."""
    from dpfix.io import reports
    from dpfix.release import figures

    names = release.report["input"]["columns"]
    if report is not None:
        reports.write_json(release.report_for(out), staged.temp(report, "--report"))
    if fmt is not None:
        columns = release.report["columns"]
        fig = (figures.make_figures(columns, [f"{title} ({n})" for n in names])
               if len(names) > 1 else figures.make_figure(columns[0], title))
        fig.savefig(staged.temp(plot, "--plot"), format=fmt, dpi=120)
    if secret is not None:
        reports.write_json(confidential.report, staged.temp(secret, "--confidential-report",
                                                             private=True))


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
                        "group privacy)")
    p.add_argument("--column-epsilon", action="append", metavar="COL=EPS",
                   help="with several --column: the budget of column COL (repeatable). The "
                        "columns without one split the rest of --epsilon equally; with one "
                        "for every column they must add up to --epsilon exactly (in decimal: "
                        "0.3 and 0.7 make 1)")
    p.add_argument("--upper", action="append", metavar="UPPER or COL=UPPER",
                   help="public upper bound on the counts: a parameter you choose, "
                   "not computed from the data (n = upper + 1 values, at most "
                   f"{MAX_UPPER}), or auto: chosen privately, a DP 0.99-quantile of the "
                   "column that spends --upper-share of its budget (reported; dpfix docs "
                   "bounds). Counts above it are top-coded to it; how many were is "
                   "derived from the true data, so it is written to --confidential-report "
                   "only. With several --column: one value for every column, and/or "
                   "COL=UPPER for one column (repeatable; COL=auto too)")
    p.add_argument("--upper-share", metavar="FRACTION",
                   help="with --upper auto: the share of each such column's budget spent on "
                        f"its bound, in (0, 1) (default {UPPER_SHARE:g}); the rest goes to the "
                        "release (sequential composition)")
    p.add_argument("--out", help="output table (CSV or Parquet by its suffix); must not exist; "
                                 "- writes CSV to standard output (the summary then goes to "
                                 "stderr), only once everything else is complete")
    p.add_argument("--key", action="append", metavar="COL",
                   help="a key column written to the output as it is (repeatable); the "
                        "output holds only the privatized column, --key and --keep columns")
    p.add_argument("--order", default=None, choices=["key", "shuffled", "input"],
                   help="the order of the output's rows: key (default with --key: sorted by "
                        "the key columns, equal keys in random order), shuffled (default "
                        "without --key: a secure random permutation; reproducible with "
                        "--seed), input (the input's order, which may follow the "
                        "confidential data; the report says so). --engine dask: shuffled "
                        "(partitions and the rows within each) or input")
    p.add_argument("--keep", action="append", metavar="COL",
                   help="pass another column through, declaring it public (repeatable); "
                        "every column not named is dropped (it is not private)")
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
                        "summed histogram, stage 2 per partition")
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
    p.add_argument("--force", action="store_true", help="overwrite existing output files")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no warnings")
    p.add_argument("--demo", action="store_true",
                   help="run on the package's synthetic table and, when the shared data "
                        "folder exists, on crime_data.csv (MURDER, upper 50)")
    p.add_argument("--out-dir", help="folder of the --demo outputs (default out/privatize)")
    return p
