"""The loss rule of ``upper="auto"`` (docs/bounds.md section 2): its scores against brute
force, its sensitivity and monotonicity, its exact law and privacy ratio, the exact sampler's
trials, the bound it lands on, and the bounds study (the ``--full`` test re-runs targets)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.release.bounds import (
    BOUND_PENALTY,
    LOSS_GRID_STEPS,
    SCORE_CAP,
    UPPER_MAX,
    UPPER_SHARE,
    bound_grid,
    choose_upper,
    default_share,
    exact_levels,
    exponential_pmf,
    halvings,
    loss_scores,
    private_upper,
    sample_exponential,
    topcoding_loss,
    trial_law,
)
from dpfix.release.options import stage_split
from dpfix.release.pipeline import privatize_counts
from dpfix.sampling.source import SeededSource, lam_at_most_exp, rational_lam
from helpers import needs_data


def _brute_loss(counts, candidates):
    return [sum(max(0, int(x) - int(c)) for x in counts) for c in candidates]


def _scores(counts, candidates):
    return loss_scores(topcoding_loss(np.bincount(counts), candidates), candidates)


# ------------------------------------------------------------------ the scores
@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 400), min_size=1, max_size=30))
def test_topcoding_loss_is_the_brute_force_sum(counts):
    """``L(c) = sum_i max(0, x_i - c)`` from the histogram, from the sorted counts (through
    ``choose_upper``'s path) and by brute force, on the real grid."""
    grid = bound_grid(500)
    want = _brute_loss(counts, grid)
    assert topcoding_loss(np.bincount(counts), grid).tolist() == want
    penalty = [c * BOUND_PENALTY.numerator // BOUND_PENALTY.denominator for c in grid]
    assert _scores(counts, grid).tolist() == [a + b for a, b in zip(want, penalty, strict=True)]


def test_topcoding_loss_exact_beyond_int64():
    """Counts near ``2^62`` and a histogram of ``2^62`` rows: Python integers, then the cap."""
    grid = np.array([1, 2**61, 2**62], dtype=np.int64)
    from dpfix.release.bounds import _loss_from_sorted  # the counts' path, tested directly

    xs = np.array([3, 2**62, 2**62 + 5], dtype=np.int64)
    want = [min(v, SCORE_CAP) for v in _brute_loss(xs.tolist(), grid.tolist())]
    assert _loss_from_sorted(xs, grid).tolist() == want
    eta = np.array([0, 0, 0, 2**62 - 1], dtype=np.int64)  # 2^62 - 1 rows with count 3
    assert topcoding_loss(eta, [1, 2, 3]).tolist() == [SCORE_CAP, 2**62 - 1, 0]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 300), min_size=1, max_size=25), st.integers(0, 24),
       st.sampled_from([-1, 1]), st.integers(1, 6))
def test_a_count_moved_by_one_moves_every_score_by_zero_or_one_the_same_way(counts, i, sign,
                                                                              c):
    """The sensitivity and monotonicity the proof uses (docs/bounds.md, Lemma 1): moving one
    count by 1 moves every score by 0 or 1, all in the same direction; by ``c``, by at most
    ``c``, still all one way."""
    grid = bound_grid(400)
    i %= len(counts)
    for step in (1, c):
        changed = list(counts)
        changed[i] = max(0, changed[i] + sign * step)
        diff = _scores(changed, grid) - _scores(counts, grid)
        assert np.abs(diff).max() <= abs(changed[i] - counts[i]) <= step
        assert (diff >= 0).all() or (diff <= 0).all()
        if step == 1:
            assert set(diff.tolist()) <= {0, sign * (changed[i] != counts[i])}


# ------------------------------------------------------------------ the exact law and privacy
def _law(counts, candidates, lam):
    return exponential_pmf(_scores(counts, candidates), lam, halvings(candidates))


