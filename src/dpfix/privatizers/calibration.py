"""Gaussian noise calibration for (eps, delta)-DP (paper Appendix A, cyclic Gaussian).

- Continuous Gaussian: the analytic Gaussian mechanism of Balle and Wang (2018,
  Theorem 8): ``N(0, sigma^2)`` noise on a query of L2 sensitivity ``D`` is
  (eps, delta)-DP iff
  ``Phi(D/(2 sigma) - eps sigma/D) - e^eps Phi(-D/(2 sigma) - eps sigma/D) <= delta``.
- Discrete Gaussian: Canonne, Kamath and Steinke (2020, Theorem 7): with
  ``Y ~ N_Z(0, sigma^2)`` and integer sensitivity ``D``, the exact delta is
  ``P[Y > eps sigma^2/D - D/2] - e^eps P[Y > eps sigma^2/D + D/2]``.

Both deltas decrease in ``sigma``; ``*_sigma`` finds the smallest ``sigma``
(relative precision ``SIGMA_RTOL``) by bisection on ``log sigma`` and returns
the upper end of the final bracket, whose delta is checked to be at most the
target, so the guarantee never rests on the bisection's tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.special import log_ndtr

from dpfix.privatizers._common import check_epsilon, check_probability

__all__ = ["analytic_gaussian_delta", "analytic_gaussian_sigma",
           "discrete_gaussian_delta", "discrete_gaussian_sigma", "SIGMA_RTOL"]

#: Relative width of the final bisection bracket on sigma.
SIGMA_RTOL = 1e-10
#: Largest sigma whose discrete-Gaussian delta is summed directly (about 8e6 terms).
MAX_DISCRETE_SIGMA = 2e5


def _difference(log_a: float, log_b: float) -> float:
    """``exp(log_a) - exp(log_b)`` without cancellation when both are tiny."""
    if log_a == -math.inf:
        return -math.exp(log_b) if log_b > -math.inf else 0.0
    return -math.exp(log_a) * math.expm1(log_b - log_a)


def analytic_gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """The exact delta of ``N(0, sigma^2)`` noise at ``epsilon`` (Balle and Wang 2018).

    Examples
    --------
    >>> round(analytic_gaussian_delta(1.0, 1.0), 6)
    0.126937
    """
    sigma, epsilon = check_epsilon(sigma, "sigma"), check_epsilon(epsilon)
    d = check_epsilon(sensitivity, "sensitivity")
    a, b = d / (2 * sigma) - epsilon * sigma / d, -d / (2 * sigma) - epsilon * sigma / d
    return _difference(float(log_ndtr(a)), epsilon + float(log_ndtr(b)))


def discrete_gaussian_delta(sigma: float, epsilon: float, sensitivity: int = 1) -> float:
    """The exact delta of discrete Gaussian noise ``N_Z(0, sigma^2)`` (CKS20 Theorem 7).

    The pmf is summed over ``|y| <= 39 sigma + 2``, beyond which
    ``exp(-y^2/(2 sigma^2))`` is below the smallest float64.

    Examples
    --------
    >>> round(discrete_gaussian_delta(1.0, 1.0), 6)
    0.141351
    """
    sigma, epsilon = check_epsilon(sigma, "sigma"), check_epsilon(epsilon)
    if isinstance(sensitivity, bool) or int(sensitivity) != sensitivity or sensitivity < 1:
        raise ValueError(f"sensitivity: must be a positive integer, got {sensitivity!r}")
    if sigma > MAX_DISCRETE_SIGMA:
        raise ValueError(f"sigma: {sigma:g} exceeds {MAX_DISCRETE_SIGMA:g}, too large to sum "
                         "the discrete Gaussian; use secure=False or the zCDP budget")
    d = int(sensitivity)
    top = int(math.ceil(39 * sigma)) + 2
    y = np.arange(-top, top + 1)
    w = np.exp(-(y.astype(float) ** 2) / (2 * sigma**2))
    tail = np.cumsum(w[::-1])[::-1]  # tail[k] = sum_{y >= y[k]} w, summed small to large
    total = tail[0]

    def log_upper(t: float) -> float:  # log P[Y > t]
        k = math.floor(t) + 1 + top  # index of the smallest integer above t
        if k >= len(y):
            return -math.inf
        return math.log(tail[max(k, 0)] / total)

    mid = epsilon * sigma**2 / d
    return _difference(log_upper(mid - d / 2), epsilon + log_upper(mid + d / 2))


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


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest ``sigma`` of an (eps, delta)-DP Gaussian mechanism (Balle and Wang 2018).

    Examples
    --------
    >>> s = analytic_gaussian_sigma(1.0, 1e-5)
    >>> round(s, 4), analytic_gaussian_delta(s, 1.0) <= 1e-5
    (3.7306, True)
    """
    epsilon, delta = check_epsilon(epsilon), check_probability(delta)
    d = check_epsilon(sensitivity, "sensitivity")
    start = d * math.sqrt(2 * math.log(1.25 / delta)) / epsilon  # the classical bound
    return _bisect_sigma(lambda s: analytic_gaussian_delta(s, epsilon, d), delta, start)


def discrete_gaussian_sigma(epsilon: float, delta: float, sensitivity: int = 1) -> float:
    """The smallest ``sigma`` of an (eps, delta)-DP discrete Gaussian (CKS20 Theorem 7).

    Examples
    --------
    >>> s = discrete_gaussian_sigma(1.0, 1e-5)
    >>> discrete_gaussian_delta(s, 1.0) <= 1e-5 < discrete_gaussian_delta(0.999 * s, 1.0)
    True
    """
    epsilon, delta = check_epsilon(epsilon), check_probability(delta)
    start = analytic_gaussian_sigma(epsilon, delta, float(sensitivity))
    return _bisect_sigma(lambda s: discrete_gaussian_delta(s, epsilon, sensitivity), delta,
                         start, MAX_DISCRETE_SIGMA)
