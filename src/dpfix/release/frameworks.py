"""The frameworks that privatize a column of counts (paper Section 1.2, docs/no_split.md):
the two-stage framework (:func:`two_stage_release`) and the one-stage and hybrid frameworks
(:func:`no_split`, :func:`complete_no_split`), run by :func:`privatize` on validated
options (:mod:`dpfix.release.options`); the draws of stage 2 (:func:`apply_mechanism`,
:func:`apply_histogram` and the exact samplers of :mod:`dpfix.sampling`) and the checks
of the input counts.

One room: the frameworks share one path (the checks of the counts or the histogram, the
bound chosen privately, the stage split, the draws in chunks), and the engines (in memory,
streamed, Dask) call :func:`privatize` with ``draw=False`` to draw the same values in the
same chunks themselves; split across modules, that shared path would be imported back
and forth.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from dpfix.constructors import CONSTRUCTORS, construct
from dpfix.constructors.remap import quantile_plan, structured_sampler
from dpfix.numbers.calibration import discrete_gaussian_delta
from dpfix.numbers.numeric import check_positive, check_probability
from dpfix.release.bounds import (
    DEFAULT_MAX_UPPER,
    PrivateBound,
    TopCodingWarning,
    capped_change,
    choose_upper,
    top_mass_message,
)
from dpfix.release.options import (
    LP_MAX_UPPER,
    LP_SOLVERS,
    Auto,
    NoSplit,
    ReleaseOptions,
    auto_statement,
    check_budget,
    split_fraction,
    stage_split,
)
from dpfix.release.privatizers import privatize_distribution
from dpfix.release.privatizers.deconvolve import deconvolve
from dpfix.release.result import NotPrivateError, PrivatizedCounts, TimeLimitReached
from dpfix.release.seeds import BOUND, STAGE2, check_seed, seed_child, stage_seeds
from dpfix.sampling import (
    STRUCTURED,
    SamplingCheckError,
    checked_table,
    random_source,
    rational_lam,
)
from dpfix.sampling.quantile import apportion, quantile_joint, quantile_remap
from dpfix.theory.mechanism import FLOAT_RTOL, Mechanism

__all__ = ["privatize", "histogram", "apply_mechanism", "apply_histogram",
           "complete_no_split", "EPS_MARGIN", "MAX_HISTOGRAM_N", "STRUCTURED_T_MAX",
           "JOINT_MAX_N", "EXACT_HISTOGRAM_MAX_N", "DRAW_CHUNK", "check_counts",
           "integer_vector", "stage2_source", "topcode_histogram",
           "AUTO_MAX_UPPER_TABLE"]

#: Largest candidate of ``upper="auto"`` for a constructor that builds the ``n x n`` ``T``
#: (the structured ones take :data:`dpfix.release.bounds.DEFAULT_MAX_UPPER`).
AUTO_MAX_UPPER_TABLE = 10_000

#: T is built at eps_2 (1 - EPS_MARGIN): a constructor meeting its own eps
#: within FLOAT_RTOL then has a realized level below eps_2 (1 - FLOAT_RTOL).
EPS_MARGIN = 2 * FLOAT_RTOL

#: A histogram input may describe up to this many rows (numpy's multinomial takes
#: int64 trial counts; the rows themselves are never materialised).
MAX_HISTOGRAM_N = 2**62

#: The structured constructors (sampled as ``G R``) build ``T`` itself, for the
#: report, only up to this ``n``; beyond it ``mechanism`` is None (nothing needs it:
#: building T took 21 of the 23 s of 10^6 rows at upper 10^4, benchmarks/bench_sampling.py).
STRUCTURED_T_MAX = 2_001

#: A histogram input returns the ``n x n`` joint histogram: ``n`` at most this.
JOINT_MAX_N = 10_001

#: A histogram input up to this many rows is drawn row by row with the exact
#: samplers; above it, by numpy's multinomial on float rows of ``T`` (labelled).
EXACT_HISTOGRAM_MAX_N = 10**8

#: Rows drawn per chunk by the exact samplers (memory ``O(chunk)``; progress ticks). A
#: streamed release draws the same chunks, so that it draws exactly the same values.
DRAW_CHUNK = 1 << 21
_CHUNK = DRAW_CHUNK


def histogram(counts: Any, upper: int,
              coded: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """The histogram of ``counts`` top-coded at ``upper`` (step 1 of the pipeline).

    Parameters
    ----------
    counts : array_like of int
        Non-negative integer counts, one per row.
    upper : int
        The public upper bound (``n = upper + 1`` count values ``0 .. upper``).
    coded : numpy.ndarray, optional
        An integer vector of ``len(counts)`` entries (of a type that holds ``0 ..
        upper``) the top-coded counts ``min(counts, upper)`` are written to, block by
        block as they are counted.

    Returns
    -------
    eta : numpy.ndarray of int64
        ``eta[i]`` rows with count ``i`` after top-coding (length ``upper + 1``).
    topcoded : int
        How many counts were above ``upper`` (derived from the data: confidential).

    Raises
    ------
    ValueError
        If ``upper < 1``.

    Examples
    --------
    >>> eta, top = histogram([0, 1, 5, 9, 3], 4)
    >>> eta.tolist(), top
    ([1, 1, 0, 1, 2], 2)
    >>> coded = np.empty(5, dtype=np.uint8)
    >>> _ = histogram([0, 1, 5, 9, 3], 4, coded); coded.tolist()
    [0, 1, 4, 4, 3]
    """
    if upper < 1:
        raise ValueError(f"upper: must be >= 1, got {upper}")
    c = np.asarray(counts, dtype=np.int64)
    if coded is not None and (coded.shape != c.shape or coded.dtype.kind not in "iu"
                              or np.iinfo(coded.dtype).max < upper):
        raise ValueError(f"coded: expected an integer vector of {c.size} entries holding "
                         f"0 .. {upper}, got {coded.dtype} of shape {coded.shape}")
    eta = np.zeros(upper + 1, dtype=np.int64)
    top = 0
    buffer = np.empty(min(c.size, _HISTOGRAM_BLOCK), dtype=np.int64)
    for start in range(0, c.size, _HISTOGRAM_BLOCK):  # each block read once, in cache
        block = c[start:start + _HISTOGRAM_BLOCK]
        top += int(np.count_nonzero(block > upper))
        part = np.minimum(block, upper, out=buffer[:block.size])
        eta += np.bincount(part, minlength=upper + 1)
        if coded is not None:
            coded[start:start + block.size] = part
    return eta, top


def _narrowest(upper: int) -> Any:
    """The narrowest unsigned integer type that holds ``0 .. upper`` (int64 above 2^32)."""
    return next((t for t in (np.uint8, np.uint16, np.uint32) if upper <= np.iinfo(t).max),
                np.int64)


#: Rows per block of :func:`histogram`.
_HISTOGRAM_BLOCK = 1 << 18
_histogram = histogram  # privatize's keyword ``histogram`` shadows the function


class _Ticks:
    """Tells ``progress`` of fixed shares of the ``N`` rows at the end of each phase."""

    def __init__(self, progress: Callable[[int], Any] | None, total: int) -> None:
        self.progress, self.total, self.told = progress, total, 0

    def reach(self, share: float) -> None:
        target = round(self.total * share)
        if self.progress is not None and target > self.told:
            self.progress(target - self.told)
            self.told = target


def _row_probabilities(mech: Mechanism, i: int) -> np.ndarray:
    if mech.exact:
        row = np.array([float(x) for x in mech.matrix[i]])
    else:
        L = np.asarray(mech.log_matrix[i], dtype=float)
        row = np.exp(L - L.max())
    return row / row.sum()


def apply_mechanism(mech: Mechanism, counts: Any, rng: np.random.Generator,
                    progress: Callable[[int], Any] | None = None) -> np.ndarray:
    """Replace each count ``i`` by a draw from row ``i`` of ``T``, in ``O(N + n^2)``.

    The rows are grouped by input count (a stable radix sort, linear for
    16-bit keys); the ``m_i`` rows with count ``i`` get the outcomes of one
    multinomial draw ``Mult(m_i, T[i])`` in a uniformly random order (a
    shuffle within the group), so every row gets an independent draw from its
    row of ``T``. Reproducible for a given generator. ``progress(k)`` is told
    of fixed shares of the ``N`` rows as the phases end: never of group
    sizes, which make up the histogram.

    Parameters
    ----------
    mech : Mechanism
        ``T``, exact or float.
    counts : array_like of int
        One count per row, in ``0 .. n-1``.
    rng : numpy.random.Generator
        The randomness of the draws.
    progress : callable, optional
        Told of fixed shares of the rows.

    Returns
    -------
    numpy.ndarray
        int64 output counts, in the rows' order.

    Raises
    ------
    ValueError
        Counts that are not integers in ``0 .. n-1``.

    Examples
    --------
    >>> M = Mechanism.from_matrix([[1.0, 0.0], [0.0, 1.0]], eps=1.0)
    >>> apply_mechanism(M, [1, 0, 1], np.random.default_rng(0)).tolist()
    [1, 0, 1]
    """
    d = np.asarray(counts)
    if d.ndim != 1 or d.dtype.kind not in "iu":
        raise ValueError(f"counts: expected a vector of integers, got {d.dtype} of shape {d.shape}")
    n, N = mech.n, d.shape[0]
    if N and (d.min() < 0 or d.max() >= n):
        raise ValueError(f"counts: must lie in 0..{n - 1}")
    ticks = _Ticks(progress, N)
    small = np.uint16 if n <= 1 << 16 else np.uint32  # narrow values: the shuffles stay in cache
    key = d.astype(small)
    order = np.argsort(key, kind="stable")  # radix sort for 16-bit keys: O(N)
    ticks.reach(0.25)
    sizes = np.bincount(key, minlength=n)
    drawn = np.empty(N, dtype=small)
    start, values = 0, np.arange(n, dtype=small)
    for i in np.flatnonzero(sizes):
        m = int(sizes[i])
        part = drawn[start:start + m]
        part[:] = np.repeat(values, rng.multinomial(m, _row_probabilities(mech, i)))
        rng.shuffle(part)
        start += m
    ticks.reach(0.85)
    out = np.empty(N, dtype=np.int64)
    out[order] = drawn  # ascending positions within each group: a streaming write
    ticks.reach(1.0)
    return out


def apply_histogram(mech: Mechanism, eta: Any, rng: np.random.Generator,
                    progress: Callable[[int], Any] | None = None) -> np.ndarray:
    """The joint histogram ``J[i, j]`` (rows with input ``i`` and output ``j``) of
    applying ``T`` to ``eta[i]`` rows of each count ``i``, without materialising them.

    Row ``i`` of ``J`` is one draw ``Mult(eta_i, T[i])``: the output histogram
    ``J.sum(0)`` is a sum of multinomials, distributed exactly as the histogram
    of :func:`apply_mechanism`'s output. ``O(n^2)`` whatever ``N = sum eta``.

    Parameters
    ----------
    mech : Mechanism
        ``T``, exact or float.
    eta : array_like of int
        ``n`` non-negative counts of rows per input count.
    rng : numpy.random.Generator
        The randomness of the draws.
    progress : callable, optional
        Told of the number of rows once.

    Returns
    -------
    numpy.ndarray
        ``n x n`` int64 joint histogram.

    Raises
    ------
    ValueError
        A histogram of the wrong length, not integers, or negative.

    Examples
    --------
    >>> M = Mechanism.from_matrix([[1.0, 0.0], [0.0, 1.0]], eps=1.0)
    >>> apply_histogram(M, [10**15, 2], np.random.default_rng(0)).tolist()
    [[1000000000000000, 0], [0, 2]]
    """
    eta = np.asarray(eta)
    if eta.ndim != 1 or eta.dtype.kind not in "iu" or eta.shape[0] != mech.n:
        raise ValueError(f"eta: expected {mech.n} integer counts, got {eta.dtype} of shape "
                         f"{eta.shape}")
    if eta.min() < 0:
        raise ValueError("eta: must be non-negative")
    joint = np.zeros((mech.n, mech.n), dtype=np.int64)
    for i in np.flatnonzero(eta):
        joint[i] = rng.multinomial(int(eta[i]), _row_probabilities(mech, i))
    if progress is not None:
        progress(int(sum(int(v) for v in eta)))
    return joint


def _draw_rows(sampler: Any, d: np.ndarray, source: Any,
               progress: Callable[[int], Any] | None,
               upper: int) -> tuple[np.ndarray, np.ndarray]:
    """Every row's draw from the exact sampler, its count top-coded at ``upper``, in chunks
    (progress told of fixed shares), and the histogram of the draws (``upper + 1``
    entries, counted chunk by chunk as each is drawn)."""
    N = d.shape[0]
    ticks = _Ticks(progress, N)
    out = np.empty(N, dtype=np.int64)
    hist = np.zeros(upper + 1, dtype=np.int64)
    coded = np.empty(min(N, _CHUNK), dtype=d.dtype)  # one buffer for every chunk's counts
    for s in range(0, N, _CHUNK):
        e = min(s + _CHUNK, N)
        drawn = sampler.sample(np.minimum(d[s:e], upper, out=coded[:e - s]), source,
                               out=out[s:e])
        hist += np.bincount(drawn, minlength=upper + 1)
        ticks.reach(e / N)
    return out, hist


def _draw_histogram(sampler: Any, eta: np.ndarray, n: int, source: Any,
                    progress: Callable[[int], Any] | None) -> np.ndarray:
    """The joint histogram drawn row by row with the exact sampler (``N`` at most
    :data:`EXACT_HISTOGRAM_MAX_N`), without materialising more than a chunk of rows."""
    joint = np.zeros((n, n), dtype=np.int64)
    for i in np.flatnonzero(eta):
        left = int(eta[i])
        while left:
            m = min(left, _CHUNK)
            joint[i] += np.bincount(sampler.sample(np.full(m, i), source), minlength=n)
            left -= m
    if progress is not None:
        progress(int(sum(int(v) for v in eta)))
    return joint


def stage2_source(seed: int | None) -> Any:
    """The randomness stage 2 draws its rows from (:func:`two_stage_release`): the secure
    source (AES-128 in counter mode keyed by the operating system's CSPRNG), or with
    ``seed`` a PCG64 seeded with child :data:`~dpfix.release.seeds.STAGE2` of
    ``SeedSequence(seed)``. A streamed release draws its blocks from it in turn.

    Examples
    --------
    >>> stage2_source(None).secure, stage2_source(3).words(1) == stage2_source(3).words(1)
    (True, array([ True]))
    """
    return random_source(None if seed is None else seed_child(seed, STAGE2))


def _missing(name: str, positions: np.ndarray, kind: str) -> ValueError:
    k = positions.size
    return ValueError(f"{name}: {k} missing value{'s' if k > 1 else ''} ({kind}), first at "
                      f"position {int(positions[0])}; counts must be integers: drop or fill "
                      "the missing ones")


def integer_vector(values: Any, name: str) -> np.ndarray:
    """``values`` as a numpy array, refusing by name what numpy would turn into other
    numbers: masked entries (``np.asarray`` keeps their hidden data), missing values
    (pandas NA becomes a float NaN) and uint64 values above ``2^63 - 1`` (they wrap to
    negative int64; a negative number cast to unsigned lands there)."""
    if np.ma.isMaskedArray(values):
        masked = int(np.ma.count_masked(values))
        if masked:
            raise ValueError(f"{name}: a masked array with {masked} masked entr"
                             f"{'y' if masked == 1 else 'ies'}; masked values are not data: "
                             "drop them (.compressed()) or fill them (.filled(v))")
        values = np.ma.getdata(values)
    isna = getattr(values, "isna", None)  # pandas Series, Index and extension arrays
    if callable(isna):
        missing = np.flatnonzero(np.asarray(isna(), dtype=bool))
        if missing.size:
            raise _missing(name, missing, "NA")
    d = np.asarray(values)
    if d.dtype.kind == "f":
        missing = np.flatnonzero(np.isnan(d))
        if missing.size:
            raise _missing(name, missing, "NaN")
    if d.dtype.kind == "u" and d.size and d.max() > np.iinfo(np.int64).max:
        i = int(np.argmax(d > np.iinfo(np.int64).max))
        raise ValueError(f"{name}: {int(d.flat[i])} at position {i} is above 2^63 - 1, the "
                         f"largest count (a {d.dtype} input; a negative number cast to "
                         "unsigned lands there)")
    return d


def check_counts(counts: Any) -> np.ndarray:
    d = integer_vector(counts, "counts")
    if d.ndim != 1:
        raise ValueError(f"counts: expected one count per row (1 dimension), got shape {d.shape}")
    if d.size == 0:
        raise ValueError("counts: the table has no rows")
    if d.dtype.kind not in "iu":
        raise ValueError(f"counts: must be integers, got dtype {d.dtype}")
    if d.min() < 0:
        raise ValueError(f"counts: must be non-negative, got {d.min()}")
    return d.astype(np.int64, copy=False)


def topcode_histogram(eta: Any, upper: int) -> tuple[np.ndarray, int]:
    """``(eta top-coded at upper, topcoded)`` for a histogram input, refusing bad ones: the
    rows of counts above ``upper`` counted at ``upper``, and their number.

    Examples
    --------
    >>> out, top = topcode_histogram([1, 0, 2, 3], 1)
    >>> out.tolist(), top
    ([1, 5], 5)
    """
    e = integer_vector(eta, "eta")
    if e.ndim != 1 or e.size == 0:
        raise ValueError(f"eta: expected a histogram (1 dimension, >= 1 entry), got shape "
                         f"{e.shape}")
    if e.dtype.kind not in "iu":
        raise ValueError(f"eta: must be integers, got dtype {e.dtype}")
    if e.min() < 0:
        raise ValueError(f"eta: must be non-negative, got {e.min()}")
    total = sum(int(v) for v in e)  # Python ints: no overflow
    if total == 0:
        raise ValueError("eta: the histogram has no rows (every number is 0)")
    if total > MAX_HISTOGRAM_N:
        raise ValueError(f"eta: N = {total} rows exceeds the cap {MAX_HISTOGRAM_N} (2^62)")
    top = sum(int(v) for v in e[upper + 1:])
    out = np.zeros(upper + 1, dtype=np.int64)
    out[:min(e.size, upper + 1)] = e[:upper + 1]
    out[upper] += top
    return out, top


def no_split(framework: str, d: np.ndarray | None, eta: np.ndarray, n: int, N: int,
              topcoded: int, eps_t: float, split: Any, estimator: str, remap: str,
              seed: int | None, seeds: tuple[Any, Any], stage: Callable[[str], Any],
              progress: Callable[[int], Any] | None, draw: bool) -> PrivatizedCounts:
    """The one-stage and hybrid frameworks (docs/no_split.md): release ``y = G(x)``
    [and stage 1's ``V``], then post-process (:func:`complete_no_split`). ``d``: the
    rows' counts (top-coded at ``n - 1`` as they are drawn), or None (``eta`` alone)."""
    seconds: dict[str, float] = {}
    if framework == "hybrid":
        # None: the paper's rule of thumb, the best hybrid split of the frontier study
        fraction, rule = split_fraction(eps_t, split)
    else:
        fraction, rule = 0.0, "none (one-stage framework: all of eps_t on G)"
    eps_1, eps_2 = stage_split(eps_t, fraction)
    stage1 = None
    if framework == "hybrid":
        stage("stage 1")
        start = time.perf_counter()
        stage1 = privatize_distribution(
            eta, eps_1, privatizer="cyclic-laplace", secure=seed is None,
            seed=None if seed is None else np.random.default_rng(seeds[0]))
        seconds["stage1"] = time.perf_counter() - start
    lam = rational_lam(eps_2)  # lam <= e^eps_2, proved: y = G(x) is exactly ln(lam)-DP
    G = structured_sampler("truncated-geometric", lam=lam, n=n)
    source = random_source(None if seed is None else seeds[1])
    partial = PrivatizedCounts(
        None, None, eps_1, eps_2, None, None, n, N, topcoded,
        "cyclic-laplace" if stage1 is not None else None, "northwest", seconds, stage1,
        split_rule=rule, split_fraction=fraction, eps_construction=math.log(lam),
        privacy_level=math.log(lam), delta=0.0, seed=seed, sampler=G.describe(source),
        stage2=G, framework=framework, estimator=estimator, remap=remap)
    if not draw:  # the caller draws y with result.stage2, then calls complete_no_split
        return partial
    stage("draw")
    start = time.perf_counter()
    if d is not None:
        y, h = _draw_rows(G, d, source, progress, n - 1)
    else:
        joint_y = _draw_histogram(G, eta, n, source, progress)
        h = joint_y.sum(axis=0)
    seconds["apply"] = time.perf_counter() - start
    stage("construct")
    result = complete_no_split(partial, h)
    start = time.perf_counter()
    if d is not None:
        result.counts = (_remap_rows(result.stage2.remap, y, source) if remap == "northwest"
                         else quantile_remap(y, apportion(result.z, N), source))
    else:
        result.joint = (_remap_joint(result.stage2.remap, joint_y, source)
                        if remap == "northwest"
                        else quantile_joint(joint_y, quantile_plan(h, apportion(result.z, N)),
                                            source))
    result.seconds["apply"] += time.perf_counter() - start
    return result


def complete_no_split(partial: PrivatizedCounts, h: Any) -> PrivatizedCounts:
    """The target and the remap of the one-stage and hybrid frameworks, from the released ``y``.

    Step 2 of docs/no_split.md: ``z`` is estimated from the histogram ``h`` of
    ``y = G(x)`` (and stage 1's raw release for the hybrid framework); for the
    northwest remap, ``stage2`` becomes the sampler of ``T = G R(z)`` whose
    ``remap`` sends every ``y`` to its output. Post-processing: ``h`` is the
    only input from the data.

    Parameters
    ----------
    partial : PrivatizedCounts
        What ``privatize_counts(..., framework=..., draw=False)`` returned
        (:func:`dpfix.release.pipeline.privatize_counts`)
        (its ``stage2`` drew ``y``).
    h : array_like of int
        The histogram of every row's ``y`` (``n`` entries summing to ``N``).

    Returns
    -------
    PrivatizedCounts
        With ``z``, ``deconvolution``, ``released_histogram`` and, for the
        northwest remap, ``mechanism`` (``n <= STRUCTURED_T_MAX``), the
        estimated count error and ``stage2 = G R(z)``; no row drawn
        (``counts`` and ``joint`` None).

    Examples
    --------
    >>> from dpfix.release.pipeline import privatize_counts
    >>> p = privatize_counts(None, 1.0, upper=3, histogram=[40, 30, 20, 10], seed=0,
    ...                      framework="one-stage", draw=False)
    >>> r = complete_no_split(p, [38, 33, 18, 11])
    >>> round(float(r.z.sum()), 12), r.stage2.constructor
    (1.0, 'northwest')
    """
    if partial.framework == "two-stage" or partial.z is not None:
        raise ValueError("partial: expected a one-stage or hybrid result drawn with draw=False")
    hv = integer_vector(h, "h")
    if hv.shape != (partial.n,) or (hv < 0).any() or int(hv.sum()) != partial.N:
        raise ValueError(f"h: expected {partial.n} non-negative integers summing to N = "
                         f"{partial.N}")
    start = time.perf_counter()
    G, n = partial.stage2, partial.n
    fit = deconvolve(hv, G.lam, estimator=partial.estimator,
                     stage1=None if partial.stage1 is None
                     else (partial.stage1.raw, partial.eps_1))
    z = np.array(fit.z, dtype=float)  # the result's own, writable copy
    mech = estimate = None
    stage2 = G
    if partial.remap == "northwest":
        stage2 = structured_sampler("northwest", z, lam=G.lam, n=n)
        if n <= STRUCTURED_T_MAX:  # T = G R(z) for the report and its checks
            mech = construct(z, partial.privacy_level, constructor="northwest").normalised()
            mech.check(z)
        estimate = stage2.count_error(z)
    seconds = dict(partial.seconds, construct=time.perf_counter() - start)
    _warn_top_mass(z, n)
    return replace(partial, z=z, mechanism=mech, estimated_count_error=estimate,
                   stage2=stage2, deconvolution=fit, released_histogram=hv.astype(np.int64),
                   seconds=seconds)


def _remap_rows(R: Any, y: np.ndarray, source: Any) -> np.ndarray:
    """``R`` applied to every released ``y``, in chunks."""
    out = np.empty_like(y)
    for s in range(0, y.shape[0], _CHUNK):
        out[s:s + _CHUNK] = R.apply(y[s:s + _CHUNK], source)
    return out


def _remap_joint(R: Any, joint_y: np.ndarray, source: Any) -> np.ndarray:
    """The (input, output) joint histogram: every (input, ``y = m``) group through ``R``."""
    n = joint_y.shape[0]
    joint = np.zeros_like(joint_y)
    for i, m in zip(*np.nonzero(joint_y), strict=True):
        left = int(joint_y[i, m])
        if R.start[m + 1] - R.start[m] == 1:  # one piece: no draw
            joint[i, R.cols[R.start[m]]] += left
            continue
        while left:
            k = min(left, _CHUNK)
            joint[i] += np.bincount(R.apply(np.full(k, m, dtype=np.int64), source),
                                    minlength=n)
            left -= k
    return joint


def release_delta(options: ReleaseOptions, delta: Any) -> float | None:
    """The ``delta`` a release of ``options`` runs with: required by the discrete Gaussian
    and by the cyclic Gaussian privatizer, refused by every pure eps-DP method (None).
    (:func:`dpfix.theory.polytopes.check_delta` checks an exact delta of the theory.)

    Examples
    --------
    >>> from dpfix.release.options import TwoStage
    >>> release_delta(TwoStage(), None) is None
    True
    """
    if isinstance(options, NoSplit):
        if delta is not None:
            why = ("the one-stage framework has no stage 1" if options.framework == "one-stage"
                   else "the hybrid framework combines the raw cyclic Laplace release with y")
            raise ValueError(f"delta: does not apply: {why}; drop the delta")
        return None
    if options.constructor == "discrete-gaussian":
        if delta is None:
            raise ValueError("delta: the discrete Gaussian is (eps, delta)-DP; give delta "
                             "(the paper uses 1/(N+1))")
        return check_probability(delta)
    two_stage = CONSTRUCTORS[options.constructor].stage == "two-stage"
    if not two_stage:
        if delta is not None:
            raise ValueError(f"delta: does not apply: constructor {options.constructor!r} is "
                             "one-stage (all of epsilon on the counts); drop the delta")
        return None
    if options.privatizer == "cyclic-gaussian" and delta is None:
        raise ValueError("delta: the cyclic Gaussian privatizer needs delta (eps_1, delta)")
    if delta is not None and options.privatizer != "cyclic-gaussian":
        raise ValueError(f"delta: privatizer {options.privatizer!r} is pure eps-DP; drop delta")
    return delta


def _warn_top_mass(z: np.ndarray | None, n: int) -> None:
    """:class:`TopCodingWarning` when the private target ``z`` piles up on ``upper``."""
    message = None if z is None else top_mass_message(z, n - 1)
    if message is not None:
        warnings.warn(message, TopCodingWarning, stacklevel=4)


def _auto_upper(counts: Any, eps_t: float, options: ReleaseOptions, histogram: Any,
                bound: PrivateBound, seed: int | None,
                **rest: Any) -> PrivatizedCounts:
    """A bound chosen privately (``upper="auto"``, a :class:`PrivateBound`): a DP bound with
    its share of ``eps_t``, then the release with the rest (sequential composition; the two
    floats add up to at most ``eps_t`` exactly)."""
    eps_upper, eps_rest = bound.split(eps_t)
    share = bound.share_at(eps_t)
    constructor = options.constructor
    top = DEFAULT_MAX_UPPER if constructor in STRUCTURED else AUTO_MAX_UPPER_TABLE
    limit = None  # where a fixed bound cannot pass the candidates' cap either: the way out
    if constructor == "lp":
        top = LP_MAX_UPPER
        limit = f"the LP constructor takes bounds up to {LP_MAX_UPPER}: another constructor " \
                "(constructor='northwest')"
    if histogram is not None:
        if rest.get("draw", True) and top >= JOINT_MAX_N - 1:  # the joint histogram is n x n
            top = JOINT_MAX_N - 1
            limit = (f"a histogram input is released at bounds up to {top} (its n x n joint "
                     "histogram): the rows as a table")
        histogram = integer_vector(histogram, "histogram")
    else:
        counts = check_counts(counts)
    # its own child of SeedSequence(seed): stage 1, stage 2 and the selector keep theirs
    source = random_source(None if seed is None else seed_child(seed, BOUND))
    bound = choose_upper(counts, eps_upper, histogram=histogram, max_upper=top, seed=source)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", TopCodingWarning)
        result = privatize(counts, eps_rest, options, upper=bound.upper, histogram=histogram,
                           seed=seed, **rest)
    described = bound.describe()
    if limit is not None:
        described["candidates"] = {**described["candidates"], "limit": limit}
    for w in seen:  # the warning of a bound chosen privately advises its share, or the cap's way
        if issubclass(w.category, TopCodingWarning):
            warnings.warn(top_mass_message(result.z, bound.upper, share,
                                           capped_change(described)), TopCodingWarning,
                          stacklevel=3)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return replace(result, eps_upper=eps_upper, bound={**described, "share": share},
                   allotted=eps_t)


def integer_upper(upper: Any, options: ReleaseOptions | None = None) -> int:
    """``upper`` as the integer bound a column is released at: an integer >= 1, at most
    :data:`LP_MAX_UPPER` for the LP constructor. (:func:`dpfix.release.budget.check_upper`
    checks a bound as a user gives it, ``"auto"`` or a text too.)

    Examples
    --------
    >>> integer_upper(np.int64(5))
    5
    """
    if not isinstance(upper, (int, np.integer)) or isinstance(upper, bool) or upper < 1:
        raise ValueError(f"upper: must be an integer >= 1 or 'auto', got {upper!r}")
    if options is not None and options.constructor == "lp" and upper > LP_MAX_UPPER:
        raise ValueError(f"upper: constructor 'lp' solves an LP with (upper + 1)^2 variables: "
                         f"upper at most {LP_MAX_UPPER}, got {upper}; use the heuristic")
    return int(upper)


def privatize(counts: Any, eps: float, options: ReleaseOptions, *,
              upper: int | str | PrivateBound,
              histogram: Any = None, seed: int | None = None, delta: float | None = None,
              progress: Callable[[int], Any] | None = None,
              on_stage: Callable[[str], Any] | None = None,
              draw: bool = True, upper_share: float | None = None) -> PrivatizedCounts:
    """Privatize one column of counts (or its histogram) with validated ``options``.

    What :func:`dpfix.release.pipeline.privatize_counts` runs once it has built the
    options (:func:`dpfix.release.options.method_options`); its parameters are that
    function's, the method's options travel in ``options``.

    Examples
    --------
    >>> from dpfix.release.options import TwoStage
    >>> r = privatize([0, 0, 1, 3, 9], 1.0, TwoStage(split=0.5), upper=3, seed=1)
    >>> r.eps_1, r.eps_2, r.N
    (0.5, 0.5, 5)
    """
    eps_t = check_positive(eps)
    if isinstance(upper, str) and upper == "auto":
        upper = PrivateBound(upper_share)
    elif upper_share is not None:
        raise ValueError("upper_share: applies to upper='auto' only; drop it")
    if isinstance(upper, PrivateBound):
        return _auto_upper(counts, eps_t, options, histogram, upper, seed, delta=delta,
                           progress=progress, on_stage=on_stage, draw=draw)
    upper = integer_upper(upper)
    if (counts is None) == (histogram is None):
        raise ValueError("counts: give the counts or histogram=, not both and not neither")
    if not draw and (histogram is None or options.constructor == "discrete-gaussian"):
        raise ValueError("draw: only a histogram input with an exact sampler may stop before "
                         "stage 2 draws")
    chosen_by = None
    if isinstance(options, Auto):
        options, chosen_by = options.at(eps_t), "auto: " + auto_statement()
    seed = check_seed(seed)
    upper = integer_upper(upper, options)
    delta = release_delta(options, delta)
    framework = options.framework
    n = upper + 1
    if histogram is None:
        counts = check_counts(counts)
        # d: the counts top-coded, in the narrowest type that holds 0 .. upper (a tenth of
        # int64's memory for upper < 256), for the draws
        d = np.empty(counts.size, dtype=_narrowest(upper))
        eta, topcoded = _histogram(counts, upper, d)
        N = int(d.size)
    else:
        if n > JOINT_MAX_N and draw:
            raise ValueError(f"upper: a histogram input returns the n x n joint histogram: "
                             f"upper at most {JOINT_MAX_N - 1}, got {upper}")
        d = None
        eta, topcoded = topcode_histogram(histogram, upper)
        N = sum(int(v) for v in eta)
    check_budget(options, eps_t)
    if framework != "two-stage" and d is None and draw and N > EXACT_HISTOGRAM_MAX_N:
        # y = G(x) is drawn exactly for every row (no float fallback): time grows with N
        raise ValueError(f"histogram: N = {N} rows exceeds {EXACT_HISTOGRAM_MAX_N}, the most "
                         f"the {framework} framework draws from a histogram (every row is "
                         "drawn); use the two-stage framework")
    seeds = stage_seeds(seed)
    stage = on_stage or (lambda name: None)
    if framework != "two-stage":
        result = no_split(framework, d, eta, n, N, topcoded, eps_t, options.split,
                          options.estimator, options.remap, seed, seeds[:2], stage, progress,
                          draw)
        result.chosen_by, result.allotted = chosen_by, eps_t
        return result
    result = two_stage_release(options, d, eta, n, N, topcoded, eps_t, delta, seed, seeds,
                               stage, progress, draw)
    result.chosen_by, result.allotted = chosen_by, eps_t
    return result


def two_stage_release(options: ReleaseOptions, d: np.ndarray | None, eta: np.ndarray, n: int,
                      N: int, topcoded: int, eps_t: float, delta: float | None,
                      seed: int | None, seeds: tuple[Any, Any, Any],
                      stage: Callable[[str], Any], progress: Callable[[int], Any] | None,
                      draw: bool) -> PrivatizedCounts:
    """The two-stage framework (paper Section 1.2), a one-stage constructor skipping stage 1:
    stage 1 spends ``eps_1`` on ``eta`` (the target ``z``), ``T`` is built at ``eps_2`` and
    checked, then every row is drawn (module docstring of :mod:`dpfix.release.pipeline`).
    ``d``: the rows' counts (top-coded at ``n - 1`` as they are drawn), or None."""
    constructor, privatizer, postprocess = (options.constructor, options.privatizer,
                                            options.postprocess)
    selector, solver, time_limit = options.selector, options.solver, options.time_limit
    stage1_seed, stage2_seed, selector_seed = seeds
    two_stage = CONSTRUCTORS[constructor].stage == "two-stage"
    gaussian = constructor == "discrete-gaussian"
    if two_stage:
        fraction, rule = split_fraction(eps_t, options.split)
    else:
        fraction, rule = 0.0, "none (one-stage constructor)"
    seconds: dict[str, float] = {}
    z = stage1 = None
    eps_1, eps_2 = stage_split(eps_t, fraction) if two_stage else (0.0, eps_t)
    if two_stage:
        stage("stage 1")
        start = time.perf_counter()
        extra: dict[str, Any] = {} if delta is None else {"delta": delta}
        if postprocess is not None:
            extra["postprocess"] = postprocess
        stage1 = privatize_distribution(
            eta, eps_1, privatizer=privatizer, secure=seed is None,
            seed=None if seed is None else np.random.default_rng(stage1_seed), **extra)
        z = np.asarray(stage1.z, dtype=float)
        seconds["stage1"] = time.perf_counter() - start

    stage("construct")
    start = time.perf_counter()
    # the discrete Gaussian's guarantee is its delta, recomputed below at eps_2 itself
    eps_build = eps_2 if gaussian else eps_2 * (1 - EPS_MARGIN)
    structured = constructor in STRUCTURED
    lam_s = None
    if structured:  # G R is drawn with lam_s <= e^eps_build (proved); T is built for it
        lam_s = rational_lam(eps_build)
        eps_build = math.log(lam_s)
    options: dict[str, Any] = {}
    if constructor == "heuristic":
        options = {"selector": selector, "seed": selector_seed}
    elif constructor == "lp":
        options = {"fixed": True, "solver": solver or LP_SOLVERS[0], "time_limit": time_limit}
    elif gaussian:
        options = {"delta": delta}
    mech = None
    level = eps_build
    if not structured or n <= STRUCTURED_T_MAX:
        try:
            mech = construct(z, eps_build, constructor=constructor, n=None if two_stage else n,
                             **options)
        except RuntimeError as exc:
            if time_limit is not None and "time limit" in str(exc).lower():
                seconds["construct"] = time.perf_counter() - start
                raise TimeLimitReached(str(exc), z, eps_1, eps_2, seconds) from exc
            raise
        mech = mech.normalised()  # the matrix checked is the matrix sampled
        level = mech.privacy_level()
        if gaussian:
            achieved = discrete_gaussian_delta(float(mech.params["sigma"]), eps_2)
            if not (mech.delta == delta and achieved <= delta and mech.eps <= eps_2):
                raise NotPrivateError(f"{mech.constructor}: delta {achieved!r} at eps_2 = "
                                      f"{eps_2!r} exceeds delta = {delta!r}; refusing to "
                                      "apply it")
        elif mech.delta or not level <= eps_2:  # no tolerance: the margin is already spent
            raise NotPrivateError(f"{mech.constructor}: privacy level {level!r} exceeds eps_2 "
                                  f"= {eps_2!r}; refusing to apply it")
        mech.check(z if mech.fixed_point is not None else None)
    sampler: Any = None
    if structured:
        sampler = structured_sampler(constructor, z, lam=lam_s, n=n)
    elif not gaussian:
        try:
            sampler = checked_table(log_T=mech.log_matrix, eps=eps_2,
                                    constructor=constructor) if not mech.exact else \
                checked_table(mech.matrix, eps=eps_2, lam=mech.lam, constructor=constructor)
        except SamplingCheckError as exc:
            raise NotPrivateError(f"{constructor}: {exc}; refusing to apply it") from exc
    seconds["construct"] = time.perf_counter() - start

    stage("draw")
    start = time.perf_counter()
    source = stage2_source(seed)
    out = joint = drawn = None
    exact_rows = sampler is not None and (d is not None or N <= EXACT_HISTOGRAM_MAX_N)
    if not draw:
        if d is not None or sampler is None:
            raise ValueError("draw: only a histogram input with an exact sampler may stop "
                             "before stage 2 draws")
        described = sampler.describe(source)
    elif not exact_rows:
        if mech is None:
            raise ValueError(f"histogram: N = {N} rows exceeds {EXACT_HISTOGRAM_MAX_N} for the "
                             f"exact samplers and T is not built above n = {STRUCTURED_T_MAX}")
        rng = np.random.default_rng(stage2_seed)
        if d is not None:
            out = apply_mechanism(mech, np.minimum(d, n - 1), rng, progress)
        else:
            joint = apply_histogram(mech, eta, rng, progress)
        described = {"kind": "float multinomial"}
    else:
        if d is not None:
            out, drawn = _draw_rows(sampler, d, source, progress, n - 1)
        else:
            joint = _draw_histogram(sampler, eta, n, source, progress)
        described = sampler.describe(source)
    seconds["apply"] = time.perf_counter() - start
    if z is None:
        estimate = None
    elif mech is not None:
        estimate = float(mech.count_error(z, "abs"))
    else:
        estimate = sampler.count_error(z)  # O(n), no T
    _warn_top_mass(z, n)
    return PrivatizedCounts(
        out, z, eps_1, eps_2, mech, estimate, n, N, topcoded,
        privatizer if two_stage else None, constructor, seconds, stage1,
        split_rule=rule, split_fraction=fraction, eps_construction=eps_build,
        privacy_level=level, delta=0.0 if delta is None else float(delta), seed=seed,
        selector=selector if constructor == "heuristic" else None, joint=joint,
        sampler=described, stage2=sampler, drawn_histogram=drawn)
