"""Filterable families of targets (dpfix.explore.instances): ``Targets.filter`` keeps exactly
the targets of the family that pass, in its order, over every ``n`` and for one;
``positive=True`` is the filter "every entry > 0"; the engine takes filtered families."""

from __future__ import annotations

import itertools
from fractions import Fraction as F

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.explore.instances import (
    Instance,
    compositions,
    named_targets,
    parse_targets,
    random_targets,
    targets_by_denominator,
)
from dpfix.explore.search import smallest_counterexample, survey


def _all_positive(z):
    return all(x > 0 for x in z)


def _families(N_max, reversal):
    return [compositions(N_max, up_to_reversal=reversal), named_targets(),
            random_targets(None, 6, seed=N_max)]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 4), st.booleans(), st.data())
def test_a_filter_keeps_exactly_the_targets_that_pass_in_order(N_max, n, reversal, data):
    keep = data.draw(st.functions(like=lambda z: True, returns=st.booleans(), pure=True))
    for family in _families(N_max, reversal):
        if n < 2 and family.label.startswith("named"):
            continue
        got = list(family.filter(keep).for_n(n))
        assert got == [z for z in family.for_n(n) if keep(z)]
    one = compositions(N_max, n, up_to_reversal=reversal)
    assert list(one.filter(keep)) == [z for z in one if keep(z)]
    twice = one.filter(keep).filter(_all_positive)
    assert list(twice) == [z for z in one if keep(z) and _all_positive(z)]


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 7), st.integers(1, 5), st.booleans())
def test_positive_is_the_filter_every_entry_positive(N_max, n, reversal):
    every = list(targets_by_denominator(n, N_max, up_to_reversal=reversal))
    positive = list(targets_by_denominator(n, N_max, up_to_reversal=reversal, positive=True))
    assert positive == [z for z in every if _all_positive(z)]
    family = compositions(N_max, up_to_reversal=reversal, positive=True)
    assert list(family.for_n(n)) == positive
    assert list(compositions(N_max, n, positive=True)) == \
        list(compositions(N_max, n).filter(_all_positive))


def test_positive_without_end_is_a_prefix_of_the_filter():
    endless = targets_by_denominator(3, positive=True)
    want = [z for z in itertools.islice(targets_by_denominator(3), 400) if _all_positive(z)]
    assert list(itertools.islice(endless, len(want))) == want and len(want) > 50


def test_the_labels_say_what_was_filtered():
    assert repr(compositions(6).filter(_all_positive)) == "compositions(6) | filter(_all_positive)"
    assert repr(compositions(6, 3, positive=True)) == "compositions(6, 3, positive=True)"
    assert repr(compositions(4, up_to_reversal=True, positive=True)) == \
        "compositions(4, up_to_reversal=True, positive=True)"
    assert repr(parse_targets("compositions:5:positive")) == "compositions(5, positive=True)"
    assert repr(parse_targets("compositions:5:reversal,positive")) == \
        "compositions(5, up_to_reversal=True, positive=True)"


def test_a_filter_is_lazy():
    drawn = []

    def spy(z):
        drawn.append(z)
        return True
    endless = compositions(None).filter(spy)
    assert len(list(itertools.islice(endless.for_n(2), 3))) == 3 and len(drawn) == 3


def _interior(z):
    return z[0] > 0 and z[-1] > 0


def test_the_engine_searches_a_filtered_family():
    """A family filtered over every ``n`` and one filtered for one ``n`` go to ``z=``."""
    def ends_differ(inst: Instance) -> bool:
        return inst.z[0] != inst.z[-1]
    found = smallest_counterexample(ends_differ, over="instance", n=[2, 3],
                                    z=compositions(6).filter(_interior))
    assert found.counterexample.instance == Instance(2, 2, ["1/2", "1/2"])
    s = survey(lambda inst: True, over="instance", n=[2, 3, 4],
               z=compositions(5).filter(_interior))
    want = {k: len([z for z in targets_by_denominator(k, 5) if _interior(z)]) for k in (2, 3, 4)}
    assert {n: c["held"] for (n, _), c in s.counts.items()} == want
    only3 = survey(lambda inst: True, over="instance", n=[2, 3],
                   z=compositions(5, 3, positive=True))
    assert list(only3.counts) == [(3, F(2))] and only3.visited == \
        len(list(compositions(5, 3, positive=True)))


def test_a_filter_that_is_no_test_is_refused_in_one_line():
    with pytest.raises(TypeError, match="not callable"):
        compositions(4).filter("positive")
    with pytest.raises(TypeError, match=r"filter\(<lambda>\): the filter returned Fraction at "
                                        r"z = \(0, 1\); it must return a bool") as info:
        list(compositions(4).filter(lambda z: z[0]).for_n(2))
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="give no instance"):
        smallest_counterexample(lambda inst: True, over="instance", n=2,
                                z=compositions(4).filter(lambda z: False))
    with pytest.raises(TypeError, match=r"every n.*\.filter\(f\)"):
        list(compositions(4))
    with pytest.raises(ValueError, match="unknown flag"):
        parse_targets("compositions:4:positive,odd")
