"""Hostile inputs refused up front, in one line, before anything is drawn or written.

Count cells parsed alike by the fast and the slow parser; numeric options in plain
digits only; spreadsheet formulas in the passed-through columns; privatized Parquet
columns as int64; inputs that are not regular files; output paths that could only
fail when written; the library's floor on each stage's budget; the leftovers of
killed runs (docs/failures.md).
"""

from __future__ import annotations

import functools
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.io.commit import (
    leftover_tag,
    remove_stale,
)
from dpfix.io.counts import _text_counts, counts_of, parse_count
from dpfix.io.tables import read_counts
from dpfix.io.writing import FormulaWarning, escape_formula_cells, formula_cells, write_counts
from dpfix.release.options import MIN_STAGE_EPSILON
from dpfix.release.pipeline import privatize_counts
from helpers import cli

TABLE = "name,k\na,3\nb,0\nc,2\n"


@pytest.fixture
def table(tmp_path) -> Path:
    path = tmp_path / "t.csv"
    path.write_text(TABLE)
    return path


def _run(capsys, *argv):
    return cli(capsys, "privatize", *[str(a) for a in argv])


def _refused(capsys, tmp_path, *argv, match):
    rc, out, err = _run(capsys, *argv)
    assert rc == 2, err
    assert len(err.splitlines()) == 1 and match in err, err
    assert not (tmp_path / "o.csv").exists()
    return err


# ------------------------------------------------------------------ the two count parsers
def _slow(cell: str):
    try:
        return parse_count(cell)
    except ValueError:
        return None


#: Characters near a count: digits, a point, signs, blanks, NUL, other scripts' digits.
CELL = st.one_of(
    st.text(alphabet=list("0123456789.+- eE\x00\t\r\xa0_x\u0663\uff11"), max_size=8),
    st.binary(max_size=6).map(lambda b: b.decode("latin-1")),
    st.integers(0, 10**20).map(str))


@settings(max_examples=300, deadline=None)
@given(st.lists(CELL, min_size=1, max_size=12))
def test_fast_and_slow_parsers_accept_exactly_the_same_cells(cells):
    values, ok = _text_counts(np.array(cells, dtype=object))
    for cell, v, good in zip(cells, values, ok, strict=True):
        if good:  # the fast parser's verdict must be the slow one's, value for value
            assert _slow(cell) == v, repr(cell)
    expected = [_slow(c) for c in cells]
    if None in expected:
        with pytest.raises(ValueError, match=f"row {expected.index(None) + 1}:"):
            counts_of(pd.Series(cells, dtype=object), "k")
    else:
        got = counts_of(pd.Series(cells, dtype=object), "k")
        assert got.tolist() == [min(v, 2**62) for v in expected]


@pytest.mark.parametrize("cell", ["4\x00", "4\x00\x00", "12.0\x00"])
def test_a_count_with_a_nul_is_refused(cell, tmp_path):
    with pytest.raises(ValueError, match="row 2: not a number$"):
        counts_of(pd.Series(["1", cell]), "k")
    path = tmp_path / "t.csv"
    path.write_bytes(b"name,k\na,1\nb," + cell.encode() + b"\n")
    with pytest.raises(ValueError, match="line 3: not a number$"):
        read_counts(path, "k")


# ------------------------------------------------------------------ numeric options
@pytest.mark.parametrize("extra, match", [
    (["--epsilon", "1_0", "--upper", "5"], "--epsilon"),
    (["--epsilon", "\u0661", "--upper", "5"], "--epsilon"),
    (["--epsilon", "1", "--upper", "1_0"], "--upper"),
    (["--epsilon", "1", "--upper", "5", "--split", "0_5"], "--split"),
    (["--epsilon", "1", "--upper", "5", "--seed", "1_0"], "--seed"),
    (["--epsilon", "1", "--upper", "5", "--privatizer", "cyclic-gaussian", "--delta",
      "1e-1_0"], "--delta"),
    (["--epsilon", "1", "--upper", "5", "--constructor", "lp", "--time-limit", "1_0"],
     "--time-limit"),
])
def test_numbers_with_underscores_or_other_digits_are_refused(extra, match, table, tmp_path,
                                                              capsys):
    _refused(capsys, tmp_path, table, "--column", "k", "--out", tmp_path / "o.csv", *extra,
             match=match)


def test_column_epsilon_with_an_underscore_is_refused(tmp_path, capsys):
    src = tmp_path / "t.csv"
    src.write_text("a,b\n1,2\n3,4\n")
    _refused(capsys, tmp_path, src, "--column", "a", "--column", "b", "--epsilon", "1",
             "--column-epsilon", "a=0_5", "--upper", "5", "--out", tmp_path / "o.csv",
             match="--column-epsilon a")


# ------------------------------------------------------------------ spreadsheet formulas
FORMULAS = "name,k\n\"=HYPERLINK(\"\"http://x\"\")\",3\n+1+1,1\n@SUM(A1),0\n-3,2\nplain,1\n"


