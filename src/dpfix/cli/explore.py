"""``dpfix explore``: look at the polytopes of a small case, or at the paper's Example 1.

``dpfix explore --n 3 --lam 2 --z 1/2 1/3 1/6`` prints the vertex counts of
U, F and R_F (those within the enumeration guard), their dimensions and a
summary of each polytope graph (:func:`dpfix.io.reports.polytope_summary`);
``dpfix explore example1`` prints exact instances of both phenomena of the
paper's Example 1 (:func:`dpfix.explore.counterexamples.find_example1`);
``dpfix explore northwest --loss zero-one`` prints the smallest exact
instance where the northwest corner is not optimal over F for a non-convex
loss (:func:`dpfix.explore.northwest.find_northwest_counterexample`; for a convex loss
there is none, Theorem A of docs/optimum_of_F.md);
``dpfix explore delta --lam 2 --delta 1/10`` prints exact instances of what
changes for (eps, delta)-DP (:func:`dpfix.explore.delta_examples.find_delta_examples`,
docs/open_questions.md section 5);
``dpfix explore graph --graph cycle:5 [--lam 2] [--z ...]`` prints the scales of a
neighbour graph (count, and the list for small ones), and the vertex counts and
dimensions of U_G (and F_G[z] for a given --z), exactly
(:func:`dpfix.explore.graphs.graph_summary`, dpfix docs graphs); ``--table`` prints the
table of the named graphs (:func:`dpfix.explore.graphs.graph_table`);
``dpfix explore chambers --n 5`` (``--kind F --z 1/2,1/4,1/4``, ``--kind F --n 4 --z
geometric``, ``--kind RF``) prints the chambers and breakpoints of U, F or R_F in
lam > 1 (:func:`dpfix.theory.parametric.chambers`, docs/every_lam.md); ``--confirm``
recounts every piece by ``count_vertices`` (:meth:`~dpfix.theory.parametric.Chambers.confirm`);
``dpfix explore chambers --graph star:4`` (``--kind F --z uniform``) those of U_G or F_G on
a neighbour graph of at most 4 nodes, ``--confirm`` recounting them with cdd
(dpfix docs graphs, section 13).

Sizes are guarded: ``--n`` up to :data:`dpfix.io.reports.EXPLORE_MAX_N`, a neighbour
graph up to :data:`dpfix.explore.graphs.GRAPH_MAX_N` nodes and
:data:`~dpfix.explore.graphs.GRAPH_MAX_AUTOMORPHISMS` automorphisms (the summary lists them
all: ``complete:9`` has 362,880; :func:`dpfix.explore.graphs.graph_summary` holds the
guard). A polytope beyond the enumeration guard is reported as skipped, with what would
lift it: without PyNormaliz, the ``enumeration`` extra when Normaliz would take it.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from dpfix.cli._arguments import add_renamed, plain_int
from dpfix.cli.certify import check_loss
from dpfix.io.reports import (
    EXPLORE_MAX_N,
    RF_MAX_N,
    format_example1,
    format_matrix,
    format_summaries,
    polytope_summary,
)
from dpfix.numbers.exact import exact_array, exact_lam

__all__ = ["add_parser", "run", "WHAT"]

#: The named explorations (``dpfix explore NAME``); without a name, the polytopes.
WHAT = ("example1", "northwest", "delta", "graph", "chambers")
#: The width the ``--confirm`` report is wrapped to.
_WIDTH = 88


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dpfix explore``."""
    p = sub.add_parser(
        "explore", help="vertex counts, dimensions and graphs of U, F and R_F, or the "
                        "paper's Example 1",
        description="Look at the polytopes of one small case: the dimension, vertex count "
                    "and graph (edges, degrees, diameter) of U, F[z] and R_F[z] for n counts "
                    "at lam = e^eps, computed exactly (enumerations beyond the guard are "
                    f"skipped, R_F beyond n = {RF_MAX_N}). Or, with example1, the exact "
                    "instances of both phenomena of the paper's Example 1.",
        epilog="examples: dpfix explore --n 3 --lam 2 --z 1/2 1/3 1/6; dpfix explore example1; "
               "dpfix explore northwest --loss zero-one; dpfix explore chambers --n 5; "
               "dpfix explore chambers --kind F --n 3 --z 1/2,1/4,1/4; "
               "dpfix explore chambers --kind F --n 4 --z geometric --confirm")
    p.add_argument("what", nargs="?", choices=WHAT,
                   help="example1: search n = 3 for both phenomena of the paper's Example 1; "
                        "northwest: search for the smallest instance where the northwest "
                        "corner is not optimal over F for --loss; delta: exact "
                        "counterexamples for (eps, delta)-DP at --lam, --delta; graph: the "
                        "scales and polytopes of the neighbour graph --graph (dpfix docs "
                        "graphs); chambers: the chambers and breakpoints in lam > 1 of --kind "
                        "at --n (--z)")
    p.add_argument("--graph", metavar="GRAPH",
                   help="with graph (or chambers, for U_G and F_G at n <= 4): a neighbour "
                        "graph on 0..n-1: path:N, cycle:N, complete:N, "
                        "star:N, grid:AxB, king:AxB, or a file of edges (one 'u v' or "
                        "'u v weight' a line)")
    p.add_argument("--table", action="store_true",
                   help="with graph: the table of scales and vertex counts of the named "
                        "graphs (dpfix docs graphs, section 5) instead of one graph")
    p.add_argument("--kind", choices=("U", "F", "RF"), default="U",
                   help="with chambers: the polytope, U (n <= 5, default), F (n <= 4) or RF "
                        "(n = 3)")
    p.add_argument("--confirm", action="store_true",
                   help="with chambers: recount every piece by count_vertices (a second "
                        "rational point of each chamber; each breakpoint, over Q(lam) when it "
                        "is irrational) and print how many agree")
    p.add_argument("--around", metavar="LAM",
                   help="with chambers: only the interval around the rational LAM on which "
                        "the type is LAM's, from LAM's vertices alone (reaches U at n = 6)")
    p.add_argument("--delta", default="1/10",
                   help="with delta: the delta of (eps, delta)-DP, a rational in (0, 1) "
                        "(default 1/10)")
    p.add_argument("--loss", default="zero-one",
                   help="with northwest: the loss f(i - j): zero-one (default), capped:C, "
                        "sqrt, or a convex one (abs, squared, hinge:A), for which the search "
                        "finds none (Theorem A)")
    add_renamed(p, "--weights", "--loss")
    p.add_argument("--n-max", type=plain_int, default=5,
                   help="with northwest: the largest n searched (default 5)")
    p.add_argument("--n", type=plain_int, default=None,
                   help=f"number of counts, 2..{EXPLORE_MAX_N} (default 3; with chambers "
                        "--graph, the graph's nodes)")
    p.add_argument("--lam", default="2", help="lam = e^eps, a rational above 1 such as 2 or "
                   "3/2 (default 2)")
    p.add_argument("--z", nargs="+", metavar="Z",
                   help="target distribution: n rationals summing to 1, separated by spaces "
                        "or commas (default uniform); with chambers also a standard target "
                        "by name: uniform, geometric, asymmetric or zero")
    return p


