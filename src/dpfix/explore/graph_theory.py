"""Which of the paper's results carry over to a neighbour graph (docs/graphs.md, sections
8 to 10): the statements, checked exactly on :class:`~dpfix.explore.graph_instances.GraphInstance`
s as predicates for :func:`dpfix.explore.search.smallest_counterexample`.

- the paper's statements on a graph (Theorems 2, 3, 4 and 10, Proposition 1,
  Corollary 2, and two steps of the path's proofs), the table :data:`CARRY_OVER` and
  its search (:func:`carry_over_search`), and what holds on one graph
  (:func:`which_theorems_hold`, the section of ``dpfix explore graph``);
- the candidates of the complete graph, trees and cycles: randomized response and the
  graph geometric mechanism followed by their best remaps (:func:`rr_remap_optimal`,
  :func:`northwest_analogue_holds`), and staircase vertices.

The objects are those of :mod:`dpfix.theory.polytopes` with ``graph=`` and the scales of
:func:`dpfix.theory.scales.graph_scales`; the mechanisms and exact optima come from
:mod:`dpfix.explore.graph_mechanisms`, the tables and reports of docs/graphs.md from
:mod:`dpfix.explore.graph_tables`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import networkx as nx
import numpy as np

from dpfix.explore.graph_instances import GraphInstance, atlas_graphs, graph_instances
from dpfix.explore.graph_mechanisms import (
    best_remap,
    exact_minimum,
    graph_geometric,
    is_staircase,
    loss_weights,
    randomized_response,
)
from dpfix.explore.search import SearchResult, smallest_counterexample
from dpfix.numbers.deprecation import renamed_keywords
from dpfix.numbers.exact import exact_lam, rank, to_fraction
from dpfix.theory import polytopes
from dpfix.theory.graphs import as_graph
from dpfix.theory.scales import graph_scales

__all__ = ["theorem2_holds", "theorem3_holds", "theorem4_holds", "theorem10_holds",
           "proposition1_holds", "corollary2_holds", "tight_count_is_n_minus_1",
           "scale_constraints_independent", "dependent_scale", "psi_affinely_simplified",
           "Statement", "PROVED", "FAILS", "CARRY_OVER", "carry_over_search",
           "which_theorems_hold", "theorems_section", "format_which_theorems",
           "rr_remap_optimal", "rr_remap_optimal_zero_one", "rr_remap_optimal_abs",
           "staircase_vertex", "graph_geometric_exists", "northwest_analogue_holds",
           "northwest_distance", "northwest_distance_squared", "northwest_analogue_values",
           "optimal_noise_remap_holds"]

ZERO, ONE = Fraction(0), Fraction(1)


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


@renamed_keywords(n_values="n", lams="lam")
def carry_over_search(name: str, n: Iterable[int] = (2, 3), lam: Iterable[Any] = (2,),
                      budget: Any = None) -> SearchResult:
    """The engine's smallest counterexample to one statement of :data:`CARRY_OVER` over
    the connected graphs by size, then atlas order, then ``lam``, then the named
    targets (a :class:`~dpfix.explore.search.SearchResult`: false when it held on every
    instance visited).

    Examples
    --------
    >>> ce = carry_over_search("proof of Lemma 1: a scale's tight constraints are independent",
    ...                        n=[2, 3, 4]).counterexample
    >>> print(ce.instance)
    atlas:16 (edges 01 03 12 23), n = 4, lam = 2, z = None
    >>> dependent_scale(ce.instance).tolist()
    [Fraction(2, 9), Fraction(4, 9), Fraction(2, 9), Fraction(1, 9)]
    """
    st = CARRY_OVER[name]
    insts = graph_instances(atlas_graphs(n), lam, "named" if st.target else "none")
    return smallest_counterexample(st.predicate, over=st.over, instances=insts, budget=budget)


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
        found = smallest_counterexample(st.predicate, over=st.over, instances=[inst])
        out.append((name, st.status, "fails here" if found else "holds here"))
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


# ------------------------------------------------------------------ the complete graph
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


def staircase_vertex(T: np.ndarray, inst: GraphInstance) -> bool:
    """For ``over="F"`` or ``"U"``: the vertex ``T`` is a staircase mechanism."""
    return is_staircase(T, inst.lam)


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


#: Names this module held before the graph rooms were split, and their rooms now. Those it
#: imports to check its statements are found here as they are; the other instances and
#: mechanisms with a deprecation warning; the tables and reports (a room above this one,
#: which imports it) are named in the error.
_MOVED = {**dict.fromkeys(("GraphInstance", "atlas_graphs", "graph_instances",
                           "complete_instances"), "graph_instances"),
          **dict.fromkeys(("LPCertificate", "exact_minimum", "distance_matrix", "loss_weights",
                           "best_remap", "randomized_response", "graph_geometric",
                           "is_staircase", "product_northwest", "product_target",
                           "separable_weights"), "graph_mechanisms"),
          **dict.fromkeys(("complete_graph_rows", "middle_value_vertices",
                           "non_staircase_vertex", "fixed_point_staircase_search", "grid_rows",
                           "king_bounds_table", "staircase_optima", "complete_graph_table",
                           "grid_table", "SEARCHES", "search", "search_report", "REPORTS",
                           "report"), "graph_tables")}


def __getattr__(name: str) -> Any:
    from dpfix.explore import graph_instances as instances_room
    from dpfix.explore import graph_mechanisms as mechanisms_room
    from dpfix.numbers.deprecation import warn_deprecated

    home = _MOVED.get(name)
    if home == "graph_tables":
        raise AttributeError(f"dpfix.explore.graph_theory.{name} is now "
                             f"dpfix.explore.graph_tables.{name}")
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warn_deprecated(f"dpfix.explore.graph_theory.{name} is deprecated; use "
                    f"dpfix.explore.{home}.{name} (the old path goes in the next release)")
    room = instances_room if home == "graph_instances" else mechanisms_room
    return getattr(room, name)
