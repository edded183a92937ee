"""One builder for the (eps, delta) polytopes (:func:`dpfix.theory.delta.delta_polytope`):
the subset form is the one type of ``U(n, lam, delta)`` and ``F(n, lam, z, delta)``, the
named lifted and representation forms are the builder's, and its input is checked once."""

from __future__ import annotations

from fractions import Fraction

import pytest

from dpfix.theory import delta as forms
from dpfix.theory.polytopes import F, Polytope, U

Z = [Fraction(1, 3)] * 3


def _rows(P):
    return [(sorted(a.items()), b) for a, b in P.hrep.ub], \
        [(sorted(a.items()), b) for a, b in P.hrep.eq]


@pytest.mark.parametrize("kind, z", [("U", None), ("F", Z)])
def test_the_subset_form_is_the_polytope_of_U_and_F(kind, z):
    P = forms.delta_polytope(kind, 3, 2, z, "1/10")
    Q = U(3, 2, "1/10") if z is None else F(3, 2, z, "1/10")
    assert type(P) is Polytope and repr(P) == repr(Q) and _rows(P) == _rows(Q)
    assert P.symmetry is not None and P.delta == Fraction(1, 10)


@pytest.mark.parametrize("named, kind, z, form", [
    (lambda: forms.U_lifted(3, 2, "1/10"), "U", None, "lifted"),
    (lambda: forms.F_lifted(3, 2, Z, "1/10"), "F", Z, "lifted"),
    (lambda: forms.RU_delta(2, 2, "1/10"), "U", None, "representation"),
    (lambda: forms.RF_delta(2, 2, ["1/2", "1/2"], "1/10"), "F", ["1/2", "1/2"],
     "representation"),
])
def test_the_named_forms_are_the_builders(named, kind, z, form):
    P = named()
    n = P.n
    Q = forms.delta_polytope(kind, n, 2, z, "1/10", form=form)
    assert isinstance(P, forms.DeltaPolytope) and P.form == Q.form == form
    assert (P.name, P.shape, repr(P)) == (Q.name, Q.shape, repr(Q))
    assert _rows(P) == _rows(Q)
    assert P.name == (kind if form == "lifted" else "R_" + kind)


@pytest.mark.parametrize("args, kwargs, message", [
    (("V", 2, 2), {}, "kind: 'U' or 'F'"),
    (("U", 2, 2), {"form": "dense"}, "form: one of subset, lifted, representation"),
    (("U", 2, 2, ["1/2", "1/2"]), {}, "z: F takes a target z, U none"),
    (("F", 2, 2), {"form": "lifted"}, "z: F takes a target z, U none"),
    (("U", 1, 2), {"form": "lifted"}, "n"),
    (("U", 2, 2, None, 1), {"form": "representation"}, "delta"),
])
def test_the_builder_checks_its_input(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        forms.delta_polytope(*args, **kwargs)


def test_the_lifted_form_projects_onto_the_subset_form():
    lifted = forms.delta_polytope("U", 2, 2, delta="1/10", form="lifted")
    subset = forms.delta_polytope("U", 2, 2, delta="1/10")
    projected = {tuple(forms.project(X).ravel()) for X in lifted.vertices()
                 if (forms.lift(forms.project(X), 2) == X).all()}
    assert {tuple(V.ravel()) for V in subset.vertices()} <= projected
