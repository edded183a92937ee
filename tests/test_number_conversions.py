"""The exact number conversions of :mod:`dpfix.numbers.exact` between the interface
(Fractions, elements of ``Q(lam)``) and python-flint's ``fmpq`` of the exact inner loops:
one definition each, floats refused, round trips exact."""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpfix.numbers.algebraic import algebraic, exact_field_array
from dpfix.numbers.exact import (
    ExactnessError,
    exact_dot,
    from_fmpq,
    from_fmpq_array,
    to_fmpq,
    to_fraction,
)

fractions = st.fractions(max_denominator=10**6)


@given(x=fractions)
def test_to_fmpq_and_back_is_the_identity(x):
    q = to_fmpq(x)
    assert isinstance(q, flint.fmpq) and (int(q.p), int(q.q)) == (x.numerator, x.denominator)
    back = from_fmpq(q)
    assert isinstance(back, Fraction) and back == x


@given(x=fractions)
def test_every_exact_spelling_gives_the_same_fmpq(x):
    assert to_fmpq(str(x)) == to_fmpq(x) == to_fmpq(to_fmpq(x))
    assert to_fraction(to_fmpq(x)) == x  # to_fraction reads python-flint's numbers too
    assert to_fraction(flint.fmpz(x.numerator)) == x.numerator


@pytest.mark.parametrize("bad", [0.5, np.float64(0.25)])
def test_floats_are_refused(bad):
    with pytest.raises(ExactnessError, match="where an exact number is required"):
        to_fmpq(bad, "g")


def test_elements_of_q_lam():
    r2 = algebraic("x^2 - 2", 1.4)
    assert to_fmpq(r2) is r2 and from_fmpq(r2) is r2  # irrational: kept as it is
    rational = r2 * r2  # 2, an element of the field
    assert to_fmpq(rational) == 2 and isinstance(to_fmpq(rational), flint.fmpq)
    assert from_fmpq(rational) == 2 and isinstance(from_fmpq(rational), Fraction)
    assert exact_dot([to_fmpq(1), r2], [r2, r2]) == r2 + 2


@given(a=st.lists(fractions, min_size=0, max_size=6), data=st.data())
def test_exact_dot_is_the_sum_of_products(a, data):
    b = data.draw(st.lists(fractions, min_size=len(a), max_size=len(a)))
    want = sum((x * y for x, y in zip(a, b, strict=True)), Fraction(0))
    got = exact_dot([to_fmpq(x) for x in a], [to_fmpq(y) for y in b])
    assert from_fmpq(got) == want
    with pytest.raises(ValueError):  # unequal lengths
        exact_dot([to_fmpq(x) for x in a + [Fraction(1)]], [to_fmpq(y) for y in b])


def test_from_fmpq_array():
    out = from_fmpq_array([to_fmpq("1/3"), flint.fmpz(2), 1])
    assert out.dtype == object and out.tolist() == [Fraction(1, 3), 2, 1]
    assert all(isinstance(v, Fraction) for v in out)


def test_exact_field_array_checks_the_dimensions():
    assert exact_field_array([[1, "1/2"]], "M", ndim=2).shape == (1, 2)
    with pytest.raises(ValueError, match=r"M: expected 2 dimension\(s\), got shape \(2,\)"):
        exact_field_array([1, 2], "M", ndim=2)
    with pytest.raises(ExactnessError, match="M: float array"):
        exact_field_array(np.eye(2), "M", ndim=2)


# -- geometric_amounts: one function, exact and float ------------------------------------
@given(n=st.integers(1, 40), rho=st.fractions(min_value=Fraction(1, 100),
                                             max_value=Fraction(99, 100), max_denominator=100))
def test_geometric_amounts_float_is_the_exact_one_rounded(n, rho):
    from dpfix.numbers.numeric import geometric_amounts

    exact = geometric_amounts(n, rho)
    floats = geometric_amounts(n, float(rho))
    assert isinstance(exact, list) and all(isinstance(c, Fraction) for c in exact)
    assert isinstance(floats, np.ndarray) and floats.dtype == np.float64
    assert floats.tolist() == pytest.approx([float(c) for c in exact], rel=1e-14)
    K = np.array([[rho ** abs(i - j) for j in range(n)] for i in range(n)], dtype=object)
    assert (K.dot(np.array(exact, dtype=object)) == 1).all()  # c = K^-1 1, exactly


def test_the_sampler_and_the_release_use_the_one_geometric_amounts():
    import dpfix.numbers.numeric as numeric
    import dpfix.release.privatizers.deconvolve as deconvolve
    import dpfix.sampling.structured as structured

    assert structured.geometric_amounts is numeric.geometric_amounts
    assert deconvolve.geometric_amounts is numeric.geometric_amounts
    assert "geometric_amounts" not in structured.__all__
