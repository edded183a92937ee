"""Comments, docstrings and strings speak of the code and the mathematics, not of the
history of the work: no issue numbers (``issue 12``, ``#12`` in a comment or a
docstring) and no circumstances of past runs (``in an earlier run``, ``before issue``).

The files are scanned when the test runs (every ``.py`` file under the folders below,
the notebooks' cell sources, the docs and the README), so a reference added anywhere
later fails it; the message names the file and line.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CODE = ("src", "tests", "proofs_checks", "benchmarks", "notebooks")
THIS = Path(__file__).resolve()

#: An issue number: ``issue 12``, ``Issue 14``, ``issues 11 and 12``, ``issue #3``.
ISSUE = re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)
#: The circumstances of a past run or of the work, instead of what the code does.
HISTORY = re.compile(r"\b(?:(?:an?|the|in an?) (?:earlier|previous|last) (?:run|session)|"
                     r"(?:this|last|earlier|previous) session|before issue|until issue|"
                     r"the review\b)", re.IGNORECASE)
#: A ticket reference ``#12`` (looked for in comments and docstrings, where a colour
#: such as ``"#123456"`` cannot be).
HASH_REF = re.compile(r"(?<![\w&#])#\d+\b")


def _python_files() -> list[Path]:
    files = [p for d in CODE for p in sorted((ROOT / d).rglob("*.py"))]
    return [p for p in files if p.resolve() != THIS and ".venv" not in p.parts]


def _text_files() -> list[tuple[Path, str]]:
    """``(path, text)`` of the notebooks' cell sources (not their outputs), docs, README."""
    out = []
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        out.append((nb, "\n".join("".join(c["source"]) for c in cells)))
    for md in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        out.append((md, md.read_text(encoding="utf-8")))
    return out


def _hits(pattern: re.Pattern, text: str) -> list[str]:
    return [f"line {k}: {line.strip()}" for k, line in enumerate(text.splitlines(), 1)
            if pattern.search(line)]


def _comments_and_docstrings(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of every comment and docstring of a Python source."""
    out = [(tok.start[0], tok.string)
           for tok in tokenize.generate_tokens(io.StringIO(source).readline)
           if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                out.append((node.body[0].lineno, doc))
    return out


def test_the_scan_sees_the_code():
    names = {p.relative_to(ROOT).parts[0] for p in _python_files()}
    assert {"src", "tests", "proofs_checks", "benchmarks"} <= names
    assert len(_python_files()) > 50


@pytest.mark.parametrize("pattern", [ISSUE, HISTORY], ids=["issue-number", "history"])
def test_no_issue_numbers_or_history_in_the_code(pattern):
    bad = [f"{p.relative_to(ROOT)} {hit}" for p in _python_files()
           for hit in _hits(pattern, p.read_text(encoding="utf-8"))]
    assert not bad, "say what the code does and why, not its history:\n" + "\n".join(bad)


def test_no_ticket_references_in_comments_or_docstrings():
    bad = []
    for p in _python_files():
        for line, text in _comments_and_docstrings(p.read_text(encoding="utf-8")):
            # the comment marker itself is no reference: look after it
            if HASH_REF.search(text[1:] if text.startswith("#") else text):
                bad.append(f"{p.relative_to(ROOT)}:{line}: {text.strip()[:80]}")
    assert not bad, "ticket references in comments or docstrings:\n" + "\n".join(bad)


@pytest.mark.parametrize("pattern", [ISSUE, HISTORY], ids=["issue-number", "history"])
def test_no_issue_numbers_or_history_in_the_docs_and_notebooks(pattern):
    bad = [f"{p.relative_to(ROOT)} {hit}" for p, text in _text_files()
           for hit in _hits(pattern, text)]
    assert not bad, "say what the code does and why, not its history:\n" + "\n".join(bad)


@pytest.mark.parametrize("text, found", [
    ("# see issue 12 for why", True), ("x = 1  # fixed in #14", True),
    ('"""Before issue 11 this leaked."""', True), ("# in an earlier run it took 14 min", True),
    ("# the review asked for it", True), ("# Issues 11 and 12", True),
    ("# a count of 12 rows", False), ('color = "#123456"', False),
    ("# the issue of rounding", False), ("# review the bounds", False),
])
def test_the_patterns_find_what_they_should(text, found):
    comments = " ".join(t for _, t in _comments_and_docstrings(text))
    got = bool(ISSUE.search(text) or HISTORY.search(text)
               or HASH_REF.search(comments.replace("# ", " ", 1)))
    assert got is found


# ------------------------------------------------------------------ the library's messages
#: A command line flag (``--key``, ``--order``): the library's messages name its parameters.
FLAG = re.compile(r"(?<![\w-])--[a-z]")


def _message_texts(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of every string constant (and f-string part) inside a ``raise X(...)``,
    a ``warnings.warn(...)`` or a ``warn_*(...)`` call of a Python source."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Raise) and node.exc is not None:
            inside = node.exc
        elif isinstance(node, ast.Call):
            name = (node.func.attr if isinstance(node.func, ast.Attribute)
                    else getattr(node.func, "id", ""))
            if name != "warn" and not name.startswith("warn_"):
                continue
            inside = node
        else:
            continue
        out += [(n.lineno, n.value) for n in ast.walk(inside)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return out


def _flagged(source: str) -> list[str]:
    return [f"{line}: {text.strip()[:80]}" for line, text in _message_texts(source)
            if FLAG.search(text)]


#: The modules of the research floors whose messages still name the flags of ``dpfix
#: explore`` and ``dpfix verify`` (``--n``, ``--lam``, ``--z``, ``--dir``, ``--only``); they
#: are to name their parameters, and their commands to map them, as ``dpfix privatize``
#: does: then this list is empty. No module of release, io or cli may be on it.
FLAGGED_RESEARCH_MODULES = ("src/dpfix/explore/instances.py",
                            "src/dpfix/explore/verification.py")


def test_library_messages_name_parameters_not_flags():
    """Outside the command line (src/dpfix/cli), no error or warning names a flag: the
    command maps the library's parameters to its flags (``dpfix.cli._privatize_plan``)."""
    src = ROOT / "src" / "dpfix"
    assert all(m.startswith(("src/dpfix/explore/", "src/dpfix/certify/",
                             "src/dpfix/theory/")) for m in FLAGGED_RESEARCH_MODULES)
    bad = [f"{p.relative_to(ROOT)}:{hit}" for p in sorted(src.rglob("*.py"))
           if "cli" not in p.relative_to(src).parts
           and str(p.relative_to(ROOT)) not in FLAGGED_RESEARCH_MODULES
           for hit in _flagged(p.read_text(encoding="utf-8"))]
    assert not bad, "library messages that name a CLI flag:\n" + "\n".join(bad)


def test_the_flag_check_sees_raises_warnings_and_f_strings():
    code = ('def f(x):\n    raise ValueError(f"--key: {x} not found")\n'
            'def g():\n    warnings.warn("use --force", UserWarning)\n'
            'def h():\n    warn_deprecated("--order is gone")\n'
            'def k():\n    raise ValueError("keys: not found; order=\'key\' needs keys=")\n'
            'HELP = "--key COL"\n')
    assert [hit.split(":")[0] for hit in _flagged(code)] == ["2", "4", "6"]
