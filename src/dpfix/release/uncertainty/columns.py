"""The stated uncertainty of one privatized column (a :class:`PrivatizedCounts`), from its
public parts only: the sampler of stage 2, the target ``z``, stage 1's noise law, ``N``, ``n``
and the released counts (docs/uncertainty.md section 5).

:class:`ColumnUncertainty` holds exactly those parts (nothing confidential: no true
histogram, no count of top-coded rows, no realised error), so that a published release may
keep it and answer later; the functions below build it from a ``PrivatizedCounts`` and ask
it. Each picks the construction that fits what was sampled and says which it took
(``method``, ``exact``); what has no construction gets one line naming the parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpfix.constructors.remap import structured_sampler
from dpfix.release.privatizers.postprocess import cdf_offset
from dpfix.release.result import PrivatizedCounts
from dpfix.release.uncertainty.band import DistributionBand, cdf_band
from dpfix.release.uncertainty.common import check_alpha
from dpfix.release.uncertainty.counts import ConfidenceSets, neyman_sets, preimage_sets
from dpfix.release.uncertainty.totals import TotalInterval, total_intervals
from dpfix.sampling.quantile import apportion

__all__ = ["ColumnUncertainty", "confidence_sets", "distribution_band", "total_interval",
           "group_intervals", "mechanism_sampled", "quantile_preimages"]

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


def _band_inputs(result: PrivatizedCounts) -> tuple[Any, str | None]:
    """``((centre, centred_on, noise, scale, shift), None)``, or ``(None, the one-line
    reason)``: centred on the target ``z`` for ``isotonic-cdf`` (shift 0) and
    ``isotonic-cdf-offset`` (shift: the offset it subtracted,
    :func:`~dpfix.release.privatizers.postprocess.cdf_offset` of ``V / N``, public), else
    on ``V``."""
    if result.framework == "one-stage":
        return None, ("framework: the one-stage framework's z is estimated from y = G(x) (no "
                      "stage 1): no band from its law is available; use the two-stage or "
                      "hybrid framework")
    s1 = result.stage1
    if s1 is None:
        return None, (f"constructor: {result.constructor!r} is one-stage (no stage 1, no "
                      "target z): there is no distribution band")
    if s1.privatizer not in ("cyclic-laplace", "cyclic-gaussian"):
        return None, (f"privatizer: the band is proved for the cyclic privatizers (their "
                      f"partial sums carry two noise terms), not {s1.privatizer!r}")
    law, key = _STAGE1_NOISE[s1.noise["distribution"]]
    scale = float(s1.noise[key])
    if result.framework == "two-stage" and s1.postprocess in ("isotonic-cdf",
                                                               "isotonic-cdf-offset"):
        shift = cdf_offset(np.asarray(s1.raw, dtype=float) / s1.N) \
            if s1.postprocess == "isotonic-cdf-offset" else 0.0
        return (np.array(result.z, dtype=float), "z", law, scale, shift), None
    return (np.array(s1.raw, dtype=float), "V", law, scale, 0.0), None


def _frozen(a: Any) -> Any:
    if a is None:
        return None
    v = np.array(a)
    v.flags.writeable = False
    return v


@dataclass(frozen=True)
class ColumnUncertainty:
    """The public inputs of one column's stated uncertainty, and its answers.

    Attributes
    ----------
    law : StructuredSampler, CheckedTable or Mechanism
        What drew each released count (:func:`mechanism_sampled`): a function of the public
        target ``z`` and the budget.
    n, N : int
        Count values and rows (public).
    first, last : numpy.ndarray or None
        The preimages of a remap chosen from the released ``y`` (one-stage and hybrid
        frameworks; for the quantile remap they come from the histogram of ``y``,
        differentially private), else None.
    histogram : numpy.ndarray
        The released histogram (the output's).
    band : tuple or None
        ``(centre, centred_on, noise, scale, shift)`` of the band: the target ``z`` (for
        ``isotonic-cdf``, shift 0, and the default ``isotonic-cdf-offset``, shift the public
        offset it subtracted,
        :func:`~dpfix.release.privatizers.postprocess.cdf_offset`), or stage 1's release
        ``V`` (differentially private; shift 0) for another post-processing and the hybrid
        framework.
    no_band : str or None
        Why there is no band (one line naming the parameter).
    private_upper : bool
        ``upper`` was chosen privately (``upper="auto"``).

    Examples
    --------
    >>> from dpfix.release.pipeline import privatize_counts
    >>> u = ColumnUncertainty.of(privatize_counts([0, 0, 1, 3, 2, 4] * 20, 1.0, upper=9, seed=2))
    >>> u.confidence_sets(0.05).exact, u.distribution_band(0.05).centre
    (True, 'z')
    """

    law: Any
    n: int
    N: int
    first: np.ndarray | None
    last: np.ndarray | None
    histogram: np.ndarray
    band: tuple | None
    no_band: str | None
    private_upper: bool

    @classmethod
    def of(cls, result: PrivatizedCounts) -> ColumnUncertainty:
        """The public parts of ``result`` (a release of rows or of a histogram)."""
        law, first, last = mechanism_sampled(result)
        band, why = _band_inputs(result)
        if band is not None:
            band = (_frozen(band[0]), *band[1:])
        return cls(law, int(result.n), int(result.N), _frozen(first), _frozen(last),
                   _frozen(np.asarray(result.output_histogram, dtype=np.int64)), band, why,
                   result.bound is not None)

    def confidence_sets(self, alpha: float) -> ConfidenceSets:
        """Per released count, a ``(1 - alpha)`` set for the true top-coded count (section 2),
        summarised over the released histogram."""
        alpha = check_alpha(alpha)
        if self.first is not None:
            return preimage_sets(self.law, self.first, self.last, alpha, self.histogram)
        return neyman_sets(self.law, alpha, self.histogram)

    def distribution_band(self, alpha: float) -> DistributionBand:
        """The ``(1 - alpha)`` band for the CDF of the true top-coded distribution (section 3).

        Raises
        ------
        ValueError
            ``alpha`` outside ``(0, 1)``, or no band for this release (:attr:`no_band`).
        """
        alpha = check_alpha(alpha)
        if self.band is None:
            raise ValueError(self.no_band)
        centre, centred_on, noise, scale, shift = self.band
        return cdf_band(centre, alpha, N=self.N, noise=noise, scale=scale,
                        centred_on=centred_on, shift=shift)

    def group_intervals(self, released: Any, groups: list, alpha: float, *,
                        method: str = "chernoff") -> list[TotalInterval]:
        """For every group of rows of the released column, a ``(1 - alpha)`` interval for its
        top-coded total (section 4)."""
        alpha = check_alpha(alpha)
        if released is None:
            raise ValueError("rows: a histogram release has no rows (only its histogram): no "
                             "group to total")
        return total_intervals(self.law, released, groups, alpha, method=method,
                               private_upper=self.private_upper, first=self.first,
                               last=self.last)


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
    return ColumnUncertainty.of(result).confidence_sets(alpha)


def distribution_band(result: PrivatizedCounts, alpha: float) -> DistributionBand:
    """A ``(1 - alpha)`` simultaneous band for the CDF of the true top-coded distribution.

    From stage 1's cyclic noise (docs/uncertainty.md section 3): centred on the target ``z``
    for the default post-processing ``isotonic-cdf-offset`` (half-width ``c / N + |s|``,
    ``s`` the public offset it subtracted, ``cdf_offset(V / N)``) and for ``isotonic-cdf``
    (``c / N``), else on stage 1's release ``V`` (the hybrid framework: ``V``; publishing
    that band publishes ``V``'s CDF, differentially private, at no further cost).

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
    return ColumnUncertainty.of(result).distribution_band(alpha)


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
    return ColumnUncertainty.of(result).group_intervals(result.counts, groups, alpha,
                                                        method=method)


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
