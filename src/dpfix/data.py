"""Reading tables of counts and histograms (the shared data sets and user files).

The shared data sets live beside the project in ``../shared/data``; the
environment variable ``DPFIX_DATA`` points elsewhere. A table of counts has one
row per category; a histogram file has one row per count value ``i`` with the
number of categories ``eta_i`` (with or without a header line).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["data_dir", "data_path", "read_table", "counts_from_column", "read_histogram",
           "synthetic_counts", "MAX_HISTOGRAM_COUNT"]


def data_dir() -> Path:
    """The data folder: ``$DPFIX_DATA``, else ``../shared/data`` beside the repository
    (or beside the current directory)."""
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
    """Path of a shared data file, e.g. ``data_path("crime_data.csv")``."""
    path = data_dir() / name
    if not path.is_file():
        raise FileNotFoundError(f"data file {path} not found")
    return path


def read_table(path: str | Path) -> Any:
    """A CSV or Parquet table as a pandas DataFrame (CSV byte-order marks tolerated)."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"input file {path} not found")
    if path.suffix.lower() in (".parquet", ".pq"):
        return pd.read_parquet(path)
    try:
        return pd.read_csv(path, encoding="utf-8-sig")
    except pd.errors.EmptyDataError:
        raise ValueError(f"input file {path} is empty") from None


def counts_from_column(table: Any, column: str) -> np.ndarray:
    """The integer counts of one column; refuses missing, non-integer, negative
    or NaN values and an empty table with a message naming the first bad row."""
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


#: Largest count value a histogram file may name (eta is a dense array: 80 MB).
MAX_HISTOGRAM_COUNT = 10**7
_INT64_MAX = int(np.iinfo(np.int64).max)


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
    line (``binom_hist_data.csv``). Missing count values are zero. Numbers must
    be integers (``3`` or ``3.0``) below 2^63; count values at most
    :data:`MAX_HISTOGRAM_COUNT`. With ``with_header``, returns ``(eta, header)``,
    ``header`` the skipped first line (None if there was none).

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


def synthetic_counts(rows: int = 2000, seed: int = 7) -> np.ndarray:
    """A reproducible synthetic table of counts: a zero-inflated negative binomial
    (about 40% zeros, a long right tail), the embedded default of ``make run``."""
    rng = np.random.default_rng(seed)
    counts = rng.negative_binomial(2, 0.25, size=rows)
    counts[rng.random(rows) < 0.35] = 0
    return counts
