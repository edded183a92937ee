"""Exact real algebraic numbers: ``lam`` a root of an integer polynomial (docs/math_notes.md).

A real algebraic number ``alpha`` is given by its minimal polynomial ``m`` (irreducible
over Q) and an interval with rational ends holding exactly one real root of ``m``. The
elements of the number field ``Q(alpha)`` (``lam``, ``lam^2``, ``1/lam``, ``lam^h - 1``
...) are held exactly as rational polynomials in ``alpha`` of degree below ``deg m``,
reduced modulo ``m`` (python-flint's ``fmpq_poly``): ``+``, ``-`` and ``*`` are those
of polynomials followed by the remainder, ``1/a`` comes from the extended Euclidean
algorithm (``a s + m t = 1`` as ``m`` is irreducible and ``a != 0``).

- An element is 0 iff its reduced polynomial is 0 (``m`` irreducible, so no
  polynomial of lower degree vanishes at ``alpha``).
- The sign of a non-zero element ``a(alpha)`` is that of the ball ``a([lo, hi])``
  (arb interval arithmetic, python-flint) over the root's isolating interval, which is
  halved exactly (the sign of ``m`` at the rational midpoint) until the ball
  excludes 0. This ends: ``a(alpha) != 0`` and the ball shrinks to it.
- Elements of two different fields never mix (``TypeError``); ints and Fractions mix
  (they lie in every field); floats are refused with
  :class:`~dpfix.numbers.exact.ExactnessError`.

The minimal polynomial of degree 1 (``x - p/q``, ``q x - p``) is allowed: the field
is Q itself, and its elements are held and compared by the same code, which makes a
rational ``lam`` an exact cross-check of every algebraic path.

Choice of arithmetic, measured (``benchmarks/bench_algebraic.py``,
``benchmarks/results/algebraic.json``; Gaussian elimination of the 20 x 20 matrix
``lam^((i*j) mod 7)`` plus the identity, every zero test exact, over ``Q(lam)`` of
degree 2, 3 and 4; medians of 3 runs, seconds, on a shared 2-core machine): this
module (fmpq_poly) 0.027, 0.024, 0.032; sympy's ``AlgebraicField`` elements (``ANP``)
0.088, 0.095, 0.091; sympy expressions in ``CRootOf`` (``expand``, zero decided by
``minimal_polynomial``) over 60 s at every degree. Hence python-flint (3 to 4 times
quicker than ``ANP``), which also gives the arb balls for the signs (sympy's ``ANP``
has no order).

One room: the number field, its elements and the exact helpers that take them (about
800 lines, most of them the arithmetic and the exact signs).

Examples
--------
>>> phi = algebraic("x^2 - x - 1", 1.618)
>>> phi ** 2 == phi + 1, 1 / phi == phi - 1, phi > Fraction(161, 100)
(True, True, True)
>>> print(phi ** 2)
a + 1 ~ 2.6180339887 where a^2 - a - 1 = 0, a ~ 1.6180339887
>>> float(phi)
1.618033988749895
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import flint
import numpy as np

from dpfix.numbers.exact import ExactnessError, from_fmpq, to_fmpq, to_fraction

__all__ = ["NumberField", "Algebraic", "algebraic", "is_algebraic", "field_of", "to_exact",
           "exact_field_array", "parse_polynomial", "polynomial_str", "ExactKey"]

_MAX_BITS = 1 << 16  # bisections beyond this many bits mean a bug, not a hard number


# -- polynomials --------------------------------------------------------------------------
_TERM = re.compile(r"([+-]?)\s*(\d+(?:/\d+)?)?\s*\*?\s*(x(?:\s*(?:\^|\*\*)\s*(\d+))?)?")


def parse_polynomial(text: str, var: str = "x") -> flint.fmpq_poly:
    """A polynomial in ``var`` from text such as ``"x^2 - x - 1"``, ``"2*x**3 - 1/2"``.

    Parameters
    ----------
    text : str
        Terms ``c*x^k`` (``c`` an integer or ``p/q``, ``*`` optional, ``^`` or ``**``).
    var : str
        The variable's name (one letter).

    Returns
    -------
    flint.fmpq_poly

    Raises
    ------
    ValueError
        Text that is not such a polynomial.

    Examples
    --------
    >>> parse_polynomial("x^2 - x - 1")
    x^2 + (-1)*x + (-1)
    >>> parse_polynomial("3x - 9/2")
    3*x + (-9/2)
    """
    s = text.replace(" ", "")
    if len(var) != 1 or not var.isalpha():
        raise ValueError(f"var: one letter, got {var!r}")
    s = s.replace(var, "x")
    if not s or re.search(r"[^0-9x+\-*/^]", s):
        raise ValueError(f"polynomial: cannot read {text!r} as a polynomial in {var}")
    coeffs: dict[int, Fraction] = {}
    pos = 0
    while pos < len(s):
        m = _TERM.match(s, pos)
        if m is None or m.end() == pos or (pos > 0 and not m.group(1)) or not (
                m.group(2) or m.group(3)):
            raise ValueError(f"polynomial: cannot read {text!r} as a polynomial in {var}")
        sign = -1 if m.group(1) == "-" else 1
        c = Fraction(m.group(2)) if m.group(2) else Fraction(1)
        k = (int(m.group(4)) if m.group(4) else 1) if m.group(3) else 0
        coeffs[k] = coeffs.get(k, Fraction(0)) + sign * c
        pos = m.end()
    top = max(coeffs)
    return flint.fmpq_poly([flint.fmpq(coeffs.get(k, Fraction(0)).numerator,
                                       coeffs.get(k, Fraction(0)).denominator)
                            for k in range(top + 1)])


def _primitive_poly(minpoly: Any) -> flint.fmpz_poly:
    """The given polynomial as a primitive integer polynomial with a positive leading
    coefficient (the same roots)."""
    if isinstance(minpoly, str):
        q = parse_polynomial(minpoly)
    elif isinstance(minpoly, (flint.fmpz_poly, flint.fmpq_poly)):
        q = flint.fmpq_poly(minpoly)
    elif hasattr(minpoly, "all_coeffs") and hasattr(minpoly, "gens"):  # a sympy Poly
        q = flint.fmpq_poly([to_fmpq(c, "coefficient") for c in reversed(minpoly.all_coeffs())])
    elif isinstance(minpoly, Sequence):
        q = flint.fmpq_poly([to_fmpq(c, "minpoly") for c in minpoly])
    else:
        raise TypeError(f"minpoly: a string in x, coefficients or a polynomial, "
                        f"got {type(minpoly).__name__}")
    if q.degree() < 1:
        raise ValueError(f"minpoly: must have degree >= 1, got {_poly_str(q, 'x')}")
    z = q.numer()
    content = flint.fmpz(0)
    for c in z.coeffs():
        content = content.gcd(c)
    z = flint.fmpz_poly([c // content for c in z.coeffs()])
    return -z if z.coeffs()[-1] < 0 else z


def _poly_str(p: Any, var: str) -> str:
    """A python-flint polynomial ``p`` as :func:`polynomial_str` writes it."""
    return polynomial_str([from_fmpq(c) for c in p.coeffs()], var)


def polynomial_str(coefficients: Sequence[Any], var: str = "x") -> str:
    """The polynomial ``sum_k coefficients[k] var^k`` in descending powers, as
    ``a^2 - a - 1`` or ``3/2*a + 1`` (``"0"`` for no non-zero coefficient).

    Examples
    --------
    >>> polynomial_str([-1, -1, 1], "a"), polynomial_str([1, Fraction(3, 2)], "lam")
    ('a^2 - a - 1', '3/2*lam + 1')
    >>> polynomial_str([0, 0, -2])
    '-2*x^2'
    """
    cs = list(coefficients)
    terms = []
    for k in range(len(cs) - 1, -1, -1):
        c = cs[k]
        if c == 0:
            continue
        mag = abs(c)
        mono = "" if k == 0 else (var if k == 1 else f"{var}^{k}")
        body = str(mag) if not mono else (mono if mag == 1 else f"{mag}*{mono}")
        terms.append(("-" if c < 0 else "+", body))
    if not terms:
        return "0"
    out = ("-" if terms[0][0] == "-" else "") + terms[0][1]
    return out + "".join(f" {s} {b}" for s, b in terms[1:])


def _arb_fraction(a: Any) -> Fraction:
    man, exp = a.mid().man_exp()
    return Fraction(int(man)) * (Fraction(2) ** int(exp))


def _sign_at(m: flint.fmpz_poly, x: Fraction) -> int:
    v = m(flint.fmpq(x.numerator, x.denominator))
    return (v > 0) - (v < 0)


# -- the field ----------------------------------------------------------------------------
class NumberField:
    """``Q(alpha)`` for a real root ``alpha`` of an irreducible integer polynomial.

    One object per field: :meth:`of` returns the same object for the same polynomial
    and root, so fields compare by identity. Build one through :func:`algebraic`.

    Attributes
    ----------
    minpoly : flint.fmpz_poly
        The minimal polynomial of ``alpha``: primitive, positive leading coefficient.
    degree : int
        ``[Q(alpha) : Q]``.
    index : int
        ``alpha`` is the ``index``-th real root of ``minpoly`` in increasing order (from 0).

    Examples
    --------
    >>> K = algebraic("x^2 - 2", 1.41).field
    >>> K.degree, K.index, K is algebraic([-2, 0, 1], (1, 2)).field
    (2, 1, True)
    """

    _fields: dict[tuple[tuple[int, ...], int], NumberField] = {}

    def __init__(self, minpoly: flint.fmpz_poly, index: int, lo: Fraction, hi: Fraction
                 ) -> None:
        self.minpoly, self.index, self.degree = minpoly, index, minpoly.degree()
        self._mq = flint.fmpq_poly(minpoly)
        self._lo, self._hi = lo, hi  # lo < alpha < hi, or lo == hi == alpha (degree 1)
        self._slo = _sign_at(minpoly, lo) if lo != hi else 0
        self._balls: dict[int, Any] = {}
        self.key = (tuple(int(c) for c in minpoly.coeffs()), index)
        self.gen = Algebraic(self, flint.fmpq_poly([0, 1]) % self._mq)

    @classmethod
    def of(cls, minpoly: flint.fmpz_poly, index: int, lo: Fraction, hi: Fraction
           ) -> NumberField:
        """The field of the ``index``-th real root (isolated in ``[lo, hi]``), made once."""
        key = (tuple(int(c) for c in minpoly.coeffs()), index)
        if key not in cls._fields:
            cls._fields[key] = cls(minpoly, index, lo, hi)
        return cls._fields[key]

    def __repr__(self) -> str:
        return f"Q(a) where {_poly_str(self.minpoly, 'a')} = 0, a ~ {self._decimal()}"

    def __reduce__(self) -> tuple[Any, ...]:  # pickled fields come back as the same object
        return (_field, (self.key[0], self.index, self._lo, self._hi))

    def _decimal(self, digits: int = 10) -> str:
        return f"{float(self.gen):.{digits}f}"

    def polynomial_str(self, var: str = "x") -> str:
        """The minimal polynomial as text (``"x^2 - x - 1"``)."""
        return _poly_str(self.minpoly, var)

    # -- the root --------------------------------------------------------------------------
    def interval(self, bits: int = 0) -> tuple[Fraction, Fraction]:
        """An isolating interval ``(lo, hi)`` of ``alpha`` of width at most ``2^-bits``
        (``lo == hi`` for degree 1), refined by exact bisection and kept.

        Examples
        --------
        >>> lo, hi = algebraic("x^2 - 2", 1.4).field.interval(20)
        >>> lo ** 2 < 2 < hi ** 2, hi - lo <= Fraction(1, 2**20)
        (True, True)
        """
        width = Fraction(1, 2 ** bits) if bits >= 0 else Fraction(2 ** -bits)
        while self._hi - self._lo > width:
            mid = (self._lo + self._hi) / 2
            s = _sign_at(self.minpoly, mid)
            if s == 0:  # a rational root: only of a degree-1 polynomial
                self._lo = self._hi = mid
            elif s == self._slo:
                self._lo = mid
            else:
                self._hi = mid
        return self._lo, self._hi

    def ball(self, bits: int) -> Any:
        """``alpha`` as an arb ball of radius at most ``2^-bits`` (exact interval inside)."""
        if bits not in self._balls:
            lo, hi = self.interval(bits)
            with flint.ctx.workprec(bits + 64):
                mid, rad = (lo + hi) / 2, (hi - lo) / 2
                self._balls[bits] = flint.arb(flint.fmpq(mid.numerator, mid.denominator),
                                              flint.fmpq(rad.numerator, rad.denominator))
        return self._balls[bits]

    def decimal_ball(self, digits: int = 40) -> tuple[str, str]:
        """``(mid, rad)`` as decimal text: the ball ``mid +/- rad`` holds ``alpha`` and no
        other real root of the minimal polynomial (checked exactly); the form Normaliz's
        number-field input takes.

        Examples
        --------
        >>> mid, rad = algebraic("x^2 - 2", 1.4).field.decimal_ball(20)
        >>> mid, rad
        ('1.41421356237309504880', '1e-15')
        """
        lo, hi = self.interval(4 * digits)
        scale = 10 ** digits
        k = round((lo + hi) / 2 * scale)
        mid = Fraction(k, scale)
        rad = Fraction(1, 10 ** (digits - 5))
        a, b = mid - rad, mid + rad
        if not (a <= lo and hi <= b):
            raise ArithmeticError(f"decimal_ball: the ball misses the root of {self!r}")
        roots = _real_roots(self.minpoly)
        if _choose_interval(self.minpoly, roots, a, b, self.polynomial_str()) != self.index:
            raise ArithmeticError(f"decimal_ball: the ball holds another root of {self!r}")
        sign = "-" if k < 0 else ""
        whole, frac = divmod(abs(k), scale)
        return f"{sign}{whole}.{frac:0{digits}d}", f"1e-{digits - 5}"

    # -- elements --------------------------------------------------------------------------
    def __call__(self, x: Any) -> Algebraic:
        """``x`` (an int, Fraction, rational string or element of this field) as an element.

        Examples
        --------
        >>> K = algebraic("x^2 - 2", 1.4).field
        >>> K("3/2") + K.gen
        Algebraic('a + 3/2', 'a^2 - 2', ~2.9142135624)
        """
        return Algebraic(self, self._poly(x))

    def _poly(self, x: Any) -> flint.fmpq_poly:
        if isinstance(x, Algebraic):
            if x.field is not self:
                raise TypeError(f"elements of two number fields do not mix: {x.field!r} "
                                f"and {self!r}")
            return x.poly
        f = to_fraction(x, "value")
        return flint.fmpq_poly([flint.fmpq(f.numerator, f.denominator)])

    def from_coefficients(self, coefficients: Sequence[Any]) -> Algebraic:
        """``sum_k c_k alpha^k`` from rational ``c_0, c_1, ...`` (ascending powers).

        Examples
        --------
        >>> phi = algebraic("x^2 - x - 1", 1.6)
        >>> phi.field.from_coefficients([1, 1]) == phi ** 2
        True
        """
        p = flint.fmpq_poly([to_fmpq(c, "coefficient") for c in coefficients])
        return Algebraic(self, p % self._mq)

    def sign(self, p: flint.fmpq_poly) -> int:
        """The exact sign of ``p(alpha)``: 0 iff ``p`` is 0 modulo the minimal polynomial."""
        if p.is_zero():
            return 0
        if p.degree() == 0:
            c = p.coeffs()[0]
            return 1 if c > 0 else -1
        if self._lo == self._hi:
            v = p(flint.fmpq(self._lo.numerator, self._lo.denominator))
            return (v > 0) - (v < 0)
        coeffs = p.coeffs()
        bits = 64
        while bits <= _MAX_BITS:
            with flint.ctx.workprec(bits + 64):
                value = flint.arb_poly(coeffs)(self.ball(bits))
                if value > 0:
                    return 1
                if value < 0:
                    return -1
            bits *= 2
        raise ArithmeticError(f"sign of {_poly_str(p, 'a')} at {self!r} not decided")


# -- elements -----------------------------------------------------------------------------
class Algebraic:
    """An exact element of a real number field ``Q(alpha)``.

    Held as the rational polynomial ``poly`` in ``alpha`` of degree below the field's
    degree. Arithmetic with ints and Fractions is exact; with floats it is refused.

    Examples
    --------
    >>> r2 = algebraic("x^2 - 2", 1.4)
    >>> (r2 + 1) * (r2 - 1) == 1, r2 ** -2, (r2 - 1).sign(), -r2 < -1
    (True, Algebraic('1/2', 'a^2 - 2', ~0.5000000000), 1, True)
    """

    __slots__ = ("field", "poly")
    #: How :mod:`dpfix.numbers.exact` knows an exact algebraic number without importing this.
    exact_algebraic = True

    def __init__(self, field: NumberField, poly: flint.fmpq_poly) -> None:
        self.field, self.poly = field, poly

    # -- coercion ---------------------------------------------------------------------------
    def _other(self, x: Any) -> flint.fmpq_poly | None:
        if isinstance(x, Algebraic):
            if x.field is not self.field:
                raise TypeError(f"elements of two number fields do not mix: {self.field!r} "
                                f"and {x.field!r}")
            return x.poly
        if isinstance(x, bool):
            return None
        if isinstance(x, (int, np.integer, Fraction)):
            f = Fraction(x) if not isinstance(x, Fraction) else x
            return flint.fmpq_poly([flint.fmpq(f.numerator, f.denominator)])
        if isinstance(x, (flint.fmpq, flint.fmpz)):  # python-flint's exact rationals
            return flint.fmpq_poly([x])
        if isinstance(x, (float, np.floating)):
            raise ExactnessError(f"float {x!r} mixed with the exact algebraic number "
                                 f"{self}; pass an int or a Fraction")
        return None

    def _new(self, p: flint.fmpq_poly) -> Algebraic:
        return Algebraic(self.field, p)

    # -- arithmetic ---------------------------------------------------------------------
    def __add__(self, x: Any) -> Any:
        o = self._other(x)
        return NotImplemented if o is None else self._new(self.poly + o)

    __radd__ = __add__

    def __sub__(self, x: Any) -> Any:
        o = self._other(x)
        return NotImplemented if o is None else self._new(self.poly - o)

    def __rsub__(self, x: Any) -> Any:
        o = self._other(x)
        return NotImplemented if o is None else self._new(o - self.poly)

    def __mul__(self, x: Any) -> Any:
        o = self._other(x)
        if o is None:
            return NotImplemented
        p = self.poly * o
        return self._new(p % self.field._mq if p.degree() >= self.field.degree else p)

    __rmul__ = __mul__

    def _inverse(self) -> flint.fmpq_poly:
        if self.poly.is_zero():
            raise ZeroDivisionError("division by zero in a number field")
        if self.poly.degree() == 0:
            return flint.fmpq_poly([1 / self.poly.coeffs()[0]])
        g, s, _ = self.poly.xgcd(self.field._mq)
        return s / g  # g is a non-zero constant: the minimal polynomial is irreducible

    def __truediv__(self, x: Any) -> Any:
        o = self._other(x)
        if o is None:
            return NotImplemented
        return self * self._new(o)._inv()

    def __rtruediv__(self, x: Any) -> Any:
        o = self._other(x)
        return NotImplemented if o is None else self._new(o) * self._inv()

    def _inv(self) -> Algebraic:
        return self._new(self._inverse())

    def __pow__(self, k: Any) -> Algebraic:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"powers of algebraic numbers: integer exponents only, got {k!r}")
        k = int(k)
        base = self._inv() if k < 0 else self
        k = abs(k)
        out = self._new(flint.fmpq_poly([1]))
        while k:
            if k & 1:
                out = out * base
            k >>= 1
            if k:
                base = base * base
        return out

    def __neg__(self) -> Algebraic:
        return self._new(-self.poly)

    def __pos__(self) -> Algebraic:
        return self

    def __abs__(self) -> Algebraic:
        return -self if self.sign() < 0 else self

    # -- comparisons ------------------------------------------------------------------------
    def sign(self) -> int:
        """-1, 0 or 1, exactly.

        Examples
        --------
        >>> phi = algebraic("x^2 - x - 1", 1.6)
        >>> (phi - Fraction(1618033988, 10**9)).sign(), (phi - Fraction(1618033989, 10**9)).sign()
        (1, -1)
        """
        return self.field.sign(self.poly)

    def __eq__(self, x: Any) -> bool:
        o = self._other(x)
        return NotImplemented if o is None else self.poly == o

    def __ne__(self, x: Any) -> bool:
        o = self._other(x)
        return NotImplemented if o is None else self.poly != o

    def _cmp(self, x: Any) -> int | None:
        o = self._other(x)
        return None if o is None else self.field.sign(self.poly - o)

    def __lt__(self, x: Any) -> bool:
        c = self._cmp(x)
        return NotImplemented if c is None else c < 0

    def __le__(self, x: Any) -> bool:
        c = self._cmp(x)
        return NotImplemented if c is None else c <= 0

    def __gt__(self, x: Any) -> bool:
        c = self._cmp(x)
        return NotImplemented if c is None else c > 0

    def __ge__(self, x: Any) -> bool:
        c = self._cmp(x)
        return NotImplemented if c is None else c >= 0

    def __bool__(self) -> bool:
        return not self.poly.is_zero()

    def __hash__(self) -> int:
        if self.poly.degree() <= 0:  # a rational: the hash of the Fraction it equals
            return hash(self.rational())
        return hash((self.field.key, tuple(from_fmpq(c) for c in self.poly.coeffs())))

    # -- conversions ----------------------------------------------------------------------
    def is_rational(self) -> bool:
        """Whether the element lies in Q."""
        return self.poly.degree() <= 0

    def rational(self) -> Fraction:
        """The element as a Fraction; ``ValueError`` unless it is rational."""
        if not self.is_rational():
            raise ValueError(f"{self} is not rational")
        return Fraction(0) if self.poly.is_zero() else from_fmpq(self.poly.coeffs()[0])

    def coefficients(self) -> list[Fraction]:
        """``c_0, c_1, ...`` (ascending powers of ``alpha``, length the field's degree)."""
        cs = [from_fmpq(c) for c in self.poly.coeffs()]
        return cs + [Fraction(0)] * (self.field.degree - len(cs))

    def enclosure(self, bits: int = 64) -> tuple[Fraction, Fraction]:
        """Rationals ``lo <= self <= hi`` with ``hi - lo`` at most about ``2^-bits``
        relative to ``max(1, |self|)`` (from arb interval evaluation)."""
        if self.is_rational():
            r = self.rational()
            return r, r
        b = bits
        while True:
            with flint.ctx.workprec(b + 64):
                v = flint.arb_poly(self.poly.coeffs())(self.field.ball(b))
                lo, hi = _arb_fraction(v.lower()), _arb_fraction(v.upper())
            if hi - lo <= max(Fraction(1), abs(lo), abs(hi)) / Fraction(2) ** bits:
                return lo, hi
            b *= 2
            if b > _MAX_BITS:
                raise ArithmeticError(f"no enclosure of {self} found")

    def __float__(self) -> float:
        lo, hi = self.enclosure(64)
        return float((lo + hi) / 2)

    def __str__(self) -> str:
        if self.is_rational():
            return str(self.rational())
        K = self.field
        if self.poly == flint.fmpq_poly([0, 1]):
            return f"root of {K.polynomial_str()} ~ {K._decimal()}"
        return (f"{_poly_str(self.poly, 'a')} ~ {float(self):.10f} where "
                f"{K.polynomial_str('a')} = 0, a ~ {K._decimal()}")

    def __repr__(self) -> str:
        return (f"Algebraic('{_poly_str(self.poly, 'a')}', '{self.field.polynomial_str('a')}', "
                f"~{float(self):.10f})")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.field, [from_fmpq(c) for c in self.poly.coeffs()]))


