"""docs/exploring.md runs as written: its Python blocks, in order, in one namespace,
print exactly the ``text`` block that follows each; its ``console`` block's
``dpfix search`` commands print what it shows and exit with the codes it shows
(the block headed ``# conj.py`` is that file); and ``dpfix docs exploring`` prints it."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from helpers import cli

PAGE = Path(__file__).resolve().parents[1] / "docs" / "exploring.md"
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", flags=re.M | re.S)


def blocks(text: str) -> list[tuple[str, str]]:
    """The fenced blocks of ``text``: ``(language, body)`` in order.

    >>> blocks("a\\n```python\\nx = 1\\n```\\nb\\n```\\nsig\\n```\\n")
    [('python', 'x = 1\\n'), ('', 'sig\\n')]
    """
    return [(lang.strip(), body) for lang, body in FENCE.findall(text)]


def console_steps(body: str) -> list[tuple[list[str], str]]:
    """``($ command as words, the lines shown after it)`` for each ``$`` line.

    >>> console_steps("$ dpfix a b\\nout\\n$ echo $?\\n1\\n")
    [(['dpfix', 'a', 'b'], 'out\\n'), (['echo', '$?'], '1\\n')]
    """
    steps: list[tuple[list[str], str]] = []
    for line in body.splitlines(keepends=True):
        if line.startswith("$ "):
            steps.append((shlex.split(line[2:]), ""))
        elif steps:
            steps[-1] = (steps[-1][0], steps[-1][1] + line)
    return steps


@pytest.fixture(scope="module")
def page_blocks() -> list[tuple[str, str]]:
    found = blocks(PAGE.read_text(encoding="utf-8"))
    assert sum(lang == "python" for lang, _ in found) >= 8, "the page's Python blocks"
    return found


def test_the_python_blocks_print_what_the_page_shows(page_blocks, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "exploring_doc"}
    checked = 0
    for k, (lang, body) in enumerate(page_blocks):
        if lang != "python" or body.startswith("# conj.py"):
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(body, f"{PAGE.name} block {k}", "exec"), namespace)
        if k + 1 < len(page_blocks) and page_blocks[k + 1][0] == "text":
            assert out.getvalue() == page_blocks[k + 1][1], f"block {k}:\n{body}"
            checked += 1
    assert checked >= 7


def test_the_command_line_example_runs_as_shown(page_blocks, tmp_path, monkeypatch, capsys):
    (conj,) = [body for lang, body in page_blocks if lang == "python"
               and body.startswith("# conj.py")]
    (console,) = [body for lang, body in page_blocks if lang == "console"]
    (tmp_path / "conj.py").write_text(conj, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    rc, codes = None, []
    for words, shown in console_steps(console):
        if words == ["echo", "$?"]:
            assert shown == f"{rc}\n"
            codes.append(rc)
            continue
        assert words[:2] == ["dpfix", "search"], words
        rc, out, err = cli(capsys, *words[1:])
        assert out == shown, f"{shlex.join(words)}\nstderr: {err}"
    assert codes == [1, 0]


def test_dpfix_docs_prints_the_page(capsys):
    rc, out, _ = cli(capsys, "docs", "exploring")
    assert rc == 0 and out.startswith("# Exploring: pose a conjecture")


def _plain(sig) -> str:
    """A signature as the page writes it: names and defaults, no annotations."""
    import inspect

    parts, star = [], False
    for p in sig.parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        parts.append(p.name if p.default is inspect.Parameter.empty else
                     f"{p.name}={p.default!r}")
    return "(" + ", ".join(parts) + ")"


def test_the_documented_signature_is_the_functions(page_blocks):
    import inspect

    from dpfix.explore.search import smallest_counterexample, survey

    (block,) = [body for lang, body in page_blocks
                if lang == "" and body.startswith("smallest_counterexample(")]
    first, second = block.split("\nsurvey(")
    documented = " ".join(first.split()).removeprefix("smallest_counterexample")
    documented = documented.replace("( ", "(").replace(" )", ")")
    sig = inspect.signature(smallest_counterexample)
    assert documented == _plain(sig)
    assert second.startswith("predicate, ...)") and "the same parameters" in second
    assert _plain(inspect.signature(survey)) == _plain(sig)
