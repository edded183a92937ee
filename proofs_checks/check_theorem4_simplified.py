"""Lemma 2 and Theorem 4: B in R_F is extreme iff it is Psi-affinely simplified
iff no non-zero movement matrix vanishes wherever B vanishes.

Checked exactly on every vertex of R_F and on points of R_F that are not
extreme (midpoints of vertices, random interior points), against the exact
vertex enumeration (cddlib or Normaliz) and the exact rank test of
RF.is_extreme. Full mode takes R_F at n = 4 for every z (Normaliz, up to 44,358
vertices): a seeded sample of SAMPLE vertices, with membership of the whole
vertex set decided on its exact integer rows. Both modes also take every vertex
of R_F at n = 4 for lam = 2 and the z with a zero entry (WEIGHTED_CASE, 4,421
vertices, enumerated in about a second): the weights 1 / (z . Psi_i) of the
difference vectors first matter at n = 4, and a few of these vertices have
linearly dependent unweighted differences.
"""

from __future__ import annotations

import sys
from fractions import Fraction

import numpy as np

from dpfix.explore.cases import (
    grid,
    midpoints,
    ns_for,
    polytope,
    random_convex_point,
    rf_grid,
    standard_z,
)
from dpfix.theory.enumeration import normaliz_available
from dpfix.theory.representation import has_movement_in_support, is_psi_affinely_simplified

#: Vertices of R_F checked per case when there are more (n = 4, full mode).
SAMPLE = 300

#: (n, lam, z name) whose every vertex is checked to be Psi-affinely simplified.
WEIGHTED_CASE = (4, Fraction(2), "zero")

RESULT = "Lemma 2, Theorem 4"
STATEMENT = "B in R_F is extreme iff Psi-affinely simplified iff no movement fits its support"


def run(mode: str = "quick") -> int:
    rng = np.random.default_rng(4)
    cases = 0
    # R_F at n = 4 for every z needs Normaliz (cdd: the zero-entry z only)
    for n, lam, name, z in grid(ns_for(mode)) if normaliz_available() else rf_grid(mode):
        cases += check_at(n, lam, name, z, rng)
    n, lam, name = WEIGHTED_CASE
    z = standard_z(n)[name]
    for B in polytope("RF", n, lam, z).sample_vertices(10**6, limit=None):  # every vertex
        assert is_psi_affinely_simplified(B, z, lam), \
            f"Theorem 4 fails at a vertex: n={n}, lam={lam}, z={name}, B={B.tolist()}"
        cases += 1
    return cases


def every_lam(n: int, cases: list) -> int:
    """The check at size ``n`` at each ``(lam, z_name, z)`` of ``cases`` (``dpfix verify
    --every-lam``: a rational point of every chamber and every breakpoint, an irrational
    one as an algebraic lam, the check then exact over Q(lam))."""
    rng = np.random.default_rng(4)
    return sum(check_at(n, lam, name, z, rng) for lam, name, z in cases)


def check_at(n: int, lam, name: str, z, rng: np.random.Generator) -> int:
    cases = 0
    Rz = polytope("RF", n, lam, z)
    verts = Rz.sample_vertices(SAMPLE, seed=n, limit=None)  # every vertex at n <= 3
    others = midpoints(verts, 25) + [random_convex_point(rng, verts, 4) for _ in range(5)]
    for B, expected in [(V, True) for V in verts] + [(X, None) for X in others]:
        where = f"n={n}, lam={lam}, z={name}, B={B.tolist()}"
        is_vertex = Rz.has_vertex(B)  # exact, against the whole enumeration
        if expected is not None:
            assert is_vertex
        simplified = is_psi_affinely_simplified(B, z, lam)
        assert simplified == is_vertex, f"Theorem 4 fails ({simplified=}): {where}"
        assert has_movement_in_support(B, z, lam) == (not simplified), f"Lemma 2: {where}"
        assert Rz.is_extreme(B) == is_vertex, f"is_extreme disagrees with cdd: {where}"
        cases += 1
    return cases


if __name__ == "__main__":
    print(run("full" if "--full" in sys.argv else "quick"), "cases checked")
