"""Floor 7, release: publishing a table of counts under differential privacy.

- :mod:`dpfix.release.privatizers`: stage 1, the DP estimates of the distribution of
  counts (cyclic Laplace and the baselines), their post-processing and the
  deconvolution estimators;
- :mod:`dpfix.release.options`: the options of a release, validated once (one frozen
  dataclass per family of methods) and the split of the budget between the stages;
- :mod:`dpfix.release.frameworks`: the frameworks (two-stage, one-stage, hybrid) that
  privatize a column of counts, and the draws of stage 2;
- :mod:`dpfix.release.result`: what a column's privatization returns
  (``PrivatizedCounts``) and the errors that stop one before any row is drawn;
- :mod:`dpfix.release.pipeline`: ``privatize_counts``, one column of counts or its
  histogram, the methods named by keywords;
- :mod:`dpfix.release.budget`: the privacy unit, the shares of the budget over the
  columns, the usable ranges (the policy the library and ``dpfix privatize`` share);
- :mod:`dpfix.release.seeds`: the seed policy, which child of a seed each part of a
  release draws from;
- :mod:`dpfix.release.report`: the public report, one versioned shape, and its JSON
  Schema (``report.schema.json``), and the confidential report;
- :mod:`dpfix.release.figures`: each column's public target and output distribution as
  a figure;
- :mod:`dpfix.release.order`: the order of a release's rows (by key, shuffled or the
  input's), a rule of privacy, and its randomness;
- :mod:`dpfix.release.joint`: ``privatize_pair``, two count columns released with their
  joint distribution as the fixed point (``privatize_table(..., joint=)``, docs/joint.md);
- :mod:`dpfix.release.inputs`: what a release reads (a DataFrame, a file, ``Csv``,
  ``Histogram``, a Dask ``Dataset``) and the table read from it;
- :mod:`dpfix.release.plan`: ``plan_release``, every choice of a release checked and every
  budget computed exactly before any data are read, the ``ReleasePlan``;
- :mod:`dpfix.release.memory`: the in-memory engine that executes a plan;
- :mod:`dpfix.release.outputs`: the ``Release`` (public), the ``Confidential``, and how an
  output file is put in place;
- :mod:`dpfix.release.table`: ``privatize_table``, a table of count columns released in
  one call (a plan and its execution, :func:`dpfix.release.table.execute`;
  docs/release.md);
- :mod:`dpfix.release.records` (a package of rooms: the bounding, the reading, the streamed
  and Dask readers, the choice of ``C``, the plan, the release): ``privatize_records``,
  records (one row per incident, ``Records``) bounded per person, counted per declared
  group and released under the unit ``person``, planned by ``plan_records``
  (docs/records.md);
- :mod:`dpfix.release.stream`: a CSV file released to a CSV file in two passes, in
  memory flat in the number of rows (external shuffle, stable merge; docs/release.md);
- :mod:`dpfix.release.dask`: the same release on a partitioned dataset with Dask;
- :mod:`dpfix.release.bounds`: a DP upper bound (``upper="auto"``) and the warning when
  the private target piles up on ``upper`` (docs/bounds.md);
- :mod:`dpfix.release.ledger`: the budget ledger, a file recording the charge of every
  release against one total (sequential composition), ``Ledger``;
- :mod:`dpfix.release.opendp`: the release as an OpenDP ``Measurement`` with its proved
  privacy map, ``make_privatize_counts`` (OpenDP imported when one is built);
- :mod:`dpfix.release.uncertainty`: the stated uncertainty of a release from public
  quantities only: per-count confidence sets, a band for the distribution, intervals for
  group totals (docs/uncertainty.md).

The names a data holder types are here, imported on first use
(``from dpfix.release import privatize_table``), so that importing a submodule stays
light.

May import: :mod:`dpfix.numbers`, :mod:`dpfix.sampling`, :mod:`dpfix.theory`,
:mod:`dpfix.constructors` and :mod:`dpfix.io` (reading and writing tables, the atomic
commit, JSON files); not the research floors :mod:`dpfix.certify` and
:mod:`dpfix.explore`, which a release does not need.
"""

from __future__ import annotations

import importlib
from typing import Any

#: name -> the module that defines it
_EXPORTS = {
    "privatize_table": "dpfix.release.table",
    "Release": "dpfix.release.table",
    "Confidential": "dpfix.release.table",
    "Histogram": "dpfix.release.table",
    "Dataset": "dpfix.release.table",
    "Csv": "dpfix.release.inputs",
    "Output": "dpfix.release.plan",
    "PrivateBound": "dpfix.release.bounds",
    "plan_release": "dpfix.release.plan",
    "execute": "dpfix.release.table",
    "PrivacyUnit": "dpfix.release.budget",
    "TwoStage": "dpfix.release.options",
    "OneStage": "dpfix.release.options",
    "NoSplit": "dpfix.release.options",
    "Auto": "dpfix.release.options",
    "privatize_counts": "dpfix.release.pipeline",
    "privatize_records": "dpfix.release.records",
    "plan_records": "dpfix.release.records",
    "Records": "dpfix.release.records",
    "PrivateContributions": "dpfix.release.records",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dpfix.release' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
