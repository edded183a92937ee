"""Forged certificates are refused by :meth:`dpfix.certify.Certificate.check`.

Each forgery below keeps every identity the check used to test by itself
(``value == <W, T>``, dual feasibility of ``(u, v)`` for the stored ``W``,
``lower_bound == sum u + z . v``, ``gap``), so it is refused only because the
check ties ``W`` to ``z`` and the loss, ``optimal`` to a bool and every number
to an exact value. Genuine certificates (certify_optimal, certify_universal,
``dpfix certify``) still pass.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from dpfix.certify import CertificateError, certify_optimal, certify_universal
from dpfix.constructors import northwest_corner, unfixed_optimum
from dpfix.theory.mechanism import weight_matrix

Z = [Fraction(1, 4), Fraction(1, 8), Fraction(1, 8), Fraction(1, 2)]
LAM = Fraction(2)


def _zeros(shape):
    return np.full(shape, Fraction(0), dtype=object)


@pytest.fixture(scope="module")
def cert():
    c = certify_optimal(northwest_corner(Z, lam=LAM), Z, LAM, "abs").check()
    assert c.optimal and c.value > 0
    return c


def test_zero_weights_with_a_zero_dual_point_are_refused(cert):
    n = len(Z)
    forged = replace(cert, W=_zeros((n, n)), u=_zeros(n), v=_zeros(n), value=Fraction(0),
                     lower_bound=Fraction(0), gap=Fraction(0), optimal=True)
    with pytest.raises(CertificateError, match="W is not the loss abs"):
        forged.check()
    # the same numbers stated as custom weights are a true (trivial) certificate, and say so
    honest = replace(forged, loss="custom matrix").check()
    assert "loss = custom matrix, the stored W" in str(honest)


def test_squared_weights_labelled_abs_are_refused():
    squared = certify_optimal(northwest_corner(Z, lam=LAM), Z, LAM, "squared").check()
    with pytest.raises(CertificateError, match="W is not the loss abs"):
        replace(squared, loss="abs").check()


def test_optimal_must_be_a_bool(cert):
    for flag in ("no", "yes", 1, np.True_):
        with pytest.raises(CertificateError, match="optimal must be a bool"):
            replace(cert, optimal=flag).check()


def test_a_wrong_z_is_refused():
    # over U the target enters only through W: a z swapped under the same W, T, u
    # keeps every other identity
    T = unfixed_optimum(Z, lam=LAM)
    over_u = certify_optimal(T, Z, LAM, "abs", kind="U").check()
    assert over_u.optimal
    with pytest.raises(CertificateError, match="W is not the loss abs"):
        replace(over_u, z=np.array(Z[::-1], dtype=object)).check()
    with pytest.raises(CertificateError, match="probability vector"):
        replace(over_u, z=np.array([Fraction(1, 2)] * 4, dtype=object)).check()


def test_a_tampered_value_is_refused(cert):
    # W + c and u + c move value and lower bound by n c together: still feasible, tight
    n, c = len(Z), Fraction(5, 3)
    forged = replace(cert, W=cert.W + c, u=cert.u + c, value=cert.value + n * c,
                     lower_bound=cert.lower_bound + n * c)
    with pytest.raises(CertificateError, match="W is not the loss abs"):
        forged.check()


def test_inexact_numbers_are_a_certificate_error(cert):
    for change in (dict(lam=2.0), dict(value=float(cert.value)), dict(z=np.array(
            [float(x) for x in Z]))):
        with pytest.raises(CertificateError, match="not exact"):
            replace(cert, **change).check()


def test_an_unknown_weights_label_is_refused(cert):
    with pytest.raises(CertificateError, match="neither a loss name"):
        replace(cert, loss="matrix").check()


def test_a_callable_named_like_a_loss_is_custom():
    def cube(d):
        return Fraction(abs(d)) ** 3

    cube.__name__ = "abs"
    c = certify_optimal(northwest_corner(Z, lam=LAM), Z, LAM, cube).check()
    assert c.custom_loss and c.loss == "custom f abs"
    assert "loss = custom f abs, the stored W" in str(c)
    with pytest.raises(CertificateError, match="W is not the loss abs"):
        replace(c, loss="abs").check()


def test_genuine_certificates_pass():
    T = northwest_corner(Z, lam=LAM)
    for weights in ("abs", "squared", "hinge:1", "capped:2", "zero-one", "sqrt"):
        c = certify_optimal(T, Z, LAM, weights).check()
        assert not c.custom_loss and (c.W == weight_matrix(weights, Z, exact=True)).all()
    W = weight_matrix("abs", Z, exact=True)
    assert certify_optimal(T, Z, LAM, W).check().custom_loss
    uc = certify_universal(Z, LAM).check()
    assert uc.optimal
    with pytest.raises(CertificateError, match="optimal must be a bool"):
        replace(uc, optimal="yes").check()


def test_cli_certify_checks_genuine_certificates(capsys):
    from dpfix.cli import main

    assert main(["certify", "--n", "5", "--lam", "3/2", "--loss", "squared"]) == 0
    assert "OPTIMAL over F" in capsys.readouterr().out
    assert main(["certify", "--n", "4", "--universal"]) == 0
    assert "every convex loss" in capsys.readouterr().out
