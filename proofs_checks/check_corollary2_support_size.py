"""Corollary 2: an extreme B of R_F has between |P| and |P| + n - 1 positive
entries, P = {j : z_j > 0}.

Checked exactly on every vertex of R_F over the grid (full mode: R_F at n = 4
for every z, up to 44,358 vertices each, enumerated by Normaliz and counted on
the integer numerators); the check also reports that both bounds are attained
somewhere on the grid (they are tight).
"""

from __future__ import annotations

import sys

from dpfix.explore.cases import grid, ns_for, polytope, rf_grid
from dpfix.theory.enumeration import normaliz_available

RESULT = "Corollary 2"
STATEMENT = "extreme B of R_F has between |P| and |P| + n - 1 positive entries"


def run(mode: str = "quick") -> int:
    cases = 0
    attained_low = attained_high = False
    # R_F at n = 4 for every z needs Normaliz (cdd: the zero-entry z only)
    for n, lam, name, z in grid(ns_for(mode)) if normaliz_available() else rf_grid(mode):
        c, low, high = check_at(n, lam, name, z)
        cases, attained_low, attained_high = cases + c, attained_low | low, attained_high | high
    assert attained_low and attained_high, "a bound of Corollary 2 is never attained"
    return cases


def every_lam(n: int, cases: list) -> int:
    """The check at size ``n`` at each ``(lam, z_name, z)`` of ``cases`` (``dpfix verify
    --every-lam``: a rational point of every chamber and every breakpoint, an irrational
    one as an algebraic lam, the check then exact over Q(lam))."""
    return sum(check_at(n, lam, name, z)[0] for lam, name, z in cases)


def check_at(n: int, lam, name: str, z) -> tuple[int, bool, bool]:
    """``(vertices checked, lower bound attained, upper bound attained)``."""
    p = sum(1 for v in z if v > 0)
    Rz = polytope("RF", n, lam, z)
    if Rz.algebraic:  # over Q(lam): every vertex, its entries' signs decided exactly
        counts = [sum(1 for v in B.flat if v > 0) for B in Rz.vertices(limit=None)]
    else:  # denominators are positive: an entry is positive iff its numerator is
        counts = (Rz.vertex_array(limit=None).numerators > 0).sum(axis=1).tolist()
    low = high = False
    for k in counts:
        assert p <= k <= p + n - 1, (f"{k} positive entries outside [{p}, {p + n - 1}]: "
                                     f"n={n}, lam={lam}, z={name}")
        low |= k == p
        high |= k == p + n - 1
    return len(counts), low, high


if __name__ == "__main__":
    print(run("full" if "--full" in sys.argv else "quick"), "cases checked")
