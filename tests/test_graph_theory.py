"""dpfix.explore.graph_theory, graph_instances, graph_mechanisms and graph_tables: the
paper's results on neighbour graphs (docs/graphs.md, "Which results carry over" to "The
grid"). Every number of those sections is pinned
here: the tables are regenerated and must appear in the page verbatim."""

from __future__ import annotations

import itertools
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.explore import graph_instances as gi
from dpfix.explore import graph_mechanisms as gm
from dpfix.explore import graph_tables as gtab
from dpfix.explore import graph_theory as gt
from dpfix.explore.instances import Instance
from dpfix.explore.search import smallest_counterexample, survey
from dpfix.explore.strategies import convex_losses, lams, targets
from dpfix.theory import polytopes

DOC = Path(__file__).resolve().parents[1] / "docs" / "graphs.md"


def _doc() -> str:
    return DOC.read_text()


def _fenced(text: str) -> str:
    return "```text\n" + text + "\n```"


# ------------------------------------------------------------------ instances and the engine
def test_graph_instance_round_trips_and_keys_on_its_edges():
    inst = gi.GraphInstance(3, "3/2", ["1/2", "1/4", "1/4"], ((1, 0), (2, 1)), "path:3")
    assert eval(repr(inst), {"GraphInstance": gi.GraphInstance, "Fraction": Fraction}) == inst
    assert inst.edges == ((0, 1), (1, 2))
    other = gi.GraphInstance(3, "3/2", ["1/2", "1/4", "1/4"], ((0, 1), (0, 2)), "star:3")
    assert inst.key() != other.key() and inst.key().startswith(Instance.key(inst))


def test_atlas_order_of_the_small_connected_graphs():
    labels = [label for label, _ in gi.atlas_graphs([2, 3, 4])]
    assert labels == ["atlas:3", "atlas:6", "atlas:7", "atlas:13", "atlas:14", "atlas:15",
                      "atlas:16", "atlas:17", "atlas:18"]
    assert [label for label, _ in gi.atlas_graphs([4], "cycles")] == ["atlas:16"]
    assert [label for label, _ in gi.atlas_graphs([5], "trees")] == \
        ["atlas:29", "atlas:30", "atlas:31"]
    with pytest.raises(ValueError, match="family"):
        gi.atlas_graphs([3], "forests")
    with pytest.raises(ValueError, match="atlas holds"):
        gi.atlas_graphs([8])


def test_engine_builds_the_polytopes_of_the_instance_graph():
    """over='U' on a GraphInstance enumerates U of its graph: every vertex of U_{K_3}
    is a staircase mechanism, while the path's U(3) has vertices that are not."""
    on_k3 = gi.GraphInstance(3, 2, None, ((0, 1), (0, 2), (1, 2)), "complete:3")
    s = survey(lambda T, inst: gm.is_staircase(T, inst.lam), over="U", instances=[on_k3])
    assert s.holds and s.visited == 1
    path = smallest_counterexample(lambda T, inst: gm.is_staircase(T, inst.lam), over="U",
                                   instances=[Instance(3, 2)])
    assert path.found  # the plain instance keeps the path's rows


def test_engine_refuses_constructors_and_delta_forms_on_a_graph():
    inst = gi.GraphInstance(3, 2, ["1/3"] * 3, ((0, 1), (0, 2), (1, 2)), "complete:3")
    with pytest.raises(ValueError, match="neighbour graph"):
        smallest_counterexample(lambda m, i: True, over="mechanism", instances=[inst])
    with pytest.raises(ValueError, match="representation form is built on the path only"):
        smallest_counterexample(lambda V, i: True, over="RU_delta", delta="1/10",
                                instances=[inst])


# ------------------------------------------------------------------ exact LPs
def test_exact_minimum_is_certified_and_a_forged_certificate_is_refused():
    P = polytopes.F(3, 2, ["1/3"] * 3, graph="complete:3")
    W = gm.loss_weights("complete:3", ["1/3"] * 3, "zero-one")
    opt = gm.exact_minimum(P, W)
    assert opt.value == Fraction(1, 2) and opt.check(P, W)
    forged = gm.LPCertificate(opt.value - Fraction(1, 100), opt.point, opt.eq_duals,
                              opt.ub_duals)
    assert not forged.check(P, W)
    bad_duals = gm.LPCertificate(opt.value, opt.point, opt.eq_duals,
                                 [v + 1 for v in opt.ub_duals])
    assert not bad_duals.check(P, W)


