"""Theorem G on grids of any dimension (docs/graphs.md section 11): for a product target
and a separable Monge loss, the product of the paths' northwest corners is optimal over
``F_grid`` on ``P_(n_1) x ... x P_(n_d)``, and the exact checks that can fail.

- :func:`grid_graph`, :func:`product_target`, :func:`product_of_northwest_corners`,
  :func:`separable_cost`: the objects of the theorem for ``d`` count columns (states
  flattened in C order, as in docs/joint.md section 9);
- :func:`grid_optimum`: the exact optimum over ``F_grid[z]``, by cdd's exact simplex on
  the primal (``solver="primal"``, the ``N^2`` variables of the mechanism) or by column
  generation on the dual (``solver="dual"``, ``2N`` variables, the cone of ``G``-private
  columns as separation oracle, :func:`graph_cone_minimum`);
- :func:`product_dual`: the dual point of the proof, assembled from the paths' northwest
  duals (Lemma C of docs/optimum_of_F.md), and :func:`infeasible_columns`, which checks
  it against the grid's cone by exact LPs;
- :func:`theorem_g_check`: one instance, every number exact, in a :class:`GridCheck`;
- :func:`failure_cases`: the instances where a hypothesis of the theorem is dropped (a
  loss that is not separable, a separable loss that is not Monge, a target that is not a
  product) and the statement fails, exactly.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import networkx as nx
import numpy as np

from dpfix.certify import exact_optimum, northwest_dual
from dpfix.constructors import northwest_corner
from dpfix.constructors.joint import joint_edges
from dpfix.numbers.exact import exact_array, exact_lam, probability_vector
from dpfix.numbers.exact_lp import exact_lp
from dpfix.theory.polytopes import F

from .graph_mechanisms import exact_minimum, product_target

__all__ = ["GridCheck", "grid_graph", "product_target", "product_of_northwest_corners",
           "separable_cost", "is_monge", "graph_cone_minimum", "grid_optimum",
           "product_dual", "infeasible_columns", "path_optimum", "theorem_g_check",
           "failure_cases", "failure_table", "GRID_SOLVERS", "MAX_GRID_STATES"]

ZERO, ONE = Fraction(0), Fraction(1)

#: How :func:`grid_optimum` solves the LP over ``F_grid[z]``.
GRID_SOLVERS = ("primal", "dual")

#: The largest number of states ``n_1 ... n_d`` :func:`grid_graph` builds: the exact LPs
#: grow as ``N^2`` (primal) and ``N`` per column (dual); ``4 x 4 x 4`` is far beyond them.
MAX_GRID_STATES = 64


def _shape(shape: Any) -> tuple[int, ...]:
    try:
        dims = tuple(int(n) for n in shape)
    except (TypeError, ValueError):
        raise ValueError(f"shape: a tuple of sizes such as (2, 2, 3), got {shape!r}") from None
    if not dims or min(dims) < 1 or math.prod(dims) < 2:
        raise ValueError(f"shape: every size at least 1 and at least 2 states, got {dims}")
    if math.prod(dims) > MAX_GRID_STATES:
        raise ValueError(f"shape: {'x'.join(map(str, dims))} has {math.prod(dims)} states; "
                         f"the exact checks take at most {MAX_GRID_STATES}")
    return dims


def grid_graph(shape: Any) -> nx.Graph:
    """The grid ``P_(n_1) x ... x P_(n_d)`` (``shape = (n_1, .., n_d)``): states flattened
    in C order, neighbours when one coordinate changes by one (unit ``cell``,
    :func:`dpfix.constructors.joint.joint_edges`); labelled ``grid:n_1x..xn_d``.

    Examples
    --------
    >>> G = grid_graph((2, 2, 2))
    >>> G.graph["label"], G.number_of_edges(), sorted(G[0])
    ('grid:2x2x2', 12, [1, 2, 4])
    """
    dims = _shape(shape)
    G = nx.Graph(label="grid:" + "x".join(map(str, dims)))
    G.add_nodes_from(range(math.prod(dims)))
    G.add_edges_from((int(s), int(t)) for s, t in joint_edges(dims, "cell"))
    return G


def _marginals(marginals: Any) -> list[np.ndarray]:
    xs = [probability_vector(x, exact=True, name=f"marginals[{k}]")
          for k, x in enumerate(marginals)]
    if not xs:
        raise ValueError("marginals: at least one distribution")
    return xs


def product_of_northwest_corners(marginals: Any, lam: Any) -> np.ndarray:
    """``T_(x^1) (x) ... (x) T_(x^d)``: the Kronecker product of the paths' northwest
    corners (:func:`dpfix.constructors.northwest_corner`), in ``F_grid`` for the product
    target (Theorem G, docs/graphs.md; for two marginals
    :func:`dpfix.explore.graph_mechanisms.product_northwest`).

    Examples
    --------
    >>> T = product_of_northwest_corners([["1/2", "1/2"]] * 3, 2)
    >>> T[0, 0], sum(T[0])
    (Fraction(8, 27), Fraction(1, 1))
    """
    lam_x = exact_lam(lam)
    T = np.array([[ONE]], dtype=object)
    for x in _marginals(marginals):
        T = np.kron(T, exact_array(northwest_corner(list(x), lam=lam_x).matrix, "T", ndim=2))
    return T


def _costs(costs: Any, dims: tuple[int, ...]) -> list[np.ndarray]:
    cs = [exact_array(c, f"costs[{k}]", ndim=2) for k, c in enumerate(costs)]
    if tuple(c.shape for c in cs) != tuple((n, n) for n in dims):
        raise ValueError(f"costs: one n x n matrix per coordinate of the shape {dims}, got "
                         f"{[c.shape for c in cs]}")
    return cs


def separable_cost(costs: Any) -> np.ndarray:
    """``c(v, v') = c_1(v_1, v'_1) + ... + c_d(v_d, v'_d)`` on the grid of the costs'
    sizes (states in C order).

    Examples
    --------
    >>> c = [[0, 1], [1, 0]]
    >>> separable_cost([c, c, c])[0].tolist()
    [Fraction(0, 1), Fraction(1, 1), Fraction(1, 1), Fraction(2, 1), Fraction(1, 1), \
Fraction(2, 1), Fraction(2, 1), Fraction(3, 1)]
    """
    cs = [exact_array(c, f"costs[{k}]", ndim=2) for k, c in enumerate(costs)]
    states = list(itertools.product(*[range(c.shape[0]) for c in cs]))
    return np.array([[sum((c[a, b] for c, a, b in zip(cs, s, t, strict=True)), ZERO)
                      for t in states] for s in states], dtype=object)


def is_monge(c: Any) -> bool:
    """Whether every mixed second difference ``c(k+1, l+1) - c(k+1, l) - c(k, l+1) +
    c(k, l)`` is ``<= 0`` (docs/optimum_of_F.md section 1).

    Examples
    --------
    >>> is_monge([[0, 1, 2], [1, 0, 1], [2, 1, 0]]), is_monge([[0, 1, 1], [1, 0, 1], [1, 1, 0]])
    (True, False)
    """
    C = exact_array(c, "c", ndim=2)
    return all(C[k + 1, l + 1] - C[k + 1, l] - C[k, l + 1] + C[k, l] <= 0
               for k in range(C.shape[0] - 1) for l in range(C.shape[1] - 1))


def _cone_rows(G: nx.Graph, lam: Fraction) -> list[tuple[dict[int, Fraction], Fraction]]:
    return [({a: ONE, b: -lam}, ZERO) for u, v in G.edges for a, b in ((u, v), (v, u))]


def graph_cone_minimum(g: Any, G: nx.Graph, lam: Any,
                       rows: list | None = None) -> tuple[Fraction, list[Fraction]]:
    """``min g . t`` over the columns ``t`` of the cone ``C_G`` (``t_u <= lam t_v`` on
    every edge, both ways; docs/graphs.md section 2) with ``sum t = 1``, by cdd's exact
    simplex: ``g . t >= 0`` on all of ``C_G`` iff the minimum is ``>= 0``. Returns the
    minimum and a minimising ``t``.

    Examples
    --------
    >>> graph_cone_minimum([1, -1], grid_graph((2,)), 2)
    (Fraction(-1, 3), [Fraction(1, 3), Fraction(2, 3)])
    """
    lam_x = exact_lam(lam)
    n = G.number_of_nodes()
    lp = exact_lp([exact_array(g, "g", ndim=1)[i] for i in range(n)],
                  _cone_rows(G, lam_x) if rows is None else rows,
                  [({i: ONE for i in range(n)}, ONE)], who="graph_cone_minimum")
    return lp.optimum, lp.primal


def _dual_lp(z: np.ndarray, W: np.ndarray, G: nx.Graph, lam: Fraction, max_rounds: int
             ) -> tuple[Fraction, np.ndarray, np.ndarray, int]:
    """Column generation on ``max sum u + z . v`` subject to ``(W_j - u - z v_j) . t >= 0``
    for every column ``j`` and every ``t`` in ``C_G`` (the criterion of Lemma C,
    docs/optimum_of_F.md section 2, with ``C_G`` in place of the path's cone)."""
    N = len(z)
    rows = _cone_rows(G, lam)
    cuts: list[tuple[int, list[Fraction]]] = [(j, [ONE] * N) for j in range(N)]
    objective = [ONE] * N + list(z)
    for rounds in range(1, max_rounds + 1):
        ub = [({**{i: t[i] for i in range(N) if t[i]},
                N + j: sum((z[i] * t[i] for i in range(N)), ZERO)},
               sum((W[i, j] * t[i] for i in range(N)), ZERO)) for j, t in cuts]
        lp = exact_lp(objective, ub, maximize=True, who="grid_optimum")
        u, v = np.array(lp.primal[:N], dtype=object), np.array(lp.primal[N:], dtype=object)
        new = []
        for j in range(N):
            low, t = graph_cone_minimum(W[:, j] - u - z * v[j], G, lam, rows)
            if low < 0:
                new.append((j, t))
        if not new:
            return lp.optimum, u, v, rounds
        cuts += new
    raise RuntimeError(f"grid_optimum: no optimum after {max_rounds} rounds of column "
                       "generation")


def grid_optimum(z: Any, cost: Any, shape: Any, lam: Any, *, solver: str = "primal",
                 max_rounds: int = 500) -> Fraction:
    """The exact least count error ``min sum_v z_v sum_(v') T[v, v'] c(v, v')`` over
    ``F_grid[z]`` on the grid of ``shape``.

    Parameters
    ----------
    z : exact target on the ``N = n_1 ... n_d`` states (C order).
    cost : ``N x N`` exact cost ``c(v, v')``.
    shape : the grid's sizes.
    lam : rational ``lam > 1``.
    solver : ``"primal"``: cdd's exact simplex on the ``N^2`` variables of ``T``
        (:func:`dpfix.explore.graph_mechanisms.exact_minimum`, certificate checked);
        ``"dual"``: column generation on the dual (``2N`` variables ``u, v``), each round
        an exact LP over the cuts found so far and, per column, an exact LP over the cone
        ``C_G`` (:func:`graph_cone_minimum`); it ends when the dual point is feasible, so
        its value is the optimum by strong duality (and a lower bound by weak duality).
    max_rounds : a bound on the dual's rounds.

    Examples
    --------
    >>> z = product_target(*[["1/2", "1/2"]] * 3)
    >>> C = separable_cost([[[0, 1], [1, 0]]] * 3)
    >>> grid_optimum(z, C, (2, 2, 2), 2), grid_optimum(z, C, (2, 2, 2), 2, solver="dual")
    (Fraction(1, 1), Fraction(1, 1))
    """
    if solver not in GRID_SOLVERS:
        raise ValueError(f"solver: one of {', '.join(GRID_SOLVERS)}, got {solver!r}")
    G = grid_graph(shape)
    N = G.number_of_nodes()
    zv = probability_vector(z, exact=True, n=N)
    C = exact_array(cost, "cost", ndim=2)
    if C.shape != (N, N):
        raise ValueError(f"cost: expected shape {(N, N)}, got {C.shape}")
    lam_x = exact_lam(lam)
    W = zv[:, None] * C
    if solver == "primal":
        return exact_minimum(F(N, lam_x, zv, graph=G), W).value
    return _dual_lp(zv, W, G, lam_x, max_rounds)[0]


def product_dual(marginals: Any, costs: Any, lam: Any) -> tuple[np.ndarray, np.ndarray]:
    """The dual point of the proof of Theorem G: with ``(u^k, v^k)`` the northwest dual of
    path ``k`` (:func:`dpfix.certify.northwest_dual`, weights ``x^k_i c_k(i, j)``),
    ``u[v] = sum_k (prod_(l != k) x^l_(v_l)) u^k[v_k]`` and ``v[v'] = sum_k v^k[v'_k]``.
    Its value ``sum u + z . v`` is the sum of the paths' values; it is feasible over
    ``F_grid`` when every ``c_k`` is Monge (docs/graphs.md, Theorem G for d columns).

    Examples
    --------
    >>> xs, c = [["1/2", "1/2"]] * 3, [[0, 1], [1, 0]]
    >>> u, v = product_dual(xs, [c] * 3, 2)
    >>> sum(u) + product_target(*xs).dot(v)
    Fraction(1, 1)
    """
    xs = _marginals(marginals)
    cs = _costs(costs, tuple(len(x) for x in xs))
    duals = [northwest_dual(x, lam, loss=x[:, None] * c) for x, c in zip(xs, cs, strict=True)]
    states = list(itertools.product(*[range(len(x)) for x in xs]))
    d = len(xs)
    u = np.array([sum((math.prod(xs[m][s[m]] for m in range(d) if m != k) * duals[k][0][s[k]]
                       for k in range(d)), ZERO) for s in states], dtype=object)
    v = np.array([sum((duals[k][1][s[k]] for k in range(d)), ZERO) for s in states],
                 dtype=object)
    return u, v


def infeasible_columns(W: Any, u: Any, v: Any, z: Any, G: nx.Graph, lam: Any) -> list[int]:
    """The columns ``j`` where ``g_j = W[:, j] - u - z v_j`` is negative somewhere on the
    cone ``C_G`` (exact LPs, :func:`graph_cone_minimum`): ``(u, v)`` is dual feasible over
    ``F_G[z]``, so ``sum u + z . v`` bounds every count error from below, iff none is.

    Examples
    --------
    >>> xs, c = [["1/2", "1/2"]] * 3, [[0, 1], [1, 0]]
    >>> z = product_target(*xs)
    >>> W = z[:, None] * separable_cost([c] * 3)
    >>> u, v = product_dual(xs, [c] * 3, 2)
    >>> infeasible_columns(W, u, v, z, grid_graph((2, 2, 2)), 2)
    []
    """
    lam_x = exact_lam(lam)
    Wm = exact_array(W, "W", ndim=2)
    uv, vv, zv = (exact_array(a, name, ndim=1) for a, name in ((u, "u"), (v, "v"), (z, "z")))
    rows = _cone_rows(G, lam_x)
    return [j for j in range(Wm.shape[1])
            if graph_cone_minimum(Wm[:, j] - uv - zv * vv[j], G, lam_x, rows)[0] < 0]


def path_optimum(x: Any, c: Any, lam: Any) -> Fraction:
    """The exact optimum of ``sum_i x_i sum_j T_ij c(i, j)`` over the path's ``F[x]``, for
    any cost (:func:`dpfix.certify.exact_optimum`).

    Examples
    --------
    >>> path_optimum(["1/2", "1/2"], [[0, 1], [1, 0]], 2)
    Fraction(1, 3)
    """
    xv = probability_vector(x, exact=True)
    return exact_optimum(xv, lam, loss=xv[:, None] * exact_array(c, "c", ndim=2)).value


@dataclass
class GridCheck:
    """Theorem G on one instance, every number exact.

    Attributes
    ----------
    shape : the grid's sizes; lam : ``e^eps``.
    marginals : the targets of the coordinates (``z`` is their product).
    monge : whether each coordinate's cost is Monge.
    product_in_F : whether the product of northwest corners lies in ``F_grid[z]``.
    product_value : its count error.
    path_optima : each path's exact optimum over ``F[x^k]`` (any cost).
    optimum : the exact optimum over ``F_grid[z]`` (``solver``), or None when not asked.
    dual_value : ``sum u + z . v`` of :func:`product_dual`.
    dual_feasible : whether :func:`infeasible_columns` finds none (None when not asked).
    """

    shape: tuple[int, ...]
    lam: Fraction
    marginals: list[np.ndarray]
    monge: tuple[bool, ...]
    product_in_F: bool
    product_value: Fraction
    path_optima: tuple[Fraction, ...]
    optimum: Fraction | None
    solver: str | None
    dual_value: Fraction
    dual_feasible: bool | None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def holds(self) -> bool:
        """The product lies in ``F_grid[z]`` and attains the optimum (the LP's when it was
        solved, else the certificate's bound)."""
        if not self.product_in_F:
            return False
        if self.optimum is not None:
            return self.product_value == self.optimum
        return bool(self.dual_feasible) and self.dual_value == self.product_value


def theorem_g_check(marginals: Any, costs: Any, lam: Any, *, solver: str | None = "primal",
                    certificate: bool = True) -> GridCheck:
    """Theorem G on the grid ``P_(n_1) x ... x P_(n_d)`` (``n_k = len(marginals[k])``) for
    the product target of ``marginals`` and the cost ``sum_k costs[k](v_k, v'_k)``.

    Parameters
    ----------
    marginals : the ``d`` exact distributions ``x^k``.
    costs : the ``d`` exact costs ``c_k`` (``n_k x n_k``).
    lam : rational ``lam > 1``.
    solver : how :func:`grid_optimum` solves the exact LP over ``F_grid[z]``, or None to
        skip it (then the certificate alone decides).
    certificate : check the proof's dual point (:func:`product_dual`) against the grid's
        cone by exact LPs.

    Examples
    --------
    >>> c = [[0, 1], [1, 0]]
    >>> chk = theorem_g_check([["1/2", "1/2"], ["1/4", "3/4"], ["1/3", "2/3"]], [c] * 3, 2)
    >>> chk.holds, chk.optimum == chk.product_value == sum(chk.path_optima), chk.dual_feasible
    (True, True, True)
    """
    xs = _marginals(marginals)
    dims = _shape(len(x) for x in xs)
    cs = _costs(costs, dims)
    lam_x = exact_lam(lam)
    G = grid_graph(dims)
    N = G.number_of_nodes()
    z = product_target(*xs)
    C = separable_cost(cs)
    W = z[:, None] * C
    T = product_of_northwest_corners(xs, lam_x)
    in_F = F(N, lam_x, z, graph=G).contains(T)
    value = sum((W[i, j] * T[i, j] for i in range(N) for j in range(N)), ZERO)
    u, v = product_dual(xs, cs, lam_x)
    dual_value = sum(u, ZERO) + z.dot(v)
    optimum = None if solver is None else grid_optimum(z, C, dims, lam_x, solver=solver)
    feasible = (not infeasible_columns(W, u, v, z, G, lam_x)) if certificate else None
    return GridCheck(dims, lam_x, xs, tuple(is_monge(c) for c in cs), bool(in_F), value,
                     tuple(path_optimum(x, c, lam_x) for x, c in zip(xs, cs, strict=True)),
                     optimum, solver, dual_value, feasible)


def failure_cases() -> list[dict[str, Any]]:
    """The three ways to leave the hypotheses of Theorem G, each on a 3-D grid, exactly:

    - ``"not separable"``: the product target of ``(1/2, 1/2)``, ``(1/3, 2/3)`` and
      ``(1/4, 3/4)`` on ``2x2x2`` at ``lam = 2`` with the loss ``max_k |v_k - v'_k|``
      (the king's distance, not a sum over the coordinates);
    - ``"not Monge"``: on ``2x2x3`` at ``lam = 3``, ``x = (1/2, 1/2)`` twice and the
      third marginal ``(1/4, 1/4, 1/2)``, the costs ``|i - j|``, ``|i - j|`` and the
      zero-one loss ``1[i != j]`` (docs/optimum_of_F.md section 5: not Monge at
      ``n = 3``);
    - ``"not a product"``: ``z`` half at ``(0, 0, 0)`` and half at ``(1, 1, 1)`` on
      ``2x2x2`` at ``lam = 2``, the coordinate loss ``sum_k |v_k - v'_k|``.

    Each row holds the exact optimum over ``F_grid[z]`` (cdd's simplex), the product of
    the marginals' northwest corners (its count error and whether it lies in
    ``F_grid[z]``) and, for the separable losses, the sum of the paths' optima over
    ``F[x^k]`` (the lower bound of the proof, which needs a product target).

    Examples
    --------
    >>> [(r["case"], r["optimum"], r["product"]) for r in failure_cases()][0]
    ('not separable', Fraction(41, 60), Fraction(31, 45))
    """
    half, absolute = ["1/2", "1/2"], [[0, 1], [1, 0]]
    out = []
    specs = [("not separable", [half, ["1/3", "2/3"], ["1/4", "3/4"]], None, None, 2,
              "(1/2, 1/2) x (1/3, 2/3) x (1/4, 3/4)", "max_k abs(v_k - v'_k)"),
             ("not Monge", [half, half, ["1/4", "1/4", "1/2"]], None,
              [absolute, absolute, [[0, 1, 1], [1, 0, 1], [1, 1, 0]]], 3,
              "(1/2, 1/2) x (1/2, 1/2) x (1/4, 1/4, 1/2)", "abs + abs + zero-one"),
             ("not a product", [half] * 3,
              ["1/2", 0, 0, 0, 0, 0, 0, "1/2"], [absolute] * 3, 2,
              "1/2 at (0, 0, 0), 1/2 at (1, 1, 1)", "abs + abs + abs")]
    for name, xs, joint, cs, lam, target, loss in specs:
        xs = _marginals(xs)
        dims = tuple(len(x) for x in xs)
        G = grid_graph(dims)
        N = G.number_of_nodes()
        z = product_target(*xs) if joint is None else probability_vector(joint, exact=True)
        if name == "not separable":
            states = list(itertools.product(*[range(n) for n in dims]))
            C = np.array([[Fraction(max(abs(a - b) for a, b in zip(s, t, strict=True)))
                           for t in states] for s in states], dtype=object)
        else:
            C = separable_cost(cs)
        W = z[:, None] * C
        T = product_of_northwest_corners(xs, lam)
        out.append({"case": name, "shape": dims, "lam": Fraction(lam), "z": z,
                    "target": target, "loss": loss,
                    "optimum": grid_optimum(z, C, dims, lam),
                    "product": sum((W[i, j] * T[i, j] for i in range(N) for j in range(N)),
                                   ZERO),
                    "product_in_F": bool(F(N, Fraction(lam), z, graph=G).contains(T)),
                    "path_optima": None if cs is None else
                    sum((path_optimum(x, c, lam) for x, c in zip(xs, cs, strict=True)), ZERO)})
    return out


def failure_table(rows: Any = None) -> str:
    """The Markdown table of :func:`failure_cases` in docs/graphs.md section 11.

    Examples
    --------
    >>> failure_table().splitlines()[0].split(" | ")[:3]
    ['| hypothesis dropped', 'grid', 'lam']
    """
    rows = failure_cases() if rows is None else list(rows)
    lines = ["| hypothesis dropped | grid | lam | target | loss | optimum over F_grid | "
             "product of northwest corners | product in F_grid | sum of the paths' optima |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        paths = "-" if r["path_optima"] is None else str(r["path_optima"])
        lines.append(f"| {r['case']} | {'x'.join(map(str, r['shape']))} | {r['lam']} | "
                     f"{r['target']} | `{r['loss']}` | {r['optimum']} | {r['product']} | "
                     f"{'yes' if r['product_in_F'] else 'no'} | {paths} |")
    return "\n".join(lines)
