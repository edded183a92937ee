"""The two-stage pipeline: budgets, the privacy gate, drawing rows, accuracy."""

import json
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpfix.constructors as C
import dpfix.release.frameworks as P
from dpfix.release.frameworks import apply_mechanism
from dpfix.release.options import rule_of_thumb_split, split_budget
from dpfix.release.pipeline import privatize_counts
from dpfix.release.result import NotPrivateError
from dpfix.theory.mechanism import Mechanism

ALL = ["heuristic", "lp", "unfixed", "truncated-geometric", "staircase"]


def synthetic(N=5000, upper=30, seed=0):
    rng = np.random.default_rng(seed)
    return rng.negative_binomial(2, 0.25, N)


def level_from_logs(L):
    """The privacy level of a log matrix, computed here independently of Mechanism."""
    a, b = L[:-1], L[1:]
    both = np.isneginf(a) & np.isneginf(b)
    with np.errstate(invalid="ignore"):
        d = np.abs(a - b)
    return float(np.where(both, 0.0, d).max())


# ------------------------------------------------------------------ budgets
def test_rule_of_thumb_by_hand():
    # f = 0.106 + (0.639 - 0.106) e^(-2.869 eps_t), paper Section 1.2 and Appendix F
    for eps in (0.1, 1.0, 5.0):
        assert rule_of_thumb_split(eps) == pytest.approx(0.106 + 0.533 * math.exp(-2.869 * eps),
                                                         rel=1e-15)
    eps_1, eps_2 = split_budget(1.0)
    assert eps_1 + eps_2 == 1.0 and eps_1 == pytest.approx(0.1362507635, rel=1e-9)


def test_float_split_is_the_stage1_fraction_and_is_reported():
    r = privatize_counts(synthetic(), 2.0, upper=30, split=0.25, seed=1)
    assert (r.eps_1, r.eps_2) == (0.5, 1.5) and r.eps == 2.0
    rep = r.public_report()["budget"]
    assert rep["split"] == {"rule": "fixed fraction", "fraction": 0.25}
    assert (rep["eps_t"], rep["eps_1"], rep["eps_2"], rep["delta"]) == (2.0, 0.5, 1.5, 0.0)
    rot = privatize_counts(synthetic(), 2.0, upper=30, seed=1).public_report()["budget"]
    assert rot["split"]["rule"] == "rule-of-thumb"
    assert rot["split"]["fraction"] == pytest.approx(rule_of_thumb_split(2.0))


@pytest.mark.parametrize("kw, match", [
    ({"eps": 0}, "^eps: "), ({"eps": -1.0}, "^eps: "),
    ({"eps": float("nan")}, "^eps: "), ({"eps": float("inf")}, "^eps: "),
    ({"eps": "1"}, "^eps: "), ({"upper": 0}, "upper"), ({"upper": 2.5}, "upper"),
    ({"split": 0.0}, "split"), ({"split": 1.0}, "split"), ({"split": "half"}, "split"),
    ({"split": float("nan")}, "split"), ({"constructor": "simplex"}, "constructor"),
    ({"selector": "median"}, "selector"), ({"privatizer": "gauss"}, "privatizer"),
    ({"postprocess": "round"}, "postprocess"), ({"seed": -1}, "seed"),
    ({"privatizer": "cyclic-gaussian"}, "delta"), ({"delta": 1e-6}, "delta"),
    ({"constructor": "staircase", "split": 0.3}, "one-stage"),
    ({"constructor": "staircase", "privatizer": "cyclic-gaussian", "delta": 1e-6},
     "privatizer: does not apply"),
    ({"constructor": "staircase", "delta": 1e-6}, "delta: does not apply"),
    ({"constructor": "truncated-geometric", "postprocess": "clip-renormalise"},
     "postprocess: does not apply"),
    ({"constructor": "lp", "selector": "random"}, "selector: applies to the heuristic"),
    ({"constructor": "unfixed", "selector": "max"}, "selector: applies to the heuristic"),
    ({"constructor": "lp", "upper": 401}, "upper at most 400.*heuristic"),
])
def test_bad_parameters_are_refused(kw, match):
    args = {"eps": 1.0, "upper": 10, **kw}
    eps = args.pop("eps")
    with pytest.raises(ValueError, match=match):
        privatize_counts([0, 1, 2], eps, **args)


