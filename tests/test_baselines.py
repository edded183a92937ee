"""Unfixed baselines: truncated geometric, staircase, discrete Gaussian."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.integrate import quad

from dpfix.constructors.additive import (
    discrete_gaussian,
    staircase,
    staircase_pmf,
    truncated_geometric,
)
from dpfix.numbers.calibration import discrete_gaussian_delta, discrete_gaussian_sigma

LAMS = [Fraction(3, 2), Fraction(2), Fraction(3)]
SQUARE_LAMS = [Fraction(9, 4), Fraction(4), Fraction(9)]


def _brute_clamped(n, pmf, K):
    """``T[i, j]`` by summing ``pmf(k)`` over ``|k| <= K`` with clamping (floats)."""
    T = np.zeros((n, n))
    for i in range(n):
        for k in range(-K, K + 1):
            T[i, min(max(i + k, 0), n - 1)] += pmf(k)
    return T


# -- truncated geometric ---------------------------------------------------------------------
@pytest.mark.parametrize("lam", LAMS)
@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_truncated_geometric_exact(n, lam):
    M = truncated_geometric(n, lam=lam)
    M.check()
    assert all(s == 1 for s in M.matrix.sum(axis=1))
    if n > 1:
        assert M.privacy_ratio() == lam  # the whole budget is used
    rho = float(1 / lam)
    brute = _brute_clamped(n, lambda k: (1 - rho) / (1 + rho) * rho ** abs(k), 400)
    assert np.abs(M.matrix.astype(float) - brute).max() < 1e-12
    F = truncated_geometric(n, eps=math.log(lam))
    assert np.abs(F.T - M.matrix.astype(float)).max() < 1e-12


@pytest.mark.parametrize("eps", [5.0, 0.01])
def test_truncated_geometric_large_n(eps):
    M = truncated_geometric(3000, eps)
    M.check()
    assert np.isfinite(M.log_matrix).all()


# -- staircase -------------------------------------------------------------------------------
def _staircase_density(x, eps):
    rho, gamma = math.exp(-eps), 1 / (1 + math.exp(eps / 2))
    a = (1 - rho) / (2 * (gamma + rho * (1 - gamma)))
    x = abs(x)
    k = math.floor(x)
    return a * rho ** k * (1 if x - k < gamma else rho)


@pytest.mark.parametrize("lam", SQUARE_LAMS)
def test_staircase_pmf_sums_to_one_exactly(lam):
    p0, C, rho = staircase_pmf(lam=lam)
    assert p0 + 2 * C * rho / (1 - rho) == 1
    assert p0 / (C * rho) <= lam  # neighbouring outputs 0 and 1


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_staircase_pmf_matches_integrated_density(eps):
    p0, C, rho = staircase_pmf(eps)
    gamma = 1 / (1 + math.exp(eps / 2))
    for k in range(0, 6):
        # the density jumps at integers and at integers +- gamma
        jumps = [c for c in (-gamma, 0, gamma, k - 1 + gamma, k, k + gamma)
                 if k - 0.5 < c < k + 0.5]
        mass = quad(_staircase_density, k - 0.5, k + 0.5, args=(eps,), points=jumps)[0]
        expected = p0 if k == 0 else C * rho ** k
        assert mass == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("lam", SQUARE_LAMS)
@pytest.mark.parametrize("n", [1, 2, 5])
def test_staircase_exact_and_float(n, lam):
    M = staircase(n, lam=lam)
    assert all(s == 1 for s in M.matrix.sum(axis=1))
    assert M.privacy_ratio() <= lam and M.is_dp(lam=lam)
    F = staircase(n, eps=math.log(lam))
    assert np.abs(F.T - M.matrix.astype(float)).max() < 1e-12
    assert F.params["privacy_level"] <= math.log(lam) * (1 + 1e-9)


def _sample_staircase(rng, size, eps):
    """Geng-Kairouz-Oh-Viswanath's sampler: sign, geometric cell, which step, uniform."""
    b, gamma = math.exp(-eps), 1 / (1 + math.exp(eps / 2))
    sign = rng.choice([-1.0, 1.0], size=size)
    G = rng.geometric(1 - b, size=size) - 1  # P(G = k) = (1 - b) b^k, k >= 0
    U = rng.random(size)
    low = rng.random(size) < gamma / (gamma + (1 - gamma) * b)
    return sign * np.where(low, G + gamma * U, G + gamma + (1 - gamma) * U)


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_staircase_matches_monte_carlo(eps):
    # 200,000 draws per row; each frequency within 5 binomial standard errors
    # (+ 1e-4): a false alarm has probability below 1e-5 per cell (seeded anyway).
    n, N = 6, 200_000
    rng = np.random.default_rng(7)
    T = staircase(n, eps).T
    for i in range(n):
        out = np.clip(np.rint(i + _sample_staircase(rng, N, eps)), 0, n - 1).astype(int)
        freq = np.bincount(out, minlength=n) / N
        tol = 5 * np.sqrt(T[i] * (1 - T[i]) / N) + 1e-4
        assert (np.abs(freq - T[i]) <= tol).all(), (i, freq, T[i])


