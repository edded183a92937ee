"""Distribution privatizers (paper Section 3 and Appendix A; docs/postprocessing.md).

Statistical tests are seeded (secure=False) unless they test OpenDP's secure
samplers; each states its tolerance in standard errors (SE). A 5-SE band fails
with probability below 1e-6 per checked quantity under the normal approximation.
"""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
import pywt
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, stats
from scipy.optimize import isotonic_regression, minimize_scalar

from dpfix.release.privatizers import (
    POSTPROCESSORS,
    PRIVATIZERS,
    PrivatizedDistribution,
    analytic_gaussian_delta,
    analytic_gaussian_sigma,
    clip_renormalise,
    consistent_leaves,
    cyclic_difference,
    cyclic_gaussian,
    cyclic_laplace,
    discrete_gaussian_delta,
    discrete_gaussian_sigma,
    haar_weighted_coefficients,
    hierarchical,
    isotonic_cdf,
    isotonic_cdf_offset,
    laplace,
    privatize_distribution,
    privelet,
    privelet_sensitivity,
    project_simplex,
)
from dpfix.release.privatizers.hierarchical import tree_counts, tree_levels
from dpfix.release.privatizers.laplace_baselines import haar_inverse
from dpfix.release.privatizers.postprocess import cycle_offset

ETA = np.array([40, 25, 0, 12, 7, 3, 0, 1, 2])
SEEDED = {"secure": False}
floats = st.floats(-3, 3, allow_nan=False, allow_infinity=False)
vectors = st.lists(floats, min_size=1, max_size=12).map(np.array)


def _run(method, eta=ETA, eps=1.0, **kw):
    if method == "cyclic-gaussian":
        kw.setdefault("delta", 1e-6)
    return privatize_distribution(eta, eps, privatizer=method, **kw)


# ---------------------------------------------------------------- input checks

@pytest.mark.parametrize("eta, msg", [
    ([], "non-empty"), ([[1, 2]], "non-empty"), ([1, -1, 3], "non-negative"),
    ([1.5, 2], "integers"), ([0, 0], "positive"), (["a", 1], "integers"),
    ([True, False], "non-empty"), ([1, float("nan")], "integers"),
])
def test_bad_histograms_refused(eta, msg):
    with pytest.raises(ValueError, match=msg):
        cyclic_laplace(eta, 1.0, **SEEDED)


@pytest.mark.parametrize("eps", [0, -1.0, float("nan"), float("inf"), "1", True, None])
@pytest.mark.parametrize("method", ["cyclic-laplace", "laplace", "privelet", "hierarchical"])
def test_bad_epsilon_refused(method, eps):
    with pytest.raises(ValueError, match="^eps"):
        _run(method, eps=eps, **SEEDED)


def test_integral_floats_accepted_and_counts_converted():
    out = cyclic_laplace(np.array([3.0, 2.0]), 1.0, seed=0, **SEEDED)
    assert out.N == 5


def test_bad_options_refused():
    with pytest.raises(ValueError, match="seeded"):
        cyclic_laplace(ETA, 1.0, seed=3)  # secure by default: a seed is refused
    with pytest.raises(ValueError, match="seed: expected an int"):
        cyclic_laplace(ETA, 1.0, seed="seed", secure=False)
    with pytest.raises(ValueError, match="cyclic-laplace, cyclic-gaussian, laplace"):
        privatize_distribution(ETA, 1.0, privatizer="geometric")
    with pytest.raises(ValueError, match="postprocess"):
        cyclic_laplace(ETA, 1.0, postprocess="round", **SEEDED)
    with pytest.raises(ValueError, match="not both"):
        cyclic_gaussian(ETA, 1.0, 1e-6, rho=0.5, **SEEDED)
    with pytest.raises(ValueError, match="both eps and delta"):
        cyclic_gaussian(ETA, 1.0, **SEEDED)
    with pytest.raises(ValueError, match="delta"):
        cyclic_gaussian(ETA, 1.0, 1.5, **SEEDED)
    with pytest.raises(ValueError, match="branching"):
        hierarchical(ETA, 1.0, branching=1, **SEEDED)
    with pytest.raises(ValueError, match="required"):
        privatize_distribution(ETA, None, privatizer="laplace", **SEEDED)


# ------------------------------------------------------------- result object