def _field(coefficients: tuple[int, ...], index: int, lo: Fraction, hi: Fraction
           ) -> NumberField:
    return NumberField.of(flint.fmpz_poly(list(coefficients)), index, lo, hi)


def _rebuild(field: NumberField, coefficients: list[Fraction]) -> Algebraic:
    return field.from_coefficients(coefficients)


# -- construction -------------------------------------------------------------------------
def _real_roots(m: flint.fmpz_poly) -> list[tuple[Fraction, Fraction]]:
    """Isolating intervals with rational ends of the real roots of the squarefree ``m``,
    in increasing order (``lo == hi`` for a rational root)."""
    if m.degree() == 1:
        c0, c1 = (int(c) for c in m.coeffs())
        return [(Fraction(-c0, c1),) * 2]
    out = []
    for root, _ in m.complex_roots():  # certified isolating balls (arb), real ones exact
        if not root.imag.is_zero():
            if root.imag.contains(0):  # neither certainly real nor certainly not
                raise ArithmeticError(f"root isolation of {_poly_str(m, 'x')} failed")
            continue
        lo, hi = _arb_fraction(root.real.lower()), _arb_fraction(root.real.upper())
        if _sign_at(m, lo) * _sign_at(m, hi) >= 0:
            raise ArithmeticError(f"root isolation of {_poly_str(m, 'x')} failed")
        out.append((lo, hi))
    return sorted(out)


