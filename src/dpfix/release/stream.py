"""A CSV or Parquet file released to a CSV or Parquet file in memory ``O(block + n^2)``,
whatever its rows ``N`` (docs/release.md, section 7).

Two passes over the file (:class:`dpfix.io.tables.CsvBlocks`, or
:class:`dpfix.io.tables.ParquetBlocks` for a Parquet file, blocks of
:data:`dpfix.release.frameworks.DRAW_CHUNK` rows):

1. each privatized column's histogram (top-coded above ``upper``; ``upper="auto"``
   chooses its bound from it), checked exactly as :func:`dpfix.io.tables.read_counts`
   checks the file (pyarrow's CSV reader, every column as text; pandas' for a file pyarrow
   refuses); stage 1 and ``T`` come from the histograms alone
   (:func:`dpfix.release.frameworks.privatize` with ``histogram=`` and ``draw=False``);
   with the key order, what the buckets by key range need (:class:`_KeyRanges`);
2. every block's rows drawn with the exact sampler of stage 2, in the order and chunks of
   the in-memory path, from the same randomness; the rows written in the release's order:
   ``"input"`` straight through; ``"shuffled"`` scattered to ``K`` bucket files (each
   row's bucket uniform and independent), each bucket shuffled in memory, the buckets
   concatenated (:func:`external_shuffle`: exactly uniform, proof in docs/release.md);
   ``"key"`` the rows scattered to buckets by key range, each bucket permuted uniformly
   and sorted stably by the key columns' text
   (:func:`dpfix.release.order.text_order`), the buckets concatenated: equal keys in
   uniformly random order (a range too large, or keys with a zero byte: shuffled buckets
   sorted and merged stably, :func:`merge_runs`). The rows are pyarrow Tables throughout,
   written as pandas' ``to_csv`` writes them (:func:`dpfix.io.writing.csv_rows`), or as
   the in-memory path writes a Parquet table's typed cells (:class:`_Converter`: to CSV
   by pandas, to Parquet by row groups of ``pyarrow.parquet.ParquetWriter``).

Pass 2 reads the file pass 1 read, or raises :class:`InputChanged` and writes nothing:
the same device, inode, size and modification time, the same ``N`` rows, the same
histograms (:func:`_unchanged`). At most :data:`MAX_OPEN_FILES` bucket or run files are
open at once, whatever ``K``.

With ``K = 1`` (``N`` at most ``bucket_rows``) no bucket is drawn and the one bucket's
permutation is the in-memory path's: with a seed the output is the in-memory output,
byte for byte, in every order.

The temporary files live in a private (0700) scratch folder, removed on every exit
(an error, ``KeyboardInterrupt``, SIGTERM, SIGHUP: :func:`scratch_folder`).
"""

from __future__ import annotations

import bisect
import codecs
import concurrent.futures
import contextlib
import itertools
import math
import shutil
import signal
import tempfile
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dpfix.io import reports
from dpfix.io.commit import leftover_tag, remove_stale
from dpfix.io.counts import text_buffers
from dpfix.io.tables import CsvBlocks, ParquetBlocks, TableInput, is_parquet
from dpfix.io.writing import (
    INTEGER_TEXT,
    csv_rows,
    guard_formula_array,
    guard_formulas,
    round_trip,
    round_trip_type,
    warn_formulas,
)
from dpfix.numbers.errors import Error
from dpfix.numbers.numeric import require
from dpfix.release.bounds import DEFAULT_MAX_UPPER, PrivateBound
from dpfix.release.frameworks import DRAW_CHUNK, privatize, stage2_source, topcode_histogram
from dpfix.release.inputs import input_path
from dpfix.release.order import integer_order, key_bytes, key_window, order_source, text_order
from dpfix.release.outputs import (
    Confidential,
    Release,
    column_uncertainty,
    uncertainty_entry,
    write_output,
)
from dpfix.release.plan import ReleasePlan, written_columns
from dpfix.release.report import (
    OUTPUT_COLUMNS_RULE,
    ROW_ORDER_RULES,
    assemble,
    composition,
    confidential_columns,
    confidential_report,
    public_report,
)

__all__ = ["release_streamed", "stream_csv", "Streamed", "scratch_folder", "order_words", "WORD",
           "stopped_by_signals", "external_shuffle", "InputChanged", "merge_runs", "BUCKET_ROWS",
           "MAX_OPEN_FILES", "SCRATCH_PREFIX"]

#: The rows a bucket holds on average (``K = ceil(N / BUCKET_ROWS)`` buckets; ``N`` at most
#: this: one bucket, the in-memory permutation itself).
BUCKET_ROWS = 1 << 20
#: The most files the external shuffle and the merge of sorted runs write or read at once
#: (the usual limit of open files per process is 1024).
MAX_OPEN_FILES = 64
#: The start of a scratch folder's name (then :func:`dpfix.io.commit.leftover_tag`).
SCRATCH_PREFIX = "dpfix-"
#: The signals that end a streamed release by an exception (their scratch folder removed)
#: while their handler is the default one.
_STOP = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class _Stopped(BaseException):
    """SIGTERM or SIGHUP arrived (default handler) while a scratch folder was in use."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_stopped(signum: int, frame: Any) -> None:
    raise _Stopped(signum)


@contextlib.contextmanager
def stopped_by_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP, while their handler is the default one, raise an exception in
    the block (the main thread only), so that every ``finally`` on the way out runs (the
    scratch folder and the staged output removed); once out, the process ends by the same
    signal, as it would have. A handler of the caller's (``dpfix privatize`` raises its own
    exception) is left in place; so is an enclosing block's.
    """
    saved: dict = {}
    if threading.current_thread() is threading.main_thread():
        for signum in _STOP:
            if signal.getsignal(signum) is signal.SIG_DFL:
                saved[signum] = signal.signal(signum, _raise_stopped)
    stopped = None
    try:
        yield
    except _Stopped as exc:
        if not saved:
            raise  # an enclosing block's signal
        stopped = exc.signum
    finally:
        for signum, old in saved.items():
            signal.signal(signum, old)
    if stopped is not None:
        signal.raise_signal(stopped)  # the default action: the process ends by the signal
        raise SystemExit(128 + stopped)  # pragma: no cover - a blocked signal