def _run_polytopes(n: int, lam_text: str, z_text: list[str] | None) -> int:
    from dpfix.theory.polytopes import RF, F, U

    if not 2 <= n <= EXPLORE_MAX_N:
        raise ValueError(f"--n: must be in 2..{EXPLORE_MAX_N} (beyond, cdd's exact computations "
                         f"on U and F take minutes), got {n}")
    lam = exact_lam(lam_text)
    z = exact_array(z_text if z_text else [f"1/{n}"] * n, "--z", ndim=1)
    print(f"n = {n}, lam = {lam} (eps = ln {lam}), z = ({', '.join(map(str, z))})")
    polys = [("U", U(n, lam), EXPLORE_MAX_N), ("F[z]", F(n, lam, z), EXPLORE_MAX_N),
             ("R_F[z]", RF(n, lam, z), RF_MAX_N)]
    rows = [_skipped_note(polytope_summary(label, P, max_n=top), P)
            for label, P, top in polys]
    print(format_summaries(rows))
    return 0


def _skipped_note(row: dict[str, Any], P: Any) -> dict[str, Any]:
    """A row the enumeration guard skipped: on an install without PyNormaliz, when
    Normaliz would take the polytope, the note names the ``enumeration`` extra
    (:func:`dpfix.theory.polytopes.normaliz_advice`, what the guard's message says)."""
    from dpfix.theory.polytopes import normaliz_advice

    advice = normaliz_advice(P.name, P.n)
    if row.get("vertices") != "skipped" or advice is None or advice not in row.get("note", ""):
        return row
    return {**row, "note": f"{P.name}(n={P.n}) skipped: {advice}"}


