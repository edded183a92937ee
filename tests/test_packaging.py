"""Packaging: the package list in pyproject.toml, and a plain ``pip install .``.

A plain install (no extras) must give the research path and nothing of the production
path, as the README promises. Two tests say so:

- in every run, pip resolves ``pip install .`` without installing it (``--dry-run
  --report``): no production extra among what it would install; and the research path
  runs in a process where every production module is made unimportable (``None`` in
  ``sys.modules``): ``construct``, the strategies, ``dpfix explore example1``, the
  float-path check skipped with one line naming the extra, ``dpfix privatize`` refused
  in one line naming it;
- with ``--full``, the same in a fresh virtualenv built by a real ``pip install .``
  (about 150 s of unpacking), the whole ``dpfix verify --quick`` from the installed
  checks.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
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


# What a plain install must not bring: the production extra's modules.
PRODUCTION = ("pandas", "opendp", "pywt", "matplotlib", "tqdm", "pyarrow", "dask", "randomgen")

# A process in which the production modules cannot be imported, as after a plain install:
# ``None`` in ``sys.modules`` makes ``import`` raise ModuleNotFoundError and ``find_spec``
# answer None, as for a module that is not installed.
_BLOCK = f"""
import sys
for name in {PRODUCTION!r}:
    sys.modules[name] = None
"""


def test_plain_pip_install_resolves_no_production_extra(tmp_path):
    report = tmp_path / "report.json"
    out = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "-q",
         "--disable-pip-version-check", "--report", str(report), str(ROOT)],
        capture_output=True, text=True, cwd=tmp_path, timeout=900)
    assert out.returncode == 0, out.stderr
    names = {item["metadata"]["name"].lower().replace("_", "-")
             for item in json.loads(report.read_text())["install"]}
    assert "dpfix" in names and {"numpy", "scipy", "sympy", "networkx", "pycddlib"} <= names
    production = {"pandas", "opendp", "pywavelets", "matplotlib", "tqdm", "pyarrow", "dask",
                  "randomgen"}
    assert not names & production, names & production


def _without_production(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DPFIX_CHECKS"}
    return subprocess.run([sys.executable, "-c", _BLOCK + code], capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=600)


def test_the_research_path_runs_without_the_production_modules(tmp_path):
    out = _without_production(
        "from dpfix import construct\n"
        "print(construct([0.5, 0.5], 1.0).n)\n"
        "from dpfix.explore.strategies import targets\n"
        "print(len(targets(3).example()))\n"
        "from dpfix.cli import main\n"
        "main(['explore', 'example1'])\n", tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[:2] == ["2", "3"] and "Example 1" in out.stdout
    out = _without_production(
        "import sys\nfrom dpfix.cli import main\n"
        "sys.exit(main(['verify', '--only', 'Float path', '--dir', "
        f"{str(ROOT / 'proofs_checks')!r}]))\n", tmp_path)
    skips = [line for line in out.stdout.splitlines() if "skipped: needs" in line]
    assert skips == ["Float path (float_path): skipped: needs dpfix[production] (PyWavelets)"]
    assert "Traceback" not in out.stdout + out.stderr
    out = _without_production(
        "import sys\nfrom dpfix.cli import main\n"
        f"sys.exit(main(['privatize', '--demo', '--out-dir', {str(tmp_path / 'demo')!r}]))\n",
        tmp_path)
    assert out.returncode != 0
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "dpfix[production]" in lines[0], out.stderr
    assert not (tmp_path / "demo").exists()


@pytest.mark.full
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
