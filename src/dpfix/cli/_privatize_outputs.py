"""``dpfix privatize``'s outputs: checked at the start, staged, announced, moved into place
all together (:class:`dpfix.io.commit.StagedFiles`), standard input and output.

Every output goes to a temporary file in its own folder; when all are complete the
summary is printed (so a full disk or a closed pipe on standard output stops the run
before any file is in place), the ledger's charge recorded, then every destination checked
and the files moved into place together (docs/failures.md).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from dpfix.io import reports

__all__ = ["check_outputs", "check_targets", "announce", "announce_charge", "warn_seeded",
           "commit_outputs", "placed", "in_place", "stream_to_stdout", "stdin_holder",
           "copy_stdin", "staged_dataset", "stage_figure", "stage_dask"]


def check_outputs(outputs: dict[str, Path | None], force: bool, inputs: list[Path],
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


def check_targets(outputs: dict[str, Path | None], dataset: bool = False) -> None:
    """Refuse, before any work, the output paths that could only fail when they are written.

    - a name too long for its file system once made into the staged temporary
      (:class:`dpfix.io.commit.StagedFiles` writes ``.NAME.<12 hex>.part`` beside it;
      a Dask dataset, ``dataset``, is written as ``.NAME.staged-PID-HOST-<8 hex>``
      (:func:`staged_dataset`) through the engine's ``..NAME.staged-PID-HOST-<8
      hex>.partial-PID-HOST-<8 hex>``), or a path too long;
    - a folder the user cannot write into.

    A folder that does not exist, and a path that exists but is not a regular
    file (a symbolic link, dangling or not, included), are left to
    :func:`check_outputs`, which runs first.
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


def _shown(exact: str | None, value: float) -> str:
    """A budget as the summary prints it: its exact text where it is short, else the float's
    shortest decimal where that is short (``0.6``: the float the decimal names), else the
    float on six digits marked as rounded (the report holds the exact text).

    Examples
    --------
    >>> _shown("0.5", 0.5), _shown("0.59999999999999997779553950749686919", 0.6)
    ('0.5', '0.6')
    >>> _shown("0.29999999999999998889776975", 0.29999999999999993)
    '0.3 (rounded)'
    """
    if exact is not None and len(exact) <= 12:
        return exact
    if len(repr(float(value))) <= 12:
        return repr(float(value))
    return f"{value:.6g} (rounded)"


