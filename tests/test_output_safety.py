"""What ``dpfix privatize`` may write, and where: only regular files, only the declared
columns, no true count through a histogram's header line, confidential files 0600,
standard output only once everything else is in place (docs/failures.md)."""

from __future__ import annotations

import functools
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpfix.io.tables import read_histogram
from dpfix.release.frameworks import EXACT_HISTOGRAM_MAX_N
from dpfix.release.pipeline import privatize_counts
from helpers import cli

posix = pytest.mark.skipif(os.name != "posix", reason="POSIX files and signals")


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "t.csv"
    k = np.random.default_rng(0).negative_binomial(2, 0.3, 200)
    pd.DataFrame({"name": [f"p{i}" for i in range(200)], "k": k}).to_csv(path, index=False)
    return path


def run_args(table, tmp_path, *extra):
    return ["privatize", table, "--column", "k", "--epsilon", "1", "--upper", "20",
            "--seed", "1", "--quiet", *extra]


def no_run(monkeypatch):
    """Make the pipeline fail if it is reached: a refusal must come before any draw."""
    @functools.wraps(privatize_counts)  # its signature gives the CLI's defaults
    def reached(*a, **k):
        raise AssertionError("the pipeline ran")
    monkeypatch.setattr("dpfix.release.pipeline.privatize_counts", reached)


# ------------------------------------------------------------------ regular files only
@posix
@pytest.mark.parametrize("flag", ["--out", "--report", "--confidential-report", "--plot"])
def test_a_fifo_at_any_output_is_refused_before_the_run(flag, table, tmp_path, capsys,
                                                        monkeypatch):
    target = tmp_path / ("x.png" if flag == "--plot" else "x.csv")
    os.mkfifo(target)
    no_run(monkeypatch)
    extra = [] if flag == "--out" else ["--out", tmp_path / "o.csv"]
    rc, out, err = cli(capsys, *run_args(table, tmp_path, *extra, flag, target, "--force"))
    assert rc == 2 and err.count("\n") == 1 and "FIFO" in err and "not a regular file" in err
    assert stat.S_ISFIFO(os.lstat(target).st_mode)  # still the FIFO
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv", target.name]


@posix
def test_dev_null_and_a_link_to_it_are_refused_before_the_run(table, tmp_path, capsys,
                                                             monkeypatch):
    no_run(monkeypatch)
    rc, _, err = cli(capsys, *run_args(table, tmp_path, "--out", "/dev/null", "--force"))
    assert rc == 2 and "/dev/null is a device, not a regular file" in err
    link = tmp_path / "o.csv"
    link.symlink_to("/dev/null")
    rc, _, err = cli(capsys, *run_args(table, tmp_path, "--out", link, "--force"))
    assert rc == 2 and "symbolic link" in err and err.count("\n") == 1
    assert link.is_symlink() and os.readlink(link) == "/dev/null"


@posix
def test_a_fifo_among_the_demo_outputs_is_refused(tmp_path, capsys, monkeypatch):
    root = tmp_path / "demo"
    (root / "synthetic").mkdir(parents=True)
    os.mkfifo(root / "synthetic" / "report.json")
    no_run(monkeypatch)
    rc, _, err = cli(capsys, "privatize", "--demo", "--out-dir", root, "--force", "--quiet")
    assert rc == 2 and "not a regular file" in err and err.count("\n") == 1
    assert stat.S_ISFIFO(os.lstat(root / "synthetic" / "report.json").st_mode)
    assert sorted(p.name for p in (root / "synthetic").iterdir()) == ["report.json"]


@posix
def test_a_fifo_appearing_during_the_run_is_not_replaced(tmp_path):
    from dpfix.io.commit import StagedFiles

    final = tmp_path / "o.csv"
    with StagedFiles(force=True) as staged:
        staged.temp(final).write_text("x")
        os.mkfifo(final)  # appears between the start and the commit
        with pytest.raises(FileExistsError, match="FIFO"):
            staged.commit()
    assert stat.S_ISFIFO(os.lstat(final).st_mode)


# ------------------------------------------------------------------ Parquet: declared columns only
def _schema(path):
    pq = pytest.importorskip("pyarrow.parquet")
    return pq.read_schema(path)


