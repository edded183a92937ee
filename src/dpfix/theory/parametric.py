"""The combinatorial type of U, F and R_F as lam varies: chambers and breakpoints.

``chambers(kind, n, z)`` splits ``lam in (1, inf)`` into open *chambers*, on each of
which the polytope has one combinatorial type, and *breakpoints* (walls) between
them, where the type is a different one (docs/every_lam.md).

Type
----
Two values of lam have the same *type* when the polytopes have the same labelled
vertex-facet incidence: the same family of sets of tight inequality rows, one set
per vertex (the rows are those of :mod:`dpfix.theory.polytopes`, listed in the same
order for every lam). The face lattice, the f-vector and the vertex count are
functions of it. For U a vertex is determined, up to placing its columns, by the set
of face patterns of the cone ``C`` of lam-bounded vectors holding its columns
(:func:`dpfix.theory.enumeration.u_vertex_count`); the family of these sets is U's
labelled type.

Method
------
The vertices are basic solutions: the tight rows of a vertex have full rank and
their solution, over the field ``Q(lam)``, is a vector of rational functions. At a
rational sample point ``s`` every vertex ``v`` (for U: every vertex set ``S``) gives
polynomials in ``Z[lam]``, computed exactly with python-flint's ``fmpz_poly``:

- ``D``, the determinant of rows tight at ``v``, chosen independent at a sample
  point where ``v``'s tight set is met (for U: a maximal minor of the block vectors
  of ``S``, whose entries are powers of lam: Theorem 2's scale columns);
- the numerators ``b_r D - a_r N`` of every other row's slack (for U: the
  coefficients of the block vectors, the row sums outside the minor, and the two
  slacks of every free pair), where ``v = N / D`` solves the chosen rows.

The polynomials are kept per tight set (for U: per vertex set) and reused at every
later sample point where the set is met again: the proof below asks of the chosen
rows only that they are tight at ``v`` and independent at ``s``, and ``D(s) != 0``
(else ``s`` is a root) says they are. Near a wall only a few vertices change, so a
sample point costs an enumeration and a lookup for all the others.

Those that are not identically zero are factored over Z; their real roots in
``(1, inf)`` are isolated exactly (sympy's real root isolation on each irreducible
factor). Let ``J(s)`` be the largest open interval around ``s`` holding no such root.

**Theorem.** On ``J(s)`` the vertices of ``P(lam)`` are the ``v(lam)`` of the vertices
``v`` of ``P(s)``, with the same tight rows: the type is constant on ``J(s)``.

*Proof.* On ``J(s)``, ``D`` has no root, so ``v(lam) = N / D`` is defined; rows
tight at ``s`` are tight identically (their slack numerator is the zero
polynomial, else ``s`` would be one of its roots); the other slacks keep their
sign, positive. So each ``v(lam)`` is a vertex of ``P(lam)`` with the tight set of
``v``. No other vertex appears: ``P(lam)`` varies continuously (Hausdorff) in lam.
First leave out, for F as for R_F, the columns with ``z_j = 0``: they vanish for
every lam (for F, ``(z T)_j = 0`` and ``T >= 0`` give ``T_ij = 0`` wherever
``z_i > 0``, and the ratio rows carry the zero along the column; for R_F,
``z Psi B_j = 0`` with ``Psi > 0`` gives ``B_j = 0``), so their rows are tight at every
point of ``P(lam)`` and no point, ``1 z^T`` included, satisfies them strictly. On the
other columns, for every lam: ``P(lam)`` lies in one bounded set while lam stays in a
compact interval (entries in ``[0, 1]``; for R_F, ``Psi B 1 = 1`` with ``Psi``'s entries
bounded below); its equations, a redundant one dropped, have full row rank (for R_F
too, as ``B -> Psi B`` is onto: ``Psi`` has rank ``n``); and a point satisfies every
inequality strictly: for U the matrix with every entry ``1/n``, for F the columns
``z_j 1`` of ``1 z^T`` with ``z_j > 0``, for R_F the columns ``B_j = z_j w`` with
``z_j > 0``, where ``w > 0`` and ``Psi w = 1`` (``1`` lies inside the cone of
lam-bounded vectors, which the scales generate: Lemma 1). Under this regularity
condition the solution set of a linear system whose coefficients are continuous in lam
is lower semicontinuous in lam (S. M. Robinson, "Stability theory for systems of
inequalities. Part I: Linear systems", SIAM J. Numer. Anal. 12 (1975), 754-769); it is
upper semicontinuous, its graph being closed and the sets bounded; so it is continuous
in the Hausdorff distance. The set of lam in ``J(s)`` with ``P(lam) = conv{v(lam)}``
holds ``s`` and is closed by continuity. It is open: if vertices ``w_k`` of
``P(lam_k)`` lie outside the ``v(lam_k)`` with ``lam_k -> lam*``, one basis ``B`` gives
infinitely many of them; a limit point ``x*`` lies in ``P(lam*) = conv{v(lam*)}``, in the
relative interior of a face ``G``; the rows of ``B`` are tight on ``G``, hence
identically tight at the vertices ``v`` of ``G``; as ``B`` has full rank at
``lam_k``, those ``v(lam_k)`` are the one solution of ``B``, so ``G`` is one vertex
and ``w_k = v(lam_k)``: a contradiction. ``J(s)`` is connected. QED.

On a neighbour graph ``G`` (``graph=``; docs/graphs.md section 13) the rows are those of
``U(n, lam, graph=G)`` and ``F(n, lam, z, graph=G)``, each ratio ``lam^w`` of an edge of
integer weight ``w`` the polynomial ``x^w``, and the proof holds as it stands: for a
connected ``G`` the matrix with every entry ``1/n`` (every ratio 1, below ``lam^w``) and
``1 z^T`` on the columns with ``z_j > 0`` satisfy every inequality strictly, and a zero of
a column with ``z_j = 0`` is carried along the edges to every node.

The walk. From ``lam = 1`` to the right: at the frontier ``f`` (1 or a root), a
sample ``s`` is taken in ``(f, r)`` (the simplest rational there); if ``J(s)`` does
not reach down to ``f`` (or ``s`` is a root of its own polynomials), ``r`` is moved
to the left end of ``J(s)`` (to ``s``) and another sample taken. There are
finitely many bases, hence finitely many polynomials, so this ends; the ``J(s)``
found cover ``(1, inf)`` except for roots ``f`` at which two consecutive ``J(s)``
only touch. At such an ``f`` the type is computed from the limits of the
vertices of ``P(s)`` at ``f``: every vertex of ``P(f)`` is the limit of vertices
of ``P(lam)`` as ``lam -> f`` (a vertex of ``P(f)`` is exposed by a linear function
whose maxima over ``P(lam)`` converge to it), so the vertices of ``P(f)`` are the
limits that are vertices (their tight rows, evaluated exactly in ``Q(f)``, have
full rank; for U: their columns' face spans are independent). Only vertices
with a polynomial vanishing at ``f`` move; the others keep their tight sets.
Finally neighbouring pieces of one type are merged: a root whose type equals
both sides' is dropped.

So the decomposition is proved, given the exactness of the arithmetic (python-flint
and sympy's isolation); :meth:`Chambers.confirm` checks every count again by the
existing enumeration (Normaliz, cdd) at a rational point of each chamber, and at the
breakpoints over ``Q(lam)``.

Numbers. A breakpoint is a real algebraic number: :func:`breakpoint_number` makes it
from an irreducible integer polynomial and an isolating interval (rational
breakpoints are Fractions). Vertices of a chamber are matrices of sympy rational
functions in ``lam`` (:meth:`Piece.vertices`).

One room, though long: its parts are the steps of the one proof above (the exact
numbers of the breakpoints, the polynomials of one sample point's vertices, the walk,
the result), each step using the invariants the one before it set; none serves
anything outside the chambers.

Examples
--------
>>> ch = chambers("U", 3)
>>> len(ch), ch[0].count, ch[0].hi
(1, 27, inf)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from flint import fmpq, fmpq_mat, fmpq_poly, fmpz_poly

from dpfix.numbers.algebraic import polynomial_str
from dpfix.numbers.exact import ExactnessError, probability_vector, to_fraction
from dpfix.numbers.numeric import check_n
from dpfix.theory.polytopes import check_kind

__all__ = ["KINDS", "LIMITS", "AROUND_LIMITS", "GRAPH_LIMITS", "Piece", "Chambers", "chambers",
           "interval_around", "breakpoint_number", "AlgebraicPoint"]

#: :meth:`Piece.f_vector` runs Normaliz's FVector up to this many vertices (U(4), 664
#: vertices: 1.6 s; F(4, uniform z), 1,806: 0.7 s; R_F(3): 0.04 s).
F_VECTOR_MAX_VERTICES = 5000

#: The kinds and their largest n for :func:`chambers`. U(6) is beyond it: a sample point
#: costs about two minutes on two cores (54,360 vertex sets at lam = 6/5), and the
#: interval of one type around 6/5 is 0.027 wide, so the walk would take many of them.
LIMITS: dict[str, int] = {"U": 5, "F": 4, "RF": 3}
KINDS: tuple[str, ...] = tuple(LIMITS)
#: The largest n for :func:`interval_around` (one sample point: U(6) in about two minutes).
AROUND_LIMITS: dict[str, int] = {"U": 6, "F": 4, "RF": 3}
#: The kinds and their largest n for :func:`chambers` with ``graph=``: U_G and F_G through
#: their vertices at each sample point (U_G at n = 5 has up to two million).
GRAPH_LIMITS: dict[str, int] = {"U": 4, "F": 4}

_X = fmpz_poly([0, 1])
INF = math.inf
Number = Any  # Fraction, AlgebraicPoint or math.inf


# -- real algebraic numbers ---------------------------------------------------------------
def _sign(p: fmpz_poly, x: Fraction) -> int:
    v = p(fmpq(x.numerator, x.denominator))
    return (v > 0) - (v < 0)


class AlgebraicPoint:
    """The real root of an irreducible integer polynomial in an isolating interval.

    Parameters
    ----------
    poly : the minimal polynomial (degree >= 2, primitive, positive leading
        coefficient), an ``fmpz_poly``.
    lo, hi : rationals with exactly one root of ``poly`` in ``(lo, hi)``.

    Examples
    --------
    >>> phi = AlgebraicPoint(fmpz_poly([-1, -1, 1]), 1, 2)
    >>> round(float(phi), 6), phi.minimal_polynomial
    (1.618034, [-1, -1, 1])
    """

    __slots__ = ("poly", "lo", "hi", "public")

    def __init__(self, poly: fmpz_poly, lo: Fraction, hi: Fraction) -> None:
        self.poly, self.lo, self.hi = poly, Fraction(lo), Fraction(hi)
        #: the same number as a :class:`dpfix.numbers.algebraic.Algebraic` (made once)
        self.public: Any = None

    @property
    def minimal_polynomial(self) -> list[int]:
        """Integer coefficients, constant term first."""
        return [int(c) for c in self.poly.coeffs()]

    def refine(self) -> None:
        """Halve the isolating interval."""
        mid = (self.lo + self.hi) / 2
        if _sign(self.poly, mid) == _sign(self.poly, self.lo):
            self.lo = mid
        else:
            self.hi = mid

    def separate(self, x: Fraction) -> int:
        """-1, 1: the root is below, above the rational ``x`` (never equal)."""
        if not self.lo < x < self.hi:
            return -1 if self.hi <= x else 1
        if _sign(self.poly, x) == _sign(self.poly, self.lo):
            self.lo = x
            return 1
        self.hi = x
        return -1

    def vanishes(self, p: fmpz_poly) -> bool:
        """Whether ``p`` is zero at this root (``poly`` divides it)."""
        return p != 0 and p % self.poly == 0

    def __float__(self) -> float:
        while self.hi - self.lo > Fraction(1, 10**17) * max(1, abs(self.hi)):
            self.refine()
        return float((self.lo + self.hi) / 2)

    def __repr__(self) -> str:
        return f"AlgebraicPoint({self.poly}, {float(self):.12g})"

    def __str__(self) -> str:
        return f"root of {self.poly} near {float(self):.10g}"


def breakpoint_number(coefficients: Sequence[int], lo: Any, hi: Any) -> Number:
    """The breakpoint with minimal polynomial ``coefficients`` (constant term first)
    in the isolating interval ``(lo, hi)``: a Fraction for degree 1, else a
    :class:`dpfix.numbers.algebraic.Algebraic` (exact arithmetic in ``Q(lam)``).

    Examples
    --------
    >>> breakpoint_number([-3, 2], 1, 2)
    Fraction(3, 2)
    >>> breakpoint_number([-1, -1, 1], 1, 2)
    Algebraic('a', 'a^2 - a - 1', ~1.6180339887)
    """
    from dpfix.numbers.algebraic import algebraic

    p = fmpz_poly([int(c) for c in coefficients])
    if p.degree() == 1:
        c = p.coeffs()
        return Fraction(-int(c[0]), int(c[1]))
    return algebraic([int(c) for c in coefficients], (Fraction(lo), Fraction(hi)))


def _public(x: Number) -> Number:
    """What a :class:`Piece` shows: Fractions and inf as they are, a root as an Algebraic."""
    if not isinstance(x, AlgebraicPoint):
        return x
    if x.public is None:
        x.public = breakpoint_number(x.minimal_polynomial, x.lo, x.hi)
    return x.public


def _cmp(a: Number, b: Number) -> int:
    """-1, 0, 1 as ``a < b``, ``a == b``, ``a > b`` (exact; refines intervals)."""
    if a is INF or b is INF:
        return 0 if a is b else (1 if a is INF else -1)
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return (a > b) - (a < b)
    if isinstance(a, Fraction):
        return -_cmp(b, a)
    if isinstance(b, Fraction):
        return a.separate(b)
    if a is b:
        return 0
    if a.poly == b.poly:
        lo, hi = max(a.lo, b.lo), min(a.hi, b.hi)
        if lo < hi and _sign(a.poly, lo) != _sign(a.poly, hi):
            return 0  # one root of poly in the common part: it is both a and b
    while not (a.hi <= b.lo or b.hi <= a.lo):
        a.refine()
        b.refine()
    return -1 if a.hi <= b.lo else 1


def _vanishes_at(p: fmpz_poly, r: Number) -> bool:
    if isinstance(r, Fraction):
        return p != 0 and _sign(p, r) == 0
    return r.vanishes(p)


def _upper(a: Number) -> Fraction:
    return a if isinstance(a, Fraction) else a.hi


def _simplest(lo: Fraction, hi: Fraction) -> Fraction:
    """The rational with the least denominator (then numerator) in the open ``(lo, hi)``."""
    fl = math.floor(lo)
    if fl + 1 < hi:
        return Fraction(fl + 1)
    if lo == fl:
        return fl + 1 / Fraction(math.floor(1 / (hi - fl)) + 1)
    return fl + 1 / _simplest(1 / (hi - fl), 1 / (lo - fl))


def _pick(lo: Number, hi: Number | None) -> Fraction:
    """A simple rational strictly between ``lo`` and ``hi`` (None: above ``lo``)."""
    if hi is None or hi is INF:
        return Fraction(math.floor(_upper(lo)) + 1)
    while True:  # refine until a rational upper bound of lo is below one lower bound of hi
        a = lo if isinstance(lo, Fraction) else lo.hi
        b = hi if isinstance(hi, Fraction) else hi.lo
        if a < b:
            return _simplest(a, b)
        for x in (lo, hi):
            if isinstance(x, AlgebraicPoint):
                x.refine()


# -- polynomials and their roots ----------------------------------------------------------
class _Roots:
    """Irreducible factors seen so far, numbered, with their roots in ``(1, inf)``."""

    def __init__(self) -> None:
        self.factors: list[fmpz_poly] = []
        self.roots: list[list[Number]] = []
        self._ids: dict[tuple[int, ...], int] = {}
        self._split: dict[tuple[int, ...], frozenset[int]] = {}

    def ids(self, p: fmpz_poly) -> frozenset[int]:
        """The numbers of ``p``'s irreducible factors having a root in ``(1, inf)``."""
        key = tuple(int(c) for c in p.coeffs())
        got = self._split.get(key)
        if got is None:
            out = set()
            for f, _ in p.factor()[1]:
                if f.degree() < 1:
                    continue
                if f.coeffs()[-1] < 0:
                    f = -f
                fk = tuple(int(c) for c in f.coeffs())
                i = self._ids.get(fk)
                if i is None:
                    i = self._ids[fk] = len(self.factors)
                    self.factors.append(f)
                    self.roots.append(_roots_above_one(f))
                if self.roots[i]:
                    out.add(i)
            got = self._split[key] = frozenset(out)
        return got