@contextlib.contextmanager
def scratch_folder(parent: str | Path | None = None) -> Iterator[Path]:
    """A private (0700) folder for temporary files, removed however the block ends.

    Named ``dpfix-PID-HOST-...`` in ``parent`` (the temporary folder by default), so that
    a run killed by SIGKILL leaves a folder the next run removes
    (:func:`dpfix.io.commit.remove_stale`, called first). An exception,
    ``KeyboardInterrupt``, SIGTERM or SIGHUP (:func:`stopped_by_signals`) removes it on
    the way out.

    Examples
    --------
    >>> with scratch_folder() as folder:
    ...     oct(folder.stat().st_mode & 0o777), folder.name.startswith("dpfix-")
    ('0o700', True)
    >>> folder.exists()
    False
    """
    parent = Path(parent or tempfile.gettempdir())
    remove_stale(parent, SCRATCH_PREFIX)
    with stopped_by_signals():
        folder = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{leftover_tag()}-", dir=parent))
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)


# ------------------------------------------------------------------ the row orders
def external_shuffle(pieces: Iterator[Any], K: int, source: Any, folder: Path,
                     schema: Any, max_open: int = MAX_OPEN_FILES) -> Iterator[Any]:
    """The rows of ``pieces`` (pyarrow Tables) in a uniformly random order, ``K`` buckets
    at a time in memory.

    Each row goes to bucket ``b`` drawn uniformly from ``0 .. K-1`` (independently, by
    ``source.below``; ``K = 1``: no draw), appended to the bucket's file in ``folder``;
    then each bucket in turn is read, permuted by ``source.permutation`` and yielded
    (and its file removed). Every permutation of the ``N`` rows has probability
    ``1 / N!`` (docs/release.md, section 7); ``K = 1`` is ``source.permutation(N)``.

    At most ``max_open`` files are written at once: with more buckets the rows go first
    to ``max_open`` files of consecutive buckets (each row with its bucket), each of which
    is then split the same way in turn (:func:`_scatter`). A bucket receives its rows in
    the input's order either way, and the draws are the same (every bucket first, then
    the permutations in the buckets' order): the output is the one-level scatter's.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from dpfix.sampling import random_source
    >>> t = pa.table({"x": list(range(6))})
    >>> with scratch_folder() as d:
    ...     rows = [v for b in external_shuffle(iter([t]), 3, random_source(0), d, t.schema)
    ...             for v in b.column("x").to_pylist()]
    >>> sorted(rows)
    [0, 1, 2, 3, 4, 5]
    """
    pa = require("pyarrow")

    if max_open < 2:
        raise ValueError(f"max_open: at least 2 files, got {max_open}")

    def labelled() -> Iterator[tuple[Any, np.ndarray]]:
        for piece in pieces:
            m = piece.num_rows
            yield piece, (np.zeros(m, dtype=np.int64) if K == 1 else
                          source.below(K, m).astype(np.int64))

    for _, path in _bucket_files(labelled(), K, folder, schema, max_open):
        bucket = _read_run(path)
        yield bucket.take(pa.array(source.permutation(bucket.num_rows)))


def _bucket_files(labelled: Iterator[tuple[Any, np.ndarray]], K: int, folder: Path,
                  schema: Any, max_open: int) -> Iterator[tuple[int, Path]]:
    """``(b, path)`` for each bucket ``b`` in ``0 .. K-1`` in turn: the file of its rows
    (``labelled``: ``(table, buckets)``), in their order, through files of several buckets
    when there are more than ``max_open`` (:func:`_scatter`)."""
    pending = _scatter(labelled, 0, K, folder, schema, max_open)
    while pending:
        lo, hi, path = pending.pop(0)
        if hi - lo > 1:  # a file of several buckets, each row with its bucket: split it
            pending[:0] = _scatter(_labelled_rows(path), lo, hi, folder, schema, max_open)
            continue
        yield lo, path


def _read_run(path: Path) -> Any:
    """The rows of a file of one bucket (or run), which is then removed."""
    pa = require("pyarrow")
    with pa.OSFile(str(path)) as f:
        table = pa.ipc.open_stream(f).read_all()
    path.unlink()
    return table


def _batches(path: Path) -> Iterator[Any]:
    """The batches of a file of one bucket as Tables; the file is removed once read."""
    pa = require("pyarrow")
    try:
        with pa.OSFile(str(path)) as f:
            for batch in pa.ipc.open_stream(f):
                yield pa.Table.from_batches([batch])
    finally:
        path.unlink(missing_ok=True)


#: The column that carries each row's bucket in a file of several buckets.
_BUCKET = "__dpfix_bucket"


def _scatter(pieces: Iterator[tuple[Any, np.ndarray]], lo: int, hi: int, folder: Path,
             schema: Any, max_open: int) -> list[tuple[int, int, Path]]:
    """Write the rows of ``pieces`` (``(table, buckets)``, every bucket in ``lo .. hi-1``)
    to at most ``max_open`` files of consecutive buckets, each row in its bucket's file
    in the order given; ``[(lo_i, hi_i, path_i)]`` in the buckets' order. A file of one
    bucket holds its rows as they are, a file of several also each row's bucket."""
    pa = require("pyarrow")

    width = max(1, math.ceil((hi - lo) / max_open))
    edges = list(range(lo, hi, width)) + [hi]
    parts = [(a, b, folder / f"bucket-{a}-{b}.arrow") for a, b in itertools.pairwise(edges)]
    wide = schema.append(pa.field(_BUCKET, pa.int64()))
    writers = [pa.ipc.new_stream(str(path), schema if b - a == 1 else wide)
               for a, b, path in parts]
    try:
        for piece, labels in pieces:
            if len(parts) == 1:  # one bucket: the rows as they come
                writers[0].write_table(piece)
                continue
            part = (labels - lo) // width  # below max_open: a stable radix sort of 16 bits
            order = np.argsort(part.astype(np.uint16) if len(parts) <= 1 << 16 else part,
                               kind="stable")
            ends = np.cumsum(np.bincount(part, minlength=len(parts)))
            grouped = piece.take(pa.array(order))
            sorted_labels = labels[order]
            for i, (a, b, _) in enumerate(parts):
                first = 0 if i == 0 else int(ends[i - 1])
                if ends[i] == first:
                    continue
                rows = grouped.slice(first, int(ends[i]) - first)
                if b - a > 1:
                    rows = rows.append_column(_BUCKET, pa.array(sorted_labels[first:ends[i]]))
                writers[i].write_table(rows)
    finally:
        for w in writers:
            w.close()
    return parts


