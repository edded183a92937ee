"""Error measures (paper Section 1.1): count error and distribution error.

Distribution errors compare two distributions of counts ``p`` and ``q`` over
``0 .. n-1`` (row vectors); they are exact on Fraction input.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpfix.numbers.deprecation import no_other, renamed
from dpfix.numbers.exact import exact_array, wants_exact
from dpfix.theory.mechanism import weight_matrix

__all__ = [
    "count_error",
    "expected_absolute_deviation",
    "mean_squared_error",
    "wasserstein1",
    "total_variation",
    "kolmogorov_smirnov",
]


def _pair(p: Any, q: Any) -> tuple[np.ndarray, np.ndarray]:
    if wants_exact(p, q):  # exact on exact input; a float mixed in is refused
        pa, qa = exact_array(p, "p"), exact_array(q, "q")
    else:
        pa, qa = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    if pa.ndim != 1 or pa.shape != qa.shape:
        raise ValueError(
            f"distributions must be vectors of one length, got {pa.shape} and {qa.shape}"
        )
    return pa, qa


def count_error(T: Any, z: Any, loss: Any = "abs", **deprecated: Any) -> Any:
    """``<W, T>`` with ``W`` from :func:`dpfix.theory.mechanism.weight_matrix`.

    With the true distribution ``zeta`` as ``z`` it is the expected count error
    of a row; with the public target ``z`` it is the data holder's estimate.

    Parameters
    ----------
    T : array_like
        The ``n x n`` transition matrix.
    z : array_like
        The distribution of the inputs.
    loss : str, callable or array_like
        A name of :data:`dpfix.theory.mechanism.LOSSES` (default ``"abs"``), a
        callable or a matrix.
    **deprecated
        ``weights=`` (now ``loss=``), with a ``DeprecationWarning``.

    Returns
    -------
    Fraction or float
        Exact when ``T`` or ``z`` holds exact numbers.

    Examples
    --------
    >>> float(count_error(np.eye(3), [1/3, 1/3, 1/3]))
    0.0
    """
    loss = renamed("weights", "loss", deprecated, loss, "abs", where="count_error")
    no_other(deprecated, "count_error")
    if wants_exact(T, z):
        Tm, z = exact_array(T, "T", ndim=2), exact_array(z, "z", ndim=1)
    else:
        Tm = np.asarray(T, dtype=float)
    return (weight_matrix(loss, z) * Tm).sum()


def expected_absolute_deviation(T: Any, z: Any) -> Any:
    """``sum_ij z_i |i - j| T_ij``: the expected ``|output - input|``.

    Parameters
    ----------
    T, z
        As for :func:`count_error`.

    Returns
    -------
    Fraction or float
        Exact for exact ``T`` and ``z``.
    """
    return count_error(T, z, "abs")


def mean_squared_error(T: Any, z: Any) -> Any:
    """``sum_ij z_i (i - j)^2 T_ij``: the expected squared error.

    Parameters
    ----------
    T, z
        The mechanism and the input distribution (:func:`count_error`).

    Returns
    -------
    Fraction or float
        ``<W, T>`` for ``W[i, j] = z_i (i - j)^2``.
    """
    return count_error(T, z, "squared")


def wasserstein1(p: Any, q: Any) -> Any:
    """Wasserstein-1 distance on ``0 .. n-1``: ``sum_k |CDF_p(k) - CDF_q(k)|``.

    Parameters
    ----------
    p, q : array_like
        Distributions over ``0 .. n-1`` (exact numbers give an exact result).

    Returns
    -------
    Fraction or float
        Exact on exact input.

    Raises
    ------
    ValueError
        ``p`` and ``q`` of different lengths.

    Examples
    --------
    >>> float(wasserstein1([1, 0, 0], [0, 0, 1]))
    2.0
    """
    pa, qa = _pair(p, q)
    return np.abs(np.cumsum(pa - qa)).sum()


def total_variation(p: Any, q: Any) -> Any:
    """Total variation distance ``1/2 sum_k |p_k - q_k|``.

    Parameters
    ----------
    p, q : array_like
        As for :func:`wasserstein1`.

    Returns
    -------
    Fraction or float
        In ``[0, 1]``.

    Raises
    ------
    ValueError
        As :func:`wasserstein1`.

    Examples
    --------
    >>> float(total_variation([1, 0], [0.5, 0.5]))
    0.5
    """
    pa, qa = _pair(p, q)
    return np.abs(pa - qa).sum() / 2


def kolmogorov_smirnov(p: Any, q: Any) -> Any:
    """Kolmogorov-Smirnov distance ``max_k |CDF_p(k) - CDF_q(k)|``.

    Parameters
    ----------
    p, q
        Two distributions of counts, as for :func:`wasserstein1`.

    Returns
    -------
    Fraction or float
        The largest gap between the two CDFs.

    Raises
    ------
    ValueError
        Vectors of unequal length.

    Examples
    --------
    >>> float(kolmogorov_smirnov([1, 0, 0], [0, 1, 0]))
    1.0
    """
    pa, qa = _pair(p, q)
    return np.max(np.abs(np.cumsum(pa - qa)), initial=0)
