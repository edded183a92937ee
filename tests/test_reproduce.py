"""``dpfix reproduce``: the quick run end to end, seeding, resuming, CIs, the split criterion."""

import json
import math
import struct
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpfix.experiments import CellCache, cell_seed, compute_cell, mean_ci, run_cells
from dpfix.experiments.cells import register, summarise
from dpfix.experiments.runs import eps_grid, load_counts, run_method
from dpfix.experiments.split import best_splits, fit_rule, rule
from dpfix.release.pipeline import privatize_counts
from helpers import cli, needs_data
from test_frontier import check_quick_frontier

KEY = {"experiment": "toy", "dataset": "d", "method": "m", "eps": 1.0, "replication": 0,
       "seed": 0}
CALLS: list[dict] = []


@register("toy", seed_fields=("experiment", "dataset", "eps", "replication", "seed"))
def _toy(key: dict, seed: int) -> dict:
    CALLS.append(key)
    return {"x": float(np.random.default_rng(seed).random()), "method": key["method"]}




# ----------------------------------------------------------------------------- end to end
QUICK_FILES = {
    "privatizers.csv": ["method", "n", "w1_clip-renormalise", "w1_isotonic-cdf"],
    "accuracy.csv": ["dataset", "method", "postprocess", "eps", "w1", "w1_ci", "ce_abs"],
    "comparison.csv": ["dataset", "eps_t", "method", "paper", "ours_isotonic-cdf",
                       "ours_clip-renormalise"],
    "runtime.csv": ["method", "n", "seconds", "timed_out"],
    "split.csv": ["dataset", "eps", "f", "postprocess", "w1", "ce_abs", "loss"],
    "table3.csv": ["postprocess", "dataset"],
    "table3_fit.csv": ["postprocess", "A", "B", "K"],
    "frontier.csv": ["dataset", "method", "eps", "w1", "w1_se", "ce", "ce_se", "d_ce",
                     "ce_limit", "ce_ratio"],
    "frontier_rule.csv": ["eps", "setting", "dominates"],
}
QUICK_PNGS = ["fig3_privatizers.png", "fig5_wasserstein.png", "fig6_count_error.png",
              "fig7_runtime.png", "fig8_split.png", "frontier_pareto.png",
              "frontier_ce_ratio.png", "frontier_w1_ratio.png"]


@needs_data
def test_quick_run_writes_everything_and_a_rerun_computes_nothing(tmp_path, capsys):
    out = tmp_path / "quick"
    # one process: the pytest workers hold the cores (that the cells do not depend on the
    # number of processes is checked on run_cells below)
    rc, stdout, err = cli(capsys, "reproduce", "all", "--quick", "--out", out, "--jobs", 1,
                          "--quiet")
    assert rc == 0, err
    assert err == "" and "all done" in stdout
    for name, columns in QUICK_FILES.items():
        df = pd.read_csv(out / name)
        assert len(df) >= 2, name
        assert set(columns) <= set(df.columns), (name, df.columns)
    for name in QUICK_PNGS:
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", name
        width, height = struct.unpack(">II", data[16:24])
        assert width >= 400 and height >= 300, name
        assert 20_000 < len(data) < 300_000, (name, len(data))
    acc = pd.read_csv(out / "accuracy.csv")
    # every method, both post-processings for the two-stage ones, 3 eps, 2 data sets
    assert len(acc) == 2 * 3 * (6 * 2 + 3)
    assert (acc.replications == 2).all() and np.isfinite(acc.w1).all()
    fixed = acc[(acc.method == "lp-simplex") & (acc.postprocess == "isotonic-cdf")]
    unfixed = acc[(acc.method == "unfixed") & (acc.postprocess == "isotonic-cdf")]
    # the paper's headline: the fixed point cuts the distribution error (binomial, every eps)
    for eps in fixed[fixed.dataset == "binomial"].eps:
        f = fixed[(fixed.dataset == "binomial") & (fixed.eps == eps)].w1.item()
        u = unfixed[(unfixed.dataset == "binomial") & (unfixed.eps == eps)].w1.item()
        assert f < u / 3, (eps, f, u)
    runs = json.loads((out / "run.json").read_text())["targets"]
    assert [r["target"] for r in runs] == ["fig3", "fig5", "fig6", "fig7", "table3", "frontier"]
    assert sum(r["computed"] for r in runs) > 500
    assert runs[-1]["computed"] == 72
    first = (out / "cells.jsonl").read_text()

    rc, _, err = cli(capsys, "reproduce", "all", "--quick", "--out", out, "--jobs", 1,
                     "--quiet")
    assert rc == 0, err
    runs = json.loads((out / "run.json").read_text())["targets"]
    assert [r["computed"] for r in runs] == [0] * 6
    assert all(r["cached"] > 0 for r in runs)
    assert (out / "cells.jsonl").read_text() == first  # nothing appended
    check_quick_frontier(out, capsys)


