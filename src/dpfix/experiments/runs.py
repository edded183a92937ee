"""The data sets and the privatization methods of the paper's Section 6.

Every method privatizes a whole table of counts, as in the paper: the
two-stage ones run :func:`dpfix.pipeline.privatize_counts` (cyclic Laplace in
stage 1, numpy's seeded noise as in the paper's experiments). The LPs (for
the HiGHS method, the time limit and a retry without presolve) and the
discrete Gaussian (an (eps, delta) mechanism the pipeline's pure-DP gate
refuses) run the same steps here with the same seeding
(``SeedSequence(seed).spawn(3)``): for one seed all two-stage methods share
the target ``z`` (tested against the pipeline).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from dpfix.io import counts_from_column, data_path, read_histogram, read_table
from dpfix.mechanism import Mechanism
from dpfix.pipeline import EPS_MARGIN, NotPrivateError, histogram, privatize_counts, split_budget

__all__ = ["DATASETS", "SYNTHETIC", "METHODS", "TWO_STAGE", "load_counts", "default_upper",
           "true_distribution", "privatize", "Run", "eps_grid", "required_files"]

#: name -> (file, column of a table or None for a histogram file, the paper's upper bound)
DATASETS: dict[str, tuple[str, str | None, int]] = {
    "binomial": ("binom_hist_data.csv", None, 20),
    "crime": ("crime_data.csv", "MURDER", 50),
    "uniform": ("uniform_hist.csv", None, 29),
    "left-skewed": ("left-skewed_hist.csv", None, 69),
    "right-skewed": ("right-skewed_hist.csv", None, 69),
    "bimodal": ("bimodal_hist.csv", None, 39),
    "top-inflated": ("top-inflated_hist.csv", None, 79),
    "zero-inflated": ("zero-inflated_hist.csv", None, 79),
}

#: The six synthetic histograms of Table 3.
SYNTHETIC = ("uniform", "left-skewed", "right-skewed", "bimodal", "top-inflated",
             "zero-inflated")

#: method -> (kind, plot label)
METHODS: dict[str, tuple[str, str]] = {
    "heuristic-max": ("two-stage", "heuristic (max)"),
    "heuristic-min": ("two-stage", "heuristic (min)"),
    "heuristic-sandwich": ("two-stage", "heuristic (sandwich)"),
    "heuristic-best": ("two-stage", "heuristic (best of 3)"),
    "lp-simplex": ("two-stage", "LP optimum over F (simplex)"),
    "lp-ipm": ("two-stage", "LP optimum over F (interior point)"),
    "unfixed": ("two-stage", "two-stage unfixed optimum"),
    "truncated-geometric": ("one-stage", "truncated geometric"),
    "staircase": ("one-stage", "staircase"),
    "discrete-gaussian": ("one-stage", "discrete Gaussian (delta = 1/(N+1))"),
}
TWO_STAGE = tuple(m for m, (kind, _) in METHODS.items() if kind == "two-stage")


def eps_grid() -> np.ndarray:
    """The paper's eps_t grid ``10^linspace(-1, log10 5, 11)``.

    Examples
    --------
    >>> [round(float(e), 3) for e in eps_grid()[[0, 4, 6, 10]]]
    [0.1, 0.478, 1.046, 5.0]
    """
    return 10 ** np.linspace(-1, np.log10(5), 11)


def required_files(names: Any) -> list[str]:
    """The data files the named data sets read."""
    return sorted({DATASETS[name][0] for name in names})


@cache
def _raw_counts(name: str) -> np.ndarray:
    if name not in DATASETS:
        raise ValueError(f"dataset: unknown {name!r}; choose from {', '.join(DATASETS)}")
    file, column, _ = DATASETS[name]
    path = data_path(file)
    if column is not None:
        counts = counts_from_column(read_table(path), column)
    else:  # a histogram: eta_i rows with count i
        eta = read_histogram(path)
        counts = np.repeat(np.arange(eta.shape[0], dtype=np.int64), eta)
    counts.flags.writeable = False
    return counts


def load_counts(name: str) -> np.ndarray:
    """The table of counts of a data set (one count per row, not top-coded; a
    histogram file is expanded to ``N = sum(eta)`` rows). Read-only, cached."""
    return _raw_counts(name)


def default_upper(name: str) -> int:
    """The paper's top-coding bound of a data set (``n = upper + 1``)."""
    if name not in DATASETS:
        raise ValueError(f"dataset: unknown {name!r}; choose from {', '.join(DATASETS)}")
    return DATASETS[name][2]


def true_distribution(counts: np.ndarray, upper: int) -> np.ndarray:
    """``zeta``: the distribution of the counts top-coded at ``upper``."""
    eta, _ = histogram(counts, upper)
    return eta / eta.sum()


