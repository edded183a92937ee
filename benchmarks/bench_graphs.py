"""Benchmark: the vertices of U_G at n = 5 for every connected graph on 5 nodes (docs/graphs.md
section 6).

For each of the 21 connected graphs on 5 nodes (``networkx.graph_atlas_g()``), at
``lam = 2``: U_G's vertex count through the faces of the cone C_G
(``U(5, 2, graph=G).count_vertices()``, the structural count, with the automorphisms
of G by orbits when they pay: :data:`dpfix.theory.graphs.ORBIT_GAIN`), its wall-clock
seconds, the faces and their orbits. Target: all 21 within 10 minutes in all. With
``--compare``, also the count with and without orbits (``symmetry=True/False``), and
Normaliz's enumeration for the path, the star and the cycle (the cycle's takes about
three minutes).

Writes ``benchmarks/results/graphs.json`` and prints a table. Run:
``python benchmarks/bench_graphs.py [--quick] [--compare]`` (``--quick``: the first 8
graphs).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from fractions import Fraction
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "graphs.json"
TARGET_SECONDS = 600.0


def five_node_graphs():
    import networkx as nx

    return [G for G in nx.graph_atlas_g()[1:53]
            if G.number_of_nodes() == 5 and nx.is_connected(G)]


def timed(fn, *args, **kw):
    start = time.perf_counter()
    value = fn(*args, **kw)
    return value, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the first 8 graphs only")
    parser.add_argument("--compare", action="store_true",
                        help="also with and without orbits, and Normaliz on three graphs")
    args = parser.parse_args()

    from dpfix.theory.graphs import (
        as_graph,
        automorphisms,
        face_orbits,
        lipschitz_faces,
        u_graph_vertex_count,
    )
    from dpfix.theory.polytopes import U

    lam = Fraction(2)
    graphs = five_node_graphs()
    assert len(graphs) == 21
    if args.quick:
        graphs = graphs[:8]
    rows = []
    for k, G0 in enumerate(graphs):
        G = as_graph(G0)
        G.graph["label"] = f"atlas {k}"
        faces = lipschitz_faces(G)
        count, seconds = timed(U(5, lam, graph=G).count_vertices)
        row = {"graph": k, "edges": sorted(G.edges), "automorphisms": len(automorphisms(G)),
               "faces": len(faces), "face_orbits": len(face_orbits(G, faces)),
               "vertices": count, "seconds": round(seconds, 2)}
        if args.compare:
            for sym in (True, False):
                c, s = timed(u_graph_vertex_count, G, lam, symmetry=sym)
                assert c == count
                row[f"seconds_symmetry_{sym}"] = round(s, 2)
        rows.append(row)
        print(f"{k:2d}  edges {len(G.edges):2d}  |Aut| {row['automorphisms']:3d}  faces "
              f"{row['faces']:3d} ({row['face_orbits']:3d} orbits)  vertices {count:9d}  "
              f"{seconds:7.2f} s", flush=True)
    total = sum(r["seconds"] for r in rows)
    result = {
        "lam": str(lam), "n": 5, "graphs": len(rows), "rows": rows,
        "total_seconds": round(total, 1), "target_seconds": TARGET_SECONDS,
        "within_target": total <= TARGET_SECONDS,
        "cpu_count": os.cpu_count(), "python": platform.python_version(),
        "machine": platform.machine(),
    }
    if args.compare:
        normaliz = {}
        for spec in ("path:5", "star:5", "cycle:5"):
            c, s = timed(U(5, lam, graph=spec).count_vertices, backend="normaliz")
            normaliz[spec] = {"vertices": c, "seconds": round(s, 2)}
            print(f"Normaliz {spec}: {c} vertices in {s:.1f} s", flush=True)
        result["normaliz"] = normaliz
    print(f"total {total:.1f} s for {len(rows)} graphs (target {TARGET_SECONDS:.0f} s)")
    if not args.quick:
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
