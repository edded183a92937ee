"""Reading tables and histograms; the shared data sets when present."""

import errno
import importlib.util
import os
import signal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpfix.io.counts import counts_from_column
from dpfix.io.data import data_dir, data_path, synthetic_counts
from dpfix.io.tables import read_histogram, read_table
from dpfix.release.frameworks import histogram
from helpers import needs_data


@needs_data
def test_crime_data_matches_its_readme():
    counts = counts_from_column(read_table(data_path("crime_data.csv")), "MURDER")
    eta, top = histogram(counts, 50)
    assert len(counts) == 3136 and len(eta) == 51 and eta.sum() == 3136
    assert round((counts == 0).mean(), 3) == 0.526  # "52.6% of counties have 0"
    assert top == int((counts > 50).sum()) and top > 0


@needs_data
def test_histogram_files_match_their_readme():
    binom = read_histogram(data_path("binom_hist_data.csv"))
    assert len(binom) == 21 and binom.sum() == 10_000
    sizes = {"uniform": 30, "left-skewed": 70, "right-skewed": 70, "bimodal": 40,
             "top-inflated": 80, "zero-inflated": 80}
    for name, n in sizes.items():
        assert len(read_histogram(data_path(f"{name}_hist.csv"))) == n


@needs_data
def test_bom_is_tolerated():
    table = read_table(data_path("bird_flu.csv"))
    assert "State" in table.columns


def test_env_variable_points_elsewhere(tmp_path, monkeypatch):
    (tmp_path / "h.csv").write_text("count,number\n0,3\n2,1\n")
    monkeypatch.setenv("DPFIX_DATA", str(tmp_path))
    assert data_dir() == tmp_path
    assert read_histogram(data_path("h.csv")).tolist() == [3, 0, 1]
    monkeypatch.setenv("DPFIX_DATA", str(tmp_path / "nope"))
    with pytest.raises(FileNotFoundError, match="DPFIX_DATA"):
        data_dir()


def test_the_data_folder_beside_the_repository_is_found_from_any_folder(tmp_path,
                                                                       monkeypatch):
    """Without ``DPFIX_DATA``, ``../shared/data`` beside the repository is found whatever the
    current folder (a notebook's kernel runs in ``notebooks/``)."""
    beside = Path(__file__).resolve().parents[1].parent / "shared" / "data"
    if not beside.is_dir():
        pytest.skip("no shared data folder beside the repository")
    monkeypatch.delenv("DPFIX_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    assert data_dir().resolve() == beside.resolve()


@pytest.mark.parametrize("values, message", [
    ([1, 2.5], "not an integer"), ([1, -1], "negative"), ([1, None], "NaN"),
    ([1, "x"], "not a number"), ([], "no rows"),
])
def test_bad_counts_are_refused(values, message):
    with pytest.raises(ValueError, match=message):
        counts_from_column(pd.DataFrame({"c": pd.Series(values, dtype=object)}), "c")


def test_missing_column_and_file(tmp_path):
    with pytest.raises(ValueError, match="column 'x' not found"):
        counts_from_column(pd.DataFrame({"c": [1]}), "x")
    with pytest.raises(FileNotFoundError):
        read_table(tmp_path / "missing.csv")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ValueError, match="empty"):
        read_table(tmp_path / "empty.csv")


def test_histogram_topcodes_and_synthetic_is_reproducible():
    eta, top = histogram([0, 1, 5, 9, 3], 4)
    assert eta.tolist() == [1, 1, 0, 1, 2] and top == 2
    with pytest.raises(ValueError, match="upper"):
        histogram([1], 0)
    a, b = synthetic_counts(seed=3), synthetic_counts(seed=3)
    assert np.array_equal(a, b) and (a == 0).mean() > 0.3


def test_histogram_file_refuses_fractional_and_negative_numbers(tmp_path):
    for body, message in [("0,2.5\n", "not an integer"), ("0,-1\n", "negative"),
                          ("0,1\nx,y\n", "expected 'count,number'"), ("count,number\n", "no rows")]:
        (tmp_path / "h.csv").write_text(body)
        with pytest.raises(ValueError, match=message):
            read_histogram(tmp_path / "h.csv")


