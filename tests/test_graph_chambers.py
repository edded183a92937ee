"""Chambers of U_G and F_G in lam on neighbour graphs (docs/graphs.md sections 13-14):
the engine's rows against the polytopes' rows, the star's wall at 2, local DP on K_4 for
every lam, the command, the refusals; the star at large lam (a certificate in Q(lam) and
exact LPs at random rational lam). The table of every connected graph on 4 nodes, each
piece confirmed by cdd, is behind --full."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.theory.parametric import chambers

DOC = Path(__file__).resolve().parents[1] / "docs" / "graphs.md"


@pytest.fixture(scope="module")
def star():
    return chambers("U", 4, graph="star:4")


def test_star_u_has_its_wall_at_2(star):
    assert star.counts() == [424, 208, 280]
    (wall,) = [p for p in star if p.is_breakpoint]
    assert wall.lo == 2 and wall.minimal_polynomial == [-2, 1]
    assert star.piece_at(Fraction(3, 2)).count == 424 and star.piece_at(10).count == 280
    assert star.name() == "U(n=4, graph=star:4)"


def test_star_pieces_counted_again_by_cdd_and_by_the_faces(star):
    from dpfix.theory.polytopes import U

    rows = star.confirm(backend="cdd")
    assert [r["ok"] for r in rows] == [True] * 3
    assert [r["found"] for r in rows] == [424, 208, 280]
    # a third count, through the faces of the cone C_G (docs/graphs.md section 6)
    for lam, count in ((Fraction(7, 4), 424), (Fraction(2), 208), (Fraction(5, 2), 280)):
        assert U(4, lam, graph="star:4").count_vertices(backend="structure") == count


def test_star_chamber_formulas_are_cdds_vertices(star):
    rows = star.confirm_vertices()
    assert [(r["count"], r["found"], r["ok"]) for r in rows] == [(424, 424, True),
                                                                 (280, 280, True)]


def test_points_at_refuses_a_point_outside_the_chamber(star):
    with pytest.raises(ValueError, match="not in the chamber"):
        star[0].points_at(3)
    with pytest.raises(ValueError, match="given for chambers"):
        star[1].points_at(2)


@pytest.mark.parametrize("lam", [Fraction(3, 2), Fraction(5)])
def test_graph_rows_over_z_lam_are_the_polytopes_rows(lam):
    """The engine's rows at lam = s are U(n, s, graph=G)'s and F's, row for row: integer
    weights 1 and 2 on a cycle with a chord."""
    from dpfix.theory import parametric as pm
    from dpfix.theory.graphs import as_graph
    from dpfix.theory.polytopes import F, U

    G = as_graph(nx.Graph([(0, 1, {"weight": 2}), (1, 2), (2, 3), (0, 3), (0, 2)]))
    z = [Fraction(1, 2), Fraction(1, 4), Fraction(1, 8), Fraction(1, 8)]
    q = pm.fmpq(lam.numerator, lam.denominator)

    def value(p):
        v = p(q)
        return Fraction(int(v.p), int(v.q))

    for P, (ub, eq) in ((U(4, lam, graph=G), pm._rows_graph(4, G)),
                        (F(4, lam, z, graph=G), pm._rows_f(4, z, pm._rows_graph(4, G)))):
        dense = [([value(a) for a in row], value(b)) for row, b in ub]
        want = [([row.get(k, 0) for k in range(16)], b) for row, b in P.hrep.ub]
        assert dense == want
        eqs = [[value(a) / value(b) for a in row] for row, b in eq]
        assert eqs == [[row.get(k, 0) / b for k in range(16)] for row, b in P.hrep.eq]


def test_the_path_as_a_graph_is_the_path():
    assert chambers("U", 3, graph="path:3").counts() == chambers("U", 3).counts()
    assert chambers("U", 3, graph="path:3").graph is None


def test_k4_local_dp_one_chamber_every_vertex_a_staircase():
    from dpfix.explore.graph_chambers import k4_staircase

    r = k4_staircase()
    assert r["counts"] == [904] and r["staircase"] is True
    assert r["chambers"][0].lo == 1 and r["chambers"][0].hi == float("inf")


def test_f_on_the_star_uniform_is_one_chamber():
    from dpfix.explore.cases import standard_z

    ch = chambers("F", 4, standard_z(4)["uniform"], graph="star:4")
    assert ch.counts() == [2376]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"kind": "RF", "n": 3, "z": ["1/3"] * 3, "graph": "star:3"}, "with graph=, one of U, F"),
    ({"kind": "U", "n": 5, "graph": "star:5"}, "on a graph is decomposed for n <= 4"),
    ({"kind": "U", "n": 3, "graph": nx.Graph([(0, 1, {"weight": Fraction(3, 2)}), (1, 2),
                                              (0, 2)])}, "integer weights"),
    ({"kind": "U", "n": 4, "graph": nx.Graph([(0, 1), (2, 3)])}, "not connected"),
    ({"kind": "U", "n": 4, "graph": "star:5"}, "has 5 nodes, but n = 4"),
])
def test_chambers_on_a_graph_refuse_in_one_line(kwargs, message):
    with pytest.raises(ValueError, match=message) as info:
        chambers(**kwargs)
    assert "\n" not in str(info.value)


def test_explore_chambers_graph_command(capsys):
    from dpfix.cli import main

    assert main(["explore", "chambers", "--graph", "star:4"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "U(n=4, graph=star:4): 2 chamber(s), 1 breakpoint(s) in lam > 1"
    assert re.match(r"wall\s+2\s+208\s+lam - 2", out[3])
    assert main(["explore", "chambers", "--graph", "star:4", "--around", "3/2"]) == 0
    assert "the same type on (1, 2)" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "message"), [
    (["--graph", "star:5"], "--graph: chambers of U on a graph are computed for at most 4"),
    (["--graph", "star:4", "--kind", "RF", "--z", "uniform"], "--kind: with --graph"),
    (["--graph", "star:4", "--n", "3"], "--n: the graph star:4 has 4 nodes"),
    (["--graph", "wheel:4"], "neither a named graph"),
    (["--graph", "star:4", "--kind", "F", "--z", "1/2,1/2"], "z: expected length 4"),
])
def test_explore_chambers_graph_bad_input(argv, message, capsys):
    from dpfix.cli import main

    assert main(["explore", "chambers", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and message in err


# -- the star at large lam ----------------------------------------------------------------
@pytest.fixture(scope="module")
def certificate():
    from dpfix.explore.star_large_lam import derive_certificate

    return derive_certificate()


def test_star_certificate_holds_for_every_lam_at_least_3(certificate):
    import sympy

    from dpfix.explore.star_large_lam import check_certificate

    lam = sympy.Symbol("lam", positive=True)
    got = check_certificate(certificate)
    want = (lam - 1) * (2 * lam - 3) * (2 * lam + 3) / (
        lam ** 2 * (lam + 1) * (3 * lam - 2) * (4 * lam - 3))
    assert got["from"] == 3 and got["to"] is None
    assert sympy.cancel(got["gap_bound"] - want) == 0
    # below 3 the mechanism T(lam) leaves F_G: the check must say so
    with pytest.raises(AssertionError, match="ratio row"):
        check_certificate(certificate, start=Fraction(5, 2))


def test_star_certificate_fails_on_a_forged_gap(certificate):
    import dataclasses

    import sympy

    from dpfix.explore.star_large_lam import check_certificate

    lam = sympy.Symbol("lam", positive=True)
    forged = dataclasses.replace(certificate, gap_bound=certificate.gap_bound - 1 / lam)
    with pytest.raises(AssertionError, match="D - P > 0"):
        check_certificate(forged)


@pytest.fixture(scope="module")
def low_certificate():
    from dpfix.explore.star_large_lam import PIECES, derive_certificate

    return derive_certificate(PIECES[0][0])


def test_star_certificate_holds_between_2_and_3(low_certificate):
    from dpfix.explore.star_large_lam import check_certificate

    assert check_certificate(low_certificate, 2, 3)["to"] == 3
    with pytest.raises(AssertionError):
        check_certificate(low_certificate, 2, 4)


@settings(max_examples=12, deadline=None)
@given(st.fractions(min_value=2, max_value=400, max_denominator=50))
def test_star_gap_by_exact_lps_at_random_lam(certificate, low_certificate, lam):
    """The exact LPs alone (no certificate): the best remap exceeds the optimum of F_G by
    at least D - P > 0 at z(lam), and the certificate's bounds hold there."""
    import sympy

    from dpfix.explore.star_large_lam import exact_gap

    if lam < 3:
        certificate = low_certificate
    g = exact_gap(lam)
    s = sympy.Rational(lam.numerator, lam.denominator)
    sym = sympy.Symbol("lam", positive=True)
    bound = Fraction(str(certificate.gap_bound.subs(sym, s)))
    assert bound > 0 and g["remap"] - g["optimum"] >= bound
    assert g["optimum"] <= Fraction(str(certificate.upper.subs(sym, s)))
    assert g["remap"] >= Fraction(str(certificate.lower.subs(sym, s)))


