"""The DP upper bound (docs/bounds.md): its exact law, its privacy, ``upper="auto"`` in the
library and the CLI, the top-coding warning and the confidential report's two errors."""

from __future__ import annotations

import itertools
import json
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.io.data import data_path
from dpfix.io.tables import TableInput
from dpfix.release.bounds import (
    LOSS_GRID_STEPS,
    TOP_MASS_WARNING,
    UPPER_MAX,
    UPPER_SHARE,
    TopCodingWarning,
    bound_grid,
    bound_margin,
    choose_upper,
    exponential_pmf,
    exponential_weights,
    halvings,
    private_upper,
    sample_exponential,
    upper_scores,
)
from dpfix.release.pipeline import privatize_counts
from dpfix.release.report import confidential_report
from dpfix.sampling.source import SeededSource, lam_at_most_exp, rational_lam
from helpers import cli, needs_data


# ------------------------------------------------------------------ the exact law
def test_weights_are_the_exponential_mechanism_exactly():
    """``w_j / w_l = mu_j lam^(-s_j) / (mu_l lam^(-s_l))`` in Fractions, for every pair."""
    scores, halved, lam = [7, 3, 3, 9, 4], [0, 2, 1, 0, 5], Fraction(7, 4)
    w = exponential_weights(scores, lam, halved)
    assert all(isinstance(x, int) and x > 0 for x in w)
    for j, l in itertools.permutations(range(len(w)), 2):
        mu = Fraction(1, 2 ** halved[j]) / Fraction(1, 2 ** halved[l])
        assert Fraction(w[j], w[l]) == mu * lam ** (scores[l] - scores[j])
    pmf = exponential_pmf(scores, lam, halved)
    assert sum(pmf) == 1 and pmf == [Fraction(x, sum(w)) for x in w]


@pytest.mark.parametrize("lam, halved", [(Fraction(3, 2), None),
                                         (Fraction(3, 2), [0, 0, 1, 2, 0, 3]),
                                         (Fraction(1_000_003, 1_000_000), [0, 1, 1, 2, 0, 0]),
                                         (Fraction(1 << 30), [3, 0, 1, 0, 2, 0])])
def test_sampler_law_is_the_exact_pmf(lam, halved):
    """Chi-square of 40,000 seeded draws against the exact pmf (every cell expected >= 5)."""
    scipy_stats = pytest.importorskip("scipy.stats")
    scores = [3, 0, 1, 5, 2, 0]
    pmf = np.array([float(p) for p in exponential_pmf(scores, lam, halved)])
    draws = sample_exponential(scores, lam, SeededSource(12), 40_000, halved=halved)
    observed = np.bincount(draws, minlength=len(scores))
    keep = pmf * draws.size >= 5
    assert observed[~keep].sum() <= 5  # the negligible cells stay (nearly) empty
    expected = pmf[keep] / pmf[keep].sum() * observed[keep].sum()
    assert scipy_stats.chisquare(observed[keep], expected).pvalue > 1e-4


def test_sampler_refuses_a_wrong_law():
    """The chi-square of the test above has power: the draws reject a pmf with lam^2."""
    scipy_stats = pytest.importorskip("scipy.stats")
    scores, lam = [3, 0, 1, 5, 2, 0], Fraction(3, 2)
    draws = sample_exponential(scores, lam, SeededSource(12), 40_000)
    observed = np.bincount(draws, minlength=len(scores))
    wrong = np.array([float(p) for p in exponential_pmf(scores, lam ** 2)])
    assert scipy_stats.chisquare(observed, wrong * draws.size).pvalue < 1e-6


# ------------------------------------------------------------------ privacy
def _pmf(counts, candidates, lam, quantile):
    eta = np.bincount(np.asarray(counts, dtype=np.int64), minlength=max(candidates) + 2)
    return exponential_pmf(upper_scores(eta, candidates, quantile), lam, halvings(candidates))


