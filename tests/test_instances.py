"""dpfix.explore.instances: exact instances and their small-first enumerators."""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import lcm

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.explore.instances import (
    Instance,
    Targets,
    compositions,
    lams,
    lams_by_height,
    named_targets,
    parse_lams,
    parse_n,
    parse_targets,
    random_targets,
    targets_by_denominator,
)
from dpfix.numbers.exact import ExactnessError


def _brute_targets(n: int, N_max: int) -> set[tuple[Fraction, ...]]:
    """Every z = c / N (N <= N_max) by the product of ranges: the independent count."""
    return {tuple(Fraction(x, N) for x in c) for N in range(1, N_max + 1)
            for c in itertools.product(range(N + 1), repeat=n) if sum(c) == N}


def _least_denominator(z: tuple[Fraction, ...]) -> int:
    return lcm(*(x.denominator for x in z))


@st.composite
def instances(draw: st.DrawFn) -> Instance:
    n = draw(st.integers(2, 5))
    q = draw(st.integers(1, 6))
    lam = Fraction(draw(st.integers(q + 1, 5 * q)), q)
    w = draw(st.lists(st.integers(0, 7), min_size=n, max_size=n).filter(any))
    z = None if draw(st.booleans()) else [Fraction(x, sum(w)) for x in w]
    return Instance(n, lam, z)


@given(instances())
def test_repr_pastes_back(inst: Instance) -> None:
    ns = {"Fraction": Fraction, "Instance": Instance}
    again = eval(repr(inst), ns)
    assert again == inst and hash(again) == hash(inst)
    assert isinstance(again.lam, Fraction) and type(again.n) is int
    if inst.z is not None:
        assert all(isinstance(x, Fraction) for x in again.z)


def test_instance_fields_exact_and_frozen() -> None:
    inst = Instance(3, "3/2", ["1/2", 0, Fraction(1, 2)])
    assert inst.lam == Fraction(3, 2) and inst.z == (Fraction(1, 2), 0, Fraction(1, 2))
    assert inst.z_array().dtype == object and inst.z_array().shape == (3,)
    assert Instance(2, 2).z is None and Instance(2, 2).z_array() is None
    assert inst.key() == "3|3/2|1/2,0,1/2"
    with pytest.raises(AttributeError):
        inst.n = 4  # type: ignore[misc]


@pytest.mark.parametrize("args, error", [
    ((3, 2.0, None), ExactnessError),
    ((2, 2, [0.5, 0.5]), ExactnessError),
    ((1, 2, None), ValueError),
    ((True, 2, None), ValueError),
    ((3, 1, None), ValueError),
    ((3, 2, ["1/2", "1/2"]), ValueError),
    ((2, 2, ["1/2", "1/3"]), ValueError),
    ((2, 2, ["3/2", "-1/2"]), ValueError),
])
def test_instance_refuses(args, error) -> None:
    with pytest.raises(error):
        Instance(*args)


def test_lams_from_a_list() -> None:
    assert list(lams([3, "3/2", Fraction(5, 4)])) == [3, Fraction(3, 2), Fraction(5, 4)]
    with pytest.raises(ExactnessError):
        list(lams([1.5]))
    with pytest.raises(ValueError):
        list(lams([1]))


@pytest.mark.parametrize("H", [2, 3, 7, 12])
def test_lams_by_height_is_every_rational_once_in_order(H: int) -> None:
    got = list(lams_by_height(H))
    brute = {Fraction(p, q) for p in range(2, H + 1) for q in range(1, p)}
    assert set(got) == brute and len(got) == len(brute)
    keys = [(max(x.numerator, x.denominator), x) for x in got]
    assert keys == sorted(keys)
    assert all(x > 1 for x in got)


