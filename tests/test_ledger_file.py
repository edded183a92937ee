"""The ledger file against hostile contents: amounts out of range, files that are not
regular files, hand edits (the hash chain, duplicate keys, the reports' record hashes),
ledgers of format 1, and the one-line messages of each (library and dpfix privatize)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from dpfix.release.ledger import MAX_BITS, MAX_TEXT, Ledger, ledger_amount
from helpers import cli

UNIT = "one row by 1"


def spend(ledger, eps):
    with ledger.reserve(eps, dataset="t.csv", columns=["c"], unit=UNIT) as r:
        return r.commit(), r.statement()


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(2)
    path = tmp_path / "t.csv"
    pd.DataFrame({"c": rng.poisson(3, 50)}).to_csv(path, index=False)
    return path


def privatize(capsys, table, ledger, *extra, eps="0.5"):
    return cli(capsys, "privatize", table, "--column", "c", "--epsilon", eps, "--upper", "6",
               "--out", table.parent / "o.csv", "--quiet", "--force", "--ledger", ledger,
               *extra)


def run_python(code: str, *args, timeout: float = 60) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter; a run that would hang is stopped (then the test
    fails on the TimeoutExpired)."""
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, timeout=timeout)


# ------------------------------------------------------------------ amounts
@pytest.mark.parametrize("value", ["1e309", "1e-5000000", "1e-200000", "9" * (MAX_TEXT + 1),
                                   "1" + "0" * 400, Fraction(1, 2**(MAX_BITS + 1)), 10**400,
                                   float("inf"), "-.5", "1/0", "0x10", True])
def test_an_amount_out_of_range_is_refused_in_one_line_at_once(value):
    with pytest.raises(ValueError) as caught:
        ledger_amount(value, "eps")
    text = str(caught.value)
    assert text.startswith("eps: ") and "\n" not in text and len(text) < 300


def test_amounts_a_release_spends_fit():
    """The exact value of a float budget fits, the least positive float too; so do long
    exact texts and fractions."""
    for x in (5e-324, 1e-4, 0.1, 100.0, 1e299):
        assert ledger_amount(x, "eps") == Fraction(x)
    text = "0." + "0" * 1073 + "5"  # 5e-1074: 1076 characters, 3566 bits
    assert ledger_amount(text, "eps") == Fraction(5, 10**1074)
    assert ledger_amount(f"{2**200}/3", "eps") == Fraction(2**200, 3)


HOSTILE = """
import sys
from dpfix.release.ledger import Ledger
path, case = sys.argv[1:]
try:
    if case == "total":
        Ledger(path, total=sys.argv[3] if len(sys.argv) > 3 else "1e-5000000")
    elif case == "charge":
        with Ledger(path).reserve("1e-5000000", dataset="d", columns=[], unit="u") as r:
            r.commit()
    else:
        Ledger(path).balance()
except ValueError as exc:
    print(exc)
"""


def _record_line(path, eps):
    """A chained record of ``eps`` for the end of the ledger at ``path`` (as an editor would
    append it)."""
    lines = path.read_bytes().split(b"\n")[:-1]
    return (json.dumps({"entry": len(lines), "eps": eps, "delta": "0", "dataset": "d",
                        "columns": [], "unit": UNIT,
                        "prev": hashlib.sha256(lines[-1]).hexdigest()},
                       separators=(",", ":")) + "\n").encode()


@pytest.mark.parametrize("case", ["total", "charge", "record 1e-200000", "record 1e-5000000"])
def test_a_huge_exponent_is_refused_at_once_not_computed(tmp_path, case):
    """``1e-5000000`` as a total, a charge or a record in the file: one line, at once (its
    exact value has millions of digits), nothing created."""
    path = tmp_path / "l.jsonl"
    if case != "total":
        Ledger(path, total=1)
    if case.startswith("record"):
        with open(path, "ab") as f:
            f.write(_record_line(path, case.split()[1]))
    before = path.read_bytes() if path.exists() else None
    done = run_python(HOSTILE, path, case.split()[0])
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    if case.startswith("record"):
        assert line.startswith("ledger l.jsonl: line 2 is not record 1 of the ledger (eps: ")
    assert "has an exponent beyond 2000" in line
    assert (path.read_bytes() if path.exists() else None) == before


