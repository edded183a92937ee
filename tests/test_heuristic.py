"""Algorithm 1, the heuristic fixed-point constructor (Theorems 5 and 6).

Exact outputs are compared exactly (in F, extreme by the exact rank of the
active constraints, at most |P| + n - 1 passes); float outputs within the
stated tolerance (``FLOAT_RTOL = 1e-9``) and against the exact path.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpfix.constructors._heuristic_kernel import HAVE_NUMBA
from dpfix.constructors.heuristic import (
    SELECTORS,
    _build,
    heuristic,
    heuristic_steps,
    scale_representation,
)
from dpfix.explore.cases import grid
from dpfix.numbers.exact import ExactnessError, rank
from dpfix.theory.mechanism import FLOAT_RTOL
from dpfix.theory.scales import psi

F = Fraction
DETERMINISTIC = ("max", "min", "sandwich")


def active_rank(T: np.ndarray, z: np.ndarray, lam: Fraction) -> int:
    """Exact rank of the constraints of F active at T (paper Section 4): the n
    row sums, the n fixed-point equalities and every tight neighbour inequality,
    over the n^2 entries of T (row-major)."""
    n = T.shape[0]
    rows = []
    for i in range(n):
        rows.append([1 if k // n == i else 0 for k in range(n * n)])
    for j in range(n):
        rows.append([z[k // n] if k % n == j else 0 for k in range(n * n)])
    for j in range(n):
        for i in range(n - 1):
            for hi, lo in ((i, i + 1), (i + 1, i)):  # T[hi, j] <= lam T[lo, j]
                if T[hi, j] == lam * T[lo, j]:
                    row = [0] * (n * n)
                    row[hi * n + j], row[lo * n + j] = 1, -lam
                    rows.append(row)
    return rank(rows)


def assert_exact_extreme_in_F(mech, z, lam) -> None:
    n = len(z)
    assert mech.exact and mech.lam == lam
    assert all(isinstance(v, Fraction) for v in mech.matrix.flat)
    assert mech.in_F(z) and mech.is_dp()
    assert active_rank(mech.matrix, z, lam) == n * n
    support = sum(1 for v in z if v > 0)
    assert mech.params["pass_bound"] == support + n - 1
    assert support <= mech.params["passes"] <= support + n - 1


def float_ok(mech, z, eps) -> None:
    """In F and eps-DP to FLOAT_RTOL, with no NaN, no +inf and no zero next to a
    positive entry in a column."""
    L = mech.log_matrix
    assert not np.isnan(L).any() and not np.isposinf(L).any()
    finite = np.isfinite(L)
    assert not (finite[:-1] != finite[1:]).any()
    assert mech.row_sum_error() <= FLOAT_RTOL
    assert mech.fixed_point_error(z) <= FLOAT_RTOL
    assert mech.privacy_level() <= eps * (1 + FLOAT_RTOL)


# ---------------------------------------------------------------- known answers
def test_hand_worked_n2():
    # z = (1/3, 2/3), lam = 2, sandwich: column 0 takes 3/4 of (2/3, 1/3) (fill);
    # column 1 takes (1/3, 2/3) until r = (1/6, 1/12) is tight (lock -1), then
    # 1/4 of (2/3, 1/3), which spends r and fills the column: 3 passes.
    m = heuristic(["1/3", "2/3"], lam=2)
    assert m.matrix.tolist() == [[F(1, 2), F(1, 2)], [F(1, 4), F(3, 4)]]
    assert list(heuristic_steps(m)) == [(0, (-1,), F(3, 4)), (1, (1,), F(1)),
                                        (1, (-1,), F(1, 4))]
    assert m.params["passes"] == 3 == m.params["pass_bound"]
    assert m.params["final_lock"] == (-1,)


def test_hand_worked_symmetric_tie():
    # z = (1/2, 1/2), lam = 3: the first step fills column 0 and makes r tight
    # at the same time (both locked): T is the single-peaked Sigma.
    m = heuristic(["1/2", "1/2"], lam=3)
    assert m.matrix.tolist() == [[F(3, 4), F(1, 4)], [F(1, 4), F(3, 4)]]
    assert m.params["passes"] == 2


def test_n1():
    assert heuristic([1], lam=2).matrix.tolist() == [[F(1)]]
    m = heuristic([1.0], 1.0)
    assert m.log_matrix.tolist() == [[0.0]] and m.params["passes"] == 1


# ---------------------------------------------------------------- Theorems 5, 6
@pytest.mark.parametrize("selector", DETERMINISTIC + ("random",))
def test_grid_exact_extreme(selector):
    for n, lam, name, z in grid():
        m = heuristic(z, lam=lam, selector=selector, seed=n)
        assert_exact_extreme_in_F(m, z, lam), (n, lam, name)


def test_scale_representation_is_in_RF():
    for n, lam, _name, z in grid():
        m = heuristic(z, lam=lam)
        B = scale_representation(m)
        assert all(v >= 0 for v in B.flat)
        assert (psi(n, lam) @ B == m.matrix).all()  # Theorem 3: T = Psi B
        assert sum(1 for v in B.flat if v > 0) == m.params["passes"]  # no zero step
        support = sum(1 for v in z if v > 0)
        assert support <= m.params["passes"] <= support + n - 1  # Corollary 2's range


rational_z = st.lists(st.integers(0, 6), min_size=1, max_size=6).filter(any).map(
    lambda w: [F(v, sum(w)) for v in w])
lams = st.sampled_from([F(5, 4), F(3, 2), F(2), F(3), F(7)])


@given(rational_z, lams, st.sampled_from(DETERMINISTIC))
def test_random_exact_extreme(z, lam, selector):
    assert_exact_extreme_in_F(heuristic(z, lam=lam, selector=selector), z, lam)


@given(rational_z, lams, st.sampled_from(DETERMINISTIC + ("random",)))
def test_float_agrees_with_exact(z, lam, selector):
    exact = heuristic(z, lam=lam, selector=selector, seed=7)
    eps = math.log(lam)
    zf = np.array([float(v) for v in z])
    floats = heuristic(zf, eps, selector=selector, seed=7)
    assert np.abs(floats.T - exact.matrix.astype(float)).max() <= 1e-9
    assert floats.params["column_order"] == exact.params["column_order"]
    if HAVE_NUMBA:
        vectorised = _build(zf / zf.sum(), None, eps, selector, 7, compiled=False)
        assert not vectorised.params["compiled"] and floats.params["compiled"]
        assert np.abs(vectorised.T - exact.matrix.astype(float)).max() <= 1e-9


def test_larger_exact_n():
    rng = np.random.default_rng(5)
    for n in (6, 8, 10):
        w = [int(v) for v in rng.integers(0, 5, n)]
        w[0] += 1
        z = [F(v, sum(w)) for v in w]
        m = heuristic(z, lam=F(3, 2))
        assert m.in_F(z) and m.is_dp()
        support = sum(1 for v in z if v > 0)
        assert m.params["passes"] <= support + n - 1


# ---------------------------------------------------------------- selectors
def test_max_selector_is_the_papers_max_z():
    # docs/math_notes.md: largest remaining c_j; the paper: largest z_j. The same, since a
    # column's c_j stays z_j until it is chosen.
    z = [F(1, 10), F(3, 10), F(1, 10), F(4, 10), F(1, 10)]
    order = heuristic(z, lam=2, selector="max").params["column_order"]
    assert order == [3, 1, 0, 2, 4]
    assert heuristic(z, lam=2, selector="min").params["column_order"] == [0, 2, 4, 1, 3]


def test_sandwich_order_skips_zero_columns():
    z = [F(1, 4), F(1, 4), F(0), F(1, 4), F(1, 4), F(0)]
    assert heuristic(z, lam=2).params["column_order"] == [0, 1, 4, 3]


def test_random_selector_is_seeded():
    z = np.full(30, 1 / 30)
    a = heuristic(z, 1.0, selector="random", seed=3).params["column_order"]
    b = heuristic(z, 1.0, selector="random", seed=3).params["column_order"]
    assert a == b and sorted(a) == list(range(30)) and a != list(range(30))


def test_random_selector_records_only_an_integer_seed():
    z = np.full(6, 1 / 6)
    assert heuristic(z, 1.0, selector="random", seed=np.int64(4)).params["seed"] == 4
    assert heuristic(z, 1.0, selector="random").params["seed"] == (
        "fresh OS randomness (not recorded)")
    ss = np.random.SeedSequence()
    kept = heuristic(z, 1.0, selector="random", seed=ss).params["seed"]
    assert kept == "a seed object (not recorded)" and str(ss.entropy) not in repr(kept)


def test_callable_selector():
    seen = []

    def last_remaining(c, z):
        seen.append(c.copy())
        return int(np.flatnonzero(c > 0)[-1])

    z = ["1/4", "1/4", "1/2"]
    m = heuristic(z, lam=2, selector=last_remaining)
    assert m.params["column_order"] == [2, 1, 0] and m.params["selector"] == "last_remaining"
    assert seen[0].tolist() == [F(1, 4), F(1, 4), F(1, 2)]
    assert_exact_extreme_in_F(m, [F(1, 4), F(1, 4), F(1, 2)], F(2))
    mf = heuristic([0.25, 0.25, 0.5], math.log(2), selector=last_remaining)
    assert np.abs(mf.T - m.matrix.astype(float)).max() <= 1e-12


@pytest.mark.parametrize("bad, message", [
    (lambda c, z: 0, "c_j <= 0"),  # column 0 has z_0 = 0
    (lambda c, z: 5, "outside"),
    (lambda c, z: 1.5, "integer"),
])
def test_callable_selector_refused(bad, message):
    with pytest.raises(ValueError, match=message):
        heuristic(["0", "1/2", "1/2"], lam=2, selector=bad)


def test_best_keeps_least_count_error():
    for _n, lam, _name, z in grid(n=(3, 4)):
        m = heuristic(z, lam=lam, selector="best")
        errors = {s: heuristic(z, lam=lam, selector=s).count_error() for s in DETERMINISTIC}
        assert m.params["count_errors"] == errors
        best = min(errors.values())
        assert m.params["chosen"] == next(s for s in DETERMINISTIC if errors[s] == best)
        assert m.count_error(loss="abs") == best and m.params["selector"] == "best"
    mf = heuristic(np.full(50, 0.02), 0.5, selector="best")
    assert mf.params["chosen"] in DETERMINISTIC


def test_unknown_selector():
    with pytest.raises(ValueError, match="max, min, sandwich, random, best"):
        heuristic(["1/2", "1/2"], lam=2, selector="largest")
    assert SELECTORS == ("max", "min", "sandwich", "random", "best")


# ---------------------------------------------------------------- validation
@pytest.mark.parametrize("z, kw, error, message", [
    (["1/2", "1/3"], {"lam": 2}, ValueError, "sum to 1 exactly"),
    (["3/2", "-1/2"], {"lam": 2}, ValueError, "non-negative"),
    ([0.5, 0.5], {"lam": 2}, ExactnessError, "float"),
    ([0.5, 0.5 + 1e-6], {"eps": 1.0}, ValueError, "sum to 1"),
    ([0.5, float("nan")], {"eps": 1.0}, ValueError, "finite"),
    ([], {"eps": 1.0}, ValueError, "n >= 1"),
    ([[0.5, 0.5]], {"eps": 1.0}, ValueError, "1 dimension"),
    ([0.5, 0.5], {"eps": 0.0}, ValueError, "eps"),
    ([0.5, 0.5], {"eps": float("inf")}, ValueError, "eps"),
    ([0.5, 0.5], {}, ValueError, "eps"),
])
def test_bad_input(z, kw, error, message):
    with pytest.raises(error, match=message):
        heuristic(z, **kw)


def test_float_z_renormalised():
    z = np.array([0.2, 0.3, 0.5]) * (1 + 1e-12)
    m = heuristic(z, 1.0)
    assert m.fixed_point.sum() == pytest.approx(1, abs=1e-15)
    float_ok(m, m.fixed_point, 1.0)


def test_scale_representation_refusals():
    with pytest.raises(ValueError, match="heuristic"):
        scale_representation(heuristic(["1/2", "1/2"], lam=2).__class__.from_matrix(
            [[1, 0], [0, 1]], lam=2))
    B = scale_representation(heuristic([0.3, 0.7], 1.0))
    assert B.dtype == float and np.allclose(psi(2, eps=1.0) @ B,
                                            heuristic([0.3, 0.7], 1.0).T, atol=1e-12)


# ---------------------------------------------------------------- float at scale
def _hard_z(n: int, rng: np.random.Generator) -> np.ndarray:
    w = rng.random(n)
    w[rng.random(n) < 0.3] = 0.0
    w[rng.random(n) < 0.1] = 1e-12 / n
    w[0] = 0.0
    return w / w.sum()


@pytest.mark.parametrize("eps", [0.01, 1.0, 5.0])
def test_float_n2000_hard_z(eps):
    z = _hard_z(2000, np.random.default_rng(1))
    m = heuristic(z, eps, selector="max")
    float_ok(m, z, eps)
    assert m.params["passes"] <= m.params["pass_bound"]


def test_float_tail_mass_is_spent():
    # z of 1e-40 in the tail: the tail rows' r is invisible in c_j (rounding of
    # 1e-16 z_j) but must still be spent; the last column uses c_j = z . r.
    n = 300
    b = np.exp(-0.5 * ((np.arange(n) - n / 3) / (n / 20)) ** 2)
    z = b / b.sum()
    for selector in DETERMINISTIC:
        float_ok(heuristic(z, 1.0, selector=selector), z, 1.0)


def test_float_no_drift_n500():
    # the naive float implementation's rows stop summing to 1 near n = 200..500
    z = np.full(500, 1 / 500)
    for eps in (0.1, 1.0, 3.0):
        assert heuristic(z, eps).row_sum_error() <= 1e-11


@pytest.mark.skipif(not HAVE_NUMBA, reason="compares the compiled kernel with numpy")
def test_compiled_matches_vectorised():
    rng = np.random.default_rng(2)
    z = _hard_z(400, rng)
    for eps in (0.05, 2.0):
        a = _build(z, None, eps, "sandwich", None, compiled=True)
        b = _build(z, None, eps, "sandwich", None, compiled=False)
        assert (np.isfinite(a.log_matrix) == np.isfinite(b.log_matrix)).all()
        assert np.abs(a.T - b.T).max() <= 1e-9
        assert a.params["passes"] == b.params["passes"]


@pytest.mark.parametrize(("eps", "n"), [(5.0, 10_000), (0.01, 2_000),
                                        pytest.param(0.01, 10_000, marks=pytest.mark.full)])
def test_float_n10000(eps, n):
    # n = 10,000 at eps = 5 is the README's n*eps = 50,000; small eps at n = 10,000: --full
    z = _hard_z(n, np.random.default_rng(3))
    m = heuristic(z, eps)
    float_ok(m, z, eps)
    if eps == 5.0:  # entries far below float64's range (e^-745) are kept in log space
        L = m.log_matrix
        assert L[np.isfinite(L)].min() < -1000


def test_large_eps_float_failure_falls_back_to_exact_arithmetic():
    # at eps = 20 the float passes lose about 9 digits: rows came out 3e-7 off
    z = np.array([0.5, 0.25, 0.25])
    m = heuristic(z, 20.0)
    assert "exact_fallback" in m.params and not m.exact
    m.check()
    assert m.is_dp(20.0)  # within FLOAT_RTOL: the logs of exact entries are rounded
    exact = heuristic(["1/2", "1/4", "1/4"], lam=Fraction(np.nextafter(np.exp(20.0), 0)))
    np.testing.assert_allclose(m.T, exact.matrix.astype(float), rtol=1e-12, atol=1e-300)
    assert len(list(heuristic_steps(m))) == m.params["passes"]


def test_exact_fallback_is_refused_beyond_its_limit(monkeypatch):
    import sys

    H = sys.modules["dpfix.constructors.heuristic"]  # the package re-exports the function
    monkeypatch.setattr(H, "EXACT_FALLBACK_MAX_N", 2)
    with pytest.raises(ValueError, match="exact fallback is limited"):
        H.heuristic(np.array([0.5, 0.25, 0.25]), 20.0)
