"""Exact linear programs: cddlib's simplex over GMP rationals (pycddlib's ``cdd.gmp``), one
call for every exact LP of the library, with its dual certificate.

A programme is given as sparse rows of Fractions: ``ub`` holds ``(row, b)`` for
``a . x <= b`` and ``eq`` holds ``(row, b)`` for ``a . x = b``, ``row`` a dict
``column -> coefficient`` over the variables ``x_0 .. x_(d-1)``, ``d = len(objective)``.
:func:`exact_lp` minimises (or maximises) ``objective . x`` over them and returns an
:class:`ExactLP`: the status, the optimum, a primal optimum and, when asked, the dual
multipliers, one per row, in one convention for both senses,

    objective = sum_e y_e a_e + sum_r y_r a_r,    optimum = sum_e y_e b_e + sum_r y_r b_r,

with ``y_r <= 0`` on the inequalities of a minimisation and ``y_r >= 0`` on those of a
maximisation (the equalities' ``y_e`` are free). For every feasible ``x`` this gives
``objective . x >= optimum`` (minimisation) or ``<= optimum`` (maximisation): weak
duality, checked exactly by :func:`certificate_holds` (``certify=True``).

One error policy: a programme that cdd does not solve to optimality raises
:class:`ExactLPError` (a ``RuntimeError`` that carries cdd's status, e.g.
``"INCONSISTENT"`` for an empty feasible set); a caller that expects infeasibility
catches it and reads the status.

cddlib writes some messages with C's ``printf``, straight to the process's standard
output (``max number ... of pivots performed in Phase I. Switch to the anticycling
phase.`` on some programmes). Every call into cdd here runs under :func:`quiet_c_stdout`,
which points file descriptor 1 at the null device for the call and restores it on every
path.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from dpfix.numbers.errors import Error

__all__ = ["ExactLP", "ExactLPError", "exact_lp", "certificate_holds", "cdd_rows",
           "quiet_c_stdout"]

#: A sparse row ``a`` (column -> coefficient) and its bound ``b``.
Row = tuple[dict[int, Fraction], Fraction]

_ZERO = Fraction(0)

#: One guard at a time: file descriptor 1 belongs to the whole process. Re-entrant, so a
#: guarded call inside a guarded call (in one thread) restores what the outer one saw.
_STDOUT_LOCK = threading.RLock()
_LIBC: list[Any] = []  # the C library, looked up once ([None] where there is none)


class ExactLPError(Error, RuntimeError):
    """cdd did not solve an exact LP to optimality (``status`` is its status name, such as
    ``"INCONSISTENT"``), or its optimum and duals do not certify each other."""

    def __init__(self, message: str, status: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class ExactLP:
    """The exact optimum of a linear programme (:func:`exact_lp`).

    Attributes
    ----------
    status : str
        cdd's status, ``"OPTIMAL"`` (the only one :func:`exact_lp` returns).
    optimum : Fraction
        The optimal value of the objective.
    primal : list of Fraction
        An optimal point (cdd's, a basic solution).
    eq_dual, ub_dual : list of Fraction or None
        The dual multipliers of the equalities and of the inequalities, in the order
        given (module docstring); None unless asked for (``dual=True``).
    basis : tuple of int or None
        The rows of cdd's final basis (equalities first, then inequalities, as numbered
        in :func:`cdd_rows`; an equality may stand twice, once per direction), whose
        multipliers cdd returns; None unless the duals are asked for.
    """

    status: str
    optimum: Fraction
    primal: list[Fraction]
    eq_dual: list[Fraction] | None = None
    ub_dual: list[Fraction] | None = None
    basis: tuple[int, ...] | None = None


def _libc() -> Any:
    if not _LIBC:
        try:
            _LIBC.append(ctypes.CDLL(None) if os.name == "posix" else
                         ctypes.CDLL(ctypes.util.find_library("c") or "msvcrt"))
        except OSError:
            _LIBC.append(None)
    return _LIBC[0]


def _flush_c_stdio() -> None:
    """Write out what C's stdio holds in its buffers (``fflush(NULL)``)."""
    libc = _libc()
    if libc is not None:
        libc.fflush(None)


