"""The engine's run state, public: :func:`smallest_counterexample_run` answers what
:func:`smallest_counterexample` answers, and also how many instances it visited and why it
stopped when it found nothing; both searches and :func:`survey` visit through one loop."""

from __future__ import annotations

import json
import warnings
from fractions import Fraction

import pytest

from dpfix.explore.search import (
    BudgetReached,
    PredicateError,
    SearchRun,
    smallest_counterexample,
    smallest_counterexample_run,
    survey,
)


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
        warnings.simplefilter("error", BudgetReached)  # the run says it: no warning
        ce, run = smallest_counterexample_run(always, over="U", n=[2, 3], lam=[2, 3])
    assert ce is None and isinstance(run, SearchRun)
    assert run.visited == 4 and run.stopped is None and run.last.n == 3


def test_a_budget_is_reported_on_the_run_and_warned_by_the_plain_search():
    ce, run = smallest_counterexample_run(always, over="U", n=[2, 3], lam=[2, 3], budget=3)
    assert ce is None and run.visited == 3
    assert run.stopped.startswith("budget (3 instances) reached after 3 instances")
    with pytest.warns(BudgetReached, match="budget"):
        assert smallest_counterexample(always, over="U", n=[2, 3], lam=[2, 3], budget=3) is None


def test_the_run_and_the_plain_search_find_the_same_counterexample():
    ce, run = smallest_counterexample_run(first_entry_small, over="F", n=2, lam=[2, 3])
    plain = smallest_counterexample(first_entry_small, over="F", n=2, lam=[2, 3])
    assert (ce.instance, ce.visited, ce.witness.tolist()) == \
        (plain.instance, plain.visited, plain.witness.tolist())
    assert run.visited == ce.visited and run.last == ce.instance


def test_survey_and_search_write_the_same_cache_lines(tmp_path):
    """One visiting loop: every visited instance is counted and cached alike."""
    a, b = tmp_path / "search.jsonl", tmp_path / "survey.jsonl"
    smallest_counterexample_run(always, over="U", n=[2, 3], lam=[2, 3], cache=a)
    result = survey(always, over="U", n=[2, 3], lam=[2, 3], cache=b)
    lines = [[json.loads(x)["instance"] for x in p.read_text().splitlines()] for p in (a, b)]
    assert lines[0] == lines[1] and len(lines[0]) == result.visited == 4


def test_an_error_ends_the_run_after_caching_what_was_visited(tmp_path):
    cache = tmp_path / "c.jsonl"
    with pytest.raises(PredicateError, match="ZeroDivisionError: three"):
        smallest_counterexample_run(raises_at_three, over="instance", n=[2, 3, 4], cache=cache)
    records = [json.loads(x) for x in cache.read_text().splitlines()]
    assert [r["outcome"] for r in records] == ["held", "error"]
