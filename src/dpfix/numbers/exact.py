"""Exact numbers: conversion, refusal of floats, exact rank and nullspace (python-flint;
over a number field ``Q(lam)``, :mod:`dpfix.numbers.algebraic`, by the same functions).

The exact inner loops (the cone test and the dual points of :mod:`dpfix.certify`) compute
with python-flint's ``fmpq``: :func:`to_fmpq` brings a number in, :func:`from_fmpq`
(:func:`from_fmpq_array`) hands the result back as a Fraction, and :func:`exact_dot` sums
products of either kind.

dpfix represents an exact matrix as a numpy array of dtype ``object`` holding
:class:`fractions.Fraction` entries. Numpy's arithmetic on such arrays is exact,
so the same code runs on float64 arrays (the production path) and on Fraction
arrays (the research path). Floats are refused wherever exactness is promised,
as pycddlib's ``cdd.gmp`` does: an exact result is never computed from a float
in disguise.
"""

from __future__ import annotations

import numbers
from fractions import Fraction
from typing import Any

import flint
import numpy as np

from dpfix.numbers.errors import Error
from dpfix.numbers.numeric import check_positive

__all__ = [
    "exact_text",
    "ExactnessError",
    "to_fraction",
    "exact_array",
    "is_exact_number",
    "one_or_many",
    "is_exact_array",
    "wants_exact",
    "probability_vector",
    "Z_ATOL",
    "exact_lam",
    "resolve_lam",
    "rank",
    "nullspace",
    "to_fmpq",
    "from_fmpq",
    "from_fmpq_array",
    "exact_dot",
]


class ExactnessError(Error, TypeError):
    """A float was given where an exact (rational) number is required."""


def _is_sympy_rational(x: Any) -> bool:
    return bool(getattr(x, "is_Rational", False)) and hasattr(x, "p") and hasattr(x, "q")


def _is_algebraic(x: Any) -> bool:
    """An exact real algebraic number (:class:`dpfix.numbers.algebraic.Algebraic`), known
    by its class attribute ``exact_algebraic``: that module imports this one, so this
    one does not import it back."""
    return getattr(type(x), "exact_algebraic", False) is True


def is_exact_number(x: Any) -> bool:
    """True for ints, Fractions, sympy Rationals, strings such as ``"3/2"`` and exact
    real algebraic numbers (:class:`dpfix.numbers.algebraic.Algebraic`).

    Parameters
    ----------
    x : object

    Returns
    -------
    bool
        Whether ``x`` is an exact (rational) number.

    Examples
    --------
    >>> is_exact_number(Fraction(3, 2)), is_exact_number("3/2"), is_exact_number(1.5)
    (True, True, False)
    """
    if isinstance(x, bool):
        return False
    if isinstance(x, (int, np.integer, Fraction)) or _is_sympy_rational(x):
        return True
    if isinstance(x, numbers.Rational) or _is_algebraic(x):
        return True
    if isinstance(x, str):
        try:
            Fraction(x.strip())
        except (ValueError, ZeroDivisionError):
            return False
        return True
    return False


def one_or_many(value: Any) -> tuple:
    """``lam=`` and ``n=`` take one value or many: one number (an int, a Fraction, a float,
    an algebraic number or a text such as ``"3/2"``) as a tuple of one, an iterable as the
    tuple of its items in the given order.

    Examples
    --------
    >>> one_or_many(3), one_or_many("3/2"), one_or_many(range(2, 5))
    ((3,), ('3/2',), (2, 3, 4))
    """
    if isinstance(value, (str, int, float, np.integer, np.floating)) or is_exact_number(value):
        return (value,)
    return tuple(value)

