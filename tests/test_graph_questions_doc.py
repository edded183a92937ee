"""docs/graph_questions.md runs as written: its Python blocks, in order, in one namespace,
print exactly the ``text`` block that follows each; and every number they print is
confirmed by a computation that shares nothing with the engine's: the graphs rebuilt with
networkx, the distances by breadth-first search, the optima of ``F_G`` and of the remap
programme by float linear programmes (HiGHS) written here from the edges, the graph
geometric mechanism by exact Gaussian elimination here, each printed matrix checked
against the constraints of ``F_G`` (or of a remap) entry by entry, exactly, the visiting
order enumerated here, and the vertex counts by cdd and by the structure count against
the chambers table of docs/graphs.md (where every piece is counted twice)."""

from __future__ import annotations

import contextlib
import io
import itertools
import math
import re
from collections import Counter
from fractions import Fraction
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from scipy.optimize import linprog

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "graph_questions.md"
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", flags=re.M | re.S)

#: the named targets at n = 4 (uniform, geometric, asymmetric, with a zero entry), as the
#: page prints them
NAMED_4 = [tuple(Fraction(x) for x in z) for z in (
    ("1/4", "1/4", "1/4", "1/4"), ("8/15", "4/15", "2/15", "1/15"),
    ("1/14", "2/7", "3/14", "3/7"), ("1/2", "0", "1/4", "1/4"))]
GRAPHS = {"star:4": nx.star_graph(3), "cycle:4": nx.cycle_graph(4)}
TOL = 1e-7


def blocks(text: str) -> list[tuple[str, str]]:
    """The fenced blocks of ``text``: ``(language, body)`` in order.

    >>> blocks("a\\n```python\\nx = 1\\n```\\nb\\n```text\\n1\\n```\\n")
    [('python', 'x = 1\\n'), ('text', '1\\n')]
    """
    return [(lang.strip(), body) for lang, body in FENCE.findall(text)]


@pytest.fixture(scope="module")
def pairs() -> list[tuple[str, str, str | None]]:
    """Every Python block of the page run in one namespace: ``(its code, its output, the
    text block that follows it)`` in order."""
    found = blocks(PAGE.read_text(encoding="utf-8"))
    namespace: dict = {"__name__": "graph_questions_doc"}
    out = []
    for k, (lang, body) in enumerate(found):
        if lang != "python":
            continue
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(body, f"graph_questions.md block {k}", "exec"), namespace)  # noqa: S102
        shown = found[k + 1][1] if k + 1 < len(found) and found[k + 1][0] == "text" else None
        out.append((body, printed.getvalue(), shown))
    return out


def _output(pairs, marker: str) -> str:
    (printed,) = [p for body, p, _ in pairs if marker in body]
    return printed


# ------------------------------------------------------------------ an independent computation
def _distances(G: nx.Graph) -> list[list[int]]:
    d = dict(nx.all_pairs_shortest_path_length(G))
    return [[d[i][j] for j in sorted(G)] for i in sorted(G)]


def _solve(A: list[list[Fraction]], b: list[Fraction]) -> list[Fraction]:
    """``A x = b`` by Gaussian elimination over the rationals (``A`` invertible)."""
    n = len(A)
    M = [list(row) + [b[i]] for i, row in enumerate(A)]
    for c in range(n):
        p = next(r for r in range(c, n) if M[r][c] != 0)
        M[c], M[p] = M[p], M[c]
        for r in range(n):
            if r != c and M[r][c] != 0:
                f = M[r][c] / M[c][c]
                M[r] = [x - f * y for x, y in zip(M[r], M[c], strict=True)]
    return [M[i][n] / M[i][i] for i in range(n)]


def _geometric(G: nx.Graph, lam: Fraction) -> tuple[list[list[Fraction]], list[Fraction]]:
    """``N[i, m] = lam^(-d(i, m)) alpha_m``, ``alpha`` solving ``Sigma alpha = 1``."""
    d = _distances(G)
    n = len(d)
    S = [[lam ** -d[i][m] for m in range(n)] for i in range(n)]
    alpha = _solve(S, [Fraction(1)] * n)
    return [[S[i][m] * alpha[m] for m in range(n)] for i in range(n)], alpha