def _roots_above_one(f: fmpz_poly) -> list[Number]:
    """The real roots of the irreducible ``f`` in ``(1, inf)``, increasing, exact."""
    shifted = f(fmpz_poly([1, 1]))  # roots of f above 1 are positive roots of f(x + 1)
    signs = [int(c) for c in shifted.coeffs() if c != 0]
    if not any(a * b < 0 for a, b in zip(signs, signs[1:], strict=False)):
        return []  # Descartes: no positive root
    c = [int(v) for v in f.coeffs()]
    if f.degree() == 1:
        r = Fraction(-c[0], c[1])
        return [r] if r > 1 else []
    import sympy

    x = sympy.Symbol("x")
    out: list[Number] = []
    for (a, b), _ in sympy.Poly(list(reversed(c)), x).intervals(inf=1):
        lo, hi = Fraction(int(a.p), int(a.q)), Fraction(int(b.p), int(b.q))
        if hi > 1:
            out.append(AlgebraicPoint(f, max(lo, Fraction(1)), hi))
    return out


# -- fraction-free linear algebra over Z[lam] ---------------------------------------------
def _solve(A: list[list[fmpz_poly]], b: list[fmpz_poly]) -> tuple[fmpz_poly, list[fmpz_poly]]:
    """``(D, N)`` with ``A (N / D) = b``, ``D = +-det A`` (``A`` square, non-singular over
    Q(lam)): fraction-free Gauss-Jordan elimination, every division exact (each entry
    is a minor of ``[A | b]``).

    Examples
    --------
    >>> lam = fmpz_poly([0, 1])
    >>> D, N = _solve([[lam, fmpz_poly(1)], [fmpz_poly(1), lam]], [fmpz_poly(1)] * 2)
    >>> [str(v) for v in N], str(D)  # x = y = 1 / (lam + 1)
    (['x + (-1)', 'x + (-1)'], 'x^2 + (-1)')
    """
    d = len(A)
    M = [list(row) + [rhs] for row, rhs in zip(A, b, strict=True)]
    prev = fmpz_poly(1)
    for k in range(d):
        piv = next((i for i in range(k, d) if M[i][k] != 0), None)
        if piv is None:
            raise ArithmeticError("_solve: singular over Q(lam)")
        M[k], M[piv] = M[piv], M[k]
        p, row_k = M[k][k], M[k]
        for i in range(d):
            if i == k:
                continue
            row_i, f = M[i], M[i][k]
            for j in range(k + 1, d + 1):
                row_i[j] = (p * row_i[j] - f * row_k[j]) // prev
            row_i[k] = fmpz_poly(0)
            if i < k:
                row_i[i] = p
        prev = p
    return prev, [M[i][d] for i in range(d)]


