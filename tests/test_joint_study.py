"""The joint study's measures (dpfix.experiments.joint) against independent computations,
and the quick study (``dpfix reproduce joint --quick``) with its targets."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog
from scipy.stats import spearmanr

from dpfix.experiments.joint import (
    joint_cells,
    joint_summary,
    joint_w1,
    measures,
    synthetic_pair,
    targets_report,
)
from helpers import cli, needs_data


def _w1_lp(a, b, a2, b2, shape):
    """W1 with L1 ground cost by the transport LP over all states (scipy's HiGHS)."""
    N = shape[0] * shape[1]
    p = np.bincount(a * shape[1] + b, minlength=N) / a.size
    q = np.bincount(a2 * shape[1] + b2, minlength=N) / a2.size
    ia, ib = np.divmod(np.arange(N), shape[1])
    D = np.abs(ia[:, None] - ia[None, :]) + np.abs(ib[:, None] - ib[None, :])
    A = np.zeros((2 * N, N * N))
    for i in range(N):
        A[i, i * N:(i + 1) * N] = 1
        A[N + i, i::N] = 1
    res = linprog(D.ravel(), A_eq=A, b_eq=np.concatenate([p, q]), bounds=(0, None))
    return res.fun


def test_joint_w1_against_the_transport_lp():
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 3, 40), rng.integers(0, 4, 40)
    a2, b2 = rng.integers(0, 3, 40), rng.integers(0, 4, 40)
    assert joint_w1(a, b, a2, b2, (3, 4)) == pytest.approx(_w1_lp(a, b, a2, b2, (3, 4)))
    assert joint_w1(a, b, a, b, (3, 4)) == 0


def test_measures_known_answers():
    a, b = np.array([0, 0, 1, 2]), np.array([0, 1, 1, 2])
    a2, b2 = np.array([0, 1, 1, 2]), np.array([0, 1, 2, 2])
    m = measures(a, b, a2, b2, (3, 3))
    assert m["zero_zero"] == 0
    assert m["count_error"] == pytest.approx((0 + 1 + 1 + 0) / 4)
    assert m["w1_a"] == pytest.approx(0.25) and m["w1_b"] == pytest.approx(0.25)
    want = abs(spearmanr(a, b)[0] - spearmanr(a2, b2)[0])
    assert m["spearman"] == pytest.approx(want)


def test_synthetic_pair_is_dependent():
    a, b = synthetic_pair(2000, 0.6, 0)
    assert spearmanr(a, b)[0] > 0.4 and np.mean((a == 0) & (b == 0)) > 0.3


def test_summary_and_targets_report():
    cells = joint_cells(quick=True)
    results = [{m: float(i % 3 + 1) for m in ("joint_w1", "zero_zero", "spearman", "w1_a",
                                              "w1_b", "count_error")} for i in range(10)]
    summary = joint_summary(cells, results)
    assert set(summary.method) == {"per-column", "one-stage/zero=0", "one-stage",
                                   "one-stage/zero=0.05", "two-stage"}
    assert (summary.replications == 2).all()
    text = targets_report(summary)
    assert text.startswith("# Joint release targets") and text.count("| spearman |") == 4


@needs_data
@pytest.mark.full
def test_quick_study_meets_the_targets(tmp_path, capsys):
    rc, _, err = cli(capsys, "reproduce", "joint", "--quick", "--replications", "4", "--out",
                     tmp_path, "--jobs", "1", "--quiet")
    assert rc == 0, err
    text = (tmp_path / "joint_targets.md").read_text()
    one = [line for line in text.splitlines() if "| one-stage |" in line]
    assert len(one) == 4 and all("| yes |" in line for line in one), text