def _f_optimum(G: nx.Graph, lam: Fraction, z, W) -> float:
    """``min <W, T>`` over ``F_G[z]`` as a float LP written from the edges."""
    n = len(z)
    idx = lambda i, j: i * n + j  # noqa: E731
    A_eq, b_eq = [], []
    for i in range(n):
        row = [0.0] * n * n
        for j in range(n):
            row[idx(i, j)] = 1.0
        A_eq.append(row)
        b_eq.append(1.0)
    for j in range(n):
        row = [0.0] * n * n
        for i in range(n):
            row[idx(i, j)] = float(z[i])
        A_eq.append(row)
        b_eq.append(float(z[j]))
    A_ub = []
    for u, v in G.edges:
        for a, b in ((u, v), (v, u)):
            for j in range(n):
                row = [0.0] * n * n
                row[idx(a, j)], row[idx(b, j)] = 1.0, -float(lam)
                A_ub.append(row)
    c = [float(W[i][j]) for i in range(n) for j in range(n)]
    res = linprog(c, A_ub=A_ub, b_ub=[0.0] * len(A_ub), A_eq=A_eq, b_eq=b_eq,
                  bounds=(0, None), method="highs")
    assert res.status == 0
    return res.fun


def _remap_optimum(N, z, W) -> float:
    """``min <W, N R>`` over the row-stochastic ``R`` with ``(z N) R = z``, a float LP."""
    n = len(z)
    y = [sum(z[i] * N[i][k] for i in range(n)) for k in range(n)]
    C = [[sum(N[i][k] * W[i][j] for i in range(n)) for j in range(n)] for k in range(n)]
    A_eq, b_eq = [], []
    for k in range(n):
        A_eq.append([1.0 if r == k else 0.0 for r in range(n) for _ in range(n)])
        b_eq.append(1.0)
    for j in range(n):
        A_eq.append([float(y[k]) if col == j else 0.0 for k in range(n) for col in range(n)])
        b_eq.append(float(z[j]))
    res = linprog([float(C[k][j]) for k in range(n) for j in range(n)], A_eq=A_eq, b_eq=b_eq,
                  bounds=(0, None), method="highs")
    assert res.status == 0
    return res.fun


def _weights(G: nx.Graph, z) -> list[list[Fraction]]:
    d = _distances(G)
    return [[z[i] * d[i][j] for j in range(len(z))] for i in range(len(z))]


def _verdict(G: nx.Graph, lam: Fraction, z) -> tuple[bool, float, float]:
    """Whether the northwest analogue holds (True where the graph geometric mechanism is no
    mechanism), the float optimum and the float value of the candidate."""
    N, alpha = _geometric(G, lam)
    if min(alpha) < 0:
        return True, math.nan, math.nan
    W = _weights(G, z)
    opt, cand = _f_optimum(G, lam, z, W), _remap_optimum(N, z, W)
    assert cand >= opt - TOL
    return cand - opt < TOL, opt, cand


def _compositions(N_max: int, n: int):
    """The targets ``c / N``, ``N = 1 .. N_max``, ``c`` lexicographic, each at its least
    ``N`` (written here, not the package's enumerator)."""
    for N in range(1, N_max + 1):
        for c in itertools.product(range(N + 1), repeat=n):
            if sum(c) == N and math.gcd(*c) == 1:
                yield tuple(Fraction(x, N) for x in c)


# ------------------------------------------------------------------ reading what is printed
HEAD = re.compile(r"counterexample over instance at (\S+) \(edges ([\d ]+)\), n = (\d+), "
                  r"lam = (\S+), z = \(([^)]*)\) \(instance (\d+) visited\)")


def _counterexamples(text: str) -> list[dict]:
    """Each counterexample printed in ``text``: its graph, edges, lam, z, visited and the
    details (numbers and matrices), as Fractions."""
    out = []
    for part in text.split("counterexample over ")[1:]:
        lines = ("counterexample over " + part).strip().splitlines()
        m = HEAD.fullmatch(lines[0])
        assert m, lines[0]
        assert lines[1] == "witness:"
        rec = {"graph": m.group(1), "edges": m.group(2).split(), "lam": Fraction(m.group(4)),
               "z": tuple(Fraction(x) for x in m.group(5).split(", ")),
               "visited": int(m.group(6))}
        name = None
        for line in lines[2:]:
            if line.startswith("["):
                rec[name].append([Fraction(x) for x in line.strip("[]").split()])
            elif line.endswith(":"):
                name = line[:-1]
                rec[name] = []
            else:
                key, value = line.split(": ")
                rec[key] = Fraction(value)
        out.append(rec)
    return out


