"""The star at large lam: the graph geometric mechanism followed by its best remap is not
optimal over ``F_G`` on the 4-node star for any ``lam >= 2`` (docs/graphs.md, section 14):
there is no threshold.

The star ``star:4`` has the centre 0 and the leaves 1, 2, 3; the loss is the graph
distance ``d_G`` (1 between the centre and a leaf, 2 between two leaves) or its square
``d_G^2`` (``loss="distance-squared"``: the same family and intervals, other gaps,
docs/graphs.md section 14). The graph
geometric mechanism ``N`` has the amounts ``alpha = ((lam - 2), lam, lam, lam) / (lam + 1)``:
it is a mechanism exactly for ``lam >= 2``. The family of targets is

    ``z(lam) = (e, e, 1 - 3 e, e)``,  ``e = 1 / (2 lam^2)``,

almost all of the mass on the leaf 2. :func:`derive_certificate` finds, from the exact
optimal bases of the two linear programmes at one rational ``lam0``, two objects whose
entries are rational functions of ``lam``:

- a mechanism ``T(lam)`` (the solution of the rows tight at the optimum of ``F_G`` at
  ``lam0``), whose count error ``P(lam) = <W, T(lam)>`` bounds the optimum of
  ``F_G[z(lam)]`` from above wherever ``T(lam)`` is in ``F_G[z(lam)]``;
- multipliers ``(u(lam), v(lam))`` of the remap programme ``min <W, N R>`` over the
  row-stochastic ``R`` with ``(z N) R = z`` (:func:`dpfix.explore.graph_mechanisms.best_remap`),
  whose dual value ``D(lam) = sum u + z . v`` bounds the best remap from below wherever
  they are dual feasible (every reduced cost ``(N^T W)[k, j] - u_k - (z N)_k v_j >= 0``).

:func:`check_certificate` proves, by exact real root isolation of every numerator and
denominator (sympy), that on an interval every ratio row of ``T`` holds, every reduced
cost is non-negative and ``D - P > 0``. Two certificates (:data:`PIECES`) cover
``lam >= 2``: from ``lam0 = 5/2`` on ``[2, 3]``, with

    ``D - P = (lam - 1)(14 lam^4 - 26 lam^3 - 24 lam^2 + 75 lam - 36)``
    ``/ (lam^3 (lam + 1)(2 lam - 1)(3 lam - 2)(4 lam - 3))``,

and from ``lam0 = 1000`` on ``[3, inf)``, with

    ``D - P = (lam - 1)(2 lam - 3)(2 lam + 3) / (lam^2 (lam + 1)(3 lam - 2)(4 lam - 3))``.

So for every ``lam >= 2`` the best remap of the graph geometric mechanism exceeds the
optimum of ``F_G[z(lam)]`` by at least ``D - P > 0`` (:func:`prove_no_threshold`): no
threshold of ``lam`` exists beyond which the mechanism with its best remap is optimal for
every ``z``. The gap shrinks like ``1 / (3 lam^2)`` but never closes, and the targets that
show it move to the corner ``e_2`` of the simplex as ``lam`` grows.

Examples
--------
``derive_certificate()`` then ``check_certificate(cert)`` take about five seconds (the
tests run them). At ``lam = 4`` the exact LPs give the gap ``D(4) - P(4) = 33/2080``:

>>> g = exact_gap(4)
>>> g["remap"] - g["optimum"]
Fraction(33, 2080)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.explore.graph_mechanisms import (
    best_remap,
    exact_minimum,
    graph_geometric,
    loss_weights,
)
from dpfix.theory.polytopes import F

__all__ = ["STAR", "PIECES", "family_target", "StarCertificate", "derive_certificate",
           "check_certificate", "prove_no_threshold", "exact_gap"]

#: The graph: the centre 0 and the leaves 1, 2, 3.
STAR = "star:4"
_N = 4
_EDGES = ((0, 1), (0, 2), (0, 3))


def family_target(lam: Any, c: Any = Fraction(1, 2)) -> list[Any]:
    """``z(lam) = (e, e, 1 - 3 e, e)`` with ``e = c / lam^2`` (``lam`` a Fraction or a
    sympy expression).

    Examples
    --------
    >>> [str(v) for v in family_target(Fraction(3))]
    ['1/18', '1/18', '5/6', '1/18']
    """
    e = c / lam ** 2
    return [e, e, 1 - 3 * e, e]


@dataclass
class StarCertificate:
    """The rational functions of :func:`derive_certificate` (sympy, in the symbol ``lam``).

    Attributes
    ----------
    T : the 4 x 4 mechanism ``T(lam)``.
    u, v : the remap programme's multipliers (row sums, fixed point; ``v_0 = 0``).
    upper : ``P(lam) = <W, T(lam)>``.
    lower : ``D(lam) = sum u + z . v``.
    gap_bound : ``D - P``, factored.
    ratio_slacks : ``lam^w T[b, j] - T[a, j]`` for every ratio row of ``F_G``.
    reduced_costs : ``(N^T W)[k, j] - u_k - y_k v_j``, ``y = z N``.
    lam0 : the rational ``lam`` whose optimal bases gave them.
    """

    T: Any
    u: list[Any]
    v: list[Any]
    upper: Any
    lower: Any
    gap_bound: Any
    ratio_slacks: list[Any]
    reduced_costs: list[Any]
    lam0: Fraction


def _symbols() -> Any:
    import sympy

    return sympy.Symbol("lam", positive=True)


def _symbolic_mechanism(lam: Any) -> Any:
    """The graph geometric mechanism of the star as a sympy matrix in ``lam``."""
    import sympy

    D = [[0, 1, 1, 1], [1, 0, 2, 2], [1, 2, 0, 2], [1, 2, 2, 0]]
    S = sympy.Matrix(_N, _N, lambda i, m: lam ** (-D[i][m]))
    alpha = S.solve(sympy.ones(_N, 1))
    return sympy.Matrix(_N, _N, lambda i, m: sympy.cancel(S[i, m] * alpha[m])), D


def derive_certificate(lam0: Any = 1000, loss: str = "distance") -> StarCertificate:
    """The certificate from the exact optima at ``lam0`` (module docstring): the rows of
    ``F_G`` tight at cdd's optimal vertex, solved over ``Q(lam)``; the reduced costs of the
    remap programme that vanish at cdd's optimal multipliers, solved over ``Q(lam)`` with
    ``v_0 = 0`` (the multipliers are defined up to ``(u + t y, v - t)``, which changes
    neither the reduced costs nor the value)."""
    import sympy

    lam0 = Fraction(lam0)
    lam = _symbols()
    z0 = family_target(lam0)
    P0 = F(_N, lam0, z0, graph=STAR)
    W0 = loss_weights(STAR, z0, loss)
    opt = exact_minimum(P0, W0)
    x0 = list(opt.point.reshape(-1))
    tight = [r for r, (row, b) in enumerate(P0.hrep.ub)
             if sum(c * x0[k] for k, c in row.items()) == b]

    zs = family_target(lam, sympy.Rational(1, 2))
    X = sympy.symbols(f"x0:{_N * _N}")
    eqs = [sum(X[i * _N + j] for j in range(_N)) - 1 for i in range(_N)]
    eqs += [sum(zs[i] * X[i * _N + j] for i in range(_N)) - zs[j] for j in range(_N)]
    rows = []  # the order of dpfix.theory.graphs.neighbour_rows
    for j in range(_N):
        for a, b in _EDGES:
            rows.append(X[a * _N + j] - lam * X[b * _N + j])
            rows.append(X[b * _N + j] - lam * X[a * _N + j])
    (sol,) = sympy.solve(eqs + [rows[r] for r in tight], X, dict=True)
    T = sympy.Matrix(_N, _N, [sympy.factor(sympy.cancel(sol[x])) for x in X])
    power = {"distance": 1, "distance-squared": 2}[loss]
    _, Dist = _symbolic_mechanism(lam)
    W = sympy.Matrix(_N, _N, lambda i, j: zs[i] * Dist[i][j] ** power)
    upper = sympy.factor(sympy.cancel(sum(W[k] * T[k] for k in range(_N * _N))))
    slacks = [sympy.factor(sympy.cancel(-r.subs(dict(zip(X, T, strict=True))))) for r in rows]

    N0, _ = graph_geometric(STAR, lam0)
    remap = best_remap(N0, z0, W0)
    u0, v0 = remap.eq_duals[:_N], remap.eq_duals[_N:]
    y0 = np.array(z0, dtype=object) @ N0
    C0 = N0.T @ W0
    zero = [(k, j) for k in range(_N) for j in range(_N) if C0[k, j] - u0[k] - y0[k] * v0[j] == 0]
    N, _ = _symbolic_mechanism(lam)
    y = [sympy.cancel(sum(zs[i] * N[i, k] for i in range(_N))) for k in range(_N)]
    C = N.T * W
    U, V = sympy.symbols(f"u0:{_N}"), sympy.symbols(f"v0:{_N}")
    (dual,) = sympy.solve([U[k] + y[k] * V[j] - C[k, j] for k, j in zero] + [V[0]],
                          list(U) + list(V), dict=True)
    u = [sympy.factor(dual[s]) for s in U]
    v = [sympy.factor(dual[s]) for s in V]
    reduced = [sympy.factor(sympy.cancel(C[k, j] - u[k] - y[k] * v[j]))
               for k in range(_N) for j in range(_N)]
    lower = sympy.factor(sympy.cancel(sum(u) + sum(zs[j] * v[j] for j in range(_N))))
    return StarCertificate(T, u, v, upper, lower, sympy.factor(sympy.cancel(lower - upper)),
                           slacks, reduced, lam0)


def _non_negative_on(f: Any, lam: Any, start: Any, stop: Any, strict: bool) -> bool:
    """Whether the rational function ``f`` is ``>= 0`` (``> 0`` when ``strict``) on the
    closed ``[start, stop]`` (``stop=None``: ``[start, inf)``): no real root of its
    numerator or denominator strictly inside (exact isolation, sympy), the denominator
    non-zero at the ends, and the sign right at the ends and at one inner point (then on
    the whole interval, by continuity and the intermediate value theorem)."""
    import sympy

    num, den = sympy.fraction(sympy.together(f))
    if num == 0:
        return not strict
    for p in (num, den):
        if not p.free_symbols:
            continue
        for r in sympy.Poly(p, lam).real_roots():
            if r > start and (stop is None or r < stop):
                return False
    ends = [start] + ([] if stop is None else [stop])
    if any(den.subs(lam, x) == 0 for x in ends):
        return False
    inner = start + 1 if stop is None else (start + stop) / 2
    for x in [*ends, inner]:
        val = f.subs(lam, x)
        if val < 0 or (strict and val == 0):
            return False
    return True


def check_certificate(cert: StarCertificate, start: Any = 3, stop: Any = None
                      ) -> dict[str, Any]:
    """Prove the certificate on ``[start, stop]`` (``stop=None``: ``[start, inf)``):
    ``T(lam)`` in ``F_G[z(lam)]`` (its rows sum to 1 and ``z T = z`` hold identically;
    every ratio slack ``>= 0``), the remap programme's multipliers dual feasible (every
    reduced cost ``>= 0``), and ``D - P > 0``. Raises ``AssertionError`` naming the first
    failure.

    Returns ``{"from": start, "to": stop, "gap_bound": D - P}``.
    """
    import sympy

    lam = _symbols()
    a = sympy.Rational(start)
    b = None if stop is None else sympy.Rational(stop)
    zs = family_target(lam, sympy.Rational(1, 2))
    T = cert.T
    for i in range(_N):
        assert sympy.simplify(sum(T[i, j] for j in range(_N)) - 1) == 0, f"row {i} of T"
    for j in range(_N):
        assert sympy.simplify(sum(zs[i] * T[i, j] for i in range(_N)) - zs[j]) == 0, \
            f"column {j} of z T"
    where = f"[{a}, {'inf' if b is None else b}]"
    for r, f in enumerate(cert.ratio_slacks):
        assert _non_negative_on(f, lam, a, b, False), f"ratio row {r} of T fails on {where}"
    for r, f in enumerate(cert.reduced_costs):
        assert _non_negative_on(f, lam, a, b, False), f"reduced cost {r} fails on {where}"
    assert _non_negative_on(cert.gap_bound, lam, a, b, True), f"D - P > 0 fails on {where}"
    return {"from": start, "to": stop, "gap_bound": cert.gap_bound}


#: The certificates' sample points and the intervals they prove: every ``lam >= 2``.
PIECES = ((Fraction(5, 2), Fraction(2), Fraction(3)), (Fraction(1000), Fraction(3), None))


def prove_no_threshold(loss: str = "distance") -> list[dict[str, Any]]:
    """Both certificates of :data:`PIECES` derived and checked for ``loss`` (``"distance"``,
    ``d_G``, or ``"distance-squared"``, ``d_G^2``): for every ``lam >= 2`` (where the graph
    geometric mechanism of the star is a mechanism, ``alpha_0 = (lam - 2) / (lam + 1) >= 0``)
    the target ``z(lam)`` has a positive gap. Returns the rows of :func:`check_certificate`."""
    return [check_certificate(derive_certificate(lam0, loss), a, b) for lam0, a, b in PIECES]


def exact_gap(lam: Any, z: Any = None, loss: str = "distance") -> dict[str, Fraction]:
    """The exact optimum of ``F_G[z]`` for ``d_G`` on the star and the best remap of its
    graph geometric mechanism, at a rational ``lam >= 2`` (``z`` defaults to
    :func:`family_target`): a second computation, by the exact LPs alone.

    Examples
    --------
    >>> g = exact_gap(3)
    >>> g["remap"] - g["optimum"]
    Fraction(1, 42)
    """
    lam_x = Fraction(lam)
    zv = family_target(lam_x) if z is None else [Fraction(x) for x in z]
    W = loss_weights(STAR, zv, loss)
    N, _ = graph_geometric(STAR, lam_x)
    return {"optimum": exact_minimum(F(_N, lam_x, zv, graph=STAR), W).value,
            "remap": best_remap(N, zv, W).value}
