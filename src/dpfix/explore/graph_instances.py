"""The graph instances the exploration engine visits (docs/graphs.md, section 8):
:class:`GraphInstance` (an :class:`~dpfix.explore.instances.Instance` on a neighbour graph),
and its enumerators, by size, then in the order of networkx's graph atlas, then ``lam``,
then ``z`` (:func:`atlas_graphs`, :func:`graph_instances`, :func:`complete_instances`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import networkx as nx

from dpfix.explore.instances import Instance, named_targets
from dpfix.numbers.deprecation import renamed_keywords
from dpfix.numbers.exact import exact_lam, one_or_many
from dpfix.theory.graphs import as_graph

__all__ = ["GraphInstance", "atlas_graphs", "graph_instances", "complete_instances"]


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
    >>> from fractions import Fraction  # the repr's lam
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
    or a callable ``n -> targets``.

    Examples
    --------
    >>> insts = list(graph_instances(atlas_graphs([2]), lam=[2, 3], z="named"))
    >>> len(insts), str(insts[0])
    (8, 'atlas:3 (edges 01), n = 2, lam = 2, z = (1/2, 1/2)')
    """
    lams = [exact_lam(x) for x in one_or_many(lam)]
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


@renamed_keywords(n_values="n")
def complete_instances(n: Any, lam: Any, z: Any) -> Iterator[GraphInstance]:
    """The instances on the complete graphs ``K_n`` (label ``complete:n``), ``n`` (one
    size or many) ascending, then ``lam``, then ``z`` (as for :func:`graph_instances`)."""
    graphs = [(f"complete:{k}", as_graph(f"complete:{k}")) for k in sorted(one_or_many(n))]
    return graph_instances(graphs, lam, z)
