"""The frontier study: quick run end to end, the paired summary, the dominance
and rule logic on summaries with a known answer, and the limit computed independently."""

import json
import math
import struct

import numpy as np
import pandas as pd
import pytest

from dpfix.constructors import construct
from dpfix.experiments import frontier as F
from dpfix.experiments.config import make_config
from dpfix.release.pipeline import privatize_counts
from dpfix.sampling import rational_lam
from helpers import cli, needs_data

# ----------------------------------------------------------------------------- end to end
FILES = {
    "frontier.csv": ["dataset", "method", "framework", "estimator", "remap", "f", "eps",
                     "w1", "w1_se", "w1_ci", "ks", "tv", "ce", "ce_se", "ce_expected",
                     "w1_target", "eps_1", "eps_2", "d_ce", "d_ce_se", "d_w1", "d_w1_se",
                     "ce_limit", "ce_ratio", "w1_rel", "replications"],
    "frontier_dominance.csv": ["eps", "method", "fails", "dominates", "score", "failures"],
    "frontier_rule.csv": ["eps", "setting", "dominates", "fails", "failures", "best"],
    "frontier_limit.csv": ["dataset", "eps", "setting", "ce_ratio", "ok", "two_stage_ratio"],
}
PNGS = ["frontier_pareto.png", "frontier_ce_ratio.png", "frontier_w1_ratio.png"]


def check_quick_frontier(out, capsys):
    """The frontier study's files in ``out``, written by a quick run of ``dpfix reproduce``
    (``all`` or ``frontier``: tests/test_reproduce.py runs ``all`` once and calls this), and
    ``reproduce frontier`` run again there computing nothing."""
    cfg = make_config(quick=True)
    for name, columns in FILES.items():
        df = pd.read_csv(out / name)
        assert len(df) >= 2, name
        assert set(columns) <= set(df.columns), (name, set(columns) - set(df.columns))
    s = pd.read_csv(out / "frontier.csv")
    # 2 data sets x 3 eps x (5 settings + the limit)
    assert len(s) == 2 * 3 * 6 and (s.replications == 2).all()
    assert set(s.method) == set(cfg.frontier_settings) | {F.LIMIT}
    assert np.isfinite(s[["w1", "ks", "tv", "ce", "ce_limit"]]).all().all()
    base = s[s.method == F.BASELINE]
    assert (base.d_ce == 0).all() and (base.d_w1 == 0).all()
    assert np.allclose(base.eps_1 + base.eps_2, base.eps)
    one = s[s.framework == "one-stage"]
    assert (one.eps_1 == 0).all() and np.allclose(one.eps_2, one.eps)
    # the quantile remap is no row mechanism: no expected count error
    assert s[s.remap == "quantile"].ce_expected.isna().all()
    assert s[s.remap == "northwest"].ce_expected.notna().all()
    # the limit: realised count error near its expectation (thousands of rows)
    lim = s[s.method == F.LIMIT]
    assert np.allclose(lim.ce, lim.ce_expected, rtol=0.1)
    assert np.allclose(lim.ce_limit, lim.ce_expected)
    dom = pd.read_csv(out / "frontier_dominance.csv")
    assert len(dom) == 3 * 4 and F.BASELINE not in set(dom.method)
    assert (dom.dominates == (dom.fails == 0)).all()
    rule = pd.read_csv(out / "frontier_rule.csv")
    assert len(rule) == 3 and set(rule.setting) <= set(cfg.frontier_settings)
    lim_check = pd.read_csv(out / "frontier_limit.csv")
    assert (lim_check.eps >= 1).all() and len(lim_check) == 2 * 2
    md = (out / "frontier_rule.md").read_text()
    assert "## The rule" in md and "eps_t" in md
    for name in PNGS:
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", name
        width, height = struct.unpack(">II", data[16:24])
        assert width >= 400 and height >= 300, name
    first = (out / "cells.jsonl").read_text()
    rc, stdout, err = cli(capsys, "reproduce", "frontier", "--quick", "--out", out, "--quiet")
    assert rc == 0, err
    assert "frontier done" in stdout
    runs = json.loads((out / "run.json").read_text())["targets"]
    assert [r["target"] for r in runs] == ["frontier"]
    assert runs[0]["computed"] == 0 and runs[0]["cached"] == 72
    assert (out / "cells.jsonl").read_text() == first


