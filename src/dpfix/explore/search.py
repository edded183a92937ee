"""The exploration engine: pose a conjecture as a predicate, get the smallest exact
counterexample (:func:`smallest_counterexample`) or how often it holds (:func:`survey`).

A predicate is a function returning a ``bool`` (Python's or numpy's; anything else is
a ``TypeError``: truthiness of arrays or None would hide mistakes): True where the
conjecture holds, False for a counterexample. It may instead return a pair ``(holds,
details)``, ``details`` a dict of what it computed, by name: exact matrices and vectors
(Fractions, as nested lists or object arrays), exact numbers or text
(``{"optimum": T, "candidate": N, "remap": R, "optimum value": v}``). Where it fails, the
:class:`Counterexample` carries them (:attr:`Counterexample.details`, checked exact:
a float is a ``TypeError``) and prints them exactly, in text and in LaTeX
(:meth:`Counterexample.to_latex`); where it holds they are not looked at. ``over``
names what it receives:

- ``"instance"``: ``predicate(instance)``, the :class:`dpfix.explore.instances.Instance`;
- ``"U"``, ``"F"``, ``"RF"``, ``"RU"``: ``predicate(vertex, instance)`` for each vertex
  of the polytope of :mod:`dpfix.theory.polytopes` (an exact object array of Fractions), in
  :meth:`~dpfix.theory.polytopes.Polytope.vertices` order (lexicographic);
- ``"U-pairs"``, ``"F-pairs"``, ``"RF-pairs"``, ``"RU-pairs"``: ``predicate((a, b),
  instance)`` for each pair of vertices, ``a`` before ``b`` in that order (the pairs
  ``(V[i], V[j])``, ``i < j``, lexicographic in ``(i, j)``);
- ``"U_delta"``, ``"F_delta"``, ``"RF_delta"``, ``"RU_delta"``, ``"U_lifted"``,
  ``"F_lifted"``: the vertices of the (eps, delta) forms of
  :func:`dpfix.theory.delta.delta_polytope` (``delta=`` required; ``U_delta`` and
  ``F_delta`` are ``U(n, lam, delta)`` and ``F(n, lam, z, delta)``), as above;
- ``"mechanism"`` or ``"mechanism:NAME"``: ``predicate(mechanism, instance)`` for
  ``construct(z, lam=lam, constructor=NAME)`` (:func:`dpfix.constructors.construct`,
  default ``northwest``); the witness is its exact matrix.

Instances are visited ``n`` ascending, then ``lam`` in the given order, then ``z`` in
the given order (targets whose length is not ``n`` are skipped); objects without a
target (``U``, ``R_U`` and their forms; ``"instance"`` without ``z``) get ``z = None``
and ignore ``z``. With ``graph=`` (in place of ``n``) the instances are
:class:`dpfix.explore.graph_instances.GraphInstance` s: the graphs in their order (a
spec such as ``"star:4"``, a networkx graph, an atlas index, a family such as
``"connected:4"`` or ``"trees:2-5"``, or several: :func:`dpfix.explore.graph_instances.graphs_of`,
each refused in one line before any work when it is unknown, disconnected, has a
self-loop or a bad weight, or the family lies beyond the atlas), then ``lam``, then ``z``
(targets whose length is not the graph's number of nodes are skipped); the polytopes are
built on the graph (``U``, ``F``, ``RF``, ``RU`` and their pairs, ``U_delta`` and
``F_delta``), and the other objects, which the theory has for the path only, are refused
in one line. Defaults: ``lam = (2,)``; ``z`` the named targets of
:func:`dpfix.explore.instances.named_targets`. ``lam`` and ``z`` may be infinite generators
(:func:`dpfix.explore.instances.lams_by_height`,
:func:`dpfix.explore.instances.targets_by_denominator`):
they are replayed for each ``n``, and the budget ends the run.

Everything is exact (floats refused: :class:`dpfix.numbers.exact.ExactnessError`) and
reproducible: with ``jobs > 1`` the instances go to worker processes in order, with
``jobs`` a Dask client (``distributed.Client``) to the cluster's workers in order
(:mod:`dpfix.explore.distributed`), and the answer (the first counterexample in visiting
order, ``visited``, a survey's counts) is the one of ``jobs = 1``.

A time budget also stops a predicate that never returns: with ``jobs > 1`` the worker
processes are terminated at the deadline (whatever they run, C code included); with
``jobs = 1`` the predicate runs in this process and the deadline interrupts it by
``SIGALRM`` (POSIX, in the main thread, when no other timer is set), which stops Python
code but not a call into C until it returns. On a Dask client the chunks still out at
the deadline are cancelled (none of their instances visited) and a predicate still
running is interrupted on its worker as ``SIGALRM`` would interrupt it (Python code at
once, a call into C when it returns). However a search ends (an answer, an error, a
budget, a signal), no worker process is left behind, and on a Dask client no future of
the search is left running (the client itself stays open). An empty set of instances is
refused (a statement over nothing would hold vacuously).

One room, though long: one engine (what the predicate receives, the worker processes,
the instance stream, the budget, the cache, the progress bar), driven by one visiting
loop that :func:`smallest_counterexample` and :func:`survey` share; its parts hold each
other's invariants (visiting order, the deadline, the cleanup on every path).
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import itertools
import json
import multiprocessing
import multiprocessing.connection
import os
import pickle
import re
import signal
import sys
import threading
import time
import traceback
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpfix.constructors import CONSTRUCTORS, construct
from dpfix.explore.distributed import OrderedMap, check_sendable, is_client, worker_threads
from dpfix.explore.graph_instances import GraphInstance, graphs_of
from dpfix.explore.instances import Instance, Targets, named_targets
from dpfix.numbers.deprecation import warn_deprecated
from dpfix.numbers.display import format_exact, to_latex
from dpfix.numbers.errors import Error
from dpfix.numbers.exact import exact_array, exact_lam, is_exact_number, to_fraction
from dpfix.numbers.results import Result, jsonable
from dpfix.theory import polytopes
from dpfix.theory.delta import delta_polytope
from dpfix.theory.polytopes import check_delta, check_kind

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["smallest_counterexample", "survey", "Counterexample", "SearchResult",
           "SurveyResult", "PredicateError", "PredicateTypeError", "BudgetReached", "OVERS",
           "FilePredicate"]

#: The values of ``over`` -> what the predicate receives.
OVERS: dict[str, str] = {
    "instance": "predicate(instance)",
    "U": "each vertex of U(n, lam): predicate(vertex, instance)",
    "F": "each vertex of F(n, lam, z)",
    "RF": "each vertex of R_F(n, lam, z)",
    "RU": "each vertex of R_U(n, lam)",
    "U-pairs": "each pair (a, b) of vertices of U, a before b: predicate((a, b), instance)",
    "F-pairs": "each pair (a, b) of vertices of F, a before b",
    "RF-pairs": "each pair (a, b) of vertices of R_F, a before b",
    "RU-pairs": "each pair (a, b) of vertices of R_U, a before b",
    "U_delta": "each vertex of U(n, lam, delta) (delta= required)",
    "F_delta": "each vertex of F(n, lam, z, delta)",
    "RF_delta": "each vertex of RF_delta(n, lam, z, delta)",
    "RU_delta": "each vertex of RU_delta(n, lam, delta)",
    "U_lifted": "each vertex of U_lifted(n, lam, delta)",
    "F_lifted": "each vertex of F_lifted(n, lam, z, delta)",
    "mechanism": "construct(z, lam=lam, constructor=NAME) for over='mechanism:NAME' (default "
                 "northwest): predicate(mechanism, instance)",
}
_NO_TARGET = {"U", "RU", "U_delta", "RU_delta", "U_lifted", "instance"}
#: The delta forms: over -> (kind, form) of :func:`dpfix.theory.delta.delta_polytope`.
_DELTA = {"U_delta": ("U", "subset"), "F_delta": ("F", "subset"),
          "RU_delta": ("U", "representation"), "RF_delta": ("F", "representation"),
          "U_lifted": ("U", "lifted"), "F_lifted": ("F", "lifted")}
#: instances a worker process receives at a time (jobs > 1); on a Dask client, the
#: first chunks' size
_CHUNK = 8
class PredicateError(Error, RuntimeError):
    """The predicate raised (or called ``sys.exit``): ``instance``, ``witness`` (what it
    was given), the formatted ``traceback`` of the original exception and the name of
    its type, ``exception_type`` (``"SystemExit"`` for ``sys.exit``)."""

    def __init__(self, name: str, instance: Instance, witness: Any, tb: str,
                 exception_type: str = "Exception") -> None:
        last = tb.strip().splitlines()[-1] if tb.strip() else "an exception"
        super().__init__(f"predicate {name} raised {last} at {instance!r}\n{tb}")
        self.instance, self.witness, self.traceback = instance, witness, tb
        self.exception_type = exception_type


class PredicateTypeError(Error, TypeError):
    """The predicate returned something other than a bool (Python's or numpy's) or a pair
    ``(bool, details)`` (the details a dict of named exact values): the truth value of an
    array or of None would hide a mistake, a float detail would print inexactly.
    ``instance`` is where."""

    def __init__(self, message: str, instance: Instance) -> None:
        super().__init__(message)
        self.instance = instance


class BudgetReached(UserWarning):
    """The budget ended a search before it visited every instance."""


# ------------------------------------------------------------------ exact display
def _format_witness(witness: Any, details: dict[str, Any] | None = None) -> str:
    if witness is None:
        parts = [] if details else ["(the instance itself)"]
    elif isinstance(witness, tuple):
        a, b = witness
        parts = [f"a:\n{format_exact(a)}\nb:\n{format_exact(b)}"]
    else:
        parts = [format_exact(witness)]
    for name, value in (details or {}).items():
        if isinstance(value, np.ndarray):
            parts.append(f"{name}:\n{format_exact(value)}")
        else:
            parts.append(f"{name}: {value}")
    return "\n".join(parts)


def _latex_text(text: str) -> str:
    """``text`` inside ``\\text{...}``, LaTeX's special characters escaped."""
    special = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
               "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
               "^": r"\textasciicircum{}"}
    return r"\text{" + "".join(special.get(c, c) for c in text) + "}"


