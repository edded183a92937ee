"""The mechanisms on pairs (dpfix.constructors.joint, docs/joint.md), checked exactly.

Known answers from independent methods: the privacy ratio recomputed entry by entry on
every edge of the unit's graph, the fixed point multiplied out, one column reducing to
the northwest corner (Theorem A), the transport plans against cdd's exact LP, and the
2 x 2 example of docs/joint.md section 4 worked by hand.
"""

from __future__ import annotations

from fractions import Fraction

import cdd
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.constructors.joint import (
    grid_lp_optimum,
    joint_edges,
    joint_lams,
    joint_sampler,
    product_transport,
    transport_plan,
)
from dpfix.constructors.northwest import northwest_corner
from dpfix.numbers.exact import ExactnessError
from dpfix.sampling.joint import geometric_matrix
from dpfix.sampling.source import lam_at_most_exp, random_source

F = Fraction


def _neighbours(shape, unit):
    """The unit's neighbours listed from the definition, independently of joint_edges."""
    n_a, n_b = shape
    out = set()
    for a in range(n_a):
        for b in range(n_b):
            for a2 in range(n_a):
                for b2 in range(n_b):
                    da, db = abs(a - a2), abs(b - b2)
                    ok = (da + db == 1) if unit == "cell" else (0 < max(da, db) <= 1)
                    if ok:
                        out.add((a * n_b + b, a2 * n_b + b2))
    return out


def _ratio(T, shape, unit):
    worst = F(1)
    for s, t in _neighbours(shape, unit):
        for j in range(T.shape[1]):
            assert (T[s, j] == 0) == (T[t, j] == 0)
            if T[t, j]:
                worst = max(worst, T[s, j] / T[t, j])
    return worst


def _target(weights, shape):
    total = sum(weights)
    return np.array([F(w, total) for w in weights], dtype=object).reshape(shape)


targets = st.tuples(st.sampled_from([(2, 2), (2, 3), (3, 2), (1, 4)]),
                    st.lists(st.integers(0, 5), min_size=12, max_size=12)).filter(
    lambda t: sum(t[1][: t[0][0] * t[0][1]]) > 0).map(
    lambda t: _target(t[1][: t[0][0] * t[0][1]], t[0]))


@pytest.mark.parametrize("shape, unit", [((2, 3), "cell"), ((3, 3), "row"), ((1, 4), "row")])
def test_edges_are_the_units_graph(shape, unit):
    got = {tuple(e) for e in joint_edges(shape, unit).tolist()}
    want = {(min(s, t), max(s, t)) for s, t in _neighbours(shape, unit)}
    assert got == want


@settings(max_examples=25, deadline=None)
@given(targets, st.sampled_from([("cell", F(2)), ("row", F(4)), ("cell", F(3, 2))]),
       st.sampled_from(["count-error", "ground"]))
def test_product_transport_is_private_and_fixes_z(z, unit_lam, cost):
    unit, lam = unit_lam
    M = product_transport(z, lam=lam, unit=unit, cost=cost)
    T = M.matrix
    assert all(sum(row) == 1 for row in T) and all(v >= 0 for v in T.flat)
    zf = z.ravel()
    assert [sum(zf[s] * T[s, j] for s in range(len(zf))) for j in range(len(zf))] == list(zf)
    assert _ratio(T, z.shape, unit) <= lam


@settings(max_examples=15, deadline=None)
@given(targets)
def test_count_error_cost_is_best_remap_of_the_product(z):
    """The count-error cost gives the least count error of the two remaps, and both are
    at least the optimum over F_grid (which contains them)."""
    best = product_transport(z, lam=2, cost="count-error").count_error()
    ground = product_transport(z, lam=2, cost="ground").count_error()
    assert best <= ground
    if z.size <= 6:
        assert grid_lp_optimum(z, lam=2).count_error() <= best


@pytest.mark.parametrize("z", [[F(1, 6), F(1, 3), F(0), F(1, 2)], [F(1, 4)] * 4,
                               [F(1, 10), F(0), F(0), F(9, 10)]])
@pytest.mark.parametrize("cost", ["count-error", "ground"])
def test_one_column_is_the_northwest_corner(z, cost):
    """With n_b = 1 the construction is one column's T = G R: Theorem A's optimum."""
    want = northwest_corner(z, lam=3).count_error()
    got = product_transport(np.array([z], dtype=object).T, lam=3, cost=cost)
    assert got.count_error() == want
    assert grid_lp_optimum(np.array([z], dtype=object), lam=3).count_error() == want