def test_staged_files_move_together_or_not_at_all(tmp_path):
    from dpfix.io.commit import StagedFiles

    (tmp_path / "a.txt").write_text("old")
    with pytest.raises(RuntimeError), StagedFiles(force=True) as staged:
        staged.temp(tmp_path / "a.txt").write_text("new")
        staged.temp(tmp_path / "b.txt").write_text("new")
        raise RuntimeError("failed before the commit")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]  # no temporaries left
    assert (tmp_path / "a.txt").read_text() == "old"
    with StagedFiles(force=True) as staged:
        staged.temp(tmp_path / "a.txt").write_text("new")
        staged.temp(tmp_path / "b.txt").write_text("new")
        staged.commit()
    assert [p.read_text() for p in sorted(tmp_path.iterdir())] == ["new", "new"]


def test_histogram_file_round_trip(tmp_path):
    from dpfix.io.tables import read_counts
    from dpfix.io.writing import write_counts
    from dpfix.release.pipeline import privatize_counts

    src = tmp_path / "h.csv"
    src.write_bytes(b"\xef\xbb\xbfcount,number\n0,7\n3,5\n1,4\n")
    table = read_counts(src, None, histogram=True)
    assert (table.kind, table.eta.tolist(), table.rows, table.bom) == \
        ("histogram", [7, 4, 0, 5], 16, True)
    result = privatize_counts(None, 1.0, upper=4, histogram=table.eta, seed=0)
    write_counts(table, result, tmp_path / "o.csv")
    raw = (tmp_path / "o.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbfcount,number\n")
    pairs = [tuple(map(int, line.split(","))) for line in raw.decode("utf-8-sig").split()[1:]]
    assert [i for i, _ in pairs] == [0, 1, 2, 3, 4] and sum(m for _, m in pairs) == 16


def test_counts_of_text_and_numbers():
    from dpfix.io.counts import counts_of

    assert counts_of(pd.Series([" 3", "0 ", "12"]), "k").tolist() == [3, 0, 12]
    assert counts_of(pd.Series([3.0, 0.0, 1e30]), "k").tolist() == [3, 0, 2**62]
    with pytest.raises(ValueError, match="booleans"):
        counts_of(pd.Series([True, False]), "k")
    with pytest.raises(ValueError, match="row 3: not an integer count$"):
        counts_of(pd.Series(["1", "2", "1.5"]), "k")


# ------------------------------------------------------------------ all or nothing
def _listing(folder):
    return sorted(p.name for p in folder.iterdir())


def test_commit_refuses_a_file_created_during_the_run(tmp_path):
    from dpfix.io.commit import StagedFiles

    with StagedFiles() as staged:
        staged.temp(tmp_path / "a.txt", "--out").write_text("new")
        (tmp_path / "a.txt").write_text("someone else's")  # appears after the start
        with pytest.raises(FileExistsError, match="--out: .*a.txt was created during the run"):
            staged.commit()
    assert (tmp_path / "a.txt").read_text() == "someone else's"
    assert _listing(tmp_path) == ["a.txt"]


def test_commit_checks_every_target_before_renaming_any(tmp_path):
    from dpfix.io.commit import StagedFiles

    with StagedFiles() as staged:
        staged.temp(tmp_path / "a.txt").write_text("a")
        staged.temp(tmp_path / "b.txt", "--report").write_text("b")
        (tmp_path / "b.txt").mkdir()  # the path turned into a folder during the run
        with pytest.raises(IsADirectoryError, match="--report: .*b.txt is a folder"):
            staged.commit()
    assert _listing(tmp_path) == ["b.txt"]  # a.txt was not committed, no temporaries left


def test_commit_rolls_back_and_restores_replaced_files(tmp_path, monkeypatch):
    """--force: a failure in the middle of the renames restores every replaced file."""
    from dpfix.io import commit as io

    (tmp_path / "a.txt").write_text("old a")
    real_replace = os.replace

    def replace(src, dst):  # the second rename fails (a full disk, a vanished folder, ...)
        if Path(dst).name == "b.txt":
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)
    monkeypatch.setattr(io.os, "replace", replace)
    with io.StagedFiles(force=True) as staged:
        staged.temp(tmp_path / "a.txt").write_text("new a")
        staged.temp(tmp_path / "b.txt").write_text("new b")
        (tmp_path / "b.txt").write_text("old b")
        with pytest.raises(OSError, match="No space left"):
            staged.commit()
    assert [p.read_text() for p in sorted(tmp_path.iterdir())] == ["old a", "old b"]
    assert _listing(tmp_path) == ["a.txt", "b.txt"]  # no temporaries, no backups