def _bisect(m: flint.fmpz_poly, lo: Fraction, hi: Fraction) -> tuple[Fraction, Fraction]:
    """One exact halving of an isolating interval."""
    mid = (lo + hi) / 2
    s = _sign_at(m, mid)
    if s == 0:
        return mid, mid
    return (mid, hi) if s == _sign_at(m, lo) else (lo, mid)


def _choose_near(m: flint.fmpz_poly, roots: list[tuple[Fraction, Fraction]], near: Fraction,
                 text: str) -> int:
    """The root ``near`` isolates: nearer to it than a quarter of its distance to any
    other real root (every other root is then over three times as far from ``near``)."""
    roots = list(roots)
    while True:
        # distances from near to each root, as rational intervals
        dist = [(max(Fraction(0), lo - near, near - hi), max(abs(lo - near), abs(hi - near)))
                for lo, hi in roots]
        best = min(range(len(roots)), key=lambda i: dist[i][1])
        others = [i for i in range(len(roots)) if i != best]
        lo_b, hi_b = roots[best]
        gaps = [(max(roots[i][0] - hi_b, lo_b - roots[i][1]),
                 max(roots[i][1] - lo_b, hi_b - roots[i][0])) for i in others]
        if all(4 * dist[best][1] < g[0] for g in gaps):
            return best
        if any(4 * dist[best][0] >= g[1] for g in gaps):
            close = sorted(roots[i] for i in [best] + [i for i, g in zip(others, gaps,
                                                                          strict=True)
                                                    if 4 * dist[best][0] >= g[1]])
            shown = ", ".join(f"{float((lo + hi) / 2):.10g}" for lo, hi in close)
            raise ValueError(f"near: {float(near):.10g} does not isolate one real root of "
                             f"{text}: the roots {shown} are about as near (give an interval "
                             "(lo, hi) holding one root)")
        if max(hi - lo for lo, hi in roots) < Fraction(1, 2 ** 200):  # equidistant
            shown = ", ".join(f"{float((lo + hi) / 2):.10g}" for lo, hi in roots)
            raise ValueError(f"near: {float(near):.10g} does not isolate one real root of "
                             f"{text} (its real roots: {shown}); give an interval (lo, hi) "
                             "holding one root")
        roots = [_bisect(m, lo, hi) if lo != hi else (lo, hi) for lo, hi in roots]