@pytest.mark.parametrize("how", ["set_index", "filtered"])
def test_parquet_index_and_attrs_never_reach_the_output(how, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    k = np.random.default_rng(1).negative_binomial(2, 0.3, 120)
    frame = pd.DataFrame({"name": [f"p{i}" for i in range(120)], "k": k,
                          "rate": k / 7})
    frame = frame.set_index("name") if how == "set_index" else frame[frame["k"] > 0]
    frame.attrs["source"] = "confidential extract 2024"
    src, out, rep = tmp_path / "t.parquet", tmp_path / "o.parquet", tmp_path / "r.json"
    frame.to_parquet(src)
    rc, _, err = cli(capsys, *run_args(src, tmp_path, "--out", out, "--report", rep))
    assert rc == 0, err
    schema = _schema(out)
    assert schema.names == ["k"] and schema.metadata is None
    assert len(pd.read_parquet(out)) == len(frame)
    import json

    dropped = json.loads(rep.read_text())["output_columns"]["dropped"]
    index_name = "name" if how == "set_index" else "__index_level_0__"
    assert index_name in dropped  # the index is a column of the file: listed as dropped


def test_parquet_index_can_be_declared_a_key(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame({"name": ["b", "a", "c"], "k": [1, 2, 3]}).set_index("name")
    src, out = tmp_path / "t.parquet", tmp_path / "o.parquet"
    frame.to_parquet(src)
    rc, _, err = cli(capsys, *run_args(src, tmp_path, "--out", out, "--key", "name"))
    assert rc == 0, err
    assert _schema(out).names == ["k", "name"] and _schema(out).metadata is None  # file order


def test_dask_output_holds_no_index_and_no_metadata(tmp_path):
    pytest.importorskip("dask.dataframe")
    pytest.importorskip("pyarrow")
    from dpfix.release.dask import privatize_dataset

    folder = tmp_path / "data"
    folder.mkdir()
    rng = np.random.default_rng(2)
    for i in range(2):
        k = rng.negative_binomial(2, 0.3, 50)
        f = pd.DataFrame({"id": [f"r{i}-{j}" for j in range(50)], "k": k}).set_index("id")
        f["idc"] = f.index
        f.attrs["source"] = "confidential"
        f.to_parquet(folder / f"part-{i}.parquet")
    out = tmp_path / "out"
    privatize_dataset(folder, "k", 1.0, upper=20, out=out, keys=["idc"], seed=3)
    files = sorted(out.glob("*.parquet"))
    assert len(files) == 2
    for path in files:
        schema = _schema(path)
        assert schema.names == ["k", "idc"] and schema.metadata is None


# ------------------------------------------------------------------ histogram header lines
@pytest.mark.parametrize("body, header", [
    ('"0","300"\n1,10\n', None),                      # quoted: data
    ("0,300,\n1,10\n", None),                         # trailing separator: data
    (' "0" , "300" \n1,10\n', None),                  # blanks around quoted cells: data
    ('"count","number"\n"0","300"\n"1","10",\n', '"count","number"'),  # a real header
])
def test_histogram_first_line_of_counts_is_data(body, header, tmp_path, capsys):
    src, out = tmp_path / "h.csv", tmp_path / "o.csv"
    src.write_text(body)
    eta, head = read_histogram(src, with_header=True)
    assert eta.tolist() == [300, 10] and head == header
    rc, _, err = cli(capsys, "privatize", src, "--histogram", "--epsilon", "1", "--upper", "3",
                     "--out", out, "--seed", "0", "--quiet")
    assert rc == 0, err
    lines = out.read_text().splitlines()
    if header is None:  # the first line of counts is not copied into the public output
        assert lines[0].startswith("0,")
        numbers = lines
    else:
        assert lines[0] == header
        numbers = lines[1:]
    assert sum(int(x.split(",")[1]) for x in numbers) == 310


def test_forced_header_that_is_a_row_of_counts_is_not_copied(tmp_path):
    src = tmp_path / "h.csv"
    src.write_text('"0","300"\n1,10\n')
    eta, head = read_histogram(src, with_header=True, header=True)
    assert eta.tolist() == [0, 10] and head is None


# ------------------------------------------------------------------ confidential files
@posix
@pytest.mark.parametrize("existing, expected", [(None, 0o600), (0o600, 0o600), (0o644, 0o600),
                                                (0o400, 0o400)])
def test_confidential_report_is_0600_or_stricter(existing, expected, table, tmp_path, capsys):
    conf, rep = tmp_path / "c.json", tmp_path / "r.json"
    if existing is not None:
        for p in (conf, rep):
            p.write_text("{}")
        os.chmod(conf, existing)
        os.chmod(rep, 0o644)
    old = os.umask(0o022)
    try:
        rc, _, err = cli(capsys, *run_args(table, tmp_path, "--out", tmp_path / "o.csv",
                                           "--confidential-report", conf, "--report", rep,
                                           "--force"))
    finally:
        os.umask(old)
    assert rc == 0, err
    assert stat.S_IMODE(os.stat(conf).st_mode) == expected
    assert stat.S_IMODE(os.stat(rep).st_mode) == 0o644  # the public report as before
    assert '"true_distribution"' in conf.read_text() or len(conf.read_text()) > 2


# ------------------------------------------------------------------ --out -
def test_stdout_gets_nothing_when_a_later_commit_step_fails(table, tmp_path, capsys,
                                                            monkeypatch):
    from dpfix.io.commit import StagedFiles

    check = StagedFiles._check

    def failing(self, final, label):
        if label == "--report":
            raise FileExistsError(f"{label}: {final} was created during the run")
        return check(self, final, label)
    monkeypatch.setattr(StagedFiles, "_check", failing)
    rep = tmp_path / "r.json"
    rc, out, err = cli(capsys, *run_args(table, tmp_path, "--out", "-", "--report", rep))
    assert rc == 2 and err.count("\n") == 1 and "created during the run" in err
    assert out == ""  # the table was not streamed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]


def test_ctrl_c_right_after_the_commit_says_stdout_received_nothing(table, tmp_path, capsys,
                                                                    monkeypatch):
    from dpfix.io.commit import StagedFiles

    commit = StagedFiles.commit

    def then_interrupted(self):  # a signal held during the moves is raised after them
        commit(self)
        raise KeyboardInterrupt
    monkeypatch.setattr(StagedFiles, "commit", then_interrupted)
    rep = tmp_path / "r.json"
    rc, out, err = cli(capsys, *run_args(table, tmp_path, "--out", "-", "--report", rep))
    assert rc == 130 and out == "" and err.count("\n") == 1
    assert err.endswith(f"standard output received nothing; the other outputs are complete "
                        f"and in place ({rep})\n")


@posix
def test_sigterm_while_streaming_says_stdout_is_partial(tmp_path):
    src = tmp_path / "big.csv"
    k = np.random.default_rng(0).negative_binomial(2, 0.3, 200_000)
    src.write_text("name,k\n" + "\n".join(f"row-{i},{v}" for i, v in enumerate(k)) + "\n")
    rep = tmp_path / "r.json"

    def default_signals() -> None:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
    proc = subprocess.Popen(
        [sys.executable, "-m", "dpfix.cli", "privatize", str(src), "--column", "k",
         "--epsilon", "1", "--upper", "20", "--out", "-", "--report", str(rep), "--seed", "0",
         "--quiet", "--key", "name"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=default_signals)
    try:
        deadline = time.monotonic() + 60
        while not rep.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)  # nobody reads stdout: the child blocks once the pipe is full
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    text = err.decode()
    assert proc.returncode == 128 + signal.SIGTERM, text
    assert "nothing written" not in text and "partial table" in text
    assert text.count("\n") == 1 and str(rep) in text  # the report is in place, and said so
    assert rep.exists() and 0 < len(out) < src.stat().st_size


# ------------------------------------------------------------------ histogram, no-split frameworks
@pytest.mark.parametrize("framework", ["one-stage", "hybrid"])
def test_no_split_histogram_above_the_exact_limit_is_refused_before_any_draw(framework,
                                                                             monkeypatch):
    def drawn(*a, **k):
        raise AssertionError("randomness drawn")
    monkeypatch.setattr("dpfix.release.frameworks.random_source", drawn)
    monkeypatch.setattr("dpfix.release.frameworks.privatize_distribution", drawn)
    with pytest.raises(ValueError, match=f"exceeds {EXACT_HISTOGRAM_MAX_N}"):
        privatize_counts(None, 1.0, upper=3, histogram=[EXACT_HISTOGRAM_MAX_N, 1], seed=0,
                         framework=framework)


def test_no_split_histogram_above_the_limit_is_one_line_in_the_cli(tmp_path, capsys,
                                                                   monkeypatch):
    def drawn(*a, **k):
        raise AssertionError("randomness drawn")
    monkeypatch.setattr("dpfix.release.frameworks.random_source", drawn)
    src = tmp_path / "h.csv"
    src.write_text(f"0,{130 * 10**12}\n1,5\n")
    rc, _, err = cli(capsys, "privatize", src, "--histogram", "--epsilon", "1", "--upper", "3",
                     "--framework", "one-stage", "--out", tmp_path / "o.csv", "--quiet")
    assert rc == 2 and err.count("\n") == 1 and "two-stage framework" in err
    assert not Path(tmp_path / "o.csv").exists()
