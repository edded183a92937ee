"""A ``(1 - alpha)`` band for the true top-coded distribution of counts, from the known law of
stage 1's noise (docs/uncertainty.md section 3).

The cyclic mechanisms release ``V = eta + X - roll(X, -1)`` with ``X_0 .. X_(n-1)`` i.i.d.
(Laplace, discrete Laplace, Gaussian or discrete Gaussian, of a public scale). Their partial
sums carry two noise terms only, ``sum_(i<=k) V_i = sum_(i<=k) eta_i + X_0 - X_(k+1)``, so
the CDF of ``V / N`` is off the true CDF ``F`` (of ``zeta = eta / N``) by at most
``W / N`` at every ``k`` at once, with

    W = max_(j = 1 .. n-1) |X_0 - X_j|.

Given ``X_0 = x`` the ``|x - X_j|`` are i.i.d., so ``P(W <= t) = E[g_t(X_0)^(n-1)]`` with
``g_t(x) = P(|X - x| <= t)``; ``g_t`` is even and non-increasing in ``|x|`` (a symmetric
unimodal law), which gives the lower bound of :func:`max_difference_bound` and the
half-width ``c``: ``P(W <= c) >= 1 - alpha``. The band ``CDF +- c / N`` holds around the CDF of
``V / N`` and, by the contraction of the isotonic projection (section 3.2), around the CDF
of the target ``z`` of the post-processing ``isotonic-cdf``. The default,
``isotonic-cdf-offset``, subtracts a public offset ``s`` (a function of ``V``) from the
isotonic fit; the band around its ``z`` is ``CDF_z +- (c / N + |s|)`` (the ``shift`` of
:func:`cdf_band`, Proposition 2 of section 3.2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.special import ndtr

from dpfix.release.uncertainty.common import check_alpha

__all__ = ["DistributionBand", "max_difference_bound", "cdf_band", "NOISES", "FLOAT_SLACK",
           "LEVEL_MARGIN"]

#: The laws of stage 1's latent noise ``X_i``: name -> what ``scale`` is.
NOISES = {"laplace": "b: density exp(-|x|/b) / (2b)",
          "discrete-laplace": "s: P(k) proportional to exp(-|k|/s), k an integer",
          "gaussian": "sigma: the normal law N(0, sigma^2)",
          "discrete-gaussian": "sigma: P(k) proportional to exp(-k^2/(2 sigma^2))"}

#: Added to the half-width (in CDF units) for the float rounding of the target's CDF.
FLOAT_SLACK = 1e-9

#: The lower bound on ``P(W <= c)`` must exceed ``1 - alpha`` by this much (float rounding).
LEVEL_MARGIN = 1e-9


def _tails(noise: str, scale: float, v: np.ndarray) -> np.ndarray:
    """``P(X > v)`` for real ``v`` (continuous laws) or integer ``v`` (discrete laws)."""
    if noise == "laplace":
        return np.where(v >= 0, 0.5 * np.exp(-np.abs(v) / scale),
                        1 - 0.5 * np.exp(-np.abs(v) / scale))
    if noise == "gaussian":
        return ndtr(-v / scale)
    if noise == "discrete-laplace":
        r = math.exp(-1 / scale)  # P(X >= w) = r^w / (1 + r) for w >= 1
        w = np.abs(v).astype(float)
        return np.where(v >= 0, np.exp(-(w + 1) / scale) / (1 + r),
                        1 - np.exp(-w / scale) / (1 + r))
    terms = _discrete_gaussian(scale)  # P(X = k) for k = 0 .. K, normalised
    upper = np.concatenate([np.cumsum(terms[::-1])[::-1], [0.0]])  # P(X >= k), k = 0..K+1
    w = np.minimum(np.abs(v), terms.size).astype(np.int64)
    above = upper[np.minimum(w + 1, terms.size)]  # P(X > |v|) = P(X >= |v| + 1)
    return np.where(v >= 0, above, 1 - upper[w])  # P(X > -w) = 1 - P(X >= w)


@lru_cache(maxsize=16)
def _discrete_gaussian(sigma: float) -> np.ndarray:
    """``P(X = k)``, ``k = 0 .. K``, of the discrete Gaussian (``K``: the terms below 1e-300)."""
    K = int(math.ceil(sigma * 38)) + 2
    k = np.arange(K + 1, dtype=float)
    w = np.exp(-k * k / (2 * sigma * sigma))
    return w / (w[0] + 2 * w[1:].sum())


def _grid(noise: str, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Points ``x_(i+1)`` and the masses ``P(x_i <= |X| < x_(i+1))`` (continuous) or the
    points ``|x| = i`` and ``P(|X| = i)`` (discrete), over all but ``1e-13`` of the law."""
    if noise in ("laplace", "gaussian"):
        h = scale / 1000
        top = scale * (31 if noise == "laplace" else 8)
        edges = np.arange(0, top + h, h)
        above = (np.exp(-edges / scale) if noise == "laplace" else 2 * ndtr(-edges / scale))
        return edges[1:], above[:-1] - above[1:]
    if noise == "discrete-laplace":
        K = int(math.ceil(scale * 31)) + 1
        i = np.arange(K + 1, dtype=float)
        r = math.exp(-1 / scale)
        mass = (1 - r) / (1 + r) * np.exp(-i / scale)
        mass[1:] *= 2
        return i, mass
    p = _discrete_gaussian(scale)
    mass = p.copy()
    mass[1:] *= 2
    return np.arange(p.size, dtype=float), mass


