"""A stop signal in the last instants of ``dpfix privatize`` (docs/failures.md, Signals):
after the commit, while the summary is printed, once the command has returned, when the
process ends; a Dask dataset in place, its report being written. Every case ends with
one line and 128 + the signal's number, the outputs all in place (and said so) or none.

Each case runs the real command line (``dpfix.cli.main()`` on the process's own
arguments, as the installed script does) in a subprocess whose hook sends the signal to
the process itself at one chosen point: deterministic, no timing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")

#: The subprocess: ``HOOK`` names where the signal ``SIG`` is sent; the rest of argv is the
#: command line.
_PROGRAM = r"""
import os, signal, sys
hook, sig = sys.argv[1], getattr(signal, sys.argv[2])
del sys.argv[1:3]
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # as from a terminal
    signal.signal(s, signal.SIG_DFL)
signal.signal(signal.SIGINT, signal.default_int_handler)
import dpfix.cli as cli
from dpfix.cli import _privatize_outputs as outputs
from dpfix.cli import privatize
from dpfix.io import commit
from dpfix.release import dask as engines
from dpfix.release import table


def kill():
    os.kill(os.getpid(), sig)


def after(owner, name):
    real = getattr(owner, name)

    def hooked(*a, **k):
        out = real(*a, **k)
        kill()
        return out
    setattr(owner, name, hooked)


if hook == "commit":  # every output moved into place
    after(commit.StagedFiles, "commit")
elif hook == "summary":  # the summary printed, nothing moved yet
    after(outputs, "announce")
elif hook == "returned":  # the command returned its exit code
    after(privatize, "run")
elif hook == "warnings":  # main reports the run's warnings
    after(cli, "_report_warnings")
elif hook == "over":  # main knows the exit code
    after(cli._Stop, "over")
elif hook == "shutdown":  # Python shuts down (atexit), if it ever does
    import atexit
    atexit.register(kill)
elif hook == "exit":  # the process ends: the signal is held until it has
    real_exit = os._exit

    def ending(code):
        kill()
        real_exit(code)
    os._exit = ending
elif hook == "engine":  # the engine moved its dataset to the run's staged name
    real_rename = os.rename

    def rename(a, b):
        real_rename(a, b)
        if ".partial-" in str(a):
            kill()
    engines.os.rename = rename
elif hook == "released":  # the plan executed: the dataset under the staged name
    after(table, "execute")
elif hook == "report":  # the Dask report staged
    after(outputs, "stage_dask")
