"""The public report's JSON Schema (dpfix/release/report.schema.json, docs/release.md): every
path's report validates (DataFrame, CSV, Parquet, histogram, Dask dataset, upper="auto", a
ledger, one and several columns, every constructor and privatizer, (eps, delta) methods,
the command's written reports), and a report with a wrong field fails (the schema is not
vacuous)."""

from __future__ import annotations

import copy
import importlib.util
import json
import warnings

import jsonschema
import numpy as np
import pandas as pd
import pytest

from dpfix.constructors import CONSTRUCTORS
from dpfix.release.ledger import Ledger
from dpfix.release.options import NoSplit, OneStage, TwoStage, method_options
from dpfix.release.privatizers import PRIVATIZERS
from dpfix.release.report import report_schema
from dpfix.release.table import Dataset, Histogram, privatize_table
from helpers import cli

SCHEMA = report_schema()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def valid(report: dict) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message[:200]}" for e in VALIDATOR.iter_errors(report)]
    assert errors == []


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A table (DataFrame, CSV, Parquet), a histogram file and a Parquet dataset of two
    partitions."""
    d = tmp_path_factory.mktemp("schema")
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"id": [f"r{i:03d}" for i in range(300)], "a": rng.poisson(4, 300),
                       "b": rng.poisson(2, 300), "note": ["x"] * 300})
    df.to_csv(d / "t.csv", index=False)
    df.to_parquet(d / "t.parquet", index=False)
    (d / "h.csv").write_text("count,number\n0,50\n1,70\n3,20\n9,4\n")
    (d / "ds").mkdir()
    df.iloc[:150].to_parquet(d / "ds" / "p0.parquet", index=False)
    df.iloc[150:].to_parquet(d / "ds" / "p1.parquet", index=False)
    return d, df


def test_the_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


#: name -> (the input, its keywords): every kind of input, with one and several columns.
PATHS = {
    "DataFrame, one column": ("frame", {"columns": "a"}),
    "DataFrame, two columns, keys": ("frame", {"columns": ["a", "b"], "keys": ["id"]}),
    "mapping": ("mapping", {"columns": ["a"]}),
    "CSV, cell unit": ("csv", {"columns": ["a", "b"], "unit": "cell", "keep": ["note"]}),
    "Parquet, row:2": ("parquet", {"columns": ["b"], "unit": "row:2"}),
    "histogram": ("histogram", {"columns": None, "upper": 9}),
    "Dask dataset, two columns": ("dataset", {"columns": ["a", "b"]}),
    "Dask dataset, one-stage": ("dataset", {"columns": "a", "options": NoSplit("one-stage"),
                                            "order": "input"}),
    "upper auto": ("frame", {"columns": ["a", "b"], "upper": {"a": "auto", "b": 10}}),
    "histogram, upper auto": ("histogram", {"columns": None, "upper": "auto"}),
    "(eps, delta): cyclic Gaussian": ("frame", {"columns": ["a", "b"], "delta": 1e-6,
                                                "options": TwoStage(privatizer="cyclic-gaussian")}),
    "(eps, delta): discrete Gaussian": ("csv", {"columns": "a", "delta": 1e-6,
                                                "options": OneStage("discrete-gaussian")}),
    "hybrid": ("frame", {"columns": "a", "options": NoSplit("hybrid")}),
    "structured, T not built": ("frame", {"columns": "a", "upper": 20_000}),
}


def _data(kind, files, tmp_path, kw):
    d, df = files
    if kind == "dataset":
        kw["out"] = tmp_path / "out"
    return {"frame": df, "mapping": {c: df[c].to_numpy() for c in df.columns},
            "csv": d / "t.csv", "parquet": d / "t.parquet", "histogram": Histogram(d / "h.csv"),
            "dataset": Dataset(d / "ds")}[kind]


@pytest.mark.parametrize("path", sorted(PATHS))
def test_every_path_s_report_validates(path, files, tmp_path):
    kind, given = PATHS[path]
    if kind == "dataset":
        pytest.importorskip("dask.dataframe")
    kw = {"upper": 10, "seed": 2, **copy.deepcopy(given)}
    data = _data(kind, files, tmp_path, kw)
    columns = kw.pop("columns")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the top-coding warning of a tight bound
        release = privatize_table(data, columns, 1.0, **kw)
    valid(release.report)
    valid(release.report_for(tmp_path / "o.csv"))
    assert release.report["input"]["kind"] == {"frame": "DataFrame"}.get(kind, kind)
    if kind == "dataset":
        assert release.report["engine"] == "dask"
    if path == "structured, T not built":
        assert release.report["columns"][0]["mechanism"]["built"] is False


@pytest.mark.parametrize("name", [n for n, info in CONSTRUCTORS.items() if info.release])
def test_every_constructor_s_report_validates(name, files):
    delta = 1e-6 if name == "discrete-gaussian" else None
    valid(privatize_table(files[1], "a", 1.0, upper=8, delta=delta, seed=0,
                          options=method_options(constructor=name)).report)


@pytest.mark.parametrize("name", sorted(PRIVATIZERS))
def test_every_privatizer_s_report_validates(name, files):
    delta = 1e-6 if "gaussian" in name else None
    valid(privatize_table(files[1], "a", 1.0, upper=8, delta=delta, seed=0,
                          options=method_options(privatizer=name)).report)


def test_a_ledger_s_report_validates_with_every_input(files, tmp_path):
    d, df = files
    ledger = Ledger(tmp_path / "l.jsonl", total=10, delta_total="1e-5")
    for data, columns in ((df, ["a", "b"]), (Histogram(d / "h.csv"), None), (d / "t.csv", "a")):
        r = privatize_table(data, columns, 1.0, upper=9, ledger=ledger)
        valid(r.report)
        assert set(r.report["ledger"]["exact"]) >= {"total", "balance"}
    r = privatize_table(df, "a", 0.5, upper=9, delta=1e-6, ledger=ledger,
                        options=TwoStage(privatizer="cyclic-gaussian"))
    valid(r.report)
    assert r.report["ledger"]["delta_spent"] == 1e-6
    assert float(ledger.balance().eps) == pytest.approx(6.5)


def test_every_report_the_command_writes_validates(files, tmp_path, capsys):
    d, _ = files
    runs = {
        "table": [d / "t.csv", "--column", "a", "--column", "b", "--key", "id"],
        "auto": [d / "t.parquet", "--column", "a", "--upper", "auto", "--upper-share", "0.2"],
        "histogram": [d / "h.csv", "--histogram"],
        "ledger": [d / "t.csv", "--column", "a", "--ledger", tmp_path / "l.jsonl",
                   "--ledger-total", "5"],
        "histogram and ledger": [d / "h.csv", "--histogram", "--ledger", tmp_path / "l.jsonl"],
    }
    for name, argv in runs.items():
        rep = tmp_path / f"{name}.json"
        upper = [] if "--upper" in argv else ["--upper", "9"]
        rc, _, err = cli(capsys, "privatize", *argv, *upper, "--epsilon", "1", "--out",
                         tmp_path / f"{name}.csv", "--report", rep, "--quiet", "--seed", "3")
        assert rc == 0, (name, err)
        valid(json.loads(rep.read_text()))
    assert "ledger" in json.loads((tmp_path / "histogram and ledger.json").read_text())
    streamed = json.loads((tmp_path / "table.json").read_text())["streamed"]  # CSV to CSV
    assert streamed["passes"] == 2 and streamed["buckets"] == 1
    assert "streamed" in json.loads((tmp_path / "auto.json").read_text())  # Parquet to CSV
    assert "streamed" not in json.loads((tmp_path / "histogram.json").read_text())
    pytest.importorskip("dask.dataframe")
    rep = tmp_path / "dask.json"
    rc, _, err = cli(capsys, "privatize", d / "ds", "--engine", "dask", "--column", "a",
                     "--epsilon", "1", "--upper", "9", "--out", tmp_path / "dask",
                     "--report", rep, "--quiet", "--ledger", tmp_path / "l.jsonl")
    assert rc == 0, err
    valid(json.loads(rep.read_text()))


# ------------------------------------------------------------------ not vacuous
def _set(path: str, value):
    """A change of the report: ``value`` at the dotted ``path`` (``DELETE``: removed)."""
    def change(report):
        *head, last = path.split(".")
        node = report
        for key in head:
            node = node[int(key)] if key.isdigit() else node[key]
        key = int(last) if last.isdigit() else last
        if value is DELETE:
            del node[key]
        else:
            node[key] = value
    return change


DELETE = object()

#: name -> (the report it changes, the change): each makes the report invalid.
WRONG = {
    "extra top-level key": ("frame", _set("note", "x")),
    "version 2": ("frame", _set("report_version", 2)),
    "unit name": ("frame", _set("unit.name", "column")),
    "composition: a key missing": ("frame", _set("composition.eps_spent", DELETE)),
    "composition: spent over the total": ("frame", _set("composition.eps_spent_at_most_eps_t",
                                                        False)),
    "a budget of 0": ("frame", _set("composition.per_column.a", 0)),
    "input kind unknown": ("frame", _set("input.kind", "spreadsheet")),
    "input: an extra key": ("frame", _set("input.rows", 300)),
    "output_columns missing": ("frame", _set("output_columns", DELETE)),
    "row_order without its rule": ("frame", _set("row_order_rule", DELETE)),
    "engine on a local release": ("frame", _set("engine", "dask")),
    "engine local": ("frame", _set("engine", "local")),
    "column: a confidential field": ("frame", _set("columns.0.topcoded", 0)),
    "column: an extra field": ("frame", _set("columns.0.rows", 300)),
    "column: upper a text": ("frame", _set("columns.0.upper", "10")),
    "column: N missing": ("frame", _set("columns.0.N", DELETE)),
    "column: a number for its name": ("frame", _set("columns.0.column", 3)),
    "budget: an extra key": ("frame", _set("columns.0.budget.eps_3", 0.1)),
    "budget: eps_upper missing": ("frame", _set("columns.0.budget.eps_upper", DELETE)),
    "budget: eps_upper spent on a given bound": ("frame",
                                                 _set("columns.0.budget.eps_upper", 0.1)),
    "split: fraction 1": ("frame", _set("columns.0.budget.split.fraction", 1.0)),
    "framework: an estimator in two-stage": ("frame",
                                             _set("columns.0.framework.estimator", "em")),
    "mechanism: an extra key": ("frame", _set("columns.0.mechanism.seed", 1)),
    "mechanism: built without params": ("frame", _set("columns.0.mechanism.params", DELETE)),
    "stage1: no noise": ("frame", _set("columns.0.stage1.noise", DELETE)),
    "samplers: an extra key": ("frame", _set("columns.0.samplers.generator", "x")),
    "timings: a data-dependent phase": ("frame", _set("columns.0.timings_seconds.draw", 0.1)),
    "output distribution above 1": ("frame", _set("columns.0.output_distribution.0", 1.5)),
    "given bound: a quantile": ("frame", _set("columns.0.upper_bound.quantile", "0.99")),
    "DP bound: no budget": ("auto", _set("columns.0.upper_bound.eps_upper", 0)),
    "DP bound: eps_upper 0 in the budget": ("auto", _set("columns.0.budget.eps_upper", 0.0)),
    "DP bound: lam a float": ("auto", _set("columns.0.upper_bound.lam", 1.02)),
    "DP bound: candidates missing": ("auto", _set("columns.0.upper_bound.candidates", DELETE)),
    "DP bound: an extra key": ("auto", _set("columns.0.upper_bound.counts_above", 3)),
    "histogram: a column name": ("histogram", _set("input.columns", ["a"])),
    "histogram: output_columns": ("histogram", _set("output_columns", {
        "privatized": ["a"], "key": [], "kept": [], "rule": "r"})),
    "histogram: a row order": ("histogram", _set("row_order", "shuffled")),
    "dataset without engine": ("dataset", _set("engine", DELETE)),
    "dataset without output": ("dataset", _set("output", DELETE)),
    "dataset sorted by key": ("dataset", _set("row_order", "key")),
    "ledger: balance missing": ("ledger", _set("ledger.balance", DELETE)),
    "ledger: a text balance": ("ledger", _set("ledger.balance", "4")),
    "ledger: exact not a rational": ("ledger", _set("ledger.exact.balance", "4.0e0")),
    "ledger: an extra key": ("ledger", _set("ledger.entries", [])),
    "ledger: this release free": ("ledger", _set("ledger.this_release.eps", 0)),
    "ledger: not a statement": ("ledger", _set("ledger", {})),
    "streamed: said of a DataFrame": ("frame", _set("streamed", {
        "passes": 2, "block_rows": 8, "buckets": 1, "bucket_rows": 8, "rule": "r"})),
    "streamed: one pass": ("streamed", _set("streamed.passes", 1)),
    "streamed: no buckets": ("streamed", _set("streamed.buckets", 0)),
    "streamed: an extra key": ("streamed", _set("streamed.rows", 300)),
}


@pytest.fixture(scope="module")
def reports(files, tmp_path_factory):
    """One valid report of each kind the wrong ones are made from."""
    d, df = files
    out = {"frame": privatize_table(df, "a", 1.0, upper=10, keys=["id"], seed=0).report,
           "auto": privatize_table(df, "a", 1.0, upper="auto", seed=0).report,
           "histogram": privatize_table(Histogram(d / "h.csv"), None, 1.0, upper=9,
                                        seed=0).report}
    ledger = Ledger(tmp_path_factory.mktemp("ledger") / "l.jsonl", total=5)
    out["ledger"] = privatize_table(df, "a", 1.0, upper=10, ledger=ledger).report
    out["streamed"] = privatize_table(d / "t.csv", "a", 1.0, upper=10, keys=["id"], seed=0,
                                      out=tmp_path_factory.mktemp("streamed") / "o.csv").report
    assert out["streamed"]["streamed"]["buckets"] == 1
    if importlib.util.find_spec("dask") is not None:
        out["dataset"] = privatize_table(Dataset(d / "ds"), "a", 1.0, upper=10, seed=0,
                                         out=tmp_path_factory.mktemp("ds") / "out").report
    for report in out.values():
        valid(report)
    return out


@pytest.mark.parametrize("case", sorted(WRONG))
def test_a_report_with_a_wrong_field_fails(case, reports):
    kind, change = WRONG[case]
    if kind not in reports:
        pytest.skip("dask is not installed")
    bad = copy.deepcopy(reports[kind])
    change(bad)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SCHEMA, cls=jsonschema.Draft202012Validator)
