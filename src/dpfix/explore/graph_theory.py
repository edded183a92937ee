"""Which of the paper's results carry over to neighbour graphs (docs/graphs.md, sections
8 to 11).

The objects are those of :mod:`dpfix.theory.polytopes` with ``graph=`` and the scales of
:func:`dpfix.theory.scales.graph_scales`. This module holds

- the graph instances the exploration engine visits (:class:`GraphInstance`,
  :func:`atlas_graphs`, :func:`graph_instances`): graphs by size, then in the order of
  networkx's graph atlas, then ``lam``, then ``z``;
- the statements of the paper checked on a graph, as predicates for
  :func:`dpfix.explore.search.smallest_counterexample` (``over="instance"``);
- exact linear programs with exact dual certificates (:func:`exact_minimum`), the best
  ``z``-preserving remap of a mechanism (:func:`best_remap`), randomized response and the
  graph geometric mechanism;
- the tables of docs/graphs.md: the complete graph (:func:`complete_graph_rows`), the
  northwest-corner analogue on trees and cycles (:func:`northwest_analogue_holds`), the
  grid and the king's graph (:func:`grid_rows`), and the summary of which theorems hold
  (:func:`which_theorems_hold`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import networkx as nx
import numpy as np

from dpfix.explore.instances import Instance, named_targets
from dpfix.explore.search import smallest_counterexample
from dpfix.numbers.exact import exact_array, exact_lam, nullspace, rank, to_fraction
from dpfix.numbers.exact_lp import certificate_holds, exact_lp
from dpfix.theory import polytopes
from dpfix.theory.graphs import as_graph, exact_power
from dpfix.theory.polytopes import Polytope
from dpfix.theory.scales import graph_scales

__all__ = ["GraphInstance", "atlas_graphs", "graph_instances", "LPCertificate",
           "exact_minimum", "distance_matrix", "loss_weights", "best_remap",
           "randomized_response", "graph_geometric", "graph_geometric_exists",
           "is_staircase", "Statement", "PROVED", "FAILS", "CARRY_OVER", "dependent_scale",
           "carry_over_search", "complete_graph_rows", "complete_instances",
           "rr_remap_optimal", "northwest_analogue_holds", "northwest_analogue_values",
           "grid_rows", "product_northwest", "product_target",
           "separable_weights", "staircase_optima", "fixed_point_staircase_search",
           "staircase_vertex", "non_staircase_vertex", "middle_value_vertices",
           "which_theorems_hold",
           "format_which_theorems", "theorems_section", "king_bounds_table",
           "complete_graph_table",
           "grid_table", "SEARCHES", "search", "search_report", "REPORTS", "report"]

ZERO, ONE = Fraction(0), Fraction(1)


# ------------------------------------------------------------------ graph instances
@dataclass(frozen=True)
class GraphInstance(Instance):
    """An :class:`~dpfix.explore.instances.Instance` on a neighbour graph: the engine
    builds its polytopes with ``graph=`` (:func:`dpfix.explore.search.smallest_counterexample`).

    Parameters
    ----------
    n, lam, z : as for :class:`~dpfix.explore.instances.Instance`.
    edges : tuple of ``(u, v)`` pairs, ``u < v``, on the nodes ``0..n-1`` (unit weights).
    label : the graph's name (``"atlas:7"``, ``"cycle:4"``).

    Examples
    --------
    >>> inst = GraphInstance(3, 2, None, ((0, 1), (0, 2), (1, 2)), "atlas:7")
    >>> print(inst)
    atlas:7 (edges 01 02 12), n = 3, lam = 2, z = None
    >>> sorted(inst.neighbour_graph().edges)
    [(0, 1), (0, 2), (1, 2)]
    >>> eval(repr(inst)) == inst
    True
    """

    edges: tuple[tuple[int, int], ...] = ()
    label: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "edges", tuple(sorted(tuple(sorted((int(u), int(v))))
                                                       for u, v in self.edges)))

    def __repr__(self) -> str:
        z = None if self.z is None else tuple(self.z)
        return (f"GraphInstance(n={self.n}, lam={self.lam!r}, z={z!r}, edges={self.edges!r}, "
                f"label={self.label!r})")

    def __str__(self) -> str:
        edges = " ".join(f"{u}{v}" if self.n <= 10 else f"{u}-{v}" for u, v in self.edges)
        return f"{self.label} (edges {edges}), {Instance.__str__(self)}"

    def key(self) -> str:
        """The cache key: the instance's, then the edges."""
        return Instance.key(self) + "|" + ",".join(f"{u}-{v}" for u, v in self.edges)

    def neighbour_graph(self) -> nx.Graph:
        """The checked neighbour graph (:func:`dpfix.theory.graphs.as_graph`)."""
        G = nx.Graph()
        G.add_nodes_from(range(self.n))
        G.add_edges_from(self.edges)
        G.graph["label"] = self.label
        return as_graph(G, self.n)


def atlas_graphs(n_values: Iterable[int], kind: str = "connected"
                 ) -> list[tuple[str, nx.Graph]]:
    """The graphs of networkx's atlas on ``n`` nodes (``2 <= n <= 7``), ``n`` ascending,
    then in atlas order (edges, then degree sequence, then automorphisms), with their
    labels ``"atlas:K"`` (``networkx.graph_atlas(K)``).

    ``kind``: ``"connected"`` (every connected graph), ``"trees"``, ``"cycles"`` (the
    cycle graphs ``C_n``, ``n >= 3``) or ``"paths"``.

    Examples
    --------
    >>> [label for label, _ in atlas_graphs([2, 3])]
    ['atlas:3', 'atlas:6', 'atlas:7']
    >>> [label for label, _ in atlas_graphs([4], "trees")]
    ['atlas:13', 'atlas:14']
    """
    tests: dict[str, Callable[[nx.Graph], bool]] = {
        "connected": nx.is_connected, "trees": nx.is_tree,
        "cycles": lambda G: G.number_of_nodes() >= 3 and nx.is_connected(G)
        and all(d == 2 for _, d in G.degree()),
        "paths": lambda G: nx.is_tree(G) and max(d for _, d in G.degree()) <= 2}
    if kind not in tests:
        raise ValueError(f"kind: one of {', '.join(tests)}, got {kind!r}")
    wanted = sorted(set(int(n) for n in n_values))
    if wanted and (wanted[0] < 2 or wanted[-1] > 7):
        raise ValueError(f"n_values: the atlas holds 2 <= n <= 7, got {wanted}")
    out = []
    for index, G in enumerate(nx.graph_atlas_g()):
        if G.number_of_nodes() in wanted and tests[kind](G):
            out.append((f"atlas:{index}", G))
    return out


