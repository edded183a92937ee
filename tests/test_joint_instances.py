"""Joint instances (dpfix.explore.joint_instances) and the joint gap study on the engine:
the order against an independent enumeration, pickling, the unit's graph and the engine's
polytopes on it against cdd's exact LP, the engine's budget, jobs and cache, triples, and
the refusals (one line each)."""

from __future__ import annotations

import itertools
import json
import math
import pickle
import warnings
from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.constructors.joint import grid_lp_optimum, ground_cost, joint_edges
from dpfix.explore.joint import (
    JointGapSurvey,
    joint_gap_survey,
    joint_targets,
    product_is_optimal,
    smallest_joint_gap,
)
from dpfix.explore.joint_instances import (
    JointInstance,
    grid_compositions,
    grid_text,
    joint_instances,
)
from dpfix.explore.search import BudgetReached, SurveyResult, smallest_counterexample, survey
from dpfix.numbers.exact import ExactnessError
from dpfix.theory.graphs import as_graph


def _by_brute_force(shapes, totals, lams):
    """The order of docs/joint.md section 4 written out: every shape by ``(N, shape)``, the
    totals as given, every ``w`` with sum ``W`` in descending lexicographic order."""
    out = []
    for shape in sorted(shapes, key=lambda s: (math.prod(s), s)):
        N = math.prod(shape)
        for W in totals:
            ws = sorted((w for w in itertools.product(range(W + 1), repeat=N) if sum(w) == W),
                        reverse=True)
            out += [(shape, tuple(F(v, W) for v in w), lam) for w in ws for lam in lams]
    return out


def test_the_order_is_the_documented_one():
    shapes, totals, lams = [(2, 2), (1, 3), (1, 4), (1, 2)], (2, 1, 3), (F(3), F(2))
    got = [(i.shape, i.z, i.lam) for i in joint_instances(shapes, totals, lams)]
    assert got == _by_brute_force(shapes, totals, lams)
    assert [(s, z) for s, z, _ in got[::2]] == [
        (t.shape, tuple(t.ravel())) for t in joint_targets(shapes, totals)]


def test_grid_compositions_descend_lexicographically():
    for total, parts in ((0, 3), (3, 1), (3, 3), (4, 2)):
        want = sorted((w for w in itertools.product(range(total + 1), repeat=parts)
                       if sum(w) == total), reverse=True)
        assert list(grid_compositions(total, parts)) == want


def test_the_first_visits_ascend_in_order():
    """With the totals 1..W and lam ascending, each instance's first visit is in ascending
    ``order()`` (the repeats at multiples of a total come later)."""
    seen, firsts = set(), []
    for inst in joint_instances([(2, 2), (1, 4), (1, 3)], (1, 2, 3, 4), [2, 3]):
        if inst not in seen:
            seen.add(inst)
            firsts.append(inst)
    keys = [i.order() for i in firsts]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert sorted(seen, key=JointInstance.order) == firsts


def test_a_joint_instance_pickles_prints_and_compares():
    inst = JointInstance((2, 3), 4, [["1/2", 0, "1/2"], [0, 0, 0]], "row")
    again = pickle.loads(pickle.dumps(inst))
    assert again == inst and hash(again) == hash(inst) and again.key() == inst.key()
    assert eval(repr(inst), {"JointInstance": JointInstance, "Fraction": F}) == inst
    assert str(inst) == "2x3, unit row, lam = 4, z = (1/2 0 1/2 | 0 0 0)"
    assert inst.key() == "6|4|1/2,0,1/2,0,0,0|row:2x3"
    assert inst != JointInstance((2, 3), 4, inst.z, "cell") != JointInstance((3, 2), 4, inst.z)
    assert inst.key() != JointInstance((3, 2), 4, inst.z, "row").key()
    assert (inst.n, inst.z_grid().shape) == (6, (2, 3))
    assert JointInstance((2, 2), 2, ["1/2", 0, 0, "1/2"]) == \
        JointInstance((2, 2), 2, [[F(1, 2), 0], [0, F(1, 2)]])
    assert JointInstance((2, 2), 3).z is None


def test_the_neighbour_graph_is_the_units():
    for unit, name in (("cell", "grid"), ("row", "king")):
        G = JointInstance((2, 3), 4, None, unit).neighbour_graph()
        assert sorted(G.edges) == sorted(as_graph(f"{name}:2x3").edges)
        assert sorted(G.edges) == sorted(map(tuple, joint_edges((2, 3), unit).tolist()))
    assert JointInstance((2, 2, 2), 2).neighbour_graph().number_of_edges() == 12


def _count_error(T, inst):
    D = ground_cost(inst.shape)
    return sum(inst.z[s] * T[s, j] * int(D[s, j]) for s in range(inst.n)
               for j in range(inst.n))


