"""The order of the output's rows does not follow the input's (which may be sorted by
confidential data): key order with ``--key``, a secure shuffle without, ``--order input``
on request, and the public report says which (dpfix.release.order.row_order)."""

from __future__ import annotations

import csv
import itertools
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpfix.sampling import RandomSource, SeededSource
from helpers import cli

ROWS = 300


@pytest.fixture
def table(tmp_path):
    """Rows sorted by a confidential rate: the input's order follows the data."""
    rng = np.random.default_rng(4)
    k = np.sort(rng.negative_binomial(2, 0.3, ROWS))[::-1]
    names = [f"n{int(v):04d}" for v in rng.permutation(ROWS)]
    names[10] = names[20] = names[30] = "dup"  # three rows with the same key
    path = tmp_path / "t.csv"
    pd.DataFrame({"name": names, "id": [f"i{j:03d}" for j in range(ROWS)], "k": k}).to_csv(
        path, index=False)
    return path


def rows(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def run(capsys, table, out, *extra, seed="1"):
    rep = out.with_suffix(".json")
    rc, _, err = cli(capsys, "privatize", table, "--column", "k", "--epsilon", "1", "--upper",
                     "20", "--out", out, "--report", rep, "--seed", seed, "--quiet", *extra)
    assert rc == 0, err
    return rows(out), json.loads(rep.read_text())


def test_with_a_key_rows_come_in_key_order(table, tmp_path, capsys):
    got, report = run(capsys, table, tmp_path / "o.csv", "--key", "name", "--keep", "id")
    names = [r[0] for r in got[1:]]
    assert names == sorted(names) and sorted(names) == sorted(r[0] for r in rows(table)[1:])
    assert report["row_order"] == "key" and "equal keys" in report["row_order_rule"]
    # duplicates: their order is random (shuffled, then sorted stably), not the input's
    orders = set()
    for seed in range(8):
        out, _ = run(capsys, table, tmp_path / f"d{seed}.csv", "--key", "name", "--keep", "id",
                     seed=str(seed))
        orders.add(tuple(r[1] for r in out[1:] if r[0] == "dup"))
    assert len(orders) > 1 and all(sorted(o) == ["i010", "i020", "i030"] for o in orders)


def test_parquet_keys_are_sorted_by_value(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    src = tmp_path / "t.parquet"
    pd.DataFrame({"code": [10, 9, 100, 1], "k": [0, 1, 2, 3]}).to_parquet(src)
    rc, _, err = cli(capsys, "privatize", src, "--column", "k", "--epsilon", "1", "--upper", "3",
                     "--out", tmp_path / "o.parquet", "--seed", "0", "--quiet", "--key", "code")
    assert rc == 0, err
    assert pd.read_parquet(tmp_path / "o.parquet")["code"].tolist() == [1, 9, 10, 100]


def test_without_a_key_rows_are_shuffled_reproducibly_with_a_seed(table, tmp_path, capsys):
    kept, report = run(capsys, table, tmp_path / "in.csv", "--keep", "id", "--order", "input")
    assert report["row_order"] == "input" and "confidential" in report["row_order_rule"]
    assert [r[0] for r in kept[1:]] == [r[1] for r in rows(table)[1:]]  # today's order
    a, report = run(capsys, table, tmp_path / "a.csv", "--keep", "id")
    b, _ = run(capsys, table, tmp_path / "b.csv", "--keep", "id")
    c, _ = run(capsys, table, tmp_path / "c.csv", "--keep", "id", seed="2")
    assert report["row_order"] == "shuffled"
    assert a == b and a != c  # reproducible with --seed, another seed another order
    ids = [r[0] for r in a[1:]]
    assert ids != [r[0] for r in kept[1:]] and sorted(ids) == sorted(r[0] for r in kept[1:])
    # the same rows with the same privatized counts (the order's randomness is its own)
    assert sorted(map(tuple, a[1:])) == sorted(map(tuple, kept[1:]))
    # the last rows of the input hold the smallest counts; not so in the published order
    tail = [int(r[1]) for r in a[-50:]]
    assert np.mean(tail) > np.mean([int(r[1]) for r in kept[-50:]])


def test_order_key_needs_a_key_and_a_histogram_has_no_order(table, tmp_path, capsys):
    rc, _, err = cli(capsys, "privatize", table, "--column", "k", "--epsilon", "1", "--upper",
                     "20", "--out", tmp_path / "o.csv", "--order", "key", "--quiet")
    assert rc == 2 and "--key" in err and err.count("\n") == 1
    h = tmp_path / "h.csv"
    h.write_text("0,5\n1,3\n")
    rc, _, err = cli(capsys, "privatize", h, "--histogram", "--epsilon", "1", "--upper", "3",
                     "--out", tmp_path / "o.csv", "--order", "shuffled", "--quiet")
    assert rc == 2 and "no rows to order" in err
    assert not (tmp_path / "o.csv").exists()


def test_permutation_is_uniform():
    counts = {p: 0 for p in itertools.permutations(range(3))}
    for seed in range(3000):
        counts[tuple(SeededSource(seed).permutation(3).tolist())] += 1
    assert stats.chisquare(list(counts.values())).pvalue > 1e-4


class _TiedFirst(RandomSource):
    """Every word of the first round equal (a forced tie), then a seeded stream."""

    def __init__(self) -> None:
        self.rounds, self.inner = 0, SeededSource(0)

    def words(self, size: int) -> np.ndarray:
        self.rounds += 1
        return np.zeros(size, np.uint64) if self.rounds == 1 else self.inner.words(size)


def test_permutation_breaks_ties_with_fresh_words():
    source = _TiedFirst()
    p = source.permutation(50)
    assert sorted(p.tolist()) == list(range(50)) and source.rounds == 2
    assert p.tolist() != list(range(50))


def test_dask_shuffles_partitions_and_rows(tmp_path):
    pytest.importorskip("dask.dataframe")
    pytest.importorskip("pyarrow")
    from dpfix.release.dask import privatize_dataset

    folder = tmp_path / "data"
    folder.mkdir()
    frames = []
    for i in range(4):
        f = pd.DataFrame({"id": [f"r{i}-{j:03d}" for j in range(100)],
                          "k": np.arange(100) % 7})
        f.to_parquet(folder / f"part-{i}.parquet")
        frames.append(f)
    ids = pd.concat(frames)["id"].tolist()

    def order(out, **kw):
        privatize_dataset(folder, "k", 1.0, upper=10, out=out, keys=["id"], **kw)
        return pd.read_parquet(out)["id"].tolist()
    a, b = order(tmp_path / "a", seed=1), order(tmp_path / "b", seed=1)
    assert a == b and a != ids and sorted(a) == sorted(ids)
    heads = [x.split("-")[0] for x in a[::100]]
    assert all(len({x.split("-")[0] for x in a[s:s + 100]}) == 1 for s in range(0, 400, 100))
    assert sorted(heads) == ["r0", "r1", "r2", "r3"]
    assert order(tmp_path / "c", seed=1, order="input") == ids
    with pytest.raises(ValueError, match="does not sort"):
        order(tmp_path / "d", seed=1, order="key")


def test_dask_report_says_the_row_order(tmp_path, capsys):
    pytest.importorskip("dask.dataframe")
    pytest.importorskip("pyarrow")
    folder = tmp_path / "data"
    folder.mkdir()
    pd.DataFrame({"id": ["a", "b", "c"], "k": [0, 1, 2]}).to_parquet(folder / "p.parquet")
    rep = tmp_path / "r.json"
    rc, _, err = cli(capsys, "privatize", folder, "--engine", "dask", "--column", "k",
                     "--epsilon", "1", "--upper", "3", "--out", tmp_path / "out", "--seed",
                     "0", "--quiet", "--key", "id", "--report", rep)
    assert rc == 0, err
    r = json.loads(rep.read_text())
    assert r["row_order"] == "shuffled" and "partition" in r["row_order_rule"]
    rc, _, err = cli(capsys, "privatize", folder, "--engine", "dask", "--column", "k",
                     "--epsilon", "1", "--upper", "3", "--out", tmp_path / "out2", "--quiet",
                     "--key", "id", "--order", "key")
    assert rc == 2 and "does not sort" in err and not (tmp_path / "out2").exists()


@pytest.mark.parametrize("uppers", [[20], [3, 20, 7], [2000] * 6])
@pytest.mark.parametrize("kind", ["frame", "csv"])
def test_privatized_columns_alone_shuffled_are_the_permutation_applied(tmp_path, uppers,
                                                                       kind):
    """Without keys or kept columns the privatized values are shuffled with the order's
    words (one column as it is, several packed into one integer per row, or gathered when
    they exceed 64 bits): the rows of the release in input order, permuted by the
    permutation the order's source draws."""
    from dpfix.release.order import order_source
    from dpfix.release.plan import plan_release
    from dpfix.release.table import privatize_table

    rng = np.random.default_rng(5)
    names = [f"k{j}" for j in range(len(uppers))]
    data = pd.DataFrame({n: rng.integers(0, max(2, u // 3), ROWS) for n, u in zip(names, uppers,
                                                                         strict=True)})
    if kind == "csv":
        data.to_csv(tmp_path / "t.csv", index=False)
        data = tmp_path / "t.csv"
    upper = dict(zip(names, uppers, strict=True))
    kept = privatize_table(data, names, 1.0, upper=upper, order="input", seed=21).table
    shuffled = privatize_table(data, names, 1.0, upper=upper, seed=21)
    assert shuffled.report["row_order"] == "shuffled"
    seed = plan_release(data, names, 1.0, upper=upper, seed=21).columns[0].seed
    perm = order_source(seed).permutation(ROWS)
    expected = kept.iloc[perm].reset_index(drop=True)
    pd.testing.assert_frame_equal(shuffled.table, expected)


def test_a_shuffled_release_with_its_confidential_one_is_the_same_release():
    """The shuffle sorts in the drawn counts' memory only when no confidential release is
    asked for: with one, the released table is the same and the realised errors are those
    of the counts in the input's order."""
    from dpfix.release.table import privatize_table

    rng = np.random.default_rng(8)
    data = pd.DataFrame({"k": rng.integers(0, 8, ROWS), "m": rng.integers(0, 5, ROWS)})
    before = data.copy()

    def untimed(columns: list) -> list:
        return [{k: v for k, v in c.items() if k != "timings_seconds"} for c in columns]

    for names in (["k"], ["k", "m"]):
        plain = privatize_table(data, names, 1.0, upper=12, seed=4)
        shown, secret = privatize_table(data, names, 1.0, upper=12, seed=4, confidential=True)
        _, kept = privatize_table(data, names, 1.0, upper=12, seed=4, confidential=True,
                                  order="input")
        pd.testing.assert_frame_equal(plain.table, shown.table)
        assert untimed(secret.report["columns"]) == untimed(kept.report["columns"])
    pd.testing.assert_frame_equal(data, before)  # the input is never written
