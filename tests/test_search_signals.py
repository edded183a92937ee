"""A real ``dpfix search --jobs 2`` whose predicate never returns, ended by a signal or by
its time budget: one line on stderr, exit code 128 + the signal's number (or 0 at the
budget), and no worker process left behind.

Each predicate call first leaves a file named by its process id in the folder ``$MARK``,
so the test knows the workers and waits until both run the predicate."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")

#: How long a case may take before it is a failure (a loaded 2-core machine).
TIMEOUT = 90

NEVER = """
import os
import pathlib
import time


def predicate(inst):
    pathlib.Path(os.environ["MARK"], str(os.getpid())).touch()
    while True:
        time.sleep(0.05)
"""


def _default_signals() -> None:  # the child starts as from a terminal, whatever runs pytest
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def _start(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen, Path]:
    conj = tmp_path / "never.py"
    conj.write_text(NEVER)
    mark = tmp_path / "mark"
    mark.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dpfix.cli", "search", str(conj), "--over", "instance",
         "--n", "2", "--z", "compositions:9", "--jobs", "2", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_default_signals, env={**os.environ, "MARK": str(mark)})
    return proc, mark


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state != "Z"


def _wait_for_workers(proc: subprocess.Popen, mark: Path, count: int = 2) -> list[int]:
    deadline = time.monotonic() + TIMEOUT
    while len(list(mark.iterdir())) < count:
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"dpfix search ended (code {proc.returncode}) first: {err}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("the workers did not start the predicate")
        time.sleep(0.05)
    pids = [int(p.name) for p in mark.iterdir()]
    assert proc.pid not in pids  # the predicate runs in the worker processes
    return pids


def _none_alive(pids: list[int]) -> bool:
    deadline = time.monotonic() + 10  # reaped by their parent before it ends; else by init
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(_alive(p) for p in pids)


@pytest.mark.parametrize("name, code, line", [
    ("SIGTERM", 143, "dpfix search: interrupted by SIGTERM"),
    ("SIGINT", 130, "dpfix search: interrupted"),
    ("SIGHUP", 129, "dpfix search: interrupted by SIGHUP"),
])
def test_a_signal_ends_the_search_and_its_workers(name, code, line, tmp_path):
    proc, mark = _start(tmp_path)
    workers = _wait_for_workers(proc, mark)
    proc.send_signal(getattr(signal, name))
    try:
        stdout, stderr = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        for pid in workers:
            os.kill(pid, signal.SIGKILL)
        pytest.fail(f"dpfix search did not end after {name}")
    assert proc.returncode == code, stderr
    assert stderr.splitlines() == [line], stderr
    assert stdout == ""
    assert _none_alive(workers), f"workers left behind: {workers}"


def test_the_time_budget_ends_workers_that_never_return(tmp_path):
    proc, mark = _start(tmp_path, "--budget", "20s")
    workers = _wait_for_workers(proc, mark)
    try:
        stdout, stderr = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        for pid in workers:
            os.kill(pid, signal.SIGKILL)
        pytest.fail("the budget did not end the search")
    assert proc.returncode == 0, stderr
    assert stdout.startswith("no counterexample: never.py:predicate held over instance on "
                             "every one of the 0 instances visited; budget (20 s) reached")
    assert stderr == ""
    assert _none_alive(workers), f"workers left behind: {workers}"


def test_a_killed_search_leaves_no_worker_behind(tmp_path):
    """SIGKILL cannot be handled: the workers notice that their parent is gone."""
    proc, mark = _start(tmp_path)
    workers = _wait_for_workers(proc, mark)
    proc.kill()
    proc.communicate(timeout=TIMEOUT)
    assert _none_alive(workers), f"workers left behind: {workers}"
