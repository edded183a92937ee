"""The polytopes U, F[z], R_F, R_U (docs/math_notes.md sections 2, 3): hand-derived answers,
brute-force vertex enumeration, and the paper's structural results as properties."""

from collections import Counter
from fractions import Fraction
from functools import cache
from itertools import combinations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpfix.explore.cases import LAMS, standard_z
from dpfix.numbers.exact import ExactnessError, nullspace, rank
from dpfix.theory.enumeration import normaliz_available
from dpfix.theory.polytopes import LIMITS, RF, RU, VERTEX_LIMITS, F, U, _sparse_rank
from dpfix.theory.scales import pattern_of, psi

Fr = Fraction


def M(rows):
    return np.array([[Fr(v) for v in r] for r in rows], dtype=object)


def keyset(mats):
    return {tuple(X.ravel()) for X in mats}


@cache
def poly(kind, n, lam, zname=None):
    """Cached polytopes so hypothesis examples reuse one vertex enumeration."""
    z = None if zname is None else standard_z(n)[zname]
    return {"U": lambda: U(n, lam), "R_U": lambda: RU(n, lam),
            "F": lambda: F(n, lam, z), "R_F": lambda: RF(n, lam, z)}[kind]()


def in_by_definition(kind, n, lam, z, X):
    """Membership straight from the definitions (independent of the H-rep rows)."""
    if kind in ("R_F", "R_U"):
        P = psi(n, lam)
        if any(v < 0 for v in X.ravel()) or any(v != 1 for v in P @ X.sum(axis=1)):
            return False
        return kind == "R_U" or list(z @ P @ X) == list(z)
    if any(sum(row) != 1 for row in X) or any(v < 0 for v in X.ravel()):
        return False
    for j in range(n):
        v = X[:, j]
        if any(v[i] > lam * v[i + 1] or v[i + 1] > lam * v[i] for i in range(n - 1)):
            return False
    return kind == "U" or list(z @ X) == list(z)


def brute_force_vertices(P):
    """Vertices as the feasible unique solutions of every choice of tight inequalities."""
    A, b, E, e = P.A_ub, P.b_ub, P.A_eq, P.b_eq
    d = P.num_variables
    found = set()
    for S in combinations(range(len(A)), d - rank(E)):
        S = list(S)
        aug = np.hstack([np.vstack([E, A[S]]), -np.concatenate([e, b[S]])[:, None]])
        N = nullspace(aug)
        if N.shape[1] != 1 or N[-1, 0] == 0:  # not a unique solution
            continue
        x = N[:-1, 0] / N[-1, 0]
        if all(A @ x <= b):
            found.add(tuple(x))
    return found


# -- hand-derived answers, n = 2 ----------------------------------------------------------
@pytest.mark.parametrize("lam", LAMS)
def test_U2_vertices_by_hand(lam):
    # T = [[a, 1-a], [b, 1-b]]: a/lam <= b <= lam a and 1 - lam(1-a) <= b <= 1 - (1-a)/lam;
    # the quadrilateral's corners are (0,0), (1,1), (1/(1+lam), lam/(1+lam)) and its mirror.
    lo, hi = 1 / (1 + lam), lam / (1 + lam)
    expected = [M([[0, 1], [0, 1]]), M([[lo, hi], [hi, lo]]), M([[hi, lo], [lo, hi]]),
                M([[1, 0], [1, 0]])]
    P = U(2, lam)
    V = P.vertices()
    assert [X.tolist() for X in V] == [X.tolist() for X in expected]  # lexicographic order
    G = P.graph()
    assert nx.is_isomorphic(G, nx.cycle_graph(4))
    # (0,0) and (1,1) are not adjacent (the diagonal of the quadrilateral)
    assert not G.has_edge(0, 3) and not G.has_edge(1, 2)
    assert P.dimension() == 2
    assert all(np.array_equal(G.nodes[i]["matrix"], V[i]) for i in G)