def test_exact_minimum_agrees_with_the_path_lp_of_dpfix_certify():
    from dpfix.certify import exact_optimum

    z = ["4/7", "2/7", "1/7"]
    for loss in ("abs", "zero-one"):
        ours = gm.exact_minimum(polytopes.F(3, 2, z), gm.loss_weights("path:3", z, loss))
        assert ours.value == exact_optimum(z, 2, loss=loss).value


def test_best_remap_preserves_the_target():
    z = np.array([Fraction(4, 7), Fraction(2, 7), Fraction(1, 7)], dtype=object)
    RR = gm.randomized_response(3, 2)
    R = gm.best_remap(RR, z, gm.loss_weights("complete:3", z, "zero-one")).point
    assert list(z @ RR @ R) == list(z)
    assert polytopes.F(3, 2, z, graph="complete:3").contains(RR @ R)


# ------------------------------------------------------------------ which results carry over
@pytest.mark.parametrize("name", [k for k, v in gt.CARRY_OVER.items() if v.status == gt.PROVED])
def test_proved_statements_have_no_counterexample_up_to_n_3(name):
    assert not gt.carry_over_search(name, n=[2, 3], lam=[2])


@pytest.mark.full
@pytest.mark.parametrize("name", ["Theorem 2", "Theorem 10"])
def test_statements_about_u_have_no_counterexample_at_n_4(name):
    assert not gt.carry_over_search(name, n=[4], lam=[2])


def test_the_proof_steps_fail_first_on_the_4_cycle():
    ce = gt.carry_over_search("proof of Theorem 2: n - 1 tight constraints per column",
                              n=[2, 3, 4]).counterexample
    assert ce.instance.label == "atlas:16" and ce.visited == 7
    assert gt._column_tight_rank(ce.witness[:, 0], ce.instance.neighbour_graph(),
                                 ce.lam) == (4, 3)
    scale = gt.dependent_scale(ce.instance)
    assert scale.tolist() == [Fraction(2, 9), Fraction(4, 9), Fraction(2, 9), Fraction(1, 9)]
    assert str(ce) in _doc()


def test_carry_over_report_is_in_the_docs():
    assert _fenced(gtab.report("carry-over")) in _doc()


def test_theorem2_detects_a_non_extreme_positive_point():
    """The predicate is not vacuous: the midpoint of two positive vertices is refused by
    is_extreme and by the scale condition alike, and a vertex passes both."""
    inst = gi.GraphInstance(3, 2, None, ((0, 1), (0, 2), (1, 2)), "complete:3")
    P = polytopes.U(3, 2, graph=inst.neighbour_graph())
    index = gt._scale_index(gt._scales(inst))
    positive = [V for V in P.vertices() if gt._positive(V)]
    mid = (positive[0] + positive[1]) / 2
    assert gt._scale_condition(positive[0], index) and P.is_extreme(positive[0])
    assert not gt._scale_condition(mid, index) and not P.is_extreme(mid)


# ------------------------------------------------------------------ the complete graph
@pytest.mark.parametrize("n", [3, 4])
def test_every_vertex_of_u_kn_is_a_staircase_mechanism(n):
    for lam in (2, "3/2", 3):
        V = polytopes.U(n, lam, graph=f"complete:{n}").vertices()
        assert len(V) == {3: 33, 4: 904}[n]
        assert all(gm.is_staircase(T, lam) for T in V)


def test_u_k5_has_a_vertex_that_is_not_staircase():
    T, C = gtab.non_staircase_vertex()
    P = polytopes.U(5, 2, graph="complete:5")
    assert P.is_extreme(T) and not gm.is_staircase(T, 2)
    value, X = P.maximize(C)
    assert value == 0 and (X == T).all()
    assert P.contains(T)
    assert [sorted(set(T[:, j])) for j in range(1, 4)] == [[Fraction(1, 7), Fraction(2, 7)]] * 3
    assert sorted(set(T[:, 0])) == [Fraction(2, 7), Fraction(3, 7), Fraction(4, 7)]


def test_middle_value_vertices_are_vertices_and_none_exist_at_n_4():
    assert next(gtab.middle_value_vertices(4, 2), None) is None
    assert next(gtab.middle_value_vertices(4, 3), None) is None
    P = polytopes.U(5, 2, graph="complete:5")
    found = list(itertools.islice(gtab.middle_value_vertices(5, 2), 8))
    assert len(found) == 8
    assert all(P.is_extreme(T) and not gm.is_staircase(T, 2) for T in found)


def test_a_vertex_of_f_kn_need_not_be_staircase():
    ce = gtab.fixed_point_staircase_search().counterexample
    assert (ce.n, ce.lam, ce.z) == (2, 2, (Fraction(1, 3), Fraction(2, 3)))
    assert polytopes.F(2, 2, ce.z, graph="complete:2").is_extreme(ce.witness)
    assert _fenced(str(ce)) in _doc()


