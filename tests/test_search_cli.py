"""``dpfix search FILE``: the smallest counterexample of a user's predicate, exit codes
0 (none), 1 (found), 2 (bad input)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from dpfix.explore.instances import Instance
from helpers import cli

MONOTONE = """
def predicate(T, inst):
    n = inst.n
    return any(all(T[i, j] <= T[i + 1, j] for i in range(n - 1)) or
               all(T[i, j] >= T[i + 1, j] for i in range(n - 1)) for j in range(n))
"""


@pytest.fixture
def conj(tmp_path):
    def write(text: str, name: str = "conj.py"):
        path = tmp_path / name
        path.write_text(text)
        return path
    return write


def test_found_prints_exactly_and_exits_1(capsys, conj) -> None:
    path = conj(MONOTONE)
    rc, out, err = cli(capsys, "search", path, "--over", "F", "--n", "2..4", "--lam",
                       "2,3/2", "--z", "compositions:6", "--jobs", "2")
    assert rc == 1, err
    assert "counterexample over F at n = 3, lam = 2, z = (1/3, 1/3, 1/3)" in out
    assert "[1/4  7/20  2/5]" in out
    line = next(x for x in out.splitlines() if x.startswith("instance: "))
    assert eval(line.removeprefix("instance: "), {"Fraction": Fraction,
                                                   "Instance": Instance}) == \
        Instance(3, 2, (Fraction(1, 3),) * 3)
    rc1, out1, _ = cli(capsys, "search", path, "--n", "2..4", "--lam", "2,3/2", "--z",
                       "compositions:6")
    assert (rc1, out1) == (rc, out)  # jobs 1 and 2 agree


def test_none_found_exits_0(capsys, conj) -> None:
    path = conj("def holds(x, inst):\n    return True\n")
    rc, out, err = cli(capsys, "search", path, "--function", "holds", "--over", "RF-pairs",
                       "--n", "2", "--z", "1/2,1/2;1/3,2/3")
    assert rc == 0, err
    assert "held over RF-pairs on every one of the 2 instances visited" in out


def test_budget_and_cache(capsys, conj, tmp_path) -> None:
    path = conj(MONOTONE)
    cache = tmp_path / "seen.jsonl"
    rc, out, err = cli(capsys, "search", path, "--n", "2", "--z", "compositions:9",
                       "--budget", "4", "--cache", cache)
    assert rc == 0 and "reached after 4 instances" in out
    assert len(cache.read_text().splitlines()) == 4
    rc, out, err = cli(capsys, "search", path, "--n", "2", "--z", "compositions:3",
                       "--cache", cache, "--budget", "30s")
    assert rc == 0 and "on every one of the 5 instances visited" in out


def test_mechanism_and_instance_overs(capsys, conj) -> None:
    path = conj("def predicate(M, inst):\n    return bool(M.matrix[0, 0] < 1)\n")
    rc, out, _ = cli(capsys, "search", path, "--over", "mechanism", "--n", "2", "--z",
                     "1/2,1/2;1,0")
    assert rc == 1 and "z = (1, 0)" in out
    path = conj("def predicate(inst):\n    return inst.lam < 3\n", "lam.py")
    rc, out, _ = cli(capsys, "search", path, "--over", "instance", "--n", "2", "--lam",
                     "height:3")
    # the named targets (--z's default), for each lam of height <= 3: 2, 3/2, 3
    assert rc == 1 and "n = 2, lam = 3, z = (1/2, 1/2)" in out and "instance 9 visited" in out


@pytest.mark.parametrize("argv, message", [
    (["missing.py"], "No such file"),
    (["{conj}", "--function", "nope"], "defines no function 'nope'"),
    (["{conj}", "--n", "2..x"], "--n: cannot read"),
    (["{conj}", "--lam", "1"], "--lam"),
    (["{conj}", "--z", "1/2,1/3"], "--z"),
    (["{conj}", "--over", "G"], "over: unknown 'G'"),
    (["{conj}", "--budget", "soon"], "budget"),
    (["{conj}", "--over", "U_delta"], "needs delta="),
])
def test_bad_input_exits_2_with_one_line(capsys, conj, tmp_path, argv, message) -> None:
    path = conj(MONOTONE)
    argv = [a.format(conj=path) if a != "missing.py" else tmp_path / a for a in argv]
    rc, out, err = cli(capsys, "search", *argv)
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_a_predicate_that_raises(capsys, conj) -> None:
    path = conj("def predicate(T, inst):\n    return 1 / 0 > 1\n")
    rc, out, err = cli(capsys, "search", path, "--n", "2")
    assert rc == 2 and out == ""
    assert "ZeroDivisionError" in err and "Traceback" in err
    assert err.strip().splitlines()[-1].startswith("dpfix search: error: conj.py:predicate "
                                                   "raised ZeroDivisionError")
    assert "Instance(n=2" in err.strip().splitlines()[-1]


def test_a_file_that_does_not_import(capsys, conj) -> None:
    rc, out, err = cli(capsys, "search", conj("def predicate(:\n"), "--n", "2")
    assert rc == 2 and "SyntaxError" in err.strip().splitlines()[-1]


# ------------------------------------------------------------------ what is not a bool
@pytest.mark.parametrize("body, message", [
    ("return None", "predicate conj.py:predicate returned NoneType None at Instance(n=2"),
    ("return T", "predicate conj.py:predicate returned ndarray array([[Fraction("),
    ("import sys\n    sys.exit(0)", "conj.py:predicate called sys.exit (SystemExit: 0) at "
                                  "Instance(n=2"),
    ("raise SystemExit('done')", "conj.py:predicate called sys.exit (SystemExit: done) at"),
])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_predicate_that_returns_no_bool_or_exits_is_bad_input(capsys, conj, body, message,
                                                                  jobs) -> None:
    path = conj(f"def predicate(T, inst):\n    {body}\n")
    rc, out, err = cli(capsys, "search", path, "--n", "2", "--jobs", jobs)
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("dpfix search: error: " + message), err


# ------------------------------------------------------------------ no instance at all
@pytest.mark.parametrize("argv, message", [
    (["--z", "random:-1"], "random:COUNT needs COUNT >= 1 (else no target at all), got -1"),
    (["--z", "random:0"], "random:COUNT needs COUNT >= 1"),
    (["--z", "compositions:0"], "compositions:N needs N >= 1"),
    (["--n", "2", "--z", "1/3,1/3,1/3"], "n, lam and z give no instance"),
])
def test_an_empty_set_of_instances_is_refused(capsys, conj, argv, message) -> None:
    rc, out, err = cli(capsys, "search", conj(MONOTONE), *argv)
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_a_cache_that_is_a_folder_is_named(capsys, conj, tmp_path) -> None:
    rc, out, err = cli(capsys, "search", conj(MONOTONE), "--n", "2", "--cache", tmp_path)
    assert rc == 2 and out == ""
    assert err.strip() == (f"dpfix search: error: cache: {str(tmp_path)!r} is a folder; give "
                           "the path of a file (JSON lines, created if missing)")


# ------------------------------------------------------------------ a predicate that never returns
NEVER = """
import time


def predicate(inst):
    while True:
        time.sleep(0.05)
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_time_budget_stops_a_predicate_that_never_returns(capsys, conj, jobs) -> None:
    path = conj(NEVER)
    rc, out, err = cli(capsys, "search", path, "--over", "instance", "--n", "2", "--z",
                       "compositions:3", "--budget", "2s", "--jobs", jobs)
    assert rc == 0, err
    assert out.startswith("no counterexample: conj.py:predicate held over instance on every "
                          "one of the 0 instances visited; budget (2 s) reached after 0 "
                          "instances"), out


def test_a_worker_that_dies_is_one_line_naming_the_instance(capsys, conj) -> None:
    path = conj("import os\n\n\ndef predicate(inst):\n    if inst.z[0] == 1:\n"
                "        os._exit(3)\n    return True\n")
    rc, out, err = cli(capsys, "search", path, "--over", "instance", "--n", "2", "--z",
                       "compositions:3", "--jobs", "2")
    assert rc == 1 and out == ""
    assert err.splitlines() == ["dpfix search: failed: RuntimeError: a worker process ended "
                                "(exit code 3) while it checked Instance(n=2, lam=Fraction(2, "
                                "1), z=(Fraction(1, 1), Fraction(0, 1)))"], err