def _labelled_rows(path: Path) -> Iterator[tuple[Any, np.ndarray]]:
    """The batches of a file of several buckets, as ``(table, buckets)``; the file is
    removed once read."""
    pa = require("pyarrow")

    try:
        with pa.OSFile(str(path)) as f:
            for batch in pa.ipc.open_stream(f):
                t = pa.Table.from_batches([batch])
                labels = t.column(_BUCKET).to_numpy().astype(np.int64)
                yield t.drop_columns([_BUCKET]), labels
    finally:
        path.unlink(missing_ok=True)


def _key_of(table: Any, keys: list, i: int) -> tuple:
    """Row ``i``'s sort key: per key column, missing (1, last) and the value."""
    out: tuple = ()
    for c in keys:
        v = table.column(c)[i].as_py()
        out += (v is None, "" if v is None else v)
    return out


class _Run:
    """One sorted run in a file, read a batch at a time (:attr:`buf`, a pyarrow Table)."""

    def __init__(self, path: Path) -> None:
        pa = require("pyarrow")
        self.file = pa.OSFile(str(path))
        self.reader = pa.ipc.open_stream(self.file)
        self.done, self.buf = False, self.reader.schema.empty_table()
        self.load()

    def load(self) -> None:
        pa = require("pyarrow")
        try:
            batch = self.reader.read_next_batch()
        except StopIteration:
            self.done = True
            self.file.close()
            return
        self.buf = pa.Table.from_batches([batch])


def _sorted(table: Any, keys: list) -> Any:
    """Rows sorted stably by the key columns (text: code point order; missing last): the
    in-memory rule (:func:`dpfix.release.order.text_order`); or by a column of
    :func:`order_words` (``keys`` ``[WORD]``)."""
    if table.num_rows < 2:
        return table
    return table.take(_key_order([table.column(c) for c in keys]))


def _key_order(columns: list) -> np.ndarray:
    """The stable sort of rows by their key columns: text (:func:`text_order`) or one
    column of :func:`order_words` (:func:`dpfix.release.order.integer_order`)."""
    pa = require("pyarrow")
    if len(columns) == 1 and columns[0].type == pa.uint64():
        return integer_order(columns[0].to_numpy())
    return text_order(columns)


#: The column of :func:`order_words` beside a numeric key's rows (removed before writing).
WORD = "__dpfix_order_word"


def order_words(values: Any) -> np.ndarray:
    """Unsigned 64-bit words whose order is the in-memory order of a numeric key column (as
    pandas reads it: :func:`dpfix.io.writing.round_trip`): integers by value, floats by
    value with ``-0.0`` equal to ``0.0`` and NaN or missing last (all alike), as numpy's
    sort puts them.

    Examples
    --------
    >>> import pyarrow as pa
    >>> w = order_words(pa.array([1.5, None, -2.0, float("nan"), -0.0, 0.0]))
    >>> np.argsort(w, kind="stable").tolist()
    [2, 4, 5, 0, 1, 3]
    >>> np.argsort(order_words(pa.array([3, -1, 2**62]))).tolist()
    [1, 0, 2]
    """
    pa = require("pyarrow")
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if pa.types.is_integer(values.type):  # no missing cell: those became floats
        a = values.to_numpy()
        if pa.types.is_unsigned_integer(values.type):
            return a.astype(np.uint64)
        return a.astype(np.int64).view(np.uint64) ^ np.uint64(1 << 63)
    a = values.to_numpy(zero_copy_only=False).astype(np.float64) + 0.0  # -0.0 is 0.0
    bits = a.view(np.uint64)
    words = np.where(bits >> np.uint64(63), ~bits, bits | np.uint64(1 << 63))
    words[np.isnan(a)] = np.uint64(2**64 - 1)
    return words


def merge_runs(paths: list[Path], keys: list, max_open: int = MAX_OPEN_FILES,
               batch: int = 1 << 14) -> Iterator[Any]:
    """The rows of the sorted runs ``paths`` (pyarrow Tables), merged stably: by key, equal
    keys in the runs' order then each run's order; one batch per run in memory.

    At most ``max_open`` runs are read at once: more are first merged ``max_open``
    consecutive runs at a time into new runs (beside the first, which are then removed),
    until ``max_open`` or fewer are left (their batches of ``batch`` rows). A merge of
    consecutive runs is stable, so this is the merge of them all.

    At each step ``f`` is the least last key of the buffers of the runs that have more to
    read, and ``j`` the first such run whose buffer ends at ``f``. Every row below ``f``
    may go (no run holds a smaller one still unread); a row at ``f`` may go when its run
    comes at most ``j`` in order (the runs before ``j`` hold no unread row at ``f``, run
    ``j``'s unread ones come after its buffered ones). Run ``j``'s buffer empties, so every
    step reads a batch or ends.

    Examples
    --------
    >>> import pyarrow as pa
    >>> with scratch_folder() as d:
    ...     paths = []
    ...     for i, ks in enumerate([["a", "b", "b"], ["a", "b", "c"]]):
    ...         t = pa.table({"k": ks, "run": [i] * 3})
    ...         with pa.ipc.new_stream(str(d / f"r{i}"), t.schema) as w:
    ...             w.write_table(t, max_chunksize=1)
    ...         paths.append(d / f"r{i}")
    ...     out = pa.concat_tables(merge_runs(paths, ["k"])).to_pydict()
    >>> list(zip(out["k"], out["run"]))
    [('a', 0), ('a', 1), ('b', 0), ('b', 0), ('b', 1), ('c', 1)]
    """
    if max_open < 2:
        raise ValueError(f"max_open: at least 2 files, got {max_open}")
    paths, level = list(paths), 0
    while len(paths) > max_open:
        paths = [_merged_run(paths[i:i + max_open], keys, f"{level}-{i}", batch)
                 for i in range(0, len(paths), max_open)]
        level += 1
    yield from _merge(paths, keys)


