"""The constructor registry: dpfix.constructors.construct and CONSTRUCTORS."""

from fractions import Fraction

import numpy as np
import pytest

import dpfix.constructors as C
from dpfix.constructors import CONSTRUCTORS, construct
from dpfix.release.pipeline import privatize_counts
from dpfix.theory.mechanism import Mechanism

NAMES = ["heuristic", "lp", "northwest", "unfixed", "truncated-geometric", "staircase",
         "discrete-gaussian", "delta-northwest"]
Z = ["1/2", "1/6", "1/3"]


def test_the_registry_holds_exactly_the_plan_names():
    assert list(CONSTRUCTORS) == NAMES
    for info in CONSTRUCTORS.values():
        assert callable(getattr(C, info.function))
        assert info.stage in ("two-stage", "one-stage")


@pytest.mark.parametrize("name", [n for n in NAMES if CONSTRUCTORS[n].stage == "two-stage"])
def test_two_stage_exact_and_float_carry_the_registry_name(name):
    exact = construct(Z, lam=2, constructor=name)
    assert exact.exact and exact.constructor == name and exact.lam == 2
    floats = construct([0.5, 1 / 6, 1 / 3], float(np.log(2)), constructor=name)
    assert not floats.exact and floats.constructor == name
    assert np.abs(floats.T - exact.matrix.astype(float)).max() < 1e-9
    assert (exact.fixed_point is not None) == CONSTRUCTORS[name].fixed_point


@pytest.mark.parametrize("name", ["truncated-geometric", "staircase"])
def test_one_stage_take_n_or_a_z_of_length_n(name):
    a = construct(None, lam=4, constructor=name, n=3)
    b = construct(Z, lam=4, constructor=name)
    assert a.constructor == name and a.exact and (a.matrix == b.matrix).all()
    with pytest.raises(ValueError, match="needs n"):
        construct(None, lam=4, constructor=name)
    with pytest.raises(ValueError, match="does not match"):
        construct(Z, lam=4, constructor=name, n=4)


def test_discrete_gaussian_needs_delta_and_eps():
    M = construct(None, 1.0, constructor="discrete-gaussian", n=5, delta=1e-4)
    assert M.constructor == "discrete-gaussian" and M.delta == 1e-4
    with pytest.raises(ValueError, match="give delta"):
        construct(None, 1.0, constructor="discrete-gaussian", n=5)
    with pytest.raises(ValueError, match="no exact path"):
        construct(None, lam=2, constructor="discrete-gaussian", n=5, delta=1e-4)


def test_default_is_northwest_and_equals_the_function():
    M = construct(Z, lam=Fraction(3, 2))
    assert M.constructor == "northwest"
    assert (M.matrix == C.northwest_corner(Z, lam=Fraction(3, 2)).matrix).all()


def test_options_are_passed_and_checked():
    M = construct([0.25] * 4, 1.0, constructor="heuristic", selector="max")
    assert M.params["selector"] == "max"
    with pytest.raises(ValueError, match="selector: not an option of constructor 'unfixed'"):
        construct([0.25] * 4, 1.0, constructor="unfixed", selector="max")
    with pytest.raises(ValueError, match="takes no options"):
        construct(None, 1.0, constructor="staircase", n=3, loss="abs")


def test_lp_solver_defaults_by_number_type():
    assert construct(Z, lam=2, constructor="lp").params["solver"] == "exact"
    assert construct([0.5, 0.5], 1.0, constructor="lp").params["solver"] == "highs-ds"
    assert construct([0.5, 0.5], 1.0, constructor="lp", solver="highs-ipm").params["solver"] \
        == "highs-ipm"


def test_unknown_method_names_the_choices():
    with pytest.raises(ValueError, match="unknown 'simplex'; choose from heuristic, lp, "
                                         "northwest, unfixed, truncated-geometric"):
        construct(Z, lam=2, constructor="simplex")


def test_two_stage_needs_z():
    with pytest.raises(ValueError, match="needs a target distribution"):
        construct(None, 1.0, constructor="heuristic", n=3)


def test_a_replaced_function_is_used(monkeypatch):
    calls = []
    real = C.unfixed_optimum
    monkeypatch.setattr(C, "unfixed_optimum", lambda z, eps, **kw: calls.append(kw)
                        or real(z, eps, **kw))
    construct([0.5, 0.5], 1.0, constructor="unfixed")
    assert len(calls) == 1


def test_the_delta_constructors_are_registered_and_return_mechanisms():
    from dpfix.constructors.delta import delta_northwest
    from dpfix.theory.delta import is_approximately_dp

    z, lam, delta = ["1/4", "1/4", "1/2"], Fraction(2), Fraction(1, 10)
    M = construct(z, lam=lam, constructor="delta-northwest", delta=delta)
    assert isinstance(M, Mechanism) and M.constructor == "delta-northwest"
    assert (M.matrix == delta_northwest(z, lam, delta)).all() and M.delta == 0.1
    assert is_approximately_dp(M.matrix, lam, delta) and M.fixed_point_error() == 0
    L = construct(z, lam=lam, constructor="lp", delta=delta)  # Theorem A_delta: the same value
    assert L.count_error() == M.count_error()
    with pytest.raises(ValueError, match="research constructor, not released"):
        privatize_counts(np.zeros(50, dtype=np.int64), 1.0, upper=3,
                         constructor="delta-northwest")
