"""Beyond one machine: the pipeline on a partitioned dataset with Dask (issue 12 section 4).

:func:`privatize_dataset` runs the two-stage pipeline on a Parquet dataset
(a folder or a file) or on a glob of CSV files, partition by partition:

1. **stage 1 needs only the histogram**: each partition's counts are parsed
   and validated (:func:`dpfix.io.counts_of`) and counted; the partial
   histograms are summed (one aggregation pass);
2. the histogram goes through :func:`dpfix.pipeline.privatize_counts` with
   ``draw=False``: the public target ``z``, the mechanism and its exact
   stage-2 sampler (:mod:`dpfix.sampling`), nothing drawn;
3. **stage 2 maps every partition independently** with that sampler: the
   secure source (the operating system's CSPRNG) in every task, or with
   ``seed`` a generator per partition spawned from the seed (reproducible given
   the seed and the partitioning; not for release);
4. the output is a Parquet dataset, one file per partition, holding the
   privatized column and the columns named by ``key`` and ``keep`` (the
   others are not private and are dropped). It is written to a temporary
   folder beside ``out`` and renamed at the end: a failing partition leaves no
   output dataset.

The tasks run on whatever Dask scheduler is active: the local threads by
default, a ``dask.distributed`` cluster when a ``Client`` is set up
(``LocalCluster`` on one machine).
"""

from __future__ import annotations

import glob
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from dpfix.io import counts_of
from dpfix.numeric import require
from dpfix.pipeline import PrivatizedCounts, complete_no_split, histogram, privatize_counts
from dpfix.sampling import SeededSource, random_source

__all__ = ["privatize_dataset", "SEED_CHILD"]

#: The partitions' generators are children of ``SeedSequence(seed).spawn(4)[SEED_CHILD]``
#: (the pipeline uses children 0-2 for stage 1, stage 2 and the selector).
SEED_CHILD = 3


def _frames(source: str | Path, columns: list[str]) -> tuple[list[Any], str]:
    """The dataset's partitions as delayed pandas frames (CSV read as text)."""
    dd = require("dask.dataframe")
    text = str(source)
    if Path(text).is_dir() or text.endswith((".parquet", ".pq")):
        ddf = dd.read_parquet(text)
        kind = "parquet"
    else:
        if not glob.glob(text):
            raise FileNotFoundError(f"input: no file matches {text}")
        ddf = dd.read_csv(text, dtype=str, keep_default_na=False, na_filter=False,
                          blocksize=None)
        kind = "csv"
    missing = [c for c in columns if c not in ddf.columns]
    if missing:
        raise ValueError(f"column {missing[0]!r} not found; columns are {list(ddf.columns)}")
    return ddf[[c for c in ddf.columns if c in set(columns)]].to_delayed(), kind


def _histogram(frame: Any, column: str, upper: int) -> tuple[np.ndarray, int]:
    counts = counts_of(frame[column].reset_index(drop=True), column)
    return histogram(counts, upper)


def _draw(frame: Any, column: str, upper: int, sampler: Any, seed: Any, path: str) -> np.ndarray:
    """Privatize one partition, write it to ``path``; its output histogram."""
    pd = require("pandas")

    counts = np.minimum(counts_of(frame[column].reset_index(drop=True), column), upper)
    out = sampler.sample(counts, random_source(None if seed is None else SeededSource(seed)))
    frame = frame.copy()
    frame[column] = pd.Series(out, index=frame.index, dtype="int64")
    frame.to_parquet(path)
    return np.bincount(out, minlength=upper + 1)


def _remap(path: str, column: str, upper: int, remap: Any, seed: Any) -> np.ndarray:
    """Remap one partition's released ``y`` in place (its temporary file); its output histogram."""
    pd = require("pandas")

    frame = pd.read_parquet(path)
    y = frame[column].to_numpy(dtype=np.int64)
    out = remap.apply(y, random_source(None if seed is None else SeededSource(seed)))
    frame[column] = pd.Series(out, index=frame.index, dtype="int64")
    frame.to_parquet(path)
    return np.bincount(out, minlength=upper + 1)


