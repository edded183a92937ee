"""Theorem G for d columns (docs/graphs.md section 11) on 3-D grids, exactly: the product of
the paths' northwest corners against two exact LPs over F_grid, the proof's dual point,
and the failures when a hypothesis is dropped."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.explore import grid_products as gp
from dpfix.explore.strategies import lams, monge_costs, targets
from dpfix.theory.polytopes import F

DOC = Path(__file__).resolve().parents[1] / "docs" / "graphs.md"
HALF = ["1/2", "1/2"]
ABS2 = [[0, 1], [1, 0]]
ZERO_ONE3 = [[0, 1, 1], [1, 0, 1], [1, 1, 0]]


def _abs(n):
    return [[abs(i - j) for j in range(n)] for i in range(n)]


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_theorem_g_on_2x2x2_against_the_primal_lp(data):
    """Random product targets (zeros allowed), lam and Monge costs on each coordinate: the
    product is in F_grid, its count error is cdd's exact optimum over F_grid, the sum of
    the paths' optima and the value of the proof's dual point, which is feasible."""
    xs = [data.draw(targets(2, max_weight=4), label=f"x{k}") for k in range(3)]
    costs = [data.draw(monge_costs(2, max_weight=2), label=f"c{k}") for k in range(3)]
    lam = data.draw(lams(max_denominator=2, max_ratio=3), label="lam")
    chk = gp.theorem_g_check(xs, costs, lam)
    assert chk.product_in_F and chk.dual_feasible and chk.holds
    assert chk.optimum == chk.product_value == chk.dual_value == sum(chk.path_optima)


@settings(max_examples=4, deadline=None)
@given(st.data())
def test_theorem_g_on_2x2x3_against_the_dual_lp(data):
    xs = [data.draw(targets(n, max_weight=3), label=f"x{k}") for k, n in enumerate((2, 2, 3))]
    costs = [data.draw(monge_costs(n, max_weight=2), label=f"c{k}")
             for k, n in enumerate((2, 2, 3))]
    chk = gp.theorem_g_check(xs, costs, 2, solver="dual")
    assert chk.holds and chk.optimum == chk.product_value == sum(chk.path_optima)


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_the_product_lemma_for_any_separable_cost_on_2x2x2(data):
    """For separable costs that need not be Monge (any small integers), the optimum over
    F_grid is the sum of the paths' optima (the product lemma of docs/graphs.md), and the
    product of northwest corners attains it exactly when each path's northwest corner
    attains its path's optimum."""
    xs = [data.draw(targets(2, max_weight=3), label=f"x{k}") for k in range(3)]
    entries = st.integers(0, 3)
    costs = [data.draw(st.lists(st.lists(entries, min_size=2, max_size=2), min_size=2,
                                max_size=2), label=f"c{k}") for k in range(3)]
    lam = data.draw(st.sampled_from([2, 3]), label="lam")
    chk = gp.theorem_g_check(xs, costs, lam, certificate=False)
    assert chk.optimum == sum(chk.path_optima)
    nw = [sum(x[i] * c[i][j] * T[i, j] for i in range(2) for j in range(2))
          for x, c, T in ((gp.product_target(x), c, gp.product_of_northwest_corners([x], lam))
                          for x, c in zip(xs, costs, strict=True))]
    assert chk.product_value == sum(nw)
    assert (chk.product_value == chk.optimum) is all(
        a == b for a, b in zip(nw, chk.path_optima, strict=True))


def test_the_two_exact_lps_agree_where_the_product_is_optimal_and_where_it_is_not():
    """The primal simplex and the dual column generation give the same optimum, on a
    separable Monge cost (= the product) and on the king's distance (< the product)."""
    xs = [HALF, ["1/3", "2/3"], ["1/4", "3/4"]]
    z = gp.product_target(*xs)
    states = [(a, b, c) for a in range(2) for b in range(2) for c in range(2)]
    king = [[max(abs(p - q) for p, q in zip(s, t, strict=True)) for t in states]
            for s in states]
    T = gp.product_of_northwest_corners(xs, 2)
    for C, optimal in ((gp.separable_cost([ABS2] * 3), True), (king, False)):
        primal = gp.grid_optimum(z, C, (2, 2, 2), 2)
        assert primal == gp.grid_optimum(z, C, (2, 2, 2), 2, solver="dual")
        assert (primal == (z[:, None] * np.array(C, dtype=object) * T).sum()) is optimal


@pytest.mark.parametrize("xs", [
    [HALF, ["1/3", "2/3"]],
    [HALF, ["1/3", "2/3"], ["1/4", "3/4"]],
    [["1/5", "4/5"], ["1", "0"], ["1/6", "1/2", "1/3"]],
    [HALF, ["1/3", "2/3"], ["1/4", "0", "3/4"]],
])
def test_product_noise_then_transport_is_optimal_for_product_targets(xs):
    """Corollary G2: the joint release's product noise with its count-error transport
    remap reaches the product of northwest corners, the optimum over F_grid (cdd's exact
    LP on 2 x 2 x 2 and below)."""
    from dpfix.constructors.joint import product_transport
    shape = tuple(len(x) for x in xs)
    z = gp.product_target(*xs)
    value = product_transport(z, shape, lam=2, unit="cell").count_error()
    chk = gp.theorem_g_check(xs, [_abs(n) for n in shape], 2,
                             solver="primal" if len(z) <= 8 else None)
    assert chk.holds and value == chk.product_value


