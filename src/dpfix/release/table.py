"""``privatize_table``: a table of counts released in one call (docs/release.md).

A data holder with a pandas DataFrame (a pyarrow Table, a CSV or Parquet file, a
mapping of arrays) of several count columns states the privacy unit and the budget,
and gets a :class:`Release`: the privatized table (keys, kept and privatized columns
only) and the public report. What is derived from the true data without noise (the
true histograms, the number of top-coded counts, the realised errors) comes only in a
separate :class:`Confidential`, and only when asked for (``confidential=True``):
nothing confidential is reachable from a :class:`Release` (no attribute, repr, report
field or pickled state holds it).

Every policy of ``dpfix privatize`` lives here or in :mod:`dpfix.release.budget`
(the unit, the shares, the ranges, the row order, the columns written): the command
parses its arguments and calls :func:`privatize_table`.
"""

from __future__ import annotations

import copy
import shutil
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dpfix.io import reports
from dpfix.io.commit import StagedFiles
from dpfix.io.tables import (
    TableInput,
    counts_of,
    guard_formulas,
    is_parquet,
    other_columns,
    read_counts,
    write_parquet,
)
from dpfix.numbers.numeric import require
from dpfix.release.budget import (
    LIBRARY_LABELS,
    PrivacyUnit,
    column_budgets,
    column_deltas,
    column_seeds,
    column_uppers,
    privacy_unit,
)
from dpfix.release.frameworks import _check_histogram, check_seed, privatize
from dpfix.release.joint import JointColumn, check_joint, release_joint
from dpfix.release.ledger import Reservation
from dpfix.release.options import ReleaseOptions, TwoStage
from dpfix.release.order import ROW_ORDERS, row_order
from dpfix.release.report import (
    DATASET_ROW_ORDER_RULES,
    ROW_ORDER_RULES,
    assemble,
    composition,
    confidential_columns,
    confidential_report,
    public_report,
)
from dpfix.release.result import PrivatizedCounts
from dpfix.release.stream import BUCKET_ROWS, stopped_by_signals, stream_csv, streams

#: The row orders of a Dataset release (no global sort).
ROW_ORDERS_DATASET = tuple(DATASET_ROW_ORDER_RULES)

__all__ = ["privatize_table", "Release", "Confidential", "read_input", "Histogram", "Dataset"]


@dataclass(frozen=True)
class Histogram:
    """A histogram file as the input of :func:`privatize_table` (``dpfix privatize
    --histogram``): rows ``count,number`` (``eta_i`` rows with count ``i``), with an
    optional header line; its ``N = sum eta_i`` rows are never materialised.

    A histogram has one column of counts and no names: ``privatize_table(Histogram(path),
    None, eps, upper=...)``. The release's table is the histogram of the privatized
    counts (columns ``count`` and ``number``), written in the same format (the header
    line, if the input had one by the header rule, and its byte-order mark).

    Attributes
    ----------
    path : str or pathlib.Path
        The file.
    header : bool or None
        The first line is (True) or is not (False) a header; None (default): a header
        exactly when one of its cells is empty or not a number
        (:func:`dpfix.io.tables.read_histogram`).

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "h.csv"
    >>> _ = p.write_text("count,number\\n0,5\\n1,7\\n3,2\\n")
    >>> r = privatize_table(Histogram(p), None, 1.0, upper=3, seed=0)
    >>> list(r.table.columns), int(r.table["number"].sum()), r.report["input"]["kind"]
    (['count', 'number'], 14, 'histogram')
    """

    path: str | Path
    header: bool | None = None


@dataclass(frozen=True)
class Dataset:
    """A partitioned dataset as the input of :func:`privatize_table`, released with Dask
    (``dpfix privatize --engine dask``, :func:`dpfix.release.dask.privatize_dataset`).

    ``privatize_table(Dataset(source), columns, eps, upper=..., out=folder)``: stage 1 on
    the summed histogram, stage 2 partition by partition, the output a Parquet dataset
    folder ``out`` (one file per partition) moved into place whole or not at all; the
    release's table is a lazy ``dask.dataframe`` reading it. No global sort: the row
    order is ``"shuffled"`` (the partitions and the rows within each) or ``"input"``;
    ``upper="auto"`` is refused (the bound would be chosen from the whole column).

    Attributes
    ----------
    source : str or pathlib.Path
        A Parquet dataset (a folder or a file) or a glob of CSV files (one partition per
        file).
    """

    source: str | Path


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
        ``escape_formulas``, else warned about (:func:`dpfix.io.tables.guard_formulas`).
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
        frame = self.table.copy()
        privatized = set(self.layout.get("privatized", ()))  # the names as text
        if fmt == "parquet":
            if self.layout.get("text"):
                for col in frame.columns:
                    if str(col) not in privatized:
                        frame[col] = _integer_keys(frame[col])
            write_parquet(frame, dest)
            return
        pd = require("pandas")
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


