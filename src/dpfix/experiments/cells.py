"""Cells of an experiment: keys, seeds, the resumable cache, the parallel runner, CIs.

A *cell* is one unit of work, e.g. "privatize the crime data at eps_t = 0.48
with the LP constructor, replication 3". Its key is a flat dict of JSON
scalars that always holds ``experiment``, ``dataset``, ``method``, ``eps``,
``replication`` and ``seed`` (the base seed of the run), plus what else the
experiment varies (``postprocess``, ``n``, ``f``, ...).

- **Seeds.** A cell's random stream is ``numpy.random.SeedSequence`` of the
  base seed and a SHA-256 digest of *some* of its key fields (the experiment
  names them): it depends on neither the order of the cells nor ``--jobs``.
  Leaving ``method`` out of those fields gives all methods of one replication
  the same stream, so every two-stage method sees the same target ``z``: the
  comparisons between methods are paired.
- **Cache.** Every finished cell is appended as one JSON line
  ``{"key": ..., "result": ...}`` to ``cells.jsonl`` in the output folder; a
  restarted run reads it and computes only the missing keys. A line cut short
  by a crash is ignored (and recomputed).
- **Parallelism.** ``concurrent.futures.ProcessPoolExecutor`` over ``jobs``
  processes (``jobs = 1`` runs in this process); workers get the key and the
  experiment's function (by reference: they import its module) and load the
  data themselves. This module imports no experiment: each registers itself
  here with :func:`register`.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

import numpy as np

from dpfix.numbers.numeric import require

__all__ = ["KEY_FIELDS", "key_id", "cell_seed", "CellCache", "run_cells", "mean_ci",
           "register", "compute_cell", "summarise"]

#: Fields every cell key holds.
KEY_FIELDS = ("experiment", "dataset", "method", "eps", "replication", "seed")

#: experiment name -> (compute function, key fields the random stream depends on)
_EXPERIMENTS: dict[str, tuple[Callable[[dict, int], dict], tuple[str, ...]]] = {}


def register(name: str, seed_fields: tuple[str, ...]) -> Callable:
    """Decorator: ``compute(key, seed) -> result`` is the cell function of ``name``.

    Parameters
    ----------
    name : str
        The experiment's name (a cell key's ``experiment``).
    seed_fields : tuple of str
        The key fields the cell's random stream depends on.

    Returns
    -------
    callable
        The decorator (it returns the function unchanged).
    """
    def wrap(fn: Callable[[dict, int], dict]) -> Callable[[dict, int], dict]:
        _EXPERIMENTS[name] = (fn, tuple(seed_fields))
        return fn
    return wrap


def key_id(key: dict) -> str:
    """The canonical text of a key (sorted JSON): equal keys, equal text.

    Parameters
    ----------
    key : dict

    Returns
    -------
    str
        Sorted JSON.

    Examples
    --------
    >>> key_id({"b": 1, "a": 0.5})
    '{"a": 0.5, "b": 1}'
    """
    return json.dumps(key, sort_keys=True, allow_nan=False)


def _check_key(key: dict) -> None:
    missing = [f for f in KEY_FIELDS if f not in key]
    if missing:
        raise ValueError(f"cell key: missing fields {missing} in {key!r}")
    for name, value in key.items():
        if not (value is None or isinstance(value, (str, int, float, bool))):
            raise ValueError(f"cell key: field {name!r} must be a JSON scalar, got {value!r}")


def cell_seed(key: dict, fields: Iterable[str] | None = None) -> int:
    """The 63-bit seed of a cell: ``SeedSequence`` of the base seed ``key["seed"]``
    and a SHA-256 digest of the named key fields (default: all of them).

    Parameters
    ----------
    key : dict
        A cell key (holds :data:`KEY_FIELDS`; ``seed`` a non-negative int).
    fields : iterable of str, optional
        The fields the seed depends on.

    Returns
    -------
    int
        A seed below ``2^63``.

    Raises
    ------
    ValueError
        A malformed key or seed.

    Examples
    --------
    >>> k = {"experiment": "x", "dataset": "d", "method": "m", "eps": 1.0,
    ...      "replication": 0, "seed": 0}
    >>> cell_seed(k) == cell_seed(dict(reversed(list(k.items()))))  # order-free
    True
    >>> cell_seed(k, ["dataset"]) == cell_seed({**k, "method": "other"}, ["dataset"])
    True
    """
    _check_key(key)
    names = sorted(key) if fields is None else sorted(set(fields))
    text = json.dumps({f: key[f] for f in names}, sort_keys=True).encode()
    words = np.frombuffer(hashlib.sha256(text).digest(), dtype=np.uint32).tolist()
    base = key["seed"]
    if isinstance(base, bool) or not isinstance(base, int) or base < 0:
        raise ValueError(f"seed: must be a non-negative integer, got {base!r}")
    ss = np.random.SeedSequence(base, spawn_key=tuple(words))
    return int(ss.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


def _experiment(key: dict) -> tuple[Callable[[dict, int], dict], tuple[str, ...]]:
    name = key["experiment"]
    if name not in _EXPERIMENTS:
        raise ValueError(f"experiment: unknown {name!r}; known: {sorted(_EXPERIMENTS)} (an "
                         "experiment is registered when its module is imported)")
    return _EXPERIMENTS[name]


def compute_cell(key: dict) -> dict:
    """Compute one cell: its experiment's function, its seed, its wall time.

    The experiment must be registered (:func:`register`, run when its module
    is imported, e.g. by :mod:`dpfix.experiments`).

    Parameters
    ----------
    key : dict

    Returns
    -------
    dict
        The cell's result, with ``cell_seconds``.

    Raises
    ------
    ValueError
        An unknown experiment.
    """
    fn, fields = _experiment(key)
    return _timed(fn, fields, key)


def _timed(fn: Callable[[dict, int], dict], fields: tuple[str, ...], key: dict) -> dict:
    """The cell function on its seed, timed. Runs in a worker process: ``fn`` is
    pickled by reference, so the worker imports the experiment's module itself."""
    start = time.perf_counter()
    result = fn(dict(key), cell_seed(key, fields))
    result.setdefault("cell_seconds", time.perf_counter() - start)
    return result


