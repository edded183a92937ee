"""Theorem 3: Psi is an affine surjection from R_F onto F.

Both inclusions, exactly: Psi maps every vertex of R_F and random points of R_F
into F; every vertex of F and random points of F have a preimage in R_F
(decompose, then membership of R_F). R_F at n = 4 (full mode, every z of the
grid; up to 44,358 vertices, enumerated by Normaliz) is checked on a seeded
sample of SAMPLE vertices. Full mode adds F at n = 5 for the uniform z
(1,169,850 vertices at lam = 2, enumerated by Normaliz): both ways on sampled
vertices, a sample of F's vertices, and vertices of R_F found by exact LPs with
random objectives (R_F at n = 5 is not enumerated).
"""

from __future__ import annotations

import sys

import numpy as np

from dpfix.explore.cases import (
    LAMS,
    grid,
    ns_for,
    polytope,
    random_convex_point,
    random_lam,
    random_z,
    rf_grid,
    standard_z,
)
from dpfix.theory.enumeration import normaliz_available
from dpfix.theory.representation import decompose, psi_map

#: Vertices checked per polytope when it has more (R_F at n = 4, F at n = 5).
SAMPLE = 400
#: Vertices of R_F(5) found by exact LPs per lam (full mode).
N5_LPS = 10

RESULT = "Theorem 3"
STATEMENT = "Psi maps R_F onto F (both inclusions, on vertices and random points)"


def check_case(n, lam, z, rng, random_points: int = 4) -> int:
    Fz, Rz = polytope("F", n, lam, z), polytope("RF", n, lam, z)
    cases = 0
    bverts = Rz.sample_vertices(SAMPLE, seed=n, limit=None)
    for B in bverts + [random_convex_point(rng, bverts) for _ in range(random_points)]:
        assert Fz.contains(psi_map(B, lam)), f"Psi B not in F: n={n}, lam={lam}, z={z}"
        cases += 1
    tverts = Fz.sample_vertices(SAMPLE, seed=n, limit=None)
    for T in tverts + [random_convex_point(rng, tverts) for _ in range(random_points)]:
        B = decompose(T, lam)
        assert Rz.contains(B), f"no preimage in R_F: n={n}, lam={lam}, z={z}, T={T.tolist()}"
        assert (psi_map(B, lam) == T).all()
        cases += 1
    return cases


def run(mode: str = "quick") -> int:
    rng = np.random.default_rng(3)
    cases = 0
    # R_F at n = 4 for every z needs Normaliz (cdd: the zero-entry z only)
    for n, lam, _, z in grid(ns_for(mode)) if normaliz_available() else rf_grid(mode):
        cases += check_case(n, lam, z, rng)
    if mode == "full":
        cases += check_n5(rng)
    for _ in range(6 if mode == "full" else 3):  # random rational z and lam
        n = int(rng.integers(2, 4))
        cases += check_case(n, random_lam(rng), random_z(rng, n, zeros=int(rng.integers(0, 2))),
                            rng)
    return cases


def every_lam(n: int, cases: list) -> int:
    """The check at size ``n`` at each ``(lam, z_name, z)`` of ``cases`` (``dpfix verify
    --every-lam``: a rational point of every chamber and every breakpoint, an irrational
    one as an algebraic lam, the check then exact over Q(lam))."""
    rng = np.random.default_rng(3)
    return sum(check_case(n, lam, z, rng) for lam, _, z in cases)


def check_n5(rng, lams=LAMS) -> int:
    """F(5, lam, uniform z): sampled vertices of F have preimages in R_F; vertices of
    R_F(5) from exact LPs map into F."""
    n, z = 5, standard_z(5)["uniform"]
    cases = 0
    for lam in lams:
        Fz, Rz = polytope("F", n, lam, z), polytope("RF", n, lam, z)
        tverts = Fz.sample_vertices(SAMPLE, seed=5)
        assert Fz.count_vertices() > len(tverts)
        for T in tverts + [random_convex_point(rng, tverts) for _ in range(4)]:
            B = decompose(T, lam)
            assert Rz.contains(B), f"no preimage in R_F: n=5, lam={lam}, T={T.tolist()}"
            assert (psi_map(B, lam) == T).all()
            cases += 1
        bverts = [Rz.maximize(rng.integers(-9, 10, size=Rz.shape).astype(object))[1]
                  for _ in range(N5_LPS)]
        for B in bverts + [random_convex_point(rng, bverts) for _ in range(4)]:
            assert Fz.contains(psi_map(B, lam)), f"Psi B not in F: n=5, lam={lam}"
            cases += 1
    return cases


if __name__ == "__main__":
    print(run("full" if "--full" in sys.argv else "quick"), "cases checked")