def _names(columns: Any, labels: dict) -> list:
    names = [columns] if isinstance(columns, str) else list(columns or [])
    if not names:
        raise ValueError(f"{labels.get('columns', 'columns')}: name the column(s) of counts")
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ValueError(f"{labels.get('columns', 'columns')}: {name!r} named twice")
    return names


def read_input(data: Any, names: list, sep: str = ",") -> TableInput:
    """The table and its columns of counts, each parsed strictly
    (:func:`dpfix.io.tables.counts_of`): a path (CSV or Parquet,
    :func:`dpfix.io.tables.read_counts`), a :class:`Histogram` file, a pandas DataFrame, a
    pyarrow Table or a mapping column -> array.

    Examples
    --------
    >>> read_input({"k": ["a", "b"], "n": [3, 0]}, ["n"]).counts.tolist()
    [3, 0]
    """
    if isinstance(data, Histogram):
        return read_counts(Path(data.path), None, True, header=data.header)
    if isinstance(data, (str, Path)):
        return read_counts(Path(data), names, sep=sep)
    pd = require("pandas")
    kind = "DataFrame"
    if isinstance(data, pd.DataFrame):
        frame = data
    elif type(data).__module__.startswith("pyarrow"):
        frame, kind = data.to_pandas(), "pyarrow Table"
    elif isinstance(data, Mapping):
        lengths = {name: len(values) for name, values in data.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"data: the columns of a mapping have one length, got {lengths}")
        frame, kind = pd.DataFrame(dict(data)), "mapping"
    else:
        raise TypeError(f"data: a DataFrame, a pyarrow Table, a path or a mapping of "
                        f"arrays, got {type(data).__name__}")
    header = list(frame.columns)
    for name in names:
        if name not in header:
            raise ValueError(f"column {name!r} not found; columns are {header}")
        if header.count(name) > 1:
            raise ValueError(f"column {name!r} appears {header.count(name)} times in the header")
    if len(frame) == 0:
        raise ValueError("data: the table has no rows")
    frame = frame.reset_index(drop=True)
    privatized = [(n, n, counts_of(frame[n], str(n))) for n in names]
    return TableInput(Path(f"<{kind}>"), kind, privatized[0][2], frame, names[0],
                      privatized=privatized)


def _input_names(data: Any, columns: Any, labels: dict) -> list:
    """The privatized columns: those named, or ``[None]`` for a histogram (it has one
    column of counts and no names)."""
    if not isinstance(data, Histogram):
        return _names(columns, labels)
    flag = labels.get("columns", "columns")
    if columns is not None and (isinstance(columns, str) or list(columns)):
        raise ValueError(f"{flag}: a histogram file has no columns; drop {flag}")
    return [None]


def _input_order(data: Any, order: str | None, names: list, keys: list, keep: list,
                 labels: dict) -> Any:
    """The row order, checked against the kind of input: a histogram has no rows and no
    other columns; the Dask engine does not sort (``"shuffled"`` by default, or
    ``"input"``)."""
    flag = labels.get("order", "order")
    if isinstance(data, Histogram):
        if keys or keep:
            name = labels.get("keys", "keys") if keys else labels.get("keep", "keep")
            raise ValueError(f"{name}: a histogram file has no other columns; drop it")
        if order is not None:
            raise ValueError(f"{flag}: a histogram has no rows to order; drop it")
        return None
    if isinstance(data, Dataset):  # its other columns are checked when the engine reads them
        _passed(names, keys, keep, [c for c in dict.fromkeys([*keys, *keep]) if c not in names],
                labels)
        order = order or "shuffled"
        if order not in ROW_ORDERS_DATASET:
            raise ValueError(f"{flag} {order}: the Dask engine does not sort the dataset by key "
                             f"(each partition is written on its own); use {flag} shuffled (its "
                             "default) or input")
        return order
    return _order(order, keys, labels)


