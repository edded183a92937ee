"""U, F, R_F and R_U over Q(lam) for an algebraic lam (dpfix.algebraic): the same
vertices as today's at a rational lam (given as a degree-1 field), the counts of nearby
rational lam inside a chamber, the structure of the vertices (Lemma 1, Theorem 2), and
the refusals."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpfix import RF, RU, F, U, algebraic
from dpfix.explore.cases import standard_z
from dpfix.numbers.exact import ExactnessError, to_fraction
from dpfix.theory.algebraic_enumeration import prime_ideal, u_vertex_count_algebraic
from dpfix.theory.enumeration import u_vertex_count
from dpfix.theory.polytopes import _sparse_rank
from dpfix.theory.representation import decompose
from dpfix.theory.scales import pattern_of, psi

pytest.importorskip("PyNormaliz")

PHI = algebraic("x^2 - x - 1", 1.618)
ROOT2 = algebraic("x^2 - 2", 1.414)
PLASTIC = algebraic("x^3 - x - 1", 1.3247)
# lam, and rationals on both sides of it with no wall of U(n <= 5) or F(n <= 3) between
NEAR = {"sqrt2": (ROOT2, Fraction(14142, 10000), Fraction(14143, 10000)),
        "plastic": (PLASTIC, Fraction(13247, 10000), Fraction(13248, 10000))}


def _rational_set(vertices):
    return {tuple(to_fraction(x) for x in V.ravel()) for V in vertices}


# -- the rational field Q (minimal polynomial of degree 1) against today's path -----------
@pytest.mark.parametrize("make", [
    lambda lam: U(3, lam), lambda lam: U(4, lam), lambda lam: F(3, lam, ["1/3"] * 3),
    lambda lam: F(3, lam, ["1/2", "1/3", "1/6"]), lambda lam: RF(3, lam, ["1/4", "1/2", "1/4"]),
    lambda lam: RU(3, lam), lambda lam: U(3, lam, "1/10"),
], ids=["U3", "U4", "F3-uniform", "F3-asym", "RF3", "RU3", "U3-delta"])
def test_degree_one_field_gives_todays_vertices(make):
    q = Fraction(3, 2)
    P, Q = make(algebraic("2x - 3", 1.5)), make(q)
    assert P.algebraic and not Q.algebraic
    V = P.vertices()
    assert _rational_set(V) == _rational_set(Q.vertices()) and len(V) == len(Q.vertices())
    assert P.count_vertices() == Q.count_vertices()
    assert P.dimension() == Q.dimension()


def test_degree_one_structure_count_matches_the_integer_one():
    lam = algebraic("x - 2", 2)
    assert [u_vertex_count_algebraic(n, lam) for n in (3, 4)] == [27, 664]
    assert U(5, lam).count_vertices() == u_vertex_count(5, Fraction(2)) == 55725


# -- irrational lam --------------------------------------------------------------------
@pytest.mark.parametrize("lam", [PHI, ROOT2, PLASTIC], ids=["golden", "sqrt2", "plastic"])
def test_u_counts_do_not_depend_on_lam_up_to_n4(lam):
    assert [U(n, lam).count_vertices() for n in (2, 3, 4)] == [4, 27, 664]
    assert [u_vertex_count_algebraic(n, lam) for n in (2, 3, 4)] == [4, 27, 664]


GOLDEN_F = (PHI, Fraction(1618, 1000), Fraction(1619, 1000))  # a wall of U(5), not of F(3)


@pytest.mark.parametrize("key", [*sorted(NEAR), "golden"])
@pytest.mark.parametrize("n", [2, 3])
def test_f_counts_match_nearby_rationals(key, n):
    lam, lo, hi = NEAR.get(key, GOLDEN_F)
    for z in standard_z(n).values():
        counts = {F(n, v, z).count_vertices() for v in (lam, lo, hi)}
        assert len(counts) == 1, (n, z, counts)


@pytest.mark.full
@pytest.mark.parametrize("key", sorted(NEAR))
def test_u5_structure_count_matches_nearby_rationals(key):
    lam, lo, hi = NEAR[key]
    assert U(5, lam).count_vertices() == U(5, lo).count_vertices() == U(5, hi).count_vertices()


def test_u5_at_the_golden_ratio_is_a_wall():
    # U(5) has 67,365 vertices at 1.618 and 65,805 at 1.619: the golden ratio between them
    # is a breakpoint, with its own count; Normaliz's number-field enumeration agrees
    # (test_u5_golden_normaliz_agrees, with --full)
    assert U(5, Fraction(1618, 1000)).count_vertices() == 67365
    assert U(5, Fraction(1619, 1000)).count_vertices() == 65805
    assert U(5, PHI).count_vertices() == 61725
    assert U(5, algebraic("1000x - 1619", 1.6)).count_vertices() == 65805


@pytest.mark.parametrize("lam", [PHI, PLASTIC, algebraic("3x - 5", 1.6)],
                         ids=["golden", "plastic", "5/3"])
def test_structure_count_with_every_decision_exact(lam, monkeypatch):
    """The balls and the ranks modulo P decide as exact arithmetic in Q(lam) does."""
    from dpfix.theory import algebraic_enumeration as ae

    fast = ae.u_vertex_count_algebraic(4, lam)
    original = ae._Search.is_vertex
    calls = []

    def both(self, cols):
        verdict = ae._Search._exact(self, cols)
        calls.append(verdict == original(self, cols))
        return verdict

    monkeypatch.setattr(ae._Search, "is_vertex", both)
    assert ae.u_vertex_count_algebraic(4, lam) == fast == 664
    assert calls and all(calls)


@pytest.mark.full
def test_u5_golden_normaliz_agrees():
    from dpfix.theory.algebraic_enumeration import normaliz_field_count

    P = U(5, PHI)
    assert normaliz_field_count(P._ub, P._eq, P.num_variables, PHI.field) == 61725


@pytest.mark.parametrize("lam", [PHI, PLASTIC], ids=["golden", "plastic"])
def test_vertices_of_u_lemma1_theorem2(lam):
    P = U(4, lam)
    V = P.vertices()
    assert len(V) == 664
    positive = [T for T in V if all(x > 0 for x in T.ravel())]
    assert positive
    for T in positive:  # Theorem 2: columns independent multiples of scales
        for j in range(4):
            pattern_of(T[:, j], lam)
        assert _sparse_rank([{i: x for i, x in enumerate(T[:, j])} for j in range(4)]) == 4
    for T in V[::7]:
        assert P.contains(T) and P.is_extreme(T)
        B = decompose(T, lam)  # Lemma 1: every column a non-negative sum of scales
        assert all(b >= 0 for b in B.ravel()) and (psi(4, lam) @ B == T).all()
    mid = (V[0] + V[1]) / 2
    assert P.contains(mid) and not P.is_extreme(mid)
    assert P.active_constraints(V[0]).shape[1] == 16


def test_exact_points_over_the_field():
    P = U(2, PHI)
    T = np.array([[PHI / (1 + PHI), 1 / (1 + PHI)], [1 / (1 + PHI), PHI / (1 + PHI)]])
    assert P.contains(T) and P.is_extreme(T) and P.dimension() == 2
    assert T.tolist() in [V.tolist() for V in P.vertices()]
    sorted_first = [V[0, 0] for V in P.vertices()]
    assert sorted_first == sorted(sorted_first)
    assert str(P) == "U(n=2, lam=root of x^2 - x - 1 ~ 1.6180339887)"


def test_refusals():
    P = U(3, PHI)
    with pytest.raises(ExactnessError):
        P.contains([[0.5, 0.5, 0]] * 3)
    with pytest.raises(TypeError, match="given where Q"):
        P.contains([[ROOT2 - 1, 2 - ROOT2, 0]] * 3)
    with pytest.raises(ValueError, match="needs a rational lam") as info:
        P.graph()
    assert "\n" not in str(info.value)
    for call in (lambda: P.face([[1, 0, 0]] * 3), lambda: P.orbits(),
                 lambda: P.vertex_array(), lambda: P.summary()):
        with pytest.raises(ValueError, match="needs a rational lam"):
            call()
    with pytest.raises(ValueError, match="backend"):
        P.vertices(backend="cdd")
    with pytest.raises(ValueError, match="U only"):
        F(3, PHI, ["1/3"] * 3).count_vertices(backend="structure")
    with pytest.raises(ValueError, match="limited to n <= 4"):
        U(5, PHI).vertices()
    with pytest.raises(ValueError, match="must be > 1"):
        U(3, PHI - 1)
    with pytest.raises(ExactnessError):
        U(3, 1.5)
    from dpfix import construct

    with pytest.raises(TypeError, match="needs a rational lam"):
        construct(["1/3"] * 3, lam=PHI, constructor="northwest")


def test_the_prime_ideal_bounds_the_minors():
    p, r = prime_ideal(PLASTIC.field, 5)
    assert (r ** 3 - r - 1) % p == 0 and p > 2 ** 61
    # a minimal polynomial with leading coefficient 3: beta = 3 lam is the integer used
    lam = algebraic("3x^2 - 5x + 1", 1.4)
    p, r = prime_ideal(lam.field, 4)
    assert (r * r - 5 * r + 3) % p == 0
    assert u_vertex_count_algebraic(4, lam) == 664


_U3 = {key: U(3, lam) for key, lam in (("golden", PHI), ("plastic", PLASTIC))}


@given(st.sampled_from(sorted(_U3)), st.lists(st.integers(0, 26), min_size=2, max_size=4,
                                              unique=True),
       st.lists(st.integers(1, 9), min_size=4, max_size=4))
def test_convex_combinations_of_vertices(key, picks, weights):
    P = _U3[key]
    V = P.vertices()
    w = [Fraction(x) for x in weights[:len(picks)]]
    X = sum(wi / sum(w) * V[i] for wi, i in zip(w, picks, strict=False))
    assert P.contains(X) and not P.is_extreme(X)
    assert P.dimension() == 6
    Y = X.copy()
    Y[0, 0], Y[0, 1] = Y[0, 0] + P.lam, Y[0, 1] - P.lam  # row sums kept, ratios broken
    assert not P.contains(Y)
