"""The streamed release of Parquet files (dpfix.release.stream; docs/release.md, section 7):
a Parquet table read in blocks, a Parquet output written by row groups.

With a seed and one bucket the streamed output is the in-memory output (CSV: byte for
byte; Parquet: the same table read back, its schema included); with several buckets the
same rows in the release's order; bad Parquet counts are refused with the in-memory
reader's one line; a file changed between the passes is refused with nothing written.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import warnings

import numpy as np
import pytest

from dpfix.io.tables import ParquetBlocks
from dpfix.release import stream
from dpfix.release.plan import Output, plan_release
from dpfix.release.stream import InputChanged
from dpfix.release.table import privatize_table
from helpers import release

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pyarrow.csv")
pq = pytest.importorskip("pyarrow.parquet")
pytestmark = pytest.mark.filterwarnings("ignore:upper = ")  # the top-coding warning

N = 300


def _columns(rng, n):
    """Typed columns: text with ties, commas, quotes, formulas and missing cells;
    integers with and without missing cells; floats with NaN and missing; booleans."""
    note = [None if i % 7 == 0 else "=1+1" if i % 11 == 0 else f"n {i}, \"q\""
            for i in range(n)]
    return {
        "id": pa.array(rng.integers(0, 9, n).astype(str)),
        "note": pa.array(note, pa.string()),
        "a": pa.array(rng.integers(0, 14, n)),
        "m": pa.array([None if i % 5 == 0 else int(v) for i, v in
                       enumerate(rng.integers(-3, 50, n))], pa.int32()),
        "z": pa.array(rng.integers(0, 2**40, n), pa.uint64()),
        "f": pa.array([None if i % 9 == 0 else float("nan") if i % 13 == 0 else v / 8
                       for i, v in enumerate(rng.integers(0, 80, n))], pa.float32()),
        "g": pa.array(rng.normal(size=n)),
        "t": pa.array([None if i % 4 == 0 else bool(i % 3) for i in range(n)]),
        "u": pa.array([None] * n, pa.bool_()),
        "b": pa.array(rng.integers(0, 5, n), pa.int16()),
        "secret": pa.array(rng.integers(0, 3, n)),
    }


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table(_columns(np.random.default_rng(1), N)), path, row_group_size=97)
    return path


KEEP = ["note", "m", "z", "f", "g", "t", "u"]


def _both(path, tmp_path, suffix, columns, bucket_rows=None, **kw):
    """The in-memory release written to ``mem<suffix>`` and the streamed one to
    ``str<suffix>`` (scratch in ``tmp_path``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the formula cells' warning, said by both
        mem = privatize_table(path, columns, 1.0, **kw)
        mem.write(tmp_path / f"mem{suffix}", force=True)
        got = release(path, columns, 1.0, out=Output(tmp_path / f"str{suffix}", force=True),
                      scratch=tmp_path, bucket_rows=bucket_rows, **kw)
    return mem, got


def _untimed(report):
    if isinstance(report, dict):
        return {k: _untimed(v) for k, v in report.items()
                if k not in ("timings_seconds", "build_seconds", "streamed")}
    if isinstance(report, list):
        return [_untimed(v) for v in report]
    return report


def test_parquet_files_are_streamed(table, tmp_path):
    for out in ("o.csv", "o.parquet"):
        plan = plan_release(table, "a", 1.0, upper=9, keys=["id"], keep=KEEP, out=tmp_path / out)
        assert plan.engine == "stream"
    plan = plan_release(tmp_path / "x.csv", "a", 1.0, upper=9, out=tmp_path / "o.parquet")
    assert plan.engine == "stream"


@pytest.mark.parametrize("order", ["input", "shuffled", "key"])
@pytest.mark.parametrize("columns", [["a"], ["a", "b"]])
def test_parquet_to_csv_streamed_equals_in_memory(table, tmp_path, order, columns):
    mem, got = _both(table, tmp_path, ".csv", columns, upper=9, keys=["id"], keep=KEEP,
                     order=order, seed=3)
    assert (tmp_path / "str.csv").read_bytes() == (tmp_path / "mem.csv").read_bytes()
    assert _untimed(got.report) == _untimed(mem.report)
    assert got.report["streamed"]["buckets"] == 1
    assert not list(tmp_path.glob("dpfix-*"))  # the scratch folder is gone


@pytest.mark.parametrize("order", ["input", "shuffled", "key"])
@pytest.mark.parametrize("columns", [["a"], ["b", "a"]])
def test_parquet_to_parquet_streamed_equals_in_memory(table, tmp_path, order, columns):
    mem, got = _both(table, tmp_path, ".parquet", columns, upper=9, keys=["id"], keep=KEEP,
                     order=order, seed=5)
    want, have = pq.read_table(tmp_path / "mem.parquet"), pq.read_table(tmp_path / "str.parquet")
    assert have.schema.equals(want.schema, check_metadata=True)
    assert have.equals(want, check_metadata=True)
    assert _untimed(got.report) == _untimed(mem.report)


@pytest.mark.parametrize("order", ["input", "shuffled", "key"])
def test_csv_to_parquet_streamed_equals_in_memory(tmp_path, order):
    rng = np.random.default_rng(4)
    path = tmp_path / "in.csv"
    lines = ["id,code,note,k"] + [f"{rng.integers(0, 9)},{rng.integers(-5, 99)},"
                                  f"\"x,{i}\",{rng.integers(0, 7)}" for i in range(N)]
    lines[5] = "007,-0,+1,3"  # a leading zero: the id column stays text; -0 an integer
    path.write_text("\n".join(lines) + "\n")
    mem, got = _both(path, tmp_path, ".parquet", ["k"], upper=6, keys=["id"],
                     keep=["code", "note"], order=order, seed=2)
    want, have = pq.read_table(tmp_path / "mem.parquet"), pq.read_table(tmp_path / "str.parquet")
    assert have.schema.field("code").type == pa.int64()  # every cell a plain integer
    assert have.schema.field("id").type != pa.int64()
    assert have.equals(want, check_metadata=True)
    assert _untimed(got.report) == _untimed(mem.report)


def _multiset(t):
    return sorted(map(repr, zip(*(t.column(c).to_pylist() for c in t.column_names), strict=True)))


@pytest.mark.parametrize("order", ["shuffled", "key"])
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_parquet_streamed_in_buckets(table, tmp_path, order, suffix):
    """With buckets of 16 rows (19 buckets, 5 row groups of the input, blocks of the
    draw's chunk) the rows are the in-memory release's, in the release's order."""
    mem, got = _both(table, tmp_path, suffix, ["a"], bucket_rows=16, upper=9, keys=["id"],
                     keep=["secret", *KEEP], order=order, seed=7)
    assert got.report["streamed"]["buckets"] == 19
    read = (lambda p: pa.csv.read_csv(p)) if suffix == ".csv" else pq.read_table
    want, have = read(tmp_path / f"mem{suffix}"), read(tmp_path / f"str{suffix}")
    assert have.schema.equals(want.schema)
    source = pq.read_table(table)
    # the kept columns' rows (the secret column identifies each row) are the input's
    assert sorted(have.column("secret").to_pylist()) == sorted(source["secret"].to_pylist())
    assert _multiset(have.drop_columns(["a"])) == _multiset(want.drop_columns(["a"]))
    if order == "key":
        ids = have.column("id").to_pylist()
        assert [str(i) for i in ids] == sorted(str(i) for i in ids)
    assert not list(tmp_path.glob("dpfix-*"))


def test_parquet_blocks_read_only_the_columns_asked(table):
    blocks = ParquetBlocks(table, ["a", "b"], rows=64)
    assert blocks.scan(lambda start, counts: None) == N
    bodies = list(blocks.blocks())
    assert [s for s, _ in bodies] == list(range(0, N, 64))
    assert bodies[0][1].column_names == ["f2", "f9"]
    blocks.wanted = ["note", "a"]
    assert next(iter(blocks.blocks()))[1].column_names == ["f1", "f2"]
    assert blocks.null_counts(["note", "m", "u"]) == {"note": 43, "m": 60, "u": N}


def _bad(tmp_path, name, column):
    path = tmp_path / name
    pq.write_table(pa.table({"id": pa.array([str(i) for i in range(len(column))]),
                             "k": column}), path, row_group_size=3)
    return path


@pytest.mark.parametrize("column", [
    pa.array([1, 2, 3, 4, -1, 2, 0]),
    pa.array([1, 2, 3, 4, None, 2, 0], pa.int32()),
    pa.array([1.0, 2.0, 3.0, 4.5, 1.0]),
    pa.array([1.0, 2.0, float("nan"), 4.0]),
    pa.array(["1", "2", "3", "x", "5"]),
    pa.array(["1", "2", "3", "1e3", "5"]),
    pa.array([1, 2, 3], pa.timestamp("s")),
    pa.array([True, False]),
    pa.array([], pa.int64()),
    pa.array(["a", "b"]).dictionary_encode(),
])
@pytest.mark.parametrize("out", ["o.csv", "o.parquet"])
def test_bad_parquet_counts_refused_as_in_memory(tmp_path, column, out):
    path = _bad(tmp_path, "in.parquet", column)
    with pytest.raises(ValueError) as mem:
        privatize_table(path, "k", 1.0, upper=5, order="input")
    assert plan_release(path, "k", 1.0, upper=5, out=tmp_path / out).engine == "stream"
    with pytest.raises(ValueError) as got:
        release(path, "k", 1.0, upper=5, order="input", out=tmp_path / out, scratch=tmp_path,
                bucket_rows=2)
    assert str(got.value) == str(mem.value) and "\n" not in str(got.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]


@pytest.mark.parametrize("problem", ["no file", "not parquet", "no column", "twice"])
def test_bad_parquet_files_refused_as_in_memory(tmp_path, problem):
    path = tmp_path / "in.parquet"
    columns = ["k", "k"] if problem == "twice" else ["nope"] if problem == "no column" else "k"
    if problem == "not parquet":
        path.write_bytes(b"id,k\na,1\n")
    elif problem != "no file":
        _bad(tmp_path, "in.parquet", pa.array([1, 2]))
    with pytest.raises((ValueError, FileNotFoundError)) as mem:
        privatize_table(path, columns, 1.0, upper=5)
    with pytest.raises((ValueError, FileNotFoundError)) as got:
        release(path, columns, 1.0, upper=5, out=tmp_path / "o.parquet", scratch=tmp_path)
    assert str(got.value) == str(mem.value)
    assert not (tmp_path / "o.parquet").exists()


def _grow(path):
    t = pq.read_table(path)
    pq.write_table(pa.concat_tables([t, t]), path)


def _replace(path):
    other = path.with_name("other.parquet")
    other.write_bytes(path.read_bytes())
    os.replace(other, path)


def _same_size_same_time(path):
    """One count rewritten to another, the size and time put back."""
    info = path.stat()
    t = pq.read_table(path)
    k = t.column("k").to_numpy().copy()
    k[0] = 4 if k[0] != 4 else 3
    pq.write_table(t.set_column(t.column_names.index("k"), "k", pa.array(k)), path,
                   row_group_size=7)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert path.stat().st_size == info.st_size


@pytest.mark.parametrize("order", ["input", "shuffled", "key"])
@pytest.mark.parametrize("change, what", [
    (_grow, "its size went from"),
    (_replace, "another file is at its path"),
    (_same_size_same_time, "pass 2 read other counts in column 'k'"),
])
@pytest.mark.parametrize("out", ["o.csv", "o.parquet"])
def test_a_parquet_file_changed_between_the_passes_is_refused(tmp_path, monkeypatch, order,
                                                              change, what, out):
    rng = np.random.default_rng(0)
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": [f"r{i:03d}" for i in range(40)],
                             "k": rng.integers(0, 6, 40)}), path, row_group_size=7)

    class Hooked(ParquetBlocks):
        def scan(self, add):
            n = super().scan(add)
            change(self.path)
            return n

    monkeypatch.setattr(stream, "ParquetBlocks", Hooked)
    with pytest.raises(InputChanged, match=what) as refused:
        release(path, "k", 1.0, upper=5, keys=["id"], order=order, seed=1,
                out=tmp_path / out, scratch=tmp_path, bucket_rows=8)
    assert "nothing written" in str(refused.value) and "\n" not in str(refused.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]


