"""Is "product noise then optimal transport" optimal over ``F_grid``? The exact search
(docs/joint.md section 4), on the exploration engine.

The predicate :func:`product_is_optimal` compares, on a
:class:`~dpfix.explore.joint_instances.JointInstance`, the count error of
:func:`dpfix.constructors.joint.product_transport` with the exact optimum over ``F_grid``
(:func:`dpfix.constructors.joint.grid_lp_optimum`); :func:`smallest_joint_gap` runs it
through :func:`dpfix.explore.search.smallest_counterexample` and :func:`joint_gap_survey`
through :func:`dpfix.explore.search.survey` over the instances of
:func:`~dpfix.explore.joint_instances.joint_instances` (shapes by ``N``, then the total
weight ``W`` (``totals=``), then the weight vectors in lexicographic order from the
largest first entry, ``z = w / W``, then ``lam``), with the engine's ``budget=``,
``jobs=``, ``cache=`` and ``progress=``. :func:`joint_targets` gives the targets of that
order as arrays. Everything exact (Fractions, cdd).
"""

from __future__ import annotations

import inspect
import itertools
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.constructors.joint import JointMechanism, grid_lp_optimum, product_transport
from dpfix.explore.joint_instances import (
    SHAPES,
    TOTALS,
    JointInstance,
    grid_targets,
    grid_text,
    joint_instances,
)
from dpfix.explore.search import (
    BudgetReached,
    SearchResult,
    SurveyResult,
    smallest_counterexample,
    survey,
)
from dpfix.numbers.deprecation import no_other, renamed
from dpfix.numbers.exact import exact_lam, one_or_many
from dpfix.numbers.results import Result

__all__ = ["joint_targets", "product_is_optimal", "smallest_joint_gap", "joint_gap_survey",
           "JointGap", "JointGapSurvey", "TOTALS"]


def joint_targets(shapes: Any = ((2, 2), (2, 3), (3, 3)), totals: Any = TOTALS,
                  **deprecated: Any) -> Iterator[np.ndarray]:
    """Exact joint targets, small first: every shape (ascending ``N``), every total weight
    ``W`` in ``totals``, every integer weight vector ``w`` summing to ``W``: ``z = w / W``
    (:func:`dpfix.explore.joint_instances.grid_targets`, as arrays of the shape).

    ``weights=`` is the deprecated name of ``totals=``.

    Examples
    --------
    >>> [t.ravel().tolist() for t in joint_targets(((1, 2),), (1,))]
    [[Fraction(1, 1), Fraction(0, 1)], [Fraction(0, 1), Fraction(1, 1)]]
    """
    totals = _totals(deprecated, totals, "joint_targets")
    return (np.array(z, dtype=object).reshape(shape) for shape, z in grid_targets(shapes,
                                                                                  totals))


def _totals(deprecated: dict, totals: Any, where: str) -> Any:
    """``totals``, or the deprecated ``weights=`` (the total weights ``W`` of the targets)."""
    given = renamed("weights", "totals", deprecated, totals, TOTALS, where=where, depth=2)
    no_other(deprecated, where)
    return given


def _mechanisms(inst: JointInstance) -> tuple[JointMechanism, JointMechanism]:
    """The product (then optimal transport) and the exact optimum over ``F_grid``."""
    if not isinstance(inst, JointInstance) or inst.z is None:
        raise TypeError(f"product_is_optimal: a JointInstance with a target, got {inst!r}")
    z = inst.z_grid()
    return (product_transport(z, lam=inst.lam, unit=inst.unit),
            grid_lp_optimum(z, lam=inst.lam, unit=inst.unit))