def _latex_value(value: Any) -> str:
    """An exact matrix, vector or number as LaTeX (a ``bmatrix`` of ``\\frac``), text as
    text."""
    if isinstance(value, np.ndarray):
        return to_latex(value)
    if isinstance(value, (Fraction, int)):
        return to_latex([value]).splitlines()[1]  # the one entry of a 1 x 1 matrix
    return _latex_text(str(value))


def _exact_details(details: Any) -> dict[str, Any] | None:
    """The ``details`` of a predicate's ``(holds, details)`` checked: a dict of text names
    to exact matrices or vectors (object arrays of Fractions), exact numbers (Fractions)
    or text, in the given order. Raises ``TypeError`` (a float:
    :class:`dpfix.numbers.exact.ExactnessError`) or ``ValueError`` naming the entry."""
    if details is None:
        return None
    if not isinstance(details, dict):
        raise TypeError(f"the details must be a dict of named exact values, got "
                        f"{type(details).__name__}")
    out: dict[str, Any] = {}
    for name, value in details.items():
        if not isinstance(name, str):
            raise TypeError(f"the details' names must be text, got {name!r}")
        if isinstance(value, str):
            out[name] = value
        elif isinstance(value, (bool, np.bool_)):
            raise TypeError(f"details[{name!r}]: a bool is no exact number")
        elif is_exact_number(value):
            out[name] = to_fraction(value, f"details[{name!r}]")
        else:
            arr = exact_array(value, f"details[{name!r}]")
            if arr.ndim not in (1, 2):
                raise ValueError(f"details[{name!r}]: a vector or a matrix, got {arr.ndim} "
                                 "dimensions")
            out[name] = arr
    return out


@dataclass(frozen=True)
class Counterexample(Result):
    """An instance where the predicate returned False, what it was given there, and what
    it computed there (the ``details`` of a predicate that returns ``(False, details)``).

    ``str()`` prints everything exactly; :meth:`to_latex` gives the same as LaTeX (every
    matrix a ``bmatrix`` of ``\\frac``), which a notebook shows.

    Attributes
    ----------
    instance : Instance
        The exact instance (``.n``, ``.lam``, ``.z``; a
        :class:`~dpfix.explore.graph_instances.GraphInstance` also its graph).
    witness : numpy.ndarray, tuple of two arrays, or None
        The failing vertex (object array of Fractions), the failing pair ``(a, b)``, the
        mechanism's exact matrix, or None for ``over="instance"``.
    visited : int
        Instances visited, this one included (in visiting order; cached ones count).
    over : str
        What the predicate received.
    details : dict or None
        What the predicate returned with False, by name: exact matrices and vectors
        (object arrays of Fractions), Fractions or text; None when it returned a bool.

    Examples
    --------
    >>> def optimum_is_constant(inst):   # a statement that fails, with what shows it
    ...     from dpfix.explore.graph_mechanisms import exact_minimum, loss_weights
    ...     G, z = inst.neighbour_graph(), inst.z_array()
    ...     opt = exact_minimum(polytopes.F(inst.n, inst.lam, z, graph=G),
    ...                         loss_weights(G, z, "distance"))
    ...     return bool((opt.point == opt.point[0]).all()), {"optimum": opt.value,
    ...                                                       "T": opt.point}
    >>> ce = smallest_counterexample(optimum_is_constant, over="instance", graph="path:2",
    ...                              z=["1/2", "1/2"]).counterexample
    >>> print(ce)
    counterexample over instance at path:2 (edges 01), n = 2, lam = 2, z = (1/2, 1/2) \
(instance 1 visited)
    witness:
    optimum: 1/3
    T:
    [2/3  1/3]
    [1/3  2/3]
    >>> print("\\n".join(ce.to_latex().splitlines()[-5:]))
    \\text{T} &= \\begin{bmatrix}
    \\frac{2}{3} & \\frac{1}{3} \\\\
    \\frac{1}{3} & \\frac{2}{3}
    \\end{bmatrix}
    \\end{aligned}
    """

    instance: Instance
    witness: Any
    visited: int
    over: str
    details: dict[str, Any] | None = None

    @property
    def n(self) -> int:
        return self.instance.n

    @property
    def lam(self) -> Fraction:
        return self.instance.lam

    @property
    def z(self) -> tuple[Fraction, ...] | None:
        return self.instance.z

    def __str__(self) -> str:
        return (f"counterexample over {self.over} at {self.instance} "
                f"(instance {self.visited} visited)\nwitness:\n"
                f"{_format_witness(self.witness, self.details)}")

    def to_latex(self) -> str:
        """The counterexample as an exact LaTeX ``aligned`` block: the instance (its graph,
        ``n``, ``lambda``, ``z``), the witness and the details, every matrix and vector a
        ``bmatrix`` of ``\\frac`` (:func:`dpfix.numbers.display.to_latex`).

        Examples
        --------
        >>> ce = Counterexample(Instance(2, 2, ["1/3", "2/3"]), None, 4, "instance",
        ...                     {"optimum": Fraction(1, 3)})
        >>> print(ce.to_latex())
        \\begin{aligned}
        &\\text{counterexample over instance (instance 4 visited)} \\\\
        n &= 2, \\quad \\lambda = 2 \\\\
        z &= \\begin{bmatrix}
        \\frac{1}{3} & \\frac{2}{3}
        \\end{bmatrix} \\\\
        \\text{optimum} &= \\frac{1}{3}
        \\end{aligned}
        """
        inst = self.instance
        head = f"counterexample over {self.over} (instance {self.visited} visited)"
        lines = [f"&{_latex_text(head)}"]
        if isinstance(inst, GraphInstance):
            lines.append(rf"\text{{graph}} &= {_latex_text(inst.graph_text())}")
        lines.append(rf"n &= {inst.n}, \quad \lambda = {_latex_value(inst.lam)}")
        if inst.z is not None:
            lines.append(f"z &= {to_latex(list(inst.z))}")
        if isinstance(self.witness, tuple):
            lines += [f"a &= {to_latex(self.witness[0])}", f"b &= {to_latex(self.witness[1])}"]
        elif self.witness is not None:
            lines.append(rf"\text{{witness}} &= {to_latex(self.witness)}")
        for name, value in (self.details or {}).items():
            lines.append(f"{_latex_text(name)} &= {_latex_value(value)}")
        return "\\begin{aligned}\n" + " \\\\\n".join(lines) + "\n\\end{aligned}"

    def _repr_latex_(self) -> str:
        """What a notebook shows: :meth:`to_latex` as display mathematics."""
        return f"$${self.to_latex()}$$"

    def describe(self) -> dict[str, Any]:
        """``over``, the instance (``n``, ``lam``, ``z``; a graph instance's ``graph``, its
        label and edges), the witness, the details and ``visited``, JSON-able (exact
        numbers as text)."""
        out = {"over": self.over, "n": self.n, "lam": jsonable(self.lam),
               "z": jsonable(self.z), "witness": jsonable(self.witness),
               "visited": self.visited}
        if isinstance(self.instance, GraphInstance):
            out["graph"] = {"label": self.instance.label,
                            "edges": jsonable(self.instance.edges),
                            "edge_weights": jsonable(self.instance.edge_weights)}
        if self.details is not None:
            out["details"] = jsonable(self.details)
        return out