@pytest.mark.parametrize("counts, match", [
    ([], "no rows"), ([0.5, 1.0], "integers"), ([1, -2], "non-negative"),
    ([[1, 2]], "1 dimension"), (np.array([1.0, np.nan]), "integers"),
])
def test_bad_counts_are_refused(counts, match):
    with pytest.raises(ValueError, match=match):
        privatize_counts(counts, 1.0, upper=5)


# ------------------------------------------------------------------ the result
@pytest.mark.parametrize("constructor", ["heuristic", "lp", "unfixed"])
def test_estimate_is_the_count_error_of_T_under_z(constructor):
    r = privatize_counts(synthetic(), 1.0, upper=20, constructor=constructor, seed=4)
    assert r.estimated_count_error == r.mechanism.count_error(r.z, "abs")
    T, i = r.mechanism.T, np.arange(r.n)  # by hand: sum_i z_i sum_j T_ij |i - j|
    by_hand = float((r.z[:, None] * T * np.abs(i[:, None] - i[None, :])).sum())
    assert r.estimated_count_error == pytest.approx(by_hand, rel=1e-12)
    assert r.z.shape == (21,) and abs(r.z.sum() - 1) < 1e-12 and (r.z >= 0).all()


def test_one_stage_constructors_spend_everything_on_the_counts():
    r = privatize_counts(synthetic(), 1.0, upper=20, constructor="truncated-geometric", seed=0)
    assert (r.eps_1, r.eps_2, r.z, r.estimated_count_error, r.stage1) == (0.0, 1.0, None, None,
                                                                            None)
    assert r.public_report()["budget"]["split"]["rule"] == "none (one-stage constructor)"


def test_topcoding_counts_and_stays_out_of_the_public_report():
    d = np.array([0, 3, 7, 12, 5, 40, 2])
    r = privatize_counts(d, 1.0, upper=5, seed=2)
    assert r.topcoded == 3 and r.n == 6 and r.N == 7
    assert r.counts.min() >= 0 and r.counts.max() <= 5
    text = json.dumps(r.public_report())
    assert "topcoded" not in text and "zeta" not in text


def test_public_report_is_json_and_names_the_samplers():
    seeded = privatize_counts(synthetic(), 1.0, upper=10, seed=3).public_report()
    json.dumps(seeded, allow_nan=False)
    assert "NOT FOR PRODUCTION" in seeded["samplers"]["stage1"]
    assert "NOT FOR PRODUCTION" in seeded["samplers"]["stage2"]
    secure = privatize_counts(synthetic(), 1.0, upper=10).public_report()
    assert secure["stage1"]["secure"] is True and "OpenDP" in secure["samplers"]["stage1"]
    assert "os.urandom" in secure["samplers"]["stage2"] and secure["seed"] is None
    assert "post-processing" in secure["samplers"]["privacy_statement"]


def test_cyclic_gaussian_reports_its_delta():
    r = privatize_counts(synthetic(), 1.0, upper=10, privatizer="cyclic-gaussian", delta=1e-6,
                         seed=0)
    assert r.delta == 1e-6 and r.stage1.notion == "approx-DP"
    assert r.public_report()["budget"]["delta"] == 1e-6


# ------------------------------------------------------------------ the privacy gate
def test_non_dp_mechanism_is_refused_before_any_row_is_drawn(monkeypatch):
    drawn, told = [], []
    monkeypatch.setattr(P, "apply_mechanism", lambda *a, **k: drawn.append(a))

    def identity(z, eps, **kw):  # rows sum to 1 and z I = z, but it is not DP at all
        n = len(z)
        return Mechanism.from_matrix(np.eye(n), eps=eps, fixed_point=np.asarray(z))
    monkeypatch.setattr(C, "heuristic", identity)
    with pytest.raises(NotPrivateError, match="exceeds eps_2"):
        privatize_counts(synthetic(), 1.0, upper=10, constructor="heuristic", seed=0,
                         progress=told.append)
    assert drawn == [] and told == []


