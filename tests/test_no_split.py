"""The one-stage and hybrid frameworks of privatize_counts (docs/no_split.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.constructors.remap import quantile_plan
from dpfix.release.frameworks import complete_no_split
from dpfix.release.options import AUTO_RULE, FRAMEWORKS, REMAPS, auto_setting, rule_of_thumb_split
from dpfix.release.pipeline import privatize_counts
from dpfix.release.privatizers.deconvolve import ESTIMATORS
from dpfix.sampling import random_source
from dpfix.sampling.quantile import apportion, quantile_joint, quantile_remap
from dpfix.theory.metrics import wasserstein1

RNG = np.random.default_rng(5)
COUNTS = np.minimum(RNG.poisson(3.0, size=4000), 12)


@pytest.mark.parametrize("framework", ["one-stage", "hybrid"])
@pytest.mark.parametrize("remap", REMAPS)
def test_rows_budget_and_report(framework: str, remap: str) -> None:
    r = privatize_counts(COUNTS, 1.0, upper=12, framework=framework, remap=remap, seed=3)
    assert r.counts.shape == COUNTS.shape and r.counts.min() >= 0 and r.counts.max() <= 12
    assert math.isclose(r.eps_1 + r.eps_2, 1.0) and r.privacy_level <= r.eps_2
    assert (r.eps_1 == 0) == (framework == "one-stage")
    assert (r.stage1 is None) == (framework == "one-stage")
    assert np.isclose(r.z.sum(), 1) and (r.z >= 0).all()
    rep = r.public_report()
    assert rep["framework"]["name"] == framework and rep["framework"]["remap"] == remap
    assert "post-processing" in rep["budget"]["composition"]
    assert "post-processing" in rep["samplers"]["privacy_statement"]
    assert r.released_histogram.sum() == COUNTS.size
    if remap == "quantile":  # the output histogram is the estimate, apportioned
        assert r.output_histogram.tolist() == apportion(r.z, COUNTS.size).tolist()
        assert r.estimated_count_error is None
    else:
        assert r.estimated_count_error == pytest.approx(r.mechanism.count_error(r.z, "abs"))


def test_seeded_runs_repeat_and_differ_by_seed() -> None:
    a = privatize_counts(COUNTS, 1.0, upper=12, framework="hybrid", seed=7)
    b = privatize_counts(COUNTS, 1.0, upper=12, framework="hybrid", seed=7)
    c = privatize_counts(COUNTS, 1.0, upper=12, framework="hybrid", seed=8)
    assert np.array_equal(a.counts, b.counts) and not np.array_equal(a.counts, c.counts)


def test_secure_by_default() -> None:
    r = privatize_counts(COUNTS[:200], 1.0, upper=12, framework="one-stage")
    assert r.sampler["secure"] and r.seed is None


def test_hybrid_split_rule_and_explicit_fraction() -> None:
    r = privatize_counts(COUNTS, 2.0, upper=12, framework="hybrid", seed=1)
    assert r.split_rule == "rule-of-thumb" and r.eps_1 == pytest.approx(
        2.0 * rule_of_thumb_split(2.0))
    r = privatize_counts(COUNTS, 2.0, upper=12, framework="hybrid", split=0.25, seed=1)
    assert r.eps_1 == pytest.approx(0.5) and r.split_rule == "fixed fraction"


def test_large_budget_recovers_the_data() -> None:
    """At eps_t = 12 the noise is almost never non-zero: outputs are the inputs."""
    r = privatize_counts(COUNTS, 12.0, upper=12, framework="one-stage", seed=2)
    assert np.mean(r.counts != COUNTS) < 0.001
    zeta = np.bincount(COUNTS, minlength=13) / COUNTS.size
    assert wasserstein1(r.z, zeta) < 1e-3


@pytest.mark.parametrize("framework", ["one-stage", "hybrid"])
@pytest.mark.parametrize("remap", REMAPS)
def test_histogram_input(framework: str, remap: str) -> None:
    eta = np.bincount(COUNTS, minlength=13)
    r = privatize_counts(None, 1.0, upper=12, histogram=eta, framework=framework, remap=remap,
                         seed=4)
    assert r.counts is None and r.joint.sum(axis=1).tolist() == eta.tolist()
    assert r.output_histogram.sum() == eta.sum()
    if remap == "quantile":
        assert r.output_histogram.tolist() == apportion(r.z, int(eta.sum())).tolist()


def test_rows_and_histogram_input_agree_in_distribution() -> None:
    """Same target and noise law: the two inputs' output histograms are close."""
    eta = np.bincount(COUNTS, minlength=13)
    rows = privatize_counts(COUNTS, 2.0, upper=12, framework="one-stage", seed=9)
    hist = privatize_counts(None, 2.0, upper=12, histogram=eta, framework="one-stage", seed=10)
    p = rows.output_histogram / COUNTS.size
    q = hist.output_histogram / COUNTS.size
    assert wasserstein1(p, q) < 0.15