def test_parquet_kept_in_memory_when_the_stream_cannot_write_it(tmp_path):
    """A kept column of dates, or two keys of numbers in the key order: the in-memory
    engine (its types and its sort by several values)."""
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": [3, 1, 2], "day": pa.array([1, 2, 3], pa.date32()),
                             "k": [1, 0, 2]}), path)
    out = tmp_path / "o.parquet"
    assert plan_release(path, "k", 1.0, upper=3, keep=["day"], out=out).engine == "memory"
    assert plan_release(path, "k", 1.0, upper=3, keys=["id", "k"],
                        out=out).engine == "memory"
    assert plan_release(path, "k", 1.0, upper=3, keys=["day"], out=out).engine == "memory"
    assert plan_release(path, "k", 1.0, upper=3, keys=["id"], out=out).engine == "stream"
    assert plan_release(path, "k", 1.0, upper=3, out=out).engine == "stream"


@pytest.mark.parametrize("key", ["m", "z", "f", "g", "s"])
@pytest.mark.parametrize("bucket_rows", [None, 16])
def test_a_numeric_key_streamed_in_value_order(table, tmp_path, key, bucket_rows):
    """One key of numbers (integers with and without missing cells, floats with NaN,
    missing and -0.0; many ties in "s"): by value, NaN and missing last, ties in a
    uniformly random order; with one bucket the in-memory table itself."""
    source = pq.read_table(table)
    t = source.append_column("s", pa.array(np.repeat([2.0, -0.0, 0.0, -1.5, None], N // 5)))
    path = tmp_path / "keyed.parquet"
    pq.write_table(t, path, row_group_size=50)
    mem, got = _both(path, tmp_path, ".parquet", ["a"], bucket_rows=bucket_rows, upper=9,
                     keys=[key], keep=["secret", "id"], order="key", seed=4)
    assert got.report["streamed"]["buckets"] == (1 if bucket_rows is None else 19)
    want, have = pq.read_table(tmp_path / "mem.parquet"), pq.read_table(tmp_path / "str.parquet")
    assert have.schema.equals(want.schema, check_metadata=True)
    if bucket_rows is None:
        assert have.equals(want)
        return
    values = have.column(key).to_numpy(zero_copy_only=False).astype(float)
    present = values[~np.isnan(values)]
    assert (np.diff(present) >= 0).all() and np.isnan(values[len(present):]).all()
    assert _multiset(have.drop_columns(["a"])) == _multiset(want.drop_columns(["a"]))


def _small_blocks(monkeypatch, rows=7):
    class Small(ParquetBlocks):
        def __init__(self, path, columns, rows=rows):
            super().__init__(path, columns, rows=7)

    monkeypatch.setattr(stream, "ParquetBlocks", Small)


def test_a_bad_count_in_a_later_block_is_named_by_its_row(tmp_path, monkeypatch):
    values = [1] * 30 + [-2] + [1] * 9
    path = _bad(tmp_path, "in.parquet", pa.array(values))
    _small_blocks(monkeypatch)
    with pytest.raises(ValueError) as mem:
        privatize_table(path, "k", 1.0, upper=5)
    with pytest.raises(ValueError) as got:
        release(path, "k", 1.0, upper=5, out=tmp_path / "o.parquet", scratch=tmp_path)
    assert str(got.value) == str(mem.value) == "column 'k', row 31: not a count (negative)"


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_small_blocks_and_missing_keys(tmp_path, monkeypatch, suffix):
    """Blocks of 7 rows, buckets of 8, keys with missing cells (sorted last: the shuffled
    buckets sorted and merged)."""
    rng = np.random.default_rng(2)
    path = tmp_path / "in.parquet"
    ids = [None if i % 6 == 0 else f"r{v}" for i, v in enumerate(rng.integers(0, 9, 60))]
    pq.write_table(pa.table({"id": pa.array(ids, pa.string()), "row": list(range(60)),
                             "k": rng.integers(0, 6, 60)}), path, row_group_size=11)
    _small_blocks(monkeypatch)
    got = release(path, "k", 1.0, upper=5, keys=["id"], keep=["row"], seed=1,
                  out=tmp_path / f"o{suffix}", scratch=tmp_path, bucket_rows=8)
    out = pa.csv.read_csv(got.path) if suffix == ".csv" else pq.read_table(got.path)
    assert sorted(out.column("row").to_pylist()) == list(range(60))
    have = out.column("id").to_pylist()
    present = [i for i in ids if i is not None]
    missing = "" if suffix == ".csv" else None  # a CSV file's missing cell is empty
    assert have == sorted(present) + [missing] * (60 - len(present))
    assert not list(tmp_path.glob("dpfix-*"))


def test_an_interrupt_in_pass_two_leaves_nothing(table, tmp_path, monkeypatch):
    def boom(self, frame, others, names):
        raise KeyboardInterrupt

    monkeypatch.setattr(stream._ParquetWriter, "rows", boom)
    with pytest.raises(KeyboardInterrupt):
        release(table, "a", 1.0, upper=9, keys=["id"], out=tmp_path / "o.parquet",
                scratch=tmp_path, bucket_rows=16)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]


_KILLED = """
import os, signal, sys
from dpfix.release import stream
from dpfix.release.plan import plan_release
from dpfix.release.table import execute
def rows(self, frame, others, names):
    os.kill(os.getpid(), signal.SIGTERM)
stream._ParquetWriter.rows = rows
execute(plan_release(sys.argv[1], "a", 1.0, upper=9, keys=["id"], out=sys.argv[2]),
        scratch=sys.argv[3], bucket_rows=16)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or os.name != "posix", reason="POSIX")
def test_sigterm_leaves_nothing(table, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    run = subprocess.run([sys.executable, "-c", _KILLED, str(table),
                          str(tmp_path / "o.parquet"), str(scratch)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == -signal.SIGTERM, run.stderr
    assert list(scratch.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet", "scratch"]


def test_the_key_sample_holds_its_words_only():
    """Pass 1 keeps a sample of each block's words, not the block (a view would keep it:
    memory growing with the file)."""
    ranges = stream._WordRanges(0, pa.int64())
    ranges.watch(0, pa.table({"f0": pa.array(np.arange(10**5))}))
    assert ranges.samples[0].base is None
    assert ranges.samples[0].size <= 2 * stream._KeyRanges.SAMPLE
