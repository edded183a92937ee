"""Triples of count columns with their joint distribution as the fixed point (docs/joint.md
section 9), and the joint framework chosen by privatize_table's options (section 7).

Known answers from independent methods: the 3-D grid and king's graph from networkx and
from the definition, the polytope F of dpfix.theory.polytopes on that graph, the count
error against the N x N Kronecker product, the exact law of the noise for the EM."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from dpfix.constructors.joint import (
    ground_cost,
    joint_edges,
    joint_lams,
    joint_sampler,
    posterior_cost,
    product_transport,
)
from dpfix.release.joint import MAX_STATES, joint_histogram, privatize_joint, privatize_pair
from dpfix.release.options import NoSplit, OneStage, TwoStage
from dpfix.release.privatizers.joint import deconvolve_joint, geometric_float
from dpfix.release.report import report_schema
from dpfix.release.table import privatize_table
from dpfix.sampling.joint import JointSampler, geometric_matrix
from dpfix.sampling.quantile import apportion
from dpfix.sampling.source import lam_at_most_exp, random_source
from helpers import cli

jsonschema = pytest.importorskip("jsonschema")
F = Fraction


def _states(shape):
    return list(itertools.product(*(range(n) for n in shape)))


def _neighbours(shape, unit):
    """The unit's edges from the definition: L1 distance 1 (cell) or L-infinity 1 (row)."""
    idx = {s: k for k, s in enumerate(_states(shape))}
    out = set()
    for s, t in itertools.combinations(_states(shape), 2):
        d = [abs(x - y) for x, y in zip(s, t, strict=True)]
        if (sum(d) == 1) if unit == "cell" else (max(d) == 1):
            out.add((idx[s], idx[t]))
    return out


def _target(weights, shape):
    total = sum(weights)
    return np.array([F(w, total) for w in weights], dtype=object).reshape(shape)