def _choose_interval(m: flint.fmpz_poly, roots: list[tuple[Fraction, Fraction]],
                     lo: Fraction, hi: Fraction, text: str) -> int:
    """The one root in the closed interval ``[lo, hi]``."""
    if lo > hi:
        raise ValueError(f"near: the interval ({lo}, {hi}) is empty")
    inside: list[int] = []
    for i, (a, b) in enumerate(roots):
        for _ in range(_MAX_BITS):
            if lo <= a and b <= hi:
                inside.append(i)
                break
            if b < lo or a > hi:
                break
            a, b = _bisect(m, a, b)
    if len(inside) != 1:
        all_roots = ", ".join(f"{float((a + b) / 2):.10g}" for a, b in roots) or "none"
        raise ValueError(f"near: the interval [{lo}, {hi}] holds {len(inside)} real roots "
                         f"of {text}, not 1 (its real roots: {all_roots})")
    return inside[0]


def algebraic(minpoly: Any, near: Any) -> Algebraic:
    """An exact real algebraic number ``> 1``: the root of ``minpoly`` that ``near`` isolates.

    Parameters
    ----------
    minpoly : str, sequence of integers or Fractions, flint or sympy polynomial
        Its minimal polynomial: text in ``x`` (``"x^2 - x - 1"``) or the coefficients in
        ASCENDING powers (``[-1, -1, 1]`` is ``x^2 - x - 1``, python-flint's order); it
        must be irreducible over Q (degree 1 gives a rational, as an element of Q).
    near : float, int, Fraction or str; or a pair ``(lo, hi)``
        A number nearer to the root than a quarter of its distance to any other real
        root (a float is used only to locate the root), or a closed interval with exact ends
        holding exactly one real root.

    Returns
    -------
    Algebraic
        The generator ``alpha`` of its field ``Q(alpha)`` (``.field``).

    Raises
    ------
    ValueError
        ``minpoly`` not irreducible over Q, ``near`` not isolating one real root (the
        message lists the roots concerned), or the root ``<= 1``.

    Examples
    --------
    >>> algebraic("x^2 - x - 1", 1.618)
    Algebraic('a', 'a^2 - a - 1', ~1.6180339887)
    >>> algebraic([-1, -1, 0, 1], (Fraction(13, 10), Fraction(14, 10))) ** 3
    Algebraic('a + 1', 'a^3 - a - 1', ~2.3247179572)
    >>> algebraic("x^2 - 4", 2)
    Traceback (most recent call last):
    ...
    ValueError: minpoly: x^2 - 4 is not irreducible over Q: (x - 2)*(x + 2)
    """
    m = _primitive_poly(minpoly)
    text = _poly_str(m, "x")
    _, factors = m.factor()
    if len(factors) != 1 or factors[0][1] != 1:
        shown = "*".join(f"({_poly_str(f, 'x')})" + (f"^{e}" if e > 1 else "")
                         for f, e in factors)
        raise ValueError(f"minpoly: {text} is not irreducible over Q: {shown}")
    roots = _real_roots(m)
    if not roots:
        raise ValueError(f"minpoly: {text} has no real root")
    if isinstance(near, tuple):
        if len(near) != 2:
            raise ValueError(f"near: an interval is a pair (lo, hi), got {near!r}")
        lo, hi = (to_fraction(v, "near") for v in near)
        index = _choose_interval(m, roots, lo, hi, text)
    else:
        if isinstance(near, bool):
            raise TypeError("near: a number or an interval (lo, hi), got a bool")
        if isinstance(near, (float, np.floating)):
            if not np.isfinite(near):
                raise ValueError(f"near: must be finite, got {near!r}")
            point = Fraction(float(near))
        else:
            point = to_fraction(near, "near")
        index = _choose_near(m, roots, point, text)
    lo, hi = roots[index]
    K = NumberField.of(m, index, lo, hi)
    if K.gen <= 1:
        raise ValueError(f"algebraic: the root {float(K.gen):.10g} of {text} is <= 1; "
                         "lam = e^eps must be > 1")
    return K.gen


