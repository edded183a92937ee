"""Synthetic incident records, and the study of the released counts' error against the
bound ``C`` of contributions per person (docs/records.md, section 6).

:func:`incidents` draws a table of records as a statistics office holds them: one row per
incident with a person (``person_id``), a county and an offence. The number of records per
person is heavy-tailed (most persons have one record, a few some dozens: ``P(m)``
proportional to ``m^-tail`` on ``1 .. max_records``, :func:`contributions_law`); each person
has a home county (drawn by the counties' weights, proportional to ``1 / rank^0.8``) where
most of their records fall, and a usual offence. The declared counties
(:attr:`Incidents.groups`) include counties without any record. Nothing here is private:
the generator is for tests, documentation and benchmarks (seeded numpy, not a secure
source).

:func:`bounding_study` releases the records' counts per county for several ``C`` and
reports the error against the true (unbounded) counts, beside the same pipeline run on
the true counts with the declared unit ``row:C`` (the price of bounding: the records a
person loses above ``C``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpfix.numbers.numeric import require

__all__ = ["incidents", "Incidents", "contributions_law", "OFFENCES", "OFFENCE_WEIGHTS",
           "UNDECLARED_COUNTY", "bounding_study", "study_table"]

#: The offences of the synthetic records, and how often each is committed.
OFFENCES = ("MURDER", "RAPE", "ROBBERY", "ASSAULT", "BURGLARY", "LARCENY", "AUTO")
OFFENCE_WEIGHTS = (0.02, 0.05, 0.10, 0.23, 0.20, 0.30, 0.10)
#: The county of the records outside the declared counties (``undeclared=``).
UNDECLARED_COUNTY = "99999"


def contributions_law(tail: float = 2.5, max_records: int = 60) -> np.ndarray:
    """``P(m)`` for ``m = 1 .. max_records`` records per person, proportional to
    ``m^-tail``.

    Examples
    --------
    >>> p = contributions_law()
    >>> round(float(p[0]), 3), round(float((np.arange(1, 61) * p).sum()), 3)
    (0.746, 1.758)
    """
    if not tail > 0 or max_records < 1:
        raise ValueError("tail: must be > 0 and max_records >= 1")
    m = np.arange(1, int(max_records) + 1, dtype=float)
    w = m ** -float(tail)
    return w / w.sum()


@dataclass(frozen=True)
class Incidents:
    """Synthetic records and their declared groups.

    Attributes
    ----------
    records : pandas.DataFrame
        ``person_id`` (int64, or text with ``person_ids="text"``), ``county`` (text, five
        digits), ``offence`` (text): one row per incident, in a random order.
    groups : pandas.DataFrame
        The declared counties: ``county`` and ``name``, every county once, also those
        without any record.
    offences : tuple of str
        The offences (the values a release counts).
    """

    records: Any
    groups: Any
    offences: tuple

    def write(self, folder: str | Path, records: str = "records.csv",
              groups: str = "counties.csv") -> tuple[Path, Path]:
        """Write the records and the declared counties as CSV files into ``folder``."""
        pa = require("pyarrow")
        import pyarrow.csv as pcsv

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        paths = folder / records, folder / groups
        for frame, path in zip((self.records, self.groups), paths, strict=True):
            pcsv.write_csv(pa.Table.from_pandas(frame, preserve_index=False), path)
        return paths


def incidents(records: int = 10_000, *, counties: int = 200, tail: float = 2.5,
              max_records: int = 60, home_share: float = 0.8, usual_share: float = 0.5,
              offences: Sequence[str] = OFFENCES, weights: Sequence[float] = OFFENCE_WEIGHTS,
              undeclared: float = 0.0, person_ids: str = "int", seed: int = 0) -> Incidents:
    """Synthetic incident records with heavy-tailed contributions per person.

    Parameters
    ----------
    records : int
        The number of records.
    counties : int
        The declared counties.
    tail, max_records : float, int
        The law of the records per person (:func:`contributions_law`).
    home_share : float
        The chance that a record falls in its person's home county (else a county drawn by
        the counties' weights).
    usual_share : float
        The chance that a record is its person's usual offence (else one drawn by
        ``weights``).
    offences, weights : sequence
        The offences and their weights.
    undeclared : float
        The share of records put in the county :data:`UNDECLARED_COUNTY`, not declared.
    person_ids : str
        ``"int"`` (int64 ids) or ``"text"`` (``P00000001``, ...).
    seed : int
        The seed of numpy's generator.

    Returns
    -------
    Incidents

    Examples
    --------
    >>> data = incidents(1000, counties=20, seed=1)
    >>> len(data.records), list(data.records.columns), len(data.groups)
    (1000, ['person_id', 'county', 'offence'], 20)
    >>> int(data.records.groupby("person_id").size().max()) > 5
    True
    """
    pd = require("pandas")
    rng = np.random.default_rng(seed)
    law = contributions_law(tail, max_records)
    mean = float((np.arange(1, law.size + 1) * law).sum())
    sizes = np.zeros(0, dtype=np.int64)
    while sizes.sum() < records:
        more = rng.choice(np.arange(1, law.size + 1), size=int(records / mean * 1.05) + 16,
                          p=law)
        sizes = np.concatenate([sizes, more])
    total = np.cumsum(sizes)
    P = int(np.searchsorted(total, records)) + 1
    sizes = sizes[:P]
    sizes[-1] -= int(total[P - 1]) - records
    sizes = sizes[sizes > 0]
    P = sizes.size
    w = 1.0 / np.arange(1, counties + 1) ** 0.8
    w = rng.permutation(w / w.sum())
    codes = np.array([f"{i + 1:05d}" for i in range(counties)], dtype=object)
    owner = np.repeat(np.arange(P), sizes)
    home = rng.choice(counties, size=P, p=w)
    county = np.where(rng.random(records) < home_share, home[owner],
                      rng.choice(counties, size=records, p=w))
    ow = np.asarray(weights, dtype=float)
    ow = ow / ow.sum()
    usual = rng.choice(len(offences), size=P, p=ow)
    offence = np.where(rng.random(records) < usual_share, usual[owner],
                       rng.choice(len(offences), size=records, p=ow))
    labels = codes[county]
    if undeclared > 0:
        labels = np.where(rng.random(records) < undeclared, UNDECLARED_COUNTY, labels)
    ids = rng.permutation(P)[owner]
    person: Any = ids.astype(np.int64) if person_ids == "int" else \
        np.array([f"P{i:08d}" for i in range(P)], dtype=object)[ids]
    if person_ids not in ("int", "text"):
        raise ValueError(f"person_ids: 'int' or 'text', got {person_ids!r}")
    order = rng.permutation(records)
    frame = pd.DataFrame({"person_id": person[order], "county": labels[order],
                          "offence": np.asarray(offences, dtype=object)[offence[order]]})
    groups = pd.DataFrame({"county": codes,
                           "name": [f"County {i + 1}" for i in range(counties)]})
    return Incidents(frame, groups, tuple(offences))


def bounding_study(data: Incidents, bounds: Sequence[int] = (1, 2, 3, 5, 8, 13, 20, 40),
                   *, eps: float = 1.0, upper: Any = "auto", seeds: Sequence[int] = range(5),
                   max_per_group: int | None = None, options: Any = None) -> list[dict]:
    """The error of the released counts per county against ``C`` (docs/records.md).

    For every ``C`` and seed: :func:`dpfix.release.records.privatize_records` (every record
    counted, one column) and, on the true (unbounded) counts,
    :func:`dpfix.release.table.privatize_table` with the unit ``row:C`` (the pipeline a data
    holder runs trusting a declared unit). Errors are the mean absolute difference per
    county, averaged over the seeds.

    Returns
    -------
    list of dict
        Per ``C``: ``kept`` (the share of records the bounding keeps), ``bias`` (the bounded
        counts against the true ones, no noise), ``records`` (the release of the records
        against the true counts), ``noise`` (against the bounded counts), ``row_C`` (the
        release of the true counts at ``row:C`` against them) and ``price`` (``records -
        row_C``).
    """
    pd = require("pandas")
    from dpfix.release.records import Records, bounded_counts, privatize_records
    from dpfix.release.table import privatize_table

    records, counties = Records(data.records, "person_id", "county"), data.groups["county"]
    true = data.records.groupby("county").size()
    truth = data.groups["county"].map(true).fillna(0).to_numpy(dtype=np.int64)
    rows = []
    for C in bounds:
        errs: dict[str, list] = {"records": [], "noise": [], "row_C": [], "bias": [],
                                 "kept": []}
        for seed in seeds:
            b = bounded_counts(records, counties, max_contributions=C,
                               max_per_group=max_per_group, seed=seed)
            kept = b.counts[:, 0]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = privatize_records(records, counties, eps, upper=upper,
                                      max_contributions=C, max_per_group=max_per_group,
                                      seed=seed, options=options)
                frame = pd.DataFrame({"county": data.groups["county"], "count": truth})
                t = privatize_table(frame, ["count"], eps, upper=upper, unit=f"row:{C}",
                                    keys=["county"], order="input", seed=seed,
                                    options=options)
            out = r.table["count"].to_numpy()
            errs["records"].append(np.abs(out - truth).mean())
            errs["noise"].append(np.abs(out - kept).mean())
            errs["row_C"].append(np.abs(t.table["count"].to_numpy() - truth).mean())
            errs["bias"].append(np.abs(kept - truth).mean())
            errs["kept"].append(kept.sum() / max(int(truth.sum()), 1))
        row = {"C": int(C), **{k: float(np.mean(v)) for k, v in errs.items()}}
        row["price"] = row["records"] - row["row_C"]
        rows.append(row)
    return rows


def study_table(rows: list[dict]) -> str:
    """:func:`bounding_study`'s rows as a Markdown table.

    Examples
    --------
    >>> print(study_table([{"C": 1, "kept": 0.5, "bias": 2.0, "noise": 1.0, "records": 2.5,
    ...                     "row_C": 1.0, "price": 1.5}]))
    | C | records kept | bias | release | noise | row:C on true counts | price |
    |---|---|---|---|---|---|---|
    | 1 | 50.0% | 2.00 | 2.50 | 1.00 | 1.00 | 1.50 |
    """
    lines = ["| C | records kept | bias | release | noise | row:C on true counts | price |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['C']} | {100 * r['kept']:.1f}% | {r['bias']:.2f} | "
                     f"{r['records']:.2f} | {r['noise']:.2f} | {r['row_C']:.2f} | "
                     f"{r['price']:.2f} |")
    return "\n".join(lines)