def test_scales_of_kn_are_the_two_valued_vectors():
    for n in (3, 4):
        S = gt.graph_scales(f"complete:{n}", 3)
        assert S.shape[1] == 2 ** n - 2
        assert all(sorted(set(c))[-1] == 3 * sorted(set(c))[0] and len(set(c)) == 2
                   for c in S.T)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_randomized_response_is_optimal_for_the_uniform_target(n):
    """Proposition K2: the optimum is (n - 1) / (lam + n - 1) (the closed form of the proof)."""
    for lam in (Fraction(2), Fraction(3, 2)):
        z = [Fraction(1, n)] * n
        W = gm.loss_weights(f"complete:{n}", z, "zero-one")
        for kind in ("U", "F"):
            P = polytopes.U(n, lam, graph=f"complete:{n}") if kind == "U" else \
                polytopes.F(n, lam, z, graph=f"complete:{n}")
            assert gm.exact_minimum(P, W).value == (n - 1) / (lam + n - 1)
        RR = gm.randomized_response(n, lam)
        assert sum(W[i, j] * RR[i, j] for i in range(n) for j in range(n)) == \
            (n - 1) / (lam + n - 1)


def test_complete_graph_tables_are_in_the_docs():
    doc = _doc()
    assert gtab.complete_graph_table("zero-one") in doc
    assert gtab.complete_graph_table("abs") in doc


def test_randomized_response_remap_counterexample_is_in_the_docs():
    text = gtab.search_report("randomized response + remap, zero-one", "zero-one")
    assert text.startswith("randomized response + remap, zero-one: smallest counterexample "
                           "at complete:3 (edges 01 02 12), n = 3, lam = 2, z = (0, 1/2, 1/2)")
    assert "optimum of F_G: 1/3; candidate with its best remap: 3/8" in text
    assert _fenced(text) .split("\n", 1)[1] in _doc()


# ------------------------------------------------------------------ trees and cycles
def test_star_alpha_has_the_closed_form():
    """alpha_c = (1 - (k - 1) rho) / (1 + rho) on the star with k leaves (docs/graphs.md)."""
    for k in (2, 3, 4):
        for lam in (Fraction(3, 2), Fraction(2), Fraction(5)):
            _, alpha = gm.graph_geometric(f"star:{k + 1}", lam)
            rho = 1 / lam
            assert alpha[0] == (1 - (k - 1) * rho) / (1 + rho)


def test_graph_geometric_is_the_geometric_mechanism_on_the_path():
    from dpfix.constructors import northwest_corner

    T, alpha = gm.graph_geometric("path:4", 3)
    assert all(a > 0 for a in alpha)
    assert polytopes.U(4, 3).contains(T)
    z = [Fraction(1, 4)] * 4
    W = gm.loss_weights("path:4", z, "abs")
    nw = northwest_corner(z, lam=3).matrix
    value = sum(W[i, j] * nw[i, j] for i in range(4) for j in range(4))
    assert gm.best_remap(T, z, W).value == value  # Theorem A: the remap reaches it


def test_northwest_analogue_holds_on_paths_and_fails_on_the_star():
    from dpfix.explore.instances import lams_by_height

    paths = gi.graph_instances(gi.atlas_graphs([2, 3, 4], "paths"), list(lams_by_height(3)),
                               "named")
    assert survey(gt.northwest_distance, over="instance", instances=paths).holds
    star = gi.GraphInstance(4, 2, ["1/6", "1/6", "1/2", "1/6"], ((0, 3), (1, 3), (2, 3)),
                            "atlas:13")
    v = gt.northwest_analogue_values(star)
    assert (v["geometric"], v["optimum"]) == (Fraction(7, 10), Fraction(24, 35))
    assert not gt.northwest_distance(star)


def test_the_stage_one_optimum_fails_even_on_the_path():
    inst = gi.GraphInstance(2, 2, ["1/4", "3/4"], ((0, 1),), "atlas:3")
    v = gt.northwest_analogue_values(inst)
    assert (v["optimal_noise"], v["optimum"], v["geometric"]) == \
        (Fraction(3, 8), Fraction(3, 10), Fraction(3, 10))
    assert not gt.optimal_noise_remap_holds(inst)


