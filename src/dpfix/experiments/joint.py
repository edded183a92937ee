"""The joint study (docs/joint.md section 8): the joint release of a pair of count columns
against the per-column release at the same total budget and unit.

Measures, on the released pairs ``(a', b')`` against the true top-coded pairs ``(a, b)``:

- ``joint_w1``: the Wasserstein-1 distance between the two joint distributions, ground
  cost the L1 distance of the pairs (exact OT: POT's network simplex on the integer
  histograms, divided by ``N``);
- ``zero_zero``: the absolute error in the share of rows with both counts zero;
- ``spearman``: the absolute error of Spearman's rank correlation of the two columns;
- ``w1_a``, ``w1_b``: each marginal's Wasserstein-1 distance;
- ``count_error``: the mean over rows of ``|a' - a| + |b' - b|``.

``dpfix reproduce joint`` computes the cells of :func:`joint_cells` (cached like every
experiment's, :mod:`dpfix.experiments.cells`) and writes ``joint.csv`` (mean and standard
error of every measure) and ``joint_targets.md`` (the targets of docs/joint.md section 8
at eps_t = 1, met or not); :func:`study` runs the same in one process.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpfix.experiments.cells import register
from dpfix.experiments.runs import eps_grid
from dpfix.numbers.numeric import require
from dpfix.release.joint import joint_histogram, privatize_pair
from dpfix.release.table import privatize_table

__all__ = ["measures", "study", "county_pair", "synthetic_pair", "EPS_GRID", "MEASURES",
           "JOINT_DATASETS", "JOINT_METHODS", "joint_cells", "joint_summary", "targets_report"]

#: The paper's eps_t grid (the total budget of the pair), and eps_t = 1 of the targets.
EPS_GRID = (*(round(float(e), 6) for e in eps_grid()), 1.0)
MEASURES = ("joint_w1", "zero_zero", "spearman", "w1_a", "w1_b", "count_error")
#: name -> (columns or synthetic parameters, the public bounds).
JOINT_DATASETS = {"crime:MURDER,RAPE": (("MURDER", "RAPE"), (50, 100)),
                  "crime:MURDER,ROBBERY": (("MURDER", "ROBBERY"), (50, 100)),
                  "synthetic:rho=0.6": ((3136, 0.6), (20, 100))}
#: The one-stage framework at its default zero share (``one-stage``: the rule
#: :func:`dpfix.release.joint.zero_share_rule`, 2% at eps_t >= 1), without the zero count
#: and at 5% (the frontier of docs/joint.md section 8).
JOINT_METHODS = ("per-column", "one-stage/zero=0", "one-stage", "one-stage/zero=0.05",
                 "two-stage")


def _w1_1d(x: np.ndarray, y: np.ndarray, n: int) -> float:
    cx = np.cumsum(np.bincount(x, minlength=n)) / x.size
    cy = np.cumsum(np.bincount(y, minlength=n)) / y.size
    return float(np.abs(cx - cy).sum())


def joint_w1(a: np.ndarray, b: np.ndarray, a2: np.ndarray, b2: np.ndarray,
             shape: tuple[int, int]) -> float:
    """W1 between the joint distributions of ``(a, b)`` and ``(a2, b2)``, L1 ground cost.

    Examples
    --------
    >>> joint_w1(np.array([0, 1]), np.array([0, 1]), np.array([0, 1]), np.array([1, 1]), (2, 2))
    0.5
    """
    ot = require("ot")
    h1 = joint_histogram(a, b, shape).ravel()
    h2 = joint_histogram(a2, b2, shape).ravel()
    r, c = np.flatnonzero(h1), np.flatnonzero(h2)
    ra, rb = np.divmod(r, shape[1])
    ca, cb = np.divmod(c, shape[1])
    D = (np.abs(ra[:, None] - ca[None, :]) + np.abs(rb[:, None] - cb[None, :])).astype(float)
    return float(ot.emd2(h1[r].astype(float), h2[c].astype(float), D,
                         numItermax=10**9)) / a.size


def measures(a: np.ndarray, b: np.ndarray, a2: np.ndarray, b2: np.ndarray,
             shape: tuple[int, int]) -> dict[str, float]:
    """The six measures of the module docstring for one release."""
    stats = require("scipy.stats")
    rho = stats.spearmanr(a, b)[0]
    rho2 = stats.spearmanr(a2, b2)[0]
    zz = np.mean((a == 0) & (b == 0))
    zz2 = np.mean((a2 == 0) & (b2 == 0))
    return {"joint_w1": joint_w1(a, b, a2, b2, shape), "zero_zero": float(abs(zz - zz2)),
            "spearman": float(abs(rho - rho2)) if math.isfinite(rho2) else float("nan"),
            "w1_a": _w1_1d(a, a2, shape[0]), "w1_b": _w1_1d(b, b2, shape[1]),
            "count_error": float(np.mean(np.abs(a2 - a) + np.abs(b2 - b)))}


def county_pair(columns: tuple[str, str] = ("MURDER", "RAPE")) -> tuple[np.ndarray, np.ndarray]:
    """Two crime columns of the county data (``dpfix.io.data.data_path``)."""
    pd = require("pandas")
    from dpfix.io.data import data_path

    df = pd.read_csv(data_path("crime_data.csv"))
    return (df[columns[0]].to_numpy(dtype=np.int64), df[columns[1]].to_numpy(dtype=np.int64))


def synthetic_pair(N: int, rho: float, seed: int, mean: tuple[float, float] = (3.0, 20.0)
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Dependent counts: a Gaussian copula of correlation ``rho`` with negative binomial
    marginals (dispersion 0.5) of the given means; a third of the rows zero in both."""
    stats = require("scipy.stats")
    rng = np.random.default_rng(seed)
    g = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=N)
    u = stats.norm.cdf(g)
    out = []
    for k, m in enumerate(mean):
        r = 0.5
        out.append(stats.nbinom.ppf(u[:, k], r, r / (r + m)).astype(np.int64))
    zero = rng.random(N) < 1 / 3
    return np.where(zero, 0, out[0]), np.where(zero, 0, out[1])


