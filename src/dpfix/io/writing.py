"""Tables written: the privatized table in its input's format, Parquet without metadata,
and the cells a spreadsheet would run as formulas.

- the privatized table written in the input's format (:func:`write_counts`):
  a CSV is rewritten cell for cell except the privatized column, a Parquet
  file keeps the dtypes of its other columns (the privatized ones are int64)
  but none of the input's metadata (no index, no ``attrs``, no schema
  metadata: :func:`write_parquet`); its rows in the order the caller gives
  (a release's order: :mod:`dpfix.release.order`);
- formula guarding (:func:`formula_cells`, :func:`guard_formulas`): a CSV cell that starts
  with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return and is not a plain number is
  escaped with ``'`` or warned about (:class:`FormulaWarning`);
- rows of pyarrow columns as CSV text (:func:`csv_rows`), byte for byte what pandas'
  ``to_csv`` writes (the Python csv writer's minimal quoting, :func:`csv_quoting`), and
  their formula cells escaped or counted (:func:`guard_formula_array`): a streamed
  release writes its blocks so;
- the outputs are written through the staged atomic commit of :mod:`dpfix.io.commit`.
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from dpfix.io.counts import NUMBER_TEXT, text_buffers
from dpfix.io.tables import TableInput
from dpfix.numbers.numeric import require

__all__ = ["write_counts", "write_parquet", "FORMULA_STARTS", "FormulaWarning",
           "formula_cells", "escape_formula_cells", "guard_formulas", "warn_formulas",
           "csv_quoting", "csv_cells", "csv_rows", "guard_formula_array", "round_trip_type",
           "round_trip", "INTEGER_TEXT"]


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
    >>> import shutil, tempfile, pandas as pd, pyarrow.parquet as pq
    >>> f = pd.DataFrame({"k": [1, 2]}, index=["a", "b"])
    >>> f.attrs["note"] = "secret"
    >>> p = Path(tempfile.mkdtemp()) / "o.parquet"
    >>> write_parquet(f, p)
    >>> pq.read_schema(p).names, pq.read_schema(p).metadata
    (['k'], None)
    >>> shutil.rmtree(p.parent)
    """
    pa = require("pyarrow")
    pq = require("pyarrow.parquet")

    t = pa.Table.from_pandas(frame, preserve_index=False)
    pq.write_table(t.replace_schema_metadata(None), dest)


def _sample(t: Any) -> Any:
    """A value of the pyarrow type ``t`` whose cells :func:`round_trip_type` knows, or
    None for any other type."""
    pa = require("pyarrow")

    if pa.types.is_integer(t):
        return 0
    if t in (pa.float32(), pa.float64()):
        return 0.0
    if pa.types.is_boolean(t):
        return True
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return ""
    return None


def round_trip_type(t: Any, nulls: int, rows: int) -> Any:
    """The type a column of the pyarrow type ``t`` read from Parquet has when
    :func:`write_parquet` writes it back: through pandas (``to_pandas(ignore_metadata=True)``,
    then ``from_pandas``), which depends on the column's missing cells (``nulls`` of its
    ``rows``: integers with one become float64, booleans all missing become nulls).
    Integers, floats (32 and 64 bits), booleans, text and nulls; None for any other type
    (dates, decimals, categories, nested: their pandas type depends on their values).
    Asked of pandas itself on two cells, so that the answer is the installed pandas'.

    Examples
    --------
    >>> import pyarrow as pa
    >>> [str(round_trip_type(pa.int32(), n, 3)) for n in (0, 1)]
    ['int32', 'double']
    >>> round_trip_type(pa.date32(), 0, 3) is None
    True
    """
    pa = require("pyarrow")

    if pa.types.is_null(t):
        cells: list = [None]
    else:
        value = _sample(t)
        if value is None:
            return None
        cells = [None, None] if nulls == rows else [value, None] if nulls else [value]
    frame = pa.table({"c": pa.array(cells, t)}).to_pandas(ignore_metadata=True)
    return pa.Table.from_pandas(frame, preserve_index=False).schema.field("c").type


def round_trip(values: Any, t: Any) -> Any:
    """A pyarrow column of a type :func:`round_trip_type` knows, as it comes back from the
    same round trip, of the type ``t`` it gave: its values cast (integers to float64
    exactly as numpy casts them), a float NaN missing (pandas' missing value).

    Examples
    --------
    >>> import pyarrow as pa
    >>> round_trip(pa.array([1.5, float("nan"), None]), pa.float64()).to_pylist()
    [1.5, None, None]
    """
    pa = require("pyarrow")
    pc = require("pyarrow.compute")

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if pa.types.is_null(t):
        return pa.nulls(len(values))
    if values.type != t:
        values = pc.cast(values, t, safe=False)
    if pa.types.is_floating(t) and len(values) and pc.any(pc.is_nan(values)).as_py():
        values = pc.if_else(pc.is_nan(values), pa.scalar(None, t), values)
    return values


