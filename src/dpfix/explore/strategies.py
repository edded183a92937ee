"""Hypothesis strategies for exact instances, polytope points and vertices, and costs.

For property tests of conjectures about the polytopes ``U``, ``F[z]``, ``R_F``,
``R_U`` (docs/math_notes.md) and their (eps, delta) forms
(:mod:`dpfix.theory.delta`). Every draw is exact (Fractions, numpy object
arrays), and every draw shrinks toward the small end: ``n`` is drawn first from
a small range, numerators and denominators are small integers, zeros are
favoured, so a failing example shrinks to the smallest ``n``, the smallest
heights and the fewest non-zero entries.

- :func:`lams`: rational ``lam = e^eps > 1`` (shrinks to 2, then 3/2, ...);
  :func:`deltas`: rational ``0 < delta < 1``;
- :func:`targets`: exact probability vectors ``z`` (shrinks to ``(1, 0, ..)``);
- :func:`scales`: the eps-scales of Definition 6 (the columns of ``Psi``);
- :func:`polytopes`, :func:`vertices_of`, :func:`points_of`: a polytope of a
  kind (``"U"``, ``"F"``, ``"RF"``, ``"RU"``, ``"U_delta"``, ``"F_delta"``,
  ``"RF_delta"``, ``"RU_delta"``) with one of its vertices or points;
- :func:`mechanisms_in_F`: exact mechanisms with fixed point ``z``;
- :func:`monge_costs`, :func:`convex_losses`: cost matrices ``c(i, j)`` (the
  count-error weights are ``W[i, j] = z_i c(i, j)``, docs/optimum_of_F.md).

Examples
--------
A property test to copy into a suite: every vertex of ``F[z]`` is a mechanism of
``U`` whose ``z``-weighted rows give back ``z`` (Section 3), shown here on at
most 20 drawn instances with ``n <= 3``:

>>> from fractions import Fraction
>>> from hypothesis import given, settings
>>> from dpfix.theory.polytopes import U
>>> from dpfix.explore.strategies import vertices_of
>>> @settings(max_examples=20, deadline=None)
... @given(vertices_of("F", n_max=3))
... def test_vertices_of_F_are_fixed_points_in_U(drawn):
...     P, V = drawn
...     assert U(P.n, P.lam).contains(V) and (P.z @ V == P.z).all()
>>> test_vertices_of_F_are_fixed_points_in_U()

When the property fails, hypothesis reports the smallest failing draw: the
least ``n``, then the least ``lam`` height and the sparsest target.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
from hypothesis import strategies as st

from dpfix.constructors.northwest import northwest_corner
from dpfix.numbers.exact import exact_lam, probability_vector
from dpfix.theory import delta as delta_forms
from dpfix.theory import polytopes
from dpfix.theory.mechanism import Mechanism
from dpfix.theory.polytopes import Polytope, check_delta, check_kind
from dpfix.theory.scales import scale

__all__ = ["KINDS", "lams", "deltas", "targets", "scales", "polytopes_of", "vertices_of",
           "points_of", "mechanisms_in_F", "monge_costs", "convex_losses"]

#: kind -> (constructor, needs z, needs delta)
KINDS: dict[str, tuple[Any, bool, bool]] = {
    "U": (polytopes.U, False, False),
    "F": (polytopes.F, True, False),
    "RF": (polytopes.RF, True, False),
    "RU": (polytopes.RU, False, False),
    "U_delta": (polytopes.U, False, True),
    "F_delta": (polytopes.F, True, True),
    "RF_delta": (delta_forms.RF_delta, True, True),
    "RU_delta": (delta_forms.RU_delta, False, True),
}


def _weight(max_weight: int, zeros: bool) -> st.SearchStrategy[int]:
    """A small non-negative integer; with ``zeros``, 0 half the time (and the shrink target)."""
    positive = st.integers(1, max_weight)
    return st.one_of(st.just(0), positive) if zeros else positive


def _ns(n: Any, n_min: int, n_max: int) -> st.SearchStrategy[int]:
    if n is None:
        if not 1 <= n_min <= n_max:
            raise ValueError(f"n_min, n_max: need 1 <= n_min <= n_max, got {n_min}, {n_max}")
        return st.integers(n_min, n_max)
    if isinstance(n, st.SearchStrategy):
        return n
    return st.just(int(n))


def _given_or(value: Any, strategy: st.SearchStrategy, convert: Any) -> st.SearchStrategy:
    if value is None:
        return strategy
    if isinstance(value, st.SearchStrategy):
        return value
    return st.just(convert(value))


def lams(*, max_denominator: int = 4, max_ratio: int = 5) -> st.SearchStrategy[Fraction]:
    """Rational ``lam = p/q > 1``, ``q <= max_denominator``, ``p <= max_ratio * q``.

    Shrinks to ``2`` (``q = 1``, ``p = 2``), then to small heights.

    Examples
    --------
    >>> from hypothesis import find, settings
    >>> fresh = settings(database=None, derandomize=True)  # the same search on every run
    >>> find(lams(), lambda lam: True, settings=fresh)
    Fraction(2, 1)
    >>> find(lams(), lambda lam: lam < 2, settings=fresh)
    Fraction(3, 2)
    """
    if max_denominator < 1 or max_ratio < 2:
        raise ValueError("lams: need max_denominator >= 1 and max_ratio >= 2")

    @st.composite
    def draw_lam(draw: Any) -> Fraction:
        q = draw(st.integers(1, max_denominator))
        k = draw(st.integers(1, (max_ratio - 1) * q))  # p = q + k: q shrinks with k kept
        return Fraction(q + k, q)
    return draw_lam()


def deltas(*, max_denominator: int = 10) -> st.SearchStrategy[Fraction]:
    """Rational ``delta = p/q`` with ``0 < delta < 1``, ``q <= max_denominator``
    (shrinks to ``1/2``).

    Examples
    --------
    >>> from hypothesis import find, settings
    >>> fresh = settings(database=None, derandomize=True)  # the same search on every run
    >>> find(deltas(), lambda d: True, settings=fresh)
    Fraction(1, 2)
    >>> find(deltas(), lambda d: d < Fraction(1, 5), settings=fresh)
    Fraction(1, 6)
    """
    @st.composite
    def draw_delta(draw: Any) -> Fraction:
        q = draw(st.integers(2, max_denominator))
        return Fraction(draw(st.integers(1, q - 1)), q)
    return draw_delta()


def targets(n: Any = None, *, n_min: int = 2, n_max: int = 5, max_weight: int = 6,
            zeros: bool = True) -> st.SearchStrategy[np.ndarray]:
    """Exact targets ``z = w / sum(w)`` for small integer weights ``w`` (not all 0).

    Parameters
    ----------
    n : int or strategy, optional
        The length; by default drawn from ``n_min .. n_max`` (first, so it shrinks first).
    max_weight : int
        The largest weight, so the heights of the entries stay small.
    zeros : bool
        Allow zero entries (then favoured: half the weights are 0).

    Returns
    -------
    strategy of numpy.ndarray
        Object arrays of Fractions summing to 1; shrinks to ``(0, .., 0, 1)``-like
        targets at ``n = n_min``.

    Examples
    --------
    >>> from hypothesis import find, settings
    >>> fresh = settings(database=None, derandomize=True)  # the same search on every run
    >>> z = find(targets(), lambda z: True, settings=fresh)
    >>> len(z), sum(z), sorted(z)
    (2, Fraction(1, 1), [Fraction(0, 1), Fraction(1, 1)])
    """
    w = _weight(max_weight, zeros)

    @st.composite
    def draw_z(draw: Any) -> np.ndarray:
        size = draw(_ns(n, n_min, n_max))
        ws = draw(st.lists(w, min_size=size, max_size=size).filter(any))
        total = sum(ws)
        return np.array([Fraction(x, total) for x in ws], dtype=object)
    return draw_z()


def scales(n: Any = None, lam: Any = None, *, n_min: int = 2, n_max: int = 5
           ) -> st.SearchStrategy[np.ndarray]:
    """The eps-scales (Definition 6; :func:`dpfix.theory.scales.scale`) of a random pattern.

    ``n`` and ``lam`` are values, strategies, or None (drawn: ``n`` from
    ``n_min .. n_max``, ``lam`` by :func:`lams`). Shrinks to the all-``-1`` pattern
    (the decreasing scale).

    Examples
    --------
    >>> from hypothesis import find, settings
    >>> fresh = settings(database=None, derandomize=True)  # the same search on every run
    >>> find(scales(3, 2), lambda s: True, settings=fresh).tolist()
    [Fraction(4, 7), Fraction(2, 7), Fraction(1, 7)]
    """
    @st.composite
    def draw_scale(draw: Any) -> np.ndarray:
        size = draw(_ns(n, n_min, n_max))
        lam_x = draw(_given_or(lam, lams(), exact_lam))
        pattern = draw(st.lists(st.sampled_from((-1, 1)), min_size=size - 1, max_size=size - 1))
        return scale(pattern, lam_x)
    return draw_scale()


@lru_cache(maxsize=512)
def _polytope(kind: str, n: int, lam: Fraction, z: tuple | None, delta: Fraction | None
              ) -> Polytope:
    make, _, _ = KINDS[kind]
    args: list[Any] = [n, lam] + ([list(z)] if z is not None else [])
    return make(*args, *([delta] if delta is not None else []))




def polytopes_of(kind: str, *, n: Any = None, lam: Any = None, z: Any = None, delta: Any = None,
                 n_min: int = 2, n_max: int | None = None) -> st.SearchStrategy[Polytope]:
    """Polytopes of one kind (:data:`KINDS`) on drawn exact instances.

    Parameters
    ----------
    kind : ``"U"``, ``"F"``, ``"RF"``, ``"RU"`` or a delta form ``"U_delta"`` ..
    n, lam, z, delta : values or strategies; None draws them (``n`` first, from
        ``n_min .. n_max``; ``lam`` by :func:`lams`; ``z`` by :func:`targets` of
        length ``n``; ``delta`` by :func:`deltas`). A given ``z`` fixes ``n``.
    n_max : the largest ``n`` drawn: 3 by default (2 for the delta forms), where
        every vertex set is enumerated in well under a second.

    Examples
    --------
    >>> from hypothesis import find, settings
    >>> fresh = settings(database=None, derandomize=True)  # the same search on every run
    >>> find(polytopes_of("F"), lambda P: True, settings=fresh)
    F(n=2, lam=2, z=[0, 1])
    """
    kind = check_kind(kind, KINDS)
    _, needs_z, needs_delta = KINDS[kind]
    top = n_max if n_max is not None else (2 if needs_delta else 3)
    given_z = None if z is None or isinstance(z, st.SearchStrategy) else \
        probability_vector(z, exact=True)

    @st.composite
    def draw_polytope(draw: Any) -> Polytope:
        if given_z is not None:
            size = len(given_z)
        else:
            size = draw(_ns(n, n_min, top))
        lam_x = draw(_given_or(lam, lams(), exact_lam))
        zv = None
        if needs_z:
            zv = given_z if given_z is not None else draw(
                z if isinstance(z, st.SearchStrategy) else targets(size))
        d = draw(_given_or(delta, deltas(), check_delta)) if needs_delta else None
        return _polytope(kind, size, lam_x, None if zv is None else tuple(zv), d)
    return draw_polytope()


def vertices_of(kind: str, **instance: Any) -> st.SearchStrategy[tuple[Polytope, np.ndarray]]:
    """``(P, V)``: a polytope of ``kind`` (as :func:`polytopes_of`, same keywords) and
    one of its exact vertices (shrinks to the first in
    :meth:`~dpfix.theory.polytopes.Polytope.vertices` order).

    Examples
    --------
    >>> from hypothesis import find, settings
    >>> fresh = settings(database=None, derandomize=True)  # the same search on every run
    >>> P, V = find(vertices_of("U", n=2, lam=2), lambda drawn: True, settings=fresh)
    >>> P.is_extreme(V), V.tolist()
    (True, [[Fraction(0, 1), Fraction(1, 1)], [Fraction(0, 1), Fraction(1, 1)]])
    """
    @st.composite
    def draw_vertex(draw: Any) -> tuple[Polytope, np.ndarray]:
        P = draw(polytopes_of(kind, **instance))
        vs = P.vertices()
        return P, vs[draw(st.integers(0, len(vs) - 1))].copy()
    return draw_vertex()


def points_of(kind: str, *, max_vertices: int = 3, max_weight: int = 4, **instance: Any
              ) -> st.SearchStrategy[tuple[Polytope, np.ndarray]]:
    """``(P, X)``: a polytope of ``kind`` (as :func:`polytopes_of`) and an exact point of
    it, a convex combination with small integer weights of up to ``max_vertices``
    of its vertices (shrinks to one vertex).

    Examples
    --------
    >>> from hypothesis import given, settings
    >>> @settings(max_examples=10, deadline=None)
    ... @given(points_of("RF", n=2))
    ... def test_points_are_in(drawn):
    ...     P, X = drawn
    ...     assert P.contains(X)
    >>> test_points_are_in()
    """
    @st.composite
    def draw_point(draw: Any) -> tuple[Polytope, np.ndarray]:
        P = draw(polytopes_of(kind, **instance))
        vs = P.vertices()
        picks = draw(st.lists(st.tuples(st.integers(0, len(vs) - 1),
                                        st.integers(1, max_weight)),
                              min_size=1, max_size=max_vertices))
        total = sum(w for _, w in picks)
        X = sum((Fraction(w, total) * vs[i] for i, w in picks[1:]),
                Fraction(picks[0][1], total) * vs[picks[0][0]])
        return P, np.asarray(X, dtype=object)
    return draw_point()


def mechanisms_in_F(*, how: Any = ("northwest", "vertex", "combination"),
                    **instance: Any) -> st.SearchStrategy[Mechanism]:
    """Exact mechanisms in ``F[z]`` (their ``fixed_point`` is ``z``, their ``lam`` the
    instance's): the northwest corner (Algorithm 1), a vertex of F, or a convex
    combination of vertices (:func:`points_of`), as ``how`` allows (a name or a
    tuple of names; shrinks to the northwest corner). Keywords as
    :func:`polytopes_of` (``n``, ``lam``, ``z``, ``n_max``).

    Examples
    --------
    >>> from hypothesis import find, settings
    >>> fresh = settings(database=None, derandomize=True)  # the same search on every run
    >>> M = find(mechanisms_in_F(z=["1/2", "1/2"], lam=3), lambda M: True, settings=fresh)
    >>> M.constructor, M.matrix.tolist()
    ('northwest', [[Fraction(3, 4), Fraction(1, 4)], [Fraction(1, 4), Fraction(3, 4)]])
    """
    ways = (how,) if isinstance(how, str) else tuple(how)
    bad = [w for w in ways if w not in ("northwest", "vertex", "combination")]
    if bad or not ways:
        raise ValueError(f"how: 'northwest', 'vertex' or 'combination', got {how!r}")

    @st.composite
    def draw_mechanism(draw: Any) -> Mechanism:
        way = draw(st.sampled_from(ways))
        P = draw(polytopes_of("F", **instance))
        if way == "northwest":
            return northwest_corner(P.z, lam=P.lam)
        if way == "vertex":
            vs = P.vertices()
            T = vs[draw(st.integers(0, len(vs) - 1))]
        else:
            _, T = draw(points_of("F", n=P.n, lam=P.lam, z=P.z))
        return Mechanism.from_matrix(T, lam=P.lam, fixed_point=P.z.copy(), constructor=way)
    return draw_mechanism()


def monge_costs(n: Any = None, *, n_min: int = 2, n_max: int = 5, max_weight: int = 3
                ) -> st.SearchStrategy[np.ndarray]:
    """Exact Monge costs ``c`` (``n x n``): every mixed second difference
    ``c(k+1, l+1) - c(k+1, l) - c(k, l+1) + c(k, l) <= 0`` (docs/optimum_of_F.md
    section 1), non-negative.

    ``c(i, j) = a_i + b_j + sum_(k < i, l >= j) w_kl`` with small integers
    ``a, b`` and ``w >= 0`` (every Monge matrix has this form), shifted so its
    least entry is 0. Shrinks to the zero cost. The weights of the count error
    are ``W = z[:, None] * c``.

    Examples
    --------
    >>> from hypothesis import find, settings
    >>> fresh = settings(database=None, derandomize=True)  # the same search on every run
    >>> find(monge_costs(), lambda c: c[1, 0] > c[0, 0], settings=fresh).tolist()
    [[Fraction(0, 1), Fraction(0, 1)], [Fraction(1, 1), Fraction(1, 1)]]
    """
    w = _weight(max_weight, True)

    @st.composite
    def draw_cost(draw: Any) -> np.ndarray:
        size = draw(_ns(n, n_min, n_max))
        a = draw(st.lists(w, min_size=size, max_size=size))
        b = draw(st.lists(w, min_size=size, max_size=size))
        ws = draw(st.lists(st.lists(w, min_size=size, max_size=size),
                           min_size=size - 1, max_size=size - 1))
        c = [[a[i] + b[j] + sum(ws[k][m] for k in range(i) for m in range(j, size))
              for j in range(size)] for i in range(size)]
        low = min(min(row) for row in c)
        return np.array([[Fraction(v - low) for v in row] for row in c], dtype=object)
    return draw_cost()


def _convex_from(left: list[int], right: list[int], at: int, size: int) -> list[int]:
    """``f`` on ``0 .. size-1``, 0 at ``at``, growing outward by the sorted increments."""
    f = [0] * size
    for k, d in enumerate(sorted(right)):
        f[at + 1 + k] = f[at + k] + d
    for k, d in enumerate(sorted(left)):
        f[at - 1 - k] = f[at - k] + d
    return f


def convex_losses(n: Any = None, *, n_min: int = 2, n_max: int = 5, max_step: int = 4,
                  symmetric: bool = False, per_row: bool = False
                  ) -> st.SearchStrategy[np.ndarray]:
    """Exact convex losses as ``n x n`` costs ``c(i, j) = f(i - j)`` with ``f`` convex on
    the integers, ``f(0) = 0``, ``f >= 0`` (so ``c`` is Monge; docs/optimum_of_F.md).

    Parameters
    ----------
    symmetric : bool
        ``f(d) = f(|d|)``.
    per_row : bool
        Instead, each row its own convex function of ``j`` with its minimum on the
        diagonal plus a row constant in ``0 .. 3``: row-wise convex and concentrating
        weights ``W``, as :func:`dpfix.constructors.unfixed.check_weights` accepts
        them (not Monge in general).
    max_step : int
        The largest increment ``f(d+1) - f(d)``.

    Shrinks to the zero loss.

    Examples
    --------
    >>> from hypothesis import find, settings
    >>> fresh = settings(database=None, derandomize=True)  # the same search on every run
    >>> find(convex_losses(3, symmetric=True), lambda c: c[0, 2] > 1, settings=fresh).tolist()
    [[Fraction(0, 1), Fraction(0, 1), Fraction(2, 1)], \
[Fraction(0, 1), Fraction(0, 1), Fraction(0, 1)], [Fraction(2, 1), Fraction(0, 1), Fraction(0, 1)]]
    """
    step = _weight(max_step, True)

    def steps(k: int) -> st.SearchStrategy[list[int]]:
        return st.lists(step, min_size=k, max_size=k)

    @st.composite
    def draw_loss(draw: Any) -> np.ndarray:
        size = draw(_ns(n, n_min, n_max))
        if per_row:
            rows = []
            for i in range(size):
                f = _convex_from(draw(steps(i)), draw(steps(size - 1 - i)), i, size)
                base = draw(st.integers(0, 3))
                rows.append([Fraction(base + v) for v in f])
            return np.array(rows, dtype=object)
        right = draw(steps(size - 1))
        left = right if symmetric else draw(steps(size - 1))
        f = _convex_from(left, right, size - 1, 2 * size - 1)  # f(d) at index d + size - 1
        return np.array([[Fraction(f[i - j + size - 1]) for j in range(size)]
                         for i in range(size)], dtype=object)
    return draw_loss()
