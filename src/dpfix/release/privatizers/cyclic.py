"""The cyclic mechanisms for distributions of counts (paper Definition 2, Appendix A).

``V_i = eta_i + X_i - X_{(i+1) mod n}`` with i.i.d. noise ``X``. A neighbouring
table moves one unit from count ``i`` to ``i+1`` (``eta' = eta - e_i + e_{i+1}``,
``0 <= i <= n-2``) and ``V(eta', X - e_{i+1}) = V(eta, X)``: the move is
absorbed by a unit shift of the single coordinate ``X_{i+1}`` (never ``X_0``,
which only closes the cycle). So the privacy of ``X`` against a unit shift of
one coordinate is the privacy of ``V`` (Theorem 1; checked exactly in
``proofs_checks/check_theorem1_cyclic.py``): eps-DP for Laplace noise of scale
``1/eps`` (continuous, or discrete with ``P(k) ~ e^(-eps |k|)``), ``rho``-zCDP
for Gaussian noise with ``rho = 1/(2 sigma^2)``. ``sum V = N`` exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dpfix.numbers.calibration import analytic_gaussian_sigma, discrete_gaussian_sigma
from dpfix.numbers.numeric import check_positive, check_probability
from dpfix.release.privatizers.common import (
    PrivatizedDistribution,
    budget_and_seed,
    check_histogram,
    resolve_rng,
)
from dpfix.release.privatizers.noise import add_gaussian, add_laplace
from dpfix.release.privatizers.postprocess import DEFAULT_POSTPROCESS, finish

__all__ = ["cyclic_laplace", "cyclic_gaussian", "cyclic_difference"]


def cyclic_difference(X: Any) -> np.ndarray:
    """``X_i - X_{(i+1) mod n}``: the noise the cyclic mechanisms add to ``eta``.

    Parameters
    ----------
    X : array_like
        The latent noise.

    Returns
    -------
    numpy.ndarray
        ``X - roll(X, -1)``.

    Examples
    --------
    >>> cyclic_difference(np.array([1, 4, 2])).tolist()
    [-3, 2, 1]
    """
    X = np.asarray(X)
    return X - np.roll(X, -1)


def cyclic_laplace(eta: Any, eps: float | None = None, *, seed: Any = None, secure: bool = True,
                   postprocess: str | Callable[[Any], np.ndarray] = DEFAULT_POSTPROCESS,
                   **deprecated: Any) -> PrivatizedDistribution:
    """The cyclic Laplace mechanism (paper Definition 2; eps-DP by Theorem 1).

    ``V = eta + X - roll(X, -1)`` with ``X_i ~ Lap(1/eps)`` i.i.d. (on
    ``zeta`` the scale is ``1/(N eps)``); ``z`` is the post-processed
    ``V / N``. Secure: ``X`` is OpenDP's exact discrete Laplace with scale
    ``1/eps`` (``V`` is an integer vector); ``secure=False`` with ``seed``
    (a Generator or int seed) draws numpy's continuous Laplace, as the paper.

    Parameters
    ----------
    eta : histogram of counts (``eta_i`` rows have count ``i``); ``N = sum eta``
        is public.
    eps : the budget ``eps_1``.
    seed : int, SeedSequence, numpy Generator or seeded RandomSource for ``secure=False``;
        must be None when secure (``rng=``: its deprecated name).
    secure : OpenDP's secure sampler (default) or seeded numpy noise.
    postprocess : a name in ``POSTPROCESSORS`` or a callable.

    Returns
    -------
    PrivatizedDistribution
        ``raw`` is ``V`` (it sums to ``N`` exactly); ``notion`` is ``"pure-DP"``.

    Examples
    --------
    >>> out = cyclic_laplace([5, 3, 2], 1.0, secure=False, seed=7)
    >>> out.privatizer, round(float(out.raw.sum()), 9), out.budget
    ('cyclic-laplace', 10.0, 'eps=1 (pure-DP)')
    >>> bool(out.z.sum().round(12) == 1) and bool((out.z >= 0).all())
    True
    """
    eps, seed = budget_and_seed(eps, seed, deprecated, "cyclic_laplace")
    eta, eps = check_histogram(eta), check_positive(eps, "eps")
    gen = resolve_rng(seed, secure)
    zeros = np.zeros(len(eta), dtype=np.int64)
    X, loss = add_laplace(zeros, 1.0 / eps, rng=gen, sensitivity=1, budget=eps)
    V = eta + cyclic_difference(X)
    noise = {"distribution": "discrete Laplace" if secure else "Laplace",
             "scale": 1.0 / eps, "opendp_loss": loss}
    return finish(V, eta, "cyclic-laplace", postprocess, secure=secure, noise=noise,
                  notion="pure-DP", eps=eps)


def cyclic_gaussian(eta: Any, eps: float | None = None, delta: float | None = None, *,
                    rho: float | None = None, seed: Any = None, secure: bool = True,
                    postprocess: str | Callable[[Any], np.ndarray] = DEFAULT_POSTPROCESS,
                    **deprecated: Any) -> PrivatizedDistribution:
    """The cyclic Gaussian mechanism (paper Appendix A).

    ``V = eta + X - roll(X, -1)`` with ``X_i ~ N(0, sigma^2)``; a neighbouring
    move shifts one coordinate of ``X`` by 1 (L2 sensitivity 1). Give either
    ``rho`` (``rho``-zCDP, ``sigma = 1/sqrt(2 rho)``) or ``eps`` and
    ``delta`` ((eps, delta)-DP, ``sigma`` by exact calibration: the analytic
    Gaussian of Balle and Wang 2018 for the continuous noise of
    ``secure=False``, Canonne-Kamath-Steinke's Theorem 7 for OpenDP's discrete
    Gaussian when secure).

    Parameters
    ----------
    eta : array_like of int
        The histogram of counts.
    eps, delta : float, optional
        An (eps, delta) budget: give both, or ``rho`` instead.
    rho : float, optional
        A rho-zCDP budget.
    seed, secure, postprocess
        As :func:`cyclic_laplace`.

    Returns
    -------
    PrivatizedDistribution
        ``notion`` is ``"zCDP"`` or ``"approx-DP"``.

    Raises
    ------
    ValueError
        Both or neither budget, or bad input.
    ImportError
        The secure path without OpenDP.

    Examples
    --------
    >>> out = cyclic_gaussian([5, 3, 2], rho=0.5, secure=False, seed=1)
    >>> out.budget, out.noise["sigma"], round(float(out.raw.sum()), 9)
    ('rho=0.5 (zCDP)', 1.0, 10.0)
    >>> cyclic_gaussian([5, 3, 2], 1.0, 1e-6, secure=False, seed=1).notion
    'approx-DP'
    """
    eps, seed = budget_and_seed(eps, seed, deprecated, "cyclic_gaussian")
    eta = check_histogram(eta)
    gen = resolve_rng(seed, secure)
    if rho is not None:
        if eps is not None or delta is not None:
            raise ValueError("cyclic_gaussian: give either rho or (eps, delta), not both")
        rho = check_positive(rho, "rho")
        sigma, notion = 1.0 / np.sqrt(2.0 * rho), "zCDP"
    elif eps is None or delta is None:
        raise ValueError("cyclic_gaussian: give rho, or both eps and delta")
    else:
        eps, delta = check_positive(eps, "eps"), check_probability(delta)
        calibrate = discrete_gaussian_sigma if secure else analytic_gaussian_sigma
        sigma, notion = calibrate(eps, delta), "approx-DP"
    zeros = np.zeros(len(eta), dtype=np.int64)
    X, loss = add_gaussian(zeros, float(sigma), rng=gen, sensitivity=1, rho=rho)
    V = eta + cyclic_difference(X)
    noise = {"distribution": "discrete Gaussian" if secure else "Gaussian",
             "sigma": float(sigma), "opendp_zcdp_loss": loss}
    return finish(V, eta, "cyclic-gaussian", postprocess, secure=secure, noise=noise,
                  notion=notion, eps=eps, delta=delta, rho=rho)