def product_is_optimal(inst: JointInstance) -> bool:
    """Whether product noise then optimal transport attains the least count error over
    ``F_grid`` at the instance: the count error of
    :func:`dpfix.constructors.joint.product_transport` is at most the exact optimum of
    :func:`dpfix.constructors.joint.grid_lp_optimum` (it is never below: the product is a
    mechanism of ``F_grid``). The predicate of :func:`smallest_joint_gap` and
    :func:`joint_gap_survey`, for ``over="instance"`` (a module-level function: it runs in
    worker processes).

    Examples
    --------
    >>> product_is_optimal(JointInstance((2, 2), 2, ["1/2", "1/2", 0, 0]))
    True
    >>> product_is_optimal(JointInstance((2, 2), 2, ["1/2", 0, 0, "1/2"]))
    False
    """
    product, optimum = _mechanisms(inst)
    return not product.count_error() > optimum.count_error()


class _Recorded:
    """:func:`product_is_optimal`, keeping in this process what it computed where the
    product is not optimal (the two count errors; with ``matrices``, the two mechanisms),
    so that the search does not compute them again (``jobs = 1``). Its copies in worker
    processes keep theirs (not sent back). Named ``product_is_optimal`` for the engine's
    cache, with this module's source as the source of the run key."""

    def __init__(self, matrices: bool) -> None:
        self.matrices = matrices
        self.gaps: dict[JointInstance, tuple] = {}
        self.__qualname__ = product_is_optimal.__qualname__
        self.source = inspect.getsource(sys.modules[__name__])

    def __call__(self, inst: JointInstance) -> bool:
        product, optimum = _mechanisms(inst)
        p, o = product.count_error(), optimum.count_error()
        if p > o:
            self.gaps[inst] = (p, o, product, optimum) if self.matrices else (p, o)
        return not p > o

    def gap(self, inst: JointInstance) -> tuple:
        """What was kept at ``inst``, computed here if it was not (another process)."""
        if inst not in self.gaps:
            product, optimum = _mechanisms(inst)
            self.gaps[inst] = (product.count_error(), optimum.count_error(), product, optimum)
        return self.gaps[inst]

    def __getstate__(self) -> dict:
        return {**self.__dict__, "gaps": {}}

    def __repr__(self) -> str:
        return "product_is_optimal"


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
    instance : JointInstance
        The instance (``z`` as Fractions).
    product_T, optimum_T : numpy.ndarray
        The two mechanisms' exact ``N x N`` matrices over the flattened states (the
        optimum certified by cdd's dual multipliers, :func:`grid_lp_optimum`).
    """

    shape: tuple
    lam: Fraction
    unit: str
    z: str
    product: Fraction
    optimum: Fraction
    visited: int
    instance: JointInstance | None = None
    product_T: np.ndarray | None = field(default=None, compare=False)
    optimum_T: np.ndarray | None = field(default=None, compare=False)

    former_keys = {k: k for k in ("shape", "lam", "unit", "z", "product", "optimum")}

    def __str__(self) -> str:
        return (f"joint gap at z = ({self.z}), unit {self.unit}, lam = {self.lam}: product "
                f"then transport {self.product} > optimum over F_grid {self.optimum} (target "
                f"{self.visited} visited)")

    def __repr__(self) -> str:
        return (f"JointGap(shape={self.shape}, lam={self.lam!r}, unit={self.unit!r}, "
                f"z={self.z!r}, product={self.product!r}, optimum={self.optimum!r})")


def _quiet(run: Any, **kwargs: Any) -> Any:
    """``run(**kwargs)`` with the engine's budget warning held back (the caller warns)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BudgetReached)
        return run(**kwargs)


