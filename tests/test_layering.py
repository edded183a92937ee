"""The floors of src/dpfix: every module lives in the folder of its floor and imports only
from its own floor or lower.

Every import statement of every module is parsed (at module level, inside
functions and under ``if TYPE_CHECKING``). The floors are the folders
(:data:`FLOORS`), each named in its ``__init__`` docstring with what it may import:

1. ``numbers/`` (exact and float numbers) and ``sampling/`` (random sources, exact
   samplers);
2. ``theory/`` (scales, polytopes, enumeration, representation, the (eps, delta)
   forms, mechanisms and metrics, polytope files);
3. ``constructors/``;
4. ``certify/`` (exact certificates);
5. ``explore/`` (cases, instances, the exploration engine, strategies, the searches,
   ``dpfix verify``'s runner);
6. ``io/`` (tables on disk, the atomic commit, reports as files): it reads and writes,
   and imports nothing of a release;
7. ``release/`` (privatizers, the frameworks, ``privatize_table``, the row order, the
   reports' contents, the Dask engine), which reads and writes through ``io``;
8. ``experiments/`` (the paper's experiments, run through ``release``);
9. ``cli/`` (the roof: nothing else imports it).

The package's ``__init__`` (the top-level exports, imported lazily) sits on
the roof too, and nothing in src imports it by its bare name except its
``__version__`` constant (the ``__init__`` imports no dpfix module). Beside it stand
only the roof's two entries of :data:`BESIDE_INIT` (``python -m dpfix`` and the short
path ``dpfix.parametric``); any other module is checked by the folder it stands in.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "dpfix"

#: a folder of src/dpfix (the second component of a module name) -> its floor
FLOORS = {
    "numbers": 1, "sampling": 1,
    "theory": 2,
    "constructors": 3,
    "certify": 4,
    "explore": 5,
    "io": 6,
    "release": 7,
    "experiments": 8,
    "cli": 9,
}
ROOF = 9
#: the modules beside the package's ``__init__``, on the roof: ``__main__`` runs the CLI
#: (``python -m dpfix``), ``parametric`` re-exports ``dpfix.theory.parametric``
BESIDE_INIT = ("dpfix.__main__", "dpfix.parametric")


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = ("dpfix", *path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def floor(module: str) -> int | None:
    """The floor of a dpfix module name (None: not in the table)."""
    parts = module.split(".")
    if len(parts) == 1 or module in BESIDE_INIT:
        return ROOF  # the package's __init__ (top-level exports) and its two neighbours
    return FLOORS.get(parts[1])


def _is_package(module: str) -> bool:
    return module in MODULES and MODULES[module].name == "__init__.py"


def imports(module: str, source: str | None = None) -> list[tuple[int, str]]:
    """``(line, imported dpfix module)`` for every import statement of ``module``
    (its file, or ``source``)."""
    if source is None:
        source = MODULES[module].read_text(encoding="utf-8")
    tree = ast.parse(source)
    package = module if _is_package(module) else module.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for a in node.names:
                if base == "dpfix" and a.name == "__version__":
                    continue  # a constant of the package's __init__, which imports nothing
                sub = f"{base}.{a.name}"
                out.append((node.lineno, sub if sub in MODULES else base))
    return [(line, name) for line, name in out if name == "dpfix" or name.startswith("dpfix.")]


def test_every_module_stands_in_a_floor_folder():
    loose = [m for m in MODULES if m != "dpfix" and len(m.split(".")) == 2
             and MODULES[m].name != "__init__.py" and m not in BESIDE_INIT]
    assert not loose, f"modules beside the package __init__, in no floor folder: {loose}"
    missing = [m for m in MODULES if floor(m) is None]
    assert not missing, f"modules in a folder that is not in FLOORS: {missing}"


def test_every_folder_is_a_floor():
    folders = sorted(p.name for p in SRC.iterdir()
                     if p.is_dir() and (p / "__init__.py").exists())
    assert folders == sorted(FLOORS), "src/dpfix's folders and FLOORS differ"


@pytest.mark.parametrize("folder", sorted(FLOORS))
def test_every_folder_says_what_it_holds_and_what_it_may_import(folder):
    doc = ast.get_docstring(ast.parse((SRC / folder / "__init__.py").read_text("utf-8")))
    assert doc, f"src/dpfix/{folder}/__init__.py has no docstring"
    assert re.match(rf"Floor {FLOORS[folder]}, {folder}\b", doc), (
        f"{folder}'s docstring should open with 'Floor {FLOORS[folder]}, {folder}: ...'")
    allowed = "imported by nothing" if FLOORS[folder] == ROOF else "May import"
    assert allowed in doc, f"{folder}'s docstring does not say what it may import"
    for other, level in FLOORS.items():
        if level > FLOORS[folder]:
            assert f":mod:`dpfix.{other}`" not in doc.split(allowed, 1)[1], (
                f"{folder} says it may import {other}, a higher floor")


def test_no_import_goes_upward():
    bad = []
    for module in MODULES:
        own = floor(module)
        if own is None:
            continue
        for line, target in imports(module):
            their = floor(target)
            if their is None:
                bad.append(f"{module}:{line} imports {target} (not in the floor table)")
            elif target == "dpfix" and module != "dpfix":
                bad.append(f"{module}:{line} imports the top-level package dpfix (use the "
                           "module that defines the name)")
            elif their > own:
                bad.append(f"{module} (floor {own}):{line} imports {target} (floor {their})")
            elif target.startswith("dpfix.cli") and not module.startswith("dpfix.cli") \
                    and module != "dpfix.__main__":
                bad.append(f"{module}:{line} imports {target}: nothing imports the CLI")
    assert not bad, "imports that go upward:\n" + "\n".join(bad)


def test_the_package_init_imports_no_dpfix_module():
    assert imports("dpfix") == []


def test_no_argparse_outside_the_cli():
    bad = []
    for module, path in MODULES.items():
        if module.startswith("dpfix.cli"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) else [])
            if any(n and n.split(".")[0] == "argparse" for n in names):
                bad.append(f"{module}:{node.lineno}")
    assert not bad, f"argparse outside src/dpfix/cli: {bad}"


def test_the_checker_sees_every_kind_of_import():
    code = ("import dpfix.numbers.exact\n"
            "def f():\n    from dpfix.release.pipeline import privatize_counts\n"
            "    from . import heuristic\n    from ..theory import mechanism\n"
            "    if True:\n        import dpfix.cli\n")
    found = sorted(name for _, name in imports("dpfix.constructors.probe", code))
    assert found == ["dpfix.cli", "dpfix.constructors.heuristic", "dpfix.numbers.exact",
                     "dpfix.release.pipeline", "dpfix.theory.mechanism"]
    assert floor("dpfix.release.pipeline") > floor("dpfix.constructors.probe") == 3
    assert floor("dpfix.cli.privatize") == ROOF and floor("dpfix.data") is None


OPTIONAL = ("pywt", "pandas", "opendp", "numba", "tqdm", "matplotlib")


@pytest.mark.parametrize("module", ["dpfix", "dpfix.constructors", "dpfix.release.pipeline",
                                    "dpfix.theory.polytopes", "dpfix.theory.representation",
                                    "dpfix.certify", "dpfix.explore.search",
                                    "dpfix.release.opendp"])
def test_research_path_imports_no_production_extra(module):
    code = (f"import sys, {module}; "
            f"print(' '.join(m for m in {OPTIONAL!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "", f"import {module} imported {out}"


def test_a_missing_extra_is_one_line_naming_it(monkeypatch):
    from dpfix.numbers.numeric import require

    monkeypatch.setitem(sys.modules, "pywt", None)  # as if PyWavelets were not installed
    with pytest.raises(ImportError, match=r"PyWavelets is not installed; .*"
                                          r"pip install 'dpfix\[production\]'"):
        require("pywt")


def test_top_level_exports():
    import dpfix
    from dpfix import (
        RF,
        RU,
        ExactnessError,
        F,
        Mechanism,
        U,
        __version__,
        algebraic,
        construct,
        privatize_counts,
        psi,
        read_polytope,
        scale,
    )
    from dpfix.constructors import construct as construct_
    from dpfix.numbers.exact import ExactnessError as ExactnessError_
    from dpfix.release.pipeline import privatize_counts as privatize_counts_
    from dpfix.theory.formats import read_polytope as read_polytope_
    from dpfix.theory.mechanism import Mechanism as Mechanism_
    from dpfix.theory.polytopes import RF as RF_
    from dpfix.theory.polytopes import RU as RU_
    from dpfix.theory.polytopes import F as F_
    from dpfix.theory.polytopes import U as U_
    from dpfix.theory.scales import psi as psi_
    from dpfix.theory.scales import scale as scale_

    assert (U, F, RF, RU, scale, psi) == (U_, F_, RF_, RU_, scale_, psi_)
    assert (construct, Mechanism, privatize_counts, ExactnessError) == \
        (construct_, Mechanism_, privatize_counts_, ExactnessError_)
    assert read_polytope is read_polytope_
    from dpfix.numbers.algebraic import algebraic as algebraic_

    assert algebraic is algebraic_
    assert __version__ == dpfix.__version__ and sorted(dpfix.__all__) == sorted(
        ["U", "F", "RF", "RU", "scale", "psi", "construct", "Mechanism", "privatize_counts",
         "ExactnessError", "Error", "read_polytope", "algebraic", "parametric",
         "__version__"])
    from dpfix.numbers.errors import Error

    assert dpfix.Error is Error
    import dpfix.parametric
    import dpfix.theory.parametric

    assert dpfix.parametric.chambers is dpfix.theory.parametric.chambers
    assert construct([0.5, 0.5], 1.0).constructor == "northwest"
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        dpfix.nothing  # noqa: B018


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node of ``graph`` (node -> the
    nodes it imports), each sorted: every set of nodes that reach each other."""
    found, index, low, stack, on, counter = [], {}, {}, [], set(), [0]

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in list(graph):
        if v not in index:
            visit(v)
    return found