def to_fraction(x: Any, name: str = "value") -> Fraction:
    """Convert an exact number to a Fraction; refuse floats.

    Parameters
    ----------
    x : int, Fraction, sympy Rational or str
        An exact number (``"3/2"``, ``" 2 "``).
    name : str
        How error messages name it.

    Returns
    -------
    Fraction
        The exact value of ``x``.

    Raises
    ------
    ExactnessError
        For a float (never converted: an exact result is never computed from one).
    ValueError
        For a string that is not a rational number.
    TypeError
        For a bool or another type.

    Examples
    --------
    >>> to_fraction("3/2"), to_fraction(2)
    (Fraction(3, 2), Fraction(2, 1))
    >>> to_fraction(0.5, "z")
    Traceback (most recent call last):
    ...
    dpfix.numbers.exact.ExactnessError: z: float 0.5 given where an exact number is required; ...
    """
    if isinstance(x, bool):
        raise TypeError(f"{name}: bool {x!r} is not a number")
    if isinstance(x, Fraction):
        return x
    if isinstance(x, (int, np.integer)):
        return Fraction(int(x))
    if isinstance(x, flint.fmpq) or _is_sympy_rational(x):
        return Fraction(int(x.p), int(x.q))
    if isinstance(x, flint.fmpz):
        return Fraction(int(x))
    if isinstance(x, numbers.Rational):
        return Fraction(int(x.numerator), int(x.denominator))
    if isinstance(x, str):
        try:
            return Fraction(x.strip())
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"{name}: cannot read {x!r} as a rational number") from None
    if isinstance(x, (float, np.floating)):
        raise ExactnessError(
            f"{name}: float {x!r} given where an exact number is required; "
            "pass an int, a Fraction or a string such as '1/2'"
        )
    if _is_algebraic(x):
        if x.is_rational():
            return x.rational()
        raise TypeError(f"{name}: the irrational algebraic number {x} given where a "
                        "rational number is required")
    raise TypeError(f"{name}: {type(x).__name__} {x!r} is not an exact number")



def to_fmpq(x: Any, name: str = "value") -> Any:
    """An exact number as python-flint's ``fmpq``; an irrational element of ``Q(lam)``
    (:class:`dpfix.numbers.algebraic.Algebraic`) as it is, the two mixing exactly.

    Raises :class:`ExactnessError` for a float (as :func:`to_fraction`).

    Examples
    --------
    >>> to_fmpq("3/4"), to_fmpq(Fraction(-1, 2))
    (3/4, -1/2)
    """
    if isinstance(x, flint.fmpq):
        return x
    if _is_algebraic(x) and not x.is_rational():
        return x
    f = to_fraction(x, name)
    return flint.fmpq(f.numerator, f.denominator)


def from_fmpq(x: Any) -> Any:
    """The number handed back for one computed by :func:`to_fmpq`'s arithmetic: a Fraction
    (from an ``fmpq``, an ``fmpz``, any exact rational, or a rational element of
    ``Q(lam)``), or an irrational element of ``Q(lam)`` as it is.

    Examples
    --------
    >>> from_fmpq(to_fmpq("3/4") * 2), from_fmpq(flint.fmpz(5))
    (Fraction(3, 2), Fraction(5, 1))
    """
    if _is_algebraic(x) and not x.is_rational():
        return x
    return to_fraction(x)


def from_fmpq_array(xs: Any) -> np.ndarray:
    """:func:`from_fmpq` of every entry of a sequence, as an object array.

    Examples
    --------
    >>> from_fmpq_array([to_fmpq(1), to_fmpq("1/3")])
    array([Fraction(1, 1), Fraction(1, 3)], dtype=object)
    """
    return np.array([from_fmpq(x) for x in xs], dtype=object)


def exact_dot(a: Any, b: Any) -> Any:
    """``sum_i a_i b_i``, exactly, from ``fmpq`` zero, for entries that mix with ``fmpq``
    (``fmpq`` s, ints and elements of ``Q(lam)``: :func:`to_fmpq` of each; not Fractions).

    Examples
    --------
    >>> exact_dot([to_fmpq(1), to_fmpq("1/2")], [2, 3])
    7/2
    """
    s = flint.fmpq(0)
    for x, y in zip(a, b, strict=True):
        s += x * y
    return s