@pytest.mark.parametrize("kw, match", [
    ({"framework": "three-stage"}, "framework: unknown"),
    ({"framework": "one-stage", "constructor": "heuristic"}, "constructor: the one-stage"),
    ({"estimator": "em"}, "estimator: applies to the one-stage and hybrid"),
    ({"remap": "quantile"}, "remap: applies to the one-stage and hybrid"),
    ({"framework": "one-stage", "split": 0.2}, "split: does not apply"),
    ({"framework": "hybrid", "privatizer": "laplace"}, "privatizer: does not apply"),
    ({"framework": "hybrid", "postprocess": "clip-renormalise"}, "postprocess: does not apply"),
    ({"framework": "one-stage", "estimator": "median"}, "estimator: unknown"),
    ({"framework": "one-stage", "remap": "nearest"}, "remap: unknown"),
])
def test_bad_combinations_are_refused(kw: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        privatize_counts(COUNTS, 1.0, upper=12, seed=0, **kw)


def test_draw_false_then_complete() -> None:
    """The Dask engine's path: G drawn by the caller, then complete_no_split."""
    eta = np.bincount(COUNTS, minlength=13)
    p = privatize_counts(None, 1.0, upper=12, histogram=eta, framework="hybrid", seed=2,
                         draw=False)
    assert p.z is None and p.stage2.constructor == "truncated-geometric" and p.stage1 is not None
    y = p.stage2.sample(COUNTS, random_source(3))
    r = complete_no_split(p, np.bincount(y, minlength=13))
    assert np.isclose(r.z.sum(), 1) and r.stage2.constructor == "northwest"
    assert r.deconvolution.estimator == "em" and r.released_histogram.sum() == COUNTS.size
    out = r.stage2.remap.apply(y, random_source(4))
    assert out.shape == y.shape
    with pytest.raises(ValueError, match="h: expected 13"):
        complete_no_split(p, np.bincount(y, minlength=13)[:-1])
    with pytest.raises(ValueError, match="partial: expected"):
        complete_no_split(r, np.bincount(y, minlength=13))


def test_names() -> None:
    assert FRAMEWORKS == ("two-stage", "one-stage", "hybrid", "auto")
    assert "em" in ESTIMATORS


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_auto_applies_the_rule(eps: float) -> None:
    chosen = auto_setting(eps)
    r = privatize_counts(COUNTS, eps, upper=12, framework="auto", seed=1)
    assert r.framework == chosen["framework"] and r.estimator == chosen["estimator"]
    assert r.remap == "northwest" and r.chosen_by.startswith("auto: ")
    same = privatize_counts(COUNTS, eps, upper=12, seed=1, **chosen)
    assert np.array_equal(r.counts, same.counts) and np.array_equal(r.z, same.z)
    assert r.public_report()["framework"]["chosen_by"] == r.chosen_by
    steps = [lo for lo, *_ in AUTO_RULE]
    assert steps[0] == 0 and steps == sorted(steps)


@pytest.mark.parametrize("kw, match", [
    ({"split": 0.3}, "split: framework 'auto' chooses it"),
    ({"estimator": "em"}, "estimator: framework 'auto' chooses it"),
    ({"constructor": "heuristic"}, "constructor: framework 'auto'"),
])
def test_auto_refuses_what_it_chooses(kw: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        privatize_counts(COUNTS, 1.0, upper=12, framework="auto", **kw)


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_every_estimator_runs(estimator: str) -> None:
    r = privatize_counts(COUNTS, 1.0, upper=12, framework="one-stage", estimator=estimator,
                         seed=6)
    assert r.estimator == estimator and np.isclose(r.z.sum(), 1)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=40), st.integers(0, 2**31))