#: the attributes of a counterexample a :class:`SearchResult` hands on (with a deprecation)
_HANDED_ON = ("instance", "witness", "n", "lam", "z")


@dataclass(frozen=True, repr=False)
class SearchResult(Result):
    """What a search returns, found or not: like :class:`scipy.optimize.OptimizeResult`, it
    says how far the search went whatever it found.

    True (``bool(result)``, :attr:`found`) when a counterexample was found.

    Attributes
    ----------
    counterexample : Counterexample or None
        The first failing instance in visiting order with its witness (for the searches
        built on the engine, their own record of it: a
        :class:`dpfix.explore.northwest.NorthwestCounterexample`, say), or None.
    visited : int
        Instances visited (cached ones included), the counterexample's included.
    stopped : str or None
        What ended the search before its last instance (the budget), or None.
    elapsed : float
        Seconds.

    Examples
    --------
    >>> r = smallest_counterexample(lambda T, inst: True, over="U", n=2, lam=[2, 3])
    >>> r.found, r.visited, r.stopped, r.counterexample
    (False, 2, None, None)
    >>> r
    SearchResult(found=False, visited=2, stopped=None)
    """

    counterexample: Any
    visited: int
    stopped: str | None = None
    elapsed: float = 0.0

    headline = ("found", "visited", "stopped")

    @property
    def found(self) -> bool:
        """Whether a counterexample was found."""
        return self.counterexample is not None

    def __getattr__(self, name: str) -> Any:
        # the counterexample's own attributes, for one release (the search returned it)
        ce = self.__dict__.get("counterexample") if not name.startswith("_") else None
        if ce is None or not hasattr(ce, name):
            if name in _HANDED_ON and "counterexample" in self.__dict__ and ce is None:
                raise AttributeError(f"SearchResult.{name}: no counterexample was found "
                                     f"({self.visited} instances visited); test "
                                     "result.found first")
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        warn_deprecated(f"SearchResult.{name} is deprecated; use "
                        f"SearchResult.counterexample.{name} (the old form goes in the next "
                        "release)")
        return getattr(ce, name)

    def __getitem__(self, key: str) -> Any:
        # a search that returned a dict: its keys, for one release
        ce = self.counterexample
        name = type(ce).former_keys.get(key) if isinstance(ce, Result) else None
        if name is None:
            return super().__getitem__(key)
        warn_deprecated(f"SearchResult[{key!r}] is deprecated; use "
                        f"SearchResult.counterexample.{name} (the old form goes in the next "
                        "release)")
        return getattr(ce, name)

    def __str__(self) -> str:
        if self.found:
            return str(self.counterexample)
        state = "complete" if self.stopped is None else f"stopped: {self.stopped}"
        return f"no counterexample: {self.visited} instances visited ({state})"

    def describe(self) -> dict[str, Any]:
        """``found``, ``visited``, ``stopped``, ``elapsed`` and the counterexample's own
        :meth:`~dpfix.numbers.results.Result.describe` (None when none was found)."""
        return {"found": self.found, "visited": self.visited, "stopped": self.stopped,
                "elapsed": self.elapsed, "counterexample": jsonable(self.counterexample)}


@dataclass(repr=False)
class SurveyResult(Result):
    """How often a predicate held, per ``(n, lam)``; :attr:`found` (and ``bool(result)``)
    when it failed or raised somewhere.

    Attributes
    ----------
    counts : dict
        ``(n, lam)`` -> ``{"held": int, "failed": int, "errored": int}``, in visiting order.
    failures : list of Counterexample
        Every failing instance with its witness, in visiting order.
    errors : list of PredicateError
        Every instance where the predicate raised.
    visited : int
        Instances visited (cached ones included).
    complete : bool
        False when the budget stopped the survey.
    elapsed : float
        Seconds.
    stopped : str or None
        What stopped it (the budget), or None.
    """

    counts: dict[tuple[int, Fraction], dict[str, int]] = field(default_factory=dict)
    failures: list[Counterexample] = field(default_factory=list)
    errors: list[PredicateError] = field(default_factory=list)
    visited: int = 0
    complete: bool = True
    elapsed: float = 0.0
    stopped: str | None = None

    @property
    def holds(self) -> bool:
        """True when the predicate held on every instance visited."""
        return not self.failures and not self.errors

    @property
    def found(self) -> bool:
        """Whether some instance failed or raised (``not holds``)."""
        return not self.holds

    def __repr__(self) -> str:
        return (f"SurveyResult(found={self.found}, visited={self.visited}, "
                f"failed={len(self.failures)}, errored={len(self.errors)}, "
                f"stopped={self.stopped!r})")

    def describe(self) -> dict[str, Any]:
        """``found``, ``visited``, ``complete``, ``stopped``, ``elapsed``, the counts per
        ``(n, lam)`` (a list of ``{"n", "lam", "held", "failed", "errored"}``), the failing
        instances (their :meth:`Counterexample.describe`) and the errors (instance and
        exception type)."""
        return {"found": self.found, "visited": self.visited, "complete": self.complete,
                "stopped": self.stopped, "elapsed": self.elapsed,
                "counts": [{"n": n, "lam": jsonable(lam), **c}
                           for (n, lam), c in self.counts.items()],
                "failures": [ce.describe() for ce in self.failures],
                "errors": [{"n": e.instance.n, "lam": jsonable(e.instance.lam),
                            "z": jsonable(e.instance.z), "exception_type": e.exception_type}
                           for e in self.errors]}

    def __str__(self) -> str:
        head = ("n", "lam", "visited", "held", "failed", "errored")
        rows = [(str(n), str(lam), str(sum(c.values())), str(c["held"]), str(c["failed"]),
                 str(c["errored"])) for (n, lam), c in self.counts.items()]
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
        lines = ["  ".join(x.rjust(w) for x, w in zip(r, widths, strict=True))
                 for r in [head, *rows]]
        state = "complete" if self.complete else f"stopped: {self.stopped}"
        lines.append(f"{self.visited} instances visited in {self.elapsed:.2f} s ({state})")
        lines += [f"failed at {ce.instance}" for ce in self.failures[:10]]
        if len(self.failures) > 10:
            lines.append(f"... and {len(self.failures) - 10} more failing instances")
        lines += [f"raised at {e.instance}" for e in self.errors[:10]]
        return "\n".join(lines)


# ------------------------------------------------------------------ predicates in files
class FilePredicate:
    """The function ``name`` of the Python file ``path``, loaded on first call (so it
    pickles by path: worker processes import the file themselves).

    Raises
    ------
    OSError
        The file cannot be read.
    LookupError
        The file defines no callable ``name``.
    """

    def __init__(self, path: str | os.PathLike, name: str = "predicate") -> None:
        self.path, self.name = str(Path(path).resolve()), name
        self._function: Callable | None = None
        self.source = Path(self.path).read_text(encoding="utf-8")

    def load(self) -> Callable:
        if self._function is None:
            spec = importlib.util.spec_from_file_location(
                f"_dpfix_user_{hashlib.sha1(self.path.encode()).hexdigest()[:12]}", self.path)
            if spec is None or spec.loader is None:
                raise OSError(f"{self.path}: not a Python file")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            fn = getattr(module, self.name, None)
            if not callable(fn):
                raise LookupError(f"{self.path}: defines no function {self.name!r}")
            self._function = fn
        return self._function

    def __call__(self, *args: Any) -> Any:
        return self.load()(*args)

    def __getstate__(self) -> dict:
        return {"path": self.path, "name": self.name, "source": self.source}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _function=None)

    def __repr__(self) -> str:
        return f"{Path(self.path).name}:{self.name}"


def _name(predicate: Callable) -> str:
    if isinstance(predicate, FilePredicate):
        return repr(predicate)
    return getattr(predicate, "__qualname__", None) or repr(predicate)