def test_product_is_not_optimal_on_the_2x2_grid():
    """docs/joint.md section 4: z = (1/2, 0; 0, 1/2), lam = 2, unit cell. The product
    sends 1/9 + 2 (2/9)(1/2) = 1/3 of row (0, 0) to (1, 1): error 2/3; F_grid allows
    T[(0,0), (1,1)] = 1/4 (the rows (0, 1), (1, 0) at (1/2, 1/2)): error 1/2."""
    z = np.array([[F(1, 2), F(0)], [F(0), F(1, 2)]], dtype=object)
    assert product_transport(z, lam=2).count_error() == F(2, 3)
    L = grid_lp_optimum(z, lam=2)
    assert L.count_error() == F(1, 2) == L.params["value"] == L.params["certificate"]["dual_bound"]
    assert L.matrix[0, 3] == F(1, 4) and _ratio(L.matrix, (2, 2), "cell") == 2


def test_row_unit_needs_the_square_root():
    z = _target([1, 2, 3, 4], (2, 2))
    M = product_transport(z, lam=4, unit="row")
    assert M.params["lams"] == (F(2), F(2)) and _ratio(M.matrix, (2, 2), "row") == 4
    # at lam per column the diagonal edge sees lam^2: the cell mechanism is not row-private
    assert _ratio(product_transport(z, lam=2, unit="cell").matrix, (2, 2), "row") == 4
    with pytest.raises(ValueError, match="square root"):
        joint_lams("row", lam=2)
    assert joint_lams("row", lam=(F(3, 2), F(4, 3))) == (F(3, 2), F(4, 3))


def _lp_transport(supply, demand, cost):
    """The transport LP by cdd (exact), independently of networkx."""
    n, k = len(supply), len(demand)
    eq_r, eq_c, eq_v, b = [], [], [], []
    for i in range(n):
        eq_r += [i] * k
        eq_c += [i * k + j for j in range(k)]
        eq_v += [F(1)] * k
        b.append(supply[i])
    for j in range(k):
        eq_r += [n + j] * n
        eq_c += [i * k + j for i in range(n)]
        eq_v += [F(1)] * n
        b.append(demand[j])
    d = n * k
    c = [cost[i][j] for i in range(n) for j in range(k)]
    zero = F(0)
    rows = []
    for r in range(len(b)):
        row = [b[r]] + [zero] * d
        for rr, col, v in zip(eq_r, eq_c, eq_v, strict=True):
            if rr == r:
                row[col + 1] = -v
        rows.append(row)
    nonneg = [[zero] + [F(int(i == t)) for i in range(d)] for t in range(d)]
    mat = cdd.gmp.matrix_from_array(rows + nonneg, lin_set=range(len(rows)),
                                    rep_type=cdd.RepType.INEQUALITY,
                                    obj_type=cdd.LPObjType.MIN, obj_func=[zero, *c])
    lp = cdd.gmp.linprog_from_matrix(mat)
    cdd.gmp.linprog_solve(lp)
    return F(lp.obj_value)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=2, max_size=4),
       st.lists(st.integers(0, 6), min_size=2, max_size=4),
       st.randoms(use_true_random=False))
def test_transport_plan_is_optimal_against_cdd(sup, dem, rnd):
    if sum(dem) == 0:
        dem[0] = 1
    supply = [F(s, sum(sup)) for s in sup]
    demand = [F(d, sum(dem)) for d in dem]
    cost = [[F(rnd.randint(0, 9), rnd.randint(1, 4)) for _ in dem] for _ in sup]
    pieces = transport_plan(supply, demand, np.array(cost, dtype=object))
    assert all(x > 0 for _, _, x in pieces)
    value = sum((x * cost[i][j] for i, j, x in pieces), F(0))
    assert value == _lp_transport(supply, demand, cost)


def test_transport_plan_refuses_floats_for_the_exact_solver():
    with pytest.raises(ExactnessError):
        transport_plan([0.5, 0.5], [0.5, 0.5], np.eye(2), solver="exact")
    with pytest.raises(ValueError, match="differ"):
        transport_plan([F(1, 2)], [F(1, 3)], np.eye(1, dtype=int))