def _check_out(data: Any, out: Any, uppers: dict, labels: dict) -> None:
    """A Dataset release names its folder ``out``, and its bounds are numbers (any other
    input may name a file ``out``)."""
    if not isinstance(data, Dataset):
        return
    if out is None:
        raise ValueError("out: a Dataset release writes a Parquet dataset folder; name it")
    if "auto" in uppers.values():
        raise ValueError(f"{labels['upper']} auto: not with {labels['dataset']} (the bound is "
                         f"chosen from the whole column); give {labels['upper']} a number")


def _order(order: str | None, keys: list, labels: dict) -> str:
    flag = labels.get("order", "order")
    order = order or ("key" if keys else "shuffled")
    if order not in ROW_ORDERS:
        raise ValueError(f"{flag}: one of {', '.join(ROW_ORDERS)}, got {order!r}")
    if order == "key" and not keys:
        raise ValueError(f"{flag} key: name the key columns with {labels.get('keys', 'keys')}")
    return order


def _passed(names: list, keys: list, keep: list, others: list, labels: dict) -> list:
    """The columns written besides the privatized ones: the keys then the kept, checked."""
    seen: set = set()
    for flag, given in ((labels.get("keys", "keys"), keys), (labels.get("keep", "keep"), keep)):
        for name in given:
            if name in names:
                raise ValueError(f"{flag}: {name!r} is a privatized column "
                                 f"({labels.get('columns', 'columns')})")
            if name not in others:
                raise ValueError(f"{flag}: column {name!r} not found; the other columns are "
                                 f"{others}")
            if others.count(name) > 1:
                raise ValueError(f"{flag}: column {name!r} appears {others.count(name)} times "
                                 "in the header")
            if name in seen:
                raise ValueError(f"{flag}: column {name!r} named twice")
            seen.add(name)
    return [*keys, *keep]


def _frame(table: TableInput, results: list[PrivatizedCounts], passed: list,
           rows: Any) -> Any:
    """The released DataFrame: the passed and privatized columns in the table's order."""
    pd = require("pandas")
    ours = {col: np.asarray(r.counts, dtype=np.int64)
            for (_, col, _), r in zip(table.privatized, results, strict=True)}
    if table.kind == "csv":
        header = [str(h) for h in table.frame.iloc[0]]
        body = table.frame.iloc[1:]
        frame = pd.DataFrame({name: ours[k] if k in ours else
                              body.iloc[:, k].to_numpy(dtype=object)
                              for k, name in enumerate(header) if k in ours or name in passed})
    else:  # the passed columns with their dtypes as given (categories, nullable, ...)
        frame = pd.DataFrame({c: ours[c] if c in ours else table.frame[c]  # names as text
                              for c in table.frame.columns if c in ours or str(c) in passed})
    if rows is not None:
        frame = frame.iloc[np.asarray(rows, dtype=np.int64)]
    frame = frame.reset_index(drop=True)
    frame.attrs = {}
    return frame