def test_star_certificate_for_the_squared_distance():
    import sympy

    from dpfix.explore.star_large_lam import check_certificate, derive_certificate, exact_gap

    lam = sympy.Symbol("lam", positive=True)
    got = check_certificate(derive_certificate(1000, "distance-squared"), 3)
    want = (lam - 1) * (8 * lam ** 2 + lam - 18) / (
        lam ** 2 * (lam + 1) * (3 * lam - 2) * (4 * lam - 3))
    assert sympy.cancel(got["gap_bound"] - want) == 0
    g = exact_gap(4, loss="distance-squared")
    assert g["remap"] - g["optimum"] == Fraction(171, 5200) == Fraction(str(want.subs(lam, 4)))


@pytest.mark.full
def test_star_no_threshold_for_both_losses():
    from dpfix.explore.star_large_lam import prove_no_threshold

    for loss in ("distance", "distance-squared"):
        rows = prove_no_threshold(loss)
        assert [(r["from"], r["to"]) for r in rows] == [(2, 3), (3, None)]


def test_star_gaps_below_3_at_the_family():
    """At 2 (where the centre's amount is 0) and 5/2, the exact gaps: those of the
    certificate of [2, 3] (tight there)."""
    from dpfix.explore.star_large_lam import exact_gap

    for lam, gap in ((2, Fraction(17, 720)), (Fraction(5, 2), Fraction(3411, 134750))):
        g = exact_gap(lam)
        assert g["remap"] - g["optimum"] == gap