@contextmanager
def quiet_c_stdout() -> Iterator[None]:
    """While the block runs, what C code writes to standard output (file descriptor 1) goes
    to the null device; on leaving, by any path, descriptor 1 is what it was.

    Python's ``sys.stdout`` is flushed first and C's stdio buffers before and after, so
    that nothing written before the block is lost and nothing the block's C code
    buffered comes out after it. Guards are taken one at a time (a lock): descriptor 1
    is the process's, so output of another thread in the meantime is discarded too.

    Examples
    --------
    >>> import os
    >>> with quiet_c_stdout():
    ...     _ = os.write(1, b"not shown")
    """
    with _STDOUT_LOCK:
        try:
            sys.stdout.flush()
        except (AttributeError, OSError, ValueError):  # no stdout, or a closed one
            pass
        _flush_c_stdio()
        try:
            saved = os.dup(1)
        except OSError:  # no descriptor 1 to guard: nothing can reach it
            saved = None
        if saved is None:
            yield
            return
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, 1)
            finally:
                os.close(null)
            yield
        finally:
            try:
                _flush_c_stdio()
            finally:
                os.dup2(saved, 1)
                os.close(saved)


def cdd_rows(d: int, ub: Sequence[Row], eq: Sequence[Row]) -> list[list[Fraction]]:
    """The rows in pycddlib's form, ``[b, -a]`` for ``b - a . x >= 0`` (``= 0`` for the
    equalities, which come first), over ``d`` variables.

    Examples
    --------
    >>> cdd_rows(2, [({0: Fraction(-1)}, Fraction(0))], [({0: 1, 1: 1}, 1)])
    [[Fraction(1, 1), Fraction(-1, 1), Fraction(-1, 1)], \
[Fraction(0, 1), Fraction(1, 1), Fraction(0, 1)]]
    """
    rows = []
    for coef, b in [*eq, *ub]:
        row = [Fraction(b)] + [_ZERO] * d
        for c, v in coef.items():
            row[c + 1] = -Fraction(v)
        rows.append(row)
    return rows


def _dot(coef: dict[int, Fraction], x: Sequence[Fraction]) -> Fraction:
    return sum((v * x[c] for c, v in coef.items()), _ZERO)


def certificate_holds(objective: Sequence[Any], ub: Sequence[Row], eq: Sequence[Row],
                      primal: Sequence[Any], eq_dual: Sequence[Any], ub_dual: Sequence[Any],
                      optimum: Any, maximize: bool = False) -> bool:
    """Whether a primal point and dual multipliers prove ``optimum`` optimal, exactly: the
    point satisfies every row, the multipliers of the inequalities have the sign of the
    sense, they combine the rows into the objective, and ``objective . x``, the dual
    bound and ``optimum`` are one number (module docstring; weak duality).

    Examples
    --------
    >>> F = Fraction
    >>> ub = [({0: F(-1)}, F(0)), ({1: F(-1)}, F(0))]     # x >= 0
    >>> eq = [({0: F(1), 1: F(1)}, F(1))]                  # x_0 + x_1 = 1
    >>> certificate_holds([F(1), F(2)], ub, eq, [F(1), F(0)], [F(1)], [F(0), F(-1)], F(1))
    True
    >>> certificate_holds([F(1), F(2)], ub, eq, [F(0), F(1)], [F(2)], [F(1), F(0)], F(2))
    False
    """
    c = [Fraction(v) for v in objective]
    x = [Fraction(v) for v in primal]
    if len(eq_dual) != len(eq) or len(ub_dual) != len(ub) or len(x) != len(c):
        return False
    if any(_dot(a, x) > b for a, b in ub) or any(_dot(a, x) != b for a, b in eq):
        return False
    if any((y < 0) if maximize else (y > 0) for y in ub_dual):
        return False
    combo = [_ZERO] * len(c)
    bound = _ZERO
    for (coef, b), y in zip([*eq, *ub], [*eq_dual, *ub_dual], strict=True):
        for k, v in coef.items():
            combo[k] += y * v
        bound += y * b
    value = sum((a * b for a, b in zip(c, x, strict=True)), _ZERO)
    return combo == c and bound == value == Fraction(optimum)


