"""Noise samplers: OpenDP's secure samplers, or numpy for seeded runs.

The secure path calls OpenDP (``opendp.measurements.make_laplace`` and
``make_gaussian`` on a ``vector_domain``) with the values to release; on an
integer domain these add the exact discrete Laplace and discrete Gaussian
(Canonne, Kamath, Steinke 2020), on a float domain a discretised Laplace, both
free of floating-point attacks. The latent noise of the cyclic mechanisms is
drawn by releasing a vector of integer zeros. The measurement's own privacy
map is asked for the loss of the sensitivity the caller states, and the result
is checked against the budget (relative tolerance ``MAP_RTOL``, which covers
OpenDP's rounding up).

The seeded path (``secure=False``) uses numpy's continuous Laplace and
Gaussian, as the paper's experiments do; it is for reproducible experiments and
tests, not for releases.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from dpfix.numbers.numeric import require

__all__ = ["add_laplace", "add_gaussian", "MAP_RTOL"]

#: OpenDP rounds its privacy maps up; a loss within this relative margin of the
#: budget is accepted.
MAP_RTOL = 1e-9


@lru_cache(maxsize=1)
def _dp() -> Any:
    dp = require("opendp.prelude")

    dp.enable_features("contrib")
    return dp


def _opendp_release(kind: str, values: np.ndarray, scale: float) -> tuple[np.ndarray, Any]:
    dp = _dp()
    integer = values.dtype.kind in "iu"
    if integer:
        atom, metric_t, data = dp.atom_domain(T="i64"), "i64", [int(x) for x in values]
    else:
        atom, metric_t, data = dp.atom_domain(T=float, nan=False), float, values.tolist()
    domain = dp.vector_domain(atom)
    if kind == "laplace":
        meas = dp.m.make_laplace(domain, dp.l1_distance(T=metric_t), scale=float(scale))
    else:
        meas = dp.m.make_gaussian(domain, dp.l2_distance(T=metric_t), scale=float(scale))
    return np.asarray(meas(data), dtype=np.int64 if integer else float), meas


def add_laplace(values: Any, scale: float, *, rng: np.random.Generator | None,
                sensitivity: float | None = None,
                budget: float | None = None) -> tuple[np.ndarray, float | None]:
    """``values`` plus i.i.d. Laplace noise of ``scale``, and the loss OpenDP reports.

    Secure (``rng`` is None): integer ``values`` get the discrete Laplace
    ``P(k) ~ exp(-|k|/scale)``, float ones OpenDP's float Laplace. When
    ``sensitivity`` (L1, of ``values``) is given, the measurement's
    ``map(sensitivity)`` is returned and, with ``budget``, required to be at
    most ``budget``. Seeded: numpy's continuous Laplace (loss None).

    Parameters
    ----------
    values : array_like
        What to release.
    scale : float
        The Laplace scale.
    rng : numpy.random.Generator or None
        None: OpenDP's secure sampler.
    sensitivity : float, optional
        The L1 sensitivity, for OpenDP's privacy map.
    budget : float, optional
        The loss allowed.

    Returns
    -------
    (numpy.ndarray, float or None)
        The noisy values and OpenDP's reported loss (None when seeded).

    Raises
    ------
    RuntimeError
        OpenDP reports a loss above ``budget``.
    ImportError
        The secure path without OpenDP.

    Examples
    --------
    >>> x, loss = add_laplace(np.zeros(3, dtype=int), 2.0, rng=None, sensitivity=2, budget=1.0)
    >>> x.dtype.kind, float(loss)
    ('i', 1.0)
    >>> add_laplace(np.zeros(2), 1.0, rng=np.random.default_rng(0))[0].shape
    (2,)
    """
    values = np.asarray(values)
    if rng is not None:
        return values + rng.laplace(0.0, scale, values.shape), None
    out, meas = _opendp_release("laplace", values, scale)
    return out, _checked_loss(meas, sensitivity, budget, values.dtype.kind in "iu")


def add_gaussian(values: Any, sigma: float, *, rng: np.random.Generator | None,
                 sensitivity: int | None = None,
                 rho: float | None = None) -> tuple[np.ndarray, float | None]:
    """Integer ``values`` plus i.i.d. Gaussian noise: OpenDP's discrete Gaussian when secure.

    When ``sensitivity`` (L2) is given on the secure path, the measurement's
    zCDP ``map(sensitivity)`` (``sensitivity^2 / (2 sigma^2)``) is returned
    and, with ``rho``, required to be at most ``rho``.

    Parameters
    ----------
    values : array_like of int
        What to release.
    sigma : float
        The noise scale.
    rng : numpy.random.Generator or None
        None: OpenDP's secure sampler.
    sensitivity : int, optional
        The L2 sensitivity.
    rho : float, optional
        The zCDP loss allowed.

    Returns
    -------
    (numpy.ndarray, float or None)
        The noisy values and OpenDP's zCDP loss (None when seeded).

    Raises
    ------
    ValueError
        Float values on the secure path.
    RuntimeError
        OpenDP reports a loss above ``rho``.

    Examples
    --------
    >>> x, loss = add_gaussian(np.zeros(4, dtype=int), 2.0, rng=None, sensitivity=1)
    >>> x.dtype.kind, round(float(loss), 6)
    ('i', 0.125)
    """
    values = np.asarray(values)
    if rng is not None:
        return values + rng.normal(0.0, sigma, values.shape), None
    if values.dtype.kind not in "iu":
        raise ValueError("add_gaussian: the secure path takes integer values")
    out, meas = _opendp_release("gaussian", values, sigma)
    return out, _checked_loss(meas, sensitivity, rho, True)


def _checked_loss(meas: Any, sensitivity: float | None, budget: float | None,
                  integer: bool) -> float | None:
    if sensitivity is None:
        return None
    loss = float(meas.map(int(sensitivity) if integer else float(sensitivity)))
    if budget is not None and loss > budget * (1 + MAP_RTOL):
        raise RuntimeError(f"OpenDP reports privacy loss {loss} above the budget {budget}")
    return loss
