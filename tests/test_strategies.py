"""The shipped hypothesis strategies (dpfix.explore.strategies): every draw is valid, and
shrinking reaches the small end (least n, small heights, few non-zero entries)."""

from __future__ import annotations

from fractions import Fraction as Fr

import numpy as np
import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from dpfix.explore.strategies import (
    KINDS,
    convex_losses,
    deltas,
    lams,
    mechanisms_in_F,
    monge_costs,
    points_of,
    polytopes_of,
    scales,
    targets,
    vertices_of,
)
from dpfix.numbers.exact import is_exact_array
from dpfix.theory.polytopes import F
from dpfix.theory.scales import psi

QUICK = settings(max_examples=15, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
NO_DB = settings(database=None)


def height(x: Fr) -> int:
    return max(abs(x.numerator), x.denominator)


# -- validity ------------------------------------------------------------------------------
@QUICK
@given(lams(), deltas())
def test_lams_and_deltas_are_exact_and_in_range(lam, delta):
    assert isinstance(lam, Fr) and lam > 1 and lam.denominator <= 4 and lam <= 5
    assert isinstance(delta, Fr) and 0 < delta < 1


@QUICK
@given(targets(n_min=1, n_max=6))
def test_targets_are_probability_vectors(z):
    assert is_exact_array(z) and 1 <= len(z) <= 6
    assert sum(z) == 1 and all(isinstance(v, Fr) and v >= 0 for v in z)


@QUICK
@given(targets(4, zeros=False, max_weight=3))
def test_targets_without_zeros(z):
    assert len(z) == 4 and all(v > 0 for v in z)


@QUICK
@given(st.data())
def test_scales_are_columns_of_psi(data):
    n, lam = data.draw(st.integers(2, 5)), data.draw(lams())
    s = data.draw(scales(n, lam))
    P = psi(n, lam)
    assert any((P[:, m] == s).all() for m in range(P.shape[1]))


@pytest.mark.parametrize("kind", KINDS)
def test_vertices_are_vertices_and_points_are_points(kind):
    @QUICK
    @given(vertices_of(kind), points_of(kind))
    def check(drawn_vertex, drawn_point):
        P, V = drawn_vertex
        assert is_exact_array(V) and V.shape == P.shape and P.is_extreme(V)
        Q, X = drawn_point
        assert is_exact_array(X) and Q.contains(X)
        assert (kind.endswith("_delta")) == (P.delta > 0 or "delta" in repr(P))
    check()


def test_given_instance_fields_are_kept():
    P = find(polytopes_of("F", z=["1/4", "3/4"], lam="5/2"), lambda P: True, settings=NO_DB)
    assert P.n == 2 and P.lam == Fr(5, 2) and list(P.z) == [Fr(1, 4), Fr(3, 4)]
    with pytest.raises(ValueError, match="kind"):
        polytopes_of("G")


@QUICK
@given(mechanisms_in_F(n_max=3))
def test_mechanisms_are_in_F(M):
    assert M.exact and M.fixed_point is not None
    assert F(M.n, M.lam, M.fixed_point).contains(M)


@QUICK
@given(monge_costs())
def test_monge_costs_are_monge_and_non_negative(c):
    n = c.shape[0]
    assert all(isinstance(v, Fr) and v >= 0 for v in c.flat) and c.min() == 0
    assert all(c[k + 1, m + 1] - c[k + 1, m] - c[k, m + 1] + c[k, m] <= 0
               for k in range(n - 1) for m in range(n - 1))


@QUICK
@given(convex_losses(), convex_losses(symmetric=True))
def test_convex_losses_are_convex_functions_of_the_difference(c, s):
    for W in (c, s):
        n = W.shape[0]
        f = {i - j: W[i, j] for i in range(n) for j in range(n)}
        assert all(W[i, j] == f[i - j] for i in range(n) for j in range(n))  # f(i - j)
        assert f[0] == 0 and all(v >= 0 for v in f.values())
        assert all(f[d + 1] - 2 * f[d] + f[d - 1] >= 0 for d in range(-(n - 2), n - 1))
    assert all(s[i, j] == s[j, i] for i in range(len(s)) for j in range(len(s)))


@QUICK
@given(convex_losses(per_row=True))
def test_row_wise_convex_losses_pass_the_unfixed_check(W):
    from dpfix.constructors.unfixed import check_weights

    check_weights(W)  # raises unless every row is convex and smallest on the diagonal
    n = W.shape[0]
    assert all(W[i, i] == min(W[i]) for i in range(n))


# -- shrinking ----------------------------------------------------------------------------
def test_targets_shrink_to_the_least_n_and_one_non_zero_entry():
    z = find(targets(n_min=2, n_max=6), lambda z: True, settings=NO_DB)
    assert len(z) == 2 and sum(v != 0 for v in z) == 1
    z = find(targets(n_min=2, n_max=6), lambda z: len(z) >= 4 and z[0] > 0, settings=NO_DB)
    assert len(z) == 4 and list(z) == [1, 0, 0, 0]  # the sparsest, smallest heights
    z = find(targets(n_max=6), lambda z: sum(v != 0 for v in z) >= 3, settings=NO_DB)
    assert len(z) == 3 and max(height(v) for v in z) == 3  # (1/3, 1/3, 1/3)


def test_lams_shrink_to_small_heights():
    assert find(lams(), lambda lam: True, settings=NO_DB) == 2
    assert find(lams(), lambda lam: lam < 2, settings=NO_DB) == Fr(3, 2)
    assert find(lams(), lambda lam: lam.denominator > 1, settings=NO_DB) == Fr(3, 2)


def test_vertices_shrink_to_the_least_n():
    P, V = find(vertices_of("F"), lambda d: d[1].max() < 1, settings=NO_DB)
    assert P.n == 2 and P.lam == 2 and height(max(P.z, key=height)) <= 2
    P, V = find(vertices_of("RU"), lambda d: True, settings=NO_DB)
    assert P.n == 2 and P.lam == 2 and sum(v != 0 for v in V.flat) == 2


def test_points_shrink_to_one_vertex():
    P, X = find(points_of("U", n=2, lam=2), lambda d: True, settings=NO_DB)
    assert P.is_extreme(X)


def test_costs_shrink_to_zero():
    for strategy in (monge_costs(), convex_losses(), convex_losses(per_row=True)):
        c = find(strategy, lambda c: True, settings=NO_DB)
        assert c.shape == (2, 2) and not np.any(c != 0)
