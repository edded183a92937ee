"""Neighbour graphs (docs/graphs.md): U, F, R_F, R_U with ``graph=``, the graph's scales
(Lemma 1 for graphs, against cdd's enumeration of the cone), the count formulas."""

from __future__ import annotations

import random
from fractions import Fraction
from math import comb

import cdd
import cdd.gmp
import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.numbers.exact import ExactnessError
from dpfix.theory.graphs import (
    as_graph,
    automorphisms,
    edge_ratios,
    exact_power,
    extreme_potentials,
    tight_graph,
)
from dpfix.theory.polytopes import RF, RU, F, U
from dpfix.theory.scales import graph_scales, psi

LAM = Fraction(2)


# -- the path gives today's rows -------------------------------------------------------------
def _documented_u_rows(n: int, lam: Fraction) -> list[tuple[dict[int, Fraction], Fraction]]:
    """U's rows as the module docstring of dpfix.theory.polytopes states them."""
    rows = []
    for j in range(n):
        for i in range(n - 1):
            a, b = i * n + j, (i + 1) * n + j
            rows.append(({a: Fraction(1), b: -lam}, Fraction(0)))
            rows.append(({b: Fraction(1), a: -lam}, Fraction(0)))
    return rows


def _rows(P):
    return [(sorted(a.items()), b) for a, b in P.hrep.ub], \
        [(sorted(a.items()), b) for a, b in P.hrep.eq]


@pytest.mark.parametrize("n", [2, 3, 4, 5])
@pytest.mark.parametrize("lam", [Fraction(2), Fraction(3, 2)])
def test_the_path_gives_todays_rows_row_for_row(n, lam):
    z = [Fraction(1, n)] * n
    ub, _ = _rows(U(n, lam))
    assert ub == [(sorted(a.items()), b) for a, b in _documented_u_rows(n, lam)]
    for graph in (f"path:{n}", nx.path_graph(n)):
        for make in (lambda g: U(n, lam, graph=g), lambda g: F(n, lam, z, graph=g),
                     lambda g: RF(n, lam, z, graph=g), lambda g: RU(n, lam, graph=g),
                     lambda g: U(n, lam, "1/10", graph=g)):
            P, Q = make(None), make(graph)
            assert _rows(P) == _rows(Q)
            assert repr(P) == repr(Q) and P.symmetry == Q.symmetry
            assert Q.neighbour_graph is None
    assert U(n, lam, graph=f"path:{n}")._u_structure


def test_a_graph_gives_one_pair_of_rows_per_edge_and_column():
    P = U(4, 3, graph="cycle:4")
    ub, eq = P.hrep.ub, P.hrep.eq
    assert len(ub) == 2 * 4 * 4 and len(eq) == 4
    # column 1, the edge 0-3 (second in sorted order): T[0,1] <= 3 T[3,1] and back
    assert ub[8 + 2] == ({1: 1, 13: -3}, 0) and ub[8 + 3] == ({13: 1, 1: -3}, 0)
    assert repr(P) == "U(n=4, lam=3, graph=cycle:4)"


def test_weights_give_exact_ratios_and_irrational_ones_are_refused():
    G = nx.Graph([(0, 1, {"weight": 2}), (1, 2, {"weight": Fraction(3, 2)})])
    P = U(3, 4, graph=G)
    assert {tuple(sorted(a.values())) for a, _ in P.hrep.ub} == {(-16, 1), (-8, 1)}
    assert P.contains([[Fraction(16, 25), Fraction(9, 25), 0], [Fraction(1, 25), 0, 0],
                       [Fraction(8, 25), 0, 0]]) is False  # rows do not sum to 1
    with pytest.raises(ValueError, match=r"edge 1-2 has weight 3/2 and lam\^w = 2\^\(3/2\) is "
                                         r"irrational"):
        U(3, 2, graph=G)
    with pytest.raises(ExactnessError):
        U(2, 2, graph=nx.Graph([(0, 1, {"weight": 1.5})]))
    assert exact_power(Fraction(9, 4), Fraction(3, 2)) == Fraction(27, 8)
    assert exact_power(Fraction(10**40 + 1), Fraction(1, 2)) is None