def test_config_full_run_has_at_least_50_replications_and_every_data_set():
    from dpfix.experiments.runs import DATASETS, eps_grid

    cfg = make_config()
    assert cfg.frontier_replications >= 50
    assert set(cfg.frontier_datasets) == set(DATASETS)
    assert len(cfg.frontier_eps_index) == len(eps_grid()) == 11
    assert set(cfg.frontier_settings) == set(F.SETTINGS)
    cells = F.frontier_cells(cfg)
    assert len(cells) == 8 * 11 * (len(F.SETTINGS) + 1) * cfg.frontier_replications
    with pytest.raises(ValueError, match="unknown"):
        from dataclasses import replace

        F.frontier_cells(replace(cfg, frontier_settings=("nope",)))


# ------------------------------------------------------------------------------- settings
def test_baseline_is_todays_pipeline_and_every_setting_runs():
    counts = np.array([0, 0, 1, 1, 1, 2, 3, 5, 5, 4] * 5)
    a = privatize_counts(counts, 0.7, upper=5, seed=3)
    b = privatize_counts(counts, 0.7, upper=5, seed=3, **F.SETTINGS[F.BASELINE].options())
    assert np.array_equal(a.counts, b.counts) and np.array_equal(a.z, b.z)
    for name, s in F.SETTINGS.items():
        r = privatize_counts(counts, 0.7, upper=5, seed=3, **s.options())
        assert r.counts.shape == counts.shape, name
        assert r.eps_1 == pytest.approx(s.fraction(0.7) * 0.7, abs=1e-12), name
        assert r.eps_1 + r.eps_2 == pytest.approx(0.7), name


# -------------------------------------------------------------------------------- summary
def _cells(values: dict[str, list[tuple[float, float]]], eps: float = 1.0, dataset="d"):
    """Cells and results: method -> [(ce, w1) per replication]."""
    cells, results = [], []
    for m, reps in values.items():
        for r, (ce, w1) in enumerate(reps):
            cells.append({"experiment": "frontier", "dataset": dataset, "method": m,
                          "eps": eps, "replication": r, "seed": 0})
            results.append({"ce": ce, "w1": w1, "ks": w1, "tv": w1,
                            "ce_expected": ce if m != "one-stage/em/quantile" else None,
                            "w1_target": w1, "eps_1": 0.0, "eps_2": eps, "seconds": 0.1})
    return cells, results


def test_summary_pairs_replications_with_the_baseline():
    cells, results = _cells({
        F.BASELINE: [(1.0, 0.3), (2.0, 0.5), (3.0, 0.1)],
        "one-stage/em/northwest": [(0.9, 0.4), (1.8, 0.6), (2.7, 0.2)],   # ce -10%, w1 +0.1
        F.LIMIT: [(0.5, 0.01), (0.6, 0.02), (0.7, 0.03)],
    })
    s = F.frontier_summary(cells, results).set_index("method")
    one = s.loc["one-stage/em/northwest"]
    d = np.array([-0.1, -0.2, -0.3])
    assert one.d_ce == pytest.approx(d.mean())
    assert one.d_ce_se == pytest.approx(d.std(ddof=1) / math.sqrt(3))
    assert one.d_w1 == pytest.approx(0.1) and one.d_w1_se == pytest.approx(0, abs=1e-12)
    assert one.ce_se == pytest.approx(np.std([0.9, 1.8, 2.7], ddof=1) / math.sqrt(3))
    assert one.ce_base == 2.0 and one.w1_base == pytest.approx(0.3)
    assert one.ce_limit == pytest.approx(0.6) and one.w1_limit == pytest.approx(0.02)
    assert one.ce_ratio == pytest.approx(1.8 / 0.6)
    assert one.framework == "one-stage" and one.f == 0.0 and one.replications == 3
    assert s.loc[F.BASELINE].d_ce == 0 and s.loc[F.LIMIT].framework == "limit (oracle)"


# ------------------------------------------------------------------------------ dominance
def _summary(rows):
    """A summary from (eps, method, dataset, ce, w1, d_ce, d_ce_se, d_w1, d_w1_se)."""
    df = pd.DataFrame(rows, columns=["eps", "method", "dataset", "ce", "w1", "d_ce",
                                     "d_ce_se", "d_w1", "d_w1_se"])
    df["ce_base"] = df.ce - df.d_ce
    df["w1_base"] = df.w1 - df.d_w1
    return df


