"""A pair of count columns released with its joint distribution as the fixed point
(docs/joint.md sections 5-7).

:func:`privatize_pair` takes the two columns of counts, the budget each column's
mechanism runs at (the unit's composition is the caller's: :func:`dpfix.release.table.
privatize_table` gives each column its share over ``c``) and one of two frameworks:

- ``"one-stage"`` (default): every row's pair gets independent exact geometric noise
  per column (the whole budget); the joint distribution is estimated from the noisy
  pairs by a two-dimensional EM deconvolution and apportioned to ``N`` rows; the noisy
  pairs are matched to the apportioned estimate by an optimal integer transport plan
  whose cost is the expected count error under the estimate. The released joint
  histogram is the apportioned estimate exactly. Post-processing of the noisy pairs.
- ``"two-stage"``: stage 1 :func:`~dpfix.release.privatizers.joint.joint_laplace` at
  ``eps_1``; stage 2 the product of truncated geometric mechanisms then the optimal
  transport remap onto the target (:func:`dpfix.constructors.joint.joint_sampler`),
  each row drawn exactly.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpfix.constructors.joint import joint_sampler, posterior_cost
from dpfix.numbers.numeric import require
from dpfix.release.options import TwoStage
from dpfix.release.privatizers.joint import deconvolve_joint, geometric_float, joint_laplace
from dpfix.release.privatizers.noise import add_laplace
from dpfix.sampling.joint import JointSampler
from dpfix.sampling.quantile import apportion
from dpfix.sampling.source import RandomSource, random_source, rational_lam
from dpfix.sampling.structured import Remap

__all__ = ["privatize_pair", "PrivatizedPair", "JOINT_FRAMEWORKS", "joint_histogram",
           "ZERO_SHARE", "TWO_STAGE_SPLIT", "JointColumn", "check_pairs", "release_pairs"]

JOINT_FRAMEWORKS = ("one-stage", "two-stage")
#: The share of the budget stage 1 spends in the two-stage framework.
TWO_STAGE_SPLIT = 0.5
#: The share of the budget the one-stage framework spends on the count of the rows with
#: both counts zero (docs/joint.md section 8: chosen on the county pair MURDER, RAPE).
ZERO_SHARE = 0.05


@dataclass(eq=False, repr=False)
class PrivatizedPair:
    """What :func:`privatize_pair` returns: the released pairs and their provenance.

    ``a``, ``b`` are the released counts (int64); ``z`` the public joint target
    (``n_a x n_b``); ``report`` the public facts (budgets, framework, sampler);
    ``seconds`` the timings (confidential: they may depend on the data).
    """

    a: np.ndarray
    b: np.ndarray
    z: np.ndarray
    report: dict
    seconds: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return (f"PrivatizedPair(shape={self.z.shape}, rows={self.a.size}, "
                f"framework={self.report['framework']!r})")


def joint_histogram(a: np.ndarray, b: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """``eta[i, j]``: the rows with the pair ``(i, j)`` (counts already top-coded).

    Examples
    --------
    >>> joint_histogram(np.array([0, 1, 1]), np.array([2, 0, 0]), (2, 3)).tolist()
    [[0, 0, 1], [2, 0, 0]]
    """
    return np.bincount(a * shape[1] + b, minlength=shape[0] * shape[1]).reshape(shape)


def _match(y: np.ndarray, Z: np.ndarray, lams: tuple, source: RandomSource
           ) -> tuple[np.ndarray, np.ndarray]:
    """The noisy states ``y`` matched to the apportioned ``N Z`` by an optimal integer plan.

    Supplies: the histogram of ``y``; demands: the apportioned target; cost of ``m -> j``
    the expected count error ``K[m, j] / w_m`` under ``Z`` (docs/joint.md section 3).
    POT's network simplex on integer masses keeps its flows integers (its pivots add and
    subtract them only). Rows of one noisy state take its pieces in a random order.
    """
    ot = require("ot")
    N = y.size
    shape = Z.shape
    h = np.bincount(y, minlength=Z.size)
    t = apportion(Z.ravel(), N)
    rows, cols = np.flatnonzero(h), np.flatnonzero(t)
    Ga, Gb = geometric_float(shape[0], lams[0]), geometric_float(shape[1], lams[1])
    w = (Ga.T @ Z @ Gb).ravel()
    K = posterior_cost(Z, Ga, Gb, cols)[rows]
    C = K / np.maximum(w[rows], 1e-300)[:, None]
    P = ot.emd(h[rows].astype(float), t[cols].astype(float), np.ascontiguousarray(C),
               numItermax=10**9)
    P = np.rint(P).astype(np.int64)
    if (P.sum(1) != h[rows]).any() or (P.sum(0) != t[cols]).any():
        raise RuntimeError("privatize_pair: the integer plan does not match the histograms")
    out = np.empty(N, dtype=np.int64)
    perm = source.permutation(N)
    order = perm[np.argsort(y[perm], kind="stable")]  # rows grouped by state, random within
    starts = np.concatenate([[0], np.cumsum(h)])
    for r, m in enumerate(rows):
        targets = np.repeat(cols, P[r])
        out[order[starts[m]:starts[m + 1]]] = targets
    return out // shape[1], out % shape[1]


def _lams(eps_a: float, eps_b: float) -> tuple:
    return rational_lam(float(eps_a)), rational_lam(float(eps_b))


def privatize_pair(a: Any, b: Any, eps: tuple[float, float], *, upper: tuple[int, int],
                   unit: str = "row", framework: str = "one-stage",
                   split: float = TWO_STAGE_SPLIT, zero_share: float = ZERO_SHARE,
                   seed: int | None = None, max_iter: int = 100) -> PrivatizedPair:
    """Release the pair of count columns ``(a, b)`` with the joint distribution fixed.

    Parameters
    ----------
    a, b : array_like of int
        The two columns (one pair per row), non-negative; top-coded at ``upper``.
    eps : (float, float)
        The budget each column's mechanism runs at (the unit's share over ``c``).
        Under unit ``row`` the pair spends ``eps[0] + eps[1]``, under ``cell``
        ``max(eps)`` (docs/joint.md section 2).
    upper : (int, int)
        The public bounds.
    unit : ``"row"`` or ``"cell"``
        How the two columns' budgets compose (sum or maximum): the two-stage
        framework's stage 1 spends ``split`` of that once, on the joint histogram.
    framework : ``"one-stage"`` or ``"two-stage"``
    split : float
        Two-stage: the share of the pair's budget spent by stage 1 (each column's
        stage 2 runs at ``(1 - split)`` of its budget).
    zero_share : float
        One-stage: the share of the pair's budget spent on a Laplace count of the rows
        with both counts zero (sensitivity 1 for every unit; held fixed by the EM), each
        column's noise at ``(1 - zero_share)`` of its budget (default :data:`ZERO_SHARE`;
        0: no count, docs/joint.md section 7).
    seed : int, optional
        Reproducible (NOT FOR PRODUCTION).
    max_iter : int
        The one-stage EM's steps.

    Returns
    -------
    PrivatizedPair

    Examples
    --------
    >>> r = privatize_pair([0, 0, 3, 3], [1, 1, 0, 0], (1.0, 1.0), upper=(3, 1), seed=0)
    >>> r.a.size, r.report["framework"], r.z.shape
    (4, 'one-stage', (4, 2))
    """
    if unit not in ("row", "cell"):
        raise ValueError(f"unit: 'row' or 'cell', got {unit!r}")
    if framework not in JOINT_FRAMEWORKS:
        raise ValueError(f"framework: one of {', '.join(JOINT_FRAMEWORKS)}, got {framework!r}")
    start = time.perf_counter()
    eps_in = (float(eps[0]), float(eps[1]))
    shape = (int(upper[0]) + 1, int(upper[1]) + 1)
    da = np.minimum(np.asarray(a, dtype=np.int64), upper[0])
    db = np.minimum(np.asarray(b, dtype=np.int64), upper[1])
    if da.shape != db.shape or da.ndim != 1 or da.size == 0:
        raise ValueError("a, b: two columns of the same positive length")
    if (da < 0).any() or (db < 0).any():
        raise ValueError("a, b: counts must be non-negative")
    seeds = [None, None, None] if seed is None else np.random.SeedSequence(seed).spawn(3)
    source = random_source(None if seed is None else seeds[1])
    seconds: dict[str, float] = {}
    if framework == "one-stage":
        if not 0 <= zero_share < 1:
            raise ValueError(f"zero_share: in [0, 1), got {zero_share!r}")
        total = float(eps[0]) + float(eps[1]) if unit == "row" else max(map(float, eps))
        e1 = zero_share * total
        eps_2 = ((1 - zero_share) * eps_in[0], (1 - zero_share) * eps_in[1])
        lams = _lams(*eps_2)
        noise = JointSampler(shape, lams, Remap.from_placement(np.arange(shape[0] * shape[1])),
                             constructor="product-noise")
        ya, yb = noise.sample(da, db, source)
        seconds["noise"] = time.perf_counter() - start
        H = joint_histogram(ya, yb, shape)
        zero = None
        if e1 > 0:  # one row changes the count of (0, 0) rows by at most 1
            count = np.array([int(np.sum((da == 0) & (db == 0)))])
            rng = None if seed is None else np.random.default_rng(seeds[0])
            noisy, _ = add_laplace(count, 1.0 / e1, rng=rng, sensitivity=1, budget=e1)
            zero = float(noisy[0]) / da.size
        Z = deconvolve_joint(H, lams, max_iter=max_iter, zero=zero)
        seconds["deconvolve"] = time.perf_counter() - start - seconds["noise"]
        oa, ob = _match(ya * shape[1] + yb, Z, lams, random_source(
            None if seed is None else seeds[2]))
        sampler = noise.describe(source)
        stage = {"estimator": f"2-D EM deconvolution ({max_iter} steps at most)"
                              + ("" if zero is None else
                                 f", the (0, 0) share fixed to a Laplace count at {e1:.6g}"),
                 "remap": "optimal integer transport of the noisy pairs onto the apportioned "
                          "estimate, cost the expected L1 count error (POT network simplex)"}
    else:
        if not 0 < split < 1:
            raise ValueError(f"split: in (0, 1), got {split!r}")
        total = float(eps[0]) + float(eps[1]) if unit == "row" else max(map(float, eps))
        e1 = split * total
        eps_2 = ((1 - split) * float(eps[0]), (1 - split) * float(eps[1]))
        eta = joint_histogram(da, db, shape)
        rng = None if seed is None else np.random.default_rng(seeds[0])
        stage1 = joint_laplace(eta, e1, rng=rng, secure=seed is None)
        seconds["stage1"] = time.perf_counter() - start
        Z = stage1.z.reshape(shape)
        s = joint_sampler(Z, eps=None, lam=_lams(*eps_2), unit="row")
        oa, ob = s.sample(da, db, source)
        sampler = s.describe(source)
        stage = {"privatizer": "joint-laplace", "noise": stage1.noise}
    seconds["total"] = time.perf_counter() - start
    report = {"framework": framework, "unit": unit,
              "split_fraction": zero_share if framework == "one-stage" else split,
              "shape": list(shape), "eps_columns": list(eps_in),
              "eps_2": list(eps_2), "eps_1": e1, "stage1": stage, "samplers": sampler,
              "seed": seed, "fixed_point": "the joint distribution of the pair"}
    return PrivatizedPair(oa, ob, Z, report, seconds)



@dataclass(eq=False, repr=False)
class JointColumn:
    """One column of a released pair, as :func:`dpfix.release.table.privatize_table` uses it:
    its released counts, ``n``, its public column report, and (confidential) the number of
    top-coded counts and the pair's timings."""

    counts: np.ndarray
    n: int
    report: dict
    topcoded: int = 0
    seconds: dict = field(default_factory=dict)

    def confidential_entry(self, d: np.ndarray) -> dict:
        """The column's confidential report from its true counts ``d``: derived from the true
        data without noise."""
        top = np.minimum(np.asarray(d, dtype=np.int64), self.n - 1)
        return {"topcoded": self.topcoded,
                "true_distribution_zeta": (np.bincount(top, minlength=self.n) / top.size
                                           ).tolist(),
                "realized_count_error": float(np.mean(np.abs(self.counts - top))),
                "joint_with": self.report["framework"]["joint_with"],
                "timings_seconds": dict(self.seconds)}


