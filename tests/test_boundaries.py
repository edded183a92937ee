"""Exact boundary cases: the equalities where an off-by-one or a one-sided check shows.

Each test puts an input exactly on a boundary (a cumulative supply equal to a
demand, the largest word a rejection sampler accepts, ...) and checks the
answer against an independent computation of the definition.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from flint import fmpq

from dpfix.certify.duals import _crossings
from dpfix.sampling import RandomSource

Fr = Fraction


def geometric_supplies(z: list[Fraction], lam: Fraction) -> list[Fraction]:
    """``sum_i z_i G[i, m]``, ``G[i, m] = P(clamp(i + k, 0, n-1) = m)`` for the two-sided
    geometric ``P(k) = (1 - rho)/(1 + rho) rho^|k|``, summed from the law itself."""
    n, rho = len(z), 1 / lam
    norm = (1 - rho) / (1 + rho)
    tail = norm * rho / (1 - rho)  # P(k >= 1) = P(k <= -1)

    def G(i: int, m: int) -> Fraction:
        if n == 1:
            return Fr(1)
        if 0 < m < n - 1:
            return norm * rho ** abs(i - m)
        d = i if m == 0 else n - 1 - i  # distance to the end m
        return norm * rho**d / (1 - rho) if d > 0 else 1 - tail

    return [sum((z[i] * G(i, m) for i in range(n)), Fr(0)) for m in range(n)]


def first_reaching(supplies: list[Fraction], z: list[Fraction]) -> list[int]:
    """``m*_l = min {m : supply_0 + .. + supply_m >= z_0 + .. + z_l}``, ``l < n - 1``."""
    out = []
    for l in range(len(z) - 1):
        demand = sum(z[: l + 1], Fr(0))
        out.append(next(m for m in range(len(z)) if sum(supplies[: m + 1], Fr(0)) >= demand))
    return out


@pytest.mark.parametrize("z, lam", [
    ([Fr(1, 2), Fr(1, 2)], Fr(2)),                     # supply_0 = 1/2 = z_0: a tie
    ([Fr(1, 4), Fr(1, 4), Fr(1, 4), Fr(1, 4)], Fr(3)),  # symmetric: a tie at l = 1
    ([Fr(1, 6), Fr(1, 3), Fr(1, 3), Fr(1, 6)], Fr(3, 2)),
    ([Fr(1, 10), Fr(2, 5), Fr(0), Fr(2, 5), Fr(1, 10)], Fr(2)),  # a zero column, symmetric
    ([Fr(1, 7), Fr(2, 7), Fr(4, 7)], Fr(5, 2)),
])
def test_crossings_are_the_first_scale_reaching_the_demand(z, lam):
    supplies = geometric_supplies(z, lam)
    assert sum(supplies) == 1
    expected = first_reaching(supplies, z)
    rho = 1 / lam
    got = _crossings([fmpq(v.numerator, v.denominator) for v in z],
                     fmpq(rho.numerator, rho.denominator))
    assert got == expected
    n = len(z)
    if n % 2 == 0 and z == z[::-1]:  # symmetric: the middle crossing is exactly at n/2 - 1
        assert sum(supplies[: n // 2]) == Fr(1, 2) and got[n // 2 - 1] == n // 2 - 1


class Words(RandomSource):
    """Hands out the given words in order."""

    def __init__(self, words: list[int]) -> None:
        self.left = list(words)

    def words(self, size: int) -> np.ndarray:
        out, self.left = self.left[:size], self.left[size:]
        return np.array(out, dtype=np.uint64)


@pytest.mark.parametrize("bound", [3, 6, 1000, 2**61 + 1, 2**63 - 1, 2**63])
def test_below_accepts_exactly_the_words_under_the_largest_multiple(bound):
    """``below`` accepts the words ``0 .. L - 1``, ``L`` the largest multiple of ``bound``
    not above ``2^64``, so every value has ``floor(2^64 / bound)`` preimages: the last
    accepted word is used, the first refused one is not."""
    L = (2**64 // bound) * bound
    if bound & (bound - 1) == 0:  # a power of two: the top bits of any word
        src = Words([2**64 - 1, 0])
        assert src.below(bound, 2).tolist() == [bound - 1, 0]
        return
    src = Words([L - 1, L, 2**64 - 1, 5])  # accepted; refused, refused, then 5 accepted
    assert src.below(bound, 2).tolist() == [(L - 1) % bound, 5 % bound]
    assert src.left == []
    src = Words([L - 1, 0])
    assert src.below(bound, 1).tolist() == [(L - 1) % bound] and src.left == [0]


def taylor(x: Fraction, terms: int) -> Fraction:
    """``sum_(k <= terms) x^k / k!``: a lower bound on ``e^x`` for ``x >= 0``."""
    total, term = Fr(0), Fr(1)
    for k in range(terms + 1):
        total += term
        term = term * x / (k + 1)
    return total


@pytest.mark.parametrize("x", [Fr(1, 1000), Fr(1, 2), Fr(1), Fr(5, 2), Fr(7)])
@pytest.mark.parametrize("terms", [16, 24])
def test_exp_bounds_enclose_e_to_the_x(x, terms):
    """``lo <= e^x <= hi``: ``hi`` is at least every longer Taylor sum (each a lower bound
    on ``e^x``), ``lo`` at most ``e^x``'s upper bound ``1 / (1 - x/N)^N`` (``N > x``)."""
    from dpfix.sampling.source import _exp_bounds

    lo, hi = _exp_bounds(x, terms)
    assert lo == taylor(x, terms) < hi
    assert hi >= taylor(x, terms + 40)
    N = 64
    assert lo <= 1 / (1 - x / N) ** N


