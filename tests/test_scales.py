"""Scales, Psi and Sigma (paper Section 4.2, Definition 6): exact known answers and properties."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpfix.numbers.exact import ExactnessError
from dpfix.theory.scales import (
    heights,
    log_scale,
    pattern_from_index,
    pattern_index,
    pattern_of,
    psi,
    scale,
    sigma,
    single_peaked,
    single_peaked_pattern,
)

lams = st.fractions(min_value=Fraction(21, 20), max_value=8, max_denominator=20)
patterns = st.integers(1, 7).flatmap(
    lambda m: st.lists(st.sampled_from([-1, 1]), min_size=m, max_size=m))


def test_scale_known_answer_by_hand():
    # pattern (+1, +1, -1) at lam = 3: heights 0, 1, 2, 1 -> weights 1, 3, 9, 3 over 16
    assert scale([1, 1, -1], 3).tolist() == [Fraction(1, 16), Fraction(3, 16),
                                               Fraction(9, 16), Fraction(3, 16)]
    assert scale([], 2).tolist() == [Fraction(1)]


def test_psi_canonical_order_n3():
    # m = 0: (-1,-1); 1: (+1,-1); 2: (-1,+1); 3: (+1,+1); lam = 2
    expected = [[4, 1, 2, 1], [2, 2, 1, 2], [1, 1, 2, 4]]
    totals = [7, 4, 5, 7]
    P = psi(3, 2)
    for m in range(4):
        assert P[:, m].tolist() == [Fraction(expected[i][m], totals[m]) for i in range(3)]


@given(patterns, lams)
def test_every_scale_is_a_probability_vector_with_ratios_lam(p, lam):
    s = scale(p, lam)
    assert sum(s) == 1 and all(v > 0 for v in s)
    for i, step in enumerate(p):
        assert s[i + 1] / s[i] == (lam if step == 1 else 1 / lam)
    assert pattern_of(s, lam) == tuple(p)


@given(st.integers(1, 8), lams)
def test_psi_columns_are_distinct_scales(n, lam):
    P = psi(n, lam)
    assert P.shape == (n, 2 ** (n - 1))
    assert len({tuple(c) for c in P.T}) == P.shape[1]
    for m in range(P.shape[1]):
        assert pattern_index(pattern_of(P[:, m], lam)) == m


@given(st.integers(1, 12), st.data())
def test_pattern_index_roundtrip(n, data):
    m = data.draw(st.integers(0, 2 ** (n - 1) - 1))
    assert pattern_index(pattern_from_index(m, n)) == m


def test_single_peaked_and_sigma():
    s = single_peaked(2, 5, 2)
    assert [x / s[2] for x in s] == [Fraction(1, 4), Fraction(1, 2), 1, Fraction(1, 2),
                                     Fraction(1, 4)]
    S = sigma(4, 3)
    for j in range(4):
        assert (S[:, j] == scale(single_peaked_pattern(j, 4), 3)).all()
        assert np.argmax(S[:, j].astype(float)) == j


@given(patterns, st.floats(0.01, 5))
def test_float_matches_exact_where_representable(p, eps):
    lam = Fraction(np.exp(eps)).limit_denominator(10**6)
    exact = np.array(scale(p, lam), dtype=float)
    approx = scale(p, eps=float(np.log(float(lam))))
    np.testing.assert_allclose(approx, exact, rtol=1e-9)


def test_float_no_overflow_large_n_eps():
    n, eps = 10_000, 5.0
    p = single_peaked_pattern(n // 2, n)
    s = scale(p, eps=eps)
    assert np.isfinite(s).all() and abs(s.sum() - 1) < 1e-12
    ls = log_scale(p, eps)
    assert np.isfinite(ls).all()
    np.testing.assert_allclose(np.abs(np.diff(ls)), eps, rtol=1e-9)
    assert ls.min() < -24_000  # entries float64 cannot hold are kept in log space


def test_heights():
    assert heights([-1, -1, 1]).tolist() == [0, -1, -2, -1]


def test_pattern_of_rejects_non_scales():
    with pytest.raises(ValueError, match="not a multiple of a scale"):
        pattern_of([Fraction(1, 2), Fraction(1, 2)], 2)
    with pytest.raises(ValueError, match="not positive"):
        pattern_of([1, 0], 2)
    with pytest.raises(ValueError, match="not a multiple"):
        pattern_of([1.0, 1.5], eps=float(np.log(2)))
    assert pattern_of([1.0, 2.0, 1.0], eps=float(np.log(2))) == (1, -1)


def test_refusals():
    with pytest.raises(ValueError, match="cannot read"):
        psi(3, "1.5x")
    with pytest.raises(ExactnessError):
        pattern_of(np.array([1.0, 2.0]), 2)  # float entries compared with an exact lam
    with pytest.raises(ValueError, match="lam"):
        scale([1], 1)
    with pytest.raises(ValueError, match="-1 or \\+1"):
        scale([2], 2)
    with pytest.raises(ValueError, match="n <= 20"):
        psi(25, 2)
    with pytest.raises(ValueError, match="j"):
        single_peaked(5, 3, 2)
    with pytest.raises(ValueError, match="not both"):
        scale([1], 2, eps=1.0)