def test_lams_by_height_without_end_is_a_prefix() -> None:
    assert list(itertools.islice(lams_by_height(), 9)) == list(lams_by_height(5))


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(1, 7))
def test_targets_by_denominator_order_and_completeness(n: int, N_max: int) -> None:
    got = list(targets_by_denominator(n, N_max))
    assert len(got) == len(set(got)), "a z repeated"
    assert set(got) == _brute_targets(n, N_max)
    # N ascending (each z at its least denominator), lexicographic in c within N
    keys = [(_least_denominator(z), tuple(x * _least_denominator(z) for x in z)) for z in got]
    assert keys == sorted(keys)


@settings(max_examples=15, deadline=None)
@given(st.integers(2, 4), st.integers(1, 6))
def test_up_to_reversal_keeps_one_of_each_pair(n: int, N_max: int) -> None:
    full = list(targets_by_denominator(n, N_max))
    half = list(targets_by_denominator(n, N_max, up_to_reversal=True))
    classes = {min(z, z[::-1]) for z in full}
    assert len(half) == len(classes)
    assert {min(z, z[::-1]) for z in half} == classes
    assert half == [z for z in full if z <= z[::-1]]  # the order is kept


def test_targets_without_end_is_a_prefix() -> None:
    assert list(itertools.islice(targets_by_denominator(3), 55)) == list(compositions(6, 3))


def test_families() -> None:
    fam = compositions(4)
    assert isinstance(fam, Targets) and repr(fam) == "compositions(4)"
    assert list(fam.for_n(2)) == list(targets_by_denominator(2, 4))
    with pytest.raises(TypeError, match="every n"):
        iter(fam)
    named = list(named_targets(3))
    assert len(named) == 4 and named[0] == (Fraction(1, 3),) * 3
    assert list(named_targets().for_n(4)) == list(named_targets(4))


def test_random_targets_seeded() -> None:
    a, b = list(random_targets(4, 5, seed=3)), list(random_targets(4, 5, seed=3))
    assert a == b and len(a) == 5
    assert all(len(z) == 4 and sum(z) == 1 and all(isinstance(x, Fraction) for x in z)
               for z in a)
    assert a != list(random_targets(4, 5, seed=4))
    assert list(random_targets(None, 5, seed=3).for_n(4)) == a
    assert all(max(x.denominator for x in z) <= 4 * 3 for z in random_targets(3, 9, 0,
                                                                            denominator=3))


def test_parsers() -> None:
    assert parse_n("2..4") == [2, 3, 4] and parse_n("3") == [3] and parse_n("4,2") == [2, 4]
    assert parse_lams("2,3/2") == [2, Fraction(3, 2)]
    assert parse_lams("height:3") == [2, Fraction(3, 2), 3]
    assert repr(parse_targets("compositions:6")) == "compositions(6)"
    assert repr(parse_targets("compositions:6:reversal")) == \
        "compositions(6, up_to_reversal=True)"
    assert repr(parse_targets("named")) == "named_targets()"
    r = parse_targets("random:20:7")
    assert list(r.for_n(3)) == list(random_targets(3, 20, 7))
    assert parse_targets("1/2,1/3,1/6;1,0") == [
        (Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)), (1, 0)]


@pytest.mark.parametrize("parse, text", [
    (parse_n, "2..x"), (parse_n, "1..3"), (parse_n, ""), (parse_lams, "2,1"),
    (parse_lams, "height:x"), (parse_targets, "compositions:x"),
    (parse_targets, "1/2,1/3"), (parse_targets, "random:"), (parse_targets, "1/2,x"),
    (parse_targets, "compositions:3:odd"),
])
def test_parsers_refuse(parse, text: str) -> None:
    with pytest.raises(ValueError, match="--"):
        parse(text)


def test_decimal_text_is_read_exactly() -> None:
    # a decimal string is an exact rational (to_fraction's convention), never a float
    assert parse_lams("1.5") == [Fraction(3, 2)]
    assert parse_targets("0.5,0.5") == [(Fraction(1, 2), Fraction(1, 2))]
