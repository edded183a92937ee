"""Lemma 2 and Theorem 4: B in R_F is extreme iff it is Psi-affinely simplified
iff no non-zero movement matrix vanishes wherever B vanishes.

Checked exactly on every vertex of R_F and on points of R_F that are not
extreme (midpoints of vertices, random interior points), against cddlib's
vertex enumeration and the exact rank test of RF.is_extreme.
"""

from __future__ import annotations

import sys

import numpy as np

from dpfix.cases import midpoints, polytope, random_convex_point, rf_grid, rf_vertices
from dpfix.representation import has_movement_in_support, is_psi_affinely_simplified

RESULT = "Lemma 2, Theorem 4"
STATEMENT = "B in R_F is extreme iff Psi-affinely simplified iff no movement fits its support"


def run(mode: str = "quick") -> int:
    rng = np.random.default_rng(4)
    cases = 0
    for n, lam, name, z in rf_grid(mode):
        Rz = polytope("RF", n, lam, z)
        verts = rf_vertices(n, lam, z)
        keys = {tuple(V.ravel()) for V in verts}
        others = midpoints(verts, 25) + [random_convex_point(rng, verts, 4) for _ in range(5)]
        for B, expected in [(V, True) for V in verts] + [(X, None) for X in others]:
            where = f"n={n}, lam={lam}, z={name}, B={B.tolist()}"
            is_vertex = tuple(B.ravel()) in keys
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