@dataclass
class Run:
    """One privatization of a table: the output counts and what made them.

    A run whose LP hit its time limit (``timed_out``) has no output:
    ``counts`` and ``mechanism`` are None (only ``z``, the budgets and
    ``seconds`` are known).
    """

    counts: np.ndarray | None
    z: np.ndarray | None
    mechanism: Mechanism | None
    eps_1: float
    eps_2: float
    seconds: float
    timed_out: bool = False
    retried: bool = False  # HiGHS needed its second attempt, without presolve


def _lp(method: str, z: np.ndarray, eps: float, time_limit: float | None
        ) -> tuple[Mechanism, bool]:
    """``(mechanism, retried)``: the LP optimum over F; ``retried`` when HiGHS
    needed its second attempt without presolve (``lp_optimum`` does it)."""
    from dpfix.constructors import lp_optimum

    highs = {"lp-simplex": "highs-ds", "lp-ipm": "highs-ipm"}[method]
    mech = lp_optimum(z, eps, fixed=True, method=highs, time_limit=time_limit)
    return mech, bool(mech.params.get("presolve_retry"))


def _custom(method: str, counts: np.ndarray, upper: int, eps_t: float, seed: int,
            split: Any, postprocess: str | None, time_limit: float | None) -> Run:
    """The pipeline's steps for what :func:`privatize_counts` does not offer."""
    from dpfix.constructors import discrete_gaussian
    from dpfix.pipeline import apply_mechanism
    from dpfix.privatizers import privatize_distribution

    start = time.perf_counter()
    eta, _ = histogram(counts, upper)
    d = np.minimum(counts, upper)
    s1, s2, _ = np.random.SeedSequence(seed).spawn(3)
    if method == "discrete-gaussian":
        mech = discrete_gaussian(upper + 1, eps_t, 1.0 / (d.size + 1))
        out = apply_mechanism(mech, d, np.random.default_rng(s2))
        return Run(out, None, mech, 0.0, eps_t, time.perf_counter() - start)
    eps_1, eps_2 = split_budget(eps_t, split)
    extra = {} if postprocess is None else {"postprocess": postprocess}
    stage1 = privatize_distribution(eta, eps_1, method="cyclic-laplace", secure=False,
                                    rng=np.random.default_rng(s1), **extra)
    z = np.asarray(stage1.z, dtype=float)
    try:
        mech, retried = _lp(method, z, eps_2 * (1 - EPS_MARGIN), time_limit)
    except RuntimeError as exc:
        if time_limit is not None and "time limit" in str(exc).lower():
            return Run(None, z, None, eps_1, eps_2, time.perf_counter() - start, timed_out=True)
        raise
    if not mech.privacy_level() <= eps_2:  # the pipeline's gate: no tolerance
        raise NotPrivateError(f"{method}: privacy level exceeds eps_2 = {eps_2!r}")
    mech.check(z)
    out = apply_mechanism(mech, d, np.random.default_rng(s2))
    return Run(out, z, mech, eps_1, eps_2, time.perf_counter() - start, retried=retried)


def privatize(method: str, counts: np.ndarray, upper: int, eps_t: float, seed: int, *,
              split: Any = "rule-of-thumb", postprocess: str | None = None,
              time_limit: float | None = None) -> Run:
    """Privatize a table of counts with one of :data:`METHODS` (paper Section 6).

    Two-stage methods split ``eps_t`` by ``split`` (the rule of thumb, MATH.md
    section 10, by default) and use the cyclic Laplace privatizer with
    ``postprocess`` (None: the library default); one-stage ones spend all of
    ``eps_t`` on the counts. ``time_limit`` (seconds) applies to the LP: a run
    that hits it comes back with ``timed_out=True``, no counts and no mechanism.

    Examples
    --------
    >>> r = privatize("heuristic-sandwich", np.array([0, 0, 1, 2, 2]), 2, 1.0, seed=3)
    >>> r.counts.shape, round(r.eps_1 + r.eps_2, 12), r.mechanism.params["selector"]
    ((5,), 1.0, 'sandwich')
    """
    if method not in METHODS:
        raise ValueError(f"method: unknown {method!r}; choose from {', '.join(METHODS)}")
    one_stage = METHODS[method][0] == "one-stage"
    if method == "discrete-gaussian" or method.startswith("lp-"):
        return _custom(method, counts, upper, eps_t, seed, split, postprocess, time_limit)
    start = time.perf_counter()
    if method.startswith("heuristic-"):
        constructor, selector = "heuristic", method.split("-", 1)[1]
    else:
        constructor, selector = method, "best"
    kw: dict[str, Any] = {} if one_stage else {"split": split, "postprocess": postprocess}
    r = privatize_counts(counts, eps_t, upper=upper, constructor=constructor,
                         selector=selector, seed=seed, **kw)
    return Run(r.counts, r.z, r.mechanism, r.eps_1, r.eps_2, time.perf_counter() - start)
