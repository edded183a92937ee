"""What a records release reads: the records (:class:`Records`: where they are, which column
is the person, which the groups, which the counted value), the declared groups, and every
record indexed: its declared group, its counted value and its person (docs/records.md,
section 7).

The records are a DataFrame, a pyarrow Table, a mapping column -> array, a CSV file (read
as text: a cell is an identity as written, ``007`` is not ``7``; :class:`~dpfix.release.
inputs.Csv` for another separator than ``","``) or a Parquet file (typed); only the person,
group and counted columns are read. The declared groups are public, given by the data
holder (a sequence, a table or a file), never read from the records: every declared group
is a row of the release, a record of another group (or of an undeclared value) is dropped.
:func:`index_records` reads a table of records whole and indexes it
(:class:`IndexedRecords`); beyond memory the records are read in blocks
(:mod:`dpfix.release.records.stream`) or partition by partition
(:mod:`dpfix.release.records.dask`), each piece indexed by :func:`index_table`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dpfix.io.tables import check_input_file, is_parquet
from dpfix.numbers.numeric import require
from dpfix.release.inputs import Csv, Dataset
from dpfix.release.records.bounding import Tally, tally
from dpfix.sampling.source import random_source

__all__ = ["Records", "RecordsSchema", "records_schema", "COUNT_COLUMN", "IndexedRecords",
           "index_records", "index_table", "declared_groups", "arrow_table", "read_file",
           "check_columns", "check_persons", "no_person", "missing_cells", "csv_header",
           "csv_options", "value_index", "plain", "person_codes", "index_in", "group_index",
           "source_of", "source_name", "is_dask", "BLOCK_BYTES"]

#: The name of the one count column when every record is counted (``count=None``).
COUNT_COLUMN = "count"
#: Bytes of a CSV file parsed at a time (pyarrow's block: a column's chunk).
BLOCK_BYTES = 1 << 24


@dataclass(frozen=True)
class Records:
    """Records as the input of :func:`dpfix.release.records.privatize_records`: one row per
    record (an incident), where they are and which of their columns say what.

    Attributes
    ----------
    source : DataFrame, pyarrow Table, mapping, str, pathlib.Path, Csv, Dataset or Dask
        The records (not modified): a table in memory, a CSV file (read as text; ``Csv(path,
        sep)`` for another separator) or a Parquet file; beyond memory a
        :class:`~dpfix.release.inputs.Dataset` (a Parquet dataset or a glob of CSV files) or
        a ``dask.dataframe.DataFrame``.
    person : str
        The column that identifies a person (every record needs one).
    group_by : str or sequence of str, optional
        The column(s) of the groups (the county): the rows of the release. Required by a
        release; :func:`~dpfix.release.records.suggest_max_contributions` may do without.
    count : str, optional
        The column whose declared values are counted, one count column each (the offence);
        None: every record counted in one column ``count``.

    Examples
    --------
    >>> Records("records.csv", person="person_id", group_by="county").group_by
    ('county',)
    >>> Records({"pid": [1]}, person="")
    Traceback (most recent call last):
    ...
    ValueError: person: name the column of the persons, got ''
    """

    source: Any
    person: str
    group_by: Any = None
    count: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.person, str) or not self.person:
            raise ValueError(f"person: name the column of the persons, got {self.person!r}")
        by = self.group_by
        if by is not None:
            by = (by,) if isinstance(by, str) else tuple(by)
            if not by or not all(isinstance(g, str) and g for g in by):
                raise ValueError(f"group_by: name the column(s) of the groups, got "
                                 f"{self.group_by!r}")
            object.__setattr__(self, "group_by", by)
        if self.count is not None and (not isinstance(self.count, str) or not self.count):
            raise ValueError(f"count: name the column whose values are counted, got "
                             f"{self.count!r}")
        every = [self.person, *(by or ())] + ([self.count] if self.count else [])
        for i, name in enumerate(every):
            if name in every[:i]:
                raise ValueError(f"{'group_by' if name in (by or ()) else 'count'}: "
                                 f"{name!r} is also the person or a group column")


@dataclass(frozen=True)
class RecordsSchema:
    """The checked choices of a records release that say what is read and counted (no data
    read): the person, group and counted columns, the declared values, the kept columns of
    the groups and the count columns of the release.

    Attributes
    ----------
    person : str
    group_by : tuple of str
    count : str or None
    values : tuple or None
        The declared values of ``count`` (None: every record counted).
    keep : tuple of str
        Columns of the groups written as they are (public).
    names : tuple of str
        The count columns: the values as text, or ``("count",)``.
    """

    person: str
    group_by: tuple
    count: str | None
    values: tuple | None
    keep: tuple
    names: tuple

    @property
    def wanted(self) -> list:
        """The records' columns read: the person, the groups, the counted column."""
        return [self.person, *self.group_by] + ([self.count] if self.count else [])


