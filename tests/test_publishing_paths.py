"""A release a statistician can publish, on every path: a bound chosen privately (in memory,
streamed, Dask, joint pairs and triples, histogram files, records), the top-coding warning
and the report's ``warnings`` built from the release's DP outputs, the stated uncertainty
asked of the ``Release`` and summarised in its report, and every path's report valid
against the schema with its warnings and uncertainty."""

from __future__ import annotations

import warnings
from fractions import Fraction

import jsonschema
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.cli._privatize_plan import flags_of
from dpfix.numbers.exact import exact_text
from dpfix.release import PrivateBound, privatize_records, privatize_table
from dpfix.release.bounds import (
    TOP_MASS_WARNING,
    TopCodingWarning,
    capped_change,
    joint_mass_message,
    top_coding_warnings,
)
from dpfix.release.inputs import Dataset, Histogram
from dpfix.release.joint import MAX_STATES, auto_max_upper
from dpfix.release.options import OneStage
from dpfix.release.records import Records
from dpfix.release.report import report_schema

VALIDATOR = jsonschema.Draft202012Validator(report_schema())


def valid(report: dict) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message[:200]}"
              for e in VALIDATOR.iter_errors(report)]
    assert errors == []


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A table of three count columns (CSV, Parquet dataset of two partitions), a histogram
    file and a file of records (one row per incident)."""
    d = tmp_path_factory.mktemp("publish")
    rng = np.random.default_rng(5)
    N = 400
    df = pd.DataFrame({"id": [f"r{i:03d}" for i in range(N)], "a": rng.poisson(4, N),
                       "b": rng.geometric(0.2, N), "c": rng.poisson(1, N)})
    df.to_csv(d / "t.csv", index=False)
    (d / "ds").mkdir()
    df.iloc[:200].to_parquet(d / "ds" / "p0.parquet", index=False)
    df.iloc[200:].to_parquet(d / "ds" / "p1.parquet", index=False)
    h = np.bincount(df["b"])
    (d / "h.csv").write_text("".join(f"{v},{m}\n" for v, m in enumerate(h)))
    persons = rng.integers(0, 150, 900)
    recs = pd.DataFrame({"person": persons, "group": rng.integers(0, 40, 900)})
    recs.to_csv(d / "records.csv", index=False)
    pd.DataFrame({"group": np.arange(40)}).to_csv(d / "groups.csv", index=False)
    return d, df


def _release(path, files, tmp_path, upper):
    d, df = files
    if path == "memory":
        return privatize_table(df, ["a", "b"], 1.0, upper=upper, keys=["id"], seed=1)
    if path == "streamed":
        return privatize_table(str(d / "t.csv"), ["a", "b"], 1.0, upper=upper, keys=["id"],
                               seed=1, out=tmp_path / "o.csv")
    if path == "dask":
        return privatize_table(Dataset(d / "ds"), ["a", "b"], 1.0, upper=upper, seed=1,
                               out=tmp_path / "out_ds")
    if path == "histogram":
        one = upper if not isinstance(upper, dict) else upper["b"]
        return privatize_table(Histogram(d / "h.csv"), None, 1.0, upper=one, seed=1)
    if path == "joint pair":
        return privatize_table(df, ["a", "b"], 1.0, upper=upper, keys=["id"],
                               joint=[("a", "b")], seed=1)
    if path == "joint triple":  # bounds chosen privately with half of 2 per column: they
        if upper == "auto":       # land near the largest counts (few states, a fast EM)
            return privatize_table(df, ["a", "b", "c"], "6", upper=PrivateBound(0.5),
                                   keys=["id"], joint=[("a", "b", "c")], seed=1)
        return privatize_table(df, ["a", "b", "c"], 1.0, upper={**upper, "c": 6},
                               keys=["id"], joint=[("a", "b", "c")], seed=1)
    one = upper if not isinstance(upper, dict) else upper["b"]
    return privatize_records(Records(d / "records.csv", "person", "group"), d / "groups.csv", 1.0,
                             upper=one, max_contributions=2, seed=1)


PATHS = ("memory", "streamed", "dask", "histogram", "joint pair", "joint triple", "records")


@pytest.mark.parametrize("path", PATHS)
def test_every_path_chooses_a_private_bound_and_its_report_validates(path, files, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopCodingWarning)
        r = _release(path, files, tmp_path, "auto")
    rep = r.report
    valid(rep)
    for col in rep["columns"]:
        bound = col["upper_bound"]
        assert bound["rule"] == "loss" and bound["eps_upper"] > 0 and 0 < bound["share"] < 1
        assert col["budget"]["eps_upper"] == bound["eps_upper"] and col["upper"] == bound["upper"]
        assert col["n"] == col["upper"] + 1 and "uncertainty" in col
    assert isinstance(rep["warnings"], list)


@pytest.mark.parametrize("path", PATHS)
def test_every_path_warns_when_its_bound_cuts_the_data(path, files, tmp_path):
    """A given bound of 2 on counts of mean 4 and 5: the private target piles up on it; the
    warning is issued, and the report lists it with the change to make (in the library's
    words), built from the report's DP entries alone."""
    with pytest.warns(TopCodingWarning, match=r"of its mass on"):
        r = _release(path, files, tmp_path, {"a": 2, "b": 2})
    rep = r.report
    valid(rep)
    assert rep["warnings"], rep["warnings"]
    for w in rep["warnings"]:
        assert w["mass_on_upper"] > TOP_MASS_WARNING and "upper=" in w["change"]
        assert "--" not in w["message"] and "PrivateBound()" in w["message"]
    assert top_coding_warnings(rep["columns"], rep.get("joint", ())) == rep["warnings"]


