"""What the bounds study's 20 releases resolve (docs/bounds.md section 3): the paired
bootstrap intervals of the target ratios and the best fixed bound against itself, against
answers computed by hand and on the landing study's own cells."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.experiments.bounds import TARGETS
from dpfix.experiments.resolution import fixed_against_itself, paired_intervals
from helpers import needs_data

ROOT = Path(__file__).resolve().parents[1]


def _cells(values: dict[str, list[tuple[float, float]]], seeds=(0,)) -> tuple[list, list]:
    """Cells of one case: ``values[method]`` the ``(ce, w1)`` of its releases, spread over
    ``seeds`` in order."""
    cells, results = [], []
    for method, pairs in values.items():
        per = len(pairs) // len(seeds)
        for i, (ce, w1) in enumerate(pairs):
            cells.append({"dataset": "d", "eps": 1.0, "method": method,
                          "seed": seeds[i // per], "replication": i % per})
            results.append({"ce": ce, "w1": w1})
    return cells, results


def test_a_rule_at_a_constant_ratio_has_that_ratio_and_a_point_interval():
    """Every release of the rule is the fixed bound's times (1.1, 1.05): every resample's
    ratio is the same, so the interval is that point; the W1 ratio 1.05 and the CE ratios 1.1
    are within all three targets, resolved."""
    rng = np.random.default_rng(3)
    fixed = [(float(a), float(b)) for a, b in rng.uniform(1, 2, size=(12, 2))]
    rule = [(1.1 * a, 1.05 * b) for a, b in fixed]
    t = paired_intervals(*_cells({"fixed": fixed, "auto": rule}), resamples=200).iloc[0]
    for name, r in (("ce_median", 1.1), ("ce_p90", 1.1), ("w1_median", 1.05)):
        assert t[f"{name}_ratio"] == pytest.approx(r)
        assert t[f"{name}_low"] == pytest.approx(r) and t[f"{name}_high"] == pytest.approx(r)
    assert t.met and t.met_resolved and not t.miss_resolved and t.releases == 12


def test_a_miss_beyond_the_error_and_one_within_it():
    """A rule 1.2 times the fixed bound's W1 on every release misses beyond the sampling
    error; a rule equal on half the releases and 1.4 times on the other half has the median
    ratio of a hand count and an interval on both sides of the target."""
    fixed = [(1.0, 1.0 + i / 100) for i in range(20)]
    high = [(ce, 1.2 * w) for ce, w in fixed]
    mixed = [(ce, w * (1.4 if i % 2 else 1.0)) for i, (ce, w) in enumerate(fixed)]
    t = paired_intervals(*_cells({"fixed": fixed, "high": high, "mixed": mixed}),
                         resamples=2000).set_index("method")
    assert t.loc["high", "miss_resolved"] and not t.loc["high", "met"]
    w = np.array([w for _, w in mixed])
    assert t.loc["mixed", "w1_median_ratio"] == pytest.approx(
        np.median(w) / np.median([w for _, w in fixed]))
    assert t.loc["mixed", "w1_median_low"] < TARGETS["w1_median"] < t.loc["mixed",
                                                                          "w1_median_high"]
    assert not t.loc["mixed", "miss_resolved"] and not t.loc["mixed", "met_resolved"]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.floats(0.1, 10), st.floats(0.1, 10)), min_size=3, max_size=15),
       st.floats(0.5, 2.0))
def test_scaling_the_rule_scales_its_ratios_and_intervals(fixed, c):
    """The quantiles are scale-equivariant and the resamples depend on the seed only: the
    rule's values times ``c`` give ``c`` times its ratios and their intervals."""
    rule = [(a * 1.01, b * 0.99) for a, b in fixed]
    scaled = [(a * c, b * c) for a, b in rule]
    one = paired_intervals(*_cells({"fixed": fixed, "auto": rule}), resamples=100).iloc[0]
    two = paired_intervals(*_cells({"fixed": fixed, "auto": scaled}), resamples=100).iloc[0]
    for name in TARGETS:
        for part in ("ratio", "low", "high"):
            assert two[f"{name}_{part}"] == pytest.approx(c * one[f"{name}_{part}"], rel=1e-9)
        assert one[f"{name}_low"] <= one[f"{name}_high"]


def test_bad_arguments_get_one_clear_line():
    cells, results = _cells({"fixed": [(1.0, 1.0)] * 4, "auto": [(1.0, 1.0)] * 4})
    with pytest.raises(ValueError, match="level"):
        paired_intervals(cells, results, level=1.0)
    with pytest.raises(ValueError, match="resamples"):
        paired_intervals(cells, results, resamples=0)
    with pytest.raises(ValueError, match="pair one to one"):
        paired_intervals(cells[:-1], results[:-1])


