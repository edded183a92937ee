"""Exact numbers: conversion, refusal of floats, exact rank and nullspace."""

from fractions import Fraction

import numpy as np
import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from dpfix.numbers.exact import (
    ExactnessError,
    exact_array,
    exact_lam,
    is_exact_array,
    nullspace,
    rank,
    resolve_lam,
    to_fraction,
)

small = st.fractions(min_value=-5, max_value=5, max_denominator=6)
matrices = st.integers(1, 5).flatmap(
    lambda r: st.integers(1, 5).flatmap(
        lambda c: st.lists(st.lists(small, min_size=c, max_size=c), min_size=r, max_size=r)))


def test_accepts_ints_fractions_strings_sympy():
    arr = exact_array([[1, "3/2"], [Fraction(1, 3), sympy.Rational(2, 7)]], "M")
    assert arr.tolist() == [[1, Fraction(3, 2)], [Fraction(1, 3), Fraction(2, 7)]]
    assert all(type(v) is Fraction for v in arr.flat)
    assert is_exact_array(arr) and not is_exact_array([1, 0.5])


@pytest.mark.parametrize("bad", [0.5, np.float64(0.25), [[1, 0.5]], np.array([0.5, 0.5])])
def test_refuses_floats(bad):
    with pytest.raises(ExactnessError, match="float"):
        exact_array(bad, "z")


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="cannot read 'abc'"):
        to_fraction("abc", "z")
    with pytest.raises(ValueError, match="must be > 1"):
        exact_lam(1)
    with pytest.raises(ValueError, match="not both"):
        resolve_lam(eps=1.0, lam=2)
    with pytest.raises(ValueError, match="eps: must be"):
        resolve_lam(eps=float("nan"))
    with pytest.raises(ValueError, match="eps: must be"):
        resolve_lam(eps=-1.0)
    with pytest.raises(ValueError, match="dimension"):
        exact_array([1, 2], "z", ndim=2)


def test_float_lam_selects_float_path():
    lam, eps = resolve_lam(lam=2.0)
    assert lam is None and eps == pytest.approx(np.log(2))


@given(matrices)
def test_rank_and_nullspace_agree_with_sympy(rows):
    M = sympy.Matrix(rows)
    assert rank(rows) == M.rank()
    N = nullspace(rows)
    assert N.shape[1] == len(rows[0]) - M.rank()
    assert (exact_array(rows, "M").dot(N) == 0).all()
    if N.shape[1]:
        assert rank(N.T) == N.shape[1]
    # the very basis sympy gives (free variable 1, the others 0)
    ref = [[Fraction(int(x.p), int(x.q)) for x in v] for v in M.nullspace()]
    assert N.T.tolist() == ref


@given(st.integers(1, 6).flatmap(lambda c: st.lists(
    st.lists(st.fractions(min_value=-10**6, max_value=10**6, max_denominator=10**6),
             min_size=c, max_size=c), min_size=1, max_size=7)))
def test_rank_agrees_with_sympy_on_large_rationals(rows):
    assert rank(rows) == sympy.Matrix(rows).rank()


def test_rank_and_nullspace_of_empty_and_zero_matrices():
    assert rank([[0, 0], [0, 0]]) == 0 and rank(np.empty((0, 3), dtype=object)) == 0
    assert nullspace([[0, 0]]).T.tolist() == [[1, 0], [0, 1]]
    assert nullspace(np.empty((0, 2), dtype=object)).shape == (2, 2)
    with pytest.raises(ExactnessError):
        rank([[0.5, 1]])
