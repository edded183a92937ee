"""The searches rebuilt on dpfix.explore.search give the results of their earlier, hand-written
loops: the known answers below were computed by those loops (the same inputs) before
the rebuild, and are compared field by field."""

from __future__ import annotations

from fractions import Fraction as F
from typing import Any

import numpy as np
import pytest

from dpfix.explore.counterexamples import find_example1
from dpfix.explore.delta_examples import find_delta_examples
from dpfix.explore.northwest import find_northwest_counterexample, northwest_survey

# ruff: noqa: E501
KNOWN = {'ex1': {'lam': F(3, 2),
         'z': [F(1, 3), F(1, 3), F(1, 3)],
         'B1': [[F(0), F(0), F(0)],
                [F(0), F(2, 5), F(1)],
                [F(1), F(3, 5), F(0)],
                [F(0), F(0), F(0)]],
         'B2': [[F(0), F(19, 40), F(0)],
                [F(0), F(1, 20), F(1)],
                [F(1), F(0), F(0)],
                [F(0), F(19, 40), F(0)]],
         'T': [[F(3, 8), F(19, 56), F(2, 7)],
               [F(1, 4), F(9, 28), F(3, 7)],
               [F(3, 8), F(19, 56), F(2, 7)]],
         'lam3': F(3, 2),
         'z3': [F(1, 3), F(1, 3), F(1, 3)],
         'B3': [[F(0), F(0), F(1, 2)],
                [F(3, 95), F(1), F(0)],
                [F(92, 95), F(0), F(0)],
                [F(0), F(0), F(1, 2)]],
         'T3': [[F(99, 266), F(2, 7), F(13, 38)],
                [F(34, 133), F(3, 7), F(6, 19)],
                [F(99, 266), F(2, 7), F(13, 38)]],
         'cases_searched': 1},
 'ex1b': {'lam': F(3),
          'z': [F(1, 3), F(1, 3), F(1, 3)],
          'B1': [[F(0), F(0), F(0)],
                 [F(0), F(1, 4), F(1)],
                 [F(1), F(3, 4), F(0)],
                 [F(0), F(0), F(0)]],
          'B2': [[F(0), F(13, 28), F(0)],
                 [F(0), F(1, 14), F(1)],
                 [F(1), F(0), F(0)],
                 [F(0), F(13, 28), F(0)]],
          'T': [[F(3, 7), F(13, 35), F(1, 5)],
                [F(1, 7), F(9, 35), F(3, 5)],
                [F(3, 7), F(13, 35), F(1, 5)]],
          'lam3': F(3),
          'z3': [F(1, 3), F(1, 3), F(1, 3)],
          'B3': [[F(0), F(0), F(1, 2)],
                 [F(3, 52), F(1), F(0)],
                 [F(49, 52), F(0), F(0)],
                 [F(0), F(0), F(1, 2)]],
          'T3': [[F(27, 65), F(1, 5), F(5, 13)],
                 [F(11, 65), F(3, 5), F(3, 13)],
                 [F(27, 65), F(1, 5), F(5, 13)]],
          'cases_searched': 1},
 'nw01': {'loss': 'zero-one',
          'n': 3,
          'lam': F(3),
          'z': [F(1, 4), F(1, 4), F(1, 2)],
          'northwest_value': F(85, 252),
          'optimum': F(1, 3),
          'gap': F(1, 252),
          'northwest_T': [[F(9, 14), F(31, 126), F(1, 9)],
                          [F(3, 14), F(19, 42), F(1, 3)],
                          [F(1, 14), F(19, 126), F(7, 9)]],
          'optimum_T': [[F(9, 14), F(1, 6), F(4, 21)],
                        [F(3, 14), F(1, 2), F(2, 7)],
                        [F(1, 14), F(1, 6), F(16, 21)]],
          'searched': 89},
 'nwcap': {'loss': 'capped:1',
           'n': 3,
           'lam': F(3),
           'z': [F(1, 4), F(1, 4), F(1, 2)],
           'northwest_value': F(85, 252),
           'optimum': F(1, 3),
           'gap': F(1, 252),
           'northwest_T': [[F(9, 14), F(31, 126), F(1, 9)],
                           [F(3, 14), F(19, 42), F(1, 3)],
                           [F(1, 14), F(19, 126), F(7, 9)]],
           'optimum_T': [[F(9, 14), F(1, 6), F(4, 21)],
                         [F(3, 14), F(1, 2), F(2, 7)],
                         [F(1, 14), F(1, 6), F(16, 21)]],
           'searched': 71},
 'surv01': {'loss': 'zero-one',
            'instances': 22,
            'not_optimal': 2,
            'max_gap': F(1, 252),
            'max_relative_gap': F(1, 84),
            'worst': {'n': 3,
                      'lam': F(3),
                      'z': [F(1, 4), F(1, 4), F(1, 2)],
                      'gap': F(1, 252),
                      'northwest': F(85, 252),
                      'optimum': F(1, 3)},
            'remap_optimal': 2,
            'remap_beats_northwest': 2,
            'remap_monotone': 0,
            'by_n': {3: [22, 2]}},
 'surv01b': {'loss': 'zero-one',
             'instances': 36,
             'not_optimal': 0,
             'max_gap': F(0),
             'max_relative_gap': F(0),
             'worst': None,
             'remap_optimal': 0,
             'remap_beats_northwest': 0,
             'remap_monotone': 0,
             'by_n': {2: [10, 0], 3: [26, 0]}},
 'delta2': {'lam': F(2),
            'delta': F(1, 10),
            'z': [F(1, 2), F(1, 2)],
            'positive_vertex': [[F(3, 10), F(7, 10)], [F(7, 10), F(3, 10)]],
            'lost_vertex': [[F(1, 3), F(2, 3)], [F(2, 3), F(1, 3)]],
            'lifted_vertex': [[F(4, 15), F(11, 15)],
                              [F(19, 30), F(11, 30)],
                              [F(0), F(0)],
                              [F(1, 10), F(0)]],
            'rf_vertex': [[F(0), F(4, 5)], [F(9, 10), F(1, 5)], [F(1, 10), F(0)], [F(0), F(0)]],
            'rf_image': [[F(2, 5), F(3, 5)], [F(3, 5), F(2, 5)]]},
 'delta2b': {'lam': F(3),
             'delta': F(1, 5),
             'z': [F(1, 2), F(1, 2)],
             'positive_vertex': [[F(1, 5), F(4, 5)], [F(4, 5), F(1, 5)]],
             'lost_vertex': [[F(1, 4), F(3, 4)], [F(3, 4), F(1, 4)]],
             'lifted_vertex': [[F(7, 40), F(33, 40)],
                               [F(29, 40), F(11, 40)],
                               [F(0), F(0)],
                               [F(1, 5), F(0)]],
             'rf_vertex': [[F(0), F(7, 10)],
                           [F(4, 5), F(3, 10)],
                           [F(1, 5), F(0)],
                           [F(0), F(0)]],
             'rf_image': [[F(2, 5), F(3, 5)], [F(3, 5), F(2, 5)]]},
 'delta3': {'lam': F(2),
            'delta': F(1, 10),
            'z': [F(1, 3), F(1, 3), F(1, 3)],
            'positive_vertex': [[F(1, 10), F(1, 5), F(7, 10)],
                                [F(3, 10), F(2, 5), F(3, 10)],
                                [F(7, 10), F(3, 20), F(3, 20)]],
            'lost_vertex': [[F(0), F(1, 6), F(5, 6)],
                            [F(0), F(1, 3), F(2, 3)],
                            [F(0), F(2, 3), F(1, 3)]],
            'lifted_vertex': [[F(0), F(0), F(1)],
                              [F(0), F(1, 10), F(9, 10)],
                              [F(0), F(1, 20), F(19, 20)],
                              [F(0), F(0), F(0)],
                              [F(0), F(1, 10), F(0)],
                              [F(0), F(0), F(0)],
                              [F(0), F(0), F(0)]],
            'rf_vertex': [[F(0), F(0), F(0)],
                          [F(0), F(0), F(13, 15)],
                          [F(0), F(13, 15), F(2, 15)],
                          [F(9, 20), F(2, 15), F(0)],
                          [F(1, 10), F(0), F(0)],
                          [F(3, 10), F(0), F(0)],
                          [F(0), F(0), F(0)],
                          [F(0), F(0), F(0)],
                          [F(3, 20), F(0), F(0)],
                          [F(0), F(0), F(0)],
                          [F(0), F(0), F(0)]],
            'rf_image': [[F(51, 140), F(64, 175), F(27, 100)],
                         [F(23, 70), F(37, 175), F(23, 50)],
                         [F(43, 140), F(74, 175), F(27, 100)]]}}