@pytest.mark.parametrize("graph, message", [
    (nx.Graph([(0, 1), (2, 3)]), r"not connected \(components \[\[0, 1\], \[2, 3\]\]\)"),
    (nx.Graph([(0, 1), (1, 1)]), "a self-loop at 1"),
    (nx.Graph([(1, 2), (2, 3)]), r"exactly 0\.\.2; missing \[0\]; not in range \[3\]"),
    (nx.Graph([(0, 1, {"weight": Fraction(1, 2)})]), "must be >= 1, got 1/2"),
    (nx.DiGraph([(0, 1)]), "simple undirected"),
    (nx.Graph([("a", 0)]), "got the node 'a'"),
    ("wheel:5", "neither a named graph"),
    ("cycle:2", "needs N >= 3"),
    ("grid:2", "needs A, B >= 1"),
    ("path:4", "has 4 nodes, but n = 3"),
])
def test_bad_graphs_are_refused_in_one_line(graph, message):
    with pytest.raises(ValueError, match=message) as info:
        U(3, 2, graph=graph) if message.startswith("has 4") else as_graph(graph)
    assert "\n" not in str(info.value)


def test_a_file_of_edges(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("# a triangle, one heavy edge\n0 1\n1 2 2\n\n2 0 3/2  # rational\n")
    G = as_graph(path)
    assert sorted(G.edges(data="weight")) == [(0, 1, 1), (0, 2, Fraction(3, 2)), (1, 2, 2)]
    assert G.graph["label"] == "g.txt"
    assert U(3, 4, graph=str(path)).neighbour_graph.number_of_edges() == 3
    path.write_text("0 1\n1 x\n")
    with pytest.raises(ValueError, match="line 2: the nodes must be integers"):
        as_graph(path)
    path.write_text("0 1\n1 0\n")
    with pytest.raises(ValueError, match="line 2: the edge 1-0 is listed twice"):
        as_graph(path)


def test_the_input_graph_is_not_modified():
    G = nx.Graph([(1, 0)])
    as_graph(G)
    assert list(G.edges(data=True)) == [(1, 0, {})]


def test_named_graphs():
    assert sorted(as_graph("star:4").edges) == [(0, 1), (0, 2), (0, 3)]
    assert as_graph("king:2x3").number_of_edges() == 7 + 4
    assert as_graph("grid:3x3").number_of_edges() == 12
    assert nx.is_isomorphic(as_graph("grid:2x3"), nx.grid_2d_graph(2, 3))


def test_delta_takes_a_graph_of_unit_weights_only():
    n = 3
    P = U(n, 2, "1/10", graph="cycle:3")
    assert len(P.hrep.ub) == n * n + 2 * 3 * (2 ** n - 2)
    assert P.contains([["1/3"] * 3] * 3)
    with pytest.raises(ValueError, match="delta > 0 with graph= needs every edge weight 1"):
        U(2, 4, "1/10", graph=nx.Graph([(0, 1, {"weight": 2})]))


def test_the_symmetry_is_the_automorphism_group():
    assert len(automorphisms(as_graph("grid:2x3"))) == 4
    assert len(automorphisms(as_graph("star:5"))) == 24
    heavy = nx.Graph([(0, 1, {"weight": 2}), (1, 2), (2, 0)])
    assert automorphisms(as_graph(heavy)) == ((0, 1, 2), (1, 0, 2))
    z = [Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)]
    assert F(3, 2, z, graph="complete:3").symmetry.rows == ((0, 1, 2), (0, 2, 1))


@pytest.mark.parametrize("graph, z", [
    ("complete:3", None), ("star:4", None), ("complete:3", ["1/2", "1/4", "1/4"]),
])
def test_every_symmetry_maps_the_vertices_onto_themselves(graph, z):
    n = as_graph(graph).number_of_nodes()
    P = U(n, 2, graph=graph) if z is None else F(n, 2, z, graph=graph)
    V = {tuple(v.ravel()) for v in P.vertices(backend="cdd")}
    for rho, sigma in P.symmetry.elements():
        for v in V:
            X = np.array(v, dtype=object).reshape(n, n)[list(rho)][:, list(sigma)]
            assert tuple(X.ravel()) in V