def _per_column(a: np.ndarray, b: np.ndarray, eps: float, upper: tuple[int, int], unit: str,
                seed: int) -> tuple[np.ndarray, np.ndarray]:
    pd = require("pandas")
    df = pd.DataFrame({"A": a, "B": b})
    r = privatize_table(df, ["A", "B"], eps, upper={"A": upper[0], "B": upper[1]}, unit=unit,
                        order="input", seed=seed)
    return r.table["A"].to_numpy(), r.table["B"].to_numpy()


def run_cell(a: np.ndarray, b: np.ndarray, eps: float, upper: tuple[int, int], unit: str,
             method: str, seed: int) -> dict[str, float]:
    """One release by ``method`` (``per-column``, ``two-stage``, ``one-stage`` at its default
    or ``one-stage/zero=F``: spending ``F`` of the budget on the count of the rows with both
    counts zero), measured."""
    shape = (upper[0] + 1, upper[1] + 1)
    ta, tb = np.minimum(a, upper[0]), np.minimum(b, upper[1])
    if method == "per-column":
        a2, b2 = _per_column(a, b, eps, upper, unit, seed)
    else:
        per = (eps / 2, eps / 2) if unit == "row" else (eps, eps)
        framework, _, zero = method.partition("/zero=")
        extra = {"zero_share": float(zero)} if zero else {}
        r = privatize_pair(a, b, per, upper=upper, unit=unit, framework=framework, seed=seed,
                           **extra)
        a2, b2 = r.a, r.b
    return measures(ta, tb, a2, b2, shape)


def study(data: tuple[np.ndarray, np.ndarray], upper: tuple[int, int], *,
          eps_grid: tuple = EPS_GRID, reps: int = 3, unit: str = "row",
          methods: tuple = JOINT_METHODS, seed: int = 0
          ) -> list[dict[str, Any]]:
    """Every method at every eps, ``reps`` seeded replications: mean and standard error.

    Examples
    --------
    >>> a, b = synthetic_pair(300, 0.6, 0)
    >>> rows = study((a, b), (10, 40), eps_grid=(1.0,), reps=2, methods=("one-stage",))
    >>> rows[0]["method"], sorted(rows[0]["mean"]) == sorted(MEASURES)
    ('one-stage', True)
    """
    a, b = data
    out = []
    for eps in eps_grid:
        for method in methods:
            runs = [run_cell(a, b, float(eps), upper, unit, method, seed + 1000 * k)
                    for k in range(reps)]
            mean = {m: float(np.mean([r[m] for r in runs])) for m in MEASURES}
            se = {m: float(np.std([r[m] for r in runs], ddof=1) / math.sqrt(reps))
                  if reps > 1 else float("nan") for m in MEASURES}
            out.append({"eps": float(eps), "method": method, "unit": unit, "reps": reps,
                        "mean": mean, "se": se})
    return out


def _data(name: str) -> tuple[np.ndarray, np.ndarray]:
    spec, _ = JOINT_DATASETS[name]
    if name.startswith("crime:"):
        return county_pair(spec)
    return synthetic_pair(spec[0], spec[1], seed=0)


@register("joint", seed_fields=("experiment", "dataset", "eps", "replication", "seed"))
def _cell(key: dict, seed: int) -> dict:
    """One joint-study cell: the dataset's pair released by the key's method at its eps."""
    a, b = _data(key["dataset"])
    return run_cell(a, b, float(key["eps"]), JOINT_DATASETS[key["dataset"]][1], "row",
                    key["method"], seed)


