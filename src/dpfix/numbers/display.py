"""Exact matrices and vectors as text, LaTeX and sympy, without rounding.

Every function takes an exact vector or matrix (Fractions, ints, exact strings
such as ``"1/3"``, sympy Rationals; a nested list or a numpy object array) and
refuses floats with :class:`dpfix.numbers.exact.ExactnessError`: a printed entry is the
number itself, never an approximation of it.

- :func:`format_exact`: aligned plain text, columns aligned on the fraction
  slash (integers on their integer part), optionally over a common denominator;
- :func:`to_latex`: a ``bmatrix`` of ``\\frac`` (or ``\\tfrac``) entries;
- :func:`to_sympy`: a :class:`sympy.Matrix` of :class:`sympy.Rational`.

A vector (1-D) is shown as one row, as the paper writes a target ``z`` (a row
vector, ``z T = z``).
"""

from __future__ import annotations

from fractions import Fraction
from math import lcm
from typing import Any, Literal

from dpfix.numbers.exact import exact_array

__all__ = ["format_exact", "to_latex", "to_sympy"]


def _rows(M: Any, name: str) -> list[list[Fraction]]:
    """The exact entries of a vector (one row) or matrix, as rows of Fractions."""
    arr = exact_array(M, name)
    if arr.ndim == 1:
        return [list(arr)]
    if arr.ndim != 2:
        raise ValueError(f"{name}: expected a vector or a matrix, got {arr.ndim} dimensions")
    return [list(row) for row in arr]


def _common_denominator(rows: list[list[Fraction]]) -> int:
    return lcm(1, *(v.denominator for row in rows for v in row))


def format_exact(M: Any, *, indent: str = "", common_denominator: bool = False) -> str:
    """An exact vector or matrix as aligned text, one row a line.

    Within each column the numerators are right-aligned and the denominators
    left-aligned, so the slashes line up; an integer is aligned as a numerator.

    Parameters
    ----------
    M : array_like
        An exact vector or matrix (floats are refused).
    indent : str
        Put before every line.
    common_denominator : bool
        Factor out the least common denominator ``d``: a first line ``1/d *``
        and then the integer matrix ``d M`` (nothing is factored out when ``d = 1``).

    Returns
    -------
    str

    Raises
    ------
    dpfix.ExactnessError
        For a float entry.

    Examples
    --------
    >>> from fractions import Fraction
    >>> print(format_exact([[Fraction(1, 2), 1], [0, Fraction(-2, 3)]]))
    [1/2   1  ]
    [0    -2/3]
    >>> print(format_exact([["11/16", "5/16"], ["5/32", "27/32"]]))
    [11/16   5/16]
    [ 5/32  27/32]
    >>> print(format_exact([["1/6", "1/3", "1/2"]], common_denominator=True))
    1/6 *
    [1  2  3]
    """
    rows = _rows(M, "M")
    head: list[str] = []
    if common_denominator:
        d = _common_denominator(rows)
        if d > 1:
            rows = [[v * d for v in row] for row in rows]
            head = [f"{indent}1/{d} *"]
    cells = [[(str(v.numerator), "" if v.denominator == 1 else f"/{v.denominator}")
              for v in row] for row in rows]
    ncols = len(cells[0]) if cells else 0
    num_w = [max(len(r[c][0]) for r in cells) for c in range(ncols)]
    den_w = [max(len(r[c][1]) for r in cells) for c in range(ncols)]
    lines = ["  ".join(num.rjust(num_w[c]) + den.ljust(den_w[c])
                       for c, (num, den) in enumerate(row)) for row in cells]
    return "\n".join(head + [f"{indent}[{line}]" for line in lines])


def _latex_entry(v: Fraction, frac: str) -> str:
    if v.denominator == 1:
        return str(v.numerator)
    sign = "-" if v < 0 else ""
    return f"{sign}\\{frac}{{{abs(v.numerator)}}}{{{v.denominator}}}"


def to_latex(M: Any, *, frac: Literal["frac", "tfrac", "dfrac"] = "frac",
             env: str = "bmatrix") -> str:
    """An exact vector or matrix as a LaTeX matrix, every entry exact.

    Parameters
    ----------
    M : array_like
        An exact vector (one row) or matrix (floats are refused).
    frac : ``"frac"``, ``"tfrac"`` or ``"dfrac"``
        The fraction macro (``\\tfrac`` and ``\\dfrac`` need amsmath, as ``bmatrix`` does).
    env : str
        The matrix environment (``"bmatrix"``, ``"pmatrix"``, ...).

    Returns
    -------
    str
        ``\\begin{env} ... \\end{env}``, rows separated by ``\\\\``.

    Examples
    --------
    >>> print(to_latex([["2/3", "1/3"], ["1/3", "2/3"]]))
    \\begin{bmatrix}
    \\frac{2}{3} & \\frac{1}{3} \\\\
    \\frac{1}{3} & \\frac{2}{3}
    \\end{bmatrix}
    >>> print(to_latex([1, "-1/2"], frac="tfrac", env="pmatrix"))
    \\begin{pmatrix}
    1 & -\\tfrac{1}{2}
    \\end{pmatrix}
    """
    if frac not in ("frac", "tfrac", "dfrac"):
        raise ValueError(f"frac: 'frac', 'tfrac' or 'dfrac', got {frac!r}")
    rows = _rows(M, "M")
    body = " \\\\\n".join(" & ".join(_latex_entry(v, frac) for v in row) for row in rows)
    return f"\\begin{{{env}}}\n{body}\n\\end{{{env}}}"


def to_sympy(M: Any) -> Any:
    """An exact vector (a ``1 x n`` row) or matrix as a :class:`sympy.Matrix` of Rationals.

    Parameters
    ----------
    M : array_like
        Exact entries (floats are refused).

    Returns
    -------
    sympy.Matrix

    Examples
    --------
    >>> to_sympy([["2/3", "1/3"], ["1/3", "2/3"]])
    Matrix([
    [2/3, 1/3],
    [1/3, 2/3]])
    >>> to_sympy(["1/2", "1/2"]).shape
    (1, 2)
    """
    import sympy

    rows = _rows(M, "M")
    return sympy.Matrix([[sympy.Rational(v.numerator, v.denominator) for v in row]
                         for row in rows])