@pytest.mark.parametrize("eps", [0.3, 2.0])
def test_neighbouring_tables_ratio_at_most_e_eps_exactly(eps):
    """Every table of 3 rows with counts 0..5, every change of one row's count: the pmf's
    ratio is at most lam^2 <= e^eps (Fractions; lam^2 <= e^eps proved)."""
    lam = rational_lam(eps / 2)
    assert lam_at_most_exp(lam ** 2, eps)
    candidates = [1, 2, 3, 5]
    worst = Fraction(0)
    for x in itertools.product(range(6), repeat=3):
        p = _pmf(x, candidates, lam, 0.5)
        for i, v in itertools.product(range(3), range(6)):
            y = list(x)
            y[i] = v
            q = _pmf(y, candidates, lam, 0.5)
            worst = max(worst, max(a / b for a, b in zip(p, q, strict=True)))
    assert worst <= lam ** 2
    assert worst > lam  # the bound is met closely: the factor 2 of eps/2 is needed


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 200), min_size=1, max_size=12), st.integers(0, 11),
       st.integers(0, 200), st.sampled_from([0.5, 0.9, 0.99, 1.0]))
def test_one_changed_count_moves_every_score_by_at_most_one(counts, i, value, quantile):
    """The sensitivity the proof uses, on the real grid (any change of one count)."""
    grid = bound_grid(300)
    changed = list(counts)
    changed[i % len(counts)] = value
    a = upper_scores(np.bincount(counts), grid, quantile)
    b = upper_scores(np.bincount(changed), grid, quantile)
    assert np.abs(a - b).max() <= 1


# ------------------------------------------------------------------ the bound
def test_private_upper_finds_the_quantile_at_a_large_budget():
    counts = np.repeat(np.arange(1, 41), 100)  # 0.9-quantile: 36 rows' worth; grid 35 below
    assert [private_upper(counts, 40.0, rule="quantile", quantile=0.9, seed=s)
            for s in range(5)] == [35] * 5
    assert private_upper(counts, 40.0, rule="quantile", quantile=0.5, seed=0) == 20


def _rank_by_integers(quantile, N: int) -> int:
    """``ceil(quantile N)`` by integer arithmetic on the quantile's exact fraction."""
    q = Fraction(quantile)
    return -(-q.numerator * N // q.denominator)


@pytest.mark.parametrize("quantile, k", [("19/40", 10), (0.475, 10), ("0.31", 7),
                                         ("0.335", 7), (Fraction(1, 3), 7)])
def test_private_upper_rounds_a_fractional_rank_up(quantile, k):
    """``quantile N`` not whole (9.5, 6.2, 6.7, 20/3): the rank is its ceiling. The counts
    1 .. 20 once each make candidate ``c`` leave exactly ``c`` rows, so the bound is the
    ``k``-th smallest count, and rounding down (or to nearest) would give another."""
    counts = np.arange(1, 21)
    assert _rank_by_integers(quantile, 20) == k
    want = int(np.sort(counts)[k - 1])
    assert [private_upper(counts, 40.0, rule="quantile", quantile=quantile, seed=s)
            for s in range(4)] == [want] * 4
    eta = np.bincount(counts)
    assert choose_upper(histogram=eta, eps=40.0, rule="quantile", quantile=quantile,
                        seed=0).upper == want


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 70), min_size=1, max_size=40), st.integers(1, 99),
       st.integers(2, 100))
def test_scores_use_the_ceiling_of_a_fractional_rank(counts, a, b):
    """Every score ``|#{x <= c} - ceil(quantile N)|`` against a count by brute force, the
    ceiling in integers, for quantiles ``a / b`` in (0, 1] (``quantile N`` mostly not
    whole)."""
    quantile = Fraction(min(a, b), b)
    grid = bound_grid(80)
    k = _rank_by_integers(quantile, len(counts))
    want = [abs(sum(x <= c for x in counts) - k) for c in grid]
    assert upper_scores(np.bincount(counts), grid, quantile).tolist() == want
    assert upper_scores(np.bincount(counts), grid, str(quantile)).tolist() == want


def test_rows_and_histogram_give_the_same_bound():
    counts = np.random.default_rng(3).poisson(30, 400)
    for seed in range(3):
        rows = choose_upper(counts, 0.5, seed=seed)
        hist = choose_upper(histogram=np.bincount(counts), eps=0.5, seed=seed)
        assert rows == hist
    huge = choose_upper([10**12, 3, 4], 1.0, max_upper=10**13, seed=0)  # no 10^12 bins
    assert 1 <= huge.upper <= 10**13


def test_private_upper_refuses_bad_input():
    with pytest.raises(ValueError, match="quantile"):
        private_upper([1, 2], 1.0, rule="quantile", quantile=1.5)
    with pytest.raises(ValueError, match="counts"):
        private_upper([1.5, 2.0], 1.0)
    with pytest.raises(ValueError, match="eps"):
        private_upper([1, 2], -1.0)


