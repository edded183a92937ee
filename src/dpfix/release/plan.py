"""The plan of a release: every choice of ``privatize_table`` checked once, every budget
exact, before any data are read (docs/release.md).

:func:`plan_release` turns a call into a frozen :class:`ReleasePlan`: the input
(:mod:`dpfix.release.inputs`), the columns and, per column (:class:`ColumnPlan`), what it
spends (a Fraction: the exact value of its float share, :func:`dpfix.release.budget.
fit_shares`), what its mechanisms run at (the float ``budget / c`` rounded down,
:func:`dpfix.release.budget.mechanism_budget`), its stages (the bound chosen privately,
stage 1, stage 2: :func:`dpfix.release.options.stage_budgets`), its bound, delta and seed;
the unit, the written columns and the row order, the method, the joint tuples, the output,
the engine that runs it (``"memory"``, ``"stream"``, ``"dask"``) and the ledger's charge
(``eps`` and ``delta`` exactly, by the unit's composition). One function per engine
executes a plan (:func:`dpfix.release.memory.release_in_memory`,
:func:`dpfix.release.stream.release_streamed`, :func:`dpfix.release.dask.release_dataset`;
:func:`dpfix.release.table.execute` picks it and charges the ledger);
:func:`dpfix.release.table.privatize_table` is a plan and its execution, and ``dpfix
privatize`` builds its plan with :func:`plan_release` too.

The plan's messages name the parameters (``keys``, ``order='key'``, ``upper=``); the
command line names its flags instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType
from typing import Any

from dpfix.io.tables import is_parquet
from dpfix.io.writing import round_trip_type
from dpfix.numbers.numeric import require
from dpfix.release.bounds import PrivateBound
from dpfix.release.budget import (
    PrivacyUnit,
    column_budgets,
    column_deltas,
    column_uppers,
    mechanism_budget,
    privacy_unit,
    spent,
)
from dpfix.release.inputs import Csv, Dataset, Histogram, input_path
from dpfix.release.joint import check_joint
from dpfix.release.ledger import Budget
from dpfix.release.options import ReleaseOptions, TwoStage, stage_budgets
from dpfix.release.order import DATASET_ROW_ORDERS, ROW_ORDERS
from dpfix.release.seeds import check_seed, column_seeds

__all__ = ["ReleasePlan", "ColumnPlan", "Output", "plan_release", "streams", "ENGINES",
           "written_columns"]

#: The engines that execute a plan: in memory (a table, a file, a histogram), a CSV file
#: streamed to a CSV file (:mod:`dpfix.release.stream`), a partitioned dataset with Dask.
ENGINES = ("memory", "stream", "dask")


@dataclass(frozen=True)
class Output:
    """Where a release writes its table (``privatize_table(..., out=Output(path))``; a path
    alone is ``Output(path)``).

    Attributes
    ----------
    path : str or pathlib.Path
        The file (CSV or Parquet by its suffix), or a :class:`~dpfix.release.inputs.
        Dataset` release's Parquet dataset folder (which must not exist).
    force : bool
        Replace an existing file (never a folder).
    escape_formulas : bool
        A CSV output: prefix with ``'`` every key or kept cell (and header cell) that a
        spreadsheet may run as a formula (:func:`dpfix.io.writing.guard_formulas`); without
        it such cells are written as they are, with a warning.

    Examples
    --------
    >>> Output("o.csv", force=True).force
    True
    """

    path: str | Path
    force: bool = False
    escape_formulas: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.path, (str, Path)):
            raise TypeError(f"out: a path or an Output, got {type(self.path).__name__}")


@dataclass(frozen=True)
class ColumnPlan:
    """One privatized column of a :class:`ReleasePlan`.

    Attributes
    ----------
    name : str or None
        The column (None: a histogram file's one column).
    budget : fractions.Fraction
        What the column spends: the exact value of its float share of the total.
    eps : float
        What each of its mechanisms runs at: the largest float ``m`` with ``c * m <=
        budget`` exactly (``c`` the unit's bound).
    upper : int or PrivateBound
        Its public bound, or a bound to choose privately.
    delta : float or None
        Its delta (an (eps, delta) method).
    seed : int or None
        Its seed (several columns: independent children of the release's seed).
    stages : mapping
        What each of its stages spends of ``eps`` (``"upper"`` for a bound chosen
        privately, ``"stage 1"``, ``"stage 2"``), their exact sum at most ``eps``; empty
        for a column of a joint tuple (the tuple's own stages are in its report entry).
    """

    name: Any
    budget: Fraction
    eps: float
    upper: int | PrivateBound
    delta: float | None = None
    seed: int | None = None
    stages: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class ReleasePlan:
    """A release, planned: what :func:`plan_release` checked and computed, for an engine to
    execute (module docstring). Frozen: nothing of it changes while it runs.

    Attributes
    ----------
    data : object
        The input as given (a DataFrame, a path, :class:`~dpfix.release.inputs.Csv`,
        :class:`~dpfix.release.inputs.Histogram`, :class:`~dpfix.release.inputs.Dataset`,
        ...); not read yet.
    columns : tuple of ColumnPlan
        The privatized columns, in the order given.
    eps : object
        The total budget as given (its float is the report's ``eps_t``).
    rule : str
        How the total was split over the columns.
    unit : PrivacyUnit
    keys, keep : tuple
        The other columns written (declared public); ``keys`` also sort the rows.
    order : str or None
        The rows' order (None: a histogram, which has no rows).
    options : TwoStage, OneStage, NoSplit or Auto
        The method.
    joint : tuple of tuples
        The columns released together with their joint distribution.
    output : Output or None
        Where the table is written (None: returned in memory).
    engine : str
        One of :data:`ENGINES`.
    confidential : bool
        Also return the :class:`~dpfix.release.outputs.Confidential`.
    charge : dpfix.release.ledger.Budget
        What the release spends, ``(eps, delta)`` exactly, by the unit's composition: the
        charge of a ledger.
    seed : int or None
        The release's seed (NOT FOR PRODUCTION).
    """

    data: Any
    columns: tuple[ColumnPlan, ...]
    eps: Any
    rule: str
    unit: PrivacyUnit
    keys: tuple
    keep: tuple
    order: str | None
    options: ReleaseOptions
    joint: tuple[tuple, ...]
    output: Output | None
    engine: str
    confidential: bool
    charge: Budget
    seed: int | None = None

    @property
    def names(self) -> list:
        """The privatized columns' names (``[None]`` for a histogram)."""
        return [c.name for c in self.columns]

    @property
    def budgets(self) -> list[float]:
        """Each column's budget, as the float it is."""
        return [float(c.budget) for c in self.columns]

    @property
    def dataset(self) -> str:
        """What a ledger's charge names as the data set: a file's resolved path, or the kind
        of object given (no hash of the data)."""
        path = input_path(self.data)
        return str(path.resolve()) if path is not None else f"<{type(self.data).__name__}>"

    def reserve(self, ledger: Any, **keywords: Any) -> Any:
        """The reservation of this plan's charge on ``ledger`` (a
        :class:`~dpfix.release.ledger.Ledger`), to enter before the release: its data set,
        columns and unit named; ``keywords`` as :meth:`~dpfix.release.ledger.Ledger.reserve`
        (``dataset=`` another name, ``on_wait=``)."""
        keywords.setdefault("dataset", self.dataset)
        return ledger.reserve(self.charge.eps, self.charge.delta,
                              columns=[str(n) for n in self.names if n is not None],
                              unit=self.unit.statement(), **keywords)


def streams(options: ReleaseOptions) -> bool:
    """Whether the method draws every row with an exact sampler built from the histogram
    alone: the two-stage framework, any constructor but the discrete Gaussian (the
    one-stage and hybrid frameworks estimate from every row's ``y`` first), so that a CSV
    file can be streamed to a CSV file (the engine ``"stream"``).

    Examples
    --------
    >>> from dpfix.release.options import TwoStage, NoSplit
    >>> streams(TwoStage()), streams(NoSplit("one-stage"))
    (True, False)
    """
    return options.framework == "two-stage" and options.constructor != "discrete-gaussian"


def _output(data: Any, out: Any) -> Output | None:
    """``out`` as an :class:`Output` (a path alone: ``Output(path)``); a Dataset release
    names its folder."""
    if out is None:
        if isinstance(data, Dataset):
            raise ValueError("out: a Dataset release writes a Parquet dataset folder; name it")
        return None
    return out if isinstance(out, Output) else Output(out)


def _engine(data: Any, output: Output | None, options: ReleaseOptions, joint: tuple,
            keys: tuple = (), keep: tuple = (), order: str | None = None) -> str:
    """The engine of a release (:data:`ENGINES`): a Dataset's is Dask; a CSV or Parquet file
    written to a CSV or Parquet file by a method that draws every row from the histogram
    alone is streamed (:func:`streams`; not with joint tuples), a Parquet file when its
    written columns are of types the streamed engine writes (:func:`_parquet_streams`);
    anything else runs in memory."""
    if isinstance(data, Dataset):
        return "dask"
    if output is None or joint or not streams(options) or \
            not isinstance(data, (str, Path, Csv)):
        return "memory"
    path = input_path(data)
    if is_parquet(path) and not _parquet_streams(path, keys, keep, order):
        return "memory"
    return "stream"


def _parquet_streams(path: Path, keys: tuple, keep: tuple, order: str | None) -> bool:
    """Whether the streamed engine writes a Parquet file's key and kept columns as the
    in-memory engine does: integers, floats, booleans and text
    (:func:`dpfix.io.writing.round_trip_type`), the keys of the key order text (sorted by
    their bytes) or one key of numbers (sorted by value); read from the file's schema (its
    footer). A file without a readable
    schema runs in memory (which says why)."""
    try:
        pa = require("pyarrow")
        schema = require("pyarrow.parquet").read_schema(path)
    except Exception:  # pyarrow's errors name no common base
        return False
    for name in dict.fromkeys([*keys, *keep]):
        if name not in schema.names:
            continue  # the engine names it
        t = schema.field(name).type
        if round_trip_type(t, 0, 1) is None:
            return False
        numeric = len(keys) == 1 and (pa.types.is_integer(t) or pa.types.is_floating(t))
        if order == "key" and name in keys and t != pa.string() and not numeric:
            return False
    return True


def _names(data: Any, columns: Any) -> list:
    """The privatized columns: those named, each once, or ``[None]`` for a histogram (it
    has one column of counts and no names)."""
    if isinstance(data, Histogram):
        if columns is not None and (isinstance(columns, str) or list(columns)):
            raise ValueError("columns: a histogram file has no columns; give columns=None")
        return [None]
    names = [columns] if isinstance(columns, str) else list(columns or [])
    if not names:
        raise ValueError("columns: name the column(s) of counts")
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ValueError(f"columns: {name!r} named twice")
    return names


def _order(data: Any, order: str | None, names: list, keys: tuple, keep: tuple) -> Any:
    """The row order, checked against the kind of input: a histogram has no rows and no
    other columns; the Dask engine does not sort (``"shuffled"`` by default, or
    ``"input"``); a table is sorted by its keys by default, else shuffled."""
    if isinstance(data, Histogram):
        if keys or keep:
            raise ValueError(f"{'keys' if keys else 'keep'}: a histogram file has no other "
                             "columns; drop it")
        if order is not None:
            raise ValueError("order: a histogram has no rows to order; drop it")
        return None
    if isinstance(data, Dataset):  # its other columns are checked when the engine reads them
        written_columns(names, keys, keep,
                        [c for c in dict.fromkeys([*keys, *keep]) if c not in names])
        order = order or "shuffled"
        if order not in DATASET_ROW_ORDERS:
            raise ValueError(f"order {order}: the Dask engine does not sort the dataset by key "
                             "(each partition is written on its own); use order='shuffled' "
                             "(its default) or order='input'")
        return order
    order = order or ("key" if keys else "shuffled")
    if order not in ROW_ORDERS:
        raise ValueError(f"order: one of {', '.join(ROW_ORDERS)}, got {order!r}")
    if order == "key" and not keys:
        raise ValueError("order key: name the key columns with keys=")
    return order


def written_columns(names: list, keys: Any, keep: Any, others: list) -> list:
    """The columns written besides the privatized ones ``names``: the ``keys`` then the
    ``keep``, each one of the table's ``others`` (the columns not privatized), each once.

    Examples
    --------
    >>> written_columns(["n"], ["id"], ["note"], ["id", "note", "x"])
    ['id', 'note']
    >>> written_columns(["n"], ["n"], [], ["id"])
    Traceback (most recent call last):
    ...
    ValueError: keys: 'n' is a privatized column (columns=)
    """
    seen: set = set()
    for label, given in (("keys", keys), ("keep", keep)):
        for name in given:
            if name in names:
                raise ValueError(f"{label}: {name!r} is a privatized column (columns=)")
            if name not in others:
                raise ValueError(f"{label}: column {name!r} not found; the other columns are "
                                 f"{others}")
            if others.count(name) > 1:
                raise ValueError(f"{label}: column {name!r} appears {others.count(name)} "
                                 "times in the header")
            if name in seen:
                raise ValueError(f"{label}: column {name!r} named twice")
            seen.add(name)
    return [*keys, *keep]


def _stages(eps: float, options: ReleaseOptions, upper: Any) -> Mapping[str, float]:
    """What each stage of a column spends of its mechanisms' ``eps``: the bound chosen
    privately first (its share), then the method's stages (:func:`stage_budgets`)."""
    stages: dict[str, float] = {}
    if isinstance(upper, PrivateBound):
        stages["upper"], eps = upper.split(eps)
    stages.update(stage_budgets(options, eps))
    return MappingProxyType(stages)


def plan_release(data: Any, columns: Any, eps: Any, *, upper: Any, unit: Any = "row",
                 keys: Any = (), keep: Any = (), delta: float | None = None,
                 order: str | None = None, seed: int | None = None,
                 options: ReleaseOptions | None = None, joint: Any = None, out: Any = None,
                 confidential: bool = False) -> ReleasePlan:
    """Check a release's choices and plan it, before any data are read (module docstring).

    The parameters are :func:`dpfix.release.table.privatize_table`'s, but the ledger (the
    plan states its ``charge``: :meth:`ReleasePlan.reserve`).

    Raises
    ------
    ValueError
        On a bad choice, in one line naming the parameter.

    Examples
    --------
    >>> p = plan_release({"a": [3, 0], "b": [1, 2]}, ["a", "b"], "1", upper=4, unit="row:3")
    >>> [c.budget for c in p.columns], p.charge.eps, p.engine
    ([Fraction(1, 2), Fraction(1, 2)], Fraction(1, 1), 'memory')
    >>> [3 * Fraction(c.eps) <= c.budget for c in p.columns]
    [True, True]
    >>> dict(p.columns[0].stages)
    {'stage 1': 0.07273612615708928, 'stage 2': 0.09393054050957737}
    """
    options = options if options is not None else TwoStage()
    unit = privacy_unit(unit)
    shares = None
    if isinstance(columns, Mapping):  # column -> its share (None: an equal part of the rest)
        shares = {name: share for name, share in columns.items() if share is not None}
        columns = list(columns)
    names = _names(data, columns)
    budgets, rule = column_budgets(eps, names, shares, options.constructor, unit)
    uppers = {name: PrivateBound() if u == "auto" else u
              for name, u in column_uppers(upper, names, options.constructor).items()}
    output = _output(data, out)
    if delta is not None and unit.bound > 1:
        raise ValueError("unit: a bound c > 1 is for pure eps-DP methods (the group privacy "
                         "of (eps, delta) also multiplies delta); drop delta= or use c = 1")
    seeds = column_seeds(check_seed(seed), len(names))
    deltas = column_deltas(delta, len(names), unit)
    keys, keep = tuple(keys or ()), tuple(keep or ())
    order = _order(data, order, names, keys, keep)
    pairs = tuple(check_joint(joint, names, uppers, options, delta))
    if pairs and isinstance(data, Dataset):
        raise ValueError("joint: the joint release reads a table, not a Dataset")
    paired = {name for pair in pairs for name in pair}
    plans = []
    for name, b, d, s in zip(names, budgets, deltas, seeds, strict=True):
        m = mechanism_budget(b, unit.bound)
        stages = MappingProxyType({}) if name in paired else _stages(m, options, uppers[name])
        plans.append(ColumnPlan(name, Fraction(b), m, uppers[name], d, s, stages))
    return ReleasePlan(data, tuple(plans), eps, rule, unit, keys, keep, order, options, pairs,
                       output, _engine(data, output, options, pairs, keys, keep, order),
                       bool(confidential),
                       Budget(*spent(budgets, deltas, unit)), seed)