# -- helpers for the exact path --------------------------------------------------------
def is_algebraic(x: Any) -> bool:
    """Whether ``x`` is an :class:`Algebraic` (an element of a real number field).

    Examples
    --------
    >>> is_algebraic(algebraic("x^2 - 2", 1.4)), is_algebraic(Fraction(1, 2))
    (True, False)
    """
    return isinstance(x, Algebraic)


def field_of(*xs: Any) -> NumberField | None:
    """The one number field of the :class:`Algebraic` s among ``xs`` (arrays are looked
    into), or None when there are none; ``TypeError`` for two fields.

    Examples
    --------
    >>> r2 = algebraic("x^2 - 2", 1.4)
    >>> field_of([1, r2], 3) is r2.field, field_of(1, Fraction(1, 2))
    (True, None)
    """
    found: NumberField | None = None
    for x in xs:
        items = np.asarray(x, dtype=object).flat if not isinstance(x, Algebraic) else [x]
        for v in items:
            if isinstance(v, Algebraic):
                if found is not None and v.field is not found:
                    raise TypeError(f"elements of two number fields do not mix: {found!r} "
                                    f"and {v.field!r}")
                found = v.field
    return found


def to_exact(x: Any, name: str = "value") -> Fraction | Algebraic:
    """An :class:`Algebraic` as it is, anything else through
    :func:`~dpfix.numbers.exact.to_fraction` (floats refused).

    Examples
    --------
    >>> to_exact("1/2"), to_exact(algebraic("x^2 - 2", 1.4)) ** 2 == 2
    (Fraction(1, 2), True)
    """
    return x if isinstance(x, Algebraic) else to_fraction(x, name)


