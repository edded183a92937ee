"""Is "product noise then optimal transport" optimal over ``F_grid``? The exact search
(docs/joint.md section 4).

:func:`joint_targets` enumerates exact joint targets small first (shapes by ``N``, then
the total weight ``W``, then the weight vectors in lexicographic order, ``z = w / W``);
:func:`smallest_joint_gap` returns the first where the count error of
:func:`dpfix.constructors.joint.product_transport` exceeds the exact optimum over
``F_grid`` (:func:`dpfix.constructors.joint.grid_lp_optimum`), and :func:`joint_gap_survey`
the ratio of the two over every target visited. Everything exact (Fractions, cdd).
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.constructors.joint import grid_lp_optimum, joint_lams, product_transport

__all__ = ["joint_targets", "smallest_joint_gap", "joint_gap_survey"]


def _compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """Weight vectors of ``parts`` non-negative integers summing to ``total``, lexicographic
    from the largest first entry."""
    if parts == 1:
        yield (total,)
        return
    for first in range(total, -1, -1):
        for rest in _compositions(total - first, parts - 1):
            yield (first, *rest)


def joint_targets(shapes: Any = ((2, 2), (2, 3), (3, 3)), weights: Any = (1, 2, 3)
                  ) -> Iterator[np.ndarray]:
    """Exact joint targets, small first: every shape (ascending ``N``), every total weight.

    Examples
    --------
    >>> [t.ravel().tolist() for t in joint_targets(((1, 2),), (1,))]
    [[Fraction(1, 1), Fraction(0, 1)], [Fraction(0, 1), Fraction(1, 1)]]
    """
    for shape in sorted(shapes, key=lambda s: (s[0] * s[1], s)):
        for total in weights:
            for w in _compositions(int(total), shape[0] * shape[1]):
                yield np.array([Fraction(v, total) for v in w], dtype=object).reshape(shape)


def _errors(z: np.ndarray, lam: Any, unit: str) -> tuple[Fraction, Fraction]:
    product = product_transport(z, lam=joint_lams(unit, lam=lam), unit=unit).count_error()
    return product, grid_lp_optimum(z, lam=lam, unit=unit).count_error()


def smallest_joint_gap(*, lam: Any = 2, unit: str = "cell", shapes: Any = ((2, 2), (2, 3)),
                       weights: Any = (1, 2, 3)) -> dict | None:
    """The first target (in :func:`joint_targets`' order) where product noise then optimal
    transport has a larger count error than the optimum over ``F_grid``, or None.

    Examples
    --------
    >>> gap = smallest_joint_gap(lam=2, unit="cell", shapes=((2, 2),), weights=(1, 2))
    >>> gap["z"], gap["product"], gap["optimum"]
    ('1/2 0 | 0 1/2', Fraction(2, 3), Fraction(1, 2))
    """
    for z in joint_targets(shapes, weights):
        product, optimum = _errors(z, lam, unit)
        if product > optimum:
            return {"shape": z.shape, "lam": Fraction(lam), "unit": unit,
                    "z": " | ".join(" ".join(str(v) for v in row) for row in z),
                    "product": product, "optimum": optimum}
    return None


def joint_gap_survey(*, lam: Any = 2, unit: str = "cell", shapes: Any = ((2, 2), (2, 3)),
                     weights: Any = (1, 2, 3)) -> dict:
    """Over every target visited: how often the product is optimal, and the worst and mean
    ratio of its count error to the optimum (targets with optimum 0 counted when equal).

    Examples
    --------
    >>> s = joint_gap_survey(shapes=((2, 2),), weights=(1,))
    >>> s["targets"], s["optimal"]
    (4, 4)
    """
    ratios, optimal, count = [], 0, 0
    worst: tuple = (Fraction(1), None)
    for z in joint_targets(shapes, weights):
        product, optimum = _errors(z, lam, unit)
        count += 1
        if product == optimum:
            optimal += 1
        if optimum > 0:
            r = product / optimum
            ratios.append(r)
            if r > worst[0]:
                worst = (r, z)
    return {"targets": count, "optimal": optimal, "lam": Fraction(lam), "unit": unit,
            "worst_ratio": worst[0],
            "worst_z": None if worst[1] is None else
            " | ".join(" ".join(str(v) for v in row) for row in worst[1]),
            "mean_ratio": float(sum(ratios) / len(ratios)) if ratios else 1.0}
