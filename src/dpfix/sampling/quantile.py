"""Monotone quantile matching: released values ``y`` remapped onto a target histogram.

The one-stage and hybrid frameworks (docs/no_split.md) may remap the released
``y`` of every row so that the output histogram is a public target ``t``
(integers summing to ``N``) exactly: sort the rows by ``y``, breaking ties by
uniform random keys, and give the first ``t_0`` rows the value 0, the next
``t_1`` the value 1, and so on. The map depends on the data only through ``y``
and on randomness independent of the data, so it is post-processing of ``y``.

Between the histogram ``h`` of ``y`` and ``t`` this is the monotone (northwest
corner) transport plan ``P`` with row sums ``h`` and column sums ``t``
(:func:`dpfix.constructors.remap.quantile_plan`): the ``h_m`` rows with
``y = m`` are split at random into groups of sizes ``P[m, :]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpfix.sampling.source import RandomSource
from dpfix.sampling.table import apportion_rows

__all__ = ["apportion", "quantile_remap", "quantile_joint"]


def apportion(z: Any, total: int) -> np.ndarray:
    """Integers summing to ``total`` nearest ``total * z`` (Hamilton's largest remainders).

    Parameters
    ----------
    z : array_like of float
        A probability vector.
    total : int
        The number to apportion (``N`` rows).

    Returns
    -------
    numpy.ndarray of int64

    Examples
    --------
    >>> apportion([0.5, 0.25, 0.25], 5).tolist()
    [3, 1, 1]
    """
    zv = np.asarray(z, dtype=float)
    if zv.ndim != 1 or zv.size == 0 or not np.isfinite(zv).all() or (zv < 0).any() \
            or zv.sum() <= 0:
        raise ValueError("z: expected a non-negative finite vector with a positive sum")
    zv = zv / zv.sum()
    return apportion_rows((zv * int(total))[None, :], int(total))[0]


def quantile_remap(y: Any, target: Any, source: RandomSource) -> np.ndarray:
    """Every row's ``y`` mapped monotonically so that the outputs' histogram is ``target``.

    Parameters
    ----------
    y : array_like of int
        The released values, in ``0 .. n-1``.
    target : array_like of int
        ``n`` non-negative integers summing to ``len(y)``.
    source : RandomSource
        The tie-breaking keys (independent of the data).

    Returns
    -------
    numpy.ndarray of int64
        Rows with a smaller ``y`` never get a larger output.

    Examples
    --------
    >>> from dpfix.sampling.source import random_source
    >>> quantile_remap([2, 0, 1, 1], [2, 0, 2], random_source(0)).tolist()
    [2, 0, 2, 0]
    """
    yv = np.asarray(y, dtype=np.int64)
    t = np.asarray(target, dtype=np.int64)
    if t.ndim != 1 or (t < 0).any() or int(t.sum()) != yv.size:
        raise ValueError(f"target: expected non-negative integers summing to {yv.size}")
    order = np.lexsort((source.words(yv.size), yv))  # by y, ties at random
    out = np.empty(yv.size, dtype=np.int64)
    out[order] = np.repeat(np.arange(t.size, dtype=np.int64), t)
    return out


def quantile_joint(joint_y: Any, plan: Any, source: RandomSource) -> np.ndarray:
    """The (input, output) joint histogram after quantile matching, from that of (input, y).

    The rows with ``y = m`` are split uniformly at random into groups of sizes
    ``plan[m, :]``, the monotone plan from the histogram of ``y`` to the target
    (:func:`dpfix.constructors.remap.quantile_plan`): a multivariate
    hypergeometric draw of their input labels, from a generator seeded by
    words of ``source`` (randomness independent of the data; the release is the
    column sums, which are the target whatever the draw).

    Examples
    --------
    >>> from dpfix.sampling.source import random_source
    >>> J = quantile_joint([[2, 0], [0, 2]], [[1, 1], [0, 2]], random_source(0))
    >>> J.sum(axis=0).tolist(), J.sum(axis=1).tolist()
    ([1, 3], [2, 2])
    """
    J = np.asarray(joint_y, dtype=np.int64)
    P = np.asarray(plan, dtype=np.int64)
    if P.shape != J.shape or not np.array_equal(P.sum(axis=1), J.sum(axis=0)):
        raise ValueError("plan: its row sums must be the histogram of y (joint_y's columns)")
    rng = np.random.Generator(np.random.PCG64([int(w) for w in source.words(4)]))
    out = np.zeros_like(J)
    for m in np.flatnonzero(J.sum(axis=0)):
        colors = J[:, m].copy()
        for j in np.flatnonzero(P[m]):
            take = rng.multivariate_hypergeometric(colors, int(P[m, j]), method="marginals")
            out[:, j] += take
            colors -= take
    return out
