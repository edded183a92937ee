"""What dpfix.theory.formats refuses, and how: one ValueError (or ExactnessError) naming the
file and the line or field, for every malformed file; the guard of PolytopeFile.vertices;
nothing read from a path that is not a regular file of UTF-8 text."""

from __future__ import annotations

import json
import os
import re
import stat
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpfix import read_polytope
from dpfix.numbers.exact import ExactnessError
from dpfix.theory.formats import (
    H_VERTEX_LIMIT,
    V_POINT_LIMIT,
    format_text,
    parse_text,
    vertex_bound,
    write_polytope,
)
from dpfix.theory.polytopes import F, U


def one_line(exc: BaseException) -> bool:
    return "\n" not in str(exc) and len(str(exc)) < 300


def u22_ine(tmp_path, linearity: str):
    """U(2, 2) as a cdd file with its linearity line replaced."""
    text = U(2, 2).write(tmp_path / "U2.ine").read_text()
    assert re.search(r"^linearity 2 1 2$", text, flags=re.M)
    path = tmp_path / "bad.ine"
    path.write_text(re.sub(r"^linearity .*$", linearity, text, flags=re.M))
    return path


# -- cdd's linearity line ----------------------------------------------------------------------
def test_the_written_linearity_reads_back_as_U(tmp_path):
    assert len(read_polytope(u22_ine(tmp_path, "linearity 2 1 2")).vertices()) == \
        len(U(2, 2).vertices()) == 4


@pytest.mark.parametrize("line, message", [
    ("linearity 2 1 99", "row 99 is not one of the rows 1..6"),
    ("linearity 2 0 1", "row 0 is not one of the rows 1..6"),
    ("linearity 2 -1 2", "row -1 is not one of the rows 1..6"),
    ("linearity 2 1 1", "row 1 is listed twice"),
    ("linearity 3 1 2", "a count k >= 1 and that many rows"),
    ("linearity two 1 2", "in integers"),
])
def test_a_bad_linearity_index_is_refused_not_read_as_another_polytope(tmp_path, line, message):
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        read_polytope(u22_ine(tmp_path, line))
    assert one_line(info.value) and "bad.ine: linearity line" in str(info.value)


# -- malformed headers, numbers and JSON -------------------------------------------------------
@pytest.mark.parametrize("text, fmt, message", [
    ("H-representation\nbegin\nx y rational\nend\n", "cdd-ine", "expected a non-negative "
     "integer, got 'x'"),
    ("H-representation\nbegin\n1 two rational\n1 -1\nend\n", "cdd-ine", "columns"),
    ("H-representation\nbegin\n-1 2 rational\nend\n", "cdd-ine", "got '-1'"),
    ("H-representation\nbegin\nend\n", "cdd-ine", "nothing between 'begin' and 'end'"),
    ("H-representation\nbegin\n0 3 rational\nend\n", "cdd-ine", "no constraint"),
    ("H-representation\nbegin\n1 1 rational\n1\nend\n", "cdd-ine", "1 column(s)"),
    ("H-representation\nbegin\n1 2 rational\n1/0 1\nend\n", "cdd-ine", "denominator 0"),
    ("H-representation\nbegin\n1 2 rational\n1" + "0" * 5000 + " 1\nend\n", "cdd-ine",
     "a number of 5,001 characters"),
    ("amb_space x\n", "normaliz", "amb_space: expected a non-negative integer"),
    ("amb_space 2\ninhom_inequalities\n", "normaliz", "without its number"),
    ("amb_space 2\ninhom_inequalities -1\n", "normaliz", "inhom_inequalities: expected"),
    ("amb_space 1\ninhom_inequalities 0\n", "normaliz", "no constraint"),
    ("amb_space 1\namb_space 1\n", "normaliz", "amb_space given twice"),
    ('{"_type": "polytope::Polytope<Rational>"}', "polymake", "neither CONE_AMBIENT_DIM"),
    ('{"_type": "polytope::Polytope<Rational>", "CONE_AMBIENT_DIM": "3", "POINTS": []}',
     "polymake", "CONE_AMBIENT_DIM must be an integer"),
    ('{"_type": "polytope::Polytope<Rational>", "INEQUALITIES": 7}', "polymake",
     "INEQUALITIES is not a matrix"),
    ('{"_type": "polytope::Polytope<Rational>", "POINTS": [[true, "1"]]}', "polymake",
     "not a rational number: True"),
    ('{"_type": "polytope::Polytope<Rational>", "POINTS": [[null, "1"]]}', "polymake",
     "not a rational number: None"),
    ("[" * 100_000 + "]" * 100_000, "polymake", "nested too deeply"),
    ('{"_type": "polytope::Polytope<Rational>", "POINTS": [[1, ' + "9" * 5000 + "]]}",
     "polymake", "not read as JSON"),
])
def test_malformed_files_give_one_line(text, fmt, message):
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        parse_text(text, fmt, where="p")
    assert one_line(info.value) and str(info.value).startswith("p")


def _valid_texts() -> list[tuple[str, str]]:
    P = F(2, 2, ["1/3", "2/3"])
    out = [(fmt, format_text(fmt, hrep=P.hrep, shape=P.shape, name=repr(P)))
           for fmt in ("cdd-ine", "normaliz", "polymake")]
    out += [(fmt, format_text(fmt, vertices=P.vertices(), name=repr(P)))
            for fmt in ("cdd-ext", "normaliz", "polymake")]
    return out