def _source_hash(predicate: Callable) -> str:
    source = getattr(predicate, "source", None)
    if source is None:
        try:
            source = inspect.getsource(predicate)
        except (OSError, TypeError):
            code = getattr(predicate, "__code__", None)
            source = repr(code.co_code) if code is not None else repr(predicate)
    return hashlib.sha256(source.encode()).hexdigest()[:16]


# ------------------------------------------------------------------ what the predicate gets
@dataclass(frozen=True)
class _Spec:
    """Everything a worker needs to check instances (picklable)."""

    predicate: Callable
    kind: str  # a key of OVERS without "-pairs"
    pairs: bool
    constructor: str
    delta: Fraction | None
    over: str


def _parse_over(over: str, delta: Any) -> tuple[str, bool, str, Fraction | None]:
    if not isinstance(over, str):
        raise ValueError(f"over: expected one of {', '.join(OVERS)}, got {over!r}")
    constructor = "northwest"
    if over.startswith(("R_F", "R_U")):  # the polytopes' names: the former spelling
        over = check_kind(over, OVERS, name="over", stacklevel=7)
    kind = over
    if over.startswith("mechanism:"):
        kind, constructor = "mechanism", over.split(":", 1)[1]
        if constructor not in CONSTRUCTORS:
            raise ValueError(f"over: unknown constructor {constructor!r}; choose from "
                             f"{', '.join(CONSTRUCTORS)}")
    if kind not in OVERS:
        raise ValueError(f"over: unknown {over!r}; choose from {', '.join(OVERS)} "
                         "(or mechanism:NAME)")
    pairs = kind.endswith("-pairs")
    base = kind[: -len("-pairs")] if pairs else kind
    if base in _DELTA:
        if delta is None:
            raise ValueError(f"over={over!r} needs delta= (an exact 0 <= delta < 1)")
        delta = check_delta(delta)
    elif delta is not None:
        raise ValueError(f"delta: only the delta forms take it ({', '.join(sorted(_DELTA))})")
    return base, pairs, constructor, delta


def _polytope(spec: _Spec, inst: Instance) -> Any:
    kind, z = spec.kind, inst.z_array()
    # An instance on a neighbour graph (dpfix.explore.graph_instances.GraphInstance) gives
    # its graph to U, F, R_F and R_U; the plain instances keep the path's rows.
    graph = inst.neighbour_graph() if hasattr(inst, "neighbour_graph") else None
    on_graph = {} if graph is None else {"graph": graph}
    if kind in ("U", "RU"):
        return getattr(polytopes, kind)(inst.n, inst.lam, **on_graph)
    if kind in ("F", "RF"):
        return getattr(polytopes, kind)(inst.n, inst.lam, z, **on_graph)
    if graph is not None:
        _refuse_on_graphs(spec)
        if kind == "U_delta":
            return polytopes.U(inst.n, inst.lam, spec.delta, graph=graph)
        return polytopes.F(inst.n, inst.lam, z, spec.delta, graph=graph)
    base, form = _DELTA[kind]
    return delta_polytope(base, inst.n, inst.lam, None if kind in _NO_TARGET else z,
                          spec.delta, form=form)


#: What the engine builds on a neighbour graph: the polytopes of
#: :mod:`dpfix.theory.polytopes` with ``graph=`` (and their pairs), the (eps, delta) ones in
#: the subset form; the instance itself.
_ON_GRAPHS = {"instance", "U", "F", "RF", "RU", "U_delta", "F_delta"}


def _refuse_on_graphs(spec: _Spec) -> None:
    """Refuse, in one line, an ``over`` the theory has for the path only."""
    if spec.kind in _ON_GRAPHS:
        return
    if spec.kind == "mechanism":
        raise ValueError(f"over={spec.over!r}: the constructors build mechanisms on the path; "
                         "on a neighbour graph use over='instance' (the graph's mechanisms: "
                         "dpfix.explore.graph_mechanisms.graph_geometric, randomized_response) "
                         "or a polytope (U, F, RF, RU, U_delta, F_delta)")
    raise ValueError(f"over={spec.over!r}: on a neighbour graph the (eps, delta) polytopes are "
                     f"U_delta and F_delta (the subset form); the {_DELTA[spec.kind][1]} form "
                     "is built on the path only")


def _items(spec: _Spec, inst: Instance) -> Iterator[tuple[tuple, Any]]:
    """``(arguments of the predicate, witness)`` for each object of the instance."""
    if spec.kind == "instance":
        yield (inst,), None
        return
    try:
        if spec.kind == "mechanism":
            if hasattr(inst, "neighbour_graph"):
                _refuse_on_graphs(spec)
            mech = construct(list(inst.z), lam=inst.lam, constructor=spec.constructor)
            objects: list = [(mech, mech.matrix)]
        else:
            V = _polytope(spec, inst).vertices()
            objects = [(v, v) for v in V] if not spec.pairs else \
                [((a, b), (a, b)) for a, b in itertools.combinations(V, 2)]
    except Exception as exc:
        exc.add_note(f"while building the objects of {inst!r} (over={spec.over!r})")
        raise
    for obj, witness in objects:
        yield (obj, inst), witness


@dataclass
class _Outcome:
    status: str  # "held", "failed", "error" (it raised) or "not-bool"
    witness: Any = None
    traceback: str = ""  # "error": the traceback; "not-bool": the message
    exception_type: str = ""
    details: dict[str, Any] | None = None  # "failed": what the predicate returned with False


def _short_repr(x: Any, width: int = 60) -> str:
    try:
        r = repr(x)
    except Exception as exc:  # a broken __repr__ of the user's object
        r = f"<{type(x).__name__}: repr raised {type(exc).__name__}>"
    r = " ".join(r.split())
    return r if len(r) <= width else r[:width - 4] + " ..."


def _check(spec: _Spec, inst: Instance) -> _Outcome:
    for args, witness in _items(spec, inst):
        try:
            result = spec.predicate(*args)
        except (Exception, SystemExit) as exc:  # sys.exit in a predicate is an error too
            return _Outcome("error", witness, traceback.format_exc(), type(exc).__name__)
        details = None
        if isinstance(result, tuple) and len(result) == 2 and \
                isinstance(result[0], (bool, np.bool_)):
            result, given = result
            try:  # looked at only where the predicate fails
                details = None if result else _exact_details(given)
            except (TypeError, ValueError) as exc:
                return _Outcome("not-bool", witness,
                                f"predicate {_name(spec.predicate)} returned (False, "
                                f"{_short_repr(given)}) at {inst!r}: {exc}")
        if not isinstance(result, (bool, np.bool_)):
            return _Outcome("not-bool", witness,
                            f"predicate {_name(spec.predicate)} returned "
                            f"{type(result).__name__} {_short_repr(result)} at {inst!r}: it "
                            "must return a bool (True where the conjecture holds) or a pair "
                            "(bool, dict of named exact values)")
        if not result:
            return _Outcome("failed", witness, details=details)
    return _Outcome("held")


# ------------------------------------------------------------------ worker processes
_WORKER_SPEC: _Spec | None = None
#: seconds between two looks of a worker at its parent (it ends when the parent is gone)
_ORPHAN_CHECK = 0.5


def _init_worker(spec: _Spec) -> None:
    global _WORKER_SPEC
    _WORKER_SPEC = spec
    try:  # one thread per worker: the processes are the parallelism (no oversubscription)
        from PyNormaliz_cpp import NmzSetNumberOfNormalizThreads
    except ImportError:
        return
    NmzSetNumberOfNormalizThreads(1)


def _end_when_orphaned(parent: int) -> None:
    """In a worker: end the process once its parent is gone (killed by SIGKILL, say),
    even while the predicate runs."""
    while os.getppid() == parent:
        time.sleep(_ORPHAN_CHECK)
    os._exit(1)


def _send(conn: Any, message: tuple) -> None:
    try:
        conn.send(message)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:  # not picklable
        key, _, payload = message
        conn.send((key, "raise", RuntimeError(
            f"a worker could not send back {type(payload).__name__}: {exc}")))


