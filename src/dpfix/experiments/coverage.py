"""The coverage study of the stated uncertainty (docs/uncertainty.md section 6): how often each
kind of ``(1 - alpha)`` set holds the truth, over many seeded releases of the shared data.

Every release is a whole release (:func:`dpfix.release.pipeline.privatize_counts` with its own
seed: stage 1's noise, the target, the mechanism and every row's draw are new), so the
coverage is over the whole randomness of the release. For each release:

- the per-count sets (:func:`dpfix.release.uncertainty.confidence_sets`): the share of rows
  whose set holds its true top-coded count (a histogram input: from the joint histogram of
  true and released counts);
- the distribution band (:func:`dpfix.release.uncertainty.distribution_band`): whether the
  true top-coded distribution's CDF lies in it at every count;
- the group totals (:func:`dpfix.release.uncertainty.group_intervals`, a table with a group
  column: the states of the counties, ``FIPS_ST``): the share of groups whose interval holds
  the group's true top-coded total (the mean's interval is the total's over ``k``, so it
  covers exactly when the total's does).

Widths: a set's ``upper - lower`` (averaged over the rows), the band's ``2 (c / N + |s|)``
(its half-width doubled, before clipping; ``s`` the offset of the default post-processing,
docs/uncertainty.md section 3.2), a total's ``upper - lower`` and the mean's
``(upper - lower) / k``, averaged over the groups.
"""

from __future__ import annotations

import sys
import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpfix.io.counts import counts_from_column
from dpfix.io.data import data_path
from dpfix.io.tables import read_histogram, read_table
from dpfix.release.bounds import TopCodingWarning
from dpfix.release.pipeline import privatize_counts
from dpfix.release.uncertainty import confidence_sets, distribution_band, group_intervals

__all__ = ["CoverageCase", "CASES", "QUICK_CASES", "coverage_study", "run_case",
           "coverage_table", "main"]


@dataclass(frozen=True)
class CoverageCase:
    """One setting of the study.

    Attributes
    ----------
    file : str
        A file of the shared data (:func:`dpfix.io.tables.data_path`).
    column : str or None
        The count column of a table; None for a histogram file.
    upper : int
    eps : float
        ``eps_t`` (two-stage framework, northwest corner, rule-of-thumb split).
    groups : str or None
        The column whose values group the rows (the totals), or None.
    methods : tuple of str
        The totals' methods measured.

    Examples
    --------
    >>> CoverageCase("crime_data.csv", "MURDER", 50, 1.0, "FIPS_ST").name
    'crime_data:MURDER upper=50 eps=1'
    """

    file: str
    column: str | None
    upper: int
    eps: float
    groups: str | None = None
    methods: tuple = ("chernoff",)

    @property
    def name(self) -> str:
        """``FILE:COLUMN`` (or ``FILE``), ``upper`` and ``eps``."""
        what = self.file.removesuffix(".csv") + (f":{self.column}" if self.column else "")
        return f"{what} upper={self.upper} eps={self.eps:g}"


#: The settings of the study in docs/uncertainty.md (the ``--full`` test runs them).
CASES = (
    CoverageCase("crime_data.csv", "MURDER", 50, 1.0, "FIPS_ST", ("chernoff", "bonferroni")),
    CoverageCase("crime_data.csv", "MURDER", 50, 0.3, "FIPS_ST", ("chernoff", "bonferroni")),
    CoverageCase("crime_data.csv", "RAPE", 400, 1.0, "FIPS_ST", ("chernoff", "bonferroni")),
    CoverageCase("crime_data.csv", "RAPE", 400, 0.3, "FIPS_ST", ("chernoff", "bonferroni")),
    CoverageCase("binom_hist_data.csv", None, 20, 1.0),
    CoverageCase("zero-inflated_hist.csv", None, 79, 0.3),
)

#: The quick version (the normal test suite): one setting.
QUICK_CASES = (CoverageCase("crime_data.csv", "MURDER", 50, 1.0, "FIPS_ST"),)


def _load(case: CoverageCase) -> tuple[np.ndarray | None, np.ndarray | None, list | None]:
    """``(counts, eta, groups)`` of a case: the counts of a table (its groups' rows) or the
    histogram of a histogram file."""
    path = data_path(case.file)
    if case.column is None:
        return None, read_histogram(path), None
    table = read_table(path)
    counts = counts_from_column(table, case.column)
    groups = None
    if case.groups is not None:
        labels = table[case.groups].to_numpy()
        groups = [np.flatnonzero(labels == v) for v in np.unique(labels)]
    return counts, None, groups


