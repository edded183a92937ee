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


@given(vectors)
def test_clip_renormalise(v):
    z = clip_renormalise(v)
    if (v > 0).any():
        np.testing.assert_allclose(z, np.maximum(v, 0) / np.maximum(v, 0).sum(), atol=1e-15)
    else:
        np.testing.assert_array_equal(z, project_simplex(v))


def test_postprocess_known_answers():
    assert project_simplex([2.0, 0.0]).tolist() == [1.0, 0.0]
    np.testing.assert_allclose(project_simplex([0.2, 0.2, 0.2]), [1 / 3] * 3, atol=1e-15)
    # total already 1; cumulative sums 0.6, 0.4, 1.1 -> isotonic 0.5, 0.5, 1.1
    # -> clipped 0.5, 0.5, 1
    assert isotonic_cdf([0.6, -0.2, 0.7, -0.1]).round(12).tolist() == [0.5, 0, 0.5, 0]
    # total 0.5 -> +0.125 each: 0.375, -0.125, 0.625, 0.125; sums 0.375, 0.25, 0.875
    # -> isotonic 0.3125, 0.3125, 0.875
    assert isotonic_cdf([0.25, -0.25, 0.5, 0]).round(12).tolist() == [0.3125, 0, 0.5625, 0.125]
    with pytest.raises(ValueError, match="finite"):
        project_simplex([0.5, float("nan")])


# ------------------------------------------------------- Gaussian calibration

@given(st.floats(0.05, 5), st.floats(1e-9, 0.3))
def test_analytic_gaussian_recovers_delta(eps, delta):
    sigma = analytic_gaussian_sigma(eps, delta)
    got = analytic_gaussian_delta(sigma, eps)
    assert got <= delta and got >= delta * (1 - 1e-6)
    assert analytic_gaussian_delta(sigma * (1 - 1e-8), eps) > delta


@pytest.mark.parametrize("sigma, eps", [(1.0, 1.0), (3.0, 0.5), (0.7, 2.0), (10.0, 0.05)])
def test_analytic_delta_by_integration(sigma, eps):
    # independent: delta = int max(0, p(x) - e^eps q(x)) dx, p = N(0, s^2), q = N(1, s^2);
    # the integrand is positive for x < 1/2 - eps sigma^2
    cut = 0.5 - eps * sigma**2
    f = lambda x: stats.norm.pdf(x, 0, sigma) - math.exp(eps) * stats.norm.pdf(x, 1, sigma)  # noqa: E731
    direct, _ = integrate.quad(f, -np.inf, cut, epsabs=1e-14, epsrel=1e-10)
    assert analytic_gaussian_delta(sigma, eps) == pytest.approx(direct, rel=1e-7, abs=1e-14)


@pytest.mark.parametrize("sigma, eps", [(1.0, 1.0), (3.74, 1.0), (0.5, 2.0), (12.0, 0.1)])
def test_discrete_delta_by_hockey_stick_sum(sigma, eps):
    # independent: delta = sum_y max(0, P(Y = y) - e^eps P(Y = y - 1))
    y = np.arange(-2000, 2001)
    w = np.exp(-y.astype(float) ** 2 / (2 * sigma**2))
    p, q = w / w.sum(), np.exp(-(y - 1.0) ** 2 / (2 * sigma**2)) / w.sum()
    direct = np.maximum(p - math.exp(eps) * q, 0).sum()
    assert discrete_gaussian_delta(sigma, eps) == pytest.approx(direct, rel=1e-9)


@given(st.floats(0.1, 3), st.floats(1e-8, 0.1))
def test_discrete_gaussian_recovers_delta(eps, delta):
    sigma = discrete_gaussian_sigma(eps, delta)
    assert discrete_gaussian_delta(sigma, eps) <= delta
    assert discrete_gaussian_delta(sigma * (1 - 1e-6), eps) > delta


def test_calibration_refuses_bad_input():
    with pytest.raises(ValueError, match="delta"):
        analytic_gaussian_sigma(1.0, 0.0)
    with pytest.raises(ValueError, match="sensitivity"):
        analytic_gaussian_delta(1.0, 1.0, sensitivity=0)
    with pytest.raises(ValueError, match="sigma"):
        discrete_gaussian_delta(0.0, 1.0)
    with pytest.raises(ValueError, match="too large"):
        discrete_gaussian_sigma(1e-12, 1e-6)


def _hockey_stick_dg_delta(sigma, eps):
    # independent: sum_y max(0, P(Y = y) - e^eps P(Y = y - 1)), Y ~ N_Z(0, sigma^2)
    y = np.arange(-int(40 * sigma) - 3, int(40 * sigma) + 4)
    w = np.exp(-y.astype(float) ** 2 / (2 * sigma**2))
    p = w / w.sum()
    return float(np.maximum(p[1:] - math.exp(eps) * p[:-1], 0).sum())


@pytest.mark.parametrize("eps, delta", [(3.0, 0.01), (3.0, 1e-4), (1.0, 1e-3), (5.0, 1e-5),
                                        (0.5, 1e-6)])