def _at(p: fmpz_poly, s: Fraction) -> Fraction:
    v = p(fmpq(s.numerator, s.denominator))
    return Fraction(int(v.p), int(v.q))


def _independent_rows(rows: list[list[fmpz_poly]], s: Fraction, want: int) -> list[int]:
    """Indices of ``want`` rows independent at ``lam = s``: the first ``want`` rows each
    independent of the rows before it, i.e. the pivot columns of the reduced row echelon
    form of the transposed matrix at ``s`` (flint's exact ``fmpq_mat.rref``).

    Examples
    --------
    >>> one, lam = fmpz_poly(1), fmpz_poly([0, 1])
    >>> _independent_rows([[one, lam], [lam, lam * lam], [one, one]], Fraction(2), 2)
    [0, 2]
    """
    q = fmpq(s.numerator, s.denominator)
    values = fmpq_mat([[p(q) if p != 0 else 0 for p in row] for row in rows])
    reduced, rank = values.transpose().rref()
    if rank < want:
        raise ArithmeticError("the tight rows do not have full rank at the sample point")
    chosen, col = [], 0
    for i in range(want):
        while reduced[i, col] == 0:
            col += 1
        chosen.append(col)
        col += 1
    return chosen


# -- arithmetic in Q(r) -------------------------------------------------------------------
class _Field:
    """``Q(r) = Q[x] / (m)`` for a breakpoint ``r`` with minimal polynomial ``m``."""

    def __init__(self, r: Number) -> None:
        if isinstance(r, Fraction):
            m = fmpz_poly([-r.numerator, r.denominator])
        else:
            m = r.poly
        self.m = fmpq_poly(m)
        self.m_int = m

    def of(self, p: fmpz_poly) -> fmpq_poly:
        return fmpq_poly(p) % self.m

    def inv(self, a: fmpq_poly) -> fmpq_poly:
        g, s, _ = a.xgcd(self.m)
        return (s / g.coeffs()[0]) % self.m

    def mul(self, a: fmpq_poly, b: fmpq_poly) -> fmpq_poly:
        return (a * b) % self.m

    def limit(self, num: fmpz_poly, den: fmpz_poly) -> fmpq_poly:
        """The value at ``r`` of the rational function ``num / den``, bounded near ``r``."""
        while den % self.m_int == 0:
            if num % self.m_int != 0:
                raise ArithmeticError("a vertex coordinate has a pole at a breakpoint")
            num, den = num // self.m_int, den // self.m_int
        return self.mul(self.of(num), self.inv(self.of(den)))

    def rank(self, rows: list[list[fmpq_poly]]) -> int:
        """The rank over Q(r) (Gaussian elimination)."""
        basis: list[tuple[int, list[fmpq_poly]]] = []
        for row in rows:
            v = list(row)
            for piv, r in basis:
                if v[piv] != 0:
                    f = v[piv]
                    v = [a - self.mul(f, c) if c != 0 else a for a, c in zip(v, r, strict=True)]
            piv = next((j for j, a in enumerate(v) if a != 0), None)
            if piv is not None:
                inv = self.inv(v[piv])
                basis.append((piv, [self.mul(inv, a) if a != 0 else a for a in v]))
        return len(basis)


# -- the engines: one sample point's vertices and their polynomials ----------------------
@dataclass
class _Item:
    """One vertex (for U: one vertex set, all placements of its columns)."""

    key: Any  # the tight rows (a frozenset); for U the sorted pattern indices
    factors: frozenset[int]
    weight: int = 1
    data: Any = None  # what the engine needs to take the item's limit at a breakpoint


@dataclass
class _Sample:
    lam: Fraction
    items: list[_Item]
    keys: frozenset = field(init=False)
    count: int = field(init=False)
    factors: frozenset[int] = field(init=False)

    def __post_init__(self) -> None:
        self.keys = frozenset(it.key for it in self.items)
        self.count = sum(it.weight for it in self.items)
        self.factors = frozenset().union(*(it.factors for it in self.items))


def _patterns(n: int) -> list[tuple[str, ...]]:
    from itertools import product

    return list(product("+-*", repeat=n - 1))


