"""Exact real algebraic numbers (dpfix.numbers.algebraic): construction and refusals,
the field laws, exact comparisons checked against 60-digit mpmath values."""

from __future__ import annotations

import pickle
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import dpfix
from dpfix.numbers.algebraic import Algebraic, algebraic, exact_field_array, field_of
from dpfix.numbers.exact import ExactnessError, exact_lam, is_exact_number, to_fraction

# (minimal polynomial, ascending integer coefficients, near, the root at 60 digits)
FIELDS = {
    "golden": ("x^2 - x - 1", [-1, -1, 1], 1.618),
    "sqrt2": ("x^2 - 2", [-2, 0, 1], 1.414),
    "plastic": ("x^3 - x - 1", [-1, -1, 0, 1], 1.3247),
    "quartic": ("x^4 - 10x^2 + 1", [1, 0, -10, 0, 1], 3.146),  # sqrt 2 + sqrt 3
}


def _mp_root(coeffs: list[int], near: float) -> mpmath.mpf:
    with mpmath.workdps(60):
        roots = mpmath.polyroots(list(reversed(coeffs)), maxsteps=200, extraprec=200)
        real = [mpmath.mpf(r.real) for r in roots if abs(r.imag) < mpmath.mpf(10) ** -40]
        return min(real, key=lambda r: abs(r - near))


@pytest.fixture(scope="module", params=sorted(FIELDS))
def field(request):
    text, coeffs, near = FIELDS[request.param]
    return algebraic(text, near), _mp_root(coeffs, near), coeffs


def _mp_value(x: Algebraic, root: mpmath.mpf) -> mpmath.mpf:
    with mpmath.workdps(60):
        return sum((mpmath.mpf(c.numerator) / c.denominator * root ** k
                    for k, c in enumerate(x.coefficients())), mpmath.mpf(0))


small = st.fractions(min_value=-5, max_value=5, max_denominator=7)


def _element(gen: Algebraic, cs: list[Fraction]) -> Algebraic:
    return gen.field.from_coefficients(cs[:gen.field.degree])


coeff_lists = st.lists(small, min_size=4, max_size=4)


# -- construction ---------------------------------------------------------------------
def test_the_same_root_from_text_coefficients_and_interval(field):
    gen, root, coeffs = field
    lo = Fraction(int(root * 1000), 1000)
    other = algebraic(coeffs, (lo, lo + Fraction(1, 100)))
    assert other.field is gen.field and other == gen
    assert abs(float(gen) - float(root)) < 1e-15


def test_exported_and_float_matches_mpmath(field):
    gen, root, _ = field
    assert dpfix.algebraic is algebraic
    assert float(gen ** 5) == pytest.approx(float(root ** 5), rel=1e-15)


@pytest.mark.parametrize(("poly", "near", "words"), [
    ("x^2 - 4", 2, "not irreducible over Q: (x - 2)*(x + 2)"),
    ("x^4 - 4", 1.41, "not irreducible"),
    ("(x - 1)^2", 1, "cannot read"),
    ("x^2 - 2", 0.0, "does not isolate one real root"),
    ("x^2 - 2", (-2, 2), "holds 2 real roots"),
    ("x^2 - 2", (2, 3), "holds 0 real roots"),
    ("x^2 - x - 1", -0.618, "is <= 1"),
    ("x - 1", 1, "is <= 1"),
    ("x^2 + 1", 1, "has no real root"),
    ("3", 1, "degree >= 1"),
])
def test_refusals_in_one_line(poly, near, words):
    with pytest.raises(ValueError, match=None) as info:
        algebraic(poly, near)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_a_near_between_two_roots_names_them():
    # x^3 - 3x + 1 has roots -1.879, 0.347, 1.532; 0.94 is as near to the two last
    with pytest.raises(ValueError, match=r"0.347.*1.53"):
        algebraic("x^3 - 3x + 1", 0.94)
    assert float(algebraic("x^3 - 3x + 1", 1.5)) == pytest.approx(1.5320888862)


def test_degree_one_is_the_rational_field():
    a = algebraic("2x - 3", 1.4)
    assert a.field.degree == 1 and a == Fraction(3, 2) and a.is_rational()
    assert hash(a) == hash(Fraction(3, 2)) and a ** 2 == Fraction(9, 4)
    assert algebraic("x - 3/2", (1, 2)) is a