A, B, C = "one-stage/em/northwest", "hybrid/f=0.1/em/northwest", "hybrid/f=0.35/em/northwest"


def test_dominance_within_one_standard_error_on_every_data_set():
    s = _summary([
        # eps 0.1: A worse on w1 on data set y by 3 se; B equal within one se everywhere
        (0.1, A, "x", 1.0, 0.2, -0.1, 0.01, 0.00, 0.01),
        (0.1, A, "y", 1.0, 0.2, -0.1, 0.01, 0.03, 0.01),
        (0.1, B, "x", 1.0, 0.2, 0.01, 0.01, -0.01, 0.01),   # d == se: still as good
        (0.1, B, "y", 1.0, 0.2, 0.00, 0.01, 0.0, 0.01),
        # eps 1: A better everywhere; B fails ce on x and w1 on y
        (1.0, A, "x", 1.0, 0.2, -0.2, 0.01, -0.01, 0.01),
        (1.0, A, "y", 1.0, 0.2, -0.2, 0.01, -0.01, 0.01),
        (1.0, B, "x", 1.0, 0.2, 0.02, 0.01, 0.0, 0.01),
        (1.0, B, "y", 1.0, 0.2, 0.00, 0.01, 0.5, 0.01),
    ])
    s = pd.concat([s, s.head(1).assign(method=F.BASELINE, d_ce=0.0, d_w1=0.0)])
    dom = F.dominance(s).set_index(["eps", "method"])
    assert F.BASELINE not in dom.index.get_level_values("method")
    assert dom.loc[(0.1, A)].fails == 1 and not dom.loc[(0.1, A)].dominates
    assert dom.loc[(0.1, A)].failures.startswith("y: w1 ")
    assert dom.loc[(0.1, B)].dominates and dom.loc[(0.1, B)].failures == ""
    assert dom.loc[(1.0, A)].dominates
    assert dom.loc[(1.0, B)].fails == 2
    assert "x: ce" in dom.loc[(1.0, B)].failures and "y: w1" in dom.loc[(1.0, B)].failures
    # score: mean over data sets of (ce/ce_base + w1/w1_base)/2
    assert dom.loc[(1.0, A)].score == pytest.approx((1 / 1.2 + 0.2 / 0.21) / 2)
    assert dom.loc[(1.0, A)].ce_rel_worst == pytest.approx(1 / 1.2)


def test_dominance_with_one_replication_needs_no_loss():
    s = _summary([(1.0, A, "x", 1.0, 0.2, 1e-17, math.nan, -0.1, math.nan),  # rounding
                  (1.0, B, "x", 1.0, 0.2, 1e-6, math.nan, -0.1, math.nan),
                  (1.0, C, "x", 1.0, 0.2, math.nan, math.nan, -0.1, math.nan)])
    dom = F.dominance(s).set_index("method")
    assert dom.loc[A].dominates and not dom.loc[B].dominates and not dom.loc[C].dominates


def _dom(table):
    """A dominance table from {eps: {method: (fails, score)}}."""
    return pd.DataFrame([{"eps": e, "method": m, "fails": f, "score": sc,
                          "failures": "" if f == 0 else f"{m} fails {f}"}
                         for e, ms in table.items() for m, (f, sc) in ms.items()])


def test_rule_has_the_fewest_steps_and_geometric_thresholds():
    dom = _dom({0.1: {A: (2, 1.2), B: (0, 0.9), C: (0, 0.8)},
                0.3: {A: (1, 1.0), B: (0, 0.9), C: (0, 0.7)},
                1.0: {A: (0, 0.6), B: (0, 0.8), C: (3, 1.5)},
                3.0: {A: (0, 0.5), B: (1, 0.8), C: (3, 1.5)}})
    choice, rule = F.choose_rule(dom)
    # B is acceptable at 0.1..1 (3 points), C only at 0.1..0.3: B starts, then A
    assert choice.setting.tolist() == [B, B, B, A]
    assert choice.best.tolist() == [C, C, A, A]  # per point, the least score
    assert choice.dominates.all()
    assert [s["setting"] for s in rule["steps"]] == [B, A]
    assert rule["thresholds"] == [pytest.approx(math.sqrt(3.0))]
    assert rule["steps"][0]["from"] == 0 and math.isinf(rule["steps"][-1]["to"])
    assert [F.apply_rule(rule, e) for e in (0.1, 1.0, 1.8, 5.0)] == [B, B, A, A]
    assert rule["steps"][1]["f"] == "0" and rule["steps"][0]["f"] == "0.1"
    assert rule["statement"] == (f"eps_t < 1.73: {B} (f = 0.1); eps_t >= 1.73: {A} (f = 0)")


