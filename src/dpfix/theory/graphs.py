"""Neighbour graphs: the values ``0..n-1`` and which pairs of them are neighbours
(docs/graphs.md).

The paper's neighbouring relation joins the counts ``i`` and ``i + 1``: the path.
A neighbour graph ``G`` on the nodes ``0..n-1`` with edge weights ``w >= 1``
(integer or rational; attribute ``"weight"``, 1 when absent) asks of a mechanism
``T`` that for every edge ``uv`` and every column ``j``

    ``T_uj <= lam^w T_vj``  and  ``T_vj <= lam^w T_uj``.

This module reads a graph (:func:`as_graph`: a networkx graph, a named graph
``"path:5"``, ``"cycle:5"``, ``"complete:4"``, ``"star:4"``, ``"grid:2x3"``,
``"king:2x3"``, ``"atlas:13"``, or a file of edges), gives the exact ratios ``lam^w``
(:func:`edge_ratios`), the rows of the polytopes (:func:`neighbour_rows`,
:func:`subset_rows`), the automorphisms (:func:`automorphisms`) and the
potentials of the extreme rays of the cone ``C_G`` (:func:`extreme_potentials`,
docs/graphs.md section 2; the scales themselves are
:func:`dpfix.theory.scales.graph_scales`).

A graph must be connected: values in different components would be bound by no
constraint at all, so a mechanism could reveal the component of the true value
(privacy is never weakened silently); :func:`as_graph` refuses it.
"""

from __future__ import annotations

import itertools
import numbers
import re
from collections.abc import Iterator
from fractions import Fraction
from math import gcd, lcm
from pathlib import Path
from typing import Any

import networkx as nx

from dpfix.numbers.exact import to_fraction

__all__ = ["GraphLike", "as_graph", "is_path", "graph_label", "exact_power", "edge_ratios",
           "neighbour_rows", "subset_rows", "automorphisms", "count_automorphisms",
           "extreme_potentials",
           "tight_graph", "lipschitz_faces", "cone_faces", "face_orbits",
           "u_graph_vertex_count", "ORBIT_GAIN", "scale_count_formula", "NAMED",
           "ATLAS_LAST", "POWER_MAX_BITS"]

#: A neighbour graph as the functions of dpfix take it.
GraphLike = Any  # networkx.Graph | str | pathlib.Path

Row = dict[int, Fraction]
Rows = list[tuple[Row, Fraction]]

#: The named graphs: ``kind:N`` (N nodes) or ``kind:AxB`` (A rows of B nodes, row-major),
#: and ``atlas:K``, the graph ``networkx.graph_atlas(K)`` (at most 7 nodes).
NAMED = ("path:N", "cycle:N", "complete:N", "star:N", "grid:AxB", "king:AxB", "atlas:K")

_SPEC = re.compile(r"^(path|cycle|complete|star|grid|king|atlas):(\d+)(?:x(\d+))?$")
#: The last index of networkx's graph atlas (1253 graphs on 0 to 7 nodes).
ATLAS_LAST = 1252


def _named(kind: str, a: int, b: int | None) -> nx.Graph:
    """The named graph ``kind`` on ``a`` (or ``a x b``) nodes, numbered ``0..n-1``."""
    if kind in ("grid", "king"):
        if b is None or a < 1 or b < 1 or a * b < 2:
            raise ValueError(f"graph: {kind}:AxB needs A, B >= 1 and A*B >= 2, got "
                             f"{kind}:{a}{'' if b is None else f'x{b}'}")
        G = nx.Graph()
        G.add_nodes_from(range(a * b))
        steps = ((0, 1), (1, 0)) + (((1, 1), (1, -1)) if kind == "king" else ())
        for r in range(a):
            for c in range(b):
                for dr, dc in steps:
                    r2, c2 = r + dr, c + dc
                    if 0 <= r2 < a and 0 <= c2 < b:
                        G.add_edge(r * b + c, r2 * b + c2)
        return G
    if b is not None:
        raise ValueError(f"graph: {kind}:{'K' if kind == 'atlas' else 'N'} takes one number, "
                         f"got {kind}:{a}x{b}")
    if kind == "atlas":
        if a > ATLAS_LAST:
            raise ValueError(f"graph: atlas:K needs 0 <= K <= {ATLAS_LAST} (networkx's atlas "
                             f"holds the graphs on at most 7 nodes), got atlas:{a}")
        return nx.graph_atlas(a)
    smallest = 3 if kind == "cycle" else 2
    if a < smallest:
        raise ValueError(f"graph: {kind}:N needs N >= {smallest}, got {kind}:{a}")
    if kind == "path":
        return nx.path_graph(a)
    if kind == "cycle":
        return nx.cycle_graph(a)
    if kind == "complete":
        return nx.complete_graph(a)
    return nx.star_graph(a - 1)  # star:N: the centre 0 and N - 1 leaves


