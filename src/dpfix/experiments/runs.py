"""The data sets and the privatization methods of the paper's Section 6.

Every method privatizes a whole table of counts, as in the paper, through
:func:`dpfix.release.pipeline.privatize_counts` (cyclic Laplace in stage 1, numpy's
seeded noise as in the paper's experiments): a method is a constructor of the
registry (:data:`dpfix.constructors.CONSTRUCTORS`) with its options, e.g. the
heuristic with ``selector="max"``, the LP with ``solver="highs-ipm"`` and a
time limit, or the discrete Gaussian with ``delta = 1/(N+1)``. The pipeline
seeds stage 1 and stage 2 from ``SeedSequence(seed).spawn(3)``: for one seed
all two-stage methods share the target ``z``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from dpfix.constructors import CONSTRUCTORS
from dpfix.io.counts import counts_from_column
from dpfix.io.data import data_path
from dpfix.io.tables import read_histogram, read_table
from dpfix.numbers.deprecation import renamed_keywords
from dpfix.release.frameworks import histogram
from dpfix.release.pipeline import privatize_counts
from dpfix.release.result import TimeLimitReached
from dpfix.theory.mechanism import Mechanism

__all__ = ["DATASETS", "SYNTHETIC", "Method", "METHODS", "TWO_STAGE", "load_counts",
           "default_upper", "true_distribution", "run_method", "Run", "eps_grid",
           "required_files"]

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

@dataclass(frozen=True)
class Method:
    """A privatization method of the experiments: a registry constructor with options.

    Attributes
    ----------
    constructor : a name in :data:`dpfix.constructors.CONSTRUCTORS`.
    options : what :func:`dpfix.release.pipeline.privatize_counts` gets besides it
        (``selector``, ``solver``).
    label : the label of the figures.
    """

    constructor: str
    options: tuple[tuple[str, str], ...]
    label: str

    @property
    def stage(self) -> str:
        """``"two-stage"`` or ``"one-stage"``, from the registry."""
        return CONSTRUCTORS[self.constructor].stage


#: method (the cell keys and figure legends) -> registry constructor, options, label
METHODS: dict[str, Method] = {
    "heuristic-max": Method("heuristic", (("selector", "max"),), "heuristic (max)"),
    "heuristic-min": Method("heuristic", (("selector", "min"),), "heuristic (min)"),
    "heuristic-sandwich": Method("heuristic", (("selector", "sandwich"),),
                                 "heuristic (sandwich)"),
    "heuristic-best": Method("heuristic", (("selector", "best"),), "heuristic (best of 3)"),
    "lp-simplex": Method("lp", (("solver", "highs-ds"),), "LP optimum over F (simplex)"),
    "lp-ipm": Method("lp", (("solver", "highs-ipm"),), "LP optimum over F (interior point)"),
    "unfixed": Method("unfixed", (), "two-stage unfixed optimum"),
    "truncated-geometric": Method("truncated-geometric", (), "truncated geometric"),
    "staircase": Method("staircase", (), "staircase"),
    "discrete-gaussian": Method("discrete-gaussian", (),
                                "discrete Gaussian (delta = 1/(N+1))"),
}
TWO_STAGE = tuple(m for m, spec in METHODS.items() if spec.stage == "two-stage")


def eps_grid() -> np.ndarray:
    """The paper's eps_t grid ``10^linspace(-1, log10 5, 11)``.

    Examples
    --------
    >>> [round(float(e), 3) for e in eps_grid()[[0, 4, 6, 10]]]
    [0.1, 0.478, 1.046, 5.0]
    """
    return 10 ** np.linspace(-1, np.log10(5), 11)


def required_files(names: Any) -> list[str]:
    """The data files the named data sets read.

    Parameters
    ----------
    names : iterable of str
        Keys of :data:`DATASETS`.

    Returns
    -------
    list of str
        The file names, sorted.
    """
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
    histogram file is expanded to ``N = sum(eta)`` rows). Read-only, cached.

    Parameters
    ----------
    name : str
        A key of :data:`DATASETS`.

    Returns
    -------
    numpy.ndarray
        Read-only int64 counts.

    Raises
    ------
    ValueError
        An unknown data set.
    FileNotFoundError
        Its file is missing.
    """
    return _raw_counts(name)