@pytest.mark.parametrize("eps", [0.3, 2.0])
def test_neighbouring_tables_ratio_at_most_e_eps_exactly(eps):
    """Every table of 3 rows with counts 0..6 and every change of one count by 1: the exact
    pmf's ratio is at most ``lam <= e^eps`` (Fractions), with no factor 2; it comes close
    to ``lam``, and a change by 2 exceeds it (the neighbouring relation matters)."""
    lam = rational_lam(eps, 1e-3)
    assert lam_at_most_exp(lam, eps)
    candidates = [1, 2, 3, 5, 70, 140]
    worst, worst2 = Fraction(0), Fraction(0)
    for x in itertools.product(range(7), repeat=3):
        p = _law(x, candidates, lam)
        for i, step in itertools.product(range(3), (1, 2)):
            if x[i] + step > 6:
                continue
            y = list(x)
            y[i] += step
            q = _law(y, candidates, lam)
            ratio = max(max(a / b, b / a) for a, b in zip(p, q, strict=True))
            if step == 1:
                worst = max(worst, ratio)
            else:
                worst2 = max(worst2, ratio)
    assert worst <= lam
    assert worst > lam ** Fraction(9, 10) if eps < 1 else worst > lam / 2
    assert worst2 > lam


def test_trial_law_is_the_exponential_mechanism_exactly():
    """The exact sampler's trials: proposal weights times acceptance probabilities
    ``rho^e / (1 + rho)`` are proportional to ``mu_j lam^(-s_j)``, exactly, also for
    scores beyond the exactly resolved levels and a deep base measure."""
    lam = Fraction(21, 20)
    M = exact_levels(lam)
    scores = [0, 3, M - 1, M, M + 7, 3 * M]
    halved = [5, 0, 2, 0, 1, 0]
    weights, excess = trial_law(scores, lam, halved)
    assert excess == [0, 0, 0, 0, 7, 2 * M]
    rho = 1 / lam
    accepted = [Fraction(w) * rho ** e / (1 + rho) for w, e in zip(weights, excess,
                                                                     strict=True)]
    total = sum(accepted)
    assert [a / total for a in accepted] == exponential_pmf(scores, lam, halved)
    assert trial_law([10**15, 0], lam)[1] == [10**15 - M, 0]  # far scores: capped at M


@pytest.mark.parametrize("scores, lam, halved", [
    ([3, 0, 1, 5, 2, 0], Fraction(3, 2), [0, 0, 1, 2, 0, 3]),  # small: vectorised trials
    ([0, 40, 45, 90, 41, 200], Fraction(21, 20), None),  # excess decided by the geometric
    ([0, 20, 15, 400, 30, 35], Fraction(1001, 1000), [12, 0, 0, 0, 1, 2]),  # big integers
])
def test_sampler_law_matches_the_exact_pmf(scores, lam, halved):
    """Chi-square of seeded draws against the exact pmf, on each path of the sampler."""
    scipy_stats = pytest.importorskip("scipy.stats")
    size = 4000 if lam == Fraction(1001, 1000) else 40_000
    pmf = np.array([float(p) for p in exponential_pmf(scores, lam, halved)])
    draws = sample_exponential(scores, lam, SeededSource(7), size, halved=halved)
    observed = np.bincount(draws, minlength=len(scores))
    keep = pmf * draws.size >= 5
    assert observed[~keep].sum() <= 5
    expected = pmf[keep] / pmf[keep].sum() * observed[keep].sum()
    assert scipy_stats.chisquare(observed[keep], expected).pvalue > 1e-4


# ------------------------------------------------------------------ the bound that lands
def test_the_bound_lands_above_an_outlier_the_quantile_misses():
    """990 rows with counts 0..10 and 10 rows at 500: the 0.99-quantile is 10 and the
    quantile rule top-codes the ten rows (a loss of 4,900, about 4.9 per row); the loss
    rule lands at or a few counts above 500 at every seed (below 500 its score rises by
    9.75 per count, above it by 1/4: at eps = 1, about e^-0.25 per count), and the bound is
    that candidate plus the margin, round(1/2 / 1) = 1 count."""
    counts = np.concatenate([np.arange(990) % 11, np.full(10, 500)])
    drawn = [private_upper(counts, 1.0, margin=0, seed=s) for s in range(12)]
    assert min(drawn) == 500 and max(drawn) <= 510, drawn
    assert [private_upper(counts, 1.0, seed=s) for s in range(12)] == [d + 1 for d in drawn]
    assert max(private_upper(counts, 1.0, rule="quantile", seed=s) for s in range(6)) < 500
    r = privatize_counts(counts, 1.0, upper="auto", seed=3)
    assert r.n - 1 >= 500 and r.topcoded == 0


