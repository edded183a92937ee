"""The joint release of a pair of count columns: stage 1 (joint Laplace, 2-D EM),
privatize_pair, privatize_table(joint=...) and dpfix privatize --joint (docs/joint.md)."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.constructors.joint import joint_sampler
from dpfix.release.joint import MAX_STATES, joint_histogram, privatize_pair
from dpfix.release.privatizers.joint import deconvolve_joint, geometric_float, joint_laplace
from dpfix.release.report import report_schema
from dpfix.release.table import privatize_table
from dpfix.sampling.joint import geometric_matrix
from dpfix.sampling.quantile import apportion
from helpers import cli

jsonschema = pytest.importorskip("jsonschema")


def _table(N=400, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.poisson(1.0, N)
    b = np.where(a == 0, 0, rng.poisson(3.0, N) + a)
    return pd.DataFrame({"k": np.arange(N), "A": a, "B": b, "C": rng.poisson(2.0, N)})


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=20),
       st.integers(0, 19), st.sampled_from(["row", "cell"]), st.data())
def test_one_row_moves_two_cells_of_the_joint_histogram(rows, r, unit, data):
    """joint_laplace's sensitivity 2 (docs/joint.md section 5): whatever the unit, a change
    of one row moves one unit of the joint histogram from one cell to another."""
    r = r % len(rows)
    a = np.array([x for x, _ in rows])
    b = np.array([y for _, y in rows])
    da = data.draw(st.integers(-1, 1))
    db = data.draw(st.integers(-1, 1)) if unit == "row" else 0
    a2, b2 = a.copy(), b.copy()
    a2[r] = min(max(a2[r] + da, 0), 4)
    b2[r] = min(max(b2[r] + db, 0), 4)
    diff = joint_histogram(a, b, (5, 5)) - joint_histogram(a2, b2, (5, 5))
    assert np.abs(diff).sum() in (0, 2)


def test_joint_laplace_is_a_distribution_with_sensitivity_two():
    out = joint_laplace([[30, 1, 0], [0, 5, 4]], 1.0, secure=False, seed=3)
    assert out.noise["sensitivity"] == 2 and out.noise["scale"] == 2.0
    assert out.z.shape == (6,) and abs(out.z.sum() - 1) < 1e-12 and (out.z >= 0).all()
    with pytest.raises(ValueError, match="2-D"):
        joint_laplace([1, 2, 3], 1.0, secure=False, seed=0)


def test_deconvolution_recovers_z_from_its_noisy_law():
    """Given the exact law of the noisy pairs (w = z G), EM's fixed point is z."""
    Z = np.array([[0.4, 0.0, 0.1], [0.0, 0.3, 0.2]])
    lams = (3.0, 2.0)
    Ga, Gb = geometric_float(2, 3), geometric_float(3, 2)
    H = Ga.T @ Z @ Gb * 10**6
    assert np.abs(deconvolve_joint(H, lams, max_iter=20000, tol=1e-14) - Z).max() < 2e-3
    G_exact = geometric_matrix(3, Fraction(2))
    assert np.allclose(np.asarray(G_exact, dtype=float), Gb)


@pytest.mark.parametrize("framework", ["one-stage", "two-stage"])
def test_privatize_pair_shapes_and_seeds(framework):
    df = _table()
    r1 = privatize_pair(df.A, df.B, (0.5, 0.5), upper=(4, 12), framework=framework, seed=7)
    r2 = privatize_pair(df.A, df.B, (0.5, 0.5), upper=(4, 12), framework=framework, seed=7)
    assert (r1.a == r2.a).all() and (r1.b == r2.b).all()
    assert r1.a.max() <= 4 and r1.b.max() <= 12 and r1.a.min() >= 0
    assert r1.z.shape == (5, 13) and abs(r1.z.sum() - 1) < 1e-9


def test_one_stage_releases_the_apportioned_estimate_exactly():
    """The released joint histogram is the apportioned joint estimate: the fixed point."""
    df = _table(N=600, seed=2)
    r = privatize_pair(df.A, df.B, (1.0, 1.0), upper=(5, 12), seed=1, zero_share=0.0)
    assert r.report["eps_1"] == 0 and r.report["eps_2"] == [1.0, 1.0]
    got = joint_histogram(r.a, r.b, (6, 13)).ravel()
    assert (got == apportion(r.z.ravel(), 600)).all()


