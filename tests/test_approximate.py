"""(eps, delta)-DP count mechanisms as polytopes (dpfix.theory.delta, dpfix.constructors.delta).

The two H-representations against each other and against the definition, delta = 0
against today's U and F, the representation by truncated scales (Theorems 10_delta
and 3_delta), Theorem 2_delta and Theorem A_delta of docs/open_questions.md section 5.
"""

from fractions import Fraction
from functools import cache
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.constructors.delta import (
    delta_northwest,
    loss_matrix,
    lp_optimum_delta,
)
from dpfix.explore.cases import standard_z
from dpfix.numbers.exact import ExactnessError
from dpfix.theory.delta import (
    F_lifted,
    RF_delta,
    RU_delta,
    U_lifted,
    catalogue,
    column_pieces,
    is_approximately_dp,
    is_extreme_by_pieces,
    lift,
    positive_parts,
    project,
    psi_delta,
    psi_delta_map,
    representation_of,
    scale_costs,
    truncated_scales,
    vertex_type,
)
from dpfix.theory.polytopes import F, U, check_delta
from dpfix.theory.scales import psi

Fr = Fraction
LAMS = (Fr(3, 2), Fr(2), Fr(3))
DELTAS = (Fr(1, 100), Fr(1, 10), Fr(1, 4), Fr(1, 2))
lams = st.sampled_from(LAMS + (Fr(11, 10), Fr(5, 2)))
deltas = st.sampled_from(DELTAS + (Fr(1, 3), Fr(9, 10)))


def M(rows):
    return np.array([[Fr(v) for v in r] for r in rows], dtype=object)


@cache
def poly(form, n, lam, delta, zname=None):
    """Cached polytopes so that hypothesis examples share one vertex enumeration."""
    z = None if zname is None else standard_z(n)[zname]
    if form == "subset":
        return U(n, lam, delta) if z is None else F(n, lam, z, delta)
    return U_lifted(n, lam, delta) if z is None else F_lifted(n, lam, z, delta)


@cache
def verts(form, n, lam, delta, zname=None):
    return tuple(poly(form, n, lam, delta, zname).vertices(limit=None))


def by_definition(T, lam, delta, z=None):
    """Every pair, order and set S of outputs, straight from the definition."""
    n = T.shape[0]
    if any(v < 0 for v in T.flat) or any(sum(r) != 1 for r in T):
        return False
    if z is not None and list(np.asarray(z, dtype=object).dot(T)) != list(z):
        return False
    for i in range(n - 1):
        for a, b in ((i, i + 1), (i + 1, i)):
            for k in range(n + 1):
                for S in combinations(range(n), k):
                    if sum((T[a, j] for j in S), Fr(0)) > lam * sum((T[b, j] for j in S),
                                                                    Fr(0)) + delta:
                        return False
    return True


def random_stochastic(rng, n, spread=12):
    """A random row-stochastic rational matrix, often with zeros."""
    W = rng.integers(0, spread, size=(n, n))
    W[W.sum(axis=1) == 0, 0] = 1
    return np.array([[Fr(int(v), int(r.sum())) for v in r] for r in W], dtype=object)


# -- validation -------------------------------------------------------------------------
def test_delta_is_exact_and_in_range():
    assert check_delta("1/3") == Fr(1, 3) and check_delta(0) == 0
    with pytest.raises(ExactnessError):
        check_delta(0.1)
    for bad in (1, "-1/10", 2):
        with pytest.raises(ValueError, match="delta"):
            check_delta(bad)
    with pytest.raises(ValueError, match="n"):
        U(1, 2, "1/10")


# -- delta = 0 is today's U and F ---------------------------------------------------------
@given(n=st.integers(2, 5), lam=lams)
def test_delta_zero_gives_todays_U_rows_exactly(n, lam):
    P, Q = U(n, lam, 0), U(n, lam)
    for attr in ("A_ub", "b_ub", "A_eq", "b_eq"):
        assert (getattr(P, attr) == getattr(Q, attr)).all()
    assert P.shape == Q.shape and P.name == Q.name == "U" and P.delta == 0


