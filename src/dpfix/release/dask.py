"""Beyond one machine: the pipeline on a partitioned dataset with Dask.

:func:`privatize_dataset` runs the two-stage pipeline on a Parquet dataset
(a folder or a file) or on a glob of CSV files, partition by partition:

1. **stage 1 needs only the histogram**: each partition's counts are parsed
   and validated (:func:`dpfix.io.counts.counts_of`) and counted; the partial
   histograms are summed (one aggregation pass);
2. the histogram goes through :func:`dpfix.release.frameworks.privatize` with
   ``draw=False``: the public target ``z``, the mechanism and its exact
   stage-2 sampler (:mod:`dpfix.sampling`), nothing drawn;
3. **stage 2 maps every partition independently** with that sampler: the
   secure source (the operating system's CSPRNG) in every task, or with
   ``seed`` a generator per partition spawned from the seed (reproducible given
   the seed and the partitioning; not for release);
4. the output is a Parquet dataset, one file per partition, holding the
   privatized column and the columns named by ``key`` and ``keep`` (the
   others are not private and are dropped) and nothing of the input's
   metadata (no index, no ``attrs``, no schema metadata:
   :func:`dpfix.io.writing.write_parquet`). It is written to a temporary folder
   beside ``out`` and renamed at the end: a failing partition leaves no
   output dataset. The temporary folder's name holds the process id and host
   (:func:`dpfix.io.commit.leftover_tag`): one left by a killed run (SIGKILL) is
   removed by the next run into the same folder (:func:`dpfix.io.commit.remove_stale`);
5. **row order** (``order``): ``"shuffled"`` (default) writes the partitions'
   files in a uniformly random order and the rows of each partition in a
   uniformly random order (:meth:`dpfix.sampling.RandomSource.permutation`,
   secure, or with ``seed`` reproducible); it is not a uniform permutation of
   all rows: which rows share a partition follows the input's partitioning.
   ``"input"`` keeps the input's order. A global sort by key is not done
   (key order per partition is no global order), so ``"key"`` is refused.

The tasks run on whatever Dask scheduler is active: the local threads by
default, a ``dask.distributed`` cluster when a ``Client`` is set up
(``LocalCluster`` on one machine).
"""

from __future__ import annotations

import glob
import os
import shutil
import time
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from dpfix.io import reports
from dpfix.io.commit import leftover_tag, remove_stale
from dpfix.io.counts import counts_of
from dpfix.io.tables import TableInput, is_parquet
from dpfix.io.writing import write_parquet
from dpfix.numbers.deprecation import renamed_keywords
from dpfix.numbers.numeric import require
from dpfix.release.bounds import DEFAULT_MAX_UPPER, PrivateBound
from dpfix.release.frameworks import complete_no_split, histogram, privatize, topcode_histogram
from dpfix.release.options import ReleaseOptions, method_options
from dpfix.release.outputs import (
    Confidential,
    Release,
    column_uncertainty,
    confidential_of,
    uncertainty_entry,
)
from dpfix.release.plan import ReleasePlan
from dpfix.release.report import (
    DATASET_ROW_ORDER_RULES,
    OUTPUT_COLUMNS_RULE,
    assemble,
    composition,
    public_report,
)
from dpfix.release.result import PrivatizedCounts
from dpfix.release.seeds import ORDER, PARTITIONS, seed_child
from dpfix.sampling import SeededSource, random_source

__all__ = ["privatize_dataset", "release_dataset", "read_dataset"]


def read_dataset(source: str | Path, what: str = "input") -> tuple[Any, str]:
    """A Dask DataFrame of a dataset and its kind: a Parquet dataset (a folder or a file,
    ``"parquet"``) or a glob of CSV files read as text, one partition per file (``"csv"``);
    no file matching the glob is one line naming ``what``."""
    dd = require("dask.dataframe")
    text = str(source)
    if Path(text).is_dir() or is_parquet(text):
        return dd.read_parquet(text), "parquet"
    if not glob.glob(text):
        raise FileNotFoundError(f"{what}: no file matches {text}")
    return dd.read_csv(text, dtype=str, keep_default_na=False, na_filter=False,
                       blocksize=None), "csv"