def announce(columns: list[dict], paths: dict[str, Path | None], file: Any = None,
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
        eps_t = _shown(b.get("exact", {}).get("eps_t"), b["eps_t"])
        print(f"dpfix privatize: {who}eps_t = {eps_t} ({spent}eps_1 = {b['eps_1']:.6g}, "
              f"eps_2 = {b['eps_2']:.6g}, split {b['split']['rule']}), {how}, "
              f"N = {c['N']}, n = {c['n']}", file=file)
    if len(columns) > 1 and composed is not None:
        kind = composed["rule"].split(":")[0]
        eps = _shown(composed.get("exact", {}).get("eps_spent"), composed["eps_spent"])
        print(f"dpfix privatize: {len(columns)} columns, eps = {eps} in all ({kind})",
              file=file)
    for what, p in paths.items():
        if p is not None:
            print(f"  {what}: {p}", file=file)


def announce_charge(charge: Any, file: Any = None) -> None:
    """The summary's line about the ledger: this run's charge and the balance after it."""
    s = charge.statement()
    delta = (f", delta {s['this_release']['delta']:g} (balance {s['delta_balance']:g})"
             if s["delta_total"] else "")
    print(f"dpfix privatize: ledger {charge.ledger.path}: this run eps "
          f"{s['this_release']['eps']:g}; spent {s['spent']:g} of {s['total']:g}, balance "
          f"{s['balance']:g}{delta}", file=file)


def warn_seeded(seed: int | None, quiet: bool) -> None:
    """A run that succeeds (an error stays a single line on stderr)."""
    if seed is not None and not quiet:
        print("dpfix privatize: warning: --seed used numpy's seeded samplers: reproducible, "
              "NOT FOR PRODUCTION", file=sys.stderr)


def commit_outputs(staged: Any, say: Any, charge: Any = None) -> None:
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


def placed(committed: list[Path]) -> str:
    """What a signal's line says was written: the outputs in place, or nothing."""
    if not committed:
        return "nothing written"
    return f"the outputs were complete and are in place ({', '.join(map(str, committed))})"


def in_place(committed: list[Path]) -> str:
    """``"; the other outputs are complete and in place (...)"``, or ``""`` without any."""
    if not committed:
        return ""
    return f"; the other outputs are complete and in place ({', '.join(map(str, committed))})"


def stream_to_stdout(table: Path, committed: list[Path], args: argparse.Namespace) -> None:
    """Copy the staged table to standard output, after every other output is in place.

    Standard output cannot be taken back: a failure or a signal while the table
    is streamed leaves a partial table there, and the message says so (with the
    other outputs, complete and in place), never "nothing written"; a signal once it
    is all written says that (``args.outcome``).
    """
    partial = ("standard output received a partial table (it cannot be taken back)"
               + in_place(committed))
    try:
        with open(table, "rb") as f:
            while chunk := f.read(1 << 16):
                sys.stdout.buffer.write(chunk)
        sys.stdout.flush()
        args.outcome = "standard output received the whole table" + in_place(committed)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OSError(f"standard output: {exc.strerror or exc}; {partial}") from None
    except KeyboardInterrupt as exc:
        exc.outcome = partial
        raise


def staged_dataset(out: Path) -> Path:
    """Where the engine writes ``--out``'s dataset before the commit moves it into place:
    ``.NAME.staged-PID-HOST-HEX`` beside it (:func:`dpfix.io.commit.leftover_tag`: a killed
    run's is removed by the next run writing ``NAME``)."""
    import secrets

    from dpfix.io.commit import leftover_tag

    return out.parent / f".{out.name}.staged-{leftover_tag()}-{secrets.token_hex(4)}"


def stdin_holder(scratch: Path) -> tuple[Path, int | None]:
    """Where standard input is copied, for the readers to open by name: ``(path, fd)``;
    nothing read yet (:func:`copy_stdin`).

    Where the system has anonymous memory files (Linux ``memfd_create``), the copy
    is one, read through ``/proc/self/fd/FD`` (``fd`` stays open until the run
    ends): no copy of the confidential table ever reaches a disk, and none
    outlives the process, even after SIGKILL. Elsewhere it is a file created
    0600 in the private (0700) ``scratch`` folder, removed at the end of the run,
    or after SIGKILL by the next run (:func:`dpfix.io.commit.remove_stale`).
    """
    memfd = getattr(os, "memfd_create", None)
    if memfd is not None and Path("/proc/self/fd").is_dir():
        fd = memfd("dpfix-stdin")
        return Path(f"/proc/self/fd/{fd}"), fd
    path = scratch / "stdin.csv"
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    return path, None


def copy_stdin(path: Path, fd: int | None) -> None:
    """Copy standard input into its holder (:func:`stdin_holder`)."""
    import shutil

    with (open(fd, "wb", closefd=False) if fd is not None else open(path, "wb")) as f:
        shutil.copyfileobj(sys.stdin.buffer, f)


def stage_figure(columns: list[dict], title: str, staged: Any, plot: Path,
                 fmt: str) -> None:
    """Stage the figure of a release's public report ``columns``: one panel per column."""
    from dpfix.release import figures

    names = [c["column"] for c in columns]
    fig = (figures.make_figures(columns, [f"{title} ({n})" for n in names])
           if len(names) > 1 else figures.make_figure(columns[0], title))
    fig.savefig(staged.temp(plot, "--plot"), format=fmt, dpi=120)


def stage_reports(public: dict, secret: Any, shown: Path, paths: dict[str, Path | None],
                  staged: Any, start: float, write_start: float) -> None:
    """Stage the public report and the confidential one (naming the input as ``shown``, with
    the seconds of writing and in all since ``start``)."""
    if paths["--confidential-report"] is not None:
        now = time.perf_counter()
        body = dict(secret.report, input=str(shown))
        body["timings_seconds"] = {**body["timings_seconds"], "write": now - write_start,
                                   "total": now - start}
        reports.write_json(body, staged.temp(paths["--confidential-report"],
                                             "--confidential-report", private=True))
    if paths["--report"] is not None:
        reports.write_json(public, staged.temp(paths["--report"], "--report"))


def stage_dask(release: Any, confidential: Any, staged: Any, out: Path,
               report: Path | None, plot: Path | None, fmt: str | None, secret: Path | None,
               title: str) -> None:
    """Stage a Dask release's report (naming ``out``, where its dataset goes), figure and
    confidential report."""
    if report is not None:
        reports.write_json(release.report_for(out), staged.temp(report, "--report"))
    if fmt is not None:
        stage_figure(release.report["columns"], title, staged, plot, fmt)
    if secret is not None:
        reports.write_json(confidential.report, staged.temp(secret, "--confidential-report",
                                                             private=True))
