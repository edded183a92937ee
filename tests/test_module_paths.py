"""Every ``dpfix.xxx.yyy`` path that README.md, docs/ and notebooks/ print works as
written: each prefix naming a module imports with ``import`` (``import
dpfix.parametric``), the rest resolves as attributes; and ``python -m dpfix`` runs the
command."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
         *sorted((ROOT / "notebooks").glob("*.ipynb"))]
DOTTED = re.compile(r"\bdpfix(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def printed_paths() -> dict[str, list[str]]:
    """Dotted path -> the pages printing it."""
    out: dict[str, list[str]] = {}
    for page in PAGES:
        for path in DOTTED.findall(page.read_text(encoding="utf-8")):
            out.setdefault(path, []).append(str(page.relative_to(ROOT)))
    return out


def resolve(path: str) -> object:
    """The object ``path`` names, reached as a user would: ``import`` for every prefix
    that is a module, ``getattr`` after it. Raises ImportError or AttributeError."""
    parts = path.split(".")
    obj: object = importlib.import_module(parts[0])
    for i in range(1, len(parts)):
        name = ".".join(parts[: i + 1])
        try:
            obj = getattr(obj, parts[i])
        except AttributeError:
            obj = importlib.import_module(name)  # a submodule not imported yet
        if isinstance(obj, types.ModuleType):
            importlib.import_module(name)  # `import a.b.c` must work, not only a.b.c
    return obj


PATHS = printed_paths()


def test_the_pages_print_module_paths():
    assert len(PATHS) > 100  # the extraction sees the pages' paths
    assert "dpfix.parametric.chambers" in PATHS
    assert "dpfix.theory.polytopes" in PATHS


@pytest.mark.parametrize("path", sorted(PATHS))
def test_every_printed_path_imports_as_written(path):
    try:
        resolve(path)
    except (ImportError, AttributeError) as exc:
        pytest.fail(f"{path} (printed in {', '.join(sorted(set(PATHS[path])))}): {exc}")


def test_resolve_refuses_an_attribute_that_is_not_an_importable_module():
    fake = types.ModuleType("dpfix_probe_pkg")
    fake.__path__ = []  # a package
    fake.alias = types.ModuleType("dpfix_probe_pkg.theory_alias")  # reachable by getattr only
    sys.modules["dpfix_probe_pkg"] = fake
    try:
        with pytest.raises(ImportError):
            resolve("dpfix_probe_pkg.alias")
        with pytest.raises((ImportError, AttributeError)):
            resolve("dpfix.nothing_of_that_name")
    finally:
        del sys.modules["dpfix_probe_pkg"]


def test_dpfix_parametric_imports_and_holds_the_theory_modules_names():
    import dpfix.parametric
    import dpfix.theory.parametric as theory

    assert dpfix.parametric.__all__ == theory.__all__
    for name in theory.__all__:
        assert getattr(dpfix.parametric, name) is getattr(theory, name), name
    from dpfix.parametric import chambers

    assert chambers("F", 2, ["1/2", "1/2"]).counts() == [2]


def test_python_m_dpfix_runs_the_command(tmp_path):
    run = subprocess.run([sys.executable, "-m", "dpfix", "--version"], capture_output=True,
                         text=True, cwd=tmp_path)
    assert run.returncode == 0 and run.stdout.startswith("dpfix "), run.stderr
    bad = subprocess.run([sys.executable, "-m", "dpfix", "privatize", str(tmp_path / "x.csv"),
                          "--column", "k", "--epsilon", "1"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