def test_agrees_with_opendp_private_quantile():
    """OpenDP's ``make_private_quantile`` (the exponential mechanism on the same
    candidates, its score counting rows strictly below and above) gives the same bound
    within one candidate at a large budget."""
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    grid = [int(v) for v in bound_grid(1000)]
    counts = [int(v) for v in np.repeat(np.arange(1, 41), 100)]
    m = dp.m.make_private_quantile(dp.vector_domain(dp.atom_domain(T=int)),
                                   dp.symmetric_distance(), dp.max_divergence(),
                                   candidates=grid, alpha=0.5, scale=0.01)
    theirs = grid.index(m(counts))
    ours = grid.index(private_upper(counts, 40.0, rule="quantile", quantile=0.5, seed=0))
    assert abs(theirs - ours) <= 1


# ------------------------------------------------------------------ upper="auto"
def test_auto_upper_library_report_and_budget():
    counts = np.repeat(np.arange(0, 60), 50)
    r = privatize_counts(counts, 1.0, upper="auto", upper_share=0.2, seed=4)
    rep = r.public_report()
    bound = rep["upper_bound"]
    assert bound["upper"] == r.n - 1
    assert bound["margin"]["drawn"] in bound_grid(10**6, LOSS_GRID_STEPS).tolist()
    assert bound["upper"] == bound["margin"]["drawn"] + bound_margin(0.2)
    assert bound["rule"] == "loss" and "quantile" not in bound and bound["eps_upper"] == 0.2
    assert rep["budget"]["eps_upper"] == r.eps_upper == 0.2
    total = Fraction(r.eps_upper) + Fraction(r.eps_1) + Fraction(r.eps_2)
    assert total <= 1 and float(total) == pytest.approx(1.0)
    assert "the DP bound" in rep["budget"]["composition"]
    again = privatize_counts(counts, 1.0, upper="auto", upper_share=0.2, seed=4)
    assert again.n == r.n and np.array_equal(again.counts, r.counts)
    fixed = privatize_counts(counts, 1.0, upper=r.n - 1, seed=4).public_report()
    assert fixed["upper_bound"]["eps_upper"] == 0.0 and fixed["budget"]["eps_upper"] == 0.0


def test_auto_upper_histogram_and_refusals():
    eta = [50, 40, 30, 20, 10, 5, 2, 1]
    r = privatize_counts(None, 2.0, upper="auto", histogram=eta, seed=1)
    assert r.bound["upper"] == r.n - 1
    assert r.eps_upper == pytest.approx(min(2.0 * UPPER_SHARE, UPPER_MAX))
    with pytest.raises(ValueError, match="upper_share"):
        privatize_counts([1, 2, 3], 1.0, upper=3, upper_share=0.1)
    with pytest.raises(ValueError, match="upper_share"):
        privatize_counts([1, 2, 3], 1.0, upper="auto", upper_share=1.0)
    with pytest.raises(ValueError, match="upper"):
        privatize_counts([1, 2, 3], 1.0, upper="max")


def test_auto_upper_cli(tmp_path, capsys):
    table = tmp_path / "t.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame({"key": range(500), "A": rng.poisson(20, 500),
                  "B": rng.poisson(3, 500)}).to_csv(table, index=False)
    out, report = tmp_path / "o.csv", tmp_path / "r.json"
    rc, stdout, err = cli(capsys, "privatize", table, "--column", "A", "--column", "B",
                          "--epsilon", "2", "--upper", "A=auto", "--upper", "B=10",
                          "--upper-share", "0.25", "--seed", "1", "--out", out,
                          "--report", report, "--quiet")
    assert rc == 0, err
    rep = json.loads(report.read_text())
    a, b = rep["columns"]
    assert a["upper_bound"]["eps_upper"] == 0.25 and a["upper"] == a["upper_bound"]["upper"]
    assert a["n"] == a["upper"] + 1 and a["budget"]["eps_upper"] == 0.25
    assert b["upper"] == 10 and b["budget"]["eps_upper"] == 0.0
    assert rep["composition"]["eps_spent"] == 2.0
    assert "for the DP bound upper =" in stdout
    written = pd.read_csv(out)
    assert written["A"].max() <= a["upper"]
    rc, _, err = cli(capsys, "privatize", table, "--column", "A", "--epsilon", "1",
                     "--upper", "20", "--upper-share", "0.2", "--out", tmp_path / "x.csv")
    assert rc == 2 and "--upper-share: applies to --upper auto only" in err
    rc, _, err = cli(capsys, "privatize", table, "--column", "A", "--epsilon", "1",
                     "--upper", "auto", "--upper-share", "1.5", "--out", tmp_path / "x.csv")
    assert rc == 2 and "--upper-share" in err and not (tmp_path / "x.csv").exists()