def _merged_run(paths: list[Path], keys: list, name: str, batch: int) -> Path:
    """The stable merge of the runs ``paths`` written as one run beside them (batches of
    ``batch`` rows); ``paths`` are removed. One run is itself."""
    pa = require("pyarrow")

    if len(paths) == 1:
        return paths[0]
    with pa.OSFile(str(paths[0])) as f:
        schema = pa.ipc.open_stream(f).schema
    out = paths[0].parent / f"merged-{name}.arrow"
    with pa.ipc.new_stream(str(out), schema) as w:
        for table in _merge(paths, keys):
            w.write_table(table, max_chunksize=batch)
    for p in paths:
        p.unlink()
    return out


def _merge(paths: list[Path], keys: list) -> Iterator[Any]:
    """:func:`merge_runs` of runs all read at once: at each step the rows that may go are
    a head of each run's buffer (found by bisection), sorted together stably (the runs'
    order, then each run's)."""
    pa = require("pyarrow")

    runs = [_Run(p) for p in paths]
    while True:
        for r in runs:
            while not r.done and r.buf.num_rows == 0:
                r.load()
        pending = [i for i, r in enumerate(runs) if not r.done]
        if not pending:
            rest = [r.buf for r in runs if r.buf.num_rows]
            if rest:
                yield _sorted(pa.concat_tables(rest), keys)
            return
        last = {i: _key_of(runs[i].buf, keys, runs[i].buf.num_rows - 1) for i in pending}
        f = min(last.values())
        j = next(i for i in pending if last[i] == f)
        heads = []
        for i, r in enumerate(runs):
            find = bisect.bisect_right if i <= j else bisect.bisect_left
            k = find(range(r.buf.num_rows), f, key=lambda x, t=r.buf: _key_of(t, keys, x))
            if k:
                heads.append(r.buf.slice(0, k))
                r.buf = r.buf.slice(k)
        yield _sorted(pa.concat_tables(heads), keys)


# ------------------------------------------------------------------ the release
@dataclass
class Streamed:
    """What :func:`stream_csv` returns: the table as read (no rows kept), the per-column
    results (``drawn_histogram`` and ``confidential`` filled in), the columns written."""

    table: TableInput
    results: list
    others: list
    read_seconds: float
    histograms: dict = field(default_factory=dict)
    buckets: int = 1
    bucket_rows: int = BUCKET_ROWS

    def statement(self) -> dict:
        """The public report's ``streamed`` entry: how the file was read and shuffled (a
        function of ``N`` and the parameters only)."""
        return {"passes": 2, "block_rows": DRAW_CHUNK, "buckets": self.buckets,
                "bucket_rows": self.bucket_rows,
                "rule": "the file read twice, a block of rows at a time (never all its rows "
                        "in memory): pass 1 its histograms (stage 1, N, T), pass 2 its rows "
                        "drawn and written in the release's order (K buckets shuffled, or "
                        "buckets by key range shuffled and sorted, in a private scratch "
                        "folder); the file checked "
                        "unchanged between the passes (docs/release.md, section 7)"}


class _Histograms:
    """Pass 1: each column's histogram, its counts above ``cap`` counted at ``cap``."""

    def __init__(self, caps: list[int]) -> None:
        self.caps = caps
        self.eta = [np.zeros(c + 1, dtype=np.int64) for c in caps]

    def add(self, start: int, counts: list[np.ndarray]) -> None:
        """Count a block's counts; the block at ``start`` 0 begins the file afresh (a
        reader may start over: :meth:`dpfix.io.tables.CsvBlocks.scan`)."""
        if start == 0:
            self.eta = [np.zeros(c + 1, dtype=np.int64) for c in self.caps]
        for k, c in enumerate(counts):
            self.eta[k] += np.bincount(np.minimum(c, self.caps[k]), minlength=self.caps[k] + 1)


def _cap(upper: Any) -> int:
    """The histogram's last value: above ``upper`` (top-coded, counted); a bound chosen
    privately: above the largest bound any constructor may choose (the bound's scores need
    no more)."""
    return DEFAULT_MAX_UPPER + 1 if isinstance(upper, PrivateBound) else int(upper) + 1


class _Writer:
    """The output CSV, written a table of rows at a time as the in-memory path writes it
    whole (pandas' ``to_csv``: :func:`dpfix.io.writing.csv_rows`). With ``typed`` (the
    rows of a Parquet table, :func:`_Converter`), each table of rows is written by pandas'
    ``to_csv`` itself, its columns as the in-memory path's (:func:`_Converter`)."""

    def __init__(self, dest: Path, layout: dict, escape: bool,
                 typed: _Converter | None = None) -> None:
        self.handle = open(dest, "wb")
        if layout["bom"]:
            self.handle.write(codecs.BOM_UTF8)
        self.layout, self.escape, self.typed = layout, escape, typed
        self.tally: dict = {}
        self.head_tally: dict = {}

    def header(self, names: list[str]) -> None:
        pd = require("pandas")
        heads = pd.DataFrame({"header": names})
        guard_formulas(heads, ["header"], ["the header"], self.escape, self.head_tally)
        self.handle.write(pd.DataFrame(columns=list(heads["header"])).to_csv(
            index=False, sep=self.layout["sep"],
            lineterminator=self.layout["newline"]).encode("utf-8"))

    def rows(self, table: Any, others: list, names: list) -> None:
        if self.typed is not None:
            frame = self.typed(table).to_pandas()
            guard_formulas(frame, others, names, self.escape, self.tally)
            self.handle.write(frame.to_csv(header=False, index=False, sep=self.layout["sep"],
                                           lineterminator=self.layout["newline"]).encode())
            return
        columns = []
        for c in table.column_names:
            values = table.column(c)
            if c in others:
                values, bad = guard_formula_array(values, self.escape)
                if bad and not self.escape:
                    name = names[others.index(c)]
                    self.tally[name] = self.tally.get(name, 0) + bad
            columns.append(values)
        self.handle.write(csv_rows(columns, self.layout["sep"], self.layout["newline"]))

    def close(self, complete: bool = True) -> None:
        """Close the file; the formula warnings only for a table written whole."""
        self.handle.close()
        if complete:
            warn_formulas(self.tally, stacklevel=5)
            warn_formulas(self.head_tally, stacklevel=5)