# ------------------------------------------------------------------------------- seeding
def test_cell_seed_depends_on_the_named_fields_only():
    s = cell_seed(KEY)
    assert s == cell_seed(dict(reversed(list(KEY.items()))))
    assert 0 <= s < 2**63
    assert cell_seed({**KEY, "replication": 1}) != s
    assert cell_seed({**KEY, "seed": 1}) != s
    assert cell_seed({**KEY, "eps": 1.0000001}) != s
    fields = ("dataset", "eps", "replication", "seed")
    assert cell_seed({**KEY, "method": "other"}, fields) == cell_seed(KEY, fields)
    assert cell_seed({**KEY, "method": "other"}) != s


def test_cell_keys_are_checked():
    with pytest.raises(ValueError, match="missing fields"):
        cell_seed({"experiment": "toy"})
    with pytest.raises(ValueError, match="JSON scalar"):
        cell_seed({**KEY, "n": [1, 2]})
    with pytest.raises(ValueError, match="seed"):
        cell_seed({**KEY, "seed": -1})


def _accuracy_cells(methods, reps):
    eps = float(f"{eps_grid()[6]:.12g}")
    return [{"experiment": "accuracy", "dataset": "binomial", "method": m, "eps": eps,
             "replication": r, "seed": 5, "postprocess": "isotonic-cdf",
             "split": "rule-of-thumb"} for m in methods for r in range(reps)]


def _strip(result):
    return {k: v for k, v in result.items() if k not in ("seconds", "cell_seconds")}


@needs_data
def test_results_do_not_depend_on_jobs_or_order(tmp_path):
    cells = _accuracy_cells(["unfixed", "heuristic-max", "heuristic-min"], 3)
    one, k1 = run_cells(cells, CellCache(tmp_path / "a.jsonl"), jobs=1, quiet=True)
    two, k2 = run_cells(cells[::-1], CellCache(tmp_path / "b.jsonl"), jobs=2, quiet=True)
    assert k1 == k2 == len(cells)
    assert [_strip(r) for r in one] == [_strip(r) for r in two[::-1]]
    # replications differ; methods of one replication share stage 1 (paired comparison)
    by = {(c["method"], c["replication"]): r for c, r in zip(cells, one, strict=True)}
    assert by["unfixed", 0]["w1_target"] == by["heuristic-max", 0]["w1_target"]
    assert by["unfixed", 0]["w1_target"] != by["unfixed", 1]["w1_target"]


@needs_data
def test_lp_method_is_the_pipeline():
    """The LP methods run through privatize_counts: same seed, same release."""
    counts = load_counts("binomial")
    a = privatize_counts(counts, 0.5, upper=20, constructor="lp", seed=11)
    b = run_method("lp-simplex", counts, 20, 0.5, seed=11, time_limit=100.0)
    assert np.array_equal(a.z, b.z) and np.array_equal(a.counts, b.counts)
    assert not b.timed_out and not b.retried and b.eps_1 == a.eps_1
    c = run_method("heuristic-max", counts, 20, 0.5, seed=11)
    assert np.array_equal(a.z, c.z)  # stage 1 shared by the two-stage methods


