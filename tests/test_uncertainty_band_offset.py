"""The distribution band through the default post-processing ``isotonic-cdf-offset``
(docs/uncertainty.md section 3.2, Proposition 2): the isotonic fit less the public offset
``s`` stays within ``sup|F - F*| + |s|`` of a monotone ``F*``, so the band is centred on the
target ``z`` with half-width ``c / N + |s|``; ``isotonic-cdf`` keeps ``c / N``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import isotonic_regression

from dpfix.release.pipeline import privatize_counts
from dpfix.release.privatizers.postprocess import cdf_offset, cycle_offset, isotonic_cdf_offset
from dpfix.release.uncertainty import distribution_band, max_difference_bound
from dpfix.release.uncertainty.band import FLOAT_SLACK, cdf_band
from dpfix.release.uncertainty.columns import ColumnUncertainty

shares = st.lists(st.integers(0, 50), min_size=2, max_size=30).filter(lambda v: sum(v) > 0)


@given(shares, st.lists(st.floats(-2.0, 2.0), min_size=30, max_size=30))
def test_the_offset_fit_stays_within_the_noise_plus_the_offset(weights, noise):
    """Any noisy ``F`` of a monotone ``F*`` in ``[0, 1]``: ``clip(iso(F) - c, 0, 1)`` with
    ``c = cycle_offset(F)`` is within ``sup|F - F*| + |c|`` of ``F*`` at every point."""
    w = np.array(weights, dtype=float)
    target = np.cumsum(w)[:-1] / w.sum()  # F*_0 .. F*_(n-2), non-decreasing in [0, 1]
    F = target + np.array(noise[:target.size])
    c = cycle_offset(F)
    fit = np.clip(isotonic_regression(F).x - c, 0.0, 1.0)
    assert np.abs(fit - target).max() <= np.abs(F - target).max() + abs(c) + 1e-12


@given(shares, st.integers(0, 2**32 - 1), st.floats(0.2, 20.0))
def test_the_cyclic_release_through_the_offset_fit_stays_in_the_band(eta, seed, scale):
    """The cyclic mechanism's noise (``sup|F - F*| = W / N``): the target of
    ``isotonic-cdf-offset`` is within ``W / N + |s|`` of the true CDF, ``s`` as
    ``cdf_offset(V / N)`` recomputes it from ``V``, which reproduces ``z`` bit for bit."""
    eta = np.array(eta)
    N = int(eta.sum())
    X = np.random.default_rng(seed).laplace(0, scale, size=eta.size)
    V = eta + X - np.roll(X, -1)
    z = isotonic_cdf_offset(V / N)
    s = cdf_offset(V / N)
    v = V / N
    v = v + (1.0 - v.sum()) / v.size
    G = np.clip(isotonic_regression(np.cumsum(v)[:-1]).x - s, 0.0, 1.0)
    assert np.array_equal(np.diff(np.concatenate([[0.0], G, [1.0]])), z)
    W = np.abs(X[0] - X[1:]).max()
    F = np.cumsum(eta) / N
    assert np.abs(np.cumsum(z) - F).max() <= W / N + abs(s) + 1e-12


def _sparse_tail(seed: int = 0):
    """A release of 300 rows with a sparse geometric tail at eps 0.5: the partial sums rise
    above 1, so the offset is not 0."""
    c = np.random.default_rng(5).geometric(0.2, size=300) - 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return c, privatize_counts(c, 0.5, upper=30, seed=seed)


def test_a_default_release_is_banded_around_its_target_with_the_offset():
    c, r = _sparse_tail()
    s1 = r.stage1
    assert s1.postprocess == "isotonic-cdf-offset"
    b = distribution_band(r, 0.05)
    s = cdf_offset(np.asarray(s1.raw, dtype=float) / s1.N)
    assert b.centre == "z" and s != 0 and b.shift == s
    bound = max_difference_bound(31, 0.05, noise="laplace", scale=s1.noise["scale"])
    assert b.half_width == bound / r.N + abs(s) + FLOAT_SLACK
    F = np.cumsum(r.z)
    assert np.array_equal(b.lower[:-1], np.clip(F - b.half_width, 0, 1)[:-1])
    assert b.covers(np.bincount(np.minimum(c, 30), minlength=31))
    d = b.describe()
    assert d["centre"] == "z" and d["shift"] == s and "offset s =" in d["method"]
    assert ColumnUncertainty.of(r).band[4] == s


def test_the_offset_band_covers_the_seeded_releases():
    """20 seeded releases of the sparse tail, every one's offset band covering the truth."""
    x = None
    for seed in range(20):
        c, r = _sparse_tail(seed)
        x = np.bincount(np.minimum(c, 30), minlength=31)
        b = distribution_band(r, 0.05)
        assert b.centre == "z" and b.covers(x), seed
    assert x is not None


def test_isotonic_cdf_keeps_the_band_without_a_shift():
    c = np.random.default_rng(5).geometric(0.2, size=300) - 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = privatize_counts(c, 0.5, upper=30, seed=0, postprocess="isotonic-cdf")
    b = distribution_band(r, 0.05)
    bound = max_difference_bound(31, 0.05, noise="laplace", scale=r.stage1.noise["scale"])
    assert b.centre == "z" and b.shift == 0.0
    assert b.half_width == bound / r.N + FLOAT_SLACK
    F = np.cumsum(r.z)
    assert np.array_equal(b.upper[:-1], np.clip(F + b.half_width, 0, 1)[:-1])
    assert "offset" not in b.method


def test_other_post_processings_stay_around_the_release():
    c = np.random.default_rng(5).geometric(0.2, size=300) - 1
    r = privatize_counts(c, 1.0, upper=30, seed=0, postprocess="project-simplex")
    b = distribution_band(r, 0.05)
    assert b.centre == "V" and b.shift == 0.0


@pytest.mark.parametrize("kw,match", [({"shift": float("nan")}, "^shift: must be a finite"),
                                      ({"shift": "0.1"}, "^shift: must be a finite"),
                                      ({"shift": 0.1, "centred_on": "V"},
                                       "^shift: only a band centred on the target z")])
def test_a_bad_shift_is_one_line(kw, match):
    with pytest.raises(ValueError, match=match):
        cdf_band([0.5, 0.5], 0.05, N=10, noise="laplace", scale=1.0, **kw)
