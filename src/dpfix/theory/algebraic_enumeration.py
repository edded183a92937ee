"""Exact vertex enumeration over a real number field ``Q(lam)`` (``lam`` algebraic;
docs/math_notes.md sections 1 and 2).

A polytope whose constraints have coefficients in ``Q(lam)``
(:mod:`dpfix.numbers.algebraic`; docs/math_notes.md section 1) is enumerated two ways:

- ``"normaliz"``: Normaliz's number-field input (PyNormaliz built with e-antic):
  every coefficient is passed as its polynomial in ``a = lam``, with the minimal
  polynomial and a decimal ball isolating the root (checked here to hold exactly one
  real root); the vertices come back as polynomials in ``a`` and are read into field
  elements. Any of U, F, R_F, R_U.
- ``"structure"`` (U only, counts): :func:`u_vertex_count_algebraic`, U's
  column-by-column structural count (:func:`dpfix.theory.enumeration.u_vertex_count`)
  with the ranks taken modulo a prime ideal that is proved large enough, and the
  signs from arb balls (exact arithmetic in ``Q(lam)`` where a ball is not decisive).

Measured (``benchmarks/bench_algebraic.py``, ``benchmarks/results/algebraic.json``;
one run each on a shared 2-core machine): ``U(5).count_vertices()`` takes 1.24, 1.18
and 1.27 s of CPU at the golden ratio (61,725 vertices), ``sqrt 2`` and the real root
of ``x^3 - x - 1`` (68,805 each) by the structure count here, against 0.57 and 0.49 s
at the rational ``lam = 3/2`` and ``2`` by today's integer structure count (about 2.3
times); Normaliz's number-field enumeration of U(5) at the golden ratio took 83 s
(wall; 19 to 34 s on a quieter machine), against 4 to 5 s at a rational ``lam``; U(4)
over the field takes Normaliz 0.06 s. So counts of U from n = 5 on go to the structure
count, everything else to Normaliz.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from fractions import Fraction
from itertools import product
from math import factorial, perm
from pathlib import Path
from typing import Any

import flint

from dpfix.numbers.algebraic import Algebraic, NumberField

__all__ = ["normaliz_field_vertices", "normaliz_field_count", "u_vertex_count_algebraic",
           "prime_ideal"]

Row = dict[int, Any]
Constraint = tuple[Row, Any]


# -- Normaliz over a number field ---------------------------------------------------------
def _entry(x: Any, field: NumberField) -> list[list[int]]:
    """A coefficient as Normaliz's number-field entry: ``[[num, den], ...]`` ascending in ``a``."""
    cs = field(x).coefficients()
    return [[c.numerator, c.denominator] for c in cs] or [[0, 1]]


def _normaliz_cone(ub: Sequence[Constraint], eq: Sequence[Constraint], d: int,
                   field: NumberField) -> Any:
    import PyNormaliz_cpp as nmz

    def dense(coef: Row, last: Any, sign: int) -> list[list[list[int]]]:
        row: list[Any] = [0] * (d + 1)
        for c, v in coef.items():
            row[c] = sign * v
        row[d] = last
        return [_entry(v, field) for v in row]

    ineq = [dense(a, b, -1) for a, b in ub]  # b - a.x >= 0
    kw: dict[str, Any] = {"inhom_inequalities": ineq}
    if eq:
        kw["inhom_equations"] = [dense(a, -b, 1) for a, b in eq]  # a.x - b = 0
    mid, rad = field.decimal_ball()
    number_field = [field.polynomial_str("a").replace(" ", ""), "a", f"{mid}+/-{rad}"]
    return nmz.NmzCone(number_field=number_field, **kw)


def _field_value(entry: Sequence[Sequence[int]], field: NumberField) -> Algebraic:
    return field.from_coefficients([Fraction(int(p), int(q)) for p, q in entry])


