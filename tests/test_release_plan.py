"""The plan of a release (dpfix.release.plan): every budget exact and rounded down, made
once from the user's call, the same for the library and the command line, executed by one
function per engine; ``privatize_table`` holds only what a user chooses."""

from __future__ import annotations

import inspect
import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.cli import build_parser
from dpfix.cli._privatize_plan import flags_of, method_keywords, plan_from_args
from dpfix.numbers.deprecation import DpfixDeprecationWarning
from dpfix.release.bounds import PrivateBound
from dpfix.release.budget import mechanism_budget
from dpfix.release.inputs import Csv, Dataset, Histogram
from dpfix.release.ledger import Ledger
from dpfix.release.options import (
    Auto,
    NoSplit,
    OneStage,
    TwoStage,
    rule_of_thumb_split,
    stage_split,
)
from dpfix.release.pipeline import privatize_counts
from dpfix.release.plan import Output, ReleasePlan, plan_release
from dpfix.release.table import execute, privatize_table


@pytest.fixture
def table():
    g = np.random.default_rng(4)
    return pd.DataFrame({"id": [f"r{i:03d}" for i in range(120)], "a": g.poisson(3, 120),
                         "b": g.poisson(2, 120), "note": ["x"] * 120})


# ------------------------------------------------------------------ budgets, exactly
def test_each_mechanism_runs_at_most_its_share_over_the_unit_bound(table):
    """Under ``row:c`` a column's mechanisms run at its share over ``c`` rounded down: the
    nearest float to ``0.3 / 7`` times 7 exceeds 0.3 by units in the last place."""
    assert 7 * Fraction(0.3 / 7) > Fraction(0.3)  # what the nearest float would spend
    r = privatize_table(table, ["a"], 0.3, upper=6, unit="row:7", seed=0)
    m = r.report["composition"]["mechanism_eps"]["a"]
    assert 7 * Fraction(m) <= Fraction(0.3) < 7 * Fraction(math.nextafter(m, 1))
    assert r.report["columns"][0]["budget"]["eps_t"] == m


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 10_000), st.integers(1, 40))
def test_a_mechanism_budget_is_the_largest_float_its_share_pays(k, c):
    b = k / 1000
    m = mechanism_budget(b, c)
    assert c * Fraction(m) <= Fraction(b) < c * Fraction(math.nextafter(m, math.inf))


def test_the_two_stages_never_spend_more_than_the_column():
    """The rule of thumb at 0.6: ``0.6 - f * 0.6`` rounds up, so the two stages' floats would
    spend an ulp more than 0.6; the stage split lowers stage 2 by that ulp."""
    f = rule_of_thumb_split(0.6)
    assert Fraction(f * 0.6) + Fraction(0.6 - f * 0.6) > Fraction(0.6)  # the nearest floats
    r = privatize_counts(np.arange(50) % 5, 0.6, upper=5, seed=1)
    assert r.eps_1 == f * 0.6
    assert Fraction(r.eps_1) + Fraction(r.eps_2) <= Fraction(0.6)


@settings(max_examples=300, deadline=None)
@given(st.floats(1e-4, 100), st.floats(1e-3, 0.999))
def test_a_stage_split_never_exceeds_the_budget(eps, fraction):
    """The first stage's float is the product's, the rest the largest float the rest of the
    budget pays (the nearest float to the difference, or the one below it)."""
    first, rest = stage_split(eps, fraction)
    assert first == fraction * eps and Fraction(first) + Fraction(rest) <= Fraction(eps)
    assert rest == eps - first or \
        Fraction(first) + Fraction(math.nextafter(rest, math.inf)) > Fraction(eps)


@pytest.mark.parametrize("options,upper", [
    (TwoStage(), 6), (TwoStage(split=0.3), 6), (OneStage("staircase"), 6),
    (NoSplit("hybrid"), 6), (NoSplit("one-stage"), 6), (Auto(), 6), (TwoStage(), "auto"),
    (TwoStage(), PrivateBound(0.3))])