def exact_array(x: Any, name: str = "array", ndim: int | None = None) -> np.ndarray:
    """An object array of Fractions from nested lists of exact numbers.

    Floats (including float64 arrays) are refused with :class:`ExactnessError`.

    Parameters
    ----------
    x : array_like
        Nested lists or an object array of exact numbers.
    name : str
        How error messages name it.
    ndim : int, optional
        The number of dimensions required.

    Returns
    -------
    numpy.ndarray
        Object array of Fractions.

    Raises
    ------
    ExactnessError
        For a float or a float array.
    ValueError, TypeError
        For a wrong number of dimensions, a string, or an entry that is no number.

    Examples
    --------
    >>> exact_array([1, "1/2"], name="z")
    array([Fraction(1, 1), Fraction(1, 2)], dtype=object)
    """
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        raise ExactnessError(
            f"{name}: float array given where exact numbers are required; "
            "pass ints, Fractions or strings such as '1/2'"
        )
    if isinstance(x, str):
        raise TypeError(f"{name}: expected an array of numbers, got the string {x!r}")
    arr = np.array(x, dtype=object)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name}: expected {ndim} dimension(s), got shape {arr.shape}")
    out = np.empty(arr.shape, dtype=object)
    for idx, v in np.ndenumerate(arr):
        out[idx] = to_fraction(v, name)
    return out


def wants_exact(*xs: Any) -> bool:
    """True when any argument holds exact numbers: an object array (Fractions),
    strings such as ``"1/2"``, or Python/sympy rationals. Functions that serve
    both paths then convert every argument with :func:`exact_array`, which
    refuses floats, so an exact computation never mixes in a float.

    Examples
    --------
    >>> wants_exact([Fraction(1, 2)], [0.5]), wants_exact([0.5], [1.0])
    (True, False)
    """
    for x in xs:
        a = x if isinstance(x, np.ndarray) else np.asarray(x, dtype=object)
        if a.dtype == object:
            if any(isinstance(v, (Fraction, str)) or _is_sympy_rational(v) or _is_algebraic(v)
                   for v in a.flat):
                return True
        elif a.dtype.kind in "US":
            return True
    return False


def is_exact_array(x: Any) -> bool:
    """True when every entry of ``x`` is an exact number (no floats).

    Parameters
    ----------
    x : array_like

    Returns
    -------
    bool
        Whether no entry is a float.
    """
    arr = np.asarray(x, dtype=object)
    return all(is_exact_number(v) for v in arr.flat)


def exact_lam(lam: Any, algebraic: bool = False) -> Any:
    """``lam = e^eps`` as a Fraction greater than 1 (refuses floats), or as it is when it
    is an exact real algebraic number (:func:`dpfix.numbers.algebraic.algebraic`) and the
    caller computes over ``Q(lam)`` (``algebraic=True``).

    Parameters
    ----------
    lam : int, Fraction, str or Algebraic
        ``e^eps`` (the paper's ``lambda``).
    algebraic : bool
        Whether an algebraic ``lam`` is accepted (the polytopes and the scales compute
        over ``Q(lam)``; the rest of dpfix needs a rational ``lam`` and says so).

    Returns
    -------
    Fraction or Algebraic
        The exact ``lam > 1``.

    Raises
    ------
    ExactnessError
        For a float.
    ValueError
        Unless ``lam > 1``.
    TypeError
        An algebraic ``lam`` without ``algebraic=True``.

    Examples
    --------
    >>> exact_lam("3/2")
    Fraction(3, 2)
    """
    if _is_algebraic(lam) and not algebraic and not lam.is_rational():
        raise TypeError(f"lam: the algebraic number {lam} is accepted by U, F, RF, RU and "
                        "the scales (exact over Q(lam)); this needs a rational lam")
    value = lam if _is_algebraic(lam) and algebraic else to_fraction(lam, "lam")
    if value <= 1:
        raise ValueError(f"lam: must be > 1 (lam = e^eps with eps > 0), got {value}")
    return value


