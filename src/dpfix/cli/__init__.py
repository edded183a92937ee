"""Floor 7, cli: the ``dpfix`` command line, one sub-command per module of this package;
the roof, imported by nothing (it may import every floor).

Each command module (``explore``, ``verify``, ``privatize``, ``reproduce``,
``certify``, ``search``) exposes ``add_parser(subparsers)`` and ``run(args) -> int``; this
file wires them (:data:`COMMANDS`) and holds the one error policy of every command:

- **bad input, exit code 2, one line** ``dpfix CMD: error: ...``: argparse's
  own errors (an unknown option, a value outside ``choices``), ``ValueError``
  (a bad value, a table that cannot be read; also
  :class:`dpfix.release.result.NotPrivateError`, a ``ValueError``: a mechanism that
  fails its eps-DP check for the requested budget is refused before any row is
  drawn, with exit code 2 as ``dpfix privatize`` has always done and its tests
  require), :class:`dpfix.numbers.exact.ExactnessError` (a float
  where an exact number is needed), ``OSError`` on a user's path (a missing
  file, a folder without permission), and a missing optional dependency of
  the ``production`` extra (the line names the extra to install);
- **internal failure, exit code 1, one line** ``dpfix CMD: failed: TYPE: ...``:
  ``RuntimeError`` (a solver that gives up, a construction that fails its own
  check), ``MemoryError``, ``OverflowError``;
- **a closed standard output** (``dpfix verify | head -1``) ends quietly with
  exit code 141 (128 + SIGPIPE, what the shell reports for a program killed by
  the closed pipe), without a traceback: standard output is redirected to
  ``os.devnull`` so that Python's final flush does not fail again, as the
  Python documentation of ``signal`` recommends; a standard output that cannot
  be written (``> /dev/full``) is an error like any unusable path, exit code 2;
- **signals**: for the duration of a command SIGINT (``Ctrl-C``), SIGTERM and
  SIGHUP raise :class:`Interrupted` (a KeyboardInterrupt), so that every
  clean-up runs (``dpfix privatize`` removes its temporaries:
  :class:`dpfix.io.commit.StagedFiles`); the run ends with one line
  ``dpfix CMD: interrupted[ by SIGTERM][; OUTCOME]`` (the command says what
  was written: ``nothing written``) and exit code 128 + the signal's number:
  130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP). A signal that the caller set to
  be ignored (``nohup``, a background job's SIGINT) stays ignored; the
  previous handlers are restored when :func:`main` returns. Only the first
  signal counts: one that arrives while its clean-up runs is dropped (no
  second exception cuts the clean-up short), and the process then ends with
  the first one's exit code;
- **warnings** never reach the terminal as Python warnings: a command module
  with ``STRICT_WARNINGS = True`` (``privatize``) turns numerical
  RuntimeWarnings into errors (exit code 1, one line); other commands print
  each distinct warning as one line ``dpfix CMD: warning: ...`` after a run
  that did not fail (deprecation notices of libraries are dropped).

Any other exception is a bug in dpfix and keeps its traceback. Nothing in the
library imports this package.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from dpfix import __version__
from dpfix.cli import certify, docs, explore, privatize, reproduce, search, verify
from dpfix.io.commit import blocked_signals
from dpfix.numbers.exact import ExactnessError
from dpfix.numbers.numeric import PRODUCTION_EXTRA

__all__ = ["main", "build_parser", "COMMANDS", "EXIT_CLOSED_PIPE", "Interrupted",
           "STOP_SIGNALS"]

#: The commands, in the order ``dpfix --help`` lists them: name -> module with
#: ``add_parser(subparsers)`` and ``run(args) -> int``. A new command is a module in
#: this folder and one entry here (tests/test_cli.py checks that the two agree).
COMMANDS = {
    "explore": explore,
    "verify": verify,
    "privatize": privatize,
    "reproduce": reproduce,
    "certify": certify,
    "docs": docs,
    "search": search,
}

#: Exit code of a command whose standard output was closed (128 + SIGPIPE).
EXIT_CLOSED_PIPE = 141
#: The signals turned into :class:`Interrupted` while a command runs.
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                     if hasattr(signal, name))
#: Warnings meant for developers, not for a user of the command line.
_DEVELOPER_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)


class Interrupted(KeyboardInterrupt):
    """A command stopped by a signal (SIGINT, SIGTERM or SIGHUP); ``signum`` is its number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)