def test_F2_vertices_by_hand():
    # z T = z reads z0 a + z1 b = z0, a line through the quadrilateral of U(2, 2).
    half = ["1/2", "1/2"]  # a + b = 1: the two off-diagonal corners
    assert keyset(F(2, 2, half).vertices()) == keyset(
        [M([["1/3", "2/3"], ["2/3", "1/3"]]), M([["2/3", "1/3"], ["1/3", "2/3"]])])
    # z = (1/3, 2/3): a + 2b = 1 meets b = a/2 at (1/2, 1/4) and b = 2a at (1/5, 2/5)
    assert keyset(F(2, 2, ["1/3", "2/3"]).vertices()) == keyset(
        [M([["1/2", "1/2"], ["1/4", "3/4"]]), M([["1/5", "4/5"], ["2/5", "3/5"]])])
    # z = (1, 0): a = 1 forces b = 1 (b >= 2a - 1); F is a single point
    Fp = F(2, 2, [1, 0])
    assert [X.tolist() for X in Fp.vertices()] == [M([[1, 0], [1, 0]]).tolist()]
    assert Fp.dimension() == 0


def test_R2_vertices_by_hand():
    # Psi is invertible with Psi 1 = 1, so Psi B 1 = 1 means every row of B sums to 1:
    # R_U(2) is a product of two segments, its 4 vertices have unit-vector rows.
    units = [[1, 0], [0, 1]]
    expected = [M([r, s]) for r in units for s in units]
    assert keyset(RU(2, 3).vertices()) == keyset(expected)
    # uniform z: z Psi = (1/2, 1/2), so also B[0, 0] + B[1, 0] = 1
    R = RF(2, 3, ["1/2", "1/2"])
    assert keyset(R.vertices()) == keyset([M([[1, 0], [0, 1]]), M([[0, 1], [1, 0]])])
    # Theorem 3: Psi B runs over F's vertices here
    assert keyset(psi(2, 3) @ B for B in R.vertices()) == keyset(F(2, 3, ["1/2", "1/2"]).vertices())


# -- independent enumeration --------------------------------------------------------------
BRUTE = [("U", 2, Fr(2), None), ("U", 3, Fr(2), None), ("F", 2, Fr(3), "asymmetric"),
         ("F", 3, Fr(2), "uniform"), ("F", 3, Fr(3), "zero"), ("R_U", 3, Fr(2), None),
         ("R_F", 3, Fr(2), "geometric"),
         pytest.param(("U", 3, Fr(3, 2), None), marks=pytest.mark.full),
         pytest.param(("F", 3, Fr(2), "asymmetric"), marks=pytest.mark.full),
         pytest.param(("R_F", 3, Fr(3), "zero"), marks=pytest.mark.full)]


@pytest.mark.parametrize("case", BRUTE, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}")
def test_vertices_match_brute_force(case):
    P = poly(*case)
    V = P.vertices()
    assert len(V) == len(keyset(V))
    assert keyset(V) == brute_force_vertices(P)


@pytest.mark.parametrize("kind,zname", [("U", None), ("F", "uniform"), ("F", "zero"),
                                        ("R_U", None), ("R_F", "asymmetric")])
def test_h_representation_matches_definition(kind, zname):
    # Vertices, midpoints and small moves around them: contains() agrees with the definitions.
    n, lam = 3, Fr(2)
    P = poly(kind, n, lam, zname)
    z = None if zname is None else standard_z(n)[zname]
    V = P.vertices()
    rng = np.random.default_rng(0)
    for _ in range(60):
        X = V[rng.integers(len(V))].copy()
        if rng.random() < 0.5:
            X = (X + V[rng.integers(len(V))]) / 2
        i, j = rng.integers(P.shape[0]), rng.integers(P.shape[1])
        X[i, j] += Fr(int(rng.integers(-2, 3)), 100)
        assert P.contains(X) == in_by_definition(kind, n, lam, z, X)


# -- extreme points -----------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("lam", LAMS)
def test_every_vertex_extreme_and_theorem2(n, lam):
    P = poly("U", n, lam)
    for V in P.vertices():
        assert P.is_extreme(V)
        assert rank(P.active_constraints(V)) == n * n
        if all(v > 0 for v in V.ravel()):  # Theorem 2: columns are independent scale multiples
            for j in range(n):
                pattern_of(V[:, j], lam)
            assert rank(V) == n


