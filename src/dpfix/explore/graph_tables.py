"""The tables, surveys and reports of docs/graphs.md (sections 8 to 11), computed exactly:
the complete graph (:func:`complete_graph_rows`, :func:`complete_graph_table`, the
vertices that are no staircase, :func:`non_staircase_vertex`), the grid and the king's
graph (:func:`grid_rows`, :func:`grid_table`, :func:`king_bounds_table`), the searches of
:data:`SEARCHES` on trees, cycles and complete graphs (:func:`search`,
:func:`search_report`), and the text of each section (:func:`report`; ``python -m
dpfix.explore.graph_tables WHAT``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from fractions import Fraction
from typing import Any

import networkx as nx
import numpy as np

from dpfix.explore.graph_instances import (
    GraphInstance,
    atlas_graphs,
    complete_instances,
    graph_instances,
)
from dpfix.explore.graph_mechanisms import (
    best_remap,
    exact_minimum,
    graph_geometric,
    is_staircase,
    loss_weights,
    product_northwest,
    product_target,
    randomized_response,
    separable_weights,
)
from dpfix.explore.graph_theory import (
    CARRY_OVER,
    PROVED,
    carry_over_search,
    dependent_scale,
    graph_geometric_exists,
    northwest_distance,
    northwest_distance_squared,
    rr_remap_optimal_abs,
    rr_remap_optimal_zero_one,
    staircase_vertex,
)
from dpfix.explore.search import SearchResult, smallest_counterexample
from dpfix.numbers.deprecation import renamed_keywords
from dpfix.numbers.exact import exact_lam, nullspace, one_or_many, rank
from dpfix.sampling.source import numpy_generator
from dpfix.theory import polytopes
from dpfix.theory.graphs import as_graph

__all__ = ["complete_graph_rows", "middle_value_vertices", "non_staircase_vertex",
           "fixed_point_staircase_search", "grid_rows", "king_bounds_table",
           "staircase_optima", "complete_graph_table", "grid_table", "SEARCHES", "search",
           "search_report", "REPORTS", "report"]

ZERO, ONE = Fraction(0), Fraction(1)


# ------------------------------------------------------------------ the complete graph
@renamed_keywords(n_values="n", lams="lam")
def complete_graph_rows(n: Any = (2, 3, 4), lam: Any = (2, 3),
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
    for size in one_or_many(n):
        G = as_graph(f"complete:{size}")
        for x in one_or_many(lam):
            lam_x = exact_lam(x)
            RR = randomized_response(size, lam_x)
            for loss in losses:
                for name, z in standard_z(size).items():
                    W = loss_weights(G, z, loss)
                    P = polytopes.F(size, lam_x, z, graph=G)
                    opt = exact_minimum(P, W)
                    rr = best_remap(RR, z, W)
                    rows.append({"n": size, "lam": lam_x, "loss": loss, "target": name,
                                 "z": tuple(z), "optimum": opt.value, "rr_remap": rr.value,
                                 "rr_optimal": rr.value == opt.value, "T": opt.point})
    return rows


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


def fixed_point_staircase_search() -> SearchResult:
    """The engine's smallest vertex of ``F_{K_n}`` that is not a staircase mechanism:
    ``K_n`` for ``n = 2 .. 4``, then ``lams_by_height(3)``, then ``compositions(4)``.

    Examples
    --------
    >>> ce = fixed_point_staircase_search().counterexample
    >>> print(ce.instance, "|", ce.visited)
    complete:2 (edges 01), n = 2, lam = 2, z = (1/3, 2/3) | 4
    >>> ce.witness[:, 1].tolist()  # in the ratio 4/3 < lam: a loose column
    [Fraction(4, 5), Fraction(3, 5)]
    """
    from dpfix.explore.instances import compositions, lams_by_height

    insts = complete_instances(range(2, 5), list(lams_by_height(3)),
                               lambda n: compositions(4, n))
    return smallest_counterexample(staircase_vertex, over="F", instances=insts)


# ------------------------------------------------------------------ the grid
@renamed_keywords(lams="lam")
def grid_rows(specs: Iterable[str] = ("grid:2x2", "king:2x2", "grid:2x3", "king:2x3"),
              lam: Any = (2,)) -> list[dict[str, Any]]:
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
        for x in one_or_many(lam):
            lam_x = exact_lam(x)
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


def staircase_optima(n: int, lam: Any, count: int, seed: Any = 0) -> tuple[int, int]:
    """Maximise ``count`` seeded random integer utilities (entries ``-5 .. 5``) over
    ``U_{K_n}`` exactly; returns ``(count, how many optimal vertices found were not
    staircase mechanisms)``.

    Examples
    --------
    >>> staircase_optima(3, 2, 5)
    (5, 0)
    """
    P = polytopes.U(n, lam, graph=f"complete:{n}")
    rng = numpy_generator(seed)
    bad = 0
    for _ in range(count):
        _, X = P.maximize(rng.integers(-5, 6, size=(n, n)).tolist())
        bad += not is_staircase(X, lam)
    return count, bad


# ------------------------------------------------------------------ the tables of docs/graphs.md
def _cell(opt: Fraction, rr: Fraction) -> str:
    return f"{opt}" if opt == rr else f"{opt} ({rr})"


@renamed_keywords(n_values="n", lams="lam")
def complete_graph_table(loss: str, n: Any = (2, 3, 4, 5), lam: Any = (2, 3)) -> str:
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
    rows = complete_graph_rows(n, lam, [loss])
    names = list(dict.fromkeys(r["target"] for r in rows))
    lines = ["| n | lam | " + " | ".join(names) + " |", "|---" * (len(names) + 2) + "|"]
    for (n, lam), group in itertools.groupby(rows, key=lambda r: (r["n"], r["lam"])):
        cells = {r["target"]: _cell(r["optimum"], r["rr_remap"]) for r in group}
        lines.append(f"| {n} | {lam} | " + " | ".join(cells[t] for t in names) + " |")
    return "\n".join(lines)


@renamed_keywords(lams="lam")
def grid_table(specs: Iterable[str] = ("grid:2x2", "king:2x2", "grid:2x3", "king:2x3",
                                       "grid:3x3"), lam: Any = (2, 3)) -> str:
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
    for r in grid_rows(specs, lam):
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


def search(name: str, n_max: int = 5) -> SearchResult:
    """Run one search of :data:`SEARCHES` through the engine: the graphs of its kind
    with ``n <= n_max`` by size then atlas order (``K_n`` for "complete"), then
    ``lams_by_height(H)``, then ``compositions(N)`` (no target when ``N = 0``).

    Examples
    --------
    >>> print(search("graph geometric mechanism exists, trees").counterexample.instance)
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
    found = search(name)
    if not found:
        return f"{name}: no counterexample"
    ce = found.counterexample
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
    dpfix.explore.graph_tables WHAT``): ``"carry-over"``, ``"complete"``, ``"trees"``
    or ``"grid"``."""
    if what == "carry-over":
        out = []
        for name, st in CARRY_OVER.items():
            if st.status == PROVED:
                continue
            found = carry_over_search(name, n=[2, 3, 4])
            out.append(f"{name}:\n{found}")
            if st.over == "instance" and found:
                scale = dependent_scale(found.counterexample.instance)
                out.append("the scale: (" + ", ".join(map(str, scale)) + ")")
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