class _Converter:
    """A table of the pipeline's rows as the in-memory path writes it: the privatized
    columns int64, a Parquet table's other columns as they come back from pandas
    (:func:`dpfix.io.writing.round_trip`), a CSV table's text (to Parquet: int64 where
    every cell of the column is a plain integer, :data:`dpfix.io.writing.INTEGER_TEXT`)."""

    def __init__(self, schema: Any, types: list) -> None:
        pa = require("pyarrow")
        self.schema = pa.schema([(schema.field(j).name, t) for j, t in enumerate(types)])

    def __call__(self, table: Any) -> Any:
        pa = require("pyarrow")
        return pa.Table.from_arrays(
            [round_trip(table.column(j), self.schema.field(j).type)
             for j in range(table.num_columns)], schema=self.schema)


class _ParquetWriter:
    """The output Parquet file, its rows converted (:class:`_Converter`) and written as
    they come, a row group of at least :data:`_ROW_GROUP` rows at a time (the last may be
    shorter): the file :func:`dpfix.io.writing.write_parquet` writes of the same table,
    read back (``pyarrow.parquet.read_table``) as the same table."""

    def __init__(self, dest: Path, names: list, convert: _Converter) -> None:
        pq = require("pyarrow.parquet")
        pa = require("pyarrow")
        self.convert = convert
        self.schema = pa.schema([(n, f.type) for n, f in zip(names, convert.schema,
                                                             strict=True)])
        self.writer = pq.ParquetWriter(str(dest), self.schema)
        self.pending: list = []
        self.have = 0

    def header(self, names: list[str]) -> None:
        return None  # the schema's

    def rows(self, table: Any, others: list, names: list) -> None:
        self.pending.append(self.convert(table))
        self.have += table.num_rows
        if self.have >= _ROW_GROUP:
            self.flush()

    def flush(self) -> None:
        pa = require("pyarrow")
        if self.pending:
            joined = pa.concat_tables(self.pending).rename_columns(self.schema.names)
            self.writer.write_table(joined, row_group_size=max(1, joined.num_rows))
        self.pending, self.have = [], 0

    def close(self, complete: bool = True) -> None:
        try:
            if complete:
                self.flush()
        finally:
            self.writer.close()


#: The fewest rows of a row group of a streamed Parquet output (but the last).
_ROW_GROUP = 1 << 20


class _IntegerText:
    """Pass 1 of a CSV table written to Parquet: which of its other columns hold plain
    integers only (:data:`dpfix.io.writing.INTEGER_TEXT`), as the in-memory path writes
    them (int64)."""

    def __init__(self, blocks: CsvBlocks, then: Any = None) -> None:
        self.blocks, self.then = blocks, then
        self.plain: dict[int, bool] = {}

    def __call__(self, start: int, body: Any) -> None:
        pc = require("pyarrow.compute")
        if start == 0:
            self.plain = {}
        for k in range(len(self.blocks.header)):
            if k in self.blocks.positions or not self.plain.get(k, True):
                continue
            column = body.column(f"f{k}")
            self.plain[k] = bool(pc.all(pc.match_substring_regex(
                column, f"^{INTEGER_TEXT}$")).as_py())
        if self.then is not None:
            self.then(start, body)


def _narrowest(n: int) -> Any:
    """The narrowest unsigned pyarrow type that holds ``0 .. n-1``."""
    pa = require("pyarrow")
    return next((t for t in (pa.uint8(), pa.uint16(), pa.uint32()) if n <= 1 << t.bit_width),
                pa.int64())


