"""Tables of counts on disk: reading CSV, Parquet and histogram files, writing them back.

One module for every file the toolkit reads or writes for the two-stage
pipeline (paper Section 1.2; ``docs/math_notes.md``):

- the shared data sets, found in ``$DPFIX_DATA`` or ``../shared/data``
  (:func:`data_dir`, :func:`data_path`), never copied into the project;
- a table of counts (one row per category, CSV or Parquet) or a histogram file
  (one row ``count,number`` per count value ``i``, the number of categories
  ``eta_i``, with or without a header line): :func:`read_table`,
  :func:`counts_from_column`, :func:`read_histogram`, and :func:`read_counts`,
  which keeps what is needed to write the table back (:class:`TableInput`);
- the privatized table written in the input's format (:func:`write_counts`):
  a CSV is rewritten cell for cell except the privatized column, a Parquet
  file keeps its dtypes;
- staged atomic writing (:class:`StagedFiles`): every output goes to a
  temporary file beside its destination and all of them are moved into place
  together, so a failure leaves no partial output.

pandas (and pyarrow for Parquet) are imported only when a table is read; without
them the error names the ``production`` extra (:func:`dpfix.numeric.require`).
"""

from __future__ import annotations

import codecs
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpfix.numeric import require

if TYPE_CHECKING:  # pragma: no cover
    from dpfix.pipeline import PrivatizedCounts

__all__ = ["data_dir", "data_path", "read_table", "counts_from_column", "read_histogram",
           "synthetic_counts", "MAX_HISTOGRAM_COUNT", "PARQUET_SUFFIXES", "is_parquet",
           "TableInput", "counts_of", "read_counts", "write_counts", "parquet_dtype",
           "StagedFiles"]

#: File name suffixes read and written as Parquet (anything else is CSV text).
PARQUET_SUFFIXES = (".parquet", ".pq")
#: Largest count value a histogram file may name (eta is a dense array: 80 MB).
MAX_HISTOGRAM_COUNT = 10**7
_INT64_MAX = int(np.iinfo(np.int64).max)


def is_parquet(path: str | Path) -> bool:
    """Whether ``path`` names a Parquet file (by its suffix, :data:`PARQUET_SUFFIXES`).

    Examples
    --------
    >>> is_parquet("counts.PQ"), is_parquet("counts.csv")
    (True, False)
    """
    return Path(path).suffix.lower() in PARQUET_SUFFIXES


# ------------------------------------------------------------------ the shared data
def data_dir() -> Path:
    """The folder of the shared data sets.

    Returns
    -------
    pathlib.Path
        ``$DPFIX_DATA`` when set, else ``../shared/data`` beside the repository
        (or beside the current directory).

    Raises
    ------
    FileNotFoundError
        If ``$DPFIX_DATA`` is not a folder, or no data folder exists.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> os.environ["DPFIX_DATA"] = folder
    >>> data_dir() == Path(folder)
    True
    >>> del os.environ["DPFIX_DATA"]
    """
    env = os.environ.get("DPFIX_DATA")
    if env:
        if not Path(env).is_dir():
            raise FileNotFoundError(f"DPFIX_DATA={env} is not a folder")
        return Path(env)
    for base in (Path(__file__).resolve().parents[2], Path.cwd()):
        candidate = base.parent / "shared" / "data"
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("no data folder: set DPFIX_DATA or place the data in ../shared/data")


def data_path(name: str) -> Path:
    """Path of one shared data file, e.g. ``data_path("crime_data.csv")``.

    Parameters
    ----------
    name : str
        The file name inside :func:`data_dir`.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    FileNotFoundError
        If there is no data folder or no such file in it.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "h.csv").write_text("0,1\\n")
    >>> os.environ["DPFIX_DATA"] = str(folder)
    >>> data_path("h.csv").name
    'h.csv'
    >>> del os.environ["DPFIX_DATA"]
    """
    path = data_dir() / name
    if not path.is_file():
        raise FileNotFoundError(f"data file {path} not found")
    return path


def synthetic_counts(rows: int = 2000, seed: int = 7) -> np.ndarray:
    """A reproducible synthetic table of counts, the embedded default of ``make run``.

    A zero-inflated negative binomial: about 40% zeros and a long right tail.

    Parameters
    ----------
    rows : int
        Number of rows (categories).
    seed : int
        Seed of numpy's generator: the same seed gives the same table.

    Returns
    -------
    numpy.ndarray
        ``rows`` non-negative int64 counts.

    Examples
    --------
    >>> c = synthetic_counts(1000, seed=3)
    >>> len(c), bool((c >= 0).all()), bool((synthetic_counts(1000, seed=3) == c).all())
    (1000, True, True)
    """
    rng = np.random.default_rng(seed)
    counts = rng.negative_binomial(2, 0.25, size=rows)
    counts[rng.random(rows) < 0.35] = 0
    return counts


