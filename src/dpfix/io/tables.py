"""Tables of counts on disk: reading CSV, Parquet and histogram files, writing them back.

One module for every file the toolkit reads or writes for the two-stage
pipeline (paper Section 1.2; ``docs/math_notes.md``):

- a table of counts (one row per category, CSV or Parquet) or a histogram file
  (one row ``count,number`` per count value ``i``, the number of categories
  ``eta_i``, with or without a header line): :func:`read_table`,
  :func:`counts_from_column`, :func:`read_histogram`, and :func:`read_counts`,
  which keeps what is needed to write the table back (:class:`TableInput`), and
  :class:`CsvBlocks`, a CSV table read in blocks of rows with the same checks and
  messages (a streamed release, docs/release.md section 7);
- the privatized table written in the input's format (:func:`write_counts`):
  a CSV is rewritten cell for cell except the privatized column, a Parquet
  file keeps the dtypes of its other columns (the privatized ones are int64)
  but none of the input's metadata (no index, no ``attrs``, no schema
  metadata: :func:`write_parquet`); its rows in the order the caller gives
  (a release's order: :mod:`dpfix.release.order`);
- the outputs are written through the staged atomic commit of
  :mod:`dpfix.io.commit`.

Inputs are strict:

- **counts are integers, parsed exactly** (:func:`parse_count`): a text cell
  is digits, optionally followed by a decimal point and zeros only (``3``,
  ``3.0``); ``3.0000000000000001``, ``1e3``, ``1e-400``, ``0x10`` are refused
  with their row, never rounded through a float. Numeric columns must hold
  whole non-negative values without missing ones;
- **columns of other logical types are refused by name** before any value is
  read: dates, times, timestamps, durations, booleans, and (Parquet) decimals
  with a fraction (:func:`non_count_type`, :func:`parquet_logical_type`);
- **the header rule of a histogram file**: the first line is a header exactly
  when one of its comma-separated cells is empty or is not a number
  (``count,number``, ``,0``); a line of numbers only (``0,5``, ``0.0,5``,
  ``"0","300"``, ``0,300,``: quotes and a trailing separator do not count) is
  data and is read or refused as such, never dropped. ``header=True``/``False``
  (``dpfix privatize --header``/``--no-header``) decide instead
  (:func:`read_histogram`, :func:`histogram_line_is_data`); only a header by
  the rule is ever copied to the output.

pandas (and pyarrow for Parquet) are imported only when a table is read; without
them the error names the ``production`` extra (:func:`dpfix.numbers.numeric.require`).
"""

from __future__ import annotations

import codecs
import decimal
import fractions
import math
import os
import re
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpfix.numbers.numeric import require

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

__all__ = ["read_table", "counts_from_column", "read_histogram", "MAX_HISTOGRAM_COUNT",
           "PARQUET_SUFFIXES", "is_parquet",
           "TableInput", "counts_of", "read_counts", "write_counts", "parse_count",
           "non_count_type", "parquet_logical_type", "histogram_line_is_data", "histogram_cells",
           "other_columns", "write_parquet", "check_input_file", "FORMULA_STARTS",
           "FormulaWarning", "formula_cells", "escape_formula_cells", "guard_formulas",
           "warn_formulas", "CsvBlocks", "BLOCK_ROWS", "check_sep"]


#: File name suffixes read and written as Parquet (anything else is CSV text).
PARQUET_SUFFIXES = (".parquet", ".pq")
#: Largest count value a histogram file may name (eta is a dense array: 80 MB).
MAX_HISTOGRAM_COUNT = 10**7
_INT64_MAX = int(np.iinfo(np.int64).max)
#: Counts above this are clipped to it when read (the pipeline top-codes them anyway).
_CLIP = 2**62
#: A count written as text: digits, optionally a decimal point followed by zeros only.
_INTEGER_TEXT = re.compile(r"([+-]?[0-9]+)(?:\.0*)?")
#: Text that is a number, but not necessarily an integer (``2.5``, ``1e3``, ``inf``).
_NUMBER_TEXT = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                          r"|inf|infinity)", re.IGNORECASE)


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
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_bytes(b"\\xef\\xbb\\xbfname,k\\na,3\\n")
    >>> list(read_table(p).columns)
    ['name', 'k']
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