def _u_blocks(pt: tuple[str, ...]) -> list[list[fmpz_poly]]:
    """The block vectors of a face pattern over Z[lam]: on each run of tight pairs
    (:func:`dpfix.theory.enumeration.u_pattern_blocks`) the scale's shape
    ``lam^(h - min h)``, zero elsewhere."""
    from dpfix.theory.enumeration import u_pattern_blocks

    n = len(pt) + 1
    out = []
    for a, h in u_pattern_blocks(pt):
        lo = min(h)
        v = [fmpz_poly(0)] * n
        for k, hk in enumerate(h):
            v[a + k] = _X ** (hk - lo)
        out.append(v)
    return out


def _u_sets_worker(args: tuple[int, Fraction, int]) -> list[list[int]]:
    from dpfix.theory.enumeration import u_vertex_sets

    return list(u_vertex_sets(*args))


class _UEngine:
    """U(n) through its vertex sets (Theorem 2; :func:`dpfix.theory.enumeration.u_vertex_count`)."""

    def __init__(self, n: int, roots: _Roots, processes: int) -> None:
        self.n, self.roots, self.processes = n, roots, processes
        self.patterns = _patterns(n)
        self.blocks = [_u_blocks(pt) for pt in self.patterns]
        self.index = {pt: i for i, pt in enumerate(self.patterns)}
        self.known: dict[tuple[int, ...], _Item] = {}  # vertex set -> its item

    def polytope(self, lam: Any) -> Any:
        from dpfix.theory.polytopes import U

        return U(self.n, lam)

    def _vertex_sets(self, s: Fraction) -> list[list[int]]:
        work = [(self.n, s, i) for i in range(len(self.patterns))]
        if self.processes > 1:
            import multiprocessing as mp

            pool = mp.get_context("fork").Pool(self.processes)
            try:  # closed, not terminated: the workers end on their own, with no signal
                parts = pool.map(_u_sets_worker, work, chunksize=1)
                pool.close()
            except BaseException:
                pool.terminate()
                raise
            finally:
                pool.join()
        else:
            parts = [_u_sets_worker(w) for w in work]
        return [cols for part in parts for cols in part]

    def sample(self, s: Fraction) -> _Sample:
        items = []
        for cols in self._vertex_sets(s):
            key = tuple(cols)
            it = self.known.get(key)
            if it is None:
                it = self.known[key] = self._item(cols, s)
            items.append(it)
        return _Sample(s, items)

    def _item(self, cols: list[int], s: Fraction) -> _Item:
        n = self.n
        vecs = [v for c in cols for v in self.blocks[c]]
        k = len(vecs)
        rows = [[vecs[t][i] for t in range(k)] for i in range(n)]
        chosen = _independent_rows(rows, s, k)
        D, N = _solve([rows[i] for i in chosen], [fmpz_poly(1)] * k)
        polys = [D, *N]
        polys += [sum((rows[i][t] * N[t] for t in range(k)), fmpz_poly(0)) - D
                  for i in range(n) if i not in chosen]  # the row sums outside the minor
        at = 0
        for c in cols:
            fam = self.blocks[c]
            v = [sum((N[at + t] * fam[t][i] for t in range(len(fam))), fmpz_poly(0))
                 for i in range(n)]
            at += len(fam)
            for i, sym in enumerate(self.patterns[c]):
                if sym == "*":  # a free pair: both neighbour rows slack
                    polys += [_X * v[i + 1] - v[i], _X * v[i] - v[i + 1]]
        ids = frozenset().union(*(self.roots.ids(p) for p in polys if p != 0))
        return _Item(tuple(cols), ids, math.perm(n, len(cols)), (vecs, D, N))

    def limit_key(self, item: _Item, F: _Field) -> Any:
        """The vertex set of the limit of ``item`` at ``F``'s breakpoint, or None if the
        limit is not a vertex there."""
        vecs, D, N = item.data
        n = self.n
        c = [F.limit(Nt, D) for Nt in N]
        x = F.of(_X)
        cols, at = [], 0
        for ci in item.key:
            fam = self.blocks[ci]
            v = [sum((F.mul(c[at + t], F.of(fam[t][i])) for t in range(len(fam))),
                     fmpq_poly(0)) for i in range(n)]
            at += len(fam)
            if all(e == 0 for e in v):
                continue
            pt = tuple("+" if v[i + 1] == F.mul(x, v[i]) else
                       "-" if v[i] == F.mul(x, v[i + 1]) else "*" for i in range(n - 1))
            cols.append(self.index[pt])
        if len(set(cols)) < len(cols):
            return None
        spans = [[F.of(e) for e in b] for ci in cols for b in self.blocks[ci]]
        if F.rank(spans) < len(spans):
            return None
        return tuple(sorted(cols))

    def weight(self, key: Any) -> int:
        return math.perm(self.n, len(key))

    def points_at(self, item: _Item, t: Fraction) -> list[tuple[Fraction, ...]]:
        """The item's vertices at the rational ``t`` of its chamber, from its polynomials
        (``N(t) / D(t)``; every placement of its columns), flattened row-major."""
        from itertools import permutations

        vecs, D, N = item.data
        n, d = self.n, _at(item.data[1], t)
        columns, at = [], 0
        for ci in item.key:
            fam = self.blocks[ci]
            columns.append([sum((_at(N[at + k], t) * _at(fam[k][i], t)
                                 for k in range(len(fam))), Fraction(0)) / d
                            for i in range(n)])
            at += len(fam)
        out = []
        for place in permutations(range(n), len(columns)):
            M = [Fraction(0)] * (n * n)
            for col, j in zip(columns, place, strict=True):
                for i in range(n):
                    M[i * n + j] = col[i]
            out.append(tuple(M))
        return out

    def vertices(self, item: _Item) -> list[Any]:
        import sympy

        lam = sympy.Symbol("lam")
        vecs, D, N = item.data
        n = self.n

        def expr(p: fmpz_poly) -> Any:
            return sum(int(a) * lam**e for e, a in enumerate(p.coeffs()))

        columns, at = [], 0
        for ci in item.key:
            fam = self.blocks[ci]
            v = [sum((N[at + t] * fam[t][i] for t in range(len(fam))), fmpz_poly(0))
                 for i in range(n)]
            at += len(fam)
            columns.append([sympy.cancel(expr(e) / expr(D)) for e in v])
        out = []
        from itertools import permutations

        for place in permutations(range(n), len(columns)):
            M = sympy.zeros(n, n)
            for col, j in zip(columns, place, strict=True):
                for i in range(n):
                    M[i, j] = col[i]
            out.append(M)
        return out


def _rows_u(n: int) -> tuple[list, list]:
    """U's rows over Z[lam], in :func:`dpfix.theory.polytopes.u_rows` order, dense:
    ``(coefficients, bound)``."""
    d, one, zero = n * n, fmpz_poly(1), fmpz_poly(0)
    ub, eq = [], []
    for j in range(n):
        for i in range(n - 1):
            a, b = i * n + j, (i + 1) * n + j
            for x, y in ((a, b), (b, a)):  # T[x] - lam T[y] <= 0
                row = [zero] * d
                row[x], row[y] = one, -_X
                ub.append((row, zero))
    for i in range(n):
        row = [zero] * d
        for j in range(n):
            row[i * n + j] = one
        eq.append((row, one))
    return ub, eq


def _integer_row(values: Sequence[Fraction], rhs: Fraction) -> tuple[list, fmpz_poly]:
    q = math.lcm(*(v.denominator for v in values), rhs.denominator)
    return [fmpz_poly(int(v * q)) for v in values], fmpz_poly(int(rhs * q))


def _rows_f(n: int, z: np.ndarray, rows_u: tuple[list, list] | None = None
            ) -> tuple[list, list]:
    """F's rows over Z[lam]: U's (the path's, or ``rows_u``) and ``z T = z``."""
    ub, eq = rows_u if rows_u is not None else _rows_u(n)
    eq = list(eq)
    for j in range(n):  # sum_i z_i T[i, j] = z_j
        vals = [Fraction(0)] * (n * n)
        for i in range(n):
            vals[i * n + j] = z[i]
        eq.append(_integer_row(vals, z[j]))
    return ub, eq