def test_the_grid_resolves_the_side_of_the_largest_count():
    """Where the counts are large the candidates lie closer together than the rule's
    resolution ``1 / eps_upper``: for a lone largest count ``M`` anywhere between two
    candidates near 49,000 (the county burglaries' largest count), the bound lands above
    ``M`` with probability near ``1 - B = 3/4`` at ``eps_upper = 0.02`` (the score's slopes
    are ``1 - B`` below ``M`` and ``B`` above it, ``B`` the penalty), between 0.55 and
    0.9 wherever ``M`` falls. On a grid whose candidates lie farther apart than ``1 /
    eps_upper`` where ``M`` falls between two of them decides it (from below 0.1 to above
    0.9 on 128 steps per doubling, 265 counts apart there)."""
    grid = bound_grid(10**6, LOSS_GRID_STEPS)
    rest = np.concatenate([np.arange(3000) % 40, [30000]])
    log_lam = math.log(rational_lam(0.02, 1e-3))
    above = []
    for top in range(49000, 49400, 10):
        s = _scores(np.append(rest, top), grid).astype(float)
        logw = -log_lam * (s - s.min()) - math.log(2) * halvings(grid)
        w = np.exp(logw - logw.max())
        above.append(w[grid > top].sum() / w.sum())
    assert 0.55 <= min(above) and max(above) <= 0.9, (min(above), max(above))
    assert abs(np.mean(above) - (1 - BOUND_PENALTY)) < 0.05, np.mean(above)


def test_rows_and_histogram_and_wide_counts_agree():
    counts = np.random.default_rng(3).poisson(30, 400)
    for seed in range(3):
        assert choose_upper(counts, 0.5, seed=seed) == \
            choose_upper(histogram=np.bincount(counts), eps=0.5, seed=seed)
    huge = choose_upper([10**12, 3, 4], 1.0, max_upper=10**13, seed=0)  # grid 0.14 % apart
    assert 0.99e12 <= huge.upper <= 1.01e12 and huge.rule == "loss"


def test_rule_and_quantile_refusals():
    with pytest.raises(ValueError, match="rule: one of loss, quantile"):
        choose_upper([1, 2], 1.0, rule="max")
    with pytest.raises(ValueError, match="quantile: applies to rule='quantile' only"):
        choose_upper([1, 2], 1.0, quantile=0.9)
    with pytest.raises(ValueError, match="quantile"):
        choose_upper([1, 2], 1.0, rule="quantile", quantile=0)


@settings(max_examples=60, deadline=None)
@given(st.floats(1e-4, 50), st.floats(0.001, 0.9))
def test_stage_split_never_exceeds_the_total(eps, share):
    eps_upper, eps_rest = stage_split(eps, share)
    assert Fraction(eps_upper) + Fraction(eps_rest) <= Fraction(eps)
    assert eps_rest > 0 and math.isclose(eps_upper + eps_rest, eps, rel_tol=1e-12)


def test_default_share_is_a_share_then_at_most_upper_max():
    assert default_share(0.3) == UPPER_SHARE and default_share(0.5) == UPPER_SHARE
    assert default_share(1.0) * 1.0 == pytest.approx(UPPER_MAX)
    assert default_share(4.0) * 4.0 == pytest.approx(UPPER_MAX)
    r = privatize_counts(np.arange(200) % 20, 4.0, upper="auto", seed=1)
    assert r.eps_upper == pytest.approx(UPPER_MAX) and r.bound["rule"] == "loss"
    r = privatize_counts(np.arange(200) % 20, 0.5, upper="auto", seed=1)
    assert r.eps_upper == pytest.approx(0.5 * UPPER_SHARE)


