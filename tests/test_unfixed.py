"""Algorithm 2 (two-stage unfixed optimum): exact optimality, structure, float safety."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpfix.constructors.additive import truncated_geometric
from dpfix.constructors.lp import lp_optimum
from dpfix.constructors.unfixed import (
    check_weights,
    placement,
    sigma_amounts,
    unfixed_optimum,
)
from dpfix.explore.strategies import convex_losses, targets
from dpfix.numbers.exact import ExactnessError, exact_array, nullspace, rank
from dpfix.numbers.numeric import geometric_amounts
from dpfix.theory.mechanism import weight_matrix
from dpfix.theory.scales import sigma

LAMS = [Fraction(5, 4), Fraction(3, 2), Fraction(2), Fraction(3), Fraction(7, 2)]


def exact_z(n_min=2, n_max=5):
    return targets(n_min=n_min, n_max=n_max, max_weight=5)


def convex_concentrating(n):
    """A random exact W whose rows are convex with a minimum on the diagonal."""
    return convex_losses(n, per_row=True)


def _sigma_coefficients(col, n, lam):
    """Exact ``beta`` with ``Sigma beta = col`` (Sigma is invertible)."""
    S = sigma(n, lam)
    aug = np.concatenate([S, -np.array(col, dtype=object)[:, None]], axis=1)
    N = nullspace(aug)
    assert N.shape[1] == 1 and N[n, 0] != 0
    return N[:n, 0] / N[n, 0]


# -- the amounts alpha and K^-1 1 -------------------------------------------------------------
@pytest.mark.parametrize("lam", LAMS)
@pytest.mark.parametrize("n", range(1, 9))
def test_k_inverse_ones_closed_form_exact(n, lam):
    # K^-1 1 = (1, 1-rho, ..., 1-rho, 1)/(1+rho) (docs/math_notes.md): K x = 1 exactly, K invertible
    rho = 1 / lam
    K = np.array([[rho ** abs(i - j) for j in range(n)] for i in range(n)], dtype=object)
    x = np.array(geometric_amounts(n, rho), dtype=object)
    assert rank(K) == n
    assert (K.dot(x) == 1).all()


@pytest.mark.parametrize("lam", LAMS)
@pytest.mark.parametrize("n", range(1, 9))
def test_sigma_amounts_solve_sigma_alpha_equals_one(n, lam):
    alpha = sigma_amounts(n, lam)
    assert all(isinstance(a, Fraction) and a > 0 for a in alpha)
    assert (sigma(n, lam).dot(alpha) == 1).all()
    assert sum(alpha) == n  # columns of Sigma sum to 1


@pytest.mark.parametrize("eps", [1e-9, 1e-4, 0.01, 1.0, 5.0, 40.0])
@pytest.mark.parametrize("n", [1, 2, 3, 7, 50])
def test_sigma_amounts_float_matches_exact(n, eps):
    # the exact lam nearest e^eps as a Fraction; float alpha must agree to 1e-12 relative
    lam = Fraction(math.exp(eps))
    exact = np.array(sigma_amounts(n, lam), dtype=float)
    approx = sigma_amounts(n, eps=float(math.log(lam)))
    assert np.allclose(approx, exact, rtol=1e-12, atol=0)


def test_truncated_geometric_is_sigma_times_amounts():
    for n in range(1, 7):
        for lam in LAMS:
            G = sigma(n, lam) * sigma_amounts(n, lam)[None, :]
            assert (truncated_geometric(n, lam=lam).matrix == G).all()


# -- optimality (Theorems 7, 8, 12) --------------------------------------------------------------
@given(exact_z(), st.sampled_from(LAMS), st.sampled_from(["abs", "squared"]))
def test_count_error_equals_exact_lp_optimum_over_U(z, lam, weights):
    M = unfixed_optimum(z, lam=lam, loss=weights)
    best = lp_optimum(z, lam=lam, loss=weights, fixed=False, solver="exact")
    assert M.count_error(z, weights) == best.params["objective"]


@given(st.data(), st.integers(2, 5), st.sampled_from(LAMS))
def test_optimal_for_random_convex_concentrating_weights(data, n, lam):
    W = data.draw(convex_concentrating(n))
    z = np.array([Fraction(1, n)] * n, dtype=object)
    M = unfixed_optimum(z, lam=lam, loss=W)
    best = lp_optimum(z, lam=lam, loss=W, fixed=False, solver="exact")
    assert (W * M.matrix).sum() == best.params["objective"]


@given(exact_z(), st.sampled_from(LAMS), st.sampled_from(["abs", "squared"]))
def test_output_in_U_and_made_of_single_peaked_scales(z, lam, weights):
    M = unfixed_optimum(z, lam=lam, loss=weights)
    n = len(z)
    M.check()  # exact: rows sum to 1, every neighbour ratio <= lam
    assert M.is_dp(lam=lam) and M.fixed_point is None
    g = M.params["placement"]
    assert list(g) == sorted(g)  # non-decreasing (Lemma 9)
    alpha = sigma_amounts(n, lam)
    for col in range(n):
        beta = _sigma_coefficients(M.matrix[:, col], n, lam)
        assert all(b >= 0 for b in beta)  # a conic combination of single-peaked scales
        assert all(beta[m] == (alpha[m] if g[m] == col else 0) for m in range(n))


# -- float path -----------------------------------------------------------------------------
@given(exact_z(2, 6), st.sampled_from(LAMS), st.sampled_from(["abs", "squared", "matrix"]))
def test_float_agrees_with_exact(z, lam, weights):
    w = weight_matrix("abs", z) if weights == "matrix" else weights
    E = unfixed_optimum(z, lam=lam, loss=w)
    wf = np.asarray(w, dtype=float) if weights == "matrix" else w
    F = unfixed_optimum(z.astype(float), eps=math.log(lam), loss=wf)
    assert F.params["placement"] == E.params["placement"]
    assert np.max(np.abs(F.T - E.matrix.astype(float))) <= 1e-9


@pytest.mark.parametrize("eps", [5.0, 0.01])
def test_float_large_n_is_safe(eps):
    n = 2000
    z = np.random.default_rng(1).dirichlet(np.ones(n) * 0.3)
    for weights in ("abs", "squared"):
        M = unfixed_optimum(z, eps=eps, loss=weights)  # runs M.check()
        assert not np.isnan(M.log_matrix).any()
        assert M.privacy_level() <= eps * (1 + 1e-9) and M.row_sum_error() <= 1e-9


@pytest.mark.parametrize(("eps", "n"), [(5.0, 10_000), (0.01, 2_000),
                                        pytest.param(0.01, 10_000, marks=pytest.mark.full)])
def test_float_n_10000_is_safe(eps, n):
    z = np.random.default_rng(2).dirichlet(np.ones(n))
    M = unfixed_optimum(z, eps=eps)
    assert not np.isnan(M.log_matrix).any() and np.isfinite(M.log_matrix).any()


def test_float_with_long_zero_runs_places_by_exact_ratios():
    # z is zero within distance 300 of the middle: at eps = 5 the relevant weights
    # are ~e^-1500 (underflow in plain floats); the placement must still be exact.
    n = 601
    z = np.zeros(n)
    z[0], z[-1] = 0.5, 0.5
    g = unfixed_optimum(z, eps=5.0).params["placement"]
    # ties (m = 300) go forward; below the middle the nearer end wins
    assert g == tuple([0] * 300 + [n - 1] * 301)


# -- placement and weights ----------------------------------------------------------------------
def test_placement_is_largest_minimiser():
    assert placement(lambda m, g: (2 * (g - m) + 1, 0), 4) == [0, 1, 2, 3]
    assert placement(lambda m, g: (0, 0), 3) == [2, 2, 2]  # ties go forward


def test_weights_refused_with_row_named():
    W = exact_array([[0, 1, 2], [1, 0, 1], [0, 1, 3]])
    with pytest.raises(ValueError, match="row 2 is not concentrating"):
        check_weights(W)
    W = exact_array([[0, 2, 3], [1, 0, 1], [2, 1, 0]])
    with pytest.raises(ValueError, match="row 0 is not convex"):
        check_weights(W)
    with pytest.raises(ValueError, match="row 0 is not convex"):
        unfixed_optimum(["1/3"] * 3, lam=2, loss=W)
    with pytest.raises(ValueError, match="not convex"):
        unfixed_optimum([0.25] * 3 + [0.25], eps=1.0, loss=np.array(
            [[0, 3, 4, 5], [1, 0, 1, 2], [2, 1, 0, 1], [3, 2, 1, 0]], dtype=float))


def test_convexity_alone_is_not_enough():
    # Why Algorithm 2 also requires concentrating rows: this W is row-wise convex,
    # its row 2 is not concentrating, and the best re-mapping of the geometric
    # mechanism (5/3) is worse than the LP optimum over U (4/3).
    lam, n = Fraction(2), 3
    W = exact_array([[0, 1, 2], [2, 0, 0], [0, 1, 2]])
    G = sigma(n, lam) * sigma_amounts(n, lam)[None, :]
    cost = W.T.dot(G)  # cost[g, m] of sending geometric column m to g
    remapped = sum(min(cost[:, m]) for m in range(n))
    z = exact_array(["1/3"] * 3)
    best = lp_optimum(z, lam=lam, loss=W, fixed=False, solver="exact").params["objective"]
    assert (remapped, best) == (Fraction(5, 3), Fraction(4, 3))
    with pytest.raises(ValueError, match="row 2 is not concentrating"):
        unfixed_optimum(z, lam=lam, loss=W)


# -- bad input ---------------------------------------------------------------------------------
def test_bad_input():
    with pytest.raises(ExactnessError):
        unfixed_optimum([0.5, 0.5], lam=2)
    with pytest.raises(ValueError, match="sum to 1"):
        unfixed_optimum(["1/2", "1/3"], lam=2)
    with pytest.raises(ValueError, match=">= 0"):
        unfixed_optimum([1.5, -0.5], eps=1.0)
    with pytest.raises(ValueError, match="eps"):
        unfixed_optimum([1.0], eps=-1.0)
    with pytest.raises(ValueError, match="unknown loss"):
        unfixed_optimum([0.5, 0.5], eps=1.0, loss="cubic")


def test_n_equal_one():
    assert unfixed_optimum(["1"], lam=2).matrix.tolist() == [[Fraction(1)]]
    assert unfixed_optimum([1.0], eps=1.0).T.tolist() == [[1.0]]
