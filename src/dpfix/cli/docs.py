"""``dpfix docs``: the documentation pages that ship with the package.

The pages of the project's ``docs/`` folder (the mathematics, the
reproduction, the guarantees) are installed with the package as
``dpfix/docs/*.md``, so that every pointer a command prints ("``dpfix docs
optimum_of_F``") resolves wherever dpfix is installed. ``dpfix docs`` lists the
pages and the folder that holds them; ``dpfix docs NAME`` prints one (``NAME``,
``NAME.md`` or ``docs/NAME.md``); ``--path`` prints its path instead.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "run", "docs_folder", "page", "pages"]


def docs_folder() -> Path:
    """The folder of the documentation pages: ``dpfix/docs`` in an installed package,
    the repository's ``docs/`` in a source checkout (an editable install).

    Examples
    --------
    >>> (docs_folder() / "optimum_of_F.md").is_file()
    True
    """
    package = Path(__file__).resolve().parents[1]  # the dpfix package folder
    installed = package / "docs"
    if installed.is_dir():
        return installed
    return package.parents[1] / "docs"


def pages() -> list[str]:
    """The names of the pages, sorted (``"optimum_of_F"``, ...).

    Examples
    --------
    >>> "no_split" in pages()
    True
    """
    return sorted(p.stem for p in docs_folder().glob("*.md"))


def page(name: str) -> Path:
    """The path of the page ``name`` (``NAME``, ``NAME.md`` or ``docs/NAME.md``).

    Raises
    ------
    ValueError
        No such page (the message lists the pages).

    Examples
    --------
    >>> page("docs/sampling.md") == page("sampling")
    True
    """
    stem = name.removeprefix("docs/").removesuffix(".md")
    if stem not in pages():
        raise ValueError(f"no documentation page {name!r}; the pages: {', '.join(pages())}")
    return docs_folder() / f"{stem}.md"


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return ""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dpfix docs``."""
    p = sub.add_parser(
        "docs", help="print a documentation page shipped with dpfix (the mathematics, "
                     "the guarantees)",
        description="The documentation pages installed with dpfix: without NAME, list them "
                    "and their folder; with NAME, print that page (Markdown).",
        epilog="examples: dpfix docs; dpfix docs optimum_of_F; dpfix docs no_split --path")
    p.add_argument("name", nargs="?", metavar="NAME",
                   help="the page: NAME, NAME.md or docs/NAME.md (default: list the pages)")
    p.add_argument("--path", action="store_true", help="print the page's path, not its text")
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``dpfix docs``: list the pages, or print one (or its path); 0 on success."""
    if args.name is None:
        print(f"documentation pages in {docs_folder()} (dpfix docs NAME prints one):")
        for name in pages():
            print(f"  {name:<16} {_title(docs_folder() / f'{name}.md')}")
        return 0
    path = page(args.name)
    print(path if args.path else path.read_text(encoding="utf-8"), end="\n" if args.path else "")
    return 0
