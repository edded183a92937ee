"""Mechanisms, losses and exact optima on a neighbour graph (docs/graphs.md, sections 9
to 11): exact linear programs with their dual certificates (:func:`exact_minimum`), the
graph distances and losses (:func:`distance_matrix`, :func:`loss_weights`), the best
``z``-preserving remap of a mechanism (:func:`best_remap`), randomized response, the
graph geometric mechanism and staircase patterns, and on the grid the product of the
path's northwest corners (:func:`product_northwest`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import networkx as nx
import numpy as np

from dpfix.numbers.exact import exact_array, exact_lam, nullspace, probability_vector, to_fraction
from dpfix.numbers.exact_lp import certificate_holds, exact_lp
from dpfix.theory.graphs import as_graph, exact_power
from dpfix.theory.polytopes import Polytope

__all__ = ["LPCertificate", "exact_minimum", "distance_matrix", "loss_weights", "best_remap",
           "randomized_response", "graph_geometric", "is_staircase", "product_northwest",
           "product_target", "separable_weights"]

ZERO, ONE = Fraction(0), Fraction(1)


@dataclass
class LPCertificate:
    """An exact optimum of ``min <C, X>`` over a polytope with its dual certificate.

    ``eq_duals`` ``u`` (free) and ``ub_duals`` ``v >= 0`` satisfy
    ``C = A_eq^T u - A_ub^T v``, so every feasible ``X`` has
    ``<C, X> >= b_eq . u - b_ub . v`` (weak duality); equality with ``<C, point>``
    certifies the optimum. :meth:`check` verifies all of it exactly.
    """

    value: Fraction
    point: np.ndarray
    eq_duals: list[Fraction]
    ub_duals: list[Fraction]
    details: dict[str, Any] = field(default_factory=dict)

    def check(self, P: Polytope, C: Any) -> bool:
        """Whether the certificate is valid for ``min <C, X>`` over ``P`` (exactly:
        :func:`dpfix.numbers.exact_lp.certificate_holds`)."""
        c = [to_fraction(v, "C") for v in np.array(C, dtype=object).reshape(-1)]
        if self.point.shape != P.shape:
            return False
        h = P.hrep
        return certificate_holds(c, h.ub, h.eq, list(self.point.reshape(-1)), self.eq_duals,
                                 [-v for v in self.ub_duals], self.value)


def exact_minimum(P: Polytope, C: Any) -> LPCertificate:
    """``min <C, X>`` over ``P`` exactly (cdd.gmp's simplex), with a checked certificate.

    Raises
    ------
    RuntimeError
        cdd did not end optimal, or its duals do not certify the optimum.

    Examples
    --------
    >>> from dpfix.theory.polytopes import U
    >>> P = U(2, 2)
    >>> opt = exact_minimum(P, [[0, 1], [1, 0]])
    >>> opt.value, opt.check(P, [[0, 1], [1, 0]])
    (Fraction(2, 3), True)
    """
    c = [to_fraction(v, "C") for v in np.array(C, dtype=object).reshape(-1)]
    h = P.hrep
    lp = exact_lp(c, h.ub, h.eq, certify=True, who=repr(P))
    return LPCertificate(lp.optimum, np.array(lp.primal, dtype=object).reshape(P.shape),
                         lp.eq_dual, [-v for v in lp.ub_dual])


# ------------------------------------------------------------------ losses and mechanisms
def distance_matrix(G: Any) -> np.ndarray:
    """The graph distances ``d_G(i, j)`` (edge weights summed along shortest paths),
    exact.

    Examples
    --------
    >>> distance_matrix("cycle:4")[0].tolist()
    [Fraction(0, 1), Fraction(1, 1), Fraction(2, 1), Fraction(1, 1)]
    """
    H = as_graph(G)
    n = H.number_of_nodes()
    d = dict(nx.all_pairs_dijkstra_path_length(H, weight="weight"))
    return np.array([[Fraction(d[i][j]) for j in range(n)] for i in range(n)], dtype=object)


def _coordinates(n: int, cols: int) -> list[tuple[int, int]]:
    return [(v // cols, v % cols) for v in range(n)]


def loss_weights(G: Any, z: Any, loss: str) -> np.ndarray:
    """The weights ``W[i, j] = z_i c(i, j)`` of a loss on a graph.

    ``loss``: ``"distance"`` (``d_G``), ``"distance-squared"`` (``d_G^2``),
    ``"zero-one"`` (``1[i != j]``), ``"abs"`` (``|i - j|``), or for the named grids
    ``"l1:B"`` (``|r - r'| + |c - c'|`` for node ``r B + c``).

    Examples
    --------
    >>> loss_weights("complete:3", ["1/3"] * 3, "abs")[0].tolist()
    [Fraction(0, 1), Fraction(1, 3), Fraction(2, 3)]
    """
    zv = [to_fraction(v, "z") for v in z]
    n = len(zv)
    if loss in ("distance", "distance-squared"):
        D = distance_matrix(G)
        c = D if loss == "distance" else D * D
    elif loss == "zero-one":
        c = np.array([[ONE if i != j else ZERO for j in range(n)] for i in range(n)],
                     dtype=object)
    elif loss == "abs":
        c = np.array([[Fraction(abs(i - j)) for j in range(n)] for i in range(n)], dtype=object)
    elif isinstance(loss, str) and loss.startswith("l1:"):
        if not loss[3:].isdigit() or int(loss[3:]) < 1:
            raise ValueError(f"loss: l1:B needs B, the grid's number of columns, an integer "
                             f">= 1, got {loss!r}")
        xy = _coordinates(n, int(loss[3:]))
        c = np.array([[Fraction(abs(a[0] - b[0]) + abs(a[1] - b[1])) for b in xy]
                      for a in xy], dtype=object)
    else:
        raise ValueError(f"loss: distance, distance-squared, zero-one, abs or l1:B, got {loss!r}")
    return np.array([[zv[i] * c[i, j] for j in range(n)] for i in range(n)], dtype=object)


def best_remap(N: Any, z: Any, W: Any) -> LPCertificate:
    """The best ``z``-preserving remap of a mechanism ``N``: ``min <W, N R>`` over the
    row-stochastic ``R`` with ``(z N) R = z``, exactly (the point is ``R``).

    ``N R`` is then eps-DP for the graph of ``N`` (post-processing) and has the fixed
    point ``z``.

    Examples
    --------
    >>> N = randomized_response(2, 2)
    >>> opt = best_remap(N, ["1/2", "1/2"], [[0, "1/2"], ["1/2", 0]])
    >>> opt.value, opt.point.tolist()
    (Fraction(1, 3), [[Fraction(1, 1), Fraction(0, 1)], [Fraction(0, 1), Fraction(1, 1)]])
    """
    Nm = exact_array(N, "N", ndim=2)
    Wm = exact_array(W, "W", ndim=2)
    zv = np.array([to_fraction(v, "z") for v in z], dtype=object)
    n = Nm.shape[0]
    y = zv @ Nm
    ub = [({v: -ONE}, ZERO) for v in range(n * n)]
    eq = [({k * n + j: ONE for j in range(n)}, ONE) for k in range(n)]
    eq += [({k * n + j: y[k] for k in range(n) if y[k] != 0}, zv[j]) for j in range(n)]
    P = Polytope("remap", n, Fraction(2), zv, (n, n), ub, eq)
    C = Nm.T @ Wm  # <W, N R> = <N^T W, R>
    return exact_minimum(P, C)


def randomized_response(n: int, lam: Any) -> np.ndarray:
    """Randomized response over ``n`` values: ``lam / (lam + n - 1)`` on the diagonal,
    ``1 / (lam + n - 1)`` elsewhere; eps-DP for the complete graph.

    Examples
    --------
    >>> randomized_response(3, 2)[0].tolist()
    [Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)]
    """
    lam_x = exact_lam(lam)
    d = lam_x + n - 1
    return np.array([[lam_x / d if i == j else ONE / d for j in range(n)] for i in range(n)],
                    dtype=object)


def graph_geometric(G: Any, lam: Any) -> tuple[np.ndarray, np.ndarray]:
    """The graph geometric mechanism ``Sigma_G diag(alpha)``: ``Sigma_G[i, m] =
    lam^(-d_G(i, m))``, ``alpha`` solving ``Sigma_G alpha = 1``; returns the matrix and
    ``alpha``. It is a mechanism (in ``U_G``) exactly when ``alpha >= 0``.

    Examples
    --------
    >>> T, alpha = graph_geometric("path:3", 2)
    >>> alpha.tolist(), T[1].tolist()
    ([Fraction(2, 3), Fraction(1, 3), Fraction(2, 3)], [Fraction(1, 3), Fraction(1, 3), \
Fraction(1, 3)])
    >>> graph_geometric("star:4", "3/2")[1][0] < 0   # the centre's amount
    True
    """
    D = distance_matrix(G)
    lam_x = exact_lam(lam)
    n = D.shape[0]
    S = np.array([[exact_power(lam_x, -D[i, m]) for m in range(n)] for i in range(n)],
                 dtype=object)
    aug = np.concatenate([S, -np.ones((n, 1), dtype=object) * ONE], axis=1)
    ns = nullspace(aug)
    v = ns[:, 0]
    alpha = v[:-1] / v[-1]
    return S * alpha[None, :], alpha


def is_staircase(T: Any, lam: Any) -> bool:
    """Whether every column of ``T`` is zero or takes at most two values, ``a`` and
    ``lam a`` (Kairouz, Oh and Viswanath's staircase patterns, up to scale).

    Examples
    --------
    >>> is_staircase(randomized_response(3, 2), 2), is_staircase([[1, 0], [0, 1]], 2)
    (True, False)
    """
    lam_x = exact_lam(lam)
    for col in np.array(T, dtype=object).T:
        values = sorted(set(col))
        if values == [ZERO]:
            continue
        if len(values) > 2 or values[0] <= 0 or (len(values) == 2
                                                 and values[1] != lam_x * values[0]):
            return False
    return True


def product_northwest(x: Any, y: Any, lam: Any) -> np.ndarray:
    """The product ``T_x (x) T_y`` of the path's northwest corners for the targets ``x``
    (on ``0..a-1``) and ``y`` (on ``0..b-1``): node ``r b + c`` of ``grid:axb``. A move of
    one individual changes one coordinate, so each edge of the grid costs one factor
    ``lam``: the product is in ``F_grid`` for the product target ``x (x) y`` (Theorem G,
    docs/graphs.md).

    Examples
    --------
    >>> T = product_northwest(["1/2", "1/2"], ["1/2", "1/2"], 2)
    >>> T[0].tolist()
    [Fraction(4, 9), Fraction(2, 9), Fraction(2, 9), Fraction(1, 9)]
    """
    from dpfix.constructors import northwest_corner

    lam_x = exact_lam(lam)
    Ta = exact_array(northwest_corner(list(x), lam=lam_x).matrix, "T_x", ndim=2)
    Tb = exact_array(northwest_corner(list(y), lam=lam_x).matrix, "T_y", ndim=2)
    return np.kron(Ta, Tb)


def product_target(*marginals: Any) -> np.ndarray:
    """``z[v] = x^1_(v_1) ... x^d_(v_d)``: the product target of the marginals on the grid
    ``n_1 x ... x n_d``, node ``v`` in C order (for two, ``z[r b + c] = x_r y_c`` on
    ``grid:axb``).

    Examples
    --------
    >>> product_target(["1/2", "1/2"], ["1/3", "2/3"]).tolist()
    [Fraction(1, 6), Fraction(1, 3), Fraction(1, 6), Fraction(1, 3)]
    >>> product_target(["1/2", "1/2"], ["1/3", "2/3"], [1, 0]).tolist()[:4]
    [Fraction(1, 6), Fraction(0, 1), Fraction(1, 3), Fraction(0, 1)]
    """
    xs = [probability_vector(x, exact=True, name=f"marginals[{k}]")
          for k, x in enumerate(marginals)]
    if not xs:
        raise ValueError("marginals: at least one distribution")
    return np.array([math.prod(p) for p in itertools.product(*xs)], dtype=object)


def separable_weights(x: Any, y: Any, c1: Any, c2: Any) -> np.ndarray:
    """``W[v, v'] = z_v (c1(r, r') + c2(c, c'))`` on the grid ``a x b`` (``v = r b + c``),
    ``z`` the product target.

    Examples
    --------
    >>> c = [[0, 1], [1, 0]]
    >>> separable_weights(["1/2", "1/2"], ["1/2", "1/2"], c, c)[0].tolist()
    [Fraction(0, 1), Fraction(1, 4), Fraction(1, 4), Fraction(1, 2)]
    """
    z = product_target(x, y)
    C1, C2 = exact_array(c1, "c1", ndim=2), exact_array(c2, "c2", ndim=2)
    a, b = C1.shape[0], C2.shape[0]
    return np.array([[z[v] * (C1[v // b, u // b] + C2[v % b, u % b]) for u in range(a * b)]
                     for v in range(a * b)], dtype=object)
