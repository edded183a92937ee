"""Tests of dpfix.theory.representation: R_F, H(B_j), Lemma 2, Theorem 4, Corollary 2,
Proposition 1.

Everything is exact. Independent checks: hand-derived n = 2 answers, exact
vertex enumeration of R_F and F with cdd.gmp (n = 3), and extremeness in R_F
by the active-constraint rank (paper Section 4), which uses neither H(B_j)
nor movement matrices.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from fractions import Fraction as Fr

import cdd.gmp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpfix.explore.strategies import targets
from dpfix.numbers.exact import ExactnessError, rank
from dpfix.theory.representation import (
    decompose,
    difference_vectors,
    extreme_preimage,
    fibre_vertex,
    has_movement_in_support,
    in_R_F,
    is_psi_affinely_simplified,
    movement_space,
    positive_support,
    psi_map,
    scale_count,
)
from dpfix.theory.scales import psi

LAM = Fr(2)


def ex(rows):
    return np.array([[Fr(v) for v in row] for row in rows], dtype=object)


def vec(values):
    return np.array([Fr(v) for v in values], dtype=object)


# --- independent machinery: cdd.gmp vertex enumeration and active-constraint rank -----


def _cdd_vertices(eqs, ineqs, shape):
    mat = cdd.gmp.matrix_from_array(
        eqs + ineqs, lin_set=set(range(len(eqs))), rep_type=cdd.gmp.RepType.INEQUALITY
    )
    gens = cdd.gmp.copy_generators(cdd.gmp.polyhedron_from_matrix(mat)).array
    assert all(row[0] == 1 for row in gens)  # bounded polytopes: vertices only
    return [np.array([Fr(x) for x in row[1:]], dtype=object).reshape(shape) for row in gens]


def _rf_rows(z, lam):
    """Equality rows of R_F over the k*n entries of B (row-major)."""
    n = len(z)
    P = psi(n, lam)
    k = P.shape[1]
    w = z.dot(P)
    cells = [(i, j) for i in range(k) for j in range(n)]
    eqs = [[-z[j]] + [w[i] if jj == j else 0 for i, jj in cells] for j in range(n)]
    eqs += [[-1] + [P[r, i] for i in range(k) for _ in range(n)] for r in range(n)]
    return eqs, k


@functools.cache
def rf_vertices(z_key, lam=LAM):
    z = vec(z_key)
    eqs, k = _rf_rows(z, lam)
    d = k * len(z)
    ineqs = [[0] + [int(c == e) for c in range(d)] for e in range(d)]
    return _cdd_vertices(eqs, ineqs, (k, len(z)))


@functools.cache
def f_vertices(z_key, lam=LAM):
    z = vec(z_key)
    n = len(z)
    eqs = [[-1] + [int(a == i) for a in range(n) for _ in range(n)] for i in range(n)]
    eqs += [[-z[j]] + [z[a] if b == j else 0 for a in range(n) for b in range(n)] for j in range(n)]
    ineqs = []
    for j, a in itertools.product(range(n), range(n - 1)):
        for lo, hi in ((a, a + 1), (a + 1, a)):  # lam T[hi, j] - T[lo, j] >= 0
            row = [Fr(0)] * (n * n + 1)
            row[1 + hi * n + j] += lam
            row[1 + lo * n + j] -= 1
            ineqs.append(row)
    return _cdd_vertices(eqs, ineqs, (n, n))


def extreme_in_rf_by_rank(B, z, lam=LAM):
    """paper Section 4: B is extreme iff equalities + tight B >= 0 have rank k n."""
    eqs, k = _rf_rows(z, lam)
    n = len(z)
    rows = [r[1:] for r in eqs]
    zeros = [i * n + j for (i, j), v in np.ndenumerate(B) if v == 0]
    rows += [[int(c == e) for c in range(k * n)] for e in zeros]
    return rank(rows) == k * n


def key(M):
    return tuple(M.flat)


# --- strategies ---------------------------------------------------------------------

fracs = st.fractions(min_value=0, max_value=3, max_denominator=5)


@st.composite
def rep_matrices(draw, n, m=None):
    """A non-negative k x m matrix with a random support (some entries 0)."""
    k, m = 2 ** (n - 1), n if m is None else m
    vals = draw(st.lists(fracs, min_size=k * m, max_size=k * m))
    return np.array(vals, dtype=object).reshape(k, m)


@st.composite
def case(draw, ns=(2, 3)):
    n = draw(st.sampled_from(ns))
    return n, draw(rep_matrices(n)), draw(targets(n))


# --- hand-derived n = 2 answers -----------------------------------------------------


def test_psi_map_n2_lam2_by_hand():
    # lam = 2: scale 0 (pattern -1) is (2/3, 1/3), scale 1 (pattern +1) is (1/3, 2/3).
    P = ex([["2/3", "1/3"], ["1/3", "2/3"]])
    assert psi_map(ex([[1, 0], [0, 1]]), 2).tolist() == P.tolist()
    assert psi_map(ex([[0, 1], [1, 0]]), 2).tolist() == P[:, ::-1].tolist()
    assert psi_map(ex([[3], [0]]), "3/2").tolist() == ex([["9/5"], ["6/5"]]).tolist()
    assert psi_map(ex([["5/7"]]), 2).tolist() == [[Fr(5, 7)]]  # n = 1: Psi = [[1]]


def test_n2_fixed_point_polytope_by_hand():
    # z = (1/3, 2/3), lam = 2: F = {[[2b-1, 2-2b], [1-b, b]] : 3/5 <= b <= 3/4};
    # w = z.Psi = (4/9, 5/9); h = Psi_1/(5/9) - Psi_0/(4/9) = (-9/10, 9/20).
    z = vec(["1/3", "2/3"])
    T1, B1 = ex([["1/5", "4/5"], ["2/5", "3/5"]]), ex([[0, 1], ["3/5", "2/5"]])
    T2, B2 = ex([["1/2", "1/2"], ["1/4", "3/4"]]), ex([["3/4", "1/4"], [0, 1]])
    h = [Fr(-9, 10), Fr(9, 20)]
    for T, B in ((T1, B1), (T2, B2)):
        assert decompose(T, LAM).tolist() == B.tolist()  # Psi is invertible at n = 2
        assert extreme_preimage(T, z, LAM).tolist() == B.tolist()
        assert in_R_F(B, z, LAM)
        assert difference_vectors(B, z, LAM).tolist() == [h]
        assert is_psi_affinely_simplified(B, z, LAM) and not has_movement_in_support(B, z, LAM)
        assert scale_count(B) == 3  # = |P| + n - 1: Corollary 2's upper bound is attained
    mid = (B1 + B2) / 2  # both columns give the same h: the multiset union is dependent
    assert difference_vectors(mid, z, LAM).tolist() == [h, h]
    assert not is_psi_affinely_simplified(mid, z, LAM) and has_movement_in_support(mid, z, LAM)
    with pytest.raises(ValueError, match="not an extreme point of F"):
        extreme_preimage((T1 + T2) / 2, z, LAM)
    # M_F: 4a + 5c = 0, 4b + 5d = 0 and mu 1 = 0 (Psi invertible): mu ~ [[5, -5], [-4, 4]].
    (mu,) = movement_space(z, LAM)
    assert mu[0, 0] != 0 and (mu / mu[0, 0] * 5).tolist() == ex([[5, -5], [-4, 4]]).tolist()


# --- M_F(Psi) ----------------------------------------------------------------------


@given(targets(n_min=1, n_max=4))
def test_movement_space_dimension_and_constraints(z):
    n = len(z)
    P, k = psi(n, LAM), 2 ** (n - 1)
    basis = movement_space(z, LAM)
    assert len(basis) == k * n - 2 * n + 1
    for mu in basis:
        assert all(z.dot(P).dot(mu) == 0) and all(P.dot(mu).sum(axis=1) == 0)
    if basis:
        assert rank([mu.flatten() for mu in basis]) == len(basis)


@given(case())
def test_movement_space_respects_support(c):
    n, B, z = c
    mask = positive_support(B)
    basis = movement_space(z, LAM, support=mask)
    for mu in basis:
        assert all(v == 0 for v in mu[~mask])
    assert has_movement_in_support(B, z, LAM) == bool(basis)


# --- Definition 8, Lemma 2, Corollary 2 --------------------------------------------


@given(case())
def test_lemma2_simplified_iff_no_movement(c):
    """Lemma 2 holds for every B >= 0 (the paper states it for B in R_F only)."""
    n, B, z = c
    H = difference_vectors(B, z, LAM)
    assert all(z.dot(h) == 0 for h in H)
    nonzero_cols = int(positive_support(B).any(axis=0).sum())
    assert H.shape == (scale_count(B) - nonzero_cols, n)
    assert is_psi_affinely_simplified(B, z, LAM) == (not has_movement_in_support(B, z, LAM))


def test_weights_in_H_are_needed_for_lemma2():
    """Unweighted differences Psi_{i_l} - Psi_{i_0} would disagree with Lemma 2.

    Found by a search over supports at n = 4; certified here by an explicit
    movement matrix. (With uniform z the weights are all 1/n and cannot matter.)
    """
    z = vec(["1/2", 0, 0, "1/2"])
    B = np.full((8, 4), Fr(0), dtype=object)
    for i, j in [(1, 2), (1, 3), (2, 1), (2, 2), (4, 0), (6, 0), (7, 0)]:
        B[i, j] = Fr(1)
    P = psi(4, LAM)
    unweighted = [
        P[:, i] - P[:, idx[0]]
        for j in range(4)
        for idx in [[i for i in range(8) if B[i, j] > 0]]
        for i in idx[1:]
    ]
    assert rank(unweighted) == len(unweighted)  # the unweighted union is independent
    assert not is_psi_affinely_simplified(B, z, LAM)
    mus = movement_space(z, LAM, support=positive_support(B))
    assert mus and all(z.dot(P).dot(mus[0]) == 0) and all(P.dot(mus[0]).sum(axis=1) == 0)


Z3 = [("1/3", "1/3", "1/3"), ("1/2", "1/3", "1/6"), ("1/2", 0, "1/2"), ("1/5", "3/5", "1/5")]


@pytest.mark.parametrize("z_key", Z3)
def test_theorem4_and_corollary2_on_rf_vertices(z_key):
    z = vec(z_key)
    n, npos = 3, sum(1 for v in z if v > 0)
    verts = rf_vertices(z_key)
    assert verts
    for B in verts:
        assert in_R_F(B, z, LAM) and extreme_in_rf_by_rank(B, z, LAM)
        assert is_psi_affinely_simplified(B, z, LAM)
        assert npos <= scale_count(B) <= npos + n - 1
        assert all(B[i, j] == 0 for j in range(n) if z[j] == 0 for i in range(B.shape[0]))
    for B1, B2 in itertools.combinations(verts, 2):  # midpoints are never extreme
        assert not is_psi_affinely_simplified((B1 + B2) / 2, z, LAM)


@given(st.sampled_from(Z3), st.data())
def test_theorem4_on_random_points_of_rf(z_key, data):
    z, verts = vec(z_key), rf_vertices(z_key)
    idx = data.draw(st.lists(st.integers(0, len(verts) - 1), min_size=1, max_size=3, unique=True))
    wts = data.draw(st.lists(st.integers(1, 4), min_size=len(idx), max_size=len(idx)))
    B = sum(Fr(w, sum(wts)) * verts[i] for i, w in zip(idx, wts, strict=True))
    assert in_R_F(B, z, LAM)
    assert is_psi_affinely_simplified(B, z, LAM) == extreme_in_rf_by_rank(B, z, LAM)


@given(targets(n_min=2, n_max=3), st.data())
def test_corollary2_bounds_on_fibre_vertices(z, data):
    """Extreme points of R_F reached by extreme_preimage from random vertices of F."""
    n = len(z)
    npos = sum(1 for v in z if v > 0)
    verts = f_vertices(tuple(z))
    T = verts[data.draw(st.integers(0, len(verts) - 1))]
    B = extreme_preimage(T, z, LAM)
    assert extreme_in_rf_by_rank(B, z, LAM)
    assert npos <= scale_count(B) <= npos + n - 1


# --- Proposition 1 and Example 1 ----------------------------------------------------


@pytest.mark.parametrize("z_key", Z3)
def test_proposition1_and_example1_phenomena(z_key):
    z = vec(z_key)
    ext_T = {key(T) for T in f_vertices(z_key)}
    images = Counter(key(psi_map(B, LAM)) for B in rf_vertices(z_key))
    assert ext_T <= set(images)  # Proposition 1: ex(F) is inside Psi(ex(R_F))
    assert any(t not in ext_T for t in images)  # an extreme B with a non-extreme image
    assert any(images[t] > 1 for t in ext_T)  # an extreme T with two extreme preimages
    for T in f_vertices(z_key):
        B = extreme_preimage(T, z, LAM)
        assert psi_map(B, LAM).tolist() == T.tolist()
        assert in_R_F(B, z, LAM) and extreme_in_rf_by_rank(B, z, LAM)


def test_extreme_preimage_on_non_extreme_T_both_outcomes():
    """Raising proves T not extreme; returning does not prove T extreme (Example 1)."""
    z_key = ("1/2", "1/3", "1/6")
    z, ext_T = vec(z_key), {key(T) for T in f_vertices(z_key)}
    outcomes = Counter()
    for B0 in rf_vertices(z_key):
        T = psi_map(B0, LAM)
        if key(T) in ext_T:
            continue
        try:
            B = extreme_preimage(T, z, LAM)
        except ValueError as err:
            assert "not an extreme point of F" in str(err)
            outcomes["raised"] += 1
        else:
            assert psi_map(B, LAM).tolist() == T.tolist() and extreme_in_rf_by_rank(B, z, LAM)
            outcomes["returned"] += 1
    assert outcomes["raised"] > 0 and outcomes["returned"] > 0
    verts = f_vertices(z_key)
    with pytest.raises(ValueError, match="not an extreme point of F"):
        extreme_preimage((verts[0] + verts[1]) / 2, z, LAM)


def test_extreme_preimage_refuses_T_outside_F():
    z = vec(["1/3", "2/3"])
    with pytest.raises(ValueError, match="row 0 sums to"):
        extreme_preimage(ex([["1/2", "1/3"], ["1/4", "3/4"]]), z, LAM)
    with pytest.raises(ValueError, match=r"\(z T\)\[0\]"):
        extreme_preimage(ex([["1/2", "1/2"], ["1/2", "1/2"]]), z, LAM)
    with pytest.raises(ValueError, match="column 0 is not eps-neighbour"):
        extreme_preimage(ex([[1, 0], [0, 1]]), vec(["1/2", "1/2"]), LAM)


# --- decompose (Lemma 1) and fibre vertices ------------------------------------------


def _check_fibre_vertex(B, T, lam):
    P = psi(T.shape[0], lam)
    assert all(v >= 0 for v in B.flat)
    assert P.dot(B).tolist() == T.tolist()
    for j in range(B.shape[1]):
        idx = [i for i in range(B.shape[0]) if B[i, j] > 0]
        assert len(idx) <= T.shape[0] and rank(P[:, idx]) == len(idx)


@given(st.integers(1, 4).flatmap(lambda n: rep_matrices(n, m=3)), st.sampled_from([2, "3/2", 5]))
def test_decompose_round_trip(Brand, lam):
    T = psi_map(Brand, lam)
    B = decompose(T, lam)
    assert B.shape == Brand.shape
    _check_fibre_vertex(B, T, Fr(lam))


@given(
    st.lists(st.fractions(min_value=Fr(1, 2), max_value=2, max_denominator=7), max_size=5),
    st.fractions(min_value=Fr(1, 7), max_value=3, max_denominator=7),
)
def test_decompose_vectors_built_from_ratios(ratios, v0):
    """Indistinguishable vectors built directly (ratios in [1/lam, lam]), not via Psi."""
    v = [v0]
    for r in ratios:
        v.append(v[-1] * r)
    T = np.array(v, dtype=object).reshape(-1, 1)
    _check_fibre_vertex(decompose(T, LAM), T, LAM)


@given(st.integers(2, 3).flatmap(lambda n: rep_matrices(n)))
def test_fibre_vertex_purifies(B):
    T = psi_map(B, LAM)
    V = fibre_vertex(B, LAM)
    _check_fibre_vertex(V, T, LAM)
    assert not (positive_support(V) & ~positive_support(B)).any()


def test_decompose_names_the_bad_column():
    with pytest.raises(ValueError, match="column 1 is not eps-neighbour-indistinguishable"):
        decompose(ex([[1, 1], [1, 3], [1, 1]]), LAM)
    with pytest.raises(ValueError, match="column 0"):
        decompose(ex([[-1], [1]]), LAM)
    assert decompose(ex([[0], [0], [0]]), LAM).tolist() == [[Fr(0)]] * 4


# --- refusal of floats and bad shapes -------------------------------------------------


def test_floats_are_refused():
    B, z = ex([[1, 0], [0, 1]]), vec(["1/2", "1/2"])
    with pytest.raises(ExactnessError):
        psi_map(np.eye(2), LAM)
    with pytest.raises(ExactnessError):
        psi_map(B, 2.0)
    with pytest.raises(ExactnessError):
        is_psi_affinely_simplified(B, [0.5, 0.5], LAM)
    with pytest.raises(ExactnessError):
        decompose([[0.5], [0.5]], LAM)
    with pytest.raises(ExactnessError):
        movement_space(z, 1.5)
    with pytest.raises(ExactnessError):
        extreme_preimage(np.eye(2) / 2 + 0.25, z, LAM)


def test_bad_shapes_and_values():
    z = vec(["1/2", "1/2"])
    with pytest.raises(ValueError, match="k = 2\\^\\(n-1\\) rows"):
        psi_map(ex([[1], [1], [1]]), LAM)
    with pytest.raises(ValueError, match="expected shape \\(2, 2\\)"):
        difference_vectors(ex([[1, 0, 0], [0, 1, 0]]), vec(["1/3"] * 3), LAM)
    with pytest.raises(ValueError, match="z: expected length 2"):
        difference_vectors(ex([[1, 0], [0, 1]]), vec(["1/3"] * 3), LAM)
    with pytest.raises(ValueError, match="probability vector"):
        is_psi_affinely_simplified(ex([[1, 0], [0, 1]]), vec([1, 1]), LAM)
    with pytest.raises(ValueError, match="entry \\(0, 1\\) is negative"):
        has_movement_in_support(ex([[1, -1], [0, 1]]), z, LAM)
    with pytest.raises(ValueError, match="mask of shape \\(2, 2\\)"):
        movement_space(z, LAM, support=np.ones((2, 3), dtype=bool))
    with pytest.raises(ValueError, match="lam: must be > 1"):
        psi_map(ex([[1, 0], [0, 1]]), 1)
    with pytest.raises(ValueError, match="square"):
        extreme_preimage(ex([[1, 0]]), vec([1]), LAM)