def check_pairs(joint: Any, names: list, uppers: dict, options: Any, delta: Any,
                labels: dict) -> list[tuple[str, str]]:
    """The pairs of ``joint=`` checked: two distinct privatized columns each, no column in
    two pairs, a given integer ``upper``, the default method, pure DP.

    Examples
    --------
    >>> check_pairs([("a", "b")], ["a", "b", "c"], {"a": 3, "b": 4, "c": 2}, None, None, {})
    [('a', 'b')]
    """
    flag = labels.get("joint", "joint")
    if joint is None:
        return []
    pairs = []
    seen: set = set()
    for pair in joint:
        pair = tuple(pair)
        if len(pair) != 2 or pair[0] == pair[1]:
            raise ValueError(f"{flag}: a pair of two distinct columns, got {pair!r}")
        for name in pair:
            if name not in names:
                raise ValueError(f"{flag}: {name!r} is not a privatized column "
                                 f"({labels.get('columns', 'columns')})")
            if name in seen:
                raise ValueError(f"{flag}: {name!r} is in two pairs")
            if not isinstance(uppers.get(name), int):
                raise ValueError(f"{flag}: {name!r} needs a given integer "
                                 f"{labels.get('upper', 'upper')} (not auto)")
            seen.add(name)
        pairs.append(pair)
    if pairs and delta is not None:
        raise ValueError(f"{flag}: the joint release is pure eps-DP; drop "
                         f"{labels.get('delta', 'delta')}")
    if pairs and options is not None and not isinstance(options, TwoStage):
        raise ValueError(f"{flag}: the joint release has its own framework; drop "
                         f"{labels.get('constructor', 'options')}")
    return pairs


