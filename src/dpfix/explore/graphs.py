"""What ``dpfix explore graph`` prints: the scales of a neighbour graph, the vertex counts
and dimensions of ``U_G`` (and ``F_G[z]``), exactly (docs/graphs.md sections 5 to 7).

:func:`graph_summary` computes, :func:`format_graph_summary` prints. Further sections
of the report (which of the paper's results hold for the graph) are functions
``section(case: GraphCase) -> list[str]`` appended to :data:`SECTIONS`; each is called
with the case and its lines are printed after the counts, under the function's
docstring's first line.

:func:`graph_table` and :func:`format_graph_table` give the table of docs/graphs.md
section 5 (``dpfix explore graph --table``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import networkx as nx
import numpy as np

from dpfix.numbers.exact import exact_lam, probability_vector
from dpfix.theory.graphs import (
    NAMED,
    as_graph,
    automorphisms,
    count_automorphisms,
    extreme_potentials,
    graph_label,
    scale_count_formula,
)
from dpfix.theory.polytopes import F, U
from dpfix.theory.scales import graph_scales

__all__ = ["GraphCase", "SECTIONS", "graph_summary", "format_graph_summary", "graph_table",
           "format_graph_table", "TABLE_GRAPHS", "LIST_MAX", "F_COUNT_MAX_N", "GRAPH_MAX_N",
           "GRAPH_MAX_AUTOMORPHISMS", "check_graph_size", "named_graph_nodes"]

#: The scales are listed one by one up to this many (the count is always printed).
LIST_MAX = 32

#: The largest neighbour graph :func:`graph_summary` takes: nodes (the named graphs of the
#: table reach 12, grid:3x4; cycle:14 takes 48 s) and automorphisms (complete:8, 40,320 of
#: them, takes 6 s; complete:9 has 362,880 and their list alone 29 s).
GRAPH_MAX_N = 12
GRAPH_MAX_AUTOMORPHISMS = 50_000

#: F_G[z]'s vertices are counted up to this n (Normaliz; at n = 5 F of the path alone has
#: 1.2 million vertices and takes a minute, a cycle's many more).
F_COUNT_MAX_N = 4

#: The named graphs of the table of docs/graphs.md section 5.
TABLE_GRAPHS = ("path:3", "path:4", "path:5", "path:6", "cycle:3", "cycle:4", "cycle:5",
                "cycle:6", "cycle:7", "complete:3", "complete:4", "complete:5", "complete:6",
                "star:4", "star:5", "star:6", "grid:2x2", "grid:2x3", "grid:2x4", "grid:3x3",
                "grid:3x4", "king:2x2", "king:2x3", "king:2x4", "king:3x3")


@dataclass(frozen=True)
class GraphCase:
    """One case of ``dpfix explore graph``: the checked graph, ``lam`` and the target
    ``z`` (None when not given)."""

    graph: nx.Graph
    lam: Fraction
    z: np.ndarray | None


#: Further report sections: ``section(case) -> lines`` (see the module docstring).
SECTIONS: list[Callable[[GraphCase], list[str]]] = []


def _weights(G: nx.Graph) -> str:
    heavy = [f"{u}-{v}: {w}" for u, v, w in sorted(G.edges(data="weight")) if w != 1]
    return "every weight 1" if not heavy else "weights " + ", ".join(heavy) + " (others 1)"


def _u_counts(G: nx.Graph, lam: Fraction) -> tuple[int, int | str]:
    """``(dimension, vertex count)`` of U_G; the count is a reason when beyond the guard."""
    P = U(G.number_of_nodes(), lam, graph=G)
    try:
        count: int | str = P.count_vertices()
    except ValueError as exc:
        count = f"not counted ({str(exc).split(';')[0]})"
    return P.dimension(), count


def _too_many_nodes(spec: str, nodes: int) -> ValueError:
    return ValueError(f"graph {spec}: {nodes} nodes; the summary is computed for at most "
                      f"{GRAPH_MAX_N} (its scales and automorphisms grow exponentially)")


def named_graph_nodes(spec: str) -> int | None:
    """The number of nodes of the named graph ``spec`` (``kind:N`` or ``kind:AxB`` of
    :data:`dpfix.theory.graphs.NAMED`), read from its name before anything is built, or
    None when ``spec`` names no such graph (an atlas graph, a file, an unknown name:
    :func:`dpfix.theory.graphs.as_graph` tells which). However many digits the size has,
    it is read as it is written.

    Examples
    --------
    >>> named_graph_nodes("grid:3x4"), named_graph_nodes("star:100000000000")
    (12, 100000000000)
    >>> named_graph_nodes("atlas:13") is None, named_graph_nodes("wheel:5") is None
    (True, True)
    """
    head, _, size = str(spec).strip().partition(":")
    parts = size.split("x")
    if not all(x.isdigit() for x in parts) or len(parts) > 2:
        return None
    if f"{head}:N" in NAMED or f"{head}:AxB" in NAMED:
        return int(parts[0]) * (int(parts[1]) if len(parts) > 1 else 1)
    return None


def check_graph_size(graph: Any) -> nx.Graph:
    """The checked graph (:func:`dpfix.theory.graphs.as_graph`), refused beyond
    :data:`GRAPH_MAX_N` nodes or :data:`GRAPH_MAX_AUTOMORPHISMS` automorphisms before
    anything is computed: a named graph by its size before it is built, the automorphisms
    counted no further than the limit (:func:`dpfix.theory.graphs.count_automorphisms`).

    Raises
    ------
    ValueError
        One line, ``graph SPEC: ...``, naming the size and the limit.

    Examples
    --------
    >>> check_graph_size("cycle:5").number_of_nodes()
    5
    >>> check_graph_size("complete:9")
    Traceback (most recent call last):
    ...
    ValueError: graph complete:9: more than 50,000 automorphisms; the summary lists every one \
