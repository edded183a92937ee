"""The float checks bite: every constructor at tiny and large eps, the stated
fixed-point bound, and the float-path verify script.

- Every registry constructor at eps in {1e-9, 1e-6, 1e-3, 50} returns a mechanism
  that passes its own ``check()`` and ``is_dp()``, or raises a clean ValueError.
- ``z T = z`` is checked in absolute terms on the float path: the bound is
  ``|(z T)_j - z_j| <= FLOAT_RTOL`` for every ``j`` (stated in
  ``Mechanism.fixed_point_error``), tested at the edge, also where ``z_j`` is
  ``1e-31``; ``fixed_point_error(relative=True)`` measures the relative error there.
"""

from fractions import Fraction

import numpy as np
import pytest

from dpfix.constructors import CONSTRUCTORS, construct
from dpfix.theory.mechanism import FLOAT_RTOL, Mechanism

EPS = [1e-9, 1e-6, 1e-3, 50.0]


def _z(n, seed=0):
    z = np.random.default_rng(seed).dirichlet(np.ones(n))
    return z / z.sum()


def _outcome(name, eps, n):
    opts = {"delta": 1e-6} if name == "discrete-gaussian" else {}
    try:
        m = construct(_z(n), eps, constructor=name, **opts)
    except ValueError as exc:
        assert str(exc), "a ValueError with an empty message"
        return None
    return m


@pytest.mark.parametrize("eps", EPS)
@pytest.mark.parametrize("name", list(CONSTRUCTORS))
def test_constructor_passes_its_own_check_or_raises_valueerror(name, eps):
    ns = (6,) if name in ("lp", "heuristic") else (2, 6, 51)  # the heuristic's exact
    for n in ns:                                            # fallback is slow at n = 51
        m = _outcome(name, eps, n)
        if m is None:
            continue
        assert m.constructor == name and m.n == n
        m.check()
        if m.delta:
            assert m.params["delta_achieved"] <= m.delta
        else:
            assert m.is_dp() and m.privacy_level() <= m.eps * (1 + FLOAT_RTOL)


@pytest.mark.parametrize("n", [2, 51])
def test_truncated_geometric_51_at_1e_9_passes_is_dp(n):
    # the float logs of T must be exact enough for T to pass its own is_dp() at eps = 1e-9
    m = construct(None, 1e-9, constructor="truncated-geometric", n=n)
    assert m.is_dp() and m.is_dp(1e-9, rtol=0.0)
    m.check()


# ---------------------------------------------------------------- fixed point
def _two_by_two(z1, error):
    """A float 2 x 2 mechanism with target z = (1 - z1, z1) and (z T)_1 - z1 = error."""
    z0 = 1 - z1
    b = 0.5
    a = (z1 * b + error) / z0  # (z T)_1 = z0 a + z1 (1 - b) = z1 + error
    T = np.array([[1 - a, a], [b, 1 - b]])
    return Mechanism.from_matrix(T, eps=200.0, fixed_point=np.array([z0, z1])), np.array([z0, z1])


@pytest.mark.parametrize("z1", [1e-31, 1e-12, 0.3])
def test_fixed_point_bound_is_absolute_and_tight(z1):
    inside, z = _two_by_two(z1, 0.5 * FLOAT_RTOL)
    assert inside.fixed_point_error() == pytest.approx(0.5 * FLOAT_RTOL, rel=1e-3)
    inside.check()
    assert inside.in_F()
    outside, _ = _two_by_two(z1, 2 * FLOAT_RTOL)
    assert not outside.in_F()
    with pytest.raises(ValueError, match=r"z T != z"):
        outside.check()
    # the relative error: 5e-10 / z1 (5e21 at z1 = 1e-31), measured, not hidden
    rel = inside.fixed_point_error(relative=True)
    assert rel == pytest.approx(0.5 * FLOAT_RTOL / z1, rel=1e-3)


def test_relative_fixed_point_error_exact_and_zero_entries():
    T = [[Fraction(2, 3), Fraction(1, 3)], [Fraction(1, 3), Fraction(2, 3)]]
    m = Mechanism.from_matrix(T, lam=2)
    assert m.fixed_point_error([Fraction(1, 2)] * 2, relative=True) == 0
    # z T = (2/3, 1/3) for z = (1, 0): infinite where z_j = 0 < (z T)_j
    assert m.fixed_point_error([1, 0], relative=True) == float("inf")
    # z T = (7/12, 5/12) for z = (3/4, 1/4): errors 1/6 and 1/6, relative 2/9 and 2/3
    assert m.fixed_point_error([Fraction(3, 4), Fraction(1, 4)], relative=True) == Fraction(2, 3)


@pytest.mark.parametrize("method", ["northwest", "heuristic", "unfixed"])
def test_constructors_keep_tiny_targets_far_inside_the_bound(method):
    z = _z(40, seed=3)
    z[[3, 17, 29]] = [1e-31, 1e-20, 1e-12]
    z /= z.sum()
    for eps in (0.1, 1.0, 5.0):
        m = construct(z, eps, constructor=method)
        if m.fixed_point is not None:
            assert m.fixed_point_error() <= 1e-12  # measured about 1e-15
