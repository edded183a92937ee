"""The reports of a release: the public one, one shape for one or many columns, versioned,
with a JSON Schema shipped beside this module (``report.schema.json``, docs/release.md),
and the confidential one.

Every public report holds ``report_version`` (:data:`REPORT_VERSION`), the privacy unit,
the composition over the columns, the input, the output's columns and row order, and
``columns``: one entry per privatized column (its bound, budget and split, target,
mechanism, samplers, output distribution; :func:`public_report`), in the order given, also
for one column, and ``warnings``: the top-coding warnings built from those entries alone
(:func:`dpfix.release.bounds.top_coding_warnings`). It holds only public parameters and
values computed from the differentially private releases; anything derived from the true
data without noise goes to the confidential report (:func:`confidential_report`,
:func:`confidential_columns`), labelled so (``docs/math_notes.md``, the two-stage pipeline
of the paper's Section 1.2).
"""

from __future__ import annotations

import json
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpfix.io.reports import small_params
from dpfix.numbers.exact import exact_text
from dpfix.release.bounds import top_coding_warnings
from dpfix.release.budget import PrivacyUnit, exact_budget

if TYPE_CHECKING:  # pragma: no cover
    from dpfix.io.tables import TableInput
    from dpfix.release.plan import ReleasePlan
    from dpfix.release.result import PrivatizedCounts

__all__ = ["REPORT_VERSION", "report_schema", "assemble", "composition", "unit_entry",
           "ROW_ORDER_RULES", "DATASET_ROW_ORDER_RULES", "OUTPUT_COLUMNS_RULE", "public_report",
           "confidential_report", "confidential_columns"]

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

#: The report's rule of the columns written (``output_columns``).
OUTPUT_COLUMNS_RULE = ("only the privatized columns and the columns declared public (keys, keep; "
                       "--key, --keep) are written")

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


