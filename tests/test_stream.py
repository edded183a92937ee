"""The streamed release of a CSV file (dpfix.release.stream; docs/release.md, section 7).

With a seed the streamed output is the in-memory output byte for byte (one bucket); with
several buckets the external shuffle is uniform (chi-square; hypothesis for the bucket
edge cases) and the stable merge is the stable sort; bad input is refused with the
in-memory reader's message; the scratch folder goes on every exit, the output appears
whole or not at all.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.io.writing import FormulaWarning
from dpfix.release import stream
from dpfix.release.inputs import Csv
from dpfix.release.plan import Output
from dpfix.release.report import report_schema
from dpfix.release.stream import external_shuffle, merge_runs, scratch_folder
from dpfix.release.table import privatize_table
from dpfix.sampling import random_source
from helpers import cli, release

pa = pytest.importorskip("pyarrow")

warnings.filterwarnings("ignore", message="upper = ")  # the top-coding warning of tiny bounds


def _untimed(report):
    """The report without its timings (the time to build T differs from run to run) and
    without ``streamed`` (said by the streamed release only)."""
    if isinstance(report, dict):
        return {k: _untimed(v) for k, v in report.items()
                if k not in ("timings_seconds", "build_seconds", "streamed")}
    if isinstance(report, list):
        return [_untimed(v) for v in report]
    return report


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(1)
    N = 400
    path = tmp_path / "in.csv"
    pd.DataFrame({"id": rng.integers(0, 9, N).astype(str),  # many ties
                  "note": [f"n {i}, \"q\"" if i % 5 else "=1+1" for i in range(N)],
                  "a": rng.integers(0, 14, N), "secret": rng.integers(0, 3, N),
                  "b": rng.integers(0, 5, N)}).to_csv(path, index=False)
    return path


def _both(path, tmp_path, columns, **kw):
    """(in-memory release and its bytes, streamed release and its bytes, the confidentials)."""
    mem, mem_secret = privatize_table(path, columns, 1.0, confidential=True, **kw)
    mem.write(tmp_path / "mem.csv", force=True)
    out = tmp_path / "str.csv"
    got, secret = release(path, columns, 1.0, confidential=True,
                          out=Output(out, force=True), scratch=tmp_path, **kw)
    return (mem, (tmp_path / "mem.csv").read_bytes(), mem_secret, got, out.read_bytes(),
            secret)


@pytest.mark.parametrize("order", ["input", "shuffled", "key"])
@pytest.mark.parametrize("columns", [["a"], ["a", "b"], ["b", "a"]])
def test_streamed_equals_in_memory(table, tmp_path, order, columns):
    mem, mem_bytes, mem_secret, got, got_bytes, secret = _both(
        table, tmp_path, columns, upper=9, keys=["id"], keep=["note"], order=order, seed=3)
    assert got_bytes == mem_bytes
    assert _untimed(got.report) == _untimed(mem.report)
    assert "streamed" not in mem.report
    assert got.report["streamed"]["passes"] == 2 and got.report["streamed"]["buckets"] == 1
    assert got.table is None and got.path == tmp_path / "str.csv"
    assert secret.topcoded == mem_secret.topcoded
    for name in columns:
        assert secret.histograms[name].tolist() == mem_secret.histograms[name].tolist()
    for mine, theirs in zip(secret.report["columns"], mem_secret.report["columns"],
                            strict=True):
        for kind in ("realized_count_error", "realized_count_error_vs_true"):
            for stat in ("abs", "squared"):
                assert mine[kind][stat] == pytest.approx(theirs[kind][stat], rel=1e-12)
        assert mine["true_distribution_zeta"] == pytest.approx(theirs["true_distribution_zeta"])
    assert not list(tmp_path.glob("dpfix-*"))  # the scratch folder is gone


def test_streamed_report_validates(table, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    got = privatize_table(table, ["a", "b"], 1.0, upper=9, keys=["id"], out=tmp_path / "o.csv")
    jsonschema.validate(got.report, report_schema())
    assert "path='" in repr(got) and "rows=400" in repr(got)


def test_upper_auto_and_unit_cell_streamed(table, tmp_path):
    mem, mem_bytes, _, got, got_bytes, _ = _both(table, tmp_path, ["a", "b"],
                                                 upper={"a": "auto", "b": 4}, unit="cell",
                                                 keys=["id"], seed=8)
    assert got_bytes == mem_bytes
    assert _untimed(got.report) == _untimed(mem.report)


@pytest.mark.parametrize("text,sep", [
    ("\ufeffid;k\r\n\"x\ny\";3\r\nb;0\r\n\r\n\"c;\";7\r\n", ";"),  # BOM, CRLF, quoting, blank
    ("id,k\n+a,1\n@b,2\n-3,3\n", ","),  # formula cells (and a plain negative number)
])
@pytest.mark.parametrize("escape", [False, True])
def test_layouts_and_formulas_streamed(tmp_path, text, sep, escape):
    path = tmp_path / "in.csv"
    path.write_bytes(text.encode())
    kw = dict(upper=5, keys=["id"], order="key", seed=2)
    with warnings.catch_warnings(record=True) as mem_warned:
        warnings.simplefilter("always", FormulaWarning)
        mem = privatize_table(Csv(path, sep), "k", 1.0, **kw)
        mem.write(tmp_path / "mem.csv", escape_formulas=escape)
    with warnings.catch_warnings(record=True) as got_warned:
        warnings.simplefilter("always", FormulaWarning)
        privatize_table(Csv(path, sep), "k", 1.0,
                        out=Output(tmp_path / "str.csv", escape_formulas=escape), **kw)
    assert (tmp_path / "str.csv").read_bytes() == (tmp_path / "mem.csv").read_bytes()
    formula = [[str(w.message) for w in ws if w.category is FormulaWarning]
               for ws in (mem_warned, got_warned)]
    assert formula[0] == formula[1]
    assert bool(formula[0]) == (not escape and "@" in text)


def test_parquet_out_is_streamed_too(table, tmp_path):
    got = privatize_table(table, "a", 1.0, upper=9, keys=["id"], seed=1,
                          out=tmp_path / "o.parquet")
    mem = privatize_table(table, "a", 1.0, upper=9, keys=["id"], seed=1)
    assert got.table is None
    assert pd.read_parquet(tmp_path / "o.parquet")["a"].tolist() == mem.table["a"].tolist()
    with pytest.raises(ValueError, match="not held in memory"):
        got.write(tmp_path / "again.csv")


def test_cli_streams_the_same_bytes(table, tmp_path, capsys):
    rc, _, err = cli(capsys, "privatize", table, "--column", "a", "--epsilon", "1", "--upper",
                     "9", "--key", "id", "--out", tmp_path / "cli.csv", "--seed", "4",
                     "--quiet", "--report", tmp_path / "r.json")
    assert rc == 0, err
    mem = privatize_table(table, "a", 1.0, upper=9, keys=["id"], seed=4)
    mem.write(tmp_path / "mem.csv")
    assert (tmp_path / "cli.csv").read_bytes() == (tmp_path / "mem.csv").read_bytes()
    assert (tmp_path / "r.json").exists()


# ------------------------------------------------------------------ several buckets
def _shuffled(N: int, K: int, seed: int) -> list:
    t = pa.table({"x": list(range(N))})
    with scratch_folder() as folder:
        return [v for b in external_shuffle(iter([t.slice(0, N // 2), t.slice(N // 2)]), K,
                                            random_source(seed), folder, t.schema)
                for v in b.column("x").to_pylist()]


def test_external_shuffle_is_uniform():
    """Chi-square over the 24 permutations of 4 rows, 3 buckets (often empty ones)."""
    scipy_stats = pytest.importorskip("scipy.stats")
    perms = {p: i for i, p in enumerate(itertools.permutations(range(4)))}
    seen = np.zeros(24)
    for seed in range(1200):
        seen[perms[tuple(_shuffled(4, 3, seed))]] += 1
    assert scipy_stats.chisquare(seen).pvalue > 1e-4


@settings(max_examples=40, deadline=None)
@given(N=st.integers(0, 25), K=st.integers(1, 40), seed=st.integers(0, 2**32))
def test_external_shuffle_keeps_every_row(N, K, seed):
    """K = 1, N < K, empty buckets: every row exactly once."""
    assert sorted(_shuffled(N, K, seed)) == list(range(N))


def test_one_bucket_is_the_in_memory_permutation():
    assert _shuffled(50, 1, 9) == random_source(9).permutation(50).tolist()


@settings(max_examples=40, deadline=None)
@given(runs=st.lists(st.lists(st.sampled_from(["", "a", "b", "bb", None]), max_size=12),
                     min_size=1, max_size=5),
       batch=st.integers(1, 4))
def test_merge_is_the_stable_sort(runs, batch):
    """The merge of sorted runs (ties, missing keys, tiny batches) is the stable sort of
    their concatenation: equal keys in the runs' order."""
    frames = [pd.DataFrame({"k": pd.Series(ks, dtype=object), "tag": [f"{i}.{j}" for j in
                                                                    range(len(ks))]})
              for i, ks in enumerate(runs)]
    frames = [f.sort_values("k", kind="stable", na_position="last") for f in frames]
    schema = pa.schema([("k", pa.string()), ("tag", pa.string())])
    with scratch_folder() as folder:
        paths = []
        for i, f in enumerate(frames):
            paths.append(folder / f"r{i}")
            with pa.ipc.new_stream(str(paths[-1]), schema) as w:
                w.write_table(pa.Table.from_pandas(f, schema=schema, preserve_index=False),
                              max_chunksize=batch)
        merged = list(merge_runs(paths, ["k"]))
    got = pa.concat_tables(merged).column("tag").to_pylist() if merged else []
    want = pd.concat(frames).sort_values("k", kind="stable", na_position="last")["tag"]
    assert got == want.tolist()


