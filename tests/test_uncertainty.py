"""The stated uncertainty of a release (docs/uncertainty.md): the per-count confidence sets
against brute force in Fractions, their exact level; the band's law of the max against an
exact sum and its contraction through the isotonic post-processing; the totals' exact level
by enumeration; the refusals; and the coverage study (quick here, ``--full`` for 1,000
releases per setting)."""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpfix.constructors.remap import structured_sampler
from dpfix.release.pipeline import privatize_counts
from dpfix.release.privatizers.postprocess import isotonic_cdf
from dpfix.release.uncertainty import (
    check_alpha,
    confidence_sets,
    distribution_band,
    group_intervals,
    max_difference_bound,
    neyman_sets,
    preimage_sets,
    total_interval,
    total_intervals,
)
from dpfix.release.uncertainty.band import cdf_band
from dpfix.release.uncertainty.counts import acceptance_regions
from dpfix.release.uncertainty.totals import row_law
from dpfix.sampling import checked_table, rational_lam
from dpfix.theory.mechanism import Mechanism
from helpers import needs_data

LAMS = [Fraction(2), Fraction(3, 2), Fraction(11, 10), Fraction(3), Fraction(7),
        Fraction(75117, 27634)]
#: dyadic levels that tie with geometric probabilities (lam = 3: Phi(-1) = 1/4), and others
ALPHAS = [0.05, 0.1, 0.5, 0.25, 0.125, 1 / 3, 0.01, 0.9, 0.999]


@st.composite
def samplers(draw):
    n = draw(st.integers(2, 11))
    constructor = draw(st.sampled_from(["northwest", "unfixed", "truncated-geometric"]))
    lam = draw(st.sampled_from(LAMS))
    weights = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n).filter(any))
    z = np.array(weights, dtype=float) / sum(weights)
    return structured_sampler(constructor, None if constructor == "truncated-geometric" else z,
                              lam=lam, n=n)


def brute_regions(T, alpha):
    """``l(x) = min{j : F > a}``, ``u(x) = min{j : F >= 1 - a}`` in Fractions, by definition."""
    a = Fraction(alpha) / 2
    n = T.shape[0]
    F = [[sum(T[x, : j + 1], Fraction(0)) for j in range(n)] for x in range(n)]
    return ([min(j for j in range(n) if F[x][j] > a) for x in range(n)],
            [min(j for j in range(n) if F[x][j] >= 1 - a) for x in range(n)])


# ------------------------------------------------------------------ per-count sets
@given(samplers(), st.sampled_from(ALPHAS))
def test_structured_regions_are_the_equal_tailed_regions_of_the_drawn_T(s, alpha):
    l, u, _, exact = acceptance_regions(s, alpha)
    bl, bu = brute_regions(s.matrix(drawn=True), alpha)
    assert exact and l.tolist() == bl and u.tolist() == bu


@given(samplers(), st.floats(1e-6, 1 - 1e-6))
def test_every_true_count_is_covered_with_probability_at_least_the_level(s, alpha):
    T = s.matrix(drawn=True)
    cs = neyman_sets(s, alpha)
    for x in range(s.n):
        covered = sum((T[x, y] for y in range(s.n) if cs.covers([x], [y])[0]), Fraction(0))
        assert covered >= 1 - Fraction(alpha)
    # the sets are the inverse of the regions: x in CS(y) iff y in A(x)
    for x, y in itertools.product(range(s.n), repeat=2):
        assert bool(cs.covers([x], [y])[0]) == bool(cs.accept_lower[x] <= y <= cs.accept_upper[x])