def default_upper(name: str) -> int:
    """The paper's top-coding bound of a data set (``n = upper + 1``).

    Parameters
    ----------
    name : str
        The data set (see :data:`DATASETS`).

    Returns
    -------
    int
        The paper's ``upper`` of that data set.

    Raises
    ------
    ValueError
        An unknown data set.
    """
    if name not in DATASETS:
        raise ValueError(f"dataset: unknown {name!r}; choose from {', '.join(DATASETS)}")
    return DATASETS[name][2]


def true_distribution(counts: np.ndarray, upper: int) -> np.ndarray:
    """``zeta``: the distribution of the counts top-coded at ``upper``.

    Parameters
    ----------
    counts : numpy.ndarray
        One count per row.
    upper : int
        The top-coding bound.

    Returns
    -------
    numpy.ndarray
        ``eta / N`` (length ``upper + 1``).
    """
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


@renamed_keywords(eps_t="eps")
def run_method(method: str, counts: np.ndarray, upper: int, eps: float, seed: int, *,
               split: Any = "rule-of-thumb", postprocess: str | None = None,
               time_limit: float | None = None) -> Run:
    """Privatize a table of counts with one of :data:`METHODS` (paper Section 6).

    One call of :func:`dpfix.release.pipeline.privatize_counts` with the method's
    constructor and options. Two-stage methods split ``eps`` by ``split``
    (the rule of thumb of the paper's Appendix F by default) and use the cyclic
    Laplace privatizer with ``postprocess`` (None: the library default);
    one-stage ones spend all of ``eps`` on the counts (the discrete Gaussian
    with ``delta = 1/(N+1)``, as the paper). ``time_limit`` (seconds) applies to
    the LP: a run that hits it comes back with ``timed_out=True``, no counts and
    no mechanism.

    Parameters
    ----------
    method : a key of :data:`METHODS`.
    counts : the table's counts, one per row (top-coded at ``upper`` by the pipeline).
    upper : the public bound (``n = upper + 1``).
    eps : the total budget.
    seed : the pipeline's seed.
    split, postprocess : stage 1's split and post-processing (two-stage methods).
    time_limit : seconds for the LP (LP methods only; ignored by the others).

    Returns
    -------
    Run
        The output counts, target, mechanism, budgets and seconds.

    Raises
    ------
    ValueError
        An unknown method, or bad input.

    Examples
    --------
    >>> r = run_method("heuristic-sandwich", np.array([0, 0, 1, 2, 2]), 2, 1.0, seed=3)
    >>> r.counts.shape, round(r.eps_1 + r.eps_2, 12), r.mechanism.params["selector"]
    ((5,), 1.0, 'sandwich')
    """
    if method not in METHODS:
        raise ValueError(f"method: unknown {method!r}; choose from {', '.join(METHODS)}")
    spec = METHODS[method]
    kw: dict[str, Any] = dict(spec.options)
    if spec.stage == "two-stage":
        kw.update(split=split, postprocess=postprocess)
    if spec.constructor == "lp":
        kw["time_limit"] = time_limit
    if spec.constructor == "discrete-gaussian":
        kw["delta"] = 1.0 / (np.asarray(counts).size + 1)
    start = time.perf_counter()
    try:
        r = privatize_counts(counts, eps, upper=upper, constructor=spec.constructor,
                             seed=seed, **kw)
    except TimeLimitReached as hit:
        return Run(None, hit.z, None, hit.eps_1, hit.eps_2, time.perf_counter() - start,
                   timed_out=True)
    return Run(r.counts, r.z, r.mechanism, r.eps_1, r.eps_2, time.perf_counter() - start,
               retried=bool(r.mechanism.params.get("presolve_retry")))