def _read_edges(path: Path) -> nx.Graph:
    """A file of edges: one ``u v`` or ``u v w`` a line (``w`` rational); ``#`` comments."""
    G = nx.Graph()
    for k, line in enumerate(path.read_text().splitlines(), start=1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) not in (2, 3):
            raise ValueError(f"graph: {path}, line {k}: expected 'u v' or 'u v weight', "
                             f"got {line.strip()!r}")
        try:
            u, v = int(fields[0]), int(fields[1])
        except ValueError:
            raise ValueError(f"graph: {path}, line {k}: the nodes must be integers, got "
                             f"{line.strip()!r}") from None
        if G.has_edge(u, v):
            raise ValueError(f"graph: {path}, line {k}: the edge {u}-{v} is listed twice")
        w = to_fraction(fields[2], f"graph: {path}, line {k}: the weight") if len(fields) == 3 \
            else Fraction(1)
        G.add_edge(u, v, weight=w)
    if G.number_of_nodes() == 0:
        raise ValueError(f"graph: {path} lists no edge")
    return G


def _check(G: nx.Graph, n: int | None) -> nx.Graph:
    """A validated copy with integer nodes ``0..n-1`` and Fraction weights ``>= 1``."""
    if G.is_directed() or G.is_multigraph():
        raise ValueError("graph: must be a simple undirected networkx.Graph (the neighbour "
                         "relation is symmetric), got a "
                         f"{'directed ' if G.is_directed() else ''}"
                         f"{'multigraph' if G.is_multigraph() else 'graph'}")
    bad = [v for v in G.nodes if isinstance(v, bool) or not isinstance(v, numbers.Integral)]
    if bad:
        raise ValueError(f"graph: the nodes must be the integers 0..n-1, got the node {bad[0]!r}")
    nodes = [int(v) for v in G.nodes]
    m = len(nodes) if n is None else n
    if set(nodes) != set(range(m)):
        missing = sorted(set(range(m)) - set(nodes))[:3]
        extra = sorted(set(nodes) - set(range(m)))[:3]
        raise ValueError(f"graph: the nodes must be exactly 0..{m - 1}"
                         + (f"; missing {missing}" if missing else "")
                         + (f"; not in range {extra}" if extra else ""))
    H = nx.Graph()
    H.add_nodes_from(range(m))
    for u0, v0, data in G.edges(data=True):
        u, v = int(u0), int(v0)
        if u == v:
            raise ValueError(f"graph: a self-loop at {u} (a value is not its own neighbour)")
        w = to_fraction(data.get("weight", 1), f"graph: the weight of edge {u}-{v}")
        if w < 1:
            raise ValueError(f"graph: the weight of edge {u}-{v} must be >= 1, got {w}")
        H.add_edge(min(u, v), max(u, v), weight=w)
    if m >= 2 and not nx.is_connected(H):
        parts = sorted(sorted(c) for c in nx.connected_components(H))
        raise ValueError(f"graph: not connected (components {parts[:3]}"
                         f"{' ...' if len(parts) > 3 else ''}): values in different components "
                         "would be bound by no privacy constraint")
    H.graph.update(G.graph)
    return H


