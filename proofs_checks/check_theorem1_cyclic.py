"""Theorem 1: the cyclic Laplace mechanism for distributions of counts is eps-DP.

Key step, exactly for every n in the range and every neighbouring move
``eta' = eta - e_i + e_{i+1}`` (``0 <= i <= n-2``, a row's count going from
``i`` to ``i+1``; the reverse move is the same pair read backwards):

1. absorption: ``V(eta', X - e_{i+1}) = V(eta, X)`` for random rational
   ``eta, X`` (Fractions, through the library's ``cyclic_difference``);
2. the absorbing shifts are exactly ``-e_{i+1} + c 1`` (the cyclic difference
   has rank ``n - 1`` and kernel the constants, exact ``rank``/``nullspace``),
   and the smallest of them in L1 norm has norm 1: a unit shift of the single
   coordinate ``X_{i+1}``, never ``X_0``;
3. density ratio: for the discrete Laplace ``P(k) = (1-r)/(1+r) r^|k|``,
   ``r = 1/lam``, the product pmf ratio ``P(X)/P(X - e_{i+1})`` at random
   integer points is exactly ``lam`` if ``X_{i+1} <= 0`` and ``1/lam`` otherwise
   (Fractions), and one draw per move forces ``X_{i+1} <= 0`` so ``lam`` is
   reached; for the continuous Laplace, ``|x - 1| - |x|`` lies in ``[-1, 1]``
   exactly at random rationals (equal to 1 iff ``x <= 0``), so the log density
   ratio is at most ``eps``. The matrix ``D`` of steps 1-2 is checked against the
   library's ``cyclic_difference`` column by column.

And the theorem itself for small n: the exact output pmf
``P(V = v | eta) = sum_c prod_j P(x_j + c)`` (``x`` any solution of
``x - roll(x) = v - eta``; the two geometric tails in ``c`` summed in closed
form) satisfies ``P(v | eta) <= lam P(v | eta')`` for every ``v`` in a window.
"""

from __future__ import annotations

import sys
from fractions import Fraction

import numpy as np

from dpfix.numbers.exact import nullspace, rank
from dpfix.release.privatizers import cyclic_difference

RESULT = "Theorem 1"
STATEMENT = ("cyclic Laplace: a unit move i -> i+1 is absorbed by X_{i+1} -> X_{i+1} - 1, "
             "a unit shift, so the output pmf ratio is at most e^eps")

LAMS = (Fraction(2), Fraction(3, 2), Fraction(101, 100), Fraction(7))


def _frac_vector(rng, n, lo=-20, hi=20, den=7):
    return np.array([Fraction(int(rng.integers(lo, hi)), int(rng.integers(1, den)))
                     for _ in range(n)], dtype=object)


def _cyclic_matrix(n):
    """The matrix D with D x = x - roll(x, -1), as exact integers; checked column by
    column against the library's ``cyclic_difference`` (so steps 1-2 test the mechanism)."""
    D = np.array([[Fraction(int(j == i) - int(j == (i + 1) % n)) for j in range(n)]
                  for i in range(n)], dtype=object)
    for j in range(n):
        e = np.array([Fraction(int(k == j)) for k in range(n)], dtype=object)
        assert (cyclic_difference(e) == D[:, j]).all(), \
            f"n={n}: cyclic_difference(e_{j}) != column {j} of x - roll(x, -1)"
    return D


def _pmf(k, lam):
    r = 1 / lam
    return (1 - r) / (1 + r) * r ** abs(k)


def check_absorption(n, rng, draws=3):
    """Steps 1 and 2 for every move at this n; returns the number of cases."""
    D = _cyclic_matrix(n)
    assert rank(D) == n - 1, f"n={n}: cyclic difference rank {rank(D)} != n-1"
    kernel = nullspace(D)
    assert kernel.shape[1] == 1 and len(set(kernel[:, 0].tolist())) == 1, \
        f"n={n}: kernel of the cyclic difference is not the constants"
    cases = 0
    for i in range(n - 1):
        move = np.zeros(n, dtype=object) + Fraction(0)
        move[i], move[i + 1] = Fraction(-1), Fraction(1)
        shift = np.zeros(n, dtype=object) + Fraction(0)
        shift[i + 1] = Fraction(-1)
        for _ in range(draws):
            eta = np.array([Fraction(int(x)) for x in rng.integers(1, 50, n)], dtype=object)
            X = _frac_vector(rng, n)
            V = eta + cyclic_difference(X)
            assert (eta + move + cyclic_difference(X + shift) == V).all(), \
                f"n={n}, move {i}->{i + 1}: V(eta', X - e_{i + 1}) != V(eta, X)"
            assert (eta - move + cyclic_difference(X - shift) == V).all(), \
                f"n={n}, move {i + 1}->{i}: V(eta', X + e_{i + 1}) != V(eta, X)"
            cases += 1
        # every absorbing shift is shift + c 1; the L1-smallest has norm 1
        assert (D.dot(shift) + move == 0).all(), f"n={n}, move {i}: D shift != -move"
        norms = [sum(abs(s + c) for s in shift) for c in {-s for s in shift}]
        assert min(norms) == 1, f"n={n}, move {i}: smallest absorbing shift has L1 {min(norms)}"
        cases += 1
    return cases


