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
"""

from __future__ import annotations

import sys

import numpy as np

from dpfix.cases import polytope, rf_grid, rf_vertices
from dpfix.exact import rank
from dpfix.representation import psi_map
from dpfix.scales import psi

#: Vertices of R_F checked per case when there are more (n = 4, full mode).
SAMPLE = 150

RESULT = "Corollary 3"
STATEMENT = ("Psi B is extreme in F iff some D = Psi^T C is maximised by B on a face "
             "Psi maps to one point")


def run(mode: str = "quick") -> int:
    cases = preserved = broken = 0
    for n, lam, name, z in rf_grid(mode):
        Fz, Rz = polytope("F", n, lam, z), polytope("RF", n, lam, z)
        P = psi(n, lam)
        verts = rf_vertices(n, lam, z)
        if len(verts) > SAMPLE:  # each face costs a pass over all vertices: sample at n = 4
            rng = np.random.default_rng(len(verts))
            verts = [verts[int(i)] for i in rng.choice(len(verts), SAMPLE, replace=False)]
        for B in verts:
            T = psi_map(B, lam)
            where = f"n={n}, lam={lam}, z={name}, B={B.tolist()}"
            x = T.ravel()
            slack = Fz.b_ub - Fz.A_ub.dot(x)
            tight = [i for i, s in enumerate(slack) if s == 0]
            C = (Fz.A_ub[tight].sum(axis=0) if tight else np.zeros(n * n, dtype=object))
            C = C.reshape(n, n)
            D = P.T.dot(C)
            face = Rz.optimal_face_vertices(D, limit=None)
            assert any((V == B).all() for V in face), f"B does not maximise <D, .>: {where}"
            images = {tuple(psi_map(V, lam).ravel()) for V in face}
            if Fz.is_extreme(T):
                assert images == {tuple(x)}, f"face maps to {len(images)} points: {where}"
                preserved += 1
            else:
                face_dim = n * n - rank(Fz.active_constraints(T))
                assert face_dim >= 1, f"non-extreme T on a 0-dimensional face: {where}"
                assert len(images) >= 2, f"face of a non-extreme image maps to a point: {where}"
                broken += 1
            cases += 1
    assert preserved and broken, "the grid lacks one side of Corollary 3"
    return cases


if __name__ == "__main__":
    print(run("full" if "--full" in sys.argv else "quick"), "cases checked")