def _rows_graph(n: int, G: Any) -> tuple[list, list]:
    """U_G's rows over Z[lam], in the order of :func:`dpfix.theory.polytopes.U` with
    ``graph=G``: the one builder :func:`dpfix.theory.graphs.neighbour_rows` with the
    ratio ``lam^w`` of each edge as the polynomial ``x^w`` (integer weights)."""
    from dpfix.theory.graphs import neighbour_rows

    ratios = [(u, v, _X ** int(G.edges[u, v]["weight"])) for u, v in sorted(G.edges)]
    sparse_ub, sparse_eq = neighbour_rows(n, ratios)
    d, zero = n * n, fmpz_poly(0)

    def dense(row: dict, b: Any) -> tuple[list, fmpz_poly]:
        out = [zero] * d
        for k, c in row.items():
            out[k] = c if isinstance(c, fmpz_poly) else fmpz_poly(int(c))
        return out, fmpz_poly(int(b))

    return [dense(r, b) for r, b in sparse_ub], [dense(r, b) for r, b in sparse_eq]


def _rows_rf(n: int, z: np.ndarray) -> tuple[list, list]:
    """R_F's rows with the scales unnormalised (``lam^(h - min h)``): the amounts are
    rescaled by a positive factor per scale, which keeps the tight sets."""
    k = 2 ** (n - 1)
    d, zero, one = k * n, fmpz_poly(0), fmpz_poly(1)
    shapes = []
    for m in range(k):
        h = [0]
        for i in range(n - 1):
            h.append(h[-1] + (1 if m >> i & 1 else -1))
        shapes.append([_X ** (hi - min(h)) for hi in h])
    ub = []
    for v in range(d):
        row = [zero] * d
        row[v] = -one
        ub.append((row, zero))
    eq = []
    for i in range(n):
        row = [zero] * d
        for m in range(k):
            for j in range(n):
                row[m * n + j] = shapes[m][i]
        eq.append((row, one))
    q = math.lcm(*(v.denominator for v in z))
    zi = [int(v * q) for v in z]
    for j in range(n):
        row = [zero] * d
        for m in range(k):
            row[m * n + j] = sum((zi[i] * shapes[m][i] for i in range(n)), zero)
        eq.append((row, fmpz_poly(zi[j])))
    return ub, eq


class _GenericEngine:
    """Any of the polytopes from its vertices at the sample point (Normaliz or cdd) and
    its rows over Z[lam]; one vertex per orbit of the polytope's symmetry is solved
    (the symmetry maps rows to rows with the same coefficients, so a vertex's image
    has the same polynomials)."""

    def __init__(self, kind: str, n: int, z: np.ndarray | None, roots: _Roots,
                 graph: Any = None) -> None:
        self.kind, self.n, self.z, self.roots, self.graph = kind, n, z, roots, graph
        if graph is not None:
            build = {"U": lambda: _rows_graph(n, graph),
                     "F": lambda: _rows_f(n, z, _rows_graph(n, graph))}[kind]
        else:
            build = {"U": lambda: _rows_u(n), "F": lambda: _rows_f(n, z),
                     "RF": lambda: _rows_rf(n, z)}[kind]
        self.ub, self.eq = build()
        self.d = len(self.ub[0][0])
        self.known: dict[frozenset[int], frozenset[int]] = {}  # tight set -> its factors

    def polytope(self, lam: Any) -> Any:
        from dpfix.theory import polytopes

        if self.kind == "U":
            return polytopes.U(self.n, lam, graph=self.graph)
        if self.graph is not None:
            return polytopes.F(self.n, lam, self.z, graph=self.graph)
        return getattr(polytopes, self.kind)(self.n, lam, self.z)

    def _tight(self, s: Fraction) -> tuple[Any, list[frozenset[int]], np.ndarray]:
        from dpfix.theory import enumeration as en

        P = self.polytope(s)
        va = P.vertex_array(limit=None)
        A, b = P.hrep.integer_ub()
        num = va.numerators.astype(object)
        den = va.denominators.astype(object)
        slack = den[:, None] * b.astype(object)[None, :] - num.dot(A.T.astype(object))
        tight = [frozenset(int(r) for r in np.flatnonzero(row == 0)) for row in slack]
        forms = en.canonical_forms(va, P.symmetry) if P.symmetry else None
        if forms is None:
            orbit = np.arange(len(va))
        else:
            _, orbit = np.unique(np.asarray(forms, dtype=object).astype(str), axis=0,
                                 return_inverse=True) if forms.dtype == object else \
                np.unique(forms, axis=0, return_inverse=True)
        return va, tight, np.asarray(orbit).ravel()

    def _basis(self, tight: frozenset[int], s: Fraction) -> list[tuple[list, fmpz_poly]]:
        cand = list(self.eq) + [self.ub[r] for r in sorted(tight)]
        chosen = _independent_rows([row for row, _ in cand], s, self.d)
        return [cand[i] for i in chosen]

    def solve(self, tight: frozenset[int], s: Fraction) -> tuple[fmpz_poly, list[fmpz_poly]]:
        rows = self._basis(tight, s)
        return _solve([r for r, _ in rows], [b for _, b in rows])

    def _polys(self, D: fmpz_poly, N: list[fmpz_poly]) -> list[fmpz_poly]:
        def residual(row: list, b: fmpz_poly) -> fmpz_poly:
            return b * D - sum((a * x for a, x in zip(row, N, strict=True) if a != 0),
                               fmpz_poly(0))
        return [D, *(residual(r, b) for r, b in self.ub), *(residual(r, b) for r, b in self.eq)]

    def sample(self, s: Fraction) -> _Sample:
        va, tight, orbit = self._tight(s)
        by_orbit: dict[int, frozenset[int]] = {}
        items = []
        for i, t in enumerate(tight):
            o = int(orbit[i])
            got = self.known.get(t)
            if got is None:
                got = by_orbit.get(o)
            if got is None:
                D, N = self.solve(t, s)
                got = frozenset().union(
                    *(self.roots.ids(p) for p in self._polys(D, N) if p != 0))
            by_orbit.setdefault(o, got)
            self.known.setdefault(t, got)
            items.append(_Item(t, got, 1, s))
        return _Sample(s, items)

    def limit_key(self, item: _Item, F: _Field) -> Any:
        D, N = self.solve(item.key, item.data)
        x = [F.limit(v, D) if v != 0 else fmpq_poly(0) for v in N]

        def value(row: list) -> fmpq_poly:
            return sum((F.mul(F.of(a), xi) for a, xi in zip(row, x, strict=True)
                        if a != 0 and xi != 0), fmpq_poly(0))

        tight = frozenset(r for r, (row, b) in enumerate(self.ub) if value(row) == F.of(b))
        rows = [[F.of(a) for a in row] for row, _ in self.eq]
        rows += [[F.of(a) for a in self.ub[r][0]] for r in sorted(tight)]
        return tight if F.rank(rows) == self.d else None

    def weight(self, key: Any) -> int:
        return 1

    def points_at(self, item: _Item, t: Fraction) -> list[tuple[Fraction, ...]]:
        """The item's vertex at the rational ``t`` of its chamber, ``N(t) / D(t)`` from the
        rows tight at the sample point (for R_F with the unnormalised scales)."""
        D, N = self.solve(item.key, item.data)
        d = _at(D, t)
        return [tuple(_at(v, t) / d if v != 0 else Fraction(0) for v in N)]

    def vertices(self, item: _Item) -> list[Any]:
        import sympy

        lam = sympy.Symbol("lam")
        D, N = self.solve(item.key, item.data)

        def expr(p: fmpz_poly) -> Any:
            return sum(int(a) * lam**e for e, a in enumerate(p.coeffs()))

        P = self.polytope(item.data)
        vals = [sympy.cancel(expr(v) / expr(D)) for v in N]
        if self.kind == "RF":  # back from unnormalised scales: B = B' sum(shape)
            n, k = self.n, 2 ** (self.n - 1)
            for m in range(k):
                h = [0]
                for i in range(n - 1):
                    h.append(h[-1] + (1 if m >> i & 1 else -1))
                total = sum(lam ** (hi - min(h)) for hi in h)
                for j in range(n):
                    vals[m * n + j] = sympy.cancel(vals[m * n + j] * total)
        return [sympy.Matrix(*P.shape, vals)]


