"""The Dask engine: stage 1 on the summed histogram, stage 2 per partition."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")

from dpfix.release.dask import privatize_dataset  # noqa: E402
from dpfix.release.pipeline import privatize_counts  # noqa: E402
from dpfix.theory.metrics import wasserstein1  # noqa: E402
from helpers import cli as _cli  # noqa: E402

UPPER = 30


@pytest.fixture
def dataset(tmp_path):
    """A Parquet dataset of 4 partitions (generated here), 5,000 rows each."""
    rng = np.random.default_rng(0)
    folder = tmp_path / "data"
    folder.mkdir()
    frames = []
    for i in range(4):
        k = rng.negative_binomial(2, 0.25, 5000)
        f = pd.DataFrame({"id": [f"r{i}-{j}" for j in range(5000)], "k": k,
                          "secret": k * 2 + 1})
        f.to_parquet(folder / f"part-{i}.parquet")
        frames.append(f)
    return folder, pd.concat(frames, ignore_index=True)


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def read(folder):
    return pd.read_parquet(folder)


def test_dataset_on_a_local_cluster_matches_the_single_machine_path(dataset, tmp_path, client):
    folder, table = dataset
    out = tmp_path / "out"
    r = privatize_dataset(folder, "k", 1.0, upper=UPPER, out=out, keys=["id"], seed=5)
    got = read(out)
    assert list(got.columns) == ["id", "k"]  # "secret" is not private: dropped
    assert len(got) == len(table) and got["k"].between(0, UPPER).all()
    assert sorted(got["id"]) == sorted(table["id"])
    assert r.N == len(table) and r.sampler["kind"] == "structured G R"
    assert (r.output_histogram == np.bincount(got["k"], minlength=UPPER + 1)).all()
    assert r.topcoded == int((table["k"] > UPPER).sum())
    # the same release in distribution as the single-machine pipeline (same stage 1 seed)
    one = privatize_counts(table["k"].to_numpy(), 1.0, upper=UPPER, seed=5)
    assert np.array_equal(one.z, r.z)
    both = np.array([r.output_histogram, one.output_histogram])
    both = both[:, both.sum(axis=0) > 0]
    assert stats.chi2_contingency(both).pvalue > 1e-4
    # identical given the seed and the partitioning
    again = privatize_dataset(folder, "k", 1.0, upper=UPPER, out=tmp_path / "again",
                              keys=["id"], seed=5)
    pd.testing.assert_frame_equal(read(tmp_path / "again"), got)
    assert (again.output_histogram == r.output_histogram).all()


def test_csv_glob_secure_and_threads(tmp_path):
    rng = np.random.default_rng(1)
    for i in range(3):
        pd.DataFrame({"k": rng.integers(0, 20, 1000), "x": 1}).to_csv(tmp_path / f"p{i}.csv",
                                                                       index=False)
    r = privatize_dataset(tmp_path / "p*.csv", "k", 2.0, upper=19, out=tmp_path / "o")
    got = read(tmp_path / "o")
    assert list(got.columns) == ["k"] and len(got) == 3000 and r.sampler["secure"]
    assert "os.urandom" in r.public_report()["samplers"]["stage2"]


def test_a_failing_partition_leaves_no_output(dataset, tmp_path):
    folder, _ = dataset
    bad = pd.read_parquet(folder / "part-2.parquet")
    bad.loc[7, "k"] = -1
    bad.to_parquet(folder / "part-2.parquet")
    with pytest.raises(ValueError, match="not a count \\(negative\\)"):
        privatize_dataset(folder, "k", 1.0, upper=UPPER, out=tmp_path / "out", seed=0)
    assert not (tmp_path / "out").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]


def test_a_partition_failing_while_drawn_leaves_no_output(dataset, tmp_path, monkeypatch):
    import dask

    import dpfix.release.dask as E

    folder, _ = dataset
    real = E._draw

    def fail_third(frame, column, upper, sampler, seed, path, *rest):
        if path.endswith("part-00002.parquet"):
            raise OSError("disk full (simulated)")
        return real(frame, column, upper, sampler, seed, path, *rest)
    monkeypatch.setattr(E, "_draw", fail_third)
    with dask.config.set(scheduler="synchronous"), pytest.raises(OSError, match="disk full"):
        privatize_dataset(folder, "k", 1.0, upper=UPPER, out=tmp_path / "out", seed=0)
    assert not (tmp_path / "out").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]


def test_bad_arguments_are_refused(dataset, tmp_path):
    folder, _ = dataset
    (tmp_path / "exists").mkdir()
    with pytest.raises(ValueError, match="exists"):
        privatize_dataset(folder, "k", 1.0, upper=UPPER, out=tmp_path / "exists")
    with pytest.raises(ValueError, match="not found"):
        privatize_dataset(folder, "nope", 1.0, upper=UPPER, out=tmp_path / "o")
    with pytest.raises(ValueError, match="privatized column"):
        privatize_dataset(folder, "k", 1.0, upper=UPPER, out=tmp_path / "o", keep=["k"])
    with pytest.raises(ValueError, match="draw"):
        privatize_dataset(folder, "k", 1.0, upper=UPPER, out=tmp_path / "o",
                          constructor="discrete-gaussian", delta=1e-6)
    assert not (tmp_path / "o").exists()


# ------------------------------------------------------------------ dpfix privatize --engine dask


def test_cli_engine_dask_writes_a_dataset_and_a_report(dataset, tmp_path, capsys):
    import json

    folder, table = dataset
    out, rep = tmp_path / "out", tmp_path / "r.json"
    rc, stdout, err = _cli(capsys, "privatize", folder, "--engine", "dask", "--column", "k",
                           "--epsilon", "1", "--upper", "30", "--out", out, "--key", "id",
                           "--report", rep, "--quiet")
    assert rc == 0, err
    got = read(out)
    assert list(got.columns) == ["id", "k"] and len(got) == len(table)
    r = json.loads(rep.read_text())
    (col,) = r["columns"]
    assert r["engine"] == "dask" and col["N"] == len(table) and r["output_columns"]["key"] == ["id"]
    assert "os.urandom" in col["samplers"]["stage2"] and "topcoded" not in json.dumps(r)
    assert "out:" in stdout


@pytest.mark.parametrize("extra, match", [(["--histogram"], "--histogram: not with --engine dask"),
                                          (["--column", "nope"], "not found")])
def test_cli_engine_dask_bad_input_is_one_line_and_writes_nothing(dataset, tmp_path, capsys,
                                                                  extra, match):
    folder, _ = dataset
    out = tmp_path / "out"
    argv = ["privatize", folder, "--engine", "dask", "--epsilon", "1",
            "--upper", "30", "--out", out, "--quiet", *extra]
    rc, _, err = _cli(capsys, *argv)
    assert rc == 2 and match in err and err.count("\n") == 1
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]


@pytest.mark.parametrize("framework", ["one-stage", "hybrid"])
def test_no_split_frameworks_two_passes(dataset, tmp_path, framework):
    """y drawn per partition, the target from the summed histogram, then remapped in place."""
    folder, table = dataset
    r = privatize_dataset(folder, "k", 1.0, upper=UPPER, out=tmp_path / "out", keys=["id"],
                          seed=3, framework=framework)
    got = read(tmp_path / "out")
    assert list(got.columns) == ["id", "k"] and len(got) == len(table)
    assert r.framework == framework and r.released_histogram.sum() == len(table)
    assert (r.output_histogram == np.bincount(got["k"], minlength=UPPER + 1)).all()
    assert "post-processing" in r.public_report()["samplers"]["privacy_statement"]
    # the same release in law as the single-machine path; the estimated target moves every
    # row at once (no multinomial test applies): both outputs are as near the true distribution
    one = privatize_counts(table["k"].to_numpy(), 1.0, upper=UPPER, seed=3, framework=framework)
    zeta = np.bincount(np.minimum(table["k"], UPPER), minlength=UPPER + 1) / len(table)
    far = [wasserstein1(zeta, x.output_distribution) for x in (r, one)]
    assert max(far) < 0.25, far
    again = privatize_dataset(folder, "k", 1.0, upper=UPPER, out=tmp_path / "again",
                              keys=["id"], seed=3, framework=framework)
    pd.testing.assert_frame_equal(read(tmp_path / "again"), got)
    assert np.array_equal(again.z, r.z)


def test_no_split_quantile_is_refused_and_a_failing_remap_leaves_nothing(dataset, tmp_path,
                                                                        monkeypatch):
    folder, _ = dataset
    with pytest.raises(ValueError, match="remap: the quantile remap"):
        privatize_dataset(folder, "k", 1.0, upper=UPPER, out=tmp_path / "q",
                          framework="one-stage", remap="quantile")
    import dpfix.release.dask as engines

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(engines, "_remap", boom)
    with pytest.raises(OSError, match="disk full"):
        privatize_dataset(folder, "k", 1.0, upper=UPPER, out=tmp_path / "out", seed=0,
                          framework="one-stage")
    assert not (tmp_path / "out").exists() and not (tmp_path / "q").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]


def test_cli_engine_dask_one_stage(dataset, tmp_path, capsys):
    import json

    folder, table = dataset
    out, rep = tmp_path / "out", tmp_path / "r.json"
    rc, _, err = _cli(capsys, "privatize", folder, "--engine", "dask", "--column", "k",
                      "--epsilon", "1", "--upper", "30", "--out", out, "--report", rep,
                      "--framework", "one-stage", "--quiet", "--seed", "2")
    assert rc == 0, err
    assert len(read(out)) == len(table)
    (r,) = json.loads(rep.read_text())["columns"]
    assert r["framework"]["name"] == "one-stage" and r["budget"]["eps_1"] == 0


def test_several_columns_in_the_same_passes(dataset, tmp_path):
    """Each column on its own (its target, sampler and generators), one output dataset."""
    folder, table = dataset
    rs = privatize_dataset(folder, ["k", "secret"], [0.4, 0.6], upper=[UPPER, 80],
                           out=tmp_path / "out", keys=["id"], seed=[1, 2])
    got = read(tmp_path / "out")
    assert list(got.columns) == ["id", "k", "secret"] and len(got) == len(table)
    assert [r.eps for r in rs] == [0.4, 0.6] and [r.n for r in rs] == [UPPER + 1, 81]
    for r, c in zip(rs, ["k", "secret"], strict=True):
        assert (r.output_histogram == np.bincount(got[c], minlength=r.n)).all()
    alone = privatize_dataset(folder, "k", 0.4, upper=UPPER, out=tmp_path / "alone",
                              keys=["id"], seed=1)
    assert np.array_equal(alone.z, rs[0].z)  # the same column, seed and partitioning
    pd.testing.assert_series_equal(read(tmp_path / "alone")["k"], got["k"])
    with pytest.raises(ValueError, match="eps: one per column"):
        privatize_dataset(folder, ["k", "secret"], [1.0], upper=UPPER, out=tmp_path / "x")
    with pytest.raises(ValueError, match="named twice"):
        privatize_dataset(folder, ["k", "k"], 1.0, upper=UPPER, out=tmp_path / "x")


def test_cli_engine_dask_several_columns(dataset, tmp_path, capsys):
    import json

    folder, table = dataset
    out, rep = tmp_path / "out", tmp_path / "r.json"
    rc, stdout, err = _cli(capsys, "privatize", folder, "--engine", "dask", "--column", "k",
                           "--column", "secret", "--epsilon", "1", "--upper", "30",
                           "--upper", "secret=80", "--out", out, "--report", rep, "--quiet",
                           "--framework", "hybrid")
    assert rc == 0, err
    assert list(read(out).columns) == ["k", "secret"]
    r = json.loads(rep.read_text())
    assert r["engine"] == "dask" and len(r["columns"]) == 2 and "composition" in r
    assert "2 columns, eps = 1 in all" in stdout


@pytest.mark.parametrize("framework", ["two-stage", "one-stage"])
def test_cli_engine_dask_plot_and_confidential_report(dataset, tmp_path, capsys, framework):
    """The realized count error of the confidential report is that of the written rows."""
    import json

    folder, table = dataset
    out, plot, secret = tmp_path / "out", tmp_path / "p.png", tmp_path / "c.json"
    rc, _, err = _cli(capsys, "privatize", folder, "--engine", "dask", "--column", "k",
                      "--epsilon", "1", "--upper", "30", "--out", out, "--key", "id",
                      "--plot", plot, "--confidential-report", secret, "--quiet",
                      "--framework", framework)
    assert rc == 0, err
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (c,) = json.loads(secret.read_text())["columns"]
    merged = read(out).merge(table, on="id", suffixes=("_out", "_in"))
    diff = merged["k_out"] - np.minimum(merged["k_in"], UPPER)
    assert c["realized_count_error"]["abs"] == pytest.approx(diff.abs().mean())
    assert c["realized_count_error"]["squared"] == pytest.approx((diff ** 2).mean())
    zeta = np.bincount(np.minimum(table["k"], UPPER), minlength=UPPER + 1) / len(table)
    assert np.allclose(c["true_distribution_zeta"], zeta)
    assert c["topcoded"] == int((table["k"] > UPPER).sum())


# ------------------------------------------------------------------ the ledger, all or nothing
def test_cli_engine_dask_charges_the_ledger_before_the_dataset_is_in_place(dataset, tmp_path,
                                                                          capsys, monkeypatch):
    """--ledger with --engine dask: the charge is recorded just before the dataset moves into
    place (a failed move has spent budget for nothing; a dataset is never in place without its
    charge); an overdraft is refused before anything is written."""
    import json
    import os
    from fractions import Fraction

    import dpfix.release.dask as engines
    from dpfix.release.ledger import Ledger

    folder, table = dataset
    ledger = tmp_path / "l.jsonl"
    argv = ["privatize", folder, "--engine", "dask", "--column", "k", "--epsilon", "0.6",
            "--upper", "30", "--quiet", "--ledger", ledger]
    rc, stdout, err = _cli(capsys, *argv, "--out", tmp_path / "out", "--report",
                           tmp_path / "r.json", "--ledger-total", "1")
    assert rc == 0, err
    (entry,) = Ledger(ledger).entries()
    assert entry["eps"] == Fraction(0.6) and entry["columns"] == ["k"]
    assert entry["dataset"] == str(folder.resolve())
    r = json.loads((tmp_path / "r.json").read_text())
    assert r["ledger"]["spent"] == 0.6 and r["ledger"]["balance"] == pytest.approx(0.4)
    assert "balance 0.4" in stdout
    rc, _, err = _cli(capsys, *argv, "--out", tmp_path / "again")
    assert rc == 2 and "the balance is" in err and err.count("\n") == 1, err
    assert not (tmp_path / "again").exists() and len(Ledger(ledger).entries()) == 1
    seen = []

    def rename(src, dst):  # the charge is in the ledger when the dataset moves
        seen.append(len(Ledger(ledger).entries()))
        raise OSError("rename failed")

    monkeypatch.setattr(engines.os, "rename", rename)
    rc, _, err = _cli(capsys, *argv[:7], "0.1", *argv[8:], "--out", tmp_path / "third")
    monkeypatch.setattr(engines.os, "rename", os.rename)
    assert rc == 2 and "rename failed" in err and seen == [2]
    assert not (tmp_path / "third").exists() and len(Ledger(ledger).entries()) == 2
