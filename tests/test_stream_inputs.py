"""A streamed release (dpfix.release.stream) whose input changes under it, or whose shuffle
needs more buckets than a process may open files: refused in one line with nothing
written, or written with a bounded number of open files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.io.tables import CsvBlocks
from dpfix.release import stream
from dpfix.release.stream import InputChanged
from helpers import cli, release

pytest.importorskip("pyarrow")
pytestmark = pytest.mark.filterwarnings("ignore:upper = ")  # the top-coding warning

#: Data rows per block in these tests: a few blocks per file.
BLOCK = 7


def _write(path: Path, N: int, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    lines = ["id,k"] + [f"r{i:04d},{v}" for i, v in enumerate(rng.integers(0, 6, N))]
    path.write_text("\n".join(lines) + "\n")
    return path


def _hooked(monkeypatch, after_scan=None, after_block=None) -> None:
    """``stream.CsvBlocks`` with blocks of :data:`BLOCK` rows, calling ``after_scan(path)``
    once pass 1 is done and ``after_block(path)`` after pass 2's first block."""

    class Hooked(CsvBlocks):
        def __init__(self, path, columns, sep=",", rows=BLOCK):
            super().__init__(path, columns, sep, rows=BLOCK)
            self.passes = 0

        def scan(self, add):
            N = super().scan(add)
            if after_scan is not None:
                after_scan(self.path)
            return N

        def blocks(self):
            self.passes += 1
            for i, block in enumerate(super().blocks()):
                yield block
                if self.passes == 2 and i == 0 and after_block is not None:
                    after_block(self.path)

    monkeypatch.setattr(stream, "CsvBlocks", Hooked)


def _append(path: Path) -> None:
    with open(path, "a") as f:
        f.write("".join(f"x{i},1\n" for i in range(20)))


def _truncate(path: Path) -> None:
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[: len(lines) // 2]))


def _replace(path: Path) -> None:
    other = path.with_name("other.csv")
    other.write_bytes(path.read_bytes())
    os.replace(other, path)


def _same_size_same_time(path: Path) -> None:
    """One count rewritten to another of the same width, the size and time put back."""
    info = path.stat()
    text = path.read_text()
    head, first, rest = text.partition("\nr0000,")
    digit = rest[0]
    path.write_text(head + first + ("5" if digit != "5" else "4") + rest[1:])
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert path.stat().st_size == info.st_size


@pytest.mark.parametrize("order", ["input", "shuffled", "key"])
@pytest.mark.parametrize("when, change, what", [
    ("between", _append, "its size went from"),
    ("between", _truncate, "its size went from"),
    ("between", _replace, "another file is at its path"),
    ("between", _same_size_same_time, "pass 2 read other counts in column 'k'"),
    ("during", _append, "its size went from"),
    ("during", _truncate, "its size went from"),
])
def test_a_file_changed_between_the_passes_is_refused(tmp_path, monkeypatch, order, when,
                                                      change, what):
    path = _write(tmp_path / "in.csv", 40)
    _hooked(monkeypatch, **{"after_scan" if when == "between" else "after_block": change})
    out = tmp_path / "o.csv"
    with pytest.raises(InputChanged, match=what) as refused:
        release(path, "k", 1.0, upper=5, keys=["id"], order=order, seed=1, out=out,
                scratch=tmp_path, bucket_rows=8)
    assert isinstance(refused.value, ValueError)
    assert "nothing written" in str(refused.value) and "\n" not in str(refused.value)
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]  # no scratch, no .part


