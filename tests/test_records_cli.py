"""``dpfix privatize --records`` (docs/records.md): the command plans with the library's
function, writes its outputs all or nothing with the ledger charged once under the unit
``person``, refuses the table's flags in one line each, names its flags in the library's
messages, reads a Dask dataset, stops cleanly on a signal; and records beyond memory are
read in blocks and partitioned by person, never whole, with the bounding's law unchanged."""

from __future__ import annotations

import inspect
import json
import os
import signal
import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from dpfix.cli import build_parser
from dpfix.cli._privatize_plan import method_keywords
from dpfix.cli._privatize_records import records_plan_from_args
from dpfix.experiments.incidents import incidents
from dpfix.release.bounds import PrivateBound
from dpfix.release.inputs import Csv
from dpfix.release.ledger import Ledger
from dpfix.release.options import TwoStage
from dpfix.release.plan import Output
from dpfix.release.records import (
    PrivateContributions,
    Records,
    basis_law,
    bounded_counts,
    plan_records,
    privatize_records,
    sources,
    stream,
)
from dpfix.release.report import report_schema
from helpers import cli


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("records")
    incidents(3000, counties=30, undeclared=0.05, seed=4).write(folder)
    return folder


def _argv(files, out, *extra):
    return ["privatize", files / "records.csv", "--records", "--person", "person_id",
            "--group-by", "county", "--groups", files / "counties.csv", "--epsilon", "1",
            "--upper", "40", "--max-contributions", "3", "--out", out, *extra]


# ------------------------------------------------------------------ one plan
def test_privatize_records_holds_only_what_a_user_chooses():
    parameters = inspect.signature(privatize_records).parameters
    assert len(parameters) <= 16
    plumbing = {"labels", "sep", "shares", "upper_share", "contributions_share", "quantile",
                "staged", "scratch", "force", "escape_formulas", "person", "group_by"}
    assert plumbing.isdisjoint(parameters)
    assert list(inspect.signature(plan_records).parameters) == \
        [p for p in parameters if p != "ledger"]


def test_the_command_plans_with_the_librarys_function(files, tmp_path):
    tsv, groups = tmp_path / "r.tsv", tmp_path / "g.tsv"
    tsv.write_text((files / "records.csv").read_text().replace(",", "\t"))
    groups.write_text((files / "counties.csv").read_text().replace(",", "\t"))
    argv = ["privatize", str(tsv), "--records", "--person", "person_id", "--group-by",
            "county", "--groups", str(groups), "--keep", "name", "--count", "offence",
            "--values", "MURDER,ASSAULT", "--values", "LARCENY", "--column-epsilon",
            "ASSAULT=0.5", "--epsilon", "1", "--upper", "auto", "--upper", "LARCENY=30",
            "--upper-share", "0.2", "--max-contributions", "auto", "--contributions-share",
            "0.25", "--contributions-quantile", "0.8", "--max-per-group", "2", "--sep", "tab",
            "--order", "key", "--seed", "5", "--split", "0.4", "--out",
            str(tmp_path / "o.csv"), "--escape-formulas"]
    args = build_parser().parse_args(argv)
    flagged = records_plan_from_args(args, method_keywords(args), args.input, args.out)
    typed = plan_records(
        Records(Csv(str(tsv), "\t"), "person_id", ["county"], "offence"), Csv(str(groups), "\t"),
        "1", upper={"MURDER": PrivateBound(0.2), "ASSAULT": PrivateBound(0.2),
                    "LARCENY": "30"},
        max_contributions=PrivateContributions("0.25", "0.8"), max_per_group=2,
        values={"MURDER": None, "ASSAULT": "0.5", "LARCENY": None}, keep=["name"],
        order="key", seed=5, options=TwoStage(split=0.4),
        out=Output(str(tmp_path / "o.csv"), escape_formulas=True), confidential=True)
    assert flagged == typed
    assert flagged.release.unit.text == "person" and flagged.largest_candidate >= 1
    assert flagged.charge.eps <= 1