def _worker_main(conn: Any, spec: _Spec, parent: int) -> None:
    """A worker process: check the chunks of instances it receives, one outcome a message
    (``(key, "outcome", outcome)``), then ``(key, "done", None)``; an error of the
    engine (not of the predicate) as ``(key, "raise", exception)``. ``None`` ends it."""
    _init_worker(spec)
    threading.Thread(target=_end_when_orphaned, args=(parent,), daemon=True).start()
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):  # the parent closed its end
            return
        if message is None:
            return
        key, instances, first_only = message
        for inst in instances:
            try:
                outcome = _check(spec, inst)
            except Exception as exc:
                _send(conn, (key, "raise", exc))
                break
            _send(conn, (key, "outcome", outcome))
            if first_only and outcome.status != "held":
                break
        _send(conn, (key, "done", None))


@contextmanager
def _sigint_blocked() -> Iterator[None]:
    """SIGINT blocked while a worker starts: the worker inherits the mask and never
    takes Ctrl-C (its parent ends it), so a Ctrl-C at the terminal prints no traceback
    of a worker."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@dataclass(eq=False)
class _Worker:
    process: Any
    conn: Any
    chunk: int | None = None  # the key of the chunk it checks


@dataclass(eq=False)
class _Chunk:
    key: int
    instances: list[Instance]
    known: list[_Outcome | None]  # the cached outcomes; None: to check
    received: deque = field(default_factory=deque)
    got: int = 0  # outcomes received in all
    sent: bool = False
    done: bool = False
    error: BaseException | None = None
    pos: int = 0

    @property
    def todo(self) -> list[Instance]:
        return [i for i, k in zip(self.instances, self.known, strict=True) if k is None]


class _Pool:
    """``jobs`` worker processes (started by spawn) that the parent ends by terminating
    them, whatever they run: never awaited."""

    def __init__(self, spec: _Spec, jobs: int) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.workers: list[_Worker] = []
        try:
            for _ in range(jobs):
                mine, theirs = ctx.Pipe()
                process = ctx.Process(target=_worker_main, args=(theirs, spec, os.getpid()),
                                      daemon=True, name="dpfix-search-worker")
                with _sigint_blocked():
                    process.start()
                theirs.close()
                self.workers.append(_Worker(process, mine))
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Terminate every worker (SIGTERM, then SIGKILL after 5 s) and wait for it."""
        for w in self.workers:
            if w.process.is_alive():
                w.process.terminate()
        for w in self.workers:
            w.process.join(timeout=5)
            if w.process.is_alive():
                w.process.kill()
                w.process.join()
            w.conn.close()
        self.workers = []


def _pooled(spec: _Spec, stream: Iterator[Instance], jobs: int, cache: _Cache | None,
            first_only: bool, deadline: float | None, run: _Run, label: str
            ) -> Iterator[tuple[Instance, _Outcome]]:
    """:func:`_outcomes` in ``jobs`` worker processes: chunks of instances in visiting
    order, the outcomes yielded in that order; at the deadline the workers are ended."""
    try:
        pickle.dumps(spec)
    except Exception as exc:
        raise TypeError(f"jobs={jobs}: the predicate {_name(spec.predicate)} must be picklable "
                        "(a module-level function) to run in worker processes") from exc
    pool = _Pool(spec, jobs)
    window: deque[_Chunk] = deque()
    chunks: dict[int, _Chunk] = {}
    keys = itertools.count()
    exhausted = False
    try:
        while True:
            while not exhausted and len(window) < 2 * jobs:
                part = list(itertools.islice(stream, _CHUNK))
                if not part:
                    exhausted = True
                    break
                known = [_Outcome("held") if cache is not None and i.key() in cache.held
                         else None for i in part]
                chunk = _Chunk(next(keys), part, known)
                chunk.done = all(k is not None for k in known)
                window.append(chunk)
                chunks[chunk.key] = chunk
            for chunk in window:  # the earliest chunks to the idle workers
                if chunk.sent or chunk.done:
                    continue
                idle = next((w for w in pool.workers if w.chunk is None), None)
                if idle is None:
                    break
                idle.conn.send((chunk.key, chunk.todo, first_only))
                idle.chunk, chunk.sent = chunk.key, True
            if not window:
                return
            head = window[0]
            while head.pos < len(head.instances):
                inst, known = head.instances[head.pos], head.known[head.pos]
                if known is None and head.received:
                    known = head.received.popleft()
                if known is not None:
                    head.pos += 1
                    yield inst, known
                    continue
                if head.error is not None:
                    raise head.error
                if head.done:  # the worker stopped at a failure before this instance
                    return
                break
            if head.pos == len(head.instances):
                window.popleft()
                if head.done:
                    del chunks[head.key]
                continue
            timeout = None if deadline is None else deadline - time.perf_counter()
            if timeout is not None and timeout <= 0:
                run.budget_hit = label
                return
            busy = [w for w in pool.workers if w.chunk is not None]
            if not busy:  # the head is sent as soon as a worker is free: never here
                raise RuntimeError("search: no worker checks the next chunk")
            ready = multiprocessing.connection.wait([w.conn for w in busy], timeout)
            if not ready:
                run.budget_hit = label
                return
            for w in busy:
                if w.conn not in ready:
                    continue
                chunk = chunks[w.chunk]
                try:
                    key, kind, payload = w.conn.recv()
                except (EOFError, OSError):
                    w.process.join(timeout=5)
                    todo = chunk.todo
                    at = todo[chunk.got] if chunk.got < len(todo) else todo[-1]
                    raise RuntimeError(f"a worker process ended (exit code "
                                       f"{w.process.exitcode}) while it checked {at!r}"
                                       ) from None
                if kind == "outcome":
                    chunk.received.append(payload)
                    chunk.got += 1
                elif kind == "raise":
                    chunk.error = payload
                else:  # "done": the worker is free
                    chunk.done, w.chunk = True, None
                    if chunk not in window:
                        del chunks[key]
    finally:
        pool.stop()


#: on a Dask client: the seconds of work a chunk aims at, and the most instances in one
_DASK_SECONDS = 0.2
_DASK_CHUNK_MAX = 4096


def _check_chunk(spec: _Spec, pickled: bytes, first_only: bool
                 ) -> tuple[list[_Outcome], float, BaseException | None]:
    """On a Dask worker: the outcomes of the instances ``pickled`` (a list, pickled: Dask
    then sends it as it is, without walking it for tasks) in order, up to the first that
    did not hold with ``first_only``; the seconds they took; and an error of the engine
    (not of the predicate) at the instance after the last outcome, or None."""
    start, outcomes, error = time.perf_counter(), [], None
    for inst in pickle.loads(pickled):
        try:
            outcome = _check(spec, inst)
        except Exception as exc:
            try:
                pickle.dumps(exc)
                error = exc
            except Exception as why:  # not picklable: what it said
                error = RuntimeError(f"a worker could not send back {type(exc).__name__}: "
                                     f"{exc} ({why})")
            break
        outcomes.append(outcome)
        if first_only and outcome.status != "held":
            break
    return outcomes, time.perf_counter() - start, error


def _on_dask(spec: _Spec, stream: Iterator[Instance], client: Any, cache: _Cache | None,
             first_only: bool, deadline: float | None, run: _Run, label: str
             ) -> Iterator[tuple[Instance, _Outcome]]:
    """:func:`_outcomes` on the workers of a Dask client: chunks of instances in visiting
    order as futures (:class:`dpfix.explore.distributed.OrderedMap`: twice as many chunks
    out as the workers have threads; the spec scattered once), the outcomes yielded in
    visiting order. The first chunks have :data:`_CHUNK` instances, the next about
    :data:`_DASK_SECONDS` of work each, by the time per instance measured so far; at the
    deadline the chunks still out are cancelled, none of their instances visited."""
    threads = worker_threads(client)
    try:
        check_sendable(spec)
    except TypeError as exc:
        raise TypeError(f"jobs=<a Dask client>: the predicate {_name(spec.predicate)} must "
                        f"pickle to run on the cluster's workers ({exc})") from exc
    size = _CHUNK

    def parts() -> Iterator[tuple[_Chunk, tuple | None]]:
        for key in itertools.count():
            part = list(itertools.islice(stream, size))
            if not part:
                return
            known = [_Outcome("held") if cache is not None and i.key() in cache.held
                     else None for i in part]
            chunk = _Chunk(key, part, known)
            todo = chunk.todo
            yield chunk, ((pickle.dumps(todo, pickle.HIGHEST_PROTOCOL), first_only)
                          if todo else None)

    chunks = OrderedMap(client, _check_chunk, spec, parts(), window=2 * threads,
                        deadline=deadline, name="dpfix-search")
    try:
        for chunk, answer in chunks:
            outcomes, error = iter(()), None
            if answer is not None:
                done, seconds, error = answer
                if done and seconds > 0:
                    size = max(1, min(_DASK_CHUNK_MAX, round(_DASK_SECONDS * len(done) /
                                                             seconds)))
                outcomes = iter(done)
            for inst, known in zip(chunk.instances, chunk.known, strict=True):
                if known is None:
                    known = next(outcomes, None)
                if known is None:
                    if error is not None:
                        raise error
                    return  # the task stopped at a failure before this instance
                yield inst, known
        if chunks.timed_out:
            run.budget_hit = label
    finally:
        chunks.close()


