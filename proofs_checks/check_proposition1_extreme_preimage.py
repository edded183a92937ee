"""Proposition 1: every extreme point T of F is Psi B for an extreme B of R_F.

Checked exactly: the images of the vertices of R_F cover the vertices of F,
and extreme_preimage(T) returns an extreme point of R_F mapping to T. R_F at
n = 4 (full mode, every z of the grid, enumerated by Normaliz) is checked on
every vertex of F; extreme_preimage on a seeded sample of SAMPLE of them. Full
mode adds F at n = 5 for the uniform z (1,169,850 vertices at lam = 2): a
seeded sample of N5_SAMPLE vertices T, each with extreme_preimage(T) extreme in
R_F (exact rank) and mapping to T (R_F at n = 5 is not enumerated, so the cover
is checked through the preimages).
"""

from __future__ import annotations

import sys

import numpy as np

from dpfix.explore.cases import LAMS, grid, ns_for, polytope, rf_grid, standard_z
from dpfix.theory.enumeration import VertexArray, normaliz_available
from dpfix.theory.representation import extreme_preimage, psi_map

#: Vertices of F given to extreme_preimage per case when there are more.
SAMPLE = 300
#: Vertices of F(5, lam, uniform z) checked per lam (full mode).
N5_SAMPLE = 60

RESULT = "Proposition 1"
STATEMENT = "every extreme T of F is Psi B for some extreme B of R_F"


def run(mode: str = "quick") -> int:
    cases = 0
    # R_F at n = 4 for every z needs Normaliz (cdd: the zero-entry z only)
    for n, lam, name, z in grid(ns_for(mode)) if normaliz_available() else rf_grid(mode):
        Fz, Rz = polytope("F", n, lam, z), polytope("RF", n, lam, z)
        images = image_keys(Rz, lam)
        tverts = Fz.vertices()
        rng = np.random.default_rng(n)
        chosen = (set(range(len(tverts))) if len(tverts) <= SAMPLE else
                  {int(i) for i in rng.choice(len(tverts), SAMPLE, replace=False)})
        for i, T in enumerate(tverts):
            where = f"n={n}, lam={lam}, z={name}, T={T.tolist()}"
            key = next(iter(VertexArray.from_matrices([T], T.shape).keys()))
            assert key in images, f"no vertex of R_F maps to {where}"
            if i in chosen:
                check_preimage(T, z, lam, Rz, where)
            cases += 1
    if mode == "full":  # F at n = 5, uniform z: sampled vertices through their preimages
        z = standard_z(5)["uniform"]
        for lam in LAMS:
            Fz, Rz = polytope("F", 5, lam, z), polytope("RF", 5, lam, z)
            for T in Fz.sample_vertices(N5_SAMPLE, seed=5):
                check_preimage(T, z, lam, Rz, f"n=5, lam={lam}, z=uniform, T={T.tolist()}")
                cases += 1
    return cases


def image_keys(Rz, lam) -> set[tuple]:
    """Psi B for every vertex B of R_F, as the primitive integer rows of
    :class:`~dpfix.theory.enumeration.VertexArray` (exact, in integers: RF.psi_images)."""
    return Rz.psi_images(limit=None).keys()


def check_preimage(T, z, lam, Rz, where: str) -> None:
    B = extreme_preimage(T, z, lam)
    assert Rz.is_extreme(B), f"extreme_preimage not extreme: {where}"
    assert (psi_map(B, lam) == T).all(), f"extreme_preimage misses T: {where}"


if __name__ == "__main__":
    print(run("full" if "--full" in sys.argv else "quick"), "cases checked")