VALID = _valid_texts()
TOKENS = st.sampled_from(["0", "1", "-1", "2", "1/2", "0/0", "1/0", "x", "0.5", "1e400", "", "*",
                          "begin", "end", "linearity", "rational", "real", "99", "-7", "[", "]",
                          "{", "}", '"', ",", ":", "null", "true", '"cols"', "amb_space",
                          "vertices", "inhom_equations", "/*", "*/", "\n", "\x00", "\u00e9"])


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(VALID))), st.data())
def test_a_mutated_file_is_read_or_refused_with_a_value_error(k, data):
    """Tokens of a valid file replaced, inserted or deleted: parse_text either reads it or
    raises ValueError (or ExactnessError, for a float); never another exception."""
    fmt, text = VALID[k]
    parts = re.split(r"(\s+|[\[\]{},:\"])", text)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(parts)))
        op = data.draw(st.sampled_from(["replace", "insert", "delete"]))
        if op == "insert" or not parts:
            parts.insert(i, data.draw(TOKENS))
        elif op == "replace":
            parts[min(i, len(parts) - 1)] = data.draw(TOKENS)
        else:
            del parts[min(i, len(parts) - 1)]
    try:
        P = parse_text("".join(parts), fmt, where="p")
    except (ValueError, ExactnessError) as exc:
        assert one_line(exc) and str(exc).startswith("p"), exc  # it names the file
        return
    assert P.what in ("H", "V") and P.d >= 1


# -- paths that are not regular files of text --------------------------------------------------
def test_a_binary_file_and_a_folder_are_refused(tmp_path):
    binary = tmp_path / "U.ine"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(ValueError, match=r"not a text file \(byte 0x89 at offset 0"):
        read_polytope(binary)
    folder = tmp_path / "dir.ine"
    folder.mkdir()
    with pytest.raises(ValueError, match="a folder, not a regular file"):
        read_polytope(folder)
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_polytope(tmp_path / "missing.ine")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.ine"
    os.mkfifo(fifo)
    caught: list[BaseException] = []

    def read() -> None:
        try:
            read_polytope(fifo)
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            caught.append(exc)
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=30)
    if reader.is_alive():  # blocked in open(): a writer that closes at once lets it go
        with open(fifo, "w"):
            pass
        reader.join(timeout=30)
        pytest.fail("read_polytope blocked on a FIFO")
    assert len(caught) == 1 and isinstance(caught[0], ValueError)
    assert "a FIFO (named pipe), not a regular file" in str(caught[0])


# -- the guard of PolytopeFile.vertices --------------------------------------------------------
def cube(d: int) -> str:
    rows = []
    for i in range(d):
        e = ["0"] * d
        e[i] = "1"
        rows.append("0 " + " ".join(e))               # x_i >= 0
        e[i] = "-1"
        rows.append("1 " + " ".join(e))               # 1 - x_i >= 0
    return f"H-representation\nbegin\n{2 * d} {d + 1} rational\n" + "\n".join(rows) + "\nend\n"


def test_the_upper_bound_theorem_bound():
    # the cube (2d facets) and the simplex (d + 1 facets) reach it in their dimension
    assert [vertex_bound(2 * d, d) >= 2 ** d for d in range(1, 9)] == [True] * 8
    assert vertex_bound(4, 3) == 4 and vertex_bound(6, 3) == 8 and vertex_bound(5, 2) == 5
    assert vertex_bound(0, 5) == 1 and vertex_bound(3, 0) == 1


def test_vertices_is_guarded_by_the_upper_bound_theorem():
    assert len(parse_text(cube(4), "cdd-ine").vertices()) == 16
    with pytest.raises(ValueError, match=r"allows up to 459,823,234,112 vertices .*more than "
                                         r"limit=200,000; pass limit=None"):
        parse_text(cube(30), "cdd-ine").vertices()  # 2^30 vertices: cdd ran 8 minutes
    with pytest.raises(ValueError, match="more than limit=10"):
        parse_text(cube(4), "cdd-ine").vertices(limit=10)
    assert len(parse_text(cube(4), "cdd-ine").vertices(limit=None)) == 16
    assert H_VERTEX_LIMIT >= vertex_bound(24, 12)  # U(4): 24 inequalities, dimension 12


def test_vertices_of_many_points_is_guarded():
    points = [[f"{k}/{V_POINT_LIMIT}"] for k in range(V_POINT_LIMIT + 1)]  # 0 .. 1
    P = parse_text(format_text("cdd-ext", vertices=points), "cdd-ext")
    with pytest.raises(ValueError, match=f"{V_POINT_LIMIT + 1} points, more than "
                                         f"limit={V_POINT_LIMIT}"):
        P.vertices()
    assert [V.tolist() for V in P.vertices(limit=None)] == [[0], [1]]


def test_an_unbounded_polyhedron_is_a_value_error():
    P = parse_text("H-representation\nbegin\n1 2 rational\n0 1\nend\n", "cdd-ine")
    with pytest.raises(ValueError, match="unbounded; only a bounded polytope"):
        P.vertices()


# -- writing -----------------------------------------------------------------------------------
def test_a_written_file_has_the_permissions_of_a_new_file(tmp_path):
    umask = os.umask(0o022)
    os.umask(umask)
    path = write_polytope(tmp_path / "U.json", hrep=U(2, 2).hrep)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
    assert json.loads(path.read_text())["CONE_AMBIENT_DIM"] == 5