def test_mechanism_private_only_at_the_total_budget_is_refused(monkeypatch):
    real = C.heuristic
    drawn = []
    monkeypatch.setattr(P, "apply_mechanism", lambda *a, **k: drawn.append(a))
    # a constructor that silently spends eps_t instead of eps_2
    monkeypatch.setattr(C, "heuristic", lambda z, eps, **kw: real(z, 1.0, **kw))
    with pytest.raises(NotPrivateError):
        privatize_counts(synthetic(), 1.0, upper=10, constructor="heuristic", seed=0)
    assert drawn == []


@pytest.mark.parametrize("constructor", ALL)
def test_realized_level_is_at_most_eps_2_without_tolerance(constructor):
    upper = 12 if constructor == "lp" else 50
    r = privatize_counts(synthetic(), 1.0, upper=upper, constructor=constructor, seed=5)
    assert r.eps_construction < r.eps_2
    assert r.privacy_level == r.mechanism.privacy_level() <= r.eps_2
    assert level_from_logs(np.log(r.mechanism.T) if r.mechanism.exact
                           else r.mechanism.log_matrix) <= r.eps_2
    assert r.counts.shape == (5000,) and r.counts.min() >= 0 and r.counts.max() <= upper


@pytest.mark.parametrize("eps_t", [0.1, 5.0])
@pytest.mark.parametrize("upper", [50, 500])
def test_heuristic_float_path_is_eps2_dp_at_extreme_budgets(eps_t, upper):
    d = synthetic(N=3000) * (10 if upper == 500 else 1)
    r = privatize_counts(d, eps_t, upper=upper, constructor="heuristic", seed=11)
    mech = r.mechanism
    assert mech.constructor == "heuristic" and not mech.exact
    assert level_from_logs(mech.log_matrix) <= r.eps_2  # strict: no tolerance
    assert mech.is_dp(r.eps_2, rtol=0.0)
    assert mech.row_sum_error() < 1e-9 and mech.fixed_point_error(r.z) < 1e-9


@given(st.lists(st.integers(0, 15), min_size=1, max_size=40), st.integers(1, 12),
       st.floats(0.05, 6.0), st.sampled_from(["heuristic", "unfixed", "staircase"]))
def test_any_small_table(counts, upper, eps, constructor):
    r = privatize_counts(counts, eps, upper=upper, constructor=constructor, seed=0)
    assert r.privacy_level <= r.eps_2 and math.isclose(r.eps_1 + r.eps_2, eps, rel_tol=1e-15)
    assert r.counts.shape == (len(counts),)
    assert r.counts.min() >= 0 and r.counts.max() <= upper


# ------------------------------------------------------------------ drawing rows
def test_reproducible_for_a_seed():
    d = synthetic()
    a, b = (privatize_counts(d, 1.0, upper=30, seed=9) for _ in range(2))
    assert np.array_equal(a.counts, b.counts) and np.array_equal(a.z, b.z)
    c = privatize_counts(d, 1.0, upper=30, seed=10)
    assert not np.array_equal(a.counts, c.counts)


def test_identity_mechanism_returns_every_row_in_place():
    rng = np.random.default_rng(0)
    d = rng.integers(0, 40, 10_000)
    out = apply_mechanism(Mechanism.from_matrix(np.eye(40), eps=1.0), d, rng)
    assert np.array_equal(out, d)