# -- the scales ---------------------------------------------------------------------------
def cdd_rays(G: nx.Graph, lam: Fraction) -> set[tuple[Fraction, ...]]:
    """The extreme rays of C_G by cdd's double description, each scaled to sum 1."""
    n = G.number_of_nodes()
    rows = [[Fraction(0)] + [Fraction(int(i == u)) for i in range(n)] for u in range(n)]
    for u, v, r in edge_ratios(G, lam):
        for a, b in ((u, v), (v, u)):  # r t_b - t_a >= 0
            row = [Fraction(0)] * (n + 1)
            row[a + 1], row[b + 1] = Fraction(-1), r
            rows.append(row)
    mat = cdd.gmp.matrix_from_array(rows, rep_type=cdd.RepType.INEQUALITY)
    gens = cdd.gmp.copy_generators(cdd.gmp.polyhedron_from_matrix(mat)).array
    out = set()
    for g in gens:
        assert g[0] == 0  # a ray (the cone's only vertex is 0, which cdd leaves out)
        t = [Fraction(x) for x in g[1:]]
        out.add(tuple(x / sum(t) for x in t))
    return out


def _scales_set(G, lam):
    S = graph_scales(G, lam)
    cols = [tuple(S[:, m]) for m in range(S.shape[1])]
    assert len(set(cols)) == len(cols)
    return set(cols)


#: every connected graph on 1 to 5 nodes (the atlas lists them by size, then edges)
ATLAS = [G for G in nx.graph_atlas_g()[1:53] if nx.is_connected(G)]
#: one in three, and two on seven nodes (the atlas's 7-node part starts at 209)
SAMPLE = ATLAS[::3] + [nx.graph_atlas(1000), nx.graph_atlas(1252)]


def _weighted(G: nx.Graph, seed: int) -> nx.Graph:
    rng = random.Random(seed)
    H = nx.Graph()
    H.add_nodes_from(G)
    H.add_edges_from((u, v, {"weight": rng.choice([1, 2, 3])}) for u, v in G.edges)
    return H


def _check_against_cdd(G, lam):
    assert _scales_set(G, lam) == cdd_rays(as_graph(G), lam)


@pytest.mark.parametrize("k", range(len(SAMPLE)))
def test_graph_scales_are_cdds_extreme_rays_sample(k):
    G = SAMPLE[k]
    _check_against_cdd(G, LAM)
    _check_against_cdd(_weighted(G, k), Fraction(3, 2))


@pytest.mark.full
def test_graph_scales_are_cdds_extreme_rays_every_graph_on_six_nodes():
    six = [G for G in nx.graph_atlas_g()[53:209] if nx.is_connected(G)]
    assert len(ATLAS) == 1 + 1 + 2 + 6 + 21 and len(six) == 112
    for k, G in enumerate(ATLAS + six):
        for lam in (Fraction(2), Fraction(3, 2)):
            _check_against_cdd(G, lam)
            _check_against_cdd(_weighted(G, k), lam)


def test_rational_weights_against_cdd():
    G = nx.Graph([(0, 1, {"weight": Fraction(3, 2)}), (1, 2), (2, 3, {"weight": 2}), (3, 0),
                  (0, 2, {"weight": Fraction(5, 2)})])
    _check_against_cdd(G, Fraction(4))
    _check_against_cdd(G, Fraction(9, 4))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 6])
def test_the_path_scales_are_psi(n):
    S = graph_scales(f"path:{n}" if n > 1 else nx.empty_graph(1), 3)
    assert S.shape == (n, 2 ** (n - 1)) and (S == psi(n, 3)).all()