@pytest.mark.parametrize("lam", LAMS)
def test_theorem2_converse_n3(lam):
    # columns a_j s_j for independent scales s_j with S a = 1, a > 0: a positive extreme T
    P, S_all = poly("U", 3, lam), psi(3, lam)
    built = 0
    for cols in combinations(range(4), 3):
        S = S_all[:, list(cols)]
        N = nullspace(np.hstack([S, -np.ones((3, 1), dtype=object) * Fr(1)]))
        if rank(S) < 3 or N.shape[1] != 1:
            continue
        a = N[:3, 0] / N[3, 0]
        if all(v > 0 for v in a):
            T = S * a  # column j scaled by a_j
            assert P.is_extreme(T) and tuple(T.ravel()) in keyset(P.vertices())
            built += 1
    assert built > 0


@pytest.mark.full
@pytest.mark.parametrize("lam", LAMS)
def test_every_vertex_extreme_n4(lam):
    for kind, zname in [("U", None), ("F", "asymmetric"), ("R_U", None)]:
        P = poly(kind, 4, lam, zname)
        assert all(P.is_extreme(V) for V in P.vertices())
        if kind == "U":  # Theorem 2 on the positive vertices
            positive = [V for V in P.vertices() if all(v > 0 for v in V.ravel())]
            assert positive and all(rank(V) == 4 for V in positive)
            for V in positive:
                for j in range(4):
                    pattern_of(V[:, j], lam)


@pytest.mark.parametrize("kind,zname", [("F", "uniform"), ("F", "geometric"), ("F", "zero"),
                                        ("R_F", "uniform"), ("R_F", "zero"), ("R_U", None)])
def test_every_vertex_extreme_other_polytopes(kind, zname):
    P = poly(kind, 3, Fr(2), zname)
    assert all(P.is_extreme(V) for V in P.vertices())


def test_midpoints_contained_not_extreme():
    for P in (poly("U", 3, Fr(2)), poly("F", 3, Fr(3), "asymmetric"),
              poly("R_F", 3, Fr(2), "zero")):
        V = P.vertices()
        for a, b in combinations(range(min(len(V), 8)), 2):
            X = (V[a] + V[b]) / 2
            assert P.contains(X) and not P.is_extreme(X)


def test_active_constraints_at_centre_of_U():
    # all entries 1/n: every neighbour inequality is strict, only the row sums are active
    P = U(3, 2)
    A = P.active_constraints(np.full((3, 3), Fr(1, 3), dtype=object))
    assert A.tolist() == P.A_eq.tolist()
    with pytest.raises(ValueError, match="not a point"):
        P.active_constraints(M([[1, 0, 0], [0, 1, 0], [0, 0, 1]]))


kinds = st.sampled_from([("U", None), ("F", "uniform"), ("F", "asymmetric"), ("F", "zero"),
                         ("R_F", "geometric"), ("R_U", None)])


@given(kinds, st.sampled_from([2, 3]), st.sampled_from(LAMS), st.data())
def test_is_extreme_agrees_with_enumeration(kind, n, lam, data):
    P = poly(kind[0], n, lam, kind[1])
    V = P.vertices()
    weights = data.draw(st.lists(st.integers(0, 3), min_size=len(V), max_size=len(V))
                        .filter(lambda w: sum(w) > 0))
    X = sum(Fr(w, sum(weights)) * Vi for w, Vi in zip(weights, V, strict=True))
    assert P.contains(X)
    assert P.is_extreme(X) == (tuple(X.ravel()) in keyset(V))


@given(st.sampled_from([("U", None), ("F", "uniform"), ("F", "geometric")]),
       st.sampled_from(LAMS), st.data())
def test_renormalised_perturbation_leaves_polytope(kind, lam, data):
    # Row i of V moved to (V_i + d e_j)/(1 + d) and to (V_i - d e_j)/(1 - d): V is a strict
    # convex combination of the two (weights (1+d)/2, (1-d)/2), so, V being a vertex, at
    # least one of them is outside, unless both equal V (V_i = e_j).
    P = poly(kind[0], 3, lam, kind[1])
    V = data.draw(st.sampled_from(P.vertices()))
    i, j = data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))
    d = Fr(1, 1000)
    moved = []
    for s in (d, -d):
        X = V.copy()
        X[i, j] += s
        X[i] = X[i] / (1 + s)
        moved.append(X)
    if V[i, j] == 1:
        assert all(np.array_equal(X, V) for X in moved)
    else:
        assert not (P.contains(moved[0]) and P.contains(moved[1]))
        assert not any(P.is_extreme(X) for X in moved)