def graph_instances(graphs: Iterable[tuple[str, nx.Graph]], lam: Iterable[Any] = (2,),
                    z: Any = "none") -> Iterator[GraphInstance]:
    """The instances on ``graphs`` (in their order), then ``lam``, then ``z``.

    ``z``: ``"none"`` (no target), ``"named"`` (:func:`~dpfix.explore.instances.named_targets`),
    or a callable ``n -> targets``.

    Examples
    --------
    >>> insts = list(graph_instances(atlas_graphs([2]), lam=[2, 3], z="named"))
    >>> len(insts), str(insts[0])
    (8, 'atlas:3 (edges 01), n = 2, lam = 2, z = (1/2, 1/2)')
    """
    lams = [exact_lam(x) for x in lam]
    for label, G in graphs:
        n = G.number_of_nodes()
        edges = tuple(tuple(e) for e in G.edges)
        for x in lams:
            if isinstance(z, str) and z == "none":
                yield GraphInstance(n, x, None, edges, label)
                continue
            targets = named_targets(n) if isinstance(z, str) and z == "named" else z(n)
            for t in targets:
                yield GraphInstance(n, x, tuple(t), edges, label)


# ------------------------------------------------------------------ exact LP, certificates
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
    >>> P = polytopes.U(2, 2)
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
    elif loss.startswith("l1:"):
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


# ------------------------------------------------------------------ the paper on a graph
def _scales(inst: GraphInstance) -> np.ndarray:
    return graph_scales(inst.neighbour_graph(), inst.lam)


def _scale_index(S: np.ndarray) -> dict[tuple, int]:
    return {tuple(S[:, m]): m for m in range(S.shape[1])}


def _is_scale_multiple(col: np.ndarray, index: dict[tuple, int]) -> bool:
    total = sum(col, ZERO)
    return total > 0 and tuple(v / total for v in col) in index


def _scale_condition(T: np.ndarray, index: dict[tuple, int]) -> bool:
    """Theorem 2's right-hand side: the columns are independent multiples of scales."""
    return all(_is_scale_multiple(c, index) for c in T.T) and rank(T) == T.shape[0]


def _positive(T: np.ndarray) -> bool:
    return all(v > 0 for v in T.flat)


def theorem2_holds(inst: GraphInstance) -> bool:
    """Theorem 2 on the graph: a positive ``T`` in ``U_G`` is extreme iff its columns are
    linearly independent multiples of the graph's scales; checked on the positive
    vertices of ``U_G`` and the midpoints of pairs of them."""
    P = polytopes.U(inst.n, inst.lam, graph=inst.neighbour_graph())
    index = _scale_index(_scales(inst))
    positive = [V for V in P.vertices() if _positive(V)]
    points = positive + [(a + b) / 2 for a, b in itertools.islice(
        itertools.combinations(positive, 2), 60)]
    return all(P.is_extreme(T) == _scale_condition(T, index) for T in points)


def _column_tight_rank(col: np.ndarray, G: nx.Graph, lam: Fraction) -> tuple[int, int]:
    """The number of tight privacy constraints of a column, and their rank."""
    rows = []
    n = len(col)
    for u, v in G.edges:
        for a, b in ((u, v), (v, u)):
            if col[a] == lam * col[b]:
                row = [ZERO] * n
                row[a], row[b] = ONE, -lam
                rows.append(row)
    return len(rows), (rank(np.array(rows, dtype=object)) if rows else 0)


def tight_count_is_n_minus_1(T: np.ndarray, inst: GraphInstance) -> bool:
    """The step of the paper's proof of Theorem 2 (for ``over="U"``): every column of a
    positive vertex ``T`` of ``U_G`` has exactly ``n - 1`` tight privacy constraints."""
    G = inst.neighbour_graph()
    return not _positive(T) or all(_column_tight_rank(c, G, inst.lam)[0] == inst.n - 1
                                   for c in T.T)


def dependent_scale(inst: GraphInstance) -> np.ndarray | None:
    """The first scale of the graph (in :func:`~dpfix.theory.scales.graph_scales` order)
    whose tight constraints are linearly dependent, or None."""
    G = inst.neighbour_graph()
    for c in _scales(inst).T:
        k, r = _column_tight_rank(c, G, inst.lam)
        if k != r:
            return c
    return None


def scale_constraints_independent(inst: GraphInstance) -> bool:
    """The step of the paper's proof of Lemma 1: the tight constraints of every scale
    are linearly independent (as many as their rank); :func:`dependent_scale` gives the
    witness."""
    return dependent_scale(inst) is None


def _images(S: np.ndarray, vertices: list[np.ndarray]) -> set[tuple]:
    return {tuple((S @ B).flat) for B in vertices}