@given(n=st.integers(2, 4), lam=lams, zname=st.sampled_from(["uniform", "geometric",
                                                              "asymmetric", "zero"]))
def test_delta_zero_gives_todays_F_rows_exactly(n, lam, zname):
    z = standard_z(n)[zname]
    P, Q = F(n, lam, z, 0), F(n, lam, z)
    for attr in ("A_ub", "b_ub", "A_eq", "b_eq"):
        assert (getattr(P, attr) == getattr(Q, attr)).all()


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("lam", LAMS)
def test_delta_zero_forms_have_todays_vertices(n, lam):
    today = {tuple(V.ravel()) for V in U(n, lam).vertices()}
    assert {tuple(V.ravel()) for V in verts("subset", n, lam, Fr(0))} == today
    lifted = {tuple(project(X).ravel()) for X in verts("lifted", n, lam, Fr(0))}
    assert lifted == today  # at delta = 0 every slack is 0: the lifted form is U itself


# -- the subset form is the definition ----------------------------------------------------
@given(n=st.integers(2, 3), lam=lams, delta=deltas, seed=st.integers(0, 2 ** 32 - 1))
def test_subset_form_contains_is_the_definition(n, lam, delta, seed):
    rng = np.random.default_rng(seed)
    P = U(n, lam, delta)
    for _ in range(20):
        T = random_stochastic(rng, n)
        assert P.contains(T) == by_definition(T, lam, delta) == \
            is_approximately_dp(T, lam, delta)


# -- the two forms describe the same set --------------------------------------------------
@pytest.mark.parametrize("case", [(2, Fr(3, 2), Fr(1, 10), None), (2, Fr(3), Fr(1, 2), "zero"),
                                  (2, Fr(2), Fr(1, 4), "asymmetric"), (3, Fr(2), Fr(1, 10), None)])
def test_forms_agree_on_vertices_both_ways(case):
    n, lam, delta, zname = case
    S, L = poly("subset", n, lam, delta, zname), poly("lifted", n, lam, delta, zname)
    Sv, Lv = verts("subset", n, lam, delta, zname), verts("lifted", n, lam, delta, zname)
    assert all(L.contains(lift(V, lam)) for V in Sv)  # subset form inside the projection
    projected = {tuple(project(X).ravel()) for X in Lv}
    # projection inside the subset form (each distinct projection checked once)
    assert all(S.contains(np.array(p, dtype=object).reshape(n, n)) for p in projected)
    # every vertex of the projection is the projection of a vertex of the lifted form,
    # and the least-slack lift of a vertex is a vertex (docs/open_questions.md section 5)
    assert {tuple(V.ravel()) for V in Sv} <= projected
    assert all(L.is_extreme(lift(V, lam)) for V in Sv)


@given(n=st.just(2) | st.just(3), lam=st.sampled_from([Fr(3, 2), Fr(3)]),
       delta=st.sampled_from([Fr(1, 10), Fr(1, 2)]), seed=st.integers(0, 2 ** 32 - 1))
@settings(max_examples=15)
def test_forms_agree_on_random_points_both_ways(n, lam, delta, seed):
    rng = np.random.default_rng(seed)
    S, L = poly("subset", n, lam, delta), poly("lifted", n, lam, delta)
    Sv = verts("subset", n, lam, delta)
    Lv = verts("lifted", 2, lam, delta) if n == 2 else None  # n = 3: 22,000 vertices
    for _ in range(5):
        w = rng.integers(1, 9, size=3)
        if Lv is not None:
            idx = rng.choice(len(Lv), size=3)
            X = sum((Fr(int(a), int(w.sum())) * Lv[k] for a, k in zip(w, idx, strict=True)))
            assert L.contains(X) and S.contains(project(X))  # a point of L projects into S
        idx = rng.choice(len(Sv), size=3)
        T = sum((Fr(int(a), int(w.sum())) * Sv[k] for a, k in zip(w, idx, strict=True)))
        assert S.contains(T) and L.contains(lift(T, lam))  # and every T of S lifts
        T = random_stochastic(rng, n)  # random points, in or out: the same answer
        assert S.contains(T) == L.contains(lift(T, lam)) == by_definition(T, lam, delta)
        Y = lift(T, lam)
        Y[n:] += Fr(1, 50)  # more slack than needed: in L iff the budgets still hold
        assert L.contains(Y) == all(sum(r) <= delta for r in Y[n:]) and \
            (not L.contains(Y) or S.contains(T))


