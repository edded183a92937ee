"""Seeded releases write the same bytes: one case per engine (in memory, streamed CSV,
histogram file, Dask dataset, the command line) and per framework (two-stage, one-stage
baseline, no-split one-stage and hybrid, auto, joint pairs), so that a change in how a
release is planned or executed cannot change what it writes.

The digests were produced by this module's own cases. A change that consumes the
randomness differently on purpose replaces a digest here and says why in its commit, with
distribution tests for the new sampler beside it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from dpfix.release.options import Auto, NoSplit, OneStage
from dpfix.release.table import Dataset, Histogram, privatize_table
from helpers import cli

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

PINNED = {
    "memory-two-stage-csv": "c7c72667d24cd3a87f5302227dec50b8118f1ef583b6e797f16fd53d45ca683c",
    "memory-two-stage-parquet": "1bd257a994ba9488a4f9c93403a37cd6a87ca5ab418f505c7a3e82baa92f90ca",
    "memory-one-stage": "c5f4467d973121958c7ed6cdd89f7e0d69797332681745a9cea43141df239866",
    "memory-no-split-hybrid": "a7a5cf25287ca1f0938cb7c26f66cf66e4e0e98b52a8628ac6092d21d8675db1",
    "memory-no-split-one": "b5572149bcaaf64e1fd71732b0727f9866ffb839d6e267994d4a3f50f7b04358",
    "memory-auto": "5ad8d1f766b4d97fc464fba2a87b97e36d8dd8178491a6da3ec48b7e3948f190",
    "memory-auto-upper": "7a3b0ab26c60cd2cd0246d9d9da45e1ec9b6f68b7d49ef8113fde54062a7d23f",
    "memory-cell": "6d940a277a20e57daa39d45e18c0b24b4474de7d80abd2b3c8529e5c3f61b5ed",
    "joint-pair": "8ed7a9880d901def6ee8ddd5d4256e9c598735f57f99f11222419a1ac3e54b2d",
    "streamed-csv": "82e855e50f0e30601832c9e4752ad6c2091ea1af7e33a8ddde448bb43e6dddd2",
    "streamed-csv-shuffled": "59a8812fb624701f7746ab200a0a11fc33b3b13f8c8eaf01a87a38d691ccf1c3",
    "histogram": "86ccf9d46a320769029fd56ce4c32b1324c3ab093b3311aad6cdef8dc4dfc30d",
    "dask": "3d57307cf7349c4d4fe63d993f97bdc955fa51d556e611a10268dfba6fe34d2d",
}


def _table(n: int = 400, seed: int = 11):
    g = np.random.default_rng(seed)
    return pd.DataFrame({"county": [f"c{i:04d}" for i in range(n)],
                         "A": g.geometric(0.3, n) - 1, "B": g.poisson(4, n),
                         "C": g.integers(0, 9, n)})


def _digest(path: Path) -> str:
    """A file's sha256; a Parquet dataset folder's over its files' names and rows (the
    files' own bytes carry the writer's metadata)."""
    if path.is_dir():
        h = hashlib.sha256()
        for f in sorted(path.rglob("*")):
            if f.is_file():
                h.update(f.name.encode())
                h.update(pd.read_parquet(f).to_csv(index=False).encode())
        return h.hexdigest()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _cases(d: Path) -> dict:
    df = _table()
    df.to_csv(d / "in.csv", index=False)
    (d / "h.csv").write_text("count,number\n0,50\n1,30\n2,12\n5,4\n")
    part = d / "parts"
    part.mkdir()
    for k in range(3):
        df.iloc[k * 100:(k + 1) * 100 + 50].to_parquet(part / f"p{k}.parquet")
    return {
        "memory-two-stage-csv": lambda o: privatize_table(
            df, ["A", "B"], 1.0, upper=12, keys=["county"], seed=3, out=o),
        "memory-two-stage-parquet": lambda o: privatize_table(
            df, ["A"], 1.0, upper=12, seed=4, out=o),
        "memory-one-stage": lambda o: privatize_table(
            df, ["A"], 1.0, upper=12, options=OneStage("staircase"), order="input", seed=5,
            out=o),
        "memory-no-split-hybrid": lambda o: privatize_table(
            df, ["B"], 1.0, upper=12, options=NoSplit("hybrid"), seed=6, out=o),
        "memory-no-split-one": lambda o: privatize_table(
            df, ["B"], 1.0, upper=12, options=NoSplit("one-stage"), seed=7, out=o),
        "memory-auto": lambda o: privatize_table(
            df, ["C"], 2.0, upper=12, options=Auto(), seed=8, out=o),
        "memory-auto-upper": lambda o: privatize_table(
            df, ["A", "B"], 1.0, upper="auto", keys=["county"], seed=9, out=o),
        "memory-cell": lambda o: privatize_table(
            df, ["A", "B"], 1.0, upper=12, unit="cell:2", seed=10, out=o),
        "joint-pair": lambda o: privatize_table(
            df, ["A", "B"], 2.0, upper=6, joint=[("A", "B")], keys=["county"], seed=12,
            out=o),
        "streamed-csv": lambda o: privatize_table(
            d / "in.csv", ["A", "B"], 1.0, upper=12, keys=["county"], seed=13, out=o),
        "streamed-csv-shuffled": lambda o: privatize_table(
            d / "in.csv", ["C"], 1.0, upper=12, seed=14, out=o),
        "histogram": lambda o: privatize_table(
            Histogram(d / "h.csv"), None, 1.0, upper=6, seed=15, out=o),
        "dask": lambda o: privatize_table(
            Dataset(part), ["A", "B"], 1.0, upper=12, keys=["county"], seed=16, out=o),
    }


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", sorted(PINNED))
def test_a_seeded_release_writes_its_pinned_bytes(tmp_path, name):
    if name == "dask":
        pytest.importorskip("dask.dataframe")
    run = _cases(tmp_path)[name]
    suffix = "" if name == "dask" else ".parquet" if "parquet" in name else ".csv"
    out = tmp_path / f"{name}{suffix}"
    run(out)
    assert _digest(out) == PINNED[name]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_command_line_writes_the_librarys_bytes(tmp_path, capsys):
    """``dpfix privatize`` on the streamed case writes the bytes pinned for the library."""
    _cases(tmp_path)
    out = tmp_path / "cli.csv"
    rc, _, err = cli(capsys, "privatize", tmp_path / "in.csv", "--column", "A", "--column",
                     "B", "--epsilon", "1", "--upper", "12", "--key", "county", "--seed", "13",
                     "--out", out, "--quiet")
    assert rc == 0, err
    assert _digest(out) == PINNED["streamed-csv"]
