"""Proposition 1: every extreme point T of F is Psi B for an extreme B of R_F.

Checked exactly: the images of the vertices of R_F cover the vertices of F,
and extreme_preimage(T) returns an extreme point of R_F mapping to T.
"""

from __future__ import annotations

import sys

from dpfix.cases import polytope, rf_grid, rf_vertices
from dpfix.representation import extreme_preimage, psi_map

RESULT = "Proposition 1"
STATEMENT = "every extreme T of F is Psi B for some extreme B of R_F"


def run(mode: str = "quick") -> int:
    cases = 0
    for n, lam, name, z in rf_grid(mode):
        Fz, Rz = polytope("F", n, lam, z), polytope("RF", n, lam, z)
        images = {tuple(psi_map(B, lam).ravel()) for B in rf_vertices(n, lam, z)}
        for T in Fz.vertices():
            where = f"n={n}, lam={lam}, z={name}, T={T.tolist()}"
            assert tuple(T.ravel()) in images, f"no vertex of R_F maps to {where}"
            B = extreme_preimage(T, z, lam)
            assert Rz.is_extreme(B), f"extreme_preimage not extreme: {where}"
            assert (psi_map(B, lam) == T).all(), f"extreme_preimage misses T: {where}"
            cases += 1
    return cases


if __name__ == "__main__":
    print(run("full" if "--full" in sys.argv else "quick"), "cases checked")
