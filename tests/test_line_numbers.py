"""Bad input names where it is in the file: a CSV's or a histogram's line number (the
header is line 1), a Parquet table's row counted from 1; real bad files through
``dpfix privatize``."""

from __future__ import annotations

import pandas as pd
import pytest

from helpers import cli


def refused(capsys, tmp_path, *argv) -> str:
    """Run ``dpfix privatize ARGV``: exit 2, one line on stderr, no output written."""
    out = tmp_path / "out.csv"
    rc, _, err = cli(capsys, "privatize", *argv, "--epsilon", "1", "--upper", "20",
                     "--out", out, "--seed", "1", "--quiet")
    assert rc == 2 and len(err.strip().splitlines()) == 1, err
    assert not out.exists()
    return err


@pytest.mark.parametrize("text, where", [
    ("id,k\na,1\nb,2\nc,x\n", "line 4"),                      # header line 1, data from 2
    ("id,k\na,-1\n", "line 2"),                              # the first data row
    ("id,k\r\na,1\r\n\r\nb,2.5\r\n", "line 4"),              # CRLF and a blank line
    ("\ufeffid,k\na,1\n   \nb,1e3\n", "line 4"),             # BOM, a whitespace-only line
    ('id,k\n"a\nb",1\n"c\n\nd",2\ne,\n', "line 7"),          # quoted cells over lines
])
def test_a_csv_error_names_the_line_of_the_file(tmp_path, capsys, text, where):
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8", newline="")
    err = refused(capsys, tmp_path, path, "--column", "k")
    assert f"column 'k', {where}:" in err, err
    assert "row" not in err.split("column 'k'")[1], err


def test_a_csv_with_another_separator_names_the_line(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("id;k\na;1\nb;1\n\nc;2\nd;-4\n")
    err = refused(capsys, tmp_path, path, "--column", "k", "--sep", ";")
    assert "column 'k', line 6: not a count (negative)" in err, err


def test_the_second_column_names_its_line(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("id,a,b\nr0,1,2\nr1,3,4.5\n")
    err = refused(capsys, tmp_path, path, "--column", "a", "--column", "b")
    assert "column 'b', line 3:" in err, err


def test_a_parquet_error_names_the_row_from_1(tmp_path, capsys):
    path = tmp_path / "t.parquet"
    pd.DataFrame({"id": ["a", "b", "c"], "k": [1.0, 2.0, 2.5]}).to_parquet(path)
    err = refused(capsys, tmp_path, path, "--column", "k")
    assert "column 'k', row 3:" in err, err


def test_a_histogram_error_names_the_line_of_the_file(tmp_path, capsys):
    path = tmp_path / "h.csv"
    path.write_text("count,number\n0,4\n\n1,3\n2,-1\n")
    err = refused(capsys, tmp_path, "--histogram", path)
    assert f"{path}, line 5:" in err, err
