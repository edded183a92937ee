"""What a release returns: the :class:`Release` (public) and the :class:`Confidential`
(derived from the true data without noise), and how an output file is put in place.

Nothing confidential is reachable from a :class:`Release` (no attribute, repr, report
field or pickled state holds it); the :class:`Confidential` comes only when asked for
(``privatize_table(..., confidential=True)``). An output file appears whole or not at
all, never before the ledger's charge (:func:`write_output`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dpfix.io import reports
from dpfix.io.commit import StagedFiles
from dpfix.io.tables import TableInput, is_parquet
from dpfix.io.writing import guard_formulas, write_parquet
from dpfix.numbers.numeric import require
from dpfix.release.frameworks import topcode_histogram
from dpfix.release.joint import JointColumn
from dpfix.release.report import confidential_columns, confidential_report
from dpfix.release.result import PrivatizedCounts

__all__ = ["Release", "Confidential", "write_output", "confidential_of", "view"]


@dataclass(frozen=True, eq=False, repr=False)
class Release:
    """A release: the privatized table and the public report, nothing else.

    Attributes
    ----------
    table : pandas.DataFrame or dask.dataframe.DataFrame
        The key and kept columns (as given: declared public) and the privatized columns
        (int64), in the input's column order, rows in the release's order, a fresh
        ``RangeIndex`` and no ``attrs``. A :class:`Histogram`: the histogram of the
        privatized counts (``count``, ``number``). A :class:`Dataset`: a lazy Dask
        DataFrame reading the dataset written to ``out``.
    report : dict
        The public report (version 1, :mod:`dpfix.release.report`).
    layout : dict
        How a CSV input was written (separator, line end, byte-order mark) and which
        columns are privatized: public facts of the format, for :meth:`write_table`; a
        histogram's header line and byte-order mark (``kind`` ``"histogram"``), or a
        Dataset release's folder (``kind`` ``"dataset"``, ``out``).
    path : pathlib.Path or None
        With ``privatize_table(..., out=PATH)`` for a table: the file the table was written
        to, and ``table`` is None (a CSV file to a CSV file is streamed: its rows are never
        all in memory; docs/release.md, section 7).
    """

    table: Any
    report: dict
    layout: dict = field(default_factory=dict)
    path: Path | None = None

    def __repr__(self) -> str:
        c = self.report["composition"]
        rows = self.report["columns"][0]["N"]
        where = "" if self.path is None else f", path={str(self.path)!r}"
        return (f"Release(columns={self.layout.get('privatized')!r}, rows={rows}, "
                f"unit={self.report['unit']['text']!r}, eps_spent={c['eps_spent']!r}{where})")

    def _in_memory(self) -> None:
        if self.table is None:
            raise ValueError(f"the table was written to {self.path} (privatize_table(..., "
                             "out=)); it is not held in memory")

    @property
    def budget(self) -> dict:
        """The budget statement: the unit, what each column spent and the composition."""
        return {"unit": self.report["unit"], **self.report["composition"]}

    def report_for(self, out: str | Path | None) -> dict:
        """A copy of the public report, with the output's path (``None``: without)."""
        report = copy.deepcopy(self.report)
        if out is not None:
            report["output"] = {"path": str(out)}
        return report

    def write_table(self, dest: str | Path, fmt: str | None = None,
                    escape_formulas: bool = False) -> None:
        """Write the table to ``dest`` (usually a staged temporary), CSV or Parquet.

        ``fmt``: ``"csv"`` or ``"parquet"`` (None: by the suffix of ``dest``). A CSV is
        written with the input's separator, line end and byte-order mark (a CSV input's
        cells as read); cells of the key and kept columns (and header cells) that a
        spreadsheet may run as formulas are prefixed with ``'`` with
        ``escape_formulas``, else warned about (:func:`dpfix.io.writing.guard_formulas`).
        Parquet keeps every column's dtype; the text columns of a CSV input whose every
        cell is a plain integer (``0``, ``-12``, no leading zero) become int64 keys.
        """
        self._in_memory()
        fmt = fmt or ("parquet" if is_parquet(dest) else "csv")
        kind = self.layout.get("kind")
        if kind == "dataset":
            raise ValueError(f"the table of a Dataset release is the dataset {self.layout['out']}, "
                             "written by the engine; write the report with write_report")
        if kind == "histogram":
            _write_histogram(self.table, self.layout, dest, fmt)
            return
        frame = self.table
        privatized = set(self.layout.get("privatized", ()))  # the names as text
        if fmt == "parquet":
            if self.layout.get("text"):
                frame = frame.copy()
                for col in frame.columns:
                    if str(col) not in privatized:
                        frame[col] = _integer_keys(frame[col])
            write_parquet(frame, dest)
            return
        pd = require("pandas")
        frame = frame.copy()
        others = [c for c in frame.columns if str(c) not in privatized]
        guard_formulas(frame, others, [str(c) for c in others], escape_formulas)
        heads = pd.DataFrame({"header": [str(c) for c in frame.columns]})
        guard_formulas(heads, ["header"], ["the header"], escape_formulas)
        frame.columns = list(heads["header"])
        frame.to_csv(dest, index=False, sep=self.layout.get("sep", ","),
                     lineterminator=self.layout.get("newline", "\n"),
                     encoding="utf-8-sig" if self.layout.get("bom") else "utf-8")

    def write(self, path: str | Path, report: str | Path | None = None, *,
              force: bool = False, escape_formulas: bool = False) -> None:
        """Write the table (and the public report) atomically: both or neither.

        Each goes to a temporary beside its destination, then both are moved into
        place together (:class:`dpfix.io.commit.StagedFiles`); an existing file is
        replaced only with ``force``.
        """
        self._in_memory()
        staged = StagedFiles(force=force)
        with staged:
            self.write_table(staged.temp(Path(path), "path"),
                             fmt="parquet" if is_parquet(path) else "csv",
                             escape_formulas=escape_formulas)
            if report is not None:
                reports.write_json(self.report_for(path), staged.temp(Path(report), "report"))
            staged.commit()

    def write_report(self, path: str | Path, *, force: bool = False) -> None:
        """Write the public report alone, atomically (a Dataset release's table is in place
        already: the report names it as the output)."""
        out = self.layout.get("out")
        staged = StagedFiles(force=force)
        with staged:
            reports.write_json(self.report_for(out), staged.temp(Path(path), "report"))
            staged.commit()