class CellCache:
    """The finished cells of an output folder: ``cells.jsonl``, one JSON line per cell.

    Examples
    --------
    >>> import shutil, tempfile
    >>> c = CellCache(Path(tempfile.mkdtemp()) / "cells.jsonl")
    >>> k = {"experiment": "x", "dataset": "d", "method": "m", "eps": 1.0,
    ...      "replication": 0, "seed": 0}
    >>> c.add(k, {"w1": 0.5}); CellCache(c.path).get(k)
    {'w1': 0.5}
    >>> shutil.rmtree(c.path.parent)
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.results: dict[str, dict] = {}
        if self.path.is_file():
            with self.path.open(encoding="utf-8") as fh:
                for line in fh:
                    try:
                        row = json.loads(line)
                        self.results[key_id(row["key"])] = row["result"]
                    except (ValueError, KeyError, TypeError):
                        continue  # a line cut short by a crash: recompute that cell

    def __contains__(self, key: dict) -> bool:
        return key_id(key) in self.results

    def get(self, key: dict) -> dict | None:
        """The cached result of ``key`` (None if not computed)."""
        return self.results.get(key_id(key))

    def add(self, key: dict, result: dict) -> None:
        """Record a finished cell (appended and flushed at once)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"key": key, "result": result}, sort_keys=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")  # closed (so flushed) before the next cell is stored
        self.results[key_id(key)] = result


def run_cells(cells: list[dict], cache: CellCache, *, jobs: int = 1, quiet: bool = False,
              desc: str = "cells") -> tuple[list[dict], int]:
    """Compute the cells missing from ``cache``; return ``(results in the order of
    cells, number computed now)``.

    Results are stored as they finish, so an interrupted run loses at most the
    cells in flight. A cell that raises stops the run with a ``RuntimeError``
    naming it.

    Parameters
    ----------
    cells : list of dict
        Cell keys.
    cache : CellCache
        The finished cells (results are added as they finish).
    jobs : int
        Worker processes (1: this process).
    quiet : bool
        No progress bar.
    desc : str
        The progress bar's label.

    Returns
    -------
    (list of dict, int)
        The results in the order of ``cells`` and how many were computed now.

    Raises
    ------
    ValueError
        A malformed key or an unknown experiment.
    RuntimeError
        A cell failed (named in the message).
    """
    for key in cells:
        _check_key(key)
        _experiment(key)  # an unknown experiment is refused before any cell runs
    todo, seen = [], set()
    for key in cells:
        kid = key_id(key)
        if kid not in cache.results and kid not in seen:
            seen.add(kid)
            todo.append(key)
    bar = None
    if todo and not quiet:
        tqdm = require("tqdm").tqdm

        bar = tqdm(total=len(todo), desc=desc, file=sys.stderr, unit="cell",
                   mininterval=0.5, dynamic_ncols=True, leave=True)
    try:
        if jobs <= 1 or len(todo) <= 1:
            for key in todo:
                cache.add(key, _checked(key, compute_cell, key))
                if bar is not None:
                    bar.update(1)
        else:
            _run_pool(todo, cache, jobs, bar)
    finally:
        if bar is not None:
            bar.close()
    return [cache.results[key_id(k)] for k in cells], len(todo)