def test_staircase_refuses_non_square_exact_lam():
    with pytest.raises(ValueError, match="square of a rational"):
        staircase(3, lam=2)


def test_staircase_large_n():
    for eps in (5.0, 0.01):
        M = staircase(2000, eps)
        assert np.isfinite(M.log_matrix).all()


# -- discrete Gaussian -----------------------------------------------------------------------
def _dg_pmf(sigma):
    K = int(60 * sigma) + 60
    ks = np.arange(-K, K + 1)
    w = np.exp(-ks.astype(float) ** 2 / (2 * sigma * sigma))
    return ks, w / math.fsum(w)


def _hockey_stick_delta(sigma, eps):
    """``sum_y max(0, p(y) - e^eps p(y-1))``: the tight delta for a shift by 1."""
    ks, p = _dg_pmf(sigma)
    return float(np.maximum(p[1:] - math.exp(eps) * p[:-1], 0).sum())


@pytest.mark.parametrize("sigma", [0.3, 0.8, 1.7, 4.0, 25.0])
@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
def test_dg_delta_matches_hockey_stick(sigma, eps):
    assert discrete_gaussian_delta(sigma, eps) == pytest.approx(
        _hockey_stick_delta(sigma, eps), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0, 5.0])
def test_dg_delta_shape_used_by_the_search(eps):
    # decreasing at the breakpoints sigma_k; between them it rises, then falls
    bps = [math.sqrt((k + 0.5) / eps) for k in range(25)]
    at = [discrete_gaussian_delta(s, eps) for s in bps]
    assert all(b < a for a, b in zip(at, at[1:], strict=False))
    for lo, hi in zip(bps, bps[1:], strict=False):
        d = np.array([discrete_gaussian_delta(s, eps) for s in np.linspace(lo, hi, 80)])
        steps = np.sign(np.diff(d))
        steps = steps[steps != 0]
        assert (np.diff(steps) <= 0).all()  # no fall followed by a rise


@pytest.mark.parametrize("eps,delta", [(5.0, 1e-5), (3.0, 1e-4), (1.0, 1e-5), (0.1, 1e-5)])
def test_dg_sigma_is_smallest(eps, delta):
    s = discrete_gaussian_sigma(eps, delta)
    assert discrete_gaussian_delta(s, eps) <= delta
    assert discrete_gaussian_delta(s * (1 - 1e-9), eps) > delta
    below = np.linspace(s / 50, s, 2000)[:-1]
    assert all(discrete_gaussian_delta(x, eps) > delta for x in below)


@pytest.mark.parametrize("n,eps,delta", [(1, 1.0, 1e-3), (5, 1.0, 1e-3), (30, 0.3, 1e-5),
                                         (12, 4.0, 1 / 3137)])