def _run_northwest(name: str, n_max: int) -> int:
    from dpfix.explore.northwest import find_northwest_counterexample

    check_loss(name)  # an unknown name, or not a loss, is refused before the search starts
    if not 2 <= n_max <= 6:
        raise ValueError(f"--n-max: must be in 2..6 (the exact search grows fast), got {n_max}")
    found = find_northwest_counterexample(name, n_max=n_max)
    if not found:
        print(f"loss {name}: the northwest corner is optimal over F on every instance "
              f"searched (n <= {n_max}, z = c/N with N <= 6, lam in 2, 3, 3/2)")
        return 0
    print("The smallest exact instance where the northwest corner is not optimal over F "
          "(dpfix docs optimum_of_F, section 5):")
    print(found.counterexample)
    return 0


def _run_delta(lam_text: str, delta_text: str) -> int:
    from dpfix.explore.delta_examples import find_delta_examples

    n = 2  # every instance exists at n = 2 (R_F^delta at n = 3: 177,150 vertices, 2 minutes)
    ex = find_delta_examples(lam_text, delta_text, n=n)
    print(f"(eps, delta)-DP count mechanisms, n = {n}, lam = {ex.lam}, delta = {ex.delta} "
          "(dpfix docs open_questions, section 5), found by exact search:")
    for title, M in (
            ("1. A vertex of U_delta with positive entries whose columns are not multiples of "
             "eps-scales (Theorem 2 needs delta = 0):", ex.positive_vertex),
            ("2. A vertex of U (eps-DP) that is not a vertex of U_delta (no budget is "
             "tight at it):", ex.lost_vertex),
            ("3. A vertex [T; S] of the lifted form, S the least slack, whose T is not a "
             "vertex of U_delta:", ex.lifted_vertex),
            (f"4. A vertex B of R_F^delta (z = ({', '.join(map(str, ex.z))}); rows: the "
             "truncated scales) whose image is not a vertex of F_delta:", ex.rf_vertex),
            ("   its image Psi_delta B:", ex.rf_image)):
        print(title)
        print(format_matrix(M))
    return 0


def _run_graph(graph: str | None, lam_text: str, z_text: list[str] | None,
               table: bool) -> int:
    from dpfix.explore.graph_theory import theorems_section
    from dpfix.explore.graphs import (
        format_graph_summary,
        format_graph_table,
        graph_summary,
        graph_table,
    )

    if table:
        if graph is not None:
            raise ValueError("--table: prints the named graphs; leave out --graph")
        print(format_graph_table(graph_table(lam=lam_text), lam_text))
        return 0
    if graph is None:
        raise ValueError("graph: give --graph (path:N, cycle:N, complete:N, star:N, grid:AxB, "
                         "king:AxB or a file of edges) or --table")
    try:
        summary = graph_summary(graph, lam_text, z_text)
    except ValueError as exc:  # the library's size guard names graph; here it is --graph
        if str(exc).startswith("graph "):
            raise ValueError(f"--{exc}") from None
        raise
    print(format_graph_summary(summary))
    # Then which theorems hold on this graph (docs/graphs.md section 8).
    print((theorems_section.__doc__ or "").strip().splitlines()[0])
    print("\n".join(theorems_section(summary["case"])))
    return 0


def _z_tokens(z_text: list[str] | None, n: int) -> list[str]:
    if not z_text:
        return [f"1/{n}"] * n
    return [t for part in z_text for t in part.split(",") if t.strip()]