def records_schema(records: Records, values: Any, keep: Any) -> RecordsSchema:
    """The :class:`RecordsSchema` of a release of ``records`` counting ``values`` (a
    sequence, or a mapping value -> share whose keys are taken), writing ``keep``.

    Examples
    --------
    >>> s = records_schema(Records("r.csv", "pid", "county", "offence"), ["M", "R"], ["name"])
    >>> s.names, s.wanted
    (('M', 'R'), ['pid', 'county', 'offence'])
    >>> records_schema(Records("r.csv", "pid", "county"), ["M"], ())
    Traceback (most recent call last):
    ...
    ValueError: values: applies to count= only; drop it or name the column whose values are \
counted (Records(..., count=...))
    """
    if not isinstance(records, Records):
        raise TypeError(f"records: a Records(source, person=..., group_by=...) naming the "
                        f"person and group columns, got {type(records).__name__}")
    by = records.group_by
    if by is None:
        raise ValueError("group_by: name the column(s) of the groups (Records(..., "
                         "group_by=...))")
    keep = (keep,) if isinstance(keep, str) else tuple(keep or ())
    for name in keep:
        if name in by or keep.count(name) > 1:
            raise ValueError(f"keep: {name!r} is a group column or named twice")
    count = records.count
    if count is None:
        if values is not None:
            raise ValueError("values: applies to count= only; drop it or name the column "
                             "whose values are counted (Records(..., count=...))")
        names: tuple = (COUNT_COLUMN,)
    else:
        if values is None or isinstance(values, (str, bytes)) or not len(list(values)):
            raise ValueError(f"values: name the public values of {count!r} to count (one "
                             "column each); the values found in the records are not public")
        values = tuple(values)
        names = tuple(str(v) for v in values)
        for i, name in enumerate(names):
            if name in names[:i]:
                raise ValueError(f"values: {name!r} is declared twice")
    for name in names:
        if name in by or name in keep:
            raise ValueError(f"count: the count column {name!r} is also a group or kept "
                             "column; rename one")
    return RecordsSchema(records.person, by, count, None if count is None else values, keep,
                         names)


# ------------------------------------------------------------------ files and tables
def source_of(source: Any) -> tuple[Any, str]:
    """A source and its CSV separator: ``Csv(path, sep)`` as ``(path, sep)``, anything else
    with ``","``."""
    if isinstance(source, Csv):
        return Path(source.path), source.sep
    return source, ","


def source_name(source: Any) -> str:
    """What a ledger's charge names as the data set: a file's resolved path, a dataset's
    source, or the kind of object given (no hash of the data).

    Examples
    --------
    >>> source_name({"a": [1]})
    '<dict>'
    """
    source, _ = source_of(source)
    if isinstance(source, Dataset):
        return str(source.source)
    if isinstance(source, (str, Path)):
        return str(Path(source).resolve())
    return f"<{type(source).__name__}>"


def is_dask(source: Any) -> bool:
    """Whether the records are a Dask dataset or DataFrame (released partition by
    partition)."""
    return isinstance(source, Dataset) or type(source).__module__.startswith("dask")


