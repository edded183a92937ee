"""The chambers of ``U_G`` and ``F_G[z]`` in lam on the connected graphs on 4 nodes, each
piece counted twice (docs/graphs.md, section 13), and local DP on ``K_4`` for every lam.

:func:`chambers_report` decomposes ``lam in (1, inf)`` for one graph
(:func:`dpfix.theory.parametric.chambers` with ``graph=``) and confirms every piece by
a second, independent count: at a rational point of each chamber other than its sample,
and at each wall, cdd's exact vertex enumeration (over ``Q(lam)`` at an irrational wall,
Normaliz's, as cdd has no number fields), and at that point of each chamber the
chamber's vertex formulas ``N(lam) / D(lam)`` evaluated exactly against cdd's vertex
set, one for one. :func:`chambers_table` is the table of docs/graphs.md.

:func:`k4_staircase` settles local DP on ``K_4``: ``U_{K_4}`` has one chamber,
``(1, inf)``, and every one of its 904 vertices at the sample point is a staircase
mechanism; the type (the tight rows of every vertex) is constant on a chamber and a
vertex's tight rows say whether it is a staircase, so every vertex of ``U_{K_4}`` is a
staircase for every ``lam > 1`` (the proof is in docs/graphs.md, section 14).

``python -m dpfix.explore.graph_chambers`` prints the table (two minutes on a shared
core); with ``--confirm`` every piece is counted again (an hour: cdd's enumerations of
up to 13,050 vertices at every confirmation point).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import networkx as nx

from dpfix.explore.cases import standard_z
from dpfix.explore.graph_instances import atlas_graphs
from dpfix.explore.graph_mechanisms import is_staircase
from dpfix.theory.graphs import as_graph, graph_label
from dpfix.theory.parametric import Chambers, chambers
from dpfix.theory.polytopes import U

__all__ = ["CONNECTED_4", "connected_graphs_4", "chambers_report", "chambers_rows",
           "chambers_table",
           "k4_staircase", "format_pieces"]

#: The connected graphs on 4 nodes, in atlas order, and their names.
CONNECTED_4 = {"atlas:13": "star K_(1,3)", "atlas:14": "path P_4",
               "atlas:15": "paw (triangle and a pendant edge)", "atlas:16": "4-cycle C_4",
               "atlas:17": "diamond (K_4 minus an edge)", "atlas:18": "complete K_4"}


def connected_graphs_4() -> list[nx.Graph]:
    """The six connected graphs on 4 nodes (networkx's atlas numbering), labelled.

    Examples
    --------
    >>> [graph_label(G) for G in connected_graphs_4()]
    ['atlas:13', 'atlas:14', 'atlas:15', 'atlas:16', 'atlas:17', 'atlas:18']
    """
    out = []
    for label, G in atlas_graphs([4]):
        H = as_graph(G, 4)
        H.graph["label"] = label
        out.append(H)
    return out


def format_pieces(ch: Chambers) -> str:
    """The pieces in one line: chambers as ``(lo, hi): count``, walls as ``[lam]: count``
    (an irrational wall by its minimal polynomial).

    Examples
    --------
    >>> format_pieces(chambers("U", 4, graph="star:4"))
    '(1, 2): 424; [2]: 208; (2, inf): 280'
    """
    from dpfix.numbers.algebraic import polynomial_str

    parts = []
    for p in ch:
        if p.is_breakpoint:
            where = str(p.lo) if isinstance(p.lo, Fraction) else \
                f"root of {polynomial_str(p.minimal_polynomial, 'lam')} ~ {float(p.lo):.6g}"
            parts.append(f"[{where}]: {p.count}")
        else:
            lo = str(p.lo) if isinstance(p.lo, Fraction) else f"{float(p.lo):.6g}"
            hi = "inf" if p.hi is math.inf else \
                str(p.hi) if isinstance(p.hi, Fraction) else f"{float(p.hi):.6g}"
            parts.append(f"({lo}, {hi}): {p.count}")
    return "; ".join(parts)


def chambers_report(kind: str, graph: Any, z: Any = None, confirm: bool = True
                    ) -> dict[str, Any]:
    """The chambers of ``U_G`` (``kind="U"``) or ``F_G[z]`` and their confirmation.

    Returns a dict: ``chambers`` (the :class:`~dpfix.theory.parametric.Chambers`),
    ``pieces`` (:func:`format_pieces`), and with ``confirm`` the rows of
    :meth:`~dpfix.theory.parametric.Chambers.confirm` (cdd's count at
    each wall) and of
    :meth:`~dpfix.theory.parametric.Chambers.confirm_vertices` (the formulas against cdd's
    vertex set); ``confirmed`` is True when every piece agrees.

    Examples
    --------
    >>> chambers_report("U", "star:4", confirm=False)["pieces"]
    '(1, 2): 424; [2]: 208; (2, inf): 280'
    """
    ch = chambers(kind, 4 if graph is None else as_graph(graph).number_of_nodes(), z,
                  graph=graph)
    out: dict[str, Any] = {"chambers": ch, "pieces": format_pieces(ch)}
    if confirm:
        counts = ch.confirm(backend="cdd", walls_only=True)
        sets = ch.confirm_vertices(backend="cdd")
        out["counts"], out["vertex_sets"] = counts, sets
        out["confirmed"] = all(r["ok"] is True for r in counts + sets)
    return out


def chambers_rows(targets: tuple[str, ...] = ("uniform", "zero"), confirm: bool = True
                  ) -> Iterator[str]:
    """The rows of :func:`chambers_table`, one graph and polytope at a time; with
    ``confirm`` a last column says how the pieces were counted again."""
    zs = standard_z(4)
    yield "| graph | polytope | pieces (lam: vertices) |" + (" second count |" if confirm else "")
    yield "|---|---|---|" + ("---|" if confirm else "")
    for G in connected_graphs_4():
        label = graph_label(G)
        for kind, name in [("U", None)] + [("F", t) for t in targets]:
            r = chambers_report(kind, G, None if name is None else zs[name], confirm)
            what = "U_G" if name is None else f"F_G[{name}]"
            row = f"| {label} {CONNECTED_4[label]} | {what} | {r['pieces']} |"
            if confirm:
                n_ch = len(r["vertex_sets"])
                field = sum("Q(lam)" in c["method"] for c in r["counts"])
                rational = len(r["counts"]) - field
                row += (f" {'agrees' if r['confirmed'] else 'DISAGREES'}: cdd's vertex set at "
                        f"{n_ch} second point(s), cdd's count at {rational} rational wall(s), "
                        f"Normaliz's over Q(lam) at {field} irrational one(s) |")
            yield row


def chambers_table(targets: tuple[str, ...] = ("uniform", "zero"), confirm: bool = False
                   ) -> str:
    """The markdown table of docs/graphs.md section 13: for every connected graph on 4
    nodes, the pieces of ``U_G`` and of ``F_G[z]`` for the named targets
    (:func:`dpfix.explore.cases.standard_z`); with ``confirm``, how each was confirmed
    (:func:`chambers_report`)."""
    return "\n".join(chambers_rows(targets, confirm))


def k4_staircase(backend_check: bool = False) -> dict[str, Any]:
    """Local DP on ``K_4`` for every lam: the chambers of ``U_{K_4}`` and whether every
    vertex at each chamber's sample point is a staircase mechanism
    (:func:`dpfix.explore.graph_mechanisms.is_staircase`; the vertices enumerated there,
    by Normaliz when installed); with ``backend_check``, cdd's vertices there as well.

    Returns ``chambers``, ``samples`` (the sample point of each chamber), ``counts``,
    ``staircase`` (True when every vertex at every sample is a staircase).

    Examples
    --------
    >>> r = k4_staircase()
    >>> r["counts"], r["staircase"], r["chambers"][0].hi
    ([904], True, inf)
    """
    ch = chambers("U", 4, graph="complete:4")
    ok = True
    for p in ch:
        if p.is_breakpoint:
            continue
        s = p.sample
        for backend in ("auto", "cdd") if backend_check else ("auto",):
            verts = U(4, s, graph="complete:4").vertices(limit=None, backend=backend)
            ok &= len(verts) == p.count and all(is_staircase(V, s) for V in verts)
    return {"chambers": ch, "samples": [p.sample for p in ch if not p.is_breakpoint],
            "counts": ch.counts(), "staircase": ok}


if __name__ == "__main__":
    import sys

    for line in chambers_rows(confirm="--confirm" in sys.argv):
        print(line, flush=True)
    r = k4_staircase(backend_check=True)
    print(f"U on K_4: pieces {format_pieces(r['chambers'])}; every vertex at the samples "
          f"{r['samples']} a staircase: {r['staircase']}")