def theorem3_holds(inst: GraphInstance) -> bool:
    """Theorem 3 on the graph: ``Psi_G`` maps ``R_F`` onto ``F_G``: every vertex of
    ``R_F`` maps into ``F_G``, and every vertex of ``F_G`` is an image (so the convex
    image is all of ``F_G``)."""
    G = inst.neighbour_graph()
    S = _scales(inst)
    F = polytopes.F(inst.n, inst.lam, inst.z_array(), graph=G)
    Bs = polytopes.RF(inst.n, inst.lam, inst.z_array(), graph=G).vertices()
    if not all(F.contains(S @ B) for B in Bs):
        return False
    return {tuple(T.flat) for T in F.vertices()} <= _images(S, Bs)


def theorem10_holds(inst: GraphInstance) -> bool:
    """Theorem 10 on the graph: ``Psi_G`` maps ``R_U`` onto ``U_G`` (as for Theorem 3)."""
    G = inst.neighbour_graph()
    S = _scales(inst)
    U = polytopes.U(inst.n, inst.lam, graph=G)
    Bs = polytopes.RU(inst.n, inst.lam, graph=G).vertices()
    if not all(U.contains(S @ B) for B in Bs):
        return False
    return {tuple(T.flat) for T in U.vertices()} <= _images(S, Bs)


def proposition1_holds(inst: GraphInstance) -> bool:
    """Proposition 1 on the graph: every vertex of ``F_G`` is ``Psi_G B`` for a vertex
    ``B`` of ``R_F``."""
    G = inst.neighbour_graph()
    S = _scales(inst)
    Bs = polytopes.RF(inst.n, inst.lam, inst.z_array(), graph=G).vertices()
    F = polytopes.F(inst.n, inst.lam, inst.z_array(), graph=G)
    return {tuple(T.flat) for T in F.vertices()} <= _images(S, Bs)


def psi_affinely_simplified(B: np.ndarray, z: np.ndarray, S: np.ndarray) -> bool:
    """``B`` is ``Psi``-affinely simplified for the scales ``S`` (docs/math_notes.md
    section 3 with ``Psi = S``): the vectors ``S_(i_l) / (z . S_(i_l)) - S_(i_0) /
    (z . S_(i_0))`` of all columns are linearly independent.

    Examples
    --------
    >>> from dpfix.theory.scales import psi
    >>> S = psi(2, 2)
    >>> z = np.array([Fraction(1, 2)] * 2, dtype=object)
    >>> psi_affinely_simplified(np.array([[1, 0], [0, 1]], dtype=object), z, S)
    True
    >>> psi_affinely_simplified(np.array([[1, 1], [1, 1]], dtype=object), z, S)
    False
    """
    w = z @ S
    vectors = []
    for j in range(B.shape[1]):
        support = [i for i in range(B.shape[0]) if B[i, j] > 0]
        for i in support[1:]:
            vectors.append(S[:, i] / w[i] - S[:, support[0]] / w[support[0]])
    return not vectors or rank(np.array(vectors, dtype=object)) == len(vectors)


def theorem4_holds(inst: GraphInstance) -> bool:
    """Theorem 4 on the graph: ``B`` in ``R_F`` is extreme iff ``Psi_G``-affinely
    simplified; checked on the vertices of ``R_F`` and midpoints of pairs of them."""
    G = inst.neighbour_graph()
    S, z = _scales(inst), inst.z_array()
    R = polytopes.RF(inst.n, inst.lam, z, graph=G)
    Bs = R.vertices()
    points = Bs + [(a + b) / 2 for a, b in itertools.islice(itertools.combinations(Bs, 2), 60)]
    return all(R.is_extreme(B) == psi_affinely_simplified(B, z, S) for B in points)


def corollary2_holds(B: np.ndarray, inst: GraphInstance) -> bool:
    """Corollary 2 on the graph (for ``over="RF"``): a vertex ``B`` of ``R_F`` has between
    ``|P|`` and ``|P| + n - 1`` positive entries, ``P = {j : z_j > 0}``."""
    p = sum(1 for v in inst.z if v > 0)
    return p <= sum(1 for v in B.flat if v > 0) <= p + inst.n - 1


@dataclass(frozen=True)
class Statement:
    """One row of the table of docs/graphs.md section 8 ("Which results carry over").

    ``predicate`` runs through the engine with ``over``; ``target``: whether it needs
    a target ``z``; ``status``: what docs/graphs.md proves; ``max_n``: the largest ``n``
    at which :func:`which_theorems_hold` checks it (its vertex enumerations: ``R_F`` and
    ``R_U`` have ``k_G n`` variables).
    """

    predicate: Callable[..., bool]
    over: str
    target: bool
    status: str
    max_n: int = 3


PROVED = "proved for every connected graph"
FAILS = "fails on some graphs (smallest: the 4-cycle)"

#: The statements of docs/graphs.md's table, by name.
CARRY_OVER: dict[str, Statement] = {
    "Theorem 2": Statement(theorem2_holds, "instance", False, PROVED, 4),
    "Theorem 3": Statement(theorem3_holds, "instance", True, PROVED),
    "Theorem 10": Statement(theorem10_holds, "instance", False, PROVED),
    "Proposition 1": Statement(proposition1_holds, "instance", True, PROVED),
    "Theorem 4": Statement(theorem4_holds, "instance", True, PROVED),
    "Corollary 2": Statement(corollary2_holds, "RF", True, PROVED),
    "proof of Theorem 2: n - 1 tight constraints per column": Statement(
        tight_count_is_n_minus_1, "U", False, FAILS, 4),
    "proof of Lemma 1: a scale's tight constraints are independent": Statement(
        scale_constraints_independent, "instance", False, FAILS, 7),
}


