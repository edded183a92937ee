"""LP optima over F[z] and U: formulation, exact (cdd) and HiGHS agreement, repair,
sparse targets and the eps range of the HiGHS methods."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import OptimizeResult

import dpfix.constructors.lp as lp_module
from dpfix.certify import exact_optimum
from dpfix.constructors.lp import (
    HIGHS_EPS_MAX,
    LP_METHODS,
    _majorant,
    _repair,
    lp_formulation,
    lp_optimum,
)
from dpfix.constructors.northwest import northwest_corner
from dpfix.constructors.unfixed import unfixed_optimum
from dpfix.explore.cases import grid
from dpfix.explore.strategies import targets
from dpfix.numbers.exact import ExactnessError, probability_vector
from dpfix.theory.mechanism import Mechanism, weight_matrix
from dpfix.theory.polytopes import F, U

CASES = list(grid())


def _case_id(case):
    n, lam, name, _ = case
    return f"n{n}-lam{lam}-{name}"


def test_formulation_sizes():
    for n in (2, 3, 6):
        f = lp_formulation(n, 2.0, np.full(n, 1 / n))
        rows, cols, vals = f["ub"]
        assert rows.max() + 1 == 2 * n * (n - 1)
        assert (np.bincount(rows) == 2).all()  # two non-zeros per inequality
        assert len(f["b_eq"]) == n + n - 1  # row sums, fixed point less one
        assert len(lp_formulation(n, 2.0)["b_eq"]) == n
        assert set(vals.tolist()) == {1.0, -2.0}


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_exact_lp_matches_polytope_lp(case):
    # an independent formulation: dpfix.theory.polytopes (its own rows, cdd maximise)
    n, lam, _, z = case
    for weights in ("abs", "squared"):
        W = weight_matrix(weights, z)
        for fixed, P in ((True, F(n, lam, z)), (False, U(n, lam))):
            M = lp_optimum(z, lam=lam, loss=weights, fixed=fixed, solver="exact")
            assert M.exact and M.params["objective"] == -P.maximize(-W)[0]
            assert P.contains(M.matrix)
            assert M.count_error(z, weights) == M.params["objective"]


@pytest.mark.parametrize("method", ["highs-ds", "highs-ipm"])
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_highs_agrees_with_exact(case, method):
    n, lam, _, z = case
    for fixed in (True, False):
        exact = lp_optimum(z, lam=lam, fixed=fixed, solver="exact").params["objective"]
        M = lp_optimum(z.astype(float), eps=math.log(lam), fixed=fixed, solver=method)
        for value in (M.params["objective"], M.params["count_error"]):
            assert abs(value - float(exact)) <= 1e-9 * max(1.0, float(exact))
        assert M.params["status"] == 0 and isinstance(M.params["message"], str)
        M.check()
        assert (M.fixed_point is not None) == fixed


@pytest.mark.parametrize("eps", [5.0, 0.05])
def test_highs_large_n_eps_is_repaired_and_valid(eps):
    # n * eps = 200: true entries down to e^-200 are lost by HiGHS; the repair
    # restores them as the least eps-DP majorant and the result passes check()
    n = 40
    z = np.random.default_rng(3).dirichlet(np.ones(n))
    M = lp_optimum(z, eps=eps, solver="highs-ds")
    M.check()
    assert abs(M.params["count_error"] - M.params["objective"]) <= 1e-9
    assert M.privacy_level() <= eps * (1 + 1e-9)


def test_repair_restores_dp_and_rows():
    # a valid mechanism with all-zero columns, plus absolute noise 1e-12 (some
    # entries negative): the repair must give a valid mechanism within 1e-10
    rng = np.random.default_rng(4)
    eps = 1.0
    z = np.array([0.5, 0, 0, 0, 0, 0.5])
    T = unfixed_optimum(z, eps=eps).T
    assert (T == 0).all(axis=0).any()
    noisy = T + rng.normal(scale=1e-12, size=T.shape)
    assert (noisy < 0).any()
    M = Mechanism(log_matrix=_repair(noisy, eps), eps=eps)
    M.check()
    assert np.abs(M.T - T).max() < 1e-10


def test_invalid_solution_raises(monkeypatch):
    def bad_linprog(c, **kw):  # DP after the repair, but z T != z by far
        return OptimizeResult(x=np.array([1.0, 0.3, 0.0, 1.0]), status=0, message="fake",
                              fun=0.0)
    monkeypatch.setattr(lp_module, "linprog", bad_linprog)
    with pytest.raises(RuntimeError, match="cannot be made valid"):
        lp_optimum([0.3, 0.7], eps=1.0)


def test_solver_failure_raises(monkeypatch):
    monkeypatch.setattr(lp_module, "linprog", lambda c, **kw: OptimizeResult(
        x=None, status=1, message="Time limit reached", fun=None))
    with pytest.raises(RuntimeError, match="Time limit reached"):
        lp_optimum([0.5, 0.5], eps=1.0)


def test_bad_input():
    with pytest.raises(ValueError, match="highs-ds, highs-ipm, exact"):
        lp_optimum([0.5, 0.5], eps=1.0, solver="simplex")
    assert LP_METHODS == ("highs-ds", "highs-ipm", "exact")
    with pytest.raises(ValueError, match="rational lam"):
        lp_optimum([0.5, 0.5], eps=1.0, solver="exact")
    with pytest.raises(ExactnessError):
        lp_optimum([0.5, 0.5], lam=2, solver="exact")
    with pytest.raises(ValueError, match="sum to 1"):
        lp_optimum(["1/2", "1/4"], lam=2, solver="exact")


def test_exact_lp_over_U_two_points():
    # by hand: n = 2, W = z_i |i-j|, U's vertices; optimum at the geometric
    # mechanism with rows (lam, 1)/(1+lam) when z is uniform: error 1/(1+lam)
    lam = Fraction(3)
    M = lp_optimum(["1/2", "1/2"], lam=lam, fixed=False, solver="exact")
    assert M.params["objective"] == 1 / (1 + lam)
    assert M.fixed_point is None


@pytest.mark.parametrize("fixed", [True, False])
def test_highs_agrees_with_exact_at_n8(fixed):
    z = np.array([Fraction(w, 36) for w in (1, 7, 0, 5, 9, 2, 8, 4)], dtype=object)
    lam = Fraction(5, 3)
    exact = float(lp_optimum(z, lam=lam, fixed=fixed, solver="exact").params["objective"])
    for method in ("highs-ds", "highs-ipm"):
        M = lp_optimum(z.astype(float), eps=math.log(lam), fixed=fixed, solver=method,
                       options={"presolve": True})
        assert abs(M.params["count_error"] - exact) <= 1e-9 * exact


def test_highs_failure_is_retried_once_without_presolve(monkeypatch):
    import dpfix.constructors.lp as lp_module

    real, seen = lp_module.linprog, []

    def flaky(*args, options=None, **kw):
        seen.append(dict(options))
        res = real(*args, options=options, **kw)
        if len(seen) == 1:  # what HiGHS' presolve returns on some targets with zeros
            res.status, res.x, res.message = 4, None, "HiGHS Status 15: model_status is Unknown"
        return res

    monkeypatch.setattr(lp_module, "linprog", flaky)
    mech = lp_module.lp_optimum(np.array([0.5, 0.0, 0.25, 0.25]), 1.0)
    assert [o.get("presolve", True) for o in seen] == [True, False]
    assert mech.params["presolve_retry"] and "Unknown" in mech.params["first_attempt"]
    assert mech.in_F()


def test_time_limit_is_not_retried(monkeypatch):
    import dpfix.constructors.lp as lp_module

    real, seen = lp_module.linprog, []

    def limited(*args, options=None, **kw):
        seen.append(options)
        res = real(*args, options=options, **kw)
        res.status, res.x, res.message = 1, None, "Time limit reached"
        return res

    monkeypatch.setattr(lp_module, "linprog", limited)
    with pytest.raises(RuntimeError, match="Time limit"):
        lp_module.lp_optimum(np.array([0.5, 0.5]), 1.0, time_limit=1.0)
    assert len(seen) == 1


# ------------------------------------------------- sparse targets and extreme eps
# Float LP results are accurate to about HiGHS' absolute tolerance (1e-10): the
# bounds below are absolute, measured at most 2.3e-10 (HIGHS_EPS_MAX's comment).
ATOL = 1e-9
LAMS = [Fraction(21, 20), Fraction(3, 2), Fraction(3), Fraction(20), Fraction(10**6)]


def sparse_targets(n_max=8):
    """An exact target with zeros (favoured; at least one positive entry), and a rational lam."""
    return st.tuples(targets(n_max=n_max, max_weight=9), st.sampled_from(LAMS))


def _floats(z):
    return np.array([float(x) for x in z])


@settings(max_examples=40, deadline=None)
@given(sparse_targets())
def test_sparse_z_matches_the_northwest_corner(case):
    # Theorem A: for the abs loss the northwest corner is the optimum of F
    z, lam = case
    eps = math.log(lam)
    nw = northwest_corner(z, lam=lam).count_error()
    M = lp_optimum(_floats(z), eps)
    M.check()
    assert M.privacy_level() <= eps * (1 + 1e-9)
    assert abs(M.params["count_error"] - float(nw)) <= ATOL
    zero = np.array([x == 0 for x in z])
    assert M.params["zero_columns"] == zero.sum()
    assert np.isneginf(M.log_matrix[:, zero]).all()  # exactly zero, not tiny


@settings(max_examples=25, deadline=None)
@given(sparse_targets(n_max=6), st.sampled_from(["zero-one", "sqrt", "squared", "capped:1"]))
def test_sparse_z_matches_the_exact_optimum_for_other_losses(case, weights):
    # where the northwest corner is not optimal (zero-one, sqrt, capped): the
    # exact column-generation optimum of dpfix.certify
    z, lam = case
    opt = exact_optimum(z, lam, loss=weights)
    M = lp_optimum(_floats(z), math.log(lam), loss=weights)
    M.check()
    assert abs(M.params["count_error"] - float(opt.value)) <= ATOL


def test_sparse_z_exact_lp_agrees():
    z = ["1/2", 0, 0, "1/4", "1/4", 0]
    M = lp_optimum(z, lam=3, solver="exact")
    assert (M.matrix[:, [1, 2, 5]] == 0).all()
    assert M.params["objective"] == exact_optimum(z, 3).value
    F = lp_optimum(_floats(probability_vector(z, exact=True)), math.log(3))
    assert abs(F.params["count_error"] - float(M.params["objective"])) <= ATOL


@pytest.mark.parametrize("k", [6, 9, 12, 15])
def test_tiny_eps_tends_to_z_rows(k):
    # lam = 1 + 10^-k: the optimum is z-rows (every row = z) up to O(eps); the
    # repair keeps the float log ratios at most eps exactly (check's 1e-9 relative)
    z = np.array([Fraction(w, 30) for w in (7, 0, 3, 11, 0, 9)], dtype=object)
    lam = 1 + Fraction(1, 10**k)
    eps = math.log1p(10.0**-k)
    M = lp_optimum(_floats(z), eps)
    M.check()
    assert M.privacy_level() <= eps
    nw = float(northwest_corner(z, lam=lam).count_error())
    assert abs(M.params["count_error"] - nw) <= ATOL
    zf = _floats(z)
    assert np.abs(M.T - zf[None, :]).max() <= 20 * eps + ATOL


def test_eps_below_float_resolution_gives_z_rows():
    # exp(1e-20) == 1.0: every ratio row says T[i, j] = T[i+1, j]
    z = np.array([0.2, 0.0, 0.5, 0.3])
    M = lp_optimum(z, 1e-20)
    M.check()
    assert np.abs(M.T - z[None, :]).max() <= ATOL


@pytest.mark.parametrize("eps", [12.0, HIGHS_EPS_MAX])
def test_large_eps_tends_to_the_identity(eps):
    z = np.random.default_rng(5).dirichlet(np.ones(6))
    M = lp_optimum(z, eps)
    M.check()
    assert M.privacy_level() <= eps * (1 + 1e-9)
    nw = northwest_corner(z, eps=eps).count_error()
    assert abs(M.params["count_error"] - nw) <= ATOL
    assert np.abs(M.T - np.eye(6)).max() <= 1e3 * math.exp(-eps)  # about e^-eps / min z


@pytest.mark.parametrize("eps", [20.5, 50.0])
def test_eps_past_highs_range_is_refused_in_one_line(eps):
    with pytest.raises(ValueError, match=r"^eps: the HiGHS LP is usable for eps <= 20, got "
                                         r"[0-9.]+ \(its ratio coefficient") as err:
        lp_optimum([0.5, 0.5], eps)
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="usable for eps <= 20"):
        lp_optimum([0.5, 0.5], eps, fixed=False, solver="highs-ipm")
    # the exact path has no such limit
    M = lp_optimum(["1/2", "1/2"], lam=10**9, solver="exact")
    assert M.params["objective"] == Fraction(1, 10**9 + 1)


def test_majorant_rounds_so_the_float_level_is_at_most_eps():
    rng = np.random.default_rng(2)
    for eps in (1e-12, 1e-9, 1e-3, 2.0):
        L = np.log(rng.dirichlet(np.ones(9), size=9))
        L[:, 3] = -np.inf  # a zero column stays zero
        _majorant(L, eps)
        assert np.isneginf(L[:, 3]).all()
        M = Mechanism(log_matrix=L, eps=eps)
        assert M.privacy_level() <= eps