def privatize_table(data: Any, columns: Any, eps: Any, *, upper: Any,
                    unit: Any = "row", keys: Any = (), keep: Any = (),
                    shares: Mapping | None = None, delta: float | None = None,
                    order: str | None = None, seed: int | None = None,
                    options: ReleaseOptions | None = None, upper_share: float | None = None,
                    ledger: Any = None, out: str | Path | None = None, sep: str = ",",
                    confidential: bool = False,
                    progress: Callable[[Any, int], Any] | None = None,
                    on_stage: Callable[[Any, str, int], Any] | None = None,
                    labels: Mapping = LIBRARY_LABELS, joint: Any = None,
                    force: bool = False, escape_formulas: bool = False,
                    staged: StagedFiles | None = None, bucket_rows: int | None = None,
                    scratch: str | Path | None = None) -> Release | tuple[Release, Confidential]:
    """Privatize the count columns of a table in one call (docs/release.md).

    Parameters
    ----------
    data : pandas.DataFrame, pyarrow.Table, str, pathlib.Path, mapping, Histogram or Dataset
        The table: a DataFrame, a pyarrow Table, a CSV or Parquet file (by its suffix;
        a CSV read as text, so the kept cells are written back as read), a mapping
        column -> array, a :class:`Histogram` file (rows ``count,number``) or a
        :class:`Dataset` (partitioned, released with Dask into ``out``). Not modified.
    columns : str, list or None
        The column(s) of non-negative integer counts to privatize (None for a
        :class:`Histogram`: it has one column and no names).
    eps : float or str
        The total budget of the release (a decimal text or a number; a float is taken
        by its shortest decimal repr for the exact split over the columns).
    upper : int, "auto" or mapping
        The public bound (counts above it are top-coded), one for every column or a
        mapping column -> bound; ``"auto"``: chosen privately with ``upper_share`` of the
        column's budget (:mod:`dpfix.release.bounds`, docs/bounds.md), reported.
    unit : str or PrivacyUnit
        The privacy unit (:class:`dpfix.release.budget.PrivacyUnit`): ``"row"``
        (default: one individual may change every column of one row, each count by at
        most 1; sequential composition over the columns), ``"cell"`` (one count of one
        row; parallel composition: every column may spend all of ``eps``), or with a
        bound ``c``: ``"row:C"``, ``"cell:C"`` (each mechanism at its share over ``c``).
    keys, keep : sequence
        Columns written as they are: ``keys`` (also the row order's sort keys by
        default) and ``keep`` (declared public). Every other column is dropped: it is
        not private.
    shares : mapping, optional
        Column -> its budget. Unit ``row``: the columns without one split the rest of
        ``eps`` equally; with one for every column they must add up to ``eps`` exactly
        (in decimal). Unit ``cell``: each at most ``eps`` (the rest spend all of it).
    delta : float, optional
        The total delta of an (eps, delta) method (split equally under unit ``row``).
    order : str, optional
        The rows' order: ``"key"`` (default with ``keys``), ``"shuffled"`` (default
        without), ``"input"`` (may follow the confidential data).
    seed : int, optional
        Reproducible (NOT FOR PRODUCTION): numpy's samplers in stage 1, a seeded PCG64 for
        the exact samplers; several columns get independent seeds spawned from it.
    options : TwoStage, OneStage, NoSplit or Auto, optional
        The method (:mod:`dpfix.release.options`; default ``TwoStage()``: the two-stage
        framework with the northwest constructor and the paper's rule-of-thumb split).
    upper_share : float, optional
        The share of an ``"auto"`` column's budget spent on its bound (default
        :data:`dpfix.release.bounds.UPPER_SHARE`).
    ledger : dpfix.release.ledger.Ledger or dpfix.release.ledger.Reservation, optional
        Charged with what the release spends (by the unit's composition), the data set,
        the columns and the unit: a release the balance cannot pay is refused before the
        data are read; the charge is recorded once the release is made and before any
        output is in place (with ``out``: once the file is written, just before it moves
        into place; a :class:`Dataset`: once every partition is written, just before the
        dataset moves), and the report's ``ledger`` gives the balance after it. An
        entered :class:`~dpfix.release.ledger.Reservation` (``dpfix privatize``, which
        holds it until its own outputs are in place) must charge exactly what the release
        spends; the caller commits it, except where the release itself moves an output
        into place (``out`` without ``staged``, a :class:`Dataset`): it is recorded just
        before that move.
    out : str or pathlib.Path, optional
        A :class:`Dataset` release: the Parquet dataset folder to write (required; must not
        exist). Any other input: write the table to this file (CSV or Parquet by its
        suffix) instead of returning it: the returned ``Release`` has ``table`` None and
        ``path`` set. A CSV ``data`` file to a CSV ``out`` is streamed (two passes over the
        file, memory flat in the number of rows, :mod:`dpfix.release.stream`) with the
        two-stage framework (any constructor but the discrete Gaussian; not with
        ``joint``); with a seed it writes the bytes the in-memory path writes. The file
        appears whole or not at all (:class:`dpfix.io.commit.StagedFiles`), replacing an
        existing one only with ``force``; ``escape_formulas`` as
        :meth:`Release.write_table`.
    sep : str
        A CSV file's separator.
    confidential : bool
        Also return the :class:`Confidential` (true histograms, top-coded counts,
        realised errors).
    progress, on_stage : callable, optional
        ``progress(column, rows)``: rows done (fixed shares of the column's rows);
        ``on_stage(column, name, N)``: a stage begins (``N``: the number of rows, public).
    labels : mapping
        How error messages name the parameters (``dpfix privatize`` passes its flags:
        :data:`dpfix.release.budget.CLI_LABELS`).
    joint : sequence of pairs or triples, optional
        Pairs (or triples) of privatized columns released together with their joint
        distribution as the fixed point (docs/joint.md): ``joint=[("MURDER", "RAPE")]``,
        ``joint=[("MURDER", "RAPE", "ROBBERY")]``. Each tuple keeps its columns' budgets
        (the unit's composition is unchanged) and the report's ``joint`` entry states its
        framework and composition. The framework follows ``options``: the one-stage
        framework by default (and with ``NoSplit("one-stage")``), the two-stage one
        (stage 1 the joint Laplace mechanism) with ``TwoStage(split=...)``
        (docs/joint.md section 7).
    staged : StagedFiles, optional
        With ``out``: stage the table in it (under the label ``--out``) and leave the
        commit to the caller (``dpfix privatize`` commits its outputs together).
    bucket_rows, scratch : optional
        A streamed release's average rows per bucket of its external shuffle
        (:data:`dpfix.release.stream.BUCKET_ROWS`; its memory) and the folder of its
        private scratch folder (the temporary folder).

    Returns
    -------
    Release, or (Release, Confidential) with ``confidential=True``

    Raises
    ------
    ValueError
        On bad input, in one line naming it, before any randomness is drawn.
    RuntimeWarning
        A numerical warning while building a mechanism is an error: no release.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"county": ["a", "b", "c", "d"], "MURDER": [0, 3, 1, 7],
    ...                    "RAPE": [2, 0, 5, 1], "INDEX": [9, 9, 9, 9]})
    >>> r = privatize_table(df, ["MURDER", "RAPE"], 1.0, upper=8, keys=["county"], seed=0)
    >>> list(r.table.columns), r.report["composition"]["eps_spent"]
    (['county', 'MURDER', 'RAPE'], 1.0)
    >>> r.report["unit"]["composition"], len(r.report["columns"])
    ('sequential', 2)
    """
    start = time.perf_counter()
    labels = {**LIBRARY_LABELS, **labels}
    options = options if options is not None else TwoStage()
    unit = privacy_unit(unit, labels["unit"])
    names = _input_names(data, columns, labels)
    budgets, rule = column_budgets(eps, names, shares, options.constructor, unit, labels)
    uppers = column_uppers(upper, names, options.constructor, labels)
    _check_out(data, out, uppers, labels)
    if delta is not None and unit.bound > 1:
        raise ValueError(f"{labels['unit']}: a bound c > 1 is for pure eps-DP methods (the "
                         "group privacy of (eps, delta) also multiplies delta); drop delta or "
                         "use c = 1")
    if upper_share is not None and "auto" not in uppers.values():
        raise ValueError(f"{labels['upper_share']}: applies to {labels['upper']} auto only; "
                         "drop it")
    seeds = column_seeds(check_seed(seed), len(names))
    deltas = column_deltas(delta, len(names), unit)
    keys, keep = list(keys or []), list(keep or [])
    order = _input_order(data, order, names, keys, keep, labels)
    pairs = check_joint(joint, names, uppers, options, delta, labels)
    target = None if out is None or isinstance(data, Dataset) else {
        "out": Path(out), "force": force, "escape_formulas": escape_formulas,
        "staged": staged, "bucket_rows": bucket_rows, "scratch": scratch}

    def run(charge: Any) -> Release | tuple[Release, Confidential]:
        if isinstance(data, Dataset):
            if pairs:
                raise ValueError(f"{labels['joint']}: the joint release reads a table, not a "
                                 "Dataset")
            return _release_dataset(data, names, eps, unit, budgets, rule, uppers, deltas,
                                    seeds, seed, keys, keep, order, options, out, confidential,
                                    start, charge)
        return _release(data, names, eps, unit, budgets, rule, uppers, deltas, seeds, seed,
                        keys, keep, order, options, upper_share, sep, confidential, progress,
                        on_stage, labels, start, charge, pairs, target)
    if ledger is None:
        return run(None)
    spent = composition(names, budgets, eps, rule, unit, deltas, exact=True)
    if isinstance(ledger, Reservation):
        _check_reservation(ledger, spent)
        return run(ledger)  # the caller commits it (a Dataset: before its dataset moves)
    with ledger.reserve(spent["eps_spent"], spent["delta_spent"], dataset=_dataset_name(data),
                        columns=[str(n) for n in names if n is not None],
                        unit=unit.statement()) as charge:
        made = run(charge)
        if not charge.committed:  # the randomness is drawn: the budget is spent
            charge.commit()
    return made


