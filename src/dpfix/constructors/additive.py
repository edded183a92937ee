"""The additive one-stage baselines: truncated geometric, staircase, discrete Gaussian.

Paper Section 6 (the unfixed baselines); docs/math_notes.md.

Each adds noise to the count and clamps the result to ``[0, n-1]``; none needs
a target ``z``, so each may spend the whole budget. Their transition matrices
are computed exactly from the noise distributions (closed forms, no sampling),
in log space on the float path so that ``n * eps`` in the thousands is safe.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.numbers.calibration import (
    discrete_gaussian_delta,
    discrete_gaussian_log_weights,
    discrete_gaussian_sigma,
)
from dpfix.numbers.exact import resolve_lam
from dpfix.numbers.numeric import check_n, geometric_amounts, log_geometric_amounts
from dpfix.theory.mechanism import Mechanism

__all__ = [
    "truncated_geometric",
    "staircase",
    "staircase_pmf",
    "discrete_gaussian",
    "float_build_eps",
]


#: A float mechanism is built at ``eps`` minus this many quanta of its logs' resolution.
GUARD_QUANTA = 16

#: The guard may cost at most this share of ``eps`` (else the float path is refused).
GUARD_MAX_SHARE = 1e-3


def float_build_eps(eps: float, top: float, name: str) -> float:
    """The ``eps`` at which a float (log-space) matrix is built so that its measured
    privacy level is at most ``eps`` itself.

    Logs of magnitude below ``top`` are floats spaced at most ``q / 2`` apart
    (``q = 2^(e - 52)``, ``2^e > top``), so a computed log is off by a few
    ``q / 4`` and a neighbour difference by about ``q``: at ``eps = 1e-9`` and
    logs near 20, ``q`` is a relative ``1e-5`` of ``eps``, far above
    :data:`dpfix.theory.mechanism.FLOAT_RTOL`. Building at ``eps - GUARD_QUANTA q``
    (a mechanism private at a smaller eps is eps-DP) keeps the measured level
    at most ``eps``.

    Parameters
    ----------
    eps : float
        The privacy parameter asked for.
    top : float
        A bound on ``|log T[i, j]|`` over the finite entries.
    name : str
        The constructor, for the message.

    Returns
    -------
    float
        ``eps - GUARD_QUANTA q``.

    Raises
    ------
    ValueError
        When the guard would cost more than ``GUARD_MAX_SHARE`` of ``eps``
        (``eps`` below the float path's resolution: use the exact path).

    Examples
    --------
    >>> 0 < 1.0 - float_build_eps(1.0, 40.0, "x") < 1e-12
    True
    """
    q = math.ldexp(1.0, math.frexp(max(top, 1.0))[1] - 52)
    margin = GUARD_QUANTA * q
    if margin > GUARD_MAX_SHARE * eps:
        raise ValueError(f"eps: {eps:g} is below the resolution of {name}'s float path "
                         f"(its logs, up to {top:.3g}, are resolved to {q:.2g}); use the "
                         "exact path (a rational lam)")
    return eps - margin


def _clamped(n: int, center, tail, exact: bool) -> np.ndarray:
    """``T[i, j] = P(clamp(i + K, 0, n-1) = j)`` for symmetric integer noise ``K``.

    ``center(k)`` is ``P(K = k)`` and ``tail(k)`` is ``P(K >= k)`` (both as logs
    on the float path); symmetry gives ``P(K <= -i) = tail(i)``.
    """
    i = np.arange(n)
    if exact:
        T = np.empty((n, n), dtype=object)
        for r in range(n):
            for c in range(n):
                T[r, c] = center(c - r)
            T[r, 0] = tail(r)
            T[r, n - 1] = tail(n - 1 - r)
        if n == 1:
            T[0, 0] = Fraction(1)
        return T
    L = center(i[None, :] - i[:, None])
    L[:, 0] = tail(i)
    L[:, n - 1] = tail(n - 1 - i)
    if n == 1:
        L[0, 0] = 0.0
    return L


def truncated_geometric(n: int, eps: float | None = None, *, lam: Any = None) -> Mechanism:
    """The truncated geometric mechanism (Ghosh et al. 2009): ``clamp(x + Z, 0, n-1)``.

    ``P(Z = k) = (1-rho)/(1+rho) rho^|k|`` with ``rho = 1/lam = e^-eps``, so
    ``T[i, j] = c_j rho^|i-j|`` with ``c_j = (1-rho)/(1+rho)`` inside and
    ``1/(1+rho)`` at ``j = 0, n-1`` (the clamped tails). Exact for a rational
    ``lam``; float (log space) for ``eps``. It is eps-DP and its columns are
    the single-peaked scales times the amounts of Algorithm 2 (paper Section 5.3).
    The float matrix is built at ``params["eps_built"]``, :func:`float_build_eps`
    (``eps`` less a few quanta of float resolution), so that it passes its own
    :meth:`Mechanism.check` also at tiny ``eps``.

    Parameters
    ----------
    n : int
        The size (``n >= 1``).
    eps : float, optional
        The privacy parameter: the float path (log space).
    lam : int, Fraction or str, optional
        ``e^eps`` as a rational ``> 1``: the exact path (Fractions).

    Returns
    -------
    Mechanism
        ``constructor="truncated-geometric"``, no fixed point.

    Raises
    ------
    ValueError
        ``n < 1``, bad ``lam``/``eps``, or an ``eps`` below the float path's
        resolution (:func:`float_build_eps`).

    Examples
    --------
    >>> truncated_geometric(3, lam=2).matrix.tolist()
    [[Fraction(2, 3), Fraction(1, 6), Fraction(1, 6)], \
[Fraction(1, 3), Fraction(1, 3), Fraction(1, 3)], \
[Fraction(1, 6), Fraction(1, 6), Fraction(2, 3)]]
    """
    start = time.perf_counter()
    n = check_n(n)
    lam_x, eps_f = resolve_lam(eps, lam)
    dist = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
    if lam_x is not None:
        rho = 1 / lam_x
        c = geometric_amounts(n, rho)
        T = np.array([[c[j] * rho ** int(dist[i, j]) for j in range(n)] for i in range(n)],
                     dtype=object)
        mech = Mechanism(matrix=T, eps=eps_f, lam=lam_x, constructor="truncated-geometric")
        mech.params = {"n": n}
    else:
        top = float(np.abs(log_geometric_amounts(n, eps_f)).max()) + eps_f * (n - 1) + 1.0
        eps_b = float_build_eps(eps_f, top, "truncated-geometric")
        L = log_geometric_amounts(n, eps_b)[None, :] - eps_b * dist
        mech = Mechanism(log_matrix=L, eps=eps_f, constructor="truncated-geometric",
                         params={"n": n, "eps_built": eps_b})
        mech.check()
    mech.build_seconds = time.perf_counter() - start
    return mech


# -- staircase ------------------------------------------------------------------------------
def _rational_sqrt(x: Fraction) -> Fraction | None:
    p, q = math.isqrt(x.numerator), math.isqrt(x.denominator)
    return Fraction(p, q) if p * p == x.numerator and q * q == x.denominator else None


def staircase_pmf(eps: float | None = None, *, lam: Any = None) -> tuple[Any, Any, Any]:
    """The rounded staircase noise ``K = round(X)`` as ``(p0, C, rho)``: ``P(K = 0) = p0``,
    ``P(K = k) = C rho^|k|`` for ``k != 0``.

    The staircase density (Geng, Kairouz, Oh, Viswanath 2015; sensitivity 1) is
    ``a`` on ``[0, gamma)``, ``a rho`` on ``[gamma, 1)``, repeating on
    ``[k, k+1)`` times ``rho^k``, symmetric, with
    ``a = (1 - rho) / (2 (gamma + rho (1 - gamma)))`` and
    ``gamma = 1 / (1 + e^(eps/2))`` (paper Section 6). As ``gamma < 1/2``,
    ``[k - 1/2, k + 1/2)`` meets density ``a rho^k`` for length ``1/2 + gamma`` and
    ``a rho^(k+1)`` for ``1/2 - gamma`` (``k >= 1``), and ``[-1/2, 1/2)`` is twice
    ``[0, 1/2)``. Exact when ``lam`` is the square of a rational (then ``gamma``
    is rational); floats otherwise.

    Parameters
    ----------
    eps, lam
        As for :func:`truncated_geometric`.

    Returns
    -------
    (Fraction or float, Fraction or float, Fraction or float)
        ``(p0, C, rho)``.

    Raises
    ------
    ValueError
        An exact ``lam`` that is not the square of a rational, or ``eps > 1400``.

    Examples
    --------
    >>> staircase_pmf(lam=4)
    (Fraction(9, 16), Fraction(21, 32), Fraction(1, 4))
    """
    lam_x, eps_f = resolve_lam(eps, lam)
    if lam_x is not None:
        root = _rational_sqrt(lam_x)
        if root is None:
            raise ValueError(f"lam: the exact staircase needs lam a square of a rational "
                             f"(gamma = 1/(1+sqrt(lam))), got {lam_x}; pass eps instead")
        rho, gamma, half_minus = 1 / lam_x, 1 / (1 + root), (root - 1) / (2 * (1 + root))
        one_minus_rho = 1 - rho
    else:
        if eps_f > 1400:  # C ~ e^(eps/2) / 4 is past float64's range from eps ~ 1420
            raise ValueError(f"eps: the float staircase needs eps <= 1400, got {eps_f:g}")
        rho, one_minus_rho = math.exp(-eps_f), -math.expm1(-eps_f)  # no cancellation
        e_half = math.exp(eps_f / 2)
        gamma = 1 / (1 + e_half)
        half_minus = math.expm1(eps_f / 2) / (2 * (1 + e_half))
    a = one_minus_rho / (2 * (gamma + rho * (1 - gamma)))
    p0 = 2 * a * (gamma + rho * half_minus)
    C = a * ((1 - half_minus) + rho * half_minus)  # 1/2 + gamma = 1 - (1/2 - gamma)
    return p0, C, rho


def staircase(n: int, eps: float | None = None, *, lam: Any = None) -> Mechanism:
    """The staircase mechanism, rounded to the nearest integer and clamped to ``[0, n-1]``.

    The exact transition matrix from :func:`staircase_pmf`: ``T[i, j] = P(K = j-i)``
    inside, ``P(K >= k) = C rho^k / (1 - rho)`` (``k >= 1``) for the clamped
    tails, ``P(K <= 0) = p0 + P(K >= 1)`` at the corners. Rounding and clamping
    are post-processing, so it is eps-DP (and :meth:`Mechanism.check` verifies
    it); ``params["privacy_level"]`` records the level the matrix really has.

    Parameters
    ----------
    n : int
        The size (``n >= 1``).
    eps, lam
        As for :func:`truncated_geometric`.

    Returns
    -------
    Mechanism
        ``constructor="staircase"``, checked eps-DP.

    Raises
    ------
    ValueError
        As :func:`staircase_pmf`, or ``n < 1``.

    Examples
    --------
    >>> M = staircase(3, lam=4)
    >>> M.matrix[0].tolist(), M.privacy_ratio() <= 4
    ([Fraction(25, 32), Fraction(21, 128), Fraction(7, 128)], True)
    """
    start = time.perf_counter()
    n = check_n(n)
    lam_x, eps_f = resolve_lam(eps, lam)
    p0, C, rho = staircase_pmf(eps, lam=lam)
    if lam_x is not None:
        def center(k: int) -> Fraction:
            return p0 if k == 0 else C * rho ** abs(k)

        def tail(k: int) -> Fraction:
            return p0 + C * rho / (1 - rho) if k == 0 else C * rho ** k / (1 - rho)
        mech = Mechanism(matrix=_clamped(n, center, tail, True), eps=eps_f, lam=lam_x,
                         constructor="staircase")
    else:
        # logs up to |log C| + eps (n - 1) + |log(1 - rho)|: built at float_build_eps
        top = abs(math.log(C)) + eps_f * (n - 1) + abs(math.log(-math.expm1(-eps_f))) + 1.0
        eps_b = float_build_eps(eps_f, top, "staircase")
        p0, C, rho = staircase_pmf(eps_b)
        log_c, log_1mr = math.log(C), math.log(-math.expm1(-eps_b))
        log_corner = math.log(p0 + C * rho / -math.expm1(-eps_b))

        def center_f(k: np.ndarray) -> np.ndarray:
            return np.where(k == 0, math.log(p0), log_c - eps_b * np.abs(k))

        def tail_f(k: np.ndarray) -> np.ndarray:
            return np.where(k == 0, log_corner, log_c - eps_b * k - log_1mr)
        mech = Mechanism(log_matrix=_clamped(n, center_f, tail_f, False), eps=eps_f,
                         constructor="staircase")
    mech.check()
    mech.params = {"n": n, "gamma": "1/(1+e^(eps/2))", "p0": p0, "C": C,
                   "privacy_level": mech.privacy_level()}
    if not mech.exact:
        mech.params["eps_built"] = eps_b
    mech.build_seconds = time.perf_counter() - start
    return mech


# -- discrete Gaussian ----------------------------------------------------------------------
def discrete_gaussian(n: int, eps: float, delta: float) -> Mechanism:
    """The discrete Gaussian mechanism (Canonne, Kamath, Steinke 2020), clamped to ``[0, n-1]``.

    ``sigma`` is :func:`dpfix.numbers.calibration.discrete_gaussian_sigma` ``(eps, delta)``
    (the calibration shared with the cyclic Gaussian privatizer), the smallest with
    the exact (eps, delta) guarantee of CKS20 Theorem 7; the paper uses
    ``delta = 1/(N+1)``. ``T[i, j] = P(Y = j-i)`` inside and the tails
    ``P(Y >= k)`` at the clamped ends, from the pmf ``e^(-y^2/(2 sigma^2)) / Z``
    in log space. ``params`` holds ``sigma`` and the delta it achieves.

    Parameters
    ----------
    n : int
        The size (``n >= 1``).
    eps : float
        ``> 0``.
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    Mechanism
        ``constructor="discrete-gaussian"``, ``delta`` set; ``params["sigma"]`` and
        ``params["delta_achieved"]``.

    Raises
    ------
    ValueError
        Bad ``n``, ``eps`` or ``delta``, or a ``sigma`` too large to sum.

    Examples
    --------
    >>> M = discrete_gaussian(4, 1.0, 1e-3)
    >>> M.delta, bool(M.row_sum_error() < 1e-12)
    (0.001, True)
    """
    start = time.perf_counter()
    n = check_n(n)
    eps = float(eps)
    sigma = discrete_gaussian_sigma(eps, delta)
    v, log_z = discrete_gaussian_log_weights(sigma, n + int(math.ceil(12 * sigma)))
    tails = np.logaddexp.accumulate(v[::-1])[::-1] - log_z  # log P(Y >= y), y = 0..K
    L = _clamped(n, lambda k: v[np.abs(k)] - log_z, lambda k: tails[k], False)
    mech = Mechanism(log_matrix=L, eps=eps, delta=float(delta), constructor="discrete-gaussian",
                     params={"n": n, "sigma": sigma,
                             "delta_achieved": discrete_gaussian_delta(sigma, eps)})
    mech.check()
    mech.build_seconds = time.perf_counter() - start
    return mech
