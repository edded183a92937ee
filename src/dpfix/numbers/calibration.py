"""Gaussian noise calibration for (eps, delta)-DP (paper Appendix A, cyclic Gaussian).

The one implementation of both calibrations (floor 1): the cyclic Gaussian
privatizer (:mod:`dpfix.release.privatizers.cyclic`) and the discrete Gaussian baseline
(:mod:`dpfix.constructors.additive`) import it; see docs/postprocessing.md for the
privatizers and their calibration.

- Continuous Gaussian: the analytic Gaussian mechanism of Balle and Wang (2018,
  Theorem 8): ``N(0, sigma^2)`` noise on a query of L2 sensitivity ``D`` is
  (eps, delta)-DP iff
  ``Phi(D/(2 sigma) - eps sigma/D) - e^eps Phi(-D/(2 sigma) - eps sigma/D) <= delta``.
  This delta decreases in ``sigma`` (Balle and Wang, Lemma 7), so
  :func:`analytic_gaussian_sigma` bisects on ``log sigma``.
- Discrete Gaussian: Canonne, Kamath and Steinke (2020, Theorem 7): with
  ``Y ~ N_Z(0, sigma^2)`` and sensitivity 1 (all dpfix needs: a move shifts one
  integer coordinate by 1), the exact delta is
  ``P[Y > eps sigma^2 - 1/2] - e^eps P[Y > eps sigma^2 + 1/2]``. This delta is
  NOT monotone in ``sigma`` (it jumps up where ``eps sigma^2 + 1/2`` passes an
  integer), so :func:`discrete_gaussian_sigma` searches over those breakpoints
  first, then bisects inside one segment.

Both searches return the upper end of their final bracket, whose delta is at
most the target, so the guarantee never rests on a search tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import log_ndtr

from dpfix.numbers.deprecation import no_other, renamed
from dpfix.numbers.numeric import check_positive, check_probability

__all__ = ["analytic_gaussian_delta", "analytic_gaussian_sigma", "discrete_gaussian_delta",
           "discrete_gaussian_sigma", "discrete_gaussian_log_weights", "SIGMA_RTOL",
           "MAX_DISCRETE_SIGMA"]

#: Relative width of the final bisection bracket on sigma (both searches).
SIGMA_RTOL = 1e-10
#: Largest sigma of the discrete Gaussian (its pmf is summed directly, ~12 sigma terms).
MAX_DISCRETE_SIGMA = 2e5


def _difference(log_a: float, log_b: float) -> float:
    """``exp(log_a) - exp(log_b)`` without cancellation when both are tiny."""
    if log_a == -math.inf:
        return -math.exp(log_b) if log_b > -math.inf else 0.0
    return -math.exp(log_a) * math.expm1(log_b - log_a)


def analytic_gaussian_delta(sigma: float, eps: float | None = None, sensitivity: float = 1.0,
                            **deprecated: Any) -> float:
    """The exact delta of ``N(0, sigma^2)`` noise at ``eps`` (Balle and Wang 2018).

    Parameters
    ----------
    sigma : float
        The noise's standard deviation (``> 0``).
    eps : float
        ``> 0``.
    sensitivity : float
        The query's L2 sensitivity ``D`` (``> 0``).

    Returns
    -------
    float
        Balle and Wang's (2018, Theorem 8) exact delta.

    Raises
    ------
    ValueError
        A non-positive or non-finite argument.

    Examples
    --------
    >>> round(analytic_gaussian_delta(1.0, 1.0), 6)
    0.126937
    """
    eps = renamed("epsilon", "eps", deprecated, eps, where="analytic_gaussian_delta")
    no_other(deprecated, "analytic_gaussian_delta")
    sigma, eps = check_positive(sigma, "sigma"), check_positive(eps, "eps")
    d = check_positive(sensitivity, "sensitivity")
    a, b = d / (2 * sigma) - eps * sigma / d, -d / (2 * sigma) - eps * sigma / d
    return _difference(float(log_ndtr(a)), eps + float(log_ndtr(b)))


def _bisect_sigma(delta_of: Callable[[float], float], delta: float, start: float,
                  ceiling: float = math.inf) -> float:
    lo, hi = start, start
    while delta_of(lo) <= delta:
        lo /= 2
        if lo < 1e-12:
            return hi
    while delta_of(hi) > delta:
        hi *= 2
        if hi > ceiling:
            raise ValueError(f"delta={delta:g} needs sigma above {ceiling:g}")
    while hi / lo > 1 + SIGMA_RTOL:
        mid = math.sqrt(lo * hi)
        if delta_of(mid) > delta:
            lo = mid
        else:
            hi = mid
    if delta_of(hi) > delta:  # pragma: no cover - guarded by the loop invariant
        raise RuntimeError("sigma calibration failed")
    return hi


def analytic_gaussian_sigma(eps: float | None = None, delta: float | None = None,
                            sensitivity: float = 1.0, **deprecated: Any) -> float:
    """The smallest ``sigma`` of an (eps, delta)-DP Gaussian mechanism (Balle and Wang 2018).

    Parameters
    ----------
    eps : float
        ``> 0``.
    delta : float
        In ``(0, 1)``.
    sensitivity : float
        The L2 sensitivity (``> 0``).

    Returns
    -------
    float
        The upper end of the final bisection bracket: its delta is at most ``delta``.

    Raises
    ------
    ValueError
        On bad input.

    Examples
    --------
    >>> s = analytic_gaussian_sigma(1.0, 1e-5)
    >>> round(s, 4), analytic_gaussian_delta(s, 1.0) <= 1e-5
    (3.7306, True)
    """
    eps = renamed("epsilon", "eps", deprecated, eps, where="analytic_gaussian_sigma")
    no_other(deprecated, "analytic_gaussian_sigma")
    eps, delta = check_positive(eps, "eps"), check_probability(delta)
    d = check_positive(sensitivity, "sensitivity")
    start = d * math.sqrt(2 * math.log(1.25 / delta)) / eps  # the classical bound
    return _bisect_sigma(lambda s: analytic_gaussian_delta(s, eps, d), delta, start)


# -- discrete Gaussian ----------------------------------------------------------------------
def discrete_gaussian_log_weights(sigma: float, top: int) -> tuple[np.ndarray, float]:
    """``v[y] = -y^2 / (2 sigma^2)`` for ``y = 0..K`` and ``log Z``, ``Z = sum_y e^v[|y|]``.

    ``K >= top``, and large enough that the first omitted term is below ``1e-30``
    (so ``log Z`` is exact to float precision). Callers pass ``top`` at least
    ``12 sigma`` past the last tail they need, so each tail's omitted terms are
    below ``e^-72`` of its first. ``v - log Z`` is the log pmf of ``N_Z(0, sigma^2)``.

    Parameters
    ----------
    sigma : float
        The discrete Gaussian's scale.
    top : int
        The largest ``y`` needed.

    Returns
    -------
    (numpy.ndarray, float)
        ``v`` (length ``K + 1``) and ``log Z``.

    Examples
    --------
    >>> v, log_z = discrete_gaussian_log_weights(1.0, 3)
    >>> v[:3].tolist(), round(log_z - math.log(math.sqrt(2 * math.pi)), 7)  # Poisson summation
    ([-0.0, -0.5, -2.0], 0.0)
    """
    K = max(top, int(math.ceil(sigma * math.sqrt(2 * 69.1))) + 1)
    v = -np.arange(K + 1, dtype=float) ** 2 / (2 * sigma * sigma)
    log_z = math.log(1 + 2 * float(np.exp(v[1:]).sum()))
    return v, log_z


def discrete_gaussian_delta(sigma: float, eps: float | None = None, **deprecated: Any) -> float:
    """The exact delta of ``N_Z(0, sigma^2)`` noise on a sensitivity-1 count at ``eps``.

    Canonne, Kamath, Steinke 2020 ("The discrete Gaussian for differential
    privacy", arXiv:2004.00010, Theorem 7, with Delta = 1):
    ``delta = P[X > eps sigma^2 - 1/2] - e^eps P[X > eps sigma^2 + 1/2]``,
    ``X ~ N_Z(0, sigma^2)``; for integer ``X``, ``P[X > t] = P[X >= floor(t) + 1]``.
    Written as ``P[lo <= X < hi] - (e^eps - 1) P[X >= hi]`` to limit cancellation
    (as in the authors' reference code, T. Steinke 2020, ``dg_delta``), with
    ``hi = lo + 1`` exactly. The tests check it against the hockey-stick
    divergence ``sum_y max(0, p(y) - e^eps p(y-1))``.

    Parameters
    ----------
    sigma : float
        The scale (``0 < sigma <= MAX_DISCRETE_SIGMA``).
    eps : float
        ``> 0``.

    Returns
    -------
    float
        The exact delta (Balle and Wang 2018, Theorem 8).

    Raises
    ------
    ValueError
        On bad input or ``sigma > MAX_DISCRETE_SIGMA``.

    Examples
    --------
    >>> round(discrete_gaussian_delta(2.0, 1.0), 6)
    0.007249
    """
    eps = renamed("epsilon", "eps", deprecated, eps, where="discrete_gaussian_delta")
    no_other(deprecated, "discrete_gaussian_delta")
    sigma, eps = check_positive(sigma, "sigma"), check_positive(eps, "eps")
    if sigma > MAX_DISCRETE_SIGMA:
        raise ValueError(f"sigma: {sigma:g} exceeds {MAX_DISCRETE_SIGMA:g}, too large to sum "
                         "the discrete Gaussian")
    lo = math.floor(eps * sigma * sigma - 0.5) + 1
    if lo > 40 * sigma + 2:  # delta <= P[X >= lo] < (sigma + 1) e^-800: zero in float64
        return 0.0
    hi = lo + 1  # floor(t + 1/2) = floor(t - 1/2) + 1; rounding t +- 1/2 separately can break it
    v, log_z = discrete_gaussian_log_weights(sigma, hi + 1 + int(math.ceil(12 * sigma)))
    p = np.exp(v - log_z)
    K = len(p) - 1

    def mass(a: int, b: int) -> float:  # P[a <= X <= b], by symmetry p(-y) = p(y)
        a, b = max(a, -K), min(b, K)
        ys = np.abs(np.arange(a, b + 1))
        return float(p[ys].sum()) if b >= a else 0.0
    tail = mass(hi, K)
    if tail == 0.0:
        return mass(lo, hi - 1)
    # (e^eps - 1) tail in logs: e^eps overflows past eps ~ 709, the product is <= p(lo) <= 1
    return mass(lo, hi - 1) - math.exp(math.log(tail) + eps + math.log(-math.expm1(-eps)))


def discrete_gaussian_sigma(eps: float | None = None, delta: float | None = None,
                            **deprecated: Any) -> float:
    """The smallest ``sigma`` with :func:`discrete_gaussian_delta` ``<= delta`` (CKS20 Theorem 7).

    ``delta(sigma)`` is not monotone: it is continuous, but rises after each
    breakpoint ``sigma_k = sqrt((k + 1/2) / eps)`` (where ``eps sigma^2 + 1/2``
    passes an integer) and falls again before the next. Its values at the
    breakpoints decrease, and between two breakpoints it rises then falls (the
    tests check both on a grid). So the first breakpoint ``sigma_k`` with
    ``delta(sigma_k) <= delta`` is found by a galloping and binary search on
    ``k``, and the answer by bisection on ``(sigma_{k-1}, sigma_k]``, where the
    condition holds exactly on a final segment. Returns the upper end of the
    final bracket (relative width ``SIGMA_RTOL``), so the guarantee always holds.

    Parameters
    ----------
    eps, delta
        The target (eps, delta), as for :func:`analytic_gaussian_sigma`
        (sensitivity 1).

    Returns
    -------
    float
        The exact delta of CKS20 Theorem 7 (0.0 once below float64's range).

    Raises
    ------
    ValueError
        On bad input, or when ``sigma`` would exceed ``MAX_DISCRETE_SIGMA``.

    Examples
    --------
    >>> s = discrete_gaussian_sigma(1.0, 1e-5)
    >>> discrete_gaussian_delta(s, 1.0) <= 1e-5 < discrete_gaussian_delta(s * (1 - 1e-9), 1.0)
    True
    >>> round(discrete_gaussian_sigma(3.0, 0.01), 4)  # a plain bisection would give 0.866
    0.7065
    """
    eps = renamed("epsilon", "eps", deprecated, eps, where="discrete_gaussian_sigma")
    no_other(deprecated, "discrete_gaussian_sigma")
    eps, delta = check_positive(eps, "eps"), check_probability(delta)

    def breakpoint(k: int) -> float:
        s = math.sqrt((k + 0.5) / eps)
        if s > MAX_DISCRETE_SIGMA:
            raise ValueError(f"eps={eps:g}, delta={delta:g}: the discrete Gaussian "
                             f"needs sigma above {MAX_DISCRETE_SIGMA:g}, too large to sum")
        return s

    def ok_at(k: int) -> bool:
        return discrete_gaussian_delta(breakpoint(k), eps) <= delta

    if ok_at(0):
        lo, hi = 0.0, breakpoint(0)
    else:
        bad, good = 0, 1
        while not ok_at(good):
            bad, good = good, 2 * good
        while good - bad > 1:
            mid = (bad + good) // 2
            bad, good = (bad, mid) if ok_at(mid) else (mid, good)
        lo, hi = breakpoint(bad), breakpoint(good)
    while hi - lo > SIGMA_RTOL * hi:
        mid = (lo + hi) / 2
        if discrete_gaussian_delta(mid, eps) <= delta:
            hi = mid
        else:
            lo = mid
    return hi