def _stage1_entry(r: PrivatizedPair) -> dict | None:
    """The column's ``stage1`` in the report's shape: what was released before the noise on
    the rows (the zero-zero count, or the joint Laplace histogram), or None."""
    e1 = r.report["eps_1"]
    if e1 == 0:
        return None
    secure = bool(r.report["samplers"]["secure"])
    if r.report["framework"] == "two-stage":
        noise = r.report["stage1"]["noise"]
        return {"privatizer": "joint-laplace", "postprocess": "project-simplex",
                "notion": "pure-DP", "budget": f"eps={e1:g} (pure-DP)", "secure": secure,
                "noise": {"distribution": str(noise["distribution"]),
                          "scale": float(noise["scale"]), "sensitivity": 2}}
    return {"privatizer": "zero-zero count", "postprocess": "held fixed by the 2-D EM",
            "notion": "pure-DP", "budget": f"eps={e1:g} (pure-DP)", "secure": secure,
            "noise": {"distribution": "discrete Laplace" if secure else "Laplace",
                      "scale": 1.0 / e1, "sensitivity": 1}}


def _column_report(name: str, other: str, k: int, r: PrivatizedPair, eps_col: float,
                   upper: int, N: int, seed: Any) -> dict:
    """The column entry of one column of a pair, in the report's per-column shape
    (dpfix/release/report.schema.json); the pair itself is the report's ``joint`` entry."""
    from dpfix import __version__

    z = r.z.sum(axis=1 - k)
    out = np.bincount(r.a if k == 0 else r.b, minlength=upper + 1) / N
    one = r.report["framework"] == "one-stage"
    eps_2 = float(r.report["eps_2"][k])
    framework = {"name": r.report["framework"], "chosen_by": "joint= (docs/joint.md)",
                 "joint_with": str(other)}
    if one:
        framework.update({"estimator": "joint 2-D EM", "remap": "transport",
                          "converged": None, "iterations": None})
    return {
        "report": "dpfix privatize",
        "privacy": "every value here is public (parameters, N, n) or computed from the "
                   "differentially private releases; nothing is derived from the true data "
                   "without noise",
        "dpfix_version": __version__,
        "upper": upper,
        "top_coding": {"upper": upper, "bound": "a public parameter given by the user; counts "
                       "above it are replaced by it before privatization",
                       "count": "in the confidential report only: it is derived from the true "
                       "data without noise"},
        "framework": framework,
        "budget": {"eps_t": eps_col, "eps_upper": 0.0, "eps_1": float(r.report["eps_1"]),
                   "eps_2": eps_2, "delta": 0.0,
                   "split": {"rule": "joint", "fraction": float(r.report["split_fraction"])},
                   "composition": f"jointly with {other!r}: see the report's joint entry "
                                  "(docs/joint.md section 7)"},
        "upper_bound": {"upper": upper, "chosen_by": "given: a public parameter, not "
                        "computed from the data", "eps_upper": 0},
        "n": upper + 1, "N": N, "target_z": z.tolist(),
        "estimated_count_error": {"value": None, "loss": "abs",
                                  "definition": "the pair's count error is that of the joint "
                                                "release (docs/joint.md section 8)"},
        "mechanism": {"constructor": "product-transport", "name": "product-transport",
                      "selector": None, "eps_construction": eps_2, "privacy_level": eps_2,
                      "dp_check": r.report["samplers"]["privacy_statement"],
                      "fixed_point": True, "row_sum_error": None, "fixed_point_error": None,
                      "build_seconds": None, "built": False},
        "stage1": _stage1_entry(r),
        "samplers": {"stage1": "none" if r.report["eps_1"] == 0 else
                     "joint-laplace" if not one else "a Laplace count of the (0, 0) rows",
                     "stage2": str(r.report["samplers"]["kind"]),
                     "privacy_statement": r.report["samplers"]["privacy_statement"]},
        "seed": seed, "output_distribution": out.tolist(),
        "timings_seconds": {"construct": 0.0},
        "timings_note": "the joint release's timings depend on the data: in the confidential "
                        "report"}


