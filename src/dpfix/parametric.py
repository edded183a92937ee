"""``dpfix.parametric``: the public names of :mod:`dpfix.theory.parametric` under the
short path the documentation prints (``dpfix.parametric.chambers``).

The chambers and breakpoints of U, F and R_F in lam, their method and its proof are in
:mod:`dpfix.theory.parametric` (docs/every_lam.md); this module defines nothing and
holds the same objects, so ``dpfix.parametric.chambers is
dpfix.theory.parametric.chambers``.

Examples
--------
>>> import dpfix.parametric
>>> dpfix.parametric.chambers("U", 3).counts()
[27]
>>> from dpfix.parametric import interval_around
>>> interval_around("U", 4, 2).count
664
"""

from dpfix.theory.parametric import (
    AROUND_LIMITS,
    GRAPH_LIMITS,
    KINDS,
    LIMITS,
    AlgebraicPoint,
    Chambers,
    Piece,
    breakpoint_number,
    chambers,
    interval_around,
)

__all__ = ["KINDS", "LIMITS", "AROUND_LIMITS", "GRAPH_LIMITS", "Piece", "Chambers", "chambers",
           "interval_around", "breakpoint_number", "AlgebraicPoint"]
