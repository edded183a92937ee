"""Helpers shared by the test modules (``pythonpath = ["tests"]`` in pyproject.toml)."""

from __future__ import annotations

import pytest

from dpfix.cli import main
from dpfix.io.data import data_path


def cli(capsys, *argv):
    """``dpfix ARGV`` in this process: ``(exit code, stdout, stderr)`` (argparse's own
    errors are a ``SystemExit``)."""
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as exc:
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def shared_available() -> bool:
    try:
        data_path("crime_data.csv")
    except FileNotFoundError:
        return False
    return True


#: Skips a test when the shared data folder (``DPFIX_DATA`` or ``../shared/data``) is absent.
needs_data = pytest.mark.skipif(not shared_available(), reason="shared data folder absent")


def release(data, columns, eps, *, scratch=None, bucket_rows=None, **choices):
    """``privatize_table(data, columns, eps, **choices)`` run with the streamed engine's
    settings: ``execute(plan_release(...), scratch=, bucket_rows=)``."""
    from dpfix.release.plan import plan_release
    from dpfix.release.stream import BUCKET_ROWS
    from dpfix.release.table import execute

    return execute(plan_release(data, columns, eps, **choices), scratch=scratch,
                   bucket_rows=bucket_rows or BUCKET_ROWS)