def _chamber_target(kind: str, n: int, z_text: list[str] | None) -> Any:
    """The exact target of ``--z``: rationals, or one of the standard targets by name."""
    from dpfix.explore.cases import standard_z

    if kind == "U":
        if z_text:
            raise ValueError("--z: U has no target; give --z with --kind F or RF")
        return None
    tokens = _z_tokens(z_text, n)
    named = standard_z(n)
    if len(tokens) == 1 and tokens[0] in named:
        return named[tokens[0]]
    return exact_array(tokens, "--z", ndim=1)


def _confirmation(rows: list[dict[str, Any]], seconds: float) -> str:
    """How many pieces ``Chambers.confirm`` recounted, and how: the tally on its first
    line, then the pieces not confirmed, grouped by the reason, wrapped to 88 columns."""
    import textwrap

    ok = [r for r in rows if r["ok"] is True]
    chambers_ok = sum("chamber" in r["method"] for r in ok)
    algebraic = sum("Q(lam)" in r["method"] for r in ok)
    lines = [f"confirmed {len(ok)} of {len(rows)} piece(s) by count_vertices: {chambers_ok} "
             f"chamber(s) at a second rational point, {len(ok) - chambers_ok} breakpoint(s) "
             f"({algebraic} over Q(lam), {len(ok) - chambers_ok - algebraic} rational); "
             f"{seconds:.1f} s"]
    reasons: dict[str, list[str]] = {}
    for r in rows:
        if r["ok"] is not True:
            reasons.setdefault(_reason(r["method"]), []).append(_piece_label(r["piece"]))
    for reason, pieces in reasons.items():
        text = f"not confirmed: {', '.join(pieces)}: {reason}"
        lines += textwrap.wrap(text, width=_WIDTH, subsequent_indent="  ",
                               break_on_hyphens=False)
    return "\n".join(lines)


def _piece_label(piece: str) -> str:
    """``Piece(breakpoint 1.18614, 16 vertices)`` -> ``breakpoint 1.18614 (16 vertices)``."""
    inner = piece.removeprefix("Piece(").removesuffix(")")
    what, _, count = inner.rpartition(", ")
    return f"{what} ({count})" if what else inner


def _reason(method: str) -> str:
    """Why a piece was not confirmed, without the polytope's own repr (the same reason
    for every piece of one polytope then reads as one)."""
    reason = method.removeprefix("not confirmed: ")
    # "... refused (ImportError: F(n=3, lam=root of ..., z=[...]): vertices over ... need X)"
    match = re.search(r"\((\w+): [A-Za-z_]+\(.*?\): (.*)\)$", reason)
    if match:
        return f"{reason[:match.start()].strip()}: {match.group(2)}"
    return reason


def _run_around(kind: str, n: int, z_text: list[str] | None, lam_text: str) -> int:
    from dpfix.theory.parametric import AROUND_LIMITS, interval_around

    if not 2 <= n <= AROUND_LIMITS[kind]:
        raise ValueError(f"--n: with --around, {kind} is taken for n in "
                         f"2..{AROUND_LIMITS[kind]}, got {n}")
    lam = exact_lam(lam_text)
    z = _chamber_target(kind, n, z_text)
    p = interval_around(kind, n, lam, z, processes=2 if kind == "U" and n >= 5 else 1)
    zs = "" if z is None else ", z=(" + ", ".join(str(v) for v in z) + ")"
    print(f"{kind}(n={n}{zs}) at lam = {lam}: {p.count} vertices")
    print(f"the same type on ({float(p.lo):.10g}, {float(p.hi):.10g}), {p.describe_ends()} "
          "(within the chamber holding lam)")
    return 0


