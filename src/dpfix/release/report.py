"""The public report of a release: one shape for one or many columns, versioned, with a
JSON Schema shipped beside this module (``report.schema.json``, docs/release.md).

Every report holds ``report_version`` (:data:`REPORT_VERSION`), the privacy unit, the
composition over the columns, the input, the output's columns and row order, and
``columns``: one entry per privatized column (its bound, budget and split, target,
mechanism, samplers, output distribution), in the order given, also for one column.
"""

from __future__ import annotations

import json
from fractions import Fraction
from importlib import resources
from typing import Any

from dpfix.release.budget import PrivacyUnit

__all__ = ["REPORT_VERSION", "report_schema", "assemble", "composition", "unit_entry",
           "ROW_ORDER_RULES", "DATASET_ROW_ORDER_RULES"]

#: The version of the report's shape (``report_version``); a change of shape raises it.
REPORT_VERSION = 1

#: What each row order guarantees (the report's ``row_order_rule``).
ROW_ORDER_RULES = {
    "key": "rows sorted by the key columns (CSV cells as text, Parquet and DataFrame "
           "columns by value, missing last); rows with equal keys in a uniformly random "
           "order",
    "shuffled": "rows in a uniformly random order (a permutation drawn from the run's "
                "randomness source), independent of the input's order",
    "input": "rows in the input's order (order='input', --order input): that order may "
             "follow the confidential data",
}

#: What each row order of a Dataset release guarantees (the Dask engine: no global sort,
#: the partitions are drawn independently).
DATASET_ROW_ORDER_RULES = {
    "shuffled": "the partitions written in a uniformly random order and the rows of each "
                "partition in a uniformly random order; which rows share a partition follows "
                "the input's partitioning",
    "input": "rows in the input's order (--order input): that order may follow the "
             "confidential data",
}


def report_schema() -> dict:
    """The JSON Schema of the public report (``dpfix/release/report.schema.json``).

    Examples
    --------
    >>> report_schema()["properties"]["report_version"]["const"]
    1
    """
    text = resources.files("dpfix.release").joinpath("report.schema.json").read_text("utf-8")
    return json.loads(text)


def unit_entry(unit: PrivacyUnit) -> dict:
    """The report's ``unit``: the neighbouring tables, the composition and the proof.

    Examples
    --------
    >>> unit_entry(PrivacyUnit("cell"))["composition"]
    'parallel'
    """
    return {
        "name": unit.name, "bound": unit.bound, "text": unit.text,
        "statement": unit.statement(),
        "composition": unit.composition,
        "mechanisms": "each column's mechanisms run at its budget divided by the bound c "
                      f"= {unit.bound} (lam = e^(eps / c)): a change by c is a path of c "
                      "changes by 1, each costing eps / c (group privacy)",
        "proof": "docs/records.md (the person unit: bounding, the joint release); "
                 "docs/release.md (composition)" if unit.name == "person" else
                 "docs/release.md (the privacy unit; composition)",
    }


def composition(names: list, budgets: list[float], eps_t: Any, rule: str, unit: PrivacyUnit,
                deltas: list | None = None, seeded: bool = False, exact: bool = False) -> dict:
    """The ``composition`` entry: what the release as a whole spends, computed exactly.

    Sequential composition (unit ``row``): the release is ``(sum eps, sum delta)``-DP;
    parallel (unit ``cell``): ``(max eps, max delta)``-DP. The sum or the maximum is taken
    exactly (in rationals) over the float budgets the columns spent.

    Examples
    --------
    >>> c = composition(["a", "b"], [0.5, 0.5], "1", "equal", PrivacyUnit())
    >>> c["eps_spent"], c["eps_spent_at_most_eps_t"], c["per_column"]["b"]
    (1.0, True, 0.5)
    """
    each = [Fraction(b) for b in budgets]
    parallel = unit.composition == "parallel"
    spent = max(each) if parallel else sum(each, Fraction(0))
    ds = [Fraction(d) for d in (deltas or []) if d is not None]
    delta = (max(ds) if parallel else sum(ds, Fraction(0))) if ds else Fraction(0)
    if exact:  # the rationals themselves (a ledger's charge)
        return {"eps_spent": spent, "delta_spent": delta}
    how = (f"parallel composition over one person's changes: they change at most C = "
           f"{unit.bound} counts of the table, by at most {unit.bound} in all; each column "
           "privatized independently at its eps over C costs at most its eps over C per unit "
           "of change, so the release is (max of the columns' eps)-DP (docs/records.md)"
           if unit.name == "person" else
           "parallel composition: one individual changes one count of one row, so one "
           "column only; the columns are privatized independently, and the release is "
           "(max of the columns' eps)-DP" if parallel else
           "sequential composition: one individual may change every column of one row; "
           "each column privatized independently (its own stage 1 and stage 2, independent "
           "randomness), so the release is (sum of the columns' eps)-DP")
    return {
        "unit": unit.text,
        "rule": how,
        "eps_t": float(eps_t),
        "split_over_columns": rule,
        "per_column": dict(zip(names, budgets, strict=True)),
        "mechanism_eps": {n: b / unit.bound for n, b in zip(names, budgets, strict=True)},
        "eps_spent": float(spent),
        "eps_spent_at_most_eps_t": spent <= Fraction(float(eps_t)),
        "eps_spent_note": "the exact (rational) " + ("maximum" if parallel else "sum") +
                          " of the float budgets the columns spent; each is rounded so that "
                          "it never exceeds eps_t",
        "delta_spent": float(delta),
        "randomness": ("seeded: column i's seed is SeedSequence(seed).spawn(k)[i] as a 128-bit "
                       "integer (reproducible, NOT FOR PRODUCTION)" if seeded and
                       len(names) > 1 else "seeded (NOT FOR PRODUCTION)" if seeded else
                       "fresh secure randomness for every column"),
        "proof": "docs/release.md (composition)",
    }


#: The keys of a column's report shared by every column (kept once, at the top).
_SHARED = ("report", "privacy", "output", "dpfix_version", "input")


def assemble(per_column: list[dict], names: list, composed: dict, unit: PrivacyUnit,
             source: dict, output_columns: dict | None = None, row_order: str | None = None,
             row_order_rule: str | None = None, extra: dict | None = None) -> dict:
    """The public report (version :data:`REPORT_VERSION`) from each column's report
    (:func:`dpfix.io.reports.public_report`).

    Examples
    --------
    >>> a = {"report": "r", "privacy": "p", "dpfix_version": "0", "n": 3}
    >>> rep = assemble([a], ["x"], {}, PrivacyUnit(), {"path": "t.csv", "kind": "csv"})
    >>> rep["report_version"], [c["column"] for c in rep["columns"]], rep["columns"][0]["n"]
    (1, ['x'], 3)
    """
    first = per_column[0]
    head: dict[str, Any] = {
        "report_version": REPORT_VERSION,
        "report": "dpfix release",
        "privacy": first.get("privacy", ""),
        "dpfix_version": first.get("dpfix_version", ""),
        "unit": unit_entry(unit),
        "composition": composed,
        "input": {**source, "columns": list(names)},
    }
    if output_columns is not None:
        head["output_columns"] = output_columns
    if row_order is not None:
        head["row_order"], head["row_order_rule"] = row_order, row_order_rule
    head.update(extra or {})
    head["columns"] = [{"column": name, **{k: v for k, v in rep.items() if k not in _SHARED}}
                       for name, rep in zip(names, per_column, strict=True)]
    return head
