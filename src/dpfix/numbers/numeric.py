"""Small numeric helpers shared by several modules (floor 1: imports nothing of dpfix).

- :func:`log_add_exp`: ``log(e^a + e^b)`` on Python floats, the step of every
  log-space recursion (Algorithm 1's float kernel, Algorithm 2's side sums, the
  northwest-corner columns);
- :func:`geometric_amounts` and :func:`log_geometric_amounts`: the column
  amounts ``c_m`` of the truncated geometric mechanism ``G[i, m] = c_m rho^|i-m|``,
  ``c_m = (1-rho)/(1+rho)`` inside and ``1/(1+rho)`` at the ends (the paper's
  Section 5.3; docs/math_notes.md);
- the input checks of budgets, splits and sizes: :func:`check_positive`,
  :func:`check_probability`, :func:`check_fraction`, :func:`check_n`;
- :func:`require`: a lazy import of an optional dependency of the
  ``production`` extra, failing with one line naming the extra.
"""

from __future__ import annotations

import importlib
import math
import numbers
import re
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["log_add_exp", "geometric_amounts", "log_geometric_amounts", "check_positive",
           "check_probability", "check_fraction", "check_n", "require", "PRODUCTION_EXTRA",
           "PLAIN_NUMBER", "PLAIN_INTEGER", "plain_number"]

#: The optional dependencies of ``pip install 'dpfix[production]'`` (import name -> package).
PRODUCTION_EXTRA = {"pywt": "PyWavelets", "pandas": "pandas", "pyarrow": "pyarrow",
                    "opendp": "opendp", "matplotlib": "matplotlib", "tqdm": "tqdm",
                    "numba": "numba", "ot": "POT"}


def log_add_exp(a: float, b: float) -> float:
    """``log(e^a + e^b)`` on Python floats, ``-inf`` standing for 0.

    Parameters
    ----------
    a, b : float
        Natural logarithms (``-inf`` allowed).

    Returns
    -------
    float
        ``max(a, b) + log1p(e^-|a - b|)``: no overflow, exact when one side is ``-inf``.
        A term below ``e^-50`` times the other is dropped: it changes the sum by less
        than 2e-22 relative (below float64's rounding unless the result is within
        1e-6 of 0), and ``exp`` of such arguments can reach the slow subnormal range
        (Algorithm 1's compiled kernel calls this in its inner loop).

    Examples
    --------
    >>> log_add_exp(0.0, 0.0) == math.log(2), log_add_exp(-math.inf, 1.5)
    (True, 1.5)
    """
    if a < b:
        a, b = b, a
    if b == -math.inf:
        return a
    d = b - a
    return a + math.log1p(math.exp(d)) if d > -50.0 else a


def geometric_amounts(n: int, rho: Any) -> Any:
    """The amounts ``c_m`` of the truncated geometric mechanism, ``m = 0 .. n-1``.

    ``G[i, m] = c_m rho^|i-m|`` with ``c_m = (1-rho)/(1+rho)`` inside and
    ``1/(1+rho)`` at the two ends (``c_0 = 1`` for ``n = 1``); equivalently
    ``c = K^-1 1`` for ``K[i, j] = rho^|i-j|``, the vector behind Algorithm 2's
    ``sigma_amounts`` (paper Section 5.3; docs/math_notes.md). One function for both
    paths, as pycddlib's: exact for an exact ``rho`` (a Fraction, an element of
    ``Q(lam)``, a sympy symbol), a float64 array for a float one (see
    :func:`log_geometric_amounts` for large ``eps``).

    Parameters
    ----------
    n : int
        Size of the mechanism (``n >= 1``).
    rho : Fraction or float
        ``1 / lam = e^-eps``, in ``(0, 1)``.

    Returns
    -------
    list or numpy.ndarray
        ``n`` amounts: a list of numbers of the type of an exact ``rho``, a float64
        array for a float one.

    Examples
    --------
    >>> from fractions import Fraction
    >>> geometric_amounts(3, Fraction(1, 2))
    [Fraction(2, 3), Fraction(1, 3), Fraction(2, 3)]
    >>> geometric_amounts(3, 0.5).round(12).tolist()
    [0.666666666667, 0.333333333333, 0.666666666667]
    """
    if isinstance(rho, (float, np.floating)):
        c = np.full(n, (1 - rho) / (1 + rho))
        c[0] = c[-1] = 1 / (1 + rho)
        if n == 1:
            c[0] = 1.0
        return c
    if n == 1:
        return [rho ** 0]
    end = 1 / (1 + rho)
    return [end, *[(1 - rho) / (1 + rho)] * (n - 2), end]


def log_geometric_amounts(n: int, eps: float) -> np.ndarray:
    """``log c_m`` of :func:`geometric_amounts` for ``rho = e^-eps``, stable for any ``eps > 0``.

    ``log((1-rho)/(1+rho)) = log(-expm1(-eps)) - log1p(rho)`` (no cancellation for
    small ``eps``), ``log(1/(1+rho)) = -log1p(rho)`` at the ends.

    Parameters
    ----------
    n : int
        Size (``n >= 1``).
    eps : float
        ``eps > 0``.

    Returns
    -------
    numpy.ndarray
        ``n`` float64 logs.

    Examples
    --------
    >>> np.exp(log_geometric_amounts(3, math.log(2))).round(12).tolist()
    [0.666666666667, 0.333333333333, 0.666666666667]
    """
    if n == 1:
        return np.zeros(1)
    rho = math.exp(-eps)
    out = np.full(n, math.log(-math.expm1(-eps)) - math.log1p(rho))
    out[0] = out[-1] = -math.log1p(rho)
    return out