def _level(noise: str, scale: float, n: int, t: float) -> float:
    """A lower bound on ``P(W <= t)``: every bin of ``|X_0|`` at its worst (outer) point, and
    ``1 - g_t(x) = P(X > x + t) + P(X > t - x)`` (the law is symmetric)."""
    x, mass = _grid(noise, scale)
    tail = np.minimum(_tails(noise, scale, x + t) + _tails(noise, scale, t - x), 1.0)
    with np.errstate(divide="ignore"):
        return float((mass * np.exp((n - 1) * np.log1p(-tail))).sum())


@lru_cache(maxsize=256)
def _bound(noise: str, scale: float, n: int, alpha: float) -> float:
    target = 1 - alpha + LEVEL_MARGIN
    discrete = noise.startswith("discrete")
    hi = max(1.0, scale * (math.log(n) + 8))
    while _level(noise, scale, n, hi) < target:
        hi *= 2
    lo = 0.0
    if discrete:
        lo_i, hi_i = -1, int(math.ceil(hi))  # P(W <= lo) < target <= P(W <= hi)
        while hi_i - lo_i > 1:
            mid = (lo_i + hi_i) // 2
            if _level(noise, scale, n, mid) >= target:
                hi_i = mid
            else:
                lo_i = mid
        return float(hi_i)
    for _ in range(60):
        mid = (lo + hi) / 2
        if _level(noise, scale, n, mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi


def max_difference_bound(n: int, alpha: float, *, noise: str, scale: float) -> float:
    """A ``c`` with ``P(max_(j=1..n-1) |X_0 - X_j| <= c) >= 1 - alpha`` for i.i.d. ``X_i``.

    The least ``c`` (an integer for the discrete laws; within ``2^-60`` of the bracket for the
    continuous ones) whose lower bound
    ``sum_i P(|X_0| in bin i) g_c(outer point of bin i)^(n-1)`` reaches ``1 - alpha`` plus
    :data:`LEVEL_MARGIN` (docs/uncertainty.md section 3.1).

    Parameters
    ----------
    n : int
        The number of count values (``n - 1`` differences).
    alpha : float
        In ``(0, 1)``.
    noise : str
        A name in :data:`NOISES`.
    scale : float
        The noise's scale (see :data:`NOISES`), ``> 0``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``alpha`` outside ``(0, 1)``, an unknown noise, a scale that is not positive, ``n < 2``.

    Examples
    --------
    >>> max_difference_bound(2, 0.05, noise="discrete-laplace", scale=1.0)  # one difference
    4.0
    >>> round(max_difference_bound(51, 0.05, noise="laplace", scale=2.0), 2)
    15.9
    """
    alpha = check_alpha(alpha)
    if noise not in NOISES:
        raise ValueError(f"noise: unknown {noise!r}; use one of {', '.join(NOISES)}")
    scale = float(scale)
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale: must be a finite number > 0, got {scale!r}")
    if not (isinstance(n, (int, np.integer)) and n >= 2):
        raise ValueError(f"n: must be an integer >= 2, got {n!r}")
    return _bound(noise, scale, int(n), alpha)


@dataclass(frozen=True)
class DistributionBand:
    """A simultaneous ``(1 - alpha)`` band for the CDF of the true top-coded distribution.

    Attributes
    ----------
    lower, upper : numpy.ndarray
        ``lower[k] <= F(k) <= upper[k]`` for every ``k = 0 .. n-1`` at once, with probability
        at least ``1 - alpha`` (``F(n-1) = 1``).
    alpha : float
    method : str
    exact : bool
        False: a lower bound on the coverage (section 3).
    half_width : float
        ``c / N + |shift|`` plus :data:`FLOAT_SLACK`, before clipping to ``[0, 1]``.
    centre : str
        ``"z"`` (the target's CDF) or ``"V"`` (the CDF of stage 1's release ``V / N``).
    noise : dict
        The law and scale of stage 1's noise, ``c`` and ``N``.
    shift : float
        The offset ``s`` (in CDF units, a share of the ``N`` rows) that the post-processing
        subtracted from the isotonic fit of ``V``'s CDF (``isotonic-cdf-offset``), added to
        the half-width as ``|s|``; 0 for ``isotonic-cdf`` and a band centred on ``V``.
    """

    lower: np.ndarray
    upper: np.ndarray
    alpha: float
    method: str
    exact: bool
    half_width: float
    centre: str
    noise: dict
    shift: float = 0.0

    @property
    def n(self) -> int:
        """The number of count values."""
        return int(self.lower.size)

    def cell_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Bounds on every ``zeta_k`` implied by the band (on the same event, so simultaneous):
        ``F(k) - F(k-1)`` between ``lower[k] - upper[k-1]`` and ``upper[k] - lower[k-1]``.

        Examples
        --------
        >>> b = cdf_band([0.5, 0.5], 0.05, N=100, noise="laplace", scale=1.0)
        >>> [[round(float(v), 4) for v in bound] for bound in b.cell_bounds()]
        [[0.4589, 0.4589], [0.5411, 0.5411]]
        """
        lo = np.concatenate([[0.0], self.lower])
        hi = np.concatenate([[0.0], self.upper])
        return np.clip(lo[1:] - hi[:-1], 0, 1), np.clip(hi[1:] - lo[:-1], 0, 1)

    def covers(self, distribution: Any) -> bool:
        """Whether the CDF of ``distribution`` (``n`` shares, or a histogram) lies in the band."""
        d = np.asarray(distribution, dtype=float)
        if d.shape != (self.n,) or d.sum() <= 0:
            raise ValueError(f"distribution: expected {self.n} non-negative shares")
        F = np.cumsum(d) / d.sum()
        return bool(((self.lower <= F) & (F <= self.upper)).all())

    def describe(self) -> dict[str, Any]:
        """For the report: the level, the method, the half-width and the band itself."""
        return {"kind": "simultaneous band for the CDF of the true top-coded distribution",
                "alpha": self.alpha, "level": 1 - self.alpha, "method": self.method,
                "exact": self.exact, "half_width": self.half_width, "centre": self.centre,
                "shift": self.shift, "noise": dict(self.noise),
                "definition": "F(k) = share of rows with top-coded count <= k; "
                              "lower[k] <= F(k) <= upper[k] for every k at once",
                "cdf_lower": self.lower.tolist(), "cdf_upper": self.upper.tolist()}


def cdf_band(centre: Any, alpha: float, *, N: int, noise: str, scale: float,
             centred_on: str = "z", shift: float = 0.0) -> DistributionBand:
    """The band ``CDF(centre) +- (c / N + |shift|)`` (docs/uncertainty.md section 3).

    Parameters
    ----------
    centre : array_like of float
        The target ``z`` of the ``isotonic-cdf`` or ``isotonic-cdf-offset`` post-processing,
        or stage 1's release ``V`` (any other post-processing; then ``centred_on="V"``; ``V``
        is scaled by ``N``).
    alpha : float
        In ``(0, 1)``.
    N : int
        The number of rows (public).
    noise, scale
        The law of stage 1's latent noise ``X_i`` (:data:`NOISES`).
    centred_on : str
        ``"z"`` or ``"V"``.
    shift : float
        In CDF units (a share of the ``N`` rows, like ``c / N``; not in counts): the offset
        ``s`` that ``isotonic-cdf-offset`` subtracted from the isotonic fit of ``V``'s CDF
        (:func:`dpfix.release.privatizers.postprocess.cycle_offset`), a function of ``V``
        and so public. The half-width grows by ``|s|`` (section 3.2, Proposition 2). 0 for
        ``isotonic-cdf``; a band centred on ``V`` takes none.

    Returns
    -------
    DistributionBand

    Raises
    ------
    ValueError
        ``alpha`` outside ``(0, 1)``, a bad noise or scale, ``N < 1``, a centre of fewer than
        2 values, a shift that is not finite or given with ``centred_on="V"``.

    Examples
    --------
    >>> b = cdf_band([0.5, 0.3, 0.2], 0.05, N=1000, noise="laplace", scale=2.0)
    >>> round(b.half_width, 4), [round(float(v), 4) for v in b.lower]
    (0.0096, [0.4904, 0.7904, 1.0])
    >>> b = cdf_band([0.5, 0.3, 0.2], 0.05, N=1000, noise="laplace", scale=2.0, shift=-0.002)
    >>> round(b.half_width, 4), [round(float(v), 4) for v in b.lower]
    (0.0116, [0.4884, 0.7884, 1.0])
    """
    alpha = check_alpha(alpha)
    if not (isinstance(N, (int, np.integer)) and N >= 1):
        raise ValueError(f"N: must be an integer >= 1, got {N!r}")
    if centred_on not in ("z", "V"):
        raise ValueError(f"centred_on: 'z' or 'V', got {centred_on!r}")
    if isinstance(shift, bool) or not isinstance(shift, (int, float, np.integer, np.floating)) \
            or not math.isfinite(shift):
        raise ValueError(f"shift: must be a finite number (CDF units), got {shift!r}")
    shift = float(shift)
    if centred_on == "V" and shift != 0.0:
        raise ValueError("shift: only a band centred on the target z takes a shift (a band "
                         "centred on V has none)")
    v = np.asarray(centre, dtype=float)
    if v.ndim != 1 or v.size < 2 or not np.isfinite(v).all():
        raise ValueError("centre: expected a finite vector of at least 2 values")
    n = v.size
    c = max_difference_bound(n, alpha, noise=noise, scale=scale)
    F = np.cumsum(v / (N if centred_on == "V" else 1.0))
    half = c / N + abs(shift) + FLOAT_SLACK
    lower = np.clip(F - half, 0.0, 1.0)
    upper = np.clip(F + half, 0.0, 1.0)
    lower[-1] = upper[-1] = 1.0
    lower.flags.writeable = upper.flags.writeable = False
    if centred_on == "V":
        where = "the CDF of stage 1's release V / N"
    elif shift == 0.0:
        where = "the target z's CDF (isotonic-cdf post-processing: within the band of V's CDF)"
    else:
        where = (f"the target z's CDF, the isotonic projection of V's CDF less the offset "
                 f"s = {shift:.6g} (isotonic-cdf-offset), so the half-width is c / N + |s|")
    method = (f"cyclic noise: sup_k |CDF(V/N) - F| = max_j |X_0 - X_j| / N <= c / N with "
              f"probability >= 1 - alpha (lower bound on the exact law of the max, {noise} noise "
              f"of scale {scale:.6g}); centred on {where}")
    return DistributionBand(lower, upper, alpha, method, False, half, centred_on,
                            {"law": noise, "scale": float(scale), "c": c, "N": int(N)}, shift)