@pytest.mark.parametrize("eps", [0.001, 0.5, 1.0, 3.0])
def test_lam_just_below_e_to_the_eps_is_accepted(eps):
    """A rational a hair below ``e^eps`` (a long Taylor sum) is at most ``e^eps``; one a
    hair above (that sum plus twice the first omitted term, more than the whole remainder
    ``sum_(k > 60) x^k/k! <= x^61/61! / (1 - x/62)`` for ``x <= 3``) is not."""
    from dpfix.sampling.source import lam_at_most_exp

    x = Fr(eps)
    below = taylor(x, 60)
    assert lam_at_most_exp(below, eps)
    above = below + 2 * x**61 / math.factorial(61)
    assert not lam_at_most_exp(above, eps)


# -- pipeline: the top-coding boundary and the histogram cap --------------------------------
def test_counts_equal_to_upper_are_not_topcoded():
    from dpfix.release.frameworks import histogram

    eta, top = histogram([0, 2, 2, 3, 7], 2)
    assert eta.tolist() == [1, 0, 4] and top == 2  # 3 and 7 exceed 2; the two 2s do not
    eta, top = histogram([5, 5], 5)
    assert eta.tolist() == [0, 0, 0, 0, 0, 2] and top == 0


def test_histogram_cap_is_inclusive():
    """``N = MAX_HISTOGRAM_N`` rows is accepted, one more is refused (checks only)."""
    from dpfix.release.frameworks import MAX_HISTOGRAM_N, topcode_histogram

    out, top = topcode_histogram(np.array([MAX_HISTOGRAM_N - 1, 1], dtype=np.int64), 1)
    assert out.tolist() == [MAX_HISTOGRAM_N - 1, 1] and top == 0
    with pytest.raises(ValueError, match="exceeds the cap"):
        topcode_histogram(np.array([MAX_HISTOGRAM_N, 1], dtype=np.int64), 1)


# -- approximate: a mechanism spending exactly delta ----------------------------------------
def test_a_budget_spent_exactly_is_approximately_dp():
    """(eps, delta)-DP allows the positive parts of each pair (both directions) to sum to
    delta itself: a mechanism spending exactly delta passes, a hair less refuses it."""
    from dpfix.constructors.delta import delta_northwest
    from dpfix.theory.delta import is_approximately_dp, positive_parts

    z, lam, delta = [Fr(1, 2), Fr(1, 2)], Fr(2), Fr(1, 10)
    T = delta_northwest(z, lam, delta)
    spent = max(sum(row, Fr(0)) for row in positive_parts(T, lam))
    assert spent == delta  # the delta-northwest corner spends its whole delta
    assert is_approximately_dp(T, lam, delta)
    assert not is_approximately_dp(T, lam, delta - Fr(1, 10**9))
    skew = np.array([[Fr(1, 10), Fr(9, 10)], [Fr(9, 20), Fr(11, 20)]], dtype=object)
    # pair (1, 0), column 0: 9/20 - 2 * 1/10 = 1/4, the only positive part (the other
    # direction, 1/10 - 2 * 9/20, and column 1, 9/10 - 11/10 and 11/20 - 18/10, are negative)
    assert is_approximately_dp(skew, lam, Fr(1, 4))
    assert not is_approximately_dp(skew, lam, Fr(1, 4) - Fr(1, 10**9))


# -- enumeration: a point outside by one unit ----------------------------------------------
def test_tight_masks_refuse_a_point_outside_by_one_unit():
    from dpfix.theory import enumeration as en
    from dpfix.theory.enumeration import VertexArray
    from dpfix.theory.polytopes import U

    P = U(2, 2)
    A, b = P.hrep.integer_ub()
    va = VertexArray.from_matrices([np.array([[1, 0], [0, 1]], dtype=object)], (2, 2))
    slack = va.denominators[0] * b - A.dot(va.numerators[0])
    assert int(slack.min()) == -1  # T_00 <= 2 T_10 fails by exactly one unit
    with pytest.raises(ValueError, match="violates"):
        en.tight_masks(P.hrep, va)


# -- polytopes: an interior point of an edge is not a vertex --------------------------------
def test_a_point_strictly_inside_a_face_is_not_extreme():
    from dpfix.theory.polytopes import F, U

    P = F(2, 2, ["1/2", "1/2"])
    a = np.array([[Fr(2, 3), Fr(1, 3)], [Fr(1, 3), Fr(2, 3)]], dtype=object)
    b = np.array([[Fr(1, 3), Fr(2, 3)], [Fr(2, 3), Fr(1, 3)]], dtype=object)
    assert P.is_extreme(a) and P.is_extreme(b)
    mid = (a + b) / 2
    assert P.contains(mid) and not P.is_extreme(mid)
    assert not U(3, 2).is_extreme(np.full((3, 3), Fr(1, 3), dtype=object))


# -- scales: the index range of psi's columns ----------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 4])
def test_pattern_index_range_is_half_open(n):
    from dpfix.theory.scales import pattern_from_index, pattern_index

    for m in range(2 ** (n - 1)):
        assert pattern_index(pattern_from_index(m, n)) == m
    for m in (-1, 2 ** (n - 1)):
        with pytest.raises(ValueError, match="m: must be in"):
            pattern_from_index(m, n)
