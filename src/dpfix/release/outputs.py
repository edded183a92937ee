"""What a release returns: the :class:`Release` (public) and the :class:`Confidential`
(derived from the true data without noise), and how an output file is put in place.

Nothing confidential is reachable from a :class:`Release` (no attribute, repr, report
field or pickled state holds it); the :class:`Confidential` comes only when asked for
(``privatize_table(..., confidential=True)``). An output file appears whole or not at
all, never before the ledger's charge (:func:`write_output`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dpfix.io import reports
from dpfix.io.commit import StagedFiles
from dpfix.io.tables import TableInput, is_parquet
from dpfix.io.writing import INTEGER_TEXT, guard_formulas, write_parquet
from dpfix.numbers.numeric import require
from dpfix.release.frameworks import topcode_histogram
from dpfix.release.joint import JointColumn
from dpfix.release.report import confidential_columns, confidential_report
from dpfix.release.result import PrivatizedCounts
from dpfix.release.uncertainty import ColumnUncertainty
from dpfix.release.uncertainty.common import check_alpha

__all__ = ["Release", "Confidential", "write_output", "confidential_of", "view",
           "column_uncertainty", "uncertainty_entry", "REPORT_ALPHA"]

#: The ``alpha`` of the stated uncertainty summarised in the public report (95% sets).
REPORT_ALPHA = 0.05


def column_uncertainty(result: Any) -> ColumnUncertainty | str:
    """The public inputs of a column's stated uncertainty (:class:`ColumnUncertainty`), or the
    one line saying why there are none (a column of a joint tuple, a law that is not built).

    Examples
    --------
    >>> from dpfix.release.pipeline import privatize_counts
    >>> type(column_uncertainty(privatize_counts([0, 1, 1, 2], 1.0, upper=2, seed=0))).__name__
    'ColumnUncertainty'
    """
    if isinstance(result, JointColumn):
        return (f"column: released jointly with {result.report['framework']['joint_with']} "
                "(joint=): the stated uncertainty is per column of a column released alone")
    try:
        return ColumnUncertainty.of(result)
    except ValueError as exc:
        return str(exc)


def uncertainty_entry(u: ColumnUncertainty | str, alpha: float = REPORT_ALPHA) -> dict:
    """A column's ``uncertainty`` in the public report: the widths of the ``(1 - alpha)``
    confidence sets over the released rows, the distribution band's half-width and band
    (or why there is none), and how to ask for the interval of a group's total. A function
    of the public law sampled, ``alpha`` and the released histogram only (no budget spent).

    Examples
    --------
    >>> from dpfix.release.pipeline import privatize_counts
    >>> e = uncertainty_entry(column_uncertainty(privatize_counts([0, 1, 1, 2] * 9, 1.0,
    ...                                                           upper=2, seed=0)))
    >>> e["available"], e["confidence_sets"]["exact"], e["distribution_band"]["centre"]
    (True, True, 'z')
    """
    if isinstance(u, str):
        return {"available": False, "alpha": alpha, "reason": u}
    sets = u.confidence_sets(alpha).describe(u.histogram)
    try:
        band = u.distribution_band(alpha).describe()
    except ValueError as exc:
        band = {"available": False, "reason": str(exc)}
    bias = ("upper was chosen privately (upper_bound): " if u.private_upper else
            "upper is a public parameter: ")
    return {"available": True, "alpha": alpha, "cost": "none: functions of the public law "
            "sampled, alpha and the released histogram (docs/uncertainty.md)",
            "confidence_sets": sets, "distribution_band": band,
            "totals": {"method": "chernoff", "ask": "Release.total_interval(rows, alpha) or "
                       "Release.group_intervals(groups, alpha) (docs/uncertainty.md section 4)",
                       "top_coding": bias + "every interval covers the top-coded total sum_r "
                       "min(count_r, upper); the true total exceeds it by the counts' "
                       "excesses over upper, at least 0 and not known from the release "
                       "(docs/publishing.md)"}}


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
    uncertainty : mapping
        Column -> the public inputs of its stated uncertainty
        (:class:`~dpfix.release.uncertainty.ColumnUncertainty`: the law sampled, a function
        of the public target, and the released histogram), or the line saying why it has
        none; asked by :meth:`confidence_sets`, :meth:`distribution_band`,
        :meth:`total_interval` and :meth:`group_intervals` (docs/uncertainty.md).
    """

    table: Any
    report: dict
    layout: dict = field(default_factory=dict)
    path: Path | None = None
    uncertainty: Mapping = field(default_factory=dict)

    def __repr__(self) -> str:
        c = self.report["composition"]
        rows = self.report["columns"][0]["N"]
        where = "" if self.path is None else f", path={str(self.path)!r}"
        return (f"Release(columns={self.layout.get('privatized')!r}, rows={rows}, "
                f"unit={self.report['unit']['text']!r}, eps_spent={c['eps_spent']!r}{where})")

    def _uncertainty(self, column: Any) -> tuple[Any, ColumnUncertainty]:
        """The column asked for (None: the release's only column) and its inputs."""
        names = list(self.uncertainty)
        if column is None:
            if len(names) != 1:
                raise ValueError(f"column: the release has {len(names)} columns; name one of "
                                 f"{', '.join(map(str, names))}")
            column = names[0]
        if column not in self.uncertainty:
            raise ValueError(f"column: {column!r} is not a privatized column of the release "
                             f"(columns: {', '.join(map(str, names)) or 'none'})")
        u = self.uncertainty[column]
        if isinstance(u, str):
            raise ValueError(u)
        return column, u

    def confidence_sets(self, alpha: float = REPORT_ALPHA, column: Any = None) -> Any:
        """Per released count of ``column``, the ``(1 - alpha)`` confidence set for the true
        top-coded count (:class:`~dpfix.release.uncertainty.ConfidenceSets`; ``.at(counts)``
        every row's set): Neyman's construction inverted from the public mechanism, exact
        where the mechanism sampled is (docs/uncertainty.md section 2). No budget spent.

        Raises
        ------
        ValueError
            ``alpha`` outside ``(0, 1)``; an unknown column; a column without stated
            uncertainty (a column of a joint tuple).

        Examples
        --------
        >>> from dpfix.release import privatize_table
        >>> r = privatize_table({"a": [0, 1, 1, 2] * 9}, ["a"], 1.0, upper=2, seed=0)
        >>> r.confidence_sets(0.05).exact
        True
        >>> r.confidence_sets(1.5)
        Traceback (most recent call last):
        ...
        ValueError: alpha: must be a number in (0, 1) (0.05 for 95% sets), got 1.5
        """
        alpha = check_alpha(alpha)
        return self._uncertainty(column)[1].confidence_sets(alpha)

    def distribution_band(self, alpha: float = REPORT_ALPHA, column: Any = None) -> Any:
        """The ``(1 - alpha)`` simultaneous band for the CDF of ``column``'s true top-coded
        distribution (:class:`~dpfix.release.uncertainty.DistributionBand`), from the law of
        stage 1's noise (docs/uncertainty.md section 3). No budget spent.

        Raises
        ------
        ValueError
            As :meth:`confidence_sets`; a release without a cyclic stage 1 (no band).
        """
        alpha = check_alpha(alpha)
        return self._uncertainty(column)[1].distribution_band(alpha)

    def group_intervals(self, groups: list, alpha: float = REPORT_ALPHA, column: Any = None,
                        *, method: str = "chernoff") -> list:
        """For every group of rows of the released table (positions ``0 .. N-1`` in the
        release's row order, or boolean masks), a ``(1 - alpha)`` interval for the group's
        top-coded total of ``column``, and its mean
        (:class:`~dpfix.release.uncertainty.TotalInterval`; docs/uncertainty.md section 4).
        The released column is read from the table, or from the file written
        (``out=``). No budget spent.

        Raises
        ------
        ValueError
            As :meth:`confidence_sets`; rows not in the table; a histogram release (no rows).

        Examples
        --------
        >>> from dpfix.release import privatize_table
        >>> r = privatize_table({"a": [0, 1, 1, 2] * 9}, ["a"], 1.0, upper=2, seed=0)
        >>> [t.rows for t in r.group_intervals([[0, 1], [2, 3, 4]])]
        [2, 3]
        >>> r.total_interval([36])
        Traceback (most recent call last):
        ...
        ValueError: rows: position 36 is not a row of the table (it has 36 rows: 0 .. 35)
        """
        alpha = check_alpha(alpha)
        column, u = self._uncertainty(column)
        return u.group_intervals(self._released(column), groups, alpha, method=method)

    def total_interval(self, rows: Any, alpha: float = REPORT_ALPHA, column: Any = None, *,
                       method: str = "chernoff") -> Any:
        """A ``(1 - alpha)`` interval for the top-coded total (and mean) of one group of rows:
        :meth:`group_intervals` of the one group."""
        return self.group_intervals([rows], alpha, column, method=method)[0]

    def _released(self, column: Any) -> Any:
        """The released counts of ``column`` in the release's row order (None: a histogram)."""
        kind = self.layout.get("kind")
        if kind == "histogram":
            return None
        if self.table is not None:
            values = self.table[column]
            if kind == "dataset":
                values = values.compute()
            return np.asarray(values, dtype=np.int64)
        pd = require("pandas")
        if is_parquet(self.path):
            frame = pd.read_parquet(self.path, columns=[str(column)])
        else:
            frame = pd.read_csv(self.path, usecols=[str(column)],
                                sep=self.layout.get("sep", ","), dtype={str(column): "int64"},
                                encoding="utf-8-sig" if self.layout.get("bom") else "utf-8")
        return frame[str(column)].to_numpy(dtype=np.int64)

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
    if len(text) and text.str.fullmatch(INTEGER_TEXT).all():
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