def _table(N=300, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.poisson(0.8, N)
    b = np.where(a == 0, rng.poisson(0.3, N), rng.poisson(2.0, N) + a)
    c = np.where(b == 0, 0, rng.poisson(1.5, N))
    return pd.DataFrame({"k": np.arange(N), "A": a, "B": b, "C": c, "D": rng.poisson(2, N)})


@pytest.mark.parametrize("shape, unit", [((2, 2, 2), "cell"), ((2, 3, 2), "row"),
                                         ((3, 2, 2), "row"), ((2, 2, 3), "cell")])
def test_edges_of_three_columns_are_the_units_graph(shape, unit):
    got = {tuple(e) for e in joint_edges(shape, unit).tolist()}
    assert got == _neighbours(shape, unit)
    if unit == "cell":  # networkx's grid graph (dim listed last axis first), C order
        G = nx.grid_graph(dim=list(reversed(shape)))
        flat = {tuple(sorted(int(np.ravel_multi_index(v, shape)) for v in e)) for e in G.edges}
        assert got == flat


def test_levels_of_three_columns():
    assert joint_lams("row", lam=8, k=3) == (F(2), F(2), F(2))
    assert joint_lams("cell", lam=F(3, 2), k=3) == (F(3, 2),) * 3
    with pytest.raises(ValueError, match="cube root"):
        joint_lams("row", lam=4, k=3)
    la = joint_lams("row", eps=1.5, k=3)
    assert len(la) == 3 and lam_at_most_exp(math.prod(la), 1.5)


def test_posterior_cost_of_three_columns_is_the_direct_product():
    """K = G^T diag(z) D on the N x N Kronecker product, exactly; and on rows and cols."""
    shape = (2, 3, 2)
    z = _target([1, 0, 2, 3, 1, 4, 0, 0, 2, 1, 1, 5], shape)
    mats = [geometric_matrix(2, F(2)), geometric_matrix(3, F(3)), geometric_matrix(2, F(3, 2))]
    G = np.kron(np.kron(mats[0], mats[1]), mats[2])
    want = G.T.dot(np.diag(z.ravel())).dot(ground_cost(shape))
    assert (posterior_cost(z, *mats) == want).all()
    rows, cols = np.array([1, 4, 11]), np.array([0, 3, 5, 9])
    got = posterior_cost(np.asarray(z, dtype=float), *[np.asarray(M, dtype=float) for M in mats],
                         cols=cols, rows=rows)
    assert np.allclose(got, np.asarray(want[np.ix_(rows, cols)], dtype=float))


@pytest.mark.parametrize("unit, lam", [("cell", F(2)),
                                       pytest.param("row", F(8), marks=pytest.mark.full)])
def test_product_transport_of_three_columns_lies_in_F(unit, lam):
    """The exact mechanism fixes z, is lam-DP on the 3-D graph (its own exact check) and
    lies in dpfix.theory.polytopes.F on the graph listed from the definition."""
    from dpfix.theory.polytopes import F as F_polytope

    shape = (2, 2, 2)
    z = _target([3, 1, 0, 2, 1, 0, 1, 4], shape)
    M = product_transport(z, lam=lam, unit=unit)
    assert (z.ravel().dot(M.matrix) == z.ravel()).all()
    graph = nx.Graph(list(_neighbours(shape, unit)))
    P = F_polytope(8, lam, z.ravel(), graph=graph)
    assert P.contains(M.matrix)
    assert not F_polytope(8, (lam + 1) / 2, z.ravel(), graph=graph).contains(M.matrix)
    # unit row: the diagonal of three columns is attained (lam_a lam_b lam_c = lam)
    assert M.privacy_ratio() == lam


def test_product_transport_on_the_king_graph_of_three_columns():
    """Unit row over three columns: each at lam^(1/3), the diagonal of all three attained."""
    z = _target([3, 1, 0, 2, 1, 0, 1, 4], (2, 2, 2))
    M = product_transport(z, lam=8, unit="row")
    assert M.params["lams"] == (F(2), F(2), F(2)) and M.privacy_ratio() == 8
    assert (z.ravel().dot(M.matrix) == z.ravel()).all()


def test_float_sampler_of_three_columns_draws_a_private_law():
    """What the float sampler draws is exactly lam-DP on the 3-D king's graph, and the
    frequencies of one row follow its law."""
    Z = np.random.default_rng(2).dirichlet(np.ones(12)).reshape(2, 3, 2)
    s = joint_sampler(Z, eps=1.5, unit="row")
    T = s.matrix(drawn=True)
    level = math.prod(s.lams)
    assert lam_at_most_exp(level, 1.5)
    for u, v in _neighbours((2, 3, 2), "row"):
        for x, y in ((u, v), (v, u)):
            assert all(T[x, j] <= level * T[y, j] for j in range(12))
    n = 20000
    a, b, c = s.sample(np.ones(n, dtype=np.int64), np.full(n, 2), np.zeros(n, dtype=np.int64),
                       seed=random_source(4))
    freq = np.bincount(np.ravel_multi_index((a, b, c), (2, 3, 2)), minlength=12) / n
    assert np.abs(freq - np.asarray(T[1 * 6 + 2 * 2 + 0], dtype=float)).max() < 0.02
    with pytest.raises(ValueError, match="3 vectors"):
        s.sample(np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.int64))


def test_noise_of_three_columns_is_the_product():
    """JointSampler's exact matrix is the Kronecker product of the three columns' noise."""
    s = JointSampler((2, 2, 3), (F(2), F(3), F(2)), joint_sampler(
        _target([1] * 12, (2, 2, 3)), lam=(F(2), F(3), F(2))).remap)
    G = np.kron(np.kron(geometric_matrix(2, F(2)), geometric_matrix(2, F(3))),
                geometric_matrix(3, F(2)))
    assert (s.matrix() == G.dot(s.remap.matrix())).all()


