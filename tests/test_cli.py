"""The ``dpfix`` command line as a whole: the command table, ``--version``, ``choices=``
taken from the library, help texts, and the one error policy (bad input exit 2, internal
failure exit 1, one line each; a closed standard output ends quietly)."""

from __future__ import annotations

import argparse
import ast
import io
import subprocess
import sys
from pathlib import Path

import pytest

import dpfix
import dpfix.cli
import dpfix.constructors as C
from dpfix.cli import COMMANDS, build_parser, main
from dpfix.numbers.exact import ExactnessError
from dpfix.numbers.numeric import PRODUCTION_EXTRA, require
from helpers import cli

SRC = Path(dpfix.__file__).resolve().parent




def subparsers() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions
                  if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


# ------------------------------------------------------------------ the table
def test_command_table_lists_every_command_module():
    """Each command module of src/dpfix/cli is in COMMANDS (and nothing else is), in the
    order of ``dpfix --help``."""
    modules = sorted(p.stem for p in (SRC / "cli").glob("*.py") if not p.stem.startswith("_"))
    assert sorted(COMMANDS) == modules
    assert list(subparsers()) == list(COMMANDS)
    for name, module in COMMANDS.items():
        assert module.__name__ == f"dpfix.cli.{name}"
        assert callable(module.add_parser) and callable(module.run)


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"dpfix {dpfix.__version__}"