@pytest.mark.parametrize("method", list(PRIVATIZERS))
def test_every_method_returns_a_distribution(method):
    out = _run(method, seed=5, **SEEDED)
    assert isinstance(out, PrivatizedDistribution) and out.privatizer == method
    assert out.z.shape == out.raw.shape == ETA.shape and out.N == ETA.sum()
    assert (out.z >= 0).all() and abs(out.z.sum() - 1) < 1e-12
    np.testing.assert_array_equal(out.z, POSTPROCESSORS[out.postprocess](out.raw / out.N))
    assert not out.z.flags.writeable and not out.raw.flags.writeable
    with pytest.raises(AttributeError):
        out.z = out.raw  # frozen


@pytest.mark.parametrize("method", list(PRIVATIZERS))
def test_seeded_runs_reproduce(method):
    a, b, c = (_run(method, seed=s, **SEEDED) for s in (11, 11, 12))
    np.testing.assert_array_equal(a.raw, b.raw)
    assert not np.array_equal(a.raw, c.raw)


@pytest.mark.parametrize("method", list(PRIVATIZERS))
def test_single_count_value(method):
    out = _run(method, eta=[7], seed=0, **SEEDED)
    assert out.z.tolist() == [1.0]


def test_callable_postprocess_is_recorded_and_checked():
    out = cyclic_laplace(ETA, 1.0, seed=0, postprocess=project_simplex, **SEEDED)
    assert out.postprocess == "project_simplex"
    with pytest.raises(RuntimeError, match="simplex"):
        cyclic_laplace(ETA, 1.0, seed=0, postprocess=lambda v: v, **SEEDED)


# ------------------------------------------------------------- cyclic mechanisms

def test_cyclic_difference_sums_to_zero_and_matches_definition():
    X = np.array([1.5, -2.0, 4.0, 0.25])
    assert cyclic_difference(X).tolist() == [3.5, -6.0, 3.75, -1.25]
    assert cyclic_difference(X).sum() == 0


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_cyclic_sum_is_N(eps):
    for seed in range(20):
        out = cyclic_laplace(ETA, eps, seed=seed, **SEEDED)
        assert abs(out.raw.sum() - ETA.sum()) <= 1e-9 * ETA.sum() * len(ETA) / eps
    out = cyclic_laplace(ETA, eps)  # secure: integer noise, exact sum
    assert out.raw.sum() == ETA.sum() and (out.raw == np.round(out.raw)).all()


def test_cyclic_laplace_moments_seeded():
    # V_i - eta_i = X_i - X_{i+1}: mean 0, variance 2 Var(X) = 4/eps^2,
    # covariance of neighbours -Var(X) = -2/eps^2 (the cycle wraps).
    eps, R = 0.5, 8000
    rng = np.random.default_rng(2024)
    V = np.array([cyclic_laplace(ETA, eps, seed=rng, **SEEDED).raw for _ in range(R)]) - ETA
    var = 4 / eps**2
    assert np.all(np.abs(V.mean(axis=0)) <= 5 * math.sqrt(var / R))
    # Var of the sample variance: (mu4 - sigma^4)/R with mu4 = 72 b^4, sigma^2 = 4 b^2
    b = 1 / eps
    se_var = math.sqrt((72 - 16) * b**4 / R)
    assert np.all(np.abs(V.var(axis=0) - var) <= 5 * se_var)
    cov = np.mean(V * np.roll(V, -1, axis=1), axis=0)  # Cov(V_i, V_{i+1})
    se_cov = math.sqrt(np.var(V * np.roll(V, -1, axis=1), axis=0).max() / R)
    assert np.all(np.abs(cov + 2 / eps**2) <= 5 * se_cov)


def test_cyclic_laplace_secure_is_discrete_laplace():
    # one secure run on n = 20000 ones gives 20000 identically distributed
    # V_i - 1 = X_i - X_{i+1}; X discrete Laplace, Var X = 2 r / (1 - r)^2, r = e^-eps
    eps, n = 0.7, 20000
    out = cyclic_laplace(np.ones(n, dtype=int), eps)
    assert out.secure and out.notion == "pure-DP" and out.noise["opendp_loss"] <= eps * (1 + 1e-9)
    W = out.raw - 1
    assert (W == np.round(W)).all() and W.sum() == 0
    r = math.exp(-eps)
    var = 2 * 2 * r / (1 - r) ** 2
    # neighbouring terms are correlated (-1/2); the SE below allows for it (factor 2)
    se = 2 * math.sqrt(2 * var**2 / n * 3)
    assert abs(W.var() - var) <= 6 * se
    assert abs(W.mean()) <= 6 * math.sqrt(var / n) * 2


