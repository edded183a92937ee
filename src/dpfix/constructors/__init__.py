"""Constructors of count mechanisms (MATH.md sections 5-8).

Every constructor returns a :class:`dpfix.mechanism.Mechanism`; it is exact
(Fractions) when given a rational ``lam`` and rational ``z``, and float when
given ``eps``.

- :func:`heuristic`: Algorithm 1, an extreme point of F in ``O(n^2)``;
- :func:`unfixed_optimum`: Algorithm 2, the count-error optimum over U;
- :func:`lp_optimum`: the count-error optimum over F (or U) by linear programming;
- :func:`northwest_corner`: the optimum among ``T = Sigma A``, ``A >= 0``, in
  ``O(n^2)``; conjectured optimal over all of F (``docs/open_questions.md``);
- :func:`truncated_geometric`, :func:`staircase`, :func:`discrete_gaussian`:
  the unfixed one-stage baselines.
"""

from dpfix.constructors.baselines import discrete_gaussian, staircase, truncated_geometric
from dpfix.constructors.heuristic import (
    SELECTORS,
    heuristic,
    heuristic_steps,
    scale_representation,
)
from dpfix.constructors.lp import lp_formulation, lp_optimum
from dpfix.constructors.northwest import northwest_corner, northwest_plan
from dpfix.constructors.unfixed import sigma_amounts, unfixed_optimum

__all__ = [
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
]