def _count_error(v: Any) -> str | None:
    """Why the cell ``v`` is not a count (None if it is one): :func:`parse_count`'s rule."""
    try:
        parse_count(v)
    except ValueError as exc:
        return str(exc)
    return None


def parse_count(v: Any) -> int:
    """One count, parsed exactly: a non-negative integer, never rounded through a float.

    Text is an integer written in digits (surrounding blanks allowed), optionally
    followed by a decimal point and zeros only (``3``, ``3.0``, ``3.000``);
    ``3.0000000000000001``, ``1e3``, ``1e-400``, ``0x10`` and ``1_000`` are
    refused. Numbers: Python and numpy integers, floats, ``Decimal`` and
    ``Fraction`` values whose value is an integer. Booleans are refused.

    Parameters
    ----------
    v : str, int, float, decimal.Decimal, fractions.Fraction or a numpy scalar

    Returns
    -------
    int
        The count (a Python int, exact at any size).

    Raises
    ------
    ValueError
        ``missing value (NaN)``, ``not an integer count``, ``not a number``, ``not a
        count (negative)`` or ``a boolean, not a count``: the reason, never the value
        (a cell of a column of counts is confidential, and messages reach logs).

    Examples
    --------
    >>> parse_count(" 12 "), parse_count("7.000"), parse_count(9007199254740993)
    (12, 7, 9007199254740993)
    >>> parse_count("3.0000000000000001")
    Traceback (most recent call last):
    ...
    ValueError: not an integer count
    """
    if v is None or type(v).__name__ in ("NAType", "NaTType"):  # pandas' missing values
        raise ValueError("missing value (NaN)")
    if isinstance(v, (bool, np.bool_)):
        raise ValueError("a boolean, not a count")
    if isinstance(v, (int, np.integer)):
        value = int(v)
    elif isinstance(v, str):
        text = v.strip()
        match = _INTEGER_TEXT.fullmatch(text)
        if match is None:
            if text == "" or text.lower() in ("nan", "-nan", "+nan"):
                raise ValueError("missing value (NaN)")
            if _NUMBER_TEXT.fullmatch(text):
                raise ValueError("not an integer count")
            raise ValueError("not a number")
        value = int(match.group(1))
    elif isinstance(v, (float, np.floating, decimal.Decimal, fractions.Fraction)):
        if isinstance(v, (float, np.floating, decimal.Decimal)) and v != v:
            raise ValueError("missing value (NaN)")
        if isinstance(v, (float, np.floating)) and not math.isfinite(v):
            raise ValueError("not an integer count")
        if isinstance(v, decimal.Decimal) and not v.is_finite():
            raise ValueError("not an integer count")
        exact = fractions.Fraction(v) if not isinstance(v, fractions.Fraction) else v
        if exact.denominator != 1:
            raise ValueError("not an integer count")
        value = int(exact)
    else:
        raise ValueError(f"not a number (a {type(v).__name__})")
    if value < 0:
        raise ValueError("not a count (negative)")
    return value


def counts_from_column(table: Any, column: str) -> np.ndarray:
    """The integer counts of one column of a table, checked row by row (:func:`parse_count`).

    Parameters
    ----------
    table : pandas.DataFrame
    column : str
        The column of counts.

    Returns
    -------
    numpy.ndarray
        The counts as int64 (counts above 2^62 are clipped to 2^62: any such count
        is top-coded by the pipeline anyway).

    Raises
    ------
    ValueError
        Naming the first bad row: a missing (NaN), non-numeric, non-integer or
        negative value; a column of a type that holds no counts (dates, times,
        durations, booleans: :func:`non_count_type`); an unknown column, or a
        table without rows.

    Examples
    --------
    >>> import pandas as pd
    >>> counts_from_column(pd.DataFrame({"k": [3, 0, 2.0]}), "k").tolist()
    [3, 0, 2]
    >>> counts_from_column(pd.DataFrame({"k": [3, -1]}), "k")
    Traceback (most recent call last):
    ...
    ValueError: column 'k', row 2: not a count (negative)
    """
    if column not in table.columns:
        raise ValueError(f"column {column!r} not found; columns are {list(table.columns)}")
    if len(table) == 0:
        raise ValueError("the table has no rows")
    return counts_of(table[column], column)