def test_perturbed_zero_entry_leaves_U():
    P = U(3, 2)
    V = M([[1, 0, 0], [1, 0, 0], [1, 0, 0]])
    assert P.is_extreme(V)
    X = V.copy()
    X[0, 0], X[0, 1] = Fr(1001, 1000), Fr(-1, 1000)
    assert not P.contains(X)
    X[0, 0], X[0, 1] = Fr(999, 1000), Fr(1, 1000)  # column 1 is no longer lam-bounded
    assert not P.contains(X)


# -- dimension ----------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 4])
def test_dimension_formulas(n):
    # T = 1 z (every row z, z > 0) makes every neighbour inequality strict, so only the
    # explicit equalities count: n row sums for U; plus z T = z, rank n - 1 more, for F.
    lam, k = Fr(2), 2 ** (n - 1)
    assert U(n, lam).dimension() == n * (n - 1)
    assert F(n, lam, standard_z(n)["uniform"]).dimension() == (n - 1) ** 2
    # z_j = 0 forces column j to 0 (z_i > 0 elsewhere, then neighbours): p = |P| columns left
    z = standard_z(n)["zero"]
    p = sum(v > 0 for v in z)
    assert F(n, lam, z).dimension() == (n - 1) * (p - 1)
    # R: B > 0 with Psi B 1 = 1 exists; Psi has rank n; z Psi B = z adds n - 1 (or p - 1
    # after the k (n - p) forced zeros)
    assert RU(n, lam).dimension() == k * n - n
    assert RF(n, lam, standard_z(n)["uniform"]).dimension() == k * n - 2 * n + 1
    assert RF(n, lam, z).dimension() == k * p - (n + p - 1)


@pytest.mark.parametrize("case", [("U", 3, Fr(2), None), ("F", 3, Fr(2), "zero"),
                                  ("F", 3, Fr(3), "asymmetric"), ("R_F", 3, Fr(2), "zero")])
def test_dimension_is_affine_rank_of_vertices(case):
    P = poly(*case)
    V = P.vertices()
    diffs = np.array([(X - V[0]).ravel() for X in V[1:]], dtype=object)
    assert P.dimension() == (rank(diffs) if len(V) > 1 else 0)


# -- graph --------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [("U", 3, Fr(2), None), ("F", 3, Fr(2), "uniform"),
                                  ("F", 3, Fr(3), "zero"), ("R_F", 3, Fr(2), "asymmetric"),
                                  ("R_U", 3, Fr(3, 2), None)])
def test_graph_connected_and_degree_at_least_dimension(case):
    P = poly(*case)
    G = P.graph()
    assert sorted(G) == list(range(len(P.vertices())))
    assert nx.is_connected(G)
    assert min(d for _, d in G.degree()) >= P.dimension()
    # adjacent vertices share a face of dimension 1: their common active rows have rank d - 1
    d = P.num_variables
    for a, b in list(G.edges())[:10]:
        Xa, Xb = G.nodes[a]["matrix"], G.nodes[b]["matrix"]
        assert rank(P.active_constraints((Xa + Xb) / 2)) == d - 1


# -- linear programs ----------------------------------------------------------------------
@given(st.sampled_from([("U", 2, None), ("U", 3, None), ("F", 3, "asymmetric"),
                        ("F", 3, "zero"), ("R_F", 3, "uniform")]),
       st.sampled_from(LAMS), st.data())
def test_maximize_agrees_with_best_vertex(case, lam, data):
    kind, n, zname = case
    P = poly(kind, n, lam, zname)
    r, c = P.shape
    C = np.array(data.draw(st.lists(st.integers(-5, 5), min_size=r * c, max_size=r * c)),
                 dtype=object).reshape(P.shape)
    value, X = P.maximize(C)
    V = P.vertices()
    best = max((C * Y).sum() for Y in V)
    assert value == best == (C * X).sum()
    assert tuple(X.ravel()) in keyset(V)
    face = P.optimal_face_vertices(C)
    assert face and all((C * Y).sum() == best for Y in face)
    assert len(face) == sum((C * Y).sum() == best for Y in V)