# ------------------------------------------------------------------ the study
def test_study_auto_is_the_loss_rule_at_the_default_share():
    """The study's composed release at the default share draws exactly what
    ``upper="auto"`` draws (the same bound and the same rows): the study measures what a
    release runs."""
    from dpfix.experiments.bounds import run_release

    x = np.random.default_rng(0).negative_binomial(1, 0.1, 600)
    for eps in (0.3, 2.0, 4.0):
        auto = run_release(x, eps, "auto", seed=5)
        loss = run_release(x, eps, f"loss/d={UPPER_SHARE:g}", seed=5)
        assert auto == loss


def test_study_runs_under_a_given_post_processing():
    """Every cell's key names stage 1's post-processing (so that a cache never mixes two),
    and a release of the study is the library's release under it."""
    from dpfix.experiments.bounds import bounds_cells, run_release
    from dpfix.release.privatizers import DEFAULT_POSTPROCESS

    x = np.random.default_rng(2).negative_binomial(1, 0.05, 400)
    cells = bounds_cells(quick=True, eps=[1.0], counts={"toy": x})
    assert {c["postprocess"] for c in cells} == {DEFAULT_POSTPROCESS}
    other = bounds_cells(quick=True, eps=[1.0], counts={"toy": x}, postprocess="isotonic-cdf")
    assert {c["postprocess"] for c in other} == {"isotonic-cdf"}
    for pp in ("isotonic-cdf", DEFAULT_POSTPROCESS):
        y = privatize_counts(x, 1.0, upper=int(x.max()), seed=3, postprocess=pp).counts
        got = run_release(x, 1.0, "fixed", seed=3, upper=int(x.max()), postprocess=pp)
        assert got["ce"] == float(np.abs(y - x).mean())

def test_study_cells_and_summary_small():
    """Every method of the study runs on a small synthetic column, and the summary's ratios
    are against the fixed bound of least median error."""
    from dpfix.experiments.bounds import METHODS, bounds_summary, ratios, run_release

    x = np.random.default_rng(1).poisson(6, 300)
    cells, results = [], []
    for r in range(3):
        base = {"dataset": "toy", "eps": 1.0, "replication": r}
        for u in (8, 12, 16, 30):
            cells.append({**base, "method": "fixed", "upper": u})
            results.append(run_release(x, 1.0, "fixed", seed=r, upper=u))
        for m in METHODS:
            cells.append({**base, "method": m, "upper": None})
            results.append(run_release(x, 1.0, m, seed=r))
    summary = bounds_summary(cells, results)
    table = ratios(summary)
    assert set(table.method) == set(METHODS)
    fixed = summary[summary.method == "fixed"]
    best = fixed.sort_values(["ce_median", "fixed"]).iloc[0]
    assert (table.best_fixed == best.fixed).all()
    assert np.allclose(table.ce_median_ratio, table.ce_median / best.ce_median)



@needs_data
def test_landing_study_pairs_the_rules_with_the_largest_count_itself():
    """The landing study: three base seeds, no fixed bound, every rule against the release
    at the largest count paying the same share; the loss rule at penalty 1/4 and the
    default's share draws what ``auto`` draws, and the ratios are the medians' ratios over
    every release of every seed."""
    from dpfix.experiments.bounds import (
        LANDING_REFERENCE,
        SEED_FIELDS,
        bound_counts,
        landing_cells,
        landing_summary,
        run_release,
    )
    from dpfix.experiments.cells import cell_seed
    from dpfix.release.bounds import UPPER_SHARE

    same = f"loss/b={float(BOUND_PENALTY):g}/d={UPPER_SHARE:g}"
    cells = landing_cells(seeds=(0, 4), methods=("auto", same), replications=3,
                          datasets=["crime:MURDER"], eps=[1.0])
    assert "fixed" not in {c["method"] for c in cells}
    assert sorted({c["seed"] for c in cells}) == [0, 4]
    x = bound_counts("crime:MURDER")
    results = [run_release(x, 1.0, c["method"], cell_seed(c, SEED_FIELDS)) for c in cells]
    pairs = list(zip(cells, results, strict=True))
    t = landing_summary(cells, results).set_index("method")
    assert t.loc[LANDING_REFERENCE, "w1_ratio"] == 1.0
    assert t.loc[LANDING_REFERENCE, "below"] == 0.0  # the largest count is not below itself
    assert t.loc["auto", "replications"] == 6
    assert t.loc["auto", "w1_median"] == t.loc[same, "w1_median"]
    w1 = {m: np.median([r["w1"] for c, r in pairs if c["method"] == m])
          for m in ("auto", LANDING_REFERENCE)}
    assert math.isclose(t.loc["auto", "w1_ratio"], w1["auto"] / w1[LANDING_REFERENCE])
    below = np.mean([r["upper"] < x.max() for c, r in pairs if c["method"] == "auto"])
    assert t.loc["auto", "below"] == below