def test_a_private_bound_at_its_cap_warns_with_the_way_out_not_a_share(tmp_path):
    """With the loss rule's margin (``round(1/2 / eps_upper)`` counts above the candidate
    drawn) a bound chosen privately lands below a dense top only where the candidates stop:
    here a histogram file (released at bounds up to 10^4) with 100 rows of 20,000. A larger
    share cannot raise that bound, nor can a fixed bound on this input: the warning and the
    report's ``warnings`` name the way out (the rows as a table), the report's
    ``upper_bound.candidates.limit`` says why, and the command says it with its flags."""
    path = tmp_path / "h.csv"
    path.write_text("1,200\n2,200\n3,200\n4,200\n20000,100\n", encoding="utf-8")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always", TopCodingWarning)
        r = privatize_table(Histogram(path), None, 0.5, upper=PrivateBound(0.001), seed=0)
    seen = [str(m.message) for m in w if issubclass(m.category, TopCodingWarning)]
    assert len(seen) == 1 and len(r.report["warnings"]) == 1
    valid(r.report)
    (entry,) = r.report["warnings"]
    bound = r.report["columns"][0]["upper_bound"]
    assert bound["upper"] == bound["candidates"]["max_upper"] == 10_000
    assert "histogram input" in bound["candidates"]["limit"]
    assert entry["bound"] == "chosen privately" and "PrivateBound(share=" not in entry["change"]
    assert "the rows as a table" in entry["change"] and "upper=" in entry["change"]
    assert "largest candidate (max_upper = 10000)" in seen[0] and entry["change"] in seen[0]
    assert "PrivateBound(share=" not in seen[0] and "--" not in seen[0]
    assert "--upper-share" not in flags_of(seen[0]) and "(--upper)" in flags_of(seen[0])
    assert top_coding_warnings(r.report["columns"]) == r.report["warnings"]


