"""The statements of docs/every_lam.md, docs/math_notes.md, docs/graphs.md, the theorem of
:mod:`dpfix.theory.parametric` and the README's error figures, each recomputed: the
corrected wording is on the page, the wrong one is not, and every number is the
library's."""

from __future__ import annotations

import doctest
import json
import statistics
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpfix.theory import parametric, polytopes
from dpfix.theory.scales import psi, sigma
from helpers import cli, needs_data

ROOT = Path(__file__).resolve().parents[1]


def _flat(path: str) -> str:
    """A page with its line breaks and runs of spaces made single spaces."""
    return " ".join((ROOT / path).read_text(encoding="utf-8").split())


def _slacks(P: polytopes.Polytope, X) -> np.ndarray:
    x = np.array(X, dtype=object).ravel()
    return P.b_ub - P.A_ub.dot(x)


def _tight(P: polytopes.Polytope, X) -> frozenset[int]:
    return frozenset(int(i) for i in np.flatnonzero(_slacks(P, X) == 0))


# -- docs/every_lam.md section 2: the image of the limit map contains the wall's vertices ----
def _hull_vertices(points: list[tuple[Fraction, Fraction]]) -> list[tuple[Fraction, Fraction]]:
    """The points of a planar set that are not in the triangle (or segment) of three others
    (enough for four points): exact barycentric coordinates."""
    def inside(p, a, b, c) -> bool:
        d = (b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1])
        if d == 0:  # a degenerate triangle: p on one of its segments
            return any(_on_segment(p, u, v) for u, v in ((a, b), (b, c), (a, c)))
        s = ((p[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (p[1] - a[1])) / d
        t = ((b[0] - a[0]) * (p[1] - a[1]) - (p[0] - a[0]) * (b[1] - a[1])) / d
        return s >= 0 and t >= 0 and s + t <= 1

    out = []
    for i, p in enumerate(points):
        others = points[:i] + points[i + 1:]
        if not inside(p, *others):
            out.append(p)
    return out


def _on_segment(p, u, v) -> bool:
    cross = (v[0] - u[0]) * (p[1] - u[1]) - (v[1] - u[1]) * (p[0] - u[0])
    return cross == 0 and min(u[0], v[0]) <= p[0] <= max(u[0], v[0]) \
        and min(u[1], v[1]) <= p[1] <= max(u[1], v[1])


def _example(gap: Fraction) -> list[tuple[Fraction, Fraction]]:
    """``conv{(0, 0), (2, 0), (0, 2), (1, 1 + f - lam)}`` with ``gap = f - lam``."""
    zero, one, two = Fraction(0), Fraction(1), Fraction(2)
    return [(zero, zero), (two, zero), (zero, two), (one, one + gap)]


@given(st.fractions(min_value=0, max_value=1).filter(lambda g: 0 < g < 1))
def test_the_planar_example_has_a_limit_of_vertices_that_is_not_a_vertex(gap):
    assert len(_hull_vertices(_example(gap))) == 4  # f - 1 < lam < f: four vertices
    at_wall = _hull_vertices(_example(Fraction(0)))
    assert (1, 1) not in at_wall and len(at_wall) == 3  # the limit (1, 1): an edge's midpoint
    assert _on_segment((Fraction(1), Fraction(1)), (2, 0), (0, 2))


def test_every_lam_section_2_states_contains_and_why_v_extends():
    page = _flat("docs/every_lam.md")
    assert "the image of ``v -> v(f)`` contains every vertex of ``P(f)``" in page
    assert "because the polytope is bounded" in page
    assert "``(1, 1)``, the midpoint of an edge" in page
    assert "maps the vertices of ``C`` onto those of ``P(f)``" not in page


# -- docs/every_lam.md section 1, math_notes.md section 2: what one point per chamber settles --
def test_one_point_per_chamber_settles_the_type_not_the_numbers():
    for path in ("docs/every_lam.md", "docs/math_notes.md"):
        page = _flat(path)
        assert "depends on lam only through the type" in page or \
            "depends on lam through the type" in page, path
    assert "every breakpoint: one rational point per chamber and each breakpoint suffice." \
        not in _flat("docs/every_lam.md")
    # U(3) has one chamber, (1, inf) ...
    ch = parametric.chambers("U", 3)
    assert ch.counts() == [27] and ch[0].hi == float("inf")
    # ... and an optimum over it differs at two points of that chamber
    W = [[abs(i - j) for j in range(3)] for i in range(3)]
    C = [[-w for w in row] for row in W]  # maximise -<W, T>
    values = {polytopes.U(3, lam).maximize(C)[0] for lam in (Fraction(3, 2), Fraction(2))}
    assert len(values) == 2


def test_math_notes_states_the_block_vectors_scaling_and_the_code_uses_it():
    from dpfix.theory.algebraic_enumeration import _faces_mod
    from dpfix.theory.enumeration import u_pattern_blocks

    page = _flat("docs/math_notes.md")
    assert "scaled by `c^(hi - lo)`" in page
    assert "`beta^(h - lo) c^(hi - h)`" in page and "`a + b = hi - lo <= n - 1`" in page
    n, p, r, c = 5, 1_000_003, 12345, 7  # beta = c lam reduced to r modulo p
    lam = r * pow(c, -1, p) % p
    patterns, families, shapes = _faces_mod(n, r, c, p)
    for pt, vecs, shape in zip(patterns, families, shapes, strict=True):
        for (a, h), v, (a2, exps) in zip(u_pattern_blocks(pt), vecs, shape, strict=True):
            lo, hi = min(h), max(h)
            assert a == a2 and max(exps) == hi - lo <= n - 1
            for k, hk in enumerate(h):  # c^(hi - lo) lam^(h - lo) = beta^(h - lo) c^(hi - h)
                assert v[a + k] == pow(c, hi - lo, p) * pow(lam, hk - lo, p) % p


# -- the theorem of dpfix.theory.parametric: strictly feasible points ------------------------
def test_the_theorem_leaves_out_the_forced_zero_columns_and_cites_continuity():
    doc = " ".join(parametric.__doc__.split())
    assert "leave out, for F as for R_F, the columns with ``z_j = 0``" in doc
    assert "Robinson" in doc and "SIAM J. Numer. Anal. 12 (1975)" in doc
    assert "(the matrix ``1 z^T``, or a positive combination of all the scales" not in doc


@pytest.mark.parametrize("lam", [Fraction(3, 2), Fraction(2), Fraction(3)])
def test_1_zT_is_strictly_feasible_for_F_only_on_the_columns_with_z_positive(lam):
    z = [Fraction(2, 3), Fraction(0), Fraction(1, 3)]
    P = polytopes.F(3, lam, z)
    T = np.array([z] * 3, dtype=object)  # 1 z^T
    assert P.contains(T)
    touches_zero = [any(P.A_ub[r, 3 * i + 1] != 0 for i in range(3))
                    for r in range(P.A_ub.shape[0])]
    slack = _slacks(P, T)
    assert any(s == 0 for s in slack)  # not strictly feasible with the zero column in
    assert all((s == 0) == t for s, t in zip(slack, touches_zero, strict=True))
    assert all(v[:, 1].tolist() == [0, 0, 0] for v in P.vertices())  # the column vanishes


@pytest.mark.parametrize("lam", [Fraction(3, 2), Fraction(2), Fraction(3)])
def test_R_F_has_a_strictly_feasible_point_off_the_zero_columns(lam):
    n, z = 3, [Fraction(2, 3), Fraction(0), Fraction(1, 3)]
    S, Sig = psi(n, lam), sigma(n, lam)
    u = S.dot(np.ones(S.shape[1], dtype=object))  # the sum of all the scales
    e = Fraction(1)
    while True:  # w = e 1 + (Sigma^-1 (1 - e u) on the single-peaked scales) > 0
        alpha = np.array(_solve(Sig, [1 - e * ui for ui in u]), dtype=object)
        if all(a > 0 for a in alpha):
            break
        e /= 2
    w = np.full(S.shape[1], e, dtype=object)
    for j in range(n):
        w[_column_of(S, Sig[:, j])] += alpha[j]
    assert all(x > 0 for x in w) and S.dot(w).tolist() == [1] * n
    B = np.array([[z[j] * w[i] for j in range(n)] for i in range(S.shape[1])], dtype=object)
    R = polytopes.RF(n, lam, z)
    assert R.contains(B)
    zero_column = [any(R.A_ub[r, i * n + 1] != 0 for i in range(S.shape[1]))
                   for r in range(R.A_ub.shape[0])]
    assert all((s == 0) == t for s, t in zip(_slacks(R, B), zero_column, strict=True))


def _solve(M: np.ndarray, b: list) -> list:
    from sympy import Matrix

    x = Matrix(M.tolist()).LUsolve(Matrix(b))
    return [Fraction(int(v.p), int(v.q)) for v in x]


def _column_of(S: np.ndarray, col: np.ndarray) -> int:
    return next(k for k in range(S.shape[1]) if S[:, k].tolist() == col.tolist())


# -- docs/graphs.md sections 5, 6, 10: lam = 2 is a wall of U on star:4 ------------------------
STAR_COUNTS = {Fraction(101, 100): 424, Fraction(3, 2): 424, Fraction(19, 10): 424,
               Fraction(199, 100): 424, Fraction(2): 208, Fraction(201, 100): 280,
               Fraction(21, 10): 280, Fraction(3): 280, Fraction(10): 280}


def test_star4_counts_around_lam_2():
    for lam, count in STAR_COUNTS.items():
        assert polytopes.U(4, lam, graph="star:4").count_vertices() == count, lam


def test_lam_2_is_a_wall_of_u_on_star4():
    from dpfix.explore.graph_mechanisms import graph_geometric
    from dpfix.numbers.exact import rank

    tight = {}
    for lam in (Fraction(201, 100), Fraction(21, 10), Fraction(3), Fraction(2)):
        P = polytopes.U(4, lam, graph="star:4")
        N, alpha = graph_geometric("star:4", lam)
        assert P.is_extreme(N)
        tight[lam] = _tight(P, N)
        if lam == 2:
            assert alpha[0] == 0  # the centre's amount vanishes
    above = tight[Fraction(3)]
    assert len(above) == 12 and tight[Fraction(201, 100)] == tight[Fraction(21, 10)] == above
    assert above < tight[Fraction(2)] and len(tight[Fraction(2)]) == 15
    P2 = polytopes.U(4, 2, graph="star:4")
    rows = np.vstack([P2.A_eq, P2.A_ub[sorted(above)]])
    assert rank(rows) == P2.num_variables  # the 12 and the row sums fix N(2): no vertex has them


def test_star_counterexample_away_from_the_wall():
    from dpfix.explore.graph_instances import GraphInstance
    from dpfix.explore.graph_theory import northwest_analogue_values

    inst = GraphInstance(4, 3, ["1/12", "1/12", "3/4", "1/12"], ((0, 3), (1, 3), (2, 3)),
                         "atlas:13")
    v = northwest_analogue_values(inst, "distance")
    assert v["alpha"].tolist() == [Fraction(3, 4)] * 3 + [Fraction(1, 4)]
    assert (v["geometric"], v["optimum"]) == (Fraction(53, 132), Fraction(23, 60))
    v2 = northwest_analogue_values(inst, "distance-squared")
    assert (v2["geometric"], v2["optimum"]) == (Fraction(29, 44), Fraction(37, 60))
    at_wall = GraphInstance(4, 2, ["1/6", "1/6", "1/2", "1/6"], ((0, 3), (1, 3), (2, 3)),
                            "atlas:13")
    assert northwest_analogue_values(at_wall, "distance")["alpha"][3] == 0


def test_graphs_page_states_the_wall_and_the_generic_counterexample():
    page = _flat("docs/graphs.md")
    assert "(`star:4`: 208 vertices at `lam = 2`, 280 at `lam = 3`)" not in page
    assert ("424 at `lam` = 101/100, 3/2, 19/10 and 199/100, 208 at `lam = 2` and 280 at "
            "201/100, 21/10, 3 and 10, and `lam = 2` is a wall of U there") in page
    assert "its 208 is the count on the wall, against 424 just below and 280 just above" in page
    assert "the same 12 tight ratio rows" in page and "the same point has 15" in page
    assert "costs 53/132 against the optimum 23/60 of `F_G` for `d_G`" in page
    assert "29/44 against 37/60 for `d_G^2`" in page
    assert "`alpha = (3/4, 3/4, 3/4, 1/4)`" in page


# -- chambers()'s example shows real output ------------------------------------------------
def test_the_chambers_example_shows_output_not_a_tautology():
    examples = doctest.DocTestParser().get_examples(parametric.chambers.__doc__)
    wants = [e.want.strip() for e in examples if e.want.strip()]
    assert wants and "True" not in wants and "False" not in wants
    printed = next(w for w in wants if w.startswith("F(n=3"))
    ch = parametric.chambers("F", 3, ["1/8", "1/2", "3/8"])
    assert [" ".join(line.split()) for line in printed.splitlines()] == \
        [" ".join(line.split()) for line in ch.table().splitlines()]


# -- the README's error figures --------------------------------------------------------------
def test_readme_states_what_its_error_figures_measure():
    page = _flat("README.md")
    assert "the error against the true counts is about 2-4" not in page
    assert "joint W1 0.78 vs 0.87, count error 2.57 vs 3.24" not in page
    assert ("count error summed over the pair (the mean over rows of `|MURDER' - MURDER| + "
            "|RAPE' - RAPE|`) 2.57 vs 3.24") in page
    assert "RAPE alone at eps 1" in page and "medians over the seeds S = 1..20" in page
    assert "the true counts is 1.25 (quartiles 1.20 and 1.27)" in page
    assert "the error against the true counts has median 3.1" in page


@needs_data
@pytest.mark.full
def test_the_readme_rape_auto_figures_are_its_commands(tmp_path, capsys):
    """The README's RAPE figures under ``--upper auto``, re-run with its two commands at the
    seeds 1 .. 20: the bound's median and range, the median error against the true counts
    and its quartiles, and no warning in any public report."""
    from dpfix.io.data import data_path

    data = data_path("crime_data.csv")
    runs = {"alone": ["--column", "RAPE", "--epsilon", "1", "--upper", "auto"],
            "pair": ["--column", "MURDER", "--column", "RAPE", "--epsilon", "1",
                     "--column-epsilon", "MURDER=0.6", "--upper", "50", "--upper",
                     "RAPE=auto"]}
    seen: dict = {name: {"upper": [], "error": []} for name in runs}
    for name, argv in runs.items():
        for s in range(1, 21):
            out, secret, public = (tmp_path / f"{name}{s}{x}" for x in (".csv", "c.json",
                                                                       "p.json"))
            rc, _, err = cli(capsys, "privatize", data, *argv, "--key", "county_name",
                             "--seed", s, "--confidential-report", secret, "--report",
                             public, "--out", out)
            assert rc == 0, err
            column = next(c for c in json.loads(secret.read_text())["columns"]
                          if c["column"] == "RAPE")
            seen[name]["error"].append(column["realized_count_error_vs_true"]["abs"])
            report = json.loads(public.read_text())
            rape = next(c for c in report["columns"] if c["column"] == "RAPE")
            seen[name]["upper"].append(rape["upper"])
            assert report["warnings"] == []
    alone, pair = seen["alone"], seen["pair"]
    assert (statistics.median(alone["upper"]), min(alone["upper"]),
            max(alone["upper"])) == (2007.5, 1775, 3171)
    q1, q2, q3 = np.quantile(alone["error"], [0.25, 0.5, 0.75])
    assert (round(q2, 2), round(q1, 2), round(q3, 2)) == (1.25, 1.2, 1.27)
    assert (statistics.median(pair["upper"]), min(pair["upper"]),
            max(pair["upper"])) == (2072, 1788, 3015)
    assert round(statistics.median(pair["error"]), 1) == 3.1


def test_the_joint_count_error_is_the_sum_over_the_pair():
    from dpfix.experiments.joint import measures

    a, b = np.array([0, 1, 2, 3]), np.array([5, 5, 0, 1])
    a2, b2 = np.array([1, 1, 0, 3]), np.array([5, 2, 0, 0])
    m = measures(a, b, a2, b2, (4, 6))
    assert m["count_error"] == pytest.approx((1 + 0 + 2 + 0 + 0 + 3 + 0 + 1) / 4)


@needs_data
@pytest.mark.filterwarnings("ignore:upper = 100")  # the per-column release warns of its bound
def test_the_readme_joint_figures_are_the_studys_ten_replications():
    from dpfix.experiments.cells import cell_seed
    from dpfix.experiments.joint import JOINT_DATASETS, county_pair, run_cell

    a, b = county_pair()
    upper = JOINT_DATASETS["crime:MURDER,RAPE"][1]
    fields = ("experiment", "dataset", "eps", "replication", "seed")
    means = {}
    for method in ("one-stage", "per-column"):
        errors = []
        for r in range(10):
            key = {"experiment": "joint", "dataset": "crime:MURDER,RAPE", "method": method,
                   "eps": 1.0, "replication": r, "seed": 0}
            errors.append(run_cell(a, b, 1.0, upper, "row", method,
                                   cell_seed(key, fields))["count_error"])
        means[method] = f"{statistics.mean(errors):.2f}"
    assert (means["one-stage"], means["per-column"]) == ("2.57", "3.24")


def _rape(report: Path) -> dict:
    return next(c for c in json.loads(report.read_text())["columns"] if c["column"] == "RAPE")


#: The README's three commands on RAPE (the fixed bound; the bound chosen privately, alone
#: and beside MURDER), each run at the seeds S = 1..20.
README_RUNS = {"80": ["--column", "RAPE", "--epsilon", "1", "--upper", "80"],
               "auto": ["--column", "RAPE", "--epsilon", "1", "--upper", "auto"],
               "two": ["--column", "MURDER", "--column", "RAPE", "--epsilon", "1",
                       "--column-epsilon", "MURDER=0.6", "--upper", "50", "--upper",
                       "RAPE=auto"]}


@needs_data
@pytest.mark.parametrize("names", [("80",), pytest.param(("auto", "two"), marks=pytest.mark.full)],
                         ids=["fixed", "auto"])
def test_the_readme_rape_figures_are_the_medians_of_its_command(tmp_path, capsys, names):
    """The fixed bound's figures in every run; the private bound's 40 releases at n near
    2,000 (a minute or more) with ``--full``."""
    from dpfix.cli import main
    from dpfix.io.data import data_path

    data = str(data_path("crime_data.csv"))
    runs = {name: README_RUNS[name] for name in names}
    found: dict[str, dict[str, list]] = {k: {"true": [], "top": [], "bound": [], "cut": []}
                                         for k in runs}
    for name, args in runs.items():
        for s in range(1, 21):
            out = tmp_path / f"{name}{s}"
            assert main(["privatize", data, *args, "--key", "county_name", "--seed", str(s),
                         "--out", f"{out}.csv", "--report", f"{out}.json",
                         "--confidential-report", f"{out}.c.json", "--quiet"]) == 0
            capsys.readouterr()
            conf, public = _rape(Path(f"{out}.c.json")), _rape(Path(f"{out}.json"))
            found[name]["true"].append(conf["realized_count_error_vs_true"]["abs"])
            found[name]["top"].append(conf["realized_count_error"]["abs"])
            found[name]["cut"].append(conf["topcoded"])
            found[name]["bound"].append((public.get("upper_bound") or {}).get("upper"))
    med = {k: {m: statistics.median(v) for m, v in d.items() if m != "bound"}
           for k, d in found.items()}
    if "80" in runs:
        assert set(found["80"]["cut"]) == {230}
        assert (f"{med['80']['true']:.1f}", f"{med['80']['top']:.1f}") == ("11.1", "0.9")
        return
    auto = found["auto"]["bound"]
    assert (min(auto), max(auto), statistics.median(auto)) == (1579, 2139, 1935)
    import pandas as pd

    assert int(pd.read_csv(data)["RAPE"].max()) == 1976
    q = np.percentile(found["auto"]["true"], [25, 75])
    assert (f"{med['auto']['true']:.1f}", f"{q[0]:.1f}", f"{q[1]:.1f}") == ("1.7", "1.2", "2.0")
    two = found["two"]["bound"]
    assert (min(two), max(two), statistics.median(two)) == (1335, 2174, 1873)
    assert f"{med['two']['true']:.1f}" == "3.1"