def _plain(x: Any) -> Any:
    return x.tolist() if isinstance(x, np.ndarray) else x


def _same(obj: Any, known: dict) -> None:
    for key, value in known.items():
        assert _plain(getattr(obj, key)) == value, key


def test_find_example1_default() -> None:
    _same(find_example1(), KNOWN["ex1"])


def test_find_example1_given_lams_and_targets() -> None:
    ex = find_example1(lam=[3, 2], zs=[[F(1, 3)] * 3, ["1/2", "1/4", "1/4"]])
    _same(ex, KNOWN["ex1b"])


@pytest.mark.parametrize("key, args", [
    ("nw01", ("zero-one", {"n_max": 3})),
    ("nwcap", ("capped:1", {"n_max": 4, "denominator_max": 4})),
])
def test_find_northwest_counterexample(key: str, args: tuple) -> None:
    weights, kw = args
    ce = find_northwest_counterexample(weights, **kw).counterexample
    _same(ce, KNOWN[key])
    assert ce.certificate.check().value == ce.optimum


@pytest.mark.parametrize("weights, kw", [
    ("abs", {"n_max": 3, "denominator_max": 3}),
    ("zero-one", {"n_max": 3, "limit": 5}),
    ("squared", {"n_max": 3, "denominator_max": 4}),
])
def test_find_northwest_counterexample_none(weights: str, kw: dict) -> None:
    assert not find_northwest_counterexample(weights, **kw)


@pytest.mark.parametrize("key, kw", [
    ("surv01", {"n": (3,), "lam": (3,), "denominator_max": 4}),
    ("surv01b", {"n": (2, 3), "lam": (2, 3), "denominator_max": 3}),
])
def test_northwest_survey(key: str, kw: dict) -> None:
    s = northwest_survey("zero-one", **kw)
    assert {"instances" if k == "visited" else k: getattr(s, k)
            for k in s.former_keys.values()} == KNOWN[key]


@pytest.mark.parametrize("key, args", [
    ("delta2", (2, "1/10")),
    ("delta2b", (3, "1/5")),
    pytest.param("delta3", (2, "1/10", 3), marks=pytest.mark.full),
])
def test_find_delta_examples(key: str, args: tuple) -> None:
    _same(find_delta_examples(*args), KNOWN[key])