def test_commit_rolls_back_new_files(tmp_path, monkeypatch):
    from dpfix.io import commit as io

    real_link = os.link

    def link(src, dst):
        if Path(dst).name == "c.txt":
            raise PermissionError(13, "Permission denied", str(dst))
        return real_link(src, dst)
    monkeypatch.setattr(io.os, "link", link)
    with io.StagedFiles() as staged:
        for name in ("a.txt", "b.txt", "c.txt"):
            staged.temp(tmp_path / name).write_text(name)
        with pytest.raises(PermissionError):
            staged.commit()
    assert _listing(tmp_path) == []


def test_force_replaces_and_leaves_no_backup(tmp_path):
    from dpfix.io.commit import StagedFiles

    (tmp_path / "a.txt").write_text("old")
    with StagedFiles(force=True) as staged:
        staged.temp(tmp_path / "a.txt").write_text("new")
        staged.commit()
    assert _listing(tmp_path) == ["a.txt"] and (tmp_path / "a.txt").read_text() == "new"


def test_without_hard_links_the_error_is_clear(tmp_path, monkeypatch):
    from dpfix.io import commit as io

    def no_link(src, dst):
        raise OSError(errno.EPERM, "Operation not permitted")
    monkeypatch.setattr(io.os, "link", no_link)
    with io.StagedFiles() as staged:
        staged.temp(tmp_path / "a.txt", "--out").write_text("a")
        with pytest.raises(OSError, match="--out: .*hard links.*force=True"):
            staged.commit()
    assert _listing(tmp_path) == []
    with io.StagedFiles(force=True) as staged:  # --force needs no link
        staged.temp(tmp_path / "a.txt").write_text("a")
        staged.commit()
    assert _listing(tmp_path) == ["a.txt"]


def test_a_leftover_temporary_does_not_trip_the_next_run(tmp_path, monkeypatch):
    """A run killed by SIGKILL may leave ``.a.txt.<hex>.part``; the next run draws another
    name (also when the random name collides) and leaves the leftover alone."""
    from dpfix.io import commit as io

    leftover = tmp_path / ".a.txt.0123456789ab.part"
    leftover.write_text("first rows of a killed run")
    names = iter(["0123456789ab", "ba9876543210"])
    monkeypatch.setattr(io.secrets, "token_hex", lambda k: next(names))
    with io.StagedFiles() as staged:
        staged.temp(tmp_path / "a.txt").write_text("a")
        staged.commit()
    assert _listing(tmp_path) == [leftover.name, "a.txt"]
    assert leftover.read_text() == "first rows of a killed run"


def test_a_signal_during_the_commit_is_delivered_after_it(tmp_path, monkeypatch):
    """The renames and their rollback are not cut in half by a signal: it is held until
    the commit is complete, then handled as it would have been."""
    from dpfix.io import commit as io

    got = []

    def handler(signum, frame):
        got.append((signum, sorted(p.name for p in tmp_path.iterdir())))
    old = signal.signal(signal.SIGTERM, handler)
    real_link = os.link

    def link(src, dst):  # SIGTERM arrives between the two renames
        real_link(src, dst)
        if Path(dst).name == "a.txt":
            os.kill(os.getpid(), signal.SIGTERM)
    monkeypatch.setattr(io.os, "link", link)
    try:
        with io.StagedFiles() as staged:
            staged.temp(tmp_path / "a.txt").write_text("a")
            staged.temp(tmp_path / "b.txt").write_text("b")
            staged.commit()
    finally:
        signal.signal(signal.SIGTERM, old)
    assert got == [(signal.SIGTERM, ["a.txt", "b.txt"])]
    assert signal.getsignal(signal.SIGTERM) is old


# ------------------------------------------------------------------ strict inputs
@pytest.mark.parametrize("text, value", [("3", 3), (" 12 ", 12), ("3.0", 3), ("7.000", 7),
                                         ("0", 0), ("9007199254740993", 2**53 + 1),
                                         ("99999999999999999999999", 2**62)])
def test_text_counts_are_parsed_exactly(text, value):
    from dpfix.io.counts import counts_of

    assert counts_of(pd.Series(["1", text]), "k").tolist() == [1, value]