def _frames(source: str | Path, columns: list[str]) -> tuple[list[Any], str]:
    """The dataset's partitions as delayed pandas frames (CSV read as text)."""
    ddf, kind = read_dataset(source)
    missing = [c for c in columns if c not in ddf.columns]
    if missing:
        raise ValueError(f"column {missing[0]!r} not found; columns are {list(ddf.columns)}")
    return ddf[[c for c in ddf.columns if c in set(columns)]].to_delayed(), kind


def _histograms(frame: Any, columns: list[str], uppers: list[int]) -> list[tuple[np.ndarray, int]]:
    """Each column's histogram and top-coded number in one partition."""
    return [histogram(counts_of(frame[c].reset_index(drop=True), c), u)
            for c, u in zip(columns, uppers, strict=True)]


def _source(seed: Any) -> Any:
    return random_source(None if seed is None else SeededSource(seed))


def _drawn(out: np.ndarray, counts: np.ndarray, upper: int,
           true: np.ndarray) -> tuple[Any, ...]:
    """A partition's output histogram, its sums of ``|out - d|`` and ``(out - d)^2`` (``d``
    top-coded), then of ``|out - x|`` and ``(out - x)^2`` (``x`` the true counts)
    (confidential: for the data holder's report only)."""
    diff = (out - counts).astype(float)
    gap = (out - true).astype(float)
    return np.bincount(out, minlength=upper + 1), float(np.abs(diff).sum()), \
        float((diff ** 2).sum()), float(np.abs(gap).sum()), float((gap ** 2).sum())


def _write(frame: Any, path: str, shuffle: Any) -> None:
    """Write a partition (its columns only, :func:`dpfix.io.writing.write_parquet`); ``shuffle``:
    None keeps its rows' order, else the seed of their permutation (``False``: secure)."""
    if shuffle is not None:
        frame = frame.iloc[_source(shuffle or None).permutation(len(frame))]
    write_parquet(frame.reset_index(drop=True), path)


def _draw(frame: Any, columns: list[str], uppers: list[int], samplers: list[Any],
          seeds: list[Any], path: str, shuffle: Any = None) -> list[tuple[Any, ...]]:
    """Privatize one partition's columns, write it to ``path`` (rows shuffled by
    ``shuffle``, :func:`_write`); for each, :func:`_drawn`."""
    pd = require("pandas")

    frame = frame.copy()
    drawn = []
    for c, u, sampler, seed in zip(columns, uppers, samplers, seeds, strict=True):
        true = counts_of(frame[c].reset_index(drop=True), c)
        counts = np.minimum(true, u)
        out = sampler.sample(counts, _source(seed))
        frame[c] = pd.Series(out, index=frame.index, dtype="int64")
        drawn.append(_drawn(out, counts, u, true))
    _write(frame, path, shuffle)
    return drawn


def _remap(frame: Any, path: str, columns: list[str], uppers: list[int], remaps: list[Any],
           seeds: list[Any], shuffle: Any = None) -> list[tuple[Any, ...]]:
    """Remap every column's released ``y`` in place (the partition's temporary file, rows
    shuffled by ``shuffle``); for each, :func:`_drawn` against the partition's counts
    (``frame``, read again)."""
    pd = require("pandas")

    written = pd.read_parquet(path)
    drawn = []
    for c, u, remap, seed in zip(columns, uppers, remaps, seeds, strict=True):
        true = counts_of(frame[c].reset_index(drop=True), c)
        counts = np.minimum(true, u)
        out = remap.apply(written[c].to_numpy(dtype=np.int64), _source(seed))
        written[c] = pd.Series(out, index=written.index, dtype="int64")
        drawn.append(_drawn(out, counts, u, true))
    _write(written, path, shuffle)
    return drawn


