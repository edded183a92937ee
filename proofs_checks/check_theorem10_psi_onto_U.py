"""Theorem 10: Psi maps R_U = {B >= 0 : Psi B 1 = 1} onto U.

Both inclusions, exactly: every vertex of R_U (and random points of it) maps
into U; every vertex of U (and random points of it) decomposes as Psi B with B
in R_U. Full mode adds n = 5: a seeded sample of N5_SAMPLE of the 55,725
vertices of U (Normaliz) decompose into R_U, and vertices of R_U found by exact
LPs with random objectives (R_U at n = 5 is not enumerated) map into U.
"""

from __future__ import annotations

import sys

import numpy as np

from dpfix.explore.cases import LAMS, ns_for, polytope, random_convex_point
from dpfix.theory.representation import decompose, psi_map

#: Vertices of U(5, lam) decomposed, and LP vertices of R_U(5, lam) mapped, per lam.
N5_SAMPLE = 200
N5_LPS = 20

RESULT = "Theorem 10"
STATEMENT = "Psi maps R_U onto U (both inclusions, on vertices and random points)"


def run(mode: str = "quick") -> int:
    rng = np.random.default_rng(10)
    cases = 0
    for n in ns_for(mode) + ((5,) if mode == "full" else ()):
        for lam in LAMS:
            Un, Rn = polytope("U", n, lam), polytope("RU", n, lam)
            try:
                bverts = Rn.vertices()
            except ValueError:  # beyond the enumeration guard: vertices of R_U by exact LPs
                bverts = [Rn.maximize(rng.integers(-9, 10, size=Rn.shape).astype(object))[1]
                          for _ in range(N5_LPS)]
            for B in bverts + ([random_convex_point(rng, bverts)] if bverts else []):
                assert Un.contains(psi_map(B, lam)), f"Psi B not in U: n={n}, lam={lam}"
                cases += 1
            tverts = Un.vertices() if n <= 4 else Un.sample_vertices(N5_SAMPLE, seed=10)
            for T in tverts + [random_convex_point(rng, tverts) for _ in range(3)]:
                B = decompose(T, lam)
                assert Rn.contains(B), f"no preimage in R_U: n={n}, lam={lam}"
                cases += 1
    return cases


if __name__ == "__main__":
    print(run("full" if "--full" in sys.argv else "quick"), "cases checked")
