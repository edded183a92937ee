"""Guards the library holds itself (the CLI only names its flags in their messages): a
loss that is no loss, a neighbour graph too large to summarise, and the enumeration
guard of a bare install, which names the extra to install instead of ``limit=None``."""

from __future__ import annotations

from fractions import Fraction

import pytest

from dpfix.theory import enumeration
from dpfix.theory.mechanism import loss, weight_matrix


@pytest.mark.parametrize("name", ["capped:-1", "capped:0", "capped:-1/2"])
def test_a_cap_that_is_not_positive_is_refused_by_the_library(name):
    message = (rf"^loss: {name}: the cap C of capped:C must be > 0 \(min\(\|d\|, C\) with "
               r"C <= 0 counts no error, or a negative one\)$")
    with pytest.raises(ValueError, match=message):
        loss(name)
    with pytest.raises(ValueError, match=message):
        weight_matrix(name, [Fraction(1, 2), Fraction(1, 2)])


def test_a_positive_cap_is_a_loss():
    f = loss("capped:1/2")
    assert [f(d) for d in (-2, 0, 1)] == [Fraction(1, 2), 0, Fraction(1, 2)]


def test_certificates_refuse_it_too():
    from dpfix.certify import exact_optimum

    with pytest.raises(ValueError, match="the cap C of capped:C must be > 0"):
        exact_optimum(["1/2", "1/2"], 2, loss="capped:0")


@pytest.mark.parametrize("graph, message", [
    ("path:13", "graph path:13: 13 nodes; the summary is computed for at most 12"),
    ("complete:100000", "graph complete:100000: 100000 nodes"),  # refused before it is built
    ("grid:4x4", "graph grid:4x4: 16 nodes"),
    ("complete:9", "graph complete:9: more than 50,000 automorphisms"),
])
def test_graph_summary_refuses_a_graph_beyond_its_guard(graph, message):
    from dpfix.explore.graphs import graph_summary

    with pytest.raises(ValueError, match=message):
        graph_summary(graph)


def test_the_guard_counts_automorphisms_no_further_than_the_limit(monkeypatch):
    from dpfix.explore import graphs
    from dpfix.theory.graphs import as_graph, count_automorphisms

    assert count_automorphisms(as_graph("complete:5")) == 120
    assert count_automorphisms(as_graph("complete:5"), at_most=10) == 11
    monkeypatch.setattr(graphs, "GRAPH_MAX_AUTOMORPHISMS", 5)
    with pytest.raises(ValueError, match="more than 5 automorphisms"):
        graphs.check_graph_size("cycle:4")  # 8 automorphisms
    assert graphs.check_graph_size("path:4").number_of_nodes() == 4  # 2 of them


@pytest.fixture
def bare(monkeypatch):
    """As on an install without the enumeration extra: Normaliz is not available."""
    monkeypatch.setattr(enumeration, "normaliz_available", lambda: False)


@pytest.mark.parametrize("method", ["vertices", "count_vertices", "graph"])
def test_a_bare_install_is_told_to_install_the_enumeration_extra(bare, method):
    from dpfix.theory.polytopes import RF

    P = RF(4, 2, ["1/4"] * 4)  # cdd: over 14 minutes; Normaliz: about 2 s
    with pytest.raises(ValueError) as info:
        getattr(P, method)()
    text = str(info.value)
    assert text.startswith(f"R_F(n=4).{method}(): without PyNormaliz, cdd enumerates R_F for "
                           "n <= 3 only"), text
    assert text.endswith("pip install 'dpfix[enumeration]'") and "limit=None" not in text


def test_where_normaliz_would_refuse_too_the_guard_says_limit_none(bare):
    from dpfix.theory.polytopes import F, normaliz_advice

    assert normaliz_advice("F", 5, "vertices") is None  # Normaliz's own guard: F(5) vertices
    with pytest.raises(ValueError, match="pass limit=None to lift the guard"):
        F(5, 2, ["1/5"] * 5).vertices()


def test_with_normaliz_installed_there_is_no_advice(monkeypatch):
    from dpfix.theory.polytopes import normaliz_advice

    monkeypatch.setattr(enumeration, "normaliz_available", lambda: True)
    assert normaliz_advice("R_F", 4) is None