def resolve_lam(eps: Any = None, lam: Any = None, algebraic: bool = False
                ) -> tuple[Any, float]:
    """Decide the number type from ``eps`` and ``lam``.

    Returns ``(lam_exact, eps_float)``: ``lam_exact`` is a Fraction on the exact
    path (``lam`` rational and ``eps`` not given; an algebraic ``lam`` is kept as it
    is when ``algebraic`` is True, see :func:`exact_lam`) and None on the float path
    (``eps`` given, or ``lam`` a float); ``eps_float`` is always ``log(lam)`` as
    a float, for reporting.

    Parameters
    ----------
    eps : float, optional
        The privacy parameter (float path).
    lam : int, Fraction, str or float, optional
        ``e^eps``: rational (exact path) or float (float path).

    Raises
    ------
    ValueError
        Both or neither given, ``lam <= 1`` or ``eps`` not a finite number ``> 0``.

    Examples
    --------
    >>> resolve_lam(lam=2)
    (Fraction(2, 1), 0.6931471805599453)
    >>> resolve_lam(eps=1.0)
    (None, 1.0)
    """
    if eps is not None and lam is not None:
        raise ValueError("give eps (float path) or lam (exact path), not both")
    if eps is None and lam is None:
        raise ValueError("give eps (float path) or lam = e^eps (exact path)")
    if lam is not None:
        if isinstance(lam, (float, np.floating)):
            eps = float(np.log(lam))
        else:
            value = exact_lam(lam, algebraic)
            return value, float(np.log(float(value)))
    return None, check_positive(eps, "eps")


#: Float target distributions must sum to 1 within this (then are renormalised).
Z_ATOL = 1e-9