def test_large_n_sets_are_intervals_and_agree_with_the_boundary_formula():
    """``n = 3 10^5``, ``T`` never built: at random rows the region's ends are where ``F``
    crosses ``alpha/2`` and ``1 - alpha/2``, checked with ``F`` in Fractions from G and the
    drawn thresholds (``F(x, j) = sum_m G[x, m] R[m, <= j]`` over the few ``m`` that matter)."""
    n, lam = 300_000, rational_lam(1.0)
    z = np.exp(-np.arange(n) / 2e4)
    s = structured_sampler("northwest", z / z.sum(), lam=lam, n=n)
    cs = neyman_sets(s, 0.05)
    assert cs.contiguous and not cs.empty[:n - 1].any()
    R, rho, D = s.remap, 1 / lam, 1 << s.remap.bits
    share = R.drawn_shares()
    last_cols = R.cols[R.start[1:] - 1]  # the last column of every m (non-decreasing)

    def P_m(v, x):  # P(clamp(x + k) <= v)
        if v < 0:
            return Fraction(0)
        if v >= n - 1:
            return Fraction(1)
        t = v - x
        return 1 - rho ** (t + 1) / (1 + rho) if t >= 0 else rho ** (-t) / (1 + rho)

    def F(x, j):  # the m whose every piece is at a column <= j, then the one split at j
        A = int(np.searchsorted(last_cols, j, side="right"))
        total = P_m(A - 1, x)
        if A < n:
            pieces = range(int(R.start[A]), int(R.start[A + 1]))
            part = sum(int(share[t]) for t in pieces if R.cols[t] <= j)
            total += (P_m(A, x) - P_m(A - 1, x)) * Fraction(part, D)
        return total

    a = Fraction(0.05) / 2
    rng = np.random.default_rng(0)
    for x in [*rng.integers(1000, 60_000, size=3).tolist(), 0, 1, n - 2, n - 1]:
        lx, ux = int(cs.accept_lower[x]), int(cs.accept_upper[x])
        assert F(x, lx - 1) <= a < F(x, lx)
        assert F(x, ux - 1) < 1 - a <= F(x, ux)


def test_checked_tables_are_exact_on_their_integer_weights():
    z = [0.3, 0.1, 0.25, 0.05, 0.3]
    from dpfix.constructors import construct

    mech = construct(z, math.log(2.5), constructor="heuristic").normalised()
    table = checked_table(log_T=mech.log_matrix, eps=math.log(2.6), constructor="heuristic")
    D = 1 << table.bits
    T = np.array([[Fraction(int(w), D) for w in row] for row in table.weights], dtype=object)
    for alpha in (0.05, 0.3, 0.5):
        l, u, _, exact = acceptance_regions(table, alpha)
        assert exact and (l.tolist(), u.tolist()) == brute_regions(T, alpha)


def test_a_set_that_is_not_an_interval_is_reported_by_its_hull():
    T = np.array([[Fraction(6, 10), Fraction(1, 10), Fraction(3, 10)],
                  [Fraction(1, 10), Fraction(8, 10), Fraction(1, 10)],
                  [Fraction(6, 10), Fraction(1, 10), Fraction(3, 10)]], dtype=object)
    cs = neyman_sets(T, 0.4)  # A(0) = A(2) = {0, 2}, A(1) = {1}: CS(0) = {0, 2}
    assert not cs.contiguous
    assert (cs.lower[0], cs.upper[0]) == (0, 2)
    assert not cs.covers([1], [0])[0] and cs.covers([2], [0])[0]


def test_float_rows_give_conservative_sets_and_say_so():
    T = np.array([[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7]])
    cs = neyman_sets(Mechanism.from_matrix(T, eps=math.log(3.5)), 0.4)
    exact = neyman_sets(np.vectorize(Fraction)(np.array([[7, 2, 1], [2, 6, 2], [1, 2, 7]]))
                        / 10, 0.4)
    assert not cs.exact and "float" in cs.method
    assert (cs.accept_lower <= exact.accept_lower).all()
    assert (cs.accept_upper >= exact.accept_upper).all()


