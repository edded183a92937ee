"""The budget ledger (dpfix.release.ledger) and ``dpfix privatize --ledger``: totals, refusals
before any output, atomic records, concurrent runs, the report's balance."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.release import ledger as L
from dpfix.release.ledger import Budget, Ledger
from helpers import cli

UNIT = "each column of one row by 1, sequential composition"


def reserve(ledger, eps, delta=0, **kw):
    return ledger.reserve(eps, delta, dataset="t.csv", columns=["k"], unit=UNIT, **kw)


def spend(ledger, eps, delta=0):
    with reserve(ledger, eps, delta) as r:
        return r.commit()


# ------------------------------------------------------------------ totals
def test_the_total_is_fixed_at_creation_and_checked_on_opening(tmp_path):
    path = tmp_path / "l.jsonl"
    with pytest.raises(ValueError, match="does not exist; give its total"):
        Ledger(path)
    assert not path.exists()
    Ledger(path, total="1.5", delta_total="1e-6")
    # the same total in any exact form; none needed once the ledger exists
    for total in ("1.5", Fraction(3, 2), 1.5, None):
        opened = Ledger(path, total=total, delta_total="0.000001")
        assert opened.total == Budget(Fraction(3, 2), Fraction(1, 10**6))
    with pytest.raises(ValueError, match=r"^ledger l.jsonl: its total is eps 1.5, delta "
                                         r"0.000001, not eps 2, delta 0.000001 as given; a "
                                         r"ledger's total is fixed when it is created \(start "
                                         r"a new ledger for a new total\)$"):
        Ledger(path, total=2, delta_total="1e-6")
    with pytest.raises(ValueError, match="its total is"):
        Ledger(path, total="1.5")  # delta 0, not the ledger's
    head = json.loads(path.read_text().splitlines()[0])
    assert (head["total_eps"], head["total_delta"]) == ("1.5", "0.000001")


@pytest.mark.parametrize("total", [0, -1, "x", float("inf"), True, None])
def test_a_total_that_is_not_a_budget_is_refused(tmp_path, total):
    with pytest.raises(ValueError):
        Ledger(tmp_path / "l.jsonl", total=total)
    assert not (tmp_path / "l.jsonl").exists()


def test_balance_entries_and_repr(tmp_path):
    ledger = Ledger(tmp_path / "l.jsonl", total=2, delta_total="1e-5")
    spend(ledger, "0.5")
    with ledger.reserve(Fraction(1, 3), "1e-6", dataset="/data/t.csv", columns=["a", "b"],
                        unit=UNIT, note="quarterly") as r:
        assert r.after == Budget(Fraction(7, 6), Fraction(9, 10**6))
        r.commit()
    assert ledger.balance() == Budget(Fraction(7, 6), Fraction(9, 10**6))
    assert ledger.spent() == Budget(Fraction(5, 6), Fraction(1, 10**6))
    second = ledger.entries()[1]
    assert (second["entry"], second["eps"], second["delta"], second["dataset"],
            second["columns"], second["unit"], second["note"]) == (
        2, Fraction(1, 3), Fraction(1, 10**6), "/data/t.csv", ["a", "b"], UNIT, "quarterly")
    assert second["time"].endswith("+00:00") and second["dpfix_version"]
    assert repr(ledger) == ("Ledger('l.jsonl', total eps 2, delta 0.00001; spent eps 5/6, "
                            "delta 0.000001; balance eps 7/6, delta 0.000009)")


@settings(max_examples=25, deadline=None)
@given(st.lists(st.fractions(min_value=0, max_value=2, max_denominator=12), max_size=8),
       st.fractions(min_value=Fraction(1, 12), max_value=3, max_denominator=12))
def test_sequential_composition_admits_exactly_the_charges_the_balance_pays(charges, total):
    with tempfile.TemporaryDirectory() as folder:
        ledger = Ledger(Path(folder) / "l.jsonl", total=total)
        admitted = []
        for eps in charges:
            left = total - sum(admitted, Fraction(0))
            if eps <= left:
                spend(ledger, eps)
                admitted.append(eps)
            else:
                with pytest.raises(ValueError, match="refused"):
                    spend(ledger, eps)
        assert ledger.balance().eps == total - sum(admitted, Fraction(0)) >= 0
        assert [e["eps"] for e in ledger.entries()] == admitted


def test_floats_are_charged_at_their_exact_value(tmp_path):
    """Ten charges of the float 0.1 exceed 1 (each is slightly more than 1/10); ten of the
    text "0.1" are exactly 1."""
    floats, texts = Ledger(tmp_path / "f.jsonl", total=1), Ledger(tmp_path / "t.jsonl", total=1)
    for _ in range(9):
        spend(floats, 0.1)
    with pytest.raises(ValueError, match=r"needs eps 0.1, delta 0, but the balance is eps "
                                         r"0.0999999999999999.*exact values of the floats"):
        spend(floats, 0.1)
    for _ in range(10):
        spend(texts, "0.1")
    assert texts.balance() == Budget(Fraction(0), Fraction(0))
    assert Fraction(floats.entries()[0]["eps"]) == Fraction(0.1) != Fraction(1, 10)


# ------------------------------------------------------------------ refusals, records
def test_a_refused_release_runs_nothing_and_records_nothing(tmp_path):
    ledger = Ledger(tmp_path / "l.jsonl", total=1, delta_total="1e-6")
    spend(ledger, "0.75")
    before = ledger.path.read_bytes()
    ran = []
    for eps, delta in (("0.5", 0), ("0.1", "1e-5")):
        with pytest.raises(ValueError, match=r"^ledger l.jsonl: the release needs .* but the "
                                             r"balance is eps 0.25, delta 0.000001 \(total "
                                             r"eps 1, delta 0.000001\); refused$"):
            with reserve(ledger, eps, delta):
                ran.append(eps)  # the release: never reached
    assert ran == [] and ledger.path.read_bytes() == before


def test_a_failed_or_interrupted_block_records_nothing(tmp_path):
    ledger = Ledger(tmp_path / "l.jsonl", total=1)
    before = ledger.path.read_bytes()
    for error in (OSError("disk full"), KeyboardInterrupt()):
        with pytest.raises(type(error)):
            with reserve(ledger, "0.5"):
                raise error
    with reserve(ledger, "0.5"):
        pass  # left without commit()
    assert ledger.path.read_bytes() == before and ledger.entries() == []
    spend(ledger, "1")  # the budget those reservations held is free again


def test_commit_only_once_and_inside_the_block(tmp_path):
    ledger = Ledger(tmp_path / "l.jsonl", total=1)
    r = reserve(ledger, "0.5")
    with pytest.raises(RuntimeError, match="inside the reservation"):
        r.commit()
    with r:
        r.commit()
        with pytest.raises(RuntimeError, match="already committed"):
            r.commit()
    with pytest.raises(RuntimeError, match="inside the reservation"):
        r.commit()
    assert len(ledger.entries()) == 1


def test_a_second_reservation_in_one_thread_is_refused_not_a_deadlock(tmp_path):
    ledger = Ledger(tmp_path / "l.jsonl", total=1)
    with reserve(ledger, "0.1"):
        with pytest.raises(ValueError, match="already holds a reservation"):
            with reserve(Ledger(ledger.path), "0.1"):
                pass
    spend(ledger, "0.1")


@pytest.mark.parametrize("damage, message", [
    (b'{"entry":2,"eps":"0.5","del', r"line 3 is cut short \(no end of line\)"),
    (b"not json\n", "line 3 is not record 2"),
    (b'{"entry":1,"eps":"0.5","delta":"0"}\n', "line 3 is not record 2"),  # out of place
    (b'{"entry":2,"eps":"-1","delta":"0"}\n', "line 3 is not record 2"),
    (b'{"entry":2,"delta":"0"}\n', "line 3 is not record 2"),
])
def test_a_damaged_ledger_is_refused_naming_the_line(tmp_path, damage, message):
    ledger = Ledger(tmp_path / "l.jsonl", total=1)
    spend(ledger, "0.25")
    with open(ledger.path, "ab") as f:
        f.write(damage)
    for read in (ledger.balance, ledger.entries, lambda: Ledger(ledger.path),
                 lambda: spend(ledger, "0.25")):
        with pytest.raises(ValueError, match=f"^ledger l.jsonl: {message}"):
            read()


@pytest.mark.parametrize("content, message", [
    (b"", "is empty"), (b'{"ledger":"other","format":1}\n', "line 1 is not a dpfix budget"),
    (b"[1, 2]\n", "line 1 is not a dpfix budget")])
def test_a_file_that_is_not_a_ledger_is_refused(tmp_path, content, message):
    path = tmp_path / "l.jsonl"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        Ledger(path, total=1)
    assert path.read_bytes() == content


def test_a_ledger_replaced_since_it_was_opened_is_refused(tmp_path):
    ledger = Ledger(tmp_path / "l.jsonl", total=1)
    ledger.path.unlink()
    Ledger(ledger.path, total=5)
    with pytest.raises(ValueError, match="its total is now eps 5, delta 0, not eps 1"):
        spend(ledger, "0.5")
    assert Ledger(ledger.path).entries() == []


def test_a_short_write_is_taken_back(tmp_path, monkeypatch):
    ledger = Ledger(tmp_path / "l.jsonl", total=1)
    spend(ledger, "0.25")
    before = ledger.path.read_bytes()
    real = os.write
    with reserve(ledger, "0.5") as r:
        monkeypatch.setattr(L.os, "write", lambda fd, data: real(fd, data[: len(data) // 2]))
        with pytest.raises(OSError, match="wrote"):
            r.commit()
        monkeypatch.setattr(L.os, "write", real)
    assert ledger.path.read_bytes() == before and not r.committed
    spend(ledger, "0.75")


# ------------------------------------------------------------------ processes
def _race(path: str, barrier, results) -> None:
    ledger = Ledger(path)
    barrier.wait()
    try:
        with reserve(ledger, "0.6") as r:
            results.put("entered")  # the release begins: its outputs are being written
            time.sleep(0.3)  # without the lock the other run would enter meanwhile
            r.commit()
        results.put("ok")
    except ValueError as exc:
        results.put(str(exc))


def test_two_processes_racing_for_a_budget_that_pays_one_one_succeeds(tmp_path):
    ctx = multiprocessing.get_context("fork")
    path = str(tmp_path / "l.jsonl")
    Ledger(path, total=1)
    barrier, results = ctx.Barrier(2), ctx.Queue()
    runs = [ctx.Process(target=_race, args=(path, barrier, results)) for _ in range(2)]
    for p in runs:
        p.start()
    for p in runs:
        p.join(30)
    outcomes = []
    while len([o for o in outcomes if o != "entered"]) < 2:
        outcomes.append(results.get(timeout=5))
    assert sorted(outcomes) == ["entered", "ledger l.jsonl: the release needs eps 0.6, delta 0, "
                                "but the balance is eps 0.4, delta 0 (total eps 1, delta 0); "
                                "refused", "ok"]
    assert [e["eps"] for e in Ledger(path).entries()] == [Fraction(3, 5)]


def _hold(path: str, ready) -> None:
    with reserve(Ledger(path), "0.9"):
        ready.set()
        time.sleep(60)  # killed here, between reserve and commit


def test_a_killed_release_leaves_no_record_and_no_stale_lock(tmp_path):
    ctx = multiprocessing.get_context("fork")
    path = str(tmp_path / "l.jsonl")
    Ledger(path, total=1)
    ready = ctx.Event()
    holder = ctx.Process(target=_hold, args=(path, ready))
    holder.start()
    try:
        assert ready.wait(30)
        with pytest.raises(TimeoutError, match="another release held it"):
            with reserve(Ledger(path, timeout=0.2), "0.5"):
                pass
        assert Ledger(path).balance().eps == 1  # readers do not wait for the release
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.join(30)
    ledger = Ledger(path, timeout=10)
    spend(ledger, "1")  # the whole budget: the killed run's reservation is gone
    assert [e["eps"] for e in ledger.entries()] == [1]


# ------------------------------------------------------------------ dpfix privatize --ledger
@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(3)
    path = tmp_path / "t.csv"
    pd.DataFrame({"id": [f"r{i:03d}" for i in range(300)], "a": rng.poisson(4, 300),
                  "b": rng.poisson(9, 300)}).to_csv(path, index=False)
    return path


def run(capsys, table, tmp_path, *extra, eps="1", out="o.csv", ledger="budget.jsonl"):
    return cli(capsys, "privatize", table, "--column", "a", "--column", "b", "--epsilon", eps,
               "--upper", "30", "--key", "id", "--out", tmp_path / out, "--report",
               tmp_path / "report.json", "--seed", "1", "--quiet", "--ledger",
               tmp_path / ledger, *extra)


def test_cli_charges_each_run_and_refuses_the_one_the_balance_cannot_pay(tmp_path, capsys,
                                                                         table):
    rc, out, err = run(capsys, table, tmp_path, "--ledger-total", "1.5")
    assert rc == 0, err
    assert "ledger " in out and "spent 1 of 1.5, balance 0.5" in out
    report = json.loads((tmp_path / "report.json").read_text())
    assert {k: report["ledger"][k] for k in ("path", "total", "spent", "balance")} == \
        {"path": "budget.jsonl", "total": 1.5, "spent": 1.0, "balance": 0.5}
    (entry,) = Ledger(tmp_path / "budget.jsonl").entries()
    assert (entry["dataset"], entry["columns"], entry["eps"]) == (str(table.resolve()),
                                                                  ["a", "b"], 1)
    # the second run: refused in one line, exit 2, nothing written or replaced
    files = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    for extra in ([], ["--force"]):
        rc, out, err = run(capsys, table, tmp_path, *extra, out="o2.csv" if not extra else
                           "o.csv")
        assert rc == 2 and out == ""
        assert err.splitlines() == ["dpfix privatize: error: ledger budget.jsonl: the release "
                                    "needs eps 1, delta 0, but the balance is eps 0.5, delta 0 "
                                    "(total eps 1.5, delta 0); refused"]
        assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == files
    # a --force rerun the balance pays: charged again, the report says what is left
    rc, _, err = run(capsys, table, tmp_path, "--force", eps="0.5")
    assert rc == 0, err
    assert [e["eps"] for e in Ledger(tmp_path / "budget.jsonl").entries()] == [1, Fraction(1, 2)]
    report = json.loads((tmp_path / "report.json").read_text())
    assert (report["ledger"]["spent"], report["ledger"]["balance"]) == (1.5, 0.0)


def test_cli_ledger_refusal_comes_before_any_randomness(tmp_path, capsys, table, monkeypatch):
    Ledger(tmp_path / "budget.jsonl", total="0.5")
    import functools

    import dpfix.release.pipeline as pipeline

    @functools.wraps(pipeline.privatize_counts)  # the same signature, for the parser
    def drawn(*args, **kwargs):
        pytest.fail("randomness drawn before the ledger's refusal")
    monkeypatch.setattr(pipeline, "privatize_counts", drawn)
    rc, _, err = run(capsys, table, tmp_path)
    assert rc == 2 and "refused" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["budget.jsonl", "t.csv"]  # no lock file


def test_cli_records_the_charge_before_the_outputs_are_in_place(tmp_path, capsys, table,
                                                                monkeypatch):
    """The safe order: when moving the outputs fails after the charge, budget is spent for
    nothing; no output is ever in place without its charge."""
    from dpfix.io.commit import StagedFiles

    seen = []

    def commit(self):
        seen.append(len(Ledger(tmp_path / "budget.jsonl").entries()))
        raise OSError("the disk is gone")
    monkeypatch.setattr(StagedFiles, "commit", commit)
    rc, _, err = run(capsys, table, tmp_path, "--ledger-total", "2")
    assert rc == 2 and "the disk is gone" in err
    assert seen == [1] and not (tmp_path / "o.csv").exists()
    assert Ledger(tmp_path / "budget.jsonl").balance().eps == 1


def test_cli_ledger_file_holds_no_count(tmp_path, capsys, table):
    rc, _, err = run(capsys, table, tmp_path, "--ledger-total", "3")
    assert rc == 0, err
    lines = [json.loads(x) for x in (tmp_path / "budget.jsonl").read_text().splitlines()]
    assert set(lines[0]) == {"ledger", "format", "total_eps", "total_delta", "created",
                             "dpfix_version"}
    assert set(lines[1]) == {"entry", "eps", "delta", "dataset", "columns", "unit", "time",
                             "dpfix_version", "prev"}
    assert lines[1]["unit"] == ("neighbouring tables differ in what one individual changes: "
                                "every column of one row, each count by at most 1; the "
                                "columns compose sequentially")  # the declared --unit


def test_cli_ledger_charges_delta_against_the_delta_total(tmp_path, capsys, table):
    gaussian = ("--privatizer", "cyclic-gaussian", "--delta", "1e-6")
    rc, _, err = run(capsys, table, tmp_path, *gaussian, "--ledger-total", "3")
    assert rc == 2 and "the run needs eps 1, delta 1e-06, more than the total eps 3, delta 0 " \
        "given to create budget.jsonl; refused, nothing created" in err
    assert not (tmp_path / "budget.jsonl").exists()
    Ledger(tmp_path / "budget.jsonl", total=3)
    rc, _, err = run(capsys, table, tmp_path, *gaussian, out="o1.csv")
    assert rc == 2 and "the release needs eps 1, delta 1e-06, but the balance is eps 3, " \
        "delta 0" in err
    rc, _, err = run(capsys, table, tmp_path, *gaussian, "--ledger-total", "3",
                     "--ledger-delta-total", "1e-5", out="o2.csv")
    assert rc == 2 and "its total is eps 3, delta 0, not eps 3, delta 0.00001" in err
    rc, _, err = run(capsys, table, tmp_path, *gaussian, "--ledger-total", "3",
                     "--ledger-delta-total", "1e-5", out="o3.csv", ledger="d.jsonl")
    assert rc == 0, err
    ledger = Ledger(tmp_path / "d.jsonl")
    (entry,) = ledger.entries()
    assert float(entry["delta"]) == 1e-6  # the exact sum of the two columns' float deltas
    assert ledger.balance() == Budget(Fraction(2), Fraction(1, 10**5) - entry["delta"])


@pytest.mark.parametrize("extra, message", [
    (["--ledger-total", "1", "--ledger", "{out}"], "--ledger and --out name the same file"),
    (["--ledger", "{missing}"], "does not exist; give --ledger-total EPS to create it"),
    (["--ledger-delta-total", "1e-6", "--ledger", "{missing}"],
     "--ledger-delta-total: only with --ledger-total"),
    (["--ledger", "{folder}/x/l.jsonl", "--ledger-total", "1"], "folder .* does not exist"),
    (["--ledger-total", "0", "--ledger", "{missing}"], "--ledger-total: must be a finite"),
])
def test_cli_ledger_options_are_checked_in_one_line(tmp_path, capsys, table, extra, message):
    extra = [e.format(out=tmp_path / "o.csv", missing=tmp_path / "new.jsonl", folder=tmp_path)
             for e in extra]
    rc, _, err = cli(capsys, "privatize", table, "--column", "a", "--epsilon", "1", "--upper",
                     "30", "--out", tmp_path / "o.csv", "--quiet", *extra)
    assert rc == 2 and len(err.splitlines()) == 1
    assert __import__("re").search(message, err), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]


def test_cli_runs_on_one_ledger_wait_for_each_other(tmp_path, capsys, table):
    """A run that finds the ledger held says so on stderr, waits, then runs."""
    ctx = multiprocessing.get_context("fork")
    path = tmp_path / "budget.jsonl"
    Ledger(path, total=2)
    ready = ctx.Event()
    holder = ctx.Process(target=_hold_briefly, args=(str(path), ready))
    holder.start()
    try:
        assert ready.wait(30)
        rc, out, err = cli(capsys, "privatize", table, "--column", "a", "--epsilon", "1",
                           "--upper", "30", "--out", tmp_path / "o.csv", "--ledger", path)
    finally:
        holder.join(30)
    assert rc == 0, err
    assert f"dpfix privatize: waiting for {path}: another run holds it" in err
    assert "spent 1 of 2, balance 1" in out and len(Ledger(path).entries()) == 1


def _hold_briefly(path: str, ready) -> None:
    with reserve(Ledger(path), "0.5"):
        ready.set()
        time.sleep(1)  # then leaves without commit


def test_cli_ledger_with_standard_input_and_output(tmp_path, capsys, table, monkeypatch):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(table.read_bytes())))
    rc, out, err = cli(capsys, "privatize", "-", "--column", "a", "--epsilon", "0.5",
                       "--upper", "30", "--out", "-", "--seed", "1", "--ledger",
                       tmp_path / "l.jsonl", "--ledger-total", "1")
    assert rc == 0, err
    assert out.splitlines()[0] == "a" and "spent 0.5 of 1, balance 0.5" in err
    (entry,) = Ledger(tmp_path / "l.jsonl").entries()
    assert (entry["dataset"], entry["columns"]) == ("<stdin>", ["a"])


def test_cli_ledger_total_without_ledger_and_demo_are_refused(tmp_path, capsys, table):
    rc, _, err = cli(capsys, "privatize", table, "--column", "a", "--epsilon", "1", "--upper",
                     "30", "--out", tmp_path / "o.csv", "--ledger-total", "1")
    assert rc == 2 and "--ledger-total: only with --ledger FILE" in err
    rc, _, err = cli(capsys, "privatize", "--demo", "--out-dir", tmp_path / "d", "--ledger",
                     tmp_path / "l.jsonl")
    assert rc == 2 and "--ledger" in err and not (tmp_path / "l.jsonl").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]