def test_rows_get_independent_draws_from_their_row_of_T():
    # T = truncated geometric, n = 4, eps = 1: compare every row's empirical
    # frequencies with T, and the first and second halves of each group.
    mech = C.truncated_geometric(4, 1.0)
    T = mech.T
    rng = np.random.default_rng(1)
    d = rng.integers(0, 4, 200_000)
    out = apply_mechanism(mech, d, np.random.default_rng(2))
    for i in range(4):
        rows = np.flatnonzero(d == i)
        for part in (rows, rows[: len(rows) // 2], rows[len(rows) // 2:]):
            freq = np.bincount(out[part], minlength=4) / len(part)
            sigma = np.sqrt(T[i] * (1 - T[i]) / len(part))
            assert (np.abs(freq - T[i]) <= 6 * sigma).all()  # 6 sigma per cell


def test_progress_sees_fixed_shares_never_the_histogram():
    mech = C.truncated_geometric(10, 1.0)
    told = []
    for d in (np.zeros(1000, dtype=int), np.arange(1000) % 10):
        calls = []
        apply_mechanism(mech, d, np.random.default_rng(0), calls.append)
        told.append(calls)
    assert told[0] == told[1] and sum(told[0]) == 1000


def test_apply_refuses_counts_outside_T():
    with pytest.raises(ValueError, match="0..2"):
        apply_mechanism(C.truncated_geometric(3, 1.0), [0, 3], np.random.default_rng(0))


# ------------------------------------------------------------------ accuracy
@pytest.fixture(scope="module")
def large():
    rng = np.random.default_rng(3)
    N, upper = 1_000_000, 30
    d = np.minimum(rng.negative_binomial(3, 0.3, N), upper)
    return d, np.bincount(d, minlength=upper + 1) / N, upper


def close_to_target(zhat, z, zeta, N):
    """zhat_j - z_j = (zhat_j - E_j) + ((zeta - z) T)_j with E = zeta T when zT = z; the
    second term is at most ||zeta - z||_1 and Var(zhat_j) <= E_j / N: 6 sigma per cell."""
    gap = np.abs(zeta - z).sum()
    return np.abs(zhat - z) <= gap + 6 * np.sqrt((z + gap) / N) + 1e-12


def test_output_distribution_is_close_to_z_for_a_fixed_point_constructor(large):
    d, zeta, upper = large
    r = privatize_counts(d, 2.0, upper=upper, seed=6)
    assert r.mechanism.fixed_point_error(r.z) < 1e-9
    assert close_to_target(r.output_distribution, r.z, zeta, len(d)).all()
    # the same check tells the unfixed optimum (zT != z) apart
    u = privatize_counts(d, 2.0, upper=upper, constructor="unfixed", seed=6)
    assert not close_to_target(u.output_distribution, u.z, zeta, len(d)).all()


def test_estimated_count_error_predicts_the_realized_one(large):
    d, zeta, upper = large
    r = privatize_counts(d, 2.0, upper=upper, seed=7)
    err = np.abs(r.counts - d)
    # E|out - d| = <zeta|i-j|, T> differs from the estimate <z|i-j|, T> by at most
    # ||zeta - z||_1 (n - 1); the sample mean is within 6 standard errors of E.
    bound = np.abs(zeta - r.z).sum() * upper + 6 * err.std() / np.sqrt(len(d))
    assert abs(err.mean() - r.estimated_count_error) <= bound


# ------------------------------------------------------------------ histogram input
def test_histogram_input_matches_the_row_input():
    d = synthetic(N=3000)
    eta = np.bincount(d)
    rows = privatize_counts(d, 1.0, upper=20, seed=3)
    hist = privatize_counts(None, 1.0, upper=20, histogram=eta, seed=3)
    # same public target and mechanism (stage 1 sees the same top-coded eta)
    assert np.array_equal(rows.z, hist.z) and hist.counts is None
    assert np.array_equal(rows.mechanism.T, hist.mechanism.T)
    assert (hist.N, hist.topcoded) == (rows.N, rows.topcoded)
    assert np.array_equal(hist.joint.sum(axis=1), np.bincount(np.minimum(d, 20)))
    assert hist.output_histogram.sum() == 3000 and len(hist.output_histogram) == 21


def test_apply_histogram_is_a_sum_of_multinomials():
    T = np.array([[0.5, 0.3, 0.2], [0.25, 0.5, 0.25], [0.2, 0.3, 0.5]])
    M = Mechanism.from_matrix(T, eps=1.0)
    eta = np.array([10**12, 0, 3 * 10**12])
    joint = P.apply_histogram(M, eta, np.random.default_rng(1))
    assert joint[1].sum() == 0 and (joint.sum(axis=1) == eta).all()
    # each row is Mult(eta_i, T[i]): within 6 standard deviations of its mean
    for i in (0, 2):
        sd = np.sqrt(eta[i] * T[i] * (1 - T[i]))
        assert (np.abs(joint[i] - eta[i] * T[i]) < 6 * sd).all()


@pytest.mark.parametrize("eta, match", [([0, 0], "no rows"), ([1, -1], "non-negative"),
                                        ([0.5, 1.0], "integers"),
                                        ([2**62, 1], "exceeds the cap")])
def test_bad_histograms_are_refused(eta, match):
    with pytest.raises(ValueError, match=match):
        privatize_counts(None, 1.0, upper=3, histogram=np.array(eta), seed=0)


def test_northwest_constructor_end_to_end():
    from dpfix.io.data import synthetic_counts

    counts = synthetic_counts(rows=3000, seed=5)
    r = privatize_counts(counts, 1.0, upper=40, constructor="northwest", seed=3)
    h = privatize_counts(counts, 1.0, upper=40, constructor="heuristic", seed=3)
    assert r.mechanism.constructor == "northwest" and r.privacy_level <= r.eps_2
    assert np.array_equal(r.z, h.z)  # same stage 1
    assert r.mechanism.fixed_point_error(r.z) < 1e-9
    assert r.estimated_count_error <= h.estimated_count_error + 1e-12


# ------------------------------------------------------------------ registry options
def test_discrete_gaussian_reports_and_checks_its_delta():
    d = synthetic(N=2000)
    delta = 1.0 / (d.size + 1)
    r = privatize_counts(d, 1.0, upper=20, constructor="discrete-gaussian", delta=delta, seed=4)
    assert r.mechanism.constructor == "discrete-gaussian" and r.z is None
    assert r.eps_1 == 0.0 and r.eps_2 == 1.0 and r.delta == delta
    report = r.public_report()
    assert report["budget"]["delta"] == delta and "delta" in report["mechanism"]["dp_check"]
    with pytest.raises(ValueError, match="give delta"):
        privatize_counts(d, 1.0, upper=20, constructor="discrete-gaussian", seed=4)


def test_discrete_gaussian_with_too_large_a_delta_is_refused(monkeypatch):
    real = C.discrete_gaussian
    drawn = []
    monkeypatch.setattr(P, "apply_mechanism", lambda *a, **k: drawn.append(a))
    # a constructor that calibrates for a delta 100 times the one asked for
    monkeypatch.setattr(C, "discrete_gaussian",
                        lambda n, eps, delta: replace(real(n, eps, delta * 100), delta=delta))
    with pytest.raises(NotPrivateError, match="exceeds delta"):
        privatize_counts(synthetic(), 1.0, upper=10, constructor="discrete-gaussian",
                         delta=1e-6, seed=0)
    assert drawn == []


def test_lp_solver_and_time_limit_reach_lp_optimum(monkeypatch):
    seen = []

    def fake(z, eps, **kw):
        seen.append(kw)
        raise RuntimeError("lp_optimum: HiGHS highs-ipm did not solve the LP: Time limit reached")
    monkeypatch.setattr(C, "lp_optimum", fake)
    with pytest.raises(P.TimeLimitReached) as hit:
        privatize_counts(synthetic(), 1.0, upper=10, constructor="lp", solver="highs-ipm",
                         time_limit=2.0, seed=0)
    assert seen[0]["solver"] == "highs-ipm" and seen[0]["time_limit"] == 2.0
    assert hit.value.z.shape == (11,) and hit.value.eps_1 > 0 and hit.value.eps_2 > 0


@pytest.mark.parametrize("kw, match", [({"solver": "highs-ds"}, "lp constructor only"),
                                       ({"time_limit": 1.0}, "lp constructor only")])
def test_lp_options_are_refused_elsewhere(kw, match):
    with pytest.raises(ValueError, match=match):
        privatize_counts(synthetic(), 1.0, upper=10, seed=0, **kw)


def test_counts_or_histogram_not_both():
    with pytest.raises(ValueError, match="not both"):
        privatize_counts([1, 2], 1.0, upper=3, histogram=[1, 1], seed=0)
    with pytest.raises(ValueError, match="not both"):
        privatize_counts(None, 1.0, upper=3, seed=0)