@given(st.integers(2, 6), st.integers(0, 10**6))
@settings(max_examples=25, deadline=None)
def test_every_potential_satisfies_lemma_1_for_graphs(n, seed):
    rng = random.Random(seed)
    G = nx.gnp_random_graph(n, 0.6, seed=seed)
    if not nx.is_connected(G):
        G = nx.compose(G, nx.path_graph(n))
    for u, v in G.edges:
        G.edges[u, v]["weight"] = rng.choice([Fraction(1), Fraction(2), Fraction(3, 2)])
    G = as_graph(G)
    for h in extreme_potentials(G):
        assert min(h) == 0
        assert all(abs(h[u] - h[v]) <= w for u, v, w in G.edges(data="weight"))
        assert nx.is_connected(tight_graph(G, h))


# -- the counts ---------------------------------------------------------------------------
@given(st.integers(2, 9), st.integers(0, 10**6))
@settings(max_examples=20, deadline=None)
def test_trees_have_2_to_the_n_minus_1_scales(n, seed):
    rng = random.Random(seed)
    T = nx.from_prufer_sequence([rng.randrange(n) for _ in range(n - 2)]) if n > 2 \
        else nx.path_graph(2)
    for u, v in T.edges:
        T.edges[u, v]["weight"] = rng.choice([1, 2, 5])
    assert len(extreme_potentials(as_graph(T))) == 2 ** (n - 1)