def test_deconvolution_of_three_columns_recovers_z():
    Z = np.zeros((2, 3, 2))
    Z[0, 0, 0], Z[1, 2, 1], Z[0, 1, 1], Z[1, 0, 0] = 0.4, 0.3, 0.2, 0.1
    lams = (3.0, 2.0, 4.0)
    mats = [geometric_float(n, lam) for n, lam in zip(Z.shape, lams, strict=True)]
    W = np.einsum("abc,ax,by,cz->xyz", Z, *mats)
    assert np.abs(deconvolve_joint(W * 10**6, lams, max_iter=20000, tol=1e-14) - Z).max() < 3e-3
    held = deconvolve_joint(W * 10**6, lams, max_iter=30, zero=0.25)
    assert held[0, 0, 0] == 0.25 and abs(held.sum() - 1) < 1e-12


@pytest.mark.parametrize("framework", ["one-stage", "two-stage"])
def test_privatize_joint_triple(framework):
    df = _table()
    upper = (3, 6, 4)
    r = privatize_joint([df.A, df.B, df.C], (0.5, 0.5, 0.5), upper=upper, framework=framework,
                        seed=3)
    again = privatize_joint([df.A, df.B, df.C], (0.5, 0.5, 0.5), upper=upper,
                            framework=framework, seed=3)
    assert all((x == y).all() for x, y in zip(r.counts, again.counts, strict=True))
    assert r.z.shape == (4, 7, 5) and abs(r.z.sum() - 1) < 1e-9
    assert all(v.min() >= 0 and v.max() <= u for v, u in zip(r.counts, upper, strict=True))
    assert r.report["fixed_point"] == "the joint distribution of the triple"
    if framework == "one-stage":  # the released joint histogram is the apportioned estimate
        got = joint_histogram(*r.counts, r.z.shape).ravel()
        assert (got == apportion(r.z.ravel(), len(df))).all()
        assert r.report["eps_2"] == pytest.approx([0.49] * 3)
        assert r.report["eps_1"] == pytest.approx(0.02 * 1.5)
    else:
        assert r.report["eps_1"] == pytest.approx(0.75)


def test_state_space_limit_is_refused_in_one_line():
    df = _table(N=20)
    big = round(MAX_STATES["two-stage"] ** (1 / 3)) + 1
    with pytest.raises(ValueError, match="two-stage limit") as err:
        privatize_joint([df.A, df.B, df.C], (1, 1, 1), upper=(big, big, big),
                        framework="two-stage")
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="one-stage limit"):
        privatize_table(df, ["A", "B", "C"], 1.0, upper={"A": 100, "B": 100, "C": 100},
                        joint=[("A", "B", "C")])
    with pytest.raises(ValueError, match="two or three"):
        privatize_joint([df.A], (1,), upper=(3,))


def test_privatize_table_triple_report():
    df = _table()
    r = privatize_table(df, ["A", "B", "C", "D"], 2.0, upper={"A": 3, "B": 6, "C": 4, "D": 9},
                        keys=["k"], seed=1, joint=[("A", "B", "C")])
    jsonschema.validate(r.report, report_schema())
    (entry,) = r.report["joint"]
    assert entry["columns"] == ["A", "B", "C"] and entry["shape"] == [4, 7, 5]
    assert entry["mechanism_eps"] == [0.5, 0.5, 0.5]
    assert r.report["composition"]["eps_spent"] == 2.0
    assert [c["framework"].get("joint_with") for c in r.report["columns"]] == \
        ["B, C", "A, C", "A, B", None]
    released = r.table.sort_values("k")
    hist = joint_histogram(released.A.to_numpy(), released.B.to_numpy(), released.C.to_numpy(),
                           (4, 7, 5)).ravel()
    assert np.allclose(hist / len(df), entry["output_distribution"])
    assert np.allclose(r.report["columns"][2]["target_z"],
                       np.asarray(entry["target_z"]).reshape(4, 7, 5).sum(axis=(0, 1)))