def _dataset_name(data: Any) -> str:
    """What a ledger's charge names as the data set: a file's resolved path, or the kind of
    object given (no hash of the data)."""
    path = data.path if isinstance(data, Histogram) else \
        data.source if isinstance(data, Dataset) else data
    if isinstance(path, (str, Path)):
        return str(Path(path).resolve())
    return f"<{type(data).__name__}>"


def _check_reservation(charge: Reservation, spent: dict) -> None:
    """An entered reservation passed as ``ledger=`` must charge what the release spends."""
    if charge.after is None:
        raise ValueError("ledger: a Reservation must be entered (with ledger.reserve(...) as "
                         "r) before the release")
    if (charge.charge.eps, charge.charge.delta) != (spent["eps_spent"], spent["delta_spent"]):
        raise ValueError(f"ledger: the reservation charges eps {charge.charge.eps}, delta "
                         f"{charge.charge.delta}, but the release spends eps "
                         f"{spent['eps_spent']}, delta {spent['delta_spent']}")


def _release(data: Any, names: list, eps: Any, unit: PrivacyUnit, budgets: list, rule: str,
             uppers: dict, deltas: list, seeds: list, seed: Any, keys: list, keep: list,
             order: str, options: ReleaseOptions, upper_share: Any, sep: str,
             confidential: bool, progress: Any, on_stage: Any, labels: dict, start: float,
             charge: Any, pairs: list, target: dict | None = None
             ) -> Release | tuple[Release, Confidential]:
    """The release itself, its inputs checked (:func:`privatize_table`)."""
    if target is not None and not pairs and _streamed(data, target["out"], options):
        made = _stream(data, names, eps, unit, budgets, rule, uppers, deltas, seeds, seed,
                       keys, keep, order, options, upper_share, sep, progress, on_stage,
                       labels, charge, target)
        if not confidential:
            return made[0]
        return made
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no mechanism built through overflow
        table = read_input(data, names, sep)
        passed = _passed(names, keys, keep, other_columns(table), labels)
        rows = None if order is None else row_order(table, order, keys, seeds[0])
        read_seconds = time.perf_counter() - start
        results: list = []
        paired = {name for pair in pairs for name in pair}
        for k, name in enumerate(names):
            if name in paired:
                results.append(None)
                continue
            view = _view(table, k)
            rows_k = view.rows
            results.append(privatize(
                view.counts, budgets[k] / unit.bound, options, upper=uppers[name],
                histogram=view.eta, seed=seeds[k], delta=deltas[k],
                upper_share=upper_share if uppers[name] == "auto" else None,
                progress=None if progress is None else (lambda m, n=name: progress(n, m)),
                on_stage=None if on_stage is None else
                (lambda s, n=name, r=rows_k: on_stage(n, s, r))))
        made, joint_entries = release_joint(
            pairs, {n: table.select(k).counts for k, n in enumerate(names) if n in paired},
            dict(zip(names, budgets, strict=True)), unit, uppers,
            dict(zip(names, seeds, strict=True)), options)
        results = [made.get(name, r) for name, r in zip(names, results, strict=True)]
    uppers = {name: r.n - 1 for name, r in zip(names, results, strict=True)}  # auto: chosen
    per_column = [made[name].report if name in made else
                  public_report(r, _view(table, k), name, uppers[name], None)
                  for k, (name, r) in enumerate(zip(names, results, strict=True))]
    source = {"path": str(table.path), "kind": table.kind}
    composed = composition(names, budgets, eps, rule, unit, deltas, seeded=seed is not None)
    extra = None if charge is None else {"ledger": charge.statement()}
    if joint_entries:
        extra = {**(extra or {}), "joint": joint_entries}
    if table.kind == "histogram":  # no rows to order, no other columns
        public = assemble(per_column, names, composed, unit, source, extra=extra)
        release = _histogram_release(table, results[0], public)
    else:
        output_columns = {
            "privatized": names, "key": keys, "kept": keep,
            "dropped": [c for c in other_columns(table) if c not in passed],
            "rule": "only the privatized columns and the columns declared public (keys, "
                    "keep; --key, --keep) are written"}
        public = assemble(per_column, names, composed, unit, source, output_columns, order,
                          ROW_ORDER_RULES[order], extra=extra)
        layout = {"privatized": [str(n) for n in names], "text": table.kind == "csv",
                  "sep": table.sep, "newline": table.newline, "bom": table.bom}
        release = Release(_frame(table, results, passed, rows), reports.jsonable(public),
                          layout)
    if target is not None:
        path = _write_to(target, lambda dest: release.write_table(
            dest, fmt="parquet" if is_parquet(target["out"]) else "csv",
            escape_formulas=target["escape_formulas"]), charge)
        release = Release(None, release.report, release.layout, path)
    if not confidential:
        return release
    secret = _confidential(table, names, results, uppers, {"read": read_seconds})
    return release, secret


