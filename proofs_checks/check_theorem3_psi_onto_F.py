"""Theorem 3: Psi is an affine surjection from R_F onto F.

Both inclusions, exactly: Psi maps every vertex of R_F and random points of R_F
into F; every vertex of F and random points of F have a preimage in R_F
(decompose, then membership of R_F).
"""

from __future__ import annotations

import sys

import numpy as np

from dpfix.cases import (
    polytope,
    random_convex_point,
    random_lam,
    random_z,
    rf_grid,
    rf_vertices,
)
from dpfix.representation import decompose, psi_map

RESULT = "Theorem 3"
STATEMENT = "Psi maps R_F onto F (both inclusions, on vertices and random points)"


def check_case(n, lam, z, rng, random_points: int = 4) -> int:
    Fz, Rz = polytope("F", n, lam, z), polytope("RF", n, lam, z)
    cases = 0
    bverts = rf_vertices(n, lam, z)
    for B in bverts + [random_convex_point(rng, bverts) for _ in range(random_points)]:
        assert Fz.contains(psi_map(B, lam)), f"Psi B not in F: n={n}, lam={lam}, z={z}"
        cases += 1
    tverts = Fz.vertices()
    for T in tverts + [random_convex_point(rng, tverts) for _ in range(random_points)]:
        B = decompose(T, lam)
        assert Rz.contains(B), f"no preimage in R_F: n={n}, lam={lam}, z={z}, T={T.tolist()}"
        assert (psi_map(B, lam) == T).all()
        cases += 1
    return cases


def run(mode: str = "quick") -> int:
    rng = np.random.default_rng(3)
    cases = 0
    for n, lam, _, z in rf_grid(mode):
        cases += check_case(n, lam, z, rng)
    for _ in range(6 if mode == "full" else 3):  # random rational z and lam
        n = int(rng.integers(2, 4))
        cases += check_case(n, random_lam(rng), random_z(rng, n, zeros=int(rng.integers(0, 2))),
                            rng)
    return cases


if __name__ == "__main__":
    print(run("full" if "--full" in sys.argv else "quick"), "cases checked")