def test_cli_joint_triple(tmp_path, capsys):
    df = _table()
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    out, rep = tmp_path / "o.csv", tmp_path / "r.json"
    rc, _, err = cli(capsys, "privatize", src, "--column", "A", "--column", "B", "--column",
                     "C", "--epsilon", "1", "--upper", "A=3", "--upper", "B=6", "--upper",
                     "C=4", "--joint", "A,B,C", "--key", "k", "--out", out, "--report", rep,
                     "--seed", "3")
    assert rc == 0, err
    report = json.loads(rep.read_text())
    jsonschema.validate(report, report_schema())
    assert report["joint"][0]["columns"] == ["A", "B", "C"]
    rc, _, err = cli(capsys, "privatize", src, "--column", "A", "--column", "B", "--column",
                     "C", "--epsilon", "1", "--upper", "100", "--joint", "A,B,C", "--out",
                     tmp_path / "x.csv")
    assert rc == 2 and err.strip().count("\n") == 0 and "limit" in err
    assert not (tmp_path / "x.csv").exists()


def test_options_choose_the_joint_framework():
    """TwoStage(split=s): the two-stage framework at s; the default and NoSplit("one-stage"):
    the one-stage framework; another method is refused."""
    df = _table()
    kw = {"upper": {"A": 3, "B": 6}, "seed": 0, "joint": [("A", "B")]}
    two = privatize_table(df, ["A", "B"], 1.0, options=TwoStage(split=0.25), **kw)
    jsonschema.validate(two.report, report_schema())
    (entry,) = two.report["joint"]
    assert entry["framework"] == "two-stage" and entry["eps_1"] == pytest.approx(0.25)
    assert entry["stage1"]["privatizer"] == "joint-laplace"
    assert two.report["columns"][0]["framework"]["name"] == "two-stage"
    assert two.report["composition"]["eps_spent"] == 1.0
    for options in (None, TwoStage(), NoSplit("one-stage")):
        one = privatize_table(df, ["A", "B"], 1.0, options=options, **kw)
        assert one.report["joint"][0]["framework"] == "one-stage"
    with pytest.raises(ValueError, match="drop constructor"):
        privatize_table(df, ["A", "B"], 1.0, options=OneStage("staircase"), **kw)
    with pytest.raises(ValueError, match="drop constructor"):
        privatize_table(df, ["A", "B"], 1.0, options=NoSplit("hybrid"), **kw)
    # the pair's call is privatize_joint of two columns
    p = privatize_pair(df.A, df.B, (0.5, 0.5), upper=(3, 6), seed=2)
    q = privatize_joint([df.A, df.B], (0.5, 0.5), upper=(3, 6), seed=2)
    assert (p.a == q.a).all() and (p.b == q.b).all()


def test_zero_share_rule_keeps_the_zero_count_budget_below_one():
    """The default zero share: 2% of the tuple's budget from 1 up; below, the count keeps
    the absolute budget 0.02 (its error 1 / (0.02 N)) up to a tenth of the budget."""
    df = _table(N=200)
    for eps, share in (((1.0, 1.0), 0.02), ((0.25, 0.25), 0.04), ((0.05, 0.05), 0.1)):
        r = privatize_pair(df.A, df.B, eps, upper=(3, 6), seed=0)
        assert r.report["split_fraction"] == pytest.approx(share)
        assert r.report["eps_1"] == pytest.approx(share * sum(eps))
        assert r.report["eps_2"] == pytest.approx([(1 - share) * e for e in eps])


def test_cli_split_chooses_the_two_stage_joint_release(tmp_path, capsys):
    """dpfix privatize --joint A,B --split s: the two-stage framework at s, named in the
    report; without --split the one-stage framework."""
    df = _table()
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    args = ["privatize", src, "--column", "A", "--column", "B", "--epsilon", "1", "--upper",
            "A=3", "--upper", "B=6", "--joint", "A,B", "--seed", "1"]
    for extra, framework in ((["--split", "0.3"], "two-stage"), ([], "one-stage")):
        rep = tmp_path / f"{framework}.json"
        rc, _, err = cli(capsys, *args, *extra, "--out", tmp_path / f"{framework}.csv",
                         "--report", rep)
        assert rc == 0, err
        entry = json.loads(rep.read_text())["joint"][0]
        assert entry["framework"] == framework
        if framework == "two-stage":
            assert entry["eps_1"] == pytest.approx(0.3)