def _check_counterexample(rec: dict) -> None:
    """The printed counterexample, confirmed: its instance is a failure of the float LPs,
    the printed T is in F_G[z] and attains the printed optimum, N is the graph geometric
    mechanism, R is a z-preserving remap of N attaining the printed candidate value."""
    G = GRAPHS[rec["graph"]]
    assert sorted(rec["edges"]) == sorted(f"{min(e)}{max(e)}" for e in G.edges)
    lam, z, n = rec["lam"], rec["z"], len(rec["z"])
    W = _weights(G, z)
    holds, opt, cand = _verdict(G, lam, z)
    assert not holds
    assert abs(opt - float(rec["optimum"])) < TOL and abs(cand - float(rec["candidate"])) < TOL
    T, N, R = rec["optimal T"], rec["N"], rec["R"]
    assert all(sum(row) == 1 and min(row) >= 0 for row in T)
    assert [sum(z[i] * T[i][j] for i in range(n)) for j in range(n)] == list(z)
    for u, v in G.edges:
        for a, b in ((u, v), (v, u)):
            assert all(T[a][j] <= lam * T[b][j] for j in range(n))
    assert sum(W[i][j] * T[i][j] for i in range(n) for j in range(n)) == rec["optimum"]
    assert N == _geometric(G, lam)[0]
    assert all(sum(row) == 1 and min(row) >= 0 for row in R)
    y = [sum(z[i] * N[i][k] for i in range(n)) for k in range(n)]
    assert [sum(y[k] * R[k][j] for k in range(n)) for j in range(n)] == list(z)
    NR = [[sum(N[i][k] * R[k][j] for k in range(n)) for j in range(n)] for i in range(n)]
    assert sum(W[i][j] * NR[i][j] for i in range(n) for j in range(n)) == rec["candidate"]
    assert rec["candidate"] > rec["optimum"]


def _check_smallest(rec: dict, targets: list[tuple]) -> None:
    """Every target before the counterexample, in visiting order, holds."""
    k = targets.index(rec["z"])
    assert rec["visited"] == k + 1
    G = GRAPHS[rec["graph"]]
    assert all(_verdict(G, rec["lam"], z)[0] for z in targets[:k])


# ------------------------------------------------------------------ the tests
def test_the_page_prints_what_it_shows(pairs):
    assert len(pairs) >= 9, "the page's Python blocks"
    assert sum(shown is not None for _, _, shown in pairs) >= 7
    for k, (_, printed, shown) in enumerate(pairs):
        assert printed == ("" if shown is None else shown), f"block {k}"


def test_each_question_is_answered_in_at_most_ten_lines(pairs):
    for body, _, _ in pairs:
        assert len(body.strip().splitlines()) <= 10, body


def test_the_vertex_counts_agree_with_cdd_and_the_chambers_table(pairs):
    from dpfix.theory.polytopes import F, U

    printed = _output(pairs, "count_vertices")
    rows = re.findall(r"^(\S+), lam = (\d+): U_G has (\d+) vertices, F_G\[uniform\] (\d+)$",
                      printed, flags=re.M)
    assert len(rows) == 4
    # docs/graphs.md section 13: the star atlas:13 and the 4-cycle atlas:16, isomorphic to
    # star:4 and cycle:4 (the uniform target is kept by every relabelling)
    table = (ROOT / "docs" / "graphs.md").read_text(encoding="utf-8")
    assert "| atlas:13 star K_(1,3) | U_G | (1, 2): 424; [2]: 208; (2, inf): 280 |" in table
    assert "| atlas:13 star K_(1,3) | F_G[uniform] | (1, inf): 2376 |" in table
    assert "| atlas:16 4-cycle C_4 | U_G | (1, inf): 256 |" in table
    assert "| atlas:16 4-cycle C_4 | F_G[uniform] | (1, inf): 1086 |" in table
    pinned = {("star:4", 2): (208, 2376), ("star:4", 3): (280, 2376),
              ("cycle:4", 2): (256, 1086), ("cycle:4", 3): (256, 1086)}
    for spec, lam, u, f in rows:
        assert (int(u), int(f)) == pinned[(spec, int(lam))]
        assert U(4, int(lam), graph=GRAPHS[spec]).count_vertices(backend="cdd") == int(u)
        assert U(4, int(lam), graph=GRAPHS[spec]).count_vertices(backend="structure") == int(u)
    for spec in GRAPHS:  # F_G[uniform] by cdd at lam = 3
        assert F(4, 3, ["1/4"] * 4, graph=GRAPHS[spec]).count_vertices(backend="cdd") == \
            pinned[(spec, 3)][1]