def test_two_stage_budget_and_refusals():
    df = _table()
    r = privatize_pair(df.A, df.B, (0.6, 0.4), upper=(4, 12), framework="two-stage",
                       unit="row", split=0.5, seed=0)
    assert r.report["eps_1"] == pytest.approx(0.5) and r.report["eps_2"] == [0.3, 0.2]
    c = privatize_pair(df.A, df.B, (1.0, 1.0), upper=(4, 12), framework="two-stage",
                       unit="cell", split=0.25, seed=0)
    assert c.report["eps_1"] == 0.25 and c.report["eps_2"] == [0.75, 0.75]
    with pytest.raises(ValueError, match="framework"):
        privatize_pair(df.A, df.B, (1, 1), upper=(4, 12), framework="hybrid")
    with pytest.raises(ValueError, match="split"):
        privatize_pair(df.A, df.B, (1, 1), upper=(4, 12), framework="two-stage", split=1)


def test_float_sampler_plan_is_basic():
    """O(n_a n_b) memory: a basic plan has fewer than supplies + demands pieces."""
    Z = np.random.default_rng(0).dirichlet(np.ones(30)).reshape(5, 6)
    s = joint_sampler(Z, eps=1.0, unit="row")
    assert s.remap.cols.size < 2 * 30


def test_privatize_table_joint_report_is_valid():
    df = _table()
    r = privatize_table(df, ["A", "B", "C"], 1.5, upper={"A": 4, "B": 12, "C": 6}, keys=["k"],
                        seed=0, joint=[("A", "B")])
    jsonschema.validate(r.report, report_schema())
    (entry,) = r.report["joint"]
    assert entry["columns"] == ["A", "B"] and entry["unit"] == "row"
    assert entry["mechanism_eps"] == [0.5, 0.5]
    assert r.report["composition"]["eps_spent"] == 1.5
    assert [c["framework"].get("joint_with") for c in r.report["columns"]] == ["B", "A", None]
    released = r.table.sort_values("k")
    hist = joint_histogram(released.A.to_numpy(), released.B.to_numpy(), (5, 13)).ravel()
    assert np.allclose(hist / len(df), entry["output_distribution"])
    # without the keyword the report has no joint entry (and the schema still holds)
    plain = privatize_table(df, ["A", "B"], 1.0, upper=12, seed=0)
    assert "joint" not in plain.report


def test_privatize_table_joint_confidential():
    df = _table()
    rel, conf = privatize_table(df, ["A", "B"], 1.0, upper={"A": 4, "B": 12}, seed=0,
                                joint=[("A", "B")], confidential=True, unit="cell")
    assert conf.report["columns"][0]["joint_with"] == "B"
    assert set(conf.histograms) == {"A", "B"}
    assert "realized_count_error" not in json.dumps(rel.report)


@pytest.mark.parametrize("joint, message", [
    ([("A", "C")], "not a privatized column"),
    ([("A", "A")], "two distinct"),
    ([("A", "B"), ("B", "A")], "in two pairs"),
])
def test_privatize_table_joint_refusals(joint, message):
    df = _table()
    with pytest.raises(ValueError, match=message):
        privatize_table(df, ["A", "B"], 1.0, upper={"A": 4, "B": 12}, joint=joint)


def test_privatize_table_joint_takes_auto_and_refuses_delta():
    """A bound chosen privately in a pair: its share of the column's budget first, the pair
    at the rest, the bound among the candidates that keep the states within the limit."""
    df = _table()
    r = privatize_table(df, ["A", "B"], 1.0, upper={"A": "auto", "B": 12}, joint=[("A", "B")],
                        seed=2)
    a, b = r.report["columns"]
    assert a["upper_bound"]["rule"] == "loss" and b["upper_bound"]["eps_upper"] == 0
    assert a["upper_bound"]["candidates"]["max_upper"] == MAX_STATES["one-stage"] // 13 - 1
    assert r.report["joint"][0]["shape"] == [a["upper"] + 1, 13]
    assert r.report["joint"][0]["mechanism_eps"][0] + a["budget"]["eps_upper"] <= 0.5
    with pytest.raises(ValueError, match="pure eps-DP"):
        privatize_table(df, ["A", "B"], 1.0, upper=12, joint=[("A", "B")], delta=1e-6,
                        options=None)


