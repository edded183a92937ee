"""``dpfix verify --every-lam`` at the irrational breakpoints: the checks over Q(lam).

Each check of ``every_lam`` runs at one irrational breakpoint exactly over ``Q(lam)``
and fails there when its statement is made wrong; the helpers made generic over
``Q(lam)`` give at a rational lam, held as a degree-1 algebraic number, the answers
they give at the Fraction.
"""

from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("PyNormaliz")

from dpfix.certify import certify_optimal, certify_universal  # noqa: E402
from dpfix.certify.cone import _infeasible_columns  # noqa: E402
from dpfix.constructors import heuristic, northwest_corner, unfixed_optimum  # noqa: E402
from dpfix.explore.cases import polytope, standard_z  # noqa: E402
from dpfix.explore.verification import (  # noqa: E402
    _exact_key,
    _pieces,
    every_lam_cases,
    find_checks_dir,
    load_checks,
)
from dpfix.numbers.algebraic import algebraic  # noqa: E402
from dpfix.numbers.exact import nullspace, rank  # noqa: E402
from dpfix.theory.enumeration import best_values  # noqa: E402
from dpfix.theory.mechanism import Mechanism  # noqa: E402
from dpfix.theory.polytopes import RF, F  # noqa: E402
from dpfix.theory.representation import (  # noqa: E402
    decompose,
    has_movement_in_support,
    is_psi_affinely_simplified,
    psi_map,
)

#: A breakpoint of F(3, geometric z) and R_F(3, geometric z): a root of 2 lam^2 + lam - 4.
WALL = algebraic("2*x^2 + x - 4", 1.186)
PHI = algebraic("x^2 - x - 1", 1.618)
#: lam = 2 as an element of the field Q given by x - 2 (the algebraic code path).
TWO = algebraic("x - 2", 2)
GEOMETRIC = standard_z(3)["geometric"]


def _check(name: str):
    (module,) = [m for n, m in load_checks(find_checks_dir()) if n == name]
    return module


# -- every_lam_cases ------------------------------------------------------------------
def test_every_lam_cases_take_every_breakpoint():
    cases, skipped = every_lam_cases("F", 3)
    assert skipped == []
    for name, z in standard_z(3).items():
        at = [_exact_key(lam) for lam, zn, _ in cases if zn == name]
        assert len(at) == len(set(at))  # each (lam, z) once
        for kind in ("F", "RF"):
            for p in _pieces(kind, 3, tuple(z)):  # chambers(kind, 3, z), computed once
                want = p.lo if p.is_breakpoint else p.sample
                assert _exact_key(want) in at, (kind, name, want)
    irrational = {str(lam) for lam, _, _ in cases if not isinstance(lam, Fraction)}
    assert len(irrational) == 5 and str(WALL) in irrational
    for kind, n in (("F", 2), ("U", 2), ("U", 3)):
        assert every_lam_cases(kind, n)[1] == []


def test_without_normaliz_the_irrational_breakpoints_are_named_as_skipped(monkeypatch):
    import dpfix.theory.enumeration as en

    monkeypatch.setattr(en, "normaliz_available", lambda: False)
    cases, skipped = every_lam_cases("F", 3)
    assert len(cases) == 26 and len(skipped) == 7
    assert all("needs dpfix[enumeration]" in s for s in skipped)
    assert all(isinstance(lam, Fraction) for lam, _, _ in cases)


def test_verify_every_lam_names_the_irrational_breakpoints(capsys):
    from dpfix.cli import main

    assert main(["verify", "--every-lam", "--n", "3", "--only", "Corollary 2"]) == 0
    out = capsys.readouterr().out
    assert "1 passed, 0 failed" in out
    assert "31 (lam, z) at every chamber and every breakpoint" in out
    assert "the 5 irrational breakpoints (exact over Q(lam))" in out
    assert "root of 6*x^3 + 5*x^2 - 14*x - 4" in out and "not at" not in out


# -- each check at an irrational breakpoint, and failing on a wrong statement ------------
def _nonoptimal_vertex(n, lam, z):
    """A vertex of F that is not optimal for the abs loss (where the northwest corner is)."""
    from dpfix.theory.mechanism import weight_matrix

    _, V = polytope("F", n, lam, z).maximize(weight_matrix("abs", z, exact=True))
    return SimpleNamespace(matrix=V)


