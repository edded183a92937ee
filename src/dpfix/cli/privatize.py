"""``dpfix privatize``: replace columns of counts by differentially private counts.

``dpfix privatize INPUT --column COL --epsilon 1 --upper 50 --out OUTPUT`` releases
columns of a CSV or Parquet table (or a histogram file, ``--histogram``, or a partitioned
dataset, ``--engine dask``) and writes the privatized columns with the columns named by
``--key`` and ``--keep``; ``--demo`` runs it on the package's own synthetic table and,
when the shared data folder exists, on the county homicides.

The command parses its flags into the library's plan
(:func:`dpfix.release.plan.plan_release`, :mod:`dpfix.cli._privatize_plan`), charges
``--ledger`` with the plan's charge, executes the plan
(:func:`dpfix.release.table.execute`) with its own staging and progress bars, and
renders what the library returns (:mod:`dpfix.cli._privatize_outputs`): every policy is
the library's, and every message of the library names the command's flags here. What it
decides, and why (the columns written, the inputs, all or nothing, the row order, the
budget over several columns, the unit, the frameworks, the bounds, Dask, the ledger, the
progress): docs/release.md, section 8; its failures, exit codes and signals:
docs/failures.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from dpfix.cli import _privatize_outputs as outputs
from dpfix.cli._privatize_arguments import add_parser
from dpfix.cli._privatize_demo import demo
from dpfix.cli._privatize_plan import JOINT_IGNORES, flag_messages, method_keywords, plan_from_args
from dpfix.cli._privatize_progress import Bars
from dpfix.cli._privatize_records import records_plan_from_args, release_records
from dpfix.numbers.numeric import require

__all__ = ["add_parser", "run", "release_file", "STRICT_WARNINGS", "JOINT_IGNORES"]

#: dpfix.cli turns numerical RuntimeWarnings (overflow, invalid value) into errors here:
#: a privacy mechanism built through an overflow is refused, not released (the library's
#: privatize_table does the same).
STRICT_WARNINGS = True


def run(args: argparse.Namespace) -> int:
    """Run ``dpfix privatize``.

    Bad input raises ValueError or OSError (exit code 2), its message naming the flags
    (:func:`dpfix.cli._privatize_plan.flag_messages`). An internal failure
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
        with staged, flag_messages(records=bool(getattr(args, "records", False))):
            code = demo(args, staged, release_file) if args.demo else _run(args, staged)
        args.outcome = args.outcome or outputs.placed(staged.committed)  # for a later signal
        return code
    except KeyboardInterrupt as exc:
        if getattr(exc, "outcome", None) is None:  # set while streamed: standard output's
            exc.outcome = args.outcome or outputs.placed(staged.committed)
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


def release_file(plan: Any, shown: Path, paths: dict[str, Path | None], staged: Any, *,
                 force: bool = False, quiet: bool = False, label: str | None = None,
                 ledger: dict | None = None) -> dict:
    """Release ``plan`` and stage its outputs: the body of ``dpfix privatize`` for a table or
    a histogram file; returns the public report.

    ``shown`` names the input in the reports (``INPUT``, ``<stdin>``; the plan may read a
    copy); ``paths`` the outputs by flag (``--out``, ``--report``, ``--plot``,
    ``--confidential-report``), checked here before any work and staged in ``staged`` (a
    :class:`dpfix.io.commit.StagedFiles`), which the caller commits. ``ledger``: the
    ledger's state after this run's charge
    (:meth:`dpfix.release.ledger.Reservation.statement`), the public report's ``ledger``.
    """
    from dpfix.io import reports
    from dpfix.io.tables import check_input_file, is_parquet
    from dpfix.release import table
    from dpfix.release.inputs import Histogram, input_path

    start = time.perf_counter()
    shown = Path(shown)
    check_input_file(input_path(plan.data), shown=shown)
    outputs.check_outputs(paths, force, [shown])
    outputs.check_targets(paths)
    if isinstance(plan.data, Histogram) and is_parquet(paths["--out"]):
        raise ValueError(f"--out: {paths['--out']} must be a CSV file like the histogram "
                         "input")
    fmt = reports.plot_format(paths["--plot"]) if paths["--plot"] is not None else None
    title = label or shown.name
    bars = Bars(quiet, title, len(plan.columns) > 1)
    try:
        release, secret = table.execute(
            plan, staged=staged, progress=lambda column, k: bars.bar(column).update(k),
            on_stage=lambda column, stage, rows: bars.bar(column, rows).stage(stage))
    except BaseException:
        bars.close(failed=True)
        raise
    bars.close()
    public = release.report_for(paths["--out"])
    public["input"]["path"] = str(shown)
    if ledger is not None:
        public["ledger"] = ledger
    write_start = time.perf_counter()
    if fmt is not None:
        outputs.stage_figure(public["columns"], title, staged, paths["--plot"], fmt)
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


