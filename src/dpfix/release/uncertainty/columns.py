"""The stated uncertainty of one privatized column (a :class:`PrivatizedCounts`), from its
public parts only: the sampler of stage 2, the target ``z``, stage 1's noise law, ``N``, ``n``
and the released counts (docs/uncertainty.md section 5).

Each function picks the construction that fits what was sampled and says which it took
(``method``, ``exact``); what has no construction gets one line naming the parameter.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpfix.constructors.remap import structured_sampler
from dpfix.release.result import PrivatizedCounts
from dpfix.release.uncertainty.band import DistributionBand, cdf_band
from dpfix.release.uncertainty.common import check_alpha
from dpfix.release.uncertainty.counts import ConfidenceSets, neyman_sets, preimage_sets
from dpfix.release.uncertainty.totals import TotalInterval, total_intervals
from dpfix.sampling.quantile import apportion

__all__ = ["confidence_sets", "distribution_band", "total_interval", "group_intervals",
           "mechanism_sampled", "quantile_preimages"]

#: stage 1's noise, as its report names it -> (law, the key of its scale)
_STAGE1_NOISE = {"Laplace": ("laplace", "scale"), "discrete Laplace": ("discrete-laplace", "scale"),
                 "Gaussian": ("gaussian", "sigma"),
                 "discrete Gaussian": ("discrete-gaussian", "sigma")}


def _check_result(result: Any) -> PrivatizedCounts:
    if not isinstance(result, PrivatizedCounts):
        raise ValueError(f"result: expected a PrivatizedCounts (privatize_counts), got "
                         f"{type(result).__name__}")
    if result.z is None and result.framework != "two-stage":
        raise ValueError("result: the one-stage or hybrid release is not complete (draw=False): "
                         "complete it with complete_no_split first")
    return result


def mechanism_sampled(result: PrivatizedCounts) -> tuple[Any, Any, Any]:
    """``(law, first, last)``: what drew each released count, and for a remap chosen from the
    released ``y`` (one-stage and hybrid frameworks) the preimage ``first[j] .. last[j]`` of
    every output ``j`` (else None, None).

    The exact sampler of stage 2 (``G R`` or the checked table) when it drew the rows; the
    float ``T`` when numpy's multinomial did (the discrete Gaussian; a histogram above the
    exact samplers' size); ``G`` for the one-stage and hybrid frameworks.

    Examples
    --------
    >>> from dpfix.release.pipeline import privatize_counts
    >>> r = privatize_counts([0, 1, 1, 2, 5], 1.0, upper=5, seed=0)
    >>> type(mechanism_sampled(r)[0]).__name__
    'StructuredSampler'
    """
    result = _check_result(result)
    n = result.n
    if result.framework != "two-stage":
        G = structured_sampler("truncated-geometric", lam=result.stage2.lam, n=n)
        if result.remap == "northwest":
            R = result.stage2.remap
            ms = np.repeat(np.arange(n), np.diff(R.start))
            drawn = R.drawn_shares() > 0
            cols, ms = R.cols[drawn], ms[drawn]
            first = np.full(n, n, dtype=np.int64)
            last = np.full(n, -1, dtype=np.int64)
            np.minimum.at(first, cols, ms)
            np.maximum.at(last, cols, ms)
        else:
            first, last = quantile_preimages(result.released_histogram,
                                             apportion(result.z, result.N))
        return G, first.astype(np.int64), last.astype(np.int64)
    kind = (result.sampler or {}).get("kind")
    if result.stage2 is None or kind == "float multinomial":
        if result.mechanism is None:
            raise ValueError("result: its rows were drawn from float rows of T, which is not "
                             "built: no law to invert")
        return result.mechanism, None, None
    return result.stage2, None, None


def quantile_preimages(h: Any, target: Any) -> tuple[np.ndarray, np.ndarray]:
    """The preimage ``first[j] .. last[j]`` of every output of the quantile matching of the
    histogram ``h`` of ``y`` onto ``target`` (:func:`dpfix.sampling.quantile.quantile_remap`),
    in ``O(n)``.

    The matching gives the rows ranked ``T_(j-1) .. T_j - 1`` by ``y`` (``T`` the cumulative
    target) the output ``j``, and the rows with ``y = m`` hold the ranks ``H_(m-1) .. H_m - 1``
    (``H`` the cumulative ``h``): ``j`` comes from the ``m`` whose ranks meet its own, from
    the ``m`` holding rank ``T_(j-1)`` to the one holding rank ``T_j - 1``.

    Examples
    --------
    >>> [v.tolist() for v in quantile_preimages([1, 3, 0], [2, 0, 2])]
    [[0, 3, 1], [1, -1, 1]]
    """
    H = np.cumsum(np.asarray(h, dtype=np.int64))
    Tc = np.cumsum(np.asarray(target, dtype=np.int64))
    n = Tc.size
    start = np.concatenate([[0], Tc[:-1]])
    used = Tc > start
    first = np.where(used, np.searchsorted(H, start, side="right"), n)
    last = np.where(used, np.searchsorted(H, Tc - 1, side="right"), -1)
    return first.astype(np.int64), last.astype(np.int64)


def confidence_sets(result: PrivatizedCounts, alpha: float) -> ConfidenceSets:
    """Per released count, a ``(1 - alpha)`` confidence set for the true top-coded count.

    Parameters
    ----------
    result : PrivatizedCounts
    alpha : float
        In ``(0, 1)``.

    Returns
    -------
    ConfidenceSets
        Summarised over the released histogram (``describe()``); ``at(result.counts)`` gives
        every row's set.

    Raises
    ------
    ValueError
        ``alpha`` outside ``(0, 1)``; an incomplete one-stage release.

    Examples
    --------
    >>> from dpfix.release.pipeline import privatize_counts
    >>> r = privatize_counts([0, 0, 1, 3, 9, 4], 1.0, upper=9, seed=2)
    >>> cs = confidence_sets(r, 0.05)
    >>> cs.exact, bool(cs.covers(np.minimum([0, 0, 1, 3, 9, 4], 9), r.counts).all())
    (True, True)
    """
    alpha = check_alpha(alpha)
    law, first, last = mechanism_sampled(result)
    h = result.output_histogram
    if first is not None:
        return preimage_sets(law, first, last, alpha, h)
    return neyman_sets(law, alpha, h)


def distribution_band(result: PrivatizedCounts, alpha: float) -> DistributionBand:
    """A ``(1 - alpha)`` simultaneous band for the CDF of the true top-coded distribution.

    From stage 1's cyclic noise (docs/uncertainty.md section 3): centred on the target ``z``
    for the default post-processing ``isotonic-cdf``, else on stage 1's release ``V`` (the
    hybrid framework: ``V``; publishing that band publishes ``V``'s CDF, differentially
    private, at no further cost).

    Raises
    ------
    ValueError
        ``alpha`` outside ``(0, 1)``; a release without stage 1 (the one-stage framework and
        constructors) or with another privatizer than the cyclic ones.

    Examples
    --------
    >>> from dpfix.release.pipeline import privatize_counts
    >>> r = privatize_counts([0, 0, 1, 3, 2, 4] * 50, 1.0, upper=9, seed=2)
    >>> b = distribution_band(r, 0.05)
    >>> b.centre, b.covers(np.bincount([0, 0, 1, 3, 2, 4], minlength=10))
    ('z', True)
    """
    alpha = check_alpha(alpha)
    result = _check_result(result)
    if result.framework == "one-stage":
        raise ValueError("framework: the one-stage framework's z is estimated from y = G(x) "
                         "(no stage 1): no band from its law is available; use the two-stage "
                         "or hybrid framework")
    s1 = result.stage1
    if s1 is None:
        raise ValueError(f"constructor: {result.constructor!r} is one-stage (no stage 1, no "
                         "target z): there is no distribution band")
    if s1.privatizer not in ("cyclic-laplace", "cyclic-gaussian"):
        raise ValueError(f"privatizer: the band is proved for the cyclic privatizers (their "
                         f"partial sums carry two noise terms), not {s1.privatizer!r}")
    law, key = _STAGE1_NOISE[s1.noise["distribution"]]
    scale = float(s1.noise[key])
    if result.framework == "two-stage" and s1.postprocess == "isotonic-cdf":
        return cdf_band(result.z, alpha, N=result.N, noise=law, scale=scale, centred_on="z")
    return cdf_band(s1.raw, alpha, N=result.N, noise=law, scale=scale, centred_on="V")


def group_intervals(result: PrivatizedCounts, groups: list, alpha: float, *,
                    method: str = "chernoff") -> list[TotalInterval]:
    """For every group of rows, a ``(1 - alpha)`` interval for its top-coded total (and mean).

    Parameters
    ----------
    result : PrivatizedCounts
        A release of rows (not a histogram input).
    groups : list of array_like
        The rows of each group: positions ``0 .. N-1`` or boolean masks.
    alpha : float
    method : str
        ``"chernoff"`` or ``"bonferroni"`` (:mod:`dpfix.release.uncertainty.totals`).

    Raises
    ------
    ValueError
        ``alpha`` outside ``(0, 1)``, rows not in the table, a histogram release, an unknown
        method.

    Examples
    --------
    >>> from dpfix.release.pipeline import privatize_counts
    >>> r = privatize_counts([0, 0, 1, 3, 9, 4], 1.0, upper=9, seed=2)
    >>> [t.rows for t in group_intervals(r, [[0, 1, 2], [3, 4, 5]], 0.05)]
    [3, 3]
    """
    alpha = check_alpha(alpha)
    law, first, last = mechanism_sampled(result)
    if result.counts is None:
        raise ValueError("rows: a histogram release has no rows (only its histogram): no "
                         "group to total")
    return total_intervals(law, result.counts, groups, alpha, method=method,
                           private_upper=result.bound is not None, first=first, last=last)


def total_interval(result: PrivatizedCounts, rows: Any, alpha: float, *,
                   method: str = "chernoff") -> TotalInterval:
    """A ``(1 - alpha)`` interval for the top-coded total of one group of rows.

    See :func:`group_intervals`.

    Examples
    --------
    >>> from dpfix.release.pipeline import privatize_counts
    >>> r = privatize_counts([0, 0, 1, 3, 9, 4], 1.0, upper=9, seed=2)
    >>> t = total_interval(r, [0, 1], 0.05, method="bonferroni")
    >>> t.rows, t.lower <= 0 <= t.upper
    (2, True)
    >>> total_interval(r, [6], 0.05)
    Traceback (most recent call last):
    ...
    ValueError: rows: position 6 is not a row of the table (it has 6 rows: 0 .. 5)
    """
    return group_intervals(result, [rows], alpha, method=method)[0]