def _other_z_polytope(kind, n, lam, z):
    """R_F for the uniform z whatever z is asked: its vertices have 3 to 5 positive
    entries, outside Corollary 2's [2, 4] for the z with a zero entry."""
    return polytope(kind, n, lam, standard_z(n)["uniform"])


MUTATIONS = {
    # check: (lam, z name, name in the module, its wrong replacement)
    "lemma1_scales": (PHI, "U", "psi_map", lambda B, lam: 2 * psi_map(B, lam)),
    "theorem2_positive_extreme_U": (PHI, "U", "columns_are_independent_scales",
                                    lambda T, lam: True),
    "theorem3_psi_onto_F": (WALL, "geometric", "decompose", lambda T, lam: 2 * decompose(T, lam)),
    "theorem4_simplified": (WALL, "geometric", "is_psi_affinely_simplified",
                            lambda B, z, lam: True),
    "corollary2_support_size": (WALL, "zero", "polytope", _other_z_polytope),
    "corollary3_preserved_extreme": (WALL, "geometric", "face_objective",
                                     lambda Fz, T, lam: np.zeros((4, 3), dtype=object)),
    "northwest_optimality": (WALL, "geometric", "northwest_corner",
                             lambda z, lam: _nonoptimal_vertex(3, lam, z)),
}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_each_check_runs_over_q_lam_and_can_fail(name, monkeypatch):
    module = _check(name)
    lam, zname, attribute, wrong = MUTATIONS[name]
    z = None if zname == "U" else standard_z(3)[zname]
    assert module.every_lam(3, [(lam, zname, z)]) > 0
    monkeypatch.setattr(module, attribute, wrong)
    with pytest.raises(AssertionError):
        module.every_lam(3, [(lam, zname, z)])


# -- the generic helpers: Fraction and a degree-1 algebraic give the same answers ----------
MATRICES = [[[1, 2, 3], [2, 4, 6], [1, 0, 1]], [["1/2", 1], [1, 2]], [[0, 0], [0, 0]],
            [[1, "2/3", 0, 5], [0, 1, "-1/7", 2]]]


@pytest.mark.parametrize("M", MATRICES)
def test_rank_and_nullspace_the_same_over_the_degree_one_field(M):
    K = TWO.field
    MK = [[K(Fraction(x)) for x in row] for row in M]
    assert rank(MK) == rank(M)
    assert nullspace(MK).tolist() == nullspace(M).tolist()


def test_rank_and_nullspace_over_a_quadratic_field():
    r2 = algebraic("x^2 - 2", 1.4)
    M = [[1, r2, 2], [r2, 2, 2 * r2], [0, 1, r2]]
    assert rank(M) == 2 and rank([[1, r2], [r2, 3]]) == 2
    N = nullspace(M)
    assert N.shape == (3, 1) and all(v == 0 for v in np.array(M, dtype=object).dot(N[:, 0]))


def test_representation_the_same_over_the_degree_one_field():
    z = GEOMETRIC
    for B in RF(3, 2, z).vertices()[:12] + [sum(RF(3, 2, z).vertices()[:3]) / 3]:
        assert (psi_map(B, TWO) == psi_map(B, 2)).all()
        T = psi_map(B, 2)
        assert (decompose(T, TWO) == decompose(T, 2)).all()
        assert is_psi_affinely_simplified(B, z, TWO) == is_psi_affinely_simplified(B, z, 2)
        assert has_movement_in_support(B, z, TWO) == has_movement_in_support(B, z, 2)


def test_polytope_methods_the_same_over_the_degree_one_field():
    z = GEOMETRIC
    Rq, Rk = RF(3, 2, z), RF(3, TWO, z)
    every = [V.tolist() for V in Rq.vertices()]
    assert [V.tolist() for V in Rk.sample_vertices(100)] == every
    drawn = [V.tolist() for V in Rk.sample_vertices(10, seed=1)]
    assert len(drawn) == 10 and all(V in every for V in drawn)
    assert drawn == [V.tolist() for V in Rk.sample_vertices(10, seed=1)]  # seeded
    mid = sum(Rq.vertices()[:2]) / 2
    for X in Rq.vertices()[:5] + [mid]:
        assert Rk.has_vertex(X) == Rq.has_vertex(X)
    Fq, Fk = F(3, 2, z), F(3, TWO, z)
    C = np.array([[1, -2, 0], [3, 0, -1], [0, 1, 1]], dtype=object)
    assert Fk.maximize(C)[0] == Fq.maximize(C)[0]
    best = sorted(V.tolist() for V in Fq.optimal_face_vertices(C))
    assert sorted(V.tolist() for V in Fk.optimal_face_vertices(C)) == best
    value, at = best_values(Fq.vertices(), list(C.ravel()))  # the list path over Q
    assert value == Fq.maximize(C)[0]
    assert sorted(Fq.vertices()[int(i)].tolist() for i in at) == best


