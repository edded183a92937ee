"""A ledger's charge and the outputs of a release: the charge recorded before any output is
in place (the library's table, streamed CSV, Parquet and histogram outputs; the command),
one lock for every name of a ledger file (symbolic and hard links), no lock file to plant,
and commit() refusing a ledger replaced or changed since its balance check."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import threading
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from dpfix.io.commit import StagedFiles
from dpfix.release import ledger as L
from dpfix.release.ledger import Ledger
from dpfix.release.plan import plan_release
from dpfix.release.table import Histogram, privatize_table
from helpers import cli

UNIT = "one row by 1"


def reserve(ledger, eps, **kw):
    return ledger.reserve(eps, dataset="t.csv", columns=["c"], unit=UNIT, **kw)


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(4)
    path = tmp_path / "in.csv"
    pd.DataFrame({"id": [f"r{i:03d}" for i in range(120)],
                  "c": rng.poisson(3, 120)}).to_csv(path, index=False)
    return path


def _names(tmp_path):
    """The ledger ``l.jsonl`` and three other names of the same file."""
    path = tmp_path / "l.jsonl"
    (tmp_path / "sub").mkdir()
    os.symlink(path, tmp_path / "sym.jsonl")
    os.link(path, tmp_path / "hard.jsonl")
    return path, [tmp_path / "sym.jsonl", tmp_path / "hard.jsonl",
                  tmp_path / "sub" / ".." / "l.jsonl"]


# ------------------------------------------------------------------ one lock per file
def test_every_name_of_a_ledger_file_reaches_its_one_lock(tmp_path):
    """While one reservation holds the ledger, a reservation through a symbolic link, a hard
    link or another spelling of the path waits (here: times out), in another thread; in the
    same thread it is refused (not a deadlock)."""
    Ledger(tmp_path / "l.jsonl", total=1)
    path, others = _names(tmp_path)
    with reserve(Ledger(path), "0.5"):
        for name in others:
            with pytest.raises(ValueError, match="this thread already holds a reservation"):
                reserve(Ledger(name), "0.5").__enter__()
            seen = []

            def other(name=name, seen=seen):
                try:
                    with reserve(Ledger(name, timeout=0.1), "0.5"):
                        seen.append("entered")
                except TimeoutError as exc:
                    seen.append(str(exc))
            t = threading.Thread(target=other)
            t.start()
            t.join(30)
            assert seen == [f"ledger {name.name}: another release held it for 0.1 s"], name
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".lock")]


def _release_through(name: str, table: str, out: str, in_memory: bool, barrier,
                     results) -> None:
    """One release charging the ledger through ``name``; entering its reservation it waits
    (at most 1.5 s) for the other process to have entered too, as a lock per name lets it."""
    enter = L.Reservation.__enter__

    def entered(self):
        made = enter(self)
        try:
            barrier.wait(timeout=1.5)
        except threading.BrokenBarrierError:  # the other waits for the lock: alone here
            pass
        return made
    L.Reservation.__enter__ = entered
    data = pd.read_csv(table) if in_memory else table
    try:
        privatize_table(data, ["c"], 1.0, upper=6, out=out, ledger=Ledger(name), seed=3)
        results.put(("ok", out))
    except ValueError as exc:
        results.put(("refused", str(exc)))


@pytest.mark.parametrize("in_memory", [False, True], ids=["streamed", "in-memory"])
def test_two_processes_through_two_links_publish_no_output_without_its_charge(
        tmp_path, table, in_memory):
    """Two eps-1 releases against a total of 1, at once, one through a symbolic link and one
    through a hard link to the ledger: one is made and charged, the other refused before
    anything is written; never an output in place without its charge."""
    Ledger(tmp_path / "l.jsonl", total=1)
    path, (sym, hard, _) = _names(tmp_path)
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    outs = [tmp_path / "o1.csv", tmp_path / "o2.csv"]
    runs = [ctx.Process(target=_release_through, args=(str(name), str(table), str(out),
                                                       in_memory, barrier, results))
            for name, out in zip((sym, hard), outs, strict=True)]
    for p in runs:
        p.start()
    outcomes = sorted(results.get(timeout=60)[0] for _ in runs)
    for p in runs:
        p.join(30)
    entries = Ledger(path).entries()
    in_place = [o for o in outs if o.exists()]
    assert len(in_place) == len(entries)  # every output in place has its charge
    assert sum(e["eps"] for e in entries) <= 1  # the total is never exceeded
    assert outcomes == ["ok", "refused"] and len(entries) == 1
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith((".part", ".lock"))]


# ------------------------------------------------------------------ the library's order
def _inputs(tmp_path, table, kind):
    if kind == "histogram":
        src = tmp_path / "h.csv"
        src.write_text("count,number\n0,40\n1,70\n2,50\n")
        return Histogram(src), None, tmp_path / "o.csv"
    data = table if kind == "streamed" else pd.read_csv(table)
    return data, ["c"], tmp_path / ("o.parquet" if kind == "parquet" else "o.csv")


@pytest.mark.parametrize("kind", ["streamed", "in-memory", "parquet", "histogram"])
def test_a_library_release_records_its_charge_before_its_file_is_in_place(
        tmp_path, table, monkeypatch, kind):
    """privatize_table(..., out=, ledger=): when the file moves into place the ledger holds
    the charge already (a streamed CSV, an in-memory table, Parquet, a histogram)."""
    if kind == "parquet":
        pytest.importorskip("pyarrow")
    data, columns, out = _inputs(tmp_path, table, kind)
    engine = plan_release(data, columns, 1.0, upper=6, out=out).engine
    assert engine == ("stream" if kind == "streamed" else "memory")
    ledger = Ledger(tmp_path / "l.jsonl", total=2)
    seen = []
    real = StagedFiles.commit

    def commit(self):
        seen.append((len(Ledger(ledger.path).entries()), out.exists()))
        real(self)
    monkeypatch.setattr(StagedFiles, "commit", commit)
    release = privatize_table(data, columns, 1.0, upper=6, out=out, ledger=ledger, seed=1)
    assert seen == [(1, False)] and out.exists() and release.path == out
    assert ledger.verify([release.report["ledger"]]) == 1


@pytest.mark.parametrize("kind", ["streamed", "in-memory"])
def test_a_library_release_whose_move_fails_says_its_charge_stays(tmp_path, table,
                                                                  monkeypatch, kind):
    data, columns, out = _inputs(tmp_path, table, kind)
    ledger = Ledger(tmp_path / "l.jsonl", total=2)

    def commit(self):
        raise OSError("the disk is gone")
    monkeypatch.setattr(StagedFiles, "commit", commit)
    with pytest.raises(OSError, match=r"^the disk is gone; ledger l.jsonl: the charge of eps "
                                      r"1, delta 0 is recorded and stays \(record 1\): the "
                                      r"budget is spent, though the release's outputs are "
                                      r"not in place$"):
        privatize_table(data, columns, 1.0, upper=6, out=out, ledger=ledger, seed=1)
    assert not out.exists() and ledger.balance().eps == 1


def test_a_library_release_with_an_entered_reservation_records_it_before_the_move(
        tmp_path, table, monkeypatch):
    """An entered Reservation passed as ledger= with out= (no staged=): the release moves
    its file itself, so it records the charge first."""
    ledger = Ledger(tmp_path / "l.jsonl", total=2)
    seen = []
    real = StagedFiles.commit

    def commit(self):
        seen.append(len(Ledger(ledger.path).entries()))
        real(self)
    monkeypatch.setattr(StagedFiles, "commit", commit)
    with reserve(ledger, 1) as held:
        privatize_table(pd.read_csv(table), ["c"], 1.0, upper=6, out=tmp_path / "o.csv",
                        ledger=held, seed=1)
        assert held.committed
    assert seen == [1] and len(ledger.entries()) == 1


def test_cli_move_failing_after_the_charge_says_the_charge_stays(tmp_path, capsys, table,
                                                                  monkeypatch):
    def commit(self):
        raise OSError("the disk is gone")
    monkeypatch.setattr(StagedFiles, "commit", commit)
    rc, _, err = cli(capsys, "privatize", table, "--column", "c", "--epsilon", "1",
                     "--upper", "6", "--out", tmp_path / "o.csv", "--quiet", "--ledger",
                     tmp_path / "l.jsonl", "--ledger-total", "2")
    assert rc == 2 and err.splitlines() == [
        "dpfix privatize: error: the disk is gone; ledger l.jsonl: the charge of eps 1, "
        "delta 0 is recorded and stays (record 1): the budget is spent, though the "
        "release's outputs are not in place"]
    assert Ledger(tmp_path / "l.jsonl").balance().eps == 1


# ------------------------------------------------------------------ no lock file
@pytest.mark.parametrize("planted", ["symlink", "folder"])
def test_nothing_planted_beside_the_ledger_is_followed_or_in_the_way(tmp_path, capsys,
                                                                     table, planted):
    """A symbolic link planted at ``.l.jsonl.lock`` (the name a lock file beside the ledger
    would have) creates nothing where it points; a folder there is not in the way."""
    Ledger(tmp_path / "l.jsonl", total=3)
    target = tmp_path / "elsewhere" / "planted"
    target.parent.mkdir()
    if planted == "symlink":
        os.symlink(target, tmp_path / ".l.jsonl.lock")
    else:
        (tmp_path / ".l.jsonl.lock").mkdir()
    with reserve(Ledger(tmp_path / "l.jsonl"), "0.5") as r:
        r.commit()
    rc, _, err = cli(capsys, "privatize", table, "--column", "c", "--epsilon", "1",
                     "--upper", "6", "--out", tmp_path / "o.csv", "--quiet", "--ledger",
                     tmp_path / "l.jsonl")
    assert rc == 0, err
    assert not os.path.lexists(target) and list(target.parent.iterdir()) == []
    assert [e["eps"] for e in Ledger(tmp_path / "l.jsonl").entries()] == [Fraction(1, 2), 1]


# ------------------------------------------------------------------ commit's check
def _append_by_hand(path, eps):
    """A chained record appended as an editor would, without the ledger's lock."""
    data = path.read_bytes()
    lines = data.split(b"\n")[:-1]
    record = {"entry": len(lines), "eps": eps, "delta": "0", "dataset": "x", "columns": [],
              "unit": UNIT, "time": "2026-01-01T00:00:00+00:00", "dpfix_version": "0",
              "prev": hashlib.sha256(lines[-1]).hexdigest()}
    with open(path, "ab") as f:
        f.write((json.dumps(record, separators=(",", ":")) + "\n").encode())


@pytest.mark.parametrize("change", ["replaced by a fresh ledger", "replaced by a spent one",
                                    "appended to", "truncated"])
def test_commit_refuses_a_ledger_changed_inside_the_block(tmp_path, change):
    """Inside the with block the ledger is replaced (renamed over) or changed in place
    without the lock: commit() refuses, and records nothing anywhere."""
    path = tmp_path / "l.jsonl"
    ledger = Ledger(path, total=1)
    with reserve(ledger, "0.25") as r:
        r.commit()
    with reserve(ledger, "0.5") as r:
        if change.startswith("replaced"):
            fresh = Ledger(tmp_path / "new.jsonl", total=1)
            if change.endswith("spent one"):
                with reserve(fresh, "0.75") as other:
                    other.commit()
            os.replace(fresh.path, path)
        elif change == "appended to":
            _append_by_hand(path, "0.1")
        else:
            path.write_bytes(path.read_bytes().split(b"\n")[0] + b"\n")
        before = path.read_bytes()
        with pytest.raises(ValueError, match=r"^ledger l.jsonl: the file (was replaced|changed) "
                                             r"since the balance check.*the charge is not "
                                             r"recorded"):
            r.commit()
        assert not r.committed and path.read_bytes() == before