@pytest.mark.parametrize("text, message", [
    ("3.0000000000000001", "not an integer"), ("1e-400", "not an integer"),
    ("1e3", "not an integer"), ("2.5", "not an integer"), ("0x10", "not a number"),
    ("1_000", "not a number"), ("-3", "negative"), (".0", "not an integer"),
    ("nan", "missing value"), ("inf", "not an integer"), ("", "missing value")])
def test_text_counts_refused_by_row(text, message):
    from dpfix.io.counts import counts_of

    with pytest.raises(ValueError, match=f"column 'k', row 2: .*{message}"):
        counts_of(pd.Series(["1", text]), "k")


@pytest.mark.parametrize("values, name", [
    (pd.to_datetime(["2020-01-01", "2020-01-02"]), "datetime"),
    (pd.to_timedelta([1, 2], unit="s"), "timedelta"),
    (pd.Series([True, False]), "bool"),
    (pd.Series([True, None], dtype="boolean"), "bool")])
def test_non_integer_logical_types_are_refused_by_name(values, name):
    from dpfix.io.counts import counts_of

    with pytest.raises(ValueError, match=f"column 'k' .*{name}"):
        counts_of(pd.Series(values), "k")


def test_parquet_logical_types(tmp_path):
    import decimal

    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from dpfix.io.tables import read_counts

    D = decimal.Decimal
    cases = {"ts": (pa.array([0, 10**9], pa.timestamp("ns")), "timestamp"),
             "day": (pa.array([0, 1], pa.date32()), "date32"),
             "dur": (pa.array([1, 2], pa.duration("s")), "duration"),
             "flag": (pa.array([True, False]), "bool"),
             "money": (pa.array([D("3.00"), D("1.50")], pa.decimal128(10, 2)),
                       "decimal128\\(10, 2\\)")}
    for column, (array, name) in cases.items():
        path = tmp_path / f"{column}.parquet"
        pq.write_table(pa.table({column: array}), path)
        with pytest.raises(ValueError, match=f"column '{column}' .*{name}"):
            read_counts(path, column)
    path = tmp_path / "whole.parquet"  # a decimal without a fraction holds integers
    pq.write_table(pa.table({"k": pa.array([D(3), D(12345678901234567)], pa.decimal128(20, 0))}),
                   path)
    assert read_counts(path, "k").counts.tolist() == [3, 12345678901234567]


# ------------------------------------------------------------------ the header rule
@pytest.mark.parametrize("body, eta, header", [
    ("0.0,5\n1,3\n", [5, 3], None),              # data: a number in every cell
    ("0,5\n1,3\n", [5, 3], None),
    ("count,number\n0,5\n1,3\n", [5, 3], "count,number"),
    (",0\n0,5\n1,3\n", [5, 3], ",0"),            # binom_hist_data.csv's header
    ("count,\n0,5\n", [5], "count,")])
def test_histogram_header_is_detected_only_when_the_line_cannot_be_data(tmp_path, body, eta,
                                                                         header):
    (tmp_path / "h.csv").write_text(body)
    got, head = read_histogram(tmp_path / "h.csv", with_header=True)
    assert got.tolist() == eta and head == header


def test_histogram_header_explicit(tmp_path):
    (tmp_path / "h.csv").write_text("0,9\n0,5\n1,3\n")
    assert read_histogram(tmp_path / "h.csv", header=True).tolist() == [5, 3]
    assert read_histogram(tmp_path / "h.csv", header=False).tolist() == [14, 3]
    (tmp_path / "h.csv").write_text("count,number\n0,5\n")
    with pytest.raises(ValueError, match="line 1: expected 'count,number'"):
        read_histogram(tmp_path / "h.csv", header=False)


@pytest.mark.parametrize("body, message", [
    ("0.5,5\n", "line 1: .*not an integer"), ("0,5\n1,3.0000000000000001\n", "line 2"),
    ("0,5,7\n", "line 1: expected 'count,number'"), ("0,1e3\n", "line 1: .*not an integer"),
    ("0,1\n1_0,3\n", "line 2: expected 'count,number'"), ("nan,3\n", "line 1")])
def test_histogram_cells_are_exact_integers(tmp_path, body, message):
    (tmp_path / "h.csv").write_text(body)
    with pytest.raises(ValueError, match=message):
        read_histogram(tmp_path / "h.csv")


