"""One vocabulary across the library: ``constructor=``, ``solver=``, ``loss=``, ``eps``
for every budget, ``kind=`` for which polytope (spelled ``"RF"``), ``lam=`` and ``n=``
one value or many, ``seed=``, ``keys=``, ``unit=`` a privacy unit, one default per
keyword, and one argument order for ``count_error``; the former names still work for one
release, each with a ``DeprecationWarning`` that names the new one, and a new name given
together with its former one is refused.

The second half walks the signatures of every public function, class and method of the
package (:func:`_public`) and fails on a parameter that deviates from the vocabulary: a
former name, ``over=`` outside the engine, a ``kind=`` or a ``seed=`` not known to mean
what the vocabulary says, a ``unit=`` whose default is no privacy unit, a default that
differs from its keyword's one default. A deviation that is meant is listed with the
reason, the place where the difference is documented."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

import importlib
import inspect
import pkgutil

import dpfix
from dpfix.certify import certify_optimal, exact_optimum, northwest_dual
from dpfix.constructors import construct, lp_optimum, northwest_corner, unfixed_optimum
from dpfix.constructors.delta import loss_matrix, lp_optimum_delta
from dpfix.explore.cases import grid
from dpfix.explore.graph_instances import atlas_graphs
from dpfix.explore.joint import joint_gap_survey
from dpfix.explore.northwest import find_northwest_counterexample, northwest_survey
from dpfix.explore.search import SearchResult
from dpfix.numbers.calibration import (
    analytic_gaussian_delta,
    analytic_gaussian_sigma,
    discrete_gaussian_delta,
    discrete_gaussian_sigma,
)
from dpfix.numbers.deprecation import renamed
from dpfix.release.privatizers import (
    cyclic_gaussian,
    cyclic_laplace,
    hierarchical,
    laplace,
    privatize_distribution,
    privelet,
)
from dpfix.release.bounds import PrivateBound
from dpfix.release.joint import zero_share_rule
from dpfix.release.options import rule_of_thumb_split, split_budget, stage_split
from dpfix.release.pipeline import privatize_counts
from dpfix.release.privatizers.deconvolve import deconvolve
from dpfix.release.privatizers.joint import joint_laplace
from dpfix.theory.mechanism import weight_matrix
from dpfix.theory.metrics import count_error
from helpers import cli

Z = ["1/2", "1/4", "1/4"]
ZF = [0.5, 0.25, 0.25]


def _same(a, b):
    """Equal results: mechanisms by their matrices, certificates by value, else ==."""
    if isinstance(a, SearchResult):
        return a.visited == b.visited and (a.counterexample is b.counterexample is None or
                                           _same(a.counterexample, b.counterexample))
    if hasattr(a, "eps_1") and hasattr(a, "output_histogram"):  # a release: its counts
        return np.array_equal(a.counts, b.counts) and a.eps == b.eps
    if hasattr(a, "edges") and hasattr(a, "nodes"):  # a graph
        return sorted(a.edges) == sorted(b.edges)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if hasattr(a, "matrix") and hasattr(a, "log_matrix"):
        return (a.T == b.T).all() if a.exact else np.array_equal(a.log_matrix, b.log_matrix)
    if hasattr(a, "lower_bound"):
        return (a.value, a.lower_bound, a.optimal) == (b.value, b.lower_bound, b.optimal)
    if hasattr(a, "raw") or hasattr(a, "iterations"):
        return np.array_equal(a.z, b.z)
    if hasattr(a, "northwest_value"):
        return (a.loss, a.n, a.lam, a.gap, a.searched) == (b.loss, b.n, b.lam, b.gap, b.searched)
    if isinstance(a, tuple):
        return all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


#: (function, positional arguments, new keyword, old keyword, value)
ALIASES = [
    (construct, (Z,), {"lam": 2}, "constructor", "method", "heuristic"),
    (construct, (Z,), {"lam": 2, "constructor": "lp"}, "loss", "weights", "squared"),
    (construct, (Z,), {"lam": 2, "constructor": "unfixed"}, "loss", "weights", "squared"),
    (lp_optimum, (Z,), {"lam": 2, "solver": "exact"}, "loss", "weights", "squared"),
    (lp_optimum, (ZF, 1.0), {}, "solver", "method", "highs-ipm"),
    (lp_optimum_delta, (Z, 2, "1/10"), {}, "loss", "weights", "squared"),
    (lp_optimum_delta, (ZF, 2.0, 0.1), {}, "solver", "method", "highs-ds"),
    (loss_matrix, (Z,), {}, "loss", "weights", "squared"),
    (unfixed_optimum, (Z,), {"lam": 2}, "loss", "weights", "squared"),
    (certify_optimal, (northwest_corner(Z, lam=2),), {}, "loss", "weights", "squared"),
    (exact_optimum, (Z, 2), {}, "loss", "weights", "zero-one"),
    (northwest_dual, (Z, 2), {}, "loss", "weights", "squared"),
    (count_error, (np.eye(3, dtype=int), Z), {}, "loss", "weights", "squared"),
    (weight_matrix, (), {"z": Z}, "loss", "weights", "squared"),
    (find_northwest_counterexample, (), {"n_max": 3}, "loss", "weights", "zero-one"),
    (northwest_survey, (), {"n": (3,), "lam": (3,), "denominator_max": 3},
     "loss", "weights", "zero-one"),
    (privatize_distribution, ([5, 3, 2], 1.0), {"secure": False, "seed": 3},
     "privatizer", "method", "laplace"),
    (privatize_distribution, ([5, 3, 2],), {"secure": False, "seed": 3}, "eps", "epsilon", 1.0),
    (deconvolve, ([100, 300, 600], 3), {}, "estimator", "method", "least-squares"),
]
ALIASES += [(f, ([5, 3, 2],), {"secure": False, "seed": 3}, "eps", "epsilon", 1.0)
            for f in (cyclic_laplace, laplace, privelet, hierarchical)]
ALIASES += [(f, (2.0,), {}, "eps", "epsilon", 1.0)
            for f in (analytic_gaussian_delta, discrete_gaussian_delta)]
ALIASES += [(f, (), {"delta": 1e-5}, "eps", "epsilon", 1.0)
            for f in (analytic_gaussian_sigma, discrete_gaussian_sigma)]
ALIASES += [(cyclic_gaussian, ([5, 3, 2],), {"delta": 1e-6, "secure": False, "seed": 3},
             "eps", "epsilon", 1.0)]


def grid_list(**kw):
    """:func:`dpfix.explore.cases.grid` as a list (its instances compared)."""
    return list(grid(**kw))


ALIASES += [
    (privatize_counts, ([0, 1, 2, 3, 3],), {"upper": 3, "seed": 1}, "eps", "epsilon", 1.0),
    (split_budget, (), {"split": 0.25}, "eps", "epsilon", 2.0),
    (stage_split, (), {"fraction": 0.3}, "eps", "epsilon", 0.7),
    (rule_of_thumb_split, (), {}, "eps", "eps_t", 1.0),
    (PrivateBound(0.1).split, (), {}, "eps", "eps_t", 1.0),
    (zero_share_rule, (), {}, "eps", "eps_total", 1.0),
    (certify_optimal, (northwest_corner(Z, lam=2),), {}, "kind", "over", "U"),
    (exact_optimum, (Z, 2), {}, "kind", "over", "U"),
    (atlas_graphs, ([4],), {}, "family", "kind", "trees"),
    (atlas_graphs, (), {}, "n", "n_values", [3, 4]),
    (grid_list, (), {"lam": [2]}, "n", "ns", (2, 3)),
    (grid_list, (), {"n": (2,)}, "lam", "lams", [2, 3]),
    (northwest_survey, ("zero-one",), {"lam": (3,), "denominator_max": 3}, "n", "n_values",
     (3,)),
    (northwest_survey, ("zero-one",), {"n": (3,), "denominator_max": 3}, "lam", "lams", (3,)),
    (find_northwest_counterexample, ("zero-one",), {"n_max": 3}, "lam", "lams", (2,)),
    (joint_gap_survey, (), {"shapes": ((2, 2),)}, "totals", "weights", (1,)),
    (cyclic_laplace, ([5, 3, 2], 1.0), {"secure": False}, "seed", "rng", 3),
    (joint_laplace, ([[30, 0], [0, 10]], 1.0), {"secure": False}, "seed", "rng", 3),
    (privatize_distribution, ([5, 3, 2], 1.0), {"secure": False}, "seed", "rng", 3),
]


@pytest.mark.parametrize("f, args, kw, new, old, value", ALIASES,
                         ids=[f"{a[0].__name__}-{a[4]}" for a in ALIASES])
def test_a_former_keyword_works_warns_and_cannot_be_doubled(f, args, kw, new, old, value):
    expected = f(*args, **kw, **{new: value})
    with pytest.warns(DeprecationWarning, match=f"{old}= is deprecated; use {new}=") as rec:
        got = f(*args, **kw, **{old: value})
    assert _same(got, expected)
    assert rec[0].filename == __file__  # the warning points at the caller's line
    with pytest.raises(TypeError, match=f"got both {new}= and its deprecated name {old}="):
        f(*args, **kw, **{old: value, new: value})


def test_an_unknown_keyword_is_still_refused():
    with pytest.raises(TypeError, match="unexpected keyword argument 'wieghts'"):
        lp_optimum(Z, lam=2, solver="exact", wieghts="abs")


def test_the_new_names_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        construct(Z, lam=2, constructor="lp", loss="squared", solver="exact")
        lp_optimum(ZF, 1.0, solver="highs-ds", loss="abs")
        northwest_corner(Z, lam=2).count_error(Z, "squared")


def test_count_error_takes_z_then_loss_in_both_places():
    M = northwest_corner(Z, lam=2)
    zeta = ["1/3", "1/3", "1/3"]
    assert M.count_error(zeta, "squared") == count_error(M.matrix, zeta, "squared")
    assert M.count_error(loss="squared") == count_error(M.matrix, Z, "squared")


@pytest.mark.parametrize("old_call, new_call", [
    (lambda M: M.count_error("squared"), lambda M: M.count_error(loss="squared")),
    (lambda M: M.count_error("squared", ["1/3"] * 3),
     lambda M: M.count_error(["1/3"] * 3, "squared")),
    (lambda M: M.count_error(lambda d: abs(d) ** 3), lambda M: M.count_error(loss=lambda d:
                                                                          abs(d) ** 3)),
    (lambda M: M.count_error(weight_matrix("abs", Z)),
     lambda M: M.count_error(loss=weight_matrix("abs", Z))),
    (lambda M: M.count_error(weights="squared"), lambda M: M.count_error(loss="squared")),
])
def test_the_former_count_error_order_still_works_and_warns(old_call, new_call):
    M = northwest_corner(Z, lam=2)
    with pytest.warns(DeprecationWarning, match="count_error"):
        got = old_call(M)
    assert got == new_call(M)


@pytest.mark.parametrize("name", ["zero-one", "capped:1", "hinge:1", "sqrt"])
def test_float_count_error_of_a_named_loss_is_that_loss(name):
    """On the float path every named loss is its own: not the squared error."""
    exact = northwest_corner(Z, lam=2).count_error(loss=name)
    floats = northwest_corner(ZF, eps=float(np.log(2))).count_error(loss=name)
    assert floats == pytest.approx(float(exact), rel=1e-9)


def test_renamed_attributes_warn():
    cert = certify_optimal(northwest_corner(Z, lam=2), loss="squared")
    with pytest.warns(DeprecationWarning, match="use Certificate.loss"):
        assert cert.weights == cert.loss == "squared"
    with pytest.warns(DeprecationWarning, match="use Certificate.custom_loss"):
        assert cert.custom_weights is cert.custom_loss is False
    ce = find_northwest_counterexample("zero-one", n_max=3).counterexample
    with pytest.warns(DeprecationWarning, match="use NorthwestCounterexample.loss"):
        assert ce.weights == ce.loss == "zero-one"
    out = laplace([5, 3, 2], 1.0, secure=False, seed=3)
    with pytest.warns(DeprecationWarning, match="use PrivatizedDistribution.privatizer"):
        assert out.method == out.privatizer == "laplace"
    with pytest.warns(DeprecationWarning, match="use PrivatizedDistribution.eps"):
        assert out.epsilon == out.eps == 1.0
    fit = deconvolve([100, 300, 600], 3, estimator="least-squares")
    with pytest.warns(DeprecationWarning, match="use Deconvolution.estimator"):
        assert fit.method == fit.estimator == "least-squares"


def test_the_helper_refuses_a_non_default_value_with_the_old_name():
    with pytest.warns(DeprecationWarning):
        assert renamed("weights", "loss", {"weights": "abs"}, "abs", "abs") == "abs"
    with pytest.raises(TypeError, match="pass loss= only"):
        renamed("weights", "loss", {"weights": "abs"}, Fraction(1), "abs")


@pytest.mark.parametrize("argv, out_words", [
    (["certify", "--n", "4", "--lam", "3"], "loss squared"),
    (["explore", "northwest", "--n-max", "3"], "loss squared"),
])
def test_the_weights_option_is_a_deprecated_name_of_loss(capsys, argv, out_words):
    rc, out, err = cli(capsys, *argv, "--loss", "squared")
    assert rc == 0 and out_words in out and "deprecated" not in err
    rc_old, out_old, err_old = cli(capsys, *argv, "--weights", "squared")
    assert rc_old == 0 and out_words in out_old
    assert "warning: --weights is deprecated; use --loss" in err_old
    strip = [line for line in out.splitlines() if " s" not in line and "seconds" not in line]
    assert strip == [line for line in out_old.splitlines()
                     if " s" not in line and "seconds" not in line]


def test_the_suite_turns_the_librarys_own_deprecations_into_errors():
    """pyproject's ``filterwarnings`` makes a dpfix deprecation an error in every test, so
    a test that still calls a former name fails instead of warning; the category is a
    :class:`DeprecationWarning` (filters on that class keep applying)."""
    from dpfix.numbers.deprecation import DpfixDeprecationWarning

    assert issubclass(DpfixDeprecationWarning, DeprecationWarning)
    M = northwest_corner(Z, lam=2)
    with pytest.raises(DpfixDeprecationWarning, match="the loss comes after z"):
        M.count_error("abs", Z)
    with pytest.raises(DpfixDeprecationWarning, match="weights= is deprecated"):
        renamed("weights", "loss", {"weights": "squared"}, "abs", "abs", where="f")
