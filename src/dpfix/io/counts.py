"""Counts read strictly: the rule that makes a cell, a value or a column a count.

- **counts are integers, parsed exactly** (:func:`parse_count`): a text cell
  is digits, optionally followed by a decimal point and zeros only (``3``,
  ``3.0``); ``3.0000000000000001``, ``1e3``, ``1e-400``, ``0x10`` are refused
  with their row, never rounded through a float. Numeric columns must hold
  whole non-negative values without missing ones (:func:`counts_of`,
  :func:`counts_from_column`);
- **columns of other logical types are refused by name** before any value is
  read: dates, times, timestamps, durations, booleans (:func:`non_count_type`).

A bad count is named by where it is: ``row K`` (:func:`row_label`), or the line of a CSV
file when its reader says (:mod:`dpfix.io.tables`). A column read by pyarrow is parsed by
the same rule (:func:`arrow_counts`: its plain digits at once, anything else cell by cell).
"""

from __future__ import annotations

import decimal
import fractions
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from dpfix.numbers.numeric import require

__all__ = ["parse_count", "counts_of", "counts_from_column", "non_count_type", "row_label",
           "NUMBER_TEXT", "arrow_counts", "text_buffers"]


#: Counts above this are clipped to it when read (the pipeline top-codes them anyway).
_CLIP = 2**62


#: A count written as text: digits, optionally a decimal point followed by zeros only.
_INTEGER_TEXT = re.compile(r"([+-]?[0-9]+)(?:\.0*)?")


#: Text that is a number, but not necessarily an integer (``2.5``, ``1e3``, ``inf``).
NUMBER_TEXT = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                          r"|inf|infinity)", re.IGNORECASE)


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
            if NUMBER_TEXT.fullmatch(text):
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


def row_label(i: int) -> str:
    """Where the ``i``-th value (from 0) of a column is: ``"row i+1"``, counted from 1."""
    return f"row {i + 1}"


def _counts_by_row(values: Any, column: str, where: Callable[[int], str] = row_label) -> np.ndarray:
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


def counts_of(values: Any, column: str, where: Callable[[int], str] = row_label) -> np.ndarray:
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
        The counts as int64 (read-only where they are an int64 column's own values,
        not copied).

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
                if a.min() < 0:
                    return by_row()
                if a.max() > _CLIP:
                    return np.minimum(a.astype(np.int64), _CLIP)
                if a.dtype != np.int64:
                    return a.astype(np.int64)
                a = a.view()  # nothing to clip: the column's own values, read-only, no copy
                a.flags.writeable = False
                return a
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


def text_buffers(values: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, data)`` of a pyarrow string or binary array without nulls, as numpy views:
    cell ``i`` is ``data[offsets[i]:offsets[i + 1]]`` (its UTF-8 bytes).

    Examples
    --------
    >>> import pyarrow as pa
    >>> offsets, data = text_buffers(pa.array(["ab", "", "c"]).slice(1))
    >>> offsets.tolist(), bytes(data[offsets[0]:offsets[-1]])
    ([2, 2, 3], b'c')
    """
    pa = require("pyarrow")

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    large = pa.types.is_large_string(values.type) or pa.types.is_large_binary(values.type)
    _, offsets, data = values.buffers()
    offsets = np.frombuffer(offsets, dtype=np.int64 if large else np.int32)
    offsets = offsets[values.offset:values.offset + len(values) + 1]
    data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    return offsets, data


def _digit_counts(values: Any) -> np.ndarray | None:
    """The counts of a pyarrow string array whose every cell is 1 to 18 ASCII digits (no sign,
    blank or point: ``007`` is 7), or None when a cell is anything else."""
    pa = require("pyarrow")
    pc = require("pyarrow.compute")

    if values.null_count or len(values) == 0:
        return None
    offsets, data = text_buffers(values)
    lengths = np.diff(offsets)
    if lengths.min() < 1 or lengths.max() > 18:
        return None
    text = data[offsets[0]:offsets[-1]]
    if (text - np.uint8(48) > 9).any():  # wraps below '0': one test for both ends
        return None
    return pc.cast(values, pa.int64()).to_numpy(zero_copy_only=False)  # below 10^18 < 2^62


def arrow_counts(values: Any, column: str, where: Callable[[int], str] = row_label) -> np.ndarray:
    """The counts of a pyarrow array (or chunked array), exactly as :func:`counts_of` parses
    the same cells: a column of plain digits at once (1 to 18 ASCII digits a cell, cast by
    pyarrow), any other column by :func:`counts_of` (the first bad row named by
    ``where``).

    Examples
    --------
    >>> import pyarrow as pa
    >>> arrow_counts(pa.array(["3", "007", "12"]), "k").tolist()
    [3, 7, 12]
    >>> arrow_counts(pa.array(["3", "0x10"]), "k")
    Traceback (most recent call last):
    ...
    ValueError: column 'k', row 2: not a number
    """
    pa = require("pyarrow")
    pd = require("pandas")

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        out = _digit_counts(values)
        if out is not None:
            return out
        return counts_of(pd.Series(values.to_numpy(zero_copy_only=False), dtype=object),
                         column, where)
    if pa.types.is_integer(values.type) and values.null_count == 0 and len(values):
        a = values.to_numpy()
        if a.dtype.kind == "i" and a.min() >= 0 and a.max() <= _CLIP:
            return a.astype(np.int64)
    return counts_of(values.to_pandas(), column, where)
