"""The README's shell examples of ``dpfix privatize`` run as written, one after another in
one folder holding the shared data's files, with the ``python -c`` lines among them (the
records' example writes its files so); its Python examples are doctests
(``--doctest-glob=README.md``)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from dpfix.io.data import data_dir
from helpers import cli, needs_data

README = Path(__file__).resolve().parents[1] / "README.md"


def shell_commands(text: str, program: str | tuple[str, ...]) -> list[list[str]]:
    """The commands starting with ``program`` (or one of several) in the fenced blocks of
    ``text`` that are not Python, in order: backslash continuations joined, ``#`` comments
    dropped.

    >>> shell_commands("```\\ndpfix a \\\\\\n  --b 1   # c\\n```\\ndpfix z\\n", "dpfix a")
    [['dpfix', 'a', '--b', '1']]
    """
    commands = []
    for block in re.findall(r"^```([^\n]*)\n(.*?)^```", text, flags=re.M | re.S):
        lang, body = block
        if lang.strip() == "python":
            continue
        for line in body.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if " ".join(words).startswith(program):
                commands.append(words)
    return commands


@needs_data
def test_the_readme_privatize_examples_run_in_sequence(tmp_path, capsys, monkeypatch):
    commands = shell_commands(README.read_text(), ("dpfix privatize", "python -c"))
    assert len(commands) >= 3, "the README's privatize examples were not found"
    assert any("--records" in words for words in commands)
    for source in data_dir().iterdir():
        (tmp_path / source.name).symlink_to(source)
    monkeypatch.chdir(tmp_path)
    for words in commands:
        if words[0] == "python":  # a file the next commands read
            exec(compile(words[2], str(README), "exec"), {})  # noqa: S102
            continue
        rc, _, err = cli(capsys, *words[1:], "--quiet")
        assert rc == 0, f"{shlex.join(words)}\nexited {rc}: {err}"
        out = words[words.index("--out") + 1]
        assert (tmp_path / out).is_file(), shlex.join(words)