@pytest.mark.parametrize("order", ["shuffled", "key"])
def test_many_buckets_release(table, tmp_path, order):
    """Several buckets: the same rows (each with its drawn counts) as in memory, the keys
    sorted; the ties' order differs between seeds."""
    kw = dict(upper=9, keys=["id"], keep=["note"], order=order)
    mem = privatize_table(table, "a", 1.0, seed=5, **kw)
    got = release(table, "a", 1.0, seed=5, out=tmp_path / "o.csv", bucket_rows=16,
                  scratch=tmp_path, **kw)
    assert _untimed(got.report) == _untimed(mem.report)
    assert got.report["streamed"]["buckets"] == 25  # ceil(400 / 16)
    frame = pd.read_csv(tmp_path / "o.csv", dtype=str, keep_default_na=False)
    rows = sorted(map(tuple, frame.to_numpy()))
    assert rows == sorted(map(tuple, mem.table.astype(str).to_numpy()))
    if order == "key":
        assert frame["id"].tolist() == sorted(frame["id"])
        other = release(table, "a", 1.0, seed=6, out=tmp_path / "p.csv", bucket_rows=16,
                        **kw)
        again = pd.read_csv(other.path, dtype=str, keep_default_na=False)
        assert again["note"].tolist() != frame["note"].tolist()
    same = release(table, "a", 1.0, seed=5, out=tmp_path / "q.csv", bucket_rows=16, **kw)
    assert same.path.read_bytes() == (tmp_path / "o.csv").read_bytes()  # a seed: its bytes
    assert not list(tmp_path.glob("dpfix-*"))


