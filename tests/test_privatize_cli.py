"""``dpfix privatize``: files in, files out, one-line errors, nothing unnoised leaked."""

import csv
import hashlib
import io
import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpfix.constructors as C
from dpfix.cli import main
from dpfix.io.data import data_path
from dpfix.release.figures import make_figure
from dpfix.theory.mechanism import Mechanism
from helpers import cli, needs_data, shared_available


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rows(path: Path, **kw) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8-sig", **kw) as f:
        return list(csv.reader(f))


@pytest.fixture
def table(tmp_path):
    """A CSV table whose other columns would not survive a numeric round trip."""
    rng = np.random.default_rng(0)
    k = rng.negative_binomial(2, 0.3, 300)
    k[:3] = [0, 75, 120]  # two above the bound 30
    path = tmp_path / "t.csv"
    frame = pd.DataFrame({"name": [f"Place {i}, ST" for i in range(300)],
                          "code": [f"{i:05d}" for i in range(300)],
                          "rate": [f"{i / 7:.10f}0" for i in range(300)],
                          "k": k, "note": ["NA" if i % 3 else "" for i in range(300)]})
    frame.to_csv(path, index=False)
    return path


def base(table, tmp_path, *extra):
    """The usual run; an ``--upper`` in ``extra`` replaces the default (given twice, a bare
    --upper is refused)."""
    upper = [] if "--upper" in extra else ["--upper", "30"]
    return [table, "--column", "k", "--epsilon", "1", *upper,
            "--out", tmp_path / "o.csv", "--seed", "1", "--quiet", *extra]


