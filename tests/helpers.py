"""Helpers shared by the test modules (``pythonpath = ["tests"]`` in pyproject.toml)."""

from __future__ import annotations

import pytest

from dpfix.cli import main
from dpfix.io.tables import data_path


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