def as_graph(graph: GraphLike, n: int | None = None) -> nx.Graph:
    """The neighbour graph ``graph`` checked: a new networkx graph on ``0..n-1`` whose
    edges carry exact weights (``"weight"``, a Fraction ``>= 1``).

    Parameters
    ----------
    graph : networkx.Graph, str or pathlib.Path
        A graph on the integer nodes ``0..n-1``; a named graph ``path:N``, ``cycle:N``,
        ``complete:N``, ``star:N`` (the centre 0 and ``N - 1`` leaves), ``grid:AxB`` or
        ``king:AxB`` (node ``(r, c)`` is ``r B + c``; the king's graph adds the
        diagonals), ``atlas:K`` (``networkx.graph_atlas(K)``, numbered as there); or a file
        of edges, one ``u v`` or ``u v weight`` a line.
    n : int, optional
        The number of values, when known: the nodes must be exactly ``0..n-1``.

    Returns
    -------
    networkx.Graph
        A copy (the input is not modified); ``G.graph["label"]`` names it.

    Raises
    ------
    ValueError
        Nodes other than ``0..n-1``, a self-loop, a weight below 1, a disconnected
        graph, an unknown name or an unreadable file.
    ExactnessError
        A float weight.

    Examples
    --------
    >>> G = as_graph("cycle:4")
    >>> sorted(G.edges), G.graph["label"]
    ([(0, 1), (0, 3), (1, 2), (2, 3)], 'cycle:4')
    >>> sorted(as_graph("grid:2x3").edges)
    [(0, 1), (0, 3), (1, 2), (1, 4), (2, 5), (3, 4), (4, 5)]
    >>> as_graph(nx.Graph([(0, 1), (2, 3)]))
    Traceback (most recent call last):
    ...
    ValueError: graph: not connected (components [[0, 1], [2, 3]]): values in different \
components would be bound by no privacy constraint
    """
    if isinstance(graph, nx.Graph):
        label = graph.graph.get("label", "graph")
        G = _check(graph, n)
    elif isinstance(graph, (str, Path)):
        text = str(graph).strip()
        match = _SPEC.match(text)
        if match:
            kind, a, b = match.group(1), int(match.group(2)), match.group(3)
            G, label = _check(_named(kind, a, None if b is None else int(b)), None), text
        elif Path(text).is_file():
            G, label = _check(_read_edges(Path(text)), None), Path(text).name
        else:
            raise ValueError(f"graph: {text!r} is neither a named graph ({', '.join(NAMED)}) "
                             "nor a file of edges")
        if n is not None and G.number_of_nodes() != n:
            raise ValueError(f"graph: {text!r} has {G.number_of_nodes()} nodes, but n = {n}")
    else:
        raise TypeError(f"graph: a networkx.Graph, a name such as 'cycle:5' or a file of edges, "
                        f"got {type(graph).__name__}")
    G.graph["label"] = label
    return G


def is_path(G: nx.Graph) -> bool:
    """Whether ``G`` is the paper's neighbour graph: the path ``0 - 1 - ... - n-1``,
    every weight 1.

    Examples
    --------
    >>> is_path(as_graph("path:4")), is_path(as_graph("star:3"))
    (True, False)
    """
    n = G.number_of_nodes()
    return (G.number_of_edges() == n - 1
            and all(abs(u - v) == 1 and w == 1 for u, v, w in G.edges(data="weight")))


def graph_label(G: nx.Graph) -> str:
    """How a graph is named in a polytope's repr and in reports.

    Examples
    --------
    >>> graph_label(as_graph("king:2x2"))
    'king:2x2'
    """
    return str(G.graph.get("label", "graph"))


