"""Loading and running the checks of the paper's results (``proofs_checks/``).

Each script ``check_*.py`` states one result of the paper (``docs/math_notes.md``
lists what is checked and how) and checks it on exhaustive small cases. It
defines

- ``RESULT``: the result's name, e.g. ``"Theorem 4"``;
- ``STATEMENT``: the statement in one line;
- ``run(mode) -> int``: checks it (``mode`` is ``"quick"`` or ``"full"``),
  returns the number of cases checked, and raises ``AssertionError`` naming
  the failing case otherwise.

A script also runs alone: ``python proofs_checks/check_x.py [--full]``. In a
checkout the folder stands beside ``src/``; an installed dpfix carries it as
the package ``dpfix.proofs_checks``. ``dpfix verify`` prints the table of
:func:`run_checks`.

``dpfix verify --every-lam`` runs the checks that define ``every_lam(n, cases)``
(Lemma 1, Theorems 2, 3, 4, Corollaries 2, 3, Theorem A) at a fixed ``n``, not on the
fixed lam grid but at a rational point of every chamber and at every breakpoint of
the polytopes they are about (:func:`every_lam_cases`; :mod:`dpfix.theory.parametric`):
U(n) for a check with ``EVERY_LAM = "U"``, else F(n, z) and R_F(n, z) for each standard
z. At an irrational breakpoint ``lam`` is a real algebraic number
(:mod:`dpfix.numbers.algebraic`) and every check runs exactly over ``Q(lam)``: the
same statements on the same objects, the vertices enumerated over the field (Normaliz's
number-field input), ranks, decompositions and certificates computed in it, and an
exact LP replaced by the best of the exact vertices (a linear function attains its
optimum over a polytope at a vertex).

A check that needs a module of an optional extra (PyWavelets for the Privelet
baseline, ...) which is not installed is *skipped*, with one line naming the
extra: ``pip install .`` alone gives a ``dpfix verify`` that passes.
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import os
import re
import time
import traceback
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from dpfix.numbers.algebraic import ExactKey, is_algebraic
from dpfix.numbers.numeric import PRODUCTION_EXTRA

__all__ = ["CheckOutcome", "find_checks_dir", "load_checks", "run_checks", "checked",
           "format_table",
           "CHECKS_PACKAGE", "every_lam_cases", "EVERY_LAM_NS"]

#: The sizes ``dpfix verify --every-lam`` takes (R_F's chambers are computed to n = 3).
EVERY_LAM_NS = (2, 3)

#: The package an installed dpfix carries the checks in.
CHECKS_PACKAGE = "dpfix.proofs_checks"

#: The optional modules a check may need: import name -> (extra, package).
OPTIONAL_MODULES = {**{m: ("production", p) for m, p in PRODUCTION_EXTRA.items()},
                    "dask": ("production", "dask"), "distributed": ("production", "distributed"),
                    "PyNormaliz": ("enumeration", "PyNormaliz")}


@dataclass
class CheckOutcome:
    """One row of the verify table.

    Attributes
    ----------
    name : str
        The script's name without ``check_`` (``"theorem4_simplified"``).
    result, statement : str
        The script's ``RESULT`` and ``STATEMENT``.
    cases : int
        The number of cases checked.
    outcome : str
        ``"ok"``, ``"FAIL"`` (an assertion failed, or no case was checked),
        ``"ERROR"`` (the script crashed) or ``"skipped"`` (it needs an optional
        extra that is not installed).
    seconds : float
    detail : str
        The failure's message, the crash's traceback, or for a skipped check
        the line naming the extra (``"skipped: needs dpfix[production]
        (PyWavelets)"``).
    """

    name: str
    result: str
    statement: str
    cases: int
    outcome: str
    seconds: float
    detail: str = ""


def _installed_checks_dir() -> Path | None:
    """The folder of the ``dpfix.proofs_checks`` package, if one is importable."""
    try:
        spec = importlib.util.find_spec(CHECKS_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        if Path(location).is_dir():
            return Path(location)
    return None


def find_checks_dir(path: str | Path | None = None) -> Path:
    """The folder of the check scripts.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        An explicit folder: used if it exists, refused otherwise (never
        replaced by another).

    Returns
    -------
    pathlib.Path
        Without ``path``, the first folder found of: ``$DPFIX_CHECKS``,
        ``./proofs_checks``, the ``proofs_checks`` beside this source tree (a
        checkout), the installed package ``dpfix.proofs_checks``.

    Raises
    ------
    FileNotFoundError
        If ``path`` is not a folder, or no folder is found.

    Examples
    --------
    >>> import shutil, tempfile
    >>> d = tempfile.mkdtemp()
    >>> find_checks_dir(d) == Path(d)
    True
    >>> find_checks_dir().name in ("proofs_checks", "dpfix.proofs_checks")
    True
    >>> shutil.rmtree(d)
    """
    if path is not None:
        if not Path(path).is_dir():
            raise FileNotFoundError(f"--dir {path}: no such folder")
        return Path(path)
    candidates = [os.environ.get("DPFIX_CHECKS"), "proofs_checks",
                  Path(__file__).resolve().parents[2] / "proofs_checks"]
    for c in candidates:
        if c and Path(c).is_dir():
            return Path(c)
    installed = _installed_checks_dir()
    if installed is not None:
        return installed
    raise FileNotFoundError("no proofs_checks folder found; pass --dir or set DPFIX_CHECKS")


def load_checks(directory: str | Path, only: str | None = None) -> list[tuple[str, ModuleType]]:
    """Import every ``check_*.py`` of ``directory``, in name order.

    Parameters
    ----------
    directory : str or pathlib.Path
    only : str, optional
        Keep the checks whose file name or ``RESULT`` contains these whole
        words, case-insensitive: ``"Theorem 1"`` selects Theorem 1, not
        Theorem 10.

    Returns
    -------
    list of (str, module)
        The name without ``check_`` and the imported script.

    Raises
    ------
    ValueError
        If ``only`` matches no check, or the folder has no check script.

    Examples
    --------
    >>> [name for name, _ in load_checks(find_checks_dir(), only="Theorem 1")]
    ['theorem1_cyclic']
    """
    directory = Path(directory)
    out = []
    for file in sorted(directory.glob("check_*.py")):
        spec = importlib.util.spec_from_file_location(f"proofs_checks.{file.stem}", file)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        key = f"{file.stem} {module.RESULT}".lower()
        if only is None or re.search(rf"(?<!\w){re.escape(only.lower())}(?!\w)", key):
            out.append((file.stem.removeprefix("check_"), module))
    if only is not None and not out:
        raise ValueError(f"--only {only!r} matches no check in {directory}")
    if not out:
        raise ValueError(f"no check_*.py script in {directory}: nothing would be verified")
    return out


def missing_extra(exc: BaseException) -> str | None:
    """The skip line if ``exc`` comes from an optional module that is not installed.

    Parameters
    ----------
    exc : BaseException
        What a check raised.

    Returns
    -------
    str or None
        ``"skipped: needs dpfix[EXTRA] (PACKAGE)"`` if ``exc`` or an exception
        it was raised from (``__cause__``, ``__context__``) is a
        ``ModuleNotFoundError`` for a module of :data:`OPTIONAL_MODULES` that
        cannot be found; ``None`` otherwise, so that a failed import of
        anything else, or of an installed module, stays an error.

    Examples
    --------
    >>> try:
    ...     import pywt_not_here
    ... except ImportError as exc:
    ...     print(missing_extra(exc))
    None
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ModuleNotFoundError) and exc.name:
            top = exc.name.split(".")[0]
            if top in OPTIONAL_MODULES and importlib.util.find_spec(top) is None:
                extra, package = OPTIONAL_MODULES[top]
                return f"skipped: needs dpfix[{extra}] ({package})"
        exc = exc.__cause__ or exc.__context__
    return None