def check_ratio(n, rng, draws=4):
    """Step 3 at random points for every move at this n; each draw is one case.

    The pmf ratio is exactly ``lam`` when ``X_{i+1} <= 0`` and ``1/lam`` otherwise
    (only coordinate ``i+1`` differs); the last draw of each move forces
    ``X_{i+1} <= 0``, so the bound ``lam`` is reached at a random point.
    """
    cases = 0
    for lam in LAMS:
        for i in range(n - 1):
            for d in range(draws + 1):
                X = [int(x) for x in rng.integers(-6, 7, n)]
                if d == draws:
                    X[i + 1] = -abs(X[i + 1])
                X2 = list(X)
                X2[i + 1] -= 1
                num = den = Fraction(1)
                for a, b in zip(X, X2, strict=True):
                    num, den = num * _pmf(a, lam), den * _pmf(b, lam)
                ratio = num / den
                assert 1 / lam <= ratio <= lam, \
                    f"n={n}, lam={lam}, move {i}, X={X}: pmf ratio {ratio} outside [1/lam, lam]"
                expected = lam if X[i + 1] <= 0 else 1 / lam
                assert ratio == expected, \
                    f"n={n}, lam={lam}, move {i}, X={X}: pmf ratio {ratio} != {expected}"
                # continuous Laplace: log f(x)/f(x-1) = eps (|x-1| - |x|), in [-eps, eps],
                # equal to eps exactly when x <= 0 (forced on the last draw)
                x = Fraction(int(rng.integers(-60, 61)), int(rng.integers(1, 9)))
                if d == draws:
                    x = -abs(x)
                gap = abs(x - 1) - abs(x)
                assert -1 <= gap <= 1, f"continuous Laplace at x={x}: |x-1|-|x| = {gap}"
                assert (gap == 1) == (x <= 0), f"continuous Laplace at x={x}: |x-1|-|x| = {gap}"
                cases += 1
    return cases


def _series(x, lam):
    """sum over integers c of prod_j P(x_j + c), exactly (x integer vector)."""
    n, r = len(x), 1 / lam
    K = ((1 - r) / (1 + r)) ** n
    lo, hi = -max(x), -min(x)  # for c >= hi all x_j + c >= 0; for c <= lo all <= 0
    total = sum((K * r ** sum(abs(xj + c) for xj in x) for c in range(lo + 1, hi)),
                Fraction(0))
    s, low = sum(x), min(lo, hi - 1)  # low < hi: no c counted twice when lo == hi
    # c >= hi: r^(s + n c); c <= low: r^(-s - n c)
    total += K * r ** (s + n * hi) / (1 - r**n)
    total += K * r ** (-s - n * low) / (1 - r**n)
    return total


def check_series(rng, lam, draws=20):
    """The closed-form series against a long direct sum (remainder below r^60)."""
    r = 1 / lam
    for _ in range(draws):
        x = [int(a) for a in rng.integers(-4, 5, int(rng.integers(2, 5)))]
        direct = sum(Fraction(1) * ((1 - r) / (1 + r)) ** len(x)
                     * r ** sum(abs(xj + c) for xj in x) for c in range(-80, 81))
        assert 0 <= _series(x, lam) - direct < r**60, f"series wrong at x={x}, lam={lam}"
    return draws


def _solution(w):
    """x with x_j - x_{j+1 mod n} = w_j (sum w = 0), x_0 = 0."""
    x = [0]
    for wj in w[:-1]:
        x.append(x[-1] - wj)
    return x


def check_output_pmf(n, lam, width):
    """P(v | eta) <= lam P(v | eta') for every move and every v with |v - eta| <= width."""
    eta = [3 + j for j in range(n)]
    grid = np.array(np.meshgrid(*[range(-width, width + 1)] * (n - 1))).reshape(n - 1, -1).T
    cases = 0
    for i in range(n - 1):
        eta2 = list(eta)
        eta2[i] -= 1
        eta2[i + 1] += 1
        for head in grid:
            w = [int(a) for a in head] + [-int(sum(head))]  # v - eta, summing to 0
            v = [e + a for e, a in zip(eta, w, strict=True)]
            p = _series(_solution(w), lam)
            q = _series(_solution([a - b for a, b in zip(v, eta2, strict=True)]), lam)
            assert p <= lam * q and q <= lam * p, \
                f"n={n}, lam={lam}, move {i}, v={v}: P ratio {p / q} exceeds lam"
            cases += 1
    return cases


def run(mode: str = "quick") -> int:
    rng = np.random.default_rng(1)
    full = mode == "full"
    cases = 0
    for n in range(2, 81 if full else 31):
        cases += check_absorption(n, rng, draws=6 if full else 2)
        cases += check_ratio(n, rng, draws=6 if full else 2)
    cases += check_series(rng, LAMS[0]) + check_series(rng, LAMS[1])
    for n, width in ((2, 8), (3, 4), (4, 2)) + (((3, 6), (4, 3), (5, 2)) if full else ()):
        for lam in LAMS[:2] if not full else LAMS:
            cases += check_output_pmf(n, lam, width)
    return cases


if __name__ == "__main__":
    print(run("full" if "--full" in sys.argv else "quick"), "cases checked")
