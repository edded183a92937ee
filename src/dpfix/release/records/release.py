"""``privatize_records``: records bounded per person, counted per declared group, released
under the unit ``person:C:c`` in one call (docs/records.md).

A call is a plan and its execution, as ``privatize_table``'s is:
:func:`dpfix.release.records.plan.plan_records` checks every choice and computes every
budget before any record is read; :func:`execute_records` opens the records' reader
(:func:`dpfix.release.records.sources.open_records`), chooses ``C`` when asked (its
planned budget), bounds and counts the records (:mod:`dpfix.release.records.bounding`),
and runs the release's plan on the table of counts with the in-memory engine
(:func:`dpfix.release.memory.release_in_memory`), the ledger charged once with the plan's
charge. ``dpfix privatize --records`` builds its plan with :func:`plan_records` too.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpfix.release.budget import PrivacyUnit, exact_budget
from dpfix.release.ledger import Reservation
from dpfix.release.memory import release_in_memory
from dpfix.release.outputs import Confidential, Release
from dpfix.release.records.bounding import Tally, check_bounds
from dpfix.release.records.contributions import ContributionBound, choose_contributions
from dpfix.release.records.plan import SEED_PARTS, RecordsPlan, plan_records
from dpfix.release.records.reading import RecordsSchema, records_schema
from dpfix.release.records.sources import open_records
from dpfix.sampling.source import random_source

__all__ = ["privatize_records", "execute_records", "bounded_counts", "BoundedCounts"]


@dataclass(frozen=True)
class BoundedCounts:
    """The records bounded and counted per declared group (confidential: no noise).

    Attributes
    ----------
    groups : pyarrow.Table
        The declared groups (their columns, and the kept ones), in the declared order.
    names : list of str
        The count columns.
    counts : numpy.ndarray
        ``(groups, columns)`` int64: the kept records of each group and counted value.
    true_counts : numpy.ndarray
        The same before bounding (every record of a declared group and value).
    stats : dict
        How many records were read, dropped (group or value not declared), kept, cut by
        the bounding, and how many persons there were and were cut.
    max_contributions, max_per_group : int
        ``C`` and ``c``.
    """

    groups: Any
    names: list
    counts: np.ndarray
    true_counts: np.ndarray
    stats: dict
    max_contributions: int
    max_per_group: int


def _bounded(declared: Any, names: list, made: Tally, C: int, c: int) -> BoundedCounts:
    shape = (declared.num_rows, len(names))
    return BoundedCounts(declared, list(names), made.counts.reshape(shape),
                         made.true.reshape(shape), made.stats, C, c)


def bounded_counts(records: Any, groups: Any, *, max_contributions: int,
                   max_per_group: int | None = None, values: Sequence | None = None,
                   keep: Any = (), seed: Any = None) -> BoundedCounts:
    """The records bounded (:func:`~dpfix.release.records.bounding.bound_contributions`)
    and counted per declared group: the table :func:`privatize_records` releases, WITHOUT
    noise (confidential; for tests, studies and checks).

    Parameters are those of :func:`privatize_records`.

    Examples
    --------
    >>> from dpfix.release.records import Records
    >>> recs = Records({"pid": ["a"] * 5 + ["b"], "county": ["x", "x", "y", "y", "y", "z"]},
    ...                person="pid", group_by="county")
    >>> b = bounded_counts(recs, ["x", "y"], max_contributions=4, max_per_group=2, seed=0)
    >>> b.counts.ravel().tolist(), b.true_counts.ravel().tolist()
    ([2, 2], [2, 3])
    >>> b.stats["dropped_group_not_declared"], b.stats["records_cut_by_bounding"]
    (1, 1)
    """
    C, c = check_bounds(max_contributions, max_per_group)
    if C is None:
        raise ValueError("max_contributions: must be an integer >= 1, got None")
    schema = records_schema(records, values, keep)
    with open_records(records.source, schema, groups) as reader:
        made = reader.tally(list(schema.names), C, c, seed)
        return _bounded(reader.declared, list(schema.names), made, C, c)


def _records_entry(schema: RecordsSchema, bounded: BoundedCounts, meta: dict,
                   unit: PrivacyUnit, chosen: ContributionBound | None, seeded: bool,
                   order: str, budget: dict) -> dict:
    """The public report's ``records`` entry: how the counts were made from the records."""
    return {
        "source": {"path": meta["path"], "kind": meta["kind"]},
        "person": schema.person,
        "group_by": list(schema.group_by),
        "groups": {
            "declared": int(bounded.groups.num_rows), "source": meta["groups_source"],
            "rule": "one row per declared group, in the released table whatever the records "
                    "hold (0 when no record falls in it); a record whose group is not "
                    "declared, or missing, is dropped before the bounding. The groups are "
                    "public: given by the data holder, not read from the records, so which "
                    "rows appear says nothing about the records; how many records were "
                    "dropped is in the confidential report only"},
        "count": {
            "column": schema.count, "values": None if schema.values is None else
            [str(v) for v in schema.values], "columns": list(schema.names),
            "rule": "every record of a declared group counted once" if schema.count is None
            else f"one count column per declared value of {schema.count!r}; a record whose "
                 "value is not declared, or missing, is dropped before the bounding (the "
                 "values are public, not read from the records)"},
        "bounding": {
            "max_contributions": unit.bound, "max_per_group": unit.per_group,
            "chosen_by": "given: a public parameter, not computed from the records"
            if chosen is None else chosen.describe(),
            "rule": "each person keeps a uniformly random subset of their records among the "
                    f"largest ones with at most {unit.bound} in all and at most "
                    f"{unit.per_group} in any one group (the bases of a laminar matroid, "
                    "drawn exactly), independently of every other person, before the "
                    "aggregation",
            "randomness": "seeded (NOT FOR PRODUCTION)" if seeded else
                          "the operating system's CSPRNG (secure)"},
        "unit": unit.text,
        "row_order": order,
        "budget": budget,
        "proof": "docs/records.md",
    }


