"""The graph instances the exploration engine visits (docs/graphs.md, section 8):
:class:`GraphInstance` (an :class:`~dpfix.explore.instances.Instance` on a neighbour graph,
made from a spec by :meth:`GraphInstance.from_spec`), the graphs a ``graph=`` of the
engine names (:func:`graphs_of`: one graph, a family such as ``"trees:5"``, or several),
and the enumerators, by size, then in the order of networkx's graph atlas, then ``lam``,
then ``z`` (:func:`atlas_graphs`, :func:`graph_instances`, :func:`complete_instances`).

Every graph is read by the one parser, :func:`dpfix.theory.graphs.as_graph` (a named graph,
``atlas:K``, a networkx graph or a file of edges), and refused in one line when it is
unknown, disconnected, has a self-loop, a weight below 1 or one whose ``lam^w`` is
irrational or too large to hold, or more than :data:`dpfix.explore.graphs.GRAPH_MAX_N`
nodes (a named graph's size is read from its name, before it is built).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from dpfix.explore.graphs import GRAPH_MAX_N, named_graph_nodes
from dpfix.explore.instances import Instance, Targets, named_targets
from dpfix.numbers.deprecation import renamed_keywords
from dpfix.numbers.exact import exact_lam, one_or_many, to_fraction
from dpfix.theory.graphs import ATLAS_LAST, as_graph, edge_ratios

__all__ = ["GraphInstance", "atlas_graphs", "graph_instances", "complete_instances",
           "graphs_of", "FAMILIES", "ATLAS_MAX_N"]

#: The families of :func:`atlas_graphs` a ``graph=`` names as ``FAMILY:N`` or
#: ``FAMILY:A-B``.
FAMILIES = ("connected", "trees", "cycles", "paths")

#: The largest number of nodes of networkx's graph atlas.
ATLAS_MAX_N = 7

#: How many graphs each family has on ``n`` nodes beyond the atlas (OEIS A001349, the
#: connected graphs, and A000055, the trees), for the line that refuses them.
_BEYOND_ATLAS = {"connected": {8: 11_117, 9: 261_080, 10: 11_716_571, 11: 1_006_700_565,
                               12: 164_059_830_476},
                 "trees": {8: 23, 9: 47, 10: 106, 11: 235, 12: 551}}

_FAMILY = re.compile(r"^(connected|trees|cycles|paths):(\d{1,6})(?:-(\d{1,6}))?$")


def _checked_graph(graph: Any) -> nx.Graph:
    """The checked neighbour graph (:func:`dpfix.theory.graphs.as_graph`) of one spec, a
    networkx graph or an atlas index, labelled (``G.graph["label"]``), with 2 to
    :data:`~dpfix.explore.graphs.GRAPH_MAX_N` nodes (a named graph's size is read from its
    name before it is built)."""
    if isinstance(graph, (bool, np.bool_)):
        raise TypeError(f"graph: a spec such as 'star:4', a networkx.Graph or an atlas index, "
                        f"got {graph!r}")
    if isinstance(graph, (int, np.integer)):
        if not 0 <= graph <= ATLAS_LAST:
            raise ValueError(f"graph: an atlas index is 0 <= K <= {ATLAS_LAST}, got {graph}")
        graph = f"atlas:{int(graph)}"
    if isinstance(graph, (str, Path)):
        spec = str(graph).strip()
        if _FAMILY.match(spec):
            raise ValueError(f"graph: {spec!r} is a family of graphs; one graph is a spec "
                             "such as 'star:4', a networkx.Graph or an atlas index "
                             "(the searches take families: graph= of smallest_counterexample)")
        nodes = named_graph_nodes(spec)
        if nodes is not None and nodes > GRAPH_MAX_N:
            raise _too_large(spec, nodes)
    elif not isinstance(graph, nx.Graph):
        raise TypeError(f"graph: a spec such as 'star:4', a networkx.Graph or an atlas index, "
                        f"got {type(graph).__name__}")
    G = as_graph(graph)
    n = G.number_of_nodes()
    if n > GRAPH_MAX_N:
        raise _too_large(G.graph["label"], n)
    if n < 2:
        raise ValueError(f"graph {G.graph['label']}: {n} node{'s' if n != 1 else ''}; an "
                         "instance has at least 2 values")
    return G


def _too_large(spec: str, nodes: int) -> ValueError:
    return ValueError(f"graph {spec}: {nodes:,} nodes; an instance takes at most {GRAPH_MAX_N} "
                      f"(its polytopes have n^2 variables and 2 n |E| ratio rows, its "
                      "scales grow exponentially in n)")


@dataclass(frozen=True)
class GraphInstance(Instance):
    """An :class:`~dpfix.explore.instances.Instance` on a neighbour graph: the engine
    builds its polytopes with ``graph=`` (:func:`dpfix.explore.search.smallest_counterexample`).

    :meth:`from_spec` makes one from a spec (``"star:4"``), a networkx graph or an atlas
    index, checked.

    Parameters
    ----------
    n, lam, z : as for :class:`~dpfix.explore.instances.Instance`.
    edges : tuple of ``(u, v)`` pairs, ``u < v``, on the nodes ``0..n-1``.
    label : the graph's name (``"atlas:7"``, ``"cycle:4"``).
    edge_weights : tuple of exact numbers, optional
        The edges' weights, in the order of ``edges`` (sorted with them); empty (the
        default) when every weight is 1.

    Examples
    --------
    >>> inst = GraphInstance(3, 2, None, ((0, 1), (0, 2), (1, 2)), "atlas:7")
    >>> print(inst)
    atlas:7 (edges 01 02 12), n = 3, lam = 2, z = None
    >>> sorted(inst.neighbour_graph().edges)
    [(0, 1), (0, 2), (1, 2)]
    >>> from fractions import Fraction  # the repr's lam
    >>> eval(repr(inst)) == inst
    True
    """

    edges: tuple[tuple[int, int], ...] = ()
    label: str = ""
    edge_weights: tuple[Fraction, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        edges = [tuple(sorted((int(u), int(v)))) for u, v in self.edges]
        if self.edge_weights and len(self.edge_weights) != len(edges):
            raise ValueError(f"GraphInstance: {len(self.edge_weights)} weights for {len(edges)} "
                             "edges")
        weights = [to_fraction(w, "GraphInstance: a weight") for w in self.edge_weights] \
            if self.edge_weights else [Fraction(1)] * len(edges)
        pairs = sorted(zip(edges, weights, strict=True))
        object.__setattr__(self, "edges", tuple(e for e, _ in pairs))
        object.__setattr__(self, "edge_weights", () if all(w == 1 for _, w in pairs)
                           else tuple(w for _, w in pairs))

    @classmethod
    def from_spec(cls, graph: Any, lam: Any, z: Any = None) -> GraphInstance:
        """The instance of ``lam`` and ``z`` on a graph given by its spec, checked.

        Parameters
        ----------
        graph : str, networkx.Graph or int
            A spec :func:`dpfix.theory.graphs.as_graph` reads: ``"path:N"``,
            ``"cycle:N"``, ``"complete:N"``, ``"star:N"``, ``"grid:AxB"``, ``"king:AxB"``,
            ``"atlas:K"`` or a file of edges; a networkx graph on ``0..n-1`` (edge
            attribute ``"weight"``, 1 when absent); or an atlas index ``K``
            (``networkx.graph_atlas(K)``, labelled ``"atlas:K"``).
        lam : int, Fraction or str
            ``e^eps``, rational and above 1; every ``lam^w`` must be rational.
        z : sequence of exact numbers, optional
            The target (``n`` non-negative rationals summing to 1), or None.

        Returns
        -------
        GraphInstance
            Labelled by the spec (a networkx graph by its ``label`` attribute, else
            ``"graph"``).

        Raises
        ------
        ValueError
            One line naming the problem: an unknown spec, a disconnected graph, a
            self-loop, a weight below 1, an irrational or too large ``lam^w``, fewer
            than 2 or more than :data:`dpfix.explore.graphs.GRAPH_MAX_N` nodes, ``lam <=
            1``, a target of another length or not a distribution.
        ExactnessError
            A float ``lam``, weight or target.

        Examples
        --------
        >>> print(GraphInstance.from_spec("star:4", 3, ["1/4"] * 4))
        star:4 (edges 01 02 03), n = 4, lam = 3, z = (1/4, 1/4, 1/4, 1/4)
        >>> print(GraphInstance.from_spec(16, 2))
        atlas:16 (edges 01 03 12 23), n = 4, lam = 2, z = None
        >>> GraphInstance.from_spec("star:40", 2)
        Traceback (most recent call last):
        ...
        ValueError: graph star:40: 40 nodes; an instance takes at most 12 (its polytopes \
have n^2 variables and 2 n |E| ratio rows, its scales grow exponentially in n)
        """
        G = _checked_graph(graph)
        lam_x = exact_lam(lam)
        edge_ratios(G, lam_x)  # every lam^w rational and of a size that can be held
        edges = sorted((u, v) for u, v in G.edges)
        return cls(G.number_of_nodes(), lam_x, z, tuple(edges), G.graph["label"],
                   tuple(G.edges[e]["weight"] for e in edges))

    def __repr__(self) -> str:
        z = None if self.z is None else tuple(self.z)
        weights = f", edge_weights={self.edge_weights!r}" if self.edge_weights else ""
        return (f"GraphInstance(n={self.n}, lam={self.lam!r}, z={z!r}, edges={self.edges!r}, "
                f"label={self.label!r}{weights})")

    def __str__(self) -> str:
        return f"{self.graph_text()}, {Instance.__str__(self)}"

    def graph_text(self) -> str:
        """The graph as the instance prints it: its label, edges and weights other than 1.

        Examples
        --------
        >>> GraphInstance.from_spec("cycle:4", 2).graph_text()
        'cycle:4 (edges 01 03 12 23)'
        """
        def name(u: int, v: int) -> str:
            return f"{u}{v}" if self.n <= 10 else f"{u}-{v}"
        edges = " ".join(name(u, v) for u, v in self.edges)
        weights = self.edge_weights or (Fraction(1),) * len(self.edges)
        heavy = ", ".join(f"{name(u, v)}: {w}" for (u, v), w in zip(self.edges, weights,
                                                                    strict=True) if w != 1)
        return f"{self.label} (edges {edges}{', weights ' + heavy if heavy else ''})"

    def key(self) -> str:
        """The cache key: the instance's, then the edges (and the weights, when not all 1)."""
        weights = "|w" + ",".join(map(str, self.edge_weights)) if self.edge_weights else ""
        return Instance.key(self) + "|" + ",".join(f"{u}-{v}" for u, v in self.edges) + weights

    def neighbour_graph(self) -> nx.Graph:
        """The checked neighbour graph (:func:`dpfix.theory.graphs.as_graph`)."""
        G = nx.Graph()
        G.add_nodes_from(range(self.n))
        weights = self.edge_weights or (Fraction(1),) * len(self.edges)
        for (u, v), w in zip(self.edges, weights, strict=True):
            G.add_edge(u, v, weight=w)
        G.graph["label"] = self.label
        return as_graph(G, self.n)


