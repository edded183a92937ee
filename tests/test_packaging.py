"""Packaging: the package list in pyproject.toml, and a plain ``pip install .``.

The install test builds the project into a fresh virtualenv WITHOUT extras and
runs the research path there (the whole ``dpfix verify --quick``, ``dpfix
explore example1``, ``construct``), as the README promises: verify exits 0,
the float-path check, which needs PyWavelets for the Privelet baseline, is
skipped with one line naming the extra; the production commands must then fail
in one line naming the extra.
"""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_package_is_listed():
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT / "src").parts)
             for p in (ROOT / "src" / "dpfix").rglob("__init__.py")}
    found.add("dpfix.proofs_checks")
    found.add("dpfix.docs")  # docs/*.md as package data (pyproject.toml)
    assert listed == found


def test_proofs_checks_ship_in_the_package():
    setup = _pyproject()["tool"]["setuptools"]
    assert setup["package-dir"]["dpfix.proofs_checks"] == "proofs_checks"
    assert (ROOT / "proofs_checks" / "__init__.py").is_file()
    assert sorted((ROOT / "proofs_checks").glob("check_*.py"))


def test_license_and_typing_marker():
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert (ROOT / "src" / "dpfix" / "py.typed").is_file()
    meta = _pyproject()["project"]
    assert meta["authors"] and meta["keywords"] and meta["classifiers"]


@pytest.mark.skipif(os.environ.get("DPFIX_SKIP_INSTALL_TEST") == "1",
                    reason="DPFIX_SKIP_INSTALL_TEST=1")
def test_plain_pip_install_gives_the_research_path(tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    dpfix = env_dir / "bin" / "dpfix"
    run_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    run_env["DPFIX_CHECKS"] = ""  # the checks must come from the installed package

    def run(*cmd: object, check: bool = True) -> subprocess.CompletedProcess:
        out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                             cwd=tmp_path, env=run_env, timeout=900)
        if check and out.returncode != 0:
            raise AssertionError(f"{cmd} exited {out.returncode}:\n{out.stdout}\n{out.stderr}")
        return out

    run(py, "-m", "pip", "install", "-q", "--disable-pip-version-check", str(ROOT))
    absent = run(py, "-c", "import importlib.util as u; print([m for m in "
                 "('pandas', 'opendp', 'pywt', 'matplotlib', 'tqdm') if u.find_spec(m)])")
    assert absent.stdout.strip() == "[]", "the plain install pulled in production extras"
    out = run(py, "-c", "from dpfix import construct; print(construct([0.5, 0.5], 1.0).n)")
    assert out.stdout.strip() == "2"
    out = run(py, "-c",
              "from dpfix.explore.strategies import targets; print(len(targets(3).example()))")
    assert out.stdout.strip() == "3"  # hypothesis comes with the research path
    out = run(dpfix, "verify", "--quick")
    checks = len(list((ROOT / "proofs_checks").glob("check_*.py")))
    assert f"{checks - 1} passed, 0 failed, 1 skipped" in out.stdout, out.stdout
    skips = [line for line in out.stdout.splitlines() if "skipped: needs" in line]
    assert skips == ["Float path (float_path): skipped: needs dpfix[production] (PyWavelets)"]
    assert "Traceback" not in out.stdout + out.stderr
    out = run(dpfix, "explore", "example1")
    assert "Example 1" in out.stdout
    out = run(dpfix, "privatize", "--demo", "--out-dir", tmp_path / "demo", check=False)
    assert out.returncode != 0
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "dpfix[production]" in lines[0], out.stderr


def test_python_version_floor_matches_the_makefile():
    floor = _pyproject()["project"]["requires-python"].removeprefix(">=")
    major, minor = (int(x) for x in floor.split("."))
    assert f"sys.version_info < ({major}, {minor})" in (ROOT / "Makefile").read_text()


def test_make_test_runs_the_suite_on_every_core():
    """``make test`` runs pytest with xdist workers (one per core by default), and the
    dev extra installs xdist, so a fresh clone's ``make test`` uses both cores here."""
    makefile = (ROOT / "Makefile").read_text()
    assert "JOBS ?= auto" in makefile
    assert re.search(r"-m pytest -n \$\(JOBS\) --dist worksteal", makefile)
    assert any(d.startswith("pytest-xdist") for d in _pyproject()["project"][
        "optional-dependencies"]["dev"])
