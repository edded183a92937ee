"""The in-memory engine: a planned release of a table held in memory (a DataFrame, a pyarrow
Table, a mapping, a CSV or Parquet file read whole) or of a histogram file.

:func:`release_in_memory` reads the input (:func:`dpfix.release.inputs.read_input`), draws
the row order (:func:`dpfix.release.order.row_order`), privatizes each column at the budget
of its plan (:func:`dpfix.release.frameworks.privatize`) and the joint tuples
(:func:`dpfix.release.joint.release_joint`), and assembles the release: the table (the
keys, the kept and the privatized columns, in the input's order), the public report and,
when the plan asks for it, the confidential one. With an output the table is written to
it (:func:`dpfix.release.outputs.write_output`). A numerical warning while a mechanism is
built is an error: no release.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from dpfix.io import reports
from dpfix.io.tables import TableInput, is_parquet, other_columns
from dpfix.numbers.numeric import require
from dpfix.release.frameworks import privatize
from dpfix.release.inputs import read_input
from dpfix.release.joint import release_joint
from dpfix.release.order import order_source, row_order
from dpfix.release.outputs import (
    Confidential,
    Release,
    column_uncertainty,
    confidential_of,
    uncertainty_entry,
    view,
    write_output,
)
from dpfix.release.plan import ReleasePlan, written_columns
from dpfix.release.report import (
    OUTPUT_COLUMNS_RULE,
    ROW_ORDER_RULES,
    assemble,
    composition,
    public_report,
)
from dpfix.release.result import PrivatizedCounts

__all__ = ["release_in_memory"]


def release_in_memory(plan: ReleasePlan, *, charge: Any = None, staged: Any = None,
                      progress: Any = None,
                      on_stage: Any = None) -> Release | tuple[Release, Confidential]:
    """Execute ``plan`` in memory (module docstring).

    Parameters
    ----------
    plan : ReleasePlan
        Its engine ``"memory"``.
    charge : dpfix.release.ledger.Reservation, optional
        The ledger's entered reservation of ``plan.charge``: its statement goes into the
        report; with an output it is recorded just before the file moves into place
        (unless ``staged``), else the caller records it.
    staged : dpfix.io.commit.StagedFiles, optional
        With an output: the table is staged in it and the caller commits it.
    progress, on_stage : callable, optional
        ``progress(column, rows)``: rows done; ``on_stage(column, name, N)``: a stage
        begins (``N``, the number of rows, is public).

    Returns
    -------
    Release, or (Release, Confidential) when the plan asks for the confidential one
    """
    start = time.perf_counter()
    names, columns = plan.names, plan.columns
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no mechanism built through overflow
        table = read_input(plan.data, names)
        passed = written_columns(names, plan.keys, plan.keep, other_columns(table))
        # privatized columns alone, shuffled: their values are sorted with the words
        shuffle = plan.order == "shuffled" and not passed and table.kind != "histogram"
        rows = None if plan.order is None or shuffle else \
            row_order(table, plan.order, list(plan.keys), columns[0].seed)
        read_seconds = time.perf_counter() - start
        results: list = []
        paired = {name for pair in plan.joint for name in pair}
        for k, c in enumerate(columns):
            if c.name in paired:
                results.append(None)
                continue
            seen = view(table, k)
            results.append(privatize(
                seen.counts, c.eps, plan.options, upper=c.upper, histogram=seen.eta,
                seed=c.seed, delta=c.delta,
                progress=None if progress is None else (lambda m, n=c.name: progress(n, m)),
                on_stage=None if on_stage is None else
                (lambda s, n=c.name, r=seen.rows: on_stage(n, s, r))))
        made, joint_entries = release_joint(
            plan.joint, {n: table.select(k).counts for k, n in enumerate(names) if n in paired},
            dict(zip(names, plan.budgets, strict=True)), plan.unit,
            {c.name: c.upper for c in columns}, {c.name: c.seed for c in columns},
            plan.options)
        results = [made.get(name, r) for name, r in zip(names, results, strict=True)]
    uppers = {name: r.n - 1 for name, r in zip(names, results, strict=True)}  # auto: chosen
    per_column = [made[name].report if name in made else
                  public_report(r, view(table, k), name, uppers[name], None)
                  for k, (name, r) in enumerate(zip(names, results, strict=True))]
    stated = {name: column_uncertainty(r) for name, r in zip(names, results, strict=True)}
    for name, rep in zip(names, per_column, strict=True):
        rep["uncertainty"] = uncertainty_entry(stated[name])
    source = {"path": str(table.path), "kind": table.kind}
    extra = None if charge is None else {"ledger": charge.statement()}
    if joint_entries:
        extra = {**(extra or {}), "joint": joint_entries}
    if table.kind == "histogram":  # no rows to order, no other columns
        public = assemble(per_column, names, composition(plan), plan.unit, source, extra=extra)
        release = _histogram_release(table, results[0], public, stated)
    else:
        output_columns = {
            "privatized": names, "key": list(plan.keys), "kept": list(plan.keep),
            "dropped": [c for c in other_columns(table) if c not in passed],
            "rule": OUTPUT_COLUMNS_RULE}
        public = assemble(per_column, names, composition(plan), plan.unit, source,
                          output_columns, plan.order, ROW_ORDER_RULES[plan.order], extra=extra)
        layout = {"privatized": [str(n) for n in names], "text": table.kind == "csv",
                  "sep": table.sep, "newline": table.newline, "bom": table.bom}
        source = order_source(columns[0].seed) if shuffle else None
        # without the confidential release the drawn counts are not read again: the
        # shuffle may sort in their memory
        release = Release(_frame(table, results, passed, rows, source,
                                 overwrite=not plan.confidential),
                          reports.jsonable(public), layout, uncertainty=stated)
    if plan.output is not None:
        out = plan.output
        path = write_output(out.path, lambda dest: release.write_table(
            dest, fmt="parquet" if is_parquet(out.path) else "csv",
            escape_formulas=out.escape_formulas), force=out.force, charge=charge, staged=staged)
        release = Release(None, release.report, release.layout, path, stated)
    if not plan.confidential:
        return release
    return release, confidential_of(table, names, results, uppers, {"read": read_seconds})


def _frame(table: TableInput, results: list[PrivatizedCounts], passed: list,
           rows: Any, source: Any = None, overwrite: bool = False) -> Any:
    """The released DataFrame: the passed and privatized columns in the table's order, its
    rows in the order ``rows`` (None: the input's), or with ``source`` (no passed
    columns) in the order of ``source.permutation(N)`` (with ``overwrite`` the results'
    counts may be overwritten).

    Each column is gathered on its own (``numpy.take``, or its array's ``take``: its dtype
    kept), the privatized ones through the narrowest unsigned dtype that holds ``0 ..
    n-1``: a random gather of 10^7 rows reads a tenth of the memory of int64's. With
    ``source`` the privatized columns are packed side by side into one integer per row
    and shuffled (:meth:`dpfix.sampling.RandomSource.shuffle`: the values sorted with the
    permutation's words, the same rows in the same places, nothing gathered).
    """
    pd = require("pandas")
    take = None if rows is None else np.asarray(rows, dtype=np.intp)
    if source is not None:
        ours = _shuffled([np.asarray(r.counts, dtype=np.int64) for r in results],
                         [r.n for r in results], source, overwrite)
        ours = {col: c for (_, col, _), c in zip(table.privatized, ours, strict=True)}
    else:
        ours = {col: _gathered(np.asarray(r.counts, dtype=np.int64), r.n, take)
                for (_, col, _), r in zip(table.privatized, results, strict=True)}

    def passed_column(series: Any) -> Any:
        values = series.array
        return values if take is None else values.take(take)

    if table.kind == "csv":
        header = [str(h) for h in table.frame.iloc[0]]
        body = table.frame.iloc[1:].reset_index(drop=True)
        columns = {name: ours[k] if k in ours else passed_column(body.iloc[:, k])
                   for k, name in enumerate(header) if k in ours or name in passed}
    else:  # the passed columns with their dtypes as given (categories, nullable, ...)
        columns = {c: ours[c] if c in ours else passed_column(table.frame[c])  # names as text
                   for c in table.frame.columns if c in ours or str(c) in passed}
    frame = pd.DataFrame(columns, copy=False)
    frame.attrs = {}
    return frame


def _gathered(counts: np.ndarray, n: int, take: np.ndarray | None) -> np.ndarray:
    """``counts`` (int64, in ``0 .. n-1``) in the order ``take`` (None: as they are)."""
    if take is None:
        return counts
    narrow = next((t for t in (np.uint8, np.uint16, np.uint32) if n <= np.iinfo(t).max + 1),
                  np.int64)
    return np.take(counts.astype(narrow), take).astype(np.int64)


def _shuffled(counts: list[np.ndarray], ns: list[int], source: Any,
              overwrite: bool = False) -> list[np.ndarray]:
    """The columns ``counts`` (int64, column ``k`` in ``0 .. ns[k]-1``) with their rows in
    the order of ``source.permutation(N)``: ``[c[perm] for c in counts]``, from the same
    words. One column is shuffled as it is (in its own memory with ``overwrite``); several
    are packed side by side into one ``uint64`` per row (``bit_length(n - 1)`` bits each),
    shuffled and unpacked, or gathered when they do not fit in 64 bits.

    Examples
    --------
    >>> from dpfix.sampling import SeededSource
    >>> a, b = np.array([0, 1, 2, 3]), np.array([3, 3, 0, 1])
    >>> got = _shuffled([a, b], [4, 4], SeededSource(1))
    >>> perm = SeededSource(1).permutation(4)
    >>> [g.tolist() for g in got] == [a[perm].tolist(), b[perm].tolist()]
    True
    """
    if len(counts) == 1:
        return [source.shuffle(counts[0], overwrite=overwrite)]
    widths = [max(1, (n - 1).bit_length()) for n in ns]
    if sum(widths) > 64:
        perm = source.permutation(counts[0].size)
        return [_gathered(c, n, perm) for c, n in zip(counts, ns, strict=True)]
    packed = np.zeros(counts[0].size, dtype=np.uint64)
    for c, width in zip(counts, widths, strict=True):
        packed <<= np.uint64(width)
        packed |= c.view(np.uint64)
    packed = source.shuffle(packed, overwrite=True)
    out = []
    for width in reversed(widths):
        out.append((packed & np.uint64((1 << width) - 1)).view(np.int64))
        packed >>= np.uint64(width)
    return out[::-1]


def _histogram_release(table: TableInput, result: PrivatizedCounts, public: dict,
                       stated: dict) -> Release:
    """A histogram's release: the histogram of the privatized counts (``count``,
    ``number``), written in the input's format (its header line, byte-order mark)."""
    pd = require("pandas")
    numbers = [int(m) for m in result.output_histogram]  # Python ints: N may exceed 2^63
    frame = pd.DataFrame({"count": np.arange(len(numbers), dtype=np.int64),
                          "number": np.array(numbers, dtype=object if max(numbers) >=
                                             2**63 else np.int64)})
    layout = {"privatized": [None], "kind": "histogram", "header": table.header,
              "bom": table.bom}
    return Release(frame, reports.jsonable(public), layout, uncertainty=stated)