def normaliz_field_vertices(ub: Sequence[Constraint], eq: Sequence[Constraint], d: int,
                            field: NumberField) -> list[list[Algebraic]]:
    """Every vertex of ``{x : a.x <= b (ub), a.x = b (eq)}`` over ``field``, each a list of
    ``d`` field elements, in Normaliz's order.

    Raises ``RuntimeError`` if the polyhedron is unbounded.

    Examples
    --------
    >>> from dpfix.numbers.algebraic import algebraic
    >>> r2 = algebraic("x^2 - 2", 1.4)
    >>> tri = [({0: -1}, 0), ({1: -1}, 0), ({0: 1, 1: 1}, r2)]  # x, y >= 0, x + y <= sqrt 2
    >>> sorted(normaliz_field_vertices(tri, [], 2, r2.field)) == [[0, 0], [0, r2], [r2, 0]]
    True
    """
    import PyNormaliz_cpp as nmz

    cone = _normaliz_cone(ub, eq, d, field)
    nmz.NmzCompute(cone, ["VerticesOfPolyhedron", "ExtremeRays"])
    if nmz.NmzResult(cone, "ExtremeRays"):
        raise RuntimeError("Normaliz found recession rays; the polyhedron is unbounded")
    out = []
    for row in nmz.NmzResult(cone, "VerticesOfPolyhedron"):
        vals = [_field_value(e, field) for e in row]
        h = vals[-1]
        out.append([v / h for v in vals[:-1]] if h != 1 else vals[:-1])
    return out


def normaliz_field_count(ub: Sequence[Constraint], eq: Sequence[Constraint], d: int,
                         field: NumberField) -> int:
    """The number of vertices, read from Normaliz's output file (the vertices are never
    brought into Python)."""
    import PyNormaliz_cpp as nmz

    from dpfix.theory.enumeration import normaliz_header_counts

    cone = _normaliz_cone(ub, eq, d, field)
    nmz.NmzCompute(cone, ["VerticesOfPolyhedron"])
    with tempfile.TemporaryDirectory(prefix="dpfix-normaliz-") as tmp:
        base = Path(tmp) / "polytope"
        nmz.NmzWriteOutputFile(cone, str(base))
        with open(base.with_suffix(".out")) as f:
            nv, nrays, _ = normaliz_header_counts(f)
    if nrays:
        raise RuntimeError("Normaliz found recession rays; the polyhedron is unbounded")
    return nv


# -- U counted through its structure over Q(lam) ------------------------------------------
def _monic(field: NumberField) -> tuple[list[int], int]:
    """``beta = c lam`` (``c`` the leading coefficient of the minimal polynomial ``m``) is
    an algebraic integer: its minimal polynomial ``c^(d-1) m(x / c)``, monic, ascending."""
    cs = [int(v) for v in field.minpoly.coeffs()]
    d, c = len(cs) - 1, cs[-1]
    return [cs[k] * c ** (d - 1 - k) for k in range(d)] + [1], c


def _norm_bound(field: NumberField, n: int) -> int:
    """An integer above ``|N(D)|`` for every minor ``D`` (of size up to ``n``) of a matrix
    whose entries are ``beta^a c^b`` (``a + b <= n - 1``) or 1: for each complex
    conjugate ``beta'``, ``|D'| <= n! R^(n (n-1))`` with ``R = max(1, |beta'|, c)``."""
    mono, c = _monic(field)
    bound = flint.arb(1)
    for root, _ in flint.fmpz_poly(mono).complex_roots():
        R = max(flint.arb(1), abs(root).upper(), flint.arb(c))
        bound *= factorial(n) * R ** (n * (n - 1))
    return int(bound.upper().floor().unique_fmpz()) + 1


