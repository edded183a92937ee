"""Tables of counts read from disk: CSV, Parquet and histogram files (the counts parsed by
:mod:`dpfix.io.counts`, written back by :mod:`dpfix.io.writing`).

- a table of counts (one row per category, CSV or Parquet) or a histogram file
  (one row ``count,number`` per count value ``i``, the number of categories
  ``eta_i``, with or without a header line): :func:`read_table`, :func:`read_histogram`,
  and :func:`read_counts`, which keeps what is needed to write the table back
  (:class:`TableInput`), and :class:`CsvBlocks`, a CSV table read in blocks of rows with
  the same checks and messages (a streamed release, docs/release.md section 7);
- an input is a regular file (:func:`check_input_file`), a CSV separator one character
  (:func:`check_sep`).

Inputs are strict:

- **counts are integers, parsed exactly** (:func:`dpfix.io.counts.parse_count`), a bad
  cell named by its line in a CSV file;
- **columns of other logical types are refused by name** before any value is
  read: dates, times, timestamps, durations, booleans, and (Parquet) decimals
  with a fraction (:func:`dpfix.io.counts.non_count_type`, :func:`parquet_logical_type`);
- **the header rule of a histogram file**: the first line is a header exactly
  when one of its comma-separated cells is empty or is not a number
  (``count,number``, ``,0``); a line of numbers only (``0,5``, ``0.0,5``,
  ``"0","300"``, ``0,300,``: quotes and a trailing separator do not count) is
  data and is read or refused as such, never dropped. ``header=True``/``False``
  (``dpfix privatize --header``/``--no-header``) decide instead
  (:func:`read_histogram`, :func:`histogram_line_is_data`); only a header by
  the rule is ever copied to the output.

One room for the three formats because :class:`TableInput` is what each of them reads
into, with the same checks in the same order (a bad file, the columns, the rows, the
first bad count), and :class:`CsvBlocks` repeats the CSV reader's checks block by block.
pandas (and pyarrow for Parquet) are imported only when a table is read; without
them the error names the ``production`` extra (:func:`dpfix.numbers.numeric.require`).
"""

from __future__ import annotations

import codecs
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpfix.io.counts import NUMBER_TEXT, arrow_counts, counts_of, parse_count, row_label
from dpfix.numbers.numeric import require

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

__all__ = ["read_table", "read_histogram", "MAX_HISTOGRAM_COUNT", "PARQUET_SUFFIXES",
           "is_parquet", "TableInput", "read_counts", "parquet_logical_type",
           "histogram_line_is_data", "histogram_cells", "other_columns", "check_input_file",
           "CsvBlocks", "ParquetBlocks", "BLOCK_ROWS", "check_sep"]


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


#: What a path is when it is not a regular file, by its stat mode.
_FILE_KINDS = (("S_ISFIFO", "a FIFO"), ("S_ISCHR", "a character device"),
               ("S_ISBLK", "a block device"), ("S_ISSOCK", "a socket"))