def carry_over_search(name: str, n_values: Iterable[int] = (2, 3), lams: Iterable[Any] = (2,),
                      budget: Any = None) -> Any:
    """The engine's smallest counterexample to one statement of :data:`CARRY_OVER` over
    the connected graphs by size, then atlas order, then ``lam``, then the named
    targets (None when it held on every instance visited).

    Examples
    --------
    >>> ce = carry_over_search("proof of Lemma 1: a scale's tight constraints are independent",
    ...                        n_values=[2, 3, 4])
    >>> print(ce.instance)
    atlas:16 (edges 01 03 12 23), n = 4, lam = 2, z = None
    >>> dependent_scale(ce.instance).tolist()
    [Fraction(2, 9), Fraction(4, 9), Fraction(2, 9), Fraction(1, 9)]
    """
    st = CARRY_OVER[name]
    insts = graph_instances(atlas_graphs(n_values), lams, "named" if st.target else "none")
    return smallest_counterexample(st.predicate, over=st.over, instances=insts, budget=budget)


# ------------------------------------------------------------------ the complete graph
def complete_graph_rows(n_values: Iterable[int] = (2, 3, 4), lams: Iterable[Any] = (2, 3),
                        losses: Iterable[str] = ("zero-one", "abs")) -> list[dict[str, Any]]:
    """The exact optimum of ``F_{K_n}`` (certified) against randomized response followed
    by its best ``z``-preserving remap, on the named targets.

    Each row: ``n``, ``lam``, ``loss``, ``target`` (its name), ``z``, ``optimum``,
    ``rr_remap`` (the value of the best remap of randomized response), ``rr_optimal``.

    Examples
    --------
    >>> row = complete_graph_rows([3], [2], ["zero-one"])[0]
    >>> row["target"], row["optimum"], row["rr_remap"], row["rr_optimal"]
    ('uniform', Fraction(1, 2), Fraction(1, 2), True)
    """
    from dpfix.explore.cases import standard_z

    rows = []
    for n in n_values:
        G = as_graph(f"complete:{n}")
        for lam in lams:
            lam_x = exact_lam(lam)
            RR = randomized_response(n, lam_x)
            for loss in losses:
                for name, z in standard_z(n).items():
                    W = loss_weights(G, z, loss)
                    P = polytopes.F(n, lam_x, z, graph=G)
                    opt = exact_minimum(P, W)
                    rr = best_remap(RR, z, W)
                    rows.append({"n": n, "lam": lam_x, "loss": loss, "target": name,
                                 "z": tuple(z), "optimum": opt.value, "rr_remap": rr.value,
                                 "rr_optimal": rr.value == opt.value, "T": opt.point})
    return rows


def complete_instances(n_values: Iterable[int], lam: Iterable[Any], z: Any
                       ) -> Iterator[GraphInstance]:
    """The instances on the complete graphs ``K_n`` (label ``complete:n``), ``n``
    ascending, then ``lam``, then ``z`` (as for :func:`graph_instances`)."""
    graphs = [(f"complete:{n}", as_graph(f"complete:{n}")) for n in sorted(n_values)]
    return graph_instances(graphs, lam, z)


def rr_remap_optimal(inst: GraphInstance, loss: str = "zero-one") -> bool:
    """Whether randomized response followed by its best ``z``-preserving remap attains the
    optimum of ``F_{K_n}`` for the loss (exact LPs)."""
    z = inst.z_array()
    G = inst.neighbour_graph()
    W = loss_weights(G, z, loss)
    rr = best_remap(randomized_response(inst.n, inst.lam), z, W).value
    return rr == exact_minimum(polytopes.F(inst.n, inst.lam, z, graph=G), W).value


def rr_remap_optimal_zero_one(inst: GraphInstance) -> bool:
    """:func:`rr_remap_optimal` for the zero-one loss."""
    return rr_remap_optimal(inst, "zero-one")


def rr_remap_optimal_abs(inst: GraphInstance) -> bool:
    """:func:`rr_remap_optimal` for ``|i - j|``."""
    return rr_remap_optimal(inst, "abs")


def _solve_ones(M: np.ndarray) -> list[Fraction] | None:
    """The unique ``m`` with ``M m = 1`` (``M`` of full column rank), or None."""
    k = M.shape[1]
    aug = np.concatenate([M, -np.ones((M.shape[0], 1), dtype=object) * ONE], axis=1)
    ns = nullspace(aug)
    if ns.shape[1] != 1 or ns[k, 0] == 0:
        return None
    return [v / ns[k, 0] for v in ns[:k, 0]]


def middle_value_vertices(n: int, lam: Any) -> Iterator[np.ndarray]:
    """Vertices of ``U_{K_n}`` with one middle value: column 0 takes ``m``, ``lam m`` on
    rows ``0 .. n-2`` and a value strictly between in row ``n-1``; columns ``1 .. k-1``
    take both values ``a`` and ``lam a``; the others are zero. By the vertex condition
    of Theorem 2_G's proof (docs/graphs.md section 8) such a ``T`` is a vertex iff the
    patterns of the ``k`` columns on rows ``0 .. n-2`` are independent; the amounts then
    solve the row sums of those rows, and row ``n-1`` gives the middle value. Yields
    them in the order of ``k``, then the patterns (``itertools.product`` order).

    Examples
    --------
    >>> next(middle_value_vertices(4, 2), None) is None   # none at n = 4
    True
    """
    lam_x = exact_lam(lam)
    rows = n - 1
    for k in range(2, n):
        for pats in itertools.product(itertools.product((ONE, lam_x), repeat=rows), repeat=k):
            if len(set(pats[0])) < 2:
                continue
            M = np.array([[pats[j][r] for j in range(k)] for r in range(rows)], dtype=object)
            if rank(M) < k or (m := _solve_ones(M)) is None or any(v <= 0 for v in m):
                continue
            for last in itertools.product((ONE, lam_x), repeat=k - 1):
                if any(len(set(pats[j + 1]) | {last[j]}) < 2 for j in range(k - 1)):
                    continue  # a constant column binds nothing: not a vertex
                x = 1 - sum((m[j + 1] * last[j] for j in range(k - 1)), ZERO)
                if m[0] < x < lam_x * m[0]:
                    T = np.full((n, n), ZERO, dtype=object)
                    for j in range(k):
                        T[:rows, j] = [m[j] * v for v in pats[j]]
                        T[rows, j] = x if j == 0 else m[j] * last[j - 1]
                    yield T