def test_auto_upper_lands_above_a_far_tail():
    """990 rows with counts 0..10 and 10 rows at 500: ``upper="auto"`` at eps = 1 takes at
    most 0.1 per row off the counts (the 0.99-quantile, 10, would take 4,900: 4.9 per row),
    and its error against the true counts is within 1.15x of the fixed bound 500's."""
    counts = np.concatenate([np.arange(990) % 11, np.full(10, 500)])
    auto, fixed = [], []
    for seed in range(6):
        r = privatize_counts(counts, 1.0, upper="auto", seed=seed)
        assert np.maximum(counts - (r.n - 1), 0).mean() <= 0.1
        auto.append(np.abs(r.counts - counts).mean())
        fixed.append(np.abs(privatize_counts(counts, 1.0, upper=500, seed=seed).counts
                            - counts).mean())
    assert np.median(auto) <= 1.15 * np.median(fixed)


@needs_data
@pytest.mark.parametrize("column, fixed", [
    ("MURDER", (600,)),
    pytest.param("RAPE", (800, 2048), marks=pytest.mark.full)])  # 20 s: T built to n 2001
def test_auto_upper_within_the_best_fixed_bound_on_the_county_columns(column, fixed):
    """The README's two-column setting (eps_t = 1 over MURDER and RAPE, unit row: 0.5 per
    column), 20 releases: the median error against the TRUE counts within 1.15x of the
    best of the fixed bounds given (the largest count, and for RAPE 800), the 90th
    percentile within 1.3x of that bound's."""
    x = _crime(column)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopCodingWarning)
        errors = {u: [np.abs(privatize_counts(x, 0.5, upper=u, seed=s).counts - x).mean()
                      for s in range(20)] for u in fixed}
        auto = [np.abs(privatize_counts(x, 0.5, upper="auto", seed=s).counts - x).mean()
                for s in range(20)]
    best = min(fixed, key=lambda u: np.median(errors[u]))
    assert np.median(auto) <= 1.15 * np.median(errors[best])
    assert np.quantile(auto, 0.9) <= 1.3 * np.quantile(errors[best], 0.9)


# ------------------------------------------------------------------ the warning
def _crime(column):
    return pd.read_csv(data_path("crime_data.csv"))[column].to_numpy()


@needs_data
def test_top_coding_warning_fires_on_rape_80_and_not_when_the_bound_fits():
    rape = _crime("RAPE")
    with pytest.warns(TopCodingWarning, match=r"upper = 80: .*\d+\.\d% of its mass"):
        r = privatize_counts(rape, 1.0, upper=80, seed=0)
    assert r.z[-1] > TOP_MASS_WARNING
    with warnings.catch_warnings():
        warnings.simplefilter("error", TopCodingWarning)
        privatize_counts(rape, 1.0, upper=2000, seed=0)


@needs_data
def test_top_coding_warning_cli(tmp_path, capsys):
    crime = data_path("crime_data.csv")
    rc, _, err = cli(capsys, "privatize", crime, "--column", "RAPE", "--epsilon", "1",
                     "--upper", "80", "--seed", "0", "--out", tmp_path / "o.csv")
    assert rc == 0
    line = [x for x in err.splitlines() if "TopCodingWarning" in x]
    assert len(line) == 1 and "--upper auto" in line[0] and "of its mass" in line[0]
    rc, _, err = cli(capsys, "privatize", crime, "--column", "RAPE", "--epsilon", "1",
                     "--upper", "2000", "--seed", "0", "--out", tmp_path / "p.csv")
    assert rc == 0 and "TopCodingWarning" not in err


# ------------------------------------------------------------------ the confidential report
def test_confidential_report_errors_against_true_and_top_coded_rows():
    counts = np.array([0, 1, 1, 2, 9, 14, 3, 30])
    r = privatize_counts(counts, 2.0, upper=3, seed=0)
    c = confidential_report(r, TableInput(Path("t.csv"), "csv", counts), 3, {})
    assert c["realized_count_error"]["abs"] == np.abs(r.counts - np.minimum(counts, 3)).mean()
    true = c["realized_count_error_vs_true"]
    assert true["abs"] == np.abs(r.counts - counts).mean()
    assert true["squared"] == ((r.counts - counts) ** 2).mean()
    assert true["abs"] > c["realized_count_error"]["abs"]