def stream_csv(plan: ReleasePlan, dest: Path, *, bucket_rows: int = BUCKET_ROWS,
               scratch: str | Path | None = None, progress: Any = None,
               on_stage: Any = None) -> Streamed:
    """Release the CSV or Parquet file of ``plan`` (its engine ``"stream"``) to the CSV or
    Parquet file ``dest`` (by the suffix of ``plan.output``) in two passes (module
    docstring).

    ``bucket_rows``: a bucket's rows on average; ``scratch``: where the scratch folder goes;
    ``progress``, ``on_stage`` as :func:`dpfix.release.memory.release_in_memory`.
    """
    import time

    pa = require("pyarrow")
    path, sep = input_path(plan.data), getattr(plan.data, "sep", ",")
    names, planned, order, keys = plan.names, plan.columns, plan.order, list(plan.keys)
    uppers = {c.name: c.upper for c in planned}
    seeds = [c.seed for c in planned]
    escape_formulas = plan.output.escape_formulas
    typed, to_parquet = is_parquet(path), is_parquet(plan.output.path)
    start = time.perf_counter()
    blocks: Any
    if typed:  # pass 1 reads the columns of counts (and the first key) only
        blocks = ParquetBlocks(path, names, rows=DRAW_CHUNK)
        blocks.wanted = list(dict.fromkeys(
            [*names, *([keys[0]] if order == "key" and keys[0] in blocks.header else [])]))
    else:
        blocks = CsvBlocks(path, names, sep, rows=DRAW_CHUNK)
    word_type = None  # a numeric key's type as pandas reads it: sorted by its words
    if typed and order == "key" and keys[0] in blocks.header:
        t = blocks.schema.field(keys[0]).type
        if pa.types.is_integer(t) or pa.types.is_floating(t):
            word_type = round_trip_type(t, blocks.null_counts([keys[0]])[keys[0]],
                                        blocks.file.metadata.num_rows)
    ranges: Any = None
    if word_type is not None:
        ranges = _WordRanges(blocks.header.index(keys[0]), word_type)
    elif order == "key":
        ranges = _KeyRanges(blocks, keys[0])
    if ranges is not None:
        blocks.watch = ranges.watch
    plain = _IntegerText(blocks, blocks.watch) if to_parquet and not typed else None
    if plain is not None:
        blocks.watch = plain
    hist = _Histograms([_cap(uppers[n]) for n in names])
    N = blocks.scan(hist.add)
    _unchanged(blocks)
    others = [h for k, h in enumerate(blocks.header) if k not in blocks.positions]
    passed = written_columns(names, plan.keys, plan.keep, others)
    read_seconds = time.perf_counter() - start
    results = []
    for k, name in enumerate(names):
        results.append(privatize(
            None, planned[k].eps, plan.options, upper=uppers[name], histogram=hist.eta[k],
            seed=seeds[k], delta=planned[k].delta, draw=False,
            on_stage=None if on_stage is None else (lambda s, n=name: on_stage(n, s, N))))
    layout = {"sep": sep, "newline": blocks.newline, "bom": blocks.bom}
    columns = [(k, h) for k, h in enumerate(blocks.header)
               if k in blocks.positions or h in passed]
    privatized = dict(zip(blocks.positions, range(len(names)), strict=True))
    out_names = [h for _, h in columns]
    stats = [_Stats(r.n) for r in results]
    sources = [stage2_source(s) for s in seeds]
    K = 1 if order == "input" else max(1, math.ceil(N / bucket_rows))

    again = _Histograms(hist.caps)  # pass 2's histograms: pass 1's, or the file changed

    schema = pa.schema([(f"c{j}", _narrowest(results[privatized[k]].n) if k in privatized
                         else blocks.schema.field(k).type if typed else pa.string())
                        for j, (k, _) in enumerate(columns)])
    convert = None
    if typed or to_parquet:
        nulls = blocks.null_counts([h for k, h in columns if k not in privatized]) \
            if typed else {}
        types = [pa.int64() if k in privatized else
                 round_trip_type(schema.field(j).type, nulls[h], N) if typed else
                 pa.int64() if plain is not None and plain.plain.get(k, False) else
                 round_trip_type(pa.string(), 0, N)
                 for j, (k, h) in enumerate(columns)]
        bad = [h for (_, h), t in zip(columns, types, strict=True) if t is None]
        if bad:
            raise ValueError(f"column {bad[0]!r}: a streamed release writes columns of "
                             "integers, floats, booleans and text only; release it in memory")
        convert = _Converter(schema, types)
    if typed:
        blocks.wanted = out_names
    sort_by = [f"c{out_names.index(c)}" for c in keys]
    if word_type is not None:
        if len(keys) > 1:
            raise ValueError("keys: a streamed release sorts by one numeric key, or by text "
                             "keys; release it in memory")
        schema = schema.append(pa.field(WORD, pa.uint64()))
        sort_by = [WORD]
        at = out_names.index(keys[0])

    def frames() -> Iterator[Any]:
        rows = 0
        for first, body in _read_again(blocks, N):
            try:
                counts = blocks.counts(body, first)
            except ValueError:  # a count pass 1 read: the file changed
                _unchanged(blocks)
                raise
            again.add(first, counts)
            rows = first + body.num_rows
            drawn = []
            for k, r in enumerate(results):
                d = np.minimum(counts[k], r.n - 1)
                out = np.asarray(r.stage2.sample(d, sources[k]), dtype=np.int64)
                stats[k].add(out, d, counts[k])
                drawn.append(out)
                if progress is not None:
                    progress(names[k], len(d))
            rows_of = [pa.array(drawn[privatized[k]].astype(schema.field(j).type.to_pandas_dtype()))
                       if k in privatized
                       else body.column(f"f{k}")  # as read
                       for j, (k, _) in enumerate(columns)]
            if word_type is not None:
                rows_of.append(pa.array(order_words(round_trip(rows_of[at], word_type))))
            yield pa.Table.from_arrays(rows_of, schema=schema)
        _unchanged(blocks, rows, N)
        for k, name in enumerate(names):
            if not np.array_equal(again.eta[k], hist.eta[k]):
                _unchanged(blocks, what=f"pass 2 read other counts in column {name!r}")

    writer: Any = _ParquetWriter(dest, out_names, convert) if to_parquet else \
        _Writer(dest, layout, escape_formulas, convert if typed else None)
    try:
        writer.header(out_names)
        kept_cols = [f"c{j}" for j, (k, _) in enumerate(columns) if k not in privatized]
        kept_names = [str(h) for k, h in columns if k not in privatized]
        with scratch_folder(scratch) as folder:
            for rows in _ordered(frames(), order, K, seeds[0], folder, schema, sort_by,
                                 bucket_rows, ranges):
                if word_type is not None:
                    rows = rows.drop_columns([WORD])
                writer.rows(rows, kept_cols, kept_names)
    except BaseException:
        writer.close(complete=False)
        raise
    writer.close()
    for k, r in enumerate(results):
        r.drawn_histogram = stats[k].hist
        r.confidential = stats[k].confidential(hist.eta[k], r.n, N)
    if typed:
        table = TableInput(Path(path), "parquet", None, col=names[0],
                           privatized=[(n, n, None) for n in names])
    else:
        table = TableInput(Path(path), "csv", None, col=blocks.positions[0], bom=blocks.bom,
                           newline=blocks.newline, sep=sep,
                           privatized=[(n, p, None) for n, p in zip(names, blocks.positions,
                                                                    strict=True)])
    return Streamed(table, results, others, read_seconds,
                    {n: topcode_histogram(hist.eta[k], r.n - 1)[0]
                     for k, (n, r) in enumerate(zip(names, results, strict=True))},
                    K, bucket_rows)


class InputChanged(Error, ValueError):
    """The CSV or Parquet file of a streamed release changed between its two passes (it was appended
    to, truncated, rewritten or replaced): pass 2 would draw rows that stage 1 and ``N``
    never saw, so nothing is written."""


def _unchanged(blocks: CsvBlocks, rows: int | None = None, N: int | None = None,
               what: str | None = None) -> None:
    """Raise :class:`InputChanged` if the file is not the one pass 1 read: another file
    at its path, another size or modification time (:meth:`CsvBlocks.changed`), pass 2
    read another number of ``rows`` than pass 1's ``N``, or ``what`` else differs."""
    what = blocks.changed() or what
    if what is None and rows is not None and rows != N:
        what = (f"pass 2 read more rows than pass 1's {N}" if rows > N else
                f"pass 2 read {rows} rows, pass 1 {N}")
    if what is not None:
        raise InputChanged(f"input file {blocks.path} changed while the streamed release "
                           f"read it ({what}); nothing written: release a file that nothing "
                           "writes to meanwhile (a copy)")