def _row(i: int) -> str:
    """Where the ``i``-th value (from 0) of a column is: ``"row i+1"``, counted from 1."""
    return f"row {i + 1}"


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
        return _row(i)

    return where


def _counts_by_row(values: Any, column: str, where: Callable[[int], str] = _row) -> np.ndarray:
    """:func:`parse_count` row by row: exact, and names the first bad row (``where``)."""
    values = np.asarray(values.to_numpy(), dtype=object)
    out = np.empty(len(values), dtype=np.int64)
    for i, v in enumerate(values):
        try:
            out[i] = min(parse_count(v), _CLIP)
        except ValueError as exc:
            raise ValueError(f"column {column!r}, {where(i)}: {exc}") from None
    return out


def non_count_type(dtype: Any) -> str | None:
    """What a column of ``dtype`` holds when it cannot hold counts, else None.

    Dates and times (``datetime64``, with a time zone, periods), durations
    (``timedelta64``), intervals, booleans (``bool``, ``boolean``) and complex
    numbers are no counts even though numpy can turn them into integers
    (nanoseconds, 0/1, the real part).

    Examples
    --------
    >>> import pandas as pd
    >>> non_count_type(np.dtype("datetime64[ns]")), non_count_type(np.dtype("int8"))
    ('datetime values (datetime64[ns])', None)
    >>> non_count_type(pd.BooleanDtype())
    'booleans (boolean)'
    """
    pd = require("pandas")

    name = str(dtype)
    if pd.api.types.is_bool_dtype(dtype):
        return f"booleans ({name})"
    if pd.api.types.is_complex_dtype(dtype):
        return f"complex numbers ({name})"
    if isinstance(dtype, pd.PeriodDtype) or pd.api.types.is_datetime64_any_dtype(dtype):
        return f"datetime values ({name})"
    if pd.api.types.is_timedelta64_dtype(dtype):
        return f"timedelta values ({name})"
    if isinstance(dtype, (pd.IntervalDtype, pd.CategoricalDtype)):
        return f"{'intervals' if isinstance(dtype, pd.IntervalDtype) else 'categories'} ({name})"
    return None