def _check_reservation(charge: Reservation, plan: RecordsPlan) -> None:
    """An entered reservation passed as ``ledger=`` must charge what the plan spends."""
    if charge.after is None:
        raise ValueError("ledger: a Reservation must be entered (with ledger.reserve(...) as "
                         "r) before the release")
    if (charge.charge.eps, charge.charge.delta) != (plan.charge.eps, plan.charge.delta):
        raise ValueError(f"ledger: the reservation charges eps {charge.charge.eps}, delta "
                         f"{charge.charge.delta}, but the release spends eps "
                         f"{plan.charge.eps}, delta {plan.charge.delta}")


def _run(plan: RecordsPlan, charge: Any, staged: Any,
         scratch: Any) -> Release | tuple[Release, Confidential]:
    """The release of ``plan`` (its choices checked), ``charge`` the ledger's entered
    reservation of its charge (or None)."""
    start = time.perf_counter()
    names = plan.names
    seeds = dict(zip(SEED_PARTS, plan.seeds, strict=True))
    chosen = None
    with open_records(plan.records.source, plan.schema, plan.groups, plan.engine,
                      scratch) as reader:
        C = plan.max_contributions
        if plan.chosen is not None:  # C first (its own budget), then the bounding at it
            chosen = choose_contributions(
                reader.contribution_histogram(), plan.eps_contributions, plan.chosen.aim,
                plan.largest_candidate, random_source(seeds["contributions"]))
            C = chosen.max_contributions
        C, c = plan.bounds(C)
        bounded = _bounded(reader.declared, names, reader.tally(names, C, c,
                                                                seeds["bounding"]), C, c)
        meta = reader.meta
    frame = bounded.groups.to_pandas()
    for k, name in enumerate(names):
        frame[name] = bounded.counts[:, k]
    release_plan = dataclasses.replace(plan.release_at(C), data=frame)
    release, secret = release_in_memory(release_plan, charge=charge, staged=staged)
    unit = release_plan.unit
    report = dict(release.report)
    spent = report["composition"]
    budget = {"eps_t": float(exact_budget(plan.eps, "eps")),
              "eps_contributions": plan.eps_contributions, "eps_release": spent["eps_spent"],
              "eps_spent": float(plan.charge.eps),
              "rule": "the choice of C, then the release under the C chosen: sequential "
                      "composition, eps_contributions + eps_release" if chosen is not None
                      else "C given: the release alone"}
    report["input"] = {"path": meta["path"], "kind": "records", "columns": list(names)}
    if plan.order == "groups":
        report["row_order_rule"] = ("rows in the declared order of the groups (public: given "
                                    "by the data holder, not read from the records)")
    report["records"] = _records_entry(plan.schema, bounded, meta, unit, chosen,
                                       plan.seed is not None, plan.order, budget)
    public = Release(release.table, report, release.layout, release.path)
    if not plan.confidential:
        return public
    body = dict(secret.report)
    body["records"] = {**bounded.stats, "reader": plan.engine,
                       "seconds": {**meta["seconds"], "total": time.perf_counter() - start},
                       "true_counts_total": dict(zip(names,
                                                     bounded.true_counts.sum(axis=0).tolist(),
                                                     strict=True)),
                       "kept_counts_total": dict(zip(names,
                                                     bounded.counts.sum(axis=0).tolist(),
                                                     strict=True))}
    if "streamed" in meta:
        body["records"]["streamed"] = meta["streamed"]
    return public, Confidential(body, secret.histograms, secret.topcoded)