@renamed_keywords(n_values="n", kind="family")
def atlas_graphs(n: Any, family: str = "connected") -> list[tuple[str, nx.Graph]]:
    """The graphs of networkx's atlas on ``n`` nodes (``2 <= n <= 7``), ``n`` ascending,
    then in atlas order (edges, then degree sequence, then automorphisms), with their
    labels ``"atlas:K"`` (``networkx.graph_atlas(K)``).

    ``n``: one size or many. ``family``: ``"connected"`` (every connected graph),
    ``"trees"``, ``"cycles"`` (the cycle graphs ``C_n``, ``n >= 3``) or ``"paths"``
    (``kind=`` is its deprecated name: ``kind=`` chooses a polytope).

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
    if family not in tests:
        raise ValueError(f"family: one of {', '.join(tests)}, got {family!r}")
    wanted = sorted(set(int(size) for size in one_or_many(n)))
    if wanted and (wanted[0] < 2 or wanted[-1] > 7):
        raise ValueError(f"n: the atlas holds 2 <= n <= 7, got {wanted}")
    out = []
    for index, G in enumerate(nx.graph_atlas_g()):
        if G.number_of_nodes() in wanted and tests[family](G):
            out.append((f"atlas:{index}", G))
    return out


def graph_instances(graphs: Iterable[tuple[str, nx.Graph]], lam: Iterable[Any] = (2,),
                    z: Any = "none") -> Iterator[GraphInstance]:
    """The instances on ``graphs`` (in their order), then ``lam``, then ``z``.

    ``z``: ``"none"`` (no target), ``"named"`` (:func:`~dpfix.explore.instances.named_targets`),
    a family (:class:`~dpfix.explore.instances.Targets`, e.g. ``compositions(6)`` or its
    ``.filter(...)``) or a callable ``n -> targets``.

    Examples
    --------
    >>> insts = list(graph_instances(atlas_graphs([2]), lam=[2, 3], z="named"))
    >>> len(insts), str(insts[0])
    (8, 'atlas:3 (edges 01), n = 2, lam = 2, z = (1/2, 1/2)')
    >>> from dpfix.explore.instances import compositions
    >>> len(list(graph_instances(atlas_graphs([3]), z=compositions(4, positive=True))))
    8
    """
    lams = [exact_lam(x) for x in one_or_many(lam)]
    for label, G in graphs:
        n = G.number_of_nodes()
        edges = tuple(tuple(e) for e in G.edges)
        for x in lams:
            if isinstance(z, str) and z == "none":
                yield GraphInstance(n, x, None, edges, label)
                continue
            targets = (named_targets(n) if isinstance(z, str) and z == "named"
                       else z.for_n(n) if isinstance(z, Targets) else z(n))
            for t in targets:
                yield GraphInstance(n, x, tuple(t), edges, label)


@renamed_keywords(n_values="n")
def complete_instances(n: Any, lam: Any, z: Any) -> Iterator[GraphInstance]:
    """The instances on the complete graphs ``K_n`` (label ``complete:n``), ``n`` (one
    size or many) ascending, then ``lam``, then ``z`` (as for :func:`graph_instances`)."""
    graphs = [(f"complete:{k}", as_graph(f"complete:{k}")) for k in sorted(one_or_many(n))]
    return graph_instances(graphs, lam, z)


def _family(spec: str) -> list[nx.Graph]:
    """The graphs of ``FAMILY:N`` or ``FAMILY:A-B`` (:func:`atlas_graphs`), labelled and
    checked; beyond the atlas, refused in one line saying how many there are."""
    m = _FAMILY.match(spec)
    assert m is not None
    family, lo = m.group(1), int(m.group(2))
    hi = int(m.group(3)) if m.group(3) else lo
    if lo > hi:
        raise ValueError(f"graph: {spec!r}: the sizes A-B need A <= B")
    if lo < 2:
        raise ValueError(f"graph: {spec!r}: an instance has at least 2 values (nodes)")
    if hi > ATLAS_MAX_N:
        count = _BEYOND_ATLAS.get(family, {}).get(hi)
        noun = {"connected": "connected graphs", "trees": "trees", "cycles": "cycle",
                "paths": "path"}[family]
        hint = {"connected": "give those you mean one by one, as networkx graphs",
                "trees": f"networkx.nonisomorphic_trees({hi}) gives them as networkx graphs",
                "cycles": f"give cycle:{hi}", "paths": f"give path:{hi}"}[family]
        many = f"there are {count:,} {noun} on {hi} nodes; " if count is not None else \
            f"one {noun} on {hi} nodes: " if family in ("cycles", "paths") else ""
        raise ValueError(f"graph: {spec!r}: networkx's atlas, which the families enumerate, "
                         f"holds the graphs on at most {ATLAS_MAX_N} nodes ({many}{hint})")
    out = []
    for label, G in atlas_graphs(range(lo, hi + 1), family):
        G = G.copy()
        G.graph["label"] = label
        out.append(_checked_graph(G))
    if not out:
        raise ValueError(f"graph: {spec!r} holds no graph (a cycle has at least 3 nodes)")
    return out


def graphs_of(graph: Any) -> list[nx.Graph]:
    """The graphs a ``graph=`` of the engine names, in its order, each checked and labelled
    (``G.graph["label"]``; :func:`dpfix.explore.search.smallest_counterexample`).

    Parameters
    ----------
    graph : str, networkx.Graph, int, or an iterable of them
        One graph as :meth:`GraphInstance.from_spec` takes it (``"star:4"``,
        ``"atlas:13"``, a networkx graph, an atlas index); a family ``FAMILY:N`` or
        ``FAMILY:A-B`` (``FAMILY`` one of :data:`FAMILIES`: every connected graph, the
        trees, the cycles or the paths of networkx's atlas on ``N`` nodes, or on ``A``
        to ``B`` nodes, by size, then in atlas order: :func:`atlas_graphs`); or a finite
        iterable of these, one after another.

    Raises
    ------
    ValueError
        One line: a bad graph (:meth:`GraphInstance.from_spec`), a family beyond the
        atlas (more than :data:`ATLAS_MAX_N` nodes, saying how many graphs it has) or
        with no graph, an empty iterable.

    Examples
    --------
    >>> [G.graph["label"] for G in graphs_of("connected:4")]
    ['atlas:13', 'atlas:14', 'atlas:15', 'atlas:16', 'atlas:17', 'atlas:18']
    >>> [G.graph["label"] for G in graphs_of(["star:4", "trees:2-3", 16])]
    ['star:4', 'atlas:3', 'atlas:6', 'atlas:16']
    >>> graphs_of("connected:9")
    Traceback (most recent call last):
    ...
    ValueError: graph: 'connected:9': networkx's atlas, which the families enumerate, holds \
the graphs on at most 7 nodes (there are 261,080 connected graphs on 9 nodes; give those you \
mean one by one, as networkx graphs)
    """
    one = (str, Path, nx.Graph, int, np.integer)
    items = [graph] if isinstance(graph, one) else list(graph)
    if not items:
        raise ValueError("graph: the iterable is empty; a search over no graph would hold "
                         "vacuously")
    out: list[nx.Graph] = []
    for item in items:
        if isinstance(item, (str, Path)) and _FAMILY.match(str(item).strip()):
            out.extend(_family(str(item).strip()))
        elif isinstance(item, one):
            out.append(_checked_graph(item))
        else:
            raise TypeError(f"graph: a spec such as 'star:4', a family such as 'trees:5', a "
                            f"networkx.Graph or an atlas index, got {type(item).__name__}")
    return out