def non_staircase_vertex() -> tuple[np.ndarray, np.ndarray]:
    """A vertex of ``U_{K_5}`` at ``lam = 2`` that is not a staircase mechanism (the first
    of :func:`middle_value_vertices`), and a utility ``C`` that it alone maximises
    (docs/graphs.md section 9).

    Columns 1 to 3 take the values ``1/7`` and ``2/7``; column 0 takes ``2/7``
    (rows 0 to 2), ``4/7`` (row 3) and ``3/7`` (row 4, strictly between); column 4
    is zero. ``C`` is the sum of the privacy constraints tight at ``T`` (each
    ``a . X <= 0``): ``<C, X> <= 0`` on ``U`` with equality iff all of them are tight,
    which, ``T`` being a vertex, only ``T`` is.

    Examples
    --------
    >>> T, C = non_staircase_vertex()
    >>> P = polytopes.U(5, 2, graph="complete:5")
    >>> P.is_extreme(T), is_staircase(T, 2), P.maximize(C)[0]
    (True, False, Fraction(0, 1))
    """
    T = next(middle_value_vertices(5, 2))  # the first of the search
    P = polytopes.U(5, 2, graph="complete:5")
    A, b = P.A_ub, P.b_ub
    x = list(T.flat)
    tight = [r for r in range(len(b)) if sum((A[r, k] * x[k] for k in range(25)), ZERO) == b[r]]
    C = sum((A[r] for r in tight), np.full(25, ZERO, dtype=object)).reshape(5, 5)
    return T, C


def staircase_vertex(T: np.ndarray, inst: GraphInstance) -> bool:
    """For ``over="F"`` or ``"U"``: the vertex ``T`` is a staircase mechanism."""
    return is_staircase(T, inst.lam)


def fixed_point_staircase_search() -> Any:
    """The engine's smallest vertex of ``F_{K_n}`` that is not a staircase mechanism:
    ``K_n`` for ``n = 2 .. 4``, then ``lams_by_height(3)``, then ``compositions(4)``.

    Examples
    --------
    >>> ce = fixed_point_staircase_search()
    >>> print(ce.instance, "|", ce.visited)
    complete:2 (edges 01), n = 2, lam = 2, z = (1/3, 2/3) | 4
    >>> ce.witness[:, 1].tolist()  # in the ratio 4/3 < lam: a loose column
    [Fraction(4, 5), Fraction(3, 5)]
    """
    from dpfix.explore.instances import compositions, lams_by_height

    insts = complete_instances(range(2, 5), list(lams_by_height(3)),
                               lambda n: compositions(4, n))
    return smallest_counterexample(staircase_vertex, over="F", instances=insts)


# ------------------------------------------------------------------ trees and cycles
def graph_geometric_exists(inst: GraphInstance) -> bool:
    """Whether the graph geometric mechanism of :func:`graph_geometric` is a mechanism
    (every ``alpha_m >= 0``)."""
    return all(a >= 0 for a in graph_geometric(inst.neighbour_graph(), inst.lam)[1])


def northwest_analogue_holds(inst: GraphInstance, loss: str = "distance") -> bool | None:
    """The northwest-corner analogue on the graph: the best ``z``-preserving remap of the
    graph geometric mechanism attains the optimum of ``F_G`` for the loss (exact LPs).

    Returns
    -------
    bool or None
        True or False where the graph geometric mechanism is a mechanism (every
        ``alpha_m >= 0``; :func:`graph_geometric_exists`); None where it is not (some
        ``alpha_m < 0``): there the statement says nothing, and nothing is checked.

    Examples
    --------
    >>> path = GraphInstance(3, 2, ["1/3"] * 3, ((0, 1), (1, 2)), "path:3")
    >>> star = GraphInstance(4, "3/2", ["1/4"] * 4, ((0, 1), (0, 2), (0, 3)), "star:4")
    >>> northwest_analogue_holds(path), northwest_analogue_holds(star)
    (True, None)
    """
    G = inst.neighbour_graph()
    z = inst.z_array()
    N, alpha = graph_geometric(G, inst.lam)
    if any(a < 0 for a in alpha):
        return None
    W = loss_weights(G, z, loss)
    return best_remap(N, z, W).value == exact_minimum(
        polytopes.F(inst.n, inst.lam, z, graph=G), W).value


def northwest_distance(inst: GraphInstance) -> bool:
    """:func:`northwest_analogue_holds` for the graph distance ``d_G``, as a predicate of
    the searches: an instance without the graph geometric mechanism (None) holds, the
    statement being an implication (where the mechanism exists, ...)."""
    return northwest_analogue_holds(inst, "distance") is not False


def northwest_distance_squared(inst: GraphInstance) -> bool:
    """:func:`northwest_analogue_holds` for ``d_G^2``, as a predicate of the searches (an
    instance without the graph geometric mechanism holds, as in
    :func:`northwest_distance`)."""
    return northwest_analogue_holds(inst, "distance-squared") is not False


def _optimal_noise_remap(G: nx.Graph, lam: Fraction, z: np.ndarray, W: np.ndarray
                         ) -> Fraction:
    """The least value of the best ``z``-preserving remap over the optimal vertices of
    ``min <W, T>`` on ``U_G`` (every noise optimal for this target and loss)."""
    n = len(z)
    U = polytopes.U(n, lam, graph=G)
    face = U.optimal_face_vertices(-np.array(W, dtype=object))
    return min(best_remap(N, z, W).value for N in face)