def folder(module: str) -> str:
    """The folder of a dpfix module (``dpfix`` for the package's ``__init__`` and the
    modules beside it)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and _is_package(module)) \
        else "dpfix"


def folder_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The folders that import each other, directly or through others, in a module import
    ``graph``: the cycles of the graph of folders (an import within a folder draws no
    edge)."""
    folders: dict[str, set[str]] = {}
    for module, targets in graph.items():
        here = folder(module)
        folders.setdefault(here, set()).update(
            folder(t) for t in targets if folder(t) != here)
    return cycles(folders)


def _graph() -> dict[str, set[str]]:
    return {m: {t for _, t in imports(m) if t in MODULES and t != m} for m in MODULES}


def test_no_import_cycles():
    """No module reaches itself through imports (e.g. a package's ``__init__`` and a
    submodule that imports the package back)."""
    found = cycles(_graph())
    assert not found, f"import cycles: {found}"


def test_no_two_folders_import_each_other():
    """No folder imports, directly or through others, a folder that imports it: whatever
    the floors say, the folders stand one above the other."""
    found = folder_cycles(_graph())
    assert not found, f"folders that import each other: {found}"


def test_the_folder_check_sees_two_folders_that_import_each_other():
    """A synthetic graph: ``io`` importing ``release`` while ``release`` imports ``io``
    (each module on its own is acyclic) is a cycle of folders; the same modules without
    the arrow back up are not."""
    graph = {"dpfix.io.engines": {"dpfix.release.frameworks", "dpfix.io.tables"},
             "dpfix.release.table": {"dpfix.io.engines"},
             "dpfix.release.frameworks": set(), "dpfix.io.tables": set()}
    assert cycles(graph) == []
    assert folder_cycles(graph) == [["io", "release"]]
    graph["dpfix.io.engines"] = {"dpfix.io.tables"}
    assert folder_cycles(graph) == []
    graph["dpfix.numbers.exact"] = {"dpfix.theory.polytopes"}  # a longer loop: three folders
    graph["dpfix.theory.polytopes"] = {"dpfix.release.table"}
    graph["dpfix.io.tables"] = {"dpfix.numbers.exact"}
    assert folder_cycles(graph) == [["io", "numbers", "release", "theory"]]