@pytest.mark.parametrize("n", range(3, 11))
def test_cycle_counts(n):
    expected = comb(n, n // 2) if n % 2 == 0 else n * comb(n - 1, (n - 1) // 2)
    assert len(extreme_potentials(as_graph(f"cycle:{n}"))) == expected


@pytest.mark.parametrize("n", range(2, 8))
def test_complete_graph_counts(n):
    assert len(extreme_potentials(as_graph(f"complete:{n}"))) == 2 ** n - 2


def test_potentials_do_not_depend_on_lam_and_scales_are_lam_to_the_h():
    G = as_graph("grid:2x3")
    S = graph_scales(G, 3)
    for m, h in enumerate(extreme_potentials(G)):
        t = [Fraction(3) ** int(x) for x in h]
        assert list(S[:, m]) == [x / sum(t) for x in t]


# -- R_F and R_U ----------------------------------------------------------------------------
@pytest.mark.parametrize("graph", ["complete:3", "star:4"])
def test_psi_g_maps_r_u_onto_u_g(graph):
    n = as_graph(graph).number_of_nodes()
    P, R = U(n, 2, graph=graph), RU(n, 2, graph=graph)
    S = graph_scales(graph, 2)
    images = {tuple((S @ B).ravel()) for B in R.vertices(backend="cdd")}
    assert all(P.contains(np.array(T, dtype=object).reshape(n, n)) for T in images)
    assert {tuple(V.ravel()) for V in P.vertices(backend="cdd")} <= images


def test_psi_g_maps_r_f_onto_f_g():
    z = ["1/2", "1/3", "1/6"]
    P, R = F(3, 2, z, graph="complete:3"), RF(3, 2, z, graph="complete:3")
    S = graph_scales("complete:3", 2)
    images = {tuple((S @ B).ravel()) for B in R.vertices(backend="cdd")}
    assert {tuple(V.ravel()) for V in P.vertices(backend="cdd")} <= images
    assert repr(R) == "R_F(n=3, lam=2, z=[1/2, 1/3, 1/6], graph=complete:3)"


@pytest.mark.parametrize("a, b", [(1, 3), (2, 2), (2, 3), (3, 3), (2, 5)])
def test_complete_bipartite_counts(a, b):
    G = nx.complete_bipartite_graph(a, b)
    assert len(extreme_potentials(as_graph(G))) == 2 ** a + 2 ** b - 2


@pytest.mark.parametrize("b", range(2, 6))
def test_ladder_counts(b):
    assert len(extreme_potentials(as_graph(f"grid:2x{b}"))) == 2 * 3 ** (b - 1)


@pytest.mark.parametrize("graph", ["grid:3x3", "cycle:6", "grid:2x4"])
def test_on_a_bipartite_graph_every_edge_is_tight(graph):
    G = as_graph(graph)
    for h in extreme_potentials(G):
        assert tight_graph(G, h).number_of_edges() == G.number_of_edges()


# -- the vertices of U_G counted through the faces of C_G ------------------------------------
FOUR = [G for G in ATLAS if G.number_of_nodes() == 4]


def _structural_against_normaliz(G, lam):
    from dpfix.theory.graphs import u_graph_vertex_count

    G = as_graph(G)
    expected = U(4, lam, graph=G).count_vertices(backend="normaliz")
    assert u_graph_vertex_count(G, lam, symmetry=True) == expected
    assert u_graph_vertex_count(G, lam, symmetry=False) == expected


@pytest.mark.parametrize("k", range(len(FOUR)))
def test_the_structural_count_of_u_g_is_normaliz(k):
    _structural_against_normaliz(FOUR[k], Fraction(2))
    if FOUR[k].number_of_edges() < 6:  # weighted K_4: Normaliz takes 10 s (behind --full)
        _structural_against_normaliz(_weighted(FOUR[k], k), Fraction(3, 2))


@pytest.mark.full
def test_the_structural_count_of_weighted_u_g_is_normaliz_every_graph_on_four_nodes():
    for k, G in enumerate(FOUR):
        for seed in (k, k + 100):
            _structural_against_normaliz(_weighted(G, seed), Fraction(3, 2))


def test_the_faces_of_the_lipschitz_polytope():
    from dpfix.theory.graphs import lipschitz_faces

    # K_n: {max h - min h <= 1}: a face per pair of disjoint non-empty (bottom, top) sets,
    # and the whole polytope
    for n in (3, 4, 5):
        assert len(lipschitz_faces(as_graph(f"complete:{n}"))) == 3 ** n - 2 * 2 ** n + 2
    # a tree: a cube in the edge differences, 3^(n-1) faces
    assert len(lipschitz_faces(as_graph("star:5"))) == 81


@pytest.mark.full
@pytest.mark.parametrize("graph, count", [("star:5", 6845),
                                          (nx.complete_bipartite_graph(2, 3), 3005)])
def test_the_structural_count_at_five_nodes_is_normaliz(graph, count):
    # the 5-cycle's 1,004,125 vertices agree too (Normaliz: 3 minutes; docs/graphs.md)
    P = U(5, 2, graph=graph)
    assert P.count_vertices(backend="structure") == count
    assert P.count_vertices(backend="normaliz") == count


# -- dpfix explore graph --------------------------------------------------------------------
def test_explore_graph_prints_scales_and_counts(capsys):
    from helpers import cli

    rc, out, err = cli(capsys, "explore", "graph", "--graph", "star:4", "--lam", "3",
                       "--z", "1/4", "1/4", "1/4", "1/4")
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == ("graph star:4: n = 4 values, 3 edges, every weight 1, 6 automorphisms; "
                        "lam = 3")
    assert "8 = 2^(n-1), a tree" in lines[1]
    assert sum(line.startswith("  h = ") for line in lines) == 8
    # 280 at lam = 3 (208 at lam = 2: on a graph, the count depends on lam already at n = 4)
    at = next(i for i, line in enumerate(lines) if line.startswith("U_G: "))
    assert lines[at] == "U_G: dimension 12, " \
        f"{U(4, 3, graph='star:4').count_vertices(backend='cdd')} vertices" == \
        "U_G: dimension 12, 280 vertices"
    F4 = F(4, 3, ["1/4"] * 4, graph="star:4")
    assert lines[at + 1] == (f"F_G[z], z = (1/4, 1/4, 1/4, 1/4): dimension {F4.dimension()}, "
                             f"{F4.count_vertices(backend='cdd')} vertices")
    # then docs/graphs.md section 8, statement by statement (dpfix.explore.graph_theory)
    assert lines[at + 2].startswith("which theorems hold")
    assert lines[at + 3] == "  Theorem 2: proved for every connected graph; holds here"
    assert lines[-1] == ("  proof of Lemma 1: a scale's tight constraints are independent: "
                         "fails on some graphs (smallest: the 4-cycle); holds here")


def test_explore_graph_reads_a_file_of_edges(capsys, tmp_path):
    from helpers import cli

    path = tmp_path / "edges.txt"
    path.write_text("0 1 2\n1 2\n")
    rc, out, _ = cli(capsys, "explore", "graph", "--graph", path, "--lam", "2")
    assert rc == 0
    assert out.splitlines()[0].startswith("graph edges.txt: n = 3 values, 2 edges, weights "
                                          "0-1: 2 (others 1)")
    assert "U_G: dimension 6, " in out


@pytest.mark.parametrize("argv, message", [
    (["explore", "graph", "--graph", "cycle:5", "--lam", "1"], "lam: must be > 1"),
    (["explore", "graph", "--graph", "cycle:5", "--lam", "0.5"], "lam"),
    (["explore", "graph"], "give --graph"),
    (["explore", "graph", "--graph", "nothing:3"], "neither a named graph"),
    (["explore", "--graph", "cycle:4"], "only with 'dpfix explore graph'"),
    (["explore", "graph", "--graph", "path:3", "--z", "1/2", "1/2"], "z"),
])
def test_explore_graph_refuses_bad_input_in_one_line(capsys, argv, message):
    from helpers import cli

    rc, out, err = cli(capsys, *argv)
    assert rc == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1


def test_report_sections_are_appended(capsys):
    from dpfix.explore import graphs as eg

    def degrees(case):
        """degrees (a section of the report)"""
        return [f"  {sorted(d for _, d in case.graph.degree)}"]

    eg.SECTIONS.append(degrees)
    try:
        text = eg.format_graph_summary(eg.graph_summary("star:4"))
    finally:
        eg.SECTIONS.remove(degrees)
    assert text.splitlines()[-2:] == ["degrees (a section of the report)", "  [1, 1, 1, 3]"]


# -- the table of docs/graphs.md section 5 --------------------------------------------------
def _doc_table() -> list[list[str]]:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "graphs.md").read_text()
    block = text.split("<!-- table: dpfix explore graph --table -->\n", 1)[1].split("\n\n")[0]
    return [line.split(" | ") for line in block.splitlines()]