@pytest.mark.parametrize("form", ["subset", "lifted"])
@pytest.mark.parametrize("delta", [Fr(0), Fr(1, 10), Fr(1, 2)])
def test_contains_rejects_perturbed_vertices(form, delta):
    """``V + t (V - centre)`` lies outside for every t > 0 when ``V`` is a vertex."""
    n = 3 if form == "subset" else 2  # the lifted form has 22,000 vertices at n = 3
    for zname in (None, "geometric"):
        P, vs = poly(form, n, Fr(2), delta, zname), verts(form, n, Fr(2), delta, zname)
        centre = sum(vs) / len(vs)
        assert P.contains(centre) and not P.is_extreme(centre)
        for V in vs:
            assert P.contains(V) and P.is_extreme(V)
            assert not P.contains(V + Fr(1, 1000) * (V - centre))


# -- vertices: counts and types ----------------------------------------------------------
def test_n2_vertices_by_hand():
    d = Fr(1, 10)
    got = {tuple(V.ravel()) for V in U(2, 2, d).vertices()}
    t, s = Fr(7, 10), Fr(3, 10)  # t = 2 s + d and 1 - s = 2 (1 - t) + d
    want = {(1, 0, 1, 0), (0, 1, 0, 1), (d, 1 - d, 0, 1), (0, 1, d, 1 - d),
            (1, 0, 1 - d, d), (1 - d, d, 1, 0), (t, 1 - t, s, 1 - s), (s, 1 - s, t, 1 - t)}
    assert got == {tuple(Fr(v) for v in w) for w in want}


@pytest.mark.parametrize("lam", LAMS)
def test_vertex_counts_n3(lam):
    """The counts in docs/open_questions.md section 5 (cdd.gmp)."""
    want = {Fr(3, 2): {Fr(1, 100): 345, Fr(1, 4): 345, Fr(1, 2): 249},
            Fr(2): {Fr(1, 100): 345, Fr(1, 4): 207, Fr(1, 2): 249},
            Fr(3): {Fr(1, 100): 345, Fr(1, 4): 321, Fr(1, 2): 249}}[lam]
    for delta, count in want.items():
        assert len(verts("subset", 3, lam, delta)) == count


@pytest.mark.parametrize("delta", [Fr(1, 10), Fr(1, 2)])
def test_only_the_constant_vertices_of_U_survive(delta):
    """Proved: a vertex of U_delta (delta > 0) with no tight budget is a constant
    mechanism, and every point of U has no tight budget."""
    for n in (2, 3):
        kept = {tuple(V.ravel()) for V in U(n, 2).vertices()} & \
            {tuple(V.ravel()) for V in verts("subset", n, Fr(2), delta)}
        constant = {tuple(np.array([[Fr(int(j == c)) for j in range(n)]] * n).ravel())
                    for c in range(n)}
        assert kept == constant


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("delta", [Fr(0), Fr(1, 10), Fr(1, 2)])
@pytest.mark.parametrize("zname", [None, "zero"])
def test_theorem_2_delta_agrees_with_the_rank_test(n, delta, zname):
    """Extreme iff the pieces are pinned by row sums, tight budgets (and z T = z):
    on every vertex and on midpoints of vertex pairs."""
    z = None if zname is None else standard_z(n)[zname]
    for lam in (Fr(3, 2), Fr(3)):
        P, vs = poly("subset", n, lam, delta, zname), verts("subset", n, lam, delta, zname)
        points = list(vs) + [(a + b) / 2 for a, b in list(combinations(vs, 2))[:30]]
        for X in points:
            assert is_extreme_by_pieces(X, lam, delta, z) == P.is_extreme(X)
        for V in vs:
            t = vertex_type(V, lam, delta)
            assert t["total"] <= n + t["tight"] + (0 if z is None else n - 1)