def execute_records(plan: RecordsPlan, *, ledger: Any = None, staged: Any = None,
                    scratch: Any = None) -> Release | tuple[Release, Confidential]:
    """Run ``plan`` and charge ``ledger`` with ``plan.charge`` (module docstring).

    Parameters
    ----------
    plan : RecordsPlan
        What :func:`dpfix.release.records.plan.plan_records` made.
    ledger : dpfix.release.ledger.Ledger or dpfix.release.ledger.Reservation, optional
        A ledger: its reservation of ``plan.charge`` is entered before any record is read (a
        release the balance cannot pay is refused there) and recorded once the release is
        made, before any output is in place. An entered reservation (made with
        :meth:`~dpfix.release.records.plan.RecordsPlan.reserve`, or charging exactly the
        plan's charge): its caller records it, but where the release itself moves an output
        into place (an output that is not ``staged``): just before that move.
    staged : dpfix.io.commit.StagedFiles, optional
        With an output: the table is staged in it and the caller commits it with its other
        outputs.
    scratch : str or pathlib.Path, optional
        The folder of the streamed reader's private scratch folder (default: the temporary
        folder).

    Returns
    -------
    Release, or (Release, Confidential) when the plan asks for the confidential one
    """
    if ledger is None:
        return _run(plan, None, staged, scratch)
    if isinstance(ledger, Reservation):
        _check_reservation(ledger, plan)
        return _run(plan, ledger, staged, scratch)
    with plan.reserve(ledger) as charge:
        made = _run(plan, charge, staged, scratch)
        if not charge.committed:  # the randomness is drawn: the budget is spent
            charge.commit()
    return made