def northwest_analogue_values(inst: GraphInstance, loss: str = "distance") -> dict[str, Any]:
    """The numbers behind :func:`northwest_analogue_holds` at one instance: ``alpha`` of
    the graph geometric mechanism, the value of its best remap (None when some
    ``alpha_m < 0``), the least value of the best remap of any optimal vertex of
    ``U_G`` (``optimal_noise``), and the optimum of ``F_G``.

    Examples
    --------
    >>> inst = GraphInstance(3, 2, ["1/3"] * 3, ((0, 1), (1, 2)), "path:3")
    >>> v = northwest_analogue_values(inst)
    >>> v["geometric"] == v["optimal_noise"] == v["optimum"]
    True
    """
    G = inst.neighbour_graph()
    z = inst.z_array()
    W = loss_weights(G, z, loss)
    N, alpha = graph_geometric(G, inst.lam)
    geometric = None if any(a < 0 for a in alpha) else best_remap(N, z, W).value
    return {"alpha": alpha, "geometric": geometric,
            "optimal_noise": _optimal_noise_remap(G, inst.lam, z, W),
            "optimum": exact_minimum(polytopes.F(inst.n, inst.lam, z, graph=G), W).value}


def optimal_noise_remap_holds(inst: GraphInstance) -> bool:
    """The weaker analogue for ``d_G``: some optimal vertex of ``U_G`` (for this target
    and loss) followed by its best ``z``-preserving remap attains the optimum of ``F_G``."""
    v = northwest_analogue_values(inst, "distance")
    return v["optimal_noise"] == v["optimum"]


# ------------------------------------------------------------------ the grid
def grid_rows(specs: Iterable[str] = ("grid:2x2", "king:2x2", "grid:2x3", "king:2x3"),
              lams: Iterable[Any] = (2,)) -> list[dict[str, Any]]:
    """Exact optima of ``U_G`` and ``F_G`` on the grid and the king's graph for the
    coordinate loss ``|r - r'| + |c - c'|`` (``l1:B``; on the grid it is ``d_G``) and, on
    the king's graph, its distance ``max(|r - r'|, |c - c'|)``, on the uniform target;
    on the grid also the value of :func:`product_northwest` (``"product"``).

    Examples
    --------
    >>> [(r["graph"], r["loss"], r["F"]) for r in grid_rows(["grid:2x2", "king:2x2"])]
    [('grid:2x2', 'l1:2', Fraction(2, 3)), ('king:2x2', 'l1:2', Fraction(4, 5)), \
('king:2x2', 'distance', Fraction(3, 5))]
    """
    rows = []
    for spec in specs:
        G = as_graph(spec)
        n = G.number_of_nodes()
        cols = int(spec.split("x")[1])
        z = [Fraction(1, n)] * n
        for lam in lams:
            lam_x = exact_lam(lam)
            # On the grid d_G is the coordinate loss itself; the king's graph has both.
            for loss in (f"l1:{cols}",) + (("distance",) if spec.startswith("king") else ()):
                W = loss_weights(G, z, loss)
                u = exact_minimum(polytopes.U(n, lam_x, graph=G), W)
                f = exact_minimum(polytopes.F(n, lam_x, z, graph=G), W)
                product = None
                if spec.startswith("grid:") and loss.startswith("l1:"):
                    product = _product_northwest_value(G, spec, lam_x, z, W)
                rows.append({"graph": spec, "lam": lam_x, "loss": loss, "U": u.value,
                             "F": f.value, "product": product, "T": f.point})
    return rows


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


def product_target(x: Any, y: Any) -> np.ndarray:
    """``z[r b + c] = x_r y_c``: the product target of the grid ``a x b``.

    Examples
    --------
    >>> product_target(["1/2", "1/2"], ["1/3", "2/3"]).tolist()
    [Fraction(1, 6), Fraction(1, 3), Fraction(1, 6), Fraction(1, 3)]
    """
    xs = [to_fraction(v, "x") for v in x]
    ys = [to_fraction(v, "y") for v in y]
    return np.array([a * b for a in xs for b in ys], dtype=object)


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


def _product_northwest_value(G: nx.Graph, spec: str, lam: Fraction, z: list[Fraction],
                             W: np.ndarray) -> Fraction:
    a, b = (int(x) for x in spec.split(":")[1].split("x"))
    T = product_northwest([Fraction(1, a)] * a, [Fraction(1, b)] * b, lam)
    if not polytopes.F(a * b, lam, z, graph=G).contains(T):
        raise AssertionError(f"{spec}: the product of northwest corners is not in F")
    return sum((W[i, j] * T[i, j] for i in range(a * b) for j in range(a * b)), ZERO)


def king_bounds_table(sizes: Iterable[tuple[int, int]] = ((2, 2), (2, 3), (3, 3)),
                      roots: Iterable[int] = (2, 3)) -> str:
    """docs/graphs.md's table of the king's graph at ``lam = q^2`` (uniform target,
    coordinate loss): the grid's optimum (a lower bound, Theorem G), the king's exact
    optimum, and the product of the northwest corners at ``lam = q`` (in ``F_king``: a
    diagonal move costs ``q`` twice), an upper bound.

    Examples
    --------
    >>> print(king_bounds_table([(2, 2)], [2]).splitlines()[2])
    | 2x2 | 4 | 2/5 | 4/7 | 2/3 |
    """
    lines = ["| a x b | lam | grid optimum (lower bound) | king optimum | "
             "product of northwest corners at sqrt(lam) (upper bound) |",
             "|---|---|---|---|---|"]
    for a, b in sizes:
        x, y = [Fraction(1, a)] * a, [Fraction(1, b)] * b
        c1 = [[abs(i - j) for j in range(a)] for i in range(a)]
        c2 = [[abs(i - j) for j in range(b)] for i in range(b)]
        W, z, n = separable_weights(x, y, c1, c2), product_target(x, y), a * b
        for q in roots:
            lam = Fraction(q * q)
            king = polytopes.F(n, lam, z, graph=f"king:{a}x{b}")
            grid = exact_minimum(polytopes.F(n, lam, z, graph=f"grid:{a}x{b}"), W).value
            T = product_northwest(x, y, q)
            if not king.contains(T):
                raise AssertionError(f"king:{a}x{b}: the product at lam = {q} is not in F")
            upper = sum((W[i, j] * T[i, j] for i in range(n) for j in range(n)), ZERO)
            lines.append(f"| {a}x{b} | {lam} | {grid} | {exact_minimum(king, W).value} | "
                         f"{upper} |")
    return "\n".join(lines)


