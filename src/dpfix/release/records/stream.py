"""Records beyond memory: a CSV file of records read in blocks, each record sent with its
person to a bucket file on disk, each bucket bounded on its own (docs/records.md,
section 2, "Beyond memory").

Bounding needs each person's records together, and a CSV file is in no order. One pass
over the file reads blocks of :data:`BLOCK_BYTES` (pyarrow's streaming reader), indexes
each record (its declared group and value: a record outside them is dropped there, and
counted) and appends every other one, as its person's text, its group's row and its value's
column, to one of ``K`` bucket files in a private scratch folder
(:func:`dpfix.release.stream.scratch_folder`): the bucket ``h(text) mod K``, ``h`` a fixed
hash of the text (the same text, the same bucket), so that all the records of a person
land in one bucket. ``K`` follows the file's size (:data:`BUCKET_BYTES` of the file per
bucket, at most :data:`MAX_BUCKETS` files open at once); a bucket holding more than
:data:`BUCKET_RECORDS` records is split again the same way with another hash (at most
:data:`SPLITS` times: a bucket of one person's records cannot be split). Then each bucket
in turn is read whole, its persons coded and bounded
(:func:`dpfix.release.records.bounding.tally`), and the tallies added: memory holds one
block or one bucket, whatever the file's size.

The law is the one of the records in memory: a person's kept subset is drawn from their own
records only, all in one bucket, with fresh randomness (section 2); which bucket they are
in is a function of their identity, not of the randomness, so the persons' draws are
independent as before and Lemma 2 holds unchanged.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from dpfix.numbers.numeric import require
from dpfix.release.records.bounding import Tally, tally
from dpfix.release.records.reading import (
    RecordsSchema,
    check_columns,
    csv_header,
    csv_options,
    group_index,
    missing_cells,
    no_person,
    person_codes,
    plain,
    value_index,
)
from dpfix.release.stream import scratch_folder
from dpfix.sampling.source import random_source

__all__ = ["StreamedRecords", "BLOCK_BYTES", "BUCKET_BYTES", "BUCKET_RECORDS",
           "MAX_BUCKETS", "SPLITS"]

#: Bytes of the CSV file read and indexed at a time.
BLOCK_BYTES = 1 << 24
#: Bytes of the file per bucket: ``K = ceil(size / BUCKET_BYTES)`` buckets.
BUCKET_BYTES = 1 << 27
#: The most records a bucket holds before it is split again.
BUCKET_RECORDS = 1 << 23
#: The most bucket files written at once.
MAX_BUCKETS = 64
#: How many times a bucket is split again at most.
SPLITS = 3


def _buckets(texts: Any, K: int, level: int) -> np.ndarray:
    """Each text's bucket in ``0 .. K-1``: a fixed 64-bit hash of the text (SipHash with
    the key of ``level``, :func:`pandas.util.hash_array`) modulo ``K``, computed once per
    distinct text of the piece."""
    pa, pc = require("pyarrow"), require("pyarrow.compute")
    if K == 1:
        return np.zeros(len(texts), dtype=np.int64)
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    coded = pc.dictionary_encode(texts)
    words = coded.dictionary.to_numpy(zero_copy_only=False)
    h = require("pandas").util.hash_array(words, hash_key=f"dpfix-records-{level:02d}",
                                          categorize=False)
    per = (h % np.uint64(K)).astype(np.int64)
    return per[coded.indices.to_numpy(zero_copy_only=False)]


class _Writers:
    """``K`` bucket files, each a stream of ``(person, row, value)`` batches."""

    def __init__(self, folder: Path, name: str, K: int) -> None:
        pa = require("pyarrow")
        self.schema = pa.schema([("person", pa.string()), ("row", pa.int32()),
                                 ("value", pa.int32())])
        self.paths = [folder / f"{name}-{b}.arrow" for b in range(K)]
        self.sizes = [0] * K
        self.writers = [pa.ipc.new_stream(str(p), self.schema) for p in self.paths]

    def write(self, person: Any, row: np.ndarray, value: np.ndarray,
              bucket: np.ndarray) -> None:
        pa = require("pyarrow")
        order = np.argsort(bucket, kind="stable")
        ends = np.cumsum(np.bincount(bucket, minlength=len(self.paths)))
        person = person.take(pa.array(order))
        row, value = row[order].astype(np.int32), value[order].astype(np.int32)
        start = 0
        for b, end in enumerate(ends.tolist()):
            if end > start:
                self.writers[b].write_table(pa.table(
                    [person.slice(start, end - start), row[start:end], value[start:end]],
                    schema=self.schema))
                self.sizes[b] += end - start
            start = end

    def close(self) -> None:
        for w in self.writers:
            w.close()


def _read_bucket(path: Path) -> Any:
    pa = require("pyarrow")
    with pa.OSFile(str(path)) as f:
        return pa.ipc.open_stream(f).read_all()


class StreamedRecords:
    """A records CSV file read in blocks and partitioned by person into bucket files
    (module docstring); the reader of :func:`dpfix.release.records.sources.open_records`
    for a CSV file larger than :data:`dpfix.release.records.sources.STREAM_BYTES`.

    Used as a context manager: the bucket files live in a private scratch folder removed
    on leaving it, however (an error, an interruption, SIGTERM, SIGHUP).
    """

    def __init__(self, path: Path, sep: str, schema: RecordsSchema, declared: Any,
                 groups_source: str, scratch: Any = None) -> None:
        self.path, self.sep, self.schema, self.declared = Path(path), sep, schema, declared
        self.scratch = scratch
        self.meta = {"kind": "csv", "path": str(path), "groups_source": groups_source,
                     "seconds": {}}
        self.files: list[tuple[Path, int]] = []
        self.stats: dict = {}
        self._folder: Any = None

    def __enter__(self) -> StreamedRecords:
        self._folder = contextlib.ExitStack()
        folder = self._folder.enter_context(scratch_folder(self.scratch))
        try:
            start = time.perf_counter()
            self._partition(folder)
            self.meta["seconds"]["read"] = time.perf_counter() - start
        except BaseException:
            self._folder.close()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        self._folder.close()

    def _blocks(self) -> Iterator[Any]:
        """The file's blocks as pyarrow Tables of the records' columns."""
        pa = require("pyarrow")
        import pyarrow.csv as pcsv

        wanted = self.schema.wanted
        check_columns(csv_header(self.path, self.sep, "records"), wanted, "records")
        read, parse, convert = csv_options(wanted, self.sep, wanted[1:], BLOCK_BYTES)
        try:
            reader = pcsv.open_csv(self.path, read_options=read, parse_options=parse,
                                   convert_options=convert)
            for batch in reader:
                yield pa.Table.from_batches([batch])
        except (pa.ArrowInvalid, UnicodeDecodeError) as exc:
            raise ValueError(f"records file {self.path}: {' '.join(str(exc).split())}") \
                from None

    def _partition(self, folder: Path) -> None:
        """The pass over the file: each block indexed, its records sent to their buckets;
        then the buckets too large split again."""
        schema = self.schema
        size = self.path.stat().st_size
        K = max(1, min(MAX_BUCKETS, math.ceil(size / BUCKET_BYTES)))
        out = _Writers(folder, "bucket", K)
        read = blocks = dropped_group = dropped_value = missing = 0
        try:
            for block in self._blocks():
                blocks += 1
                n = block.num_rows
                read += n
                row = (group_index(block, self.declared, schema.group_by) if schema.group_by
                       else np.zeros(n, dtype=np.int64))
                value = value_index(block, schema)
                person = plain(block[schema.person])
                lost = missing_cells(person)
                if lost:  # counted over the whole file, refused after the pass
                    missing += lost
                    continue
                dropped_group += int((row < 0).sum())
                dropped_value += int(((row >= 0) & (value < 0)).sum())
                inside = np.flatnonzero((row >= 0) & (value >= 0))
                if inside.size:
                    mine = person.take(require("pyarrow").array(inside))
                    out.write(mine, row[inside], value[inside], _buckets(mine, K, 0))
        finally:
            out.close()
        if missing:
            raise no_person(missing, schema.person)
        files = list(zip(out.paths, out.sizes, strict=True))
        splits = 0
        final: list[tuple[Path, int]] = []
        level = 0
        while files:
            level += 1
            again = []
            for path, n in files:
                if n <= BUCKET_RECORDS or level > SPLITS:
                    final.append((path, n))
                    continue
                splits += 1
                t = _read_bucket(path)
                path.unlink()
                parts = _Writers(folder, f"{path.stem}.{level}",
                                 min(MAX_BUCKETS, math.ceil(n / BUCKET_RECORDS)))
                try:
                    parts.write(t["person"], t["row"].to_numpy(), t["value"].to_numpy(),
                                _buckets(t["person"], len(parts.paths), level))
                finally:
                    parts.close()
                del t
                again += list(zip(parts.paths, parts.sizes, strict=True))
            files = again
        self.files = [(p, n) for p, n in final if n] + [(p, 0) for p, n in final if not n]
        self.stats = {"records": read, "dropped_group_not_declared": dropped_group,
                      "dropped_value_not_declared": dropped_value}
        self.meta["streamed"] = {
            "block_bytes": BLOCK_BYTES, "blocks": blocks, "buckets": sum(1 for _, n in final
                                                                        if n),
            "splits": splits, "largest_bucket_records": max((n for _, n in final), default=0),
            "rule": "read in blocks; every record sent with its person to a bucket file by a "
                    "hash of the person's text; each bucket bounded on its own "
                    "(docs/records.md, section 2)"}

    def _pieces(self) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Each non-empty bucket: its records' rows, values and person codes."""
        for path, n in self.files:
            if not n:
                continue
            t = _read_bucket(path)
            yield (t["row"].to_numpy().astype(np.int64), t["value"].to_numpy().astype(np.int64),
                   person_codes(t["person"], self.schema.person))

    def contribution_histogram(self) -> np.ndarray:
        """``eta[m]``: the persons with ``m`` records among those bounded (``eta[0] = 0``)."""
        eta = np.zeros(1, dtype=np.int64)
        for _, _, persons in self._pieces():
            per = np.bincount(np.bincount(persons))
            if per.size > eta.size:
                eta = np.r_[eta, np.zeros(per.size - eta.size, dtype=np.int64)]
            eta[:per.size] += per
        eta[0] = 0
        return eta

    def tally(self, names: list, C: int, c: int, seed: Any) -> Tally:
        """Every bucket bounded (``C``, ``c``) and counted, one randomness source drawn from
        bucket after bucket (every person's draw from fresh words)."""
        start = time.perf_counter()
        source = random_source(seed)
        cells, V = self.declared.num_rows * len(names), len(names)
        none = np.zeros(0, np.int64)
        total = tally(none, none, none, cells, V, C, c, source)
        for row, value, persons in self._pieces():
            total = total.merge(tally(row, value, persons, cells, V, C, c, source))
        total.stats.update(self.stats)
        self.meta["seconds"]["bound"] = time.perf_counter() - start
        return total