def privatize_dataset(source: str | Path, column: str, epsilon: float, *, upper: int,
                      out: str | Path, key: Any = (), keep: Any = (), seed: int | None = None,
                      **options: Any) -> PrivatizedCounts:
    """Privatize a column of a partitioned dataset with Dask; write a Parquet dataset.

    Parameters
    ----------
    source : str or pathlib.Path
        A Parquet dataset (folder or file) or a glob of CSV files (one
        partition per file).
    column : str
        The column of non-negative integer counts.
    epsilon : float
        The total budget ``eps_t``.
    upper : int
        The public upper bound.
    out : str or pathlib.Path
        The output folder (must not exist): one Parquet file per partition.
    key, keep : sequence of str
        The other columns written (declared public); every other one is dropped.
    seed : int, optional
        Reproducible (stage 1 seeded as in :func:`privatize_counts`, one
        generator per partition): not for release.
    **options
        Passed to :func:`dpfix.pipeline.privatize_counts` (constructor, split,
        framework, ...). The one-stage and hybrid frameworks (docs/no_split.md)
        take two passes over the partitions: each draws its rows' ``y = G(x)``
        into the temporary dataset and returns their histogram; the target is
        estimated from the summed histogram (:func:`dpfix.pipeline.complete_no_split`),
        then each partition's ``y`` is remapped in place. The quantile remap
        sorts all rows together and is refused here.

    Returns
    -------
    PrivatizedCounts
        With ``counts`` and ``joint`` None and the output histogram in
        ``drawn_histogram``.

    Raises
    ------
    ValueError
        Bad input (in any partition), an existing ``out``, or a constructor
        without an exact sampler (the discrete Gaussian).
    """
    dask = require("dask")
    delayed = dask.delayed

    out = Path(out)
    if out.exists():
        raise ValueError(f"out: {out} exists")
    if not out.parent.is_dir():
        raise FileNotFoundError(f"out: folder {out.parent} does not exist")
    key, keep = list(key), list(keep)
    if column in key + keep:
        raise ValueError(f"key/keep: {column!r} is the privatized column")
    framework = options.get("framework", "two-stage")
    if framework != "two-stage" and options.get("remap") == "quantile":
        raise ValueError("remap: the quantile remap sorts all rows together; the Dask engine "
                         "remaps partition by partition: use the northwest remap")
    columns = [*key, *keep, column]
    parts, _ = _frames(source, columns)
    partial = dask.compute(*[delayed(_histogram)(p, column, upper) for p in parts])
    eta = np.sum([h for h, _ in partial], axis=0)
    topcoded = sum(t for _, t in partial)
    result = privatize_counts(None, epsilon, upper=upper, histogram=eta, seed=seed,
                              draw=False, **options)
    if seed is None:
        seeds, again = [None] * len(parts), [None] * len(parts)
    else:  # the second pass of the one-stage and hybrid frameworks gets its own children
        children = np.random.SeedSequence(seed).spawn(SEED_CHILD + 1)[SEED_CHILD]
        seeds = children.spawn(len(parts))
        again = [s.spawn(1)[0] for s in seeds]
    temp = out.parent / f".{out.name}.partial-{uuid.uuid4().hex[:8]}"
    temp.mkdir()
    try:
        drawn = dask.compute(*[
            delayed(_draw)(p, column, upper, result.stage2, s,
                           str(temp / f"part-{i:05d}.parquet"))
            for i, (p, s) in enumerate(zip(parts, seeds, strict=True))])
        if framework != "two-stage":  # drawn was y: estimate the target, then remap
            result = complete_no_split(result, np.sum(drawn, axis=0))
            drawn = dask.compute(*[
                delayed(_remap)(str(temp / f"part-{i:05d}.parquet"), column, upper,
                                result.stage2.remap, s)
                for i, s in enumerate(again)])
        os.rename(temp, out)  # the dataset appears whole, or not at all
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    result.drawn_histogram = np.sum(drawn, axis=0)
    result.topcoded = int(topcoded)
    return result