def _paths(args: argparse.Namespace, out: Any) -> dict[str, Path | None]:
    """The outputs by flag; ``out``: the table's file (a staged file for standard output)."""
    return {"--out": Path(out), "--report": args.report and Path(args.report),
            "--plot": args.plot and Path(args.plot),
            "--confidential-report": args.confidential_report and Path(args.confidential_report)}


def _run(args: argparse.Namespace, staged: Any) -> int:
    if args.out_dir is not None:
        raise ValueError("--out-dir: only with --demo; use --out")
    records = bool(getattr(args, "records", False))
    if args.input is None:
        raise ValueError("INPUT: name the records file (--records)" if records else
                         "INPUT: name the table of counts (or use --demo)")
    if not records:
        for flag in ("person", "group_by", "groups", "count", "values", "max_contributions",
                     "max_per_group", "contributions_share", "contributions_quantile"):
            if getattr(args, flag, None) is not None:
                raise ValueError(f"--{flag.replace('_', '-')}: only with --records; drop it")
        if getattr(args, "order", None) == "groups":
            raise ValueError("--order groups: only with --records (the declared order of "
                             "the groups)")
    for flag, value in (("--epsilon", args.epsilon), ("--upper", args.upper),
                        ("--out", args.out)):
        if value is None:
            raise ValueError(f"{flag} is required")
    options = method_keywords(args)
    if getattr(args, "engine", "local") == "dask" and not records:
        return _run_dask(args, staged, options)
    if getattr(args, "dask_scheduler", None) and getattr(args, "engine", "local") != "dask":
        raise ValueError("--dask-scheduler: only with --engine dask; drop it")
    if records and getattr(args, "engine", "local") == "dask" and (
            str(args.input) == "-" or str(args.out) == "-"):
        raise ValueError("--engine dask: INPUT a dataset and --out a file, not standard input "
                         "or output")
    import shutil
    import tempfile

    from dpfix.io.commit import leftover_tag, remove_stale

    to_stdout, from_stdin = str(args.out) == "-", str(args.input) == "-"
    remove_stale(tempfile.gettempdir(), "dpfix-")  # the scratch folders of killed runs
    scratch = (Path(tempfile.mkdtemp(prefix=f"dpfix-{leftover_tag()}-"))
               if to_stdout or from_stdin else None)
    stdin_fd, charge = None, None
    try:
        source = args.input
        if from_stdin:  # standard input (a CSV table or a histogram), read whole as a file
            source, stdin_fd = outputs.stdin_holder(scratch)
        out = scratch / "stdout.csv" if to_stdout else args.out
        plan = (records_plan_from_args if records else plan_from_args)(args, options, source,
                                                                       out)
        ledger = _ledger(args, plan)
        if from_stdin:
            outputs.copy_stdin(source, stdin_fd)
        charge = _charge(ledger, args, plan, "<stdin>" if from_stdin else None)
        shown = Path("<stdin>") if from_stdin else Path(args.input)
        statement = charge.statement() if charge is not None else None
        if records:
            results = _release_records(args, plan, shown, _paths(args, out), staged,
                                       statement)
        else:
            results = release_file(plan, shown, _paths(args, out), staged, force=args.force,
                                   quiet=args.quiet, ledger=statement)

        def say() -> None:
            if not (to_stdout and args.quiet):  # with --out -, the summary goes to stderr
                outputs.announce(results["columns"], {
                    "out": Path(args.out), "report": args.report, "plot": args.plot,
                    "confidential-report": args.confidential_report},
                    file=sys.stderr if to_stdout else None, composed=results["composition"])
            if charge is not None:
                outputs.announce_charge(charge, file=sys.stderr if to_stdout else None)
            outputs.warn_seeded(plan.seed, args.quiet)
        try:
            outputs.commit_outputs(staged, say, charge)
            others = [p for p in staged.committed if p != Path(out)]
            if to_stdout:
                args.outcome = "standard output received nothing" + outputs.in_place(others)
        except KeyboardInterrupt as exc:  # held during the moves, raised once they are done
            if to_stdout and staged.committed:
                exc.outcome = "standard output received nothing" + outputs.in_place(
                    [p for p in staged.committed if p != Path(out)])
            raise
        if to_stdout:  # every other output is in place: only now the table, which stays
            outputs.stream_to_stdout(Path(out), others, args)
    finally:
        if charge is not None:  # the ledger's lock: held until the outputs are in place
            charge.__exit__(None, None, None)
        if stdin_fd is not None:
            os.close(stdin_fd)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


def _release_records(args: argparse.Namespace, plan: Any, shown: Path, paths: dict,
                     staged: Any, statement: dict | None) -> dict:
    """A ``--records`` run's release (:func:`dpfix.cli._privatize_records.release_records`),
    on a ``dask.distributed`` scheduler with ``--dask-scheduler``."""
    client = None
    if getattr(args, "dask_scheduler", None):
        client = require("distributed").Client(args.dask_scheduler)
    try:
        return release_records(plan, shown, paths, staged, force=args.force, ledger=statement)
    finally:
        if client is not None:
            client.close()


