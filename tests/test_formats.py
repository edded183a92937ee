"""cdd, Normaliz and polymake files (dpfix.theory.formats): written by Polytope.write, read back
by cdd (pycddlib's cdd.gmp) and Normaliz (PyNormaliz) themselves from the file's text,
and by dpfix.read_polytope; every way gives the vertex set of Polytope.vertices().

polymake itself is not installed here: its JSON is read back by our reader and
checked field by field against polymake's Polytope<Rational> layout."""

from __future__ import annotations

import json
import re
from fractions import Fraction as Fr

import cdd
import cdd.gmp
import pytest

from dpfix import read_polytope
from dpfix.numbers.exact import ExactnessError
from dpfix.theory.enumeration import normaliz_available
from dpfix.theory.formats import format_text, parse_text, resolve_format, write_polytope
from dpfix.theory.polytopes import RF, RU, F, U

CASES = {
    "U2": lambda: U(2, 2),
    "U3": lambda: U(3, Fr(3, 2)),
    "F3": lambda: F(3, 2, ["1/3", "1/2", "1/6"]),
    "RF2": lambda: RF(2, 3, ["1/4", "3/4"]),
    "RF3": lambda: RF(3, 2, ["1/2", "1/4", "1/4"]),
    "RU2": lambda: RU(2, Fr(5, 2)),
}


def keyset(vertices):
    return {tuple(Fr(v) for v in V.ravel()) for V in vertices}


# -- independent readers of the file text (no dpfix code) ----------------------------------
def cdd_rows(text):
    """The rows and linearity set of a cdd file, read token by token."""
    lines = [s.strip() for s in text.splitlines() if s.strip() and not s.startswith("*")]
    lin = set()
    for s in lines:
        if s.startswith("linearity"):
            lin = {int(t) - 1 for t in s.split()[2:]}
    begin = lines.index("begin")
    m, cols, kind = lines[begin + 1].split()
    rows = [[Fr(t) for t in s.split()] for s in lines[begin + 2:begin + 2 + int(m)]]
    assert kind == "rational" and all(len(r) == int(cols) for r in rows)
    assert lines[begin + 2 + int(m)] == "end"
    return rows, lin


def cdd_vertices_of_ine(text):
    rows, lin = cdd_rows(text)
    mat = cdd.gmp.matrix_from_array(rows, lin_set=lin, rep_type=cdd.RepType.INEQUALITY)
    gens = cdd.gmp.copy_generators(cdd.gmp.polyhedron_from_matrix(mat))
    assert not gens.lin_set and all(r[0] == 1 for r in gens.array)
    return {tuple(r[1:]) for r in gens.array}


def cdd_vertices_of_ext(text):
    """cdd turns the points into inequalities and those back into vertices."""
    rows, lin = cdd_rows(text)
    assert not lin and all(r[0] == 1 for r in rows)
    gen = cdd.gmp.matrix_from_array(rows, rep_type=cdd.RepType.GENERATOR)
    ineq = cdd.gmp.copy_inequalities(cdd.gmp.polyhedron_from_matrix(gen))
    back = cdd.gmp.copy_generators(cdd.gmp.polyhedron_from_matrix(ineq))
    return {tuple(r[1:]) for r in back.array if r[0] == 1}


def normaliz_blocks(text):
    tokens = re.sub(r"/\*.*?\*/", " ", text, flags=re.S).split()
    assert tokens[0] == "amb_space"
    d, blocks, i = int(tokens[1]), {}, 2
    while i < len(tokens):
        key, m = tokens[i], int(tokens[i + 1])
        flat = [int(t) for t in tokens[i + 2:i + 2 + m * (d + 1)]]  # integers only
        blocks[key] = [flat[r * (d + 1):(r + 1) * (d + 1)] for r in range(m)]
        i += 2 + m * (d + 1)
    return d, blocks


def normaliz_vertices(text):
    import PyNormaliz

    _, blocks = normaliz_blocks(text)
    cone = PyNormaliz.Cone(**blocks)
    return {tuple(Fr(int(p), int(r[-1])) for p in r[:-1]) for r in cone.VerticesOfPolyhedron()}


needs_normaliz = pytest.mark.skipif(not normaliz_available(), reason="PyNormaliz not installed")


# -- round trips -----------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES)
def test_cdd_files_round_trip_through_cdd(case, tmp_path):
    P = CASES[case]()
    expected = keyset(P.vertices(backend="cdd"))
    ine = P.write(tmp_path / "p.ine").read_text()
    ext = P.write(tmp_path / "p.ext").read_text()
    assert cdd_vertices_of_ine(ine) == expected
    assert cdd_vertices_of_ext(ext) == expected
    for name in ("p.ine", "p.ext"):
        back = read_polytope(tmp_path / name)
        assert back.shape == P.shape and back.name == repr(P)
        assert keyset(back.vertices()) == expected
    back = read_polytope(tmp_path / "p.ine")
    assert back.what == "H" and (back.A_ub == P.A_ub).all() and (back.b_eq == P.b_eq).all()


