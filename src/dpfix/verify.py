"""``dpfix verify``: run the scripts in ``proofs_checks/`` and print a table.

Each script ``proofs_checks/check_*.py`` states one result of the paper and
checks it on exhaustive small cases. It defines

- ``RESULT``: the result's name, e.g. ``"Theorem 4"``;
- ``STATEMENT``: the statement in one line;
- ``run(mode) -> int``: checks it (``mode`` is ``"quick"`` or ``"full"``),
  returns the number of cases checked, and raises ``AssertionError`` naming
  the failing case otherwise.

A script also runs alone: ``python proofs_checks/check_x.py [--full]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

__all__ = ["CheckOutcome", "find_checks_dir", "load_checks", "run_checks", "add_parser"]


@dataclass
class CheckOutcome:
    """One row of the verify table."""

    name: str
    result: str
    statement: str
    cases: int
    outcome: str  # "ok", "FAIL" or "ERROR"
    seconds: float
    detail: str = ""


def find_checks_dir(path: str | None = None) -> Path:
    """The ``proofs_checks`` folder: ``path``, ``$DPFIX_CHECKS``, ``./proofs_checks``,
    or the one beside this source tree."""
    if path is not None:  # an explicit folder is used or refused, never replaced
        if not Path(path).is_dir():
            raise FileNotFoundError(f"--dir {path}: no such folder")
        return Path(path)
    candidates = [os.environ.get("DPFIX_CHECKS"), "proofs_checks",
                  Path(__file__).resolve().parents[2] / "proofs_checks"]
    for c in candidates:
        if c and Path(c).is_dir():
            return Path(c)
    raise FileNotFoundError("no proofs_checks folder found; pass --dir or set DPFIX_CHECKS")


def load_checks(directory: Path, only: str | None = None) -> list[tuple[str, ModuleType]]:
    """Import every ``check_*.py`` (filtered by ``only``: whole words of the file
    name or of ``RESULT``, case-insensitive)."""
    out = []
    for file in sorted(directory.glob("check_*.py")):
        spec = importlib.util.spec_from_file_location(f"proofs_checks.{file.stem}", file)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        key = f"{file.stem} {module.RESULT}".lower()
        # whole words: "Theorem 1" selects Theorem 1, not Theorem 10
        if only is None or re.search(rf"(?<!\w){re.escape(only.lower())}(?!\w)", key):
            out.append((file.stem.removeprefix("check_"), module))
    if only is not None and not out:
        raise ValueError(f"--only {only!r} matches no check in {directory}")
    if not out:
        raise ValueError(f"no check_*.py script in {directory}: nothing would be verified")
    return out


def run_checks(checks: list[tuple[str, ModuleType]], mode: str = "quick") -> list[CheckOutcome]:
    """Run the checks and collect their outcomes (a failure does not stop the rest)."""
    rows = []
    for name, module in checks:
        start = time.perf_counter()
        cases, outcome, detail = 0, "ok", ""
        try:
            cases = int(module.run(mode))
            if cases <= 0:
                outcome, detail = "FAIL", "no case checked"
        except AssertionError as exc:
            outcome, detail = "FAIL", str(exc)
        except Exception:  # a crash is reported, not hidden
            outcome, detail = "ERROR", traceback.format_exc(limit=3)
        rows.append(CheckOutcome(name, module.RESULT, module.STATEMENT, cases, outcome,
                                 time.perf_counter() - start, detail))
    return rows


def format_table(rows: list[CheckOutcome]) -> str:
    """A plain-text table: result, statement, cases, outcome, seconds."""
    head = ("result", "statement", "cases", "outcome", "seconds")
    body = [(r.result, r.statement, str(r.cases), r.outcome, f"{r.seconds:.1f}") for r in rows]
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(5)]
    widths[1] = min(widths[1], 90)

    def line(cells):
        cells = list(cells)
        if len(cells[1]) > widths[1]:
            cells[1] = cells[1][: widths[1] - 3] + "..."
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    lines = [line(head), line("-" * w for w in widths), *map(line, body)]
    return "\n".join(lines)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("verify", help="check the paper's results on exhaustive small cases",
                       description=__doc__.split("\n\n")[0])
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", dest="mode", action="store_const", const="quick",
                   help="the CI subset (default; under 2 minutes)")
    g.add_argument("--full", dest="mode", action="store_const", const="full",
                   help="the exhaustive grid (see README for its time)")
    p.add_argument("--only", metavar="NAME",
                   help="run the checks whose name or result contains NAME")
    p.add_argument("--dir", help="folder of check scripts (default: ./proofs_checks)")
    p.set_defaults(func=run, mode="quick")


def run(args: argparse.Namespace) -> int:
    checks = load_checks(find_checks_dir(args.dir), args.only)
    rows = []
    for name, module in checks:
        (row,) = run_checks([(name, module)], args.mode)
        rows.append(row)
        print(f"  {row.result}: {row.outcome} ({row.cases} cases, {row.seconds:.1f} s)",
              file=sys.stderr, flush=True)
    print(format_table(rows))
    bad = [r for r in rows if r.outcome != "ok"]
    for r in bad:
        print(f"\n{r.result} ({r.name}): {r.outcome}\n{r.detail}")
    total = sum(r.seconds for r in rows)
    print(f"\n{len(rows) - len(bad)} passed, {len(bad)} failed ({args.mode} mode, {total:.1f} s)")
    return 1 if bad else 0
