"""Results you can always read: :func:`smallest_counterexample` returns a
:class:`SearchResult` found or not (``visited``, ``stopped``, ``elapsed``, like scipy's
``OptimizeResult``), :func:`survey` a :class:`SurveyResult`, and so do the searches and
surveys built on them; both searches and :func:`survey` visit through one loop."""

from __future__ import annotations

import json
import warnings
from fractions import Fraction

import pytest

from dpfix.explore.joint import joint_gap_survey, smallest_joint_gap
from dpfix.explore.northwest import find_northwest_counterexample, northwest_survey
from dpfix.explore.search import (
    BudgetReached,
    Counterexample,
    PredicateError,
    SearchResult,
    SurveyResult,
    smallest_counterexample,
    survey,
)
from dpfix.numbers.deprecation import DpfixDeprecationWarning
from dpfix.numbers.results import Result


def always(T, inst):
    return True


def first_entry_small(T, inst):
    return T[0, 0] < Fraction(1, 2)


def raises_at_three(inst):
    if inst.n == 3:
        raise ZeroDivisionError("three")
    return True


def test_nothing_found_still_says_what_was_visited():
    with warnings.catch_warnings():
        warnings.simplefilter("error", BudgetReached)  # not stopped: no warning
        result = smallest_counterexample(always, over="U", n=[2, 3], lam=[2, 3])
    assert isinstance(result, SearchResult) and isinstance(result, Result)
    assert not result and result.found is False and result.counterexample is None
    assert result.visited == 4 and result.stopped is None and result.elapsed >= 0
    assert repr(result) == "SearchResult(found=False, visited=4, stopped=None)"
    assert str(result) == "no counterexample: 4 instances visited (complete)"


def test_a_budget_is_on_the_result_and_warned():
    with pytest.warns(BudgetReached, match="budget"):
        result = smallest_counterexample(always, over="U", n=[2, 3], lam=[2, 3], budget=3)
    assert not result and result.visited == 3
    assert result.stopped.startswith("budget (3 instances) reached after 3 instances")
    assert f"stopped: {result.stopped}" in str(result)


def test_a_found_counterexample_is_on_the_result():
    result = smallest_counterexample(first_entry_small, over="F", n=2, lam=[2, 3])
    ce = result.counterexample
    assert result and result.found and isinstance(ce, Counterexample)
    assert result.visited == ce.visited and result.stopped is None
    assert str(result) == str(ce) and ce.instance.n == 2


def test_the_result_describes_itself_in_json():
    found = smallest_counterexample(first_entry_small, over="F", n=2, lam=[2, 3])
    d = json.loads(json.dumps(found.describe()))
    assert d["found"] is True and d["visited"] == found.visited
    assert d["counterexample"]["lam"] == str(found.counterexample.lam)
    assert d["counterexample"]["witness"] == [[str(x) for x in row]
                                              for row in found.counterexample.witness]
    s = survey(first_entry_small, over="F", n=2, lam=[2, 3])
    d = json.loads(json.dumps(s.describe()))
    assert d["found"] is True and d["visited"] == s.visited and d["complete"] is True
    assert [c["held"] + c["failed"] for c in d["counts"]] == [4, 4]


def test_the_old_shape_is_reachable_for_one_release():
    """The counterexample's attributes on the result, and the former run function, warn."""
    from dpfix.explore import search

    found = smallest_counterexample(first_entry_small, over="F", n=2, lam=[2, 3])
    with pytest.warns(DpfixDeprecationWarning, match="use SearchResult.counterexample.witness"):
        witness = found.witness
    assert witness is found.counterexample.witness
    nothing = smallest_counterexample(always, over="U", n=2)
    with pytest.raises(AttributeError, match="no counterexample was found"):
        nothing.instance  # noqa: B018
    with pytest.warns(DpfixDeprecationWarning, match="smallest_counterexample_run"):
        ce, run = search.smallest_counterexample_run(always, over="U", n=[2, 3], budget=1)
    assert ce is None and run.visited == 1 and run.stopped
    with pytest.warns(DpfixDeprecationWarning, match="SearchRun"):
        assert search.SearchRun is SearchResult