def test_preimage_sets_cover_whatever_the_remap():
    """For a remap R of y = G(x) the level holds exactly (here R fixed, the argument is the same
    for any R, data-dependent or not)."""
    n, lam = 6, Fraction(2)
    G = structured_sampler("truncated-geometric", lam=lam, n=n)
    R = structured_sampler("northwest", [0.3, 0.3, 0.1, 0.1, 0.1, 0.1], lam=lam, n=n).remap
    share = R.drawn_shares()
    ms = np.repeat(np.arange(n), np.diff(R.start))
    first = np.full(n, n)
    last = np.full(n, -1)
    for m, j, w in zip(ms, R.cols, share, strict=True):
        if w > 0:
            first[j], last[j] = min(first[j], m), max(last[j], m)
    cs = preimage_sets(G, first, last, 0.1)
    GT, RT = G.matrix(), R.matrix(drawn=True)
    for x in range(n):
        p = sum((GT[x, y] * RT[y, j] for y in range(n) for j in range(n)
                 if cs.covers([x], [j])[0]), Fraction(0))
        assert p >= Fraction(9, 10)


@given(st.lists(st.integers(0, 6), min_size=1, max_size=40), st.data())
def test_quantile_preimages_hold_every_matched_row_tightly(y, data):
    """The rows that the quantile matching sends to ``j`` have their ``y`` in ``first[j] ..
    last[j]``, and both ends are taken."""
    from dpfix.release.uncertainty.columns import quantile_preimages
    from dpfix.sampling.quantile import quantile_remap
    from dpfix.sampling.source import random_source

    y = np.array(y)
    n = 7
    cuts = sorted(data.draw(st.lists(st.integers(0, y.size), min_size=n - 1, max_size=n - 1)))
    target = np.diff([0, *cuts, y.size])
    out = quantile_remap(y, target, random_source(data.draw(st.integers(0, 99))))
    first, last = quantile_preimages(np.bincount(y, minlength=n), target)
    assert ((first[out] <= y) & (y <= last[out])).all()
    for j in np.flatnonzero(target):
        assert {first[j], last[j]} <= set(y[out == j].tolist())
    assert (first[target == 0] > last[target == 0]).all()


@pytest.mark.parametrize("kw", [{}, {"framework": "one-stage"}, {"framework": "hybrid"},
                                {"framework": "one-stage", "remap": "quantile"},
                                {"constructor": "heuristic"}, {"constructor": "staircase"},
                                {"constructor": "discrete-gaussian", "delta": 1e-4}])
def test_confidence_sets_of_every_framework(kw):
    rng = np.random.default_rng(3)
    c = rng.geometric(0.25, size=600) - 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = privatize_counts(c, 1.0, upper=20, seed=4, **kw)
    cs = confidence_sets(r, 0.05)
    exact = kw.get("framework") is None and kw.get("constructor") != "discrete-gaussian"
    assert cs.exact == exact
    assert cs.covers(np.minimum(c, 20), r.counts).mean() > 0.9
    d = cs.describe()
    assert d["over"] == "the released rows" and d["width"]["mean"] >= 0


def test_a_histogram_drawn_by_numpys_multinomial_gets_float_sets():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = privatize_counts(None, 1.0, upper=3, histogram=[6 * 10**8] * 4, seed=0)
    assert r.sampler["kind"] == "float multinomial"
    cs = confidence_sets(r, 0.05)
    assert not cs.exact and "float rows" in cs.method
    assert cs.describe()["width"]["mean"] is not None


# ------------------------------------------------------------------ the band
def _exact_level(n, t, s):
    r = mpmath.e ** (-1 / mpmath.mpf(s))

    def p(k):
        return (1 - r) / (1 + r) * r ** abs(k)

    return sum(p(x) * sum(p(k) for k in range(x - t, x + t + 1)) ** (n - 1)
               for x in range(-90, 91))


@pytest.mark.parametrize("n,s", [(2, 1.0), (3, 2.5), (6, 0.7)])
def test_discrete_laplace_bound_is_the_least_integer_of_the_exact_law(n, s):
    c = int(max_difference_bound(n, 0.05, noise="discrete-laplace", scale=s))
    assert _exact_level(n, c, s) >= 0.95 > _exact_level(n, c - 1, s)


