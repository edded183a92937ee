"""The Mechanism result object and the error measures (known answers by hand)."""

from fractions import Fraction

import numpy as np
import pytest

from dpfix.theory.mechanism import Mechanism, weight_matrix
from dpfix.theory.metrics import (
    count_error,
    kolmogorov_smirnov,
    mean_squared_error,
    total_variation,
    wasserstein1,
)

H = Fraction(1, 2)
T2 = [[Fraction(2, 3), Fraction(1, 3)], [Fraction(1, 3), Fraction(2, 3)]]


def test_exact_mechanism_queries():
    m = Mechanism.from_matrix(T2, lam=2, fixed_point=[H, H], constructor="hand")
    assert m.exact and m.n == 2
    assert m.privacy_ratio() == 2 and m.privacy_level() == pytest.approx(np.log(2))
    assert m.is_dp() and m.is_dp(lam=3) and not m.is_dp(lam=Fraction(3, 2))
    # <W, T> with W = z_i |i-j|: 1/2 * 1/3 + 1/2 * 1/3
    assert m.count_error() == Fraction(1, 3)
    assert m.count_error(loss="squared") == Fraction(1, 3)
    assert m.fixed_point_error() == 0 and m.row_sum_error() == 0 and m.in_F()
    assert m.fixed_point_error([Fraction(1), Fraction(0)]) == Fraction(1, 3)
    m.check()


def test_float_mechanism_in_log_space():
    m = Mechanism.from_matrix(np.array(T2, dtype=float), eps=float(np.log(2)),
                              fixed_point=np.array([0.5, 0.5]))
    assert not m.exact
    assert m.privacy_level() == pytest.approx(np.log(2), rel=1e-12)
    assert m.is_dp() and not m.is_dp(0.5)
    assert m.count_error() == pytest.approx(1 / 3)
    m.check()


def test_zero_next_to_positive_is_not_dp():
    bad = Mechanism.from_matrix([[1, 0], [0, 1]], lam=2)
    assert bad.privacy_ratio() == float("inf") and not bad.is_dp()
    with pytest.raises(ValueError, match="not eps-DP"):
        bad.check()
    badf = Mechanism.from_matrix(np.eye(2), eps=1.0)
    assert badf.privacy_level() == float("inf")


def test_check_catches_rows_and_fixed_point():
    rows = Mechanism.from_matrix([[H, H], [Fraction(1, 3), Fraction(1, 3)]], lam=3)
    with pytest.raises(ValueError, match="rows do not sum to 1"):
        rows.check()
    fp = Mechanism.from_matrix(T2, lam=2, fixed_point=[Fraction(1), Fraction(0)])
    with pytest.raises(ValueError, match="z T != z"):
        fp.check()


def test_weight_matrix_and_refusals():
    W = weight_matrix("squared", np.array([0.25, 0.75]))
    np.testing.assert_allclose(W, [[0, 0.25], [0.75, 0]])
    with pytest.raises(ValueError, match="unknown loss .cubic."):
        weight_matrix("cubic", [H, H])
    with pytest.raises(ValueError, match="shape"):
        weight_matrix([[1]], [H, H])
    with pytest.raises(ValueError, match="square"):
        Mechanism(log_matrix=np.zeros((2, 3)))


def test_distribution_metrics_by_hand():
    p, q = [H, H, 0], [0, H, H]
    assert wasserstein1(p, q) == 1  # CDFs (1/2, 1, 1) vs (0, 1/2, 1)
    assert total_variation(p, q) == H
    assert kolmogorov_smirnov(p, q) == H
    z = np.array([0.5, 0.5])
    assert count_error(np.eye(2), z) == 0
    assert mean_squared_error(np.array([[0, 1], [1, 0]]), z) == pytest.approx(1)
    with pytest.raises(ValueError, match="one length"):
        wasserstein1([1, 0], [1, 0, 0])


def test_metrics_stay_exact_and_refuse_mixed_floats():
    from dpfix.numbers.exact import ExactnessError

    assert wasserstein1([Fraction(1, 3), Fraction(2, 3)], ["0", "1"]) == Fraction(1, 3)
    assert count_error(T2, ["1/2", "1/2"]) == Fraction(1, 3)
    assert isinstance(count_error(T2, [1, 0]), Fraction)
    with pytest.raises(ExactnessError):
        wasserstein1([Fraction(1, 3), Fraction(2, 3)], [0.0, 1.0])
    with pytest.raises(ExactnessError):
        count_error(T2, [0.5, 0.5])
    assert weight_matrix("abs", ["1/4", "3/4"])[1, 0] == Fraction(3, 4)


def test_normalised_rows_sum_to_one_in_log_space():
    L = np.log(np.array([[0.5, 0.5], [0.3, 0.6]]))  # second row sums to 0.9
    m = Mechanism(log_matrix=L, eps=1.0)
    assert m.row_sum_error() == pytest.approx(0.1)
    nm = m.normalised()
    assert nm.row_sum_error() < 1e-15 and nm is not m
    np.testing.assert_allclose(nm.T[1], [1 / 3, 2 / 3])
    exact = Mechanism.from_matrix(T2, lam=2)
    assert exact.normalised() is exact


@pytest.mark.parametrize("level", [1e-3, 0.3, 2.0, 40.0])
def test_float_is_dp_bites_at_its_own_level_times_one_minus_1e6(level):
    # is_dp's float tolerance is FLOAT_RTOL = 1e-9: a looser one (1e-3) must fail here
    from dpfix.theory.mechanism import FLOAT_RTOL

    a, b = -np.log1p(np.exp(-level)), -np.log1p(np.exp(level))  # a - b = level, e^a + e^b = 1
    L = np.array([[a, b], [b, a]])
    m = Mechanism(log_matrix=L, eps=level)
    assert m.privacy_level() == pytest.approx(level, rel=1e-12)
    assert m.is_dp() and m.is_dp(level) and m.is_dp(level * (1 + 0.5 * FLOAT_RTOL))
    below = level * (1 - 1e-6)
    assert not m.is_dp(below) and not m.is_dp(level * (1 - 2 * FLOAT_RTOL))
    assert not Mechanism(log_matrix=L, eps=below).is_dp()
    with pytest.raises(ValueError, match="not eps-DP"):
        Mechanism(log_matrix=L, eps=below).check()
    m.check()


def test_exact_is_dp_bites_just_below_its_ratio():
    m = Mechanism.from_matrix(T2, lam=2)
    assert m.is_dp(lam=2) and not m.is_dp(lam=Fraction(2) * (1 - Fraction(1, 10**12)))
    assert not Mechanism.from_matrix(T2, lam=Fraction(2 * 10**12 - 1, 10**12)).is_dp()