def test_the_plans_stages_are_what_the_release_spends(table, options, upper):
    plan = plan_release(table, ["a", "b"], 1.0, upper=upper, options=options, seed=2)
    release = execute(plan)
    for c, col in zip(plan.columns, release.report["columns"], strict=True):
        budget = col["budget"]
        spent = {"upper": budget["eps_upper"], "stage 1": budget["eps_1"],
                 "stage 2": budget["eps_2"]}
        assert dict(c.stages) == {k: v for k, v in spent.items() if k in c.stages}
        assert sum(map(Fraction, c.stages.values())) <= Fraction(c.eps)
        assert budget["eps_1"] == c.stages.get("stage 1", 0.0)


def test_the_charge_is_what_the_report_composes(table, tmp_path):
    plan = plan_release(table, {"a": "0.25", "b": None}, "0.75", upper=6, unit="cell",
                        seed=1)
    # parallel composition: a column without a share spends the whole total; the maximum
    assert plan.charge.eps == Fraction(3, 4) and [c.budget for c in plan.columns] == \
        [Fraction(1, 4), Fraction(3, 4)]
    ledger = Ledger(tmp_path / "l.jsonl", total=2)
    r = execute(plan, ledger=ledger)
    assert r.report["composition"]["eps_spent"] == float(plan.charge.eps)
    assert ledger.balance().eps == 2 - plan.charge.eps
    with plan.reserve(ledger) as held:  # the plan's own reservation: its charge exactly
        execute(plan, ledger=held)
        assert held.charge.eps == plan.charge.eps and not held.committed


def test_a_plan_is_frozen_and_names_its_engine(table, tmp_path):
    table.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "h.csv").write_text("0,4\n1,3\n")
    cases = [(plan_release(table, "a", 1.0, upper=5), "memory"),
             (plan_release(tmp_path / "t.csv", "a", 1.0, upper=5, out=tmp_path / "o.csv"),
              "stream"),
             (plan_release(Csv(tmp_path / "t.csv", ","), "a", 1.0, upper=5,
                           out=tmp_path / "o.parquet"), "stream"),
             (plan_release(tmp_path / "t.csv", "a", 1.0, upper=5, out=tmp_path / "o.csv",
                           options=NoSplit("one-stage")), "memory"),
             (plan_release(Histogram(tmp_path / "h.csv"), None, 1.0, upper=2), "memory"),
             (plan_release(Dataset(tmp_path), "a", 1.0, upper=5, out=tmp_path / "d"), "dask")]
    for plan, engine in cases:
        assert isinstance(plan, ReleasePlan) and plan.engine == engine
    with pytest.raises(AttributeError):
        cases[0][0].engine = "stream"
    with pytest.raises(TypeError):
        cases[0][0].columns[0].stages["stage 1"] = 1.0


# ------------------------------------------------------------------ one call, one plan
def test_privatize_table_holds_only_what_a_user_chooses():
    parameters = inspect.signature(privatize_table).parameters
    assert len(parameters) <= 16
    plumbing = {"staged", "bucket_rows", "scratch", "labels", "on_stage", "progress",
                "upper_share", "sep", "force", "escape_formulas", "shares"}
    assert plumbing.isdisjoint(parameters)
    assert [p.kind for p in parameters.values()].count(inspect.Parameter.VAR_KEYWORD) == 1


def test_the_command_line_plans_with_the_librarys_function(table, tmp_path):
    """``dpfix privatize``'s flags make the plan that the library's keywords make."""
    table.to_csv(tmp_path / "t.csv", sep=";", index=False)
    argv = ["privatize", str(tmp_path / "t.csv"), "--column", "a", "--column", "b",
            "--column-epsilon", "a=0.3", "--epsilon", "1", "--upper", "auto", "--upper",
            "b=6", "--upper-share", "0.2", "--sep", ";", "--key", "id", "--order",
            "shuffled", "--unit", "row:2", "--seed", "5", "--out", str(tmp_path / "o.csv"),
            "--escape-formulas", "--split", "0.4"]
    args = build_parser().parse_args(argv)
    flagged = plan_from_args(args, method_keywords(args), args.input, args.out)
    typed = plan_release(Csv(str(tmp_path / "t.csv"), ";"), {"a": "0.3", "b": None}, "1",
                         upper={"a": PrivateBound(0.2), "b": "6"}, keys=["id"],
                         order="shuffled", unit="row:2", seed=5,
                         options=TwoStage(split=0.4),
                         out=Output(str(tmp_path / "o.csv"), escape_formulas=True),
                         confidential=True)
    assert flagged == typed and flagged.engine == "stream"