def test_the_failures_of_the_docs_each_hypothesis_dropped():
    rows = {r["case"]: r for r in gp.failure_cases()}
    ns, nm, npd = rows["not separable"], rows["not Monge"], rows["not a product"]
    assert (ns["optimum"], ns["product"], ns["product_in_F"]) == \
        (Fraction(41, 60), Fraction(31, 45), True)
    assert (nm["optimum"], nm["product"], nm["path_optima"]) == \
        (Fraction(5, 6), Fraction(211, 252), Fraction(5, 6))
    assert (npd["optimum"], npd["product"], npd["product_in_F"], npd["path_optima"]) == \
        (Fraction(1, 2), Fraction(1), False, Fraction(1))
    table = gp.failure_table(rows.values())
    assert table in DOC.read_text()


def test_the_proofs_dual_point_is_infeasible_for_a_cost_that_is_not_monge():
    """The certificate check can fail: with the zero-one cost on the third coordinate the
    paths' northwest duals do not combine into a feasible point."""
    xs = [HALF, HALF, ["1/4", "1/4", "1/2"]]
    chk = gp.theorem_g_check(xs, [ABS2, ABS2, ZERO_ONE3], 3, solver=None)
    assert chk.monge == (True, True, False) and chk.product_in_F
    assert chk.dual_feasible is False and not chk.holds


def test_the_product_leaves_f_grid_when_lam_is_below_its_own():
    """Membership is checked, not assumed: the product built at lam = 3 is not in
    F_grid at lam = 2."""
    xs = [HALF, ["1/3", "2/3"], HALF]
    T = gp.product_of_northwest_corners(xs, 3)
    assert not F(8, 2, gp.product_target(*xs), graph=gp.grid_graph((2, 2, 2))).contains(T)
    assert F(8, 3, gp.product_target(*xs), graph=gp.grid_graph((2, 2, 2))).contains(T)


def test_the_grid_graph_is_the_cartesian_product_of_paths():
    import networkx as nx
    G = gp.grid_graph((2, 3, 2))
    H = nx.convert_node_labels_to_integers(
        nx.cartesian_product(nx.cartesian_product(nx.path_graph(2), nx.path_graph(3)),
                             nx.path_graph(2)), ordering="sorted")
    assert sorted(G.edges) == sorted(tuple(sorted(e)) for e in H.edges)


def test_two_columns_agree_with_the_two_column_helpers():
    """For d = 2 the d-column objects are those of docs/graphs.md's two-column Theorem G."""
    from dpfix.explore import graph_mechanisms as gm
    from dpfix.theory.graphs import as_graph
    x, y = ["1/4", "3/4"], ["1/6", "1/2", "1/3"]
    assert gp.product_target is gm.product_target  # one definition
    assert [str(v) for v in gp.product_target(x, y)] == ["1/24", "1/8", "1/12",
                                                         "1/8", "3/8", "1/4"]
    assert (gp.product_of_northwest_corners([x, y], 3) == gm.product_northwest(x, y, 3)).all()
    W = gp.product_target(x, y)[:, None] * gp.separable_cost([ABS2, _abs(3)])
    assert (W == gm.separable_weights(x, y, ABS2, _abs(3))).all()
    assert sorted(gp.grid_graph((2, 3)).edges) == sorted(
        tuple(sorted(e)) for e in as_graph("grid:2x3").edges)


def test_separable_cost_and_monge():
    C = gp.separable_cost([ABS2, _abs(3)])
    assert C[0, 5] == 3 and C[4, 1] == 1
    assert gp.is_monge(_abs(4)) and not gp.is_monge(ZERO_ONE3)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: gp.grid_graph((4, 4, 5)), r"^shape: 4x4x5 has 80 states; the exact checks "
                                       r"take at most 64$"),
    (lambda: gp.grid_graph((1,)), r"^shape: every size at least 1 and at least 2 states"),
    (lambda: gp.grid_optimum(gp.product_target(*[HALF] * 3), gp.separable_cost([ABS2] * 3),
                             (2, 2, 2), 2, solver="simplex"),
     r"^solver: one of primal, dual, got 'simplex'$"),
    (lambda: gp.theorem_g_check([HALF, HALF], [ABS2], 2),
     r"^costs: one n x n matrix per coordinate"),
])
def test_bad_input_gets_one_line(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_floats_are_refused():
    from dpfix.numbers.exact import ExactnessError
    with pytest.raises(ExactnessError):
        gp.product_target([0.5, 0.5])


@pytest.mark.full
@pytest.mark.parametrize("shape", [(2, 3, 3), (3, 3, 3)])
def test_theorem_g_on_larger_grids_against_the_dual_lp(shape):
    xs = {2: ["1/3", "2/3"], 3: ["1/6", "1/2", "1/3"]}
    marg = [xs[n] if k != 1 else (["1/4", "0", "3/4"] if n == 3 else xs[n])
            for k, n in enumerate(shape)]
    costs = [_abs(shape[0]), [[(i - j) ** 2 for j in range(shape[1])]
                              for i in range(shape[1])], _abs(shape[2])]
    chk = gp.theorem_g_check(marg, costs, 2, solver="dual")
    assert chk.holds and chk.optimum == chk.dual_value == sum(chk.path_optima)


def test_the_docs_state_the_checks_figures():
    text = DOC.read_text()
    assert "**Theorem G for d columns.**" in text
    assert re.search(r"check_theorem_g_grids\.py", text)
    assert np.all([name in text for name in ("not separable", "not Monge", "not a product")])