@cache
def _pieces(kind: str, n: int, z: tuple[Fraction, ...] | None) -> tuple[Any, ...]:
    from dpfix.theory.parametric import chambers

    return tuple(chambers(kind, n, None if z is None else list(z)))


def every_lam_cases(kind: str, n: int) -> tuple[list[tuple[Any, str, Any]], list[str]]:
    """``(cases, skipped)`` for ``dpfix verify --every-lam`` at size ``n``.

    ``cases``: ``(lam, z_name, z)`` at the sample point of every chamber and at every
    breakpoint, of U(n) (``kind="U"``, ``z`` None) or of F(n, z) and R_F(n, z) for each
    standard z (``kind="F"``), each ``(lam, z)`` once, by z's name then increasing lam;
    an irrational breakpoint's ``lam`` is an :class:`~dpfix.numbers.algebraic.Algebraic`
    (the checks run over ``Q(lam)``). ``skipped``: the pieces no check can take: none
    at the sizes of :data:`EVERY_LAM_NS` when PyNormaliz is installed; without it (no
    enumeration over ``Q(lam)``) the irrational breakpoints, each named with the extra
    that it needs.

    Examples
    --------
    >>> cases, skipped = every_lam_cases("U", 3)
    >>> cases, skipped
    ([(Fraction(2, 1), 'U', None)], [])
    >>> cases, skipped = every_lam_cases("F", 3)
    >>> len(cases), skipped
    (31, [])
    >>> [str(lam) for lam, name, _ in cases if name == "geometric"][:2]
    ['7/6', 'root of 2*x^2 + x - 4 ~ 1.1861406616']
    """
    from dpfix.explore.cases import standard_z

    if n not in EVERY_LAM_NS:
        raise ValueError(f"--n: every-lam checks run at n in {EVERY_LAM_NS}, got {n}")
    targets = [("U", None, "U")] if kind == "U" else [
        (k, z, name) for name, z in standard_z(n).items() for k in ("F", "RF")]
    from dpfix.theory.enumeration import normaliz_available

    field = normaliz_available()  # the vertices over Q(lam) come from Normaliz
    cases: dict[tuple[str, Any], tuple[Any, str, Any]] = {}
    skipped: list[str] = []
    for k, z, name in targets:
        for p in _pieces(k, n, None if z is None else tuple(z)):
            lam = p.lo if p.is_breakpoint else p.sample
            if not isinstance(lam, Fraction) and not (is_algebraic(lam) and field):
                why = "" if not is_algebraic(lam) else (
                    " (needs dpfix[enumeration], PyNormaliz: the vertices over Q(lam))")
                skipped.append(f"{k}(n={n}, z={name}) at {lam}{why}")
                continue
            cases.setdefault((name, _exact_key(lam)), (lam, name, z))
    # by lam (exactly), then stably by z's name: a tuple key would compare ExactKeys by
    # ==, and elements of two number fields are never compared
    order = sorted(sorted(cases, key=lambda key: ExactKey(cases[key][0])), key=lambda k: k[0])
    return [cases[key] for key in order], skipped