# ------------------------------------------------------------------ the instance stream
class _Replay:
    """Iterate a one-shot iterator again and again: what was drawn is kept."""

    def __init__(self, source: Iterable) -> None:
        self._it, self._seen = iter(source), []

    def __iter__(self) -> Iterator:
        yield from self._seen
        for x in self._it:
            self._seen.append(x)
            yield x


def _reiterable(values: Iterable) -> Iterable:
    if isinstance(values, (list, tuple, range, np.ndarray, Targets)):
        return values
    return _Replay(values)


def _scalar(x: Any) -> bool:
    return isinstance(x, (str, float, np.floating)) or is_exact_number(x)


def _ns(n: Any) -> Iterator[int]:
    if isinstance(n, (int, np.integer)) and not isinstance(n, bool):
        yield int(n)
        return
    if isinstance(n, (list, tuple, range, set, frozenset, np.ndarray)):
        n = sorted(int(x) for x in n)
    last = None
    for k in n:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"n: sizes must be ints, got {k!r}")
        if last is not None and k < last:
            raise ValueError(f"n: must be ascending (got {k} after {last})")
        last = int(k)
        yield last


def _lams(lam: Any) -> Iterable[Fraction]:
    if lam is None:
        return (Fraction(2),)
    if _scalar(lam):
        return (exact_lam(lam),)
    return _reiterable(exact_lam(x) for x in lam) if not isinstance(lam, (list, tuple)) \
        else tuple(exact_lam(x) for x in lam)


def _targets(z: Any) -> Callable[[int], Iterable]:
    """``n`` -> the targets to try at ``n`` (before the length filter)."""
    if z is None:
        family = named_targets()
        return family.for_n
    if isinstance(z, Targets) and z.n is None:
        return z.for_n
    if isinstance(z, np.ndarray) and z.ndim == 1 or \
            isinstance(z, (list, tuple)) and z and all(_scalar(x) for x in z):
        single = [tuple(z)]
        return lambda n: single  # one explicit target
    values = _reiterable(z)
    return lambda n: values


def _stream(n: Any, lam: Any, z: Any, kind: str) -> Iterator[Instance]:
    lam_values = _lams(lam)
    if kind in _NO_TARGET and (kind != "instance" or z is None):
        for k in _ns(n):
            for x in lam_values:
                yield Instance(k, x)
        return
    targets = _targets(z)
    for k in _ns(n):
        for x in lam_values:
            for t in targets(k):
                t = tuple(to_fraction(v, "z") for v in t)
                if len(t) == k:
                    yield Instance(k, x, t)


def _graph_stream(graph: Any, lam: Any, z: Any, kind: str) -> Iterator[Instance]:
    """The instances on the graphs ``graph`` names (checked here, before any is visited:
    :func:`dpfix.explore.graph_instances.graphs_of`), in their order, then ``lam``, then
    ``z`` (those of the graph's length)."""
    graphs = graphs_of(graph)
    lam_values = _lams(lam)
    targets = None if kind in _NO_TARGET and (kind != "instance" or z is None) else _targets(z)

    def stream() -> Iterator[Instance]:
        for G in graphs:
            for x in lam_values:
                base = GraphInstance.from_spec(G, x)
                if targets is None:
                    yield base
                    continue
                for t in targets(base.n):
                    t = tuple(to_fraction(v, "z") for v in t)
                    if len(t) == base.n:
                        yield GraphInstance(base.n, x, t, base.edges, base.label,
                                            base.edge_weights)
    return stream()


# ------------------------------------------------------------------ budget, cache, progress
@dataclass
class _Budget:
    instances: int | None = None
    seconds: float | None = None

    def label(self) -> str:
        parts = ([f"{self.instances} instances"] if self.instances is not None else []) + \
            ([f"{self.seconds:g} s"] if self.seconds is not None else [])
        return " or ".join(parts)


_UNITS = {"ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def _budget(budget: Any) -> _Budget:
    if budget is None:
        return _Budget()
    if isinstance(budget, bool):
        raise TypeError(f"budget: bool {budget!r} is not a budget")
    if isinstance(budget, (int, np.integer)):
        if budget < 0:
            raise ValueError(f"budget: must be >= 0 instances, got {budget}")
        return _Budget(instances=int(budget))
    if isinstance(budget, timedelta):
        return _Budget(seconds=budget.total_seconds())
    if isinstance(budget, dict) and budget and set(budget) <= {"instances", "seconds"}:
        inst = budget.get("instances")
        return _Budget(instances=None if inst is None else _budget(int(inst)).instances,
                       seconds=None if budget.get("seconds") is None
                       else float(budget["seconds"]))
    if isinstance(budget, str):
        text = budget.strip()
        if text.isdigit():
            return _Budget(instances=int(text))
        m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(ms|s|min|m|h)", text)
        if m:
            return _Budget(seconds=float(m.group(1)) * _UNITS[m.group(2)])
    raise ValueError(f"budget: expected instances (1000), a duration ('30s', '2m', '1h'), a "
                     f"timedelta or {{'instances': k, 'seconds': s}}; got {budget!r}")


class _Cache:
    """Visited instances of one run key in a JSON-lines file (one line per instance,
    appended with one ``write`` on a file opened in append mode: a line is whole or
    absent; an unreadable last line, from a run killed mid-write, is ignored)."""

    def __init__(self, path: str | os.PathLike, run_key: str) -> None:
        self.path, self.run_key = Path(path), run_key
        self.held: set[str] = set()
        if self.path.is_dir():
            raise ValueError(f"cache: {str(path)!r} is a folder; give the path of a file "
                             "(JSON lines, created if missing)")
        if self.path.exists():
            if not self.path.is_file():
                raise ValueError(f"cache: {str(path)!r} is not a regular file")
            try:
                text = self.path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                raise ValueError(f"cache: {str(path)!r} is not a JSON-lines file (not UTF-8 "
                                 "text)") from None
            for line in text.splitlines():
                try:
                    rec = json.loads(line)
                except (json.JSONDecodeError, RecursionError, ValueError):
                    continue
                if isinstance(rec, dict) and rec.get("run") == run_key and \
                        rec.get("outcome") == "held" and isinstance(rec.get("instance"), str):
                    self.held.add(rec["instance"])
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if self.path.stat().st_size and not self.path.read_bytes().endswith(b"\n"):
            os.write(self._fd, b"\n")  # end a cut line, so that the next one stays whole

    def add(self, inst: Instance, status: str) -> None:
        line = json.dumps({"run": self.run_key, "instance": inst.key(), "outcome": status})
        os.write(self._fd, (line + "\n").encode())

    def close(self) -> None:
        os.close(self._fd)


def _run_key(spec: _Spec) -> str:
    fields = [_name(spec.predicate), _source_hash(spec.predicate), spec.over,
              str(spec.delta), spec.constructor]
    return hashlib.sha256(json.dumps(fields).encode()).hexdigest()[:20]


class _Progress:
    def __init__(self, enabled: Any) -> None:
        self.bar = self.count = None
        self._last = 0.0
        if not enabled:
            return
        try:
            from tqdm import tqdm
        except ImportError:
            self.count = 0
        else:
            self.bar = tqdm(unit=" instances", file=sys.stderr, desc="search")

    def update(self) -> None:
        if self.bar is not None:
            self.bar.update(1)
        elif self.count is not None:
            self.count += 1
            if time.monotonic() - self._last > 0.5:
                self._last = time.monotonic()
                print(f"\rsearch: {self.count} instances", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.count is not None:
            print(f"\rsearch: {self.count} instances", file=sys.stderr, flush=True)


# ------------------------------------------------------------------ the engine
@dataclass
class _Run:
    """The state of one run of the engine: how many instances it visited (cached ones
    included), the last one, and why it stopped (:attr:`stopped`).

    Attributes
    ----------
    visited : int
        Instances visited, in visiting order.
    last : Instance or None
        The last instance visited.
    budget_hit : str or None
        The budget that ended the run (``"1000 instances"``, ``"30 s"``), or None.
    start : float
        When the run started (``time.perf_counter()``).
    """

    visited: int = 0
    last: Instance | None = None
    budget_hit: str | None = None
    start: float = field(default_factory=time.perf_counter)

    @property
    def stopped(self) -> str | None:
        """Why the run ended before the last instance (None: it did not)."""
        if self.budget_hit is None:
            return None
        return (f"budget ({self.budget_hit}) reached after {self.visited} instances "
                f"(last: {self.last!r})")


def _limited(stream: Iterator[Instance], budget: _Budget, run: _Run) -> Iterator[Instance]:
    for count in itertools.count():
        if budget.instances is not None and count >= budget.instances or \
                budget.seconds is not None and time.perf_counter() - run.start >= budget.seconds:
            # stop only if there is something left to visit
            for _ in stream:
                run.budget_hit = budget.label()
                break
            return
        inst = next(stream, None)
        if inst is None:
            return
        yield inst


class _Deadline(BaseException):
    """The time budget ran out while this process checked an instance (``SIGALRM``); not
    an Exception, so that a predicate's ``except Exception`` does not swallow it."""


@contextmanager
def _alarm(seconds: float | None) -> Iterator[None]:
    """While the block runs, :class:`_Deadline` is raised in it after ``seconds``: by
    ``SIGALRM``, in the main thread on POSIX when no other timer or handler uses it;
    otherwise the block runs to its end."""
    if seconds is None or not hasattr(signal, "setitimer") or \
            threading.current_thread() is not threading.main_thread() or \
            signal.getitimer(signal.ITIMER_REAL) != (0.0, 0.0) or \
            signal.getsignal(signal.SIGALRM) is not signal.SIG_DFL:
        yield
        return

    def ring(signum: int, frame: object) -> None:
        raise _Deadline
    signal.signal(signal.SIGALRM, ring)
    try:
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-4))
        yield
    finally:
        try:  # a ring in between still restores the handler (a pending one is dropped)
            signal.setitimer(signal.ITIMER_REAL, 0)
        finally:
            signal.signal(signal.SIGALRM, signal.SIG_DFL)