@pytest.mark.parametrize("noise", ["laplace", "gaussian", "discrete-gaussian"])
def test_the_other_laws_bound_the_max_by_simulation(noise):
    rng = np.random.default_rng(1)
    n, scale = 31, 2.0
    c = max_difference_bound(n, 0.05, noise=noise, scale=scale)
    if noise == "laplace":
        X = rng.laplace(0, scale, size=(100_000, n))
    else:
        X = rng.normal(0, scale, size=(100_000, n))
        if noise == "discrete-gaussian":  # rejection from the rounded normal is close enough
            X = np.round(X)
    W = np.abs(X[:, :1] - X[:, 1:]).max(axis=1)
    assert 0.945 <= (W <= c).mean() <= 0.96


@given(st.lists(st.integers(0, 40), min_size=2, max_size=25).filter(lambda v: sum(v) > 0),
       st.integers(0, 2**32 - 1), st.floats(0.2, 5.0))
def test_isotonic_cdf_stays_within_the_max_difference(eta, seed, scale):
    """Section 3.2: the isotonic projection of the CDF moves no point further from a monotone
    CDF than the raw CDF is at its worst."""
    eta = np.array(eta)
    N = eta.sum()
    X = np.random.default_rng(seed).laplace(0, scale, size=eta.size)
    V = eta + X - np.roll(X, -1)
    z = isotonic_cdf(V / N)
    W = np.abs(X[0] - X[1:]).max()
    F = np.cumsum(eta) / N
    assert np.abs(np.cumsum(z) - F).max() <= W / N + 1e-12


def test_band_of_a_release_and_its_refusals():
    rng = np.random.default_rng(5)
    c = rng.geometric(0.2, size=3000) - 1
    r = privatize_counts(c, 1.0, upper=30, seed=0)
    b = distribution_band(r, 0.05)
    assert b.centre == "z" and b.noise["law"] == "laplace" and not b.exact
    lo, hi = b.cell_bounds()
    assert (lo <= hi).all()
    d = b.describe()
    assert d["level"] == 0.95 and len(d["cdf_lower"]) == 31
    with pytest.raises(ValueError, match="^framework: the one-stage"):
        distribution_band(privatize_counts(c, 1.0, upper=30, seed=0, framework="one-stage"), 0.05)
    with pytest.raises(ValueError, match="^constructor: 'staircase' is one-stage"):
        distribution_band(privatize_counts(c, 1.0, upper=30, seed=0, constructor="staircase"),
                          0.05)
    with pytest.raises(ValueError, match="^privatizer: the band is proved"):
        distribution_band(privatize_counts(c, 1.0, upper=30, seed=0, privatizer="laplace"), 0.05)
    hybrid = distribution_band(privatize_counts(c, 1.0, upper=30, seed=0, framework="hybrid"),
                               0.05)
    assert hybrid.centre == "V"


def test_secure_stage_one_gets_the_discrete_law():
    c = np.random.default_rng(2).geometric(0.3, size=500) - 1
    r = privatize_counts(c, 1.0, upper=12)
    b = distribution_band(r, 0.05)
    assert b.noise["law"] == "discrete-laplace" and float(b.noise["c"]).is_integer()


# ------------------------------------------------------------------ totals
def _law_of_sum(T, xs):
    p = np.array([1.0])
    for x in xs:
        p = np.convolve(p, np.array([float(v) for v in T[x]]))
    return p