def _exact_key(lam: Any) -> Any:
    """A dict key of an exact lam: the Fraction, or an algebraic number's field and
    coordinates (elements of two fields are never compared)."""
    if isinstance(lam, Fraction):
        return lam
    return (lam.field.key, tuple(lam.coefficients()))


def _every_lam(module: Any, n: int) -> tuple[int, str]:
    cases, skipped = every_lam_cases(getattr(module, "EVERY_LAM", "F"), n)
    count = int(module.every_lam(n, cases))
    lams = {_exact_key(lam): lam for lam, _, _ in cases}
    rational = sorted(v for v in lams.values() if isinstance(v, Fraction))
    irrational = sorted((v for v in lams.values() if not isinstance(v, Fraction)), key=ExactKey)
    detail = (f"n = {n}: {len(cases)} (lam, z) at every chamber and every breakpoint, "
              f"lam in {{{', '.join(map(str, rational))}}}")
    if irrational:
        detail += (f" and the {len(irrational)} irrational breakpoints (exact over Q(lam)): "
                   f"{'; '.join(map(str, irrational))}")
    if skipped:
        detail += f"; not at {len(skipped)} pieces: {'; '.join(skipped)}"
    return count, detail


def run_checks(checks: list[tuple[str, Any]], mode: str = "quick",
               n: int = 3, jobs: int = 1) -> list[CheckOutcome]:
    """Run the checks and collect their outcomes; a failure does not stop the rest.

    Parameters
    ----------
    checks : list of (str, module)
        What :func:`load_checks` returns (any object with ``RESULT``,
        ``STATEMENT`` and ``run`` will do).
    mode : str
        ``"quick"`` (the CI subset), ``"full"`` (the exhaustive grid) or
        ``"every-lam"`` (every chamber and every breakpoint at size ``n``, the irrational
        ones over ``Q(lam)``; a check without ``every_lam`` is skipped).
    n : int
        The size for ``"every-lam"``.
    jobs : int
        Worker processes (started by spawn); each check script runs whole in one of them,
        imported again from its file, and the outcomes come back in the order of
        ``checks``. A check that is not a file's module runs in this process.

    Returns
    -------
    list of CheckOutcome
        A check that checks no case fails; a crash is an ``"ERROR"`` with its
        traceback, never hidden, unless it is the import of an optional module
        that is not installed (:func:`missing_extra`): then ``"skipped"``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> def run(mode):
    ...     assert mode == "quick", "the full grid fails at n = 9"
    ...     return 12
    >>> check = SimpleNamespace(RESULT="Lemma 0", STATEMENT="a toy check", run=run)
    >>> [(r.result, r.outcome, r.cases) for r in run_checks([("lemma0", check)])]
    [('Lemma 0', 'ok', 12)]
    >>> [(r.outcome, r.detail) for r in run_checks([("lemma0", check)], mode="full")]
    [('FAIL', 'the full grid fails at n = 9')]
    """
    return list(checked(checks, mode, n, jobs))