def test_float_remap_matches_the_exact_one():
    """POT's float plan and networkx's exact plan give the same mechanism (to floats)."""
    z = _target([3, 1, 0, 2, 5, 1], (2, 3))
    exact = product_transport(z, lam=2).matrix
    s = joint_sampler(np.asarray(z, dtype=float), eps=float(np.log(2)) + 1e-12)
    assert s.lams == (F(2), F(2))
    drawn = s.matrix(drawn=True)
    assert np.abs(np.asarray(drawn - exact, dtype=float)).max() < 1e-12


def test_sampler_draws_the_mechanism():
    """The sampled law is the exact matrix (drawn thresholds), and frequencies follow it."""
    z = _target([4, 1, 1, 2], (2, 2))
    s = joint_sampler(z, lam=2)
    T = product_transport(z, lam=2).matrix
    assert (s.matrix() == T).all()
    src = random_source(5)
    a, b = s.sample(np.zeros(20000, dtype=np.int64), np.ones(20000, dtype=np.int64), src)
    freq = np.bincount(a * 2 + b, minlength=4) / 20000
    assert np.abs(freq - np.asarray(T[1], dtype=float)).max() < 0.02
    G = np.kron(geometric_matrix(2, F(2)), geometric_matrix(2, F(2)))
    assert (s.matrix() == G.dot(s.remap.matrix())).all()


@pytest.mark.parametrize("unit, eps", [("cell", 1.0), ("row", 2.0)])
def test_drawn_law_is_private_on_every_edge(unit, eps):
    """What the float sampler draws (its integer thresholds) is G R' with R' stochastic:
    exactly lam-DP on the unit's graph, checked entry by entry in Fractions."""
    Z = np.random.default_rng(1).dirichlet(np.ones(6)).reshape(2, 3)
    s = joint_sampler(Z, eps=eps, unit=unit)
    level = s.lams[0] if unit == "cell" else s.lams[0] * s.lams[1]
    assert lam_at_most_exp(level, eps)
    assert _ratio(s.matrix(drawn=True), (2, 3), unit) <= level


def test_grid_lp_refuses_floats():
    with pytest.raises(ExactnessError):
        grid_lp_optimum(np.full((2, 2), 0.25), lam=2)


@pytest.mark.parametrize("shape, unit, lam", [((2, 2), "cell", F(2)), ((2, 3), "row", F(4)),
                                              ((3, 2), "cell", F(3, 2))])
def test_mechanisms_lie_in_F_of_the_units_graph(shape, unit, lam):
    """Independently of this module: dpfix.theory.polytopes.F with the named graph
    (grid:AxB or king:AxB) holds the product-transport mechanism and the LP optimum."""
    from dpfix.theory.graphs import as_graph
    from dpfix.theory.polytopes import F as F_polytope

    name = f"{'grid' if unit == 'cell' else 'king'}:{shape[0]}x{shape[1]}"
    assert {tuple(sorted(e)) for e in as_graph(name).edges} == \
        {tuple(e) for e in joint_edges(shape, unit).tolist()}
    z = _target(list(range(1, shape[0] * shape[1] + 1)), shape)
    P = F_polytope(shape[0] * shape[1], lam, z.ravel(), graph=name)
    assert P.contains(product_transport(z, lam=lam, unit=unit).matrix)
    assert P.contains(grid_lp_optimum(z, lam=lam, unit=unit).matrix)
    # at a larger lam than the mechanism's the polytope is larger; at a smaller one, not
    assert not F_polytope(shape[0] * shape[1], (lam + 1) / 2, z.ravel(), graph=name).contains(
        product_transport(z, lam=lam, unit=unit).matrix)


def test_posterior_cost_is_the_direct_product():
    """K = G^T diag(z) D, computed directly on the N x N matrices, exactly and in floats."""
    from dpfix.constructors.joint import ground_cost, posterior_cost

    z = _target([1, 0, 2, 3, 1, 4], (2, 3))
    Ga, Gb = geometric_matrix(2, F(2)), geometric_matrix(3, F(3))
    G = np.kron(Ga, Gb)
    D = ground_cost((2, 3))
    want = G.T.dot(np.diag(z.ravel())).dot(D)
    assert (posterior_cost(z, Ga, Gb) == want).all()
    cols = np.array([0, 3, 5])
    got = posterior_cost(np.asarray(z, dtype=float), np.asarray(Ga, dtype=float),
                         np.asarray(Gb, dtype=float), cols)
    assert np.allclose(got, np.asarray(want[:, cols], dtype=float))