def test_survey_is_false_when_it_held_everywhere():
    s = survey(always, over="U", n=[2, 3])
    assert isinstance(s, SurveyResult) and isinstance(s, Result)
    assert not s and s.holds and s.visited == 2 and s.stopped is None
    assert repr(s) == ("SurveyResult(found=False, visited=2, failed=0, errored=0, "
                       "stopped=None)")


def test_survey_and_search_write_the_same_cache_lines(tmp_path):
    """One visiting loop: every visited instance is counted and cached alike."""
    a, b = tmp_path / "search.jsonl", tmp_path / "survey.jsonl"
    smallest_counterexample(always, over="U", n=[2, 3], lam=[2, 3], cache=a)
    result = survey(always, over="U", n=[2, 3], lam=[2, 3], cache=b)
    lines = [[json.loads(x)["instance"] for x in p.read_text().splitlines()] for p in (a, b)]
    assert lines[0] == lines[1] and len(lines[0]) == result.visited == 4


def test_an_error_ends_the_search_after_caching_what_was_visited(tmp_path):
    cache = tmp_path / "c.jsonl"
    with pytest.raises(PredicateError, match="ZeroDivisionError: three"):
        smallest_counterexample(raises_at_three, over="instance", n=[2, 3, 4], cache=cache)
    records = [json.loads(x) for x in cache.read_text().splitlines()]
    assert [r["outcome"] for r in records] == ["held", "error"]


def test_the_northwest_search_returns_a_result_found_or_not():
    nothing = find_northwest_counterexample("abs", n_max=3, denominator_max=3)
    assert isinstance(nothing, SearchResult) and not nothing and nothing.visited == 54
    stopped = find_northwest_counterexample("zero-one", n_max=3, limit=5)
    assert not stopped and stopped.visited == 5 and "5 instances" in stopped.stopped
    found = find_northwest_counterexample("zero-one", n_max=3)
    assert found and found.counterexample.searched == found.visited
    json.dumps(found.describe())


def test_the_surveys_return_results_and_keep_their_keys_for_one_release():
    s = northwest_survey("zero-one", n=(3,), lam=(3,), denominator_max=4)
    assert isinstance(s, Result) and s and (s.visited, s.not_optimal) == (22, 2)
    assert s.stopped is None and json.dumps(s.describe())
    with pytest.warns(DpfixDeprecationWarning, match=r"\['instances'\] is deprecated"):
        assert s["instances"] == s.visited
    j = joint_gap_survey(shapes=((2, 2),), totals=(1,))
    assert isinstance(j, Result) and not j and (j.visited, j.optimal) == (4, 4)
    with pytest.warns(DpfixDeprecationWarning, match="use JointGapSurvey.visited"):
        assert j["targets"] == 4
    with pytest.raises(TypeError, match="not a dict"):
        j["nothing"]  # noqa: B018


def test_the_joint_search_returns_a_result_found_or_not():
    found = smallest_joint_gap(lam=2, unit="cell", shapes=((2, 2),), totals=(1, 2))
    assert found and found.counterexample.z == "1/2 0 | 0 1/2"
    with pytest.warns(DpfixDeprecationWarning, match="counterexample.product"):
        assert found["product"] == Fraction(2, 3)
    nothing = smallest_joint_gap(lam=2, unit="cell", shapes=((2, 2),), totals=(1,))
    assert not nothing and nothing.visited == 4 and nothing.stopped is None


def test_the_paper_examples_found_by_search_are_results_with_what_was_visited():
    """Example 1 and the (eps, delta) examples exist (the paper's theorems): found, they
    are results like the others (``visited``, ``describe()``)."""
    from dpfix.explore.counterexamples import find_example1
    from dpfix.explore.delta_examples import find_delta_examples

    ex = find_delta_examples()
    assert isinstance(ex, Result) and ex and ex.visited >= 4
    assert json.loads(json.dumps(ex.describe()))["visited"] == ex.visited
    one = find_example1(lam=[3, 2], zs=[[Fraction(1, 3)] * 3, ["1/2", "1/4", "1/4"]])
    assert isinstance(one, Result) and one.visited == one.cases_searched > 0
    json.dumps(one.describe())