def _release_dataset(data: Dataset, names: list, eps: Any, unit: PrivacyUnit, budgets: list,
                     rule: str, uppers: dict, deltas: list, seeds: list, seed: Any,
                     keys: list, keep: list, order: str, options: ReleaseOptions,
                     out: str | Path, confidential: bool, start: float,
                     charge: Any) -> Release | tuple[Release, Confidential]:
    """A :class:`Dataset` released by the Dask engine (:func:`privatize_table`, its inputs
    checked): the dataset written to ``out``, the report assembled as for a table."""
    from dpfix.release.dask import privatize_dataset

    commit = None if charge is None else (lambda: None if charge.committed else charge.commit())
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no mechanism built through overflow
        results = privatize_dataset(
            data.source, names, [b / unit.bound for b in budgets],
            upper=[uppers[n] for n in names], out=out, key=keys, keep=keep, seed=seeds,
            delta=deltas, order=order, options=options, before_commit=commit)
    try:  # the dataset is in place: it stays only with its release
        return _dataset_release(data, names, eps, unit, budgets, rule, uppers, deltas, seed,
                                keys, keep, order, out, confidential, start, charge, results)
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise


def _dataset_release(data: Dataset, names: list, eps: Any, unit: PrivacyUnit, budgets: list,
                     rule: str, uppers: dict, deltas: list, seed: Any, keys: list, keep: list,
                     order: str, out: str | Path, confidential: bool, start: float, charge: Any,
                     results: list) -> Release | tuple[Release, Confidential]:
    """The release of a Dataset written to ``out``: its report, its lazy table and (asked
    for) its confidential report."""
    table = TableInput(Path(str(data.source)), "dataset", None,
                       privatized=[(n, n, None) for n in names])
    per_column = [public_report(r, table, name, uppers[name], out)
                  for name, r in zip(names, results, strict=True)]
    composed = composition(names, budgets, eps, rule, unit, deltas, seeded=seed is not None)
    output_columns = {
        "privatized": names, "key": keys, "kept": keep,
        "rule": "only the privatized columns and the columns declared public (keys, keep; "
                "--key, --keep) are written"}
    extra = {"engine": "dask", "output": {"path": str(out)}}
    if charge is not None:
        extra["ledger"] = charge.statement()
    public = assemble(per_column, names, composed, unit,
                      {"path": str(data.source), "kind": "dataset"}, output_columns, order,
                      DATASET_ROW_ORDER_RULES[order], extra=extra)
    frame = require("dask.dataframe").read_parquet(str(out))
    layout = {"privatized": [str(n) for n in names], "kind": "dataset", "out": str(out)}
    release = Release(frame, reports.jsonable(public), layout)
    if not confidential:
        return release
    return release, _confidential(table, names, results, uppers,
                                  {"total": time.perf_counter() - start})


