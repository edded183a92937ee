"""The plan of a records release: every choice of ``privatize_records`` checked once, every
budget exact, before any record is read (docs/records.md).

:func:`plan_records` makes a frozen :class:`RecordsPlan`: what is read and counted (the
:class:`~dpfix.release.records.reading.RecordsSchema`), the caps ``C`` and ``c`` or the
choice of ``C`` (:class:`~dpfix.release.records.contributions.PrivateContributions`: a
stage of the release whose budget is split off the total by
:func:`dpfix.release.options.stage_split` and rounded down, as a bound chosen privately is),
the reader (:func:`dpfix.release.records.sources.records_engine`), the seeds, and the
release of the bounded counts: a :class:`~dpfix.release.plan.ReleasePlan` made by
:func:`dpfix.release.plan.plan_release` under the unit ``person:C:c``, its data the table of
counts that the bounding makes (None until then). When ``C`` is chosen the release is
planned at ``C = 1`` (every choice checked) and again, by the same function, at the ``C``
chosen (:meth:`RecordsPlan.release_at`): under the unit ``person`` every column's budget is
the same whatever ``C`` (only its mechanisms' ``budget / C`` change), so the charge is
known before the choice, and the candidates stop at the largest ``C`` whose plan is
admitted (:func:`dpfix.release.records.contributions.largest_candidate`).

The ledger's charge (:attr:`RecordsPlan.charge`) is the release plan's, plus the choice of
``C``'s budget when it is chosen (sequential composition), exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import Any

from dpfix.release.budget import PrivacyUnit, exact_budget
from dpfix.release.ledger import Budget
from dpfix.release.plan import ReleasePlan, plan_release
from dpfix.release.records.bounding import check_bounds
from dpfix.release.records.contributions import (
    PERSON_STATEMENT,
    PrivateContributions,
    largest_candidate,
    private_contributions,
)
from dpfix.release.records.reading import Records, RecordsSchema, records_schema, source_name
from dpfix.release.records.sources import records_engine
from dpfix.release.seeds import check_seed, column_seeds

__all__ = ["RecordsPlan", "plan_records", "RECORD_ORDERS", "SEED_PARTS"]

#: The row orders of the released table (``order=``) and the release plan's: the declared
#: order of the groups (public), sorted by the group columns, or shuffled.
RECORD_ORDERS = {"groups": "input", "key": "key", "shuffled": "shuffled"}
#: The parts of a seeded records release, each drawing from its own child of the seed
#: (:func:`dpfix.release.seeds.column_seeds`): the bounding, the choice of ``C``, the release.
SEED_PARTS = ("bounding", "contributions", "release")


@dataclass(frozen=True)
class RecordsPlan:
    """A records release, planned (module docstring). Frozen: nothing of it changes while it
    runs.

    Attributes
    ----------
    records : Records
        The records as given (not read yet).
    schema : RecordsSchema
        What is read and counted.
    groups : object
        The declared groups as given (not read yet).
    eps : object
        The total budget as given.
    max_contributions : int or PrivateContributions
        ``C`` given, or its choice.
    max_per_group : int or None
        ``c`` (``C`` when not given; None when ``C`` is chosen and ``c`` not given: the
        ``C`` chosen).
    eps_contributions : float
        What the choice of ``C`` spends (0.0 with ``C`` given).
    largest_candidate : int or None
        The largest candidate of the choice of ``C``.
    release : ReleasePlan
        The release of the bounded counts (its ``data`` None): at ``C`` given, or at ``C =
        1`` when ``C`` is chosen (:meth:`release_at`).
    arguments : mapping
        The keywords of :func:`dpfix.release.plan.plan_release` that make ``release``, its
        unit aside.
    order : str
        ``"groups"``, ``"key"`` or ``"shuffled"``.
    engine : str
        The reader (:data:`dpfix.release.records.sources.RECORD_ENGINES`).
    seed : int or None
        The seed as given (NOT FOR PRODUCTION).
    seeds : tuple
        The seeds of the bounding, the choice of ``C`` and the release (:data:`SEED_PARTS`).
    confidential : bool
        Also return the :class:`~dpfix.release.outputs.Confidential`.
    charge : dpfix.release.ledger.Budget
        What the call spends, ``(eps, delta)`` exactly: the ledger's charge.
    """

    records: Records
    schema: RecordsSchema
    groups: Any
    eps: Any
    max_contributions: int | PrivateContributions
    max_per_group: int | None
    eps_contributions: float
    largest_candidate: int | None
    release: ReleasePlan
    arguments: Mapping
    order: str
    engine: str
    seed: int | None
    seeds: tuple
    confidential: bool
    charge: Budget

    @property
    def names(self) -> list:
        """The count columns."""
        return list(self.schema.names)

    @property
    def chosen(self) -> PrivateContributions | None:
        """The choice of ``C`` (None: ``C`` given)."""
        c = self.max_contributions
        return c if isinstance(c, PrivateContributions) else None

    @property
    def dataset(self) -> str:
        """What a ledger's charge names as the data set (the records' source)."""
        return source_name(self.records.source)

    def bounds(self, C: int) -> tuple[int, int]:
        """``(C, c)`` of the release at ``C``: ``c`` the smaller of ``max_per_group`` and
        ``C``."""
        return C, C if self.max_per_group is None else min(self.max_per_group, C)

    def release_at(self, C: int) -> ReleasePlan:
        """The release's plan under the unit ``person:C:c`` (the plan itself with ``C``
        given); the same charge whatever ``C``."""
        if self.chosen is None and C == self.max_contributions:
            return self.release
        plan = _release(self.arguments, PrivacyUnit("person", *self.bounds(C)))
        assert plan.charge == self.release.charge, "the unit person's charge is C-free"
        return plan

    def statement(self) -> str:
        """The unit in words, as the ledger's charge records it: the unit ``person:C:c``'s
        statement, or with ``C`` chosen the choice composed with the release.

        Examples
        --------
        >>> p = plan_records(Records({"p": [1], "g": ["a"]}, "p", "g"), ["a"], 1.0,
        ...                  upper=3, max_contributions=3, max_per_group=2)
        >>> p.statement()[:60]
        'neighbouring tables differ by one person (added or removed):'
        """
        if self.chosen is not None:
            return (f"{PERSON_STATEMENT}; the choice of C and the release compose "
                    "sequentially, the release under the unit person:C of the C chosen "
                    "(docs/records.md)")
        return PrivacyUnit("person", *self.bounds(self.max_contributions)).statement()

    def reserve(self, ledger: Any, **keywords: Any) -> Any:
        """The reservation of this plan's charge on ``ledger``, to enter before the release:
        the records' source, the count columns and the unit named; ``keywords`` as
        :meth:`~dpfix.release.ledger.Ledger.reserve` (``dataset=`` another name,
        ``on_wait=``)."""
        keywords.setdefault("dataset", self.dataset)
        return ledger.reserve(self.charge.eps, self.charge.delta,
                              columns=[str(n) for n in self.names], unit=self.statement(),
                              **keywords)


def _release(arguments: Mapping, unit: PrivacyUnit) -> ReleasePlan:
    """The release's plan under ``unit``, its data to come (the bounded counts)."""
    return plan_release(None, unit=unit, **arguments)