def exact_field_array(x: Any, name: str = "array", field: NumberField | None = None,
                      ndim: int | None = None) -> np.ndarray:
    """An object array of Fractions and :class:`Algebraic` s of one field (``field`` when
    given), of ``ndim`` dimensions when given; floats refused with
    :class:`~dpfix.numbers.exact.ExactnessError`.

    Examples
    --------
    >>> r2 = algebraic("x^2 - 2", 1.4)
    >>> exact_field_array([1, r2 / 2]).tolist()
    [Fraction(1, 1), Algebraic('1/2*a', 'a^2 - 2', ~0.7071067812)]
    """
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        raise ExactnessError(f"{name}: float array given where exact numbers are required; "
                             "pass ints, Fractions, strings such as '1/2' or algebraic numbers")
    if isinstance(x, str):
        raise TypeError(f"{name}: expected an array of numbers, got the string {x!r}")
    arr = np.array(x, dtype=object)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name}: expected {ndim} dimension(s), got shape {arr.shape}")
    found = field_of(arr)
    if field is not None and found is not None and found is not field:
        raise TypeError(f"{name}: elements of {found!r} given where {field!r} is required")
    out = np.empty(arr.shape, dtype=object)
    for idx, v in np.ndenumerate(arr):
        out[idx] = to_exact(v, name)
    return out


class ExactKey:
    """A sort key ordering exact numbers (Fractions, :class:`Algebraic` s) by exact value:
    floats decide when they are far apart (each within ``2^-52`` relative of the value),
    an exact comparison otherwise.

    Examples
    --------
    >>> r2 = algebraic("x^2 - 2", 1.4)
    >>> sorted([r2, Fraction(3, 2), 1, r2 - Fraction(1, 10**30)], key=ExactKey)[1:3]
    [Algebraic('a - 1/1000000000000000000000000000000', 'a^2 - 2', ~1.4142135624), \
Algebraic('a', 'a^2 - 2', ~1.4142135624)]
    """

    __slots__ = ("value", "approx")

    def __init__(self, value: Any) -> None:
        self.value, self.approx = value, float(value)

    def __lt__(self, other: ExactKey) -> bool:
        a, b = self.approx, other.approx
        if abs(a - b) > 1e-9 * max(1.0, abs(a), abs(b)):
            return a < b
        return bool(self.value < other.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExactKey) and bool(self.value == other.value)

    __hash__ = None  # type: ignore[assignment]