def smallest_joint_gap(*, lam: Any = 2, unit: str = "cell", shapes: Any = SHAPES,
                       totals: Any = TOTALS, budget: Any = None, jobs: int = 1,
                       cache: Any = None, progress: Any = None, **deprecated: Any
                       ) -> SearchResult:
    """The first target (in :func:`joint_targets`' order, then ``lam`` in the given order)
    where product noise then optimal transport has a larger count error than the optimum
    over ``F_grid``: :func:`dpfix.explore.search.smallest_counterexample` of
    :func:`product_is_optimal` over
    :func:`~dpfix.explore.joint_instances.joint_instances`.

    ``lam`` is one value or many; ``budget``, ``jobs``, ``cache`` and ``progress`` are the
    engine's (:func:`~dpfix.explore.search.smallest_counterexample`; a budget that ends
    the search without a gap warns :class:`~dpfix.explore.search.BudgetReached`);
    ``weights=`` is the deprecated name of ``totals=``.

    Returns
    -------
    dpfix.explore.search.SearchResult
        Its ``counterexample`` a :class:`JointGap` (with its instance and both matrices),
        or None (then false); ``visited`` counts the ``(target, lam)`` pairs checked,
        ``stopped`` the budget.

    Examples
    --------
    >>> found = smallest_joint_gap(lam=2, unit="cell", shapes=((2, 2),), totals=(1, 2))
    >>> gap = found.counterexample
    >>> gap.z, gap.product, gap.optimum, found.visited
    ('1/2 0 | 0 1/2', Fraction(2, 3), Fraction(1, 2), 8)
    """
    totals = _totals(deprecated, totals, "smallest_joint_gap")
    check = _Recorded(matrices=True)
    result = _quiet(smallest_counterexample, predicate=check, over="instance",
                    instances=joint_instances(shapes, totals, lam, unit), budget=budget,
                    jobs=jobs, cache=cache, progress=progress)
    if not result.found:
        if result.stopped:
            warnings.warn(f"smallest_joint_gap: {result.stopped}", BudgetReached, stacklevel=2)
        return result
    inst = result.counterexample.instance
    p, o, product, optimum = check.gap(inst)
    return replace(result, counterexample=JointGap(
        inst.shape, inst.lam, inst.unit, grid_text(inst.z, inst.shape), p, o, result.visited,
        inst, product.matrix, optimum.matrix))


@dataclass(repr=False)
class JointGapSurvey(SurveyResult):
    """What :func:`joint_gap_survey` returns: the engine's
    :class:`~dpfix.explore.search.SurveyResult` (``counts`` per ``(N, lam)``, ``failures``
    where the product is not optimal, ``visited``, ``stopped``, ``complete``) and, over
    every ``(target, lam)`` visited, how often the product is optimal and the worst and
    mean ratio of its count error to the optimum.

    Attributes
    ----------
    visited : int
        ``(target, lam)`` pairs visited (every one unless the budget ``stopped`` it).
    optimal : int
        Where the product's count error equals the optimum (``found``: not everywhere).
    lam : Fraction or tuple of Fraction
        As given.
    unit : str
    worst_ratio : Fraction
    worst_z : str or None
        The target of the worst ratio (None: the product is optimal everywhere).
    worst_instance : JointInstance or None
        Its instance.
    mean_ratio : float
        Over the targets with a positive optimum.
    """

    elapsed: float = field(default=0.0, compare=False)  # equal surveys: equal answers
    optimal: int = 0
    lam: Any = None
    unit: str = "cell"
    worst_ratio: Fraction = Fraction(1)
    worst_z: str | None = None
    mean_ratio: float = 1.0
    worst_instance: JointInstance | None = None

    former_keys = {"targets": "visited", **{k: k for k in (
        "optimal", "lam", "unit", "worst_ratio", "worst_z", "mean_ratio")}}

    headline = ("found", "visited", "optimal", "worst_ratio", "stopped")

    def __repr__(self) -> str:
        return Result.__repr__(self)

    def describe(self) -> dict[str, Any]:
        """The survey's :meth:`~dpfix.explore.search.SurveyResult.describe`, then
        ``optimal``, ``lam``, ``unit``, ``worst_ratio``, ``worst_z`` and ``mean_ratio``."""
        return {**SurveyResult.describe(self), "optimal": self.optimal,
                "lam": [str(x) for x in self.lam] if isinstance(self.lam, tuple)
                else str(self.lam), "unit": self.unit, "worst_ratio": str(self.worst_ratio),
                "worst_z": self.worst_z, "mean_ratio": self.mean_ratio}

    def __str__(self) -> str:
        worst = "" if self.worst_z is None else \
            f"; worst ratio {self.worst_ratio} at z = ({self.worst_z})"
        return (f"{SurveyResult.__str__(self)}\nproduct then transport optimal on "
                f"{self.optimal} of {self.visited} (unit {self.unit}){worst}; mean ratio "
                f"{self.mean_ratio:.4f}")


