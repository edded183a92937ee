"""Deconvolution of geometric-noised counts (dpfix.release.privatizers.deconvolve).

Known answers come from independent computations: ``G`` built entry by entry
(in Fractions for small ``n``), and generic scipy solvers (SLSQP) on the
dense ``G`` for the maximum-likelihood, least-squares and hybrid problems.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from dpfix.release.privatizers.deconvolve import (
    _G,
    ESTIMATORS,
    Deconvolution,
    _em_map,
    convolve,
    correlate,
    deconvolve,
    log_likelihood,
    stage1_log_likelihood,
)
from dpfix.theory.metrics import wasserstein1


def dense_G(n: int, lam) -> np.ndarray:
    """``G[i, m] = P(clamp(i + k) = m)`` summed from the two-sided geometric law itself."""
    exact = isinstance(lam, Fraction)
    rho = 1 / lam if exact else 1.0 / lam
    one = Fraction(1) if exact else 1.0
    norm = (1 - rho) / (1 + rho)  # P(k) = norm * rho^|k|
    G = np.empty((n, n), dtype=object if exact else float)
    for i in range(n):
        for m in range(n):
            if 0 < m < n - 1:
                G[i, m] = norm * rho ** abs(i - m)
            elif m == 0:  # P(i + k <= 0) = sum_{k <= -i} norm rho^|k|
                G[i, m] = norm * rho ** i / (1 - rho) if i > 0 else one - norm * rho / (1 - rho)
            else:
                j = n - 1 - i
                G[i, m] = norm * rho ** j / (1 - rho) if j > 0 else one - norm * rho / (1 - rho)
    if n == 1:
        G[0, 0] = one
    return G


def draw(z: np.ndarray, eps: float, N: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """True histogram ``eta`` and the histogram ``h`` of ``y = clamp(x + k)``."""
    n = len(z)
    eta = rng.multinomial(N, z)
    x = np.repeat(np.arange(n), eta)
    p = -np.expm1(-eps)
    k = rng.geometric(p, N) - rng.geometric(p, N)
    return eta, np.bincount(np.clip(x + k, 0, n - 1), minlength=n).astype(float)


def slsqp_ml(h, lam, V=None, eps_1=None) -> np.ndarray:
    """Maximum likelihood (optionally hybrid) by SLSQP on the dense ``G`` and ``(z, c, t)``."""
    n, N = len(h), h.sum()
    G = dense_G(n, lam)
    Cn = np.concatenate([[0.0], np.cumsum(V)[:-1]]) if V is not None else np.zeros(n)
    L = np.tril(np.ones((n, n)), -1)
    w = 0.0 if V is None else eps_1

    def f(x):
        q = x[:n] @ G
        return -(h * np.log(np.maximum(q, 1e-300))).sum() / N + w * x[n + 1:].sum() / N

    def u(x):
        return Cn - N * L @ x[:n] - x[n]

    cons = [{"type": "eq", "fun": lambda x: x[:n].sum() - 1},
            {"type": "ineq", "fun": lambda x: x[n + 1:] - u(x)},
            {"type": "ineq", "fun": lambda x: x[n + 1:] + u(x)}]
    z0 = (h / N + 1 / n) / 2
    S = Cn - N * L @ z0
    x0 = np.concatenate([z0, [np.median(S)], np.abs(S - np.median(S)) + 1])
    r = minimize(f, x0, method="SLSQP", constraints=cons,
                 bounds=[(1e-12, 1)] * n + [(None, None)] * (n + 1),
                 options={"maxiter": 3000, "ftol": 1e-15})
    return r.x[:n] / r.x[:n].sum()


# ----------------------------------------------------------------------------- G

@pytest.mark.parametrize("n", [1, 2, 3, 6])
@pytest.mark.parametrize("lam", [Fraction(2), Fraction(7, 5), Fraction(11)])
def test_convolve_correlate_match_exact_G(n, lam):
    G = dense_G(n, lam)
    assert all(sum(G[i]) == 1 for i in range(n))  # the reference itself is a channel
    rng = np.random.default_rng(n)
    z, w = rng.random(n), rng.random(n) - 0.5
    zG = np.array([float(sum(Fraction(z[i]) * G[i, m] for i in range(n))) for m in range(n)])
    Gw = np.array([float(sum(G[i, m] * Fraction(w[m]) for m in range(n))) for i in range(n)])
    np.testing.assert_allclose(convolve(z, lam), zG, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(correlate(w, lam), Gw, rtol=1e-12, atol=1e-15)


def test_convolve_float_lam_and_adjoint_large_n():
    n, lam = 2000, float(np.exp(0.3))
    rng = np.random.default_rng(0)
    z, w = rng.random(n), rng.random(n)
    assert np.dot(convolve(z, lam), w) == pytest.approx(np.dot(z, correlate(w, lam)), rel=1e-12)
    np.testing.assert_allclose(convolve(z, lam)[:40], (z @ dense_G(n, lam))[:40], rtol=1e-10)
    assert convolve(z, lam).sum() == pytest.approx(z.sum(), rel=1e-12)


def test_inverse_map_recovers_z():
    for rho in (0.0, 0.1, 0.9):
        g = _G(7, rho)
        z = np.random.default_rng(1).dirichlet(np.ones(7))
        np.testing.assert_allclose(g.inverse_map() @ g.conv(z), z, atol=1e-12)


# ----------------------------------------------------------------------------- properties

@settings(max_examples=25, deadline=None)
@given(h=st.lists(st.integers(0, 50), min_size=1, max_size=12).filter(lambda v: sum(v) > 0),
       eps=st.floats(0.1, 5.0), method=st.sampled_from(ESTIMATORS))
def test_output_in_simplex(h, eps, method):
    out = deconvolve(h, float(np.exp(eps)), estimator=method)
    assert isinstance(out, Deconvolution) and out.estimator == method
    assert (out.z >= 0).all() and out.z.sum() == pytest.approx(1.0, abs=1e-12)
    assert len(out.z) == len(h) and np.isfinite(out.objective)


@settings(max_examples=20, deadline=None)
@given(h=st.lists(st.integers(0, 40), min_size=2, max_size=15).filter(lambda v: sum(v) > 0),
       eps=st.floats(0.1, 3.0))
def test_em_log_likelihood_never_decreases(h, eps):
    hv = np.asarray(h, dtype=float)
    n = len(hv)
    g = _G(n, float(np.exp(-eps)))
    z = (hv / hv.sum() + 1 / n) / 2
    last = -np.inf
    for _ in range(60):
        z, L, gap = _em_map(hv, hv.sum(), g, z)  # L is the log-likelihood before the update
        assert L >= last - 1e-9 * abs(L) and gap >= -1e-9 * hv.sum()
        last = L


@settings(max_examples=15, deadline=None)
@given(h=st.lists(st.integers(0, 40), min_size=2, max_size=10).filter(lambda v: sum(v) > 0),
       eps=st.floats(0.2, 3.0))
def test_em_solvers_agree(h, eps):
    lam = float(np.exp(eps))
    ip = deconvolve(h, lam)
    sq = deconvolve(h, lam, solver="squarem", max_iter=200_000, tol=1e-12)
    assert ip.converged
    assert ip.objective >= sq.objective - 1e-7 * abs(sq.objective)


# ----------------------------------------------------------------------------- known answers

def test_no_noise_returns_empirical():
    h = np.array([5, 0, 3, 2, 10])
    for method in ("em", "least-squares"):
        out = deconvolve(h, 1e12, estimator=method)
        # the zero cell is a degenerate bound (its multiplier vanishes): reached ~ sqrt(gap)
        np.testing.assert_allclose(out.z, h / h.sum(), atol=1e-6)
    out = deconvolve(h, 1e12, solver="plain")
    np.testing.assert_allclose(out.z, h / h.sum(), atol=1e-9)
    assert out.converged


def test_expected_histogram_is_inverted_exactly():
    z = np.array([0.05, 0.1, 0.3, 0.0, 0.25, 0.2, 0.1])
    for lam in (Fraction(3, 2), Fraction(5)):
        h = 10_000 * convolve(z, lam)
        for method in ("em", "least-squares"):
            np.testing.assert_allclose(deconvolve(h, lam, estimator=method).z, z, atol=1e-5)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_em_matches_slsqp(seed):
    rng = np.random.default_rng(seed)
    n, lam = 9, float(np.exp(0.6))
    _, h = draw(rng.dirichlet(np.ones(n)), 0.6, 400, rng)
    out = deconvolve(h, lam)
    ref = slsqp_ml(h, lam)
    assert out.converged
    assert out.objective >= log_likelihood(ref, h, lam) - 1e-7 * abs(out.objective)
    np.testing.assert_allclose(out.z, ref, atol=2e-4)


@pytest.mark.parametrize("seed", [0, 1])
def test_least_squares_matches_slsqp(seed):
    rng = np.random.default_rng(seed)
    n, lam = 10, float(np.exp(0.4))
    _, h = draw(rng.dirichlet(np.ones(n)), 0.4, 300, rng)
    G, N = dense_G(n, lam), h.sum()
    r = minimize(lambda z: np.sum((N * z @ G - h) ** 2) / N**2, np.full(n, 1 / n),
                 jac=lambda z: 2 * G @ (N * z @ G - h) / N, method="SLSQP",
                 bounds=[(0, 1)] * n,
                 constraints=[{"type": "eq", "fun": lambda z: z.sum() - 1}],
                 options={"ftol": 1e-16, "maxiter": 1000})
    out = deconvolve(h, lam, estimator="least-squares")
    assert out.converged
    assert out.objective <= np.sum((N * r.x @ G - h) ** 2) * (1 + 1e-7) + 1e-9
    np.testing.assert_allclose(out.z, r.x, atol=1e-5)


def test_consistency_large_N():
    rng = np.random.default_rng(5)
    n = 31
    z = np.exp(-0.5 * ((np.arange(n) - 12) / 4.0) ** 2)
    z /= z.sum()
    _, h = draw(z, 1.0, 200_000, rng)
    for method in ESTIMATORS:
        assert wasserstein1(deconvolve(h, float(np.e), estimator=method).z, z) < 0.1


def test_em_smooth_default_and_zero_weight():
    rng = np.random.default_rng(3)
    _, h = draw(rng.dirichlet(np.ones(12)), 1.0, 500, rng)
    lam = float(np.e)
    rough = deconvolve(h, lam, estimator="em-smooth", smooth=0.0, tol=1e-12, max_iter=200_000)
    ml = deconvolve(h, lam)
    assert rough.objective == pytest.approx(ml.objective, rel=1e-7)  # w = 0: plain EM
    smooth = deconvolve(h, lam, estimator="em-smooth")
    assert smooth.converged and smooth.objective <= ml.objective
    assert np.abs(np.diff(smooth.z, 2)).sum() < np.abs(np.diff(ml.z, 2)).sum()


# ----------------------------------------------------------------------------- the hybrid

def test_stage1_log_likelihood_is_the_profile():
    rng = np.random.default_rng(0)
    V, z = rng.normal(10, 3, 6), rng.dirichlet(np.ones(6))
    r = V - V.sum() * z
    S = np.concatenate([[0.0], np.cumsum(r)[:-1]])
    cs = np.linspace(S.min() - 1, S.max() + 1, 20001)
    brute = -0.7 * np.abs(S[None, :] - cs[:, None]).sum(axis=1).min()
    assert stage1_log_likelihood(z, V, 0.7) == pytest.approx(brute, abs=1e-3)


@pytest.mark.parametrize("eps_1", [0.05, 0.5, 5.0])
def test_hybrid_matches_slsqp(eps_1):
    rng = np.random.default_rng(int(eps_1 * 100))
    n, lam = 8, float(np.exp(0.7))
    eta, h = draw(rng.dirichlet(np.ones(n)), 0.7, 300, rng)
    X = rng.laplace(0, 1 / eps_1, n)
    V = eta + X - np.roll(X, -1)
    out = deconvolve(h, lam, stage1=(V, eps_1))
    ref = slsqp_ml(h, lam, V, eps_1)

    def total(z):
        return log_likelihood(z, h, lam) + stage1_log_likelihood(z, V, eps_1)

    assert out.converged and out.objective == pytest.approx(total(out.z), rel=1e-12)
    assert out.objective >= total(ref) - 1e-7 * abs(total(ref))
    np.testing.assert_allclose(out.z, ref, atol=1e-4)


def test_hybrid_limits():
    rng = np.random.default_rng(4)
    n = 20
    eta, h = draw(rng.dirichlet(3 * np.ones(n)), np.log(2), 2000, rng)
    eta = eta + 1  # every cell positive, so V >= 0 below
    h = h + 1
    V = eta + np.tile([1, -1], n // 2)
    big = deconvolve(h, 2.0, stage1=(V, 1e4))
    np.testing.assert_allclose(big.z, V / V.sum(), atol=1e-9)
    small = deconvolve(h, 2.0, stage1=(V, 1e-9))
    np.testing.assert_allclose(small.z, deconvolve(h, 2.0).z, atol=1e-6)
    assert big.converged and small.converged


def test_hybrid_speed_shape():
    rng = np.random.default_rng(8)
    n, eps = 81, 0.5
    eta, h = draw(rng.dirichlet(np.ones(n)), eps, 5000, rng)
    X = rng.laplace(0, 1 / 0.5, n)
    out = deconvolve(h, Fraction(33, 20), stage1=(eta + X - np.roll(X, -1), 0.5))
    assert out.converged and out.iterations < 40


# ----------------------------------------------------------------------------- input checks

@pytest.mark.parametrize("kwargs, match", [
    ({"h": [1, -1]}, "^h: "),
    ({"h": [0, 0]}, "^h: "),
    ({"h": [1, np.nan]}, "^h: "),
    ({"h": []}, "^h: "),
    ({"lam": 1}, "^lam: "),
    ({"lam": Fraction(1, 2)}, "^lam: "),
    ({"lam": "2"}, "^lam: "),
    ({"estimator": "mle"}, "^estimator: "),
    ({"stage1": ([1, 2], 1.0)}, "^V: "),
    ({"stage1": ([1, 2, 3], 0.0)}, "^eps_1: "),
    ({"stage1": ([1, 2, 3], 1.0), "estimator": "least-squares"}, "^stage1: "),
    ({"smooth": 0.7, "estimator": "em-smooth"}, "^smooth: "),
    ({"smooth": 0.2}, "^smooth: "),
    ({"max_iter": 0}, "^max_iter: "),
    ({"tol": -1.0}, "^tol: "),
    ({"z0": [1, 0]}, "^z0: "),
    ({"solver": "squarem", "estimator": "least-squares"}, "^solver: "),
])
def test_input_errors(kwargs, match):
    args = {"h": [3, 1, 2], "lam": Fraction(2)} | kwargs
    with pytest.raises(ValueError, match=match):
        deconvolve(args.pop("h"), args.pop("lam"), **args)


# --------------------------------------------------------------------------- certificates
def ml_certificate(z: np.ndarray, h: np.ndarray, G: np.ndarray) -> tuple[float, float]:
    """``(N (max_m (G r)_m - 1), L(z))`` from the dense ``G``, ``r = h / (N zG)``.

    The gradient of ``L(z) = sum_i h_i log (zG)_i`` is ``grad_m = sum_i G[m, i] h_i /
    (zG)_i``; ``L`` is concave and the simplex's vertices are the ``e_m``, so ``max L -
    L(z) <= max_m grad_m - z . grad`` (the Frank-Wolfe gap), and ``z . grad = N``.
    """
    q = z @ G
    pos = h > 0
    grad = G @ np.where(pos, h / np.where(pos, q, 1.0), 0.0)
    return float(grad.max() - z @ grad), float(np.sum(h[pos] * np.log(q[pos])))


CERT_CASES = [(0.3, 15, 1000, 1), (1.0, 15, 500, 2), (3.0, 9, 80, 3), (1.0, 31, 5000, 4)]


@pytest.mark.parametrize("solver", ["interior-point", "squarem", "plain"])
@pytest.mark.parametrize("tol", [1e-6, 1e-9])
@pytest.mark.parametrize("eps, n, N, seed", CERT_CASES)
def test_converged_implies_the_certified_bound(solver, tol, eps, n, N, seed):
    """``converged`` means ``N (max G r - 1) <= tol max(|L|, 1)``, recomputed on the dense ``G``."""
    rng = np.random.default_rng(seed)
    z = rng.dirichlet(np.ones(n))
    _, h = draw(z, eps, N, rng)
    lam = Fraction(np.exp(eps)).limit_denominator(10**6)
    out = deconvolve(h, lam, solver=solver, tol=tol, max_iter=20_000)
    gap, L = ml_certificate(out.z, h, dense_G(n, float(lam)))
    bound = tol * max(abs(L), 1.0)
    if solver != "plain":  # plain EM may need more than max_iter updates at small eps
        assert out.converged, out.message
    if out.converged:
        assert gap <= bound * (1 + 1e-9) + 1e-12
    else:  # it stopped on max_iter: the certificate must indeed fail there
        assert gap > bound * (1 - 1e-9) and out.iterations == 20_000
    assert out.objective == pytest.approx(L, rel=1e-12)


@pytest.mark.parametrize("solver", ["squarem", "plain"])
def test_not_converged_is_reported_when_the_bound_fails(solver):
    """Few EM updates at small eps: the certificate fails and ``converged`` says so."""
    rng = np.random.default_rng(7)
    n, eps = 25, 0.1
    _, h = draw(rng.dirichlet(np.ones(n)), eps, 3000, rng)
    lam = Fraction(np.exp(eps)).limit_denominator(10**6)
    out = deconvolve(h, lam, solver=solver, tol=1e-10, max_iter=20)
    gap, L = ml_certificate(out.z, h, dense_G(n, float(lam)))
    assert gap > 1e-10 * abs(L)
    assert not out.converged and out.iterations >= 20 and "max_iter" in out.message


@pytest.mark.parametrize("eps, n, N, seed", CERT_CASES)
def test_least_squares_optimum_is_certified(eps, n, N, seed):
    """The least-squares answer is stationary on the simplex: its Frank-Wolfe gap
    ``z . grad - min grad`` (``>= f(z) - min f``) is within the interior point's dual
    residual tolerance (1e-7) of the objective's scale."""
    rng = np.random.default_rng(seed)
    _, h = draw(rng.dirichlet(np.ones(n)), eps, N, rng)
    lam = Fraction(np.exp(eps)).limit_denominator(10**6)
    out = deconvolve(h, lam, estimator="least-squares")
    G = dense_G(n, float(lam))
    q = out.z @ G
    f = float(np.sum((N * q - h) ** 2))
    grad = 2 * N * (G @ (N * q - h))
    assert out.converged and out.objective == pytest.approx(f, rel=1e-9, abs=1e-9)
    assert float(out.z @ grad - grad.min()) <= 1e-7 * (1 + f)
    assert out.z.min() >= 0 and out.z.sum() == pytest.approx(1, abs=1e-12)