def test_the_4_cycle_fails_the_analogue():
    from dpfix.explore.instances import compositions, lams_by_height

    inst = gi.GraphInstance(4, 2, ["0", "1/2", "0", "1/2"], ((0, 1), (0, 3), (1, 2), (2, 3)),
                            "atlas:16")
    assert gt.graph_geometric_exists(inst) and not gt.northwest_distance(inst)
    insts = gi.graph_instances(gi.atlas_graphs([4, 5], "cycles"), list(lams_by_height(3)),
                               lambda n: compositions(6, n))
    ce = smallest_counterexample(gt.northwest_distance, over="instance",
                                 instances=insts).counterexample
    assert ce.instance == inst and ce.visited == 6


@pytest.mark.full
def test_trees_report_is_in_the_docs():
    assert _fenced(gtab.report("trees")) in _doc()


# ------------------------------------------------------------------ the grid
def test_product_of_northwest_corners_is_optimal_on_small_grids():
    """Theorem G, against the exact LP over F_grid."""
    for row in gtab.grid_rows(["grid:2x2", "grid:2x3"], lam=[2]):
        assert row["product"] == row["F"]
    kron = gm.product_northwest(["1/2"] * 2, ["1/3"] * 3, 2)
    assert not polytopes.U(6, 2, graph="king:2x3").contains(kron)  # diagonals: ratio lam^2


def test_grid_table_is_in_the_docs_first_rows():
    table = gtab.grid_table(["grid:2x2", "king:2x2", "grid:2x3", "king:2x3"], [2])
    doc = _doc()
    for line in table.splitlines()[2:]:
        assert line in doc


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_theorem_g_product_of_northwest_corners_is_optimal(data):
    """Theorem G on random product targets (zeros allowed), lam and separable convex
    losses on grid:2x2 and grid:2x3: the product is in F_grid and matches the exact LP."""
    b = data.draw(st.sampled_from([2, 3]), label="b")
    x = data.draw(targets(2, max_weight=4), label="x")
    y = data.draw(targets(b, max_weight=4), label="y")
    lam = data.draw(lams(max_denominator=2, max_ratio=3), label="lam")
    c1 = data.draw(convex_losses(2, max_step=2), label="c1")
    c2 = data.draw(convex_losses(b, max_step=2), label="c2")
    z = gm.product_target(x, y)
    P = polytopes.F(2 * b, lam, z, graph=f"grid:2x{b}")
    T = gm.product_northwest(x, y, lam)
    assert P.contains(T)
    W = gm.separable_weights(x, y, c1, c2)
    value = sum(W[i, j] * T[i, j] for i in range(2 * b) for j in range(2 * b))
    assert gm.exact_minimum(P, W).value == value


def test_random_utilities_over_u_k5_have_staircase_optima():
    assert gtab.staircase_optima(5, 2, 40) == (40, 0)


@pytest.mark.full
def test_random_utilities_over_u_k5_and_k6_have_staircase_optima_full():
    assert gtab.staircase_optima(5, 2, 150) == (150, 0)
    assert gtab.staircase_optima(6, 2, 60) == (60, 0)


def test_king_bounds_table_first_rows_are_in_the_docs():
    table = gtab.king_bounds_table([(2, 2), (2, 3)], [2, 3])
    doc = _doc()
    assert all(line in doc for line in table.splitlines())


@pytest.mark.full
def test_king_bounds_table_is_in_the_docs():
    assert gtab.king_bounds_table() in _doc()


@pytest.mark.full
def test_grid_table_is_in_the_docs():
    assert gtab.grid_table() in _doc()


# ------------------------------------------------------------------ the summary command
def test_which_theorems_hold_on_the_4_cycle_and_the_path():
    rows = gt.which_theorems_hold("cycle:4")
    assert [here for _, _, here in rows] == ["holds here"] + ["not checked (n > 3)"] * 5 + \
        ["fails here"] * 2
    assert all(here == "holds here" for _, _, here in gt.which_theorems_hold("complete:3"))


def test_the_northwest_analogue_says_nothing_where_the_geometric_mechanism_is_none():
    """On the star at lam = 3/2 the centre's amount is negative: the graph geometric
    mechanism is not a mechanism, and the analogue neither holds nor fails there (None);
    the search predicates count such an instance as held (an implication)."""
    star = gi.GraphInstance(4, "3/2", ["1/4"] * 4, ((0, 1), (0, 2), (0, 3)), "star:4")
    assert not gt.graph_geometric_exists(star)
    assert gt.northwest_analogue_holds(star) is None
    assert gt.northwest_analogue_holds(star, "distance-squared") is None
    assert gt.northwest_distance(star) is True and gt.northwest_distance_squared(star) is True
    path = gi.GraphInstance(3, 2, ["1/3"] * 3, ((0, 1), (1, 2)), "path:3")
    assert gt.northwest_analogue_holds(path) is True