def test_lp_time_limit_is_reported_not_retried(monkeypatch):
    import dpfix.constructors as C

    calls = []

    def slow(z, eps, **kw):
        calls.append(kw)
        raise RuntimeError("lp_optimum: HiGHS highs-ds did not solve the LP: Time limit reached")
    monkeypatch.setattr(C, "lp_optimum", slow)
    r = run_method("lp-ipm", np.array([0, 1, 2, 2]), 2, 1.0, seed=2, time_limit=0.5)
    assert r.timed_out and r.mechanism is None and len(calls) == 1
    assert r.counts is None  # not the true (top-coded) counts: a timed-out run has no output
    assert r.z is not None and r.z.shape == (3,) and r.eps_1 > 0 and r.eps_2 > 0
    assert calls[0]["time_limit"] == 0.5 and calls[0]["solver"] == "highs-ipm"


# ------------------------------------------------------------------------------- resuming
def test_run_cells_computes_only_missing_cells(tmp_path):
    cache = CellCache(tmp_path / "cells.jsonl")
    cells = [{**KEY, "replication": r} for r in range(4)]
    CALLS.clear()
    first, k = run_cells(cells[:2], cache, quiet=True)
    assert k == 2 and len(CALLS) == 2
    again = CellCache(tmp_path / "cells.jsonl")  # a restart reads the file
    res, k = run_cells(cells, again, quiet=True)
    assert k == 2 and len(CALLS) == 4 and res[:2] == first
    res2, k = run_cells(cells + cells, CellCache(tmp_path / "cells.jsonl"), quiet=True)
    assert k == 0 and len(CALLS) == 4 and res2 == res + res


def test_a_line_cut_short_is_recomputed(tmp_path):
    path = tmp_path / "cells.jsonl"
    cells = [{**KEY, "replication": r} for r in range(3)]
    run_cells(cells, CellCache(path), quiet=True)
    text = path.read_text()
    path.write_text(text[: len(text) - 15])  # a crash while writing the last line
    CALLS.clear()
    res, k = run_cells(cells, CellCache(path), quiet=True)
    assert k == 1 and CALLS == [cells[2]]
    assert [r["x"] for r in res] == [compute_cell(c)["x"] for c in cells]


def test_a_failing_cell_is_named(tmp_path):
    with pytest.raises(RuntimeError, match='"dataset": "nowhere"'):
        run_cells([{**KEY, "experiment": "accuracy", "dataset": "nowhere",
                    "postprocess": "none", "split": "none"}],
                  CellCache(tmp_path / "c.jsonl"), quiet=True)


# ------------------------------------------------------------------------------------ CIs
def test_mean_ci_by_hand():
    # mean 5, s^2 = 32/7, t_{0.975, 7} = 2.364624 (tables)
    m, h = mean_ci([2, 4, 4, 4, 5, 5, 7, 9])
    assert m == 5.0
    assert h == pytest.approx(2.364624 * math.sqrt(32 / 7) / math.sqrt(8), rel=1e-6)
    m, h = mean_ci([3.0])
    assert m == 3.0 and math.isnan(h)
    assert mean_ci([1.0, float("nan"), 3.0])[0] == 2.0
    assert all(math.isnan(v) for v in mean_ci([]))
    # 90%: t_{0.95, 2} = 2.919986
    assert mean_ci([1, 2, 3], 0.90)[1] == pytest.approx(2.919986 / math.sqrt(3), rel=1e-6)


@given(st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=12), st.floats(0.1, 10),
       st.floats(-100, 100))
def test_mean_ci_is_affine_equivariant(xs, a, b):
    m, h = mean_ci(xs)
    m2, h2 = mean_ci([a * x + b for x in xs])
    assert m2 == pytest.approx(a * m + b, abs=1e-6)
    assert h2 == pytest.approx(a * h, rel=1e-6, abs=1e-6)


def test_summarise_averages_over_replications_only():
    cells = [{**KEY, "method": m, "replication": r} for m in "ab" for r in range(2)]
    res = [{"x": v} for v in (1.0, 3.0, 10.0, 10.0)]
    df = summarise(cells, res, ["x"]).set_index("method")
    assert df.loc["a", "x"] == 2.0 and df.loc["b", "x"] == 10.0
    assert df.loc["b", "x_ci"] == 0.0 and (df.replications == 2).all()