def privatize_records(records: Any, groups: Any, eps: Any, *, upper: Any,
                      max_contributions: Any, max_per_group: int | None = None,
                      values: Any = None, keep: Any = (), delta: float | None = None,
                      order: str = "groups", seed: int | None = None, options: Any = None,
                      joint: Any = None, ledger: Any = None, out: Any = None,
                      confidential: bool = False) -> Release | tuple[Release, Confidential]:
    """Release a table of counts from records: each person's contributions bounded, the
    records counted per declared group, the counts privatized under the unit
    ``person:C:c`` (docs/records.md).

    ``privatize_records(...)`` is ``execute_records(plan_records(...), ledger=ledger)``
    (:func:`dpfix.release.records.plan.plan_records`, :func:`execute_records`). Each
    parameter is one choice, folded as :func:`~dpfix.release.table.privatize_table`'s are:
    which columns of the records say what with the records (:class:`~dpfix.release.
    records.Records`), the shares with the values (a mapping), a bound chosen privately
    with its share in ``upper`` (:class:`~dpfix.release.bounds.PrivateBound`), the choice of
    ``C`` with its share and quantile in ``max_contributions``
    (:class:`~dpfix.release.records.PrivateContributions`), a CSV file's separator with the
    file (:class:`~dpfix.release.inputs.Csv`), the output's options with it
    (:class:`~dpfix.release.plan.Output`).

    Parameters
    ----------
    records : Records
        The records (one row per incident) and their person, group and counted columns:
        ``Records(source, person=..., group_by=..., count=...)``; ``source`` a DataFrame, a
        pyarrow Table, a mapping column -> array, a CSV file (read as text: cells are
        identities as written, ``007`` is not ``7``; ``Csv(path, sep)``; a file larger than
        :data:`dpfix.release.records.sources.STREAM_BYTES` is read in blocks and
        partitioned by person on disk, never whole) or a Parquet file; beyond memory a
        :class:`~dpfix.release.inputs.Dataset` (a Parquet dataset or a glob of CSV files) or
        a ``dask.dataframe.DataFrame``, shuffled by person and bounded partition by
        partition. Only the person, group and counted columns are read. Not modified.
    groups : sequence, pandas.DataFrame, pyarrow.Table, str, pathlib.Path or Csv
        The public list of groups: a sequence of values (one group column), or a table or
        file with the ``group_by`` columns (and the ``keep`` ones). Every declared group
        gets a row; a group declared twice, or with a missing cell, is refused; a record
        whose group is not declared is dropped (the number dropped goes to the confidential
        report only). Matched by value, in one type (a CSV file is read as text).
    eps : float or str
        The total budget (with ``C`` chosen privately, the choice included).
    upper : int, "auto", PrivateBound or mapping
        The public bound of the counts, as :func:`dpfix.release.table.privatize_table`.
    max_contributions : int, "auto" or PrivateContributions
        ``C >= 1``: a person keeps at most ``C`` records in all. ``"auto"``
        (``PrivateContributions()``) or ``PrivateContributions(share, quantile)``: chosen
        privately at ``quantile`` of the records per person with ``share`` of ``eps``
        (:func:`~dpfix.release.records.suggest_max_contributions`), the rest for the
        release.
    max_per_group : int, optional
        ``1 <= c <= C``: at most ``c`` in any one group (default ``C``; with ``C`` chosen
        the smaller of it and the ``C`` chosen).
    values : sequence or mapping, optional
        With ``Records(..., count=COLUMN)``: the public values of the column counted, one
        count column each (named by their text); a record with another value (or none) is
        dropped. A mapping value -> its budget (None: the whole ``eps``: the columns
        compose in parallel under the unit ``person``).
    keep : sequence
        Columns of the ``groups`` table written as they are (public: county names).
    delta, options, joint :
        As :func:`dpfix.release.table.privatize_table` (``joint``: tuples of count columns;
        ``delta`` with ``max_contributions=1`` only).
    order : str
        The released rows: ``"groups"`` (default: the declared order, public), ``"key"``
        (sorted by the group columns) or ``"shuffled"``.
    seed : int, optional
        Reproducible (NOT FOR PRODUCTION): the bounding, the choice of ``C`` and the release
        each draw from their own seed spawned from it
        (:data:`dpfix.release.records.plan.SEED_PARTS`).
    ledger : dpfix.release.ledger.Ledger or Reservation, optional
        Charged once with all the call spends (the plan's ``charge``), the records' source,
        the columns and the unit's statement; an entered Reservation must charge exactly
        that, and the caller commits it.
    out : str, pathlib.Path or Output, optional
        Write the table to this file (CSV or Parquet by its suffix) instead of returning
        it, whole or not at all, after the ledger's charge.
    confidential : bool
        Also return the :class:`~dpfix.release.outputs.Confidential`, its report holding the
        records' numbers (read, dropped, cut by the bounding, the persons).

    Returns
    -------
    Release, or (Release, Confidential) with ``confidential=True``
        The table: the group columns (and ``keep``), then the privatized count columns;
        the report: as :func:`~dpfix.release.table.privatize_table`'s, with the unit
        ``person:C:c``, its input the records, and a ``records`` entry (the groups' rule,
        what is counted, the bounding, the budget).

    Raises
    ------
    ValueError
        On bad input, in one line naming it, before any randomness is drawn.

    Examples
    --------
    >>> from dpfix.release.records import Records
    >>> recs = Records({"pid": [1, 1, 1, 2, 3], "county": ["a", "a", "b", "b", "z"]},
    ...                person="pid", group_by="county")
    >>> r = privatize_records(recs, ["a", "b", "c"], 1.0, upper=5, max_contributions=2,
    ...                       seed=0)
    >>> r.table["county"].tolist(), r.report["unit"]["text"]
    (['a', 'b', 'c'], 'person:2')
    """
    plan = plan_records(records, groups, eps, upper=upper, max_contributions=max_contributions,
                        max_per_group=max_per_group, values=values, keep=keep, delta=delta,
                        order=order, seed=seed, options=options, joint=joint, out=out,
                        confidential=confidential)
    return execute_records(plan, ledger=ledger)