# ------------------------------------------------------------------ a run
def test_a_run_writes_every_output_and_charges_the_ledger_once(files, tmp_path, capsys):
    jsonschema = pytest.importorskip("jsonschema")
    out = tmp_path / "o.csv"
    ledger = tmp_path / "budget.jsonl"
    rc, stdout, err = cli(capsys, *_argv(files, out, "--count", "offence", "--values",
                                         "MURDER,ASSAULT", "--keep", "name", "--report",
                                         tmp_path / "r.json", "--confidential-report",
                                         tmp_path / "c.json", "--plot", tmp_path / "p.png",
                                         "--ledger", ledger, "--ledger-total", "3",
                                         "--max-per-group", "2"))
    assert rc == 0, err
    assert "parallel composition over one person's changes" in stdout
    table = out.read_text().splitlines()
    assert table[0] == "county,name,MURDER,ASSAULT" and len(table) == 31
    report = json.loads((tmp_path / "r.json").read_text())
    jsonschema.validate(report, report_schema())
    assert report["unit"]["text"] == "person:3:2" and "one person" in report["unit"]["statement"]
    assert report["input"]["kind"] == "records"
    assert report["records"]["source"]["path"] == str(files / "records.csv")
    assert report["ledger"]["exact"]["spent"] == "1"
    (entry,) = Ledger(ledger).entries()
    assert entry["eps"] == 1 and entry["columns"] == ["MURDER", "ASSAULT"]
    assert entry["dataset"] == str((files / "records.csv").resolve())
    assert "one person" in entry["unit"] and "at most 3 counts" in entry["unit"]
    secret = json.loads((tmp_path / "c.json").read_text())
    assert secret["records"]["records"] == 3000 and secret["records"]["reader"] == "memory"
    assert oct((tmp_path / "c.json").stat().st_mode & 0o777) == "0o600"
    assert (tmp_path / "p.png").stat().st_size > 0
    assert "records_cut_by_bounding" not in json.dumps(report)


def test_help_states_the_person_unit(capsys):
    rc, out, _ = cli(capsys, "privatize", "--help")
    assert rc == 0
    text = " ".join(out.split())
    assert "With --records the unit is person:C:c (one person added or removed" in text
    assert "released under the privacy unit person:C:c: neighbouring record sets differ " \
           "by one person" in text
    for flag in ("--person", "--group-by", "--groups", "--count", "--values",
                 "--max-contributions", "--max-per-group", "--contributions-share",
                 "--contributions-quantile"):
        assert flag in text


@pytest.mark.parametrize("extra, line", [
    (["--column", "count"], "--column: not with --records"),
    (["--key", "county"], "--key: not with --records"),
    (["--histogram"], "--histogram: not with --records"),
    (["--unit", "row"], "--unit: not with --records"),
    (["--order", "input"], "--order input: with --records one of groups, key, shuffled"),
    (["--max-per-group", "5"], "--max-per-group: 5 exceeds --max-contributions 3"),
    (["--values", "MURDER"], "--values: applies to --count only"),
    (["--count", "offence", "--values", "A,A"], "--values: 'A' named twice"),
    (["--contributions-share", "0.2"],
     "--contributions-share: applies to --max-contributions auto only"),
    (["--max-contributions", "auto", "--contributions-share", "2"],
     "--contributions-share: a number in (0, 1), got '2'"),
    (["--max-contributions", "x"], "--max-contributions: an integer >= 1 or auto, got 'x'"),
    (["--person", "nobody"], "INPUT: column 'nobody' not found"),
    (["--count", "offence", "--values", "MURDER", "--column-epsilon", "RAPE=0.5"],
     "--column-epsilon: 'RAPE' is not a --values"),
    (["--epsilon", "1e-4", "--max-contributions", "auto"],
     "--epsilon: the usable range is 0.0001 to 100"),
    (["--delta", "1e-6", "--constructor", "discrete-gaussian"],
     "--max-contributions: C > 1 is for pure eps-DP methods (group privacy also multiplies "
     "delta); drop --delta or give --max-contributions 1"),
])
def test_bad_flags_are_one_line_naming_them(files, tmp_path, capsys, extra, line):
    rc, out, err = cli(capsys, *_argv(files, tmp_path / "o.csv", *extra))
    assert rc == 2 and out == ""
    (text,) = err.splitlines()
    assert text.startswith(f"dpfix privatize: error: {line}"), text
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("flag", [["--person", "p"], ["--max-contributions", "3"],
                                  ["--order", "groups"]])
def test_the_records_flags_need_records(tmp_path, capsys, flag):
    (tmp_path / "t.csv").write_text("a\n1\n")
    rc, _, err = cli(capsys, "privatize", tmp_path / "t.csv", "--column", "a", "--epsilon",
                     "1", "--upper", "3", "--out", tmp_path / "o.csv", *flag)
    assert rc == 2 and "only with --records" in err and len(err.splitlines()) == 1