def exact_lp(objective: Sequence[Any], ub: Sequence[Row] = (), eq: Sequence[Row] = (), *,
             maximize: bool = False, dual: bool = False, certify: bool = False,
             who: str = "exact_lp") -> ExactLP:
    """Minimise (``maximize=False``) or maximise ``objective . x`` subject to ``ub`` and
    ``eq``, exactly, by cdd's simplex (the module docstring gives the rows' form).

    Parameters
    ----------
    objective : sequence of exact numbers
        The ``d`` coefficients; ``d`` is the number of variables.
    ub, eq : sequences of ``(row, b)``
        ``a . x <= b`` and ``a . x = b``, ``row`` a dict ``column -> coefficient``.
    maximize : bool
        The sense.
    dual : bool
        Also return the dual multipliers (:attr:`ExactLP.eq_dual`, :attr:`ExactLP.ub_dual`).
    certify : bool
        Check the primal and dual optima against each other exactly
        (:func:`certificate_holds`; implies ``dual``).
    who : str
        How error messages name the caller.

    Returns
    -------
    ExactLP

    Raises
    ------
    ExactLPError
        cdd did not end optimal (its status on the error: ``"INCONSISTENT"`` when no
        point satisfies the rows, ``"DUAL_INCONSISTENT"`` when the objective is
        unbounded), or the certificate failed.

    Examples
    --------
    >>> F = Fraction
    >>> ub = [({0: F(-1)}, F(0)), ({1: F(-1)}, F(0))]
    >>> lp = exact_lp([1, 2], ub, [({0: F(1), 1: F(1)}, F(1))], certify=True)
    >>> lp.optimum, lp.primal, lp.eq_dual, lp.ub_dual
    (Fraction(1, 1), [Fraction(1, 1), Fraction(0, 1)], [Fraction(1, 1)], \
[Fraction(0, 1), Fraction(-1, 1)])
    >>> exact_lp([1, 1], ub, [({0: F(1), 1: F(1)}, F(-1))])
    Traceback (most recent call last):
    ...
    dpfix.numbers.exact_lp.ExactLPError: exact_lp: cdd's exact LP ended with status INCONSISTENT
    """
    import cdd
    import cdd.gmp

    c = [Fraction(v) for v in objective]
    d = len(c)
    rows = cdd_rows(d, ub, eq)
    sense = cdd.LPObjType.MAX if maximize else cdd.LPObjType.MIN
    with quiet_c_stdout():
        mat = cdd.gmp.matrix_from_array(rows, lin_set=range(len(eq)),
                                        rep_type=cdd.RepType.INEQUALITY, obj_type=sense,
                                        obj_func=[_ZERO, *c])
        lp = cdd.gmp.linprog_from_matrix(mat)
        cdd.gmp.linprog_solve(lp)
    status = lp.status.name
    if lp.status != cdd.LPStatusType.OPTIMAL:
        raise ExactLPError(f"{who}: cdd's exact LP ended with status {status}", status)
    primal = [Fraction(v) for v in lp.primal_solution]
    if not (dual or certify):
        return ExactLP(status, Fraction(lp.obj_value), primal)
    y = [_ZERO] * len(rows)
    basis = []
    for r, val in lp.dual_solution:
        if r < len(rows):
            y[r] += Fraction(val)
        else:  # cdd appends each equality reversed after the rows: its multiplier flips
            r -= len(rows)
            y[r] -= Fraction(val)
        basis.append(int(r))
    out = ExactLP(status, Fraction(lp.obj_value), primal, y[:len(eq)], y[len(eq):],
                  tuple(basis))
    if certify and not certificate_holds(c, ub, eq, primal, out.eq_dual, out.ub_dual,
                                         out.optimum, maximize):
        raise ExactLPError(f"{who}: cdd's optimum and its duals do not certify each other",
                           status)
    return out