# ------------------------------------------------------------------ tables
def read_table(path: str | Path) -> Any:
    """A CSV or Parquet table as a pandas DataFrame (a CSV byte-order mark is tolerated).

    Parameters
    ----------
    path : str or pathlib.Path
        A ``.parquet``/``.pq`` file, or CSV text with a header line.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    FileNotFoundError
        If there is no such file.
    ValueError
        If the CSV file is empty.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_bytes(b"\\xef\\xbb\\xbfname,k\\na,3\\n")
    >>> list(read_table(p).columns)
    ['name', 'k']
    """
    pd = require("pandas")

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"input file {path} not found")
    if is_parquet(path):
        return pd.read_parquet(path)
    try:
        return pd.read_csv(path, encoding="utf-8-sig")
    except pd.errors.EmptyDataError:
        raise ValueError(f"input file {path} is empty") from None


def counts_from_column(table: Any, column: str) -> np.ndarray:
    """The integer counts of one column of a table, checked row by row.

    Parameters
    ----------
    table : pandas.DataFrame
    column : str
        The column of counts.

    Returns
    -------
    numpy.ndarray
        The counts as int64.

    Raises
    ------
    ValueError
        Naming the first bad row: a missing (NaN), non-numeric, non-integer or
        negative value; or an unknown column, or a table without rows.

    Examples
    --------
    >>> import pandas as pd
    >>> counts_from_column(pd.DataFrame({"k": [3, 0, 2.0]}), "k").tolist()
    [3, 0, 2]
    >>> counts_from_column(pd.DataFrame({"k": [3, -1]}), "k")
    Traceback (most recent call last):
    ...
    ValueError: column 'k', row 1: negative count -1
    """
    if column not in table.columns:
        raise ValueError(f"column {column!r} not found; columns are {list(table.columns)}")
    if len(table) == 0:
        raise ValueError("the table has no rows")
    raw = table[column]
    values = np.asarray(raw.to_numpy(), dtype=object)
    out = np.empty(len(values), dtype=np.int64)
    missing = np.asarray(raw.isna().to_numpy(), dtype=bool)
    for i, v in enumerate(values):
        if missing[i]:
            raise ValueError(f"column {column!r}, row {i}: missing value (NaN)")
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise ValueError(f"column {column!r}, row {i}: {v!r} is not a number") from None
        if np.isnan(f):
            raise ValueError(f"column {column!r}, row {i}: missing value (NaN)")
        if not np.isfinite(f) or f != int(f):
            raise ValueError(f"column {column!r}, row {i}: {v!r} is not an integer count")
        if f < 0:
            raise ValueError(f"column {column!r}, row {i}: negative count {v!r}")
        out[i] = int(f)
    return out


def counts_of(values: Any, column: str) -> np.ndarray:
    """Integer counts of a pandas Series, vectorised (millions of rows in a second).

    An empty or blank text cell is a missing value. Counts above 2^62 are
    clipped to 2^62 (any such count is top-coded by the pipeline anyway).

    Parameters
    ----------
    values : pandas.Series
        The column, as numbers or as text.
    column : str
        Its name, for the error message.

    Returns
    -------
    numpy.ndarray
        The counts as int64.

    Raises
    ------
    ValueError
        For a boolean column, or naming the first bad row (as
        :func:`counts_from_column` does).

    Examples
    --------
    >>> import pandas as pd
    >>> counts_of(pd.Series(["3", " 0", "12"]), "k").tolist()
    [3, 0, 12]
    >>> counts_of(pd.Series(["3", ""]), "k")
    Traceback (most recent call last):
    ...
    ValueError: column 'k', row 1: missing value (NaN)
    """
    pd = require("pandas")

    if values.dtype == bool:
        raise ValueError(f"column {column!r} holds booleans, not counts")
    if values.dtype == object or pd.api.types.is_string_dtype(values.dtype):
        text = values.astype(str).str.strip()
        values = values.where(text != "", np.nan)  # an empty cell is a missing value
    a = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    ok = np.isfinite(a).all() and (a >= 0).all() and (a == np.floor(a)).all()
    if not ok:  # the slow reader names the first bad row
        counts_from_column(pd.DataFrame({column: values.reset_index(drop=True)}), column)
        raise ValueError(f"column {column!r}: not all values are non-negative integers")
    return np.minimum(a, 2.0**62).astype(np.int64)


