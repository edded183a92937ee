"""The ``dpfix`` command line: one sub-command per job.

Each sub-command lives in its own module exposing ``add_parser(subparsers)``
and a ``run(args) -> int``; this file only wires them. Errors the user can fix
end in a one-line message and exit code 2; a computation that fails (a solver
that gives up, memory) ends in a one-line message and exit code 1.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from dpfix.exact import ExactnessError

#: sub-command name -> module implementing it
COMMANDS = {
    "explore": "dpfix.explore",
    "verify": "dpfix.verify",
    "privatize": "dpfix.privatize",
    "reproduce": "dpfix.reproduce",
}


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (no usage block), exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="dpfix", description="Differentially private count mechanisms with fixed points."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMANDS.values():
        importlib.import_module(module).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, OSError, ExactnessError) as exc:  # bad input or an unusable path
        print(f"dpfix {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except (RuntimeError, MemoryError, OverflowError) as exc:  # a computation that failed
        print(f"dpfix {args.command}: failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