def _view(table: TableInput, k: int) -> TableInput:
    """The table seen through its ``k``-th column of counts (a histogram: itself)."""
    return table.select(k) if table.privatized else table


def _histogram_release(table: TableInput, result: PrivatizedCounts, public: dict) -> Release:
    """A histogram's release: the histogram of the privatized counts (``count``,
    ``number``), written in the input's format (its header line, byte-order mark)."""
    pd = require("pandas")
    numbers = [int(m) for m in result.output_histogram]  # Python ints: N may exceed 2^63
    frame = pd.DataFrame({"count": np.arange(len(numbers), dtype=np.int64),
                          "number": np.array(numbers, dtype=object if max(numbers) >=
                                             2**63 else np.int64)})
    layout = {"privatized": [None], "kind": "histogram", "header": table.header,
              "bom": table.bom}
    return Release(frame, reports.jsonable(public), layout)


def _true_histogram(table: TableInput, k: int, result: PrivatizedCounts, upper: int) -> Any:
    """Column ``k``'s true histogram top-coded at ``upper`` (confidential)."""
    kept = getattr(result, "confidential", None)
    if kept is not None:  # the Dask engine: summed over the partitions
        return np.asarray(kept["eta"])
    if table.eta is not None:
        return _check_histogram(table.eta, upper)[0]
    return np.bincount(np.minimum(table.select(k).counts, upper), minlength=upper + 1)