# ------------------------------------------------------------------ histograms
def _histogram_row(line: str) -> tuple[int, int | float] | None:
    """``(count, number)`` of a ``count,number`` line, or None if it is not one. The
    number is read as an exact int when it is written as one (a float would round
    numbers above 2^53)."""
    cells = [c.strip() for c in line.split(",")]
    try:
        i = int(cells[0])
    except (ValueError, IndexError):
        return None
    try:
        return i, int(cells[1])
    except IndexError:
        return None
    except ValueError:
        pass
    try:
        return i, float(cells[1])
    except ValueError:
        return None


def read_histogram(path: str | Path, with_header: bool = False) -> Any:
    """A histogram file as ``eta`` (``eta[i]`` categories with count ``i``).

    Rows ``count,number`` (the synthetic histograms), optionally after a header
    line (``binom_hist_data.csv``). Missing count values are zero; a count
    value given twice has its numbers added.

    Parameters
    ----------
    path : str or pathlib.Path
    with_header : bool
        Also return the skipped first line.

    Returns
    -------
    numpy.ndarray or (numpy.ndarray, str or None)
        ``eta`` as int64; with ``with_header``, ``(eta, header)``, ``header``
        the skipped first line (None if there was none).

    Raises
    ------
    FileNotFoundError
        If there is no such file.
    ValueError
        Naming the line: a line that is not ``count,number``, a negative entry,
        a number that is not an integer (``3`` and ``3.0`` are) or is above
        2^63 - 1, a count value above :data:`MAX_HISTOGRAM_COUNT`; or a file
        without rows.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "h.csv"
    >>> _ = p.write_text("count,number\\n0,3\\n2,12345678901234567\\n")
    >>> read_histogram(p, with_header=True)
    (array([               3,                0, 12345678901234567]), 'count,number')
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"histogram file {path} not found")
    pairs, header = [], None
    for lineno, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), 1):
        if not line.strip():
            continue
        row = _histogram_row(line)
        if row is None:
            if lineno == 1:
                header = line  # a header line
                continue
            raise ValueError(f"{path}, line {lineno}: expected 'count,number', got {line!r}")
        i, m = row
        if i < 0 or m < 0:
            raise ValueError(f"{path}, line {lineno}: negative entry in {line!r}")
        if isinstance(m, float) and (not np.isfinite(m) or m != int(m)):
            raise ValueError(f"{path}, line {lineno}: the number in {line!r} is not an integer")
        if i > MAX_HISTOGRAM_COUNT:
            raise ValueError(f"{path}, line {lineno}: count value {i} above the largest "
                             f"readable, {MAX_HISTOGRAM_COUNT}")
        pairs.append((i, int(m)))
    if not pairs:
        raise ValueError(f"histogram file {path} has no rows")
    totals: dict[int, int] = {}
    for i, m in pairs:  # Python ints: repeated count values cannot overflow
        totals[i] = totals.get(i, 0) + m
    big = [i for i, m in totals.items() if m > _INT64_MAX]
    if big:
        raise ValueError(f"{path}: the number for count {big[0]} is above 2^63 - 1")
    eta = np.zeros(max(totals) + 1, dtype=np.int64)
    for i, m in totals.items():
        eta[i] = m
    return (eta, header) if with_header else eta


# ------------------------------------------------------------------ one input, to write back
@dataclass
class TableInput:
    """A table of counts as read by :func:`read_counts`, with what is needed to write it back.

    Attributes
    ----------
    path : pathlib.Path
    kind : str
        ``"csv"``, ``"parquet"`` or ``"histogram"``.
    counts : numpy.ndarray or None
        One count per row; None for a histogram (its rows are never materialised).
    frame : pandas.DataFrame or None
        The table (CSV: every cell as text, the header as row 0).
    col : int or str or None
        CSV: the column's position; Parquet: its name.
    header : str or None
        The header line of a histogram file.
    bom : bool
        The file starts with a UTF-8 byte-order mark (kept on output).
    newline : str
        The CSV line end (``"\\r\\n"`` is kept on output).
    eta : numpy.ndarray or None
        Histogram input: ``eta[i]`` rows with count ``i``.
    """

    path: Path
    kind: str
    counts: np.ndarray | None
    frame: Any = None
    col: Any = None
    header: str | None = None
    bom: bool = False
    newline: str = "\n"
    eta: np.ndarray | None = None

    @property
    def rows(self) -> int:
        """The number of rows ``N`` (exact, also beyond 2^63 for a histogram)."""
        return len(self.counts) if self.eta is None else sum(int(v) for v in self.eta)


def _read_csv(path: Path, column: str) -> TableInput:
    pd = require("pandas")

    with open(path, "rb") as f:
        head = f.read(1 << 16)
    try:
        frame = pd.read_csv(path, header=None, dtype=str, keep_default_na=False,
                            na_filter=False, encoding="utf-8-sig")
    except pd.errors.EmptyDataError:
        raise ValueError(f"input file {path} is empty") from None
    except UnicodeDecodeError:
        raise ValueError(f"input file {path} is not UTF-8 text") from None
    except pd.errors.ParserError as exc:
        raise ValueError(f"input file {path}: {exc}") from None
    header = [str(h) for h in frame.iloc[0]]
    where = [k for k, h in enumerate(header) if h == column]
    if not where:
        raise ValueError(f"column {column!r} not found; columns are {header}")
    if len(where) > 1:
        raise ValueError(f"column {column!r} appears {len(where)} times in the header")
    if len(frame) < 2:
        raise ValueError(f"input file {path}: the table has no rows")
    counts = counts_of(frame.iloc[1:, where[0]].reset_index(drop=True), column)
    first = head.split(b"\n", 1)[0]
    return TableInput(path, "csv", counts, frame, where[0],
                      bom=head.startswith(codecs.BOM_UTF8),
                      newline="\r\n" if first.endswith(b"\r") else "\n")


def _read_parquet(path: Path, column: str) -> TableInput:
    pd = require("pandas")

    try:
        frame = pd.read_parquet(path)
    except ImportError:
        raise ValueError("reading Parquet needs pyarrow, which comes with the production "
                         "extra: pip install 'dpfix[production]'") from None
    except Exception as exc:  # pyarrow's errors name no common base
        raise ValueError(f"input file {path} is not a readable Parquet file: {exc}") from None
    if column not in frame.columns:
        raise ValueError(f"column {column!r} not found; columns are {list(frame.columns)}")
    if len(frame) == 0:
        raise ValueError(f"input file {path}: the table has no rows")
    return TableInput(path, "parquet", counts_of(frame[column], column), frame, column)


def _read_histogram_input(path: Path) -> TableInput:
    eta, header = read_histogram(path, with_header=True)
    if eta.sum() == 0:
        raise ValueError(f"histogram file {path} has no rows (every number is 0)")
    with open(path, "rb") as f:
        bom = f.read(3) == codecs.BOM_UTF8
    return TableInput(path, "histogram", None, eta=eta, header=header, bom=bom)


def read_counts(path: str | Path, column: str | None, histogram: bool = False) -> TableInput:
    """Read the counts of ``column`` of a CSV/Parquet table, or of a histogram file.

    A CSV file is read as text (every cell a string, no NaN parsing), so that
    :func:`write_counts` writes the other cells back byte for byte; a Parquet
    file is read with its dtypes.

    Parameters
    ----------
    path : str or pathlib.Path
        The table (Parquet by its suffix, :func:`is_parquet`; else CSV with a
        header line), or with ``histogram`` a histogram file.
    column : str or None
        The column of non-negative integer counts (ignored for a histogram).
    histogram : bool
        ``path`` is a histogram file (:func:`read_histogram`).

    Returns
    -------
    TableInput

    Raises
    ------
    FileNotFoundError
        If there is no such file.
    ValueError
        For an empty, unreadable or ragged file, an unknown or repeated
        column, a table without rows, or a bad count (naming its row).

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text("name,k\\na,3\\nb,0\\n")
    >>> t = read_counts(p, "k")
    >>> t.kind, t.counts.tolist(), t.rows
    ('csv', [3, 0], 2)
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"input file {path} not found")
    if histogram:
        return _read_histogram_input(path)
    if is_parquet(path):
        return _read_parquet(path, column)
    return _read_csv(path, column)