def composition(plan: ReleasePlan) -> dict:
    """The ``composition`` entry of a planned release: what it spends as a whole, exactly.

    Sequential composition (unit ``row``): the release is ``(sum eps, sum delta)``-DP;
    parallel (unit ``cell``): ``(max eps, max delta)``-DP. The sum or the maximum is the
    plan's charge, taken exactly (in rationals) over the float budgets the columns spend.

    Examples
    --------
    >>> from dpfix.release.plan import plan_release
    >>> c = composition(plan_release({"a": [1], "b": [2]}, ["a", "b"], "1", upper=3))
    >>> c["eps_spent"], c["eps_spent_at_most_eps_t"], c["per_column"]["b"]
    (1.0, True, 0.5)
    """
    names, unit = plan.names, plan.unit
    parallel = unit.composition == "parallel"
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
    seeded = plan.seed is not None
    return {
        "unit": unit.text,
        "rule": how,
        "eps_t": float(plan.eps),
        "split_over_columns": plan.rule,
        "per_column": dict(zip(names, plan.budgets, strict=True)),
        "mechanism_eps": {c.name: c.eps for c in plan.columns},
        "eps_spent": float(plan.charge.eps),
        "eps_spent_at_most_eps_t": plan.charge.eps <= Fraction(float(plan.eps)),
        "eps_spent_note": "the exact (rational) " + ("maximum" if parallel else "sum") +
                          " of the float budgets the columns spent; each is rounded so that "
                          "it never exceeds eps_t",
        "delta_spent": float(plan.charge.delta),
        "exact": {"eps_t": exact_text(exact_budget(plan.eps, "eps")),
                  "per_column": {str(n): exact_text(c.budget) for n, c in
                                 zip(names, plan.columns, strict=True)},
                  "mechanism_eps": {str(c.name): exact_text(c.eps) for c in plan.columns},
                  "eps_spent": exact_text(plan.charge.eps),
                  "delta_spent": exact_text(plan.charge.delta),
                  "rule": "the exact rational values: eps_t as given, and each float budget "
                          "at its binary value (a decimal where it has one, else p/q)"},
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
    (:func:`public_report`).

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
    head["warnings"] = top_coding_warnings(head["columns"], head.get("joint", ()))
    return head


def public_report(result: PrivatizedCounts, table: TableInput, column: str | None, upper: int,
                  out: str | Path) -> dict:
    """The public report of one privatized table: safe to publish with the output.

    Every value is a public parameter (the budgets and split, ``upper``, ``N``,
    ``n``, the file names) or computed from the differentially private
    releases (the target ``z``, ``T`` and its estimated count error, the output
    distribution); the time to build ``T`` depends on the public ``z`` only.
    The number of top-coded counts and the data-dependent timings are left out
    (:func:`confidential_report`); so is the constructor's random state.

    Parameters
    ----------
    result : dpfix.release.result.PrivatizedCounts
    table : dpfix.io.tables.TableInput
        The input as read (its path and kind are reported).
    column : str or None
        The privatized column (None for a histogram).
    upper : int
        The public upper bound.
    out : str or pathlib.Path
        The output file.

    Returns
    -------
    dict
        Ready for :func:`dpfix.io.reports.write_json`.

    Examples
    --------
    >>> from dpfix.io.tables import TableInput
    >>> from dpfix.release.pipeline import privatize_counts
    >>> counts = np.array([0, 1, 1, 2, 9])
    >>> r = privatize_counts(counts, 1.0, upper=2, seed=0)
    >>> rep = public_report(r, TableInput(Path("t.csv"), "csv", counts), "k", 2, "o.csv")
    >>> from dpfix.io.reports import jsonable
    >>> rep["upper"], rep["N"], "topcoded" in json.dumps(jsonable(rep))
    (2, 5, False)
    """
    report = {
        "report": "dpfix privatize",
        "privacy": "every value here is public (parameters, N, n) or computed from the "
                   "differentially private releases; nothing is derived from the true data "
                   "without noise",
        "input": {"path": str(table.path), "kind": table.kind, "column": column},
        "output": {"path": str(out)},
        "upper": upper,
        "top_coding": {"upper": upper, "bound": (
                           "a public parameter given by the user" if result.bound is None else
                           "chosen privately with eps_upper (upper_bound: a DP output)")
                       + "; counts above it are replaced by it before privatization",
                       "count": "in the confidential report only: it is derived from the true "
                       "data without noise"},
    }
    report.update(result.public_report())
    if result.mechanism is not None:  # None: a structured constructor drawn without T
        report["mechanism"]["params"] = small_params(result.mechanism.params)
    # building T reads only the public z; the other phases take time growing with the
    # data (the draw with the number of non-empty count groups): confidential report only
    report["timings_seconds"] = {"construct": result.seconds["construct"]}
    report["timings_note"] = ("only the construction of T (a function of the public target "
                              "z); the data-dependent timings are in the confidential report")
    from dpfix import __version__

    report["dpfix_version"] = __version__
    return report


def confidential_report(result: PrivatizedCounts, table: TableInput, upper: int,
                        timings: dict) -> dict:
    """The confidential report: values derived from the true data WITHOUT noise.

    For the data holder only (top-level key ``"CONFIDENTIAL"``): the true
    distribution of counts ``zeta``, the distances of the output and of the
    target to it, the realized count error, the number of top-coded counts and
    every timing.

    Parameters
    ----------
    result : dpfix.release.result.PrivatizedCounts
    table : dpfix.io.tables.TableInput
        The input as read (its counts; for a histogram, ``result.joint``).
    upper : int
        The public upper bound.
    timings : dict
        Seconds of each phase.

    Returns
    -------
    dict
        Ready for :func:`dpfix.io.reports.write_json`.

    Examples
    --------
    >>> from dpfix.io.tables import TableInput
    >>> from dpfix.release.pipeline import privatize_counts
    >>> counts = np.array([0, 1, 1, 2, 9])
    >>> r = privatize_counts(counts, 1.0, upper=2, seed=0)
    >>> c = confidential_report(r, TableInput(Path("t.csv"), "csv", counts), 2, {})
    >>> c["CONFIDENTIAL"], c["topcoded"], c["true_distribution_zeta"].tolist()
    ('derived from the true data without noise', 1, [0.2, 0.4, 0.4])
    """
    from dpfix.theory.metrics import kolmogorov_smirnov, total_variation, wasserstein1

    zhat = result.output_distribution
    kept = getattr(result, "confidential", None)
    if kept is not None:  # the Dask engine: the histogram and sums kept per partition
        zeta = np.asarray(kept["eta"]) / result.N
        realized = float(kept["abs"]), float(kept["squared"])
        true = float(kept["abs_true"]), float(kept["squared_true"])
    elif result.joint is None:
        d = np.minimum(table.counts, upper)
        zeta = np.bincount(d, minlength=result.n) / result.N
        diff = (result.counts - d).astype(float)
        realized = float(np.abs(diff).mean()), float((diff ** 2).mean())
        gap = (result.counts - table.counts).astype(float)
        true = float(np.abs(gap).mean()), float((gap ** 2).mean())
    else:  # joint[i, j]: rows moved from count i to count j
        zeta = result.joint.sum(axis=1) / result.N
        realized, true = _joint_errors(result.joint, np.asarray(table.eta), result.N)

    def distances(p: np.ndarray) -> dict:
        return {"wasserstein1": float(wasserstein1(p, zeta)),
                "total_variation": float(total_variation(p, zeta)),
                "kolmogorov_smirnov": float(kolmogorov_smirnov(p, zeta))}
    return {
        "CONFIDENTIAL": "derived from the true data without noise",
        "warning": "not covered by the differential privacy guarantee: do not publish",
        "input": str(table.path),
        "topcoded": result.topcoded,
        "topcoded_definition": f"number of true counts above the public bound upper = {upper}",
        "true_distribution_zeta": zeta,
        "output_vs_true": distances(zhat),
        "target_vs_true": None if result.z is None else distances(result.z),
        "realized_count_error": {"abs": realized[0], "squared": realized[1],
                                 "definition": "mean over rows of |output - top-coded input| "
                                               "(and of its square)"},
        "realized_count_error_vs_true": {
            "abs": true[0], "squared": true[1],
            "definition": "mean over rows of |output - true input| (and of its square): with "
                          "the top-coding error, which realized_count_error leaves out"
                          + ("" if result.joint is None else
                             "; a histogram's rows top-coded to upper are exchangeable: the "
                             "mean over a uniformly random matching of their true counts to "
                             "their outputs")},
        "estimated_count_error": result.estimated_count_error,
        "timings_seconds": timings,
        "timings_note": "read, stage 1, draw, write and total depend on the data",
    }


def _joint_errors(joint: np.ndarray, eta: np.ndarray, N: int) -> tuple[tuple[float, float],
                                                                       tuple[float, float]]:
    """Mean ``|out - in|`` and ``(out - in)^2`` from the joint histogram (``in`` top-coded),
    then against the true counts ``eta`` (the rows of the last input value, top-coded to
    ``upper``, matched to their true counts uniformly at random: the mean over the matching).
    """
    n = joint.shape[0]
    values = np.arange(n, dtype=float)
    gap = np.abs(np.subtract.outer(values, values))
    w = joint / N
    realized = float((w * gap).sum()), float((w * gap**2).sum())
    t = np.flatnonzero(eta[n - 1:]) + (n - 1)  # the true counts of the rows top-coded
    share = eta[t] / eta[t].sum() if t.size else np.zeros(0)
    gap_top = np.abs(np.subtract.outer(values, t.astype(float)))  # [output j, true count]
    head = w[:-1]
    true_abs = float((head * gap[:-1]).sum() + (w[-1] * (gap_top @ share)).sum())
    true_sq = float((head * gap[:-1] ** 2).sum() + (w[-1] * (gap_top ** 2 @ share)).sum())
    return realized, (true_abs, true_sq)


def confidential_columns(per_column: list[dict], names: list[str], table: TableInput,
                         timings: dict) -> dict:
    """One confidential report for several columns: each column's
    :func:`confidential_report` under ``columns`` (in the order given), the
    reading and writing timings once.

    Examples
    --------
    >>> from dpfix.io.tables import TableInput
    >>> c = confidential_columns([{"topcoded": 1}, {"topcoded": 0}], ["a", "b"],
    ...                          TableInput(Path("t.csv"), "csv", None), {"read": 0.1})
    >>> c["CONFIDENTIAL"], [x["column"] for x in c["columns"]]
    ('derived from the true data without noise', ['a', 'b'])
    """
    return {
        "CONFIDENTIAL": "derived from the true data without noise",
        "warning": "not covered by the differential privacy guarantee: do not publish",
        "input": str(table.path),
        "columns": [{"column": name, **{k: v for k, v in rep.items()
                                        if k not in ("CONFIDENTIAL", "warning", "input")}}
                    for name, rep in zip(names, per_column, strict=True)],
        "timings_seconds": timings,
        "timings_note": "reading and writing the whole table; each column's own phases are "
                        "under its entry",
    }
