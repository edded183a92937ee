"""From records to counts: each person's contributions bounded, the records aggregated per
declared group, the counts released under the unit ``person`` (docs/records.md).

A statistics office holds *records*: one row per incident, with the person behind it (a
victim or an offender), the group it belongs to (the county) and what it is (the offence).
:func:`privatize_records` releases the table of counts per declared group in one call:

1. **the declared groups** (public, given by the data holder, never read from the
   records): every declared group gets a row, with count 0 when no record falls in it;
   a record whose group is not declared (or missing) is dropped, and so is a record
   whose counted value is not declared;
2. **contribution bounding** (:func:`bound_contributions`): each person keeps at most
   ``C = max_contributions`` of their records in all and at most ``c = max_per_group``
   in any one group, a uniformly random subset among the largest ones meeting both caps
   (secure randomness; seeded only for tests);
3. **aggregation**: the kept records counted per group (one column, or one column per
   declared value of the counted column);
4. **the release**: the plan of :func:`dpfix.release.plan.plan_release` on that table with
   the unit ``person:C:c`` (:class:`dpfix.release.budget.PrivacyUnit`): one person changes
   at most ``C`` counts, by at most ``c`` in a row and at most ``C`` in all, so every
   column may spend the whole budget at its share over ``C`` (docs/records.md, the
   proof).

``C`` may be chosen privately (:func:`suggest_max_contributions`, or
``max_contributions="auto"`` / :class:`PrivateContributions`: a planned stage of the
release).

The rooms, each of one concern: :mod:`~dpfix.release.records.bounding` (the sampler of
the bounding, its exact law, the counts it keeps), :mod:`~dpfix.release.records.reading`
(the records and the declared groups read and indexed),
:mod:`~dpfix.release.records.stream` (a CSV file beyond memory, partitioned by person on
disk), :mod:`~dpfix.release.records.dask` (a partitioned dataset with Dask),
:mod:`~dpfix.release.records.sources` (which of these reads the records),
:mod:`~dpfix.release.records.contributions` (the choice of ``C``),
:mod:`~dpfix.release.records.plan` (the plan of a call) and
:mod:`~dpfix.release.records.release` (its execution, ``privatize_records``).
"""

from __future__ import annotations

from dpfix.release.records.bounding import basis_law, bound_contributions
from dpfix.release.records.contributions import (
    CONTRIBUTIONS_SHARE,
    DEFAULT_CONTRIBUTION_QUANTILE,
    DEFAULT_MAX_CONTRIBUTIONS,
    ContributionBound,
    PrivateContributions,
    suggest_max_contributions,
)
from dpfix.release.records.plan import RECORD_ORDERS, RecordsPlan, plan_records
from dpfix.release.records.reading import COUNT_COLUMN, Records
from dpfix.release.records.release import (
    BoundedCounts,
    bounded_counts,
    execute_records,
    privatize_records,
)

__all__ = ["privatize_records", "plan_records", "execute_records", "RecordsPlan", "Records",
           "PrivateContributions", "bound_contributions", "bounded_counts", "BoundedCounts",
           "suggest_max_contributions", "ContributionBound", "basis_law",
           "DEFAULT_CONTRIBUTION_QUANTILE", "DEFAULT_MAX_CONTRIBUTIONS", "CONTRIBUTIONS_SHARE",
           "COUNT_COLUMN", "RECORD_ORDERS"]