def arrow_table(frame: Any, what: str) -> tuple[Any, str]:
    """A pandas DataFrame, a pyarrow Table or a mapping as a pyarrow Table, and its kind."""
    pa = require("pyarrow")
    pd = require("pandas")
    try:
        if isinstance(frame, pa.Table):
            return frame, "pyarrow Table"
        if isinstance(frame, pd.DataFrame):
            return pa.Table.from_pandas(frame, preserve_index=False), "DataFrame"
        if isinstance(frame, Mapping):
            return pa.table({k: pa.array(v) if not isinstance(v, pa.Array) else v
                             for k, v in frame.items()}), "mapping"
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
        raise ValueError(f"{what}: a column mixes types or cannot be read "
                         f"({' '.join(str(exc).split())})") from None
    raise TypeError(f"{what}: a DataFrame, a pyarrow Table, a mapping of arrays or a path, "
                    f"got {type(frame).__name__}")


def csv_header(path: Path, sep: str, what: str) -> list[str]:
    """The CSV file's header cells (a UTF-8 byte-order mark dropped); an empty file is
    refused."""
    import csv

    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            header = next(csv.reader(f, delimiter=sep), [])
    except UnicodeDecodeError:
        raise ValueError(f"{what} file {path} is not UTF-8 text") from None
    if not header:
        raise ValueError(f"{what} file {path} is empty")
    return header


def check_columns(header: list[str], wanted: list[str], what: str) -> None:
    """Every ``wanted`` column is in ``header``, once."""
    for name in wanted:
        if name not in header:
            raise ValueError(f"{what}: column {name!r} not found; columns are {header}")
        if header.count(name) > 1:
            raise ValueError(f"{what}: column {name!r} appears {header.count(name)} times in "
                             "the header")


def csv_options(wanted: list[str], sep: str, coded: Sequence[str],
                block_bytes: int = BLOCK_BYTES) -> tuple[Any, Any, Any]:
    """pyarrow's read, parse and convert options of a records or groups CSV file: the
    columns ``wanted`` as text, cells exactly as written (those in ``coded`` as a dictionary
    of texts), blocks of ``block_bytes``."""
    pa = require("pyarrow")
    import pyarrow.csv as pcsv

    return (pcsv.ReadOptions(block_size=block_bytes), pcsv.ParseOptions(delimiter=sep),
            pcsv.ConvertOptions(
                include_columns=wanted,
                column_types={c: pa.dictionary(pa.int32(), pa.string()) if c in coded else
                              pa.string() for c in wanted},
                strings_can_be_null=False, quoted_strings_can_be_null=False))


def read_file(path: Path, wanted: list[str], sep: str, what: str,
              coded: Sequence[str] = ()) -> Any:
    """The columns ``wanted`` of a CSV file (as text, cells exactly as written; those in
    ``coded`` as a dictionary of texts) or of a Parquet file (as typed)."""
    pa = require("pyarrow")
    check_input_file(path, f"{what} file")
    if is_parquet(path):
        import pyarrow.parquet as pq

        try:
            names = pq.read_schema(path).names
        except (pa.ArrowInvalid, OSError) as exc:
            raise ValueError(f"{what} file {path}: not a Parquet file ({exc})") from None
        check_columns(names, wanted, what)
        return pq.read_table(path, columns=wanted)
    import pyarrow.csv as pcsv

    check_columns(csv_header(path, sep, what), wanted, what)
    read, parse, convert = csv_options(wanted, sep, coded)
    try:
        return pcsv.read_csv(path, read_options=read, parse_options=parse,
                             convert_options=convert)
    except (pa.ArrowInvalid, UnicodeDecodeError) as exc:
        raise ValueError(f"{what} file {path}: {' '.join(str(exc).split())}") from None


def plain(column: Any) -> Any:
    """A column (an array or a chunked one) with a dictionary decoded, large text as text."""
    pa = require("pyarrow")
    arr = column
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    if pa.types.is_large_string(arr.type):
        arr = arr.cast(pa.string())
    return arr