def test_the_smallest_counterexamples_on_the_named_targets(pairs):
    found = _counterexamples(_output(pairs, "z=named_targets()))"))
    assert [r["graph"] for r in found] == ["star:4", "cycle:4"]
    for rec in found:
        assert rec["lam"] == 2
        _check_counterexample(rec)
        _check_smallest(rec, NAMED_4)
    star = found[0]  # lam = 2: the centre's amount vanishes, N's first column is zero
    assert all(row[0] == 0 for row in star["N"])


def test_the_smallest_counterexamples_at_lam_3(pairs):
    found = _counterexamples(_output(pairs, "z=compositions(7)))"))
    assert [r["graph"] for r in found] == ["star:4", "cycle:4"]
    targets = list(_compositions(7, 4))
    for rec in found:
        assert rec["lam"] == 3
        _check_counterexample(rec)
        _check_smallest(rec, targets)


def test_the_documented_star_counterexample(pairs):
    assert _output(pairs, '["1/12", "1/12", "3/4", "1/12"]') == "False 23/60 53/132\n"
    z = tuple(Fraction(x) for x in ("1/12", "1/12", "3/4", "1/12"))
    holds, opt, cand = _verdict(GRAPHS["star:4"], Fraction(3), z)
    assert not holds
    assert abs(opt - 23 / 60) < TOL and abs(cand - 53 / 132) < TOL


def _latex_matrices(text: str) -> dict[str, list[list[Fraction]]]:
    def entry(x: str) -> Fraction:
        m = re.fullmatch(r"(-?)\\frac\{(\d+)\}\{(\d+)\}", x.strip())
        return Fraction(int(m.group(2)), int(m.group(3))) * (-1 if m.group(1) else 1) if m \
            else Fraction(int(x))
    out = {}
    for name, body in re.findall(r"\\text\{([^}]*)\} &= \\begin\{bmatrix\}\n(.*?)\n"
                                 r"\\end\{bmatrix\}", text, flags=re.S):
        out[name] = [[entry(x) for x in row.split("&")] for row in body.split(" \\\\\n")]
    return out


def test_the_latex_holds_the_same_exact_matrices(pairs):
    latex = _output(pairs, "to_latex()")
    (text,) = [r for r in _counterexamples(_output(pairs, "z=compositions(7)))"))
               if r["graph"] == "cycle:4"]
    matrices = _latex_matrices(latex)
    assert set(matrices) == {"optimal T", "N", "R"}
    for name, M in matrices.items():
        assert M == text[name], name
    assert "\\text{optimum} &= \\frac{1}{3}" in latex and \
        "\\text{candidate} &= \\frac{1}{2}" in latex
    assert latex.startswith("\\begin{aligned}") and latex.strip().endswith("\\end{aligned}")


def test_the_survey_of_the_connected_graphs_on_4_nodes(pairs):
    printed = _output(pairs, "Counter(").splitlines()
    expected: Counter = Counter()
    visited = 0
    for index in range(13, 19):  # the connected graphs on 4 nodes of the atlas
        G = nx.graph_atlas(index)
        assert nx.is_connected(G) and G.number_of_nodes() == 4
        for lam in (Fraction(2), Fraction(3)):
            for z in NAMED_4:
                visited += 1
                if not _verdict(G, lam, z)[0]:
                    expected[f"atlas:{index}"] += 1
    assert printed[0] == f"{visited} instances, {sum(expected.values())} counterexamples"
    assert printed[1] == ", ".join(f"{g}: {expected[g]}" for g in sorted(expected))
    assert "atlas:14" not in expected  # the path: Theorem A


def test_the_refusals_are_one_line_each(pairs):
    lines = _output(pairs, 'for bad in ("wheel:5"').splitlines()
    assert len(lines) == 5
    assert "neither a named graph" in lines[2] and "40 nodes" in lines[3] and \
        "not connected" in lines[4]
    (line,) = _output(pairs, '"connected:9"').splitlines()
    assert "261,080 connected graphs on 9 nodes" in line


def test_the_independent_lps_see_a_gap_where_one_is_known():
    """The float programmes of this module, on a case of docs/graphs.md section 14: the
    gap 1/42 at lam = 3 on the family target (1/18, 1/18, 5/6, 1/18)."""
    z = tuple(Fraction(x) for x in ("1/18", "1/18", "5/6", "1/18"))
    holds, opt, cand = _verdict(GRAPHS["star:4"], Fraction(3), z)
    assert not holds and abs(cand - opt - 1 / 42) < TOL
    assert _verdict(nx.path_graph(4), Fraction(3), z)[0]  # the path: Theorem A
    assert np.isnan(_verdict(GRAPHS["star:4"], Fraction(3, 2), z)[1])  # alpha_0 < 0