def test_maximize_constant_objective_returns_a_vertex():
    # <1, T> = n on all of U: every point is optimal, the answer must still be a vertex
    P = U(3, 2)
    value, X = P.maximize(np.ones((3, 3), dtype=object))
    assert value == 3 and P.is_extreme(X)
    assert len(P.optimal_face_vertices(np.ones((3, 3), dtype=object))) == len(P.vertices())
    # moving a non-vertex optimum along its face reaches a vertex with the same value
    centre = [Fr(1, 3)] * 9
    Y = np.array(P._to_vertex(centre), dtype=object).reshape(3, 3)
    assert P.is_extreme(Y) and Y.sum() == 3


# -- the paper's results, checked on the vertex sets -------------------------------------
@pytest.mark.parametrize("zname", ["uniform", "geometric", "asymmetric", "zero"])
def test_theorem3_and_proposition1_n3(zname):
    # Psi maps R_F into F and every vertex of F is an image of a vertex of R_F, so
    # Psi(R_F) = conv(images) = F (Theorem 3, Proposition 1); Corollary 2 counts entries.
    n, lam = 3, Fr(2)
    z = standard_z(n)[zname]
    Fz, R = poly("F", n, lam, zname), poly("R_F", n, lam, zname)
    images = [psi(n, lam) @ B for B in R.vertices()]
    assert all(Fz.contains(T) for T in images)
    assert keyset(Fz.vertices()) <= keyset(images)
    p = sum(v > 0 for v in z)
    assert all(p <= sum(v > 0 for v in B.ravel()) <= p + n - 1 for B in R.vertices())


def test_example1_phenomena_n3():
    # Example 1: two extreme B with one extreme T, and an extreme B with a non-extreme T
    Fz, R = poly("F", 3, Fr(2), "uniform"), poly("R_F", 3, Fr(2), "uniform")
    counts = Counter(tuple((psi(3, 2) @ B).ravel()) for B in R.vertices())
    extreme = keyset(Fz.vertices())
    assert any(c > 1 for key, c in counts.items() if key in extreme)
    assert any(key not in extreme for key in counts)


def test_theorem10_images_of_RU_n3():
    images = [psi(3, 2) @ B for B in poly("R_U", 3, Fr(2)).vertices()]
    Up = poly("U", 3, Fr(2))
    assert all(Up.contains(T) for T in images)
    assert keyset(Up.vertices()) <= keyset(images)


# -- input validation and guards ----------------------------------------------------------
def test_floats_refused():
    with pytest.raises(ExactnessError):
        U(3, 2.0)
    with pytest.raises(ExactnessError):
        F(2, 2, [0.5, 0.5])
    with pytest.raises(ExactnessError):
        U(2, 2).contains(np.array([[0.5, 0.5], [0.5, 0.5]]))
    with pytest.raises(ExactnessError):
        U(2, 2).maximize([[1.0, 0], [0, 1]])


def test_bad_input():
    with pytest.raises(ValueError, match="n: must be"):
        U(1, 2)
    with pytest.raises(ValueError, match="n: must be"):
        U(2.5, 2)
    with pytest.raises(ValueError, match="lam"):
        U(3, 1)
    with pytest.raises(ValueError, match="length 3"):
        F(3, 2, ["1/2", "1/2"])
    with pytest.raises(ValueError, match=">= 0"):
        RF(2, 2, [2, -1])
    with pytest.raises(ValueError, match="sum to 1"):
        F(2, 2, ["1/2", "1/3"])
    with pytest.raises(ValueError, match="shape"):
        U(3, 2).contains([[1, 0], [1, 0]])
    with pytest.raises(ValueError, match="shape"):
        RF(3, 2, ["1/3"] * 3).is_extreme(np.zeros((3, 3), dtype=object))
    assert not U(2, 2).is_extreme([[2, -1], [1, 0]])  # outside: False, not an error