@pytest.mark.parametrize("method", ["chernoff", "bonferroni"])
@pytest.mark.parametrize("kind", ["northwest", "not monotone"])
def test_totals_have_their_level_for_every_vector_of_true_counts(method, kind):
    """Enumeration: for every ``x`` in ``{0..4}^3`` the probability, over the law of ``Y``, that
    the interval computed from ``Y`` holds ``sum x`` is at least ``1 - alpha``."""
    n, k, alpha = 5, 3, 0.2
    z = [0.35, 0.25, 0.2, 0.1, 0.1]
    if kind == "northwest":
        mech = structured_sampler("northwest", z, lam=2, n=n)
        T = mech.matrix(drawn=True)
    else:  # a positive matrix whose rows are not stochastically ordered
        w = np.random.default_rng(11).integers(1, 9, size=(n, n))
        T = np.array([[Fraction(int(v), int(row.sum())) for v in row] for row in w])
        mech = T
    assert row_law(mech).monotone == (kind == "northwest")
    # the interval for every released total Y (rows chosen to sum to Y)
    intervals = {}
    for Y in range(k * (n - 1) + 1):
        released = [min(n - 1, max(0, Y - (n - 1) * i)) for i in range(k)]
        intervals[Y] = total_intervals(mech, released, [list(range(k))], alpha,
                                       method=method)[0]
    if method == "bonferroni":  # the Bonferroni interval depends on the rows, not only on Y
        by_rows = {ys: total_intervals(mech, list(ys), [list(range(k))], alpha,
                                       method=method)[0]
                   for ys in itertools.product(range(n), repeat=k)}
        for xs in itertools.product(range(n), repeat=k):
            p = sum((math.prod((T[x, y] for x, y in zip(xs, ys, strict=True)), start=Fraction(1))
                     for ys, t in by_rows.items() if t.covers(sum(xs))), Fraction(0))
            assert p >= 1 - Fraction(alpha)
        return
    for xs in itertools.product(range(n), repeat=k):
        law = _law_of_sum(T, xs)
        p = sum(law[Y] for Y in range(law.size) if intervals[Y].covers(sum(xs)))
        assert p >= 1 - alpha - 1e-12


@given(samplers(), st.lists(st.floats(-0.9, 0.9), min_size=1, max_size=4))
def test_structured_cgf_agrees_with_the_drawn_matrix(s, fractions):
    law = row_law(s)
    thetas = np.array(fractions) * law.theta_max
    K = law.cgf(thetas)
    T = s.matrix(drawn=True)
    for i, th in enumerate(thetas):
        for x in range(s.n):
            exact = math.log(sum(float(T[x, j]) * math.exp(th * (j - x)) for j in range(s.n)))
            assert K[i, x] == pytest.approx(exact, rel=1e-9, abs=1e-12)


def test_one_row_bonferroni_is_the_exact_set():
    s = structured_sampler("northwest", [0.4, 0.3, 0.2, 0.1], lam=3)
    t = total_intervals(s, [2, 0, 3], [[2]], 0.05, method="bonferroni")[0]
    cs = neyman_sets(s, 0.05)
    assert t.exact and (t.lower, t.upper) == (cs.lower[3], cs.upper[3])


def test_totals_of_a_release_state_the_top_coding():
    c = np.random.default_rng(8).geometric(0.1, size=400) - 1
    r = privatize_counts(c, 1.0, upper="auto", seed=1)
    t = total_interval(r, np.arange(40), 0.05)
    assert t.private_upper and "chosen privately" in t.describe()["top_coding"]
    assert t.mean_lower == t.lower / 40
    given = total_interval(privatize_counts(c, 1.0, upper=60, seed=1), np.arange(40), 0.05)
    assert "public parameter" in given.describe()["top_coding"]


def test_groups_of_a_no_split_release():
    c = np.random.default_rng(9).geometric(0.2, size=900) - 1
    x = np.minimum(c, 25)
    groups = [np.arange(i, 900, 30) for i in range(30)]
    for kw in ({"framework": "one-stage"}, {"framework": "hybrid", "remap": "quantile"}):
        r = privatize_counts(c, 1.0, upper=25, seed=2, **kw)
        iv = group_intervals(r, groups, 0.05)
        assert all(t.covers(int(x[g].sum())) for t, g in zip(iv, groups, strict=True))
        assert all(len(t.released) in (1, 2) and not t.exact for t in iv)