def run_case(case: CoverageCase, releases: int, alpha: float = 0.05,
             seed: int = 0) -> list[dict[str, Any]]:
    """The coverage and widths of every kind of set over ``releases`` seeded releases.

    Parameters
    ----------
    case : CoverageCase
    releases : int
        How many releases (seeds ``seed, seed + 1, ...``).
    alpha : float
        Nominal level ``1 - alpha``.
    seed : int

    Returns
    -------
    list of dict
        One row per kind (``"counts"``, ``"band"``, ``"total (METHOD)"``): ``coverage``
        (pooled), ``releases``, ``trials`` (the pooled number of sets), the per-release and
        per-group extremes, and the widths.
    """
    counts, eta, groups = _load(case)
    start = time.perf_counter()
    if counts is not None:
        x = np.minimum(counts, case.upper)
        eta_true = np.bincount(x, minlength=case.upper + 1)
        totals = np.array([x[g].sum() for g in groups]) if groups else None
    else:
        eta_true = np.zeros(case.upper + 1, dtype=np.int64)
        eta_true[:min(eta.size, case.upper + 1)] = eta[:case.upper + 1]
        eta_true[-1] += eta[case.upper + 1:].sum()
    N = int(eta_true.sum())
    per_release, widths, band_hits, band_widths = [], [], [], []
    by_value = np.zeros((2, case.upper + 1))  # rows covered, rows, by true count
    group_hits = {m: [] for m in case.methods}
    group_widths = {m: [] for m in case.methods}
    mean_widths = {m: [] for m in case.methods}
    for i in range(releases):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TopCodingWarning)
            r = (privatize_counts(counts, case.eps, upper=case.upper, seed=seed + i)
                 if counts is not None else
                 privatize_counts(None, case.eps, upper=case.upper, histogram=eta,
                                  seed=seed + i))
        cs = confidence_sets(r, alpha)
        if counts is not None:
            hit = cs.covers(x, r.counts)
            lo, hi = cs.at(r.counts)
            per_release.append(float(hit.mean()))
            widths.append(float(np.where(lo <= hi, hi - lo, 0).mean()))
            by_value[0] += np.bincount(x, weights=hit, minlength=case.upper + 1)
            by_value[1] += eta_true
        else:
            J = r.joint
            xs, ys = np.nonzero(J)
            hit = cs.covers(xs, ys)
            per_release.append(float((J[xs, ys] * hit).sum() / N))
            w = cs.widths()[ys]
            widths.append(float((J[xs, ys] * np.maximum(w, 0)).sum() / N))
            by_value[0] += np.bincount(xs, weights=J[xs, ys] * hit, minlength=case.upper + 1)
            by_value[1] += eta_true
        band = distribution_band(r, alpha)
        band_hits.append(band.covers(eta_true))
        band_widths.append(2 * band.half_width)
        for m in case.methods if groups else ():
            iv = group_intervals(r, groups, alpha, method=m)
            group_hits[m].append([t.covers(int(s)) for t, s in zip(iv, totals, strict=True)])
            group_widths[m].append(np.mean([max(t.width, 0) for t in iv]))
            mean_widths[m].append(np.mean([max(t.width, 0) / t.rows for t in iv]))
    seconds = time.perf_counter() - start
    pr = np.asarray(per_release)
    enough = by_value[1] >= 1000
    rows = [{"case": case.name, "kind": "counts", "releases": releases,
             "trials": int(N * releases), "coverage": float(pr.mean()),
             "per_release_p05": float(np.quantile(pr, 0.05)), "per_release_min": float(pr.min()),
             "worst_true_count": float((by_value[0][enough] / by_value[1][enough]).min()),
             "width": float(np.mean(widths)), "seconds": seconds},
            {"case": case.name, "kind": "band", "releases": releases, "trials": releases,
             "coverage": float(np.mean(band_hits)), "width": float(np.mean(band_widths)),
             "seconds": seconds}]
    for m in case.methods if groups else ():
        H = np.asarray(group_hits[m], dtype=float)  # releases x groups
        rows.append({"case": case.name, "kind": f"total ({m})", "releases": releases,
                     "trials": int(H.size), "coverage": float(H.mean()),
                     "per_group_min": float(H.mean(axis=0).min()),
                     "width": float(np.mean(group_widths[m])),
                     "mean_width": float(np.mean(mean_widths[m])), "groups": len(groups),
                     "seconds": seconds})
    return rows


def coverage_study(cases: Any = CASES, releases: int = 1000, alpha: float = 0.05,
                   seed: int = 0) -> list[dict[str, Any]]:
    """:func:`run_case` for every case, rows concatenated (the shared data must be present)."""
    out: list[dict[str, Any]] = []
    for case in cases:
        out.extend(run_case(case, releases, alpha, seed))
    return out


def coverage_table(rows: list[dict[str, Any]]) -> str:
    """The study's rows as the markdown table of docs/uncertainty.md.

    Examples
    --------
    >>> print(coverage_table([{"case": "c", "kind": "band", "releases": 10, "trials": 10,
    ...                        "coverage": 0.9, "width": 0.01}]))
    | case | kind | releases | sets | coverage | worst | mean width |
    |---|---|---|---|---|---|---|
    | c | band | 10 | 10 | 0.9000 |  | 0.01 |
    """
    lines = ["| case | kind | releases | sets | coverage | worst | mean width |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        worst = (r.get("per_release_p05"), r.get("per_group_min"))
        if r["kind"] == "counts":
            text = (f"5% of releases below {r['per_release_p05']:.4f}; least by true count "
                    f"{r['worst_true_count']:.4f}")
        elif worst[1] is not None:
            text = f"least over the {r['groups']} groups {r['per_group_min']:.4f}"
        else:
            text = ""
        width = (f"{r['width']:.4g} (mean {r['mean_width']:.3g})" if "mean_width" in r
                 else f"{r['width']:.4g}")
        lines.append(f"| {r['case']} | {r['kind']} | {r['releases']} | {r['trials']} | "
                     f"{r['coverage']:.4f} | {text} | {width} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the study's table: ``python -m dpfix.experiments.coverage [RELEASES]``."""
    args = sys.argv[1:] if argv is None else argv
    releases = int(args[0]) if args else 1000
    print(coverage_table(coverage_study(CASES, releases)))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
