"""Edge weights of neighbour graphs: ``lam^w`` exactly (dpfix.theory.graphs.exact_power),
checked against sympy's integer roots; weights too large to hold refused in one line."""

from __future__ import annotations

from fractions import Fraction

import networkx as nx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sympy import integer_nthroot

from dpfix.theory.graphs import POWER_MAX_BITS, as_graph, edge_ratios, exact_power
from helpers import cli

positive = st.fractions(min_value=Fraction(1, 60), max_value=60, max_denominator=60).filter(
    lambda x: x > 0)


def rational_root(x: Fraction, k: int) -> bool:
    """Whether ``x > 0`` has a rational ``k``-th root (sympy: numerator and denominator are
    both perfect ``k``-th powers)."""
    return integer_nthroot(x.numerator, k)[1] and integer_nthroot(x.denominator, k)[1]


@settings(max_examples=400, deadline=None)
@given(positive, st.integers(-9, 9), st.integers(1, 6))
@example(Fraction(4, 3), 3, 2)    # the numerator is a square, the denominator is not
@example(Fraction(3, 4), 3, 2)    # the denominator is a square, the numerator is not
@example(Fraction(16, 81), -3, 4)
def test_exact_power_is_the_rational_root_or_none(lam, p, q):
    """exact_power(lam, p/q) is r with r^den(w) == lam^num(w) exactly, or None exactly
    when lam^num(w) has no rational den(w)-th root."""
    w = Fraction(p, q)
    r = exact_power(lam, w)
    x = lam ** w.numerator
    if r is None:
        assert not rational_root(x, w.denominator)
    else:
        assert r > 0 and r ** w.denominator == x


@settings(max_examples=200, deadline=None)
@given(positive, st.integers(-6, 6), st.integers(2, 5),
       st.sampled_from([Fraction(1), Fraction(2), Fraction(1, 2), Fraction(1, 3),
                        Fraction(5, 7), Fraction(3, 4), Fraction(9, 2)]))
def test_exact_power_of_a_power(y, p, q, extra):
    """lam = y^q * extra: with extra = 1, lam^(p/q) = y^p; with extra not a q-th power
    (its prime 2, 3, 5 or 7 to the first power), lam^(p/q) is irrational for p != 0."""
    from math import gcd

    g = gcd(p, q) or 1
    w = Fraction(p, q)
    lam = y ** q * extra
    got = exact_power(lam, w)
    if extra == 1:
        assert got == y ** p
    elif p != 0 and q // g > 1:
        assert got is None
    else:
        assert got == lam ** w.numerator  # w an integer


def test_the_ratio_of_a_weight_too_large_is_refused_in_one_line(capsys, tmp_path):
    with pytest.raises(ValueError, match=r"more than 65,536"):
        exact_power(Fraction(2), Fraction(10**6))
    assert exact_power(Fraction(2), Fraction(POWER_MAX_BITS - 1)) == 2 ** (POWER_MAX_BITS - 1)
    G = as_graph(nx.Graph([(0, 1, {"weight": Fraction(10**400)}), (1, 2, {"weight": 1})]))
    with pytest.raises(ValueError, match=r"graph: edge 0-1 has weight about 10\^400: lam\^w = "
                                         r"2\^\(about 10\^400\) would have about 10\^400 bits"):
        edge_ratios(G, Fraction(2))
    edges = tmp_path / "edges.txt"
    edges.write_text("0 1 1e400\n1 2\n")
    rc, out, err = cli(capsys, "explore", "graph", "--graph", edges)
    assert rc == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith("dpfix explore: error: graph: edge 0-1 has weight about 10^400")