def joint_cells(quick: bool = False, replications: int | None = None, seed: int = 0
                ) -> list[dict]:
    """The cells: every data set, eps_t, method and replication (quick: the county pair at
    eps_t = 1, 2 replications).

    Examples
    --------
    >>> len(joint_cells(quick=True))
    10
    """
    reps = replications or (2 if quick else 10)
    datasets = ["crime:MURDER,RAPE"] if quick else list(JOINT_DATASETS)
    grid = (1.0,) if quick else EPS_GRID
    return [{"experiment": "joint", "dataset": d, "method": m, "eps": float(e),
             "replication": r, "seed": seed}
            for d in datasets for e in grid for m in JOINT_METHODS for r in range(reps)]


def joint_summary(cells: list[dict], results: list[dict]) -> Any:
    """Mean and standard error of every measure per data set, eps_t and method."""
    pd = require("pandas")
    df = pd.DataFrame([{**{k: c[k] for k in ("dataset", "method", "eps")}, **r}
                       for c, r in zip(cells, results, strict=True)])
    g = df.groupby(["dataset", "eps", "method"], sort=True)
    out = g[list(MEASURES)].mean()
    se = g[list(MEASURES)].std(ddof=1) / np.sqrt(g.size().to_numpy()[:, None])
    out = out.join(se.add_suffix("_se")).reset_index()
    out["replications"] = g.size().to_numpy()
    return out


#: The targets at eps_t = 1 on the county pair, against the per-column release, and the
#: plain probe's numbers (one-stage: product noise, EM, an L1 matching): measure -> (bound
#: as a share of the per-column error, the probe's error). The probe's count error is
#: given as a share of the per-column one (20% lower): :data:`PROBE_COUNT_SHARE`.
TARGETS = {"spearman": (0.25, 0.03), "zero_zero": (0.5, 0.026), "joint_w1": (1.0, 0.95),
           "count_error": (1.0, None)}
PROBE_COUNT_SHARE = 0.8


def targets_report(summary: Any, dataset: str = "crime:MURDER,RAPE", eps: float = 1.0) -> str:
    """The targets of docs/joint.md section 8 at ``eps``, met or not, as Markdown."""
    rows = summary[(summary.dataset == dataset) & (summary.eps == eps)].set_index("method")
    if "per-column" not in rows.index:
        return f"no cells for {dataset} at eps_t = {eps}\n"
    base = rows.loc["per-column"]
    lines = [f"# Joint release targets: {dataset}, eps_t = {eps}, unit row",
             "", "| measure | per-column | bound | method | value (se) | met | beats probe |",
             "|---|---|---|---|---|---|---|"]
    for method in [m for m in JOINT_METHODS[1:] if m in rows.index]:
        r = rows.loc[method]
        for m, (share, probe) in TARGETS.items():
            bound = share * base[m]
            met = r[m] <= bound
            probe = PROBE_COUNT_SHARE * base[m] if probe is None else probe
            beats = "yes" if r[m] < probe else "no"
            lines.append(f"| {m} | {base[m]:.4g} | {bound:.4g} | {method} | {r[m]:.4g} "
                         f"({r[m + '_se']:.2g}) | {'yes' if met else 'no'} | {beats} |")
    return "\n".join(lines) + "\n"


def em_steps_frontier(steps: tuple = (50, 100, 200, 400, 1000), reps: int = 10,
                      dataset: str = "crime:MURDER,RAPE", eps: float = 1.0,
                      zero_share: float = 0.0, data: Any = None, upper: Any = None) -> Any:
    """The one-stage release's measures against the EM's number of steps (docs/joint.md
    section 8), with the study's cell seeds (common random numbers across the steps).
    ``data`` and ``upper``: another pair than the named data set's.

    Examples
    --------
    >>> em_steps_frontier((10, 20), reps=2, data=synthetic_pair(300, 0.5, 0),
    ...                   upper=(8, 30)).shape
    (2, 13)
    """
    from dpfix.experiments.cells import cell_seed

    pd = require("pandas")
    a, b = _data(dataset) if data is None else data
    upper = JOINT_DATASETS[dataset][1] if upper is None else tuple(upper)
    ta, tb = np.minimum(a, upper[0]), np.minimum(b, upper[1])
    rows = []
    for k in steps:
        runs = []
        for r in range(reps):
            key = {"experiment": "joint", "dataset": dataset, "method": "one-stage",
                   "eps": float(eps), "replication": r, "seed": 0}
            seed = cell_seed(key, ("experiment", "dataset", "eps", "replication", "seed"))
            p = privatize_pair(a, b, (eps / 2, eps / 2), upper=upper, seed=seed, max_iter=k,
                               zero_share=zero_share)
            runs.append(measures(ta, tb, p.a, p.b, (upper[0] + 1, upper[1] + 1)))
        row = {"steps": k}
        for m in MEASURES:
            v = np.array([x[m] for x in runs])
            row[m], row[m + "_se"] = float(v.mean()), float(v.std(ddof=1) / math.sqrt(reps))
        rows.append(row)
    return pd.DataFrame(rows)
