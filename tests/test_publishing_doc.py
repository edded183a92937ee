"""docs/publishing.md runs as written: its Python blocks, in order, in one namespace (in a
fresh folder: the ledger is created there), print exactly the ``text`` block that follows
each; every number of its worked example is printed by a command on the page."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from dpfix.io.data import data_dir
from helpers import needs_data

PAGE = Path(__file__).resolve().parents[1] / "docs" / "publishing.md"
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", flags=re.M | re.S)


def blocks(text: str) -> list[tuple[str, str]]:
    """The fenced blocks of ``text``: ``(language, body)`` in order.

    >>> blocks("a\\n```python\\nx = 1\\n```\\nb\\n```text\\n1\\n```\\n")
    [('python', 'x = 1\\n'), ('text', '1\\n')]
    """
    return [(lang.strip(), body) for lang, body in FENCE.findall(text)]


def run_page(text: str) -> list[tuple[str, str]]:
    """Every Python block of the page run in one namespace: ``(its output, the text block
    that follows it)`` in order."""
    found = blocks(text)
    namespace: dict = {"__name__": "publishing_doc"}
    pairs = []
    for k, (lang, body) in enumerate(found):
        if lang != "python":
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(body, f"publishing.md block {k}", "exec"), namespace)  # noqa: S102
        shown = found[k + 1][1] if k + 1 < len(found) and found[k + 1][0] == "text" else None
        pairs.append((out.getvalue(), shown))
    return pairs


@needs_data
def test_the_page_prints_what_it_shows(tmp_path, monkeypatch):
    monkeypatch.setenv("DPFIX_DATA", str(data_dir()))
    monkeypatch.chdir(tmp_path)
    pairs = run_page(PAGE.read_text(encoding="utf-8"))
    assert len(pairs) >= 8, "the page's Python blocks"
    for k, (printed, shown) in enumerate(pairs):
        assert shown is not None, f"block {k} has no text block after it"
        assert printed == shown, f"block {k}"
    assert (tmp_path / "budget-2026.jsonl").exists()


def test_the_page_names_what_a_statistician_needs():
    text = PAGE.read_text(encoding="utf-8")
    for needed in ("row:C", "person:C", "`N`, the number of rows", "keys", "fixed when the "
                   "ledger is created", "confidence set", "band", "total_interval",
                   "top-coding bias", "upper=PrivateBound(share=...)", "NOT FOR PRODUCTION"):
        assert needed in text, needed


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__])