def test_size_guard():
    with pytest.raises(ValueError, match=r"n <= 4 with backend 'cdd'.*limit=None"):
        U(5, 2).vertices(backend="cdd")
    with pytest.raises(ValueError, match=r"R_F\(n=4\)\.graph\(\).*limit=None"):
        RF(4, 2, standard_z(4)["uniform"]).graph(backend="cdd")
    with pytest.raises(ValueError, match="n <= 2"):
        U(3, 2).vertices(limit=2)
    if normaliz_available():  # Normaliz's guards (LIMITS) sit one n higher, per request
        with pytest.raises(ValueError, match=r"F\(n=5\)\.vertices\(\).*n <= 4.*10 GB"):
            F(5, 2, standard_z(5)["uniform"]).vertices()
        with pytest.raises(ValueError, match=r"U\(n=5\)\.graph\(\).*degree_range"):
            U(5, 2).graph()
        with pytest.raises(ValueError, match=r"F\(n=6\)\.count_vertices\(\).*n <= 5"):
            F(6, 2, standard_z(6)["uniform"]).count_vertices()
        with pytest.raises(ValueError, match=r"U\(n=6\)\.count_vertices\(\).*n <= 5"):
            U(6, 2).count_vertices(backend="normaliz")
    with pytest.raises(ValueError, match=r"U\(n=7\)\.count_vertices\(\): the structural.*n <= 6"):
        U(7, 2).count_vertices()
    with pytest.raises(ValueError, match="U only"):
        F(3, 2, ["1/3"] * 3).count_vertices(backend="structure")
        assert LIMITS["normaliz"]["count"]["F"] == 5
    assert len(U(3, 2).vertices(limit=None)) == 27
    assert VERTEX_LIMITS["R_F"] == 3
    # the guard is about enumeration only: membership and extremality still work at n = 5
    P = U(5, 2)
    assert P.is_extreme(M([[1, 0, 0, 0, 0]] * 5)) and not P.is_extreme(M([["1/5"] * 5] * 5))


def test_h_representation_attributes():
    P = F(3, 2, ["1/3", "1/3", "1/3"])
    assert (P.n, P.lam, P.shape, P.num_variables) == (3, Fr(2), (3, 3), 9)
    assert P.A_ub.shape == (12, 9) and P.A_eq.shape == (6, 9)
    assert P.b_ub.tolist() == [0] * 12 and P.b_eq.tolist()[:3] == [1, 1, 1]
    assert all(isinstance(v, Fraction) for v in P.A_ub.ravel())
    R = RF(3, 2, ["1/3", "1/3", "1/3"])
    assert R.shape == (4, 3) and R.A_ub.shape == (12, 12) and R.A_eq.shape == (6, 12)
    assert RU(3, 2).z is None and repr(RU(3, 2)) == "R_U(n=3, lam=2)"


@given(st.integers(1, 6), st.integers(1, 6), st.data())
def test_sparse_rank_agrees_with_dense_rank(m, d, data):
    entries = st.sampled_from([0, 0, 0, 1, -1, 2, Fr(1, 3), Fr(-3, 2)])
    A = np.array(data.draw(st.lists(st.lists(entries, min_size=d, max_size=d),
                                    min_size=m, max_size=m)), dtype=object)
    rows = [{c: Fr(v) for c, v in enumerate(r)} for r in A]
    assert _sparse_rank(rows) == rank(A)


def test_sparse_rank_on_active_constraints():
    P = poly("F", 3, Fr(2), "asymmetric")
    for V in P.vertices()[:10]:
        for X in (V, (V + P.vertices()[-1]) / 2):
            assert _sparse_rank(P._active_rows(list(X.ravel()))) == rank(P.active_constraints(X))


def test_accepts_exact_mechanism_refuses_float_one():
    from dpfix.theory.mechanism import Mechanism
    T = Mechanism.from_matrix(M([["2/3", "1/3"], ["1/3", "2/3"]]), lam=2)
    assert F(2, 2, ["1/2", "1/2"]).is_extreme(T)
    with pytest.raises(ExactnessError):
        U(2, 2).contains(Mechanism(matrix=None, log_matrix=np.log(np.full((2, 2), 0.5)),
                                   eps=float(np.log(2))))