def _order_seeds(order: str, seed: Any, parts: int) -> tuple[np.ndarray, list[Any]]:
    """The files' positions (a permutation of the partitions) and each partition's
    ``shuffle`` argument of :func:`_write` (None for the input's order)."""
    if order == "input":
        return np.arange(parts), [None] * parts
    if seed is None:
        return _source(None).permutation(parts), [False] * parts
    base = seed_child(seed, ORDER)
    kids = base.spawn(parts + 1)
    return _source(kids[-1]).permutation(parts), kids[:-1]


def _partition_seeds(seed: int | None, parts: int) -> tuple[list[Any], list[Any]]:
    """Per partition: the generator of the draw and that of the remap (None: secure)."""
    if seed is None:
        return [None] * parts, [None] * parts
    children = seed_child(seed, PARTITIONS).spawn(parts)
    return children, [s.spawn(1)[0] for s in children]


@renamed_keywords(epsilon="eps", key="keys")
def privatize_dataset(source: str | Path, column: str | list[str], eps: float | list[float],
                      *, upper: int | list[int], out: str | Path, keys: Any = (), keep: Any = (),
                      seed: int | None | list[int | None] = None,
                      delta: float | None | list[float | None] = None,
                      order: str = "shuffled", options: ReleaseOptions | None = None,
                      before_commit: Callable[[], Any] | None = None,
                      **keywords: Any) -> PrivatizedCounts | list[PrivatizedCounts]:
    """Privatize columns of a partitioned dataset with Dask; write a Parquet dataset.

    Parameters
    ----------
    source : str or pathlib.Path
        A Parquet dataset (folder or file) or a glob of CSV files (one
        partition per file).
    column : str or list of str
        The column of non-negative integer counts, or several: each is
        privatized on its own (its own target, mechanism and generators; the
        budgets add up by sequential composition), in the same passes.
    eps : float or list of float
        The budget ``eps_t`` (one per column for several).
    upper : int, PrivateBound or list of them
        The public upper bound (one for all, or one per column), or a bound chosen privately
        (:class:`~dpfix.release.bounds.PrivateBound`) from the summed histogram, top-coded at
        the largest candidate :data:`~dpfix.release.bounds.DEFAULT_MAX_UPPER`.
    out : str or pathlib.Path
        The output folder (must not exist): one Parquet file per partition.
    keys, keep : sequence of str
        The other columns written (declared public); every other one is dropped.
    seed : int or list, optional
        Reproducible (stage 1 seeded as in :func:`dpfix.release.pipeline.privatize_counts`, one
        generator per partition): not for release. One per column for several.
    delta : float or list, optional
        The ``delta`` of an (eps, delta) method (one per column for several).
    order : str
        ``"shuffled"`` (default: the files of the partitions in a uniformly
        random order, the rows of each partition in a uniformly random order;
        with ``seed``, the first column's, reproducible) or ``"input"`` (the
        input's order). ``"key"`` is refused: no global sort is done.
    options : TwoStage, OneStage, NoSplit or Auto, optional
        The method, validated once (:mod:`dpfix.release.options`); or give its keywords.
    before_commit : callable, optional
        Called once every partition is written, just before the dataset is moved into
        place (a ledger's charge is recorded there: no dataset is ever in place without
        it); an exception from it leaves no output dataset.
    **keywords
        The method's keywords of :func:`dpfix.release.pipeline.privatize_counts`
        (constructor, split, framework, ...), when ``options`` is not given. The
        one-stage and hybrid frameworks (docs/no_split.md)
        take two passes over the partitions: each draws its rows' ``y = G(x)``
        into the temporary dataset and returns their histogram; the target is
        estimated from the summed histogram (:func:`dpfix.release.frameworks.complete_no_split`),
        then each partition's ``y`` is remapped in place. The quantile remap
        sorts all rows together and is refused here.

    Returns
    -------
    PrivatizedCounts or list of PrivatizedCounts
        With ``counts`` and ``joint`` None and the output histogram in
        ``drawn_histogram``; a list (in the order of ``column``) for a list.
        ``confidential`` holds the true histogram and the realized count
        errors (derived without noise: for :func:`dpfix.release.report.confidential_report`
        only).

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
    several = not isinstance(column, str)
    columns = list(column) if several else [column]
    k = len(columns)

    def each(value: Any, name: str) -> list:
        if isinstance(value, (list, tuple)):
            if len(value) != k:
                raise ValueError(f"{name}: one per column ({k}), got {len(value)}")
            return list(value)
        return [value] * k

    epsilons, uppers = each(eps, "eps"), each(upper, "upper")
    seeds, deltas = each(seed, "seed"), each(delta, "delta")
    if len(set(columns)) != k:
        raise ValueError(f"column: a column named twice in {columns}")
    keys, keep = list(keys), list(keep)
    for c in columns:
        if c in keys + keep:
            raise ValueError(f"keys/keep: {c!r} is a privatized column")
    if order not in ("shuffled", "input"):
        raise ValueError(f"order: {order!r}: the Dask engine writes the partitions "
                         "independently and does not sort the dataset by key; use 'shuffled' "
                         "or 'input'")
    if options is None:
        options = method_options(**keywords)
    elif keywords:
        raise ValueError(f"options: give the method as options or as keywords, not both "
                         f"({', '.join(sorted(keywords))})")
    framework = options.framework
    if framework != "two-stage" and getattr(options, "remap", None) == "quantile":
        raise ValueError("remap: the quantile remap sorts all rows together; the Dask engine "
                         "remaps partition by partition: use the northwest remap")
    parts, _ = _frames(source, [*keys, *keep, *columns])
    # a bound chosen privately: the histograms top-coded at the largest candidate first
    counted = [DEFAULT_MAX_UPPER if isinstance(u, PrivateBound) else u for u in uppers]
    partial = dask.compute(*[delayed(_histograms)(p, columns, counted) for p in parts])
    results, etas = [], []
    for t in range(k):
        eta = np.sum([hs[t][0] for hs in partial], axis=0)
        topcoded = int(sum(hs[t][1] for hs in partial))
        r = privatize(None, epsilons[t], options, upper=uppers[t], histogram=eta,
                      seed=seeds[t], delta=deltas[t], draw=False)
        if isinstance(uppers[t], PrivateBound):  # the bound chosen: top-coded at it
            uppers[t] = r.n - 1
            eta, more = topcode_histogram(eta, uppers[t])
            topcoded += more
        r.topcoded = topcoded
        results.append(r)
        etas.append(eta)
    # per partition, one generator list per pass: column t's own children of its seed
    pairs = [_partition_seeds(s, len(parts)) for s in seeds]
    draw_seeds = [[pairs[t][0][i] for t in range(k)] for i in range(len(parts))]
    remap_seeds = [[pairs[t][1][i] for t in range(k)] for i in range(len(parts))]
    positions, shuffles = _order_seeds(order, seeds[0], len(parts))
    two_stage = framework == "two-stage"  # else the rows are shuffled by the second pass
    remove_stale(out.parent, f".{out.name}.partial-")  # the partial datasets of killed runs
    temp = out.parent / f".{out.name}.partial-{leftover_tag()}-{uuid.uuid4().hex[:8]}"
    temp.mkdir()
    paths = [str(temp / f"part-{int(positions[i]):05d}.parquet") for i in range(len(parts))]
    try:
        drawn = dask.compute(*[
            delayed(_draw)(p, columns, uppers, [r.stage2 for r in results], draw_seeds[i],
                           paths[i], shuffles[i] if two_stage else None)
            for i, p in enumerate(parts)])
        if not two_stage:  # drawn was y: estimate the targets, then remap
            results = [complete_no_split(r, np.sum([d[t][0] for d in drawn], axis=0))
                       for t, r in enumerate(results)]
            drawn = dask.compute(*[
                delayed(_remap)(p, paths[i], columns, uppers,
                                [r.stage2.remap for r in results], remap_seeds[i],
                                shuffles[i])
                for i, p in enumerate(parts)])
        if before_commit is not None:
            before_commit()
        os.rename(temp, out)  # the dataset appears whole, or not at all
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    for t, r in enumerate(results):
        r.drawn_histogram = np.sum([d[t][0] for d in drawn], axis=0)
        r.confidential = {"eta": etas[t], "abs": sum(d[t][1] for d in drawn) / r.N,
                          "squared": sum(d[t][2] for d in drawn) / r.N,
                          "abs_true": sum(d[t][3] for d in drawn) / r.N,
                          "squared_true": sum(d[t][4] for d in drawn) / r.N}
    return results if several else results[0]


def release_dataset(plan: ReleasePlan, *,
                    charge: Any = None) -> Release | tuple[Release, Confidential]:
    """Execute ``plan`` (its engine ``"dask"``, a :class:`~dpfix.release.inputs.Dataset`
    input): the dataset written to the plan's output folder by :func:`privatize_dataset`,
    the report assembled as for a table, the release's table a lazy ``dask.dataframe``
    reading it.

    ``charge`` (the ledger's entered reservation of ``plan.charge``) is recorded once every
    partition is written, just before the dataset moves into place; a failure after the
    move takes the dataset back (the charge stays: budget spent for nothing, never a
    dataset without its charge).
    """
    start = time.perf_counter()
    names, out = plan.names, plan.output.path
    commit = None if charge is None else (lambda: None if charge.committed else charge.commit())
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no mechanism built through overflow
        results = privatize_dataset(
            plan.data.source, names, [c.eps for c in plan.columns],
            upper=[c.upper for c in plan.columns], out=out, keys=list(plan.keys),
            keep=list(plan.keep), seed=[c.seed for c in plan.columns],
            delta=[c.delta for c in plan.columns], order=plan.order, options=plan.options,
            before_commit=commit)
    try:  # the dataset is in place: it stays only with its release
        return _dataset_release(plan, results, charge, start)
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise


def _dataset_release(plan: ReleasePlan, results: list, charge: Any,
                     start: float) -> Release | tuple[Release, Confidential]:
    """The release of a dataset written to the plan's output: its report, its lazy table
    and (asked for) its confidential report."""
    names, out, source = plan.names, plan.output.path, plan.data.source
    table = TableInput(Path(str(source)), "dataset", None,
                       privatized=[(n, n, None) for n in names])
    uppers = {name: r.n - 1 for name, r in zip(names, results, strict=True)}  # auto: chosen
    per_column = [public_report(r, table, name, uppers[name], out)
                  for name, r in zip(names, results, strict=True)]
    stated = {name: column_uncertainty(r) for name, r in zip(names, results, strict=True)}
    for name, rep in zip(names, per_column, strict=True):
        rep["uncertainty"] = uncertainty_entry(stated[name])
    output_columns = {"privatized": names, "key": list(plan.keys), "kept": list(plan.keep),
                      "rule": OUTPUT_COLUMNS_RULE}
    extra = {"engine": "dask", "output": {"path": str(out)}}
    if charge is not None:
        extra["ledger"] = charge.statement()
    public = assemble(per_column, names, composition(plan), plan.unit,
                      {"path": str(source), "kind": "dataset"}, output_columns, plan.order,
                      DATASET_ROW_ORDER_RULES[plan.order], extra=extra)
    frame = require("dask.dataframe").read_parquet(str(out))
    layout = {"privatized": [str(n) for n in names], "kind": "dataset", "out": str(out)}
    release = Release(frame, reports.jsonable(public), layout, uncertainty=stated)
    if not plan.confidential:
        return release
    return release, confidential_of(table, names, results, uppers,
                                    {"total": time.perf_counter() - start})