def test_cyclic_gaussian_zcdp_secure_and_seeded():
    out = cyclic_gaussian(ETA, rho=0.125)
    assert out.notion == "zCDP" and out.noise["sigma"] == 2.0
    assert abs(out.noise["opendp_zcdp_loss"] - 0.125) <= 1e-9
    assert out.raw.sum() == ETA.sum() and (out.raw == np.round(out.raw)).all()
    R, sigma = 4000, 2.0
    rng = np.random.default_rng(8)
    V = np.array([cyclic_gaussian(ETA, rho=0.125, seed=rng, **SEEDED).raw for _ in range(R)])
    var = 2 * sigma**2
    assert np.all(np.abs(V.mean(axis=0) - ETA) <= 5 * math.sqrt(var / R))
    assert np.all(np.abs(V.var(axis=0) - var) <= 5 * math.sqrt(2 * var**2 / R))


def test_cyclic_gaussian_approx_dp_calibration_by_path():
    secure = cyclic_gaussian(ETA, 0.5, 1e-6)
    seeded = cyclic_gaussian(ETA, 0.5, 1e-6, seed=0, **SEEDED)
    assert secure.noise["sigma"] == discrete_gaussian_sigma(0.5, 1e-6)
    assert seeded.noise["sigma"] == analytic_gaussian_sigma(0.5, 1e-6)
    assert secure.budget == "eps=0.5, delta=1e-06 (approx-DP)"


# --------------------------------------------------------------- unbiasedness

@pytest.mark.parametrize("method", ["laplace", "privelet", "hierarchical", "cyclic-gaussian"])
def test_raw_is_unbiased(method):
    # raw is a linear function of zero-mean noise; 5 SE of the sample mean
    R = 1500
    rng = np.random.default_rng(99)
    raws = np.array([_run(method, eps=1.0, seed=rng, **SEEDED).raw for _ in range(R)])
    se = raws.std(axis=0, ddof=1) / math.sqrt(R)
    assert np.all(np.abs(raws.mean(axis=0) - ETA) <= 5 * se)


def test_laplace_variance():
    R, eps = 6000, 0.5
    rng = np.random.default_rng(5)
    raws = np.array([laplace(ETA, eps, seed=rng, **SEEDED).raw for _ in range(R)])
    var = 2 * (2 / eps) ** 2
    assert np.all(np.abs(raws.var(axis=0) - var) <= 5 * math.sqrt((24 - 4) * (2 / eps) ** 4 / R))


@pytest.mark.parametrize("method", ["laplace", "hierarchical", "privelet"])
def test_secure_baselines_report_opendp_loss(method):
    out = _run(method, eps=0.8)
    assert out.secure and out.noise["opendp_loss"] <= 0.8 * (1 + 1e-9)
    assert out.noise["distribution"] == "discrete Laplace"  # integer data, integer noise


# -------------------------------------------------------------- post-processing

def _projection_violation(v, w, vertices):
    """max_j <v - w, p_j - w> over the vertices p_j of a polytope; <= 0 iff w is
    the Euclidean projection of v onto their convex hull (w in the hull)."""
    return max(float(np.dot(v - w, p - w)) for p in vertices)


@given(vectors)
def test_project_simplex_is_the_projection(v):
    w = project_simplex(v)
    assert (w >= 0).all() and abs(w.sum() - 1) <= 1e-12
    assert _projection_violation(v, w, np.eye(len(v))) <= 1e-9
    # KKT: v - w is constant on the support of w and no larger off it
    gap = v - w
    theta = gap[w > 0]
    assert np.ptp(theta) <= 1e-9 and (gap[w == 0] <= theta.max() + 1e-9).all()


@given(vectors)
def test_isotonic_cdf_projects_the_cdf(v):
    z = isotonic_cdf(v)
    assert (z >= 0).all() and abs(z.sum() - 1) <= 1e-12
    n = len(v)
    if n > 1:
        F, G = np.cumsum(v + (1 - v.sum()) / n)[:-1], np.cumsum(z)[:-1]
        # the CDFs over 0..n-2 are the convex hull of the point masses' CDFs
        steps = [(np.arange(n - 1) >= j).astype(float) for j in range(n)]
        assert _projection_violation(F, G, steps) <= 1e-9


