"""dpfix.certify: exact certificates pass their own re-check, tampered ones fail, the
lower bound never exceeds the exact LP optimum, and the northwest corner is certified
optimal for every convex loss (Theorem A of docs/optimum_of_F.md)."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.certify import (
    CertificateError,
    certify_optimal,
    certify_universal,
    cone_minimum,
    exact_optimum,
    northwest_dual,
)
from dpfix.constructors import heuristic, lp_optimum, northwest_corner, unfixed_optimum
from dpfix.explore.northwest import find_northwest_counterexample
from dpfix.explore.strategies import lams, targets
from dpfix.numbers.exact import ExactnessError
from dpfix.theory.mechanism import weight_matrix
from dpfix.theory.scales import pattern_from_index, scale


def exact_case(n_min=2, n_max=6, zeros=True):
    """A rational ``z`` (zeros at the ends and inside allowed) and a rational ``lam > 1``."""
    return st.tuples(targets(n_min=n_min, n_max=n_max, zeros=zeros), lams())


CONVEX = ("abs", "squared", "hinge:1", "hinge:-1", "hinge:0")
NONCONVEX = ("zero-one", "capped:1", "capped:2", "sqrt")


def _opt(z, lam, weights, fixed=True):
    W = weight_matrix(weights, z, exact=True)
    return lp_optimum(z, lam=lam, loss=W, solver="exact", fixed=fixed).params["objective"]


@settings(max_examples=60)
@given(exact_case(n_max=8), st.sampled_from(CONVEX))
def test_northwest_certificate_is_optimal_and_checks(case, weights):
    z, lam = case
    cert = certify_optimal(northwest_corner(z, lam=lam), z, lam, weights, dual="explicit")
    assert cert.optimal and cert.gap == 0 and cert.dual == "northwest"
    assert cert.check() is cert


@settings(max_examples=30)
@given(exact_case(n_max=6), st.sampled_from(("abs", "squared")))
def test_unfixed_certificate_over_U(case, weights):
    z, lam = case
    M = unfixed_optimum(z, lam=lam, loss=weights)
    cert = certify_optimal(M, z, lam, weights, kind="U", dual="explicit")
    assert cert.optimal and cert.dual == "unfixed" and not any(cert.v)
    cert.check()


@settings(max_examples=40)
@given(exact_case(n_max=6), st.integers(0, 5), st.integers(1, 5))
def test_perturbed_dual_fails_check(case, where, size):
    z, lam = case
    n = len(z)
    cert = certify_optimal(northwest_corner(z, lam=lam), z, lam, "abs", dual="explicit")
    delta = Fraction(size, 1000)
    u = cert.u.copy()
    u[where % n] += delta  # a larger u_i breaks a tight column (every T_ij > 0 on a used column)
    bad = replace(cert, u=u, lower_bound=cert.lower_bound + delta, gap=cert.gap - delta)
    with pytest.raises(CertificateError, match="infeasible"):
        bad.check()
    j = max(range(n), key=lambda k: z[k])  # z_j > 0: column j is used, so v_j is tight
    v = cert.v.copy()
    v[j] += delta
    shift = delta * z[j]
    bad = replace(cert, v=v, lower_bound=cert.lower_bound + shift, gap=cert.gap - shift)
    with pytest.raises(CertificateError, match="infeasible"):
        bad.check()


def test_tampered_fields_fail_check():
    z = ["1/4", "1/8", "1/8", "1/2"]
    cert = certify_optimal(northwest_corner(z, lam=2), z, 2, "squared")
    cert.check()
    for change, match in ((dict(value=cert.value + Fraction(1, 7)), "value"),
                          (dict(gap=Fraction(1, 7)), "gap"),
                          (dict(lower_bound=cert.lower_bound - 1), "lower_bound"),
                          (dict(optimal=False), "optimal"),
                          (dict(lam=Fraction(3, 2)), "eps-DP"),
                          (dict(kind="X"), "kind")):
        with pytest.raises(CertificateError, match=match):
            replace(cert, **change).check()
    T = cert.T.copy()
    T[0, 0], T[0, 1] = T[0, 0] + Fraction(1, 100), T[0, 1] - Fraction(1, 100)
    with pytest.raises(CertificateError):
        replace(cert, T=T).check()


@settings(max_examples=40)
@given(exact_case(n_max=5), st.sampled_from(CONVEX + NONCONVEX),
       st.sampled_from(("max", "min", "sandwich")))
def test_lower_bound_never_exceeds_the_exact_lp_optimum(case, weights, selector):
    z, lam = case
    best = _opt(z, lam, weights)
    T = heuristic(z, lam=lam, selector=selector)
    explicit = certify_optimal(T, z, lam, weights, dual="explicit")
    explicit.check()
    assert explicit.lower_bound <= best <= explicit.value
    auto = certify_optimal(T, z, lam, weights)  # n <= 10: the exact dual LP closes the gap
    auto.check()
    assert auto.lower_bound == best and auto.gap == auto.value - best
    assert auto.optimal == (auto.value == best)


@settings(max_examples=30)
@given(exact_case(n_max=5), st.sampled_from(NONCONVEX + ("abs",)))
def test_exact_optimum_equals_the_exact_lp(case, weights):
    z, lam = case
    opt = exact_optimum(z, lam, weights)
    opt.check()
    assert opt.optimal and opt.value == _opt(z, lam, weights)
    opt_u = exact_optimum(z, lam, weights, kind="U")
    opt_u.check()
    assert opt_u.value == _opt(z, lam, weights, fixed=False) <= opt.value


def test_suboptimal_heuristic_is_not_optimal_with_a_positive_gap():
    z = ["1/4", "1/8", "1/8", "1/2"]
    T = heuristic(z, lam=2, selector="min")
    best = _opt(z, 2, "abs")
    for dual in ("explicit", "auto", "lp"):
        cert = certify_optimal(T, z, 2, "abs", dual=dual)
        cert.check()
        assert not cert.optimal and cert.gap > 0
        assert cert.lower_bound == best  # abs is convex: the northwest dual is the optimum


@settings(max_examples=30)
@given(exact_case(n_max=6))
def test_heuristic_optimal_flag_agrees_with_the_lp(case):
    z, lam = case
    T = heuristic(z, lam=lam, selector="max")
    cert = certify_optimal(T, z, lam, "abs", dual="explicit").check()
    assert cert.optimal == (cert.value == _opt(z, lam, "abs"))
    assert cert.optimal or cert.gap > 0


@settings(max_examples=20)
@given(exact_case(n_max=6))
def test_certify_universal(case):
    z, lam = case
    uc = certify_universal(z, lam)
    assert uc.optimal and len(uc.hinges) == 2 * len(z) - 1
    assert uc.check() is uc


def test_universal_tampered_fails():
    uc = certify_universal(["1/2", "0", "1/4", "1/4"], 2)
    with pytest.raises(CertificateError, match="hinges"):
        replace(uc, hinges=uc.hinges[1:]).check()
    with pytest.raises(CertificateError, match="optimal"):
        replace(uc, optimal=False).check()


@settings(max_examples=40)
@given(st.lists(st.integers(-5, 5), min_size=1, max_size=7),
       st.sampled_from((Fraction(3, 2), Fraction(2), Fraction(5, 2))))
def test_cone_minimum_is_the_minimum_over_every_scale(g, lam):
    n = len(g)
    best, pattern = cone_minimum(g, lam)
    values = []
    for m in range(2 ** (n - 1)):
        p = pattern_from_index(m, n)
        s = scale(p, lam)
        values.append(sum(a * b for a, b in zip(g, s / s[0], strict=True)))  # h_0 = 0
    assert best == min(values)
    s = scale(pattern, lam)
    assert sum(a * b for a, b in zip(g, s / s[0], strict=True)) == best


def test_northwest_dual_value_is_the_northwest_count_error():
    z = [Fraction(v, 15) for v in (0, 3, 5, 0, 7)]  # zeros at an end and inside
    u, v = northwest_dual(z, 3, "squared")
    assert sum(u) + np.dot(z, v) == northwest_corner(z, lam=3).count_error(loss="squared")


def test_counterexample_search():
    assert not find_northwest_counterexample("abs", n_max=3, denominator_max=3)
    ce = find_northwest_counterexample("zero-one", n_max=3).counterexample
    assert ce is not None and ce.n == 3 and ce.gap > 0
    assert (ce.lam, list(ce.z)) == (3, [Fraction(1, 4), Fraction(1, 4), Fraction(1, 2)])
    assert (ce.northwest_value, ce.optimum) == (Fraction(85, 252), Fraction(1, 3))
    assert _opt(list(ce.z), ce.lam, "zero-one") == ce.optimum  # the n^2-variable exact LP
    assert ce.gap == ce.northwest_value - ce.optimum
    ce.certificate.check()
    assert (ce.certificate.T == ce.optimum_T).all() and "northwest corner" in str(ce)


def test_inputs_refused():
    z = ["1/2", "1/2"]
    T = northwest_corner(z, lam=2)
    with pytest.raises(ExactnessError):
        certify_optimal(T.matrix.astype(float), z, 2)
    with pytest.raises(ExactnessError):
        certify_optimal(T, [0.5, 0.5], 2)
    with pytest.raises(ExactnessError):
        certify_optimal(T, z, 2.0)
    with pytest.raises(ExactnessError):
        certify_optimal(T, z, 2, loss=lambda d: 0.5 * abs(d))
    with pytest.raises(ExactnessError):
        certify_optimal(northwest_corner([0.5, 0.5], 1.0), z, 2)
    with pytest.raises(ValueError, match="not eps-DP"):
        certify_optimal([[1, 0], [0, 1]], z, 2)
    with pytest.raises(ValueError, match="z T"):
        certify_optimal([["2/3", "1/3"], ["2/3", "1/3"]], z, 2)
    with pytest.raises(ValueError, match="kind"):
        certify_optimal(T, kind="V")
    assert certify_optimal(T, loss=[[0, 1], [1, 0]]).optimal  # z, lam from the mechanism


def test_callable_and_matrix_weights_agree():
    z = ["1/6", "1/3", "0", "1/2"]
    T = northwest_corner(z, lam="5/2")
    a = certify_optimal(T, z, "5/2", lambda d: Fraction(abs(d)) ** 3)
    b = certify_optimal(T, z, "5/2", weight_matrix(lambda d: abs(d) ** 3, z, exact=True))
    assert a.optimal and b.optimal and a.value == b.value


def test_highs_guided_bound_beyond_the_exact_lp():
    z = [Fraction(1, 7)] * 7
    T = northwest_corner(z, lam=3)
    best = exact_optimum(z, 3, "zero-one").value
    cert = certify_optimal(T, z, 3, "zero-one", lp_max_n=0).check()
    assert cert.dual in ("highs", "repaired") and not cert.optimal
    assert best - Fraction(1, 10**6) <= cert.lower_bound <= best < cert.value
    assert cert.lower_bound >= cert.details["explicit_bound"]


def test_remap_and_survey():
    from dpfix.explore.northwest import northwest_survey, remap_of

    z = ["1/4", "0", "1/4", "1/2"]
    R = remap_of(northwest_corner(z, lam=3).matrix, 3)
    assert all(x >= 0 for x in R.flat) and all(sum(r) == 1 for r in R)
    s = northwest_survey("abs", n=(3,), lam=(2,), denominator_max=3)
    assert s.visited > 0 and s.not_optimal == 0 and not s  # Theorem A
    s = northwest_survey("capped:2", n=(4,), lam=(3,), denominator_max=4)
    assert s.not_optimal > 0 and s.max_gap > 0 and s


def _cli(argv):
    import argparse

    from dpfix.cli import certify as command

    parser = argparse.ArgumentParser()
    command.add_parser(parser.add_subparsers(dest="command"))
    return command.run(parser.parse_args(["certify", *argv]))


def test_cli(capsys):
    assert _cli(["--n", "12", "--lam", "3/2", "--loss", "squared"]) == 0
    out = capsys.readouterr().out
    assert "OPTIMAL over F" in out and "northwest dual" in out and "time:" in out
    assert _cli(["--z", "1/4", "1/8", "1/8", "1/2", "--constructor", "heuristic",
                 "--selector", "min"]) == 0
    out = capsys.readouterr().out
    assert "NOT proved optimal" in out and "23/728" in out
    assert _cli(["--n", "5", "--constructor", "unfixed"]) == 0
    assert "OPTIMAL over U" in capsys.readouterr().out
    assert _cli(["--z", "zero", "--n", "6", "--universal"]) == 0
    assert "every convex loss" in capsys.readouterr().out
    with pytest.raises(ValueError, match="over U"):
        _cli(["--constructor", "unfixed", "--over", "F"])
    with pytest.raises(ValueError, match="lam"):
        _cli(["--lam", "1"])
    assert _cli(["--n", "3", "--lam", "1.5"]) == 0  # a decimal string is exact: 3/2
    assert "lam = 3/2" in capsys.readouterr().out