def test_theorem_2_is_the_case_delta_zero():
    """At delta = 0 every column of a positive vertex of U is one piece, a scale."""
    positive = [V for V in U(3, 2).vertices() if all(v > 0 for v in V.flat)]
    assert positive
    for V in positive:
        assert column_pieces(V, 2, 0) == [[(0, 2)]] * 3


def test_catalogue_n2():
    assert sorted(catalogue(verts("subset", 2, Fr(2), Fr(1, 10)), 2, Fr(1, 10)).items()) == \
        [((0, (0, 2)), 2), ((1, (1, 2)), 4), ((2, (2, 2)), 2)]


# -- the representation by truncated scales ---------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 4])
def test_truncated_scales(n):
    labels = truncated_scales(n)
    assert len(labels) == 2 ** (n + 1) - n - 2 == len(set(labels))
    P, c = psi_delta(n, 2), scale_costs(n, 2)
    assert (P[:, : 2 ** (n - 1)] == psi(n, 2)).all()
    assert all(sum(P[:, r]) == 1 for r in range(P.shape[1]))
    for r, (a, b, _) in enumerate(labels):  # cost: the heights at the interval's ends
        want = {(2 * (b), 0): P[b, r]} if b < n - 1 else {}
        if a > 0:
            want[(2 * (a - 1), 1)] = P[a, r]
        got = {(k // 2 * 2, k % 2): c[k, r] for k in range(c.shape[0]) if c[k, r]}
        assert got == want


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("delta", [Fr(1, 10), Fr(1, 2)])
@pytest.mark.parametrize("zname", [None, "asymmetric", "zero"])
def test_every_vertex_has_a_representation(n, delta, zname):
    """Theorems 10_delta and 3_delta, onto: every vertex of U_delta (F_delta) is
    Psi_delta B for a B of R_U^delta (R_F^delta) without cancellation."""
    lam = Fr(2)
    z = None if zname is None else standard_z(n)[zname]
    R = RU_delta(n, lam, delta) if z is None else RF_delta(n, lam, z, delta)
    for V in verts("subset", n, lam, delta, zname)[:: 1 if n == 2 else 7]:
        B = representation_of(V, lam)
        assert R.contains(B) and (psi_delta_map(B, lam) == V).all()
        assert (scale_costs(n, lam).dot(B) == positive_parts(V, lam)).all()


@pytest.mark.parametrize("delta", [Fr(1, 10), Fr(1, 2)])
@pytest.mark.parametrize("zname", ["uniform", "zero"])
def test_psi_delta_maps_R_F_into_and_onto(delta, zname):
    """The image of every vertex of R_F^delta lies in F_delta, and every vertex of
    F_delta is the image of a vertex (n = 2: R_F^delta at n = 3 has 177,150 vertices)."""
    n, lam, z = 2, Fr(2), standard_z(2)[zname]
    Rv = RF_delta(n, lam, z, delta).vertices()
    images = {tuple(psi_delta_map(B, lam).ravel()) for B in Rv}
    assert all(by_definition(np.array(t, dtype=object).reshape(n, n), lam, delta, z)
               for t in images)
    assert {tuple(V.ravel()) for V in verts("subset", n, lam, delta, zname)} <= images


def test_lp_optimum_with_delta():
    from dpfix.constructors.lp import lp_optimum

    z = [Fr(1, 2), Fr(1, 3), Fr(1, 6)]
    M = lp_optimum(z, lam=2, solver="exact", delta="1/10")
    assert (M.matrix == delta_northwest(z, 2, "1/10")).all() and M.delta == 0.1
    assert M.params["objective"] == Fr(197, 440) and not M.is_dp()
    zf = np.full(30, 1 / 30)
    Mf = lp_optimum(zf, eps=0.5, delta=0.01)
    Tf = delta_northwest(zf, float(np.exp(0.5)), 0.01)
    W = np.asarray(loss_matrix(zf), float)
    assert abs(Mf.params["objective"] - (W * Tf).sum()) < 1e-8
    assert Mf.params["budget_violation"] < 1e-9
    with pytest.raises(ValueError, match="delta"):
        lp_optimum(zf, eps=0.5, delta=1.5)
    assert lp_optimum(z, lam=2, solver="exact", delta=0).delta == 0


# -- the optimum over F_delta -------------------------------------------------------------
@given(n=st.integers(2, 4), lam=lams, delta=st.sampled_from((Fr(0),) + DELTAS + (Fr(9, 10),)),
       seed=st.integers(0, 2 ** 32 - 1), zeros=st.integers(0, 2),
       weights=st.sampled_from(["abs", "squared"]))
def test_theorem_A_delta(n, lam, delta, seed, zeros, weights):
    """The delta-northwest corner is in F_delta and equals the exact LP optimum."""
    rng = np.random.default_rng(seed)
    w = rng.integers(1, 7, size=n)
    w[rng.choice(n, size=min(zeros, n - 1), replace=False)] = 0
    z = [Fr(int(v), int(w.sum())) for v in w]
    T = delta_northwest(z, lam, delta)
    assert F(n, lam, z, delta).contains(T) and by_definition(T, lam, delta, z)
    value, opt = lp_optimum_delta(z, lam, delta, loss=weights)
    assert F(n, lam, z, delta).contains(opt)
    assert (loss_matrix(z, weights) * T).sum() == value


@given(lam=lams, seed=st.integers(0, 2 ** 32 - 1))
def test_delta_northwest_at_zero_is_the_northwest_corner(lam, seed):
    from dpfix.constructors.northwest import northwest_corner

    rng = np.random.default_rng(seed)
    w = rng.integers(1, 7, size=5)
    z = [Fr(int(v), int(w.sum())) for v in w]
    assert (delta_northwest(z, lam, 0) == northwest_corner(z, lam=lam).matrix).all()


def test_more_delta_never_costs_more():
    z = standard_z(5)["asymmetric"]
    W = loss_matrix(z)
    errors = [(W * delta_northwest(z, 2, d)).sum() for d in (0, "1/100", "1/10", "1/2", "9/10")]
    assert errors == sorted(errors, reverse=True) and errors[-1] < errors[0]


def test_highs_agrees_with_the_exact_optimum():
    z = [Fr(v, 21) for v in (1, 2, 3, 4, 5, 6)]
    for delta in (Fr(0), Fr(1, 10), Fr(1, 2)):
        value, _ = lp_optimum_delta(z, 2, delta)
        fvalue, T = lp_optimum_delta([float(v) for v in z], 2.0, float(delta), solver="highs")
        assert abs(fvalue - float(value)) < 1e-9
        assert np.allclose(T.sum(axis=1), 1)
    zf = np.linspace(1, 3, 40) / np.linspace(1, 3, 40).sum()
    fvalue, _ = lp_optimum_delta(zf, 1.5, 0.05, solver="highs", loss="squared")
    Tf = delta_northwest(zf, 1.5, 0.05)
    assert abs((np.asarray(loss_matrix(zf, "squared"), float) * Tf).sum() - fvalue) < 1e-7


def test_lifted_points_and_helpers():
    T = M([["1/10", "9/10"], [0, 1]])
    assert (project(lift(T, 2)) == T).all()
    with pytest.raises(ValueError, match="rows"):
        project(np.zeros((3, 2), dtype=object) + Fr(0))
    assert positive_parts(T, 2).tolist() == [[Fr(1, 10), 0], [0, 0]]
    assert repr(U_lifted(2, 2, "1/10")) == "U(n=2, lam=2, delta=1/10, lifted form)"
    with pytest.raises(ValueError, match="negative"):
        representation_of(M([[-1, 2], [0, 1]]), 2)


# -- counterexamples (dpfix explore delta) ------------------------------------------------
def test_delta_examples_are_what_they_claim():
    from dpfix.explore.delta_examples import find_delta_examples

    lam, delta = Fr(2), Fr(1, 10)
    ex = find_delta_examples(lam, delta)
    P, L = U(2, lam, delta), U_lifted(2, lam, delta)
    V = ex.positive_vertex
    assert P.is_extreme(V) and all(v > 0 for v in V.flat)
    assert all(V[0, j] != lam * V[1, j] and V[1, j] != lam * V[0, j] for j in range(2))
    assert U(2, lam).is_extreme(ex.lost_vertex) and not P.is_extreme(ex.lost_vertex)
    X = ex.lifted_vertex
    assert L.is_extreme(X) and (lift(project(X), lam) == X).all()
    assert P.contains(project(X)) and not P.is_extreme(project(X))
    R, Fz = RF_delta(2, lam, ex.z, delta), F(2, lam, ex.z, delta)
    assert R.is_extreme(ex.rf_vertex) and (psi_delta_map(ex.rf_vertex, lam) == ex.rf_image).all()
    assert Fz.contains(ex.rf_image) and not Fz.is_extreme(ex.rf_image)
    with pytest.raises(ValueError):
        find_delta_examples(2, 0)


def test_explore_delta_prints_the_examples_exactly(capsys):
    from dpfix.cli import main

    assert main(["explore", "delta", "--lam", "2", "--delta", "1/10"]) == 0
    out = capsys.readouterr().out
    assert "[3/10  7/10]" in out and "[7/10  3/10]" in out and "R_F^delta" in out


def test_cdd_and_normaliz_agree_with_delta():
    from dpfix.theory.enumeration import normaliz_available

    if not normaliz_available():
        pytest.skip("PyNormaliz is not installed")
    for P in (U(3, 2, Fr(1, 10)), F(3, 3, [Fr(1, 3)] * 3, Fr(1, 4)),
              U_lifted(2, 2, Fr(1, 10)), RF_delta(2, 2, ["1/2", "1/2"], Fr(1, 10))):
        cdd_v = {tuple(V.ravel()) for V in P.vertices(limit=None, backend="cdd")}
        nmz_v = {tuple(V.ravel()) for V in P.vertices(limit=None, backend="normaliz")}
        assert cdd_v == nmz_v and P.count_vertices(limit=None, backend="normaliz") == len(cdd_v)


def _subset_rows_by_definition(n, lam, delta):
    """The subset form written from the definition, independently of the library: ``T >= 0``
    (when ``delta > 0``), every pair ``(a, b)`` of neighbours in both orders and every
    non-empty proper set ``S`` of outputs, ``T_a(S) - lam T_b(S) <= delta``, the row sums."""
    lam, delta = Fr(lam), Fr(delta)
    ub = set()
    for v in range(n * n):
        ub.add((((v, Fr(-1)),), Fr(0)))
    for i in range(n - 1):
        for a, b in ((i, i + 1), (i + 1, i)):
            for size in range(1, n):
                for S in combinations(range(n), size):
                    row = tuple(sorted([(a * n + j, Fr(1)) for j in S]
                                       + [(b * n + j, -lam) for j in S]))
                    ub.add((row, delta))
    eq = {(tuple((i * n + j, Fr(1)) for j in range(n)), Fr(1)) for i in range(n)}
    return ub, eq


def _row_set(rows):
    return {(tuple(sorted(coef.items())), b) for coef, b in rows}


@pytest.mark.parametrize("n, lam, delta", [(2, 2, "1/10"), (3, "3/2", "1/3"), (3, 2, "1/2"),
                                           (4, 2, "1/100")])
def test_U_with_delta_is_the_subset_form_of_the_definition(n, lam, delta):
    """``U(n, lam, delta)``: exactly the rows of the definition (as a set; ``T >= 0`` and the
    row sums included), and ``F(n, lam, z, delta)`` those plus ``z T = z``."""
    P = U(n, lam, delta)
    ub, eq = _subset_rows_by_definition(n, lam, delta)
    assert _row_set(P.hrep.ub) == ub and len(P.hrep.ub) == len(ub)
    assert _row_set(P.hrep.eq) == eq and P.delta == Fr(delta)
    z = [Fr(1, n)] * n
    fixed = {(tuple((m * n + j, z[m]) for m in range(n)), z[j]) for j in range(n)}
    assert _row_set(F(n, lam, z, delta).hrep.eq) == eq | fixed


@pytest.mark.parametrize("n, lam, delta", [(2, 2, "1/10"), (3, "3/2", "1/3"), (3, 3, 0)])
def test_the_former_subset_names_are_U_and_F(n, lam, delta):
    """``U_delta``, ``F_delta`` and ``subset_rows`` of dpfix.theory.delta, kept for one
    release with a deprecation warning, give the same type, rows and vertices as ``U``
    and ``F`` (and ``u_rows``) with ``delta``."""
    from dpfix.numbers.deprecation import DpfixDeprecationWarning
    from dpfix.theory import delta as forms
    from dpfix.theory.polytopes import u_rows

    z = [Fr(1, n)] * n
    with pytest.warns(DpfixDeprecationWarning, match=r"theory.delta.U_delta is deprecated; use "
                                                     r"dpfix.theory.polytopes.U\(n, lam, delta\)"):
        U_delta = forms.U_delta
    with pytest.warns(DpfixDeprecationWarning, match="F_delta is deprecated"):
        F_delta = forms.F_delta
    with pytest.warns(DpfixDeprecationWarning, match="subset_rows is deprecated"):
        subset_rows = forms.subset_rows
    for old, new in ((U_delta(n, lam, delta), U(n, lam, delta)),
                     (F_delta(n, lam, z, delta), F(n, lam, z, delta))):
        assert type(old) is type(new) and repr(old) == repr(new)
        for attr in ("A_ub", "b_ub", "A_eq", "b_eq"):
            assert (getattr(old, attr) == getattr(new, attr)).all()
        if n <= 2:
            assert [V.tolist() for V in old.vertices()] == [V.tolist() for V in new.vertices()]
    assert subset_rows(n, lam, delta) == u_rows(n, Fr(lam), Fr(delta))
    with pytest.raises(AttributeError, match="no attribute 'V_delta'"):
        forms.V_delta  # noqa: B018


# -- phi_delta and its inverse, pinned in every regime ------------------------------------
# phi(x) = max((x - delta)/lam, 1 - delta - lam (1 - x), 0) has three regimes on [0, 1]:
# 0 for x <= delta, (x - delta)/lam on [delta, x_b], 1 - delta - lam (1 - x) on [x_b, 1],
# x_b = (lam + delta)/(lam + 1), where both equal (1 - delta)/(lam + 1). The values below
# are worked out by hand from those formulas, boundaries included.
PHI_TABLE = {
    (Fr(2), Fr(0)): [(Fr(0), Fr(0)), (Fr(1, 3), Fr(1, 6)), (Fr(2, 3), Fr(1, 3)),
                     (Fr(5, 6), Fr(2, 3)), (Fr(1), Fr(1))],
    (Fr(2), Fr(1, 10)): [(Fr(0), Fr(0)), (Fr(1, 20), Fr(0)), (Fr(1, 10), Fr(0)),
                         (Fr(2, 5), Fr(3, 20)), (Fr(7, 10), Fr(3, 10)), (Fr(4, 5), Fr(1, 2)),
                         (Fr(1), Fr(9, 10))],
    (Fr(3, 2), Fr(1, 3)): [(Fr(1, 6), Fr(0)), (Fr(1, 3), Fr(0)), (Fr(1, 2), Fr(1, 9)),
                           (Fr(11, 15), Fr(4, 15)), (Fr(4, 5), Fr(11, 30)), (Fr(1), Fr(2, 3))],
    (Fr(5), Fr(1, 2)): [(Fr(1, 4), Fr(0)), (Fr(1, 2), Fr(0)), (Fr(3, 4), Fr(1, 20)),
                        (Fr(11, 12), Fr(1, 12)), (Fr(23, 24), Fr(7, 24)), (Fr(1), Fr(1, 2))],
}


def least_next_entry(x: Fr, lam: Fr, delta: Fr) -> Fr:
    """The least ``y`` in ``[0, 1]`` with ``x <= lam y + delta`` and ``1 - y <= lam (1 - x)
    + delta`` (the two (eps, delta) constraints on consecutive cumulative entries), found
    by deciding the three candidate bounds one at a time."""
    candidates = sorted({Fr(0), (x - delta) / lam, 1 - delta - lam * (1 - x)})
    feasible = [y for y in candidates if 0 <= y <= 1 and x <= lam * y + delta
                and 1 - y <= lam * (1 - x) + delta]
    return feasible[0]


@pytest.mark.parametrize("lam, delta", list(PHI_TABLE), ids=str)
def test_phi_pinned_in_every_regime(lam, delta):
    from dpfix.constructors.delta import _phi

    x_b = (lam + delta) / (lam + 1)
    xs = [x for x, _ in PHI_TABLE[lam, delta]]
    assert x_b in xs and (delta in xs or delta == 0) and 1 in xs  # both boundaries, both ends
    for x, expected in PHI_TABLE[lam, delta]:
        assert _phi(x, lam, delta) == expected == least_next_entry(x, lam, delta)
    assert _phi(x_b, lam, delta) == (1 - delta) / (lam + 1)


@pytest.mark.parametrize("lam, delta", list(PHI_TABLE), ids=str)
def test_phi_inverse_pinned_on_both_branches(lam, delta):
    """``phi_inverse(phi(x)) = x`` wherever ``phi(x) > 0``; just either side of
    ``v_b = (1 - delta)/(lam + 1)`` the preimage lies on that side of ``x_b``."""
    from dpfix.constructors.delta import _phi_inverse

    for x, v in PHI_TABLE[lam, delta]:
        if v > 0:
            assert _phi_inverse(v, lam, delta) == x
    x_b, v_b = (lam + delta) / (lam + 1), (1 - delta) / (lam + 1)
    step = Fr(1, 1000) * v_b
    below, above = v_b - step, v_b + step
    assert _phi_inverse(below, lam, delta) == lam * below + delta < x_b
    assert _phi_inverse(above, lam, delta) == 1 - (1 - delta - above) / lam > x_b
    for v in (step, below, v_b, above, 1 - delta - step, 1 - delta):
        x = _phi_inverse(v, lam, delta)
        assert 0 < x <= 1 and least_next_entry(x, lam, delta) == v


@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize("lam, delta", list(PHI_TABLE), ids=str)
def test_cumulative_family_hits_every_total_exactly(n, lam, delta):
    """On a grid of totals (which puts orbit entries in every regime of phi), the member
    found has ``z . x = total`` exactly and is the phi-orbit after a run of ones."""
    from dpfix.constructors.delta import cumulative_family

    z = [Fr(k, n * (n + 1) // 2) for k in range(1, n + 1)]
    for k in range(1, 24):
        total = Fr(k, 24)
        x = cumulative_family(n, lam, delta, total, z)
        assert sum(a * b for a, b in zip(z, x, strict=True)) == total
        c = 0
        while c < n and x[c] == 1:
            c += 1
        for i in range(c, n - 1):
            assert x[i + 1] == least_next_entry(x[i], lam, delta)
        assert all(a >= b for a, b in zip(x, x[1:], strict=False))