def missing_cells(arr: Any) -> int:
    """Null cells, and empty ones of a text column."""
    pa, pc = require("pyarrow"), require("pyarrow.compute")
    n = arr.null_count
    if pa.types.is_string(arr.type) and len(arr) > n and \
            pc.min(pc.binary_length(arr)).as_py() == 0:
        n += int(pc.sum(pc.equal(arr, "")).as_py() or 0)
    return n


def _plain_integers(arr: Any) -> bool:
    """Whether every text is a plain non-negative integer below ``10^18`` (digits, no
    leading zero): such texts and their int64 values correspond one to one."""
    pc = require("pyarrow.compute")
    length = pc.binary_length(arr)
    if not pc.all(pc.ascii_is_decimal(arr)).as_py() or pc.max(length).as_py() > 18:
        return False
    return not pc.any(pc.and_(pc.starts_with(arr, "0"), pc.greater(length, 1))).as_py()


def no_person(missing: int, name: str) -> ValueError:
    """The one line refusing ``missing`` records without a person (column ``name``)."""
    return ValueError(f"person: {missing} record(s) have no {name!r} (missing or empty); "
                      "every record needs its person (drop or identify them)")


def check_persons(arr: Any, name: str) -> None:
    """Refuse records without a person (a missing or empty cell), saying how many."""
    missing = missing_cells(arr)
    if missing:
        raise no_person(missing, name)


def person_codes(column: Any, name: str) -> np.ndarray:
    """A non-negative code per record, one per distinct person (exact identity: a text is
    the same person only as the same text).

    Examples
    --------
    >>> import pyarrow as pa
    >>> person_codes(pa.array(["b", "a", "b", "007", "7"]), "pid").tolist()
    [0, 1, 0, 2, 3]
    """
    pa, pc = require("pyarrow"), require("pyarrow.compute")
    arr = plain(column)
    check_persons(arr, name)
    n = len(arr)
    if pa.types.is_string(arr.type) and n and _plain_integers(arr):
        arr = arr.cast(pa.int64())  # plain integer texts: one text <-> one int64
    if pa.types.is_integer(arr.type) and n and not (
            pa.types.is_uint64(arr.type) and pc.max(arr).as_py() >= 1 << 63):
        v = arr.to_numpy().astype(np.int64, copy=False)
        lo, hi = int(v.min()), int(v.max())
        if hi - lo <= 4 * n + 1024:
            return v - lo if lo else v
        return require("pandas").factorize(v)[0].astype(np.int64)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return np.asarray(pc.dictionary_encode(arr).indices.to_numpy(zero_copy_only=False),
                      dtype=np.int64)


def _common(a: Any, declared: Any, what: str, name: str) -> tuple[Any, Any]:
    """The type both sides are compared in (None: the records' own type ``a``) and the
    declared values in it, or one line refusing."""
    pa = require("pyarrow")
    b = declared.type
    if a == b:
        return None, declared
    if pa.types.is_integer(a) and pa.types.is_integer(b):
        try:
            return pa.int64(), declared.cast(pa.int64())
        except pa.ArrowInvalid:
            pass
    if pa.types.is_floating(a) and pa.types.is_floating(b):
        return pa.float64(), declared.cast(pa.float64())
    text = "text" if pa.types.is_string(b) else str(b)
    raise ValueError(f"{what}: the declared {name!r} are {text}, the records' are "
                     f"{'text' if pa.types.is_string(a) else a}; give both one type (a CSV "
                     "file is read as text)")