@contextmanager
def _signals_raise(program: bool = False) -> Iterator[None]:
    """While the block runs, :data:`STOP_SIGNALS` raise :class:`Interrupted` (in the main
    thread only, and not the ones the caller ignores); the old handlers come back after.

    Only the first signal raises: a later one (two signals a moment apart) is dropped, so
    that the clean-up the first one started runs to its end and the first decides the exit
    code. With ``program`` (``main`` runs the process's own command line) an interrupted
    block leaves the signals ignored instead of restoring the default actions: the process
    is ending with the first signal's exit code, and a later signal must not kill it (exit
    -15) or raise a KeyboardInterrupt with a traceback in its last instants."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    stopping: list[int] = []

    def handler(signum: int, frame: object) -> None:
        if stopping:  # a later signal while the first one's clean-up runs: the first decides
            return
        stopping.append(signum)
        raise Interrupted(signum)
    saved = {}
    with blocked_signals(STOP_SIGNALS):  # every handler set before any signal is handled
        for signum in STOP_SIGNALS:
            old = signal.getsignal(signum)
            if old is signal.SIG_IGN or old is None:  # nohup, a background job: stay ignored
                continue
            saved[signum] = signal.signal(signum, handler)
    try:
        yield
    finally:
        with blocked_signals(saved):  # no signal between two restored handlers
            for signum, old in saved.items():
                signal.signal(signum, signal.SIG_IGN if program and stopping else old)


def _interrupted(prog: str, exc: KeyboardInterrupt) -> int:
    signum = getattr(exc, "signum", signal.SIGINT)
    by = "" if signum == signal.SIGINT else f" by {signal.Signals(signum).name}"
    outcome = getattr(exc, "outcome", None)
    print(f"{prog}: interrupted{by}{'; ' + outcome if outcome else ''}", file=sys.stderr)
    return 128 + int(signum)


def _report_warnings(prog: str, caught: list) -> None:
    """Each distinct warning of a run that did not fail, as one line on stderr."""
    seen = set()
    for w in caught:
        if issubclass(w.category, _DEVELOPER_WARNINGS):
            continue
        line = f"{prog}: warning: {w.category.__name__}: {_one_line(w.message)}"
        if line not in seen:
            seen.add(line)
            print(line, file=sys.stderr)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (no usage block), exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``dpfix`` parser with every command of :data:`COMMANDS`."""
    parser = _Parser(
        prog="dpfix",
        description="Differentially private count mechanisms with fixed points: the exact "
                    "theory of the paper (explore, verify, certify) and the production "
                    "pipeline (privatize, reproduce).",
        epilog="dpfix COMMAND --help describes each command. The documentation pages "
               "installed with dpfix (the mathematics, the guarantees): dpfix docs NAME "
               "prints one (dpfix docs: the list).")
    parser.add_argument("--version", action="version", version=f"dpfix {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)
    for module in COMMANDS.values():
        module.add_parser(sub)
    return parser


def _missing_extra(exc: ImportError) -> str | None:
    """The package of the production extra whose absence raised ``exc`` (directly, or
    through :func:`dpfix.numbers.numeric.require`), or None: then the ImportError is a bug."""
    for e in (exc, exc.__cause__):
        name = getattr(e, "name", None) if isinstance(e, ImportError) else None
        if name and name.split(".")[0] in PRODUCTION_EXTRA:
            return PRODUCTION_EXTRA[name.split(".")[0]]
    return None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _quiet_stdout() -> None:
    """After a closed pipe: send what is left of standard output to os.devnull."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (a test's capture)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dpfix`` with ``argv`` (default ``sys.argv[1:]``) and return the exit code.

    See the module docstring for the error policy. ``--help`` and
    ``--version`` return 0 after printing. Without ``argv`` (the installed
    ``dpfix`` script, ``python -m dpfix.cli``) ``main`` runs the process's own
    command line: after an interruption it leaves SIGINT, SIGTERM and SIGHUP
    ignored, since the process is ending with the first signal's exit code.
    """
    state = {"prog": "dpfix", "quiet": False}
    with _signals_raise(program=argv is None), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for category in _DEVELOPER_WARNINGS:
            warnings.simplefilter("ignore", category)
        try:
            code = _main(argv, state)
            if code in (0, 1) and not state["quiet"]:
                _report_warnings(state["prog"], caught)
        except KeyboardInterrupt as exc:  # a second signal while the first was reported
            code = 128 + int(getattr(exc, "signum", signal.SIGINT))
    try:
        sys.stdout.flush()
    except OSError:  # reported already: the interpreter's final flush must not fail again
        _quiet_stdout()
    return code


def _main(argv: Sequence[str] | None, state: dict) -> int:
    prog = "dpfix"
    try:
        parser = build_parser()
        try:
            args = parser.parse_args(None if argv is None else [str(a) for a in argv])
        except SystemExit as exc:  # --help, --version, or a one-line usage error
            sys.stdout.flush()
            return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        prog = state["prog"] = f"dpfix {args.command}"
        state["quiet"] = bool(getattr(args, "quiet", False))
        module = COMMANDS[args.command]
        if getattr(module, "STRICT_WARNINGS", False):
            warnings.simplefilter("error", RuntimeWarning)
        code = int(module.run(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not in Python's final flush
        return code
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_CLOSED_PIPE
    except KeyboardInterrupt as exc:
        return _interrupted(prog, exc)
    except ImportError as exc:
        package = _missing_extra(exc)
        if package is None:
            raise
        print(f"{prog}: error: {package} is not installed; it comes with the production "
              "extra: pip install 'dpfix[production]'", file=sys.stderr)
        return 2
    except (ValueError, ExactnessError, OSError) as exc:  # bad input or an unusable path
        print(f"{prog}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except (RuntimeError, MemoryError, OverflowError, Warning) as exc:  # a computation failed
        print(f"{prog}: failed: {type(exc).__name__}: {_one_line(exc)}", file=sys.stderr)
        return 1