def _write_histogram(table: Any, layout: dict, dest: str | Path, fmt: str) -> None:
    """A histogram release written as its input was: the header line (if it had one),
    then ``count,number`` for every count ``0 .. upper``, its byte-order mark kept."""
    if fmt != "csv":
        raise ValueError(f"{dest}: a histogram is written as a CSV file like its input")
    lines = [] if layout.get("header") is None else [layout["header"]]
    lines += [f"{int(i)},{int(m)}" for i, m in zip(table["count"], table["number"],
                                                    strict=True)]
    Path(dest).write_text("\n".join(lines) + "\n",
                          encoding="utf-8-sig" if layout.get("bom") else "utf-8")


@dataclass(eq=False, repr=False)
class Confidential:
    """Derived from the true data WITHOUT noise: for the data holder, never to publish.

    Attributes
    ----------
    report : dict
        The confidential report: per column the true distribution, the number of
        top-coded counts, the realised errors, every timing.
    histograms : dict
        Column -> the true histogram of the counts top-coded at ``upper``.
    topcoded : dict
        Column -> how many true counts exceeded ``upper``.
    """

    report: dict
    histograms: dict
    topcoded: dict

    def __repr__(self) -> str:
        return (f"Confidential(columns={list(self.histograms)!r}: derived from the true data "
                "without noise; do not publish)")

    def write(self, path: str | Path, *, force: bool = False) -> None:
        """Write the confidential report (mode 0600), atomically."""
        staged = StagedFiles(force=force)
        with staged:
            reports.write_json(self.report, staged.temp(Path(path), "confidential report",
                                                         private=True))
            staged.commit()


def _integer_keys(values: Any) -> Any:
    """Text cells that are all plain integers (no sign but ``-``, no leading zero, no
    space) as int64, so that they survive as numbers; any other column as it is."""
    pd = require("pandas")
    text = values.astype(str)
    if len(text) and text.str.fullmatch(r"-?(?:0|[1-9][0-9]{0,17})").all():
        return pd.Series(text.astype("int64").to_numpy(), index=values.index)
    return values


def write_output(out: Path, write: Callable[[Path], Any], *, force: bool = False,
                 charge: Any = None, staged: StagedFiles | None = None) -> Path:
    """``write(temp)`` a staged temporary of ``out``, committed here unless the caller
    stages it (``staged``: a :class:`~dpfix.io.commit.StagedFiles` the caller commits,
    with its other outputs). A ledger's ``charge`` (an entered
    :class:`~dpfix.release.ledger.Reservation`) is recorded before the file moves into
    place: no output is ever in place without its charge; a move that then fails says that
    the charge stays. ``force``: an existing file is replaced."""
    out = Path(out)
    if staged is not None:
        write(staged.temp(out, "out"))
        return out
    own = StagedFiles(force=force)
    with own:
        write(own.temp(out, "out"))
        if charge is not None and not charge.committed:
            charge.commit()
        try:
            own.commit()
        except OSError as exc:
            if charge is None:
                raise
            raise type(exc)(f"{' '.join(str(exc).split())}; {charge.recorded()}") from None
    return out


def view(table: TableInput, k: int) -> TableInput:
    """The table seen through its ``k``-th column of counts (a histogram: itself)."""
    return table.select(k) if table.privatized else table


def true_histogram(table: TableInput, k: int, result: PrivatizedCounts, upper: int) -> Any:
    """Column ``k``'s true histogram top-coded at ``upper`` (confidential)."""
    kept = getattr(result, "confidential", None)
    if kept is not None:  # the Dask engine: summed over the partitions
        return np.asarray(kept["eta"])
    if table.eta is not None:
        return topcode_histogram(table.eta, upper)[0]
    return np.bincount(np.minimum(table.select(k).counts, upper), minlength=upper + 1)


def confidential_of(table: TableInput, names: list, results: list, uppers: dict,
                    timings: dict) -> Confidential:
    """The :class:`Confidential` of a release: each column's confidential report (a joint
    column's its own), the true histograms top-coded at ``upper`` and the top-coded
    numbers, from the table as read and the results."""
    per = [r.confidential_entry(table.select(k).counts) if isinstance(r, JointColumn) else
           confidential_report(r, view(table, k), uppers[name], dict(r.seconds))
           for k, (name, r) in enumerate(zip(names, results, strict=True))]
    body = confidential_columns(per, names, table, timings)
    body["report_version"] = 1
    histograms = {name: true_histogram(table, k, r, uppers[name])
                  for k, (name, r) in enumerate(zip(names, results, strict=True))}
    return Confidential(reports.jsonable(body), histograms, {n: r.topcoded for n, r in
                                           zip(names, results, strict=True)})
