"""Floor 3, constructors: count mechanisms and their one registry (paper Sections 5-6;
docs/math_notes.md, docs/open_questions.md).

Every constructor returns a :class:`dpfix.theory.mechanism.Mechanism`; it is exact
(Fractions) when given a rational ``lam`` and rational ``z``, and float when
given ``eps``. :func:`construct` reaches each by its registry name, the name
:attr:`Mechanism.constructor` holds, and the one the pipeline, the
experiments and the command line use:

- ``"heuristic"``: :func:`heuristic`, Algorithm 1, an extreme point of F in O(n^2);
- ``"lp"``: :func:`lp_optimum`, the count-error optimum over F (or U) by LP;
- ``"northwest"``: :func:`northwest_corner`, the northwest-corner split (fixed point z);
- ``"unfixed"``: :func:`unfixed_optimum`, Algorithm 2, the optimum over U;
- ``"truncated-geometric"``: :func:`truncated_geometric`, one-stage, clamped geometric noise;
- ``"staircase"``: :func:`staircase`, one-stage, clamped rounded staircase noise;
- ``"discrete-gaussian"``: :func:`discrete_gaussian`, one-stage, (eps, delta)-DP;
- ``"delta-northwest"``: :func:`delta_northwest_corner`, the delta-northwest corner,
  the optimum of ``F_delta`` for every convex loss (Theorem A_delta); ``"lp"`` takes
  ``delta=`` too (the delta LP of :mod:`dpfix.constructors.delta`). The
  delta-northwest corner is a research constructor (``release=False``): the release
  samples eps-DP mechanisms exactly and has no exact check of an (eps, delta) table.

Mechanisms on pairs of counts are not in the registry (their states are pairs, not one
count): :mod:`dpfix.constructors.joint` builds them (``product_transport``,
``grid_lp_optimum``, ``joint_sampler``; docs/joint.md).

May import: :mod:`dpfix.numbers`, :mod:`dpfix.sampling`, :mod:`dpfix.theory`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from dpfix.constructors.additive import discrete_gaussian, staircase, truncated_geometric
from dpfix.constructors.delta import delta_northwest_corner
from dpfix.constructors.heuristic import (
    SELECTORS,
    heuristic,
    heuristic_steps,
    scale_representation,
)
from dpfix.constructors.lp import lp_formulation, lp_optimum
from dpfix.constructors.northwest import northwest_corner, northwest_plan
from dpfix.constructors.unfixed import sigma_amounts, unfixed_optimum
from dpfix.numbers.deprecation import renamed
from dpfix.numbers.exact import resolve_lam
from dpfix.numbers.numeric import check_n
from dpfix.theory.mechanism import Mechanism

__all__ = [
    "construct",
    "CONSTRUCTORS",
    "ConstructorInfo",
    "heuristic",
    "SELECTORS",
    "heuristic_steps",
    "scale_representation",
    "unfixed_optimum",
    "sigma_amounts",
    "lp_optimum",
    "lp_formulation",
    "northwest_corner",
    "northwest_plan",
    "truncated_geometric",
    "staircase",
    "discrete_gaussian",
    "delta_northwest_corner",
]


@dataclass(frozen=True)
class ConstructorInfo:
    """One entry of :data:`CONSTRUCTORS`.

    Attributes
    ----------
    function : the name of the function in :mod:`dpfix.constructors` (looked
        up when called).
    stage : ``"two-stage"`` (needs a target ``z`` from stage 1) or
        ``"one-stage"`` (only ``n``; spends all of the budget on the counts).
    fixed_point : whether the mechanism keeps ``z`` (``z T = z``).
    options : the keyword options :func:`construct` passes on.
    summary : one line for help texts.
    release : whether :func:`dpfix.release.pipeline.privatize_counts` (and ``dpfix
        privatize``) offer it: False for a research constructor.
    """

    function: str
    stage: str
    fixed_point: bool
    options: tuple[str, ...]
    summary: str
    release: bool = True


#: registry name -> :class:`ConstructorInfo`; ``Mechanism.constructor`` holds these names.
CONSTRUCTORS: dict[str, ConstructorInfo] = {
    "heuristic": ConstructorInfo(
        "heuristic", "two-stage", True, ("selector", "seed"),
        "Algorithm 1: an extreme point of F in O(n^2) (Theorems 5, 6)"),
    "lp": ConstructorInfo(
        "lp_optimum", "two-stage", True,
        ("loss", "fixed", "solver", "time_limit", "options", "delta"),
        "the least count error over F by linear programming (small n; delta= for F_delta)"),
    "northwest": ConstructorInfo(
        "northwest_corner", "two-stage", True, (),
        "the northwest-corner split of the geometric mechanism: fixed point z, O(n^2)"),
    "unfixed": ConstructorInfo(
        "unfixed_optimum", "two-stage", False, ("loss", "check"),
        "Algorithm 2: the least count error over U (Theorems 7, 8)"),
    "truncated-geometric": ConstructorInfo(
        "truncated_geometric", "one-stage", False, (),
        "clamped two-sided geometric noise (Ghosh et al. 2009)"),
    "staircase": ConstructorInfo(
        "staircase", "one-stage", False, (),
        "clamped, rounded staircase noise (Geng et al. 2015)"),
    "discrete-gaussian": ConstructorInfo(
        "discrete_gaussian", "one-stage", False, ("delta",),
        "clamped discrete Gaussian noise, (eps, delta)-DP (Canonne et al. 2020)"),
    "delta-northwest": ConstructorInfo(
        "delta_northwest_corner", "two-stage", True, ("delta",),
        "the delta-northwest corner: the optimum of F_delta for every convex loss "
        "(Theorem A_delta)", release=False),
}


def construct(z: Any, eps: float | None = None, *, lam: Any = None,
              constructor: str = "northwest", n: int | None = None, **options: Any) -> Mechanism:
    """Build a count mechanism by its registry name.

    Parameters
    ----------
    z : array_like or None
        The target distribution (length ``n``). Exact numbers (ints,
        Fractions, strings such as ``"1/3"``) with a rational ``lam`` give an
        exact mechanism; floats with ``eps`` a float one. The one-stage methods
        need no target: give ``z=None`` and ``n=``, or a ``z`` whose length
        is ``n`` (its values are then not used).
    eps : float, optional
        The privacy parameter: the float path.
    lam : int, Fraction or str, optional
        ``e^eps`` as a rational ``> 1``: the exact path.
    constructor : str
        A name in :data:`CONSTRUCTORS`: ``"northwest"`` (default),
        ``"heuristic"``, ``"lp"``, ``"unfixed"``, ``"truncated-geometric"``,
        ``"staircase"`` or ``"discrete-gaussian"`` (float only, needs ``delta=``).
    n : int, optional
        The size, for the one-stage methods when ``z`` is None.
    **options
        Passed to the constructor; the accepted names are
        ``CONSTRUCTORS[constructor].options``. For ``"lp"``, ``solver`` is
        ``lp_optimum``'s ``solver`` (``"highs-ds"``, ``"highs-ipm"`` or
        ``"exact"``; default ``"exact"`` on the exact path, ``"highs-ds"`` on floats).
        ``method=`` (for ``constructor=``) and ``weights=`` (for ``loss=``) are
        deprecated aliases: they warn (``DeprecationWarning``).

    Returns
    -------
    Mechanism
        Whose ``constructor`` attribute is ``constructor``.

    Raises
    ------
    ValueError
        An unknown constructor (the message names the choices), an option the
        constructor does not take, a missing ``z`` or ``n``, or bad input.
    TypeError
        A new name and its deprecated alias given at once.

    Notes
    -----
    The constructors and the results they implement: Algorithm 1 (Theorems 5
    and 6), Algorithm 2 (Theorems 7, 8 and 12), the LP optimum over F, and the
    northwest-corner split, optimal over F for every convex loss (Theorem A,
    docs/optimum_of_F.md); docs/math_notes.md.

    Examples
    --------
    >>> construct(["1/2", "1/2"], lam=2).matrix.tolist()
    [[Fraction(2, 3), Fraction(1, 3)], [Fraction(1, 3), Fraction(2, 3)]]
    >>> construct([0.5, 0.5], 1.0, constructor="heuristic", selector="max").constructor
    'heuristic'
    >>> construct(None, lam=2, constructor="truncated-geometric", n=3).matrix[1].tolist()
    [Fraction(1, 3), Fraction(1, 3), Fraction(1, 3)]
    >>> construct([0.5, 0.5], 1.0, constructor="simplex")
    Traceback (most recent call last):
    ...
    ValueError: constructor: unknown 'simplex'; choose from heuristic, lp, northwest, unfixed, ...
    """
    name = renamed("method", "constructor", options, constructor, "northwest",
                   where="construct")
    if "weights" in options:
        options["loss"] = renamed("weights", "loss", options, options.pop("loss", None),
                                  where="construct")
    info = CONSTRUCTORS.get(name) if isinstance(name, str) else None
    if info is None:
        raise ValueError(f"constructor: unknown {name!r}; "
                         f"choose from {', '.join(CONSTRUCTORS)}")
    extra = sorted(set(options) - set(info.options))
    if extra:
        takes = ", ".join(info.options) if info.options else "no options"
        raise ValueError(f"{extra[0]}: not an option of constructor {name!r} (it takes {takes})")
    if eps is None and lam is not None:
        # the mechanisms construct() hands on are rational (their display, release and
        # reports are over Q); the named constructors northwest_corner, heuristic and
        # unfixed_optimum also take an algebraic lam, for the checks over Q(lam)
        resolve_lam(eps, lam)
    # looked up at call time, so that a replaced dpfix.constructors.<function> is used
    function = getattr(sys.modules[__name__], info.function)
    if info.stage == "one-stage":
        if z is not None:
            size = len(z)
            if n is not None and check_n(n) != size:
                raise ValueError(f"n: {n} does not match len(z) = {size}")
            n = size
        if n is None:
            raise ValueError(f"n: constructor {name!r} needs n (or a z of length n)")
        n = check_n(n)
        if name == "discrete-gaussian":
            if lam is not None:
                raise ValueError("lam: the discrete Gaussian has no exact path; give eps")
            if "delta" not in options:
                raise ValueError("delta: constructor 'discrete-gaussian' is (eps, delta)-DP; "
                                 "give delta")
            return function(n, eps, options["delta"])
        return function(n, eps, lam=lam)
    if z is None:
        raise ValueError(f"z: constructor {name!r} needs a target distribution z")
    if n is not None and check_n(n) != len(z):
        raise ValueError(f"n: {n} does not match len(z) = {len(z)}")
    if name == "lp":
        solver = options.pop("solver", None)
        if solver is None:
            lam_x, _ = resolve_lam(eps, lam)
            solver = "exact" if lam_x is not None else "highs-ds"
        options["solver"] = solver
    return function(z, eps, lam=lam, **options)
