"""Graphs as instances of the engine: :meth:`GraphInstance.from_spec` (a spec, a networkx
graph, an atlas index; every bad graph refused in one line), the families of
:func:`graphs_of`, ``graph=`` of :func:`smallest_counterexample` and :func:`survey` (the
polytopes built on the graph, the path-only objects refused before any work), and the
details a predicate returns with False, carried by the counterexample and printed exactly,
in text and in LaTeX."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.explore.graph_instances import GraphInstance, graphs_of
from dpfix.explore.graph_mechanisms import loss_weights
from dpfix.explore.graphs import check_graph_size, named_graph_nodes
from dpfix.explore.instances import Instance, compositions
from dpfix.explore.search import (
    BudgetReached,
    Counterexample,
    PredicateTypeError,
    smallest_counterexample,
    survey,
)
from dpfix.numbers.exact import ExactnessError
from dpfix.theory import polytopes
from dpfix.theory.graphs import as_graph


# ------------------------------------------------------------------ from_spec
@pytest.mark.parametrize("spec, label, edges", [
    ("star:4", "star:4", ((0, 1), (0, 2), (0, 3))),
    ("path:3", "path:3", ((0, 1), (1, 2))),
    ("cycle:4", "cycle:4", ((0, 1), (0, 3), (1, 2), (2, 3))),
    ("complete:3", "complete:3", ((0, 1), (0, 2), (1, 2))),
    ("grid:2x2", "grid:2x2", ((0, 1), (0, 2), (1, 3), (2, 3))),
    ("atlas:13", "atlas:13", ((0, 3), (1, 3), (2, 3))),
    (13, "atlas:13", ((0, 3), (1, 3), (2, 3))),
    (np.int64(16), "atlas:16", ((0, 1), (0, 3), (1, 2), (2, 3))),
])
def test_from_spec_reads_every_kind_of_spec(spec, label, edges):
    inst = GraphInstance.from_spec(spec, "3/2")
    assert (inst.label, inst.edges, inst.edge_weights, inst.z) == (label, edges, (), None)
    assert inst.lam == Fraction(3, 2) and inst.n == 1 + max(max(e) for e in edges)
    assert sorted(inst.neighbour_graph().edges) == list(edges)


def test_from_spec_takes_a_networkx_graph_a_file_and_a_target(tmp_path):
    G = nx.Graph([(0, 1), (1, 2, {"weight": 2})])
    inst = GraphInstance.from_spec(G, 2, ["1/2", "1/4", "1/4"])
    assert inst.label == "graph" and inst.edge_weights == (1, 2)
    assert inst.z == (Fraction(1, 2), Fraction(1, 4), Fraction(1, 4))
    assert inst.neighbour_graph().edges[1, 2]["weight"] == 2
    assert "weights 12: 2" in str(inst) and eval(repr(inst)) == inst  # noqa: S307
    G.graph["label"] = "mine"
    assert GraphInstance.from_spec(G, 2).label == "mine"
    path = tmp_path / "edges.txt"
    path.write_text("0 1\n1 2 3/2  # a weight\n")
    assert GraphInstance.from_spec(str(path), 4).edge_weights == (1, Fraction(3, 2))
    assert list(G.edges) == [(0, 1), (1, 2)] and "label" in G.graph  # the input is kept


def test_the_weights_reach_the_polytopes():
    inst = GraphInstance.from_spec(nx.Graph([(0, 1, {"weight": 2})]), 2)
    U = polytopes.U(2, 2, graph=inst.neighbour_graph())
    assert U.contains(np.array([[Fraction(4, 5), Fraction(1, 5)],
                                [Fraction(1, 5), Fraction(4, 5)]], dtype=object))  # ratio 4
    assert inst.key() != GraphInstance.from_spec("path:2", 2).key()


@pytest.mark.parametrize("spec, lam, z, match", [
    ("wheel:5", 2, None, "neither a named graph"),
    (nx.Graph([(0, 1), (2, 3)]), 2, None, "not connected"),
    ("atlas:2", 2, None, "not connected"),
    (nx.Graph([(0, 1), (1, 1)]), 2, None, "self-loop at 1"),
    (nx.Graph([(0, 1, {"weight": 0})]), 2, None, "must be >= 1, got 0"),
    (nx.Graph([(0, 1, {"weight": "-3"})]), 2, None, "must be >= 1, got -3"),
    (nx.Graph([(0, 1, {"weight": "3/2"})]), 2, None, "2\\^\\(3/2\\) is irrational"),
    (nx.Graph([(0, 1, {"weight": 10 ** 6})]), 2, None, "1,000,001 bits"),
    (nx.Graph([(0, 1, {"weight": "x"})]), 2, None, "cannot read 'x'"),
    (nx.Graph([("a", "b")]), 2, None, "the nodes must be the integers"),
    ("star:40", 2, None, "40 nodes; an instance takes at most 12"),
    ("star:99999999999999", 2, None, "99,999,999,999,999 nodes"),
    ("grid:2x99999999999", 2, None, "199,999,999,998 nodes"),
    (nx.path_graph(13), 2, None, "13 nodes; an instance takes at most 12"),
    (-1, 2, None, "an atlas index is 0 <= K <= 1252, got -1"),
    (5000, 2, None, "got 5000"),
    ("atlas:5000", 2, None, "atlas:K needs 0 <= K <= 1252"),
    ("atlas:1", 2, None, "1 node; an instance has at least 2 values"),
    ("trees:4", 2, None, "is a family of graphs"),
    ("star:4", 1, None, "lam"),
    ("star:4", 2, ["1/2", "1/2"], "z has 2 entries"),
])
def test_a_bad_graph_is_one_line_naming_the_problem(spec, lam, z, match):
    with pytest.raises(ValueError, match=match) as info:
        GraphInstance.from_spec(spec, lam, z)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("spec", [True, 2.5, None, [0, 1]])
def test_what_is_no_graph_is_a_type_error(spec):
    with pytest.raises(TypeError, match="graph"):
        GraphInstance.from_spec(spec, 2)


def test_float_weights_and_lam_are_not_exact():
    with pytest.raises(ExactnessError):
        GraphInstance.from_spec(nx.Graph([(0, 1, {"weight": 1.5})]), 2)
    with pytest.raises(ExactnessError):
        GraphInstance.from_spec("star:4", 2.0)


def test_a_named_graph_is_measured_by_its_name_before_it_is_built():
    """The size of a named graph read from its name, however many digits it has (a size
    of ten digits or more, left unread, would have the graph built)."""
    assert named_graph_nodes("grid:3x4") == 12 and named_graph_nodes("star:12345678901") == \
        12345678901
    assert named_graph_nodes("atlas:13") is None and named_graph_nodes("star:4x") is None
    with pytest.raises(ValueError, match="10,000,000,000 nodes|10000000000 nodes"):
        check_graph_size("star:10000000000")
    with pytest.raises(ValueError, match="nodes; the summary"):
        check_graph_size("grid:2x9999999999")


def test_the_atlas_is_read_by_the_one_parser():
    for k in (3, 13, 18, 1000, 1252):
        G = as_graph(f"atlas:{k}")
        assert sorted(G.edges) == sorted(tuple(sorted(e)) for e in nx.graph_atlas(k).edges)
        assert G.graph["label"] == f"atlas:{k}"
    with pytest.raises(ValueError, match="atlas:K takes one number"):
        as_graph("atlas:3x4")
    with pytest.raises(ValueError, match="0 <= K <= 1252"):
        as_graph("atlas:1253")


@settings(max_examples=6, deadline=None)
@given(index=st.integers(13, 18), perm=st.permutations(range(4)), lam=st.sampled_from(
    [Fraction(3, 2), Fraction(2), Fraction(3)]))
def test_a_relabelled_graph_has_as_many_vertices(index, perm, lam):
    """U_G and F_G[z] of a graph and of the same graph relabelled (z relabelled with it)
    have as many vertices."""
    G = nx.graph_atlas(index)
    H = nx.relabel_nodes(G, dict(enumerate(perm)))
    z = [Fraction(1, 8), Fraction(1, 4), Fraction(1, 8), Fraction(1, 2)]
    zp = [Fraction(0)] * 4
    for i, p in enumerate(perm):
        zp[p] = z[i]
    a, b = GraphInstance.from_spec(G, lam, z), GraphInstance.from_spec(H, lam, zp)
    assert polytopes.U(4, lam, graph=a.neighbour_graph()).count_vertices() == \
        polytopes.U(4, lam, graph=b.neighbour_graph()).count_vertices()
    assert polytopes.F(4, lam, a.z_array(), graph=a.neighbour_graph()).count_vertices() == \
        polytopes.F(4, lam, b.z_array(), graph=b.neighbour_graph()).count_vertices()


@settings(max_examples=25, deadline=None)
@given(edges=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=1,
                      max_size=8),
       weights=st.lists(st.integers(1, 3), min_size=8, max_size=8))
def test_from_spec_accepts_exactly_what_as_graph_accepts(edges, weights):
    """On random graphs: from_spec refuses what the one parser refuses (one line), and
    otherwise keeps every edge and weight; its repr pastes back."""
    G = nx.Graph()
    for (u, v), w in zip(edges, weights, strict=False):
        G.add_edge(u, v, weight=w)
    try:
        H = as_graph(G)
    except ValueError as exc:
        with pytest.raises(ValueError) as info:
            GraphInstance.from_spec(G, 2)
        assert str(info.value) == str(exc)
        return
    if H.number_of_nodes() < 2:
        return
    inst = GraphInstance.from_spec(G, 2)
    assert {e: H.edges[e]["weight"] for e in H.edges} == dict(zip(
        inst.edges, inst.edge_weights or (1,) * len(inst.edges), strict=True))
    assert eval(repr(inst)) == inst  # noqa: S307


# ------------------------------------------------------------------ families
def test_the_families_are_the_atlas_s():
    def labels(graph):
        return [G.graph["label"] for G in graphs_of(graph)]
    assert labels("connected:4") == [f"atlas:{k}" for k in range(13, 19)]
    assert labels("trees:2-5") == ["atlas:3", "atlas:6", "atlas:13", "atlas:14", "atlas:29",
                                   "atlas:30", "atlas:31"]
    assert [nx.is_tree(G) for G in graphs_of("trees:2-5")] == [True] * 7
    assert len(graphs_of("connected:7")) == 853
    assert labels("cycles:3-5") == ["atlas:7", "atlas:16", "atlas:38"]
    assert labels(["star:4", "paths:3", 7, nx.path_graph(2)]) == ["star:4", "atlas:6",
                                                                  "atlas:7", "graph"]


@pytest.mark.parametrize("graph, match", [
    ("connected:9", "261,080 connected graphs on 9 nodes"),
    ("connected:2-8", "11,117 connected graphs on 8 nodes"),
    ("trees:9", "47 trees on 9 nodes; networkx.nonisomorphic_trees\\(9\\)"),
    ("cycles:12", "give cycle:12"),
    ("cycles:2", "holds no graph"),
    ("connected:5-3", "need A <= B"),
    ("connected:1", "at least 2 values"),
    ([], "the iterable is empty"),
    (["star:4", "wheel:5"], "neither a named graph"),
])
def test_a_bad_family_is_one_line(graph, match):
    with pytest.raises(ValueError, match=match) as info:
        graphs_of(graph)
    assert "\n" not in str(info.value)


# ------------------------------------------------------------------ the engine on graphs
def test_graph_visits_the_graphs_in_order_then_lam_then_z():
    seen = []

    def record(inst):
        seen.append((inst.label, inst.lam, inst.z))
        return True
    s = survey(record, over="instance", graph=["cycle:4", "star:4"], lam=[2, 3],
               z=compositions(1))
    assert s.visited == len(seen) == 2 * 2 * 4
    assert [x[0] for x in seen[:8]] == ["cycle:4"] * 8
    assert [x[1] for x in seen[:8]] == [2] * 4 + [3] * 4
    assert seen[0][2] == (0, 0, 0, 1) and seen[3][2] == (1, 0, 0, 0)


def test_graph_defaults_as_the_path_does():
    """No target for over='instance' without z; the named targets of each graph's size for
    the objects that need one; lam = 2."""
    seen = []

    def record(T, inst):
        seen.append(inst)
        return True
    survey(lambda inst: seen.append(inst) or True, over="instance", graph="star:4")
    assert [(i.z, i.lam) for i in seen] == [(None, 2)]
    seen.clear()
    s = survey(record, over="F", graph=["path:2", "path:3"])
    zs = sorted({(i.n, i.z) for i in seen})
    assert len([z for n, z in zs if n == 2]) == 4 and len([z for n, z in zs if n == 3]) == 4
    assert s.visited == 8


def test_the_path_as_a_graph_gives_the_path_s_counterexample():
    def monotone_column(T, inst):
        return any(all(T[i, j] <= T[i + 1, j] for i in range(inst.n - 1)) or
                   all(T[i, j] >= T[i + 1, j] for i in range(inst.n - 1))
                   for j in range(inst.n))
    on_path = smallest_counterexample(monotone_column, over="F", n=3).counterexample
    on_graph = smallest_counterexample(monotone_column, over="F", graph="path:3").counterexample
    assert (on_graph.witness == on_path.witness).all()
    assert on_graph.visited == on_path.visited and on_graph.z == on_path.z


def test_the_polytopes_are_the_graph_s():
    s = survey(lambda T, inst: bool(sum(T.flat) == inst.n), over="U", graph="complete:3")
    assert s.holds and s.visited == 1
    count = []
    survey(lambda T, inst: count.append(T) or True, over="U", graph="complete:3")
    assert len(count) == len(polytopes.U(3, 2, graph="complete:3").vertices()) == 33
    pairs = survey(lambda ab, inst: True, over="U-pairs", graph="path:2")
    assert pairs.visited == 1


def test_the_delta_subset_forms_are_built_on_the_graph():
    got = []
    survey(lambda T, inst: got.append(T) or True, over="U_delta", delta="1/10",
           graph="cycle:3")
    want = polytopes.U(3, 2, "1/10", graph="cycle:3").vertices()
    assert len(got) == len(want) == 393
    assert all((a == b).all() for a, b in zip(got, want, strict=True))
    got.clear()
    survey(lambda T, inst: got.append(T) or True, over="F_delta", delta="1/10",
           graph="path:2", z=["1/2", "1/2"])
    assert len(got) == len(polytopes.F(2, 2, ["1/2", "1/2"], "1/10", graph="path:2")
                           .vertices())


@pytest.mark.parametrize("over, kw, match", [
    ("mechanism", {}, "the constructors build mechanisms on the path"),
    ("mechanism:northwest", {}, "the constructors build mechanisms on the path"),
    ("RF_delta", {"delta": "1/10"}, "the representation form is built on the path only"),
    ("U_lifted", {"delta": "1/10"}, "the lifted form is built on the path only"),
])
def test_what_the_theory_has_on_the_path_only_is_refused_before_any_work(over, kw, match):
    called = []
    with pytest.raises(ValueError, match=match) as info:
        smallest_counterexample(lambda *a: called.append(a) or True, over=over,
                                graph="star:4", **kw)
    assert not called and "\n" not in str(info.value)


def test_a_family_too_large_is_refused_before_any_work():
    called = []
    with pytest.raises(ValueError, match="261,080"):
        smallest_counterexample(lambda inst: called.append(inst) or True, over="instance",
                                graph=["star:4", "connected:9"])
    with pytest.raises(ValueError, match="neither a named graph"):
        survey(lambda inst: called.append(inst) or True, over="instance",
               graph=["star:4", "wheel:5"])
    assert not called


def test_graph_replaces_n_and_instances():
    with pytest.raises(ValueError, match="give graph or n, not both"):
        smallest_counterexample(lambda inst: True, over="instance", graph="star:4", n=4)
    with pytest.raises(ValueError, match="instances= replaces n \\(or graph\\), lam and z"):
        smallest_counterexample(lambda inst: True, over="instance", graph="star:4",
                                instances=[Instance(2, 2)])
    with pytest.raises(ValueError, match="graph, lam and z give no instance"):
        smallest_counterexample(lambda T, inst: True, over="F", graph="star:4",
                                z=[["1/2", "1/2"]])


def test_budget_and_cache_work_on_graphs(tmp_path):
    with pytest.warns(BudgetReached):
        r = smallest_counterexample(lambda inst: True, over="instance", graph="connected:4",
                                    budget=2)
    assert r.visited == 2 and "2 instances" in r.stopped
    cache = tmp_path / "cache.jsonl"
    calls = []

    def counted(inst):
        calls.append(inst)
        return True
    w = nx.Graph([(0, 1, {"weight": 2})])
    survey(counted, over="instance", graph=["path:2", w], cache=cache)
    survey(counted, over="instance", graph=["path:2", w], cache=cache)
    assert len(calls) == 2  # the second run: both held, cached (weights in the key)


# ------------------------------------------------------------------ details
def _gap_details(inst):
    T = np.array([[Fraction(2, 3), Fraction(1, 3)], [Fraction(1, 3), Fraction(2, 3)]],
                 dtype=object)
    return inst.lam != 2, {"value": Fraction(1, 3), "T_opt & co": T, "z": list(inst.z),
                           "note": "at the wall"}


def test_details_are_carried_and_printed_exactly():
    ce = smallest_counterexample(_gap_details, over="instance", graph="path:2",
                                 z=["1/2", "1/2"]).counterexample
    assert list(ce.details) == ["value", "T_opt & co", "z", "note"]
    assert ce.details["value"] == Fraction(1, 3) and ce.details["T_opt & co"][0, 1] == \
        Fraction(1, 3)
    text = str(ce)
    assert text.splitlines()[1:] == ["witness:", "value: 1/3", "T_opt & co:", "[2/3  1/3]",
                                     "[1/3  2/3]", "z:", "[1/2  1/2]", "note: at the wall"]
    latex = ce.to_latex()
    assert r"\text{T\_opt \& co} &= \begin{bmatrix}" in latex
    assert r"\text{value} &= \frac{1}{3}" in latex and r"\text{note} &= \text{at the wall}" \
        in latex
    assert r"\text{graph} &= \text{path:2 (edges 01)}" in latex
    assert ce._repr_latex_() == f"$${latex}$$"
    described = json.loads(json.dumps(ce.describe()))
    assert described["details"]["T_opt & co"] == [["2/3", "1/3"], ["1/3", "2/3"]]
    assert described["graph"] == {"label": "path:2", "edges": [[0, 1]], "edge_weights": []}


def test_details_on_path_instances_and_in_surveys():
    def vertex_with_sum(T, inst):
        return bool(T[0, 0] < Fraction(1, 2)), {"T[0, 0]": T[0, 0], "row sums": T.sum(axis=1)}
    ce = smallest_counterexample(vertex_with_sum, over="F", n=2).counterexample
    lines = str(ce).splitlines()
    assert lines[1] == "witness:" and lines[2].startswith("[")  # the vertex, then details
    assert f"T[0, 0]: {ce.witness[0, 0]}" in lines and "[1  1]" in lines
    s = survey(vertex_with_sum, over="F", n=2, lam=[2, 3])
    assert s.failures and all(f.details["T[0, 0]"] == f.witness[0, 0] for f in s.failures)


def test_a_bool_alone_keeps_the_old_witness():
    ce = smallest_counterexample(lambda inst: False, over="instance", graph="path:2"
                                 ).counterexample
    assert ce.details is None and str(ce).endswith("witness:\n(the instance itself)")
    assert "details" not in ce.describe()
    assert Counterexample(Instance(2, 2), None, 1, "instance").details is None


def test_details_where_it_holds_are_not_looked_at():
    r = smallest_counterexample(lambda inst: (True, {"x": 0.5}), over="instance",
                                graph="path:2")
    assert not r.found


@pytest.mark.parametrize("details, match", [
    ({"x": 0.5}, "float 0.5"),
    ({"T": np.array([[0.5, 0.5]])}, "float"),
    ("a text", "a dict of named exact values"),
    ({1: Fraction(1)}, "names must be text"),
    ({"b": True}, "a bool is no exact number"),
    ({"cube": np.zeros((2, 2, 2), dtype=int)}, "3 dimensions"),
])
def test_details_that_are_not_exact_are_refused(details, match):
    with pytest.raises(PredicateTypeError, match=match) as info:
        smallest_counterexample(lambda inst: (False, details), over="instance",
                                graph="path:2")
    assert "returned (False," in str(info.value)


def test_a_pair_that_is_no_verdict_is_still_refused():
    with pytest.raises(PredicateTypeError, match="must return a bool"):
        smallest_counterexample(lambda inst: (1, {}), over="instance", graph="path:2")


def _northwest_gap(inst):
    """A module-level predicate (it pickles for jobs > 1): the optimum of F_G's value and
    point, False where the optimum is not the uniform mechanism."""
    from dpfix.explore.graph_mechanisms import exact_minimum

    G, z = inst.neighbour_graph(), inst.z_array()
    opt = exact_minimum(polytopes.F(inst.n, inst.lam, z, graph=G), loss_weights(G, z, "abs"))
    return bool((opt.point == Fraction(1, inst.n)).all()), {"value": opt.value,
                                                             "T": opt.point}


def test_details_come_back_from_the_worker_processes():
    one = smallest_counterexample(_northwest_gap, over="instance", graph="trees:2-4",
                                  z=compositions(2))
    two = smallest_counterexample(_northwest_gap, over="instance", graph="trees:2-4",
                                  z=compositions(2), jobs=2)
    assert one.counterexample.visited == two.counterexample.visited
    assert str(one.counterexample) == str(two.counterexample)


# ------------------------------------------------------------------ the loss names
def test_a_bad_grid_loss_is_one_line():
    for loss in ("l1:x", "l1:0", "l1:"):
        with pytest.raises(ValueError, match="l1:B needs B, the grid's number of columns"):
            loss_weights("grid:2x2", ["1/4"] * 4, loss)
    with pytest.raises(ValueError, match="loss: distance, distance-squared"):
        loss_weights("path:2", ["1/2", "1/2"], None)
    assert loss_weights("grid:2x2", ["1/4"] * 4, "l1:2")[0].tolist() == \
        [0, Fraction(1, 4), Fraction(1, 4), Fraction(1, 2)]


def test_a_huge_named_graph_is_refused_at_once_by_the_summary():
    """The summary of ``star:10000000000`` is refused in one line, at once, without the
    graph being built; run in a process of its own, with a deadline."""
    code = ("from dpfix.explore.graphs import check_graph_size\n"
            "try:\n    check_graph_size('star:10000000000')\n"
            "except ValueError as exc:\n    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert "10000000000 nodes; the summary is computed for at most 12" in out.stdout