def test_discrete_gaussian_sigma_is_smallest_on_a_grid(eps, delta):
    # delta(sigma) is not monotone, so a bisection can stop at a too-large sigma
    # (eps=3, delta=0.01: 0.866 instead of 0.7065); a fine grid finds the true smallest
    s = discrete_gaussian_sigma(eps, delta)
    grid = np.linspace(s / 20, 2 * s, 4000)
    ok = [sg for sg in grid if _hockey_stick_dg_delta(sg, eps) <= delta]
    first, step = ok[0], grid[1] - grid[0]
    assert first - step < s <= first
    assert _hockey_stick_dg_delta(s, eps) <= delta * (1 + 1e-9)
    # and the secure cyclic Gaussian privatizer draws with exactly this sigma
    assert cyclic_gaussian(ETA, eps, delta).noise["sigma"] == s


def test_discrete_gaussian_sigma_known_value():
    # eps = 3, delta = 0.01: the smallest sigma lies in (sigma_0, sigma_1] =
    # (sqrt(1/6), sqrt(1/2)], where delta(sigma) = P[Y >= 2] - (e^3 - 1) P[Y >= 3];
    # at sigma_1 = 0.7071 it is already below 0.01, just under it (0.7065) it is not
    s = discrete_gaussian_sigma(3.0, 0.01)
    assert s == pytest.approx(0.7065, abs=5e-5)
    assert s < math.sqrt(0.5)


# ------------------------------------------------------------------- Privelet

def _lca_height(i, m):
    t = 1
    while i // 2**t != (i + 1) // 2**t:
        t += 1
    return t


@pytest.mark.parametrize("L", range(1, 7))
def test_privelet_sensitivity_of_every_move(L):
    m = 2**L
    rng = np.random.default_rng(L)
    x = rng.integers(0, 9, m)
    base, W = haar_weighted_coefficients(x)
    # the exact integer transform agrees with PyWavelets' orthonormal Haar: d = W(c) c / sqrt(s)
    coeffs = pywt.wavedec(x.astype(float), "haar", mode="periodization", level=L)
    assert coeffs[0][0] == pytest.approx(base * math.sqrt(m))
    for k, (w, d) in enumerate(zip(W, coeffs[1:], strict=True)):
        assert w.dtype.kind == "i"
        np.testing.assert_allclose(w / math.sqrt(2 ** (L - k)), d, atol=1e-9)
    np.testing.assert_allclose(haar_inverse(float(base), [w.astype(float) for w in W]), x,
                               atol=1e-9)
    worst = 0.0
    for i in range(m - 1):
        y = x.copy()
        y[i] -= 1
        y[i + 1] += 1
        base2, W2 = haar_weighted_coefficients(y)
        change = sum(np.abs(a - b).sum() for a, b in zip(W, W2, strict=True))
        assert base2 == base and change == pytest.approx(2 * _lca_height(i, m), abs=1e-9)
        worst = max(worst, change)
    assert worst == pytest.approx(privelet_sensitivity(m))
    # a one-unit change of one cell: Privelet's own 1 + L with the base coefficient
    y = x.copy()
    y[0] += 1
    base2, W2 = haar_weighted_coefficients(y)
    change = m * abs(base2 - base) + sum(np.abs(a - b).sum() for a, b in zip(W, W2, strict=True))
    assert change == pytest.approx(1 + L)


def test_privelet_noise_scale_and_padding():
    out = privelet(ETA, 0.5, seed=0, **SEEDED)  # n = 9 -> m = 16, L = 4
    assert out.noise["padded_length"] == 16 and out.noise["lam"] == 2 * 4 / 0.5
    zero_noise = privelet([4, 2, 1], 1e12, seed=0, **SEEDED)  # huge eps: almost no noise
    np.testing.assert_allclose(zero_noise.raw, [4, 2, 1], atol=1e-9)


# --------------------------------------------------------------- hierarchical

def _constrained_lstsq(noisy, root, b):
    """min ||A x - y|| subject to sum x = root, by the KKT system (independent of Hay)."""
    h = len(noisy)
    m = b**h
    rows = []
    for level in range(h):
        size = b ** (h - 1 - level)
        for node in range(b ** (level + 1)):
            row = np.zeros(m)
            row[node * size:(node + 1) * size] = 1
            rows.append(row)
    A, y = np.array(rows), np.concatenate(noisy)
    K = np.block([[A.T @ A, np.ones((m, 1))], [np.ones((1, m)), np.zeros((1, 1))]])
    return np.linalg.solve(K, np.concatenate([A.T @ y, [root]]))[:m]


@pytest.mark.parametrize("b, h", [(2, 1), (2, 3), (3, 2), (4, 3), (16, 2)])
def test_consistent_leaves_is_constrained_least_squares(b, h):
    rng = np.random.default_rng(b * 10 + h)
    leaves = rng.integers(0, 20, b**h)
    noisy = [c + rng.normal(0, 3, len(c)) for c in tree_counts(leaves, b)]
    got = consistent_leaves(noisy, float(leaves.sum()), b)
    np.testing.assert_allclose(got, _constrained_lstsq(noisy, leaves.sum(), b), atol=1e-8)
    assert got.sum() == pytest.approx(leaves.sum())


