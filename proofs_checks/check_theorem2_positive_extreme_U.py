"""Theorem 2: a T in U with all entries positive is extreme iff its columns are
linearly independent multiples of eps-scales.

Checked exactly both ways: (a) on every vertex of U with positive entries and
on points of U that are not extreme (midpoints of two vertices, the centroid);
(b) on matrices built as S diag(a) from n chosen scales S with S a = 1, a > 0,
singular and non-singular: U.is_extreme (exact rank of active constraints)
must agree with the scale condition. Full mode adds U at n = 5 (Normaliz
enumerates its 55,725 vertices for each lam): a seeded sample of N5_SAMPLE
positive vertices, midpoints and the centroid of the sample, and built matrices.
"""

from __future__ import annotations

import itertools
import sys
from fractions import Fraction

import numpy as np

from dpfix.explore.cases import LAMS, midpoints, ns_for, polytope
from dpfix.numbers.exact import nullspace, rank
from dpfix.theory.scales import pattern_of, psi

#: Positive vertices of U(5, lam) checked per lam in full mode.
N5_SAMPLE = 300

EVERY_LAM = "U"  # dpfix verify --every-lam: at the chambers of U(n)
RESULT = "Theorem 2"
STATEMENT = "positive T in U is extreme iff its columns are independent multiples of scales"


def columns_are_independent_scales(T: np.ndarray, lam: Fraction) -> bool:
    """The right-hand side of Theorem 2, computed without polytopes."""
    for col in T.T:
        try:
            pattern_of(col, lam)
        except ValueError:
            return False
    return rank(T) == T.shape[0]


def scale_built_matrices(n: int, lam: Fraction, limit: int) -> list[np.ndarray]:
    """T = S diag(a) with S a = 1 for n-subsets (with repetition) of the scales."""
    P = psi(n, lam)
    out = []
    for cols in itertools.islice(itertools.combinations_with_replacement(range(P.shape[1]), n),
                                 limit):
        S = P[:, cols]
        aug = np.concatenate([S, -np.ones((n, 1), dtype=object) * Fraction(1)], axis=1)
        ns = nullspace(aug)  # solutions of S a - t 1 = 0
        for k in range(ns.shape[1]):
            v = ns[:, k]
            if v[-1] == 0:
                continue
            a = v[:-1] / v[-1]
            if all(x > 0 for x in a):
                out.append(S * a[None, :])
    return out


def run(mode: str = "quick") -> int:
    cases = 0
    for n in ns_for(mode) + ((5,) if mode == "full" else ()):
        for lam in LAMS:
            cases += check_at(n, lam, mode)
    return cases


def every_lam(n: int, cases: list) -> int:
    """The check at size ``n`` at each ``(lam, z_name, z)`` of ``cases`` (``dpfix verify
    --every-lam``: a rational point of every chamber and every breakpoint, an irrational
    one as an algebraic lam, the check then exact over Q(lam))."""
    return sum(check_at(n, lam, "quick") for lam, _, _ in cases)


def check_at(n: int, lam, mode: str) -> int:
    cases = 0
    poly = polytope("U", n, lam)
    if n <= 4:
        verts = poly.vertices()
    else:  # n = 5: the positive vertices of the whole enumeration, sampled
        va = poly.vertex_array()
        positive = va.take((va.numerators > 0).all(axis=1))
        assert len(positive), f"U(5, {lam}) has no positive vertex"
        pick = np.random.default_rng(5).choice(len(positive),
                                               min(N5_SAMPLE, len(positive)),
                                               replace=False)
        verts = [positive[int(i)] for i in np.sort(pick)]
    points = [V for V in verts if all(v > 0 for v in V.flat)]
    points += midpoints(verts, 40)
    points.append(sum(verts) / len(verts))
    points += scale_built_matrices(n, lam, 200 if mode == "full" else 60)
    for T in points:
        if not all(v > 0 for v in T.flat):
            continue
        assert poly.contains(T), f"built point not in U, n={n}, lam={lam}"
        lhs, rhs = poly.is_extreme(T), columns_are_independent_scales(T, lam)
        assert lhs == rhs, (f"n={n}, lam={lam}: is_extreme={lhs} but scale "
                            f"condition={rhs} for T={T.tolist()}")
        cases += 1
    return cases


if __name__ == "__main__":
    print(run("full" if "--full" in sys.argv else "quick"), "cases checked")