def index_in(values: Any, declared: Any, what: str, name: str) -> np.ndarray:
    """Each record's position among the declared values, -1 when not declared (or missing).

    A dictionary column (a CSV file's group and value columns are read so) is looked up by
    its dictionary, chunk by chunk: few distinct values, one gather per record.

    Examples
    --------
    >>> import pyarrow as pa
    >>> index_in(pa.array(["x", "z", None]), pa.array(["z", "x"]), "groups", "g").tolist()
    [1, 0, -1]
    """
    pa, pc = require("pyarrow"), require("pyarrow.compute")
    declared = plain(declared)
    kind = values.type
    if not pa.types.is_dictionary(kind):
        values = plain(values)
        target, declared = _common(values.type, declared, what, name)
        found = pc.index_in(values if target is None else values.cast(target),
                            value_set=declared)
        return np.asarray(found.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
    value_type = pa.string() if pa.types.is_large_string(kind.value_type) else kind.value_type
    target, declared = _common(value_type, declared, what, name)
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    out = np.empty(len(values), dtype=np.int64)
    at = 0
    for chunk in chunks:
        words = chunk.dictionary.cast(value_type if target is None else target)
        found = pc.index_in(words, value_set=declared).fill_null(-1)
        lookup = np.r_[np.asarray(found.to_numpy(zero_copy_only=False), dtype=np.int64), -1]
        indices = chunk.indices
        where = (indices.fill_null(len(lookup) - 1) if indices.null_count else
                 indices).to_numpy(zero_copy_only=False)
        out[at:at + len(chunk)] = lookup[where]
        at += len(chunk)
    return out


# ------------------------------------------------------------------ the declared groups
def declared_groups(groups: Any, group_by: Sequence[str], keep: Sequence[str]
                    ) -> tuple[Any, str]:
    """The declared groups (a pyarrow Table of the group and kept columns) and where they
    came from, checked: no missing cell, no group twice, at least one.

    Examples
    --------
    >>> t, source = declared_groups(["a", "b"], ["county"], [])
    >>> t.column_names, t.num_rows, source
    (['county'], 2, '<sequence>')
    """
    pa, pd = require("pyarrow"), require("pandas")
    wanted = [*group_by, *keep]
    if isinstance(groups, (str, Path, Csv)):
        path, sep = source_of(groups)
        table, source = read_file(Path(path), wanted, sep, "groups"), str(path)
    elif isinstance(groups, (pa.Table, pd.DataFrame, Mapping)):
        table, kind = arrow_table(groups, "groups")
        check_columns(list(table.column_names), wanted, "groups")
        table, source = table.select(wanted), f"<{kind}>"
    else:
        if len(group_by) != 1 or keep:
            raise ValueError("groups: with several group columns (or keep=) give a table of "
                             "them (a DataFrame, a pyarrow Table or a file)")
        values = groups.to_numpy() if isinstance(groups, (pd.Series, pd.Index)) else groups
        if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
            raise TypeError(f"groups: a sequence of groups, a table or a path, got "
                            f"{type(groups).__name__}")
        try:
            table = pa.table({group_by[0]: pa.array(list(values))})
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise ValueError(f"groups: the groups mix types ({exc})") from None
        source = "<sequence>"
    if table.num_rows == 0:
        raise ValueError("groups: no group is declared")
    for name in group_by:
        arr = plain(table[name])
        if missing_cells(arr):
            row = next(i for i, v in enumerate(arr.to_pylist()) if v is None or v == "")
            raise ValueError(f"groups: declared group {row + 1} has no {name!r} (missing or "
                             "empty)")
    keys = table.select(list(group_by)).to_pandas()
    twice = keys.duplicated()
    if twice.any():
        row = keys[twice].iloc[0].tolist()
        shown = row[0] if len(row) == 1 else tuple(row)
        raise ValueError(f"groups: group {shown!r} is declared twice")
    return table, source


def group_index(records: Any, declared: Any, group_by: Sequence[str]) -> np.ndarray:
    """Each record's declared group (its row), -1 when its group is not declared."""
    pc = require("pyarrow.compute")
    if len(group_by) == 1:
        return index_in(records[group_by[0]], declared[group_by[0]], "groups", group_by[0])
    n = records.num_rows
    key = np.zeros(n, dtype=np.int64)
    dkey = np.zeros(declared.num_rows, dtype=np.int64)
    bad = np.zeros(n, dtype=bool)
    for name in group_by:  # a mixed radix over each column's distinct declared values
        distinct = pc.unique(plain(declared[name]))
        size = len(distinct)
        r = index_in(records[name], distinct, "groups", name)
        d = index_in(declared[name], distinct, "groups", name)
        bad |= r < 0
        key, dkey = key * size + np.maximum(r, 0), dkey * size + d
    order = np.argsort(dkey)
    at = np.minimum(np.searchsorted(dkey[order], key), dkey.size - 1)
    found = (dkey[order][at] == key) & ~bad
    return np.where(found, order[at], -1)


def value_index(table: Any, schema: RecordsSchema) -> np.ndarray:
    """Each record's counted value (its count column), -1 when not declared (or missing);
    every record 0 when every record is counted."""
    pa = require("pyarrow")
    if schema.count is None:
        return np.zeros(table.num_rows, dtype=np.int64)
    try:
        declared_values = pa.array(list(schema.values))
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise ValueError(f"values: the values mix types ({exc})") from None
    return index_in(table[schema.count], declared_values, "values", schema.count)


# ------------------------------------------------------------------ the records indexed
@dataclass
class IndexedRecords:
    """Records read whole and indexed: each one's declared group, counted value and person.

    Attributes
    ----------
    declared : pyarrow.Table
        The declared groups.
    row, value, persons : numpy.ndarray
        Per record: its group's row (-1: not declared), its value's column (-1: not
        declared), its person's code.
    meta : dict
        The records' ``kind`` and ``path``, the groups' ``groups_source``, and the
        ``seconds`` each step took (confidential: they depend on the data).
    """

    declared: Any
    row: np.ndarray
    value: np.ndarray
    persons: np.ndarray
    meta: dict = field(default_factory=dict)

    def contribution_histogram(self) -> np.ndarray:
        """``eta[m]``: the persons with ``m`` records among those bounded (``eta[0] = 0``)."""
        inside = (self.row >= 0) & (self.value >= 0)
        p = self.persons[inside]
        per = np.bincount(p) if p.size else np.zeros(0, np.int64)
        eta = np.bincount(per, minlength=1)
        eta[0] = 0
        return eta

    def tally(self, names: Sequence, C: int, c: int, seed: Any) -> Tally:
        """The records bounded (``C``, ``c``) with the randomness of ``seed`` and counted."""
        start = time.perf_counter()
        made = tally(self.row, self.value, self.persons, self.declared.num_rows * len(names),
                     len(names), C, c, random_source(seed))
        self.meta.setdefault("seconds", {})["bound"] = time.perf_counter() - start
        return made

    def __enter__(self) -> IndexedRecords:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


def index_table(table: Any, schema: RecordsSchema, declared: Any) -> IndexedRecords:
    """Each record of a pyarrow ``table`` of the records' columns indexed (no group
    columns: every record in one group)."""
    row = (group_index(table, declared, schema.group_by) if schema.group_by else
           np.zeros(table.num_rows, dtype=np.int64))
    value = value_index(table, schema)
    persons = person_codes(table[schema.person], schema.person)
    return IndexedRecords(declared, row, value, persons)


def index_records(source: Any, schema: RecordsSchema, declared: Any,
                  groups_source: str) -> IndexedRecords:
    """Read the records' columns whole (a file, or a table in memory) and index every
    record."""
    start = time.perf_counter()
    source, sep = source_of(source)
    wanted = schema.wanted
    if isinstance(source, (str, Path)):
        path = Path(source)
        kind = "parquet" if is_parquet(path) else "csv"
        table, shown = read_file(path, wanted, sep, "records", coded=wanted[1:]), str(path)
    else:
        table, kind = arrow_table(source, "records")
        check_columns(list(table.column_names), wanted, "records")
        table, shown = table.select(wanted), f"<{kind}>"
    read = time.perf_counter() - start
    ix = index_table(table, schema, declared)
    ix.meta = {"kind": kind, "path": shown, "groups_source": groups_source,
               "seconds": {"read": read, "index": time.perf_counter() - start - read}}
    return ix