def test_module_entry_point_and_console_script():
    from importlib.metadata import entry_points

    out = subprocess.run([sys.executable, "-m", "dpfix.cli", "--version"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == f"dpfix {dpfix.__version__}"
    (script,) = entry_points(group="console_scripts", name="dpfix")
    assert script.value == "dpfix.cli:main" and script.load() is main


def test_no_command_is_a_one_line_usage_error(capsys):
    rc, _, err = cli(capsys)
    assert rc == 2 and one_line(err).startswith("dpfix: error:")


# ------------------------------------------------------------------ choices and help
def _option(parser: argparse.ArgumentParser, dest: str) -> argparse.Action:
    return next(a for a in parser._actions if a.dest == dest)


def test_closed_options_take_their_choices_from_the_library():
    from dpfix.experiments import TARGETS
    from dpfix.release.privatizers import POSTPROCESSORS, PRIVATIZERS

    p = subparsers()
    privatize = p["privatize"]
    assert list(_option(privatize, "constructor").choices) == [
        name for name, info in C.CONSTRUCTORS.items() if info.release]
    assert list(_option(privatize, "selector").choices) == list(C.SELECTORS)
    assert list(_option(privatize, "privatizer").choices) == list(PRIVATIZERS)
    assert list(_option(privatize, "postprocess").choices) == list(POSTPROCESSORS)
    from dpfix.experiments.targets import EXTRA_TARGETS

    assert list(_option(p["reproduce"], "target").choices) == [*TARGETS, *EXTRA_TARGETS, "all"]
    from dpfix.cli.explore import WHAT

    assert list(_option(p["explore"], "what").choices) == list(WHAT)
    assert {"example1", "northwest", "delta"} <= set(WHAT)


@pytest.mark.parametrize("option, value", [("--constructor", "simplex"),
                                           ("--selector", "median"),
                                           ("--privatizer", "gauss"),
                                           ("--postprocess", "round")])
def test_unknown_name_is_refused_by_choices(option, value, capsys, tmp_path):
    rc, out, err = cli(capsys, "privatize", tmp_path / "t.csv", "--column", "k", "--epsilon",
                       "1", "--upper", "5", "--out", tmp_path / "o.csv", option, value)
    line = one_line(err)
    assert rc == 2 and out == "" and not list(tmp_path.iterdir())
    assert line.startswith("dpfix privatize: error:")
    assert f"{option}: invalid choice: '{value}'" in line


def test_unknown_reproduce_target_and_explore_name(capsys):
    rc, _, err = cli(capsys, "reproduce", "fig4")
    assert rc == 2 and "invalid choice: 'fig4'" in one_line(err)
    rc, _, err = cli(capsys, "explore", "example2")
    assert rc == 2 and "invalid choice: 'example2'" in one_line(err)


@pytest.mark.parametrize("name", [None, *COMMANDS])
def test_help_is_plain_text(name, capsys):
    """No reStructuredText markup in any --help: double backticks or :func:-style roles."""
    rc = main(["--help"] if name is None else [name, "--help"])
    text = capsys.readouterr().out
    assert rc == 0 and text.startswith("usage: dpfix")
    for markup in ("``", ":func:", ":mod:", ":class:", ":data:", ":meth:", ":attr:"):
        assert markup not in text, (name, markup)


# ------------------------------------------------------------------ the error policy
def _failing(monkeypatch, error: BaseException) -> None:
    def run(args):
        raise error
    monkeypatch.setattr(dpfix.cli.explore, "run", run)


@pytest.mark.parametrize("error, code, start", [
    (ValueError("--z: bad\nvalue"), 2, "dpfix explore: error: --z: bad value"),
    (ExactnessError("lam: a float 1.5 where an exact number is needed"), 2,
     "dpfix explore: error: lam: a float 1.5"),
    (FileNotFoundError("input file x.csv not found"), 2, "dpfix explore: error: input file"),
    (PermissionError(13, "Permission denied", "out.csv"), 2, "dpfix explore: error: [Errno 13]"),
    (RuntimeError("solver gave up"), 1, "dpfix explore: failed: RuntimeError: solver gave up"),
    (MemoryError(), 1, "dpfix explore: failed: MemoryError: MemoryError"),
    (OverflowError("math range error"), 1, "dpfix explore: failed: OverflowError: math range"),
    (KeyboardInterrupt(), 130, "dpfix explore: interrupted"),
])
def test_error_policy(error, code, start, monkeypatch, capsys):
    _failing(monkeypatch, error)
    rc, out, err = cli(capsys, "explore")
    assert rc == code and out == ""
    assert one_line(err).startswith(start)


def test_missing_production_module_names_the_extra(monkeypatch, capsys):
    _failing(monkeypatch, ModuleNotFoundError("No module named 'pandas'", name="pandas"))
    rc, _, err = cli(capsys, "explore")
    line = one_line(err)
    assert rc == 2 and line == ("dpfix explore: error: pandas is not installed; it comes with "
                                "the production extra: pip install 'dpfix[production]'")


def test_missing_extra_through_require(monkeypatch, capsys):
    """dpfix.numbers.numeric.require's ImportError (the library's lazy imports) is one line too."""
    monkeypatch.setitem(sys.modules, "pywt", None)
    with pytest.raises(ImportError) as info:
        require("pywt")
    _failing(monkeypatch, info.value)
    rc, _, err = cli(capsys, "explore")
    assert rc == 2 and "PyWavelets is not installed" in one_line(err)


def test_a_bug_keeps_its_traceback(monkeypatch):
    """Exceptions outside the policy (a missing module that is no extra, a TypeError) are
    bugs: they are not turned into a one-line message."""
    _failing(monkeypatch, ModuleNotFoundError("No module named 'dpfix.nope'", name="dpfix.nope"))
    with pytest.raises(ModuleNotFoundError):
        main(["explore"])
    _failing(monkeypatch, ImportError("cannot import name 'nope' from 'dpfix.theory.scales'",
                                      name="dpfix.theory.scales"))
    with pytest.raises(ImportError):
        main(["explore"])
    _failing(monkeypatch, KeyError("x"))
    with pytest.raises(KeyError):
        main(["explore"])


def test_bad_input_exits_2_with_one_line(capsys, tmp_path):
    rc, out, err = cli(capsys, "explore", "--lam", "1")
    assert rc == 2 and out == "" and one_line(err).startswith("dpfix explore: error: ")
    rc, out, err = cli(capsys, "privatize", tmp_path / "missing.csv", "--column", "k",
                       "--epsilon", "1", "--upper", "5", "--out", tmp_path / "o.csv")
    assert rc == 2 and "not found" in one_line(err) and not list(tmp_path.iterdir())


def test_internal_failure_of_a_constructor_exits_1_with_one_line(monkeypatch, capsys, tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("name,k\n" + "".join(f"r{i},{i % 7}\n" for i in range(50)))

    def broken(*args, **kwargs):
        raise RuntimeError("HiGHS: status 4, numerical difficulties")
    monkeypatch.setattr(C, "unfixed_optimum", broken)
    rc, out, err = cli(capsys, "privatize", src, "--column", "k", "--epsilon", "1", "--upper",
                       "6", "--constructor", "unfixed", "--out", tmp_path / "o.csv",
                       "--report", tmp_path / "r.json", "--seed", "0", "--quiet")
    line = one_line(err)
    assert rc == 1 and out == ""
    assert line.startswith("dpfix privatize: failed: RuntimeError: HiGHS: status 4")
    assert "nothing written" in line and sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]


# ------------------------------------------------------------------ a closed pipe
class _ClosedPipe(io.TextIOBase):
    """A standard output whose reader has gone away (and that has no file descriptor)."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_closed_stdout_ends_quietly_in_process(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert main(["explore", "--n", "2"]) == 141
    assert capsys.readouterr().err == ""


def test_closed_stdout_pipe_ends_quietly():
    """``dpfix verify --only "Theorem 1" | (reader that exits at once)``: no traceback, no
    "Exception ignored" message from the interpreter's final flush."""
    proc = subprocess.Popen([sys.executable, "-m", "dpfix.cli", "verify", "--only",
                             "Theorem 1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader goes away before the table is printed
    err = proc.stderr.read().decode()
    rc = proc.wait(timeout=300)
    assert rc in (0, 141), err
    assert "Traceback" not in err and "Exception ignored" not in err and "Broken" not in err
    assert "Theorem 1: ok" in err  # the check did run; only its table had nowhere to go


# ------------------------------------------------------------------ without the extras
BLOCKED = ", ".join(repr(m) for m in sorted(PRODUCTION_EXTRA))
NO_EXTRAS = (f"import sys\nfor m in ({BLOCKED},):\n    sys.modules[m] = None\n"
             "from dpfix.cli import main\nsys.exit(main(sys.argv[1:]))\n")


def test_research_commands_need_no_production_extra(tmp_path):
    """With every module of the production extra unimportable, explore and --help work
    and privatize stops in one line naming the extra."""
    def run(*argv):
        return subprocess.run([sys.executable, "-c", NO_EXTRAS, *map(str, argv)],
                              capture_output=True, text=True, timeout=300, cwd=tmp_path)

    out = run("explore", "--n", "2")
    assert out.returncode == 0, out.stderr
    assert "R_F[z]" in out.stdout
    assert run("--help").returncode == 0
    csv = tmp_path / "t.csv"
    csv.write_text("k\n1\n2\n")
    out = run("privatize", csv, "--column", "k", "--epsilon", "1", "--upper", "3", "--out",
              tmp_path / "o.csv")
    line = one_line(out.stderr)
    assert out.returncode == 2 and "pip install 'dpfix[production]'" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]


# ------------------------------------------------------------------ the house rules
def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def test_nothing_imports_the_cli_and_argparse_stays_in_it():
    for path in SRC.rglob("*.py"):
        if "cli" in path.relative_to(SRC).parts or path == SRC / "__main__.py":
            continue  # the CLI, and python -m dpfix, which runs it
        names = _imports(path)
        assert not any(n == "dpfix.cli" or n.startswith("dpfix.cli.") for n in names), path
        assert "argparse" not in names, path


# ------------------------------------------------------------------ signals and warnings
def _sends(monkeypatch, signum):
    """explore.run sends ``signum`` to this process, then waits for it to act."""
    import os
    import signal
    import time

    def run(args):
        os.kill(os.getpid(), signum)
        time.sleep(5)  # the handler interrupts this
        return 0
    monkeypatch.setattr(dpfix.cli.explore, "run", run)
    return signal


@pytest.mark.parametrize("name, code", [("SIGTERM", 143), ("SIGHUP", 129), ("SIGINT", 130)])
def test_stop_signals_are_one_line_with_128_plus_the_signal(name, code, monkeypatch, capsys):
    import signal

    signum = getattr(signal, name)
    before = signal.getsignal(signum)
    _sends(monkeypatch, signum)
    rc, out, err = cli(capsys, "explore")
    by = "" if name == "SIGINT" else f" by {name}"
    assert (rc, out, err) == (code, "", f"dpfix explore: interrupted{by}\n")
    assert signal.getsignal(signum) is before  # the handlers are restored


def test_an_ignored_signal_stays_ignored(monkeypatch, capsys):
    """``nohup dpfix ...``: SIGHUP is ignored by the caller, and stays so."""
    import signal

    old = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        def run(args):
            import os
            os.kill(os.getpid(), signal.SIGHUP)
            return 0
        monkeypatch.setattr(dpfix.cli.explore, "run", run)
        assert cli(capsys, "explore") == (0, "", "")
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, old)


def test_warnings_are_one_line_notes(monkeypatch, capsys):
    import warnings

    def run(args):
        for _ in range(3):
            warnings.warn("a UserWarning from a library", UserWarning, stacklevel=1)
        warnings.warn("old API", DeprecationWarning, stacklevel=1)
        print("done")
        return 0
    monkeypatch.setattr(dpfix.cli.explore, "run", run)
    rc, out, err = cli(capsys, "explore")
    assert (rc, out) == (0, "done\n")
    assert err == "dpfix explore: warning: UserWarning: a UserWarning from a library\n"


def test_reproduce_says_what_an_interrupt_keeps(monkeypatch, capsys, tmp_path):
    import dpfix.experiments

    def interrupted(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(dpfix.experiments, "reproduce", interrupted)
    rc, _, err = cli(capsys, "reproduce", "fig3", "--quick", "--out", tmp_path / "r")
    assert rc == 130
    assert one_line(err) == (f"dpfix reproduce: interrupted; finished cells are kept in "
                             f"{tmp_path / 'r' / 'cells.jsonl'} (a rerun continues from them)")
