"""Records in a partitioned dataset, bounded with Dask: ``Records(Dataset(source), ...)`` or
``Records(dask_frame, ...)`` (``dpfix privatize --records --engine dask``).

The dataset is shuffled by person (``DataFrame.shuffle(on=person)``: every record of a
person in one partition), then each partition is indexed and bounded on its own with its
own randomness (the secure source, or a child of the seed per partition) and its tally
returned; the tallies of the partitions, disjoint sets of persons, add up
(:meth:`dpfix.release.records.bounding.Tally.merge`). Each person's draw is the one of the
table in memory (docs/records.md, Lemma 2), so the released counts have the same law.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from dpfix.numbers.numeric import require
from dpfix.release.dask import read_dataset
from dpfix.release.inputs import Dataset
from dpfix.release.records.bounding import Tally, tally
from dpfix.release.records.reading import RecordsSchema, arrow_table, check_columns, index_table
from dpfix.sampling.source import random_source

__all__ = ["DaskRecords", "dask_frame"]


def dask_frame(records: Any, wanted: list) -> tuple[Any, str, str]:
    """A Dask DataFrame of the records' columns ``wanted``, its kind and what names it: a
    Dataset's Parquet dataset (a folder or a file) or glob of CSV files (read as text), or
    a Dask DataFrame as given."""
    if isinstance(records, Dataset):
        path = str(records.source)
        ddf, kind = read_dataset(path, "records")
    else:
        ddf, kind, path = records, "dask", "<dask DataFrame>"
    check_columns([str(c) for c in ddf.columns], wanted, "records")
    return ddf[wanted], kind, path


def _partition(frame: Any, schema: RecordsSchema, declared: Any, bound: Any,
               seed: Any) -> Any:
    """One partition (every record of its persons): the histogram of its records per person
    (``bound`` None), or its :class:`~dpfix.release.records.bounding.Tally`."""
    table, _ = arrow_table(frame.reset_index(drop=True), "records")
    if table.num_rows == 0:
        return np.zeros(1, np.int64) if bound is None else None
    ix = index_table(table, schema, declared)
    if bound is None:
        return ix.contribution_histogram()
    C, c, cells = bound
    return tally(ix.row, ix.value, ix.persons, cells, len(schema.names), C, c,
                 random_source(seed))


class DaskRecords:
    """Records of a Dask dataset or DataFrame, shuffled by person and read partition by
    partition (module docstring); the reader of :func:`dpfix.release.records.sources.
    open_records` for them."""

    def __init__(self, records: Any, schema: RecordsSchema, declared: Any,
                 groups_source: str) -> None:
        start = time.perf_counter()
        ddf, kind, path = dask_frame(records, schema.wanted)
        self.parts = ddf.shuffle(on=schema.person).to_delayed()
        self.schema, self.declared = schema, declared
        self.meta = {"kind": kind, "path": path, "groups_source": groups_source,
                     "seconds": {"read": time.perf_counter() - start}}

    def _run(self, bound: Any, seed: Any) -> list:
        dask = require("dask")
        seeds = [None] * len(self.parts) if seed is None else \
            np.random.SeedSequence(seed).spawn(len(self.parts))
        tasks = [dask.delayed(_partition)(part, self.schema, self.declared, bound, s)
                 for part, s in zip(self.parts, seeds, strict=True)]
        return list(dask.compute(*tasks))

    def contribution_histogram(self) -> np.ndarray:
        """``eta[m]``: the persons with ``m`` records among those bounded (``eta[0] = 0``)."""
        etas = self._run(None, None)
        eta = np.zeros(max(e.size for e in etas), dtype=np.int64)
        for e in etas:
            eta[:e.size] += e
        eta[0] = 0
        return eta

    def tally(self, names: list, C: int, c: int, seed: Any) -> Tally:
        """Every partition bounded (``C``, ``c``) with its own randomness and counted."""
        start = time.perf_counter()
        cells = self.declared.num_rows * len(names)
        none = np.zeros(0, np.int64)
        total = tally(none, none, none, cells, len(names), C, c, random_source(None))
        for t in self._run((C, c, cells), seed):
            if t is not None:  # an empty partition: no record, nothing drawn
                total = total.merge(t)
        self.meta["seconds"]["bound"] = time.perf_counter() - start
        return total

    def __enter__(self) -> DaskRecords:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None
