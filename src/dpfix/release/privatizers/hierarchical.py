"""The hierarchical histogram of Qardaji, Yang and Li (2013) (paper Section 3).

A complete ``b``-ary tree (``b = 16`` as QYL recommend) over ``eta`` padded
with zeros to ``m = b^h >= n`` leaves; every node holds the count of its
leaves. The root holds ``N``, which is public: it is released exactly and
costs nothing. Sensitivity under a one-unit move ``-e_i + e_{i+1}``: at each
of the ``h`` noisy levels the two leaves lie in one node (no change) or in two
nodes (one ``-1``, one ``+1``), so each level has L1 sensitivity 2 and all
levels together at most ``2h`` (attained when ``i, i+1`` straddle a boundary
of the root's children, present since ``n > m/b`` unless ``h = 1``). With the
budget split evenly, ``eps/h`` per level, every node gets ``Lap(2h/eps)``.

Post-processing is Hay, Rastogi, Miklau and Suciu's (2010) constrained
inference, QYL's "weighted averaging and mean consistency":

1. bottom up, a node at height ``k`` (leaves ``k = 1``) gets
   ``z = (b^k - b^(k-1))/(b^k - 1) * noisy + (b^(k-1) - 1)/(b^k - 1) * sum(z of children)``;
2. top down from the exact root, a child gets
   ``z + (parent - sum(z of the parent's children)) / b``.

The leaves are then the least-squares estimate consistent with the tree and
with the root ``N`` (tested against a direct constrained least squares).
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

__all__ = ["hierarchical", "tree_levels", "tree_counts", "consistent_leaves"]


def tree_levels(n: int, branching: int) -> int:
    """The number ``h >= 1`` of non-root levels: ``branching^h`` is the first power ``>= n``.

    Parameters
    ----------
    n : int
        The number of leaves needed.
    branching : int
        ``b >= 2``.

    Returns
    -------
    int
        The number of noisy levels.

    Examples
    --------
    >>> tree_levels(51, 16), tree_levels(256, 16), tree_levels(257, 16), tree_levels(1, 16)
    (2, 2, 3, 1)
    """
    h, m = 1, branching
    while m < n:
        h, m = h + 1, m * branching
    return h


def tree_counts(leaves: Any, branching: int) -> list[np.ndarray]:
    """Node counts of levels ``1 .. h`` (root excluded), top level first.

    Parameters
    ----------
    leaves : array_like
        ``b^h`` leaf counts.
    branching : int
        ``b``.

    Returns
    -------
    list of numpy.ndarray
        Level ``1`` (the root's children) first, the leaves last.

    Examples
    --------
    >>> [c.tolist() for c in tree_counts([1, 2, 3, 4], 2)]
    [[3, 7], [1, 2, 3, 4]]
    """
    levels = [np.asarray(leaves)]
    while len(levels[0]) > branching:
        levels.insert(0, levels[0].reshape(-1, branching).sum(axis=1))
    return levels


def consistent_leaves(noisy: list[np.ndarray], root: float, branching: int) -> np.ndarray:
    """Weighted averaging then mean consistency (Hay et al. 2010) from an exact ``root``.

    ``noisy`` holds equally noisy counts of levels ``1 .. h``, top level first.

    Parameters
    ----------
    noisy : list of numpy.ndarray
        Levels ``1 .. h``, top first.
    root : float
        The exact root count ``N``.
    branching : int
        ``b``.

    Returns
    -------
    numpy.ndarray
        The consistent leaves.

    Examples
    --------
    >>> consistent_leaves([np.array([3.0, 7.0]), np.array([1.0, 2.0, 3.0, 4.0])], 10.0, 2)
    array([1., 2., 3., 4.])
    """
    b, h = branching, len(noisy)
    z = [np.asarray(level, dtype=float) for level in noisy]
    for k in range(2, h + 1):  # height k is level h - k (0-based in the list)
        level = h - k
        a = (b**k - b ** (k - 1)) / (b**k - 1)
        z[level] = a * z[level] + (1 - a) * z[level + 1].reshape(-1, b).sum(axis=1)
    parent = np.array([float(root)])
    for level in range(h):
        gap = parent - z[level].reshape(-1, b).sum(axis=1)
        parent = z[level] + np.repeat(gap / b, b)
    return parent


def hierarchical(eta: Any, eps: float | None = None, branching: int = 16, *,
                 seed: Any = None, secure: bool = True,
                 postprocess: str | Callable[[Any], np.ndarray] = NONCYCLIC_POSTPROCESS,
                 **deprecated: Any) -> PrivatizedDistribution:
    """QYL's hierarchical histogram (branching 16, weighted averaging, mean consistency).

    Every node of the ``h`` non-root levels gets ``Lap(2h/eps)`` (secure:
    OpenDP's discrete Laplace on the integer node counts, whose privacy map at
    the total sensitivity ``2h`` is checked against ``eps``); the leaves
    after constrained inference, cut to the first ``n``, are ``raw``.

    Parameters
    ----------
    eta, eps, seed, secure, postprocess
        As for :func:`dpfix.release.privatizers.laplace`.
    branching : int
        The tree's branching factor ``b >= 2`` (16).

    Returns
    -------
    PrivatizedDistribution
        ``noise`` holds the scale, the levels ``h`` and the branching.

    Raises
    ------
    ValueError
        A bad histogram, budget, branching or seed.
    ImportError
        Secure without OpenDP.

    Examples
    --------
    >>> out = hierarchical([5, 3, 2], 1.0, secure=False, seed=0)
    >>> out.privatizer, out.noise["levels"], out.noise["scale"]
    ('hierarchical', 1, 2.0)
    """
    eps, seed = budget_and_seed(eps, seed, deprecated, "hierarchical")
    eta, eps = check_histogram(eta), check_positive(eps, "eps")
    if isinstance(branching, bool) or not isinstance(branching, (int, np.integer)) \
            or branching < 2:
        raise ValueError(f"branching: must be an integer >= 2, got {branching!r}")
    gen = resolve_rng(seed, secure)
    n, b = len(eta), int(branching)
    h = tree_levels(n, b)
    leaves = np.zeros(b**h, dtype=np.int64)
    leaves[:n] = eta
    counts = tree_counts(leaves, b)
    sizes = [len(c) for c in counts]
    scale = 2.0 * h / eps
    flat, loss = add_laplace(np.concatenate(counts), scale, rng=gen, sensitivity=2 * h,
                             budget=eps)
    noisy = np.split(flat.astype(float), np.cumsum(sizes)[:-1])
    raw = consistent_leaves(noisy, float(eta.sum()), b)[:n]
    noise = {"distribution": "discrete Laplace" if secure else "Laplace", "scale": scale,
             "levels": h, "branching": b, "padded_length": b**h, "opendp_loss": loss}
    return finish(raw, eta, "hierarchical", postprocess, secure=secure, noise=noise,
                  notion="pure-DP", eps=eps)