def test_floats_and_other_fields_are_refused():
    r2, phi = algebraic("x^2 - 2", 1.4), algebraic("x^2 - x - 1", 1.6)
    for bad in (lambda: r2 + 0.5, lambda: 0.5 * r2, lambda: r2 < 1.5, lambda: r2 == 1.5):
        with pytest.raises(ExactnessError):
            bad()
    with pytest.raises(TypeError, match="do not mix"):
        r2 + phi
    with pytest.raises(TypeError, match="integer exponents"):
        r2 ** Fraction(1, 2)
    with pytest.raises(ZeroDivisionError):
        r2 / (r2 - r2)


def test_exact_checks_accept_an_algebraic_lam():
    phi = algebraic("x^2 - x - 1", 1.6)
    assert exact_lam(phi) is phi and is_exact_number(phi)
    with pytest.raises(ValueError, match="must be > 1"):
        exact_lam(phi - 1)
    with pytest.raises(TypeError, match="irrational"):
        to_fraction(phi)
    assert to_fraction(phi ** 2 - phi) == 1
    assert field_of([1, phi], Fraction(1, 2)) is phi.field
    with pytest.raises(ExactnessError):
        exact_field_array(np.array([0.5, 1.0]))


def test_pickle_keeps_the_field():
    phi = algebraic("x^2 - x - 1", 1.6)
    back = pickle.loads(pickle.dumps([phi, phi ** 2 / 3]))
    assert back[0].field is phi.field and back[1] == phi ** 2 / 3


# -- the field laws -------------------------------------------------------------------
@given(coeff_lists, coeff_lists, coeff_lists)
def test_field_laws(field, ca, cb, cc):
    gen, _, _ = field
    a, b, c = (_element(gen, cs) for cs in (ca, cb, cc))
    assert (a + b) + c == a + (b + c) and a + b == b + a
    assert (a * b) * c == a * (b * c) and a * b == b * a
    assert a * (b + c) == a * b + a * c
    assert a - a == 0 and a + 0 == a and a * 1 == a
    if a != 0:
        assert a * (1 / a) == 1 and (b / a) * a == b and a ** -3 * a ** 3 == 1
    assert hash(a + b) == hash(b + a)


@given(coeff_lists, st.integers(0, 12))
def test_powers(field, ca, k):
    gen, _, _ = field
    a = _element(gen, ca)
    expect = gen.field(1)
    for _ in range(k):
        expect = expect * a
    assert a ** k == expect


@given(coeff_lists, small)
def test_mixing_with_ints_and_fractions(field, ca, q):
    gen, _, _ = field
    a = _element(gen, ca)
    assert a + q == q + a == a + gen.field(q)
    assert q - a == -(a - q) and (a * q) == (q * a)
    if q:
        assert q / (q / a) == a if a else True


# -- exact comparisons against mpmath ---------------------------------------------------
@given(coeff_lists, coeff_lists)
def test_order_agrees_with_mpmath(field, ca, cb):
    gen, root, _ = field
    a, b = _element(gen, ca), _element(gen, cb)
    va, vb = _mp_value(a, root), _mp_value(b, root)
    if a == b:
        assert va == vb or abs(va - vb) < mpmath.mpf(10) ** -50
        return
    assume(abs(va - vb) > mpmath.mpf(10) ** -45)
    assert (a < b) == (va < vb) and (a > b) == (va > vb)
    assert (a - b).sign() == (1 if va > vb else -1)
    assert abs(float(a) - float(va)) <= 1e-15 * max(1.0, abs(float(va)))


def test_signs_of_tiny_differences():
    # phi^30 is within 1e-6 of the integer L_30 = 1860498 (Lucas number): phi^30 > L_30 - 1
    phi = algebraic("x^2 - x - 1", 1.6)
    x = phi ** 30
    assert x > 1860497 and x < 1860498 and (x - 1860498).sign() == -1
    # 1 - 1/phi^60 is within 1e-12 of 1 from below
    assert 1 - phi ** -60 < 1 and 1 - phi ** -60 > Fraction(999999999999, 10 ** 12)


def test_strings_show_the_polynomial_and_a_decimal():
    phi = algebraic("x^2 - x - 1", 1.6)
    assert str(phi) == "root of x^2 - x - 1 ~ 1.6180339887"
    assert repr(phi + 1) == "Algebraic('a + 1', 'a^2 - a - 1', ~2.6180339887)"
    assert str(phi ** 2 - phi) == "1"