def test_the_fixed_bound_against_itself_counts_by_hand():
    """Two seeds of three releases: the seed 1's W1 median is 1.2 times the seed 0's, its
    CE equal, so seed 1 against 0 misses (W1) and seed 0 against 1 meets; the log sd of one
    case is 0."""
    fixed = [(1.0, 0.1), (2.0, 0.2), (3.0, 0.3), (1.0, 0.12), (2.0, 0.24), (3.0, 0.36)]
    t = fixed_against_itself(*_cells({"fixed": fixed}, seeds=(0, 1)))
    assert t[["seed", "against", "cases", "missed", "w1_missed"]].values.tolist() == [
        [0, 1, 1, 0, 0], [1, 0, 1, 1, 1]]
    assert t.w1_worst.tolist() == pytest.approx([1 / 1.2, 1.2])
    assert t.w1_log_sd.tolist() == [0.0, 0.0]


@needs_data
def test_the_intervals_pair_the_landing_studys_own_cells():
    """On the landing study's cells (two base seeds, the best fixed bound held), the point
    ratios over every release are :func:`landing_targets`' and its ``met``, and the fixed
    bound against itself covers the two ordered pairs of seeds."""
    from dpfix.experiments.bounds import (
        LANDING_REFERENCE,
        SEED_FIELDS,
        bound_counts,
        landing_cells,
        landing_targets,
        run_release,
    )
    from dpfix.experiments.cells import cell_seed

    cells = landing_cells(seeds=(0, 1), methods=("auto",), replications=3,
                          datasets=["binomial"], eps=[1.0], best={("binomial", 1.0): 18})
    x = bound_counts("binomial")
    results = [run_release(x, 1.0, c["method"], cell_seed(c, SEED_FIELDS), c.get("upper"))
               for c in cells]
    t = paired_intervals(cells, results, resamples=200).set_index("method")
    assert set(t.index) == {"auto", LANDING_REFERENCE} and (t.releases == 6).all()
    met = landing_targets(cells, results).set_index(["method", "seed"])
    for method in t.index:
        assert bool(t.loc[method, "met"]) == bool(met.loc[(method, -1), "met"])
        w1 = {m: np.median([r["w1"] for c, r in zip(cells, results, strict=True)
                            if c["method"] == m]) for m in (method, "fixed")}
        assert t.loc[method, "w1_median_ratio"] == pytest.approx(w1[method] / w1["fixed"])
    itself = fixed_against_itself(cells, results)
    assert itself[["seed", "against", "cases"]].values.tolist() == [[0, 1, 1], [1, 0, 1]]


@needs_data
@pytest.mark.full
@pytest.mark.parametrize("dataset, eps", [("crime:MURDER", 1.0), ("crime:ARSON", 1.0),
                                          ("crime:RAPE", 0.5)])
def test_the_studys_misses_are_within_the_sampling_error(dataset, eps):
    """The three cases the study's ``upper="auto"`` misses on its 20 releases (docs/bounds.md
    section 3), re-run with the study's seeded cells against the best fixed bound it records
    (``docs/figures/bounds.csv``): the ratios are the recorded ones, the ``W1`` target is
    missed, and its paired 95 % interval reaches below 1.1: not a miss beyond the error."""
    import pandas as pd

    from dpfix.experiments.bounds import SEED_FIELDS, bound_counts, landing_cells, run_release
    from dpfix.experiments.cells import cell_seed
    study = pd.read_csv(ROOT / "docs" / "figures" / "bounds.csv").query("method == 'auto'")
    row = study[(study.dataset == dataset) & (study.eps == eps)].iloc[0]
    cells = [c for c in landing_cells(seeds=(0,), methods=("auto",), datasets=[dataset],
                                      eps=[eps], best={(dataset, eps): int(row.best_fixed)})
             if c["method"] in ("auto", "fixed")]
    x = bound_counts(dataset)
    results = [run_release(x, eps, c["method"], cell_seed(c, SEED_FIELDS), c.get("upper"))
               for c in cells]
    t = paired_intervals(cells, results).iloc[0]
    assert t.w1_median_ratio == pytest.approx(row.w1_median_ratio, rel=1e-4)
    assert t.ce_median_ratio == pytest.approx(row.ce_median_ratio, rel=1e-4)
    assert not t.met and not t.miss_resolved
    assert t.w1_median_low <= TARGETS["w1_median"] < t.w1_median_high