def test_the_row_count_is_checked_even_when_the_file_looks_unchanged(tmp_path, monkeypatch):
    """Pass 2 reading another number of rows than pass 1 is refused, whatever the file's
    size and time say."""
    path = _write(tmp_path / "in.csv", 40)
    _hooked(monkeypatch)
    monkeypatch.setattr(CsvBlocks, "changed", lambda self: None)
    real = stream._read_again

    def fewer(blocks, N):  # pass 2 sees one block less
        return list(real(blocks, N))[:-1]

    monkeypatch.setattr(stream, "_read_again", fewer)
    with pytest.raises(InputChanged, match="pass 2 read 35 rows, pass 1 40"):
        release(path, "k", 1.0, upper=5, order="input", seed=1, out=tmp_path / "o.csv",
                scratch=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_an_unchanged_file_streams_in_small_blocks(tmp_path, monkeypatch):
    """The checks pass on a file nothing writes to (blocks of 7 rows, 6 buckets)."""
    path = _write(tmp_path / "in.csv", 40)
    _hooked(monkeypatch)
    got = release(path, "k", 1.0, upper=5, keys=["id"], seed=1, out=tmp_path / "o.csv",
                  bucket_rows=8)
    frame = pd.read_csv(got.path, dtype=str)
    assert len(frame) == 40 and frame["id"].tolist() == sorted(frame["id"])


def test_cli_a_file_changed_between_the_passes(tmp_path, monkeypatch, capsys):
    path = _write(tmp_path / "in.csv", 40)
    _hooked(monkeypatch, after_scan=_append)
    out = tmp_path / "o.csv"
    rc, stdout, err = cli(capsys, "privatize", path, "--column", "k", "--epsilon", "1",
                          "--upper", "5", "--out", out, "--report", tmp_path / "r.json",
                          "--seed", "1", "--quiet")
    assert rc == 2
    assert err.count("\n") == 1 and "changed while the streamed release read it" in err
    assert stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_progress_of_several_columns_counts_every_row(tmp_path, capsys):
    """Off a terminal each column's line comes at the end with all its rows: a streamed
    release builds every column's T first and draws the columns' rows together."""
    rng = np.random.default_rng(3)
    path = tmp_path / "in.csv"
    pd.DataFrame({"id": [f"r{i}" for i in range(60)], "a": rng.integers(0, 6, 60),
                  "b": rng.integers(0, 4, 60)}).to_csv(path, index=False)
    rc, _, err = cli(capsys, "privatize", path, "--column", "a", "--column", "b",
                     "--epsilon", "1", "--upper", "9", "--out", tmp_path / "o.csv",
                     "--report", tmp_path / "r.json", "--seed", "1")
    assert rc == 0, err
    lines = [line for line in err.splitlines() if " rows (" in line]
    assert [line.split(": ")[1] for line in lines] == ["in.csv (a)", "in.csv (b)"]
    assert all(line.endswith("done; 60 rows (100%)") for line in lines), lines
    assert json.loads((tmp_path / "r.json").read_text())["streamed"]["passes"] == 2


# ------------------------------------------------------------------ open files
def _shuffle(N: int, K: int, seed: int, max_open: int) -> list:
    pa = pytest.importorskip("pyarrow")
    from dpfix.sampling import random_source

    t = pa.table({"x": list(range(N))})
    pieces = [t.slice(0, N // 3), t.slice(N // 3, N // 3), t.slice(2 * (N // 3))]
    with stream.scratch_folder() as folder:
        return [v for b in stream.external_shuffle(iter(pieces), K, random_source(seed),
                                                   folder, t.schema, max_open)
                for v in b.column("x").to_pylist()]


@settings(max_examples=40, deadline=None)
@given(N=st.integers(0, 60), K=st.integers(1, 70), seed=st.integers(0, 2**32),
       max_open=st.integers(2, 5))
def test_a_bounded_scatter_is_the_one_level_scatter(N, K, seed, max_open):
    """Files of several buckets split in turn give every bucket its rows in the input's
    order and draw the same randomness: the same output as every bucket open at once."""
    assert _shuffle(N, K, seed, max_open) == _shuffle(N, K, seed, max(K, 2))


@settings(max_examples=30, deadline=None)
@given(runs=st.lists(st.lists(st.sampled_from(["", "a", "b", "bb"]), max_size=8),
                     min_size=1, max_size=9),
       max_open=st.integers(2, 3), batch=st.integers(1, 3))
def test_a_bounded_merge_is_the_stable_sort(runs, max_open, batch):
    pa = pytest.importorskip("pyarrow")
    frames = [pd.DataFrame({"k": pd.Series(sorted(ks), dtype=object),
                            "tag": [f"{i}.{j}" for j in range(len(ks))]})
              for i, ks in enumerate(runs)]
    schema = pa.schema([("k", pa.string()), ("tag", pa.string())])
    with stream.scratch_folder() as folder:
        paths = []
        for i, f in enumerate(frames):
            paths.append(folder / f"r{i}")
            with pa.ipc.new_stream(str(paths[-1]), schema) as w:
                w.write_table(pa.Table.from_pandas(f, schema=schema, preserve_index=False),
                              max_chunksize=batch)
        merged = list(stream.merge_runs(paths, ["k"], max_open, batch=batch))
        assert len(list(folder.iterdir())) <= len(runs)  # the merged-away runs are removed
    got = pa.concat_tables(merged).column("tag").to_pylist() if merged else []
    want = pd.concat(frames).sort_values("k", kind="stable")["tag"].tolist()
    assert got == want


_FEW_FILES = """
import resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[4]), int(sys.argv[4])))
from dpfix.release.plan import plan_release
from dpfix.release.table import execute
execute(plan_release(sys.argv[1], "k", 1.0, upper=5, keys=["id"], order=sys.argv[3], seed=2,
                     out=sys.argv[2]), bucket_rows=2)
"""


@pytest.mark.skipif(os.name != "posix", reason="RLIMIT_NOFILE")
@pytest.mark.parametrize("order", ["shuffled", "key"])
def test_many_buckets_with_few_open_files(tmp_path, monkeypatch, order):
    """300 buckets (and sorted runs) under a limit of 100 open files: written, and the same
    bytes as with every bucket open at once."""
    path = _write(tmp_path / "in.csv", 600)
    out = tmp_path / "few.csv"
    run = subprocess.run([sys.executable, "-c", _FEW_FILES, str(path), str(out), order,
                          "100"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    monkeypatch.setattr(stream, "MAX_OPEN_FILES", 10**6)  # one level: 300 files at once
    release(path, "k", 1.0, upper=5, keys=["id"], order=order, seed=2,
            out=tmp_path / "all.csv", bucket_rows=2)
    assert out.read_bytes() == (tmp_path / "all.csv").read_bytes()
    assert len(pd.read_csv(out)) == 600