def _iroot(x: int, q: int) -> int:
    """The integer part of the ``q``-th root of ``x >= 0`` (Newton's method in integers)."""
    if x < 2:
        return x
    r = 1 << -(-x.bit_length() // q)  # 2^ceil(bits / q) > the root
    while True:
        s = ((q - 1) * r + x // r ** (q - 1)) // q
        if s >= r:
            return r
        r = s


#: The most bits :func:`exact_power` lets ``lam^w`` have (its numerator or denominator):
#: a weight so large that ``lam^w`` has more is refused, not computed (``lam = 2`` and
#: ``w = 1e400`` would need ``10^400`` bits; ``w = 1000`` needs 1001).
POWER_MAX_BITS = 1 << 16


def exact_power(lam: Fraction, w: Fraction) -> Fraction | None:
    """``lam^w`` exactly when it is rational (``lam > 0``, ``w`` rational), else None.

    With ``w = p / q`` in lowest terms and ``lam = a / b`` in lowest terms, ``lam^w``
    is rational exactly when ``a`` and ``b`` are both ``q``-th powers (``gcd(p, q) = 1``):
    then it is ``(a^(1/q) / b^(1/q))^p``.

    Raises
    ------
    ValueError
        When ``lam^w`` would have more than :data:`POWER_MAX_BITS` bits.

    Examples
    --------
    >>> exact_power(Fraction(4), Fraction(3, 2)), exact_power(Fraction(2), Fraction(1, 2))
    (Fraction(8, 1), None)
    >>> exact_power(Fraction(4, 9), Fraction(-3, 2)), exact_power(Fraction(4, 3), Fraction(3, 2))
    (Fraction(27, 8), None)
    """
    lam, w = Fraction(lam), Fraction(w)
    if lam <= 0:
        raise ValueError(f"exact_power: lam must be > 0, got {lam}")
    p, q = w.numerator, w.denominator
    a, b = lam.numerator, lam.denominator
    ra, rb = _iroot(a, q), _iroot(b, q)
    if ra ** q != a or rb ** q != b:
        return None
    bits = abs(p) * (max(ra, rb).bit_length() - 1) + 1  # at most the bits of ra^p or rb^p
    if bits > POWER_MAX_BITS:
        raise ValueError(f"exact_power: lam^w = {lam}^({_short(w)}) would have {_size(bits)} "
                         f"bits, more than {POWER_MAX_BITS:,}")
    return Fraction(ra, rb) ** p


def edge_ratios(G: nx.Graph, lam: Fraction) -> list[tuple[int, int, Fraction]]:
    """``(u, v, lam^w)`` for every edge ``u < v`` of a checked graph, in sorted order.

    Raises
    ------
    ValueError
        When ``lam^w`` is irrational for an edge (rational ``w`` with rational ``lam``).

    Examples
    --------
    >>> G = as_graph(nx.Graph([(0, 1, {"weight": 2}), (1, 2, {"weight": Fraction(3, 2)})]))
    >>> edge_ratios(G, Fraction(4))
    [(0, 1, Fraction(16, 1)), (1, 2, Fraction(8, 1))]
    >>> edge_ratios(G, Fraction(2))
    Traceback (most recent call last):
    ...
    ValueError: graph: edge 1-2 has weight 3/2 and lam^w = 2^(3/2) is irrational; choose lam \
and the weights so that every lam^w is rational
    """
    out = []
    for u, v in sorted(G.edges):
        w = G.edges[u, v]["weight"]
        if not isinstance(lam, numbers.Rational) and w.denominator == 1:
            out.append((u, v, lam ** int(w)))  # a real algebraic lam: exact in Q(lam)
            continue
        try:
            r = exact_power(lam, w)
        except ValueError as exc:
            raise ValueError(f"graph: edge {u}-{v} has weight {_short(w)}: "
                             f"{str(exc).split(': ', 1)[1]} (a weight this large binds next "
                             "to nothing, and its ratio cannot be held exactly)") from None
        if r is None:
            raise ValueError(f"graph: edge {u}-{v} has weight {w} and lam^w = {lam}^({w}) is "
                             "irrational; choose lam and the weights so that every lam^w is "
                             "rational")
        out.append((u, v, r))
    return out


def _size(x: int) -> str:
    """A non-negative integer as text: in full up to 9 digits, else its order of magnitude."""
    return f"{x:,}" if x < 10**9 else f"about 10^{int(x.bit_length() * 0.30103)}"


def _short(w: Fraction) -> str:
    """A weight as text: in full when short, else its order of magnitude."""
    if max(w.numerator.bit_length(), w.denominator.bit_length()) < 64:
        return str(w)
    return _size(w.numerator // w.denominator)


def neighbour_rows(n: int, ratios: list[tuple[int, int, Fraction]]) -> tuple[Rows, Rows]:
    """The rows of ``U_G`` (``(coefficients, bound)``, ``T`` flattened row-major): per
    column ``j`` and edge ``(u, v, r = lam^w)`` in the order given, ``T_uj <= r T_vj`` then
    the reverse; then the row sums ``T 1 = 1``. The path's edges ``(i, i+1, lam)`` give
    :func:`dpfix.theory.polytopes.u_rows`.

    Examples
    --------
    >>> ub, eq = neighbour_rows(2, [(0, 1, Fraction(2))])
    >>> ub[:2], eq[0]
    ([({0: Fraction(1, 1), 2: Fraction(-2, 1)}, Fraction(0, 1)), \
({2: Fraction(1, 1), 0: Fraction(-2, 1)}, Fraction(0, 1))], \
({0: Fraction(1, 1), 1: Fraction(1, 1)}, Fraction(1, 1)))
    """
    zero, one = Fraction(0), Fraction(1)
    ub: Rows = []
    for j in range(n):
        for u, v, r in ratios:
            a, b = u * n + j, v * n + j
            ub.append(({a: one, b: -r}, zero))  # T[u,j] <= r T[v,j]
            ub.append(({b: one, a: -r}, zero))  # T[v,j] <= r T[u,j]
    eq = [({i * n + j: one for j in range(n)}, one) for i in range(n)]
    return ub, eq


def subset_rows(n: int, ratios: list[tuple[int, int, Fraction]], delta: Fraction
                ) -> tuple[Rows, Rows]:
    """The subset form of (eps, delta)-DP on the edges ``(u, v, lam)`` given: ``-T_ij <= 0``,
    then per edge, order ``(a, b)`` = ``(u, v)``, ``(v, u)`` and non-empty proper subset
    ``S`` (bit ``j`` of ``mask = 1 .. 2^n - 2``): ``sum_(j in S) T_aj - lam T_bj <= delta``;
    the row sums. The path's edges give :func:`dpfix.theory.polytopes.delta_rows`.

    Examples
    --------
    >>> ub, eq = subset_rows(2, [(0, 1, Fraction(2))], Fraction(1, 10))
    >>> len(ub), ub[4]
    (8, ({0: Fraction(1, 1), 2: Fraction(-2, 1)}, Fraction(1, 10)))
    """
    one = Fraction(1)
    ub: Rows = [({v: -one}, Fraction(0)) for v in range(n * n)]
    for u, v, r in ratios:
        for a, b in ((u, v), (v, u)):
            for mask in range(1, 2 ** n - 1):
                row: Row = {}
                for j in range(n):
                    if mask >> j & 1:
                        row[a * n + j], row[b * n + j] = one, -r
                ub.append((row, delta))
    eq = [({i * n + j: one for j in range(n)}, one) for i in range(n)]
    return ub, eq


def automorphisms(G: nx.Graph) -> tuple[tuple[int, ...], ...]:
    """Every automorphism of ``G`` keeping the weights, as a permutation ``rho`` of the
    nodes (``rho[u]`` the image of ``u``), the identity first, in full.

    Examples
    --------
    >>> automorphisms(as_graph("path:3"))
    ((0, 1, 2), (2, 1, 0))
    >>> len(automorphisms(as_graph("cycle:5"))), len(automorphisms(as_graph("complete:4")))
    (10, 24)
    """
    n = G.number_of_nodes()
    perms = {tuple(m[u] for u in range(n)) for m in _automorphisms_iter(G)}
    identity = tuple(range(n))
    return (identity, *sorted(perms - {identity}))


def _automorphisms_iter(G: nx.Graph) -> Iterator[dict]:
    """The automorphisms of ``G`` keeping the weights, one at a time (VF2, networkx)."""
    matcher = nx.algorithms.isomorphism.GraphMatcher(
        G, G, edge_match=lambda a, b: a["weight"] == b["weight"])
    return matcher.isomorphisms_iter()


def count_automorphisms(G: nx.Graph, at_most: int | None = None) -> int:
    """The number of automorphisms of ``G`` keeping the weights; with ``at_most``, the
    count stops at ``at_most + 1`` (enough to refuse a graph with too many, before
    :func:`automorphisms` lists all of them: ``complete:n`` has ``n!``).

    Examples
    --------
    >>> count_automorphisms(as_graph("complete:4"))
    24
    >>> count_automorphisms(as_graph("complete:6"), at_most=100)  # of 720
    101
    """
    found = _automorphisms_iter(G)
    if at_most is not None:
        found = itertools.islice(found, at_most + 1)
    return sum(1 for _ in found)


def tight_graph(G: nx.Graph, h: tuple[Fraction, ...]) -> nx.Graph:
    """The edges of ``G`` tight at the potential ``h``: ``|h_u - h_v| = w_uv``.

    Examples
    --------
    >>> sorted(tight_graph(as_graph("cycle:4"), (0, 1, 0, 0)).edges)
    [(0, 1), (1, 2)]
    """
    T = nx.Graph()
    T.add_nodes_from(G.nodes)
    T.add_edges_from((u, v) for u, v, w in G.edges(data="weight") if abs(h[u] - h[v]) == w)
    return T


def _search_order(G: nx.Graph) -> list[int]:
    """Breadth-first from 0: every node after the first has an earlier neighbour."""
    return [0] + [v for _, v in nx.bfs_edges(G, 0)]


def extreme_potentials(G: nx.Graph) -> list[tuple[Fraction, ...]]:
    """The potentials ``h`` (``t = lam^h``, in units of ``log lam``) of the extreme rays
    of ``C_G``, each with least entry 0, in the order of the scales (docs/graphs.md,
    section 2).

    By Lemma 1 for graphs (docs/graphs.md), ``h`` gives an extreme ray iff
    ``|h_u - h_v| <= w_uv`` on every edge and the tight edges form a connected
    spanning graph. Every such ``h`` lies on the lattice ``(1/L) Z``, ``L`` the
    least common denominator of the weights (``h_v - h_0`` is a signed sum of
    weights along a tight path), so a search over the nodes in breadth-first
    order, each within its parent's weight on that lattice, meets them all; a
    bridge is tight at every one (so a tree takes ``2^(n-1)`` steps), branches are
    cut when a node whose neighbours are all placed has no tight edge, and the
    tight graph's connectivity is checked at the end.

    The order: by the differences ``h_(i+1) - h_i`` of consecutive nodes compared from
    the last one down (for the path, the order of :func:`dpfix.theory.scales.psi`).

    Examples
    --------
    >>> [tuple(map(int, h)) for h in extreme_potentials(as_graph("path:3"))]
    [(2, 1, 0), (0, 1, 0), (1, 0, 1), (0, 1, 2)]
    >>> len(extreme_potentials(as_graph("complete:4")))
    14
    """
    n = G.number_of_nodes()
    if n == 1:
        return [(Fraction(0),)]
    order = _search_order(G)
    pos = {v: k for k, v in enumerate(order)}
    L = lcm(*(w.denominator for _, _, w in G.edges(data="weight")))
    step = Fraction(1, L)
    parent = {v: u for u, v in nx.bfs_edges(G, 0)}
    bridges = {frozenset(e) for e in nx.bridges(G)}
    earlier = {v: [(u, G.edges[u, v]["weight"]) for u in G[v] if pos[u] < pos[v]]
               for v in order}
    # the node at whose placement every neighbour of u is placed
    closes: dict[int, list[int]] = {v: [] for v in order}
    for u in order:
        last = max([pos[u]] + [pos[x] for x in G[u]])
        closes[order[last]].append(u)
    h: dict[int, Fraction] = {0: Fraction(0)}
    found: list[tuple[Fraction, ...]] = []

    def has_tight(u: int) -> bool:
        return any(abs(h[u] - h[x]) == d["weight"] for x, d in G[u].items())

    def place(k: int) -> None:
        if k == n:
            pot = tuple(h[v] for v in range(n))
            if nx.is_connected(tight_graph(G, pot)):
                lo = min(pot)
                found.append(tuple(x - lo for x in pot))
            return
        v = order[k]
        p = parent[v]
        wp = G.edges[p, v]["weight"]
        m = int(wp / step)
        # a bridge is tight at every vertex (without it the tight graph is disconnected)
        steps = (-m, m) if frozenset((p, v)) in bridges else range(-m, m + 1)
        for s in steps:
            x = h[p] + s * step
            if all(abs(x - h[u]) <= w for u, w in earlier[v]):
                h[v] = x
                if all(has_tight(u) for u in closes[v]):
                    place(k + 1)
                del h[v]

    if all(has_tight(u) for u in closes[0]):
        place(1)
    return sorted(found, key=lambda pot: [pot[i + 1] - pot[i] for i in range(n - 1)][::-1])


def _tight_set(G: nx.Graph, h: tuple[Fraction, ...]) -> frozenset[tuple[int, int]]:
    """The tight constraints at ``h``: ``(u, v)`` when ``h_u - h_v = w_uv``
    (``t_u = lam^w t_v``)."""
    out = set()
    for u, v, w in G.edges(data="weight"):
        if h[u] - h[v] == w:
            out.add((u, v))
        elif h[v] - h[u] == w:
            out.add((v, u))
    return frozenset(out)


def lipschitz_faces(G: nx.Graph) -> list[frozenset[tuple[int, int]]]:
    """Every non-empty face of the Lipschitz polytope ``P_G`` (docs/graphs.md section 6),
    as its set of tight constraints ``(u, v)`` (``h_u - h_v = w_uv``): equivalently
    every non-zero face of the cone ``C_G``. Sorted by size, then by the pairs.

    A face's tight set is the intersection of the tight sets of its vertices, and every
    such intersection is a face's (the face where those constraints are tight); so the
    faces are the closure of the vertices' tight sets under intersection. The empty set
    is the whole polytope.

    Examples
    --------
    >>> len(lipschitz_faces(as_graph("path:4")))  # the cube [-1, 1]^3: 3^3 faces
    27
    >>> len(lipschitz_faces(as_graph("complete:3")))  # a hexagon: 6 + 6 + 1
    13
    """
    vertices = {_tight_set(G, h) for h in extreme_potentials(G)}
    faces = set(vertices)
    frontier = set(vertices)
    while frontier:
        new = {f & v for f in frontier for v in vertices} - faces
        faces |= new
        frontier = new
    faces.add(frozenset())
    return sorted(faces, key=lambda f: (len(f), sorted(f)))


def cone_faces(G: nx.Graph, lam: Fraction) -> list[tuple[list[list[int]], list[tuple[int, int,
                                                                                       int, int]]]]:
    """The non-zero faces of ``C_G`` for :func:`dpfix.theory.enumeration.count_face_sets`:
    for each face of :func:`lipschitz_faces`, the integer basis of its span (one vector
    ``lam^h`` per component of its tight graph, zero elsewhere) and the strict
    inequalities ``q t_u < p t_v`` (``lam^w = p/q``) of the constraints not tight on it.

    Examples
    --------
    >>> cone_faces(as_graph("path:2"), Fraction(2))[:2]
    [([[1, 0], [0, 1]], [(0, 1, 2, 1), (1, 0, 2, 1)]), ([[2, 1]], [])]
    """
    n = G.number_of_nodes()
    ratio = {}
    for u, v, r in edge_ratios(G, lam):
        ratio[u, v] = ratio[v, u] = r
    out = []
    for tight in lipschitz_faces(G):
        T = nx.Graph()
        T.add_nodes_from(range(n))
        T.add_edges_from(tight)
        vecs = []
        for comp in sorted((sorted(c) for c in nx.connected_components(T)), key=lambda c: c[0]):
            t = {comp[0]: Fraction(1)}
            for a, b in nx.bfs_edges(T, comp[0]):
                t[b] = t[a] / ratio[a, b] if (a, b) in tight else t[a] * ratio[a, b]
            scale = lcm(*(x.denominator for x in t.values()))
            ints = [int(t[i] * scale) if i in t else 0 for i in range(n)]
            g = 0
            for x in ints:
                g = gcd(g, x)
            vecs.append([x // g for x in ints])
        strict = [(a, b, ratio[a, b].numerator, ratio[a, b].denominator)
                  for u, v in sorted(G.edges) for a, b in ((u, v), (v, u))
                  if (a, b) not in tight and (b, a) not in tight]
        out.append((vecs, strict))
    return out


def face_orbits(G: nx.Graph, faces: list[frozenset[tuple[int, int]]]
                ) -> list[tuple[int, int]]:
    """``(representative, orbit size)`` of the faces under the automorphisms of ``G``.

    Examples
    --------
    >>> face_orbits(as_graph("complete:3"), lipschitz_faces(as_graph("complete:3")))
    [(0, 1), (1, 6), (7, 3), (8, 3)]
    """
    index = {f: i for i, f in enumerate(faces)}
    seen: set[int] = set()
    out = []
    autos = automorphisms(G)
    for i, f in enumerate(faces):
        if i in seen:
            continue
        orbit = {index[frozenset((rho[u], rho[v]) for u, v in f)] for rho in autos}
        seen |= orbit
        out.append((i, len(orbit)))
    return out


#: ``symmetry="auto"`` searches one face per orbit when the orbits hold this many faces
#: on average: the sets holding a face are searched in full then, not only those it
#: starts, so small orbits do not pay (benchmarks/results/graphs.json).
ORBIT_GAIN = 6


def u_graph_vertex_count(G: nx.Graph, lam: Fraction, symmetry: bool | str = "auto",
                         processes: int = 1) -> int:
    """The number of vertices of ``U_G``, counted through the faces of ``C_G`` without
    enumerating them (docs/graphs.md section 6;
    :func:`dpfix.theory.enumeration.count_face_sets`), one face per orbit of the
    automorphisms of ``G`` when ``symmetry`` (``"auto"``: when the orbits average at
    least :data:`ORBIT_GAIN` faces).

    Examples
    --------
    >>> G = as_graph("complete:3")
    >>> u_graph_vertex_count(G, Fraction(2)), u_graph_vertex_count(G, Fraction(2), False)
    (33, 33)
    """
    from dpfix.theory.enumeration import count_face_sets

    faces = cone_faces(G, lam)
    orbits = face_orbits(G, lipschitz_faces(G)) if symmetry else None
    if symmetry == "auto" and orbits is not None and len(faces) < ORBIT_GAIN * len(orbits):
        orbits = None
    return count_face_sets(G.number_of_nodes(), faces, orbits, processes)


def scale_count_formula(G: nx.Graph) -> tuple[int, str] | None:
    """The number of scales of ``G`` by a formula proved in docs/graphs.md section 4, and
    the formula's name, when one applies (else None).

    Examples
    --------
    >>> scale_count_formula(as_graph("cycle:5")), scale_count_formula(as_graph("king:2x2"))
    ((30, 'n C(n-1, (n-1)/2), an odd cycle'), (14, '2^n - 2, a complete graph'))
    """
    from math import comb

    n, m = G.number_of_nodes(), G.number_of_edges()
    unit = all(w == 1 for _, _, w in G.edges(data="weight"))
    if m == n - 1:
        return 2 ** (n - 1), "2^(n-1), a tree"
    if not unit:
        return None
    if m == n and all(d == 2 for _, d in G.degree):
        if n % 2:
            return n * comb(n - 1, (n - 1) // 2), "n C(n-1, (n-1)/2), an odd cycle"
        return comb(n, n // 2), "C(n, n/2), an even cycle"
    if m == n * (n - 1) // 2:
        return 2 ** n - 2, "2^n - 2, a complete graph"
    if nx.is_bipartite(G):
        top, bottom = nx.bipartite.sets(G)
        a, b = len(top), len(bottom)
        if m == a * b:
            return 2 ** a + 2 ** b - 2, "2^a + 2^b - 2, a complete bipartite graph"
        label = graph_label(G)
        match = _SPEC.match(label)
        if match and match.group(1) == "grid" and 2 in (int(match.group(2)),
                                                          int(match.group(3))):
            return 2 * 3 ** (n // 2 - 1), "2 3^(b-1), a ladder P_2 x P_b"
    return None
