"""``dpfix explore``: look at the polytopes of a small case, or at Example 1.

``dpfix explore --n 3 --lam 2 --z 1/2 1/3 1/6`` prints the vertex counts of
U, F and R_F (those within the enumeration guard), their dimensions and a
summary of each polytope graph; ``dpfix explore example1`` prints exact
instances of both phenomena of the paper's Example 1.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import networkx as nx
import numpy as np

from dpfix.exact import exact_array, exact_lam

__all__ = ["format_matrix", "polytope_summary", "add_parser", "run"]

#: Graph diameters are computed only up to this many vertices (all-pairs BFS).
DIAMETER_MAX_VERTICES = 1000
#: Largest --n: the dimensions of U and F (cdd's implicit equalities) take
#: seconds at n = 10 and minutes beyond 15.
EXPLORE_MAX_N = 12
#: R_F has n 2^(n-1) variables: its dimension takes 0.7 s at n = 6, 28 s at n = 7.
RF_MAX_N = 6


def format_matrix(M: Any, indent: str = "    ") -> str:
    """Exact matrix as aligned text, one row a line.

    Examples
    --------
    >>> from fractions import Fraction
    >>> print(format_matrix([[Fraction(1, 2), 1], [0, Fraction(2, 3)]], indent=""))
    [1/2    1]
    [  0  2/3]
    """
    rows = [[str(v) for v in row] for row in np.asarray(M, dtype=object)]
    width = max((len(c) for r in rows for c in r), default=1)
    return "\n".join(indent + "[" + "  ".join(c.rjust(width) for c in r) + "]" for r in rows)


def polytope_summary(name: str, poly: Any, max_n: int = EXPLORE_MAX_N) -> dict[str, Any]:
    """Vertex count, dimension and graph summary of one polytope (guarded)."""
    if poly.n > max_n:
        return {"polytope": name, "dimension": "skipped", "vertices": "skipped",
                "note": f"skipped at n = {poly.n} > {max_n} (it has {poly.num_variables} "
                        "variables; its dimension alone would take minutes)"}
    row: dict[str, Any] = {"polytope": name, "dimension": poly.dimension()}
    start = time.perf_counter()
    try:
        G = poly.graph()
    except ValueError as exc:  # the enumeration guard: report, do not run for hours
        row.update(vertices="skipped", note=str(exc))
        return row
    degrees = [d for _, d in G.degree()]
    row.update(vertices=G.number_of_nodes(), edges=G.number_of_edges(),
               degree=f"{min(degrees)}..{max(degrees)}" if degrees else "-")
    if 0 < G.number_of_nodes() <= DIAMETER_MAX_VERTICES and nx.is_connected(G):
        row["diameter"] = nx.diameter(G)
    row["seconds"] = round(time.perf_counter() - start, 2)
    return row


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("explore", help="vertex counts, dimensions and graphs of U, F, R_F; "
                       "or the paper's Example 1", description=__doc__.split("\n\n")[0])
    p.add_argument("what", nargs="?", choices=["example1"],
                   help="example1: search n = 3 for both phenomena of the paper's Example 1")
    p.add_argument("--n", type=int, default=3, help="number of counts (default 3)")
    p.add_argument("--lam", default="2", help="lam = e^eps, a rational such as 2 or 3/2")
    p.add_argument("--z", nargs="+", metavar="Z",
                   help="target distribution, rationals summing to 1 (default uniform)")
    p.set_defaults(func=run)


def _run_polytopes(n: int, lam_text: str, z_text: list[str] | None) -> int:
    from dpfix.polytopes import RF, F, U

    if not 2 <= n <= EXPLORE_MAX_N:
        raise ValueError(f"--n: must be in 2..{EXPLORE_MAX_N} (beyond, cdd's exact computations "
                         f"on U and F take minutes), got {n}")
    lam = exact_lam(lam_text)
    z = exact_array(z_text if z_text else [f"1/{n}"] * n, "--z", ndim=1)
    print(f"n = {n}, lam = {lam} (eps = ln {lam}), z = ({', '.join(map(str, z))})")
    rows = [polytope_summary("U", U(n, lam)), polytope_summary("F[z]", F(n, lam, z)),
            polytope_summary("R_F[z]", RF(n, lam, z), max_n=RF_MAX_N)]
    cols = ["polytope", "dimension", "vertices", "edges", "degree", "diameter", "seconds"]
    table = [[str(r.get(c, "-")) for c in cols] for r in rows]
    widths = [max(len(x) for x in col) for col in zip(cols, *table, strict=True)]
    for line in [cols, *table]:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)))
    for r in rows:
        if "note" in r:
            print(f"{r['polytope']}: {r['note']}")
    return 0


def _run_example1() -> int:
    from dpfix.counterexamples import find_example1
    from dpfix.representation import difference_vectors, is_psi_affinely_simplified

    ex = find_example1()
    print(f"Example 1 (paper, Appendix B.1), found by exact search of {ex.cases_searched} "
          "(lam, z) cases at n = 3\n")
    print(f"1. Two different extreme points of R_F with one extreme image: lam = {ex.lam}, "
          f"z = ({', '.join(map(str, ex.z))})")
    for name, B in (("B1", ex.B1), ("B2", ex.B2)):
        H = difference_vectors(B, ex.z, ex.lam)
        verdict = ("linearly independent: Psi-affinely simplified, so extreme (Theorem 4)"
                   if is_psi_affinely_simplified(B, ex.z, ex.lam) else "dependent")
        print(f"  {name} (rows: the scales in canonical order; its {len(H)} difference "
              f"vector(s) are {verdict}):")
        print(format_matrix(B))
    print("  Psi B1 = Psi B2 = T, an extreme point of F:")
    print(format_matrix(ex.T))
    print(f"\n2. An extreme point of R_F whose image is not extreme in F: lam = {ex.lam3}, "
          f"z = ({', '.join(map(str, ex.z3))})")
    print("  B3:")
    print(format_matrix(ex.B3))
    print("  Psi B3 (in F, not extreme):")
    print(format_matrix(ex.T3))
    return 0


def run(args: argparse.Namespace) -> int:
    if args.what == "example1":
        return _run_example1()
    return _run_polytopes(args.n, args.lam, args.z)