def test_the_column_uncertainty_holds_no_confidential_number():
    """A histogram release: the cells of its joint histogram of (true, released) counts,
    whose rows are the true histogram, appear in the pickled result but nowhere in the
    pickled public inputs."""
    import pickle

    from dpfix.release.uncertainty import ColumnUncertainty

    eta = [10**12 + 12345, 3 * 10**11 + 777, 2 * 10**11 + 4321, 10**9 + 99, 5 * 10**8 + 6543]
    r = privatize_counts(None, 1.0, upper=3, histogram=eta, seed=0)
    u = ColumnUncertainty.of(r)
    secrets = [np.int64(v).tobytes() for v in r.joint.ravel() if v > 10**6]
    assert any(v in pickle.dumps(r) for v in secrets)  # the check can see them
    blob = pickle.dumps(u)
    assert not any(v in blob for v in secrets)
    assert (u.histogram == r.output_histogram).all() and u.band[1] == "z"
    assert u.confidence_sets(0.05).describe() == confidence_sets(r, 0.05).describe()


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize("alpha", [0, 1, -0.1, 1.5, float("nan"), True, "0.05", None])
def test_alpha_outside_the_open_unit_interval_is_one_line(alpha):
    with pytest.raises(ValueError, match=r"^alpha: must be a number in \(0, 1\)"):
        check_alpha(alpha)
    s = structured_sampler("truncated-geometric", lam=2, n=3)
    with pytest.raises(ValueError, match="^alpha:"):
        neyman_sets(s, alpha)
    with pytest.raises(ValueError, match="^alpha:"):
        cdf_band([0.5, 0.5], alpha, N=10, noise="laplace", scale=1.0)
    with pytest.raises(ValueError, match="^alpha:"):
        total_intervals(s, [0, 1], [[0, 1]], alpha)


@pytest.mark.parametrize("rows,match", [([0, 12], "position 12 is not a row"),
                                        ([-1], "position -1 is not a row"),
                                        ([], "the group has no rows"),
                                        ([1, 1], "position 1 is given twice"),
                                        ([True, False], "a mask must have one entry per row"),
                                        ([0.5], "expected integer positions")])
def test_rows_not_in_the_table_are_one_line(rows, match):
    r = privatize_counts(list(range(12)), 1.0, upper=12, seed=0)
    with pytest.raises(ValueError, match=f"^rows: {match}"):
        total_interval(r, rows, 0.05)


def test_a_histogram_release_has_no_rows_to_total():
    r = privatize_counts(None, 1.0, upper=3, histogram=[5, 4, 3, 2], seed=0)
    assert confidence_sets(r, 0.05).describe()["width"]["mean"] is not None
    with pytest.raises(ValueError, match="^rows: a histogram release has no rows"):
        total_interval(r, [0], 0.05)


def test_unknown_method_and_noise_are_one_line():
    s = structured_sampler("truncated-geometric", lam=2, n=3)
    with pytest.raises(ValueError, match="^method: unknown 'exact'"):
        total_intervals(s, [0, 1], [[0, 1]], 0.05, method="exact")
    with pytest.raises(ValueError, match="^noise: unknown 'cauchy'"):
        max_difference_bound(3, 0.05, noise="cauchy", scale=1.0)


# ------------------------------------------------------------------ the coverage study
@needs_data
def test_quick_coverage_study():
    from dpfix.experiments.coverage import QUICK_CASES, run_case

    rows = run_case(QUICK_CASES[0], releases=200)
    assert {r["kind"] for r in rows} == {"counts", "band", "total (chernoff)"}
    for r in rows:
        assert r["coverage"] >= 0.92, r


@pytest.mark.full
@needs_data
def test_full_coverage_study():
    """At nominal 95%: at least 94% observed over 1,000 releases, for every kind and setting."""
    from dpfix.experiments.coverage import CASES, coverage_study

    rows = coverage_study(CASES, releases=1000)
    low = [r for r in rows if r["coverage"] < 0.94]
    assert not low, low