# ----------------------------------------------------------------------- split criterion
def test_best_split_minimises_the_sum_of_relative_losses():
    # CE grows with f, W1 falls: relative losses 1 + 3, 1.5 + 1.5, 4 + 1 -> f = 0.5
    df = pd.DataFrame({"dataset": "u", "eps": 1.0, "postprocess": "p", "f": [0.1, 0.5, 0.9],
                       "ce_abs": [1.0, 1.5, 4.0], "w1": [0.3, 0.15, 0.1]})
    df["loss"] = df.ce_abs / df.ce_abs.min() + df.w1 / df.w1.min()
    best = best_splits(df)
    assert best.f.tolist() == [0.5] and best.loss.tolist() == [3.0]


def test_fit_rule_recovers_known_parameters():
    eps = np.repeat(eps_grid(), 2)
    best = pd.DataFrame({"eps": eps, "f": rule(eps, 0.7, 0.08, 2.0)})
    fit = fit_rule(best)
    assert fit["A"] == pytest.approx(0.7, abs=1e-6)
    assert fit["B"] == pytest.approx(0.08, abs=1e-6)
    assert fit["K"] == pytest.approx(2.0, abs=1e-5)
    assert fit["rms"] < 1e-8
    assert math.isnan(fit_rule(best.head(3))["A"])


# ----------------------------------------------------------------------------------- CLI
def test_missing_data_folder_is_one_line_naming_dpfix_data(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DPFIX_DATA", str(tmp_path))
    rc, out, err = cli(capsys, "reproduce", "fig5", "--quick", "--out", tmp_path / "o")
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and "DPFIX_DATA" in err and "binom_hist_data.csv" in err
    monkeypatch.setenv("DPFIX_DATA", str(tmp_path / "absent"))
    rc, _, err = cli(capsys, "reproduce", "fig3", "--out", tmp_path / "o")
    assert rc == 2 and err.count("\n") == 1 and "DPFIX_DATA" in err
    assert not (tmp_path / "o").exists()


def test_no_data_folder_names_the_files_and_where_it_looked(tmp_path, capsys, monkeypatch):
    """Outside the repository, without DPFIX_DATA: the line names every file fig5 needs,
    DPFIX_DATA and both folders looked in."""
    import dpfix.io.data

    monkeypatch.delenv("DPFIX_DATA", raising=False)
    monkeypatch.setattr(dpfix.io.data, "__file__",
                        str(tmp_path / "site" / "lib" / "dpfix" / "io" / "data.py"))
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    rc, out, err = cli(capsys, "reproduce", "fig5", "--quick", "--out", tmp_path / "o")
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert "fig5 needs binom_hist_data.csv, crime_data.csv" in err
    assert "DPFIX_DATA" in err and str(tmp_path / "shared" / "data") in err
    assert not (tmp_path / "o").exists()


def test_a_data_folder_without_the_files_names_the_missing_ones(tmp_path, capsys, monkeypatch):
    (tmp_path / "crime_data.csv").write_text("MURDER\n1\n")
    monkeypatch.setenv("DPFIX_DATA", str(tmp_path))
    rc, _, err = cli(capsys, "reproduce", "fig6", "--out", tmp_path / "o")
    assert rc == 2 and err.count("\n") == 1
    assert f"binom_hist_data.csv not in {tmp_path}; set DPFIX_DATA" in err


def test_the_readme_lists_the_files_of_every_target():
    from dpfix.experiments import TARGETS
    from dpfix.experiments.targets import target_files

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    for target in TARGETS:
        line = next((x for x in readme.splitlines() if x.startswith(f"| `{target}` |")), None)
        assert line is not None, f"README: no row for reproduce {target}"
        assert all(f"`{f}`" in line for f in target_files(target)), line
        assert line.count(".csv`") == len(target_files(target)), line


@pytest.mark.parametrize("argv, message", [
    (["--jobs", "0"], "--jobs: must be >= 1"),
    (["--jobs", "two"], "--jobs: expected an integer"),
    (["--replications", "0"], "--replications: must be >= 1"),
    (["--seed", "-3"], "seed: must be a non-negative integer"),
])
def test_bad_arguments_are_one_line(tmp_path, capsys, argv, message):
    rc, _, err = cli(capsys, "reproduce", "fig3", "--out", tmp_path / "o", *argv)
    assert rc == 2 and message in err and err.count("\n") == 1


def test_unknown_target_is_refused(capsys):
    rc, _, err = cli(capsys, "reproduce", "fig4")
    assert rc == 2 and "invalid choice" in err
