"""Exact output: aligned fractions, LaTeX and sympy (dpfix.numbers.display), and the objects
that print through it (Mechanism, certificates, reports.format_matrix)."""

from __future__ import annotations

from fractions import Fraction as Fr

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.certify import certify_optimal, certify_universal
from dpfix.constructors import construct
from dpfix.io.reports import format_matrix
from dpfix.numbers.display import format_exact, to_latex, to_sympy
from dpfix.numbers.exact import ExactnessError
from dpfix.theory.mechanism import STR_MAX_N
from dpfix.theory.polytopes import F


def _slash_columns(text: str) -> list[set[int]]:
    """Per matrix column, the set of positions of its slashes over all lines."""
    lines = [line[1:-1] for line in text.splitlines()]
    cols: list[set[int]] = []
    for line in lines:
        cells, pos = [], 0
        for cell in line.split("  "):
            if cell.strip():
                cells.append((pos, cell))
            pos += len(cell) + 2
        for c, (start, cell) in enumerate(cells):
            while len(cols) <= c:
                cols.append(set())
            if "/" in cell:
                cols[c].add(start + cell.index("/"))
    return cols


def test_columns_align_on_the_slash():
    M = [["1/2", "11/16", 3], ["-5/3", "1/160", "-12"], [0, 1, "7/9"]]
    text = format_exact(M)
    assert text.splitlines() == ["[ 1/2  11/16     3  ]",
                                 "[-5/3   1/160  -12  ]",
                                 "[ 0     1        7/9]"]
    assert all(len(c) <= 1 for c in _slash_columns(text))


def test_integers_and_negative_numbers():
    assert format_exact([[1, -2], [-30, 4]]) == "[  1  -2]\n[-30   4]"
    assert format_exact([Fr(-1, 2), 0, 5]) == "[-1/2  0  5]"  # a vector is one row


def test_common_denominator_and_indent():
    text = format_exact([["1/4", "3/4"], ["1/2", "1/2"]], common_denominator=True, indent="  ")
    assert text == "  1/4 *\n  [1  3]\n  [2  2]"
    assert format_exact([[1, 0]], common_denominator=True) == "[1  0]"


def test_floats_are_refused():
    for f in (format_exact, to_latex, to_sympy):
        with pytest.raises(ExactnessError):
            f([[0.5, 0.5]])


def test_to_latex_text_is_exact():
    assert to_latex([["2/3", "-1/3"], [0, 1]]) == (
        "\\begin{bmatrix}\n\\frac{2}{3} & -\\frac{1}{3} \\\\\n0 & 1\n\\end{bmatrix}")
    assert to_latex([["1/7", 2]], frac="tfrac") == (
        "\\begin{bmatrix}\n\\tfrac{1}{7} & 2\n\\end{bmatrix}")
    with pytest.raises(ValueError, match="frac"):
        to_latex([[1]], frac="over")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.fractions(min_value=-5, max_value=5, max_denominator=40),
                         min_size=3, max_size=3), min_size=1, max_size=4))
def test_text_latex_and_sympy_give_back_every_entry(rows):
    M = np.array(rows, dtype=object)
    assert to_sympy(M) == sympy.Matrix([[sympy.Rational(v.numerator, v.denominator) for v in r]
                                        for r in rows])
    # the text, read back cell by cell, is the matrix itself
    back = [[Fr(c) for c in line.strip("[]").split()] for line in format_exact(M).splitlines()]
    assert back == rows
    # so is the LaTeX
    body = to_latex(M).splitlines()[1:-1]
    parsed = []
    for line in body:
        cells = line.rstrip(" \\").split(" & ")
        parsed.append([Fr(c.replace("\\frac{", "").replace("}{", "/").rstrip("}"))
                       for c in cells])
    assert parsed == rows


def test_to_sympy_equals_and_vectors_are_rows():
    S = to_sympy([["2/3", "1/3"], ["1/3", "2/3"]])
    assert S == sympy.Matrix([[sympy.Rational(2, 3), sympy.Rational(1, 3)],
                              [sympy.Rational(1, 3), sympy.Rational(2, 3)]])
    assert all(isinstance(x, sympy.Rational) for x in S)
    assert to_sympy([1, "1/2"]).shape == (1, 2)


def test_format_matrix_is_format_exact_indented():
    M = [["1/2", 1], [0, "2/3"]]
    assert format_matrix(M) == format_exact(M, indent="    ")


def test_mechanism_str_shows_the_matrix_up_to_n_8():
    z = [Fr(1, STR_MAX_N)] * STR_MAX_N
    M = construct(z, lam=2)
    text = str(M)
    lines = text.splitlines()
    assert lines[0] == repr(M) and len(lines) == 1 + STR_MAX_N
    assert lines[1:] == format_exact(M.matrix).splitlines()
    big = construct([Fr(1, STR_MAX_N + 1)] * (STR_MAX_N + 1), lam=2)
    assert str(big) == repr(big)
    assert "\n" not in repr(M)


def test_float_mechanism_str_rounds_and_refuses_exact_output():
    M = construct([0.5, 0.5], 1.0)
    lines = str(M).splitlines()
    assert lines[0] == repr(M) and len(lines) == 3
    assert float(lines[1].strip("[] ").split()[0]) == pytest.approx(M.T[0, 0], rel=1e-5)
    for method in (M.to_latex, M.to_sympy):
        with pytest.raises(ExactnessError, match="float mechanism"):
            method()


def test_mechanism_and_vertex_exact_output():
    M = construct(["1/3", "2/3"], lam=2)
    assert M.to_sympy() == to_sympy(M.matrix)
    assert M.to_latex(frac="tfrac") == to_latex(M.matrix, frac="tfrac")
    V = F(2, 2, ["1/2", "1/2"]).vertices()[0]  # a vertex is a plain exact array
    assert to_sympy(V) == sympy.Matrix([[sympy.Rational(1, 3), sympy.Rational(2, 3)],
                                        [sympy.Rational(2, 3), sympy.Rational(1, 3)]])


def test_certificate_exact_output():
    cert = certify_optimal(construct(["1/4", "3/4"], lam=3), ["1/4", "3/4"], 3)
    s = cert.to_sympy()
    assert s["T"] == to_sympy(cert.T) and s["u"].shape == (1, 2)
    assert s["lower_bound"] == sum(s["u"]) + (s["z"] * s["v"].T)[0, 0]
    assert s["gap"] == 0 and s["value"] == sympy.Rational(cert.value.numerator,
                                                          cert.value.denominator)
    tex = cert.to_latex()
    assert tex.startswith("\\begin{aligned}\nT &= " + to_latex(cert.T))
    assert tex.endswith("\\text{gap} &= 0\n\\end{aligned}")
    uni = certify_universal(["1/4", "3/4"], 3)
    su = uni.to_sympy()
    assert sorted(su["hinges"]) == [-1, 0, 1] and su["T"] == to_sympy(uni.T)
    assert uni.to_latex().count("&:") == 3