def staircase_optima(n: int, lam: Any, count: int, seed: int = 0) -> tuple[int, int]:
    """Maximise ``count`` seeded random integer utilities (entries ``-5 .. 5``) over
    ``U_{K_n}`` exactly; returns ``(count, how many optimal vertices found were not
    staircase mechanisms)``.

    Examples
    --------
    >>> staircase_optima(3, 2, 5)
    (5, 0)
    """
    P = polytopes.U(n, lam, graph=f"complete:{n}")
    rng = np.random.default_rng(seed)
    bad = 0
    for _ in range(count):
        _, X = P.maximize(rng.integers(-5, 6, size=(n, n)).tolist())
        bad += not is_staircase(X, lam)
    return count, bad


# ------------------------------------------------------------------ the summary
def which_theorems_hold(graph: Any, lam: Any = 2, z: Any = None
                        ) -> list[tuple[str, str, str]]:
    """For ``dpfix explore graph``: each statement of :data:`CARRY_OVER` with its status
    (docs/graphs.md) and what the engine finds on this graph at ``lam`` (on ``z``, by
    default the uniform target):
    ``"holds here"``, ``"fails here"``, or ``"not checked (n > N)"`` beyond the
    statement's ``max_n`` (the vertex enumerations grow fast).

    Examples
    --------
    >>> [(name, here) for name, _, here in which_theorems_hold("cycle:4")][-1]
    ("proof of Lemma 1: a scale's tight constraints are independent", 'fails here')
    """
    G = as_graph(graph)
    n = G.number_of_nodes()
    z = tuple([Fraction(1, n)] * n) if z is None else tuple(to_fraction(v, "z") for v in z)
    label = G.graph.get("label", "graph")
    out = []
    for name, st in CARRY_OVER.items():
        if n > st.max_n:
            out.append((name, st.status, f"not checked (n > {st.max_n})"))
            continue
        inst = GraphInstance(n, lam, z if st.target else None, tuple(G.edges), label)
        ce = smallest_counterexample(st.predicate, over=st.over, instances=[inst])
        out.append((name, st.status, "holds here" if ce is None else "fails here"))
    return out


def theorems_section(case: Any) -> list[str]:
    """which theorems hold (docs/graphs.md section 8), on this graph:

    A section of ``dpfix explore graph`` (``case`` has ``graph``, ``lam`` and ``z``, None
    for the uniform target): one line per statement, its status and what the engine
    finds here (:func:`which_theorems_hold`).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> print(theorems_section(SimpleNamespace(graph="path:2", lam=2, z=None))[0])
      Theorem 2: proved for every connected graph; holds here
    """
    rows = which_theorems_hold(case.graph, case.lam, case.z)
    return [f"  {name}: {status}; {here}" for name, status, here in rows]


def format_which_theorems(graph: Any, lam: Any = 2) -> str:
    """The lines ``dpfix explore graph`` prints under "which theorems hold": each
    statement of docs/graphs.md's table, its status there, and what the engine finds on
    this graph (:func:`which_theorems_hold`).

    Examples
    --------
    >>> print(format_which_theorems("path:3").splitlines()[0])
    which theorems hold (docs/graphs.md section 8; on this graph at lam = 2):
    """
    rows = which_theorems_hold(graph, lam)
    width = max(len(name) for name, _, _ in rows)
    lines = ["which theorems hold (docs/graphs.md section 8; on this graph "
             f"at lam = {exact_lam(lam)}):"]
    lines += [f"  {name:<{width}}  {status}; {here}" for name, status, here in rows]
    return "\n".join(lines)


# ------------------------------------------------------------------ the tables of docs/graphs.md
def _cell(opt: Fraction, rr: Fraction) -> str:
    return f"{opt}" if opt == rr else f"{opt} ({rr})"


def complete_graph_table(loss: str, n_values: Iterable[int] = (2, 3, 4, 5),
                         lams: Iterable[Any] = (2, 3)) -> str:
    """docs/graphs.md's table of ``F_{K_n}`` for one loss: per ``n`` and ``lam``, the
    certified optimum on each named target, and in brackets the value of randomized
    response with its best remap where it is larger.

    Examples
    --------
    >>> print(complete_graph_table("zero-one", [2], [2]))
    | n | lam | uniform | geometric | asymmetric | zero |
    |---|---|---|---|---|---|
    | 2 | 2 | 1/3 | 1/3 | 4/15 | 0 |
    """
    rows = complete_graph_rows(n_values, lams, [loss])
    names = list(dict.fromkeys(r["target"] for r in rows))
    lines = ["| n | lam | " + " | ".join(names) + " |", "|---" * (len(names) + 2) + "|"]
    for (n, lam), group in itertools.groupby(rows, key=lambda r: (r["n"], r["lam"])):
        cells = {r["target"]: _cell(r["optimum"], r["rr_remap"]) for r in group}
        lines.append(f"| {n} | {lam} | " + " | ".join(cells[t] for t in names) + " |")
    return "\n".join(lines)


