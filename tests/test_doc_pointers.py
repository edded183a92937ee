"""Every documentation pointer of the package resolves where the package is installed.

The wheel ships the pages of docs/ as ``dpfix/docs/*.md`` (pyproject.toml); the
commands point to them as ``dpfix docs NAME``. Checked on the built wheel: every
pointer in a user-visible string of the command line (help texts, printed
messages) names a page that the wheel holds, never a bare ``docs/...`` path;
every ``docs/NAME.md`` anywhere in ``src/`` ships; every cited section
("docs/NAME.md section K") exists; and no source file, documentation page,
proof check, notebook or benchmark cites a document outside the project
(``MATH.md``, ``../shared/docs``, the paper's seed folder).
"""

from __future__ import annotations

import argparse
import ast
import compileall
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "dpfix"
#: page names start with a lower-case letter (``NAME`` is a placeholder in the help texts)
DOCS_PATH = re.compile(r"docs/([a-z]\w*)\.md")
DOCS_COMMAND = re.compile(r"dpfix docs (?:docs/)?([a-z]\w*)")
SECTION = re.compile(r"(?:docs/([a-z]\w*)\.md|dpfix docs ([a-z]\w*)),? sections? (\d+)"
                     r"(?: and (\d+))?")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The built wheel, unpacked: the folder that holds ``dpfix/`` as installed."""
    if os.environ.get("DPFIX_SKIP_INSTALL_TEST") == "1":
        pytest.skip("DPFIX_SKIP_INSTALL_TEST=1")
    out = tmp_path_factory.mktemp("wheel")
    source = out / "source"  # a clean copy: a stale build/ folder must not leak into the wheel
    for name in ("src", "docs", "proofs_checks"):
        shutil.copytree(ROOT / name, source / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                    "--disable-pip-version-check", "-w", str(out), str(source)],
                   check=True, capture_output=True, timeout=300)
    (wheel,) = out.glob("dpfix-*.whl")
    target = out / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(target)
    # byte-compiled, as pip compiles what it installs (where PYTHONDONTWRITEBYTECODE is
    # set, every command below would otherwise compile dpfix again)
    compileall.compile_dir(str(target / "dpfix"), quiet=1, workers=1)
    return target


def _parser_strings(parser: argparse.ArgumentParser) -> list[str]:
    out = [parser.description or "", parser.epilog or ""]
    for action in parser._actions:
        out.append(action.help or "")
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                out.append(choice.help or "")
            for sub in action.choices.values():
                out.extend(_parser_strings(sub))
    return out


def _constants(path: Path, docstrings: bool) -> list[str]:
    """The string literals of a module (f-strings: their literal parts)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set()
    if not docstrings:
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                 ast.AsyncFunctionDef)) and ast.get_docstring(node) is not None:
                skip.add(id(node.body[0].value))
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip]


def _cli_strings() -> list[str]:
    from dpfix.cli import build_parser

    strings = _parser_strings(build_parser())
    for path in sorted((SRC / "cli").glob("*.py")):
        strings.extend(_constants(path, docstrings=False))
    return [s for s in strings if s]


def _installed_pages(installed: Path) -> set[str]:
    return {p.stem for p in (installed / "dpfix" / "docs").glob("*.md")}


def test_the_wheel_ships_every_page(installed):
    assert _installed_pages(installed) == {p.stem for p in (ROOT / "docs").glob("*.md")}


def test_cli_pointers_are_commands_that_resolve(installed):
    pages = _installed_pages(installed)
    named = set()
    for text in _cli_strings():
        assert not DOCS_PATH.search(text), f"a repository path in a CLI string: {text!r}"
        for name in DOCS_COMMAND.findall(text):
            assert name in pages, f"'dpfix docs {name}' names no installed page: {text!r}"
            named.add(name)
    assert {"optimum_of_F", "open_questions", "no_split"} <= named


def test_every_docs_path_in_src_ships(installed):
    pages = _installed_pages(installed)
    for path in sorted(SRC.rglob("*.py")):
        for text in _constants(path, docstrings=True):
            for name in DOCS_PATH.findall(text):
                assert name in pages, f"{path.relative_to(ROOT)}: docs/{name}.md does not ship"


def _sections(page: Path) -> set[str]:
    return set(re.findall(r"^## (\d+)\.", page.read_text(encoding="utf-8"), flags=re.M))


def test_cited_sections_exist():
    cited = 0
    paths = [*SRC.rglob("*.py"), *(ROOT / "proofs_checks").glob("*.py"),
             *(ROOT / "docs").glob("*.md"), *(ROOT / "tests").glob("*.py")]
    for path in sorted(paths):
        text = " ".join(path.read_text(encoding="utf-8").split())
        for a, b, *numbers in SECTION.findall(text):
            have = _sections(ROOT / "docs" / f"{a or b}.md")
            for k in filter(None, numbers):
                cited += 1
                assert k in have, f"{path.relative_to(ROOT)}: {a or b}.md has no section {k}"
    assert cited >= 4


def test_no_source_cites_a_document_outside_the_project():
    paths = [*SRC.rglob("*"), *(ROOT / "docs").glob("*.md"), *(ROOT / "proofs_checks").glob("*.py"),
             *(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "benchmarks").glob("*.py")]
    for path in sorted(paths):
        if path.suffix not in (".py", ".md", ".txt", ".ipynb") or "egg-info" in str(path):
            continue
        text = path.read_text(encoding="utf-8")
        for bad in ("MATH.md", "../shared/docs", "shared/seeds"):
            assert bad not in text, f"{path.relative_to(ROOT)} cites {bad}"


def test_installed_dpfix_docs_prints_the_installed_pages(installed):
    env = {**os.environ, "PYTHONPATH": str(installed)}
    code = "import sys; from dpfix.cli import main; sys.exit(main(sys.argv[1:]))"

    def dpfix(*argv):
        return subprocess.run([sys.executable, "-c", code, *argv], env=env, cwd=installed,
                              capture_output=True, text=True, timeout=120)

    listing = dpfix("docs")
    assert listing.returncode == 0 and str(installed / "dpfix" / "docs") in listing.stdout
    assert "optimum_of_F" in listing.stdout
    where = dpfix("docs", "optimum_of_F", "--path")
    assert where.returncode == 0
    assert Path(where.stdout.strip()) == installed / "dpfix" / "docs" / "optimum_of_F.md"
    page = dpfix("docs", "docs/optimum_of_F.md")
    assert page.returncode == 0 and page.stdout.startswith("# The optimum of F")
    missing = dpfix("docs", "MATH")
    assert missing.returncode == 2 and "no documentation page 'MATH'" in missing.stderr