def test_numeric_columns_exactly():
    import decimal

    from dpfix.io.counts import counts_of

    big = pd.Series(np.array([3, 2**63 + 5, 2**64 - 1], dtype=np.uint64))
    assert counts_of(big, "k").tolist() == [3, 2**62, 2**62]  # clipped, never wrapped
    assert counts_of(pd.Series([1, 7], dtype="Int8"), "k").tolist() == [1, 7]
    with pytest.raises(ValueError, match="column 'k', row 2: missing value"):
        counts_of(pd.Series([1, None, 3], dtype="Int64"), "k")
    exact = pd.Series([decimal.Decimal("4.00"), 2**53 + 1, "12"], dtype=object)
    assert counts_of(exact, "k").tolist() == [4, 2**53 + 1, 12]
    with pytest.raises(ValueError, match="row 1: not an integer count$"):
        counts_of(pd.Series([decimal.Decimal("4.5")], dtype=object), "k")
    with pytest.raises(ValueError, match="row 2: a boolean, not a count$"):
        counts_of(pd.Series([1, True], dtype=object), "k")


# ------------------------------------------------------------------ several columns
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_several_columns_read_and_written_back(suffix, tmp_path):
    from dpfix.io.tables import other_columns, read_counts
    from dpfix.io.writing import write_counts
    from dpfix.release.pipeline import privatize_counts

    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    src = tmp_path / f"t{suffix}"
    frame = pd.DataFrame({"id": ["007", "010", "011"], "a": [3, 0, 9], "x": ["p", "q", "r"],
                          "b": [1, 2, 2]})
    if suffix == ".csv":
        frame.to_csv(src, index=False)
    else:
        frame.to_parquet(src)
    t = read_counts(src, ["b", "a"])
    assert t.columns == ["b", "a"] and t.counts.tolist() == [1, 2, 2]
    assert t.select(1).counts.tolist() == [3, 0, 9] and other_columns(t) == ["id", "x"]
    results = [privatize_counts(t.select(k).counts, 1.0, upper=4, seed=k) for k in range(2)]
    out = tmp_path / f"o{suffix}"
    write_counts(t, results, out, keep=["id"], fmt=suffix[1:])
    got = pd.read_csv(out, dtype={"id": str}) if suffix == ".csv" else pd.read_parquet(out)
    assert list(got.columns) == ["id", "a", "b"] and got["id"].tolist() == ["007", "010", "011"]
    assert got["b"].tolist() == results[0].counts.tolist()
    assert got["a"].tolist() == results[1].counts.tolist()
    with pytest.raises(ValueError, match="1 result"):
        write_counts(t, results[:1], tmp_path / f"bad{suffix}")
    csv_out = tmp_path / "as_parquet.parquet"  # a CSV table written as Parquet
    if suffix == ".csv" and importlib.util.find_spec("pyarrow"):
        write_counts(t, results, csv_out, keep=["x"], fmt="parquet")
        back = pd.read_parquet(csv_out)
        assert list(back.columns) == ["a", "x", "b"] and back["a"].dtype == np.int64


@pytest.mark.parametrize("columns, match", [(["a", "zz"], "column 'zz' not found"),
                                            (["a", "a"], "column 'a' named twice"),
                                            ([], "name the column")])
def test_several_columns_bad_names(columns, match, tmp_path):
    from dpfix.io.tables import read_counts

    src = tmp_path / "t.csv"
    src.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match=match):
        read_counts(src, columns)


def test_an_int64_column_is_read_as_its_own_values_read_only():
    """counts_of gives an int64 column's values without a copy, read-only (a write raises,
    the caller's table cannot change); other integer types and clipped counts are copies."""
    from dpfix.io.counts import counts_of

    s = pd.Series(np.array([3, 0, 12], dtype=np.int64))
    c = counts_of(s, "k")
    assert np.shares_memory(c, s.to_numpy()) and not c.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        c[0] = 9
    assert s.tolist() == [3, 0, 12]
    for other in (pd.Series(np.array([3, 0], dtype=np.int32)),
                  pd.Series(np.array([3, 2**63 - 1], dtype=np.int64))):
        got = counts_of(other, "k")
        assert got.dtype == np.int64 and got.flags.writeable
        assert not np.shares_memory(got, other.to_numpy())