#: The text cells a CSV table's column written to Parquet holds as int64 when every one of
#: them is a plain integer (no sign but ``-``, no leading zero, no blank).
INTEGER_TEXT = r"-?(?:0|[1-9][0-9]{0,17})"


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
        bad[i] = NUMBER_TEXT.fullmatch(cells.iloc[i]) is None
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
        What :func:`dpfix.io.tables.read_counts` returned.
    result : object with ``counts``, or a list of them
        The privatized counts of a column (``result.counts``, one per row; a histogram:
        ``result.output_histogram``), as a privatization returns them; a list, one per
        column of :attr:`TableInput.privatized` in its order, when several columns were
        read.
    dest : str or pathlib.Path
        The file to write (usually a :meth:`dpfix.io.commit.StagedFiles.temp`).
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
    >>> import shutil, tempfile
    >>> from types import SimpleNamespace
    >>> from dpfix.io.tables import read_counts
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "t.csv").write_text("name,k\\na,3\\nb,0\\n")
    >>> t = read_counts(d / "t.csv", "k")
    >>> write_counts(t, SimpleNamespace(counts=np.array([2, 1])), d / "o.csv")
    >>> [line.split(",")[0] for line in (d / "o.csv").read_text().splitlines()]
    ['name', 'a', 'b']
    >>> shutil.rmtree(d)
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


# ------------------------------------------------------------------ CSV text of pyarrow columns
@functools.lru_cache(maxsize=32)
def csv_quoting(sep: str, newline: str) -> str:
    """The characters that make pandas' ``to_csv`` (the Python csv writer, minimal quoting)
    quote a cell, with the separator ``sep`` and the line end ``newline``: asked of the
    writer itself, one cell per candidate (the separator, the quote, the line-end
    characters), so that :func:`csv_cells` quotes exactly the cells it quotes.

    Examples
    --------
    >>> csv_quoting(",", "\\n"), csv_quoting(";", "\\r\\n")
    (',"\\n', ';"\\r\\n')
    """
    pd = require("pandas")

    quoted = []
    for c in dict.fromkeys([sep, '"', "\r", "\n", *newline]):
        text = pd.DataFrame({"a": [f"a{c}b"], "b": ["x"]}).to_csv(
            index=False, header=False, sep=sep, lineterminator=newline)
        if text.startswith('"'):
            quoted.append(c)
    return "".join(quoted)


def _rows_with(values: Any, chars: str) -> np.ndarray:
    """The rows of a string array (no nulls) whose cell holds one of ``chars``."""
    pc = require("pyarrow.compute")

    offsets, data = text_buffers(values)
    text = data[offsets[0]:offsets[-1]]
    single = [c.encode()[0] for c in chars if len(c.encode()) == 1]
    hit = np.zeros(len(values), dtype=bool)
    if single:  # one byte each: found in the bytes themselves, one pass
        table = np.zeros(256, dtype=bool)
        table[single] = True
        at = np.flatnonzero(table[text]) + offsets[0]
        hit[np.searchsorted(offsets, at, side="right") - 1] = True
    for c in chars:
        if len(c.encode()) > 1:
            hit |= np.asarray(pc.match_substring(values, c), dtype=bool)
    return np.flatnonzero(hit)