def test_formula_cells_warned_about_then_escaped(tmp_path, capsys):
    src, out = tmp_path / "f.csv", tmp_path / "o.csv"
    src.write_text(FORMULAS)
    rc, _, err = _run(capsys, src, "--column", "k", "--epsilon", "1", "--upper", "5",
                      "--out", out, "--key", "name", "--order", "input")
    assert rc == 0, err
    (line,) = [x for x in err.splitlines() if "formula" in x]
    assert "column 'name': 3 cell(s)" in line and "--escape-formulas" in line
    assert pd.read_csv(out)["name"].tolist()[:3] == ['=HYPERLINK("http://x")', "+1+1",
                                                     "@SUM(A1)"]
    escaped = tmp_path / "e.csv"
    rc, _, err = _run(capsys, src, "--column", "k", "--epsilon", "1", "--upper", "5",
                      "--out", escaped, "--key", "name", "--escape-formulas", "--order",
                      "input")
    assert rc == 0 and "formula" not in err, err
    assert pd.read_csv(escaped)["name"].tolist() == ["'=HYPERLINK(\"http://x\")", "'+1+1",
                                                     "'@SUM(A1)", "-3", "plain"]


def test_formula_cells_in_the_library(tmp_path):
    cells = ["=1+1", "+A1", "-2+3", "@x", "\tx", "\rx", "-3", "+1.5", "x=1", "", None, 4]
    assert formula_cells(cells).tolist() == [True] * 6 + [False] * 6
    assert escape_formula_cells(["=1", "-3"]) == ["'=1", "-3"]
    src = tmp_path / "f.csv"
    src.write_text(FORMULAS)
    table = read_counts(src, "k")
    result = privatize_counts(table.counts, 1.0, upper=5, seed=0)
    with pytest.warns(FormulaWarning, match="column 'name': 3 cell"):
        write_counts(table, result, tmp_path / "o.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FormulaWarning)
        write_counts(table, result, tmp_path / "e.csv", escape_formulas=True)
    escaped = pd.read_csv(tmp_path / "e.csv", dtype=str)["name"].tolist()
    assert escaped[1:4] == ["'+1+1", "'@SUM(A1)", "-3"]


# ------------------------------------------------------------------ Parquet dtypes
@pytest.mark.parametrize("dtype", ["uint8", "int16", "UInt8"])
def test_privatized_parquet_column_is_int64(dtype, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    src, out = tmp_path / "t.parquet", tmp_path / "o.parquet"
    pd.DataFrame({"k": pd.Series([0, 4, 2, 9, 1] * 20, dtype=dtype)}).to_parquet(src)
    rc, _, err = _run(capsys, src, "--column", "k", "--epsilon", "1", "--upper", "9",
                      "--out", out, "--seed", "0", "--quiet")
    assert rc == 0, err
    assert pd.read_parquet(out)["k"].dtype == np.int64


def test_dask_privatized_column_is_int64_and_stale_partials_go(tmp_path):
    pytest.importorskip("dask.dataframe")
    pytest.importorskip("pyarrow")
    from dpfix.release.dask import privatize_dataset

    folder = tmp_path / "data"
    folder.mkdir()
    for i in range(2):
        pd.DataFrame({"k": np.array([0, 4, 2, 9, 1] * 20, dtype=np.uint8)}).to_parquet(
            folder / f"part-{i}.parquet")
    host = leftover_tag().split("-", 1)[1]
    stale = tmp_path / f".out.partial-{2**22 + 1}-{host}-0123abcd"  # no such process
    alive = tmp_path / f".out.partial-{os.getpid()}-{host}-0123abcd"  # this one runs
    other = tmp_path / f".out.partial-{2**22 + 1}-elsewhere-0123abcd"  # another host's
    for d in (stale, alive, other):
        d.mkdir()
        (d / "part-00000.parquet").write_bytes(b"x")
    privatize_dataset(folder, "k", 1.0, upper=9, out=tmp_path / "out", seed=0)
    assert not stale.exists() and alive.exists() and other.exists()
    got = pd.read_parquet(tmp_path / "out")
    assert got["k"].dtype == np.int64 and len(got) == 200


def test_remove_stale_removes_only_what_is_provably_ours(tmp_path):
    host = leftover_tag().split("-", 1)[1]
    dead = 2**22 + 1
    ours = tmp_path / f"dpfix-{dead}-{host}-abc"
    kept = [tmp_path / f"dpfix-{os.getpid()}-{host}-abc", tmp_path / f"dpfix-{dead}-x{host}-a",
            tmp_path / f"dpfix-abc-{host}-a", tmp_path / f"other-{dead}-{host}-a"]
    for d in [ours, *kept]:
        d.mkdir()
    (tmp_path / f"dpfix-{dead}-{host}-file").write_text("not a folder")
    (tmp_path / f"dpfix-{dead}-{host}-link").symlink_to(kept[0])
    assert remove_stale(tmp_path, "dpfix-") == [ours]
    assert all(d.exists() for d in kept)
    assert (tmp_path / f"dpfix-{dead}-{host}-file").exists()


# ------------------------------------------------------------------ inputs
def test_an_input_that_is_not_a_regular_file_says_what_it_is(tmp_path, capsys):
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    for path, what in ((folder, "is a directory"), (fifo, "is not a regular file (a FIFO)"),
                       (Path("/dev/null"), "is not a regular file (a character device)")):
        err = _refused(capsys, tmp_path, path, "--column", "k", "--epsilon", "1", "--upper",
                       "5", "--out", tmp_path / "o.csv", match=what)
        assert "not found" not in err
    _refused(capsys, tmp_path, fifo, "--histogram", "--epsilon", "1", "--upper", "5",
             "--out", tmp_path / "o.csv", match="is not a regular file (a FIFO)")


# ------------------------------------------------------------------ outputs, up front
@pytest.fixture
def nothing_drawn(monkeypatch):
    """The pipeline fails the test if it is called: the checks must come first."""
    @functools.wraps(privatize_counts)  # its signature: the parser reads its defaults
    def boom(*args, **kwargs):
        raise AssertionError("privatize_counts ran before the output paths were checked")
    monkeypatch.setattr("dpfix.release.pipeline.privatize_counts", boom)


def test_an_overlong_out_name_is_refused_before_the_run(table, tmp_path, capsys,
                                                        nothing_drawn):
    longest = os.pathconf(tmp_path, "PC_NAME_MAX")
    name = "a" * (longest - 10) + ".csv"  # fits, but its staged temporary does not
    _refused(capsys, tmp_path, table, "--column", "k", "--epsilon", "1", "--upper", "5",
             "--out", tmp_path / name, match="is too long")


def test_a_dangling_symlink_at_out_is_refused_before_the_run(table, tmp_path, capsys,
                                                             nothing_drawn):
    link = tmp_path / "o.csv"
    link.symlink_to(tmp_path / "missing" / "x.csv")
    _refused(capsys, tmp_path, table, "--column", "k", "--epsilon", "1", "--upper", "5",
             "--out", link, match="is a symbolic link, not a regular file")
    assert link.is_symlink()


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root writes into any folder")
def test_a_folder_not_writable_is_refused_before_the_run(table, tmp_path, capsys,
                                                         nothing_drawn):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        _refused(capsys, tmp_path, table, "--column", "k", "--epsilon", "1", "--upper", "5",
                 "--out", folder / "o.csv", match="is not writable")
    finally:
        folder.chmod(0o755)


# ------------------------------------------------------------------ the library's floors
@pytest.mark.parametrize("epsilon, options, match", [
    (1e-300, {}, "eps: must be at least 2e-05"),
    (1e-300, {"constructor": "truncated-geometric"}, "eps: must be at least 1e-05"),
    (1e-300, {"framework": "one-stage"}, "eps: must be at least 1e-05"),
    (1e-300, {"framework": "hybrid"}, "eps: must be at least 2e-05"),
    (1.0, {"split": 0.9999999999}, r"split: 0.9999999999 gives .* a split in \[1e-05, 0.99999\]"),
    (1.0, {"split": 1e-300}, "split: 1e-300 gives eps_1 = 1e-300"),
    (1.0, {"split": 1e-300, "framework": "hybrid"}, "split: 1e-300 gives"),
])
def test_a_stage_budget_below_the_floor_is_refused(epsilon, options, match):
    with pytest.raises(ValueError, match=match) as info:
        privatize_counts([0, 1, 2, 3, 3], epsilon, upper=3, seed=0, **options)
    assert "\n" not in str(info.value)


def test_the_floor_itself_works():
    r = privatize_counts([0, 1, 2, 3, 3] * 20, 2 * MIN_STAGE_EPSILON, upper=3, split=0.5,
                         seed=0)
    assert r.eps_1 >= MIN_STAGE_EPSILON and r.eps_2 >= MIN_STAGE_EPSILON


@pytest.mark.parametrize("argv", [
    ("explore", "--n", "1_0"),
    ("explore", "northwest", "--n-max", "1_0"),
    ("certify", "--n", "1_0"),
    ("search", "conj.py", "--over", "F", "--n", "2..1_0"),
    ("search", "conj.py", "--over", "F", "--n", "3", "--jobs", "1_0"),
    ("search", "conj.py", "--over", "F", "--n", "3", "--z", "compositions:1_0"),
    ("reproduce", "fig5", "--quick", "--jobs", "1_0"),
])
def test_every_integer_option_takes_plain_digits(argv, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "conj.py").write_text("def predicate(T, inst):\n    return True\n")
    rc, out, err = cli(capsys, *argv)
    assert rc == 2 and out == "", (rc, out, err)
    assert len(err.strip().splitlines()) == 1 and "1_0" in err, err
