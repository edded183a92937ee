"""What a release reads: the input descriptors of :func:`dpfix.release.table.privatize_table`
and the table read from one of them (docs/release.md, "The inputs").

- a pandas DataFrame, a pyarrow Table or a mapping column -> array, as it is;
- a path: a CSV file (read as text, its cells written back as read) or a Parquet file (by
  its suffix, :func:`dpfix.io.tables.is_parquet`); :class:`Csv` names a CSV file with
  another separator than ``","``;
- :class:`Histogram`: a histogram file (rows ``count,number``), its rows never
  materialised;
- :class:`Dataset`: a partitioned dataset, released with Dask.

:func:`read_input` reads the table and parses its columns of counts strictly
(:func:`dpfix.io.counts.counts_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpfix.io.counts import counts_of
from dpfix.io.tables import TableInput, check_sep, is_parquet, read_counts
from dpfix.numbers.numeric import require

__all__ = ["Csv", "Histogram", "Dataset", "read_input", "input_path"]


@dataclass(frozen=True)
class Csv:
    """A CSV file with its separator as the input of :func:`privatize_table`: a plain path
    is a CSV file with ``","`` (or a Parquet file, by its suffix).

    The separator is the input's and the output's: a CSV output of the release is
    written with it (a DataFrame input, which has none, is written with ``","``).

    Attributes
    ----------
    path : str or pathlib.Path
        The file (not a Parquet file).
    sep : str
        One character other than a quote or a line end (``"\\t"`` for tabs).

    Examples
    --------
    >>> Csv("t.tsv", "\\t").sep
    '\\t'
    >>> Csv("t.csv", ";;")
    Traceback (most recent call last):
    ...
    ValueError: sep: one character other than a quote or a line end, got ';;'
    """

    path: str | Path
    sep: str = ","

    def __post_init__(self) -> None:
        check_sep(self.sep)
        if is_parquet(self.path):
            raise ValueError(f"sep: {self.path} is a Parquet file (by its suffix), which has "
                             "no separator; give the path alone")


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
    >>> import shutil, tempfile
    >>> from dpfix.release.table import privatize_table
    >>> p = Path(tempfile.mkdtemp()) / "h.csv"
    >>> _ = p.write_text("count,number\\n0,5\\n1,7\\n3,2\\n")
    >>> r = privatize_table(Histogram(p), None, 1.0, upper=3, seed=0)
    >>> list(r.table.columns), int(r.table["number"].sum()), r.report["input"]["kind"]
    (['count', 'number'], 14, 'histogram')
    >>> shutil.rmtree(p.parent)
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
    a bound chosen privately (``upper="auto"``) is chosen from the summed histogram, top-coded
    at the largest candidate (:data:`dpfix.release.bounds.DEFAULT_MAX_UPPER`).

    Attributes
    ----------
    source : str or pathlib.Path
        A Parquet dataset (a folder or a file) or a glob of CSV files (one partition per
        file).
    """

    source: str | Path


def input_path(data: Any) -> Path | None:
    """The file (or dataset) an input names, or None for data in memory.

    Examples
    --------
    >>> input_path(Csv("t.csv", ";")), input_path({"a": [1]})
    (PosixPath('t.csv'), None)
    """
    if isinstance(data, (Csv, Histogram)):
        return Path(data.path)
    if isinstance(data, Dataset):
        return Path(data.source)
    if isinstance(data, (str, Path)):
        return Path(data)
    return None


def read_input(data: Any, names: list) -> TableInput:
    """The table and its columns of counts, each parsed strictly
    (:func:`dpfix.io.counts.counts_of`): a path (CSV or Parquet,
    :func:`dpfix.io.tables.read_counts`), a :class:`Csv` or :class:`Histogram` file, a
    pandas DataFrame, a pyarrow Table or a mapping column -> array.

    Examples
    --------
    >>> read_input({"k": ["a", "b"], "n": [3, 0]}, ["n"]).counts.tolist()
    [3, 0]
    """
    if isinstance(data, Histogram):
        return read_counts(Path(data.path), None, True, header=data.header)
    if isinstance(data, Csv):
        return read_counts(Path(data.path), names, sep=data.sep)
    if isinstance(data, (str, Path)):
        return read_counts(Path(data), names)
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