@pytest.mark.parametrize("unit, lam, z", [
    ("cell", 2, ["1/2", 0, 0, "1/2"]), ("row", 4, ["1/2", "1/2", 0, 0]),
    ("cell", 3, ["1/3", "1/3", 0, "1/3"])])
def test_the_engine_visits_the_vertices_of_F_grid(unit, lam, z):
    """over="F" on a joint instance: the vertices of F_grid (the unit's graph); their least
    count error is cdd's exact optimum (an LP against a vertex enumeration)."""
    inst = JointInstance((2, 2), lam, z, unit)
    optimum = grid_lp_optimum(inst.z_grid(), lam=inst.lam, unit=unit).count_error()
    assert not smallest_counterexample(lambda T, i: _count_error(T, i) >= optimum, over="F",
                                       instances=[inst])
    found = smallest_counterexample(lambda T, i: _count_error(T, i) > optimum, over="F",
                                    instances=[inst])
    assert found and _count_error(found.counterexample.witness, inst) == optimum


@settings(max_examples=12, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=2, max_size=2).filter(any),
       st.lists(st.integers(0, 3), min_size=2, max_size=2).filter(any),
       st.sampled_from([F(2), F(3), F(3, 2)]))
def test_on_product_targets_the_product_is_optimal_under_cell(a, b, lam):
    """Corollary G2 (docs/graphs.md section 11): for a product target under unit cell the
    product then transport is optimal over F_grid."""
    z = np.outer([F(x, sum(a)) for x in a], [F(y, sum(b)) for y in b])
    assert product_is_optimal(JointInstance((2, 2), lam, z))


def test_the_optimum_is_zero_exactly_on_one_state():
    """What the survey's mean ratio uses for the instances where the product is optimal."""
    for inst in joint_instances([(2, 2), (1, 3)], (1, 2), [4, 9], "row"):
        zero = grid_lp_optimum(inst.z_grid(), lam=inst.lam, unit="row").count_error() == 0
        assert zero == (sum(x != 0 for x in inst.z) == 1)


def test_the_gap_carries_its_instance_and_matrices():
    found = smallest_joint_gap(shapes=((2, 2),), totals=(1, 2))
    gap = found.counterexample
    inst = gap.instance
    assert inst == JointInstance((2, 2), 2, ["1/2", 0, 0, "1/2"])
    assert (_count_error(gap.product_T, inst), _count_error(gap.optimum_T, inst)) == \
        (gap.product, gap.optimum) == (F(2, 3), F(1, 2))
    z = np.array(inst.z, dtype=object)
    assert list(z.dot(gap.optimum_T)) == list(z) == list(z.dot(gap.product_T))
    assert json.loads(json.dumps(found.describe()))["counterexample"]["z"] == "1/2 0 | 0 1/2"


def test_triples_are_joint_instances_too():
    found = smallest_joint_gap(shapes=((2, 2, 2),), totals=(1, 2))
    gap = found.counterexample
    assert (found.visited, gap.shape, gap.product, gap.optimum) == \
        (12, (2, 2, 2), F(2, 3), F(1, 2))
    assert gap.z == "1/2 0 | 0 1/2 || 0 0 | 0 0" == grid_text(gap.instance.z, (2, 2, 2))


def test_the_survey_is_the_engines_result():
    s = joint_gap_survey(shapes=((2, 2),), totals=(1, 2), lam=[2, 3])
    assert isinstance(s, JointGapSurvey) and isinstance(s, SurveyResult)
    assert s.counts == {(4, F(2)): {"held": 12, "failed": 2, "errored": 0},
                        (4, F(3)): {"held": 12, "failed": 2, "errored": 0}}
    assert [str(ce.instance) for ce in s.failures[:1]] == \
        ["2x2, unit cell, lam = 2, z = (1/2 0 | 0 1/2)"]
    assert s.worst_instance == JointInstance((2, 2), 3, ["1/2", 0, 0, "1/2"])
    assert (s.visited, s.optimal, s.complete, s.worst_ratio) == (28, 24, True, F(3, 2))
    d = json.loads(json.dumps(s.describe()))
    assert (d["visited"], d["optimal"], d["worst_ratio"], d["lam"]) == (28, 24, "3/2",
                                                                         ["2", "3"])
    assert "optimal on 24 of 28" in str(s)


def test_the_budget_stops_the_joint_search_and_survey():
    with pytest.warns(BudgetReached, match="3 instances"):
        stopped = smallest_joint_gap(budget=3)
    assert not stopped and stopped.visited == 3 and "3 instances" in stopped.stopped
    s = joint_gap_survey(shapes=((2, 2),), totals=(1, 2), budget=6)
    assert (s.visited, s.optimal, s.complete, s.found) == (6, 6, False, False)
    assert s.mean_ratio == 1.0 and "6 instances" in s.stopped
    with warnings.catch_warnings():
        warnings.simplefilter("error", BudgetReached)
        assert smallest_joint_gap(budget=100).found  # found before the budget: no warning