def test_a_dask_dataset_of_records(files, tmp_path, capsys):
    pytest.importorskip("dask.dataframe")
    import pandas as pd

    frame = pd.read_csv(files / "records.csv", dtype=str)
    for i in range(3):
        frame.iloc[i::3].to_csv(tmp_path / f"part{i}.csv", index=False)
    out = tmp_path / "o.csv"
    argv = _argv(files, out, "--report", tmp_path / "r.json", "--engine", "dask")
    argv[1] = str(tmp_path / "part*.csv")
    rc, _, err = cli(capsys, *argv)
    assert rc == 0, err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["records"]["source"] == {"path": str(tmp_path / "part*.csv"), "kind": "csv"}
    assert report["unit"]["text"] == "person:3"
    assert len(out.read_text().splitlines()) == 31
    rc, _, err = cli(capsys, *argv, "--sep", ";", "--force")
    assert rc == 2 and "--sep: not with --engine dask" in err


# ------------------------------------------------------------------ signals
_PROGRAM = r"""
import os, signal, sys
hook, sig = sys.argv[1], getattr(signal, sys.argv[2])
del sys.argv[1:3]
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, signal.SIG_DFL)
signal.signal(signal.SIGINT, signal.default_int_handler)
import dpfix.cli as cli
from dpfix.cli import _privatize_outputs as outputs
from dpfix.release.records import sources, stream
sources.STREAM_BYTES = 0  # the streamed reader, its scratch folder on disk
stream.BLOCK_BYTES, stream.BUCKET_BYTES = 1 << 14, 1 << 15


def after(owner, name):
    real = getattr(owner, name)

    def hooked(*a, **k):
        out = real(*a, **k)
        os.kill(os.getpid(), sig)
        return out
    setattr(owner, name, hooked)


if hook == "partitioned":  # the records in their buckets, in the scratch folder
    after(stream.StreamedRecords, "_partition")
elif hook == "bounded":  # the records bounded and counted
    after(stream.StreamedRecords, "tally")
elif hook == "staged":  # every output staged, the summary printed
    after(outputs, "announce")
sys.argv[0] = "dpfix"
sys.exit(cli.main())
"""


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
@pytest.mark.parametrize("hook", ["partitioned", "bounded", "staged"])
@pytest.mark.parametrize("sig, code", [("SIGTERM", 143), ("SIGINT", 130)])
def test_a_signal_leaves_nothing_and_charges_nothing(files, tmp_path, hook, sig, code):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    ledger = out / "budget.jsonl"
    Ledger(ledger, total=5)
    before = ledger.read_bytes()
    argv = [str(a) for a in _argv(files, out / "o.csv", "--report", out / "r.json", "--plot",
                                  out / "p.png", "--ledger", ledger, "--quiet")][1:]
    proc = subprocess.run([sys.executable, "-c", _PROGRAM, hook, sig, "privatize", *argv],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TMPDIR": str(scratch)})
    assert proc.returncode == code, proc.stderr
    by = "" if sig == "SIGINT" else f" by {sig}"
    assert proc.stderr.splitlines() == [f"dpfix privatize: interrupted{by}; nothing written"]
    assert sorted(p.name for p in out.iterdir()) == ["budget.jsonl"]
    assert ledger.read_bytes() == before
    assert list(scratch.iterdir()) == []  # the buckets' scratch folder removed


# ------------------------------------------------------------------ beyond memory
@pytest.fixture
def small_blocks(monkeypatch):
    """The streamed reader for every CSV file, with blocks of 16 KiB and buckets of at most
    2,000 records; reading a file of more than one block whole refused (the declared groups,
    a small file, are read whole)."""
    import pyarrow.csv as pcsv

    monkeypatch.setattr(sources, "STREAM_BYTES", 0)
    monkeypatch.setattr(stream, "BLOCK_BYTES", 1 << 14)
    monkeypatch.setattr(stream, "BUCKET_BYTES", 1 << 16)
    monkeypatch.setattr(stream, "BUCKET_RECORDS", 2000)
    real = pcsv.read_csv

    def whole(path, *args, **kwargs):
        if Path(path).stat().st_size > stream.BLOCK_BYTES:
            raise AssertionError(f"{path} read whole")
        return real(path, *args, **kwargs)
    monkeypatch.setattr(pcsv, "read_csv", whole)


def test_a_large_records_file_is_read_in_blocks_and_partitioned_by_person(
        tmp_path, small_blocks, capsys):
    """A file of 60,000 records (over 60 blocks): never read whole, never more than one
    block or one bucket of at most 2,000 records in memory; the numbers are those of the
    table in memory, exactly, and the command writes its outputs as for any file."""
    data = incidents(60_000, counties=200, undeclared=0.05, seed=6)
    data.write(tmp_path)
    path = tmp_path / "records.csv"
    assert path.stat().st_size > 60 * stream.BLOCK_BYTES
    args = {"values": ["MURDER", "ROBBERY", "ASSAULT"], "max_contributions": 3,
            "max_per_group": 2, "seed": 0}
    groups = data.groups["county"]
    memory = bounded_counts(Records(data.records.astype({"person_id": str}), "person_id",
                                    "county", "offence"), groups, **args)
    streamed = bounded_counts(Records(path, "person_id", "county", "offence"), groups, **args)
    assert streamed.stats == memory.stats
    assert (streamed.true_counts == memory.true_counts).all()
    assert (streamed.counts <= streamed.true_counts).all()
    out = tmp_path / "o.csv"
    rc, _, err = cli(capsys, "privatize", path, "--records", "--person", "person_id",
                     "--group-by", "county", "--groups", tmp_path / "counties.csv", "--epsilon",
                     "1", "--upper", "60", "--max-contributions", "auto", "--out", out,
                     "--confidential-report", tmp_path / "c.json", "--quiet")
    assert rc == 0, err
    secret = json.loads((tmp_path / "c.json").read_text())["records"]
    assert secret["reader"] == "stream" and secret["records"] == 60_000
    seen = secret["streamed"]
    assert seen["blocks"] >= 60 and seen["buckets"] >= 10
    assert seen["largest_bucket_records"] <= 2000 < secret["records_bounded"] / 10
    assert len(out.read_text().splitlines()) == 201


def test_the_streamed_bounding_draws_the_basis_law(tmp_path, small_blocks):
    """3,000 identical persons (3 records in one county, 2 in another), their records in
    every order, streamed through buckets of at most 2,000 records: each person keeps
    exactly the records the rule keeps, with the exact law (chi-square)."""
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    persons = np.repeat(np.arange(3000), 5)
    groups = np.tile(["a", "a", "a", "b", "b"], 3000)
    order = rng.permutation(persons.size)
    lines = [f"P{p:05d},{g}" for p, g in zip(persons[order], groups[order], strict=True)]
    path = tmp_path / "r.csv"
    path.write_text("pid,county\n" + "\n".join(lines) + "\n")
    from dpfix.release.records.reading import records_schema
    from dpfix.release.records.sources import open_records

    recs = Records(path, "pid", "county")
    kept = Counter()
    with open_records(path, records_schema(recs, None, ()), ["a", "b"]) as reader:
        assert reader.meta["streamed"]["buckets"] >= 8
        from dpfix.release.records.bounding import bound_codes
        from dpfix.sampling.source import random_source

        source = random_source(9)
        for row, _, codes in reader._pieces():
            keep, _ = bound_codes(codes, row, 3, 2, source)
            k = np.zeros((codes.max() + 1, 2), dtype=np.int64)
            np.add.at(k, (codes[keep], row[keep]), 1)
            kept.update(map(tuple, k.tolist()))
    law = basis_law([3, 2], 3, 2)
    assert set(kept) == set(law) and sum(kept.values()) == 3000
    keys = sorted(law)
    expected = np.array([float(law[k]) for k in keys]) * 3000
    assert scipy_stats.chisquare([kept[k] for k in keys], expected).pvalue > 1e-4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = privatize_records(recs, ["a", "b"], 1.0, upper=3000, max_contributions=3,
                              max_per_group=2, seed=1)
    assert r.table["county"].tolist() == ["a", "b"]


def test_records_without_a_person_are_counted_over_the_whole_streamed_file(tmp_path,
                                                                           small_blocks):
    lines = ["pid,county"] + [f"{'' if i % 997 == 0 else i},a" for i in range(20_000)]
    path = tmp_path / "r.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"^person: 21 record\(s\) have no 'pid'"):
        bounded_counts(Records(path, "pid", "county"), ["a"], max_contributions=1)


def test_scratch_folders_are_gone_after_a_streamed_release(tmp_path, small_blocks):
    data = incidents(5000, counties=20, seed=2)
    data.write(tmp_path)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    from dpfix.release.records import execute_records

    plan = plan_records(Records(tmp_path / "records.csv", "person_id", "county"),
                        tmp_path / "counties.csv", 1.0, upper=50, max_contributions=2)
    assert plan.engine == "stream"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        execute_records(plan, scratch=scratch)
    assert list(scratch.iterdir()) == []
    assert Path(plan.records.source).exists()
    assert signal.SIGTERM  # the signal cases above remove it too