@pytest.mark.parametrize("eps, n, N, seed", CERT_CASES)
def test_em_smooth_converged_is_a_fixed_point_within_tol(eps, n, N, seed):
    """EMS ``converged``: one more step (EM on the dense ``G``, then ``[w, 1-2w, w]``
    with reflecting ends, written out here) moves ``z`` by at most ``tol`` in L1."""
    rng = np.random.default_rng(seed)
    _, h = draw(rng.dirichlet(np.ones(n)), eps, N, rng)
    lam = Fraction(np.exp(eps)).limit_denominator(10**6)
    tol, w = 1e-9, 0.25
    out = deconvolve(h, lam, estimator="em-smooth", tol=tol)
    G = dense_G(n, float(lam))
    z = out.z
    q = z @ G
    em = z * (G @ np.where(h > 0, h / (h.sum() * q), 0.0))
    em /= em.sum()
    left = np.concatenate([[em[0]], em[:-1]])
    right = np.concatenate([em[1:], [em[-1]]])
    step = w * left + (1 - 2 * w) * em + w * right
    assert out.converged
    assert float(np.abs(step - z).sum()) <= tol


@pytest.mark.parametrize("solver", ["interior-point", "squarem", "plain"])
@pytest.mark.parametrize("h", [[0, 1, 300, 2, 0], [500, 3, 0, 0, 0, 0, 1]], ids=["middle", "edge"])
def test_certified_bound_when_the_likelihood_is_small(solver, h):
    """Concentrated counts at eps = 3: ``|L|`` is far below ``N``, so the bound relative
    to ``max(|L|, 1)`` is much stricter than one relative to ``N``."""
    h = np.array(h, dtype=float)
    lam, tol = Fraction(20), 1e-9
    out = deconvolve(h, lam, solver=solver, tol=tol, max_iter=20_000)
    gap, L = ml_certificate(out.z, h, dense_G(len(h), float(lam)))
    assert abs(L) < h.sum() / 5
    assert out.converged and gap <= tol * max(abs(L), 1.0) * (1 + 1e-9) + 1e-12