def _table_matches(vertices_upto: int) -> None:
    from dpfix.explore.graphs import format_graph_table, graph_table

    fresh = [line.split(" | ")
             for line in format_graph_table(graph_table(vertices_upto=vertices_upto)).splitlines()]
    doc = _doc_table()
    assert len(doc) == len(fresh)
    for a, b in zip(doc, fresh, strict=True):
        if b[-1] == "- |" and a[-1] != "- |":  # a count beyond vertices_upto
            assert int(b[1]) > vertices_upto
            a, b = a[:-1], b[:-1]
        assert a == b


def test_the_table_in_the_docs_is_the_commands():
    _table_matches(4)


@pytest.mark.full
def test_the_table_in_the_docs_is_the_commands_with_every_count():
    _table_matches(5)


def test_numpy_integer_nodes_are_integers():
    G = nx.relabel_nodes(nx.path_graph(3), {i: np.int64(i) for i in range(3)})
    H = nx.Graph([(0, 1), (1, 2), (0, 2)])
    H = nx.relabel_nodes(H, {i: np.int64(i) for i in range(3)})
    assert U(3, 2, graph=G).neighbour_graph is None  # the path
    assert sorted(as_graph(H).edges) == [(0, 1), (0, 2), (1, 2)]


@pytest.mark.parametrize("make", [lambda: RU(3, 2, graph="complete:3"),
                                  lambda: RF(3, 2, ["1/2", "1/4", "1/4"], graph="complete:3")])
def test_the_scale_permutations_map_r_onto_itself(make):
    R = make()
    k, n = R.shape
    V = {tuple(v.ravel()) for v in R.vertices(backend="cdd")}
    assert len(R.symmetry.rows) == (6 if R.z is None else 2)
    for rho, sigma in R.symmetry.elements():
        for v in V:
            X = np.array(v, dtype=object).reshape(k, n)[list(rho)][:, list(sigma)]
            assert tuple(X.ravel()) in V
