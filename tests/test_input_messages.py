"""Bad inputs refused in one line that names the place and the reason, never a refused
cell's value (a column of counts is confidential, and messages reach logs and terminals);
inputs that pandas refuses in its own words; column names that are not text."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpfix.io.counts import counts_of
from dpfix.io.tables import read_counts, read_histogram
from dpfix.io.writing import FormulaWarning
from dpfix.release.table import privatize_table
from helpers import cli


@pytest.mark.parametrize("cell, reason", [
    ("-37", "not a count (negative)"), ("12.5", "not an integer count"),
    ("x9z", "not a number"), ("1e3", "not an integer count"), ("", "missing value (NaN)"),
])
def test_a_bad_count_is_named_by_its_reason_not_its_value(tmp_path, capsys, cell, reason):
    path = tmp_path / "t.csv"
    path.write_text(f"id,k\na,1\nb,{cell}\n")
    with pytest.raises(ValueError) as refused:
        read_counts(path, "k")
    assert str(refused.value) == f"column 'k', line 3: {reason}"
    rc, _, err = cli(capsys, "privatize", path, "--column", "k", "--epsilon", "1", "--upper",
                     "5", "--out", tmp_path / "o.csv")
    assert rc == 2 and err == f"dpfix privatize: error: column 'k', line 3: {reason}\n"
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize("values, reason", [
    ([3, -41], "not a count (negative)"), ([2.5, 3.0], "not an integer count"),
    ([True, False], None), (np.array([1, object()], dtype=object), "not a number (a object)"),
])
def test_a_bad_value_of_a_frame_is_named_by_its_reason(values, reason):
    with pytest.raises(ValueError) as refused:
        counts_of(pd.Series(values), "k")
    if reason is not None:
        assert str(refused.value).endswith(f": {reason}")
    assert "41" not in str(refused.value) and "2.5" not in str(refused.value)


@pytest.mark.parametrize("body, reason", [
    ("0,5\n1,-123\n", "line 2: the number is not a count (negative)"),
    ("0,5\n1,7.25\n", "line 2: the number is not an integer"),
    ("0,5\n1,abc\n", "line 2: expected 'count,number': the number is not a number"),
    ("0,5\n1,2,999\n", "line 2: expected 'count,number', got 3 cells"),
])
def test_a_bad_histogram_line_is_not_quoted(tmp_path, body, reason):
    path = tmp_path / "h.csv"
    path.write_text(body)
    with pytest.raises(ValueError) as refused:
        read_histogram(path)
    assert str(refused.value) == f"{path}, {reason}"


def test_a_field_over_128_kib_before_a_bad_cell(tmp_path, capsys):
    """The csv module's field limit (128 KiB) is not the reader's: the bad cell is still
    named by its line, in one line."""
    path = tmp_path / "t.csv"
    path.write_text('id,k\n"' + "x" * 200_000 + '",1\nb,-3\n')
    with pytest.raises(ValueError, match="^column 'k', line 3: not a count \\(negative\\)$"):
        read_counts(path, "k")
    rc, _, err = cli(capsys, "privatize", path, "--column", "k", "--epsilon", "1", "--upper",
                     "5", "--out", tmp_path / "o.csv")
    assert rc == 2 and err.count("\n") == 1 and "line 3" in err, err
    import csv

    assert csv.field_size_limit() == 131072  # the module's limit is put back


def test_a_ragged_mapping_and_a_complex_column(capsys):
    with pytest.raises(ValueError, match="^data: the columns of a mapping have one length, "
                                         "got {'a': 2, 'b': 1}$"):
        privatize_table({"a": [1, 2], "b": [1]}, "a", 1.0, upper=5)
    with pytest.raises(ValueError, match="^column 'a' holds complex numbers \\(complex128\\), "
                                         "not counts$"):
        privatize_table(pd.DataFrame({"a": [1 + 2j, 3]}), "a", 1.0, upper=5)


def test_integer_column_names_are_written(tmp_path):
    """A DataFrame whose columns are named by integers: privatized, kept (by its name as
    text, as the report lists it) and written to CSV and Parquet."""
    df = pd.DataFrame({0: [1, 2, 0], "k": ["=x", "y", "z"], 7: [-1, 5, 6], 8: [1, 1, 1]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the top-coding warning
        release = privatize_table(df, [0], 1.0, upper=5, keep=["k", "7"], order="input",
                                  seed=0)
    assert list(release.table.columns) == [0, "k", 7]
    with pytest.warns(FormulaWarning, match="column 'k'"):
        release.write(tmp_path / "o.csv")
    frame = pd.read_csv(tmp_path / "o.csv", dtype=str)
    assert list(frame.columns) == ["0", "k", "7"] and frame["7"].tolist() == ["-1", "5", "6"]
    release.write(tmp_path / "o.parquet")
    assert list(pd.read_parquet(tmp_path / "o.parquet").columns) == ["0", "k", "7"]
    assert release.report["output_columns"]["dropped"] == ["8"]