def checked(checks: list[tuple[str, Any]], mode: str = "quick", n: int = 3,
            jobs: int = 1) -> Iterator[CheckOutcome]:
    """:func:`run_checks` one outcome at a time, in the order of ``checks``, each as soon as
    it and the checks before it have run (``dpfix verify`` prints its progress from it).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> check = SimpleNamespace(RESULT="Lemma 0", STATEMENT="a toy check", run=lambda m: 3)
    >>> [r.cases for r in checked([("a", check), ("b", check)])]
    [3, 3]
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs: a number of processes >= 1, got {jobs!r}")
    files = [getattr(module, "__file__", None) for _, module in checks]
    if jobs == 1 or len(checks) < 2 or None in files:
        for check in checks:
            yield _run_one(check, mode, n)
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(checks)), mp_context=context) as pool:
        futures = [pool.submit(_run_file, name, file, module.RESULT, module.STATEMENT, mode, n)
                   for (name, module), file in zip(checks, files, strict=True)]
        try:
            for future in futures:
                yield future.result()
        finally:
            for future in futures:
                future.cancel()


def _run_file(name: str, file: str, result: str, statement: str, mode: str,
              n: int) -> CheckOutcome:
    """One check in a worker process: its script imported again from ``file`` and run."""
    try:
        spec = importlib.util.spec_from_file_location(f"proofs_checks.{Path(file).stem}", file)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as exc:  # the script imported in the parent: report, never hide
        skip = missing_extra(exc)
        return CheckOutcome(name, result, statement, 0, "skipped" if skip else "ERROR", 0.0,
                            skip or traceback.format_exc(limit=3))
    return _run_one((name, module), mode, n)


def _run_one(check: tuple[str, Any], mode: str, n: int) -> CheckOutcome:
    """One check run in this process: its outcome, a failure or crash included."""
    name, module = check
    start = time.perf_counter()
    cases, outcome, detail = 0, "ok", ""
    try:
        if mode == "every-lam" and not hasattr(module, "every_lam"):
            return CheckOutcome(name, module.RESULT, module.STATEMENT, 0, "skipped",
                                0.0, "skipped: no every-lam form (its lam grid is "
                                "not about the polytopes' chambers)")
        if mode == "every-lam":
            cases, detail = _every_lam(module, n)
        else:
            cases = int(module.run(mode))
        if cases <= 0:
            outcome, detail = "FAIL", "no case checked"
    except AssertionError as exc:
        outcome, detail = "FAIL", str(exc)
    except Exception as exc:  # a crash is reported, not hidden
        skip = missing_extra(exc)
        outcome, detail = ("skipped", skip) if skip else ("ERROR",
                                                            traceback.format_exc(limit=3))
    return CheckOutcome(name, module.RESULT, module.STATEMENT, cases, outcome,
                        time.perf_counter() - start, detail)


def format_table(rows: list[CheckOutcome]) -> str:
    """A plain-text table: result, statement (cut at 90 characters), cases, outcome, seconds.

    Examples
    --------
    >>> print(format_table([CheckOutcome("x", "Lemma 1", "scales", 12, "ok", 0.25)]))
    result   statement  cases  outcome  seconds
    -------  ---------  -----  -------  -------
    Lemma 1  scales     12     ok       0.2
    """
    head = ("result", "statement", "cases", "outcome", "seconds")
    body = [(r.result, r.statement, str(r.cases), r.outcome, f"{r.seconds:.1f}") for r in rows]
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(5)]
    widths[1] = min(widths[1], 90)

    def line(cells):
        cells = list(cells)
        if len(cells[1]) > widths[1]:
            cells[1] = cells[1][: widths[1] - 3] + "..."
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return "\n".join([line(head), line("-" * w for w in widths), *map(line, body)])