# ------------------------------------------------------------------ writing
def parquet_dtype(dtype: Any, n: int) -> Any:
    """The dtype of a privatized Parquet column holding the counts ``0 .. n - 1``.

    The input column's dtype when it can hold them: numpy or pandas' nullable
    integers (``Int64``, ...) and floats keep theirs; anything else (text,
    integers too narrow for ``n - 1``) becomes int64.

    Examples
    --------
    >>> import pandas as pd
    >>> parquet_dtype(np.dtype("int8"), 51), parquet_dtype(np.dtype("int8"), 1000)
    (dtype('int8'), <class 'numpy.int64'>)
    >>> parquet_dtype(pd.Int32Dtype(), 51)
    Int32Dtype()
    """
    pd = require("pandas")

    base = dtype.numpy_dtype if isinstance(dtype, pd.api.extensions.ExtensionDtype) and \
        hasattr(dtype, "numpy_dtype") else dtype
    if isinstance(base, np.dtype):
        if base.kind in "iu" and np.iinfo(base).max >= n - 1:
            return dtype
        if base.kind == "f":
            return dtype
    return np.int64


def write_counts(table: TableInput, result: PrivatizedCounts, dest: str | Path) -> None:
    """Write the privatized counts in the format of the input ``table``.

    A CSV table is written back with only the privatized column changed (the
    other cells as read, quoting re-done minimally, the byte-order mark and
    CRLF line ends kept); a Parquet table keeps its dtypes (the privatized
    column as :func:`parquet_dtype` says); a histogram is written as its
    header line (if it had one), then ``count,number`` for every count
    ``0 .. upper``.

    Parameters
    ----------
    table : TableInput
        What :func:`read_counts` returned.
    result : dpfix.pipeline.PrivatizedCounts
        What :func:`dpfix.pipeline.privatize_counts` returned for its counts.
    dest : str or pathlib.Path
        The file to write (usually a :meth:`StagedFiles.temp`).

    Examples
    --------
    >>> import tempfile
    >>> from dpfix.pipeline import privatize_counts
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "t.csv").write_text("name,k\\na,3\\nb,0\\n")
    >>> t = read_counts(d / "t.csv", "k")
    >>> write_counts(t, privatize_counts(t.counts, 1.0, upper=3, seed=0), d / "o.csv")
    >>> [line.split(",")[0] for line in (d / "o.csv").read_text().splitlines()]
    ['name', 'a', 'b']
    """
    dest = Path(dest)
    encoding = "utf-8-sig" if table.bom else "utf-8"
    if table.kind == "histogram":
        lines = [table.header] if table.header is not None else []
        lines += [f"{i},{m}" for i, m in enumerate(result.output_histogram)]
        dest.write_text("\n".join(lines) + "\n", encoding=encoding)
    elif table.kind == "csv":
        frame = table.frame.copy()
        frame.iloc[1:, table.col] = result.counts.astype(str)
        frame.to_csv(dest, header=False, index=False, encoding=encoding,
                     lineterminator=table.newline)
    else:
        pd = require("pandas")

        frame = table.frame.copy()
        dtype = parquet_dtype(frame[table.col].dtype, result.n)
        frame[table.col] = pd.Series(result.counts, index=frame.index).astype(dtype)
        frame.to_parquet(dest)