sys.argv[0] = "dpfix"
sys.exit(cli.main())  # as the installed script
"""

LINES = {"SIGTERM": "dpfix privatize: interrupted by SIGTERM",
         "SIGINT": "dpfix privatize: interrupted",
         "SIGHUP": "dpfix privatize: interrupted by SIGHUP"}


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("late")
    rng = np.random.default_rng(0)
    path = folder / "t.csv"
    pd.DataFrame({"id": [f"r{i}" for i in range(200)],
                  "k": rng.integers(0, 9, 200)}).to_csv(path, index=False)
    (folder / "ds").mkdir()
    for i in range(2):
        pd.DataFrame({"id": [f"p{i}-{j}" for j in range(50)],
                      "k": rng.integers(0, 9, 50)}).to_csv(folder / "ds" / f"p{i}.csv",
                                                           index=False)
    return folder


def _run(hook: str, sig: str, *argv) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _PROGRAM, hook, sig, *map(str, argv)],
                          capture_output=True, text=True, timeout=300)


def _local(small: Path, out_dir: Path, quiet: bool = True) -> list:
    """The command; ``quiet=False``: not quiet, unseeded (no warning of its own) and with
    a bound most counts exceed, so that main reports the run's top-coding warning."""
    return ["privatize", small / "t.csv", "--column", "k", "--epsilon", "1", "--upper",
            "9" if quiet else "2", "--out", out_dir / "o.csv", "--report", out_dir / "r.json",
            *(["--seed", "0", "--quiet"] if quiet else [])]


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT", "SIGHUP"])
@pytest.mark.parametrize("hook", ["commit", "returned", "warnings", "over"])
def test_a_signal_once_the_outputs_are_in_place(small, tmp_path, hook, sig):
    """The outputs are in place: the line says so, the exit code is 128 + N."""
    run = _run(hook, sig, *_local(small, tmp_path, quiet=hook != "warnings"))
    assert run.returncode == 128 + getattr(signal, sig), run.stderr
    *before, line = run.stderr.splitlines()
    assert line == (f"{LINES[sig]}; the outputs were complete and are in place "
                    f"({tmp_path / 'o.csv'}, {tmp_path / 'r.json'})"), run.stderr
    if hook == "warnings":  # the progress line, then the warning main reported
        assert len(before) == 2 and " rows (100%)" in before[0], run.stderr
        assert before[1].startswith("dpfix privatize: warning: TopCodingWarning"), run.stderr
    else:
        assert before == [], run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.csv", "r.json"]


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_signal_while_the_summary_is_printed(small, tmp_path, sig):
    """Before the moves: nothing written, whatever the summary said."""
    run = _run("summary", sig, *_local(small, tmp_path))
    assert run.returncode == 128 + getattr(signal, sig), run.stderr
    assert run.stderr.splitlines() == [f"{LINES[sig]}; nothing written"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("hook", ["shutdown", "exit"])
def test_the_process_ends_as_soon_as_main_knows_its_code(small, tmp_path, hook, sig):
    """No Python shutdown follows the run (where a signal would end the process by its
    default action, -15, or a KeyboardInterrupt's traceback, -2, the outputs in place and
    no line): the process ends once main knows its code, and a signal in that very last
    instant is held until it has ended: the run's code stands."""
    run = _run(hook, sig, *_local(small, tmp_path))
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.csv", "r.json"]


def _dask(small: Path, out_dir: Path) -> list:
    return ["privatize", small / "ds" / "*.csv", "--engine", "dask", "--column", "k",
            "--epsilon", "1", "--upper", "9", "--out", out_dir / "o", "--report",
            out_dir / "r.json", "--seed", "0", "--quiet"]


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("hook", ["engine", "released", "report"])
def test_dask_a_signal_before_the_commit_leaves_nothing(small, tmp_path, hook, sig):
    """The dataset written (under the run's staged name), the report not yet in place:
    nothing is left, the dataset included."""
    pytest.importorskip("dask.dataframe")
    run = _run(hook, sig, *_dask(small, tmp_path))
    assert run.returncode == 128 + getattr(signal, sig), run.stderr
    assert run.stderr.splitlines() == [f"{LINES[sig]}; nothing written"], run.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("hook", ["commit", "returned", "over"])
def test_dask_a_signal_once_the_outputs_are_in_place(small, tmp_path, hook, sig):
    """The dataset and the report in place: both stay, and the line names both."""
    pytest.importorskip("dask.dataframe")
    run = _run(hook, sig, *_dask(small, tmp_path))
    assert run.returncode == 128 + getattr(signal, sig), run.stderr
    assert run.stderr.splitlines() == [
        f"{LINES[sig]}; the outputs were complete and are in place "
        f"({tmp_path / 'o'}, {tmp_path / 'r.json'})"], run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o", "r.json"]
    assert len(pd.read_parquet(tmp_path / "o")) == 100


def test_dask_a_commit_that_fails_takes_the_dataset_back(small, tmp_path):
    """The report's move fails (its folder is gone once it is staged): the dataset, moved
    first, goes back and is removed; one line, exit 2."""
    pytest.importorskip("dask.dataframe")
    gone = tmp_path / "gone"
    gone.mkdir()
    program = _PROGRAM.replace('if hook == "commit":', """if hook == "rmdir":
    after(outputs, "stage_dask")
    kill = lambda: __import__("shutil").rmtree(os.environ["GONE"])  # noqa: E731
elif hook == "commit":""")
    argv = _dask(small, tmp_path)
    argv[argv.index("--report") + 1] = gone / "r.json"
    run = subprocess.run([sys.executable, "-c", program, "rmdir", "SIGTERM", *map(str, argv)],
                         capture_output=True, text=True, timeout=300,
                         env={**os.environ, "GONE": str(gone)})
    assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
    assert "does not exist any more" in run.stderr
    assert list(tmp_path.iterdir()) == []
