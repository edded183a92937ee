"""The joint release's budget and its matching: the stages' shares split exactly, never
above what the tuple is charged (docs/joint.md section 7), and the rows of one noisy state
given that state's pieces in a uniformly random order."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.release.joint import _match, privatize_joint, stage_budgets
from dpfix.release.table import privatize_table
from dpfix.sampling.source import random_source

pytest.importorskip("ot")

budget = st.floats(min_value=1e-3, max_value=20, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(st.lists(budget, min_size=2, max_size=3), st.floats(0, 0.99),
       st.sampled_from(["row", "cell"]))
def test_the_stages_never_spend_more_than_the_tuple(eps, share, unit):
    """Exactly: ``e_1 + sum e_c <= sum eps_c`` under row, ``e_1 + e_c <= max eps`` under cell,
    each share rounded down from its exact value by at most a few ulps (fit_shares)."""
    e1, rest = stage_budgets(eps, unit, share)
    q = [Fraction(e) for e in eps]
    total = sum(q) if unit == "row" else max(q)
    if unit == "row":
        assert Fraction(e1) + sum(map(Fraction, rest)) <= total
    else:
        assert all(Fraction(e1) + Fraction(r) <= total for r in rest)
    s = Fraction(share)
    assert abs(Fraction(e1) - s * total) <= 4 * Fraction(np.spacing(float(total)))
    for r, c in zip(rest, q, strict=True):
        assert 0 < r and abs(Fraction(r) - (1 - s) * c) <= 4 * Fraction(np.spacing(float(c)))


@pytest.mark.parametrize("framework, share", [("two-stage", 0.25), ("two-stage", 0.1),
                                              ("one-stage", 0.1), ("one-stage", 0.25)])
def test_a_pair_s_stages_spend_at_most_its_columns_budgets(framework, share):
    """(0.1, 0.1) split at 0.1 or 0.25: in floats ``share (a + b) + (1 - share) a +
    (1 - share) b`` exceeds ``a + b`` by an ulp; the report's stages do not."""
    rng = np.random.default_rng(0)
    a, b = rng.poisson(1.0, 60), rng.poisson(1.0, 60)
    key = "split" if framework == "two-stage" else "zero_share"
    r = privatize_joint([a, b], (0.1, 0.1), upper=(3, 3), framework=framework, seed=1,
                        **{key: share})
    spent = Fraction(r.report["eps_1"]) + sum(map(Fraction, r.report["eps_2"]))
    assert spent <= Fraction(0.1) + Fraction(0.1)


@pytest.mark.parametrize("unit", ["row:3", "cell:3", "row", "cell"])
def test_a_joint_release_with_a_bound_runs_the_shares_over_c(unit):
    """What runs is each column's share over ``c``, split exactly: ``c (e_1 + sum e_c)`` (row)
    or ``c (e_1 + e_c)`` (cell) is at most the charge, ``eps_spent`` exactly."""
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.poisson(1.0, 80), "b": rng.poisson(2.0, 80)})
    columns = {"a": "0.3", "b": None} if unit.startswith("row") else ["a", "b"]
    r = privatize_table(df, columns, 0.7, upper=4, unit=unit, joint=[("a", "b")], seed=2)
    c = int(unit.partition(":")[2] or 1)
    (entry,) = r.report["joint"]
    budgets = [col["budget"] for col in r.report["columns"]]
    e1 = Fraction(entry["eps_1"])
    assert all(Fraction(b["eps_1"]) == e1 for b in budgets)
    charged = Fraction(r.report["composition"]["eps_spent"])
    stages = [Fraction(b["eps_2"]) for b in budgets]
    if unit.startswith("row"):
        assert c * (e1 + sum(stages)) <= charged
        assert charged == sum(Fraction(b["eps_t"]) for b in budgets)
    else:
        assert all(c * (e1 + s) <= charged for s in stages)
    assert entry["mechanism_eps"] == [float(Fraction(b["eps_t"]) / c) for b in budgets]


def test_rows_of_one_noisy_state_take_its_pieces_in_a_uniformly_random_order():
    """Every row in one noisy state, its 12 rows sent to four states (three each): over 20
    seeds the rows get 20 different arrangements of the same pieces, and each row every
    target (in the input's order each seed would give the same arrangement)."""
    N = 12
    y = np.zeros(N, dtype=np.int64)
    Z = np.full((2, 2), 0.25)
    lams = (Fraction(2), Fraction(2))
    arrangements = []
    for seed in range(20):
        out = np.ravel_multi_index(_match(y, Z, lams, random_source(seed)), Z.shape)
        assert np.bincount(out, minlength=4).tolist() == [3, 3, 3, 3]  # the plan's pieces
        arrangements.append(tuple(out.tolist()))
    assert len(set(arrangements)) == 20
    by_row = np.array(arrangements)
    assert all(len(set(by_row[:, i])) > 1 for i in range(N))
    # each row gets each target about a quarter of the time: no row favoured
    counts = np.array([[np.sum(by_row[:, i] == j) for j in range(4)] for i in range(N)])
    assert counts.sum() == 20 * N and counts.max() <= 12