class StagedFiles:
    """Files written beside their destinations, moved into place together.

    :meth:`temp` creates an empty temporary file in the destination's folder
    (so that the final :func:`os.replace` is atomic); :meth:`commit` moves
    every temporary onto its destination; :meth:`discard` (also on leaving a
    ``with`` block) deletes the temporaries not committed. A failure before
    the commit therefore leaves no output at all.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> with StagedFiles() as staged:
    ...     _ = staged.temp(d / "a.txt").write_text("a")
    ...     _ = staged.temp(d / "b.txt").write_text("b")
    ...     sorted(p.name for p in d.iterdir() if not p.name.startswith("."))
    ...     staged.commit()
    []
    >>> sorted(p.name for p in d.iterdir())
    ['a.txt', 'b.txt']
    >>> with StagedFiles() as staged:
    ...     _ = staged.temp(d / "c.txt").write_text("c")
    ...     # an error here: nothing is committed
    >>> sorted(p.name for p in d.iterdir())
    ['a.txt', 'b.txt']
    """

    def __init__(self) -> None:
        self.items: list[tuple[Path, Path]] = []

    def temp(self, final: str | Path) -> Path:
        """A new empty temporary file beside ``final``, moved onto it by :meth:`commit`."""
        final = Path(final)
        tmp = final.parent / f".{final.name}.{secrets.token_hex(6)}.part"
        tmp.touch(exist_ok=False)
        self.items.append((tmp, final))
        return tmp

    def commit(self) -> None:
        """Move every temporary onto its destination (``os.replace``)."""
        for tmp, final in self.items:
            os.replace(tmp, final)
        self.items = []

    def discard(self) -> None:
        """Delete the temporaries not yet committed."""
        for tmp, _ in self.items:
            tmp.unlink(missing_ok=True)
        self.items = []

    def __enter__(self) -> StagedFiles:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()
