"""``dpfix privatize --records``: a file of records (one row per incident) to a released
table of counts per declared group, under the unit ``person`` (docs/records.md).

:func:`records_plan_from_args` parses the flags into the library's plan
(:func:`dpfix.release.records.plan.plan_records`, the function ``privatize_records``
plans with): ``--person``, ``--group-by`` and ``--count`` name the records' columns
(:class:`dpfix.release.records.Records`), ``--values`` the declared values (with
``--column-epsilon VALUE=EPS`` their shares), ``--max-contributions C|auto`` (with
``--contributions-share`` and ``--contributions-quantile``:
:class:`dpfix.release.records.PrivateContributions`) and ``--max-per-group`` the unit
``person:C:c``. :func:`release_records` executes the plan
(:func:`dpfix.release.records.release.execute_records`) and stages its outputs as a
table's are (``--report``, ``--confidential-report``, ``--plot``); the command's ledger,
staging, commit and signals are ``dpfix privatize``'s own (:mod:`dpfix.cli.privatize`). The
library's messages name its parameters; :func:`dpfix.cli._privatize_plan.flags_of` names
these flags (:data:`dpfix.cli._privatize_plan.RECORDS_FLAGS`).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from dpfix.cli import _privatize_outputs as outputs
from dpfix.cli._privatize_plan import _assignments, _joint, _number, _uppers
from dpfix.release.inputs import Csv, Dataset
from dpfix.release.options import method_options
from dpfix.release.plan import Output
from dpfix.release.records import PrivateContributions, Records, RecordsPlan, plan_records

__all__ = ["records_plan_from_args", "release_records", "TABLE_FLAGS", "RECORD_ORDERS"]

#: The flags of a table release that a records release does not take, and why: each is
#: refused in one line.
TABLE_FLAGS = {
    "column": ("--column", "the count columns are the --values of --count (one column "
                           "'count' without --count)"),
    "key": ("--key", "the keys are the --group-by columns"),
    "histogram": ("--histogram", "records are one row per incident, not a histogram"),
    "unit": ("--unit", "the unit is person:C:c, set by --max-contributions and "
                       "--max-per-group"),
}
#: The row orders of a records release (``--order``).
RECORD_ORDERS = ("groups", "key", "shuffled")


def _names(values: list | None, flag: str) -> list[str]:
    """A repeatable flag of comma-separated names (``--values a,b --values c``), in order."""
    names = [v.strip() for text in values or [] for v in str(text).split(",")]
    if any(not v for v in names):
        raise ValueError(f"{flag}: names separated by commas, got {','.join(values)!r}")
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ValueError(f"{flag}: {name!r} named twice")
    return names


def _bound(args: argparse.Namespace) -> Any:
    """``--max-contributions C`` (an integer) or ``auto`` (with its share and quantile)."""
    text = args.max_contributions
    if text is None:
        raise ValueError("--max-contributions is required with --records (C, or auto)")
    share, quantile = args.contributions_share, args.contributions_quantile
    if str(text).strip() == "auto":
        return PrivateContributions(share, quantile)
    for flag, value in (("--contributions-share", share),
                        ("--contributions-quantile", quantile)):
        if value is not None:
            raise ValueError(f"{flag}: applies to --max-contributions auto only; drop it")
    return _number(text, "--max-contributions", lambda c: c >= 1,
                   "an integer >= 1 or auto, got {text}", "must be an integer >= 1, got {text}",
                   integer=True)


def records_plan_from_args(args: argparse.Namespace, options: dict, source: str | Path,
                           out: str | Path) -> RecordsPlan:
    """The plan of a ``--records`` run (:func:`dpfix.release.records.plan.plan_records`):
    the records read from ``source`` (``INPUT``, or the copy of standard input), the table
    written to ``out``; ``options``, from
    :func:`dpfix.cli._privatize_plan.method_keywords`, keeps the method's keywords."""
    for name, (flag, why) in TABLE_FLAGS.items():
        if getattr(args, name, None):
            raise ValueError(f"{flag}: not with --records ({why}); drop it")
    if getattr(args, "header", None) is not None:
        raise ValueError("--header/--no-header: only with --histogram; drop it")
    if args.person is None:
        raise ValueError("--person is required with --records (the column of the persons)")
    group_by = _names(args.group_by, "--group-by")
    if not group_by:
        raise ValueError("--group-by is required with --records (the column(s) of the groups)")
    if args.groups is None:
        raise ValueError("--groups is required with --records (the file of the declared "
                         "groups)")
    values = _names(args.values, "--values") or None
    if values is not None and args.count is None:
        raise ValueError("--values: applies to --count only; drop it or name the column "
                         "whose values are counted (--count)")
    names = values or ["count"]
    if args.column_epsilon and values is None:
        raise ValueError("--column-epsilon: with --records, the shares of the --values of "
                         "--count; drop it")
    order = getattr(args, "order", None) or "groups"
    if order not in RECORD_ORDERS:
        raise ValueError(f"--order {order}: with --records one of {', '.join(RECORD_ORDERS)} "
                         "(the declared order of the groups, sorted by the --group-by "
                         "columns, or shuffled)")
    if args.epsilon is None:
        raise ValueError("--epsilon is required")
    dask = getattr(args, "engine", "local") == "dask"
    sep = getattr(args, "sep", None)
    sep = None if sep is None else {"tab": "\t", "\\t": "\t"}.get(sep, sep)
    if dask and sep is not None:
        raise ValueError("--sep: not with --engine dask (its CSV files are read with ','); "
                         "drop it")
    delta, seed = options.pop("delta"), options.pop("seed")
    share = options.pop("upper_share", None)
    shares = _assignments(args.column_epsilon, names, "--values")
    upper = _uppers(args, names, share, "--values")
    joint = _joint(getattr(args, "joint", None), args)
    method = method_options(**options)
    data: Any = Dataset(source) if dask else Csv(source, sep) if sep is not None else source
    groups: Any = Csv(args.groups, sep) if sep is not None else args.groups
    records = Records(data, args.person, group_by, args.count)
    return plan_records(
        records, groups, args.epsilon, upper=upper, max_contributions=_bound(args),
        max_per_group=_number(args.max_per_group, "--max-per-group", lambda c: c >= 1,
                              "an integer >= 1, got {text}", "must be an integer >= 1, got "
                              "{text}", integer=True),
        values=None if values is None else {v: shares.get(v) for v in values},
        keep=args.keep or [], delta=delta, order=order, seed=seed, options=method,
        joint=joint,
        out=Output(out, escape_formulas=bool(getattr(args, "escape_formulas", False))),
        confidential=True)