def _outcomes(spec: _Spec, stream: Iterator[Instance], jobs: int | Client,
              cache: _Cache | None,
              first_only: bool, deadline: float | None, run: _Run, label: str
              ) -> Iterator[tuple[Instance, _Outcome]]:
    """``(instance, outcome)`` in visiting order (cached held instances without work); at
    the deadline (``time.perf_counter()``) the instance being checked is abandoned and
    ``run.budget_hit`` set to ``label``."""
    if is_client(jobs):
        yield from _on_dask(spec, stream, jobs, cache, first_only, deadline, run, label)
        return
    if jobs > 1:
        yield from _pooled(spec, stream, jobs, cache, first_only, deadline, run, label)
        return
    for inst in stream:
        if cache is not None and inst.key() in cache.held:
            yield inst, _Outcome("held")
            continue
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and left <= 0:
            run.budget_hit = label
            return
        try:
            with _alarm(left):
                outcome = _check(spec, inst)
        except _Deadline:
            run.budget_hit = label
            return
        yield inst, outcome


def _engine(predicate: Callable, over: str, n: Any, lam: Any, z: Any, instances: Any,
            budget: Any, jobs: int | Client, cache: Any, delta: Any, first_only: bool,
            graph: Any = None
            ) -> tuple[_Spec, _Run, Iterator[tuple[Instance, _Outcome]], _Cache | None]:
    if not callable(predicate):
        raise TypeError(f"predicate: not callable: {predicate!r}")
    kind, pairs, constructor, d = _parse_over(over, delta)
    spec = _Spec(predicate, kind, pairs, constructor, d, over)
    if is_client(jobs):
        worker_threads(jobs)  # a running client with workers, or one line
    elif isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs: a number of processes >= 1 or a Dask client "
                         f"(distributed.Client), got {jobs!r}")
    if instances is not None:
        if n is not None or lam is not None or z is not None or graph is not None:
            raise ValueError("instances= replaces n (or graph), lam and z: give one or the "
                             "other")
        stream: Iterator[Instance] = iter(_checked_instances(instances))
    elif graph is not None:  # the graphs replace n: checked here, before any work
        if n is not None:
            raise ValueError("graph= gives the instances' graphs (and so their sizes): give "
                             "graph or n, not both")
        _refuse_on_graphs(spec)
        stream = _graph_stream(graph, lam, z, kind)
    elif n is None:
        raise ValueError("n: give the sizes (an int or an iterable of ints)")
    else:
        stream = _stream(n, lam, z, kind)
    run = _Run()
    limits = _budget(budget)
    store = _Cache(cache, _run_key(spec)) if cache is not None else None
    deadline = None if limits.seconds is None else run.start + limits.seconds
    return spec, run, _outcomes(spec, _limited(stream, limits, run), jobs, store, first_only,
                                deadline, run, limits.label()), store


def _refuse_empty(run: _Run, instances: Any, graph: Any = None) -> None:
    """After a run that visited nothing (and was not stopped by its budget): refuse it."""
    if run.visited or run.budget_hit is not None:
        return
    if graph is not None:
        raise ValueError("graph, lam and z give no instance (is every target of a length "
                         "other than the graphs' numbers of nodes?); a search over no "
                         "instance would hold vacuously")
    if instances is not None:
        raise ValueError("instances: the iterable is empty; a search over no instance "
                         "would hold vacuously")
    raise ValueError("n, lam and z give no instance (is every target of a length other "
                     "than n? an empty family?); a search over no instance would hold "
                     "vacuously")


def _raise_not_bool(inst: Instance, outcome: _Outcome) -> None:
    if outcome.status == "not-bool":
        raise PredicateTypeError(outcome.traceback, inst)


def _checked_instances(instances: Iterable) -> Iterator[Instance]:
    for inst in instances:
        if not isinstance(inst, Instance):
            raise TypeError(f"instances: expected Instance objects, got {inst!r}")
        yield inst


@contextmanager
def _visits(predicate: Callable, over: str, n: Any, lam: Any, z: Any, instances: Any,
            budget: Any, jobs: int | Client, cache: Any, delta: Any, progress: Any,
            first_only: bool, graph: Any = None
            ) -> Iterator[tuple[_Run, Iterator[tuple[Instance, _Outcome]]]]:
    """The engine's run and its ``(instance, outcome)`` pairs in visiting order, each one
    counted, shown on the progress bar and written to the cache as it is visited (an
    outcome that is no bool raises :class:`PredicateTypeError`). On leaving the block, by
    any path, the worker processes, the progress bar and the cache are closed; a run that
    visited nothing, and was not stopped by its budget, is refused."""
    spec, run, outcomes, store = _engine(predicate, over, n, lam, z, instances, budget, jobs,
                                         cache, delta, first_only=first_only, graph=graph)
    bar = _Progress(progress)

    def visited() -> Iterator[tuple[Instance, _Outcome]]:
        for inst, outcome in outcomes:
            _raise_not_bool(inst, outcome)
            run.visited += 1
            run.last = inst
            bar.update()
            if store is not None:
                store.add(inst, outcome.status)
            yield inst, outcome

    try:
        yield run, visited()
    finally:
        outcomes.close()  # type: ignore[attr-defined]
        bar.close()
        if store is not None:
            store.close()
    _refuse_empty(run, instances, graph)


