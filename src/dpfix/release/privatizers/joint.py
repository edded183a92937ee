"""Stage 1 for a pair (or a triple) of count columns: DP estimates of the joint distribution
(docs/joint.md sections 5 and 9).

- :func:`joint_laplace`: the joint histogram ``eta[a, b]`` (rows with the pair
  ``(a, b)``) plus Laplace noise of scale ``2 / eps`` per cell, then a post-processing
  to a distribution (:mod:`dpfix.release.privatizers.postprocess`; default the
  Euclidean projection onto the simplex). ``eps``-DP for every unit: one individual
  changes one row, which moves one unit of the histogram from one cell to another.
- :func:`deconvolve_joint`: the maximum-likelihood (EM) estimate of the joint
  distribution from the histogram of pairs released with product geometric noise
  (the one-stage framework's estimate: post-processing of the noisy pairs).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpfix.numbers.deprecation import renamed_keywords
from dpfix.release.privatizers.common import PrivatizedDistribution
from dpfix.release.privatizers.laplace_baselines import laplace
from dpfix.sampling.joint import apply_axes

__all__ = ["joint_laplace", "deconvolve_joint", "geometric_float"]


@renamed_keywords(rng="seed")
def joint_laplace(eta: Any, eps: float, *, seed: Any = None, secure: bool = True,
                  postprocess: str = "project-simplex") -> PrivatizedDistribution:
    """``eta + Lap(2 / eps)`` on every cell of the joint histogram, post-processed.

    Parameters
    ----------
    eta : array_like of int, shape ``(n_a, n_b)`` or ``(n_a, n_b, n_c)``
        The joint histogram (``N = sum eta`` public).
    eps : float
        The budget ``eps_1``.
    seed, secure : as :func:`dpfix.release.privatizers.laplace` (secure: OpenDP's
        discrete Laplace).
    postprocess : str
        ``"project-simplex"`` (default; sparse joint histograms keep their empty cells empty) or
        another name of ``POSTPROCESSORS``.

    Returns
    -------
    PrivatizedDistribution
        ``z`` flattened (state ``a n_b + b``, C order); ``noise["shape"]`` the shape.

    Examples
    --------
    >>> out = joint_laplace([[30, 0], [0, 10]], 1.0, secure=False, seed=0)
    >>> out.z.shape, out.noise["shape"], out.privatizer
    ((4,), (2, 2), 'joint-laplace')
    """
    eta = np.asarray(eta)
    if eta.ndim not in (2, 3):
        raise ValueError(f"eta: a 2-D or 3-D joint histogram, got shape {eta.shape}")
    out = laplace(eta.ravel(), eps, seed=seed, secure=secure, postprocess=postprocess)
    noise = {**out.noise, "shape": tuple(int(v) for v in eta.shape),
             "statement": "one row moves one unit between two cells: L1 sensitivity 2 for "
                          "every unit (docs/joint.md section 5)"}
    return PrivatizedDistribution(z=out.z, raw=out.raw, N=out.N, privatizer="joint-laplace",
                                  postprocess=out.postprocess, notion=out.notion, eps=out.eps,
                                  secure=out.secure, noise=noise)


def geometric_float(n: int, lam: Any) -> np.ndarray:
    """The truncated geometric mechanism ``G[i, m] = c_m lam^-|i-m|`` in floats.

    Examples
    --------
    >>> geometric_float(2, 2).round(4).tolist()
    [[0.6667, 0.3333], [0.3333, 0.6667]]
    """
    rho = 1.0 / float(lam)
    if n == 1:
        return np.ones((1, 1))
    idx = np.arange(n)
    c = np.full(n, (1 - rho) / (1 + rho))
    c[0] = c[-1] = 1 / (1 + rho)
    return c[None, :] * rho ** np.abs(idx[:, None] - idx[None, :])


def deconvolve_joint(H: Any, lams: tuple[Any, ...], *, max_iter: int = 500,
                     tol: float = 1e-10, zero: float | None = None) -> np.ndarray:
    """The EM (maximum-likelihood) estimate of ``z`` from noisy pairs' histogram ``H``.

    The noisy pair of a row in state ``s`` is drawn from ``G = G_a x G_b``, so the
    histogram ``H`` is multinomial with cell probabilities ``w = z G``. EM's step is
    ``z <- z * (G (H / N / w))``, each product separable: ``G_a^T Z G_b`` and
    ``G_a X G_b^T``, ``O(n_a n_b (n_a + n_b))`` per step (a triple: one matrix per axis,
    ``O(N (n_a + n_b + n_c))``). Started from the uniform distribution and stopped after
    ``max_iter`` steps (a regulariser, as for the one-column EM of docs/no_split.md) or
    when the largest change is below ``tol``. Post-processing of ``H``: no privacy is
    spent. ``zero``: a separately released share of the rows in state ``(0, 0)`` (every
    count zero), held fixed (the EM of the likelihood with that cell known: its M-step
    scales the other cells to ``1 - zero``).

    Examples
    --------
    >>> Z = deconvolve_joint([[50, 0], [0, 50]], (100, 100))
    >>> Z.round(3).tolist()
    [[0.5, 0.0], [0.0, 0.5]]
    """
    H = np.asarray(H, dtype=float)
    if H.ndim not in (2, 3) or len(lams) != H.ndim or (H < 0).any() or H.sum() <= 0:
        raise ValueError("H: a 2-D or 3-D histogram of non-negative counts with a positive "
                         "total, one lam per axis")
    mats = [geometric_float(n, lam) for n, lam in zip(H.shape, lams, strict=True)]
    h = H / H.sum()
    Z = np.full(H.shape, 1.0 / H.size)
    origin = (0,) * H.ndim
    q = None if zero is None else min(max(float(zero), 0.0), 1.0 - 1e-9)
    if q is not None:
        Z *= (1 - q) / (1 - Z[origin])
        Z[origin] = q
    for _ in range(max_iter):
        W = apply_axes(Z, mats)
        X = np.divide(h, W, out=np.zeros_like(h), where=h > 0)
        new = Z * apply_axes(X, mats, transpose=True)
        if q is None:
            new /= new.sum()
        else:
            new[origin] = 0.0
            new *= (1 - q) / new.sum()
            new[origin] = q
        done = np.abs(new - Z).max() < tol
        Z = new
        if done:
            break
    return Z