def release_records(plan: RecordsPlan, shown: Path, paths: dict[str, Path | None],
                    staged: Any, *, force: bool = False, ledger: dict | None = None) -> dict:
    """Release ``plan`` and stage its outputs: the body of ``dpfix privatize --records``;
    returns the public report (as :func:`dpfix.cli.privatize.release_file` does for a
    table: ``shown`` names the input, ``paths`` the outputs by flag, checked here before any
    work, staged in ``staged``, which the caller commits; ``ledger`` the ledger's state
    after this run's charge)."""
    from dpfix.io import reports
    from dpfix.io.tables import check_input_file
    from dpfix.release.records import execute_records

    start = time.perf_counter()
    shown = Path(shown)
    source = plan.records.source
    if not isinstance(source, Dataset):
        check_input_file(getattr(source, "path", source), shown=shown)
    inputs = [shown] if not isinstance(source, Dataset) else []
    if isinstance(plan.groups, (str, Path, Csv)):
        groups = Path(getattr(plan.groups, "path", plan.groups))
        check_input_file(groups, "--groups file")
        inputs.append(groups)
    outputs.check_outputs(paths, force, inputs)
    outputs.check_targets(paths)
    fmt = reports.plot_format(paths["--plot"]) if paths["--plot"] is not None else None
    release, secret = execute_records(plan, staged=staged)
    public = release.report_for(paths["--out"])
    public["input"]["path"] = public["records"]["source"]["path"] = str(shown)
    if ledger is not None:
        public["ledger"] = ledger
    write_start = time.perf_counter()
    if fmt is not None:
        outputs.stage_figure(public["columns"], shown.name, staged, paths["--plot"], fmt)
    if paths["--confidential-report"] is not None:
        now = time.perf_counter()
        body = dict(secret.report, input=str(shown))
        body["timings_seconds"] = {**body["timings_seconds"], "write": now - write_start,
                                   "total": now - start}
        reports.write_json(body, staged.temp(paths["--confidential-report"],
                                             "--confidential-report", private=True))
    if paths["--report"] is not None:
        reports.write_json(public, staged.temp(paths["--report"], "--report"))
    return public