def _read_again(blocks: CsvBlocks, N: int) -> Iterator[tuple[int, Any]]:
    """Pass 2's blocks; a block beyond pass 1's ``N`` rows, or a file the reader now cannot
    read, is the file changed (:class:`InputChanged`)."""
    reader = blocks.blocks()
    while True:
        try:
            first, body = next(reader)
        except StopIteration:
            return
        except (ValueError, OSError):  # pyarrow's errors of a file cut or rewritten
            _unchanged(blocks)
            raise
        if first + len(body) > N:
            _unchanged(blocks, first + len(body), N)
        yield first, body


class _Stats:
    """Pass 2: the output histogram and the realised errors' sums (confidential)."""

    def __init__(self, n: int) -> None:
        self.hist = np.zeros(n, dtype=np.int64)
        self.abs = self.squared = 0
        self.abs_true = self.squared_true = 0.0

    def add(self, out: np.ndarray, d: np.ndarray, true: np.ndarray) -> None:
        self.hist += np.bincount(out, minlength=self.hist.size)
        diff = out - d
        self.abs += int(np.abs(diff).sum())
        self.squared += int((diff * diff).sum())
        gap = (out - true).astype(float)
        self.abs_true += float(np.abs(gap).sum())
        self.squared_true += float((gap ** 2).sum())

    def confidential(self, eta: np.ndarray, n: int, N: int) -> dict:
        return {"eta": topcode_histogram(eta, n - 1)[0], "abs": self.abs / N,
                "squared": self.squared / N, "abs_true": self.abs_true / N,
                "squared_true": self.squared_true / N}


