"""A real ``dpfix privatize`` stopped by a signal while it writes its output.

Each case starts the command in a subprocess on a table of a million rows (writing
it back takes about a second), waits until the staged ``.o.csv.<hex>.part`` file
holds its first rows, sends the signal and checks that no file is left, that
standard error holds one line and that the exit code is 128 + the signal's number
(docs/failures.md): unhandled, SIGTERM and SIGHUP would kill the process (exit
-15, -1) and leave the ``.part`` file.
SIGKILL cannot be handled: its leftover temporary must not trip the next run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")

ROWS = 1_000_000
#: How long a case may take before it is a failure (a loaded 2-core machine).
TIMEOUT = 60


@pytest.fixture(scope="module")
def big_table(tmp_path_factory) -> Path:
    """A CSV table of ROWS counts (about 10 MB), written once for every case."""
    path = tmp_path_factory.mktemp("signals") / "big.csv"
    k = np.random.default_rng(0).negative_binomial(2, 0.3, ROWS)
    with open(path, "w") as f:
        f.write("name,k\n")
        f.write("\n".join(f"r{i},{v}" for i, v in enumerate(k.tolist())))
        f.write("\n")
    return path


def _default_signals() -> None:  # the child starts as from a terminal, whatever runs pytest
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def _start(big_table: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "dpfix.cli", "privatize", str(big_table), "--column", "k",
         "--epsilon", "1", "--upper", "30", "--out", str(out), "--report",
         str(out.with_suffix(".json")), "--seed", "0", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_default_signals)


def _staged(folder: Path) -> list[Path]:
    return sorted(folder.glob(".o.csv.*.part"))


def _writing(folder: Path) -> bool:
    """The staged output exists and holds its first rows."""
    try:
        return any(p.stat().st_size > 0 for p in _staged(folder))
    except FileNotFoundError:
        return False


def _wait_for_staged_file(proc: subprocess.Popen, folder: Path) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not _writing(folder):
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"dpfix ended (code {proc.returncode}) before writing: {err}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("no staged file appeared")
        time.sleep(0.005)


@pytest.mark.parametrize("name, code, line", [
    ("SIGTERM", 143, "dpfix privatize: interrupted by SIGTERM; nothing written"),
    ("SIGHUP", 129, "dpfix privatize: interrupted by SIGHUP; nothing written"),
    ("SIGINT", 130, "dpfix privatize: interrupted; nothing written"),
])
def test_a_signal_while_writing_leaves_nothing(name, code, line, big_table, tmp_path):
    out = tmp_path / "o.csv"
    proc = _start(big_table, out)
    _wait_for_staged_file(proc, tmp_path)
    proc.send_signal(getattr(signal, name))
    stdout, stderr = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == code, stderr
    assert stderr.splitlines() == [line], stderr
    assert stdout == ""  # the summary comes only when every output is complete
    assert list(tmp_path.iterdir()) == []


def test_sigkill_leftover_does_not_trip_the_next_run(big_table, tmp_path):
    out = tmp_path / "o.csv"
    proc = _start(big_table, out)
    _wait_for_staged_file(proc, tmp_path)
    proc.kill()
    proc.communicate(timeout=TIMEOUT)
    (leftover,) = _staged(tmp_path)  # SIGKILL cannot be handled: its temporary stays
    proc = _start(big_table, out)
    stdout, stderr = proc.communicate(timeout=TIMEOUT * 2)
    assert proc.returncode == 0, stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([leftover.name, "o.csv",
                                                                 "o.json"])
    with open(out) as f:
        assert sum(1 for _ in f) == ROWS + 1


def _expected_line(signum: int) -> str:
    by = "" if signum == signal.SIGINT else f" by {signal.Signals(signum).name}"
    return f"dpfix privatize: interrupted{by}; nothing written"


@pytest.mark.parametrize("first, second", [("SIGTERM", "SIGTERM"), ("SIGTERM", "SIGINT"),
                                           ("SIGHUP", "SIGTERM")])
def test_a_second_signal_during_the_clean_up_changes_nothing(first, second, big_table,
                                                              tmp_path):
    """The first signal starts the clean-up; the second follows 0.5 ms later and again every
    0.5 ms until the process has ended, so that some arrive while the clean-up runs and some
    after it: still one line, 128 + the signal's number, and no file left."""
    out = tmp_path / "o.csv"
    proc = _start(big_table, out)
    _wait_for_staged_file(proc, tmp_path)
    proc.send_signal(getattr(signal, first))
    deadline = time.monotonic() + TIMEOUT
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.0005)
        proc.send_signal(getattr(signal, second))  # does nothing once the process has ended
    stdout, stderr = proc.communicate(timeout=TIMEOUT)
    # both may be pending before Python runs a handler: then the lower-numbered one is first
    codes = {128 + getattr(signal, first), 128 + getattr(signal, second)}
    assert proc.returncode in codes, stderr
    assert stderr.splitlines() == [_expected_line(proc.returncode - 128)], stderr
    assert stdout == ""
    assert list(tmp_path.iterdir()) == []


def _start_stdin(big_table: Path, tmp: Path, out: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "dpfix.cli", "privatize", "-", "--column", "k", "--epsilon",
         "1", "--upper", "30", "--out", out, "--seed", "0", "--quiet"],
        stdin=open(big_table, "rb"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=_default_signals, env={**os.environ, "TMPDIR": str(tmp)})


def test_sigkill_with_stdin_leaves_no_copy_of_the_input(big_table, tmp_path):
    """Standard input never becomes a plain file that SIGKILL leaves behind; the scratch
    folder of a killed run (it stages ``--out -``) is removed by the next run."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = _start_stdin(big_table, tmp, "-")
    deadline = time.monotonic() + TIMEOUT
    while not any(p.stat().st_size > 0 for p in tmp.glob("dpfix-*/.stdout.csv.*.part")):
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, "no staged file appeared"
        time.sleep(0.005)
    proc.kill()
    proc.communicate(timeout=TIMEOUT)
    first_rows = big_table.read_bytes()[:200].split(b"\n")[1]  # e.g. b"r0,3"
    leftovers = [p for p in tmp.rglob("*") if p.is_file()]
    assert leftovers, "the killed run staged its output in a scratch folder"
    for p in leftovers:
        assert first_rows not in p.read_bytes(), f"{p} holds a copy of the input"
    small = tmp_path / "small.csv"
    small.write_text("name,k\na,1\n")
    proc = _start_stdin(small, tmp, str(tmp_path / "o.csv"))
    stdout, stderr = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0, stderr
    assert list(tmp.iterdir()) == []  # the killed run's scratch folder is gone