def prime_ideal(field: NumberField, n: int) -> tuple[int, int]:
    """``(p, r)``: a prime ``p`` above :func:`_norm_bound` and a root ``r`` of ``beta``'s
    minimal polynomial modulo ``p``, so that ``beta -> r`` is a ring map from ``Z[beta]``
    onto ``F_p``.

    Why this decides ranks exactly: the kernel of that map is a prime ideal ``P`` over
    ``p``, and an element ``D`` of ``P`` has ``p | N(D)`` (multiplication by ``D`` is
    singular modulo ``p``). A minor ``D != 0`` has ``0 < |N(D)| < p``, so ``D`` is not
    in ``P``: a matrix of such entries has the same rank modulo ``P`` as over ``Q(lam)``.

    Examples
    --------
    >>> from dpfix.numbers.algebraic import algebraic
    >>> p, r = prime_ideal(algebraic("x^2 - x - 1", 1.6).field, 3)
    >>> (r * r - r - 1) % p
    0
    """
    mono, _ = _monic(field)
    p = max(_norm_bound(field, n), 2 ** 61)
    p += 1 - p % 2
    ctx_tries = 0
    while True:
        if flint.fmpz(p).is_prime():
            roots = flint.fmpz_mod_poly_ctx(p)(mono).roots()
            if roots:
                return p, int(roots[0][0])
            ctx_tries += 1
            if ctx_tries > 10_000:
                raise ArithmeticError("prime_ideal: no prime with a root found")
        p += 2


def _faces_mod(n: int, r: int, c: int, p: int) -> tuple[list[tuple[str, ...]],
                                                          list[list[list[int]]],
                                                          list[list[tuple[int, int]]]]:
    """The faces of the cone of lam-bounded vectors (as in
    :func:`dpfix.theory.enumeration.u_vertex_count`): patterns in ``{+, -, *}^(n-1)``
    and, per pattern, its block vectors modulo ``P`` (``lam^h`` scaled to
    ``beta^(h - lo) c^(hi - h)``) and their exponents ``(start, h - lo)``."""
    from dpfix.theory.enumeration import u_pattern_blocks

    patterns = list(product("+-*", repeat=n - 1))
    families, shapes = [], []
    for pt in patterns:
        vecs, shape = [], []
        for a, h in u_pattern_blocks(pt):
            lo, hi = min(h), max(h)
            v = [0] * n
            for k, hk in enumerate(h):
                v[a + k] = pow(r, hk - lo, p) * pow(c, hi - hk, p) % p
            vecs.append(v)
            shape.append((a, [hk - lo for hk in h]))
        families.append(vecs)
        shapes.append(shape)
    return patterns, families, shapes


def _reduce_mod(basis: list[tuple[int, list[int]]], v: list[int], p: int) -> list[int]:
    """``v`` reduced modulo ``p`` against rows scaled to 1 at their pivots."""
    for piv, row in basis:
        f = v[piv]
        if f:
            v = [(x - f * y) % p for x, y in zip(v, row, strict=True)]
    return v


def _extend(basis: list[tuple[int, list[int]]], fam: list[list[int]], p: int
            ) -> list[tuple[int, list[int]]] | None:
    nb = list(basis)
    for v in fam:
        red = _reduce_mod(nb, v, p)
        piv = next((j for j, x in enumerate(red) if x), None)
        if piv is None:
            return None
        inv = pow(red[piv], -1, p)
        nb.append((piv, [x * inv % p for x in red]))
    return nb


def _block_values(shape: list[tuple[int, list[int]]], lam_pows: list[Any], n: int,
                  zero: Any) -> list[list[Any]]:
    """The block vectors with entries ``lam^(h - lo)`` (``lam_pows[k] = lam^k``)."""
    out = []
    for a, hs in shape:
        v = [zero] * n
        for k, e in enumerate(hs):
            v[a + k] = lam_pows[e]
        out.append(v)
    return out


