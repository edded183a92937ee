"""Is "product noise then optimal transport" optimal over ``F_grid``? The exact search
(docs/joint.md section 4).

:func:`joint_targets` enumerates exact joint targets small first (shapes by ``N``, then
the total weight ``W`` (``totals=``), then the weight vectors in lexicographic order,
``z = w / W``);
:func:`smallest_joint_gap` returns the first where the count error of
:func:`dpfix.constructors.joint.product_transport` exceeds the exact optimum over
``F_grid`` (:func:`dpfix.constructors.joint.grid_lp_optimum`), and :func:`joint_gap_survey`
the ratio of the two over every target visited. Everything exact (Fractions, cdd).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.constructors.joint import grid_lp_optimum, joint_lams, product_transport
from dpfix.explore.search import SearchResult
from dpfix.numbers.deprecation import no_other, renamed
from dpfix.numbers.exact import exact_lam, one_or_many
from dpfix.numbers.results import Result

__all__ = ["joint_targets", "smallest_joint_gap", "joint_gap_survey", "JointGap",
           "JointGapSurvey"]


#: the total weights ``W`` of the targets, by default
TOTALS = (1, 2, 3)


def _compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """Weight vectors of ``parts`` non-negative integers summing to ``total``, lexicographic
    from the largest first entry."""
    if parts == 1:
        yield (total,)
        return
    for first in range(total, -1, -1):
        for rest in _compositions(total - first, parts - 1):
            yield (first, *rest)


def joint_targets(shapes: Any = ((2, 2), (2, 3), (3, 3)), totals: Any = TOTALS,
                  **deprecated: Any) -> Iterator[np.ndarray]:
    """Exact joint targets, small first: every shape (ascending ``N``), every total weight
    ``W`` in ``totals``, every integer weight vector ``w`` summing to ``W``: ``z = w / W``.

    ``weights=`` is the deprecated name of ``totals=``.

    Examples
    --------
    >>> [t.ravel().tolist() for t in joint_targets(((1, 2),), (1,))]
    [[Fraction(1, 1), Fraction(0, 1)], [Fraction(0, 1), Fraction(1, 1)]]
    """
    totals = _totals(deprecated, totals, "joint_targets")
    return _targets(shapes, totals)


def _totals(deprecated: dict, totals: Any, where: str) -> Any:
    """``totals``, or the deprecated ``weights=`` (the total weights ``W`` of the targets)."""
    given = renamed("weights", "totals", deprecated, totals, TOTALS, where=where, depth=2)
    no_other(deprecated, where)
    return given


def _targets(shapes: Any, totals: Any) -> Iterator[np.ndarray]:
    for shape in sorted(shapes, key=lambda s: (s[0] * s[1], s)):
        for total in totals:
            for w in _compositions(int(total), shape[0] * shape[1]):
                yield np.array([Fraction(v, total) for v in w], dtype=object).reshape(shape)


def _lams(lam: Any) -> tuple[Fraction, ...]:
    """One ``lam`` or many, exact."""
    return tuple(exact_lam(x) for x in one_or_many(lam))


def _errors(z: np.ndarray, lam: Any, unit: str) -> tuple[Fraction, Fraction]:
    product = product_transport(z, lam=joint_lams(unit, lam=lam), unit=unit).count_error()
    return product, grid_lp_optimum(z, lam=lam, unit=unit).count_error()


def _text(z: np.ndarray) -> str:
    return " | ".join(" ".join(str(v) for v in row) for row in z)


@dataclass(frozen=True, repr=False)
class JointGap(Result):
    """A joint target where product noise then optimal transport is not optimal over
    ``F_grid``: the counterexample of :func:`smallest_joint_gap`'s result.

    Attributes
    ----------
    shape : tuple of int
    lam : Fraction
    unit : str
    z : str
        The target, rows separated by ``|`` (``"1/2 0 | 0 1/2"``).
    product, optimum : Fraction
        The count errors of the product (then optimal transport) and of the optimum.
    visited : int
        Targets visited, this one included.
    """

    shape: tuple
    lam: Fraction
    unit: str
    z: str
    product: Fraction
    optimum: Fraction
    visited: int

    former_keys = {k: k for k in ("shape", "lam", "unit", "z", "product", "optimum")}

    def __str__(self) -> str:
        return (f"joint gap at z = ({self.z}), unit {self.unit}, lam = {self.lam}: product "
                f"then transport {self.product} > optimum over F_grid {self.optimum} (target "
                f"{self.visited} visited)")

    def __repr__(self) -> str:
        return (f"JointGap(shape={self.shape}, lam={self.lam!r}, unit={self.unit!r}, "
                f"z={self.z!r}, product={self.product!r}, optimum={self.optimum!r})")


def smallest_joint_gap(*, lam: Any = 2, unit: str = "cell", shapes: Any = ((2, 2), (2, 3)),
                       totals: Any = TOTALS, **deprecated: Any) -> SearchResult:
    """The first target (in :func:`joint_targets`' order, then ``lam`` in the given order)
    where product noise then optimal transport has a larger count error than the optimum
    over ``F_grid``.

    ``lam`` is one value or many; ``weights=`` is the deprecated name of ``totals=``.

    Returns
    -------
    dpfix.explore.search.SearchResult
        Its ``counterexample`` a :class:`JointGap`, or None (then false); ``visited``
        counts the ``(target, lam)`` pairs checked.

    Examples
    --------
    >>> found = smallest_joint_gap(lam=2, unit="cell", shapes=((2, 2),), totals=(1, 2))
    >>> gap = found.counterexample
    >>> gap.z, gap.product, gap.optimum, found.visited
    ('1/2 0 | 0 1/2', Fraction(2, 3), Fraction(1, 2), 8)
    """
    totals = _totals(deprecated, totals, "smallest_joint_gap")
    start, visited = time.perf_counter(), 0
    for z in _targets(shapes, totals):
        for x in _lams(lam):
            visited += 1
            product, optimum = _errors(z, x, unit)
            if product > optimum:
                gap = JointGap(z.shape, x, unit, _text(z), product, optimum, visited)
                return SearchResult(gap, visited, None, time.perf_counter() - start)
    return SearchResult(None, visited, None, time.perf_counter() - start)


@dataclass(frozen=True, repr=False)
class JointGapSurvey(Result):
    """What :func:`joint_gap_survey` returns: over every ``(target, lam)`` visited, how
    often the product is optimal, and the worst and mean ratio of its count error to the
    optimum.

    Attributes
    ----------
    visited : int
        ``(target, lam)`` pairs visited (every one: ``stopped`` is None).
    optimal : int
        Where the product's count error equals the optimum (``found``: not everywhere).
    lam : Fraction or tuple of Fraction
        As given.
    unit : str
    worst_ratio : Fraction
    worst_z : str or None
        The target of the worst ratio (None: the product is optimal everywhere).
    mean_ratio : float
        Over the targets with a positive optimum.
    """

    visited: int
    optimal: int
    lam: Any
    unit: str
    worst_ratio: Fraction
    worst_z: str | None
    mean_ratio: float
    stopped: str | None = None

    former_keys = {"targets": "visited", **{k: k for k in (
        "optimal", "lam", "unit", "worst_ratio", "worst_z", "mean_ratio")}}

    headline = ("found", "visited", "optimal", "worst_ratio", "stopped")

    @property
    def found(self) -> bool:
        """Whether the product is not optimal somewhere."""
        return self.optimal < self.visited


def joint_gap_survey(*, lam: Any = 2, unit: str = "cell", shapes: Any = ((2, 2), (2, 3)),
                     totals: Any = TOTALS, **deprecated: Any) -> JointGapSurvey:
    """Over every target visited (and every ``lam``, one value or many): how often the
    product is optimal, and the worst and mean ratio of its count error to the optimum
    (targets with optimum 0 counted when equal). ``weights=`` is the deprecated name of
    ``totals=``.

    Examples
    --------
    >>> s = joint_gap_survey(shapes=((2, 2),), totals=(1,))
    >>> s.visited, s.optimal, s.found
    (4, 4, False)
    """
    totals = _totals(deprecated, totals, "joint_gap_survey")
    lams = _lams(lam)
    ratios, optimal, count = [], 0, 0
    worst: tuple = (Fraction(1), None)
    for z in _targets(shapes, totals):
        for x in lams:
            product, optimum = _errors(z, x, unit)
            count += 1
            if product == optimum:
                optimal += 1
            if optimum > 0:
                r = product / optimum
                ratios.append(r)
                if r > worst[0]:
                    worst = (r, z)
    return JointGapSurvey(count, optimal, lams[0] if len(lams) == 1 else lams, unit, worst[0],
                          None if worst[1] is None else _text(worst[1]),
                          float(sum(ratios) / len(ratios)) if ratios else 1.0)