@needs_data
def test_landing_targets_hold_the_best_fixed_bound_at_every_seed():
    """With ``best`` the landing study releases the study's best fixed bound at every seed
    (the same cells as the study's at base seed 0), and ``landing_targets`` counts, per
    seed and over all of them, the cases whose medians meet the three targets against
    that bound's releases at the same seeds."""
    from dpfix.experiments.bounds import (
        SEED_FIELDS,
        TARGETS,
        bound_counts,
        bounds_cells,
        landing_cells,
        landing_targets,
        run_release,
    )
    from dpfix.experiments.cells import cell_seed, key_id

    cells = landing_cells(seeds=(0, 3), methods=("auto",), replications=3,
                          datasets=["crime:MURDER"], eps=[1.0],
                          best={("crime:MURDER", 1.0): 609})
    fixed = [c for c in cells if c["method"] == "fixed"]
    assert len(fixed) == 6 and {c["upper"] for c in fixed} == {609}
    study = {key_id(c) for c in bounds_cells(replications=3, datasets=["crime:MURDER"],
                                             eps=[1.0], methods=["auto"])}
    assert {key_id(c) for c in fixed if c["seed"] == 0} <= study  # the study's own cells
    x = bound_counts("crime:MURDER")
    results = [run_release(x, 1.0, c["method"], cell_seed(c, SEED_FIELDS), c.get("upper"))
               for c in cells]
    t = landing_targets(cells, results).set_index(["method", "seed"])
    for seed in (0, 3, -1):
        pick = [r for c, r in zip(cells, results, strict=True) if seed in (-1, c["seed"])]
        chosen = [c for c in cells if seed in (-1, c["seed"])]
        stats = {}
        for m in ("auto", "fixed"):
            ce = [r["ce"] for c, r in zip(chosen, pick, strict=True) if c["method"] == m]
            w1 = [r["w1"] for c, r in zip(chosen, pick, strict=True) if c["method"] == m]
            stats[m] = {"ce_median": np.median(ce), "ce_p90": np.quantile(ce, 0.9),
                        "w1_median": np.median(w1)}
        met = all(stats["auto"][k] <= v * stats["fixed"][k] for k, v in TARGETS.items())
        assert t.loc[("auto", seed), "met"] == int(met)
        assert t.loc[("auto", seed), "cases"] == 1
    assert "fixed" not in set(t.index.get_level_values("method"))


@needs_data
@pytest.mark.full
@pytest.mark.parametrize("dataset, eps", [
    ("binomial", 0.3), ("binomial", 1.0), ("binomial", 3.0), ("crime:RAPE", 1.0),
    ("crime:BURGLRY", 1.0), ("crime:MVTHEFT", 0.3), ("crime:ROBBERY", 1.0),
    ("crime:ARSON", 0.3), ("crime:MURDER", 3.0)])
def test_study_targets_met(dataset, eps):
    """The study's targets re-run (the same seeded cells as ``dpfix reproduce bounds``), 20
    releases, on cases the study meets (docs/bounds.md section 3 names the three it does
    not, and why; ARSON at 0.3 and MURDER at 3 are met with the margin and the cap of
    ``eps_upper`` at 0.02 and missed without them): the median error against the true counts
    within 1.15x of the best fixed bound's, the 90th percentile within 1.3x, the median W1
    within 1.1x of that bound's. The county vehicle thefts at eps = 0.3 and robberies at 1
    meet them because the offset fit keeps their sparse tails (under ``isotonic-cdf`` their
    errors fell in two groups: 1.44x, W1 1.89x; 1.09x, 1.11x)."""
    from dpfix.experiments.bounds import study

    table = study([dataset], (eps,), reps=20)
    assert table.met.all(), table[["ce_median_ratio", "ce_p90_ratio",
                                   "w1_median_ratio"]].to_string()