def _offset_objective(F, c):
    """``c^2 + ||F - c - G||^2`` at the best CDF ``G`` for the offset ``c`` (by the
    clipped isotonic regression of ``F - c``, computed afresh)."""
    G = np.clip(isotonic_regression(np.asarray(F) - c).x, 0.0, 1.0)
    return c * c + float(np.sum((np.asarray(F) - c - G) ** 2))


@given(vectors)
def test_cycle_offset_minimises_the_joint_least_squares(v):
    """The offset of least joint objective: no offset on a fine grid and no bounded Brent
    search does better (the objective is convex in ``c``)."""
    n = len(v)
    if n < 2:
        return
    F = np.cumsum(v + (1 - v.sum()) / n)[:-1]
    c = cycle_offset(F)
    best = _offset_objective(F, c)
    span = np.abs(F).max() + 2.0
    for t in np.linspace(-span, span, 401):
        assert best <= _offset_objective(F, t) + 1e-9
    brent = minimize_scalar(lambda t: _offset_objective(F, t), bounds=(-span, span),
                            method="bounded", options={"xatol": 1e-12})
    assert best <= brent.fun + 1e-9
    # the stationarity condition c = sum of the clipped excesses of H - c
    H = isotonic_regression(F).x - c
    assert abs(c - (np.minimum(H, 0).sum() + np.maximum(H - 1, 0).sum())) <= 1e-9


@given(vectors)
def test_isotonic_cdf_offset_is_the_fit_at_its_offset(v):
    z = isotonic_cdf_offset(v)
    assert (z >= 0).all() and abs(z.sum() - 1) <= 1e-12
    n = len(v)
    if n > 1:
        F = np.cumsum(v + (1 - v.sum()) / n)[:-1]
        G = np.clip(isotonic_regression(F - cycle_offset(F)).x, 0, 1)
        np.testing.assert_allclose(np.cumsum(z)[:-1], G, atol=1e-12)
        if (isotonic_regression(F).x >= 0).all() and (isotonic_regression(F).x <= 1).all():
            np.testing.assert_allclose(z, isotonic_cdf(v), atol=1e-12)


def test_isotonic_cdf_offset_known_answers():
    # partial sums 0.6, 1.01, 1.03, 1.05, 1.07, 1.09: at c in (0.05, 0.07) the values 1.07
    # and 1.09 stay above 1 + c, so g(c) = c - (1.07 + 1.09 - 2 - 2c) = 3c - 0.16: c = 4/75
    v = [0.6, 0.41, 0.02, 0.02, 0.02, 0.02, -0.09]
    F = np.cumsum(v)[:-1]
    assert cycle_offset(F) == pytest.approx(4 / 75, abs=1e-15)
    c = 4 / 75
    expected = np.diff([0, 0.6 - c, 1.01 - c, 1.03 - c, 1.05 - c, 1, 1, 1])
    np.testing.assert_allclose(isotonic_cdf_offset(v), expected, atol=1e-15)
    assert isotonic_cdf(v).round(12).tolist() == [0.6, 0.4, 0, 0, 0, 0, 0]  # the tail lost
    # everything below 0 by 0.1 on three values: g(c) = c + 3 (0.1 + c) -> c = -0.075
    assert cycle_offset([-0.1, -0.1, -0.1, 0.5]) == pytest.approx(-0.075, abs=1e-15)
    assert cycle_offset([0.2, 0.5, 0.9]) == 0.0 and isotonic_cdf_offset([1.0]).tolist() == [1.0]


def test_isotonic_cdf_offset_keeps_a_sparse_tail_of_the_cyclic_release():
    """A cyclic release whose closing noise ``X_0`` exceeds the tail's rows: the isotonic fit
    reaches 1 before the tail and drops it; the offset recovers ``X_0`` and the tail but the
    last plateau's deficit (the one row at 2000, which no CDF fit can tell from noise)."""
    N, n = 1000, 2001
    eta = np.zeros(n, dtype=np.int64)
    eta[0], eta[5], eta[1000], eta[2000] = 900, 90, 9, 1
    rng = np.random.default_rng(3)
    X = rng.laplace(0, 1.0, n)
    X[0] = 12.0                                    # the cycle's closing term
    V = eta + X - np.roll(X, -1)
    assert N * isotonic_cdf(V / N)[500:].sum() < 0.5
    z = isotonic_cdf_offset(V / N)
    assert N * z[500:].sum() == pytest.approx(9, abs=1.5)
    assert N * cycle_offset(np.cumsum(V / N)[:-1]) == pytest.approx(11, abs=1.5)