def _text_counts(text: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised :func:`parse_count` of plain ASCII cells ``123`` or ``123.000``:
    ``(values, ok)``; the rows not ``ok`` (blanks, signs, long numbers, anything else)
    are left to :func:`parse_count`."""
    out = np.zeros(len(text), dtype=np.int64)
    ok = np.zeros(len(text), dtype=bool)
    try:
        b = text.astype("S")
    except (UnicodeEncodeError, ValueError, TypeError):
        return out, ok
    w = b.dtype.itemsize
    if w == 0:
        return out, ok
    step = max(1, (1 << 24) // w)  # about 16 MB of characters at a time
    cols = np.arange(w)
    for lo in range(0, len(b), step):
        M = b[lo:lo + step].view(np.uint8).reshape(-1, w)
        digit = (M >= 48) & (M <= 57)
        nul = M == 0
        nondigit = ~digit
        intlen = np.where(nondigit.any(axis=1), nondigit.argmax(axis=1), w)
        rows = np.arange(len(M))
        nxt = np.where(intlen < w, M[rows, np.minimum(intlen, w - 1)], 0)
        tail = (cols[None, :] > intlen[:, None]) & ~nul
        good = (intlen >= 1) & (intlen <= 18) & ((nxt == 0) | (nxt == 46))
        good &= ~(tail & (M != 48)).any(axis=1)  # after the point: zeros only
        good &= ~(nul[:, :-1] & ~nul[:, 1:]).any(axis=1)  # padding only at the end
        v = np.zeros(len(M), dtype=np.int64)
        for j in range(min(w, 18)):
            v = np.where(j < intlen, v * 10 + (M[:, j].astype(np.int64) - 48), v)
        out[lo:lo + len(M)] = np.where(good, v, 0)
        ok[lo:lo + len(M)] = good
    if "\x00" in "".join(text):  # numpy's bytes drop trailing NULs: "4\x00" would read as 4
        ok[[i for i, c in enumerate(text) if "\x00" in c]] = False
    return out, ok


def counts_of(values: Any, column: str, where: Callable[[int], str] = _row) -> np.ndarray:
    """Integer counts of a pandas Series, exact and vectorised (millions of rows in a second).

    Text cells follow :func:`parse_count` (``3`` and ``3.0`` are counts;
    ``3.0000000000000001`` and ``1e-400`` are not: text is never parsed through a
    float); an empty or blank cell is a missing value. Numeric columns must hold
    whole non-negative numbers without missing values. Counts above 2^62 are
    clipped to 2^62 (any such count is top-coded by the pipeline anyway).

    Parameters
    ----------
    values : pandas.Series
        The column, as numbers or as text.
    column : str
        Its name, for the error message.
    where : callable, optional
        Names the place of the ``i``-th value (from 0) in the error message:
        ``"row i+1"`` by default; a CSV file's reader gives its line number.

    Returns
    -------
    numpy.ndarray
        The counts as int64.

    Raises
    ------
    ValueError
        For a column of dates, times, durations or booleans (named:
        :func:`non_count_type`), or naming the first bad row (as
        :func:`counts_from_column` does).

    Examples
    --------
    >>> import pandas as pd
    >>> counts_of(pd.Series(["3", " 0", "12.00"]), "k").tolist()
    [3, 0, 12]
    >>> counts_of(pd.Series(["3", ""]), "k")
    Traceback (most recent call last):
    ...
    ValueError: column 'k', row 2: missing value (NaN)
    >>> counts_of(pd.Series(["1", "1e-400"]), "k")
    Traceback (most recent call last):
    ...
    ValueError: column 'k', row 2: not an integer count
    """
    pd = require("pandas")

    kind = non_count_type(values.dtype)
    if kind is not None:
        raise ValueError(f"column {column!r} holds {kind}, not counts")
    values = values.reset_index(drop=True)
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)

    def by_row() -> np.ndarray:  # exact, names the first bad row
        return _counts_by_row(values, column, where)

    if pd.api.types.is_numeric_dtype(values.dtype):
        if values.isna().any():
            return by_row()
        if pd.api.types.is_integer_dtype(values.dtype):
            a = values.to_numpy(dtype=values.dtype.numpy_dtype
                                if hasattr(values.dtype, "numpy_dtype") else None)
            if a.dtype.kind == "i":
                if (a < 0).any():
                    return by_row()
                return np.minimum(a.astype(np.int64), _CLIP)
            return np.minimum(a.astype(np.uint64), np.uint64(_CLIP)).astype(np.int64)
        a = values.to_numpy(dtype=float)
        if not (np.isfinite(a).all() and (a >= 0).all() and (a == np.floor(a)).all()):
            return by_row()
        return np.minimum(a, float(_CLIP)).astype(np.int64)
    text = values.dtype != object and pd.api.types.is_string_dtype(values.dtype)
    if text and values.isna().any():  # a text column's missing cells: named by by_row
        return by_row()
    cells = values.to_numpy(dtype=object)
    if not text and not all(type(c) is str for c in cells):  # mixed (Decimal, int, ...)
        return by_row()
    out, ok = _text_counts(cells)
    for i in np.flatnonzero(~ok):  # blanks, signs, long numbers: one by one, exactly
        try:
            out[i] = min(parse_count(cells[i]), _CLIP)
        except ValueError as exc:
            raise ValueError(f"column {column!r}, {where(i)}: {exc}") from None
    return out


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
    return all(_NUMBER_TEXT.fullmatch(c) or c.lower() == "nan" for c in cells)


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
    """``(count, number)`` of a ``count,number`` line, exactly (:func:`parse_count`);
    ValueError without the line's position (nor its values: a histogram is confidential)."""
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
    exactly (:func:`parse_count`: ``3`` or ``3.0``, never ``1e3``).

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
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "h.csv"
    >>> _ = p.write_text("count,number\\n0,3\\n2,12345678901234567\\n")
    >>> read_histogram(p, with_header=True)
    (array([               3,                0, 12345678901234567]), 'count,number')
    >>> _ = p.write_text("0.0,5\\n1,3\\n")  # numbers only: data, not a header
    >>> read_histogram(p).tolist()
    [5, 3]
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
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "t.csv"
        >>> _ = p.write_text("a,b\\n3,1\\n0,2\\n")
        >>> read_counts(p, ["a", "b"]).select(1).counts.tolist()
        [1, 2]
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


class CsvBlocks:
    """A CSV table of counts read in blocks of rows, in memory ``O(block)`` whatever ``N``.

    The file is read as :func:`read_counts` reads it (the same pandas options: every cell
    as text, the byte-order mark, the separator, quoting, blank lines) and refused with
    the same messages: :meth:`scan` reads it whole once, checking what
    :func:`read_counts` checks in the order it checks it (the file's syntax, then the
    header's columns, then rows, then each column's counts, the first bad row of the
    first column that has one), so that the message is the one :func:`read_counts`
    gives; :meth:`blocks` reads it again, block by block.

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
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text("name,k\\na,3\\nb,0\\nc,7\\n")
    >>> t = CsvBlocks(p, "k", rows=2)
    >>> t.scan(lambda start, counts: None)
    3
    >>> [(start, b.iloc[:, 0].tolist(), t.counts(b, start)[0].tolist()) for start, b in t.blocks()]
    [(0, ['a', 'b'], [3, 0]), (2, ['c'], [7])]
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
        #: The file's :meth:`stamp` when it was opened (a streamed release checks that
        #: every pass reads this file).
        self.opened = self.stamp()

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

    def _chunks(self) -> Any:
        """pandas' chunks of the file (the header is row 0 of the first)."""
        pd = require("pandas")

        with _CsvErrors(self.path):
            with pd.read_csv(self.path, sep=self.sep, chunksize=min(self.rows, _PARSE_ROWS),
                             **_CSV_OPTIONS) as reader:
                yield from reader

    def blocks(self) -> Any:
        """``(start, body)`` for each block: ``body`` its data rows (``start`` the first's
        index from 0), columns by position, a fresh index; every block but the last has
        exactly ``rows`` rows."""
        pd = require("pandas")

        pieces, have, start, first = [], 0, 0, True
        for chunk in self._chunks():
            if first:
                self.header = [str(h) for h in chunk.iloc[0]]
                chunk, first = chunk.iloc[1:], False
            pieces.append(chunk)
            have += len(chunk)
            if have < self.rows:
                continue
            joined = pd.concat(pieces)
            while len(joined) >= self.rows:
                yield start, joined.iloc[:self.rows].reset_index(drop=True)
                joined, start = joined.iloc[self.rows:], start + self.rows
            pieces, have = [joined], len(joined)
        if have:
            yield start, pd.concat(pieces).reset_index(drop=True)

    def counts(self, body: Any, start: int, only: int | None = None) -> list[np.ndarray]:
        """The counts of each column (or of column ``only``) in a block, exact
        (:func:`counts_of`; a bad cell named by its line in the file)."""
        picked = range(len(self.columns)) if only is None else [only]
        return [counts_of(body.iloc[:, self.positions[j]], self.columns[j],
                          lambda i, s=start: self._where(s + i)) for j in picked]

    def scan(self, add: Callable[[int, list[np.ndarray]], Any]) -> int:
        """Read the file once, checking it; ``add(start, counts)`` for each block (the counts
        of every column). Returns the number of data rows ``N``.

        Raises
        ------
        ValueError
            With :func:`read_counts`' message: a file pandas cannot read, an unknown or
            repeated column, no rows, a bad count (the first column with one, its first
            bad row). Nothing after the first problem reaches ``add``.
        """
        problem: Any = None  # (rank, error): the header, then no rows, then column j
        N = 0
        for start, body in self.blocks():
            if problem is None and not self.positions:
                try:
                    self.positions = _positions(self.header, self.columns)
                except ValueError as exc:
                    problem = (-2, exc)
            N = start + len(body)
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
        if not self.header:  # pandas read a file of blank lines only as empty
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
    :func:`write_counts` writes the other cells back byte for byte; a Parquet
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
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text("name,k\\na,3\\nb,0\\n")
    >>> t = read_counts(p, "k")
    >>> t.kind, t.counts.tolist(), t.rows
    ('csv', [3, 0], 2)
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
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "t.csv").write_text("name,k,x\\na,3,1\\n")
    >>> other_columns(read_counts(d / "t.csv", "k"))
    ['name', 'x']
    """
    if table.kind == "histogram":
        return []
    cols = {col for _, col, _ in table.privatized} or {table.col}
    if table.kind == "csv":
        return [str(h) for k, h in enumerate(table.frame.iloc[0]) if k not in cols]
    return [str(c) for c in table.frame.columns if c not in cols]


def _results_by_column(table: TableInput, result: Any) -> list[tuple[Any, Any]]:
    """``[(col, result)]``: one PrivatizedCounts per column of counts read."""
    privatized = table.privatized or [(None, table.col, table.counts)]
    results = list(result) if isinstance(result, (list, tuple)) else [result]
    if len(results) != len(privatized):
        raise ValueError(f"write_counts: {len(results)} result(s) for {len(privatized)} "
                         "column(s) of counts")
    return [(col, r) for (_, col, _), r in zip(privatized, results, strict=True)]


def write_parquet(frame: Any, dest: str | Path) -> None:
    """Write ``frame``'s columns to a Parquet file and nothing else.

    No index (a pandas index, or a filtered frame's ``__index_level_0__``,
    would carry the input's row labels), no ``attrs`` and no schema metadata
    (pandas' metadata of the input, a writer's key-value metadata): the
    file's schema holds the column names and types only.

    Examples
    --------
    >>> import tempfile, pandas as pd, pyarrow.parquet as pq
    >>> f = pd.DataFrame({"k": [1, 2]}, index=["a", "b"])
    >>> f.attrs["note"] = "secret"
    >>> p = Path(tempfile.mkdtemp()) / "o.parquet"
    >>> write_parquet(f, p)
    >>> pq.read_schema(p).names, pq.read_schema(p).metadata
    (['k'], None)
    """
    pa = require("pyarrow")
    pq = require("pyarrow.parquet")

    t = pa.Table.from_pandas(frame, preserve_index=False)
    pq.write_table(t.replace_schema_metadata(None), dest)


#: First characters that make a spreadsheet read a cell as a formula (OWASP, "CSV
#: injection"): ``=HYPERLINK(..)``, ``+1+1``, ``-2+3``, ``@SUM(A1)``, a tab, a carriage return.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


class FormulaWarning(UserWarning):
    """Cells of a CSV output that a spreadsheet may run as formulas (:func:`formula_cells`)."""


def formula_cells(values: Any) -> np.ndarray:
    """Which cells a spreadsheet may read as a formula: text starting with one of
    :data:`FORMULA_STARTS` that is not a plain number (``-3`` and ``+1.5`` are numbers to a
    spreadsheet too, and are left alone).

    Examples
    --------
    >>> formula_cells(["=HYPERLINK(1)", "+1+1", "@SUM(A1)", "-3", "a", "\\tx", 7]).tolist()
    [True, True, True, False, False, True, False]
    >>> formula_cells([-1, 7]).tolist()  # numbers only
    [False, False]
    """
    pd = require("pandas")

    text = isinstance(values, pd.Series) and pd.api.types.is_string_dtype(values.dtype) \
        and values.dtype != object  # a column of text only: its own vectorised .str
    cells = values.reset_index(drop=True) if text else pd.Series(list(values), dtype=object)
    try:
        bad = np.array(cells.str[:1].isin(FORMULA_STARTS), dtype=bool)  # not text: NaN, False
    except AttributeError:  # no text at all (integers, dates): no formula
        return np.zeros(len(cells), dtype=bool)
    for i in np.flatnonzero(bad):  # the few candidates: a plain number is no formula
        bad[i] = _NUMBER_TEXT.fullmatch(cells.iloc[i]) is None
    return bad


def escape_formula_cells(values: Any) -> list:
    """The cells with each :func:`formula_cells` one prefixed by a single quote, which a
    spreadsheet shows as text (``'=HYPERLINK(..)``); the others unchanged.

    Examples
    --------
    >>> escape_formula_cells(["=1+1", "-3", "name"])
    ["'=1+1", '-3', 'name']
    """
    cells = list(values)
    return [f"'{c}" if bad else c for c, bad in zip(cells, formula_cells(cells), strict=True)]


def guard_formulas(frame: Any, columns: list, names: list[str], escape: bool,
                   tally: dict | None = None) -> None:
    """Escape (``escape``) the formula cells of ``frame[columns]`` in place, or warn once per
    column that has some, naming it and their number.

    ``tally``: a table written in pieces adds each column's number of formula cells to
    ``tally[name]`` instead of warning, and warns once at the end (:func:`warn_formulas`).
    """
    for col, name in zip(columns, names, strict=True):
        bad = formula_cells(frame[col])
        if not bad.any():
            continue
        if escape:
            frame[col] = escape_formula_cells(frame[col])
        elif tally is not None:
            tally[name] = tally.get(name, 0) + int(bad.sum())
        else:
            warn_formulas({name: int(bad.sum())}, stacklevel=4)


def warn_formulas(tally: dict, stacklevel: int = 3) -> None:
    """One :class:`FormulaWarning` per column of ``tally`` (name -> number of formula cells).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     warn_formulas({"name": 2})
    >>> str(seen[0].message).split(":")[0]
    "column 'name'"
    """
    for name, count in tally.items():
        warnings.warn(FormulaWarning(
            f"column {name!r}: {count} cell(s) start with =, +, -, @, a tab or a "
            "carriage return, which a spreadsheet may run as a formula; they are written as "
            "they are (escape_formulas=True: prefixed with ')"),
            stacklevel=stacklevel)


def write_counts(table: TableInput, result: Any,
                 dest: str | Path, keep: Any = None, fmt: str | None = None,
                 order: Any = None, escape_formulas: bool = False) -> None:
    """Write the privatized counts in the format of the input ``table``.

    A CSV table is written back with only the privatized columns changed (the
    other cells as read, quoting re-done minimally, the byte-order mark and
    CRLF line ends kept); a Parquet table keeps the dtypes of its other
    columns, and the privatized ones are int64 whatever their input dtype,
    which would reveal a bound on the true counts (``uint8``: all below 256);
    a histogram is written as its
    header line (if it had one), then ``count,number`` for every count
    ``0 .. upper``. With ``keep`` (a list of column names), only those
    columns and the privatized ones are written, in the table's order: the
    other columns are not private (a release passes its keys and its kept
    columns).

    Parameters
    ----------
    table : TableInput
        What :func:`read_counts` returned.
    result : object with ``counts``, or a list of them
        The privatized counts of a column (``result.counts``, one per row; a histogram:
        ``result.output_histogram``), as a privatization returns them; a list, one per
        column of :attr:`TableInput.privatized` in its order, when several columns were
        read.
    dest : str or pathlib.Path
        The file to write (usually a :meth:`StagedFiles.temp`).
    keep : list of str, optional
        The other columns to write (None: every column).
    fmt : str, optional
        ``"csv"`` or ``"parquet"`` for a table (default: the input's): a CSV
        table written as Parquet has its kept columns as strings (as read) and
        the privatized column as int64; a Parquet table written as CSV is
        written by pandas (no index). Parquet is written by
        :func:`write_parquet` (no index, no metadata of the input).
    order : numpy.ndarray, optional
        The rows' order: output row ``r`` is input row
        ``order[r]``, with its privatized counts; None: the input's order.
    escape_formulas : bool
        A CSV output: prefix every cell of the other columns (and every header
        cell) that a spreadsheet may run as a formula (:func:`formula_cells`)
        with a single quote. False (default): they are written as they are,
        with a :class:`FormulaWarning` per column that has some.

    Examples
    --------
    >>> import tempfile
    >>> from types import SimpleNamespace
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "t.csv").write_text("name,k\\na,3\\nb,0\\n")
    >>> t = read_counts(d / "t.csv", "k")
    >>> write_counts(t, SimpleNamespace(counts=np.array([2, 1])), d / "o.csv")
    >>> [line.split(",")[0] for line in (d / "o.csv").read_text().splitlines()]
    ['name', 'a', 'b']
    """
    dest = Path(dest)
    encoding = "utf-8-sig" if table.bom else "utf-8"
    if table.kind == "histogram":
        lines = [table.header] if table.header is not None else []
        lines += [f"{i},{m}" for i, m in enumerate(result.output_histogram)]
        dest.write_text("\n".join(lines) + "\n", encoding=encoding)
        return
    written = _results_by_column(table, result)
    cols = {col for col, _ in written}
    rows = slice(None) if order is None else np.asarray(order, dtype=np.int64)
    if table.kind == "csv" and fmt == "parquet":
        pd = require("pandas")

        frame = table.frame.iloc[1:].copy()
        frame.columns = [str(h) for h in table.frame.iloc[0]]
        names = set(frame.columns if keep is None else keep)
        ours = {str(frame.columns[col]) for col in cols}
        frame = frame[[c for c in frame.columns if c in ours or c in names]]
        for col, r in written:
            name = str(table.frame.iloc[0, col])
            frame[name] = pd.Series(r.counts, index=frame.index, dtype="int64")
        write_parquet(frame.iloc[rows].reset_index(drop=True), dest)
    elif table.kind == "csv":
        pd = require("pandas")

        frame = table.frame.copy()
        for col, r in written:
            frame.iloc[1:, col] = r.counts.astype(str)
        header = [str(h) for h in frame.iloc[0]]
        others = [k for k in range(len(header)) if k not in cols and
                  (keep is None or header[k] in set(keep))]
        guard_formulas(frame, [frame.columns[k] for k in others], [header[k] for k in others],
                        escape_formulas)
        if keep is not None:
            names = set(keep)
            frame = frame.iloc[:, [k for k, h in enumerate(frame.iloc[0])
                                   if k in cols or str(h) in names]]
        if order is not None:  # the header line first, then the data rows in their order
            frame = pd.concat([frame.iloc[:1], frame.iloc[1:].iloc[rows]])
        frame.to_csv(dest, header=False, index=False, encoding=encoding,
                     lineterminator=table.newline, sep=table.sep)
    else:
        pd = require("pandas")

        frame = table.frame.copy()
        frame.attrs = {}
        for col, r in written:
            frame[col] = pd.Series(r.counts, index=frame.index, dtype="int64")
        if keep is not None:
            names = set(keep)
            frame = frame[[c for c in frame.columns if c in cols or str(c) in names]]
        frame = frame.iloc[rows].reset_index(drop=True)
        if fmt == "csv":
            others = [c for c in frame.columns if c not in cols]
            guard_formulas(frame, others, [str(c) for c in others], escape_formulas)
            heads = pd.DataFrame({"header": [str(c) for c in others]})
            guard_formulas(heads, ["header"], ["the header"], escape_formulas)
            frame = frame.rename(columns=dict(zip(others, heads["header"], strict=True)))
            frame.to_csv(dest, index=False, encoding=encoding)
        else:
            write_parquet(frame, dest)