class _KeyRanges:
    """Pass 1: what the key order's buckets by key range need of the first key column.

    The bytes every cell shares at its start (``common``), and a sample of cells (every
    block's rows at a fixed stride: no randomness). With them, :meth:`labels` gives each
    row a bucket by the 8 bytes after the common ones (:func:`dpfix.release.order.key_window`),
    against splitters at the sample's quantiles: a non-decreasing function of the key, so
    equal keys share a bucket and the buckets come in key order. The splitters balance the
    buckets only; the output does not depend on them. Not usable (``usable`` False) with
    a zero byte in a key (the padding rule fails).
    """

    #: Cells of a block in the sample (at most).
    SAMPLE = 2048

    def __init__(self, blocks: CsvBlocks, key: str) -> None:
        self.blocks, self.key = blocks, key
        self.reset()

    def reset(self) -> None:
        self.common: bytes | None = None
        self.usable, self.samples, self.splitters = True, [], None

    def watch(self, start: int, body: Any) -> None:
        pa = require("pyarrow")
        if start == 0:
            self.reset()
        if not self.usable:
            return
        if self.key not in self.blocks.header:
            self.usable = False
            return
        column = body.column(f"f{self.blocks.header.index(self.key)}").combine_chunks()
        if not pa.types.is_string(column.type) or column.null_count or \
                (_text_bytes(column) == 0).any():
            self.usable = False
            return
        if self.common is None:
            self.common = column[0].as_py().encode()
        if self.common:
            shared = (key_bytes(column, 0, len(self.common)) ==
                      np.frombuffer(self.common, dtype=np.uint8)).all(axis=0)
            self.common = self.common[:int(np.argmin(shared)) if not shared.all() else None]
        step = max(1, len(column) // self.SAMPLE)
        self.samples.append(column.take(pa.array(np.arange(0, len(column), step))))

    def plan(self, K: int) -> int:
        """Splitters for ``K`` buckets (fewer when the sample's words repeat); the number
        of buckets."""
        pa = require("pyarrow")
        words = np.sort(key_window(pa.concat_arrays(self.samples), len(self.common)))
        self.splitters = np.unique(words[(np.arange(1, K) * len(words)) // K])
        return len(self.splitters) + 1

    def labels(self, column: Any) -> np.ndarray:
        return np.searchsorted(self.splitters, key_window(column, len(self.common)),
                               side="right").astype(np.int64)


class _WordRanges:
    """Pass 1 of a numeric key (:func:`order_words`): a sample of its words (every block's
    rows at a fixed stride), whose quantiles split the words into buckets; the words are
    non-decreasing in the key, so equal keys share a bucket and the buckets come in key
    order (:class:`_KeyRanges`' interface)."""

    SAMPLE = _KeyRanges.SAMPLE

    def __init__(self, position: int, key_type: Any) -> None:
        self.position, self.key_type = position, key_type
        self.usable, self.samples, self.splitters = True, [], None

    def watch(self, start: int, body: Any) -> None:
        if start == 0:
            self.samples = []
        words = order_words(round_trip(body.column(f"f{self.position}"), self.key_type))
        # a copy: a view would keep the block's words (memory growing with the file)
        self.samples.append(words[::max(1, len(words) // self.SAMPLE)].copy())

    def plan(self, K: int) -> int:
        words = np.sort(np.concatenate(self.samples))
        self.splitters = np.unique(words[(np.arange(1, K) * len(words)) // K])
        return len(self.splitters) + 1

    def labels(self, column: Any) -> np.ndarray:
        return np.searchsorted(self.splitters, column.to_numpy(), side="right").astype(np.int64)


def _text_bytes(column: Any) -> np.ndarray:
    """The UTF-8 bytes of a pyarrow text column's cells."""
    offsets, data = text_buffers(column)
    return data[offsets[0]:offsets[-1]]


def _ordered(tables: Iterator[Any], order: str, K: int, seed: Any, folder: Path,
             schema: Any, keys: list, bucket_rows: int,
             ranges: _KeyRanges | _WordRanges | None = None) -> Iterator[Any]:
    """The output's rows (pyarrow Tables of ``schema``) in the release's order (module
    docstring)."""
    if order == "input":
        yield from tables
        return
    pa = require("pyarrow")
    source = order_source(seed)
    if order == "key" and K > 1 and ranges is not None and ranges.usable:
        buckets = ranges.plan(K)
        sizes = np.zeros(buckets, dtype=np.int64)

        def labelled() -> Iterator[tuple[Any, np.ndarray]]:
            for t in tables:
                labels = ranges.labels(t.column(keys[0]).combine_chunks())
                sizes[:] += np.bincount(labels, minlength=buckets)
                yield t, labels

        def ordered(path: Path) -> Any:
            bucket = _read_run(path)
            perm = source.permutation(bucket.num_rows)
            keyed = [bucket.column(c).take(pa.array(perm)) for c in keys]
            return bucket.take(pa.array(perm[_key_order(keyed)]))

        # the next bucket read, shuffled and sorted by one worker while this one is
        # written: the draws still one after the other, in the buckets' order
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as worker:
            ahead = None
            for b, path in _bucket_files(labelled(), buckets, folder, schema, MAX_OPEN_FILES):
                if sizes[b] > _LARGEST_BUCKET * bucket_rows:  # a key range too large: merged
                    if ahead is not None:
                        yield ahead.result()
                        ahead = None
                    yield from _sorted_externally(_batches(path), sizes[b], source, folder,
                                                  schema, keys, bucket_rows, str(b))
                    continue
                job = worker.submit(ordered, path)
                if ahead is not None:
                    yield ahead.result()
                ahead = job
            if ahead is not None:
                yield ahead.result()
        return
    buckets = external_shuffle(tables, K, source, folder, schema, MAX_OPEN_FILES)
    if order == "shuffled":
        yield from buckets
        return
    if K == 1:
        yield _sorted(next(buckets), keys)
        return
    yield from _sorted_runs(buckets, K, folder, schema, keys, bucket_rows, "")


#: A bucket of the key order's ranges with more than this many times ``bucket_rows`` rows
#: (many rows of one key, or of keys alike in their first bytes) is sorted as the rows of
#: shuffled buckets are: sorted runs merged.
_LARGEST_BUCKET = 4


def _sorted_externally(tables: Iterator[Any], N: int, source: Any, folder: Path, schema: Any,
                       keys: list, bucket_rows: int, name: str) -> Iterator[Any]:
    """The rows of ``tables`` (``N`` of them) sorted stably by ``keys`` after a uniform
    shuffle: the external shuffle's buckets sorted and merged."""
    K = max(1, math.ceil(N / bucket_rows))
    inner = folder / f"range-{name}"  # its own files beside the ranges' buckets
    inner.mkdir()
    buckets = external_shuffle(tables, K, source, inner, schema, MAX_OPEN_FILES)
    yield from _sorted_runs(buckets, K, inner, schema, keys, bucket_rows, "")
    shutil.rmtree(inner, ignore_errors=True)


def _sorted_runs(buckets: Iterator[Any], K: int, folder: Path, schema: Any, keys: list,
                 bucket_rows: int, name: str) -> Iterator[Any]:
    """Each bucket sorted stably into a run file, the runs merged stably."""
    pa = require("pyarrow")
    batch = max(1024, bucket_rows // min(K, MAX_OPEN_FILES))
    paths = []
    for i, b in enumerate(buckets):
        paths.append(folder / f"run-{name}{i}.arrow")
        with pa.ipc.new_stream(str(paths[-1]), schema) as w:
            w.write_table(_sorted(b, keys), max_chunksize=batch)
    yield from merge_runs(paths, keys, MAX_OPEN_FILES, batch=batch)


def release_streamed(plan: ReleasePlan, *, charge: Any = None, staged: Any = None,
                     progress: Any = None, on_stage: Any = None,
                     bucket_rows: int = BUCKET_ROWS,
                     scratch: str | Path | None = None) -> Release | tuple[Release, Confidential]:
    """Execute ``plan`` (its engine ``"stream"``): its CSV or Parquet file streamed to its
    CSV or Parquet output (:func:`stream_csv`), never all its rows in memory; the release
    as the in-memory engine makes it, with the report's ``streamed`` entry.

    ``charge``, ``staged``, ``progress`` and ``on_stage`` as
    :func:`dpfix.release.memory.release_in_memory`; ``bucket_rows``: the rows of a bucket
    of the external shuffle on average (its memory); ``scratch``: the folder of the private
    scratch folder (default: the temporary folder). SIGTERM and SIGHUP remove the staged
    output and the scratch folder.
    """
    done: dict = {}
    names, out = plan.names, plan.output

    def write(dest: Path) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # no mechanism built through overflow
            done["s"] = stream_csv(plan, dest, bucket_rows=bucket_rows, scratch=scratch,
                                   progress=progress, on_stage=on_stage)

    with stopped_by_signals():  # SIGTERM, SIGHUP: the staged output and scratch removed
        path = write_output(out.path, write, force=out.force, charge=charge, staged=staged)
    streamed = done["s"]
    table, results = streamed.table, streamed.results
    uppers = {name: r.n - 1 for name, r in zip(names, results, strict=True)}
    passed = [*plan.keys, *plan.keep]
    per_column = [public_report(r, table.select(k), name, uppers[name], None)
                  for k, (name, r) in enumerate(zip(names, results, strict=True))]
    stated = {name: column_uncertainty(r) for name, r in zip(names, results, strict=True)}
    for name, rep in zip(names, per_column, strict=True):
        rep["uncertainty"] = uncertainty_entry(stated[name])
    output_columns = {
        "privatized": names, "key": list(plan.keys), "kept": list(plan.keep),
        "dropped": [c for c in streamed.others if c not in passed],
        "rule": OUTPUT_COLUMNS_RULE}
    public = assemble(per_column, names, composition(plan), plan.unit,
                      {"path": str(table.path), "kind": table.kind}, output_columns, plan.order,
                      ROW_ORDER_RULES[plan.order],
                      extra=None if charge is None else {"ledger": charge.statement()})
    public["streamed"] = streamed.statement()
    layout = {"privatized": [str(n) for n in names], "text": table.kind == "csv",
              "sep": table.sep,
              "newline": table.newline, "bom": table.bom}
    release = Release(None, reports.jsonable(public), layout, path, stated)
    if not plan.confidential:
        return release
    per = [confidential_report(r, table.select(k), uppers[name], dict(r.seconds))
           for k, (name, r) in enumerate(zip(names, results, strict=True))]
    body = confidential_columns(per, names, table, {"read": streamed.read_seconds})
    body["report_version"] = 1
    secret = Confidential(reports.jsonable(body), streamed.histograms,
                          {n: r.topcoded for n, r in zip(names, results, strict=True)})
    return release, secret