# -- the table of docs/graphs.md, behind --full ------------------------------------------
@pytest.mark.full
def test_chambers_table_matches_the_docs():
    from dpfix.explore.graph_chambers import chambers_table

    assert chambers_table() in DOC.read_text()


@pytest.mark.full
@pytest.mark.parametrize("k", range(6))
@pytest.mark.parametrize("target", [None, "uniform", "zero"])
def test_every_piece_of_the_docs_table_confirmed_by_cdd(k, target):
    from dpfix.explore.cases import standard_z
    from dpfix.explore.graph_chambers import chambers_report, connected_graphs_4

    G = connected_graphs_4()[k]
    kind, z = ("U", None) if target is None else ("F", standard_z(4)[target])
    assert chambers_report(kind, G, z)["confirmed"] is True


@pytest.mark.full
@pytest.mark.parametrize("lam", [Fraction(101, 100), Fraction(11, 10), Fraction(3, 2),
                                 Fraction(2), Fraction(3), Fraction(10), Fraction(100)])
def test_k4_cdd_vertices_are_staircases(lam):
    from dpfix.explore.graph_mechanisms import is_staircase
    from dpfix.theory.polytopes import U

    verts = U(4, lam, graph="complete:4").vertices(limit=None, backend="cdd")
    assert len(verts) == 904 and all(is_staircase(V, lam) for V in verts)
    assert np.all([V.sum(axis=1) == 1 for V in verts])