def csv_cells(values: Any, sep: str = ",", newline: str = "\n", alone: bool = False,
              large: bool = True) -> Any:
    """A pyarrow column's cells as pandas' ``to_csv`` writes them: the text as it is, or
    quoted (``"..."``, its quotes doubled) when it holds one of :func:`csv_quoting`'s
    characters; with ``alone`` (the row's only cell) an empty cell is ``""``. Integers are
    written in decimal. A large string array (``large``), or a string array.

    Examples
    --------
    >>> import pyarrow as pa
    >>> csv_cells(pa.array(['a', 'b,c', 'a "b" c', ''])).to_pylist()
    ['a', '"b,c"', '"a ""b"" c"', '']
    """
    pa = require("pyarrow")
    pc = require("pyarrow.compute")

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    kind = pa.large_string() if large else pa.string()
    text = pa.types.is_string(values.type) or pa.types.is_large_string(values.type)
    if pa.types.is_unsigned_integer(values.type) and values.null_count == 0 and len(values):
        top = int(pc.max(values).as_py())
        if top < 1 << 16:  # small counts: each one's decimal text looked up
            digits = pa.array([str(i) for i in range(top + 1)], kind)
            values = digits.take(values)
    if values.type != kind:
        values = values.cast(kind)
    if len(values) == 0 or not text and not alone:
        return values  # integers: digits and a sign, nothing to quote
    rows = _rows_with(values, csv_quoting(sep, newline)) if text else np.zeros(0, np.int64)
    if alone:
        rows = np.union1d(rows, np.flatnonzero(np.asarray(pc.binary_length(values)) == 0))
    if rows.size == 0:
        return values
    cells = values.take(pa.array(rows)).to_pylist()
    mask = np.zeros(len(values), dtype=bool)
    mask[rows] = True
    quoted = pa.array(['"' + c.replace('"', '""') + '"' for c in cells], kind)
    return pc.replace_with_mask(values, pa.array(mask), quoted)


def csv_rows(columns: list, sep: str = ",", newline: str = "\n") -> memoryview:
    """The rows of pyarrow ``columns`` (of one length) as CSV text in UTF-8: each cell as
    :func:`csv_cells` writes it, the cells joined by ``sep``, each row ended by
    ``newline``: byte for byte pandas' ``to_csv`` of the same cells (no header, no index).

    Examples
    --------
    >>> import pyarrow as pa
    >>> bytes(csv_rows([pa.array(["a", "x;y"]), pa.array([3, 0])], ";"))
    b'a;3\\n"x;y";0\\n'
    """
    pa = require("pyarrow")
    pc = require("pyarrow.compute")

    if not columns or len(columns[0]) == 0:
        return memoryview(b"")
    # 32-bit offsets when the text surely fits them: cells at most doubled by quoting,
    # integers at most 20 characters, the separators and line ends
    N = len(columns[0])
    most = sum(2 * c.nbytes + 2 * N if pa.types.is_string(c.type) or
               pa.types.is_large_string(c.type) else 20 * N for c in columns) + \
        N * (len(sep.encode()) * len(columns) + len(newline.encode()))
    large = most >= 2**31 - 1
    cells = [csv_cells(c, sep, newline, alone=len(columns) == 1, large=large) for c in columns]
    text = pa.large_string() if large else pa.string()
    line = pc.binary_join_element_wise(*cells, pa.scalar(sep, text))
    # each row and an empty cell joined by the line end: the row, then the line end
    line = pc.binary_join_element_wise(line, pa.scalar("", text), pa.scalar(newline, text))
    offsets, data = text_buffers(line)
    return memoryview(data[offsets[0]:offsets[-1]])


def guard_formula_array(values: Any, escape: bool) -> tuple[Any, int]:
    """A pyarrow text column's formula cells (:func:`formula_cells`' rule) escaped with
    ``'`` (``escape``) or left as they are, and their number: ``(column, count)``.

    The candidates (a first character of :data:`FORMULA_STARTS`) are found in the bytes;
    each is then asked of :data:`dpfix.io.counts.NUMBER_TEXT` as :func:`formula_cells`
    asks it.

    Examples
    --------
    >>> import pyarrow as pa
    >>> cells, n = guard_formula_array(pa.array(["=1+1", "-3", "a", "@x"]), True)
    >>> cells.to_pylist(), n
    (["'=1+1", '-3', 'a', "'@x"], 2)
    """
    pa = require("pyarrow")
    pc = require("pyarrow.compute")

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)) or \
            len(values) == 0 or values.null_count:
        return values, 0
    offsets, data = text_buffers(values)
    starts = offsets[:-1]
    filled = starts < offsets[1:]
    first = np.zeros(len(values), dtype=np.uint8)
    first[filled] = data[starts[filled]]
    candidates = np.flatnonzero(np.isin(first, [ord(c) for c in FORMULA_STARTS]))
    if candidates.size == 0:
        return values, 0
    picked = values.take(pa.array(candidates)).to_pylist()
    bad = np.array([NUMBER_TEXT.fullmatch(c) is None for c in picked], dtype=bool)
    rows = candidates[bad]
    if rows.size == 0 or not escape:
        return values, int(rows.size)
    mask = np.zeros(len(values), dtype=bool)
    mask[rows] = True
    escaped = pa.array(["'" + c for c, b in zip(picked, bad, strict=True) if b], values.type)
    return pc.replace_with_mask(values, pa.array(mask), escaped), int(rows.size)