def _real(value: Any, name: str, expected: str) -> float:
    """``float(value)`` for a real number (not a bool), else ValueError ``name: expected``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}: {expected}, got {value!r}")
    return float(value)


def check_positive(value: Any, name: str = "eps") -> float:
    """A positive finite float: a budget, a scale, a sensitivity.

    Parameters
    ----------
    value : a real number (bools, NaN, infinities and non-numbers are refused).
    name : str
        How the error message names it.

    Returns
    -------
    float
        ``value`` as a float.

    Raises
    ------
    ValueError
        Unless ``value`` is a finite real number ``> 0``.

    Examples
    --------
    >>> check_positive(0.5)
    0.5
    >>> check_positive(0)
    Traceback (most recent call last):
    ...
    ValueError: eps: must be a finite number > 0, got 0
    """
    v = _real(value, name, "must be a finite number > 0")
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name}: must be a finite number > 0, got {value!r}")
    return v


def check_probability(value: Any, name: str = "delta") -> float:
    """A number strictly between 0 and 1 (a ``delta``).

    Parameters
    ----------
    value : a real number.
    name : str
        How the error message names it.

    Returns
    -------
    float
        The probability as a float.

    Raises
    ------
    ValueError
        Unless ``0 < value < 1``.

    Examples
    --------
    >>> check_probability(1e-6)
    1e-06
    """
    v = _real(value, name, "must be a number in (0, 1)")
    if not 0.0 < v < 1.0:
        raise ValueError(f"{name}: must be in (0, 1), got {value!r}")
    return v


def check_fraction(split: Any, name: str = "split") -> float:
    """A budget split: a fraction strictly between 0 and 1 (the stage-1 share).

    Parameters
    ----------
    split : a real number.
    name : str
        How the error message names it.

    Returns
    -------
    float
        The stage-1 fraction as a float.

    Raises
    ------
    ValueError
        Unless ``split`` is a real number in ``(0, 1)``.

    Examples
    --------
    >>> check_fraction(0.25)
    0.25
    >>> check_fraction(1)
    Traceback (most recent call last):
    ...
    ValueError: split: the stage-1 fraction must be in (0, 1), got 1
    """
    f = _real(split, name, "'rule-of-thumb' or a fraction in (0, 1)")
    if not 0 < f < 1:
        raise ValueError(f"{name}: the stage-1 fraction must be in (0, 1), got {split!r}")
    return f


def check_n(n: Any, name: str = "n", minimum: int = 1) -> int:
    """A size ``n >= minimum`` (Python or numpy integer; bools refused).

    Parameters
    ----------
    n : int
    name : str
        How the error message names it.
    minimum : int
        The least size allowed (the polytopes need ``n >= 2``).

    Returns
    -------
    int
        ``n`` as a Python int.

    Raises
    ------
    ValueError
        Unless ``n`` is an integer ``>= minimum``.

    Examples
    --------
    >>> check_n(3)
    3
    >>> check_n(0)
    Traceback (most recent call last):
    ...
    ValueError: n: must be an integer >= 1, got 0
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < minimum:
        raise ValueError(f"{name}: must be an integer >= {minimum}, got {n!r}")
    return int(n)


def require(module: str) -> ModuleType:
    """Import an optional dependency where it is needed (never at import time of dpfix).

    Parameters
    ----------
    module : str
        The import name, e.g. ``"pywt"`` or ``"opendp.prelude"``.

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    ImportError
        One line naming the package and the extra to install:
        ``pip install 'dpfix[production]'``.

    Examples
    --------
    >>> require("math").sqrt(4.0)
    2.0
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        top = module.split(".")[0]
        package = PRODUCTION_EXTRA.get(top, top)
        raise ImportError(f"{package} is not installed; it comes with the production extra: "
                          f"pip install 'dpfix[production]'") from err


#: A number as options and parsers take it: ASCII digits with an optional sign, decimal point and
#: exponent (or inf/nan, refused by each option's range). Python's float(), int() and
#: Decimal() also read "1_0" as 10 and digits of other scripts; the options do not.
PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                           r"|[+-]?(?:inf|infinity|nan)", re.IGNORECASE)
PLAIN_INTEGER = re.compile(r"[+-]?[0-9]+")


def plain_number(text: Any, flag: str, integer: bool = False) -> str:
    """``text`` stripped, if it is a number written plainly (:data:`PLAIN_NUMBER`), else a
    one-line ValueError naming ``flag``.

    Examples
    --------
    >>> plain_number(" 1e-3 ", "--epsilon")
    '1e-3'
    >>> plain_number("1_0", "--epsilon")
    Traceback (most recent call last):
    ...
    ValueError: --epsilon: '1_0' is not a number written in plain digits (an optional sign, \
decimal point and exponent; no '_')
    """
    stripped = str(text).strip()
    if not (PLAIN_INTEGER if integer else PLAIN_NUMBER).fullmatch(stripped):
        what = "an integer" if integer else "a number"
        more = "" if integer else "an optional sign, decimal point and exponent; "
        raise ValueError(f"{flag}: {text!r} is not {what} written in plain digits ({more}"
                         "no '_')")
    return stripped