def check_input_file(path: str | Path, what: str = "input file", shown: Any = None) -> None:
    """Refuse, saying what it is, a ``path`` that is not a regular file to read.

    Parameters
    ----------
    path : str or pathlib.Path
    what : str
        How the message names the file (``input file``, ``histogram file``).
    shown : optional
        The name to show instead of ``path`` (``<stdin>``).

    Raises
    ------
    FileNotFoundError
        Nothing there (``not found``), or a symbolic link to nothing.
    IsADirectoryError
        A directory (``is a directory``).
    ValueError
        A FIFO, a device (``/dev/null``) or a socket (``is not a regular file``).

    Examples
    --------
    >>> check_input_file("/dev/null")
    Traceback (most recent call last):
    ...
    ValueError: input file /dev/null is not a regular file (a character device)
    >>> check_input_file(Path("/"), "histogram file")
    Traceback (most recent call last):
    ...
    IsADirectoryError: histogram file / is a directory
    """
    import stat

    name = path if shown is None else shown
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        dangling = " (a symbolic link to a missing file)" if os.path.islink(path) else ""
        raise FileNotFoundError(f"{what} {name} not found{dangling}") from None
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"{what} {name} is a directory")
    if not stat.S_ISREG(mode):
        kind = next((k for test, k in _FILE_KINDS if getattr(stat, test)(mode)), "")
        raise ValueError(f"{what} {name} is not a regular file{f' ({kind})' if kind else ''}")


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
        If there is no such file (a directory, a FIFO or a device is refused too:
        :func:`check_input_file`).
    ValueError
        If the CSV file is empty.

    Examples
    --------
    >>> import shutil, tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_bytes(b"\\xef\\xbb\\xbfname,k\\na,3\\n")
    >>> list(read_table(p).columns)
    ['name', 'k']
    >>> shutil.rmtree(p.parent)
    """
    pd = require("pandas")

    path = Path(path)
    check_input_file(path)
    if is_parquet(path):
        return pd.read_parquet(path)
    try:
        return pd.read_csv(path, encoding="utf-8-sig")
    except pd.errors.EmptyDataError:
        raise ValueError(f"input file {path} is empty") from None


#: The largest CSV field the line finder of a bad cell reads (the csv module's default is
#: 128 KiB; pandas has no limit).
_MAX_FIELD = 2**31 - 1


def _csv_line(path: Path, sep: str) -> Callable[[int], str]:
    """Where data row ``i`` (from 0, after the header) of a CSV file is: ``"line L"``.

    ``L`` is the file's line number (the header is line 1), found as pandas
    reads the file: blank and whitespace-only lines hold no row, a quoted cell
    may span lines (``L`` is the row's first line). Scanned only when asked.
    """
    def where(i: int) -> str:
        import csv

        limit = csv.field_size_limit()
        csv.field_size_limit(max(limit, _MAX_FIELD))  # pandas reads fields of any size
        try:
            with open(path, encoding="utf-8-sig", newline="") as f:
                reader = csv.reader(f, delimiter=sep)
                record_no, start = -1, 1  # the header is record -1
                for record in reader:
                    if len(record) > 1 or (record and record[0].strip()):
                        if record_no == i:
                            return f"line {start}"
                        record_no += 1
                    start = reader.line_num + 1
        except csv.Error:  # a file the csv module reads otherwise than pandas: by row
            pass
        finally:
            csv.field_size_limit(limit)
        return row_label(i)

    return where


# ------------------------------------------------------------------ histograms
def histogram_line_is_data(line: str) -> bool:
    """Whether a histogram file's first line may be data, by the header rule.

    The rule (``dpfix privatize --histogram``; ``--header``/``--no-header``
    override it): the first line is a header exactly when one of its cells
    (:func:`histogram_cells`: quotes and a trailing separator do not count) is
    empty or is not a number. A line of numbers only (``0,5``, ``0.0,5``,
    ``"0","300"``, ``0,300,``, even ``0.5,5``) is data, and is then read (or
    refused) as a row ``count,number``; it is never dropped because a value is
    odd or quoted.

    Examples
    --------
    >>> [histogram_line_is_data(x) for x in ("0.0,5", "count,number", ",0", "2.5,1")]
    [True, False, False, True]
    >>> [histogram_line_is_data(x) for x in ('"0","300"', "0,300,", '"count","number"')]
    [True, True, False]
    """
    cells = histogram_cells(line)
    return all(NUMBER_TEXT.fullmatch(c) or c.lower() == "nan" for c in cells)


def histogram_cells(line: str) -> list[str]:
    """The cells of a histogram file's line, as the reader sees them.

    The line is split at commas; one empty last cell (a trailing separator,
    ``0,300,``) is dropped; each cell is stripped of blanks and then of one
    pair of enclosing double quotes (``"0"`` is ``0``), as a CSV writer
    quotes. So a line reads the same, as data or as a header, whatever its
    quoting or trailing separator.

    Examples
    --------
    >>> histogram_cells(' "0" , "300",')
    ['0', '300']
    >>> histogram_cells(",0")
    ['', '0']
    """
    cells = [c.strip() for c in line.split(",")]
    if len(cells) > 1 and cells[-1] == "":
        cells = cells[:-1]
    return [c[1:-1].strip() if len(c) >= 2 and c[0] == c[-1] == '"' else c for c in cells]


def _histogram_row(line: str) -> tuple[int, int]:
    """``(count, number)`` of a ``count,number`` line, exactly
    (:func:`dpfix.io.counts.parse_count`); ValueError without the line's position (nor its
    values: a histogram is confidential)."""
    cells = histogram_cells(line)
    if len(cells) != 2:
        raise ValueError(f"expected 'count,number', got {len(cells)} cells")
    i, m = (_histogram_cell(c, what, line) for c, what in zip(cells, ("count", "number"),
                                                                 strict=True))
    return i, m


def _histogram_cell(cell: str, what: str, line: str) -> int:
    try:
        return parse_count(cell)
    except ValueError as exc:
        text = str(exc)
        if "negative" in text:
            raise ValueError(f"the {what} is not a count (negative)") from None
        if "not a number" in text or "missing" in text:
            raise ValueError(f"expected 'count,number': the {what} is "
                             f"{'missing' if 'missing' in text else 'not a number'}") from None
        raise ValueError(f"the {what} is not an integer") from None


def read_histogram(path: str | Path, with_header: bool = False,
                   header: bool | None = None) -> Any:
    """A histogram file as ``eta`` (``eta[i]`` categories with count ``i``).

    Rows ``count,number`` (the synthetic histograms), optionally after a header
    line (``binom_hist_data.csv``). Missing count values are zero; a count
    value given twice has its numbers added. Every cell is an integer parsed
    exactly (:func:`dpfix.io.counts.parse_count`: ``3`` or ``3.0``, never ``1e3``).

    **Header rule.** With ``header=None`` the first non-blank line is a header
    exactly when it cannot be data: one of its cells is empty or is not a
    number (:func:`histogram_line_is_data`; quotes around a cell and a
    trailing separator do not count, on every line: :func:`histogram_cells`).
    ``header=True`` always skips the first line, ``header=False`` always reads
    it as data. A skipped first line is returned (to be copied to the output)
    only when it is a header by the rule: a line of numbers skipped by
    ``header=True`` may be a true row of counts, so it is returned as None.

    Parameters
    ----------
    path : str or pathlib.Path
    with_header : bool
        Also return the skipped first line.
    header : bool or None
        Whether the file has a header line; None (default): by the rule above.

    Returns
    -------
    numpy.ndarray or (numpy.ndarray, str or None)
        ``eta`` as int64; with ``with_header``, ``(eta, header)``, ``header``
        the skipped first line (None if there was none).

    Raises
    ------
    FileNotFoundError
        If there is no such file (a directory, a FIFO or a device is refused too:
        :func:`check_input_file`).
    ValueError
        Naming the line: a line that is not ``count,number``, a negative entry,
        a number that is not an integer (``3`` and ``3.0`` are) or is above
        2^63 - 1, a count value above :data:`MAX_HISTOGRAM_COUNT`; or a file
        without rows.

    Examples
    --------
    >>> import shutil, tempfile
    >>> p = Path(tempfile.mkdtemp()) / "h.csv"
    >>> _ = p.write_text("count,number\\n0,3\\n2,12345678901234567\\n")
    >>> read_histogram(p, with_header=True)
    (array([               3,                0, 12345678901234567]), 'count,number')
    >>> _ = p.write_text("0.0,5\\n1,3\\n")  # numbers only: data, not a header
    >>> read_histogram(p).tolist()
    [5, 3]
    >>> shutil.rmtree(p.parent)
    """
    path = Path(path)
    check_input_file(path, "histogram file")
    pairs, head, first = [], None, True
    for lineno, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), 1):
        if not line.strip():
            continue
        if first:
            first = False
            is_data = histogram_line_is_data(line)
            if header or (header is None and not is_data):
                head = None if is_data else line  # never a row of counts into the output
                continue
        try:
            i, m = _histogram_row(line)
        except ValueError as exc:
            raise ValueError(f"{path}, line {lineno}: {exc}") from None
        if i > MAX_HISTOGRAM_COUNT:
            raise ValueError(f"{path}, line {lineno}: the count is above the largest "
                             f"readable, {MAX_HISTOGRAM_COUNT}")
        pairs.append((i, m))
    if not pairs:
        raise ValueError(f"histogram file {path} has no rows")
    totals: dict[int, int] = {}
    for i, m in pairs:  # Python ints: repeated count values cannot overflow
        totals[i] = totals.get(i, 0) + m
    big = [i for i, m in totals.items() if m > _INT64_MAX]
    if big:
        raise ValueError(f"{path}: a count's number (its lines added up) is above 2^63 - 1")
    eta = np.zeros(max(totals) + 1, dtype=np.int64)
    for i, m in totals.items():
        eta[i] = m
    return (eta, head) if with_header else eta


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
    sep : str
        CSV: the field separator (kept on output).
    privatized : list of (str, col, numpy.ndarray)
        Every column of counts read, in the order asked: its name, its ``col``
        and its counts (``counts`` and ``col`` are the first's). Empty for a
        histogram. :meth:`select` sees the table through one of them.
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
    sep: str = ","
    privatized: list = field(default_factory=list)

    @property
    def rows(self) -> int:
        """The number of rows ``N`` (exact, also beyond 2^63 for a histogram)."""
        return len(self.counts) if self.eta is None else sum(int(v) for v in self.eta)

    @property
    def columns(self) -> list[str]:
        """The names of the columns of counts read (``[]`` for a histogram)."""
        return [name for name, _, _ in self.privatized]

    def select(self, k: int) -> TableInput:
        """The table seen through its ``k``-th column of counts (``counts`` and ``col``
        are that column's; the frame is shared, not copied).

        Examples
        --------
        >>> import shutil, tempfile
        >>> p = Path(tempfile.mkdtemp()) / "t.csv"
        >>> _ = p.write_text("a,b\\n3,1\\n0,2\\n")
        >>> read_counts(p, ["a", "b"]).select(1).counts.tolist()
        [1, 2]
        >>> shutil.rmtree(p.parent)
        """
        _, col, counts = self.privatized[k]
        return replace(self, col=col, counts=counts)


#: How pandas reads a CSV table: every cell as text, as written (no NaN parsing, the
#: header as row 0), a byte-order mark tolerated.
_CSV_OPTIONS = {"header": None, "dtype": str, "keep_default_na": False, "na_filter": False,
                "encoding": "utf-8-sig"}


class _CsvErrors:
    """pandas' errors reading the CSV file ``path``, as one line naming the file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> bool:
        if exc is None:
            return False
        pd = require("pandas")
        if isinstance(exc, pd.errors.EmptyDataError):
            raise ValueError(f"input file {self.path} is empty") from None
        if isinstance(exc, UnicodeDecodeError):
            raise ValueError(f"input file {self.path} is not UTF-8 text") from None
        if isinstance(exc, pd.errors.ParserError):
            raise ValueError(f"input file {self.path}: {exc}") from None
        return False


def _positions(header: list[str], columns: list[str]) -> list[int]:
    """Each column's position in the header, every column checked before any is parsed."""
    positions = []
    for column in columns:
        where = [k for k, h in enumerate(header) if h == column]
        if not where:
            raise ValueError(f"column {column!r} not found; columns are {header}")
        if len(where) > 1:
            raise ValueError(f"column {column!r} appears {len(where)} times in the header")
        positions.append(where[0])
    return positions


def _csv_layout(path: Path) -> tuple[bool, str]:
    """``(bom, newline)``: whether the file starts with a UTF-8 byte-order mark, and its
    line end (``"\\r\\n"`` when the first line ends so), both kept on output."""
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    first = head.split(b"\n", 1)[0]
    return head.startswith(codecs.BOM_UTF8), "\r\n" if first.endswith(b"\r") else "\n"


def _read_csv(path: Path, columns: list[str], sep: str = ",") -> TableInput:
    pd = require("pandas")

    with _CsvErrors(path):
        frame = pd.read_csv(path, sep=sep, **_CSV_OPTIONS)
    header = [str(h) for h in frame.iloc[0]]
    positions = _positions(header, columns)
    if len(frame) < 2:
        raise ValueError(f"input file {path}: the table has no rows")
    where = _csv_line(path, sep)
    privatized = [(column, k, counts_of(frame.iloc[1:, k].reset_index(drop=True), column, where))
                  for column, k in zip(columns, positions, strict=True)]
    bom, newline = _csv_layout(path)
    return TableInput(path, "csv", privatized[0][2], frame, positions[0], bom=bom,
                      newline=newline, sep=sep, privatized=privatized)


#: Data rows per block of :class:`CsvBlocks` (the exact samplers' chunk of stage 2).
BLOCK_ROWS = 1 << 21
#: Rows pandas parses at a time for :class:`CsvBlocks` (its parser holds every cell of a
#: chunk as a Python string for a moment; a block is then the parsed chunks joined).
_PARSE_ROWS = 1 << 18
#: Bytes of the file pyarrow parses at a time for :class:`CsvBlocks` (its threads parse the
#: blocks in parallel; a block of rows is then the parsed pieces joined).
_ARROW_BLOCK_BYTES = 1 << 22


class _Blocks:
    """What a table read in blocks shares: the file's stamp (a streamed release checks that
    both passes read one file) and the scan that checks the blocks' counts."""

    path: Path
    columns: list[str]
    header: list[str]
    positions: list[int]
    engine: str
    watch: Callable[[int, Any], Any] | None
    opened: tuple[int, int, int, int]
    N: int

    def blocks(self) -> Any:  # pragma: no cover - each reader's own
        raise NotImplementedError

    def counts(self, body: Any, start: int, only: int | None = None) -> list[np.ndarray]:
        raise NotImplementedError  # pragma: no cover - each reader's own

    def stamp(self) -> tuple[int, int, int, int]:
        """``(device, inode, size, modification time in ns)`` of the file now: what a
        writer changes when it appends, truncates, rewrites or replaces it."""
        info = os.stat(self.path)
        return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns

    def changed(self) -> str | None:
        """What changed in the file since it was opened (its size, its modification time,
        or another file now at its path), or None."""
        try:
            now = self.stamp()
        except OSError:
            return "it is gone"
        was = self.opened
        if now[:2] != was[:2]:
            return "another file is at its path"
        if now[2] != was[2]:
            return f"its size went from {was[2]} to {now[2]} bytes"
        if now[3] != was[3]:
            return "it was written to (its modification time changed)"
        return None

    def _scan(self, add: Callable[[int, list[np.ndarray]], Any]) -> int:
        problem: Any = None  # (rank, error): the header, then no rows, then column j
        N = 0
        for start, body in self.blocks():
            if problem is None and not self.positions:
                try:
                    self.positions = _positions(self.header, self.columns)
                except ValueError as exc:
                    problem = (-2, exc)
            N = start + body.num_rows
            if problem is not None and problem[0] < 0:
                continue
            counts = []
            for j in range(len(self.columns) if problem is None else problem[0]):
                try:
                    counts.append(self.counts(body, start, j)[0])
                except ValueError as exc:
                    problem = (j, exc)
                    break
            if problem is None:
                add(start, counts)
                if self.watch is not None:
                    self.watch(start, body)
        if not self.header:  # a file of blank lines only
            if self.engine == "pyarrow":
                raise require("pyarrow").ArrowInvalid("no header")  # pandas' message
            raise ValueError(f"input file {self.path} is empty")
        if problem is None and not self.positions:
            self.positions = _positions(self.header, self.columns)
        if problem is not None and problem[0] == -2:
            raise problem[1]
        if N == 0:
            raise ValueError(f"input file {self.path}: the table has no rows")
        if problem is not None:
            raise problem[1]
        self.N = N
        return N


def _rebatched(pieces: Any, rows: int) -> Any:
    """``(start, table)`` of ``rows`` rows each (the last may be shorter) from the Tables
    ``pieces``."""
    pa = require("pyarrow")

    pending, have, start = [], 0, 0
    for piece in pieces:
        pending.append(piece)
        have += piece.num_rows
        if have < rows:
            continue
        joined = pa.concat_tables(pending)
        while joined.num_rows >= rows:
            yield start, joined.slice(0, rows).combine_chunks()
            joined, start = joined.slice(rows), start + rows
        pending, have = [joined], joined.num_rows
    if have:
        yield start, pa.concat_tables(pending).combine_chunks()


class CsvBlocks(_Blocks):
    """A CSV table of counts read in blocks of rows, in memory ``O(block)`` whatever ``N``.

    The file is read as :func:`read_counts` reads it (every cell as text, the byte-order
    mark, the separator, quoting, blank lines) and refused with the same messages:
    :meth:`scan` reads it whole once, checking what :func:`read_counts` checks in the order
    it checks it (the file's syntax, then the header's columns, then rows, then each
    column's counts, the first bad row of the first column that has one), so that the
    message is the one :func:`read_counts` gives; :meth:`blocks` reads it again, block by
    block, as pyarrow Tables of text (columns by position, ``f0``, ``f1``, ...).

    The reader is pyarrow's multithreaded CSV reader, every column read as text (no
    nulls: an empty cell is ``""``), which reads the cells pandas reads (quoted cells,
    doubled quotes, line ends inside quotes, ``\\r\\n`` and ``\\r`` line ends, blank
    lines, the byte-order mark). A file it refuses (a ragged row, a line of blanks only,
    text that is not UTF-8) is read by pandas instead, the reader of :func:`read_counts`,
    whose answer (its rows, or its message) is then the answer: :attr:`engine` says which
    read it (``"pyarrow"`` or ``"pandas"``), and both passes use the same.

    Parameters
    ----------
    path : str or pathlib.Path
    columns : str or list of str
        The columns of counts.
    sep : str
        The field separator.
    rows : int
        Data rows per block (the last block may be shorter).

    Examples
    --------
    >>> import shutil, tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text("name,k\\na,3\\nb,0\\nc,7\\n")
    >>> t = CsvBlocks(p, "k", rows=2)
    >>> t.scan(lambda start, counts: None)
    3
    >>> [(start, b.column(0).to_pylist(), t.counts(b, start)[0].tolist())
    ...  for start, b in t.blocks()]
    [(0, ['a', 'b'], [3, 0]), (2, ['c'], [7])]
    >>> shutil.rmtree(p.parent)
    """

    def __init__(self, path: str | Path, columns: str | list[str], sep: str = ",",
                 rows: int = BLOCK_ROWS) -> None:
        self.path = Path(path)
        check_input_file(self.path)
        self.columns = _column_names(columns)
        check_sep(sep)
        self.sep, self.rows = sep, int(rows)
        self.bom, self.newline = _csv_layout(self.path)
        self.header: list[str] = []
        self.positions: list[int] = []
        self.N = 0
        self._where = _csv_line(self.path, sep)
        #: Which reader reads the file (class docstring).
        self.engine = "pyarrow"
        #: ``watch(start, body)``, if set: each block :meth:`scan` reads and checks (a block
        #: at ``start`` 0 begins the file afresh).
        self.watch: Callable[[int, Any], Any] | None = None
        #: The file's :meth:`stamp` when it was opened (a streamed release checks that
        #: every pass reads this file).
        self.opened = self.stamp()

    def _chunks(self) -> Any:
        """pandas' chunks of the file (the header is row 0 of the first)."""
        pd = require("pandas")

        with _CsvErrors(self.path):
            with pd.read_csv(self.path, sep=self.sep, chunksize=min(self.rows, _PARSE_ROWS),
                             **_CSV_OPTIONS) as reader:
                yield from reader

    def _pieces(self) -> Any:
        """The file's rows as pyarrow Tables of text, columns ``f0, f1, ...`` (the header
        is row 0 of the first), by :attr:`engine`."""
        pa = require("pyarrow")

        if self.engine == "pandas":
            for chunk in self._chunks():
                yield pa.table({f"f{j}": pa.array(chunk.iloc[:, j].to_numpy(dtype=object),
                                                   pa.string())
                                for j in range(chunk.shape[1])})
            return
        pv = require("pyarrow.csv")
        parse = pv.ParseOptions(delimiter=self.sep, newlines_in_values=True)
        read = pv.ReadOptions(autogenerate_column_names=True, block_size=_ARROW_BLOCK_BYTES)
        with pv.open_csv(self.path, read_options=read, parse_options=parse) as first:
            width = len(first.schema)  # the first block's columns
        text = pv.ConvertOptions(column_types={f"f{j}": pa.string() for j in range(width)},
                                 strings_can_be_null=False)
        with pv.open_csv(self.path, read_options=read, parse_options=parse,
                         convert_options=text) as reader:
            for batch in reader:
                yield pa.Table.from_batches([batch])

    def blocks(self) -> Any:
        """``(start, body)`` for each block: ``body`` its data rows (``start`` the first's
        index from 0), a pyarrow Table of text, columns by position; every block but the
        last has exactly ``rows`` rows."""
        def data() -> Any:
            first = True
            for piece in self._pieces():
                if first:
                    if piece.num_rows == 0:
                        continue
                    self.header = [str(h) for h in piece.slice(0, 1).to_pylist()[0].values()]
                    piece, first = piece.slice(1), False
                yield piece

        yield from _rebatched(data(), self.rows)

    def counts(self, body: Any, start: int, only: int | None = None) -> list[np.ndarray]:
        """The counts of each column (or of column ``only``) in a block, exact
        (:func:`dpfix.io.counts.arrow_counts`, the rule of
        :func:`dpfix.io.counts.counts_of`; a bad cell named by its line in the file)."""
        picked = range(len(self.columns)) if only is None else [only]
        return [arrow_counts(body.column(self.positions[j]), self.columns[j],
                             lambda i, s=start: self._where(s + i)) for j in picked]

    def scan(self, add: Callable[[int, list[np.ndarray]], Any]) -> int:
        """Read the file once, checking it; ``add(start, counts)`` for each block (the counts
        of every column). Returns the number of data rows ``N``.

        A file pyarrow refuses is read again by pandas (class docstring): the blocks then
        come again from ``start`` 0, which begins the file afresh for ``add``.

        Raises
        ------
        ValueError
            With :func:`read_counts`' message: a file pandas cannot read, an unknown or
            repeated column, no rows, a bad count (the first column with one, its first
            bad row). Nothing after the first problem reaches ``add``.
        """
        pa = require("pyarrow")

        if self.engine == "pyarrow":
            try:
                return self._scan(add)
            except (pa.ArrowInvalid, UnicodeDecodeError):  # read by pandas: its answer
                self.engine, self.header, self.positions = "pandas", [], []
        return self._scan(add)


def parquet_logical_type(path: Path, column: str) -> str | None:
    """Why the Parquet column cannot hold counts, by its stored (logical) type, or None.

    Dates, times, timestamps, durations, intervals, booleans and decimals with
    a fraction (``decimal128(10, 2)``) are refused by name, before any value is
    read: pandas would turn a timestamp into nanoseconds, a boolean into 0/1.
    Integers, floats (whole values checked later), text and decimals of scale 0 pass.
    """
    pa = require("pyarrow")
    pq = require("pyarrow.parquet")

    try:
        schema = pq.read_schema(path)
    except Exception:  # pyarrow's errors name no common base; pandas reports them below
        return None
    if column not in schema.names:
        return None
    t = schema.field(column).type
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_boolean(t):
        return f"booleans (Parquet type {t})"
    if pa.types.is_temporal(t) or pa.types.is_interval(t):
        return f"dates, times or durations (Parquet type {t})"
    if pa.types.is_decimal(t) and t.scale > 0:
        return f"decimals with a fraction (Parquet type {t})"
    return None


def _read_parquet(path: Path, columns: list[str]) -> TableInput:
    require("pandas")
    try:  # the file's columns as stored: an index is a column, pandas' metadata is ignored
        frame = require("pyarrow.parquet").read_table(path).to_pandas(ignore_metadata=True)
    except ImportError:
        raise ValueError("reading Parquet needs pyarrow, which comes with the production "
                         "extra: pip install 'dpfix[production]'") from None
    except Exception as exc:  # pyarrow's errors name no common base
        raise ValueError(f"input file {path} is not a readable Parquet file: {exc}") from None
    for column in columns:  # every column checked before any is parsed
        if column not in frame.columns:
            raise ValueError(f"column {column!r} not found; columns are {list(frame.columns)}")
        kind = parquet_logical_type(path, column)
        if kind is not None:
            raise ValueError(f"column {column!r} holds {kind}, not counts")
    if len(frame) == 0:
        raise ValueError(f"input file {path}: the table has no rows")
    privatized = [(column, column, counts_of(frame[column], column)) for column in columns]
    return TableInput(path, "parquet", privatized[0][2], frame, columns[0],
                      privatized=privatized)


class ParquetBlocks(_Blocks):
    """A Parquet table of counts read in blocks of rows, in memory ``O(block)`` whatever
    ``N``: :class:`CsvBlocks`' interface for a Parquet file.

    :meth:`scan` checks what :func:`read_counts` checks of a Parquet file, in its order and
    with its messages (a file pyarrow cannot read, then each column: present, of a type
    that holds counts (:func:`parquet_logical_type`), then no rows, then each column's
    counts, the first bad row of the first column that has one). :meth:`blocks` reads the
    columns :attr:`wanted` only (by default the columns of counts; pyarrow's
    ``ParquetFile.iter_batches``), as pyarrow Tables with their stored types, columns named
    by their position in the file (``f0``, ``f1``, ...); every block but the last has
    exactly ``rows`` rows.

    Examples
    --------
    >>> import shutil, tempfile, pyarrow as pa, pyarrow.parquet as pq
    >>> p = Path(tempfile.mkdtemp()) / "t.parquet"
    >>> pq.write_table(pa.table({"name": ["a", "b", "c"], "k": [3, 0, 7]}), p)
    >>> t = ParquetBlocks(p, "k", rows=2)
    >>> t.scan(lambda start, counts: None)
    3
    >>> [(start, t.counts(b, start)[0].tolist()) for start, b in t.blocks()]
    [(0, [3, 0]), (2, [7])]
    >>> shutil.rmtree(p.parent)
    """

    def __init__(self, path: str | Path, columns: str | list[str],
                 rows: int = BLOCK_ROWS) -> None:
        self.path = Path(path)
        check_input_file(self.path)
        self.columns = _column_names(columns)
        self.rows = int(rows)
        #: The layout a CSV output of a Parquet table is written with (pandas' defaults).
        self.bom, self.newline, self.sep = False, "\n", ","
        self.engine = "parquet"
        self.watch = None
        self.N = 0
        self.opened = self.stamp()
        self.file = self._open()
        #: The file's columns and their stored types.
        self.schema = self.file.schema_arrow
        self.header = [str(h) for h in self.schema.names]
        self.positions = []
        #: The columns :meth:`blocks` reads (None: the columns of counts).
        self.wanted: list[str] | None = None

    def _open(self) -> Any:
        try:
            pq = require("pyarrow.parquet")
        except ImportError:
            raise ValueError("reading Parquet needs pyarrow, which comes with the production "
                             "extra: pip install 'dpfix[production]'") from None
        try:
            # no pre-buffering: it reads ahead whole column chunks, a memory that grows with
            # the file
            return pq.ParquetFile(self.path, pre_buffer=False)
        except Exception as exc:  # pyarrow's errors name no common base
            raise ValueError(f"input file {self.path} is not a readable Parquet file: "
                             f"{exc}") from None

    def blocks(self) -> Any:
        """``(start, body)`` for each block of the :attr:`wanted` columns (class docstring)."""
        pa = require("pyarrow")

        names = self.wanted if self.wanted is not None else self.columns
        where = {h: k for k, h in enumerate(self.header)}
        file = self._open()  # afresh: a pass reads the file as it is now

        def pieces() -> Any:
            for batch in file.iter_batches(batch_size=self.rows, columns=names):
                t = pa.Table.from_batches([batch]).select(names)
                yield t.rename_columns([f"f{where[n]}" for n in names])

        yield from _rebatched(pieces(), self.rows)

    def counts(self, body: Any, start: int, only: int | None = None) -> list[np.ndarray]:
        """The counts of each column (or of column ``only``) in a block, exactly as
        :func:`read_counts` reads them (:func:`dpfix.io.counts.arrow_counts`; a bad cell named
        by its row in the file)."""
        picked = range(len(self.columns)) if only is None else [only]
        return [arrow_counts(body.column(f"f{self.positions[j]}"), self.columns[j],
                             lambda i, s=start: row_label(s + i)) for j in picked]

    def scan(self, add: Callable[[int, list[np.ndarray]], Any]) -> int:
        """Read the columns of counts once, checking them; ``add(start, counts)`` for each
        block. Returns the number of rows ``N``.

        Raises
        ------
        ValueError
            With :func:`read_counts`' message (class docstring).
        """
        for column in self.columns:  # every column checked before any is parsed
            if column not in self.header:
                raise ValueError(f"column {column!r} not found; columns are {self.header}")
            kind = parquet_logical_type(self.path, column)
            if kind is not None:
                raise ValueError(f"column {column!r} holds {kind}, not counts")
        self.positions = _positions(self.header, self.columns)
        if self.file.metadata.num_rows == 0:
            raise ValueError(f"input file {self.path}: the table has no rows")
        return self._scan(add)

    def null_counts(self, names: list[str]) -> dict[str, int]:
        """Each column's number of missing cells in the whole file: from the row groups'
        statistics, or (a row group without them) by reading the column."""
        meta = self.file.metadata
        leaf = {meta.schema.column(j).path: j for j in range(meta.num_columns)}
        out = {}
        for name in names:
            j = leaf.get(name)
            stats = [None if j is None else meta.row_group(g).column(j).statistics
                     for g in range(meta.num_row_groups)]
            if all(s is not None and s.has_null_count for s in stats):
                out[name] = sum(int(s.null_count) for s in stats)
                continue
            out[name] = sum(batch.column(0).null_count for batch in
                            self._open().iter_batches(batch_size=self.rows, columns=[name]))
        return out


def _read_histogram_input(path: Path, header: bool | None) -> TableInput:
    eta, header = read_histogram(path, with_header=True, header=header)
    if eta.sum() == 0:
        raise ValueError(f"histogram file {path} has no rows (every number is 0)")
    with open(path, "rb") as f:
        bom = f.read(3) == codecs.BOM_UTF8
    return TableInput(path, "histogram", None, eta=eta, header=header, bom=bom)


def read_counts(path: str | Path, column: str | list[str] | None, histogram: bool = False,
                header: bool | None = None, sep: str = ",") -> TableInput:
    """Read the counts of ``column`` (or of several columns) of a CSV/Parquet table, or of
    a histogram file.

    A CSV file is read as text (every cell a string, no NaN parsing), so that
    :func:`dpfix.io.writing.write_counts` writes the other cells back byte for byte; a Parquet
    file is read with its dtypes.

    Parameters
    ----------
    path : str or pathlib.Path
        The table (Parquet by its suffix, :func:`is_parquet`; else CSV with a
        header line), or with ``histogram`` a histogram file.
    column : str, list of str or None
        The column of non-negative integer counts, or a list of such columns
        (``dpfix privatize --column A --column B``; each named once, every one
        checked before any is parsed; ``counts`` is the first's, all are in
        :attr:`TableInput.privatized`). Ignored for a histogram.
    histogram : bool
        ``path`` is a histogram file (:func:`read_histogram`).
    header : bool or None
        A histogram file's header line: present, absent, or (None) by the
        header rule of :func:`read_histogram`.
    sep : str
        A CSV table's field separator (one character; ``","`` by default).

    Returns
    -------
    TableInput

    Raises
    ------
    FileNotFoundError
        If there is no such file (a directory, a FIFO or a device is refused too:
        :func:`check_input_file`).
    ValueError
        For an empty, unreadable or ragged file, an unknown or repeated
        column, a table without rows, or a bad count (naming its row).

    Examples
    --------
    >>> import shutil, tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text("name,k\\na,3\\nb,0\\n")
    >>> t = read_counts(p, "k")
    >>> t.kind, t.counts.tolist(), t.rows
    ('csv', [3, 0], 2)
    >>> shutil.rmtree(p.parent)
    """
    path = Path(path)
    check_input_file(path)
    if histogram:
        return _read_histogram_input(path, header)
    columns = _column_names(column)
    if is_parquet(path):
        return _read_parquet(path, columns)
    check_sep(sep)
    return _read_csv(path, columns, sep)


def _column_names(column: str | list[str] | None) -> list[str]:
    """The columns of counts asked for, each named once."""
    columns = [column] if isinstance(column, str) else list(column or [])
    if not columns:
        raise ValueError("column: name the column of counts")
    twice = sorted({c for c in columns if columns.count(c) > 1})
    if twice:
        raise ValueError(f"column {twice[0]!r} named twice")
    return columns


def check_sep(sep: str) -> None:
    """Refuse a CSV separator that is not one character, or is a quote or a line end.

    Examples
    --------
    >>> check_sep(";")
    >>> check_sep("ab")
    Traceback (most recent call last):
    ...
    ValueError: sep: one character other than a quote or a line end, got 'ab'
    """
    if len(sep) != 1 or sep in "\r\n\"":
        raise ValueError(f"sep: one character other than a quote or a line end, got {sep!r}")


# ------------------------------------------------------------------ writing
def other_columns(table: TableInput) -> list[str]:
    """The names of the table's columns other than the privatized ones (header order).

    Examples
    --------
    >>> import shutil, tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "t.csv").write_text("name,k,x\\na,3,1\\n")
    >>> other_columns(read_counts(d / "t.csv", "k"))
    ['name', 'x']
    >>> shutil.rmtree(d)
    """
    if table.kind == "histogram":
        return []
    cols = {col for _, col, _ in table.privatized} or {table.col}
    if table.kind == "csv":
        return [str(h) for k, h in enumerate(table.frame.iloc[0]) if k not in cols]
    return [str(c) for c in table.frame.columns if c not in cols]


