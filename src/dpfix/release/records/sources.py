"""Which reader reads a release's records: whole in memory
(:class:`~dpfix.release.records.reading.IndexedRecords`), a CSV file beyond memory in blocks
partitioned by person (:class:`~dpfix.release.records.stream.StreamedRecords`), or a Dask
dataset partition by partition (:class:`~dpfix.release.records.dask.DaskRecords`).

Every reader is a context manager with the same two calls:
``contribution_histogram()`` (``eta[m]``, the persons with ``m`` records among those
bounded: what the choice of ``C`` reads) and ``tally(names, C, c, seed)`` (the records
bounded and counted, :class:`~dpfix.release.records.bounding.Tally`); ``declared`` (the
declared groups) and ``meta`` (the records' kind and path, the groups' source, the
timings) describe what was read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from dpfix.io.tables import is_parquet
from dpfix.release.records.dask import DaskRecords, dask_frame
from dpfix.release.records.reading import (
    Records,
    RecordsSchema,
    declared_groups,
    index_records,
    is_dask,
    no_person,
    source_of,
)
from dpfix.release.records.stream import StreamedRecords

__all__ = ["RECORD_ENGINES", "STREAM_BYTES", "records_engine", "open_records",
           "person_histogram"]

#: The readers of records: in memory, a CSV file streamed, a Dask dataset.
RECORD_ENGINES = ("memory", "stream", "dask")
#: A CSV file of records larger than this is streamed (never read whole).
STREAM_BYTES = 1 << 30


def records_engine(source: Any) -> str:
    """The reader of ``source`` (:data:`RECORD_ENGINES`): a Dask dataset or DataFrame is
    read with Dask, a CSV file larger than :data:`STREAM_BYTES` in blocks, anything else
    whole (a file's size is read, not its content).

    Examples
    --------
    >>> records_engine({"pid": [1]}), records_engine("missing.csv")
    ('memory', 'memory')
    """
    if is_dask(source):
        return "dask"
    path, _ = source_of(source)
    if isinstance(path, (str, Path)) and not is_parquet(path):
        try:
            if Path(path).stat().st_size > STREAM_BYTES:
                return "stream"
        except OSError:  # not there (yet): the reader says so, in one line
            pass
    return "memory"


def open_records(source: Any, schema: RecordsSchema, groups: Any, engine: str | None = None,
                 scratch: Any = None) -> Any:
    """The reader of the records ``source`` for ``schema`` and the declared ``groups`` (read
    and checked first), by ``engine`` (default :func:`records_engine`); ``scratch``: where
    the streamed reader's private scratch folder goes (default: the temporary folder)."""
    declared, groups_source = (declared_groups(groups, schema.group_by, schema.keep)
                               if schema.group_by else (None, "<none>"))
    engine = engine or records_engine(source)
    if engine == "dask":
        return DaskRecords(source, schema, declared, groups_source)
    if engine == "stream":
        path, sep = source_of(source)
        return StreamedRecords(Path(path), sep, schema, declared, groups_source, scratch)
    return index_records(source, schema, declared, groups_source)


def person_histogram(records: Records) -> np.ndarray:
    """``eta[m]``: the persons with ``m`` records among all the records (``eta[0] = 0``),
    each person's records counted whatever their group and value."""
    source = records.source
    if is_dask(source):
        column = dask_frame(source, [records.person])[0][records.person]
        missing = int((column.isna() | (column.astype(str) == "")).sum().compute())
        if missing:
            raise no_person(missing, records.person)
        per = column.value_counts().compute().to_numpy()
        eta = np.bincount(per, minlength=1)
        eta[0] = 0
        return eta
    schema = RecordsSchema(records.person, (), None, None, (), ("count",))
    with open_records(source, schema, None) as reader:
        return reader.contribution_histogram()