def test_the_report_entry_fits_the_schema_for_each_rule():
    """``upper_bound`` of a DP bound: the rule always, the quantile exactly for the quantile
    rule (the schema refuses it on a loss-rule bound and requires it on a quantile one)."""
    from dpfix.release.report import report_schema

    jsonschema = pytest.importorskip("jsonschema")
    schema = report_schema()
    entry = {"$ref": "#/$defs/upper_dp", "$defs": schema["$defs"]}
    check = jsonschema.Draft202012Validator(entry)
    loss = choose_upper([1, 2, 3, 50], 1.0, seed=0).describe()
    quantile = choose_upper([1, 2, 3, 50], 1.0, rule="quantile", seed=0).describe()
    check.validate(loss)
    check.validate(quantile)
    assert not check.is_valid({**loss, "quantile": "0.99"})
    assert not check.is_valid({k: v for k, v in quantile.items() if k != "quantile"})
    assert not check.is_valid({**loss, "rule": "max"})
    assert "1..32, then 512 geometric steps" in loss["candidates"]["grid"]
    assert "then 8 geometric steps" in quantile["candidates"]["grid"]


@needs_data
def test_reproduce_bounds_quick_writes_its_tables_and_caches(tmp_path):
    """``dpfix reproduce bounds --quick`` (one replication): the tables and the targets page
    are written, and a rerun computes no cell."""
    from dpfix.experiments import make_config
    from dpfix.experiments.targets import reproduce

    cfg = make_config(quick=True, replications=1)
    (first,) = reproduce(["bounds"], cfg, tmp_path, quiet=True)
    assert first.computed > 0 and first.cached == 0
    assert {"bounds.csv", "bounds_fixed.csv", "bounds_intervals.csv",
            "bounds_targets.md"} <= set(first.files)
    page = (tmp_path / "bounds_targets.md").read_text(encoding="utf-8")
    assert "| crime:MURDER | 0.300 |" in page and "## upper=\"auto\"" in page
    assert "## What the releases resolve" in page
    import pandas as pd

    from dpfix.experiments.bounds import QUICK_DATASETS

    intervals = pd.read_csv(tmp_path / "bounds_intervals.csv")
    assert set(intervals.method) == {"auto"} and set(intervals.dataset) == set(QUICK_DATASETS)
    assert (intervals.releases == 1).all()  # one replication: each interval is its point
    assert np.allclose(intervals.w1_median_low, intervals.w1_median_ratio)
    (again,) = reproduce(["bounds"], cfg, tmp_path, quiet=True)
    assert again.computed == 0 and again.cached == first.computed


@needs_data
def test_reproduce_bounds_isotonic_runs_the_study_under_isotonic_cdf(tmp_path):
    """``dpfix reproduce bounds-isotonic --quick``: the study's cells with stage 1
    post-processed by ``isotonic-cdf`` (their keys say so: none is a cell of ``bounds``),
    in files of their own."""
    from dpfix.experiments import make_config
    from dpfix.experiments.targets import reproduce

    cfg = make_config(quick=True, replications=1)
    (plain,) = reproduce(["bounds"], cfg, tmp_path, quiet=True)
    (iso,) = reproduce(["bounds-isotonic"], cfg, tmp_path, quiet=True)
    assert iso.cached == 0 and iso.computed == plain.computed
    assert {"bounds_isotonic_cdf.csv", "bounds_isotonic_cdf_fixed.csv",
            "bounds_isotonic_cdf_targets.md"} <= set(iso.files)
    lines = (tmp_path / "cells.jsonl").read_text(encoding="utf-8").splitlines()
    assert sum('"isotonic-cdf"' in line for line in lines) == iso.computed