def test_a_private_bound_below_its_cap_warns_with_twice_its_share(tmp_path):
    """The same release's report with the bound below its largest candidate (the entries a
    release whose candidates went on would have): a larger share can raise it, so the
    warning advises ``upper=PrivateBound(share=...)``, twice the share, and the command
    says ``--upper auto --upper-share``."""
    path = tmp_path / "h.csv"
    path.write_text("1,200\n2,200\n3,200\n4,200\n20000,100\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopCodingWarning)
        r = privatize_table(Histogram(path), None, 0.5, upper=PrivateBound(0.001), seed=0)
    (column,) = r.report["columns"]
    bound = column["upper_bound"]
    candidates = {k: v for k, v in bound["candidates"].items() if k != "limit"}
    below = {**column, "upper_bound": {**bound, "candidates": {**candidates,
                                                               "max_upper": 10**6}}}
    (entry,) = top_coding_warnings([below])
    assert entry["change"] == "upper=PrivateBound(share=0.002) or a larger fixed upper="
    assert "upper=PrivateBound(share=0.002)" in entry["message"]
    assert "--upper auto --upper-share 0.002" in flags_of(entry["message"])


def test_a_joint_tuple_at_its_state_space_advises_fewer_states_not_shares():
    """Every bound chosen privately in the tuple at its largest candidate: larger shares
    raise none, so the joint warning names the state space's way out; one below its cap
    keeps the advice of a larger share."""
    z = np.array([[0.9, 0.02], [0.04, 0.04]])
    way = capped_change({"upper": 1, "candidates": {"max_upper": 1, "limit": "fewer columns"}})
    both = joint_mass_message(z, ["a", "b"], [0.02, 0.02], [way, way])
    assert "larger shares cannot raise" in both and both.endswith(way)
    assert "PrivateBound(share=" not in both
    one = joint_mass_message(z, ["a", "b"], [0.02, 0.02], [way, None])
    assert "upper=PrivateBound(share=0.04)" in one
    given = joint_mass_message(z, ["a", "b"], [None, 0.02], [None, way])
    assert "larger shares cannot raise" in given  # the given bound's share is not at stake


def test_joint_bounds_chosen_privately_fit_the_state_space():
    assert auto_max_upper([PrivateBound()] * 2, "one-stage") == 999
    assert (auto_max_upper([9, PrivateBound()], "two-stage") + 1) * 10 <= MAX_STATES["two-stage"]
    with pytest.raises(ValueError, match="no room for a bound chosen privately"):
        auto_max_upper([10**6, PrivateBound()], "one-stage")


def test_the_readme_joint_example_warns(files):
    """The README's joint pair, MURDER at 50 and RAPE at 100 on the county data, top-codes
    5.8% of the counties: the joint target's mass on the bounds warns."""
    from helpers import data_path

    df = pd.read_csv(data_path("crime_data.csv"))
    with pytest.warns(TopCodingWarning, match=r"MURDER = 50 or RAPE = 100"):
        r = privatize_table(df, ["MURDER", "RAPE"], 1.0, upper={"MURDER": 50, "RAPE": 100},
                            joint=[("MURDER", "RAPE")], seed=1)
    assert [w["column"] for w in r.report["warnings"]] == ["MURDER, RAPE"]


# ------------------------------------------------------------------ the stated uncertainty
@pytest.mark.parametrize("path", ("memory", "streamed", "dask", "records"))
def test_a_release_answers_its_uncertainty_on_every_path_with_rows(path, files, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TopCodingWarning)
        r = _release(path, files, tmp_path, {"a": 12, "b": "auto"})
    column = "b" if path != "records" else "count"
    cs = r.confidence_sets(0.05, column)
    assert cs.exact
    entry = next(c for c in r.report["columns"] if c["column"] == column)["uncertainty"]
    assert entry["available"] and entry["confidence_sets"]["width"] == \
        cs.describe(r.uncertainty[column].histogram)["width"]
    band = r.distribution_band(0.05, column)
    assert band.half_width == entry["distribution_band"]["half_width"]
    t = r.total_interval([0, 1, 2], 0.1, column)
    assert t.rows == 3 and t.lower <= t.upper and t.alpha == 0.1
    with pytest.raises(ValueError, match=r"^alpha: must be a number in \(0, 1\)"):
        r.confidence_sets(0, column)
    with pytest.raises(ValueError, match=r"^rows: position 100000 is not a row"):
        r.total_interval([100000], 0.05, column)
    with pytest.raises(ValueError, match=r"^column: 'zz' is not a privatized column"):
        r.distribution_band(0.05, "zz")


def test_a_histogram_release_has_sets_and_a_band_but_no_rows(files):
    d, _ = files
    r = privatize_table(Histogram(d / "h.csv"), None, 1.0, upper="auto", seed=1)
    assert r.confidence_sets(0.05).exact and r.distribution_band(0.05).centre == "z"
    with pytest.raises(ValueError, match=r"^rows: a histogram release has no rows"):
        r.total_interval([0], 0.05)


def test_a_joint_column_states_why_it_has_no_per_column_uncertainty(files):
    _, df = files
    r = privatize_table(df, ["a", "b"], 1.0, upper={"a": 12, "b": 30}, joint=[("a", "b")],
                        seed=1)
    entry = r.report["columns"][0]["uncertainty"]
    assert entry["available"] is False and entry["reason"].startswith("column: released jointly")
    with pytest.raises(ValueError, match=r"^column: released jointly with b"):
        r.confidence_sets(0.05, "a")


def test_a_float_mechanism_states_conservative_sets(files):
    """The discrete Gaussian's rows come from float rows of ``T``: the sets are computed on
    them and say ``exact`` False (docs/uncertainty.md section 2.5), in the API and the
    report."""
    _, df = files
    r = privatize_table(df, ["a"], 1.0, upper=12, delta=1e-6,
                        options=OneStage("discrete-gaussian"), seed=1)
    cs = r.confidence_sets(0.05)
    assert cs.exact is False
    assert r.report["columns"][0]["uncertainty"]["confidence_sets"]["exact"] is False
    valid(r.report)


def test_the_plot_draws_the_band_and_titles_every_share(files):
    """``--plot``'s figure (from the report's columns): the distribution band of each column
    on its second axis, and the title names eps_upper of a bound chosen privately."""
    from dpfix.release.figures import make_figures

    _, df = files
    r = privatize_table(df, ["a", "b"], 1.0, upper={"a": 12, "b": "auto"}, seed=1)
    fig = make_figures(r.report["columns"], ["t (a)", "t (b)"])
    titles = [ax.get_title().replace("\n", " ") for ax in fig.axes if ax.get_title()]
    b = r.report["columns"][1]
    assert f"eps_upper = {b['budget']['eps_upper']:.3g} for upper = {b['upper']}" in titles[1]
    assert "eps_upper" not in titles[0]
    bands = [ax for ax in fig.axes if ax.get_ylabel() == "cumulative share"]
    assert len(bands) == 2 and all(ax.collections for ax in bands)
    low = bands[1].collections[0].get_paths()[0].vertices[:, 1]
    assert low.min() >= 0 and low.max() <= 1


# ------------------------------------------------------------------ exact figures
def test_budgets_are_stated_exactly_in_the_report_and_the_command(files, tmp_path, capsys):
    """Two columns at eps 1 with bounds chosen privately: each column's eps_t is the 0.5 it
    was given (its stages spend at most it, exactly), never the float sum
    ``0.49999999999999994``; the report states every budget's exact value, and the
    command's summary prints the exact texts."""
    import json

    from helpers import cli

    d, df = files
    r = privatize_table(df, ["a", "b"], "1", upper="auto", seed=0)
    text = json.dumps(r.report)
    assert "0.49999999999999994" not in text
    exact = r.report["composition"]["exact"]
    assert exact["eps_t"] == "1" and exact["eps_spent"] == "1"
    assert exact["per_column"] == {"a": "0.5", "b": "0.5"}
    for col in r.report["columns"]:
        b = col["budget"]
        assert b["eps_t"] == 0.5 and b["exact"]["eps_t"] == "0.5"
        stages = sum(Fraction(b["exact"][k]) for k in ("eps_upper", "eps_1", "eps_2"))
        assert stages <= Fraction(1, 2) and stages == sum(
            Fraction(b[k]) for k in ("eps_upper", "eps_1", "eps_2"))
    rc, out, err = cli(capsys, "privatize", d / "t.csv", "--column", "a", "--column", "b",
                       "--epsilon", "1", "--upper", "auto", "--seed", "0",
                       "--out", tmp_path / "o.csv", "--report", tmp_path / "r.json")
    assert rc == 0, err
    assert "0.49999999999999994" not in out + err + (tmp_path / "r.json").read_text()
    assert "a: eps_t = 0.5 (" in out + err and "eps = 1 in all" in out + err


def test_the_command_says_the_joint_warning_with_its_flags(files, tmp_path, capsys):
    from helpers import cli

    d, _ = files
    rc, out, err = cli(capsys, "privatize", d / "t.csv", "--column", "a", "--column", "b",
                       "--epsilon", "1", "--upper", "2", "--joint", "a,b", "--seed", "1",
                       "--out", tmp_path / "o.csv", "--report", tmp_path / "r.json")
    assert rc == 0, err
    line = [x for x in err.splitlines() if "joint target" in x]
    assert len(line) == 1 and "(--upper) or choose them privately (--upper auto)" in line[0]
    assert "upper=" not in line[0] and "PrivateBound" not in line[0]
    rc, out, err = cli(capsys, "privatize", d / "t.csv", "--column", "a", "--column", "b",
                       "--epsilon", "1", "--upper", "auto", "--joint", "a,b", "--seed", "1",
                       "--out", tmp_path / "p.csv", "--report", tmp_path / "p.json")
    assert rc == 0, err
    assert out.count("eps_upper = ") == 2


# ------------------------------------------------------------------ properties
@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(1, 200), st.just(None)), min_size=2, max_size=3)
       .filter(lambda u: None in u), st.sampled_from(["one-stage", "two-stage"]))
def test_the_joint_cap_is_the_largest_that_fits(uppers, framework):
    given_ = [PrivateBound() if u is None else u for u in uppers]
    fixed = 1
    for u in uppers:
        fixed *= 1 if u is None else u + 1
    chosen = uppers.count(None)
    try:
        cap = auto_max_upper(given_, framework)
    except ValueError:
        assert fixed * 2 ** chosen > MAX_STATES[framework]
        return
    assert fixed * (cap + 1) ** chosen <= MAX_STATES[framework] < fixed * (cap + 2) ** chosen


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.floats(0, 1e6, allow_nan=False), st.fractions(0, 10**6)))
def test_an_exact_text_is_the_exact_value(value):
    text = exact_text(value)
    assert Fraction(text) == Fraction(value)
