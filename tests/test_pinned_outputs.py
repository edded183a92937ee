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
    "memory-two-stage-csv": "9c0b9ca17d762cd6c81f27b0797ab7db66fe7af89cefcd7352caf22921adc336",
    "memory-two-stage-parquet": "0229d1f18767f65297e274caf1f67ac0dcb5f58ba09cb1e1f392798fa362eac5",
    "memory-one-stage": "c5f4467d973121958c7ed6cdd89f7e0d69797332681745a9cea43141df239866",
    "memory-no-split-hybrid": "a7a5cf25287ca1f0938cb7c26f66cf66e4e0e98b52a8628ac6092d21d8675db1",
    "memory-no-split-one": "b5572149bcaaf64e1fd71732b0727f9866ffb839d6e267994d4a3f50f7b04358",
    "memory-auto": "5ad8d1f766b4d97fc464fba2a87b97e36d8dd8178491a6da3ec48b7e3948f190",
    "memory-auto-upper": "ab0ce1ee13e466a6e96c34a8ef5637dbb032099e7159876de694fb5aeeabf211",
    "memory-cell": "7de2a07f4a642e88c1f45c5ba2a45f2fe4955c3f492458066463cd9613f353ed",
    "joint-pair": "8ed7a9880d901def6ee8ddd5d4256e9c598735f57f99f11222419a1ac3e54b2d",
    "streamed-csv": "d50072712f6eec714755495deb9e19283700cb15028aa2c4d023bf04998c4377",
    "streamed-csv-shuffled": "1fcfc161589aa868b224dc71312ea307155e1d60dfb508bb9650a4492ab58b46",
    "histogram": "86ccf9d46a320769029fd56ce4c32b1324c3ab093b3311aad6cdef8dc4dfc30d",
    "dask": "915f5b63fa6720821037f9002846083f1b6e0ccdb662e7a610173ffcda8179a9",
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