def grid_table(specs: Iterable[str] = ("grid:2x2", "king:2x2", "grid:2x3", "king:2x3",
                                       "grid:3x3"), lams: Iterable[Any] = (2, 3)) -> str:
    """docs/graphs.md's table of the grid and the king's graph (uniform target): the
    optima of ``U_G`` and ``F_G`` for the coordinate loss and the graph distance, and
    the value of the product of northwest corners (grids, coordinate loss).

    Examples
    --------
    >>> print(grid_table(["grid:2x2"], [2]))
    | graph | lam | loss | min over U | min over F | product of northwest corners |
    |---|---|---|---|---|---|
    | grid:2x2 | 2 | l1:2 | 2/3 | 2/3 | 2/3 |
    """
    lines = ["| graph | lam | loss | min over U | min over F | product of northwest corners |",
             "|---|---|---|---|---|---|"]
    for r in grid_rows(specs, lams):
        product = "-" if r["product"] is None else str(r["product"])
        lines.append(f"| {r['graph']} | {r['lam']} | {r['loss']} | {r['U']} | {r['F']} | "
                     f"{product} |")
    return "\n".join(lines)


#: The searches of docs/graphs.md's sections on the complete graph, trees and cycles:
#: name -> (predicate, graphs, lam heights, target denominators).
SEARCHES: dict[str, tuple[Callable[[GraphInstance], bool], str, int, int]] = {
    "randomized response + remap, zero-one": (rr_remap_optimal_zero_one, "complete", 3, 6),
    "randomized response + remap, |i - j|": (rr_remap_optimal_abs, "complete", 3, 6),
    "graph geometric mechanism exists, trees": (graph_geometric_exists, "trees", 4, 0),
    "northwest analogue, trees, d_G": (northwest_distance, "trees", 3, 8),
    "northwest analogue, trees, d_G^2": (northwest_distance_squared, "trees", 3, 8),
    "northwest analogue, cycles, d_G": (northwest_distance, "cycles", 3, 8),
    "northwest analogue, cycles, d_G^2": (northwest_distance_squared, "cycles", 3, 8),
}


def search(name: str, n_max: int = 5) -> Any:
    """Run one search of :data:`SEARCHES` through the engine: the graphs of its kind
    with ``n <= n_max`` by size then atlas order (``K_n`` for "complete"), then
    ``lams_by_height(H)``, then ``compositions(N)`` (no target when ``N = 0``).

    Examples
    --------
    >>> print(search("graph geometric mechanism exists, trees").instance)
    atlas:13 (edges 03 13 23), n = 4, lam = 3/2, z = None
    """
    from dpfix.explore.instances import compositions, lams_by_height

    predicate, kind, height, N = SEARCHES[name]
    lams = list(lams_by_height(height))
    targets: Any = "none" if N == 0 else (lambda n: compositions(N, n))
    if kind == "complete":
        insts = complete_instances(range(2, n_max + 1), lams, targets)
    else:
        insts = graph_instances(atlas_graphs(range(2, n_max + 1), kind), lams, targets)
    return smallest_counterexample(predicate, over="instance", instances=insts)


def search_report(name: str, loss: str | None = None) -> str:
    """The smallest counterexample of one search, printed exactly: the instance, the
    optimum of ``F_G`` and the value of the candidate (docs/graphs.md)."""
    ce = search(name)
    if ce is None:
        return f"{name}: no counterexample"
    inst = ce.instance
    lines = [f"{name}: smallest counterexample at {inst} (instance {ce.visited} visited)"]
    if loss is not None:
        z, G = inst.z_array(), inst.neighbour_graph()
        W = loss_weights(G, z, loss)
        opt = exact_minimum(polytopes.F(inst.n, inst.lam, z, graph=G), W)
        N = randomized_response(inst.n, inst.lam) if name.startswith("randomized") else \
            graph_geometric(G, inst.lam)[0]
        cand = best_remap(N, z, W)
        lines += [f"optimum of F_G: {opt.value}; candidate with its best remap: {cand.value}",
                  "an optimal T:", _format(opt.point), "the candidate's best remap R:",
                  _format(cand.point)]
    else:
        alpha = graph_geometric(inst.neighbour_graph(), inst.lam)[1]
        lines.append("alpha = (" + ", ".join(map(str, alpha)) + ")")
    return "\n".join(lines)


def _format(M: np.ndarray) -> str:
    from dpfix.numbers.display import format_exact

    return format_exact(M)


REPORTS = ("carry-over", "complete", "trees", "grid")


def report(what: str) -> str:
    """The text behind one section of docs/graphs.md (``python -m
    dpfix.explore.graph_theory WHAT``): ``"carry-over"``, ``"complete"``, ``"trees"``
    or ``"grid"``."""
    if what == "carry-over":
        out = []
        for name, st in CARRY_OVER.items():
            if st.status == PROVED:
                continue
            ce = carry_over_search(name, n_values=[2, 3, 4])
            out.append(f"{name}:\n{ce}")
            if st.over == "instance":
                out.append("the scale: (" + ", ".join(map(str, dependent_scale(ce.instance)))
                           + ")")
        return "\n".join(out)
    if what == "complete":
        return "\n\n".join([str(fixed_point_staircase_search()),
                            complete_graph_table("zero-one"), complete_graph_table("abs"),
                            search_report("randomized response + remap, zero-one", "zero-one"),
                            search_report("randomized response + remap, |i - j|", "abs")])
    if what == "trees":
        return "\n\n".join([search_report("graph geometric mechanism exists, trees"),
                            search_report("northwest analogue, trees, d_G", "distance"),
                            search_report("northwest analogue, trees, d_G^2",
                                          "distance-squared"),
                            search_report("northwest analogue, cycles, d_G", "distance"),
                            search_report("northwest analogue, cycles, d_G^2",
                                          "distance-squared")])
    if what == "grid":
        return grid_table() + "\n\n" + king_bounds_table()
    raise ValueError(f"report: one of {', '.join(REPORTS)}, got {what!r}")


if __name__ == "__main__":  # pragma: no cover - the command of docs/graphs.md
    import sys

    for what in sys.argv[1:] or REPORTS:
        print(report(what))
        print()