(complete:8 has 40,320)
    """
    spec = str(graph).strip() if not isinstance(graph, nx.Graph) else graph_label(graph)
    nodes = None if isinstance(graph, nx.Graph) else named_graph_nodes(spec)
    if nodes is not None and nodes > GRAPH_MAX_N:  # the size, before the graph is built
        raise _too_many_nodes(spec, nodes)
    G = as_graph(graph)
    if G.number_of_nodes() > GRAPH_MAX_N:
        raise _too_many_nodes(spec, G.number_of_nodes())
    if count_automorphisms(G, at_most=GRAPH_MAX_AUTOMORPHISMS) > GRAPH_MAX_AUTOMORPHISMS:
        raise ValueError(f"graph {spec}: more than {GRAPH_MAX_AUTOMORPHISMS:,} automorphisms; "
                         "the summary lists every one (complete:8 has 40,320)")
    return G


def graph_summary(graph: Any, lam: Any = 2, z: Any = None) -> dict[str, Any]:
    """The scales of ``graph`` and the vertex counts and dimensions of ``U_G`` (and of
    ``F_G[z]`` when ``z`` is given), exactly.

    Parameters
    ----------
    graph : networkx.Graph, str or pathlib.Path
        As :func:`dpfix.theory.graphs.as_graph` takes it.
    lam : int, Fraction or str
        ``e^eps``, rational and above 1.
    z : sequence of exact numbers, optional
        A target distribution.

    Returns
    -------
    dict
        ``label, n, edges, weights, automorphisms, scales, formula, potentials,
        scale_vectors, U, F`` (``U`` and ``F`` as ``(dimension, vertex count)``, ``F``
        None without ``z``; a count beyond the guard is the reason, a string).

    Raises
    ------
    ValueError
        A graph beyond :data:`GRAPH_MAX_N` nodes or :data:`GRAPH_MAX_AUTOMORPHISMS`
        automorphisms (:func:`check_graph_size`).

    Examples
    --------
    >>> s = graph_summary("cycle:4")
    >>> s["scales"], s["formula"], s["U"], s["automorphisms"]
    (6, 'C(n, n/2), an even cycle', (12, 256), 8)
    """
    G = check_graph_size(graph)
    lam_x = exact_lam(lam)
    n = G.number_of_nodes()
    S = graph_scales(G, lam_x)
    formula = scale_count_formula(G)
    out: dict[str, Any] = {
        "label": graph_label(G), "n": n, "edges": G.number_of_edges(),
        "weights": _weights(G), "automorphisms": len(automorphisms(G)),
        "scales": S.shape[1], "formula": None if formula is None else formula[1],
        "potentials": extreme_potentials(G), "scale_vectors": S, "lam": lam_x,
        "U": _u_counts(G, lam_x), "F": None, "z": None, "case": None,
    }
    if formula is not None and formula[0] != S.shape[1]:
        raise ArithmeticError(f"{out['label']}: {S.shape[1]} scales against {formula}")
    zv = None
    if z is not None:
        zv = probability_vector(z, exact=True, n=n)
        P = F(n, lam_x, zv, graph=G)
        count: int | str = P.count_vertices() if n <= F_COUNT_MAX_N else \
            f"not counted (n = {n} > {F_COUNT_MAX_N}: F_G has millions of vertices)"
        out.update(F=(P.dimension(), count), z=zv)
    out["case"] = GraphCase(G, lam_x, zv)
    return out


def _vector(v: Any) -> str:
    return "(" + ", ".join(str(x) for x in v) + ")"


def format_graph_summary(s: dict[str, Any]) -> str:
    """The report of :func:`graph_summary` as text (then every section of
    :data:`SECTIONS`).

    Examples
    --------
    >>> print(format_graph_summary(graph_summary("path:2")))  # doctest: +NORMALIZE_WHITESPACE
    graph path:2: n = 2 values, 1 edges, every weight 1, 2 automorphisms; lam = 2
    scales (extreme rays of C_G, dpfix docs graphs, section 2): 2 = 2^(n-1), a tree
      h = (1, 0)  scale = (2/3, 1/3)
      h = (0, 1)  scale = (1/3, 2/3)
    U_G: dimension 2, 4 vertices
    """
    lines = [f"graph {s['label']}: n = {s['n']} values, {s['edges']} edges, {s['weights']}, "
             f"{s['automorphisms']} automorphisms; lam = {s['lam']}"]
    formula = f" = {s['formula']}" if s["formula"] else \
        " (no formula: dpfix docs graphs, section 5)"
    lines.append(f"scales (extreme rays of C_G, dpfix docs graphs, section 2): {s['scales']}"
                 f"{formula}")
    if s["scales"] <= LIST_MAX:
        S = s["scale_vectors"]
        for m, h in enumerate(s["potentials"]):
            lines.append(f"  h = {_vector(h)}  scale = {_vector(S[:, m])}")
    else:
        lines.append(f"  (more than {LIST_MAX}: not listed)")
    dim, count = s["U"]
    lines.append(f"U_G: dimension {dim}, " + (f"{count} vertices" if isinstance(count, int)
                                             else count))
    if s["F"] is not None:
        dim, count = s["F"]
        lines.append(f"F_G[z], z = {_vector(s['z'])}: dimension {dim}, "
                     + (f"{count} vertices" if isinstance(count, int) else count))
    for section in SECTIONS:
        title = (section.__doc__ or section.__name__).strip().splitlines()[0]
        lines.append(title)
        lines.extend(section(s["case"]))
    return "\n".join(lines)


def graph_table(graphs: tuple[str, ...] = TABLE_GRAPHS, lam: Any = 2, vertices_upto: int = 5
                ) -> list[dict[str, Any]]:
    """One row per named graph: nodes, edges, automorphisms, scales, the formula when one
    is proved, and U_G's vertex count at ``lam`` for ``n <= vertices_upto``.

    Examples
    --------
    >>> [r["scales"] for r in graph_table(("cycle:5", "grid:2x2"), vertices_upto=0)]
    [30, 6]
    """
    lam_x = exact_lam(lam)
    rows = []
    for spec in graphs:
        G = as_graph(spec)
        n = G.number_of_nodes()
        formula = scale_count_formula(G)
        vertices = U(n, lam_x, graph=G).count_vertices() if n <= vertices_upto else None
        rows.append({"graph": spec, "n": n, "edges": G.number_of_edges(),
                     "automorphisms": len(automorphisms(G)),
                     "scales": len(extreme_potentials(G)),
                     "formula": None if formula is None else formula[1],
                     "vertices": vertices})
    return rows


def format_graph_table(rows: list[dict[str, Any]], lam: Any = 2) -> str:
    """The rows of :func:`graph_table` as a Markdown table.

    Examples
    --------
    >>> print(format_graph_table(graph_table(("path:3",))))
    | graph | n | edges | automorphisms | scales | formula | vertices of U_G (lam = 2) |
    |---|---|---|---|---|---|---|
    | path:3 | 3 | 2 | 2 | 4 | 2^(n-1), a tree | 27 |
    """
    out = [f"| graph | n | edges | automorphisms | scales | formula | vertices of U_G "
           f"(lam = {exact_lam(lam)}) |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['graph']} | {r['n']} | {r['edges']} | {r['automorphisms']} | "
                   f"{r['scales']} | {r['formula'] or '-'} | "
                   f"{'-' if r['vertices'] is None else r['vertices']} |")
    return "\n".join(out)