class _Search:
    """What the search needs to decide one candidate set of faces: the faces modulo ``P``
    (exact ranks) and the powers of ``lam`` as arb balls (signs)."""

    def __init__(self, n: int, lam: Algebraic) -> None:
        K = lam.field
        if lam != K.gen:
            raise ValueError("u_vertex_count_algebraic: lam must generate its field (lam = a)")
        self.n, self.lam = n, lam
        self.p, r = prime_ideal(K, n)
        _, c = _monic(K)
        self.patterns, self.families, self.shapes = _faces_mod(n, r, c, self.p)
        self.where = {pt: i for i, pt in enumerate(self.patterns)}
        self._balls: dict[int, list[Any]] = {}

    def balls(self, bits: int) -> list[Any]:
        if bits not in self._balls:
            with flint.ctx.workprec(bits + 64):
                ball = self.lam.field.ball(bits)
                self._balls[bits] = [ball ** k for k in range(self.n)]
        return self._balls[bits]

    def one_in_span(self, vectors: list[list[int]]) -> bool | None:
        """Whether 1 is in the span of these vectors modulo ``P`` (exact: a rank); None
        if they are dependent."""
        basis = _extend([], vectors, self.p)
        if basis is None:
            return None
        return not any(_reduce_mod(basis, [1] * self.n, self.p))

    def is_vertex(self, cols: list[int]) -> bool:
        """Whether the columns in the spans of these faces, summing to 1, have positive
        coefficients and lie strictly inside the cone at the free pairs. Signs come from
        arb balls; a ball holding 0 is settled exactly: the value is 0 iff 1 is in the
        span of a smaller set of faces (a coefficient dropped, or a free pair made
        tight), a rank modulo ``P``; a non-zero value gets more precision, and in the end
        exact arithmetic in ``Q(lam)``."""
        vectors = [v for ci in cols for v in self.families[ci]]
        for bits in (128, 512):
            with flint.ctx.workprec(bits + 64):
                verdict, open_items = _is_vertex_balls(cols, self.shapes, self.patterns,
                                                       self.n, self.balls(bits))
            if verdict is not None:
                return verdict
            for item in open_items:
                zero = None if item[0] == "exact" else self._is_zero(item, cols, vectors)
                if zero is None:
                    return self._exact(cols)
                if zero:
                    return False
            # every open quantity is non-zero: its sign needs more precision
        return self._exact(cols)

    def _is_zero(self, item: tuple[Any, ...], cols: list[int], vectors: list[list[int]]
                 ) -> bool | None:
        if item[0] == "coef":
            return self.one_in_span(vectors[:item[1]] + vectors[item[1] + 1:])
        _, ci, i, step = item  # the free pair i of column ci made tight upwards or downwards
        pt = list(self.patterns[ci])
        pt[i] = step
        refined = self.families[self.where[tuple(pt)]]
        others = [v for cj in cols if cj != ci for v in self.families[cj]]
        return self.one_in_span(others + refined)

    def _exact(self, cols: list[int]) -> bool:
        K = self.lam.field
        pows = [self.lam ** k for k in range(self.n)]
        return _is_vertex_with(cols, self.shapes, self.patterns, self.n, pows, K(0), K(1),
                               self.lam)


def _is_vertex_balls(cols: list[int], shapes: list[list[tuple[int, list[int]]]],
                     patterns: list[tuple[str, ...]], n: int, balls: list[Any]
                     ) -> tuple[bool | None, list[tuple[Any, ...]]]:
    """The vertex test on balls: ``(verdict, [])`` when every sign is certain, else
    ``(None, the quantities whose ball holds 0)``."""
    zero = flint.arb(0)
    vecs = [v for ci in cols for v in _block_values(shapes[ci], balls, n, zero)]
    k = len(vecs)
    A = flint.arb_mat([[vecs[t][i] for t in range(k)] for i in range(n)])
    At = A.transpose()
    try:
        coef = (At * A).solve(At * flint.arb_mat([[1]] * n))
    except ZeroDivisionError:
        return None, [("exact",)]
    cs = [coef[t, 0] for t in range(k)]
    if any(c < 0 for c in cs):
        return False, []
    open_items: list[tuple[Any, ...]] = [("coef", t) for t in range(k) if not cs[t] > 0]
    lam = balls[1]
    at = 0
    for ci in cols:
        m = len(shapes[ci])
        v = [sum((cs[at + t] * vecs[at + t][i] for t in range(m)), zero) for i in range(n)]
        at += m
        for i in range(n - 1):
            if patterns[ci][i] != "*":
                continue
            # lam v[i+1] - v[i] = 0 makes pair i tight downwards, lam v[i] - v[i+1] upwards
            for gap, step in ((lam * v[i + 1] - v[i], "-"), (lam * v[i] - v[i + 1], "+")):
                if gap < 0:
                    return False, []
                if not gap > 0:
                    open_items.append(("gap", ci, i, step))
    return (None, open_items) if open_items else (True, [])