def test_the_cache_skips_where_the_product_is_optimal(tmp_path):
    path = tmp_path / "joint.jsonl"
    first = joint_gap_survey(shapes=((2, 2),), totals=(1, 2), cache=path)
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert len(lines) == 14 and lines[0]["instance"] == "4|2|1,0,0,0|cell:2x2"
    again = joint_gap_survey(shapes=((2, 2),), totals=(1, 2), cache=path)
    assert (again.visited, again.optimal, again.worst_ratio, again.mean_ratio) == \
        (first.visited, first.optimal, first.worst_ratio, first.mean_ratio)
    other = smallest_joint_gap(shapes=((2, 2),), totals=(1, 2), cache=path)
    assert other.visited == 8 and other.counterexample.optimum == F(1, 2)


def test_two_processes_give_the_answers_of_one():
    kwargs = {"shapes": ((2, 2),), "totals": (1, 2), "lam": [3, 2]}
    one, two = smallest_joint_gap(**kwargs), smallest_joint_gap(jobs=2, **kwargs)
    assert (two.visited, two.counterexample) == (one.visited, one.counterexample)
    assert two.counterexample.optimum_T is not None
    s1, s2 = joint_gap_survey(**kwargs), joint_gap_survey(jobs=2, **kwargs)
    assert (s2.visited, s2.optimal, s2.worst_ratio, s2.worst_z, s2.mean_ratio) == \
        (s1.visited, s1.optimal, s1.worst_ratio, s1.worst_z, s1.mean_ratio)


def test_the_progress_bar_goes_to_stderr(capsys):
    smallest_joint_gap(shapes=((2, 2),), totals=(1,), progress=True)
    assert "search" in capsys.readouterr().err


def test_the_predicate_runs_through_the_engine_as_it_is():
    found = smallest_counterexample(product_is_optimal, over="instance",
                                    instances=joint_instances(unit="row", lam=4))
    assert found.visited == 6 and found.counterexample.instance.z == (F(1, 2), F(1, 2), 0, 0)
    s = survey(product_is_optimal, over="instance",
               instances=joint_instances(((2, 2),), (1, 2), lam=4, unit="row"))
    assert s.counts[(4, F(4))] == {"held": 8, "failed": 6, "errored": 0}  # 8 of 14
    with pytest.raises(TypeError, match="a JointInstance with a target"):
        product_is_optimal(JointInstance((2, 2), 2))


@pytest.mark.parametrize("kwargs, error, message", [
    ({"shapes": ((1, 1),)}, ValueError, "shape: a pair"),
    ({"shapes": ((2,),)}, ValueError, "shape: a pair"),
    ({"shapes": ((2, "a"),)}, ValueError, "shape: a pair"),
    ({"shapes": ((2, 2, 2, 2),)}, ValueError, "shape: a pair"),
    ({"shapes": ()}, ValueError, "shapes: none given"),
    ({"totals": ()}, ValueError, "totals: none given"),
    ({"totals": (0,)}, ValueError, "totals: the total weights"),
    ({"totals": (F(3, 2),)}, ValueError, "totals: the total weights"),
    ({"unit": "column"}, ValueError, "unit: one of cell, row"),
    ({"lam": 2, "unit": "row"}, ValueError, "no rational square root"),
    ({"lam": 1}, ValueError, "lam: must be > 1"),
    ({"lam": 1.5}, ExactnessError, "lam: float"),
    ({"jobs": 0}, ValueError, "jobs:"),
    ({"budget": "soon"}, ValueError, "budget:"),
])
def test_bad_input_gets_one_line(kwargs, error, message):
    for run in (smallest_joint_gap, joint_gap_survey):
        with pytest.raises(error, match=message) as info:
            run(**kwargs)
        assert "\n" not in str(info.value)


@pytest.mark.parametrize("args, message", [
    (((2, 2), 2, [1, 0, 0]), r"z has shape \(3,\)"),
    (((2, 2), 2, ["1/2", 0, 0, 0]), "sum to 1"),
    (((2, 2), 2, [2, -1, 0, 0]), "non-negative"),
    (((2, 2), 2, [0.5, 0, 0, 0.5]), "float"),
    (((2, 2, 2), 4, None, "row"), "no rational cube root"),
])
def test_a_bad_joint_instance_gets_one_line(args, message):
    with pytest.raises((ValueError, ExactnessError), match=message) as info:
        JointInstance(*args)
    assert "\n" not in str(info.value)