def probability_vector(z: Any, exact: bool, n: int | None = None, name: str = "z"
                       ) -> np.ndarray:
    """A target distribution: non-negative, summing to 1, of length ``n`` if given.

    Exact (Fractions, floats refused, the sum exactly 1) or float64 (finite, the
    sum within :data:`Z_ATOL` of 1, then renormalised). The one validator of
    every module that takes a ``z``.

    Parameters
    ----------
    z : array_like
        The target distribution.
    exact : bool
        Exact path (Fractions) or float path.
    n : int, optional
        The length required.
    name : str
        How error messages name it.

    Returns
    -------
    numpy.ndarray
        Object array of Fractions, or float64 renormalised to sum to 1.

    Raises
    ------
    ValueError
        Negative entries, a wrong length, or a sum other than 1.
    ExactnessError
        A float on the exact path.

    Examples
    --------
    >>> probability_vector(["1/4", "3/4"], exact=True).tolist()
    [Fraction(1, 4), Fraction(3, 4)]
    >>> probability_vector([0.5, 0.6], exact=False)
    Traceback (most recent call last):
    ...
    ValueError: z: must sum to 1 (within 1e-09), got 1.1
    """
    if exact:
        zv = exact_array(z, name, ndim=1)
    else:
        try:
            zv = np.asarray(z, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{name}: expected a vector of numbers") from None
        if zv.ndim != 1:
            raise ValueError(f"{name}: expected 1 dimension, got shape {zv.shape}")
        if not np.all(np.isfinite(zv)):
            raise ValueError(f"{name}: entries must be finite")
    if zv.shape[0] < 1:
        raise ValueError(f"{name}: needs at least one entry (n >= 1)")
    if n is not None and zv.shape[0] != n:
        raise ValueError(f"{name}: expected length {n}, got {zv.shape[0]}")
    if any(v < 0 for v in zv):
        raise ValueError(f"{name}: entries must be non-negative (>= 0): a probability vector")
    if exact:
        total = sum(zv, Fraction(0))
        if total != 1:
            raise ValueError(f"{name}: must sum to 1 exactly (a probability vector), got {total}")
        return zv
    total = float(zv.sum())
    if abs(total - 1) > Z_ATOL:
        raise ValueError(f"{name}: must sum to 1 (within {Z_ATOL}), got {total!r}")
    return zv / total


def _matrix_entries(M: Any) -> np.ndarray:
    """``M`` as an object array of exact numbers: Fractions (:func:`exact_array`), or,
    when it holds an algebraic number (:mod:`dpfix.numbers.algebraic`, of any degree),
    its algebraic entries as they are and the others as Fractions (floats refused
    either way)."""
    if isinstance(M, np.ndarray) and M.dtype.kind == "f":
        return exact_array(M, "matrix")
    raw = np.array(M, dtype=object)
    if not any(_is_algebraic(v) for v in raw.flat):
        return exact_array(raw, "matrix")
    out = np.empty(raw.shape, dtype=object)
    for idx, v in np.ndenumerate(raw):
        out[idx] = v if _is_algebraic(v) else to_fraction(v, "matrix")
    return out


def _field_reduced_rows(arr: np.ndarray) -> tuple[list[list[Any]], list[int]]:
    """The reduced row echelon form by Gauss-Jordan elimination in the entries' own exact
    arithmetic (elements of ``Q(lam)``, whose zero test is exact): its non-zero rows and
    their pivot columns."""
    rows = [list(r) for r in arr]
    m, n = arr.shape
    pivots: list[int] = []
    r = 0
    for c in range(n):
        piv = next((i for i in range(r, m) if rows[i][c] != 0), None)
        if piv is None:
            continue
        rows[r], rows[piv] = rows[piv], rows[r]
        inv = 1 / rows[r][c]
        rows[r] = [x * inv for x in rows[r]]
        for i in range(m):
            if i != r and rows[i][c] != 0:
                f = rows[i][c]
                rows[i] = [x - f * y for x, y in zip(rows[i], rows[r], strict=True)]
        pivots.append(c)
        r += 1
        if r == m:
            break
    return rows[:r], pivots


def _reduced_rows(arr: np.ndarray) -> tuple[list[list[Any]], list[int]]:
    """The non-zero rows of the reduced row echelon form and their pivot columns:
    python-flint's exact ``fmpq_mat.rref`` over Q (as Fractions), Gauss-Jordan in
    ``Q(lam)`` when an entry is an algebraic number."""
    m, n = arr.shape
    if m == 0 or n == 0:
        return [], []
    if any(_is_algebraic(v) for v in arr.flat):
        return _field_reduced_rows(arr)
    entries = [flint.fmpq(v.numerator, v.denominator) for v in arr.flat]
    reduced, r = flint.fmpq_mat(m, n, entries).rref()
    rows = [[Fraction(int(x.p), int(x.q)) for x in row] for row in reduced.tolist()[:r]]
    pivots = [next(c for c, v in enumerate(row) if v != 0) for row in rows]
    return rows, pivots


def rank(M: Any) -> int:
    """The exact rank of a matrix of exact numbers.

    Computed by python-flint's ``fmpq_mat`` (exact rational arithmetic, FLINT);
    the tests check it against sympy's. A matrix holding elements of a number field
    ``Q(lam)`` (:mod:`dpfix.numbers.algebraic`) is reduced by Gauss-Jordan elimination
    in the field, exactly (a rational matrix gives the same rank either way).
    Extremality in the paper's polytopes is decided by such ranks (Theorem 2, Lemma 2;
    docs/math_notes.md).

    Parameters
    ----------
    M : array_like
        A matrix of exact numbers (ints, Fractions, strings, algebraic numbers of one
        field); floats are refused.

    Returns
    -------
    int
        0 for an empty matrix.

    Raises
    ------
    ExactnessError
        If ``M`` holds a float.

    Examples
    --------
    >>> rank([[1, 2], [2, 4]])
    1
    >>> from dpfix.numbers.algebraic import algebraic
    >>> r2 = algebraic("x^2 - 2", 1.4)
    >>> rank([[1, r2], [r2, 2]]), rank([[1, r2], [r2, 3]])
    (1, 2)
    """
    arr = _matrix_entries(M)
    if arr.ndim != 2 or arr.size == 0:
        return 0
    return len(_reduced_rows(arr)[1])


def nullspace(M: Any) -> np.ndarray:
    """An exact basis of the right nullspace, as the columns of a Fraction array.

    The basis read off the reduced row echelon form (python-flint's
    ``fmpq_mat.rref``; over ``Q(lam)`` Gauss-Jordan in the field, as :func:`rank`):
    one column per free variable, 1 there and 0 at the other free variables; the
    same basis as sympy's ``Matrix.nullspace`` (checked by the tests). Used for
    movements (Lemma 2, Theorem 4; docs/math_notes.md).

    Parameters
    ----------
    M : array_like
        A 2-dimensional matrix of exact numbers (algebraic numbers of one field
        allowed); floats are refused.

    Returns
    -------
    numpy.ndarray
        Object array of shape ``(ncols, nullity)``: Fractions, elements of ``Q(lam)``
        for a matrix over ``Q(lam)``.

    Raises
    ------
    ValueError
        If ``M`` is not 2-dimensional.
    ExactnessError
        If ``M`` holds a float.

    Examples
    --------
    >>> nullspace([[1, 1]]).T.tolist()
    [[Fraction(-1, 1), Fraction(1, 1)]]
    >>> from dpfix.numbers.algebraic import algebraic
    >>> r2 = algebraic("x^2 - 2", 1.4)
    >>> [v * r2 for v in nullspace([[r2, 2]])[:, 0]] == [-2, r2]
    True
    """
    arr = _matrix_entries(M)
    if arr.ndim != 2:
        raise ValueError(f"matrix: expected 2 dimensions, got shape {arr.shape}")
    ncols = arr.shape[1]
    rows, pivots = _reduced_rows(arr)
    free = [c for c in range(ncols) if c not in set(pivots)]
    basis = np.empty((ncols, len(free)), dtype=object)
    basis[:] = Fraction(0)
    for k, f in enumerate(free):
        basis[f, k] = Fraction(1)
        for row, p in zip(rows, pivots, strict=True):
            basis[p, k] = -row[f]
    return basis


def exact_text(value: Any) -> str:
    """The exact value of a budget as text: a float at its binary value, a Fraction as it is;
    a decimal where it has one, else ``p/q``. No float rounding: ``0.49999999999999994`` is
    never printed for a budget whose exact value is ``1/2``, and a float below ``1/2`` is
    printed with every digit it has.

    Examples
    --------
    >>> exact_text(0.5), exact_text(Fraction(1, 3)), exact_text(Fraction(3, 10)), exact_text(2)
    ('0.5', '1/3', '0.3', '2')
    >>> exact_text(0.1)
    '0.1000000000000000055511151231257827021181583404541015625'
    """
    q = value if isinstance(value, Fraction) else Fraction(value)
    den, twos, fives = q.denominator, 0, 0
    while den % 2 == 0:
        den, twos = den // 2, twos + 1
    while den % 5 == 0:
        den, fives = den // 5, fives + 1
    if den != 1:
        return f"{q.numerator}/{q.denominator}"
    places = max(twos, fives)
    digits = str(abs(q.numerator) * 10**places // q.denominator).rjust(places + 1, "0")
    sign = "-" if q < 0 else ""
    if not places:
        return sign + digits
    return sign + f"{digits[:-places]}.{digits[-places:]}".rstrip("0").rstrip(".")
