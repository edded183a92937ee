"""Corollary 3 (Theorem 9 with Phi = Psi): for B in R_F, Psi B is extreme in F
iff some D = Psi^T C has B in its maximising face over R_F and Psi maps that
whole face to one point.

Checked exactly on every vertex B of R_F (a seeded sample of SAMPLE vertices
per case at n = 4, where R_F has thousands). With T = Psi B, take C = the sum of
the normals of the inequalities of F tight at T, so that the face of F
maximising <C, .> is the smallest face of F containing T:
- T extreme: that face is {T}; the maximising face of R_F for D = Psi^T C
  (its vertices, by exact enumeration) contains B and maps to T alone;
- T not extreme: the smallest face containing T has dimension >= 1 (exact rank),
  so for every C whose face contains T, the face contains a segment through T
  and its preimage cannot map to one point; the check also confirms that the
  maximising face for this D maps to two or more points.

Full mode takes R_F at n = 4 for every z (Normaliz) and adds n = 5 with the
uniform z, sampled: vertices B of R_F(5) (extreme preimages of sampled
vertices of F(5), and exact LP optima), where the maximising face of R_F(5)
(beyond enumeration) is a polytope of its own (Polytope.face) and "maps to one
point" is decided by exact LPs: the least and the greatest value over the face
of every entry of Psi B.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from dpfix.explore.cases import LAMS, grid, ns_for, polytope, rf_grid, standard_z
from dpfix.numbers.exact import rank
from dpfix.theory.enumeration import VertexArray, best_values, normaliz_available
from dpfix.theory.representation import extreme_preimage, psi_map
from dpfix.theory.scales import psi

#: Vertices of R_F checked per case when there are more (n = 4, full mode).
SAMPLE = 150
#: Vertices B of R_F(5, lam, uniform z) per lam (full mode): from extreme preimages of
#: vertices of F, and from LPs with random objectives.
N5_PREIMAGES = 2
N5_LPS = 2

RESULT = "Corollary 3"
STATEMENT = ("Psi B is extreme in F iff some D = Psi^T C is maximised by B on a face "
             "Psi maps to one point")


def run(mode: str = "quick") -> int:
    cases = preserved = broken = 0
    # R_F at n = 4 for every z needs Normaliz (cdd: the zero-entry z only)
    for n, lam, name, z in grid(ns_for(mode)) if normaliz_available() else rf_grid(mode):
        c, p, b = check_at(n, lam, name, z)
        cases, preserved, broken = cases + c, preserved + p, broken + b
    if mode == "full":
        p5, b5, c5 = check_n5()
        preserved, broken, cases = preserved + p5, broken + b5, cases + c5
    assert preserved and broken, "the grid lacks one side of Corollary 3"
    return cases


def every_lam(n: int, cases: list) -> int:
    """The check at size ``n`` at each ``(lam, z_name, z)`` of ``cases`` (``dpfix verify
    --every-lam``: a rational point of every chamber and every breakpoint, an irrational
    one as an algebraic lam, the check then exact over Q(lam))."""
    return sum(check_at(n, lam, name, z)[0] for lam, name, z in cases)


def check_at(n: int, lam, name: str, z) -> tuple[int, int, int]:
    """``(vertices checked, preserved, broken)`` at one case."""
    cases = preserved = broken = 0
    Fz, Rz = polytope("F", n, lam, z), polytope("RF", n, lam, z)
    va, images = _vertices_and_images(Rz, lam)
    rng = np.random.default_rng(n)
    chosen = (range(len(va)) if len(va) <= SAMPLE else
              np.sort(rng.choice(len(va), SAMPLE, replace=False)))
    for b in chosen:
        B = va[int(b)]
        T = psi_map(B, lam)
        where = f"n={n}, lam={lam}, z={name}, B={B.tolist()}"
        if not Rz.algebraic:
            assert VertexArray.from_matrices([T], T.shape).keys() == {
                images[int(b)]}, f"psi_images disagrees with psi_map: {where}"
        D = face_objective(Fz, T, lam)
        _, face = best_values(va, list(D.ravel()))  # the maximising face, exactly
        assert int(b) in set(face.tolist()), f"B does not maximise <D, .>: {where}"
        points = {images[int(f)] for f in face}
        if Fz.is_extreme(T):
            assert points == {images[int(b)]}, \
                f"face maps to {len(points)} points: {where}"
            preserved += 1
        else:
            face_dim = n * n - rank(Fz.active_constraints(T))
            assert face_dim >= 1, f"non-extreme T on a 0-dimensional face: {where}"
            assert len(points) >= 2, f"face of a non-extreme image maps to a point: {where}"
            broken += 1
        cases += 1
    return cases, preserved, broken


def _vertices_and_images(Rz, lam) -> tuple[Any, list[tuple]]:
    """Every vertex of R_F and a key of its image under Psi (equal keys iff equal images):
    over Q, the compact :meth:`vertex_array` and the exact integer rows of
    :meth:`psi_images`; over Q(lam), the vertices as exact matrices and the entries of
    ``Psi B``."""
    if Rz.algebraic:
        verts = Rz.vertices(limit=None)
        return verts, [tuple(psi_map(B, lam).ravel()) for B in verts]
    images = Rz.psi_images(limit=None).full_rows()  # Psi of every vertex, exact integers
    return Rz.vertex_array(limit=None), [tuple(r) for r in images.tolist()]


def face_objective(Fz, T, lam):
    """D = Psi^T C with C the sum of the normals of F's inequalities tight at T (the
    face of F maximising <C, .> is the smallest face containing T)."""
    n = Fz.n
    slack = Fz.b_ub - Fz.A_ub.dot(T.ravel())
    tight = [i for i, s in enumerate(slack) if s == 0]
    C = (Fz.A_ub[tight].sum(axis=0) if tight else np.zeros(n * n, dtype=object))
    return psi(n, lam).T.dot(C.reshape(n, n))


def check_n5(lams=LAMS) -> tuple[int, int, int]:
    """Sampled B of R_F(5, lam, uniform z); the face of R_F maximising D is a polytope
    of its own, and its image under Psi is a point iff every entry of Psi B takes one
    value on it (2 n^2 exact LPs)."""
    n, z = 5, standard_z(5)["uniform"]
    preserved = broken = cases = 0
    rng = np.random.default_rng(53)
    for lam in lams:
        Fz, Rz = polytope("F", n, lam, z), polytope("RF", n, lam, z)
        P = psi(n, lam)
        bs = [extreme_preimage(T, z, lam) for T in Fz.sample_vertices(N5_PREIMAGES, seed=3)]
        bs += [Rz.maximize(rng.integers(-9, 10, size=Rz.shape).astype(object))[1]
               for _ in range(N5_LPS)]
        for B in bs:
            assert Rz.is_extreme(B)
            T = psi_map(B, lam)
            where = f"n=5, lam={lam}, z=uniform, B={B.tolist()}"
            D = face_objective(Fz, T, lam)
            face = Rz.face(D)
            assert face.contains(B), f"B does not maximise <D, .>: {where}"
            one_point = True
            for i in range(n):
                for j in range(n):
                    E = np.zeros((n, n), dtype=object)
                    E[i, j] = 1
                    G = P.T.dot(E)  # <G, B'> = (Psi B')[i, j]
                    hi, lo = face.maximize(G)[0], -face.maximize(-G)[0]
                    one_point &= hi == lo == T[i, j]
                    if not one_point:
                        break
                if not one_point:
                    break
            if Fz.is_extreme(T):
                assert one_point, f"the face of an extreme image maps to more points: {where}"
                preserved += 1
            else:
                assert not one_point, f"face of a non-extreme image maps to a point: {where}"
                broken += 1
            cases += 1
    return preserved, broken, cases


if __name__ == "__main__":
    print(run("full" if "--full" in sys.argv else "quick"), "cases checked")