def test_quantile_remap_is_monotone_onto_the_target(y: list, seed: int) -> None:
    yv = np.array(y)
    target = apportion(np.random.default_rng(seed).dirichlet(np.ones(6)), yv.size)
    out = quantile_remap(yv, target, random_source(seed))
    assert np.bincount(out, minlength=6).tolist() == target.tolist()
    for a in range(yv.size):  # monotone: a smaller y never gets a larger output
        assert not ((yv < yv[a]) & (out > out[a])).any()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=4, max_size=4), st.integers(0, 2**31))
def test_quantile_plan_and_joint_margins(h: list, seed: int) -> None:
    if sum(h) == 0:
        return
    target = apportion(np.random.default_rng(seed).dirichlet(np.ones(4)), sum(h))
    P = quantile_plan(h, target)
    assert P.sum(axis=1).tolist() == h and P.sum(axis=0).tolist() == target.tolist()
    rows, cols = np.nonzero(P)  # monotone: the plan's cells run north-west to south-east
    assert (np.diff(rows) >= 0).all() and (np.diff(cols) >= 0).all()
    J = np.random.default_rng(seed).multinomial(sum(h), np.ones(4) / 4, size=1)
    joint_y = np.diag(J[0])
    plan = quantile_plan(J[0], apportion(np.ones(4) / 4, sum(h)))
    out = quantile_joint(joint_y, plan, random_source(seed))
    assert out.sum(axis=0).tolist() == plan.sum(axis=0).tolist()
    assert out.sum(axis=1).tolist() == J[0].tolist()


def test_hybrid_on_a_small_table_never_fails() -> None:
    """A small table (n = 6, N = 50) made the interior point's Newton matrix exactly
    singular in 71 of these 200 runs; the estimate is now always found."""
    counts = np.array([0, 0, 1, 1, 1, 2, 3, 5, 5, 4] * 5)
    for seed in range(40):
        for f in (0.02, 0.05, 0.1, 0.2, 0.35):
            r = privatize_counts(counts, 0.7, upper=5, seed=seed, framework="hybrid", split=f)
            assert np.isclose(r.z.sum(), 1) and (r.z >= 0).all()


def test_auto_rule_is_the_committed_study_rule() -> None:
    """AUTO_RULE is what `dpfix reproduce frontier` chose (docs/figures/frontier_rule.csv)."""
    import csv
    from pathlib import Path

    from dpfix.experiments.frontier import SETTINGS

    path = Path(__file__).resolve().parents[1] / "docs" / "figures" / "frontier_rule.csv"
    rows = list(csv.DictReader(path.open()))
    assert len(rows) == 11
    for row in rows:
        eps, s = float(row["eps"]), SETTINGS[row["setting"]]
        got = auto_setting(eps)
        assert (got["framework"], got["estimator"], got["remap"]) == (s.framework, s.estimator,
                                                                       s.remap), eps
        assert got["split"] == s.split, eps
    grid = [float(r["eps"]) for r in rows]
    changes = [k for k in range(1, len(rows)) if rows[k]["setting"] != rows[k - 1]["setting"]]
    midpoints = [math.sqrt(grid[k - 1] * grid[k]) for k in changes]
    assert [round(m, 2) for m in midpoints] == [lo for lo, *_ in AUTO_RULE[1:]]