def test_confidential_report_errors_histogram_match_brute_force():
    """A histogram's top-coded rows: the mean over every matching of their true counts to
    their outputs (all permutations, an independent computation)."""
    eta = np.array([2, 1, 1, 1, 1])  # counts 0, 0, 1, 2, 3, 4; upper 2 top-codes 3 and 4
    r = privatize_counts(None, 3.0, upper=2, histogram=eta, seed=5)
    c = confidential_report(r, TableInput(Path("h.csv"), "histogram", None, eta=eta), 2, {})
    joint = r.joint
    head = sum(int(joint[i, j]) * abs(i - j) for i in range(2) for j in range(3))
    outputs = [j for j in range(3) for _ in range(int(joint[2, j]))]
    trues = [2, 3, 4]
    perms = list(itertools.permutations(trues))
    tail = sum(sum(abs(o - t) for o, t in zip(outputs, p, strict=True)) for p in perms)
    expected = (Fraction(head) + Fraction(tail, len(perms))) / 6
    assert c["realized_count_error_vs_true"]["abs"] == pytest.approx(float(expected), abs=1e-12)


def test_confidential_report_true_error_only_there(tmp_path, capsys):
    """The error against the true input reaches the confidential report, never the public
    one."""
    table = tmp_path / "t.csv"
    pd.DataFrame({"A": [0, 1, 5, 40, 3, 2] * 20}).to_csv(table, index=False)
    rc, _, err = cli(capsys, "privatize", table, "--column", "A", "--epsilon", "1",
                     "--upper", "4", "--seed", "2", "--out", tmp_path / "o.csv",
                     "--report", tmp_path / "r.json", "--confidential-report",
                     tmp_path / "c.json", "--quiet")
    assert rc == 0, err
    (secret,) = json.loads((tmp_path / "c.json").read_text())["columns"]
    value = secret["realized_count_error_vs_true"]["abs"]
    public = (tmp_path / "r.json").read_text()
    assert "vs_true" not in public and repr(value) not in public
    assert value > secret["realized_count_error"]["abs"]


def test_choose_upper_describe_is_public_only():
    b = choose_upper([1, 2, 3, 50], 1.0, seed=0)
    d = b.describe()
    assert set(d) == {"upper", "eps_upper", "rule", "margin", "lam", "candidates", "mechanism"}
    assert d["upper"] == b.upper and Fraction(d["lam"]) == b.lam and d["rule"] == "loss"
    # the margin, round(1/2 / eps) counts above the candidate drawn, both DP outputs
    assert d["margin"]["counts"] == bound_margin(1.0) == 1 == b.upper - b.drawn
    assert d["margin"]["drawn"] == b.drawn
    q = choose_upper([1, 2, 3, 50], 1.0, rule="quantile", seed=0).describe()
    assert set(q) == set(d) - {"margin"} | {"quantile"} and q["quantile"] == "0.99"


def test_dask_engine_keeps_both_errors(tmp_path):
    """The Dask engine's confidential sums, against the output joined back by key."""
    pytest.importorskip("dask")
    from dpfix.release.dask import privatize_dataset

    rng = np.random.default_rng(1)
    folder = tmp_path / "data"
    folder.mkdir()
    frames = []
    for i in range(2):
        f = pd.DataFrame({"id": [f"r{i}-{j}" for j in range(300)],
                          "k": rng.negative_binomial(2, 0.2, 300)})
        f.to_parquet(folder / f"part-{i}.parquet")
        frames.append(f)
    table = pd.concat(frames, ignore_index=True)
    r = privatize_dataset(folder, "k", 1.0, upper=12, out=tmp_path / "out", keys=["id"], seed=2)
    got = pd.read_parquet(tmp_path / "out").merge(table, on="id", suffixes=("_out", ""))
    true = (got["k_out"] - got["k"]).abs().mean()
    top = (got["k_out"] - got["k"].clip(upper=12)).abs().mean()
    assert r.confidential["abs_true"] == pytest.approx(true)
    assert r.confidential["abs"] == pytest.approx(top) and true > top
