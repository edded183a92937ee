"""The northwest-corner split: in F exactly, equal to the exact LP optimum (the
conjecture's evidence), float path equal to the exact one and safe at n = 10,000."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.constructors import construct
from dpfix.constructors.heuristic import heuristic
from dpfix.constructors.lp import lp_optimum
from dpfix.constructors.northwest import northwest_corner, northwest_plan
from dpfix.explore.cases import grid, random_z
from dpfix.explore.strategies import lams, targets
from dpfix.numbers.exact import ExactnessError
from dpfix.theory.mechanism import weight_matrix
from dpfix.theory.polytopes import F
from dpfix.theory.scales import sigma

GRID = list(grid(n=(2, 3, 4)))


def exact_case(n_min=2, n_max=5):
    """A rational ``z`` (zeros allowed, at least one positive entry) and rational ``lam``."""
    return st.tuples(targets(n_min=n_min, n_max=n_max), lams())


def _sigma_coordinates(T, lam):
    """``A`` with ``Sigma A = T``, by exact Gauss-Jordan elimination (independent of the plan)."""
    n = T.shape[0]
    M = [list(sigma(n, lam)[i]) + list(T[i]) for i in range(n)]
    for c in range(n):
        p = next(r for r in range(c, n) if M[r][c] != 0)
        M[c], M[p] = M[p], M[c]
        M[c] = [v / M[c][c] for v in M[c]]
        for r in range(n):
            if r != c and M[r][c] != 0:
                M[r] = [a - M[r][c] * b for a, b in zip(M[r], M[c], strict=True)]
    return np.array([row[n:] for row in M], dtype=object)


@pytest.mark.parametrize("n, lam, name, z", GRID, ids=[f"{n}-{lam}-{nm}" for n, lam, nm, _ in GRID])
def test_grid_in_F_and_equal_to_the_exact_lp_optimum(n, lam, name, z):
    M = northwest_corner(z, lam=lam)
    assert M.exact and M.constructor == "northwest"
    assert F(n, lam, z).contains(M)  # rows sum to 1, z T = z, lam-DP: exactly
    assert M.privacy_ratio() <= lam
    A = _sigma_coordinates(M.matrix, lam)  # a non-negative combination of single-peaked scales
    assert all(v >= 0 for v in A.flat)
    assert sum(v > 0 for v in A.flat) == M.params["pieces"] <= 2 * n - 1
    for weights in ("abs", "squared"):
        opt = lp_optimum(z, lam=lam, solver="exact", loss=weights)
        assert M.count_error(loss=weights) == opt.params["objective"], (weights, z, lam)


@settings(max_examples=60)
@given(exact_case())
def test_random_rational_z_equal_to_the_exact_lp_optimum(case):
    # The conjecture (optimum over F): a failure here is a counterexample, not a bug to tolerate.
    z, lam = case
    M = northwest_corner(z, lam=lam)
    assert F(len(z), lam, z).contains(M)
    for weights in ("abs", "squared"):
        assert M.count_error(loss=weights) == lp_optimum(z, lam=lam, solver="exact",
                                                     loss=weights).params["objective"]


@given(exact_case(n_max=8))
def test_never_above_algorithm_1(case):
    # Algorithm 1's output is in F, so this holds whenever the conjecture does.
    z, lam = case
    nw = northwest_corner(z, lam=lam).count_error()
    assert nw <= heuristic(z, lam=lam, selector="best").count_error()


def test_never_above_algorithm_1_in_floats():
    rng = np.random.default_rng(7)
    for n in (20, 60):
        for eps in (0.1, 1.0, 3.0):
            z = rng.random(n) * (rng.random(n) < 0.8)
            z /= z.sum()
            nw = northwest_corner(z, eps).count_error()
            assert nw <= heuristic(z, eps, selector="best").count_error() * (1 + 1e-9)


@pytest.mark.parametrize("n, lam, name, z", GRID, ids=[f"{n}-{lam}-{nm}" for n, lam, nm, _ in GRID])
def test_float_path_equals_exact_path(n, lam, name, z):
    exact = northwest_corner(z, lam=lam)
    fl = northwest_corner([float(v) for v in z], math.log(lam))
    assert not fl.exact
    assert np.abs(fl.T - exact.matrix.astype(float)).max() <= 1e-9
    assert abs(fl.count_error(loss="squared") - float(exact.count_error(loss="squared"))) <= 1e-9


@pytest.mark.parametrize(("eps", "n"), [(5.0, 10_000), (0.01, 2_000),
                                        pytest.param(0.01, 10_000, marks=pytest.mark.full)])
def test_float_n_10000_valid(eps, n):
    """Validity at n = 10,000 and eps = 5 (the README's n*eps = 50,000); at a small eps,
    n = 2,000 in every run and 10,000 with --full (speed: benchmarks/, not here)."""
    rng = np.random.default_rng(1)
    z = rng.random(n) * (rng.random(n) < 0.7)  # zeros and entries of every size
    z[:100] *= 1e-30
    z /= z.sum()
    M = northwest_corner(z, eps)  # runs M.check() itself
    assert np.isfinite(M.log_matrix[:, z > 0]).all() and np.isneginf(M.log_matrix[:, z == 0]).all()
    assert M.row_sum_error() <= 1e-9 and M.fixed_point_error() <= 1e-9
    assert M.privacy_level() <= eps * (1 + 1e-9)


def test_point_mass_and_n_1():
    z = [0.0] * 50
    z[7] = 1.0
    M = northwest_corner(z, 40.0)  # every scale goes whole to column 7; e^-40*50 stays finite
    assert np.isneginf(np.delete(M.log_matrix, 7, axis=1)).all()
    assert np.allclose(M.log_matrix[:, 7], 0.0)
    assert northwest_corner(["1"], lam=3).matrix.tolist() == [[1]]
    assert northwest_corner([1.0], 0.5).T.tolist() == [[1.0]]


@given(exact_case(n_max=7))
def test_plan_is_a_monotone_transport_plan(case):
    z, lam = case
    n = len(z)
    supply = [Fraction(1, n)] * n
    pieces = northwest_plan(supply, z)
    assert all(r > 0 for _, _, r in pieces) and pieces == sorted(pieces)
    for m in range(n):  # each supply placed whole
        assert sum(r for k, _, r in pieces if k == m) == 1
    for j in range(n):  # each demand met exactly
        assert sum(r * supply[m] for m, k, r in pieces if k == j) == z[j]


def test_bad_input():
    with pytest.raises(ValueError, match="not an option of constructor .northwest."):
        construct(["1/2", "1/2"], lam=2, constructor="northwest", loss="abs")
    with pytest.raises(ExactnessError):
        northwest_corner([0.5, 0.5], lam=2)
    with pytest.raises(ValueError, match="not both"):
        northwest_corner(["1/2", "1/2"], 1.0, lam=2)
    with pytest.raises(ValueError, match="sum to 1"):
        northwest_corner(["1/2", "1/3"], lam=2)


@pytest.mark.parametrize("weights", ["hinge:1", "hinge:-2", lambda d: abs(d) ** 3,
                                     lambda d: 2 * d if d > 0 else -d])
def test_theorem_a_other_convex_losses_equal_the_exact_lp(weights):
    """Theorem A covers every convex loss, not only abs and squared: the plan does not
    depend on the loss, and its count error is the exact LP optimum (cdd) for each."""
    rng = np.random.default_rng(5)
    for n in (3, 4, 5):
        z = random_z(rng, n, zeros=1)
        M = northwest_corner(z, lam=Fraction(3, 2))
        W = weight_matrix(weights, z, exact=True)
        opt = lp_optimum(z, lam=Fraction(3, 2), solver="exact", loss=W)
        assert M.count_error(loss=W) == opt.params["objective"], (n, z)


def test_a_non_convex_loss_is_not_covered():
    """The smallest zero-one counterexample of docs/optimum_of_F.md section 5."""
    z = [Fraction(1, 4), Fraction(1, 4), Fraction(1, 2)]
    M = northwest_corner(z, lam=3)
    opt = lp_optimum(z, lam=3, solver="exact", loss="zero-one")
    assert M.count_error(loss="zero-one") == Fraction(85, 252)
    assert opt.params["objective"] == Fraction(1, 3)
