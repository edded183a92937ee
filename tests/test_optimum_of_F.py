"""The statements of docs/optimum_of_F.md (Theorem A, Lemma C, Corollaries A1-A2) and
of the (eps, delta) write-up (docs/open_questions.md section 5.4), exactly: the
summation by parts with its constant ``K`` and both boundary identities, the crossing
scales ``m*_l`` and shares ``r_l``, Lemma C's coefficients ``gamma_i``, ``beta_i``,
the split scales of Corollary A2, optima that are not unique, and the nested choice
of the delta-northwest corner."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.certify import northwest_dual
from dpfix.certify.duals import _crossings
from dpfix.constructors import heuristic, northwest_corner
from dpfix.constructors.delta import _member, cumulative_family, delta_northwest
from dpfix.constructors.northwest import northwest_plan
from dpfix.constructors.unfixed import sigma_amounts
from dpfix.numbers.exact import to_fmpq
from dpfix.theory.mechanism import weight_matrix
from dpfix.theory.polytopes import F
from dpfix.theory.scales import sigma


@st.composite
def instance(draw, n_max=6):
    """A rational ``z`` (zeros anywhere) and a rational ``lam > 1``."""
    n = draw(st.integers(2, n_max))
    w = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n).filter(any))
    q = draw(st.integers(1, 3))
    p = draw(st.integers(q + 1, 4 * q))
    return [Fraction(v, sum(w)) for v in w], Fraction(p, q)


def _prefix(z):
    out, s = [], Fraction(0)
    for x in z:
        s += x
        out.append(s)
    return out


def _H(T, z, k, l):
    return sum(z[i] * T[i, j] for i in range(k + 1) for j in range(l + 1))


def _supplies(z, lam):
    S = sigma(len(z), lam)
    alpha = sigma_amounts(len(z), lam)
    return S, alpha, [w * a for w, a in zip(np.asarray(z, dtype=object).dot(S), alpha,
                                             strict=True)]


@settings(max_examples=40, deadline=None)
@given(instance(), st.integers(0, 2**32 - 1))
def test_summation_by_parts_constant_and_boundary_identities(case, seed):
    z, lam = case
    n = len(z)
    Z = _prefix(z)
    rng = np.random.default_rng(seed)
    c = [[Fraction(int(x)) for x in row] for row in rng.integers(-5, 6, size=(n, n))]
    K1 = (sum(z[i] * c[i][n - 1] for i in range(n))
          - sum(Z[l] * (c[n - 1][l + 1] - c[n - 1][l]) for l in range(n - 1)))
    K2 = (sum(z[i] * c[i][n - 1] for i in range(n)) + sum(z[j] * c[n - 1][j] for j in range(n))
          - c[n - 1][n - 1])
    assert K1 == K2
    for T in (northwest_corner(z, lam=lam).matrix, heuristic(z, lam=lam, selector="min").matrix):
        for k in range(n):  # H(k, n-1) = Z_k (row sums), H(n-1, k) = Z_k (fixed point)
            assert _H(T, z, k, n - 1) == Z[k] == _H(T, z, n - 1, k)
        Dc = [[c[k + 1][l + 1] - c[k + 1][l] - c[k][l + 1] + c[k][l] for l in range(n - 1)]
              for k in range(n - 1)]
        error = sum(z[i] * c[i][j] * T[i, j] for i in range(n) for j in range(n))
        assert error == K1 + sum(Dc[k][l] * _H(T, z, k, l)
                                 for k in range(n - 1) for l in range(n - 1))


@settings(max_examples=40, deadline=None)
@given(instance())
def test_crossing_scales_and_shares(case):
    z, lam = case
    n = len(z)
    S_mat, alpha, a = _supplies(z, lam)
    S = _prefix(a)
    Z = _prefix(z)
    mstar = _crossings([to_fmpq(x) for x in z], 1 / to_fmpq(lam))
    C = np.cumsum(northwest_corner(z, lam=lam).matrix, axis=1)
    for l in range(n - 1):
        m = min(k for k in range(n) if S[k] >= Z[l])  # the least m with S_m >= Z_l
        assert mstar[l] == m
        r = (Z[l] - (S[m - 1] if m else 0)) / a[m]
        assert 0 <= r <= 1 and (r == 0) == (Z[l] == 0)
        want = sum((alpha[k] * S_mat[:, k] for k in range(m)), np.zeros(n, dtype=object))
        assert (C[:, l] == want + r * alpha[m] * S_mat[:, m]).all()
        if l and z[l] == 0:
            assert mstar[l] == mstar[l - 1] and (C[:, l] == C[:, l - 1]).all()


def test_a_scale_split_over_columns_0_and_2():
    z = [Fraction(1, 2), Fraction(0), Fraction(1, 2)]
    _, _, supply = _supplies(z, 2)
    pieces = northwest_plan(supply, z)
    columns = {m: [j for mm, j, r in pieces if mm == m and r > 0] for m, _, _ in pieces}
    assert columns == {0: [0], 1: [0, 2], 2: [2]}
    T = northwest_corner(z, lam=2).matrix
    assert all(x == 0 for x in T[:, 1])


@settings(max_examples=60, deadline=None)
@given(instance(n_max=7))
def test_split_scales_are_consecutive_among_positive_columns(case):
    z, lam = case
    _, _, supply = _supplies(z, lam)
    P = [j for j, x in enumerate(z) if x > 0]
    split = 0
    for m in range(len(z)):
        cols = [j for mm, j, r in northwest_plan(supply, z) if mm == m and r > 0]
        assert cols and all(z[j] > 0 for j in cols)
        assert cols == P[P.index(cols[0]):P.index(cols[0]) + len(cols)]
        split += len(cols) > 1
    assert split <= len(P) - 1


def test_optima_are_not_unique_where_z_vanishes():
    z = [Fraction(0), Fraction(1, 2), Fraction(1, 2)]
    T = northwest_corner(z, lam=2).matrix
    assert T[0].tolist() == [0, Fraction(5, 6), Fraction(1, 6)]
    other = T.copy()
    other[0] = [Fraction(0), Fraction(1, 3), Fraction(2, 3)]
    assert F(3, 2, z).contains(other) and (other != T).any()
    rng = np.random.default_rng(0)
    for W in (weight_matrix("abs", z, exact=True), weight_matrix("squared", z, exact=True),
              np.array(z, dtype=object)[:, None] * rng.integers(0, 9, size=(3, 3))):
        assert (W * other).sum() == (W * T).sum()


@settings(max_examples=40, deadline=None)
@given(instance(), st.sampled_from(("abs", "squared", "hinge:1")))
def test_lemma_c_coefficients(case, weights):
    z, lam = case
    n = len(z)
    rho = 1 / lam
    W = weight_matrix(weights, z, exact=True)
    mstar = _crossings([to_fmpq(x) for x in z], to_fmpq(rho))
    u_sum = W[:, n - 1].copy()
    mu = []
    for l, m in enumerate(mstar):
        D = W[:, l] - W[:, l + 1]
        omega = [z[k] * rho ** abs(k - m) for k in range(n)]
        mu_l = sum(D[k] * rho ** abs(k - m) for k in range(n)) / sum(omega)
        mu.append(mu_l)
        y = D - mu_l * np.array(z, dtype=object)
        tau = [y[k] * rho ** abs(k - m) for k in range(n)]  # omega_k (e_l(k) - mu_l)
        assert sum(tau) == 0
        P = _prefix(tau)
        b = np.array([-y[i] if i < m else Fraction(0) for i in range(n)], dtype=object)
        b[m] = sum(rho ** (m - k) * y[k] for k in range(m))
        a = y + b
        gamma = [lam ** (i + 1 - m) * -P[i] for i in range(m, n - 1)]
        beta = [-lam ** (m - i) * P[i] for i in range(m)]
        assert all(g >= 0 for g in gamma) and all(x >= 0 for x in beta)
        a_sum, b_sum = np.zeros(n, dtype=object), np.zeros(n, dtype=object)
        for g, i in zip(gamma, range(m, n - 1), strict=True):
            a_sum[i + 1] += g
            a_sum[i] -= rho * g
        for x, i in zip(beta, range(m), strict=True):
            b_sum[i] += x
            b_sum[i + 1] -= rho * x
        assert (a == a_sum).all() and (b == b_sum).all()
        u_sum = u_sum - b
    u, v = northwest_dual(z, lam, weights)
    assert (u == u_sum).all()
    assert v.tolist() == [sum(mu[j:], Fraction(0)) for j in range(n)]


@pytest.mark.parametrize("lam", [2, Fraction(3, 2)])
def test_delta_northwest_takes_the_least_member_and_imposes_the_last_column(lam):
    delta = Fraction(1, 10)
    z = [Fraction(0), Fraction(1, 2), Fraction(1, 2)]
    # z . x is flat at 0 for x_0 = p <= delta: the least member, x = 0, is chosen
    assert sum(a * b for a, b in zip(z, _member(-1, delta, 3, lam, delta), strict=True)) == 0
    assert cumulative_family(3, lam, delta, 0, z) == [0, 0, 0]
    T = delta_northwest(z, lam, delta)
    assert all(x == 0 for x in T[:, 0]) and F(3, lam, z, delta).contains(T)
    # z ends in a zero: the least member with z . x = 1 is not all ones, C_(n-1) = 1 is
    z = [Fraction(1, 2), Fraction(1, 2), Fraction(0)]
    assert cumulative_family(3, lam, delta, 1, z) != [1, 1, 1]
    T = delta_northwest(z, lam, delta)
    C = np.cumsum(T, axis=1)
    assert (C[:, 2] == 1).all() and (T >= 0).all()
    assert F(3, lam, z, delta).contains(T)
