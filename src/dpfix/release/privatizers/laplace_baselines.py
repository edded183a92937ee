"""The Laplace histogram baselines (paper Section 3): per-cell Laplace and Privelet.

Neighbouring (paper Section 3): one row's count moves by one, so the histogram
changes by ``-1`` at ``i`` and ``+1`` at ``i+1`` (or the reverse) for some
``0 <= i <= n-2``, and ``N`` stays the same (it is public).

- Laplace: the move has L1 sensitivity 2, so ``eta + Lap(2/eps)`` per cell.
- Privelet (Xiao, Wang, Gehrke 2010), Haar wavelet on ``eta`` padded with zeros
  to ``m = 2^L >= n``. Its coefficients: the base ``c_0 = mean`` and, per
  internal node ``v`` of the binary tree with ``s`` leaves,
  ``c_v = (mean of left half - mean of right half) / 2``, with weight
  ``W(c_0) = m``, ``W(c_v) = s``. Noise ``Lap(lam / W(c))`` on every
  coefficient is eps-DP when ``lam = GS / eps`` with the generalised
  sensitivity ``GS = max sum_c W(c) |dc|`` over neighbours. Derivation for a
  move ``-e_i + e_{i+1}``: ``c_0`` does not change (``N`` is public, so ``c_0``
  is released exactly); a node holding both or neither of ``i, i+1`` in one
  half does not change; the lowest common ancestor (``s = 2^t`` leaves, ``i``
  left, ``i+1`` right) changes by ``2/s`` (weighted 2); each of the ``t - 1``
  nodes below it on either side holds one of them and changes by ``1/s``
  (weighted 1). So the weighted change is ``2 + 2 (t - 1) = 2t <= 2L``, with
  equality for the move across the middle (``i = m/2 - 1``, present since
  ``n > m/2``): ``GS = 2 log2 m`` (Privelet's own bound for its tuple-change
  neighbouring, one unit anywhere, is ``2 (1 + log2 m)``).

The weighted coefficients ``W(c) c_v = s c_v`` are the integers
``sum of left half - sum of right half``, computed exactly; noise
``Lap(lam / W(c))`` on ``c_v`` is ``Lap(lam)`` on them, so the secure path
releases them through OpenDP's discrete Laplace with scale ``lam`` (its
privacy map at L1 sensitivity ``GS`` is checked against ``eps``). The inverse
transform is PyWavelets' orthonormal Haar (``pywt.waverec``, mode
``periodization``), whose detail coefficient at a node of ``s`` leaves is
``d = sqrt(s) c_v = W(c) c_v / sqrt(s)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dpfix.numbers.numeric import check_positive
from dpfix.release.privatizers.common import (
    PrivatizedDistribution,
    budget_and_seed,
    check_histogram,
    resolve_rng,
)
from dpfix.release.privatizers.noise import add_laplace
from dpfix.release.privatizers.postprocess import NONCYCLIC_POSTPROCESS, finish

__all__ = ["laplace", "privelet", "haar_weighted_coefficients", "haar_inverse",
           "privelet_sensitivity"]


def laplace(eta: Any, eps: float | None = None, *, seed: Any = None, secure: bool = True,
            postprocess: str | Callable[[Any], np.ndarray] = NONCYCLIC_POSTPROCESS,
            **deprecated: Any) -> PrivatizedDistribution:
    """The classic Laplace mechanism on the histogram: ``eta + Lap(2/eps)`` per cell.

    L1 sensitivity 2 under a one-unit move. Secure: OpenDP's discrete Laplace.

    Parameters
    ----------
    eta : array_like of int
        The histogram of counts (``N = sum eta`` is public).
    eps : float
        The budget ``eps_1``.
    seed : int, SeedSequence, numpy Generator or seeded RandomSource, optional
        The seeded path (``secure=False``) only (``rng=``: its deprecated name).
    secure : bool
        OpenDP's secure samplers (default) or seeded numpy noise.
    postprocess : str or callable
        A name in ``POSTPROCESSORS`` or a function.

    Returns
    -------
    PrivatizedDistribution
        ``noise`` holds the scale ``2/eps`` and OpenDP's loss.

    Raises
    ------
    ValueError
        A bad histogram, budget, seed or post-processing.
    ImportError
        The secure path without OpenDP (``pip install 'dpfix[production]'``).

    Examples
    --------
    >>> out = laplace([5, 3, 2], 1.0, secure=False, seed=0)
    >>> out.privatizer, out.noise["scale"], out.n
    ('laplace', 2.0, 3)
    """
    eps, seed = budget_and_seed(eps, seed, deprecated, "laplace")
    eta, eps = check_histogram(eta), check_positive(eps, "eps")
    gen = resolve_rng(seed, secure)
    raw, loss = add_laplace(eta, 2.0 / eps, rng=gen, sensitivity=2, budget=eps)
    noise = {"distribution": "discrete Laplace" if secure else "Laplace",
             "scale": 2.0 / eps, "sensitivity": 2, "opendp_loss": loss}
    return finish(raw, eta, "laplace", postprocess, secure=secure, noise=noise,
                  notion="pure-DP", eps=eps)


def _levels(n: int) -> int:
    """``L`` with ``2^L`` the smallest power of two ``>= n``."""
    return max(0, int(n - 1).bit_length())


def haar_weighted_coefficients(x: Any) -> tuple[Any, list[np.ndarray]]:
    """Privelet's base coefficient and weighted detail coefficients ``W(c) c`` by level.

    ``W(c) c = s (mean left - mean right) / 2 = (sum left - sum right)`` at a
    node of ``s`` leaves: integers for integer ``x``, computed exactly from
    range sums (numpy integer arithmetic). ``x`` has length ``2^L``; the list
    runs from the root (``s = 2^L`` leaves) down to the pairs (``s = 2``). The
    base coefficient is ``mean(x)``.

    Parameters
    ----------
    x : array_like
        Length ``2^L``.

    Returns
    -------
    (number, list of numpy.ndarray)
        The base coefficient and the details, root level first.

    Raises
    ------
    ValueError
        A length that is not a power of two.

    Examples
    --------
    >>> base, details = haar_weighted_coefficients([3, 1, 0, 2])
    >>> float(base), [d.tolist() for d in details]
    (1.5, [[2], [2, -2]])
    """
    x = np.asarray(x)
    L = _levels(len(x))
    if len(x) != 2**L:
        raise ValueError(f"x: length must be a power of two, got {len(x)}")
    details = []
    for k in range(L):  # node size s = 2^(L - k); halves of size s / 2
        halves = x.reshape(-1, 2 ** (L - k - 1)).sum(axis=1)
        details.append(halves[0::2] - halves[1::2])
    return x.sum() / len(x), details


def haar_inverse(base: float, weighted: list[np.ndarray]) -> np.ndarray:
    """The cells from the base coefficient and the weighted details of
    :func:`haar_weighted_coefficients` (PyWavelets' orthonormal Haar inverse).

    Parameters
    ----------
    base : float
        The base coefficient (the mean).
    weighted : list of numpy.ndarray
        The weighted details, root first.

    Returns
    -------
    numpy.ndarray
        The ``2^L`` cells.

    Raises
    ------
    ImportError
        Without PyWavelets (the ``production`` extra).

    Examples
    --------
    >>> base, details = haar_weighted_coefficients([3, 1, 0, 2])
    >>> haar_inverse(float(base), [d.astype(float) for d in details]).round(12).tolist()
    [3.0, 1.0, 0.0, 2.0]
    """
    from dpfix.numbers.numeric import require

    pywt = require("pywt")
    L = len(weighted)
    if L == 0:
        return np.array([base])
    coeffs = [np.array([base * 2 ** (L / 2)])]
    coeffs += [w / np.sqrt(2.0 ** (L - k)) for k, w in enumerate(weighted)]
    return pywt.waverec(coeffs, "haar", mode="periodization")


def privelet_sensitivity(n: int) -> int:
    """Privelet's generalised sensitivity under a one-unit move: ``2 log2 m``, ``m = 2^L >= n``.

    Parameters
    ----------
    n : int
        The number of cells.

    Returns
    -------
    int
        The generalised sensitivity.

    Examples
    --------
    >>> privelet_sensitivity(51), privelet_sensitivity(64), privelet_sensitivity(1)
    (12, 12, 0)
    """
    return 2 * _levels(n)


def privelet(eta: Any, eps: float | None = None, *, seed: Any = None, secure: bool = True,
             postprocess: str | Callable[[Any], np.ndarray] = NONCYCLIC_POSTPROCESS,
             **deprecated: Any) -> PrivatizedDistribution:
    """Privelet with the Haar wavelet (Xiao, Wang, Gehrke 2010), eps-DP.

    Pads ``eta`` with zeros to ``m = 2^L``, adds ``Lap(lam / W(c))`` to every
    detail coefficient with ``lam = 2 L / eps`` (the generalised
    sensitivity ``2 L`` of a one-unit move, derived in the module docstring),
    keeps the base coefficient ``N / m`` exact (``N`` is public), inverts the
    transform and keeps the first ``n`` cells as ``raw``.

    Parameters
    ----------
    eta, eps, seed, secure, postprocess
        As for :func:`laplace`.

    Returns
    -------
    PrivatizedDistribution
        ``noise`` holds ``lam``, the generalised sensitivity and the padded length.

    Raises
    ------
    ValueError, ImportError
        As :func:`laplace`; also without PyWavelets (``pywt``).

    Examples
    --------
    >>> out = privelet([5, 3, 2], 1.0, secure=False, seed=0)
    >>> out.privatizer, out.noise["generalised_sensitivity"], out.noise["lam"]
    ('privelet', 4, 4.0)
    """
    eps, seed = budget_and_seed(eps, seed, deprecated, "privelet")
    eta, eps = check_histogram(eta), check_positive(eps, "eps")
    gen = resolve_rng(seed, secure)
    n, L = len(eta), _levels(len(eta))
    gs = privelet_sensitivity(n)
    lam = gs / eps
    padded = np.zeros(2**L, dtype=np.int64)
    padded[:n] = eta
    base, weighted = haar_weighted_coefficients(padded)
    loss = None
    if L > 0:
        flat, loss = add_laplace(np.concatenate(weighted), lam, rng=gen, sensitivity=gs,
                                 budget=eps)
        weighted = np.split(flat, np.cumsum([len(w) for w in weighted])[:-1])
    raw = haar_inverse(float(base), [np.asarray(w, dtype=float) for w in weighted])[:n]
    noise = {"distribution": "discrete Laplace" if secure else "Laplace",
             "lam": lam, "generalised_sensitivity": gs, "padded_length": 2**L,
             "opendp_loss": loss}
    return finish(raw, eta, "privelet", postprocess, secure=secure, noise=noise,
                  notion="pure-DP", eps=eps)