# ------------------------------------------------------------------ end to end
@needs_data
def test_crime_data_end_to_end(tmp_path, capsys):
    src = data_path("crime_data.csv")
    before = digest(src)
    out, rep, conf, png = (tmp_path / f for f in ("o.csv", "r.json", "c.json", "p.png"))
    rc, stdout, err = cli(capsys, "privatize", src, "--column", "MURDER", "--epsilon", "1",
                          "--upper", "50", "--out", out, "--report", rep, "--plot", png,
                          "--confidential-report", conf, "--quiet", "--key", "county_name",
                          "--order", "input")
    assert rc == 0 and err == "" and digest(src) == before
    a, b = rows(src), rows(out)
    col, name = a[0].index("MURDER"), a[0].index("county_name")
    # only the key and the privatized column: INDEX (the sum of the crime columns) would
    # give back the true MURDER of most counties
    assert len(b) == len(a) == 3137 and b[0] == ["county_name", "MURDER"]
    for ra, rb in zip(a[1:], b[1:], strict=True):  # the key byte for byte
        assert rb[0] == ra[name] and 0 <= int(rb[1]) <= 50
    top = json.loads(rep.read_text())
    cols = top["output_columns"]
    assert cols["key"] == ["county_name"] and cols["kept"] == [] and "INDEX" in cols["dropped"]
    assert top["report_version"] == 1 and top["unit"]["name"] == "row"
    (r,) = top["columns"]  # one shape for one or many columns
    assert (r["n"], r["N"], r["upper"]) == (51, 3136, 50)
    assert r["budget"]["eps_t"] == 1 and r["budget"]["split"]["rule"] == "rule-of-thumb"
    assert r["budget"]["eps_1"] + r["budget"]["eps_2"] == pytest.approx(1, rel=1e-15)
    assert r["mechanism"]["privacy_level"] <= r["budget"]["eps_2"]
    assert len(r["target_z"]) == 51 and sum(r["target_z"]) == pytest.approx(1)
    assert r["estimated_count_error"]["value"] > 0 and "OpenDP" in r["samplers"]["stage1"]
    assert set(r["timings_seconds"]) == {"construct"}
    assert r["stage1"]["postprocess"] and r["mechanism"]["selector"] is None
    assert r["mechanism"]["constructor"] == "northwest"  # the default: Theorem A
    (c,) = json.loads(conf.read_text())["columns"]
    true = np.array([int(x[col]) for x in a[1:]])
    secret = json.loads(conf.read_text())
    assert secret["CONFIDENTIAL"] == "derived from the true data without noise"
    assert c["topcoded"] == int((true > 50).sum()) > 0
    zeta = np.bincount(np.minimum(true, 50), minlength=51) / 3136
    assert c["true_distribution_zeta"] == pytest.approx(zeta.tolist(), abs=1e-15)
    assert "topcoded" not in json.dumps(top) and "zeta" not in json.dumps(top)
    assert [x.split()[0] for x in stdout.splitlines()] == ["dpfix", "out:", "report:", "plot:",
                                                          "confidential-report:"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


RELEASED = [name for name, info in C.CONSTRUCTORS.items() if info.release]


@pytest.mark.parametrize("constructor", RELEASED)
def test_each_constructor_end_to_end(constructor, table, tmp_path, capsys):
    upper = "8" if constructor == "lp" else "30"
    extra = ["--delta", "1e-6"] if constructor == "discrete-gaussian" else []
    args = base(table, tmp_path, "--constructor", constructor, "--report", tmp_path / "r.json",
                *extra)
    args[args.index("--upper") + 1] = upper
    rc, _, err = cli(capsys, "privatize", *args)
    assert rc == 0, err
    (r,) = json.loads((tmp_path / "r.json").read_text())["columns"]
    assert r["mechanism"]["constructor"] == constructor
    if extra:  # (eps, delta)-DP: its delta at eps_2 is checked, not a pure privacy level
        assert 0 < r["mechanism"]["params"]["delta_achieved"] <= 1e-6
        assert "delta" in r["mechanism"]["dp_check"]
    else:
        assert r["mechanism"]["privacy_level"] <= r["budget"]["eps_2"]
    assert r["mechanism"]["fixed_point"] is (constructor in ("heuristic", "lp", "northwest"))
    one_stage = C.CONSTRUCTORS[constructor].stage == "one-stage"
    assert one_stage is (constructor in ("truncated-geometric", "staircase",
                                         "discrete-gaussian"))
    assert (r["target_z"] is None) is one_stage and (r["budget"]["eps_1"] == 0) is one_stage
    assert r["budget"]["delta"] == (1e-6 if extra else 0)
    k = pd.read_csv(tmp_path / "o.csv")["k"]
    assert len(k) == 300 and k.between(0, int(upper)).all()


def test_data_dependent_timings_only_in_the_confidential_report(table, tmp_path, capsys):
    rep, conf = tmp_path / "r.json", tmp_path / "c.json"
    rc, _, err = cli(capsys, "privatize", *base(table, tmp_path, "--report", rep,
                                               "--confidential-report", conf))
    assert rc == 0, err
    (public,), secret = json.loads(rep.read_text())["columns"], json.loads(conf.read_text())
    assert set(public["timings_seconds"]) == {"construct"}  # T depends on the public z only
    assert "timings_seconds" not in json.dumps({k: v for k, v in public.items()
                                                if k != "timings_seconds"})
    assert set(secret["columns"][0]["timings_seconds"]) == {"stage1", "construct", "apply"}
    assert set(secret["timings_seconds"]) == {"read", "write", "total"}
    assert public["timings_seconds"]["construct"] == \
        secret["columns"][0]["timings_seconds"]["construct"]


def test_same_seed_same_bytes_other_seed_other_bytes(table, tmp_path, capsys):
    outs = []
    for i, seed in enumerate(["5", "5", "6"]):
        out = tmp_path / f"o{i}.csv"
        args = base(table, tmp_path)
        args[args.index("--out") + 1], args[args.index("--seed") + 1] = out, seed
        assert cli(capsys, "privatize", *args)[0] == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and outs[0] != outs[2]


def test_other_csv_cells_untouched_bom_crlf_quotes(tmp_path, capsys):
    src = tmp_path / "q.csv"
    lines = ['id,"label",k,extra', '007,"a, ""quoted"" b",3,', '010,plain,0,NA',
             '011,"multi\nline",99,1.50']
    src.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")
    out = tmp_path / "o.csv"
    rc, _, err = cli(capsys, "privatize", src, "--column", "k", "--epsilon", "2",
                     "--upper", "10", "--out", out, "--seed", "0", "--quiet", "--key", "id",
                     "--keep", "label", "--keep", "extra")
    assert rc == 0, err
    raw = out.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and b"\r\n" in raw
    a, b = rows(src), rows(out)
    assert [r[:2] + r[3:] for r in a] == [r[:2] + r[3:] for r in b]
    assert all(0 <= int(r[2]) <= 10 for r in b[1:])


def test_parquet_keeps_dtypes(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    src = tmp_path / "t.parquet"
    frame = pd.DataFrame({"k": np.array([0, 4, 2, 9, 1] * 20, dtype=np.int32),
                          "f": np.linspace(0, 1, 100), "s": [f"x{i}" for i in range(100)],
                          "c": pd.Categorical(["a", "b"] * 50)},
                         index=pd.RangeIndex(100, 200))
    frame.to_parquet(src)
    out = tmp_path / "o.parquet"
    rc, _, err = cli(capsys, "privatize", src, "--column", "k", "--epsilon", "1",
                     "--upper", "5", "--out", out, "--seed", "0", "--quiet", "--order", "input",
                     *[x for c in "fsc" for x in ("--keep", c)])
    assert rc == 0, err
    got = pd.read_parquet(out)
    pd.testing.assert_frame_equal(got.drop(columns="k"),
                                  frame.drop(columns="k").reset_index(drop=True))
    assert got["k"].dtype == np.int64 and got["k"].between(0, 5).all()


@pytest.mark.parametrize("dtype, written", [("Int64", "int64"), ("UInt8", "int64"),
                                            ("Float64", "int64"), ("int8", "int64"),
                                            ("uint8", "int64"), ("string", "int64"),
                                            (object, "int64")])
def test_parquet_privatized_column_dtype(dtype, written, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    src, out = tmp_path / "t.parquet", tmp_path / "o.parquet"
    k = [0, 4, 2, 9, 1] * 20
    pd.DataFrame({"k": pd.Series([str(v) for v in k] if dtype in ("string", object) else k,
                                 dtype=dtype)}).to_parquet(src)
    rc, _, err = cli(capsys, "privatize", src, "--column", "k", "--epsilon", "1",
                     "--upper", "5", "--out", out, "--seed", "0", "--quiet")
    assert rc == 0, err
    got = pd.read_parquet(out)["k"]
    assert str(got.dtype) == written and got.between(0, 5).all() and len(got) == 100


@pytest.mark.parametrize("header", [",0", None])
def test_histogram_in_histogram_out(header, tmp_path, capsys):
    eta = [0, 3, 10, 25, 40, 25, 10, 3, 0, 1]
    src = tmp_path / "h.csv"
    body = [f"{i},{m}" for i, m in enumerate(eta)]
    src.write_text("\n".join(([header] if header else []) + body) + "\n")
    out = tmp_path / "o.csv"
    rc, _, err = cli(capsys, "privatize", src, "--histogram", "--epsilon", "1", "--upper", "8",
                     "--out", out, "--seed", "0", "--quiet")
    assert rc == 0, err
    lines = out.read_text().splitlines()
    if header:
        assert lines.pop(0) == header
    pairs = [tuple(map(int, x.split(","))) for x in lines]
    assert [i for i, _ in pairs] == list(range(9)) and sum(m for _, m in pairs) == sum(eta)


@needs_data
def test_shared_binomial_histogram(tmp_path, capsys):
    out = tmp_path / "o.csv"
    rc, _, err = cli(capsys, "privatize", data_path("binom_hist_data.csv"), "--histogram",
                     "--epsilon", "1", "--upper", "20", "--out", out, "--quiet")
    assert rc == 0, err
    lines = out.read_text().splitlines()
    assert lines[0] == ",0" and sum(int(x.split(",")[1]) for x in lines[1:]) == 10_000


def test_force_overwrites(table, tmp_path, capsys):
    (tmp_path / "o.csv").write_text("old\n")
    assert cli(capsys, "privatize", *base(table, tmp_path), "--force")[0] == 0
    assert len(pd.read_csv(tmp_path / "o.csv")) == 300


# ------------------------------------------------------------------ bad input
BAD_VALUES = {"fraction": ("2.5", "not an integer"), "negative": ("-3", "negative"),
              "nan": ("nan", "missing value"), "empty": ("", "missing value"),
              "text": ("abc", "not a number"), "inf": ("inf", "not an integer")}


def assert_refused(capsys, argv, match, tmp_path, inputs, code=2):
    """Exit code 2 (bad input, "error:") or 1 (internal failure, "failed:"), one line on
    stderr, and no file created or changed."""
    before = {p: digest(p) for p in inputs}
    listing = sorted(p.name for p in tmp_path.iterdir())
    rc, out, err = cli(capsys, "privatize", *argv)
    assert rc == code
    assert len(err.strip().splitlines()) == 1 and match in err, err
    assert err.startswith("dpfix privatize: error:" if code == 2 else "dpfix privatize: failed:")
    for name in ("o.csv", "r.json", "p.png", "c.json"):  # none created (nor temporaries)
        assert name in listing or not (tmp_path / name).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == listing
    assert {p: digest(p) for p in inputs} == before
    return err


@pytest.mark.parametrize("bad", sorted(BAD_VALUES))
def test_bad_value_in_the_column(bad, table, tmp_path, capsys):
    value, match = BAD_VALUES[bad]
    frame = pd.read_csv(table, dtype=str, keep_default_na=False)
    frame.loc[7, "k"] = value
    frame.to_csv(table, index=False)
    argv = base(table, tmp_path, "--report", tmp_path / "r.json", "--plot", tmp_path / "p.png",
                "--confidential-report", tmp_path / "c.json")
    err = assert_refused(capsys, argv, match, tmp_path, [table])
    assert "column 'k', line 9:" in err  # data row 7 (from 0) after the header line


OPTION_CASES = {
    "missing file": (["--input", "nope.csv"], "not found"),
    "missing column": (["--column", "K"], "column 'K' not found"),
    "eps zero": (["--epsilon", "0"], "--epsilon"),
    "eps negative": (["--epsilon=-1"], "--epsilon"),
    "eps nan": (["--epsilon", "nan"], "--epsilon"),
    "eps inf": (["--epsilon", "inf"], "--epsilon"),
    "eps text": (["--epsilon", "one"], "--epsilon"),
    "upper zero": (["--upper", "0"], "--upper"),
    "upper fraction": (["--upper", "2.5"], "--upper"),
    "constructor": (["--constructor", "simplex"], "--constructor: invalid choice: 'simplex'"),
    "selector": (["--selector", "median"], "--selector: invalid choice: 'median'"),
    "privatizer": (["--privatizer", "gauss"], "--privatizer: invalid choice: 'gauss'"),
    "postprocess": (["--postprocess", "round"], "--postprocess: invalid choice: 'round'"),
    "split": (["--split", "1.5"], "--split"),
    "split text": (["--split", "half"], "--split"),
    "seed": (["--seed", "-4"], "--seed"),
    "delta without gaussian": (["--delta", "1e-6"], "delta"),
    "one-stage split": (["--constructor", "staircase", "--split", "0.3"], "one-stage"),
    "one-stage gaussian": (["--constructor", "staircase", "--privatizer", "cyclic-gaussian",
                            "--delta", "1e-6"], "privatizer: does not apply"),
    "one-stage postprocess": (["--constructor", "truncated-geometric", "--postprocess",
                               "project-simplex"], "postprocess: does not apply"),
    "selector without heuristic": (["--constructor", "lp", "--upper", "8", "--selector",
                                    "random"], "applies to the heuristic constructor only"),
    "lp too large": (["--constructor", "lp", "--upper", "401"], "upper at most 400"),
    "plot type": (["--plot", "PLOT.xyz"], "--plot"),
    "histogram and column": (["--histogram"], "--column"),
    "no epsilon": (["--epsilon", None], "--epsilon is required"),
    "no column": (["--column", None], "--column"),
    "flag without value": (["--upper"], "--upper"),
    "out folder missing": (["--out", "MISSING/o.csv"], "does not exist"),
}


@pytest.mark.parametrize("case", sorted(OPTION_CASES))
def test_bad_option(case, table, tmp_path, capsys):
    change, match = OPTION_CASES[case]
    argv = base(table, tmp_path, "--report", tmp_path / "r.json")
    if change[0] == "--input":
        argv[0] = tmp_path / change[1]
    elif len(change) == 1 and change[0] in argv and change[0] != "--histogram":
        argv = argv[:argv.index(change[0]) + 1]  # the flag is the last word, its value lost
    elif len(change) == 1:
        argv += change
    else:
        for flag, value in zip(change[::2], change[1::2], strict=True):
            if flag in argv:
                i = argv.index(flag)
                argv[i:i + 2] = [] if value is None else [flag, value]
            else:
                argv += [flag, value]
    argv = [str(a).replace("PLOT", str(tmp_path / "p")).replace("OUT", str(tmp_path / "o"))
            .replace("MISSING", str(tmp_path / "missing")) for a in argv]
    assert_refused(capsys, argv, match, tmp_path, [table])


@pytest.mark.parametrize("content, match", [("k\n", "no rows"), ("", "empty"),
                                            ("a,b\n1,2\n", "not found")])
def test_empty_or_headless_tables(content, match, tmp_path, capsys):
    src = tmp_path / "e.csv"
    src.write_text(content)
    assert_refused(capsys, base(src, tmp_path), match, tmp_path, [src])


@pytest.mark.parametrize("existing", ["o.csv", "r.json"])
def test_existing_output_is_refused_and_left_alone(existing, table, tmp_path, capsys):
    (tmp_path / existing).write_text("keep me\n")
    argv = base(table, tmp_path, "--report", tmp_path / "r.json")
    assert_refused(capsys, argv, "exists (use --force", tmp_path, [table, tmp_path / existing])


def test_output_may_not_be_the_input(table, tmp_path, capsys):
    argv = base(table, tmp_path, "--force")
    argv[argv.index("--out") + 1] = table
    assert_refused(capsys, argv, "is the input file", tmp_path, [table])


def test_non_dp_mechanism_writes_nothing(table, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(C, "heuristic", lambda z, eps, **kw: Mechanism.from_matrix(
        np.eye(len(z)), eps=eps, fixed_point=np.asarray(z)))
    argv = base(table, tmp_path, "--report", tmp_path / "r.json", "--constructor", "heuristic")
    assert_refused(capsys, argv, "exceeds eps_2", tmp_path, [table])


# ------------------------------------------------------------------ the rest
def test_progress_bar_and_quiet(table, tmp_path, capsys):
    argv = [a for a in base(table, tmp_path) if a not in ("--quiet",)]
    rc, _, err = cli(capsys, "privatize", *argv)
    assert rc == 0 and "row" in err and "%" in err and "NOT FOR PRODUCTION" in err
    assert "\r" not in err  # stderr is not a terminal here: no carriage-return frames
    assert "stage 1, construct, draw done; 300 rows (100%)" in err
    argv[argv.index("--out") + 1] = tmp_path / "o2.csv"
    rc, out, err = cli(capsys, "privatize", *argv, "--quiet")
    assert rc == 0 and err == "" and "out:" in out


def test_figure_is_labelled(table):
    from dpfix.release.pipeline import privatize_counts

    r = privatize_counts(pd.read_csv(table)["k"].to_numpy(), 1.0, upper=30, seed=0)
    ax = make_figure(r, "t").axes[0]
    assert ax.get_xlabel() == "count" and ax.get_ylabel() == "share of rows"
    assert "eps_t = 1" in ax.get_title()
    assert len(ax.get_legend().get_texts()) == 2


def test_help_says_the_bound_is_public(capsys):
    rc, out, _ = cli(capsys, "privatize", "--help")
    text = " ".join(out.split())
    assert rc == 0 and "public upper bound" in text and "not computed from the data" in text
    assert "--confidential-report" in text and "NOT FOR PRODUCTION" in text


def test_demo_writes_a_named_folder(tmp_path, capsys):
    root = tmp_path / "run"
    rc, out, err = cli(capsys, "privatize", "--demo", "--out-dir", root, "--seed", "2",
                       "--quiet")
    assert rc == 0, err
    assert f"demo outputs in {root}" in out
    for f in ("input.csv", "privatized.csv", "report.json", "plot.png",
              "confidential_report.json"):
        assert (root / "synthetic" / f).is_file()
    crime = shared_available()
    assert (root / "crime" / "report.json").is_file() is crime
    assert (root / "crime" / "confidential_report.json").exists() is False
    if crime:
        assert json.loads((root / "crime" / "report.json").read_text())["columns"][0]["N"] == 3136
    rc, _, err = cli(capsys, "privatize", "--demo", "--out-dir", root, "--quiet")
    assert rc == 2 and "exists" in err and len(err.splitlines()) == 1
    assert cli(capsys, "privatize", "--demo", "--out-dir", root, "--quiet", "--force")[0] == 0


def test_demo_without_shared_data(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("DPFIX_DATA", raising=False)
    monkeypatch.setattr("dpfix.io.data.data_dir", lambda: (_ for _ in ()).throw(
        FileNotFoundError("no data folder")))
    rc, out, err = cli(capsys, "privatize", "--demo", "--out-dir", tmp_path / "d", "--seed",
                       "0", "--quiet")
    assert rc == 0, err
    assert "crime demo skipped" in out and not (tmp_path / "d" / "crime").exists()


def test_demo_refuses_inputs(tmp_path, capsys):
    rc, _, err = cli(capsys, "privatize", "--demo", "--column", "k")
    assert rc == 2 and "--column" in err and len(err.splitlines()) == 1


def test_failure_while_writing_leaves_nothing_behind(table, tmp_path, capsys, monkeypatch):
    def broken(*a, **k):  # fails after the output table has been written to its temporary
        raise ValueError("plot: renderer failed")
    monkeypatch.setattr("dpfix.release.figures.make_figure", broken)
    argv = base(table, tmp_path, "--report", tmp_path / "r.json", "--plot", tmp_path / "p.png")
    assert_refused(capsys, argv, "renderer failed", tmp_path, [table])


@pytest.mark.parametrize("body, match", [("0,3\n1,2.5\n", "not an integer"),
                                         ("0,3\n1,-2\n", "negative"),
                                         ("count,number\n0,0\n1,0\n", "no rows"),
                                         ("0,3\n1,x\n", "expected 'count,number'")])
def test_bad_histogram(body, match, tmp_path, capsys):
    src = tmp_path / "h.csv"
    src.write_text(body)
    argv = [src, "--histogram", "--epsilon", "1", "--upper", "5", "--out", tmp_path / "o.csv"]
    assert_refused(capsys, argv, match, tmp_path, [src])


def test_error_is_one_line_without_quiet(table, tmp_path, capsys):
    argv = [a for a in base(table, tmp_path, "--constructor", "staircase", "--split", "0.2")
            if a != "--quiet"]  # seeded and not quiet: still one line, no warning
    assert_refused(capsys, argv, "one-stage", tmp_path, [table])


def test_ragged_csv_is_one_line(tmp_path, capsys):
    src = tmp_path / "r.csv"
    src.write_text("a,k\n1,2\n3,4,5\n")
    assert_refused(capsys, [src, "--column", "k", "--epsilon", "1", "--upper", "5",
                            "--out", tmp_path / "o.csv"], "input file", tmp_path, [src])


def test_help_lists_every_method():
    from dpfix.cli import build_parser
    from dpfix.constructors import CONSTRUCTORS, SELECTORS
    from dpfix.release.privatizers import POSTPROCESSORS, PRIVATIZERS

    sub = build_parser()._subparsers._group_actions[0].choices["privatize"]
    text = " ".join(sub.format_help().split()).replace("- ", "-")
    for name in [*CONSTRUCTORS, *SELECTORS, *PRIVATIZERS, *POSTPROCESSORS]:
        assert name in text, name


# ------------------------------------------------------------------ random state
def _unseeded_random_selector(table, tmp_path, capsys, monkeypatch):
    """Run ``--selector random`` without ``--seed``; return the report text, what stage 2
    drew its randomness from and the seed handed to the heuristic."""
    import re

    import dpfix.release.frameworks as P

    seen = {}
    source, heuristic = P.random_source, C.heuristic

    def spy_source(seed=None):
        seen["stage2_seed"] = seed
        seen["source"] = source(seed)
        return seen["source"]

    def spy_heuristic(z, eps, **kw):
        seen["selector_seed"] = kw.get("seed")
        return heuristic(z, eps, **kw)
    monkeypatch.setattr(P, "random_source", spy_source)
    monkeypatch.setattr(C, "heuristic", spy_heuristic)
    argv = base(table, tmp_path, "--selector", "random", "--report", tmp_path / "r.json",
                "--constructor", "heuristic")
    del argv[argv.index("--seed"):argv.index("--seed") + 2]
    rc, _, err = cli(capsys, "privatize", *argv)
    assert rc == 0, err
    text = (tmp_path / "r.json").read_text()
    return text, seen, [int(x) for x in re.findall(r"\d+", text)]


def test_unseeded_random_selector_leaks_no_random_state(table, tmp_path, capsys, monkeypatch):
    text, seen, numbers = _unseeded_random_selector(table, tmp_path, capsys, monkeypatch)
    assert "entropy" not in text.lower() and "SeedSequence" not in text
    (r,) = json.loads(text)["columns"]
    assert r["mechanism"]["params"]["seed"] == "fresh OS randomness (not recorded)"
    assert r["seed"] is None
    s = seen["selector_seed"]  # the selector's randomness is not in the report
    assert not isinstance(s, np.random.SeedSequence) or s.entropy not in numbers


def test_stage2_randomness_cannot_be_rebuilt_from_the_report(table, tmp_path, capsys,
                                                             monkeypatch):
    """Unseeded, stage 2 draws from the secure source (fresh OS randomness, no seed)."""
    _, seen, _ = _unseeded_random_selector(table, tmp_path, capsys, monkeypatch)
    assert seen["stage2_seed"] is None and seen["source"].secure


def test_report_writer_refuses_random_state():
    from dpfix.io.reports import jsonable, small_params

    params = {"selector": "random", "seed": np.random.SeedSequence(),
              "rng": np.random.default_rng(0), "passes": 3}
    assert small_params(params) == {"selector": "random", "passes": 3,
                                    "omitted_random_state": ["seed", "rng"]}
    with pytest.raises(TypeError, match="random state"):
        jsonable({"x": [np.random.SeedSequence()]})


# ------------------------------------------------------------------ huge histograms
def test_huge_histogram_is_never_expanded(tmp_path, capsys):
    src = tmp_path / "h.csv"
    src.write_text("count,number\n0,5\n1,99999999999999\n3,12345678901234567\n")
    out, conf = tmp_path / "o.csv", tmp_path / "c.json"
    rc, _, err = cli(capsys, "privatize", src, "--histogram", "--epsilon", "1", "--upper", "2",
                     "--out", out, "--seed", "0", "--quiet", "--confidential-report", conf)
    assert rc == 0, err
    lines = out.read_text().splitlines()
    assert lines[0] == "count,number"
    got = [tuple(map(int, x.split(","))) for x in lines[1:]]
    assert [i for i, _ in got] == [0, 1, 2]
    assert sum(m for _, m in got) == 5 + 99999999999999 + 12345678901234567  # exact
    (c,) = json.loads(conf.read_text())["columns"]
    assert c["topcoded"] == 12345678901234567
    assert 0 <= c["realized_count_error"]["abs"] <= 2


@pytest.mark.parametrize("body, match", [("0,1\n1,9223372036854775808\n", "above 2^63"),
                                         ("0,1\n20000000,1\n", "above the largest"),
                                         ("0,4611686018427387904\n1,1\n", "exceeds the cap")])
def test_histogram_too_large_is_one_line(body, match, tmp_path, capsys):
    src = tmp_path / "h.csv"
    src.write_text(body)
    argv = [src, "--histogram", "--epsilon", "1", "--upper", "5", "--out", tmp_path / "o.csv"]
    assert_refused(capsys, argv, match, tmp_path, [src])


# ------------------------------------------------------------------ internal failures
@pytest.mark.parametrize("error, match", [
    (RuntimeError("HiGHS: status Infeasible"), "RuntimeError: HiGHS: status Infeasible"),
    (RuntimeError("heuristic: 12 passes exceed the bound 11"), "exceed the bound"),
    (MemoryError(), "out of memory"),
    (OverflowError("math range error"), "OverflowError: math range error")])
def test_internal_failure_is_one_line_and_writes_nothing(error, match, table, tmp_path, capsys,
                                                         monkeypatch):
    def broken(*a, **k):
        raise error
    monkeypatch.setattr(C, "heuristic", broken)
    argv = base(table, tmp_path, "--report", tmp_path / "r.json", "--confidential-report",
                tmp_path / "c.json", "--constructor", "heuristic")
    err = assert_refused(capsys, argv, match, tmp_path, [table], code=1)
    assert "nothing written" in err


# ------------------------------------------------------------------ all or nothing
def _during_the_run(monkeypatch, action):
    """Run ``action()`` once the outputs are staged, just before they are committed (the run
    is not over; the table may be streamed to its temporary, never held in memory)."""
    from dpfix.io.commit import StagedFiles

    real = StagedFiles.commit

    def commit(self, *a, **k):
        action()
        return real(self, *a, **k)
    monkeypatch.setattr(StagedFiles, "commit", commit)


def test_file_created_during_the_run_is_not_replaced(table, tmp_path, capsys, monkeypatch):
    _during_the_run(monkeypatch, lambda: (tmp_path / "o.csv").write_text("someone else's\n"))
    rc, _, err = cli(capsys, "privatize", *base(table, tmp_path, "--report", tmp_path / "r.json"))
    assert rc == 2 and len(err.splitlines()) == 1 and "was created during the run" in err
    assert (tmp_path / "o.csv").read_text() == "someone else's\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.csv", "t.csv"]


@pytest.mark.parametrize("force", [False, True])
def test_output_turned_into_a_folder_commits_nothing(force, table, tmp_path, capsys,
                                                     monkeypatch):
    if force:
        (tmp_path / "o.csv").write_text("old\n")
    _during_the_run(monkeypatch, lambda: (tmp_path / "r.json").mkdir())
    argv = base(table, tmp_path, "--report", tmp_path / "r.json", "--plot", tmp_path / "p.png",
                *(["--force"] if force else []))
    rc, out, err = cli(capsys, "privatize", *argv)
    assert rc == 2 and len(err.splitlines()) == 1 and "r.json is a folder" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.csv", "r.json", "t.csv"][1 - force:]
    if force:
        assert (tmp_path / "o.csv").read_text() == "old\n"  # restored


def test_a_failed_move_restores_what_force_replaced(table, tmp_path, capsys, monkeypatch):
    import dpfix.io.commit

    for name in ("o.csv", "r.json"):
        (tmp_path / name).write_text(f"old {name}\n")
    real = os.replace

    def replace(src, dst):  # the report's move fails after the table's succeeded
        if Path(dst).name == "r.json" and Path(src).suffix == ".part":
            raise OSError(5, "Input/output error")
        return real(src, dst)
    monkeypatch.setattr(dpfix.io.commit.os, "replace", replace)
    rc, _, err = cli(capsys, "privatize", *base(table, tmp_path, "--report", tmp_path / "r.json",
                                                "--force"))
    assert rc == 2 and "Input/output error" in err and len(err.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.csv", "r.json", "t.csv"]
    assert [(tmp_path / n).read_text() for n in ("o.csv", "r.json")] == ["old o.csv\n",
                                                                         "old r.json\n"]


class _Stdout(io.TextIOBase):
    """A standard output that cannot be written: a closed pipe or a full device."""

    def __init__(self, error: OSError) -> None:
        self.error = error

    def write(self, text: str) -> int:
        raise self.error

    def flush(self) -> None:
        raise self.error


@pytest.mark.parametrize("error, code", [(BrokenPipeError(32, "Broken pipe"), 141),
                                         (OSError(28, "No space left on device"), 2)])
def test_unwritable_stdout_writes_no_file(error, code, table, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdout", _Stdout(error))
    rc = main(["privatize", *map(str, base(table, tmp_path, "--report", tmp_path / "r.json"))])
    err = capsys.readouterr().err
    assert rc == code and sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]
    if code == 2:
        assert err == ("dpfix privatize: error: standard output: No space left on device; "
                       "nothing written\n")
    else:
        assert err == ""


def test_stdout_to_dev_full_in_a_shell(table, tmp_path):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "dpfix.cli", "privatize",
                               *map(str, base(table, tmp_path))], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == ("dpfix privatize: error: standard output: No space left on device; "
                           "nothing written\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]


def test_ctrl_c_is_one_line_and_writes_nothing(table, tmp_path, capsys, monkeypatch):
    def interrupted(*a, **k):  # Ctrl-C while the figure is drawn (the table is staged)
        raise KeyboardInterrupt
    monkeypatch.setattr("dpfix.release.figures.make_figure", interrupted)
    argv = base(table, tmp_path, "--report", tmp_path / "r.json", "--plot", tmp_path / "p.png")
    rc, out, err = cli(capsys, "privatize", *argv)
    assert (rc, out, err) == (130, "", "dpfix privatize: interrupted; nothing written\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]


def test_an_interrupt_after_the_commit_says_so(table, tmp_path, capsys, monkeypatch):
    import dpfix.io.commit
    import dpfix.io.tables

    real = dpfix.io.commit.StagedFiles.commit

    def commit(self):
        real(self)
        raise KeyboardInterrupt
    monkeypatch.setattr(dpfix.io.commit.StagedFiles, "commit", commit)
    rc, _, err = cli(capsys, "privatize", *base(table, tmp_path))
    assert rc == 130 and err.startswith("dpfix privatize: interrupted; the outputs were "
                                        "complete and are in place")
    assert (tmp_path / "o.csv").is_file()


# ------------------------------------------------------------------ strict inputs
@pytest.mark.parametrize("eps", ["1000", "1e6", "1e-300", "100.5", "9e-5"])
def test_extreme_epsilon_is_one_line_with_the_range(eps, table, tmp_path, capsys):
    argv = base(table, tmp_path)
    argv[argv.index("--epsilon") + 1] = eps
    err = assert_refused(capsys, argv, "--epsilon: the usable range is 0.0001 to 100", tmp_path,
                         [table])
    assert repr(eps) in err


def test_one_stage_constructors_and_lp_have_their_range(table, tmp_path, capsys):
    argv = base(table, tmp_path, "--constructor", "staircase")
    argv[argv.index("--epsilon") + 1] = "5e-4"
    assert_refused(capsys, argv, "usable range is 0.001 to 100 (with --constructor staircase)",
                   tmp_path, [table])
    argv = base(table, tmp_path, "--constructor", "lp")
    argv[argv.index("--epsilon") + 1] = "30"
    assert_refused(capsys, argv, "usable range is 0.0001 to 20 (with --constructor lp)",
                   tmp_path, [table])


def test_a_split_that_starves_a_stage_is_refused(table, tmp_path, capsys):
    argv = base(table, tmp_path, "--split", "1e-12")
    assert_refused(capsys, argv, "split: 1e-12 gives eps_1 = 1e-12", tmp_path, [table])


@pytest.mark.parametrize("constructor", sorted(RELEASED))
def test_the_ends_of_the_epsilon_range_work(constructor, table, tmp_path, capsys):
    """Both ends of the documented range give a mechanism, without any warning (the
    command turns numerical warnings into errors) at a small and a moderate n."""
    from dpfix.release.budget import EPSILON_RANGE

    for eps in EPSILON_RANGE[constructor]:
        for upper in (5, 30):
            argv = base(table, tmp_path, "--constructor", constructor, "--force")
            argv[argv.index("--epsilon") + 1] = repr(eps)
            argv[argv.index("--upper") + 1] = upper
            if constructor == "discrete-gaussian":
                argv += ["--delta", "1e-6"]
            rc, _, err = cli(capsys, "privatize", *argv)
            assert (rc, err) == (0, ""), (eps, upper, err)


@pytest.mark.parametrize("eps", ["1000", "1e-300"])
def test_extreme_epsilon_prints_no_python_warning(eps, table, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "dpfix.cli", "privatize", table, "--column",
                           "k", "--epsilon", eps, "--upper", "30", "--out", tmp_path / "o.csv",
                           "--seed", "0", "--quiet"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "Warning" not in proc.stderr and "usable range" in proc.stderr


def test_a_numerical_warning_is_a_one_line_failure(table, tmp_path, capsys, monkeypatch):
    import warnings

    real = C.heuristic

    def noisy(*a, **k):
        warnings.warn("overflow encountered in expm1", RuntimeWarning, stacklevel=1)
        return real(*a, **k)
    monkeypatch.setattr(C, "heuristic", noisy)
    err = assert_refused(capsys, base(table, tmp_path, "--constructor", "heuristic"),
                         "numerical problem (RuntimeWarning: "
                         "overflow encountered in expm1)", tmp_path, [table], code=1)
    assert "nothing written" in err


@pytest.mark.parametrize("value", ["3.0000000000000001", "1e-400", "1e3", "0x1F"])
def test_csv_counts_are_integers_exactly(value, table, tmp_path, capsys):
    frame = pd.read_csv(table, dtype=str, keep_default_na=False)
    frame.loc[4, "k"] = value
    frame.to_csv(table, index=False)
    assert_refused(capsys, base(table, tmp_path), "column 'k', line 6:", tmp_path, [table])


def test_csv_counts_with_zero_decimals_are_read(table, tmp_path, capsys):
    frame = pd.read_csv(table, dtype=str, keep_default_na=False)
    frame["k"] = frame["k"] + ".000"
    frame.to_csv(table, index=False)
    rc, _, err = cli(capsys, "privatize", *base(table, tmp_path))
    assert rc == 0, err


def test_parquet_datetime_column_is_refused_by_name(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    src = tmp_path / "t.parquet"
    pd.DataFrame({"k": pd.to_datetime(["2020-01-01", "2021-06-01"])}).to_parquet(src)
    assert_refused(capsys, [src, "--column", "k", "--epsilon", "1", "--upper", "5", "--out",
                            tmp_path / "o.parquet"], "timestamp", tmp_path, [src])


@pytest.mark.parametrize("flag, total", [(None, 5 + 43), ("--header", 43), ("--no-header", 48)])
def test_histogram_first_line_of_numbers_is_data(flag, total, tmp_path, capsys):
    src = tmp_path / "h.csv"
    src.write_text("0.0,5\n1,10\n2,30\n3,3\n")
    argv = ["privatize", src, "--histogram", "--epsilon", "1", "--upper", "3", "--out",
            tmp_path / "o.csv", "--seed", "0", "--quiet", *([flag] if flag else [])]
    rc, _, err = cli(capsys, *argv)
    assert rc == 0, err
    lines = (tmp_path / "o.csv").read_text().splitlines()
    assert "0.0,5" not in lines  # a row of counts is never copied as a header
    assert sum(int(x.split(",")[1]) for x in lines) == total


def test_header_option_needs_a_histogram(table, tmp_path, capsys):
    assert_refused(capsys, base(table, tmp_path, "--no-header"), "only with --histogram",
                   tmp_path, [table])


# ------------------------------------------------------------------ --time-limit
def test_lp_time_limit_fails_in_one_line_with_nothing_written(table, tmp_path, capsys):
    argv = base(table, tmp_path, "--upper", "60", "--constructor", "lp", "--time-limit", "0.001")
    rc, out, err = cli(capsys, "privatize", *argv)
    assert rc == 1 and out == "" and err.count("\n") == 1
    assert "Time limit reached" in err and "nothing written" in err
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize("extra, match", [(["--time-limit", "2"], "lp only"),
                                          (["--constructor", "lp", "--time-limit", "-1"],
                                           "seconds > 0"),
                                          (["--constructor", "lp", "--time-limit", "x"],
                                           "not a number")])
def test_bad_time_limit_is_refused(table, tmp_path, capsys, extra, match):
    rc, out, err = cli(capsys, "privatize", *base(table, tmp_path, *extra))
    assert rc == 2 and match in err and err.count("\n") == 1
    assert not (tmp_path / "o.csv").exists()


# ------------------------------------------------------------------ safe outputs
def test_output_holds_only_the_privatized_and_declared_columns(table, tmp_path, capsys):
    rep = tmp_path / "r.json"
    rc, _, err = cli(capsys, "privatize", *base(table, tmp_path, "--report", rep))
    assert rc == 0, err
    assert rows(tmp_path / "o.csv")[0] == ["k"]  # nothing else by default
    assert json.loads(rep.read_text())["output_columns"]["dropped"] == ["name", "code", "rate",
                                                                        "note"]
    out2, rep2 = tmp_path / "o2.csv", tmp_path / "r2.json"
    argv = base(table, tmp_path, "--out", out2, "--report", rep2, "--keep", "note",
                "--key", "name", "--order", "input")
    rc, _, err = cli(capsys, "privatize", *argv)
    assert rc == 0, err
    a, b = rows(table), rows(out2)
    assert b[0] == ["name", "k", "note"]  # the table's order
    assert [r[0] for r in b] == [r[0] for r in a] and [r[2] for r in b] == [r[4] for r in a]
    cols = json.loads(rep2.read_text())["output_columns"]
    assert (cols["key"], cols["kept"], cols["dropped"]) == (["name"], ["note"], ["code", "rate"])


@pytest.mark.parametrize("extra, match", [(["--keep", "nope"], "not found"),
                                          (["--key", "k"], "privatized column"),
                                          (["--keep", "name", "--key", "name"], "named twice")])
def test_bad_kept_columns_are_refused(table, tmp_path, capsys, extra, match):
    rc, out, err = cli(capsys, "privatize", *base(table, tmp_path, *extra))
    assert rc == 2 and match in err and err.count("\n") == 1
    assert not (tmp_path / "o.csv").exists()


def test_structured_constructors_take_a_large_upper_without_T(table, tmp_path, capsys):
    rep = tmp_path / "r.json"
    argv = base(table, tmp_path, "--upper", "20000", "--constructor", "northwest",
                "--report", rep)
    rc, _, err = cli(capsys, "privatize", *argv)
    assert rc == 0, err
    (r,) = json.loads(rep.read_text())["columns"]
    assert r["n"] == 20001 and r["mechanism"]["built"] is False and "params" not in r["mechanism"]
    assert "post-processing" in r["samplers"]["privacy_statement"]
    rc, _, err = cli(capsys, "privatize", *base(table, tmp_path, "--upper", "20000",
                                                "--constructor", "heuristic",
                                                "--out", tmp_path / "o2.csv"))
    assert rc == 2 and "need no n x n T" in err and not (tmp_path / "o2.csv").exists()


# ------------------------------------------------------------------ CSV in, Parquet out and back
def test_csv_in_parquet_out_and_back(table, tmp_path, capsys):
    pq = tmp_path / "o.parquet"
    rc, _, err = cli(capsys, "privatize", *base(table, tmp_path, "--out", pq, "--key", "name",
                                                 "--keep", "code", "--order", "input"))
    assert rc == 0, err
    got = pd.read_parquet(pq)
    src = pd.read_csv(table, dtype=str, keep_default_na=False)
    assert list(got.columns) == ["name", "code", "k"] and got["k"].dtype == np.int64
    assert got["code"].tolist() == src["code"].tolist()  # "00007" stays text
    assert got["k"].between(0, 30).all()
    back = tmp_path / "back.csv"
    rc, _, err = cli(capsys, "privatize", pq, "--column", "k", "--epsilon", "1", "--upper",
                     "30", "--out", back, "--seed", "2", "--quiet", "--key", "name")
    assert rc == 0, err
    assert rows(back)[0] == ["name", "k"] and len(rows(back)) == 301


def test_histogram_input_writes_csv_only(tmp_path, capsys):
    src = tmp_path / "h.csv"
    src.write_text("count,number\n0,5\n1,7\n")
    rc, _, err = cli(capsys, "privatize", src, "--histogram", "--epsilon", "1", "--upper", "3",
                     "--out", tmp_path / "o.parquet", "--quiet")
    assert rc == 2 and "CSV file like the histogram" in err
    assert not (tmp_path / "o.parquet").exists()


def test_sep_reads_and_writes_a_tab_separated_table(tmp_path, capsys):
    src = tmp_path / "t.tsv"
    src.write_text("id\tk\tnote\nA,1\t3\tx y\nB\t0\t\n")
    out = tmp_path / "o.tsv"
    rc, _, err = cli(capsys, "privatize", src, "--sep", "tab", "--column", "k", "--epsilon",
                     "1", "--upper", "5", "--out", out, "--seed", "0", "--quiet", "--key", "id")
    assert rc == 0, err
    lines = out.read_text().splitlines()
    assert lines[0] == "id\tk" and lines[1].startswith("A,1\t") and lines[2].startswith("B\t")
    rc, _, err = cli(capsys, "privatize", src, "--sep", ";;", "--column", "k", "--epsilon",
                     "1", "--upper", "5", "--out", tmp_path / "o2.tsv", "--quiet")
    assert rc == 2 and "sep" in err and not (tmp_path / "o2.tsv").exists()


def test_dash_reads_stdin_and_writes_stdout(table, tmp_path, capsys, monkeypatch):
    import io as _io

    monkeypatch.setattr("sys.stdin", _io.TextIOWrapper(_io.BytesIO(table.read_bytes())))
    rep = tmp_path / "r.json"
    rc, out, err = cli(capsys, "privatize", "-", "--column", "k", "--epsilon", "1", "--upper",
                       "30", "--out", "-", "--seed", "1", "--key", "name", "--report", rep)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "name,k" and len(lines) == 301  # only the table on stdout
    assert "out: -" in err and "NOT FOR PRODUCTION" in err  # the summary on stderr
    assert json.loads(rep.read_text())["input"]["path"] == "<stdin>"
    # quiet: nothing but the table
    monkeypatch.setattr("sys.stdin", _io.TextIOWrapper(_io.BytesIO(table.read_bytes())))
    rc, out, err = cli(capsys, "privatize", "-", "--column", "k", "--epsilon", "1", "--upper",
                       "30", "--out", "-", "--seed", "1", "--quiet")
    assert rc == 0 and err == "" and out.splitlines()[0] == "k"


def test_dash_output_is_not_written_when_the_run_fails(table, tmp_path, capsys):
    rc, out, err = cli(capsys, "privatize", table, "--column", "k", "--epsilon", "1",
                       "--upper", "30", "--out", "-", "--quiet", "--key", "nope")
    assert rc == 2 and out == "" and err.count("\n") == 1


# ------------------------------------------------------------------ several columns
@pytest.fixture
def two(tmp_path):
    """A table with two columns of counts (a, b) between a key and a private note."""
    rng = np.random.default_rng(3)
    path = tmp_path / "two.csv"
    pd.DataFrame({"id": [f"r{i:03d}" for i in range(400)],
                  "a": rng.negative_binomial(2, 0.3, 400),
                  "note": ["x"] * 400,
                  "b": rng.poisson(3, 400)}).to_csv(path, index=False)
    return path


def multi(src, tmp_path, *extra):
    return [src, "--column", "a", "--column", "b", "--epsilon", "1", "--upper", "20",
            "--out", tmp_path / "o.csv", "--seed", "3", "--quiet", "--key", "id", *extra]


def test_several_columns_in_one_run(two, tmp_path, capsys):
    rep, conf, png = tmp_path / "r.json", tmp_path / "c.json", tmp_path / "p.png"
    rc, out, err = cli(capsys, "privatize", *multi(two, tmp_path, "--report", rep,
                                                    "--confidential-report", conf,
                                                    "--plot", png))
    assert rc == 0, err
    got, src = pd.read_csv(tmp_path / "o.csv"), pd.read_csv(two)
    assert list(got.columns) == ["id", "a", "b"]  # the table's order; note is dropped
    assert got["id"].tolist() == src["id"].tolist()
    assert got["a"].between(0, 20).all() and got["b"].between(0, 20).all()
    r = json.loads(rep.read_text())
    assert [c["column"] for c in r["columns"]] == ["a", "b"]
    assert r["input"]["columns"] == ["a", "b"] and "column" not in r["input"]
    comp = r["composition"]
    assert comp["per_column"] == {"a": 0.5, "b": 0.5} and comp["eps_spent"] == 1.0
    assert comp["eps_t"] == 1.0 and comp["eps_spent_at_most_eps_t"] is True
    assert "split equally over the 2 columns" in comp["split_over_columns"]
    assert "sequential composition" in comp["rule"] and "spawn" in comp["randomness"]
    for c in r["columns"]:  # each column its own budget, split, mechanism, target
        assert c["budget"]["eps_t"] == pytest.approx(0.5, rel=1e-15)
        assert c["budget"]["split"]["rule"] == "rule-of-thumb"
        assert c["mechanism"]["constructor"] == "northwest" and len(c["target_z"]) == 21
        assert c["mechanism"]["privacy_level"] <= c["budget"]["eps_2"]
    assert r["output_columns"]["privatized"] == ["a", "b"]
    assert r["output_columns"]["dropped"] == ["note"]
    assert "topcoded" not in rep.read_text()
    c = json.loads(conf.read_text())
    assert c["CONFIDENTIAL"] and [x["column"] for x in c["columns"]] == ["a", "b"]
    zeta_b = np.bincount(np.minimum(src["b"], 20), minlength=21) / 400
    assert c["columns"][1]["true_distribution_zeta"] == pytest.approx(zeta_b.tolist())
    assert c["columns"][0]["topcoded"] == int((src["a"] > 20).sum())
    assert set(c["timings_seconds"]) == {"read", "write", "total"}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    lines = out.splitlines()
    assert lines[0].startswith("dpfix privatize: a: eps_t = 0.5")
    assert lines[1].startswith("dpfix privatize: b: eps_t = 0.5")
    assert lines[2] == "dpfix privatize: 2 columns, eps = 1 in all (sequential composition)"


def test_several_columns_figure_has_a_panel_per_column(two, tmp_path, capsys, monkeypatch):
    import dpfix.release.figures

    seen = []
    real = dpfix.release.figures.make_figures
    monkeypatch.setattr(dpfix.release.figures, "make_figures",
                        lambda rs, titles: seen.append(titles) or real(rs, titles))
    rc, _, err = cli(capsys, "privatize", *multi(two, tmp_path, "--plot", tmp_path / "p.svg"))
    assert rc == 0, err
    assert seen == [["two.csv (a)", "two.csv (b)"]]
    assert (tmp_path / "p.svg").read_text().count("eps_t = 0.5") == 2


@pytest.mark.parametrize("shares, eps_t, expect", [
    (["a=0.3", "b=0.7"], "1", {"a": 0.3, "b": 0.7}),
    (["a=0.25"], "1", {"a": 0.25, "b": 0.75}),
    (["b=0.2", "a=0.1"], "0.3", {"a": 0.1, "b": 0.2})])
def test_column_epsilon_sets_the_shares(shares, eps_t, expect, two, tmp_path, capsys):
    rep = tmp_path / "r.json"
    argv = multi(two, tmp_path, "--report", rep,
                 *[x for v in shares for x in ("--column-epsilon", v)])
    argv[argv.index("--epsilon") + 1] = eps_t
    rc, _, err = cli(capsys, "privatize", *argv)
    assert rc == 0, err
    comp = json.loads(rep.read_text())["composition"]
    assert comp["per_column"] == pytest.approx(expect, rel=1e-15)
    assert comp["eps_spent_at_most_eps_t"] is True  # 0.1 + 0.2 > 0.3 in floats: one ulp less
    exact = sum(Fraction(v) for v in comp["per_column"].values())
    assert exact <= Fraction(float(eps_t))
    assert "shares for" in comp["split_over_columns"]


def test_fit_shares_never_exceeds_the_total():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from dpfix.release.budget import fit_shares

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.fractions(min_value=Fraction(1, 10**6), max_value=10), min_size=1,
                    max_size=6))
    def check(shares):
        total = float(sum(shares))
        got = fit_shares(shares, total)
        assert sum(map(Fraction, got)) <= Fraction(total)
        assert all(abs(g - float(s)) <= 1e-12 * float(s) for g, s in zip(got, shares,
                                                                          strict=True))
    check()


def test_an_upper_per_column(two, tmp_path, capsys):
    rep = tmp_path / "r.json"
    rc, _, err = cli(capsys, "privatize", *multi(two, tmp_path, "--report", rep,
                                                  "--upper", "b=6"))
    assert rc == 0, err
    cols = json.loads(rep.read_text())["columns"]
    assert [(c["column"], c["n"], c["upper"]) for c in cols] == [("a", 21, 20), ("b", 7, 6)]
    assert pd.read_csv(tmp_path / "o.csv")["b"].between(0, 6).all()


def test_several_columns_seeded_reproducible_and_independent(tmp_path, capsys):
    """Two columns with the same counts get different noise (their own streams); the same
    seed gives the same bytes."""
    src = tmp_path / "same.csv"
    k = np.random.default_rng(0).poisson(4, 2000)
    pd.DataFrame({"a": k, "b": k}).to_csv(src, index=False)
    outs = []
    for i, seed in enumerate(("9", "9")):
        out = tmp_path / f"o{i}.csv"
        rc, _, err = cli(capsys, "privatize", src, "--column", "a", "--column", "b",
                         "--epsilon", "2", "--upper", "15", "--out", out, "--seed", seed,
                         "--quiet", "--report", tmp_path / f"r{i}.json")
        assert rc == 0, err
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    got = pd.read_csv(tmp_path / "o0.csv")
    assert (got["a"] != got["b"]).mean() > 0.2
    cols = json.loads((tmp_path / "r0.json").read_text())["columns"]
    spawned = [int.from_bytes(c.generate_state(4, np.uint32).tobytes(), "little")
               for c in np.random.SeedSequence(9).spawn(2)]
    assert [c["seed"] for c in cols] == spawned


def test_several_columns_parquet_keeps_dtypes(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    src, out = tmp_path / "t.parquet", tmp_path / "o.parquet"
    frame = pd.DataFrame({"a": np.array([0, 4, 2, 9, 1] * 20, dtype=np.int16),
                          "s": [f"x{i}" for i in range(100)],
                          "b": pd.Series([3, 1, 0, 2] * 25, dtype="Int64")})
    frame.to_parquet(src)
    rc, _, err = cli(capsys, "privatize", src, "--column", "b", "--column", "a", "--epsilon",
                     "1", "--upper", "9", "--out", out, "--seed", "0", "--quiet")
    assert rc == 0, err
    got = pd.read_parquet(out)
    assert list(got.columns) == ["a", "b"]
    assert got["a"].dtype == np.int64 and got["b"].dtype == np.int64  # no input dtype kept
    back = tmp_path / "o.csv"  # CSV in, Parquet out: both privatized columns as int64
    rc, _, err = cli(capsys, "privatize", src, "--column", "a", "--column", "b", "--epsilon",
                     "1", "--upper", "9", "--out", back, "--seed", "0", "--quiet", "--keep",
                     "s")
    assert rc == 0, err
    assert list(pd.read_csv(back).columns) == ["a", "s", "b"]


MULTI_BAD = {
    "duplicate column": (["--column", "a"], "--column: 'a' named twice"),
    "unknown column": (["--column", "zz"], "column 'zz' not found"),
    "privatized and kept": (["--keep", "b"], "--keep: 'b' is a privatized column"),
    "privatized and keyed": (["--key", "a"], "--key: 'a' is a privatized column"),
    "upper of another column": (["--upper", "note=5"], "--upper: 'note' in 'note=5' is not a "
                                                       "--column"),
    "upper twice": (["--upper", "7"], "--upper: given twice (20, 7)"),
    "upper per column twice": (["--upper", "a=5", "--upper", "a=6"], "column 'a' given twice"),
    "shares do not add up": (["--column-epsilon", "a=0.3", "--column-epsilon", "b=0.6"],
                             "the shares add up to 0.9, not the total --epsilon 1"),
    "share takes it all": (["--column-epsilon", "a=1"], "leaving nothing of the total"),
    "share of another column": (["--column-epsilon", "note=0.5"], "'note' is not a --column"),
    "share without a column": (["--column-epsilon", "0.5"], "expected COL=EPS"),
    "share not a number": (["--column-epsilon", "a=x", "--column-epsilon", "b=0.5"],
                           "--column-epsilon a: must be a finite number > 0"),
    "share out of range": (["--column-epsilon", "a=0.99999", "--epsilon", "1"],
                           "column 'b' gets 1e-05 of the total 1; the usable range per "
                           "column is 0.0001"),
}


@pytest.mark.parametrize("case", sorted(MULTI_BAD))
def test_bad_multi_column_input_is_one_line(case, two, tmp_path, capsys):
    extra, match = MULTI_BAD[case]
    argv = multi(two, tmp_path, "--report", tmp_path / "r.json", *extra)
    assert_refused(capsys, argv, match, tmp_path, [two])


def test_no_upper_for_a_column_is_one_line(two, tmp_path, capsys):
    argv = multi(two, tmp_path)
    argv[argv.index("--upper") + 1] = "a=20"
    assert_refused(capsys, argv, "--upper: no value for column 'b'; give --upper VALUE",
                   tmp_path, [two])


def test_a_column_failing_late_writes_nothing(two, tmp_path, capsys):
    """The second column's bad value is found before anything is privatized or written."""
    frame = pd.read_csv(two)
    frame["b"] = frame["b"].astype(str)
    frame.loc[9, "b"] = "2.5"
    frame.to_csv(two, index=False)
    err = assert_refused(capsys, multi(two, tmp_path, "--report", tmp_path / "r.json"),
                         "column 'b', line 11:", tmp_path, [two])
    assert "not an integer" in err


def test_delta_is_the_total_split_over_the_columns(two, tmp_path, capsys):
    rep = tmp_path / "r.json"
    rc, _, err = cli(capsys, "privatize", *multi(two, tmp_path, "--report", rep,
                                                  "--constructor", "discrete-gaussian",
                                                  "--delta", "1e-6"))
    assert rc == 0, err
    r = json.loads(rep.read_text())
    assert [c["budget"]["delta"] for c in r["columns"]] == [5e-7, 5e-7]
    assert r["composition"]["delta_spent"] == pytest.approx(1e-6, rel=1e-15)


# ------------------------------------------------------------------ --framework
@pytest.mark.parametrize("framework", ["two-stage", "one-stage", "hybrid"])
def test_each_framework_writes_its_output(framework, table, tmp_path, capsys):
    from dpfix.release.options import FRAMEWORKS

    assert framework in FRAMEWORKS
    rep = tmp_path / "r.json"
    rc, out, err = cli(capsys, "privatize", *base(table, tmp_path, "--framework", framework,
                                                  "--report", rep))
    assert rc == 0, err
    k = pd.read_csv(tmp_path / "o.csv")["k"]
    assert len(k) == 300 and k.between(0, 30).all()
    (r,) = json.loads(rep.read_text())["columns"]
    assert r["framework"]["name"] == framework
    assert r["budget"]["eps_1"] + r["budget"]["eps_2"] == pytest.approx(1, rel=1e-15)
    if framework == "two-stage":
        assert "estimator" not in r["framework"] and "northwest," in out
    else:
        assert r["framework"]["estimator"] == "em" and r["framework"]["remap"] == "northwest"
        assert f"{framework} framework (em estimate, northwest remap)" in out
    assert (r["budget"]["eps_1"] == 0) is (framework == "one-stage")
    if framework == "hybrid":  # the paper's rule of thumb: the study's best hybrid split
        assert r["budget"]["split"]["rule"] == "rule-of-thumb"


def test_framework_options_pass_through(table, tmp_path, capsys):
    from dpfix.release.options import REMAPS
    from dpfix.release.privatizers.deconvolve import ESTIMATORS

    rep = tmp_path / "r.json"
    estimator, remap = ESTIMATORS[-1], REMAPS[-1]
    rc, _, err = cli(capsys, "privatize", *base(table, tmp_path, "--framework", "one-stage",
                                                "--estimator", estimator, "--remap", remap,
                                                "--report", rep))
    assert rc == 0, err
    fw = json.loads(rep.read_text())["columns"][0]["framework"]
    assert (fw["estimator"], fw["remap"]) == (estimator, remap)
    rc, _, err = cli(capsys, "privatize", *multi_args(table, tmp_path))
    assert rc == 0, err


def multi_args(table, tmp_path):
    """Two columns (k and the digits of code) through the hybrid framework."""
    return [table, "--column", "k", "--column", "code", "--epsilon", "2", "--upper", "30",
            "--out", tmp_path / "m.csv", "--seed", "1", "--quiet", "--framework", "hybrid",
            "--report", tmp_path / "m.json"]


def test_help_lists_frameworks_estimators_and_remaps():
    from dpfix.cli import build_parser
    from dpfix.release.options import FRAMEWORKS, REMAPS
    from dpfix.release.privatizers.deconvolve import ESTIMATORS

    sub = build_parser()._subparsers._group_actions[0].choices["privatize"]
    text = " ".join(sub.format_help().split()).replace("- ", "-")
    for name in [*FRAMEWORKS, *ESTIMATORS, *REMAPS]:
        assert name in text, name


FRAMEWORK_BAD = {
    "estimator with two-stage": (["--estimator", "em"], "estimator: applies to the one-stage "
                                                        "and hybrid frameworks only"),
    "remap without a framework": (["--remap", "quantile"], "remap: applies to the one-stage"),
    "one-stage with the heuristic": (["--framework", "one-stage", "--constructor",
                                      "heuristic"], "northwest corner"),
    "one-stage with a split": (["--framework", "one-stage", "--split", "0.3"],
                               "split: does not apply"),
    "hybrid with another privatizer": (["--framework", "hybrid", "--privatizer", "laplace"],
                                       "privatizer: does not apply"),
    "unknown framework": (["--framework", "three-stage"], "--framework: invalid choice"),
    "unknown estimator": (["--framework", "one-stage", "--estimator", "mle"],
                          "--estimator: invalid choice"),
    "dask with the quantile remap": (["--framework", "one-stage", "--remap", "quantile",
                                      "--engine", "dask"], "remap: the quantile remap sorts"),
}


@pytest.mark.parametrize("case", sorted(FRAMEWORK_BAD))
def test_bad_framework_combination_is_one_line(case, table, tmp_path, capsys):
    extra, match = FRAMEWORK_BAD[case]
    assert_refused(capsys, base(table, tmp_path, "--report", tmp_path / "r.json", *extra),
                   match, tmp_path, [table])