def _checked(key: dict, fn: Callable, *args: Any) -> dict:
    try:
        return fn(*args)
    except Exception as exc:  # name the failing cell, keep the cause
        raise RuntimeError(f"cell {key_id(key)} failed: {type(exc).__name__}: {exc}") from exc


def _run_pool(todo: list[dict], cache: CellCache, jobs: int, bar: Any) -> None:
    # at most 2 cells per worker in flight: results are saved as they come
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        queue, running = list(reversed(todo)), {}
        while queue or running:
            while queue and len(running) < 2 * jobs:
                key = queue.pop()
                running[pool.submit(_timed, *_experiment(key), key)] = key
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in done:
                key = running.pop(fut)
                try:
                    result = fut.result()
                except Exception as exc:
                    for other in running:
                        other.cancel()
                    raise RuntimeError(f"cell {key_id(key)} failed: "
                                       f"{type(exc).__name__}: {exc}") from exc
                cache.add(key, result)
                if bar is not None:
                    bar.update(1)


def mean_ci(values: Iterable[float], level: float = 0.95) -> tuple[float, float]:
    """``(mean, half-width)`` of the Student-t confidence interval of the mean.

    The half-width is ``t_{(1+level)/2, R-1} s / sqrt(R)`` with ``s`` the sample
    standard deviation of the ``R`` values; NaN for ``R = 1`` (no spread to
    estimate). NaN values are dropped.

    Parameters
    ----------
    values : iterable of float
    level : float
        In ``(0, 1)``.

    Returns
    -------
    (float, float)
        The mean and the half-width (NaN for a single value).

    Raises
    ------
    ValueError
        A level outside ``(0, 1)``.

    Examples
    --------
    >>> m, h = mean_ci([1.0, 2.0, 3.0])  # s = 1, t_{0.975, 2} = 4.302653
    >>> m, round(h, 5)
    (2.0, 2.48414)
    """
    from scipy.stats import t

    x = np.asarray([v for v in values if v is not None and not math.isnan(v)], dtype=float)
    if x.size == 0:
        return math.nan, math.nan
    if not 0 < level < 1:
        raise ValueError(f"level: must be in (0, 1), got {level!r}")
    mean = float(x.mean())
    if x.size == 1:
        return mean, math.nan
    half = float(t.ppf((1 + level) / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return mean, half


def summarise(cells: list[dict], results: list[dict], metrics: Iterable[str]) -> Any:
    """Means and 95% CI half-widths over the replications, one row per other key.

    Returns a pandas DataFrame with the key fields (but ``replication``), then
    for each metric ``m`` the columns ``m`` (mean) and ``m_ci`` (half-width of
    :func:`mean_ci`), and ``replications`` (how many were averaged).

    Parameters
    ----------
    cells : list of dict
        Cell keys.
    results : list of dict
        Their results, in the same order.
    metrics : iterable of str
        The result fields to average.

    Examples
    --------
    >>> k = {"experiment": "x", "dataset": "d", "method": "m", "eps": 1.0, "seed": 0}
    >>> cells = [{**k, "replication": r} for r in range(3)]
    >>> df = summarise(cells, [{"w1": 1.0}, {"w1": 2.0}, {"w1": 3.0}], ["w1"])
    >>> df[["method", "w1", "replications"]].values.tolist()
    [['m', 2.0, 3]]
    """
    pd = require("pandas")

    metrics = list(metrics)
    groups: dict[str, tuple[dict, list[dict]]] = {}
    for key, result in zip(cells, results, strict=True):
        rest = {f: v for f, v in key.items() if f != "replication"}
        groups.setdefault(key_id(rest), (rest, []))[1].append(result)
    rows = []
    for rest, res in groups.values():
        row = dict(rest)
        for m in metrics:
            row[m], row[f"{m}_ci"] = mean_ci(r.get(m) for r in res)
        row["replications"] = len(res)
        rows.append(row)
    return pd.DataFrame(rows)