def _run_chambers(kind: str, n: int, z_text: list[str] | None, confirm: bool,
                  around: str | None = None) -> int:
    import time

    from dpfix.theory.parametric import LIMITS, chambers

    if around is not None:
        if confirm:
            raise ValueError("--confirm: not with --around (one interval, not a table)")
        return _run_around(kind, n, z_text, around)
    if not 2 <= n <= LIMITS[kind]:
        raise ValueError(f"--n: chambers of {kind} are computed for n in 2..{LIMITS[kind]}, "
                         f"got {n}")
    z = _chamber_target(kind, n, z_text)
    ch = chambers(kind, n, z, processes=2 if kind == "U" and n >= 5 else 1)
    print(ch.table())
    if confirm:
        start = time.perf_counter()
        try:
            rows = ch.confirm()
        except AssertionError as exc:  # a count the enumeration does not reproduce
            print(f"not confirmed: {exc}")
            return 1
        print(_confirmation(rows, time.perf_counter() - start))
        return 0 if all(r["ok"] is True for r in rows) else 1
    return 0


def _run_graph_chambers(kind: str, graph_text: str, n: int | None,
                        z_text: list[str] | None, confirm: bool, around: str | None) -> int:
    """``dpfix explore chambers --graph GRAPH``: the chambers of U_G (F_G with --z)."""
    import time

    from dpfix.theory.graphs import as_graph, graph_label
    from dpfix.theory.parametric import GRAPH_LIMITS, chambers, interval_around

    G = as_graph(graph_text)
    m = G.number_of_nodes()
    if n is not None and n != m:
        raise ValueError(f"--n: the graph {graph_label(G)} has {m} nodes, got --n {n}")
    if kind not in GRAPH_LIMITS:
        raise ValueError(f"--kind: with --graph, one of {', '.join(GRAPH_LIMITS)}, got {kind}")
    if m > GRAPH_LIMITS[kind]:
        raise ValueError(f"--graph: chambers of {kind} on a graph are computed for at most "
                         f"{GRAPH_LIMITS[kind]} nodes, got {m}")
    z = _chamber_target(kind, m, z_text)
    if around is not None:
        if confirm:
            raise ValueError("--confirm: not with --around (one interval, not a table)")
        lam = exact_lam(around)
        p = interval_around(kind, m, lam, z, graph=G)
        print(f"{kind}(n={m}, graph={graph_label(G)}) at lam = {lam}: {p.count} vertices")
        print(f"the same type on ({float(p.lo):.10g}, {float(p.hi):.10g}), "
              f"{p.describe_ends()} (within the chamber holding lam)")
        return 0
    ch = chambers(kind, m, z, graph=G)
    print(ch.table())
    if confirm:
        start = time.perf_counter()
        try:
            rows = ch.confirm(backend="cdd")
            sets = ch.confirm_vertices(backend="cdd")
        except AssertionError as exc:  # a count the enumeration does not reproduce
            print(f"not confirmed: {exc}")
            return 1
        print(_confirmation(rows, time.perf_counter() - start))
        print(f"vertex sets: {sum(r['ok'] for r in sets)} of {len(sets)} chamber(s) equal "
              "cdd's vertices at a second rational point, formula for formula")
        return 0 if all(r["ok"] is True for r in rows) else 1
    return 0


def run(args: argparse.Namespace) -> int:
    """Run ``dpfix explore``."""
    if args.what == "example1":
        from dpfix.explore.counterexamples import find_example1

        print(format_example1(find_example1()))
        return 0
    if args.what == "northwest":
        return _run_northwest(args.loss, args.n_max)
    if args.what == "delta":
        return _run_delta(args.lam, args.delta)
    if args.what == "graph":
        return _run_graph(args.graph, args.lam, args.z, args.table)
    if args.table or (args.graph is not None and args.what != "chambers"):
        raise ValueError("--graph, --table: only with 'dpfix explore graph' (--graph also "
                         "with 'dpfix explore chambers')")
    for flag, given in (("--confirm", args.confirm), ("--around", args.around is not None)):
        if given and args.what != "chambers":
            raise ValueError(f"{flag}: only with 'dpfix explore chambers'")
    if args.what == "chambers":
        if args.graph is not None:
            return _run_graph_chambers(args.kind, args.graph, args.n, args.z, args.confirm,
                                       args.around)
        n = 3 if args.n is None else args.n
        return _run_chambers(args.kind, n, args.z, args.confirm, args.around)
    n = 3 if args.n is None else args.n
    return _run_polytopes(n, args.lam, _z_tokens(args.z, n) if args.z else None)