def smallest_counterexample(predicate: Callable, *, over: str, n: Any = None, lam: Any = None,
                            z: Any = None, budget: Any = None, jobs: int | Client = 1,
                            cache: str | os.PathLike | None = None, progress: Any = None,
                            delta: Any = None, instances: Iterable[Instance] | None = None,
                            graph: Any = None) -> SearchResult:
    """The first instance, in visiting order, where ``predicate`` returns False, and how far
    the search went.

    Parameters
    ----------
    predicate : callable
        Returns a bool, or a pair ``(bool, details)`` with ``details`` a dict of named
        exact matrices, numbers or text that a counterexample carries (see the module
        docstring for what it receives).
    over : str
        A key of :data:`OVERS` (or ``"mechanism:NAME"``).
    n : int or iterable of int
        The sizes, visited ascending.
    lam : exact number or iterable, optional
        Values of ``lam`` in order (default ``(2,)``); an enumerator such as
        :func:`dpfix.explore.instances.lams_by_height`.
    z : iterable of targets, a :class:`dpfix.explore.instances.Targets` family, or one target
        Default :func:`dpfix.explore.instances.named_targets`; ignored without a target.
    budget : int, str, timedelta or dict, optional
        At most this many instances (``1000``, ``"1000"``) or this long (``"30s"``,
        ``"2m"``, ``timedelta(seconds=30)``, ``{"seconds": 30}``). At the deadline an
        instance still being checked is abandoned (not visited): the worker processes
        are terminated (``jobs > 1``), the chunks out on a Dask client cancelled (their
        instances not visited), or ``SIGALRM`` interrupts the predicate (``jobs = 1``;
        the module docstring says when). When it stops the search before
        the end without a counterexample, :attr:`SearchResult.stopped` says after how many
        instances, and a :class:`BudgetReached` warning too.
    jobs : int or distributed.Client
        Worker processes, started by ``spawn`` (safe in a process with threads, the same
        on every platform), each running Normaliz on one thread; the predicate must
        pickle: a module-level function of an importable module, or a
        :class:`FilePredicate`. A script that uses ``jobs > 1`` runs its search under
        ``if __name__ == "__main__":`` (spawn imports the main module again).
        Or a Dask client (``distributed.Client``: synchronous, running, with a worker):
        the instances go to the cluster's workers in chunks (of 8 at first, then of
        about 0.2 s of work each), at most twice as many chunks out as the workers have
        threads, the predicate sent once; it must pickle as Dask pickles (cloudpickle:
        lambdas and closures too; a function of a module goes by name, so the workers
        import that module; a :class:`FilePredicate`'s file must be readable there).
        The search never closes the client.
    cache : path, optional
        A JSON-lines file of visited instances: a rerun of the same predicate (name
        and source), ``over`` and ``delta`` skips the instances where it held (they
        count as visited); failing instances are checked again, for their witness.
    progress : bool, optional
        A progress bar on stderr (tqdm when installed, else a counter). Off by default.
    delta : exact number, optional
        For the delta forms.
    instances : iterable of Instance, optional
        Visit these, in this order, instead of ``n``, ``lam``, ``z``.
    graph : str, networkx.Graph, int, or an iterable of them, optional
        Instead of ``n``: the neighbour graphs, visited in this order, then ``lam``, then
        ``z`` (by default the named targets of each graph's size): one spec (``"star:4"``,
        ``"cycle:4"``, ``"atlas:13"``, what :func:`dpfix.theory.graphs.as_graph` reads), a
        networkx graph, an atlas index, a family ``"connected:N"``, ``"trees:N"``,
        ``"cycles:N"``, ``"paths:N"`` (or ``"FAMILY:A-B"``, sizes ``A`` to ``B``: by size,
        then networkx's atlas order), or several of these
        (:func:`dpfix.explore.graph_instances.graphs_of`). The instances are
        :class:`~dpfix.explore.graph_instances.GraphInstance` s; every graph is checked,
        and ``over`` too, before the first is visited.

    Returns
    -------
    SearchResult
        True when a counterexample was found: :attr:`SearchResult.counterexample`
        (a :class:`Counterexample`: ``instance``, ``witness``, ``visited``), else None
        there; in either case ``visited``, ``stopped`` and ``elapsed``.

    Raises
    ------
    PredicateError
        The predicate raised, or called ``sys.exit`` (the first such instance in
        visiting order).
    PredicateTypeError
        The predicate returned something other than a bool (a ``TypeError``).
    ValueError
        An unknown ``over``, a bad budget or ``jobs``; no instance to visit (an empty
        ``instances``, or no target of length ``n``); a bad ``graph`` (one line: unknown,
        disconnected, a self-loop, a bad weight, too many nodes, a family beyond the
        atlas), or an ``over`` built on the path only with ``graph``.
    ExactnessError
        A float ``lam`` or target.

    Examples
    --------
    >>> def monotone_column(T, inst):   # some column of T is monotone
    ...     return any(all(T[i, j] <= T[i + 1, j] for i in range(inst.n - 1)) or
    ...                all(T[i, j] >= T[i + 1, j] for i in range(inst.n - 1))
    ...                for j in range(inst.n))
    >>> smallest_counterexample(monotone_column, over="F", n=2)
    SearchResult(found=False, visited=4, stopped=None)
    >>> result = smallest_counterexample(monotone_column, over="F", n=range(2, 5))
    >>> ce = result.counterexample
    >>> ce.instance, ce.visited
    (Instance(n=3, lam=Fraction(2, 1), z=(Fraction(1, 3), Fraction(1, 3), Fraction(1, 3))), 5)
    >>> print(result)
    counterexample over F at n = 3, lam = 2, z = (1/3, 1/3, 1/3) (instance 5 visited)
    witness:
    [1/4  7/20  2/5]
    [1/2  3/10  1/5]
    [1/4  7/20  2/5]
    """
    with _visits(predicate, over, n, lam, z, instances, budget, jobs, cache, delta,
                 progress, first_only=True, graph=graph) as (run, visits):
        for inst, outcome in visits:
            if outcome.status == "failed":
                return _result(run, Counterexample(inst, outcome.witness, run.visited, over,
                                                   outcome.details))
            if outcome.status == "error":
                raise PredicateError(_name(predicate), inst, outcome.witness, outcome.traceback,
                                     outcome.exception_type)
    if run.stopped:
        warnings.warn(f"search: {run.stopped}", BudgetReached, stacklevel=2)
    return _result(run, None)


def _result(run: _Run, counterexample: Counterexample | None) -> SearchResult:
    return SearchResult(counterexample, run.visited, run.stopped,
                        time.perf_counter() - run.start)


def smallest_counterexample_run(predicate: Callable, **kwargs: Any
                                ) -> tuple[Counterexample | None, SearchResult]:
    """Deprecated: :func:`smallest_counterexample` returns a :class:`SearchResult`, found or
    not; this gives ``(result.counterexample, result)``."""
    warn_deprecated("smallest_counterexample_run is deprecated; smallest_counterexample "
                    "returns a SearchResult with the counterexample, visited and stopped (the "
                    "old name goes in the next release)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BudgetReached)  # the result says it
        result = smallest_counterexample(predicate, **kwargs)
    return result.counterexample, result


def survey(predicate: Callable, *, over: str, n: Any = None, lam: Any = None, z: Any = None,
           budget: Any = None, jobs: int | Client = 1,
           cache: str | os.PathLike | None = None,
           progress: Any = None, delta: Any = None,
           instances: Iterable[Instance] | None = None, graph: Any = None) -> SurveyResult:
    """How often ``predicate`` holds on every instance visited, per ``(n, lam)``.

    The parameters are those of :func:`smallest_counterexample`; every instance is
    visited (until the budget), and an instance counts as failed at its first
    failing object, as errored when the predicate raised there (the error is kept
    with its traceback, in :attr:`SurveyResult.errors`).

    Returns
    -------
    SurveyResult

    Examples
    --------
    >>> s = survey(lambda T, inst: T[0, 0] < Fraction(1, 2), over="F", n=2, lam=[2, 3])
    >>> s.counts[(2, Fraction(3))], s.visited, s.complete
    ({'held': 1, 'failed': 3, 'errored': 0}, 8, True)
    """
    out = SurveyResult()
    with _visits(predicate, over, n, lam, z, instances, budget, jobs, cache, delta,
                 progress, first_only=False, graph=graph) as (run, visits):
        for inst, outcome in visits:
            counts = out.counts.setdefault((inst.n, inst.lam),
                                           {"held": 0, "failed": 0, "errored": 0})
            status = {"held": "held", "failed": "failed", "error": "errored"}[outcome.status]
            counts[status] += 1
            if outcome.status == "failed":
                out.failures.append(Counterexample(inst, outcome.witness, run.visited, over,
                                                   outcome.details))
            elif outcome.status == "error":
                out.errors.append(PredicateError(_name(predicate), inst, outcome.witness,
                                                 outcome.traceback, outcome.exception_type))
    out.visited, out.stopped = run.visited, run.stopped
    out.complete = run.stopped is None
    out.elapsed = time.perf_counter() - run.start
    return out


def __getattr__(name: str) -> Any:
    if name == "SearchRun":
        warn_deprecated("dpfix.explore.search.SearchRun is deprecated; smallest_counterexample "
                        "returns a SearchResult with visited and stopped (the old name goes in "
                        "the next release)")
        return SearchResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