@pytest.mark.parametrize("b, n", [(2, 8), (3, 20), (16, 51), (16, 17)])
def test_hierarchical_sensitivity_of_every_move(b, n):
    h = tree_levels(n, b)
    leaves = np.zeros(b**h, dtype=int)
    leaves[:n] = 5
    base = tree_counts(leaves, b)
    worst = 0
    for i in range(n - 1):
        moved = leaves.copy()
        moved[i] -= 1
        moved[i + 1] += 1
        per_level = [int(np.abs(a - c).sum()) for a, c in zip(base, tree_counts(moved, b),
                                                              strict=True)]
        assert all(d in (0, 2) for d in per_level) and per_level[-1] == 2
        worst = max(worst, sum(per_level))
    assert worst == 2 * h
    assert hierarchical(leaves[:n], 1.0, b, seed=0, **SEEDED).noise["scale"] == 2 * h


# ------------------------------------------------------------------- Theorem 1

def test_theorem1_check_quick():
    path = Path(__file__).resolve().parents[1] / "proofs_checks" / "check_theorem1_cyclic.py"
    spec = importlib.util.spec_from_file_location("check_theorem1_cyclic", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.RESULT == "Theorem 1"
    assert module.run("quick") > 1000


def test_theorem1_absorption_through_the_mechanism():
    # with the latent noise fixed, the neighbour's release equals ours when
    # X_{i+1} is lowered by one: V(eta', X - e_{i+1}) = V(eta, X)
    rng = np.random.default_rng(0)
    X = rng.laplace(0, 1, len(ETA))
    for i in range(len(ETA) - 1):
        if ETA[i] == 0:
            continue
        eta2, X2 = ETA.copy(), X.copy()
        eta2[i] -= 1
        eta2[i + 1] += 1
        X2[i + 1] -= 1
        np.testing.assert_allclose(eta2 + cyclic_difference(X2), ETA + cyclic_difference(X),
                                   atol=1e-12)


@pytest.mark.parametrize("n", [2, 3, 7, 20])
def test_cyclic_covariance_and_partial_sums_exactly(n):
    # V - eta = D X with D = I - (cyclic shift): Cov V = Var(X) D D^T, and the
    # partial sums of V see prefix(k) D = e_0 - e_{k+1}: two noise terms only
    D = np.array([cyclic_difference(np.eye(n, dtype=int)[:, j]) for j in range(n)]).T
    expected = 2 * np.eye(n, dtype=int) - np.roll(np.eye(n, dtype=int), 1, axis=1) \
        - np.roll(np.eye(n, dtype=int), -1, axis=1)
    if n == 2:
        expected = np.array([[2, -2], [-2, 2]])
    np.testing.assert_array_equal(D @ D.T, expected)
    for k in range(n - 1):
        prefix = (np.arange(n) <= k).astype(int)
        np.testing.assert_array_equal(prefix @ D, np.eye(n, dtype=int)[0]
                                      - np.eye(n, dtype=int)[k + 1])


@pytest.mark.parametrize("method", ["cyclic-laplace", "laplace", "privelet", "hierarchical"])
def test_a_seed_is_an_int_a_seed_sequence_a_generator_or_a_seeded_source(method):
    """``seed=`` takes every form of a seed the library takes, each the same stream as
    the int it comes from (:func:`dpfix.sampling.source.numpy_generator`)."""
    from dpfix.sampling import SecureSource, SeededSource

    want = _run(method, seed=7, **SEEDED).raw
    for seed in (np.random.SeedSequence(7), np.random.default_rng(7), SeededSource(7)):
        assert np.array_equal(_run(method, seed=seed, **SEEDED).raw, want)
    with pytest.raises(ValueError, match="secure source draws no numpy floats"):
        _run(method, seed=SecureSource(), **SEEDED)


def test_rng_is_the_deprecated_name_of_seed():
    with pytest.warns(DeprecationWarning, match="rng= is deprecated; use seed="):
        old = cyclic_laplace(ETA, 1.0, rng=3, **SEEDED)
    assert np.array_equal(old.raw, cyclic_laplace(ETA, 1.0, seed=3, **SEEDED).raw)
    with pytest.raises(TypeError, match="got both seed= and its deprecated name rng="):
        cyclic_laplace(ETA, 1.0, rng=3, seed=3, **SEEDED)


@pytest.mark.parametrize("name, expected", [
    ("cyclic-laplace", "isotonic-cdf-offset"), ("cyclic-gaussian", "isotonic-cdf-offset"),
    ("laplace", "isotonic-cdf"), ("privelet", "isotonic-cdf"), ("hierarchical", "isotonic-cdf")])
def test_each_privatizer_has_its_own_default_post_processing(name, expected):
    """The offset fit where the partial sums share the cycle's ``X_0``, the plain isotonic
    fit where they do not (docs/postprocessing.md section 3)."""
    extra = {"delta": 1e-3} if name == "cyclic-gaussian" else {}
    out = privatize_distribution(ETA, 1.0, privatizer=name, seed=1, secure=False, **extra)
    assert out.postprocess == expected
