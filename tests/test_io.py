"""Reading tables and histograms; the shared data sets when present."""

import numpy as np
import pandas as pd
import pytest

from dpfix.io import (
    counts_from_column,
    data_dir,
    data_path,
    read_histogram,
    read_table,
    synthetic_counts,
)
from dpfix.pipeline import histogram


def _shared_available() -> bool:
    try:
        data_dir()
    except FileNotFoundError:
        return False
    return True


needs_data = pytest.mark.skipif(not _shared_available(), reason="shared data folder absent")


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
    from dpfix.io import StagedFiles

    (tmp_path / "a.txt").write_text("old")
    with pytest.raises(RuntimeError), StagedFiles() as staged:
        staged.temp(tmp_path / "a.txt").write_text("new")
        staged.temp(tmp_path / "b.txt").write_text("new")
        raise RuntimeError("failed before the commit")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]  # no temporaries left
    assert (tmp_path / "a.txt").read_text() == "old"
    with StagedFiles() as staged:
        staged.temp(tmp_path / "a.txt").write_text("new")
        staged.temp(tmp_path / "b.txt").write_text("new")
        staged.commit()
    assert [p.read_text() for p in sorted(tmp_path.iterdir())] == ["new", "new"]


def test_histogram_file_round_trip(tmp_path):
    from dpfix.io import read_counts, write_counts
    from dpfix.pipeline import privatize_counts

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


@pytest.mark.parametrize("dtype, n, kept", [("int8", 51, True), ("int8", 200, False),
                                            ("uint16", 1000, True), ("Int64", 51, True),
                                            ("Float32", 51, True), ("float64", 51, True),
                                            ("object", 51, False), ("string", 51, False)])
def test_parquet_dtype_keeps_what_holds_the_counts(dtype, n, kept):
    from dpfix.io import parquet_dtype

    d = pd.Series([], dtype=dtype).dtype
    assert (parquet_dtype(d, n) == d) is kept and (kept or parquet_dtype(d, n) is np.int64)


def test_counts_of_text_and_numbers():
    from dpfix.io import counts_of

    assert counts_of(pd.Series([" 3", "0 ", "12"]), "k").tolist() == [3, 0, 12]
    assert counts_of(pd.Series([3.0, 0.0, 1e30]), "k").tolist() == [3, 0, 2**62]
    with pytest.raises(ValueError, match="booleans"):
        counts_of(pd.Series([True, False]), "k")
    with pytest.raises(ValueError, match="row 2: '1.5' is not an integer"):
        counts_of(pd.Series(["1", "2", "1.5"]), "k")