def _columns(schema: RecordsSchema, values: Any) -> dict:
    """The release's columns: each count column with its share (a ``values`` mapping value
    -> share; None: an equal part)."""
    shares = values if isinstance(values, Mapping) else {}
    return {name: shares.get(v) for name, v in zip(schema.names, schema.values or schema.names,
                                                   strict=True)}


def plan_records(records: Any, groups: Any, eps: Any, *, upper: Any, max_contributions: Any,
                 max_per_group: int | None = None, values: Any = None, keep: Any = (),
                 delta: float | None = None, order: str = "groups", seed: int | None = None,
                 options: Any = None, joint: Any = None, out: Any = None,
                 confidential: bool = False) -> RecordsPlan:
    """Check a records release's choices and plan it, before any record is read (module
    docstring).

    The parameters are :func:`dpfix.release.records.privatize_records`'s, but the ledger
    (the plan states its ``charge``: :meth:`RecordsPlan.reserve`).

    Raises
    ------
    ValueError
        On a bad choice, in one line naming the parameter.

    Examples
    --------
    >>> recs = Records({"pid": [1, 1, 2], "g": ["a", "b", "a"]}, person="pid", group_by="g")
    >>> p = plan_records(recs, ["a", "b"], "1", upper=5, max_contributions="auto")
    >>> p.eps_contributions, p.charge.eps <= 1, p.release.unit.text, p.engine
    (0.1, True, 'person', 'memory')
    >>> p.release_at(4).columns[0].eps == p.release.columns[0].eps / 4
    True
    """
    schema = records_schema(records, values, keep)
    if order not in RECORD_ORDERS:
        raise ValueError(f"order: one of {', '.join(RECORD_ORDERS)}, got {order!r}")
    choice = private_contributions(max_contributions)
    C, c = check_bounds(None if choice is not None else max_contributions, max_per_group)
    if delta is not None and (choice is not None or C > 1):
        raise ValueError("max_contributions: C > 1 is for pure eps-DP methods (group privacy "
                         "also multiplies delta); drop delta= or give max_contributions=1")
    seed = check_seed(seed)
    seeds = tuple(column_seeds(seed, len(SEED_PARTS)))
    total = float(exact_budget(eps, "eps"))
    eps_c, release_eps = (0.0, eps) if choice is None else choice.split(total)
    arguments = MappingProxyType({
        "columns": _columns(schema, values), "eps": release_eps, "upper": upper,
        "keys": schema.group_by, "keep": schema.keep, "delta": delta,
        "order": RECORD_ORDERS[order], "seed": seeds[SEED_PARTS.index("release")],
        "options": options, "joint": joint, "out": out, "confidential": True})
    top = None
    try:
        release = _release(arguments, PrivacyUnit("person", *((C, c) if choice is None
                                                              else (1, 1))))
    except ValueError as exc:
        if choice is None:
            raise
        raise ValueError(f"{exc} (the release's part of eps={eps!r}: "
                         f"max_contributions='auto' spends {eps_c:.6g} on C)") from None
    if choice is not None:
        def admits(k: int) -> bool:
            try:
                _release(arguments, PrivacyUnit("person", k, 1))
            except ValueError:
                return False
            return True
        top = largest_candidate(admits)
    charge = Budget(Fraction(eps_c) + release.charge.eps, release.charge.delta)
    return RecordsPlan(schema=schema, records=records, groups=groups, eps=eps,
                       max_contributions=C if choice is None else choice, max_per_group=c,
                       eps_contributions=eps_c, largest_candidate=top, release=release,
                       arguments=arguments, order=order, engine=records_engine(records.source),
                       seed=seed, seeds=seeds, confidential=bool(confidential), charge=charge)