def _support(inst: JointInstance) -> int:
    return sum(1 for x in inst.z if x != 0)


def joint_gap_survey(*, lam: Any = 2, unit: str = "cell", shapes: Any = SHAPES,
                     totals: Any = TOTALS, budget: Any = None, jobs: int = 1,
                     cache: Any = None, progress: Any = None, **deprecated: Any
                     ) -> JointGapSurvey:
    """Over every target visited (and every ``lam``, one value or many): how often the
    product is optimal, and the worst and mean ratio of its count error to the optimum
    (targets with optimum 0 counted when equal): :func:`dpfix.explore.search.survey` of
    :func:`product_is_optimal` over
    :func:`~dpfix.explore.joint_instances.joint_instances`, with the engine's ``budget``,
    ``jobs``, ``cache`` and ``progress``. ``weights=`` is the deprecated name of
    ``totals=``.

    The ratios need the two count errors where the product is not optimal: with
    ``jobs = 1`` the predicate keeps them; with ``jobs > 1`` (or a ``cache`` that skips
    an instance) they are computed again here. Where it is optimal the ratio is 1 when
    the optimum is positive, which is when the target has two states or more: a target
    on one state ``s`` has optimum 0 (every row ``e_s``), and on two states ``s, t`` a
    count error 0 needs the rows ``e_s`` and ``e_t``, whose column ``t`` goes from 0 to 1
    along a path of the (connected) graph, beyond every ratio ``lam``.

    Raises
    ------
    dpfix.explore.search.PredicateError
        The computation raised at an instance (the first in visiting order).

    Examples
    --------
    >>> s = joint_gap_survey(shapes=((2, 2),), totals=(1,))
    >>> s.visited, s.optimal, s.found
    (4, 4, False)
    """
    totals = _totals(deprecated, totals, "joint_gap_survey")
    lams = tuple(exact_lam(x) for x in one_or_many(lam))
    check = _Recorded(matrices=False)
    result = survey(check, over="instance", instances=joint_instances(shapes, totals, lams,
                                                                      unit),
                    budget=budget, jobs=jobs, cache=cache, progress=progress)
    if result.errors:
        raise result.errors[0]
    ratios, worst = [], (Fraction(1), None)
    for ce in result.failures:
        p, o = check.gap(ce.instance)[:2]
        if o > 0:
            ratios.append(p / o)
            if p / o > worst[0]:
                worst = (p / o, ce.instance)
    visited = itertools.islice(joint_instances(shapes, totals, lams, unit), result.visited)
    held_positive = sum(1 for inst in visited if _support(inst) > 1) - \
        sum(1 for ce in result.failures if _support(ce.instance) > 1)
    count = len(ratios) + held_positive
    mean = float((sum(ratios, Fraction(0)) + held_positive) / count) if count else 1.0
    inst = worst[1]
    return JointGapSurvey(
        counts=result.counts, failures=result.failures, errors=result.errors,
        visited=result.visited, complete=result.complete, elapsed=result.elapsed,
        stopped=result.stopped, optimal=result.visited - len(result.failures),
        lam=lams[0] if len(lams) == 1 else lams, unit=unit, worst_ratio=worst[0],
        worst_z=None if inst is None else grid_text(inst.z, inst.shape), mean_ratio=mean,
        worst_instance=inst)
