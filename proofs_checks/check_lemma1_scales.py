"""Lemma 1: the columns of any T in U are conic combinations of eps-scales, and
the extreme points of the normalised cone Q = {v : Pi v <= 0, 1.v = 1} are
exactly the 2^(n-1) scales.

Checked exactly: Q's vertices enumerated by cddlib (over Q(lam), lam algebraic: by
Normaliz's number-field input) equal the columns of Psi (as sets); every vertex of U,
and random exact points of U, decompose as T = Psi B with B >= 0. Full mode adds U
at n = 5 (55,725 vertices for each lam, enumerated by Normaliz): a seeded sample of
N5_SAMPLE of its vertices and random points between them decompose.
"""

from __future__ import annotations

import sys
from fractions import Fraction

import cdd.gmp
import numpy as np

from dpfix.explore.cases import LAMS, ns_for, polytope, random_convex_point, random_lam
from dpfix.numbers.algebraic import is_algebraic
from dpfix.theory.algebraic_enumeration import normaliz_field_vertices
from dpfix.theory.representation import decompose, psi_map
from dpfix.theory.scales import psi

#: Vertices of U(5, lam) decomposed per lam in full mode (of 55,725).
N5_SAMPLE = 300

EVERY_LAM = "U"  # dpfix verify --every-lam: at the chambers of U(n)
RESULT = "Lemma 1"
STATEMENT = "columns of T in U are conic combinations of scales; ex(Q) = the scales"


def cone_vertices(n: int, lam) -> set[tuple]:
    """Vertices of Q by cddlib, exactly: rows [b, a] mean b + a.v >= 0. Over Q(lam)
    (``lam`` algebraic, beyond cddlib's rationals) by Normaliz's number-field input."""
    if is_algebraic(lam):
        return cone_vertices_field(n, lam)
    rows = []
    for i in range(n - 1):
        up = [Fraction(0)] * (n + 1)
        up[1 + i], up[2 + i] = lam, Fraction(-1)       # lam v_i - v_{i+1} >= 0
        down = [Fraction(0)] * (n + 1)
        down[1 + i], down[2 + i] = Fraction(-1), lam   # lam v_{i+1} - v_i >= 0
        rows += [up, down]
    rows.append([Fraction(-1)] + [Fraction(1)] * n)    # 1.v = 1
    mat = cdd.gmp.matrix_from_array(rows, lin_set={len(rows) - 1},
                                    rep_type=cdd.gmp.RepType.INEQUALITY)
    gens = cdd.gmp.copy_generators(cdd.gmp.polyhedron_from_matrix(mat))
    assert not gens.lin_set, f"Q has a lineality space at n={n}"
    out = set()
    for g in gens.array:
        assert g[0] == 1, f"Q is unbounded at n={n}, lam={lam}"
        out.add(tuple(Fraction(x) for x in g[1:]))
    return out


def cone_vertices_field(n: int, lam) -> set[tuple]:
    """Vertices of Q over Q(lam), exactly: the rows a.v <= b of Q (lam v_i - v_(i+1) >= 0,
    lam v_(i+1) - v_i >= 0) and the equation 1.v = 1, enumerated by Normaliz over the
    number field (Q is bounded there, as Normaliz checks: no recession ray)."""
    ub = []
    for i in range(n - 1):
        ub += [({i: -lam, i + 1: 1}, 0), ({i: 1, i + 1: -lam}, 0)]
    eq = [({i: 1 for i in range(n)}, 1)]
    return {tuple(v) for v in normaliz_field_vertices(ub, eq, n, lam.field)}


def check_cone(n: int, lam) -> int:
    scales = {tuple(col) for col in psi(n, lam).T}
    got = cone_vertices(n, lam)
    assert got == scales, f"ex(Q) != scales at n={n}, lam={lam}"
    return 1


def check_decompositions(n: int, lam, rng: np.random.Generator) -> int:
    poly = polytope("U", n, lam)
    if n <= 4:
        verts = poly.vertices()
    else:  # n = 5: every vertex is enumerated, a seeded sample is decomposed
        verts = poly.sample_vertices(N5_SAMPLE, seed=n)
        assert poly.count_vertices() > len(verts)
    points = list(verts) + [random_convex_point(rng, verts) for _ in range(5)]
    for T in points:
        B = decompose(T, lam)
        assert all(v >= 0 for v in B.flat), f"negative amount, n={n}, lam={lam}"
        assert (psi_map(B, lam) == T).all(), f"Psi B != T at n={n}, lam={lam}"
    return len(points)


def run(mode: str = "quick") -> int:
    rng = np.random.default_rng(1)
    cases = 0
    lams = list(LAMS) + [random_lam(rng) for _ in range(3)]
    for n in range(2, 7 if mode == "full" else 6):
        for lam in lams:
            cases += check_cone(n, lam)
    for n in ns_for(mode) + ((5,) if mode == "full" else ()):
        for lam in LAMS:
            cases += check_decompositions(n, lam, rng)
    return cases


def every_lam(n: int, cases: list) -> int:
    """The check at size ``n`` at each ``(lam, z_name, z)`` of ``cases`` (``dpfix verify
    --every-lam``: a rational point of every chamber and every breakpoint, an irrational
    one as an algebraic lam, the check then exact over Q(lam))."""
    rng = np.random.default_rng(1)
    return sum(check_cone(n, lam) + check_decompositions(n, lam, rng) for lam, _, _ in cases)


if __name__ == "__main__":
    print(run("full" if "--full" in sys.argv else "quick"), "cases checked")