# -- the walk along lam -------------------------------------------------------------------
def _interval(smp: _Sample, roots: _Roots) -> tuple[Number, Number, bool]:
    """``(a, b, on_root)``: ``J(s)``'s ends, and whether ``s`` is a root itself."""
    s, a, b = smp.lam, Fraction(1), INF
    for f in smp.factors:
        for r in roots.roots[f]:
            c = _cmp(r, s)
            if c == 0:
                return a, b, True
            if c < 0 and _cmp(r, a) > 0:
                a = r
            elif c > 0 and _cmp(r, b) < 0:
                b = r
    return a, b, False


def _next_root(smp: _Sample, roots: _Roots, after: Number) -> Number | None:
    best: Number | None = None
    for f in smp.factors:
        for r in roots.roots[f]:
            if _cmp(r, after) > 0 and (best is None or _cmp(r, best) < 0):
                best = r
    return best


def _factor_of(r: Number, roots: _Roots) -> int:
    m = fmpz_poly([-r.numerator, r.denominator]) if isinstance(r, Fraction) else r.poly
    (fid,) = roots.ids(m)
    return fid


def _point(engine: Any, smp: _Sample, r: Number, roots: _Roots) -> frozenset:
    """The labelled type at the root ``r``, from the limits of ``smp``'s vertices."""
    fid = _factor_of(r, roots)
    F = _Field(r)
    keys = set()
    for it in smp.items:
        if fid not in it.factors:
            keys.add(it.key)
        else:
            key = engine.limit_key(it, F)
            if key is not None:
                keys.add(key)
    return frozenset(keys)


def _walk(engine: Any, roots: _Roots) -> list[tuple[str, Number, Number, Any]]:
    """Segments ``("chamber", lo, hi, sample)`` and points ``("wall", r, r, keys)``,
    in increasing lam, covering ``(1, inf)``."""
    out: list[tuple[str, Number, Number, Any]] = []
    frontier: Number = Fraction(1)
    prev: _Sample | None = None
    cache: dict[Fraction, _Sample] = {}
    while True:
        bound = _next_root(prev, roots, frontier) if prev is not None else None
        while True:
            s = _pick(frontier, bound)
            smp = cache.get(s) or cache.setdefault(s, engine.sample(s))
            a, b, on_root = _interval(smp, roots)
            if on_root:
                bound = s
            elif _cmp(a, frontier) > 0:
                bound = a
            else:
                break
        if prev is not None:
            keys = smp.keys if _cmp(a, frontier) < 0 else _point(engine, smp, frontier, roots)
            out.append(("wall", frontier, frontier, keys))
        out.append(("chamber", frontier, b, smp))
        if b is INF:
            return out
        frontier, prev = b, smp


# -- the result ---------------------------------------------------------------------------
def _fmt(x: Number) -> str:
    if x is INF:
        return "inf"
    if isinstance(x, Fraction):
        return str(x)
    return f"{float(x):.10g}"


@dataclass(eq=False)
class Piece:
    """A chamber (open interval ``(lo, hi)`` of lam, one type) or a breakpoint
    (``lo == hi``, a real algebraic number or a Fraction).

    Attributes
    ----------
    lo, hi : Fraction, :class:`dpfix.numbers.algebraic.Algebraic` or ``math.inf`` (a
        chamber's ``hi`` only); ``float()`` works on each. A breakpoint's ``lo`` is the
        ``hi`` of the chamber before it and the ``lo`` of the one after (one object).
    count : the number of vertices there.
    sample : a rational lam inside the chamber (None for a breakpoint).
    """

    _lo: Number = field(repr=False)
    _hi: Number = field(repr=False)
    count: int
    sample: Fraction | None
    _keys: frozenset = field(repr=False)
    _owner: Any = field(repr=False, default=None)

    @property
    def lo(self) -> Number:
        """The lower end (exact)."""
        return _public(self._lo)

    @property
    def hi(self) -> Number:
        """The upper end (exact, or ``math.inf``)."""
        return _public(self._hi)

    @property
    def is_breakpoint(self) -> bool:
        """Whether this piece is a single value of lam."""
        return self.sample is None

    @property
    def minimal_polynomial(self) -> list[int]:
        """A breakpoint's minimal polynomial, integer coefficients, constant term first."""
        if not self.is_breakpoint:
            raise AttributeError("a chamber has no minimal polynomial")
        if isinstance(self._lo, Fraction):
            return [-self._lo.numerator, self._lo.denominator]
        return self._lo.minimal_polynomial

    def vertices(self) -> list[Any]:
        """A chamber's vertices as sympy matrices of rational functions of ``lam``
        (the symbol ``lam``), exact on the whole chamber."""
        if self.is_breakpoint:
            raise ValueError("vertices(): given for chambers (the type at a breakpoint "
                             "is its count and incidence)")
        engine, smp = self._owner._engine, self._owner._samples[self.sample]
        return [V for it in smp.items for V in engine.vertices(it)]

    def points_at(self, lam: Any) -> list[np.ndarray]:
        """A chamber's vertices at the rational ``lam`` of the chamber, from its vertex
        formulas ``N(lam) / D(lam)`` (exact, Fractions; no enumeration): the vertices of
        the polytope there, by the theorem of the module docstring.

        Examples
        --------
        >>> ch = chambers("U", 2)
        >>> sorted(V.tolist() for V in ch[0].points_at(3))[0]
        [[Fraction(0, 1), Fraction(1, 1)], [Fraction(0, 1), Fraction(1, 1)]]
        """
        if self.is_breakpoint:
            raise ValueError("points_at(): given for chambers")
        x = to_fraction(lam, "lam")
        if x not in self:
            raise ValueError(f"lam: {x} is not in the chamber {self!r}")
        engine, smp = self._owner._engine, self._owner._samples[self.sample]
        shape = engine.polytope(self.sample).shape
        return [np.array(pt, dtype=object).reshape(shape)
                for it in smp.items for pt in engine.points_at(it, x)]

    def f_vector(self) -> list[int]:
        """``[f_0, f_1, ..., f_(d-1)]``, the number of faces of each dimension (vertices
        first, facets last), by Normaliz's ``FVector`` at the chamber's sample point (it
        is the same on the whole chamber, a function of the type) or at a rational
        breakpoint; refused beyond :data:`F_VECTOR_MAX_VERTICES` vertices and at an
        irrational breakpoint.

        Examples
        --------
        >>> chambers("U", 3)[0].f_vector()
        [27, 102, 168, 141, 60, 12]
        """
        import PyNormaliz

        lam = self.sample if not self.is_breakpoint else self._lo
        if not isinstance(lam, Fraction):
            raise ValueError("f_vector(): Normaliz's FVector needs a rational lam; this "
                             "breakpoint is irrational")
        if self.count > F_VECTOR_MAX_VERTICES:
            raise ValueError(f"f_vector(): {self.count} vertices, beyond "
                             f"F_VECTOR_MAX_VERTICES = {F_VECTOR_MAX_VERTICES}")
        ineq, eq = self._owner._engine.polytope(lam).hrep.normaliz_rows()
        cone = PyNormaliz.Cone(inhom_inequalities=ineq, inhom_equations=eq)
        return [int(v) for v in cone.FVector()[1:-1]]

    def describe_ends(self) -> str:
        """A chamber's ends in words: each a rational, ``inf``, or the root of its
        minimal polynomial near its value.

        Examples
        --------
        >>> interval_around("U", 5, "6/5").describe_ends()
        'from 1 to the root of lam^3 - lam^2 - 1 near 1.465571232'
        """
        def end(x: Number) -> str:
            if x is INF or isinstance(x, Fraction):
                return _fmt(x)
            return f"the root of {polynomial_str(x.minimal_polynomial, 'lam')} near {_fmt(x)}"

        return f"from {end(self._lo)} to {end(self._hi)}"

    def __contains__(self, lam: Any) -> bool:
        x = to_fraction(lam, "lam")
        if self.is_breakpoint:
            return _cmp(self._lo, x) == 0
        return _cmp(self._lo, x) < 0 and (self._hi is INF or _cmp(x, self._hi) < 0)

    def __repr__(self) -> str:
        if self.is_breakpoint:
            return f"Piece(breakpoint {_fmt(self._lo)}, {self.count} vertices)"
        return f"Piece(chamber ({_fmt(self._lo)}, {_fmt(self._hi)}), {self.count} vertices)"