def test_cli_joint(tmp_path, capsys):
    df = _table()
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    out, rep = tmp_path / "o.csv", tmp_path / "r.json"
    rc, _, err = cli(capsys, "privatize", src, "--column", "A", "--column", "B", "--epsilon",
                     "1", "--upper", "A=4", "--upper", "B=12", "--joint", "A,B", "--key", "k",
                     "--out", out, "--report", rep, "--seed", "3")
    assert rc == 0, err
    report = json.loads(rep.read_text())
    jsonschema.validate(report, report_schema())
    assert report["joint"][0]["columns"] == ["A", "B"]
    rc, _, err = cli(capsys, "privatize", src, "--column", "A", "--column", "B", "--epsilon",
                     "1", "--upper", "12", "--joint", "A", "--out", tmp_path / "x.csv")
    assert rc == 2 and err.strip().count("\n") == 0 and "--joint" in err
    assert not (tmp_path / "x.csv").exists()


def test_zero_share_fixes_the_zero_zero_cell():
    """With zero_share the (0, 0) share is a Laplace count (sensitivity 1) held fixed by
    the EM; the columns' noise runs at the rest of the budget."""
    df = _table(N=600, seed=4)
    r = privatize_pair(df.A, df.B, (1.0, 1.0), upper=(5, 12), zero_share=0.5, seed=2)
    assert r.report["eps_1"] == 1.0 and r.report["eps_2"] == [0.5, 0.5]
    true = np.mean((df.A == 0) & (df.B == 0))
    assert abs(r.z[0, 0] - true) < 0.05  # Laplace(1/1) on 600 rows: within 30 rows
    with pytest.raises(ValueError, match="zero_share"):
        privatize_pair(df.A, df.B, (1.0, 1.0), upper=(5, 12), zero_share=1.0)


def test_constrained_deconvolution_keeps_the_given_share():
    H = np.array([[30.0, 5.0], [5.0, 60.0]])
    Z = deconvolve_joint(H, (2.0, 2.0), max_iter=50, zero=0.25)
    assert Z[0, 0] == 0.25 and abs(Z.sum() - 1) < 1e-12


def test_secure_path_draws_from_the_os():
    """Without a seed the noise is the secure source's and the zero count OpenDP's."""
    pytest.importorskip("opendp")
    df = _table(N=200, seed=5)
    r = privatize_pair(df.A, df.B, (1.0, 1.0), upper=(4, 12))
    assert r.report["samplers"]["secure"] is True and r.report["seed"] is None
    assert r.a.size == 200


def test_a_dataset_with_joint_is_refused(tmp_path):
    """The Dask engine releases columns one by one: a pair is refused before any read."""
    from dpfix.release.table import Dataset

    src = tmp_path / "part-0.csv"
    _table(N=50).to_csv(src, index=False)
    with pytest.raises(ValueError, match="not a Dataset"):
        privatize_table(Dataset(str(tmp_path / "*.csv")), ["A", "B"], 1.0, upper=12,
                        out=tmp_path / "out", joint=[("A", "B")])
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("unit, spent, noise", [("cell", 1.0, [0.98, 0.98]),
                                                ("row:2", 1.0, [0.24, 0.24])])
def test_privatize_table_joint_units(unit, spent, noise):
    """Under cell each column runs at the whole eps (parallel composition); with a bound
    c = 2 each at its share over c; the zero count takes its share of the rule (2% at the
    cell's tuple budget 1, 4% at the row:2 tuple's 0.5) in both."""
    df = _table()
    r = privatize_table(df, ["A", "B"], 1.0, upper={"A": 4, "B": 12}, seed=0, unit=unit,
                        joint=[("A", "B")])
    jsonschema.validate(r.report, report_schema())
    assert r.report["composition"]["eps_spent"] == spent
    assert [c["budget"]["eps_2"] for c in r.report["columns"]] == pytest.approx(noise)