def release_pairs(pairs: list, columns: dict, budgets: dict, unit: Any, uppers: dict,
                  seeds: dict) -> tuple[dict, list]:
    """Every pair released (:func:`privatize_pair`): column -> :class:`JointColumn`, and the
    report's ``joint`` entries."""
    made: dict = {}
    entries = []
    for name_a, name_b in pairs:
        eps_m = (budgets[name_a] / unit.bound, budgets[name_b] / unit.bound)
        r = privatize_pair(columns[name_a], columns[name_b], eps_m,
                           upper=(uppers[name_a], uppers[name_b]), unit=unit.name,
                           seed=seeds[name_a])
        N = int(r.a.size)
        for k, (name, other) in enumerate(((name_a, name_b), (name_b, name_a))):
            counts = np.asarray(columns[name], dtype=np.int64)
            made[name] = JointColumn(r.a if k == 0 else r.b, uppers[name] + 1, _column_report(
                name, other, k, r, float(budgets[name]), uppers[name], N, seeds[name_a]),
                int((counts > uppers[name]).sum()), dict(r.seconds))
        spent = "sum" if unit.name == "row" else "maximum"
        entries.append({
            "columns": [name_a, name_b], "unit": unit.name, "framework": r.report["framework"],
            "shape": r.report["shape"], "eps_columns": [float(budgets[name_a]),
                                                        float(budgets[name_b])],
            "mechanism_eps": list(eps_m), "eps_1": r.report["eps_1"],
            "composition": (f"the pair spends the {spent} of its columns' budgets: product "
                            "noise is lam_a-DP in a, lam_b in b and lam_a lam_b in both "
                            "(docs/joint.md section 2), the rest post-processing"),
            "fixed_point": r.report["fixed_point"], "stage1": r.report["stage1"],
            "samplers": r.report["samplers"], "target_z": r.z.ravel().tolist(),
            "output_distribution": (joint_histogram(r.a, r.b, r.z.shape).ravel() / N).tolist(),
            "seed": seeds[name_a]})
    return made, entries