class Chambers(Sequence):
    """The decomposition of ``lam in (1, inf)``: pieces in increasing lam, chambers and
    breakpoints alternating, starting and ending with a chamber.

    Examples
    --------
    >>> ch = chambers("F", 2, ["1/2", "1/2"])
    >>> ch.counts()
    [2]
    """

    def __init__(self, kind: str, n: int, z: np.ndarray | None, pieces: list[Piece],
                 engine: Any, samples: dict[Fraction, _Sample], seconds: float,
                 graph: Any = None) -> None:
        self.kind, self.n, self.z = kind, n, z
        #: the neighbour graph (a checked networkx graph), None for the path
        self.graph = graph
        self._pieces, self._engine, self._samples = pieces, engine, samples
        self.seconds = seconds
        for p in pieces:
            p._owner = self

    def __getitem__(self, i: Any) -> Any:
        return self._pieces[i]

    def __len__(self) -> int:
        return len(self._pieces)

    def counts(self) -> list[int]:
        """The vertex counts of the pieces, in order."""
        return [p.count for p in self._pieces]

    def name(self) -> str:
        zs = "" if self.z is None else ", z=(" + ", ".join(str(v) for v in self.z) + ")"
        gs = "" if self.graph is None else f", graph={self.graph.graph.get('label', 'graph')}"
        return f"{self.kind}(n={self.n}{zs}{gs})"

    def piece_at(self, lam: Any) -> Piece:
        """The piece holding the rational ``lam > 1`` (floats refused)."""
        if isinstance(lam, float):
            raise ExactnessError("lam: a float given where an exact number is required")
        x = to_fraction(lam, "lam")
        if x <= 1:
            raise ValueError(f"lam: must be > 1, got {x}")
        return next(p for p in self._pieces if x in p)

    def table(self) -> str:
        """The pieces as a text table."""
        head = f"{self.name()}: {sum(not p.is_breakpoint for p in self)} chamber(s), " \
               f"{sum(p.is_breakpoint for p in self)} breakpoint(s) in lam > 1"
        lines = [head, f"{'piece':<10} {'lam':<34} {'vertices':>9}  minimal polynomial / sample"]
        for p in self._pieces:
            if p.is_breakpoint:
                where = _fmt(p._lo)
                lines.append(f"{'wall':<10} {where:<34} {p.count:>9}  "
                             f"{polynomial_str(p.minimal_polynomial, 'lam')}")
            else:
                where = f"({_fmt(p._lo)}, {_fmt(p._hi)})"
                lines.append(f"{'chamber':<10} {where:<34} {p.count:>9}  sample {p.sample}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return f"Chambers({self.name()}, counts={self.counts()})"

    def confirm(self, backend: str = "auto", walls_only: bool = False
                ) -> list[dict[str, Any]]:
        """Each count checked by an independent enumeration: at a rational point of
        each chamber other than its sample (the sample's own if the chamber is too
        narrow to find another simply), by ``Polytope.count_vertices`` (for U at n = 5
        with Normaliz, not the structural count the chambers come from); at each
        breakpoint by ``count_vertices`` at it: over ``Q(lam)`` for an irrational one
        (:mod:`dpfix.numbers.algebraic`), reported as not confirmed if the enumeration
        refuses that lam.

        With ``walls_only`` the breakpoints alone (the chambers checked as vertex sets
        by :meth:`confirm_vertices`, at the same points).

        Returns one row per piece (``piece``, ``lam``, ``count``, ``found``,
        ``method``, ``ok``); raises ``AssertionError`` on a disagreement.
        """
        rows = []
        for p in self._pieces:
            if walls_only and not p.is_breakpoint:
                continue
            lam, method = _confirm_point(p)
            if lam is None:
                rows.append({"piece": repr(p), "lam": None, "count": p.count, "found": None,
                             "method": method, "ok": None})
                continue
            which = backend
            if not isinstance(lam, Fraction) and backend == "cdd":
                which = "auto"  # cdd has no number fields: Normaliz over Q(lam)
            if self.kind == "U" and self.n >= 5 and backend == "auto":
                from dpfix.theory.enumeration import normaliz_available

                which = "normaliz" if normaliz_available() else "cdd"
            try:
                found = self._engine.polytope(lam).count_vertices(limit=None, backend=which)
            except Exception as exc:  # an irrational lam the enumeration does not take yet
                if not p.is_breakpoint or isinstance(p._lo, Fraction):
                    raise
                rows.append({"piece": repr(p), "lam": lam, "count": p.count, "found": None,
                             "method": "not confirmed: the enumeration over Q(lam) refused "
                                       f"({type(exc).__name__}: {exc})", "ok": None})
                continue
            rows.append({"piece": repr(p), "lam": lam, "count": p.count, "found": found,
                         "method": f"{method}, count_vertices({which})",
                         "ok": found == p.count})
            if found != p.count:
                raise AssertionError(f"{self.name()}: {p!r} has {p.count} vertices by the "
                                     f"chambers, {found} by count_vertices at lam = {lam}")
        return rows


    def confirm_vertices(self, backend: str = "cdd") -> list[dict[str, Any]]:
        """Each chamber's vertices checked as a set: at the rational point of
        :meth:`confirm` (other than the sample where the chamber allows), the chamber's
        vertex formulas ``N(lam) / D(lam)`` evaluated exactly must be the vertices that
        ``Polytope.vertices`` enumerates there (cdd's exact double description by
        default), one for one. U and F (R_F's formulas are in unnormalised scales).

        Returns one row per chamber (``piece``, ``lam``, ``count``, ``found``, ``ok``);
        raises ``AssertionError`` on a disagreement.
        """
        if self.kind == "RF":
            raise ValueError("confirm_vertices(): for U and F (R_F's vertex formulas use "
                             "unnormalised scales)")
        rows = []
        for p in self._pieces:
            if p.is_breakpoint:
                continue
            lam, _ = _confirm_point(p)
            formulas = {tuple(V.ravel()) for V in p.points_at(lam)}
            P = self._engine.polytope(lam)
            found = {tuple(v.ravel()) for v in P.vertices(limit=None, backend=backend)}
            ok = formulas == found
            rows.append({"piece": repr(p), "lam": lam, "count": len(formulas),
                         "found": len(found), "ok": ok})
            if not ok:
                raise AssertionError(f"{self.name()}: {p!r}: the formulas give {len(formulas)} "
                                     f"points at lam = {lam}, {backend} enumerates "
                                     f"{len(found)} vertices, {len(formulas & found)} shared")
        return rows


def _confirm_point(p: Piece) -> tuple[Any, str]:
    if p.is_breakpoint:
        if isinstance(p._lo, Fraction):
            return p._lo, "at the rational breakpoint"
        return p.lo, "over Q(lam)"
    hi = p._hi if p._hi is not INF else None
    first = _pick(p._lo, hi)
    if first != p.sample:
        return first, "at a rational point of the chamber"
    other = _pick(first, hi) if hi is not None else first + 1
    return other, "at a rational point of the chamber"


def _merge(engine: Any, raw: list[tuple[str, Number, Number, Any]]) -> list[Piece]:
    """Neighbouring pieces of one type joined: a wall whose type is both sides' goes."""
    pieces: list[list[Any]] = []  # [lo, hi, keys, sample or None]
    for kind, lo, hi, x in raw:
        if kind == "chamber":
            entry = [lo, hi, x.keys, x.lam]
            if (len(pieces) >= 2 and pieces[-1][2] == x.keys and pieces[-2][2] == x.keys):
                pieces.pop()
                pieces[-1][1] = hi
                continue
            pieces.append(entry)
        else:
            pieces.append([lo, lo, x, None])
    return [Piece(lo, hi, sum(engine.weight(k) for k in keys), s, keys)
            for lo, hi, keys, s in pieces]


def _graph_for(graph: Any, n: int, kind: str, what: str) -> Any:
    """The checked neighbour graph for :func:`chambers` (None for no graph or the path,
    whose rows are the path's)."""
    if graph is None:
        return None
    from dpfix.theory.graphs import as_graph, is_path

    G = as_graph(graph, n)
    if is_path(G):
        return None
    if kind not in GRAPH_LIMITS:
        raise ValueError(f"kind: with graph=, one of {', '.join(GRAPH_LIMITS)} (U_G and F_G), "
                         f"got {kind!r}")
    if n > GRAPH_LIMITS[kind]:
        raise ValueError(f"{what}: {kind} on a graph is decomposed for n <= "
                         f"{GRAPH_LIMITS[kind]}, got {n}")
    bad = [(u, v, w) for u, v, w in sorted(G.edges(data="weight")) if w.denominator != 1]
    if bad:
        u, v, w = bad[0]
        raise ValueError(f"graph: edge {u}-{v} has weight {w}; the chambers take integer "
                         "weights (lam^w a polynomial in lam)")
    return G


def _engine_for(kind: str, n: int, z: Any, processes: int, limits: dict[str, int],
                what: str, graph: Any = None) -> tuple[Any, _Roots, Any]:
    """``(engine, roots, z)`` after checking the arguments of :func:`chambers` or
    :func:`interval_around`."""
    if kind not in limits:
        raise ValueError(f"kind: one of {', '.join(KINDS)}, got {kind!r}")
    n = check_n(n, minimum=2)
    G = _graph_for(graph, n, kind, what)
    if G is None and n > limits[kind]:
        raise ValueError(f"{what}: {kind} is decomposed for n <= {limits[kind]}, got {n}")
    if kind == "U":
        if z is not None:
            raise ValueError("z: U has no target; give z for F and RF only")
        zv = None
    else:
        if z is None:
            raise ValueError(f"z: {kind} needs an exact target z")
        zv = probability_vector(z, exact=True, n=n)
    roots = _Roots()
    if G is not None:
        engine: Any = _GenericEngine(kind, n, zv, roots, G)
    elif kind == "U":
        engine = _UEngine(n, roots, processes)
    else:
        engine = _GenericEngine(kind, n, zv, roots)
    return engine, roots, zv


@dataclass
class _Around:
    """What :meth:`Piece.vertices` needs of the piece :func:`interval_around` returns."""

    _engine: Any
    _samples: dict[Fraction, _Sample]


def interval_around(kind: str, n: int, lam: Any, z: Any = None, processes: int = 1,
                    graph: Any = None) -> Piece:
    """The open interval ``J(lam)`` around a rational ``lam`` on which the type is the
    type at ``lam``, from ``lam``'s vertices alone (one sample point of the walk of
    :func:`chambers`; the theorem of the module docstring).

    ``J(lam)`` lies in the chamber holding ``lam``. Its ends are the nearest roots of
    the polynomials of ``lam``'s vertices; an end at which a vertex meets one more row
    is a breakpoint, and where two such intervals touch with different counts the
    common end is one. This reaches one size further than :func:`chambers` (U(6), see
    :data:`AROUND_LIMITS`), where the whole decomposition is beyond reach.

    Parameters
    ----------
    kind, n, z : as for :func:`chambers`, with ``n`` up to :data:`AROUND_LIMITS`.
    lam : a rational above 1 (floats refused).
    processes : worker processes for U's vertex sets.
    graph : a neighbour graph, as for :func:`chambers`.

    Returns
    -------
    Piece
        A chamber-like piece: ``lo``, ``hi`` (exact), ``count`` and ``sample = lam``;
        ``vertices()`` as rational functions of lam.

    Raises
    ------
    ValueError
        If ``lam`` is a root of one of its own vertices' polynomials (it may be a
        breakpoint: :func:`chambers` decides).

    Examples
    --------
    >>> interval_around("F", 3, "6/5", [Fraction(4, 7), Fraction(2, 7), Fraction(1, 7)])
    Piece(chamber (1.186140662, 1.31895825), 19 vertices)
    """
    kind = check_kind(kind, KINDS)
    s = to_fraction(lam, "lam")
    if s <= 1:
        raise ValueError(f"lam: must be > 1, got {s}")
    engine, roots, _ = _engine_for(kind, n, z, processes, AROUND_LIMITS, "interval_around",
                                   graph)
    smp = engine.sample(s)
    a, b, on_root = _interval(smp, roots)
    if on_root:
        raise ValueError(f"lam: {s} is a root of a polynomial of its own vertices (it may be "
                         "a breakpoint); take a lam nearby, or chambers()")
    return Piece(a, b, smp.count, s, smp.keys, _Around(engine, {s: smp}))


def chambers(kind: str, n: int, z: Any = None, processes: int = 1,
             graph: Any = None) -> Chambers:
    """The chambers and breakpoints of ``kind`` in lam ``> 1`` (the module docstring
    gives the method and its proof).

    Parameters
    ----------
    kind : ``"U"`` (``n <= 5``), ``"F"`` (``n <= 4``) or ``"RF"`` (``n <= 3``).
    n : the size.
    z : the exact target for F and R_F (rationals; floats refused).
    processes : worker processes for U's vertex sets at each sample point.
    graph : a neighbour graph on ``0..n-1`` (:func:`dpfix.theory.graphs.as_graph`: a
        networkx graph, ``"star:4"``, a file of edges; integer weights): the chambers of
        ``U_G`` and ``F_G[z]`` (kinds ``"U"`` and ``"F"``, n up to :data:`GRAPH_LIMITS`),
        from the rows of :func:`dpfix.theory.polytopes.U` with ``graph=``. None, or the
        path, gives the path's.

    Returns
    -------
    Chambers
        A sequence of :class:`Piece` s, chambers and breakpoints alternating.

    Examples
    --------
    >>> ch = chambers("F", 3, ["1/8", "1/2", "3/8"])
    >>> print(ch)
    F(n=3, z=(1/8, 1/2, 3/8)): 2 chamber(s), 1 breakpoint(s) in lam > 1
    piece      lam                                 vertices  minimal polynomial / sample
    chamber    (1, 3/2)                                  22  sample 4/3
    wall       3/2                                       20  2*lam - 3
    chamber    (3/2, inf)                                22  sample 2
    >>> ch.piece_at(3), ch.counts()
    (Piece(chamber (3/2, inf), 22 vertices), [22, 20, 22])
    """
    kind = check_kind(kind, KINDS)
    import time

    start = time.perf_counter()
    engine, roots, zv = _engine_for(kind, n, z, processes, LIMITS, "chambers", graph)
    raw = _walk(engine, roots)
    samples = {x.lam: x for k, _, _, x in raw if k == "chamber"}
    return Chambers(kind, n, zv, _merge(engine, raw), engine, samples,
                    time.perf_counter() - start, getattr(engine, "graph", None))