def test_maximize_over_q_lam_is_the_best_vertex():
    Fk = F(3, WALL, GEOMETRIC)
    C = np.array([[0, 1, 2], [1, 0, 1], [2, 1, 0]], dtype=object)
    value, X = Fk.maximize(C)
    values = [(C * V).sum() for V in Fk.vertices()]
    assert Fk.is_extreme(X) and value == (C * X).sum()
    assert all(v <= value for v in values) and any(v == value for v in values)


def test_constructors_the_same_over_the_degree_one_field():
    z = GEOMETRIC
    assert (northwest_corner(z, lam=TWO).matrix == northwest_corner(z, lam=2).matrix).all()
    for s in ("max", "min", "sandwich"):
        assert (heuristic(z, lam=TWO, selector=s).matrix ==
                heuristic(z, lam=2, selector=s).matrix).all()
    for loss in ("abs", "squared"):
        assert (unfixed_optimum(z, lam=TWO, loss=loss).matrix ==
                unfixed_optimum(z, lam=2, loss=loss).matrix).all()
    M = northwest_corner(z, lam=WALL)
    assert F(3, WALL, z).contains(M.matrix) and M.is_dp()


def test_flint_rationals_mix_with_field_elements():
    from flint import fmpq

    assert fmpq(1, 2) + PHI == PHI + Fraction(1, 2) and PHI * fmpq(2) == 2 * PHI
    assert fmpq(3, 2) < PHI < fmpq(17, 10) and sum([PHI, PHI], fmpq(0)) == 2 * PHI
    with pytest.raises(TypeError):
        PHI + 0.5


def test_a_mechanism_over_q_lam_that_is_not_dp_is_refused():
    M = Mechanism(matrix=np.array([[1, 0], [0, 1]], dtype=object), lam=PHI, eps=0.48)
    assert M.privacy_ratio() == float("inf") and not M.is_dp()
    with pytest.raises(ValueError, match="not eps-DP"):
        M.check()


def test_certificates_the_same_over_the_degree_one_field():
    z = GEOMETRIC
    T = northwest_corner(z, lam=2).matrix
    for loss in ("abs", "squared", "hinge:1"):
        cq = certify_optimal(T, z, 2, loss, dual="explicit").check()
        ck = certify_optimal(T, z, TWO, loss, dual="explicit").check()
        assert (ck.optimal, ck.value, ck.lower_bound, ck.u.tolist(), ck.v.tolist()) == \
            (cq.optimal, cq.value, cq.lower_bound, cq.u.tolist(), cq.v.tolist())
    W = np.array([[0, 1, 2], [1, 0, 1], [2, 1, 0]], dtype=object)
    for u, v in (([0, 0, 0], [0, 0, 0]), ([1, 0, 0], [0, 0, 0]), ([0, 5, 0], [-1, 0, 2])):
        assert _infeasible_columns(W, u, v, z, TWO, first_only=False) == \
            _infeasible_columns(W, u, v, z, Fraction(2), first_only=False)


def test_certificates_over_q_lam():
    z = GEOMETRIC
    T = northwest_corner(z, lam=WALL).matrix
    uc = certify_universal(z, WALL, T).check()
    assert uc.optimal and len(uc.hinges) == 5
    bad = _nonoptimal_vertex(3, WALL, z).matrix
    cert = certify_optimal(bad, z, WALL, "abs").check()
    assert not cert.optimal and cert.gap > 0 and cert.dual == "northwest"
    with pytest.raises(ValueError, match="not over"):
        certify_optimal(T, z, WALL, "abs", dual="lp")
    tampered = certify_optimal(T, z, WALL, "abs")
    tampered.u = tampered.u + Fraction(1, 10)
    from dpfix.certify.cone import CertificateError

    with pytest.raises(CertificateError):
        tampered.check()