def _streamed(data: Any, out: Path, options: ReleaseOptions) -> bool:
    """A CSV file to a CSV file, by a method that draws every row from the histogram alone."""
    return (isinstance(data, (str, Path)) and not is_parquet(data) and not is_parquet(out)
            and streams(options))


def _write_to(target: dict, write: Callable[[Path], Any], charge: Any = None) -> Path:
    """``write(temp)`` a staged temporary of ``target["out"]``, committed here unless the
    caller stages it (``target["staged"]``). A ledger's ``charge`` (a
    :class:`~dpfix.release.ledger.Reservation`) is recorded before the file moves into
    place: no output is ever in place without its charge; a move that then fails says that
    the charge stays."""
    out = Path(target["out"])
    if target["staged"] is not None:
        write(target["staged"].temp(out, "--out"))
        return out
    own = StagedFiles(force=target["force"])
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


def _stream(data: Any, names: list, eps: Any, unit: PrivacyUnit, budgets: list, rule: str,
            uppers: dict, deltas: list, seeds: list, seed: Any, keys: list, keep: list,
            order: str, options: ReleaseOptions, upper_share: Any, sep: str, progress: Any,
            on_stage: Any, labels: dict, charge: Any,
            target: dict) -> tuple[Release, Confidential]:
    """A CSV file streamed to a CSV file (:func:`dpfix.release.stream.stream_csv`)."""
    done: dict = {}

    def write(dest: Path) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # no mechanism built through overflow
            done["s"] = stream_csv(
                Path(data), dest, names, [b / unit.bound for b in budgets], options, uppers,
                deltas, seeds, order, keys, lambda others: _passed(names, keys, keep, others,
                                                                   labels),
                sep=sep, upper_share=upper_share, escape_formulas=target["escape_formulas"],
                bucket_rows=target["bucket_rows"] or BUCKET_ROWS, scratch=target["scratch"],
                progress=progress, on_stage=on_stage)

    with stopped_by_signals():  # SIGTERM, SIGHUP: the staged output and scratch removed
        path = _write_to(target, write, charge)
    streamed = done["s"]
    table, results = streamed.table, streamed.results
    uppers = {name: r.n - 1 for name, r in zip(names, results, strict=True)}
    passed = [*keys, *keep]
    per_column = [public_report(r, table.select(k), name, uppers[name], None)
                  for k, (name, r) in enumerate(zip(names, results, strict=True))]
    composed = composition(names, budgets, eps, rule, unit, deltas, seeded=seed is not None)
    output_columns = {
        "privatized": names, "key": keys, "kept": keep,
        "dropped": [c for c in streamed.others if c not in passed],
        "rule": "only the privatized columns and the columns declared public (keys, keep; "
                "--key, --keep) are written"}
    public = assemble(per_column, names, composed, unit,
                      {"path": str(table.path), "kind": table.kind}, output_columns, order,
                      ROW_ORDER_RULES[order],
                      extra=None if charge is None else {"ledger": charge.statement()})
    public["streamed"] = streamed.statement()
    layout = {"privatized": [str(n) for n in names], "text": True, "sep": table.sep,
              "newline": table.newline, "bom": table.bom}
    release = Release(None, reports.jsonable(public), layout, path)
    per = [confidential_report(r, table.select(k), uppers[name], dict(r.seconds))
           for k, (name, r) in enumerate(zip(names, results, strict=True))]
    body = confidential_columns(per, names, table, {"read": streamed.read_seconds})
    body["report_version"] = 1
    secret = Confidential(reports.jsonable(body), streamed.histograms,
                          {n: r.topcoded for n, r in zip(names, results, strict=True)})
    return release, secret


def _confidential(table: TableInput, names: list, results: list, uppers: dict,
                  timings: dict) -> Confidential:
    per = [r.confidential_entry(table.select(k).counts) if isinstance(r, JointColumn) else
           confidential_report(r, _view(table, k), uppers[name], dict(r.seconds))
           for k, (name, r) in enumerate(zip(names, results, strict=True))]
    body = confidential_columns(per, names, table, timings)
    body["report_version"] = 1
    histograms = {name: _true_histogram(table, k, r, uppers[name])
                  for k, (name, r) in enumerate(zip(names, results, strict=True))}
    return Confidential(reports.jsonable(body), histograms, {n: r.topcoded for n, r in
                                           zip(names, results, strict=True)})