@needs_normaliz
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("what", ["H", "V"])
def test_normaliz_files_round_trip_through_normaliz(case, what, tmp_path):
    P = CASES[case]()
    expected = keyset(P.vertices(backend="cdd"))
    text = P.write(tmp_path / "p.in", what=what).read_text()
    d, blocks = normaliz_blocks(text)
    assert d == P.num_variables
    assert set(blocks) == ({"vertices"} if what == "V" else {"inhom_inequalities",
                                                               "inhom_equations"})
    assert normaliz_vertices(text) == expected
    back = read_polytope(tmp_path / "p.in")
    assert back.what == what and keyset(back.vertices()) == expected


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("what", ["H", "V"])
def test_polymake_json_has_polymakes_fields_and_round_trips(case, what, tmp_path):
    P = CASES[case]()
    vertices = P.vertices(backend="cdd")
    path = P.write(tmp_path / "p.json", what=what)
    data = json.loads(path.read_text())
    assert data["_type"] == "polytope::Polytope<Rational>"
    assert data["_ns"]["polymake"][0] == "https://polymake.org"
    d1 = data["CONE_AMBIENT_DIM"]
    assert d1 == P.num_variables + 1
    keys = {"POINTS"} if what == "V" else {"INEQUALITIES", "EQUATIONS"}
    assert set(data) == {"_type", "_ns", "_info", "CONE_AMBIENT_DIM"} | keys
    assert data["_info"]["description"].splitlines() == [
        repr(P), "dpfix shape " + " ".join(map(str, P.shape))]
    rational = re.compile(r"-?\d+(/\d+)?")
    for key in keys:
        assert all(len(r) == d1 and all(isinstance(v, str) and rational.fullmatch(v) for v in r)
                   for r in data[key])
    if what == "V":
        assert all(r[0] == "1" for r in data["POINTS"])
    else:  # rows [b, -a]: b - a.x >= 0 (= 0) at every vertex, homogenizing coordinate first
        for V in vertices:
            x = [Fr(1), *V.ravel()]
            assert all(sum(Fr(c) * v for c, v in zip(r, x, strict=True)) >= 0
                       for r in data["INEQUALITIES"])
            assert all(sum(Fr(c) * v for c, v in zip(r, x, strict=True)) == 0
                       for r in data["EQUATIONS"])
    back = read_polytope(path)  # the name and the shape come back from the description
    assert (back.name, back.shape) == (repr(P), P.shape)
    assert keyset(back.vertices()) == keyset(vertices)


def test_polymake_reader_takes_computed_properties_and_empty_matrices():
    text = json.dumps({"_type": "polytope::Polytope<Rational>", "CONE_AMBIENT_DIM": 2,
                       "FACETS": [["0", "1"], ["1", "-2"]], "AFFINE_HULL": [{"cols": 2}]})
    P = parse_text(text, "polymake")
    assert [V.tolist() for V in P.vertices()] == [[0], [Fr(1, 2)]]
    with pytest.raises(ExactnessError, match="Float"):
        parse_text(json.dumps({"_type": "polytope::Polytope<Float>", "POINTS": [[1, 0.5]]}),
                   "polymake")


# -- normaliz rows and integer scaling -------------------------------------------------------
def test_normaliz_rows_are_flat_with_the_constant_last():
    h = F(3, Fr(3, 2), ["1/3", "1/2", "1/6"]).hrep
    ineq, eq = h.normaliz_rows()
    assert all(isinstance(r, list) and len(r) == h.d + 1 for r in ineq + eq)
    assert all(isinstance(v, int) for r in ineq + eq for v in r)
    X = F(3, Fr(3, 2), ["1/3", "1/2", "1/6"]).vertices()[0].ravel()
    assert all(sum(c * x for c, x in zip(r[:-1], X, strict=True)) + r[-1] >= 0 for r in ineq)
    assert all(sum(c * x for c, x in zip(r[:-1], X, strict=True)) + r[-1] == 0 for r in eq)
    _, blocks = normaliz_blocks(format_text("normaliz", hrep=h))
    assert blocks == {"inhom_inequalities": ineq, "inhom_equations": eq}


def test_vertex_lists_write_without_a_polytope(tmp_path):
    vs = [[["1/2", "1/2"]], [[1, 0]], [["1/4", "3/4"]]]  # the middle of a segment is dropped
    for suffix in (".ext", ".in", ".json"):
        path = write_polytope(tmp_path / f"v{suffix}", vertices=vs)
        back = read_polytope(path)
        assert back.shape == (1, 2)
        assert [V.ravel().tolist() for V in back.vertices()] == [[Fr(1, 4), Fr(3, 4)], [1, 0]]


# -- bad input ---------------------------------------------------------------------------------
def test_bad_formats_and_files_are_refused(tmp_path):
    with pytest.raises(ValueError, match="suffix"):
        resolve_format("p.txt")
    with pytest.raises(ValueError, match="format: one of"):
        resolve_format("p.ine", "lrs")
    with pytest.raises(ValueError, match="cdd-ext"):
        U(2, 2).write(tmp_path / "p.ext", what="H")
    with pytest.raises(ValueError, match="what"):
        U(2, 2).write(tmp_path / "p.in", what="X")
    with pytest.raises(ExactnessError, match="real"):
        parse_text("H-representation\nbegin\n1 2 real\n1 -1\nend\n", "cdd-ine")
    with pytest.raises(ExactnessError, match="decimal"):
        parse_text("H-representation\nbegin\n1 2 rational\n1 -0.5\nend\n", "cdd-ine")
    with pytest.raises(ValueError, match="header says 2 rows"):
        parse_text("H-representation\nbegin\n2 2 rational\n1 -1\nend\n", "cdd-ine")
    with pytest.raises(ValueError, match="ray"):
        parse_text("V-representation\nbegin\n1 2 rational\n0 1\nend\n", "cdd-ext")
    with pytest.raises(ValueError, match="input type 'cone'"):
        parse_text("amb_space 2\ncone 1\n1 0\n", "normaliz")


def test_a_failed_write_leaves_the_file_as_it_was(tmp_path):
    path = tmp_path / "p.ine"
    path.write_text("kept\n")
    with pytest.raises(ValueError):
        write_polytope(path, vertices=[[1, 0]])  # points cannot go in a .ine
    assert path.read_text() == "kept\n"
    assert list(tmp_path.iterdir()) == [path]