def _ledger(args: argparse.Namespace, plan: Any) -> Any:
    """The ``--ledger`` of the run (a :class:`dpfix.release.ledger.Ledger`), or None; its path
    checked against the run's files. A ledger to create is created only if its total pays the
    plan's charge (a refused run creates nothing)."""
    path, total = getattr(args, "ledger", None), getattr(args, "ledger_total", None)
    delta_total = getattr(args, "ledger_delta_total", None)
    if path is None:
        for flag, value in (("--ledger-total", total), ("--ledger-delta-total", delta_total)):
            if value is not None:
                raise ValueError(f"{flag}: only with --ledger FILE; drop it")
        return None
    from dpfix.release.ledger import Ledger, ledger_amount

    path = Path(path)
    if str(path) == "-":
        raise ValueError("--ledger: a file, not standard input or output")
    for flag in ("input", "out", "report", "plot", "confidential_report", "groups"):
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
        need = plan.charge
        if need.eps > given["total"] or need.delta > given.get("delta_total", 0):
            raise ValueError(f"--ledger: the run needs eps {float(need.eps):g}, delta "
                             f"{float(need.delta):g}, more than the total eps "
                             f"{float(given['total']):g}, delta "
                             f"{float(given.get('delta_total', 0)):g} given to create "
                             f"{path.name}; refused, nothing created")
    return Ledger(path, **given)


def _charge(ledger: Any, args: argparse.Namespace, plan: Any, dataset: str | None) -> Any:
    """The run's reservation on ``ledger`` of the plan's charge (entered: its balance
    checked), or None; ``dataset`` names the input when the plan reads a copy of it."""
    if ledger is None:
        return None
    quiet = args.quiet

    def waiting() -> None:
        if not quiet:
            print(f"dpfix privatize: waiting for {ledger.path}: another run holds it",
                  file=sys.stderr)
    keywords = {} if dataset is None else {"dataset": dataset}
    return plan.reserve(ledger, on_wait=waiting, **keywords).__enter__()


def _run_dask(args: argparse.Namespace, staged: Any, options: dict) -> int:
    """``--engine dask``: a partitioned dataset in, a Parquet dataset out, the plan of a
    :class:`~dpfix.release.inputs.Dataset` input executed by the library (its report and
    confidential report).

    The engine writes the dataset under a name of this run's
    (:func:`dpfix.cli._privatize_outputs.staged_dataset`, beside ``--out``), which the
    commit moves onto ``--out`` together with the other outputs
    (:meth:`dpfix.io.commit.StagedFiles.folder`): all or nothing, whatever fails or
    whatever signal arrives; ``--ledger``'s charge is recorded before the engine names the
    dataset, so before it is in place."""
    import shutil

    from dpfix.io import reports
    from dpfix.io.commit import remove_stale
    from dpfix.release import table

    if args.histogram:
        raise ValueError("--histogram: not with --engine dask (a histogram file is one "
                         "partition); drop --engine dask")
    out = Path(args.out)
    written = outputs.staged_dataset(out)
    plan = plan_from_args(args, options, args.input, written)
    ledger = _ledger(args, plan)
    report = Path(args.report) if args.report else None
    plot = Path(args.plot) if args.plot else None
    secret = Path(args.confidential_report) if args.confidential_report else None
    outputs.check_outputs({"--out": out, "--report": report, "--plot": plot,
                           "--confidential-report": secret}, args.force, [Path(args.input)])
    outputs.check_targets({"--out": out}, dataset=True)
    outputs.check_targets({"--report": report, "--plot": plot, "--confidential-report": secret})
    fmt = reports.plot_format(plot) if plot is not None else None
    if args.force and out.is_dir():
        raise ValueError(f"--out: {out} is a folder; remove it first (--force replaces files)")
    if os.path.lexists(out):  # --force: a file there; the dataset never replaces anything
        raise ValueError(f"--out: {out} exists; a dataset folder replaces nothing, remove it "
                         "first")
    for prefix in (f".{out.name}.staged-", f"..{out.name}.staged-"):  # of killed runs
        remove_stale(out.parent, prefix)
    client, charge = None, None
    try:
        charge = _charge(ledger, args, plan, None)
        if args.dask_scheduler:
            client = require("distributed").Client(args.dask_scheduler)
        try:
            release, confidential = table.execute(plan, ledger=charge)
        finally:
            if client is not None:
                client.close()
        staged.folder(written, out, "--out")
        outputs.stage_dask(release, confidential, staged, out, report, plot, fmt, secret,
                           Path(args.input).name)

        def say() -> None:
            outputs.announce(release.report["columns"], {
                "out": out, "report": report, "plot": plot, "confidential-report": secret},
                composed=release.report["composition"])
            if charge is not None:
                outputs.announce_charge(charge)
            outputs.warn_seeded(plan.seed, args.quiet)
        outputs.commit_outputs(staged, say, charge)
    except BaseException:
        shutil.rmtree(written, ignore_errors=True)  # this run's name: nothing else's
        raise
    finally:
        if charge is not None:  # the ledger's lock: held until the outputs are in place
            charge.__exit__(None, None, None)
    return 0