def test_dg_mechanism(n, eps, delta):
    M = discrete_gaussian(n, eps, delta)
    assert M.delta == delta and M.eps == eps and not M.is_dp()
    M.check()  # rows sum to 1
    sigma = M.params["sigma"]
    ks, p = _dg_pmf(sigma)
    brute = _brute_clamped(n, lambda k: p[k + ks[-1]], int(ks[-1]))
    assert np.abs(M.T - brute).max() < 1e-12
    # (eps, delta) of the clamped matrix itself, both directions between neighbours
    T = M.T
    for a, b in ((T[:-1], T[1:]), (T[1:], T[:-1])):
        assert np.maximum(a - math.exp(eps) * b, 0).sum(axis=1).max(initial=0) <= delta + 1e-12


def test_dg_large_n_small_eps():
    M = discrete_gaussian(1500, 0.05, 1e-6)
    assert np.isfinite(M.log_matrix).all()
    assert M.row_sum_error() < 1e-9


def test_dg_bad_input():
    with pytest.raises(ValueError, match="delta"):
        discrete_gaussian(3, 1.0, 0.0)
    with pytest.raises(ValueError, match="eps"):
        discrete_gaussian_sigma(-1.0, 1e-3)
    with pytest.raises(ValueError, match="n"):
        truncated_geometric(0, 1.0)


# -------------------------------------------------------------- very large eps
@pytest.mark.parametrize("eps", [500.0, 1000.0])
def test_large_eps_float_path(eps):
    # e^(2 eps) and e^eps overflow float64 here; every constructor works in logs
    from dpfix.constructors import heuristic, unfixed_optimum

    n = 51
    z = np.random.default_rng(3).dirichlet(np.ones(n))
    mechs = [heuristic(z, eps), unfixed_optimum(z, eps), truncated_geometric(n, eps),
             staircase(n, eps), discrete_gaussian(n, eps, 1e-3)]
    for M in mechs:
        assert M.log_matrix is not None and M.matrix is None
        M.check(z if M.constructor == "heuristic" else None)  # heuristic: also z T = z
        if M.delta == 0:
            assert M.is_dp(eps)
        # at this eps the mechanism is the identity up to e^-(eps/2) (staircase) or less
        T = M.T
        assert (T - np.diag(np.diag(T))).max() < 1e-100
        assert np.abs(np.diag(T) - 1).max() < 1e-12
    assert truncated_geometric(n, eps).log_matrix[0, 1] == pytest.approx(-eps, rel=1e-12)


def test_staircase_beyond_float_range():
    with pytest.raises(ValueError, match="eps"):
        staircase(5, 2000.0)


# -------------------------------------------------------------- very small eps
@pytest.mark.parametrize("eps", [1e-9, 3.3e-9, 1e-8, 1e-7, 1e-6, 1e-5])
@pytest.mark.parametrize("n", [2, 5, 51])
@pytest.mark.parametrize("build", [truncated_geometric, staircase])
def test_tiny_eps_float_mechanism_passes_its_own_check(build, n, eps):
    # at eps = 1e-9 the float logs of T are resolved to ~1e-15, a relative 1e-6 of eps's
    # neighbour differences: the construction must still pass its own is_dp()
    M = build(n, eps)
    M.check()
    assert M.is_dp() and M.is_dp(eps, rtol=0.0) and M.eps == eps
    assert eps * (1 - 1e-3) < M.params["eps_built"] < eps
    lam = Fraction(math.exp(M.params["eps_built"]))
    if build is truncated_geometric:  # the float matrix is that of its eps_built
        assert np.abs(M.T - truncated_geometric(n, lam=lam).matrix.astype(float)).max() < 1e-12


@pytest.mark.parametrize("build", [truncated_geometric, staircase])
def test_eps_below_float_resolution_is_refused(build):
    with pytest.raises(ValueError, match=r"eps: .*exact path"):
        build(51, 1e-14)
