"""``privatize_records`` (docs/records.md): a records file to a released table in one
call: every declared group present, what is counted, the report and the ledger under the
unit ``person:C:c``, the files it reads, the bad inputs (one line each), joint releases, the
study of the error against ``C`` and the page's worked example."""

from __future__ import annotations

import json
import pickle
import re
import warnings
from fractions import Fraction
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpfix.experiments.incidents import bounding_study, incidents, study_table
from dpfix.release.inputs import Csv
from dpfix.release.ledger import Ledger
from dpfix.release.records import (
    CONTRIBUTIONS_SHARE,
    PrivateContributions,
    Records,
    bounded_counts,
    plan_records,
    privatize_records,
)
from dpfix.release.report import report_schema

DOCS = Path(__file__).resolve().parents[1] / "docs" / "records.md"


@pytest.fixture(scope="module")
def data():
    return incidents(6000, counties=40, undeclared=0.05, seed=3)


def _records(data, count=None, **kw):
    return Records(data.records, person="person_id", group_by="county", count=count, **kw)


def _release(data, count=None, groups=None, eps=1.0, **kw):
    args = {"upper": 60, "max_contributions": 3, "seed": 0}
    args.update(kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return privatize_records(_records(data, count),
                                 data.groups["county"] if groups is None else groups, eps,
                                 **args)


def _valid(report):
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(report, report_schema())


# ------------------------------------------------------------------ the table
def test_every_declared_group_gets_a_row_in_the_declared_order(data):
    groups = list(data.groups["county"][::-1]) + ["77777"]  # a county without any record
    r = _release(data, groups=groups)
    assert r.table["county"].tolist() == groups and list(r.table.columns) == ["county", "count"]
    b = bounded_counts(_records(data), groups, max_contributions=3, seed=0)
    assert b.counts[-1, 0] == 0 and b.true_counts[-1, 0] == 0
    assert r.report["row_order"] == "input" and "declared order" in r.report["row_order_rule"]
    by_key = _release(data, groups=groups, order="key")
    assert by_key.table["county"].tolist() == sorted(groups)
    assert sorted(_release(data, groups=groups, order="shuffled").table["county"]) == \
        sorted(groups)


def test_records_outside_the_declared_groups_are_dropped_and_counted_confidentially(data):
    r, secret = _release(data, confidential=True)
    undeclared = int((data.records["county"] == "99999").sum())
    stats = secret.report["records"]
    assert undeclared > 0 and stats["dropped_group_not_declared"] == undeclared
    assert stats["records"] == len(data.records)
    assert stats["records_bounded"] == len(data.records) - undeclared
    assert stats["records_kept"] + stats["records_cut_by_bounding"] == stats["records_bounded"]
    public = json.dumps(r.report)
    for key in ("dropped_group_not_declared", "records_cut_by_bounding", "persons_cut",
                "largest_contribution", "true_counts_total"):
        assert key in secret.report["records"] and key not in public
    assert "confidential report only" in r.report["records"]["groups"]["rule"]
    assert b"records_cut_by_bounding" not in pickle.dumps(r)
    _valid(r.report)


def test_one_count_column_per_declared_value(data):
    values = ["MURDER", "ROBBERY", "LARCENY"]
    r, secret = _release(data, count="offence", values=values, confidential=True)
    assert list(r.table.columns) == ["county", *values]
    b = bounded_counts(_records(data, "offence"), data.groups["county"], values=values,
                       max_contributions=3, seed=0)
    declared = data.records["county"] != "99999"
    counted = data.records["offence"].isin(values)
    assert int(b.true_counts.sum()) == int((declared & counted).sum())
    assert b.stats["dropped_value_not_declared"] == int((declared & ~counted).sum())
    truth = data.records[declared & counted].groupby(["county", "offence"]).size()
    for i, county in enumerate(data.groups["county"]):
        for j, v in enumerate(values):
            assert b.true_counts[i, j] == truth.get((county, v), 0)
    assert r.report["records"]["count"]["values"] == values
    assert r.report["composition"]["per_column"] == {v: 1.0 for v in values}  # parallel
    assert r.report["composition"]["mechanism_eps"] == {v: 1.0 / 3 for v in values}
    _valid(r.report)


def test_the_report_states_the_person_unit_and_the_bounding(data):
    r = _release(data, max_contributions=4, max_per_group=2)
    unit = r.report["unit"]
    assert unit["name"] == "person" and unit["text"] == "person:4:2" and unit["bound"] == 4
    assert "one person" in unit["statement"] and "docs/records.md" in unit["proof"]
    rec = r.report["records"]
    assert rec["unit"] == "person:4:2" and rec["proof"] == "docs/records.md"
    assert rec["bounding"]["max_contributions"] == 4 and rec["bounding"]["max_per_group"] == 2
    assert "uniformly random subset" in rec["bounding"]["rule"]
    assert rec["bounding"]["randomness"].startswith("seeded")
    assert r.report["input"]["kind"] == "records"
    assert r.report["composition"]["eps_spent"] == 1.0
    _valid(r.report)


def test_the_whole_release_reproduces_with_a_seed_and_differs_without(data):
    a, b = _release(data, seed=4), _release(data, seed=4)
    assert a.table.equals(b.table)
    runs = [_release(data, seed=None).table["count"].tolist() for _ in range(3)]
    assert len({tuple(x) for x in runs}) > 1
    assert _release(data, seed=None).report["records"]["bounding"]["randomness"] == \
        "the operating system's CSPRNG (secure)"


# ------------------------------------------------------------------ the budget
def test_auto_chooses_C_with_its_share_and_the_total_stays_within_eps(data):
    r = _release(data, max_contributions="auto", eps="1")
    chosen = r.report["records"]["bounding"]["chosen_by"]
    budget = r.report["records"]["budget"]
    assert chosen["eps_contributions"] == budget["eps_contributions"] == CONTRIBUTIONS_SHARE
    assert r.report["records"]["bounding"]["max_contributions"] == chosen["max_contributions"]
    total = Fraction(budget["eps_contributions"]) + Fraction(budget["eps_release"])
    assert total <= 1 and float(total) == budget["eps_spent"]
    planned = plan_records(_records(data), data.groups["county"], "1", upper=60,
                           max_contributions="auto")
    assert (planned.charge.eps, planned.charge.delta) == (total, 0)
    assert planned.eps_contributions == CONTRIBUTIONS_SHARE
    assert Fraction(planned.eps_contributions) + planned.release.charge.eps == total
    shared = _release(data, max_contributions=PrivateContributions("0.25", quantile=1),
                      eps="1")
    assert shared.report["records"]["budget"]["eps_contributions"] == 0.25
    assert shared.report["records"]["bounding"]["chosen_by"]["quantile"] == "1"
    for bad in (0, 1, 1.5, "x", True):
        with pytest.raises(ValueError, match="contributions_share: a number in"):
            PrivateContributions(bad)
    with pytest.raises(ValueError, match=r"contributions_quantile: a number in \(0, 1\]"):
        PrivateContributions(quantile=0)


def planned_charge(data):
    return plan_records(_records(data), data.groups["county"], "1", upper=60,
                        max_contributions="auto").charge.eps


def test_the_ledger_is_charged_once_with_the_person_unit(data, tmp_path):
    ledger = Ledger(tmp_path / "budget.jsonl", total=3)
    r = _release(data, ledger=ledger, count="offence", values=["MURDER", "RAPE"])
    (entry,) = ledger.entries()
    assert entry["eps"] == 1 and entry["columns"] == ["MURDER", "RAPE"]
    assert "one person" in entry["unit"] and "at most 3 counts" in entry["unit"]
    assert r.report["ledger"]["exact"]["spent"] == "1"
    _release(data, ledger=ledger, max_contributions="auto", eps="1")
    second = ledger.entries()[-1]
    assert second["eps"] == planned_charge(data)
    assert "the choice of C and the release compose sequentially" in second["unit"]
    with ledger.reserve("1/2", dataset="x", columns=["count"], unit="u") as held:
        with pytest.raises(ValueError, match="the reservation charges eps 1/2, delta 0, but "
                                             "the release spends eps 1, delta 0"):
            _release(data, ledger=held)
    with ledger.reserve(1, dataset="x", columns=["count"], unit="u") as held:
        _release(data, ledger=held)
        assert not held.committed  # the caller commits it
        held.commit()
    assert len(ledger.entries()) == 3
    with pytest.raises(ValueError, match="the release needs eps 1"):
        _release(data, ledger=ledger)
    assert len(ledger.entries()) == 3


def test_delta_is_for_C_one(data):
    from dpfix.release.options import OneStage

    r = _release(data, max_contributions=1, delta=1e-6,
                 options=OneStage(constructor="discrete-gaussian"))
    assert r.report["composition"]["delta_spent"] == 1e-6
    with pytest.raises(ValueError, match="C > 1 is for pure eps-DP methods"):
        _release(data, delta=1e-6, options=OneStage(constructor="discrete-gaussian"))


# ------------------------------------------------------------------ files
def b_stats(recs, counties):
    return bounded_counts(Records(recs, "person_id", "county"), counties, max_contributions=1,
                          seed=0).stats


def test_a_csv_file_is_read_as_text_and_a_parquet_file_as_typed(tmp_path):
    recs = tmp_path / "records.csv"
    recs.write_text("\ufeffperson_id,county,offence\n007,01,X\n7,01,X\n7,01,X\n007,02,X\n"
                    ",03,X\n".replace(",03,X\n", ""), encoding="utf-8")
    counties = tmp_path / "counties.csv"
    counties.write_text("county,name\n01,One\n02,Two\n1,Plain one\n")
    b = bounded_counts(Records(recs, "person_id", "county"), counties, max_contributions=1,
                       seed=0)
    # '007' and '7' are two persons; '01' is declared and '1' is another county
    assert b.stats["persons"] == 2 and b.counts[:, 0].tolist() in ([1, 1, 0], [2, 0, 0])
    assert b.true_counts[:, 0].tolist() == [3, 1, 0]
    r = privatize_records(Records(recs, "person_id", "county"), counties, 1.0, keep=["name"],
                          upper=5, max_contributions=1, seed=0)
    assert r.table[["county", "name"]].values.tolist() == \
        [["01", "One"], ["02", "Two"], ["1", "Plain one"]]
    assert r.report["records"]["source"] == {"path": str(recs), "kind": "csv"}
    parquet = tmp_path / "records.parquet"
    pq.write_table(pa.table({"pid": [5, 5, 6], "g": [1, 2, 2], "other": ["a", "b", "c"]}),
                   parquet)
    b = bounded_counts(Records(parquet, "pid", "g"), [1, 2, 3], max_contributions=1, seed=0)
    assert b.true_counts[:, 0].tolist() == [1, 2, 0] and int(b.counts.sum()) == 2
    tabbed, tab_groups = tmp_path / "records.tsv", tmp_path / "counties.tsv"
    tabbed.write_text(recs.read_text(encoding="utf-8").replace(",", "\t"), encoding="utf-8")
    tab_groups.write_text(counties.read_text().replace(",", "\t"))
    t = bounded_counts(Records(Csv(tabbed, "\t"), "person_id", "county"), Csv(tab_groups, "\t"),
                       max_contributions=1, seed=0)
    assert t.true_counts[:, 0].tolist() == [3, 1, 0] and t.stats == b_stats(recs, counties)


def test_several_group_columns(data):
    recs = data.records.assign(state=data.records["county"].str[:3])
    groups = data.groups.assign(state=data.groups["county"].str[:3])[["state", "county"]]
    b = bounded_counts(Records(recs, "person_id", ["state", "county"]), groups,
                       max_contributions=50, seed=0)
    single = bounded_counts(_records(data), data.groups["county"], max_contributions=50,
                            seed=0)
    assert (b.true_counts == single.true_counts).all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = privatize_records(Records(recs, "person_id", ["state", "county"]), groups, 1.0,
                              upper=60, max_contributions=3, seed=0)
    assert list(r.table.columns) == ["state", "county", "count"]
    assert r.table[["state", "county"]].values.tolist() == groups.values.tolist()


# ------------------------------------------------------------------ bad input
def _recs():
    return pd.DataFrame({"pid": ["a", "a", "b"], "county": ["x", "y", "x"],
                         "off": ["M", "R", "M"]})


BAD = {
    "person column missing": ({"person": "nobody"},
                              "records: column 'nobody' not found; columns are "
                              "['pid', 'county', 'off']"),
    "no person named": ({"person": ""}, "person: name the column of the persons, got ''"),
    "group column missing": ({"group_by": "state"}, "records: column 'state' not found"),
    "person is a group column": ({"group_by": "pid"},
                                 "group_by: 'pid' is also the person or a group column"),
    "group declared twice": ({"groups": ["x", "y", "x"]},
                             "groups: group 'x' is declared twice"),
    "declared group missing": ({"groups": ["x", None]},
                               "groups: declared group 2 has no 'county' (missing or empty)"),
    "no group": ({"groups": []}, "groups: no group is declared"),
    "groups of another type": ({"groups": [1, 2]},
                               "groups: the declared 'county' are int64, the records' are "
                               "text; give both one type"),
    "zero bound": ({"max_contributions": 0},
                   "max_contributions: must be an integer >= 1, got 0"),
    "negative bound": ({"max_contributions": -1},
                       "max_contributions: must be an integer >= 1, got -1"),
    "float bound": ({"max_contributions": 2.5},
                    "max_contributions: must be an integer >= 1, got 2.5"),
    "per group above C": ({"max_per_group": 5},
                          "max_per_group: 5 exceeds max_contributions=3"),
    "zero per group": ({"max_per_group": 0},
                       "max_per_group: must be an integer >= 1, got 0"),
    "count without values": ({"count": "off"},
                             "values: name the public values of 'off' to count"),
    "values twice": ({"count": "off", "values": ["M", "M"]}, "values: 'M' is declared twice"),
    "values without count": ({"values": ["M"]}, "values: applies to count= only"),
    "count named as a group": ({"count": "off", "values": ["x", "county"]},
                               "count: the count column 'county' is also a group or kept "
                               "column"),
    "unknown order": ({"order": "random"},
                      "order: one of groups, key, shuffled, got 'random'"),
    "bad eps": ({"eps": 0}, "eps: must be a finite number > 0, got 0"),
    "keep without a table": ({"keep": ["name"]},
                             "groups: with several group columns (or keep=) give a table"),
    "records without their columns": ({"records": "plain"},
                                      "records: a Records(source, person=..., group_by=...)"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_line(case):
    kw, message = BAD[case]
    args = {"person": "pid", "group_by": "county", "groups": ["x", "y"], "eps": 1.0,
            "upper": 5, "max_contributions": 3, "seed": 0, **kw}
    named = {k: args.pop(k) for k in ("person", "group_by", "count", "records") if k in args}
    with pytest.raises((ValueError, TypeError)) as err:
        records = (_recs() if named.get("records") == "plain" else
                   Records(_recs(), named["person"], named["group_by"], named.get("count")))
        privatize_records(records, args.pop("groups"), args.pop("eps"), **args)
    text = str(err.value)
    assert "\n" not in text and text.startswith(message), text


def test_missing_persons_are_refused_with_their_number(tmp_path):
    frame = _recs().assign(pid=["a", None, "b"])
    with pytest.raises(ValueError, match=r"^person: 1 record\(s\) have no 'pid' \(missing or "
                                         r"empty\); every record needs its person"):
        bounded_counts(Records(frame, "pid", "county"), ["x"], max_contributions=1)
    path = tmp_path / "r.csv"
    path.write_text("pid,county\na,x\n,x\n,y\n")
    with pytest.raises(ValueError, match=r"^person: 2 record\(s\) have no 'pid'"):
        bounded_counts(Records(path, "pid", "county"), ["x"], max_contributions=1)


def test_files_and_objects_that_are_not_records_are_refused(tmp_path):
    def bounded(source, groups=("x",)):
        return bounded_counts(Records(source, "pid", "county"), list(groups) if
                              isinstance(groups, tuple) else groups, max_contributions=1)
    with pytest.raises(FileNotFoundError, match="records file .*nothing.csv not found"):
        bounded(tmp_path / "nothing.csv")
    with pytest.raises(TypeError, match="records: a DataFrame, a pyarrow Table, a mapping"):
        bounded(42)
    with pytest.raises(TypeError, match=r"records: a Records\(source, person=\.\.\."):
        bounded_counts(_recs(), ["x"], max_contributions=1)
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ValueError, match="records file .*empty.csv is empty"):
        bounded(tmp_path / "empty.csv")
    (tmp_path / "twice.csv").write_text("pid,pid,county\n1,2,x\n")
    with pytest.raises(ValueError, match="records: column 'pid' appears 2 times"):
        bounded(tmp_path / "twice.csv")
    with pytest.raises(FileNotFoundError, match="groups file .*none.csv not found"):
        bounded(_recs(), tmp_path / "none.csv")


# ------------------------------------------------------------------ joint releases
def test_a_joint_pair_of_offences_under_the_person_unit(data):
    values = ["ASSAULT", "LARCENY"]
    r = _release(data, count="offence", values=values, joint=[tuple(values)], upper=20)
    (entry,) = r.report["joint"]
    assert entry["unit"] == "person" and entry["columns"] == values
    assert entry["mechanism_eps"] == [1.0 / 3, 1.0 / 3]
    assert r.report["composition"]["eps_spent"] == 1.0
    _valid(r.report)


# ------------------------------------------------------------------ the study
def test_the_study_trades_the_bias_of_bounding_against_the_noise():
    data = incidents(8000, counties=150, seed=5)
    rows = bounding_study(data, bounds=(1, 3, 60), seeds=range(2))
    kept = [r["kept"] for r in rows]
    bias = [r["bias"] for r in rows]
    assert kept[0] < kept[1] < kept[2] == 1.0 and bias[0] > bias[1] > bias[2] == 0.0
    assert rows[0]["noise"] < rows[2]["noise"]  # the mechanisms run at eps / C
    assert all(abs(r["price"] - (r["records"] - r["row_C"])) < 1e-12 for r in rows)
    table = study_table(rows)
    assert table.count("\n") == len(rows) + 1 and "| 60 | 100.0% | 0.00 |" in table


# ------------------------------------------------------------------ the page
def test_the_worked_example_of_the_page_runs_as_written(tmp_path, monkeypatch):
    """docs/records.md's Python blocks, in order, in one namespace, in a fresh folder; each
    ``assert`` in them holds."""
    text = DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.M | re.S)
    assert len(blocks) >= 2
    monkeypatch.chdir(tmp_path)
    space: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for block in blocks:
            exec(compile(block, str(DOCS), "exec"), space)  # noqa: S102
    assert (tmp_path / "records.csv").exists()
    assert space["release"].report["unit"]["name"] == "person"


# ------------------------------------------------------------------ beyond memory
def test_a_dask_dataset_is_bounded_partition_by_partition(data, tmp_path):
    """A glob of CSV files and a Dask DataFrame: shuffled by person, each person's records
    meet in one partition, so the caps and the numbers are those of the table in memory."""
    dd = pytest.importorskip("dask.dataframe")
    from dpfix.release.table import Dataset

    for i in range(3):
        data.records.iloc[i::3].to_csv(tmp_path / f"part{i}.csv", index=False)
    args = {"max_contributions": 3, "max_per_group": 2, "seed": 0}
    counties = data.groups["county"]
    memory = bounded_counts(_records(data), counties, **args)
    for source in (Dataset(str(tmp_path / "part*.csv")),
                   dd.from_pandas(data.records, npartitions=4)):
        recs = Records(source, "person_id", "county")
        b = bounded_counts(recs, counties, **args)
        assert (b.true_counts == memory.true_counts).all()
        assert b.stats == memory.stats  # every person bounded whole: the same numbers
        assert (b.counts <= b.true_counts).all()
        assert (bounded_counts(recs, counties, **args).counts == b.counts).all()  # seeded
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = privatize_records(Records(dd.from_pandas(data.records, npartitions=3),
                                      "person_id", "county"), counties, 1.0, upper=60,
                              max_contributions="auto", seed=1)
    assert r.report["records"]["source"] == {"path": "<dask DataFrame>", "kind": "dask"}
    assert r.table["county"].tolist() == data.groups["county"].tolist()
    _valid(r.report)
    with pytest.raises(FileNotFoundError, match="records: no file matches"):
        bounded_counts(Records(Dataset(str(tmp_path / "none*.csv")), "person_id", "county"),
                       counties, **args)


def test_auto_chooses_among_the_C_whose_mechanisms_stay_in_range(data):
    """At eps = 0.02 the release's 0.018 over C stays at least 1e-4 up to C = 179 (its
    mechanisms at the largest float whose C-fold is at most the column's budget): the
    candidates stop there, so the C chosen never makes the release refuse after the draw; a
    budget leaving no C is refused before any record is read, in one line saying it is the
    release's part."""
    plan = plan_records(_records(data), data.groups["county"], 0.02, upper=60,
                        max_contributions=PrivateContributions(0.1, quantile=1.0))
    assert plan.largest_candidate == 179
    rest = plan.release.columns[0].budget
    assert rest <= Fraction(0.02) - Fraction(plan.eps_contributions)
    assert 179 * Fraction(plan.release_at(179).columns[0].eps) <= rest
    assert plan.release_at(179).columns[0].eps >= 1e-4
    with pytest.raises(ValueError, match="eps: .*usable range"):
        plan.release_at(180)
    for seed in range(3):
        r = _release(data, max_contributions=PrivateContributions(0.1, quantile=1.0),
                     eps=0.02, seed=seed)
        assert r.report["records"]["bounding"]["max_contributions"] <= 179
    with pytest.raises(ValueError, match=r"^eps: the usable range is 0.0001 to 100 .*got "
                                         r"8.999999999999999e-05 \(the release.s part "
                                         r"of eps=0.0001: max_contributions='auto' spends "
                                         r"1e-05 on C\)$"):
        _release(data, max_contributions="auto", eps=1e-4)