def test_cli_a_total_out_of_range_creates_nothing(tmp_path, capsys, table):
    """``--ledger-total 1e309``: one line, exit 2, no ledger (whose every later run would
    fail on the total's float)."""
    for total in ("1e309", "1e-5000000", "-.5", "0"):
        rc, out, err = privatize(capsys, table, tmp_path / "l.jsonl", "--ledger-total", total)
        assert rc == 2 and out == "" and len(err.splitlines()) == 1, err
        assert err.startswith("dpfix privatize: error: --ledger-total: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]


def test_cli_a_run_its_new_ledger_cannot_pay_creates_nothing(tmp_path, capsys, table):
    rc, _, err = privatize(capsys, table, tmp_path / "l.jsonl", "--ledger-total", "0.5",
                           eps="1")
    assert rc == 2 and err.splitlines() == [
        "dpfix privatize: error: --ledger: the run needs eps 1, delta 0, more than the total "
        "eps 0.5, delta 0 given to create l.jsonl; refused, nothing created"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]
    rc, _, err = privatize(capsys, table, tmp_path / "l.jsonl", "--ledger-total", "1", eps="1")
    assert rc == 0, err
    assert Ledger(tmp_path / "l.jsonl").balance().eps == 0


# ------------------------------------------------------------------ not a regular file
def test_a_fifo_ledger_is_refused_not_waited_on(tmp_path):
    """A FIFO named as the ledger (existing, or to create): one line, exit 2, at once."""
    fifo = tmp_path / "l.jsonl"
    os.mkfifo(fifo)
    table = tmp_path / "t.csv"
    table.write_text("c\n1\n2\n")
    for extra in ([], ["--ledger-total", "1"]):
        done = subprocess.run([sys.executable, "-m", "dpfix.cli", "privatize", str(table),
                               "--column", "c", "--epsilon", "1", "--upper", "6", "--out",
                               str(tmp_path / "o.csv"), "--ledger", str(fifo), *extra],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and done.stderr.splitlines() == [
            "dpfix privatize: error: ledger l.jsonl is a FIFO (named pipe), not a regular "
            "file"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.jsonl", "t.csv"]


def test_a_folder_or_a_device_is_not_a_ledger(tmp_path):
    (tmp_path / "d.jsonl").mkdir()
    os.symlink("/dev/null", tmp_path / "null.jsonl")
    with pytest.raises(ValueError, match=r"^ledger d.jsonl is a folder, not a regular file$"):
        Ledger(tmp_path / "d.jsonl", total=1)
    with pytest.raises(ValueError, match=r"^ledger null.jsonl is a device, not a regular file$"):
        Ledger(tmp_path / "null.jsonl", total=1)


def test_a_dangling_symlink_is_named_and_nothing_is_created_through_it(tmp_path, capsys,
                                                                       table):
    link = tmp_path / "l.jsonl"
    os.symlink("nowhere.jsonl", link)
    message = ("ledger l.jsonl is a symbolic link to nowhere.jsonl, which does not exist; "
               "remove the link or make it reach the ledger")
    for total in (None, 1):
        with pytest.raises(ValueError, match=f"^{message}$"):
            Ledger(link, total=total)
    for extra in ([], ["--ledger-total", "1"]):
        rc, _, err = privatize(capsys, table, link, *extra)
        assert rc == 2 and err.splitlines() == [f"dpfix privatize: error: {message}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.jsonl", "t.csv"]


# ------------------------------------------------------------------ hand edits
def _edit(path, edit):
    lines = path.read_bytes().split(b"\n")[:-1]
    items = [json.loads(x) for x in lines]
    if edit == "a lowered charge":
        items[1]["eps"] = "0.125"
    elif edit == "a raised total":
        items[0]["total_eps"] = "5"
    elif edit == "a deleted record, the others renumbered":
        del items[1]
        for k, item in enumerate(items[1:], 1):
            item["entry"] = k
    elif edit == "entry true":
        items[1]["entry"] = True
    elif edit == "a negative total":
        items[0]["total_eps"] = "-.5"
    out = [json.dumps(x, separators=(",", ":")).encode() for x in items]
    if edit == "a duplicate eps key":
        out[2] = out[2][:-1] + b',"eps":"0"}'  # the last key would win: record 2 free
    if edit == "deep JSON":
        out.append(b"[" * 100_000 + b"]" * 100_000)
    path.write_bytes(b"\n".join(out) + b"\n")


@pytest.mark.parametrize("edit, message", [
    ("a lowered charge", r"line 3 is not record 2 of the ledger \(its prev is not the SHA-256 "
                         r"of line 2\): the ledger was edited after line 2 was written"),
    ("a raised total", r"line 2 is not record 1 of the ledger \(its prev is not the SHA-256 "
                       r"of line 1\): the ledger was edited after line 1 was written"),
    ("a deleted record, the others renumbered", r"line 2 is not record 1 of the ledger \(its "
                                                r"prev is not the SHA-256 of line 1\): the "
                                                r"ledger was edited after line 1 was written"),
    ("a duplicate eps key", r"line 3 is not record 2 of the ledger \(the key 'eps' is given "
                            r"twice\)"),
    ("entry true", r"line 2 is not record 1 of the ledger \(its entry is True\)"),
    ("a negative total", r"line 1 is not a dpfix budget ledger of format 1/2 \(total_eps: "
                         r"must be a finite number > 0, got '-.5'\)"),
    ("deep JSON", r"line 5 is not record 4 of the ledger \(JSON nested too deeply\)"),
])
def test_a_hand_edit_is_refused_naming_its_line(tmp_path, capsys, table, edit, message):
    """Every way of reading the ledger (and dpfix privatize, in one line, exit 2) refuses
    it: an edit of any line but the last breaks the chain at the next line."""
    ledger = Ledger(tmp_path / "l.jsonl", total=1)
    for eps in ("0.25", "0.25", "0.125"):
        spend(ledger, eps)
    _edit(ledger.path, edit)
    edited = ledger.path.read_bytes()
    for read in (ledger.balance, ledger.entries, lambda: Ledger(ledger.path),
                 lambda: spend(ledger, "0.1")):
        with pytest.raises(ValueError, match=f"^ledger l.jsonl: {message}; check the file$"):
            read()
    rc, out, err = privatize(capsys, table, ledger.path)
    assert rc == 2 and out == "" and len(err.splitlines()) == 1 and "check the file" in err
    assert ledger.path.read_bytes() == edited


def test_an_edit_of_the_last_record_is_found_by_the_reports(tmp_path):
    """The chain cannot see an edit of its last line; the report of that release, which
    states its record's SHA-256, does (Ledger.verify), as it does a removed record."""
    ledger = Ledger(tmp_path / "l.jsonl", total=1)
    statements = [spend(ledger, eps)[1] for eps in ("0.25", "0.5")]
    assert [s["entry"] for s in statements] == [1, 2]
    assert ledger.verify(statements) == 2
    lines = ledger.path.read_bytes().split(b"\n")
    last = json.loads(lines[2])
    ledger.path.write_bytes(b"\n".join(lines[:2]) + b"\n"
                            + json.dumps(dict(last, eps="0.05")).encode() + b"\n")
    assert ledger.balance().eps == Fraction(7, 10)  # read: the chain ends with it
    with pytest.raises(ValueError, match="^ledger l.jsonl: record 2 is not the one its report "
                                         "states"):
        ledger.verify(statements)
    ledger.path.write_bytes(b"\n".join(lines[:2]) + b"\n")
    with pytest.raises(ValueError, match="a report names record 2, but the ledger has 1 "
                                         "records: records were removed"):
        ledger.verify(statements)


def test_a_ledger_of_format_1_is_read_and_charged_its_new_records_chained(tmp_path):
    path = tmp_path / "l.jsonl"
    head = {"ledger": "dpfix budget ledger", "format": 1, "total_eps": "1", "total_delta": "0",
            "created": "2025-01-01T00:00:00+00:00", "dpfix_version": "0.1.0"}
    old = {"entry": 1, "eps": "0.25", "delta": "0", "dataset": "t.csv", "columns": ["c"],
           "unit": UNIT, "time": "2025-01-01T00:00:00+00:00", "dpfix_version": "0.1.0"}
    path.write_text(json.dumps(head) + "\n" + json.dumps(old) + "\n")
    ledger = Ledger(path)
    assert ledger.balance().eps == Fraction(3, 4)
    record, _ = spend(ledger, "0.5")
    lines = path.read_bytes().split(b"\n")
    assert record["prev"] == hashlib.sha256(lines[1]).hexdigest()
    assert ledger.balance().eps == Fraction(1, 4)
    # the record before the first chained one is now pinned too
    path.write_bytes(lines[0] + b"\n" + lines[1].replace(b'"0.25"', b'"0.125"') + b"\n"
                     + lines[2] + b"\n")
    with pytest.raises(ValueError, match="line 3 is not record 2 .*its prev is not"):
        ledger.balance()
    # after a chained record, every record must carry its prev
    path.write_bytes(b"\n".join(lines[:3]) + b"\n"
                     + json.dumps(dict(old, entry=3)).encode() + b"\n")
    with pytest.raises(ValueError, match=r"line 4 is not record 3 of the ledger \(no prev"):
        ledger.balance()
    path.write_text(json.dumps(dict(head, format=3)) + "\n")
    with pytest.raises(ValueError, match=r"line 1 is not a dpfix budget ledger of format 1/2 "
                                         r"\(format 3, which this dpfix does not read"):
        Ledger(path)


def test_a_total_below_zero_or_a_charge_below_zero_is_one_line(tmp_path, capsys, table):
    with pytest.raises(ValueError, match=r"^total: must be a finite number > 0, got '-.5'$"):
        Ledger(tmp_path / "l.jsonl", total="-.5")
    ledger = Ledger(tmp_path / "l.jsonl", total=1)
    with pytest.raises(ValueError, match=r"^eps: must be a finite number >= 0, got '-.5'$"):
        spend(ledger, "-.5")
    with open(ledger.path, "ab") as f:
        f.write(_record_line(ledger.path, "-.5"))
    with pytest.raises(ValueError, match=r"^ledger l.jsonl: line 2 is not record 1 of the "
                                         r"ledger \(eps: must be a finite number >= 0, got "
                                         r"'-.5'\); check the file$"):
        ledger.balance()
    rc, _, err = privatize(capsys, table, ledger.path)
    assert rc == 2 and len(err.splitlines()) == 1 and "line 2 is not record 1" in err