def test_rule_breaks_ties_by_score_and_reports_where_nothing_dominates():
    dom = _dom({0.1: {A: (2, 1.2), B: (1, 0.9), C: (1, 0.95)},
                1.0: {A: (0, 0.6), B: (0, 0.8), C: (0, 0.9)}})
    choice, rule = F.choose_rule(dom)
    # B and C reach equally far (both points); B's mean score is lower
    assert choice.setting.tolist() == [B, B]
    assert choice.dominates.tolist() == [False, True]
    assert choice.fails.tolist() == [1, 0] and choice.failures.iloc[0] == f"{B} fails 1"
    assert len(rule["steps"]) == 1 and rule["statement"].startswith("every eps_t: ")
    only = F.choose_rule(dom, candidates=[A])[0]
    assert only.setting.tolist() == [A, A] and only.fails.tolist() == [2, 0]
    with pytest.raises(ValueError, match="no candidate"):
        F.choose_rule(dom, candidates=["nothing"])


def test_limit_check_uses_the_rules_setting_and_the_tolerance():
    s = pd.DataFrame({"dataset": "x", "eps": [0.5, 1.0, 1.0, 3.0, 3.0, 3.0],
                      "method": [A, A, F.BASELINE, A, F.BASELINE, F.LIMIT],
                      "ce_ratio": [2.0, 1.04, 1.2, 1.06, 1.3, 1.0],
                      "ce_ratio_se": [0.1, 0.01, 0.01, 0.02, 0.01, 0.0],
                      "ce_limit": [1.0, 0.5, 0.5, 0.1, 0.1, 0.1]})
    choice = pd.DataFrame({"eps": [0.5, 1.0, 3.0], "setting": [A, A, A]})
    check = F.limit_check(s, choice)
    assert check.eps.tolist() == [1.0, 3.0]
    assert check.ok.tolist() == [True, False] and check.ok_within_se.tolist() == [True, True]
    assert check.two_stage_ratio.tolist() == [1.2, 1.3]
    assert check.best_setting.tolist() == [A, A]


# ---------------------------------------------------------------------------------- limit
def test_limit_is_the_northwest_corner_and_the_optimum_over_F():
    from dpfix.constructors import lp_optimum

    zeta = np.array([0.05, 0.3, 0.1, 0.0, 0.25, 0.3])
    for eps in (0.2, 1.0, 3.0):
        lam = rational_lam(eps)
        got = F.limit_count_error(zeta, eps)
        # the dense matrix of the northwest corner at the same lam
        T = construct(zeta, math.log(lam), constructor="northwest")
        assert got == pytest.approx(float(T.count_error(zeta, "abs")), rel=1e-9)
        # and the exact G R of the sampler, in Fractions
        exact = F.limit_sampler(zeta, eps).matrix()
        W = np.abs(np.subtract.outer(np.arange(6), np.arange(6))) * zeta[:, None]
        assert got == pytest.approx(float((W * exact.astype(float)).sum()), rel=1e-9)
        # Theorem A: no mechanism with fixed point zeta does better (the LP over F)
        lp = lp_optimum(zeta, math.log(lam), fixed=True)
        assert got == pytest.approx(float(lp.count_error(zeta, "abs")), rel=1e-6)


@needs_data
def test_limit_cell_on_the_county_data():
    from dpfix.experiments.runs import load_counts, true_distribution

    key = {"experiment": "frontier", "dataset": "crime", "method": F.LIMIT, "eps": 1.0,
           "replication": 0, "seed": 0}
    r = F.frontier_cell(key, 7)
    zeta = true_distribution(load_counts("crime"), 50)
    T = construct(zeta, math.log(rational_lam(1.0)), constructor="northwest")
    assert r["ce_expected"] == pytest.approx(float(T.count_error(zeta, "abs")), rel=1e-9)
    assert r["ce"] == pytest.approx(r["ce_expected"], rel=0.1)  # 3136 rows
    assert r["eps_1"] == 0 and r["eps_2"] == 1.0 and r["w1_target"] == 0