# ------------------------------------------------------------------ bad input, failures
BAD = {
    "ragged": "id,k\n1,2\n3,4,5\n",
    "missing": "id,k\n1,2\n3\n",
    "not a number": "id,k\na,2\nb,x\n",
    "fraction": "id,k\na,2\nb,2.5\n",
    "negative": "id,k\na,-2\n",
    "no column": "id,j\na,2\n",
    "twice": "id,k,k\na,2,3\n",
    "no rows": "id,k\n",
    "empty": "",
    "blank": "\n\n",
    "not utf-8": b"id,k\n\xff,2\n",
    "second column first": "id,k,m\na,1,x\nb,y,2\n",  # the first column's error wins
    "syntax after a count": "id,k,m\na,x,1\nb,2,3,4\n",  # pandas' error wins
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_same_message_no_output(tmp_path, name):
    path = tmp_path / "bad.csv"
    text = BAD[name]
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ValueError) as mem:
        privatize_table(path, ["k", "m"] if ",m" in str(text) else "k", 1.0, upper=5)
    with pytest.raises(ValueError) as got:
        release(path, ["k", "m"] if ",m" in str(text) else "k", 1.0, upper=5,
                out=tmp_path / "o.csv", scratch=tmp_path)
    assert str(got.value) == str(mem.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv"]


def test_failure_in_pass_two_leaves_nothing(table, tmp_path, monkeypatch):
    def boom(self, frame, others, names):
        raise KeyboardInterrupt

    monkeypatch.setattr(stream._Writer, "rows", boom)
    with pytest.raises(KeyboardInterrupt):
        release(table, "a", 1.0, upper=9, keys=["id"], out=tmp_path / "o.csv",
                scratch=tmp_path, bucket_rows=16)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


_KILLED = """
import os, signal, sys
from dpfix.release import stream
from dpfix.release.inputs import Csv
from dpfix.release.plan import Output
from dpfix.release.plan import plan_release
from dpfix.release.table import execute
def rows(self, frame, others, names):
    os.kill(os.getpid(), signal.SIGTERM)
stream._Writer.rows = rows
execute(plan_release(sys.argv[1], "a", 1.0, upper=9, keys=["id"], out=sys.argv[2]),
        scratch=sys.argv[3], bucket_rows=16)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or os.name != "posix", reason="POSIX")
def test_sigterm_removes_the_scratch_folder(table, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    run = subprocess.run([sys.executable, "-c", _KILLED, str(table), str(tmp_path / "o.csv"),
                          str(scratch)], capture_output=True, text=True, timeout=120)
    assert run.returncode == -signal.SIGTERM, run.stderr
    assert list(scratch.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "scratch"]


def test_scratch_folder_is_private_and_stale_ones_go(tmp_path):
    from dpfix.io.commit import leftover_tag

    host = leftover_tag().split("-", 1)[1]
    stale = tmp_path / f"dpfix-{2**22 + 3}-{host}-old"
    stale.mkdir()
    with scratch_folder(tmp_path) as folder:
        assert oct(folder.stat().st_mode & 0o777) == "0o700"
        assert not stale.exists()
    assert not folder.exists()


def test_streams_only_exact_row_samplers(table, tmp_path):
    """A one-stage framework release with out= is read whole and written (not streamed)."""
    from dpfix.release.options import NoSplit

    got = privatize_table(table, "a", 1.0, upper=9, seed=1, options=NoSplit("one-stage"),
                          out=tmp_path / "o.csv", order="input")
    mem = privatize_table(table, "a", 1.0, upper=9, seed=1, options=NoSplit("one-stage"),
                          order="input")
    assert pd.read_csv(got.path)["a"].tolist() == mem.table["a"].tolist()
    assert Path(got.path).exists()


@pytest.mark.parametrize("rows", [1, 2, 3, 7, 50])
def test_blocks_cover_the_rows_in_order(tmp_path, rows):
    """Every block but the last has exactly ``rows`` rows (the draws' chunks), whatever the
    parser's chunks; together they are the file's rows in order."""
    from dpfix.io.tables import CsvBlocks

    path = tmp_path / "t.csv"
    path.write_text("id,k\n" + "".join(f"r{i},{i % 4}\n" for i in range(23)))
    blocks = CsvBlocks(path, "k", rows=rows)
    assert blocks.scan(lambda start, counts: None) == 23
    got = list(blocks.blocks())
    assert [len(b) for _, b in got[:-1]] == [rows] * (len(got) - 1)
    assert [s for s, _ in got] == list(range(0, 23, rows))
    assert [v for _, b in got for v in b.column(0).to_pylist()] == [f"r{i}" for i in range(23)]


# ------------------------------------------------------------------ the key order by ranges
class _Header:
    header = ["k", "tag"]


def _by_ranges(keys: list, seed: int, bucket_rows: int) -> tuple[list, int]:
    """The tags of the rows ``keys`` in the key order of several buckets by key range, and
    the number of buckets."""
    t = pa.table({"f0": keys, "f1": [str(i) for i in range(len(keys))]})
    ranges = stream._KeyRanges(_Header(), "k")
    ranges.watch(0, t)
    t = t.rename_columns(["k", "tag"])
    K = -(-len(keys) // bucket_rows)
    with scratch_folder() as folder:
        out = pa.concat_tables(stream._ordered(iter([t]), "key", K, seed, folder, t.schema,
                                               ["k"], bucket_rows, ranges))
    assert out.column("k").to_pylist() == sorted(keys)
    return out.column("tag").to_pylist(), 1 if K == 1 else len(ranges.splitters) + 1


def test_key_ranges_put_ties_in_a_uniform_order():
    """Buckets by key range: sorted by key, the three rows of key ``a`` and the two of
    ``d`` in each of their 6 x 2 orders alike (chi-square), the buckets several."""
    scipy_stats = pytest.importorskip("scipy.stats")
    keys = ["d", "a", "c", "a", "b", "d", "a", "e"]
    orders = {p: i for i, p in enumerate(itertools.product(
        itertools.permutations(["1", "3", "6"]), itertools.permutations(["0", "5"])))}
    seen = np.zeros(len(orders))
    for seed in range(1200):
        tags, buckets = _by_ranges(keys, seed, 2)
        assert buckets > 1
        seen[orders[(tuple(tags[:3]), tuple(tags[5:7]))]] += 1
    assert scipy_stats.chisquare(seen).pvalue > 1e-4


def test_a_key_range_too_large_is_shuffled_and_merged(monkeypatch):
    """One key in every row: its one bucket, beyond the largest, goes through the external
    shuffle and the merge: every order of its 4 rows alike (chi-square)."""
    scipy_stats = pytest.importorskip("scipy.stats")
    monkeypatch.setattr(stream, "_LARGEST_BUCKET", 1)
    perms = {p: i for i, p in enumerate(itertools.permutations("0123"))}
    seen = np.zeros(24)
    for seed in range(1200):
        tags, _ = _by_ranges(["k"] * 4, seed, 1)
        seen[perms[tuple(tags)]] += 1
    assert scipy_stats.chisquare(seen).pvalue > 1e-4


@settings(max_examples=40, deadline=None)
@given(keys=st.lists(st.sampled_from(["", "a", "ab", "b", "é", "x" * 12, "x" * 13]),
                     min_size=1, max_size=30),
       bucket_rows=st.integers(1, 6), seed=st.integers(0, 2**32))
def test_key_ranges_keep_every_row_in_key_order(keys, bucket_rows, seed):
    """Empty keys, shared first bytes beyond 8, multibyte text: sorted, every row once."""
    tags, _ = _by_ranges(keys, seed, bucket_rows)
    assert sorted(tags, key=int) == [str(i) for i in range(len(keys))]


@settings(max_examples=60, deadline=None)
@given(cells=st.lists(st.lists(st.text(alphabet=["a", ",", ";", '"', "\r", "\n", " ", "é",
                                                 "\t", "="], max_size=4),
                               min_size=1, max_size=3), min_size=1, max_size=6),
       sep=st.sampled_from([",", ";", "\t", "|"]), newline=st.sampled_from(["\n", "\r\n"]))
def test_csv_rows_are_pandas_bytes(cells, sep, newline):
    """The streamed writer's rows are pandas' ``to_csv`` bytes: quoting, doubled quotes,
    an empty cell alone on its row, counts in decimal."""
    from dpfix.io.writing import csv_rows

    width = min(len(r) for r in cells)
    rows = [r[:width] for r in cells]
    counts = list(range(len(rows)))
    columns = [pa.array([r[j] for r in rows], pa.string()) for j in range(width)]
    frame = pd.DataFrame({f"c{j}": [r[j] for r in rows] for j in range(width)})
    want = frame.to_csv(index=False, header=False, sep=sep, lineterminator=newline)
    assert bytes(csv_rows(columns, sep, newline)) == want.encode()
    frame["n"] = counts
    want = frame.to_csv(index=False, header=False, sep=sep, lineterminator=newline)
    got = csv_rows([*columns, pa.array(counts, pa.uint8())], sep, newline)
    assert bytes(got) == want.encode()