def test_the_command_names_its_flags_where_the_library_names_parameters():
    assert flags_of("keys: 'a' is a privatized column (columns=)") == \
        "--key: 'a' is a privatized column (--column)"
    assert flags_of("upper auto: not with a Dataset input; give upper= a number") == \
        "--upper auto: not with --engine dask; give --upper a number"
    assert flags_of("eps: the range (with constructor='lp'), got '3'") == \
        "--epsilon: the range (with --constructor lp), got '3'"
    assert flags_of("out: o.csv exists (use force=True to overwrite)") == \
        "--out: o.csv exists (use --force to overwrite)"
    assert flags_of("column 'keys' not found") == "column 'keys' not found"


# ------------------------------------------------------------------ the former keywords
def test_the_former_keywords_work_and_warn(table, tmp_path):
    path = tmp_path / "t.csv"
    table.to_csv(path, sep=";", index=False)
    new = privatize_table(Csv(path, ";"), {"a": "0.3", "b": None}, 1.0,
                          upper={"a": PrivateBound(0.2), "b": 6}, keys=["id"], seed=3,
                          out=Output(tmp_path / "new.csv", force=True, escape_formulas=True))
    (tmp_path / "old.csv").write_text("there")
    seen = []
    with pytest.warns(DpfixDeprecationWarning) as caught:
        old = privatize_table(path, ["a", "b"], 1.0, upper={"a": "auto", "b": 6},
                              keys=["id"], seed=3, shares={"a": "0.3"}, upper_share=0.2,
                              sep=";", out=tmp_path / "old.csv", force=True,
                              escape_formulas=True, labels={}, bucket_rows=None,
                              scratch=tmp_path, on_stage=lambda *a: seen.append(a),
                              progress=lambda *a: None)
    names = sorted(str(w.message).split(":")[1].split("=")[0].strip() for w in caught)
    assert names == sorted(["shares", "upper_share", "sep", "force", "escape_formulas",
                            "labels", "bucket_rows", "scratch", "on_stage", "progress"])
    assert (tmp_path / "old.csv").read_bytes() == (tmp_path / "new.csv").read_bytes()
    assert old.report["composition"] == new.report["composition"] and seen
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DpfixDeprecationWarning)
        with pytest.raises(TypeError, match="unexpected keyword argument 'sharez'"):
            privatize_table(table, "a", 1.0, upper=6, sharez={"a": 1})
        with pytest.raises(ValueError, match="sep: ';' is a CSV file's separator"):
            privatize_table(table, "a", 1.0, upper=6, sep=";")


def test_the_commands_warnings_name_its_flags(table, tmp_path, capsys):
    """A library warning leaves the command naming the flags (the formula cells: the
    library says ``escape_formulas=True``, the command ``--escape-formulas``)."""
    from helpers import cli

    frame = table.assign(id=["=HYPERLINK(1)"] * len(table))
    frame.to_csv(tmp_path / "t.csv", index=False)
    argv = ["privatize", tmp_path / "t.csv", "--column", "a", "--epsilon", "1", "--upper",
            "6", "--key", "id", "--out", tmp_path / "o.csv", "--seed", "1"]
    rc, _, err = cli(capsys, *argv)
    assert rc == 0, err
    (line,) = [x for x in err.splitlines() if "FormulaWarning" in x]
    assert "(--escape-formulas: prefixed with ')" in line and "escape_formulas" not in line
    with pytest.warns(UserWarning, match=r"\(escape_formulas=True: prefixed with '\)"):
        privatize_table(frame, "a", 1.0, upper=6, keys=["id"], seed=1,
                        out=tmp_path / "lib.csv")