def _is_vertex_with(cols: list[int], shapes: list[list[tuple[int, list[int]]]],
                    patterns: list[tuple[str, ...]], n: int, pows: list[Any], zero: Any,
                    one: Any, lam: Any) -> bool:
    """The same decision in exact arithmetic (``pows[k] = lam^k`` exact)."""
    vecs = [v for ci in cols for v in _block_values(shapes[ci], pows, n, zero)]
    k = len(vecs)
    M = [[vecs[t][i] for t in range(k)] + [one] for i in range(n)]
    r = 0
    for c in range(k):
        piv = next((i for i in range(r, n) if M[i][c]), None)
        if piv is None:
            return False
        M[r], M[piv] = M[piv], M[r]
        inv = one / M[r][c]
        M[r] = [x * inv for x in M[r]]
        for i in range(n):
            if i != r and M[i][c]:
                f = M[i][c]
                M[i] = [x - f * y for x, y in zip(M[i], M[r], strict=True)]
        r += 1
    if any(M[i][k] for i in range(k, n)):
        return False
    cs = [M[t][k] for t in range(k)]
    if any(c <= 0 for c in cs):
        return False
    at = 0
    for ci in cols:
        m = len(shapes[ci])
        v = [sum((cs[at + t] * vecs[at + t][i] for t in range(m)), zero) for i in range(n)]
        at += m
        if any(patterns[ci][i] == "*" and not (v[i] < lam * v[i + 1] and v[i + 1] < lam * v[i])
               for i in range(n - 1)):
            return False
    return True


def u_vertex_count_algebraic(n: int, lam: Algebraic) -> int:
    """The number of vertices of ``U(n, lam)`` for an algebraic ``lam``, by U's structure.

    The same search as :func:`dpfix.theory.enumeration.u_vertex_count`: sets of distinct
    face patterns of the cone of lam-bounded vectors whose block vectors are independent
    and write ``1`` with positive coefficients, each column strictly inside the cone at
    its free pairs; a set of ``k`` patterns gives ``n!/(n-k)!`` vertices. The ranks are
    taken modulo the prime ideal of :func:`prime_ideal`, which gives the ranks over
    ``Q(lam)`` exactly (every decision is a minor's vanishing); the positivity and the
    strict inequalities are decided on arb balls around the exact solution, and exactly
    in ``Q(lam)`` when a ball contains 0.

    Examples
    --------
    >>> from dpfix.numbers.algebraic import algebraic
    >>> [u_vertex_count_algebraic(n, algebraic("x^2 - x - 1", 1.6)) for n in (2, 3, 4)]
    [4, 27, 664]
    """
    search = _Search(n, lam)
    p, families, patterns = search.p, search.families, search.patterns
    one = [1] * n
    total = 0

    def dfs(start: int, basis: list[tuple[int, list[int]]], size: int, cols: list[int]
            ) -> None:
        nonlocal total
        if not any(_reduce_mod(basis, list(one), p)) and search.is_vertex(cols):
            total += perm(n, len(cols))
        if len(cols) == n:
            return
        for i in range(start, len(patterns)):
            fam = families[i]
            if size + len(fam) > n:
                continue
            nb = _extend(basis, fam, p)
            if nb is not None:
                dfs(i + 1, nb, size + len(fam), cols + [i])

    for first in range(len(patterns)):
        basis = _extend([], families[first], p)
        if basis is not None:
            dfs(first + 1, basis, len(families[first]), [first])
    return total
