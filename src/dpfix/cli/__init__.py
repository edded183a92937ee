"""Floor 9, cli: the ``dpfix`` command line, one sub-command per module of this package;
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
  130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP). A signal once the command has
  returned (its outputs in place, its warnings being reported) ends the run the
  same way, the line saying what the command wrote (its ``args.outcome``). A signal
  that the caller set to be ignored (``nohup``, a background job's SIGINT) stays
  ignored; the previous handlers are restored when :func:`main` returns, and the
  process's own command line (no ``argv``) ends at once, the stop signals blocked, so
  that none meets the interpreter's shutdown. Only the first signal counts: one that
  arrives while its clean-up runs is dropped (no second exception cuts the clean-up
  short), and the process then ends with the first one's exit code;
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


class _Stop:
    """What :func:`_signals_raise` saw: ``first``, the first stop signal (it decides the
    exit code), and ``late``, that signal when it came once the command was over
    (:meth:`over`), which :func:`main` then reports."""

    def __init__(self) -> None:
        self.first: int | None = None
        self.late: int | None = None
        self.done = False

    def over(self) -> None:
        """The command has returned its exit code: a signal now is recorded, not raised."""
        self.done = True


@contextmanager
def _signals_raise(program: bool = False) -> Iterator[_Stop]:
    """While the block runs, :data:`STOP_SIGNALS` raise :class:`Interrupted` (in the main
    thread only, and not the ones the caller ignores); the old handlers come back after.

    Only the first signal raises: a later one (two signals a moment apart) is dropped, so
    that the clean-up the first one started runs to its end and the first decides the exit
    code. Once the command is over (:meth:`_Stop.over`) the first signal is recorded
    (``late``) instead, for :func:`main` to report. With ``program`` (``main`` runs the
    process's own command line) the signals are blocked when the block ends, for good:
    one pending then is recorded as ``late`` too, and the process ends at once
    (:func:`main`), so no signal meets the interpreter's shutdown (where the default
    action would end it by the signal, exit -15, or a KeyboardInterrupt with a traceback)."""
    stop = _Stop()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handler(signum: int, frame: object) -> None:
        if stop.first is not None:  # a later signal: the first decides
            return
        stop.first = signum
        if stop.done:  # the command is over: main reports it
            stop.late = signum
            return
        raise Interrupted(signum)
    saved = {}
    with blocked_signals(STOP_SIGNALS):  # every handler set before any signal is handled
        for signum in STOP_SIGNALS:
            old = signal.getsignal(signum)
            if old is signal.SIG_IGN or old is None:  # nohup, a background job: stay ignored
                continue
            saved[signum] = signal.signal(signum, handler)
    try:
        yield stop
    finally:
        stop.done = True
        if program:
            block = getattr(signal, "pthread_sigmask", None)
            if block is not None:
                block(signal.SIG_BLOCK, list(saved))  # until the process ends
                pending = sorted(set(saved) & set(signal.sigpending()))
                if pending and stop.first is None:
                    stop.first = stop.late = pending[0]
            else:  # no masks here: ignored, the process is ending
                for signum in saved:
                    signal.signal(signum, signal.SIG_IGN)
        else:
            with blocked_signals(saved):  # no signal between two restored handlers
                for signum, old in saved.items():
                    signal.signal(signum, old)


def _interrupted(prog: str, exc: KeyboardInterrupt, args: object = None) -> int:
    """The line of an interrupted command and its exit code, 128 + the signal's number.
    What was written: the exception's ``outcome``, else (a signal once the command had
    returned) the command's own ``args.outcome``, if it set one."""
    signum = getattr(exc, "signum", signal.SIGINT)
    by = "" if signum == signal.SIGINT else f" by {signal.Signals(signum).name}"
    outcome = getattr(exc, "outcome", None) or getattr(args, "outcome", None)
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
    ``--version`` return 0 after printing. A stop signal that arrives once the command
    has returned (its summary printed, its outputs in place) still ends the run with the
    line ``interrupted[ by SIGNAL]; OUTCOME`` (what the command wrote) and 128 + its
    number. Without ``argv`` (the installed ``dpfix`` script, ``python -m dpfix.cli``)
    ``main`` runs the process's own command line: the stop signals are then blocked once
    the exit code is known, standard output and error are flushed and the process ends at
    once with that code (:func:`os._exit`: every file is closed by then), so that no
    signal meets the interpreter's shutdown.
    """
    program = argv is None
    state: dict = {"prog": "dpfix", "quiet": False, "args": None}
    with _signals_raise(program=program) as stop, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for category in _DEVELOPER_WARNINGS:
            warnings.simplefilter("ignore", category)
        try:
            code = _main(argv, state)
            if code in (0, 1) and not state["quiet"]:
                _report_warnings(state["prog"], caught)
            stop.over()
        except KeyboardInterrupt as exc:  # the first signal, once the command returned
            stop.over()
            code = _interrupted(state["prog"], exc, state["args"])
    if stop.late is not None:
        code = _interrupted(state["prog"], Interrupted(stop.late), state["args"])
    try:
        sys.stdout.flush()
    except OSError:  # reported already: the interpreter's final flush must not fail again
        _quiet_stdout()
    if program:
        try:
            sys.stderr.flush()
        except OSError:
            pass
        os._exit(code)
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
        state["args"] = args
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
        return _interrupted(prog, exc, state["args"])
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
