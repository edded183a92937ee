"""No underscore name crosses a folder of src/dpfix: a module imports another folder's
public names only (scipy's layout: private helpers are never imported across packages).

Every import statement of every module is parsed (at module level, inside functions,
under ``if TYPE_CHECKING``; relative imports resolved). An import crosses a folder when
the imported module lies in another folder of src/dpfix (another floor, or beside it)
than the importing module; it is private when the imported name starts with an
underscore, or the module path does below the folder (``dpfix.constructors._kernel``).
Within one folder an underscore import is allowed, and counted: the count may fall,
never rise (:data:`SAME_FOLDER_MAX`).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "dpfix"

#: Underscore names a module imports from another module of its own folder (the fmpq-level
#: helpers of certify's dual points and cone test): at most this many. Names of a private
#: module (``dpfix.cli._arguments``) and the private modules themselves are not counted.
SAME_FOLDER_MAX = 8


def _module_name(path: Path) -> tuple[str, bool]:
    parts = ("dpfix", *path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _folder(module: str) -> str:
    """The folder of a dpfix module (``dpfix.theory.delta`` -> ``theory``; the package's
    own ``__init__`` and the modules beside it -> ``""``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and (SRC / parts[1]).is_dir()) \
        else ""


def _is_private_module(base: str, name: str) -> bool:
    """``from base import name`` takes a private module (``from dpfix.cli import
    _privatize_outputs``), not a private name."""
    folder = SRC.joinpath(*base.split(".")[1:])
    return name.startswith("_") and ((folder / f"{name}.py").is_file() or
                                     (folder / name).is_dir())


def private_imports(module: str, source: str, is_package: bool = False
                    ) -> list[tuple[int, str, str]]:
    """``(line, imported module, name)`` of every private import of ``module``: a name
    starting with an underscore (``name``), or any name taken from a module whose path
    has a component starting with one (``name`` is then the module path: a private
    module, scipy's ``_linprog_highs``, serves its own folder)."""
    package = module if is_package else module.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if not base.startswith("dpfix"):
                continue
            private_module = any(p.startswith("_") for p in base.split(".")[2:])
            for alias in node.names:
                if private_module or _is_private_module(base, alias.name):
                    path = base if private_module else f"{base}.{alias.name}"
                    out.append((node.lineno, path, path))
                elif alias.name.startswith("_") and not alias.name.startswith("__"):
                    out.append((node.lineno, base, alias.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "dpfix" and any(p.startswith("_") for p in parts[2:]):
                    out.append((node.lineno, alias.name, alias.name))
    return out


def _all_private_imports() -> list[tuple[str, int, str, str]]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        module, is_package = _module_name(path)
        for line, target, name in private_imports(module, path.read_text("utf-8"), is_package):
            found.append((module, line, target, name))
    return found


def test_no_underscore_name_is_imported_across_folders():
    crossing = [f"{m}:{line} imports {name} from {t}" for m, line, t, name in
                _all_private_imports() if _folder(m) != _folder(t)]
    assert not crossing, ("underscore names imported from another folder (make the name "
                          "public with a docstring, or move it to where it is used):\n"
                          + "\n".join(crossing))


def test_underscore_imports_within_a_folder_do_not_grow():
    same = [f"{m}:{line} imports {name} from {t}" for m, line, t, name in
            _all_private_imports() if _folder(m) == _folder(t) and name != t]
    assert len(same) <= SAME_FOLDER_MAX, (
        f"{len(same)} underscore names imported within a folder (at most {SAME_FOLDER_MAX}):\n"
        + "\n".join(same))


def test_the_checker_sees_every_kind_of_private_import():
    code = ("from dpfix.certify.cone import _walk_min, cone_minimum\n"
            "def f():\n    from ..theory.delta import _pairs\n"
            "    from . import _kernel\n    import dpfix.constructors._heuristic_kernel\n"
            "    from dpfix.cli._arguments import plain_int\n"
            "    from dpfix.numbers.exact import __all__, to_fraction\n")
    found = private_imports("dpfix.explore.probe", code)
    assert [(t, name) for _, t, name in found] == [
        ("dpfix.certify.cone", "_walk_min"), ("dpfix.theory.delta", "_pairs"),
        ("dpfix.explore", "_kernel"), ("dpfix.constructors._heuristic_kernel",
                                       "dpfix.constructors._heuristic_kernel"),
        ("dpfix.cli._arguments", "dpfix.cli._arguments")]
    assert [_folder(m) for m in ("dpfix.explore.probe", "dpfix.explore", "dpfix.cli._arguments",
                                 "dpfix.__main__", "dpfix")] == \
        ["explore", "explore", "cli", "", ""]
