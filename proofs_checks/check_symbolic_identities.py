"""Identities the code relies on, checked for every ``lam > 1`` with sympy (not at sampled values).

Each identity is an equality of rational functions of a symbol ``lam``
(``rho = 1/lam``), checked by cancelling the difference to 0, or a sign
condition, checked by writing ``lam = 1 + t`` (``t > 0``) and finding every
coefficient of numerator and denominator in ``t`` of one sign. The code under
check is called with the symbol where it is written for any number type
(:func:`dpfix.numbers.numeric.geometric_amounts`, :func:`dpfix.theory.scales.heights`); the
closed forms of :func:`dpfix.constructors.unfixed.sigma_amounts` and of the
staircase are the code's formulas, compared with their definitions, and at
the end with the code's exact output at rational ``lam``.

- the truncated geometric mechanism ``G[i, j] = c_j rho^|i-j|`` (``c`` the
  geometric amounts): rows sum to 1 and neighbouring entries of a column have
  ratio exactly ``lam`` or ``1/lam`` (so it is eps-DP, and extreme-ratio);
- the geometric amounts are ``K^-1 1`` for ``K[i, j] = rho^|i-j|``;
- scales (Definition 6): ``lam^h / sum lam^h`` sums to 1, has neighbour
  ratios ``lam^(+-1)``, and is unchanged by the shift ``h -> h - min h`` that
  the exact code uses (and ``h -> h - max h``, the float code's);
- Algorithm 2's amounts (Section 5.3): ``Z_m = sum_i rho^|i-m|`` has the closed
  form ``(1 + rho - rho^(m+1) - rho^(n-m)) / (1 - rho)``, ``alpha_m = Z_m c_m``
  has the float branch's closed forms, ``Sigma alpha = 1``, and
  ``G = Sigma diag(alpha)``;
- the staircase noise (``lam = r^2``, ``r > 1``): the pmf sums to 1, and the
  clamped mechanism's neighbour ratios are at most ``lam`` (a sign condition).
"""

from __future__ import annotations

import itertools
import sys
from fractions import Fraction

import sympy

from dpfix.constructors.additive import staircase_pmf, truncated_geometric
from dpfix.constructors.unfixed import sigma_amounts
from dpfix.numbers.numeric import geometric_amounts
from dpfix.theory.scales import heights, scale

RESULT = "Symbolic identities"
STATEMENT = ("the truncated geometric mechanism, the geometric amounts, the scale "
             "normalisation, Algorithm 2's amounts and the staircase pmf satisfy their "
             "identities as rational functions of lam > 1")

LAM = sympy.Symbol("lam", positive=True)
RHO = 1 / LAM
T_ = sympy.Symbol("t", positive=True)


def _zero(expr: sympy.Expr) -> bool:
    return sympy.cancel(sympy.together(expr)) == 0


def _positive(expr: sympy.Expr, var: sympy.Symbol) -> bool:
    """``expr > 0`` for every ``var > 1``: all coefficients in ``t = var - 1`` of its
    numerator and denominator have one sign (and the numerator is not 0)."""
    num, den = sympy.fraction(sympy.cancel(sympy.together(expr.subs(var, 1 + T_))))
    cn = sympy.Poly(sympy.expand(num), T_).coeffs()
    cd = sympy.Poly(sympy.expand(den), T_).coeffs()
    if all(c >= 0 for c in cn) and all(c >= 0 for c in cd):
        return any(c > 0 for c in cn)
    if all(c <= 0 for c in cn) and all(c <= 0 for c in cd):
        return any(c < 0 for c in cn)
    return False


def _geometric(n: int) -> sympy.Matrix:
    c = geometric_amounts(n, RHO)  # the code's amounts, on the symbol
    return sympy.Matrix(n, n, lambda i, j: c[j] * RHO ** abs(i - j))


def check_truncated_geometric(n: int) -> None:
    G = _geometric(n)
    for i in range(n):
        assert _zero(sum(G.row(i)) - 1), f"n={n}: row {i} of G does not sum to 1"
    for i, j in itertools.product(range(n - 1), range(n)):
        ratio = sympy.cancel(G[i, j] / G[i + 1, j])
        assert ratio in (LAM, 1 / LAM), f"n={n}: G[{i},{j}]/G[{i + 1},{j}] = {ratio}"


def check_geometric_amounts(n: int) -> None:
    K = sympy.Matrix(n, n, lambda i, j: RHO ** abs(i - j))
    c = sympy.Matrix(geometric_amounts(n, RHO))
    for i, v in enumerate(K * c):
        assert _zero(v - 1), f"n={n}: (K c)_{i} = {sympy.cancel(v)} != 1"


def check_scales(n: int) -> int:
    cases = 0
    for pattern in itertools.product((-1, 1), repeat=n - 1):
        h = [int(v) for v in heights(pattern)]
        total = sum(LAM ** v for v in h)
        s = [LAM ** v / total for v in h]
        assert _zero(sum(s) - 1), f"pattern {pattern}: the scale does not sum to 1"
        for i in range(n - 1):
            assert sympy.cancel(s[i + 1] / s[i]) == LAM ** pattern[i], (
                f"pattern {pattern}: ratio at {i} is not lam^{pattern[i]}")
        for shift in (min(h), max(h)):  # the exact code's shift and the float code's
            shifted_total = sum(LAM ** (v - shift) for v in h)
            for i in range(n):
                assert _zero(LAM ** (h[i] - shift) / shifted_total - s[i]), (
                    f"pattern {pattern}: the shift by {shift} changes entry {i}")
        cases += 1
    return cases


def _z_closed(n: int, m: int) -> sympy.Expr:
    return (1 + RHO - RHO ** (m + 1) - RHO ** (n - m)) / (1 - RHO)


def check_sigma_amounts(n: int) -> None:
    c = geometric_amounts(n, RHO)
    alpha = []
    for m in range(n):
        Z = sum(RHO ** abs(i - m) for i in range(n))
        assert _zero(_z_closed(n, m) - Z), f"n={n}: Z_{m} closed form is wrong"
        a = Z * c[m]
        if n == 1:
            closed = sympy.Integer(1)
        elif m in (0, n - 1):  # the float branch's closed forms
            closed = (1 - RHO ** n) / (1 - RHO ** 2)
        else:
            closed = ((1 - RHO ** (m + 1)) + RHO * (1 - RHO ** (n - m - 1))) / (1 + RHO)
        assert _zero(a - closed), f"n={n}: alpha_{m} differs from its closed form"
        alpha.append(a)
    G = _geometric(n)
    for i in range(n):
        row = sum(alpha[m] * RHO ** abs(i - m) / _z_closed(n, m) for m in range(n))
        assert _zero(row - 1), f"n={n}: (Sigma alpha)_{i} != 1"
        for m in range(n):
            assert _zero(alpha[m] * RHO ** abs(i - m) / _z_closed(n, m) - G[i, m]), (
                f"n={n}: G != Sigma diag(alpha) at ({i}, {m})")


def check_staircase() -> int:
    r = sympy.Symbol("r", positive=True)  # r = sqrt(lam) > 1
    rho, gamma = 1 / r**2, 1 / (1 + r)
    half_minus = (r - 1) / (2 * (1 + r))  # the exact code's 1/2 - gamma
    assert _zero(half_minus - (sympy.Rational(1, 2) - gamma))
    a = (1 - rho) / (2 * (gamma + rho * (1 - gamma)))
    p0 = 2 * a * (gamma + rho * half_minus)
    C = a * ((1 - half_minus) + rho * half_minus)
    assert _zero(p0 + 2 * C * rho / (1 - rho) - 1), "the staircase pmf does not sum to 1"
    # neighbour ratios of the clamped matrix: inside C rho^k / C rho^(k+1) = lam; at the
    # peak p0 / (C rho) and C rho / p0; at the clamped ends, tails over neighbours
    tail0 = p0 + C * rho / (1 - rho)  # P(K <= 0)
    for name, ratio in (("p0 / (C rho)", p0 / (C * rho)), ("C rho / p0", C * rho / p0),
                        ("P(K<=0) / P(K<=-1)", tail0 / (C * rho / (1 - rho))),
                        ("P(K>=1) / P(K>=2)", 1 / rho)):
        assert _positive(r**2 - ratio, r) or _zero(r**2 - ratio), (
            f"staircase: {name} exceeds lam for some lam > 1")
        assert _positive(ratio, r), f"staircase: {name} is not positive"
    cases = 0
    for root in (Fraction(2), Fraction(3, 2), Fraction(5, 2)):  # the code at lam = root^2
        code = staircase_pmf(lam=root**2)
        at = {r: sympy.Rational(root.numerator, root.denominator)}
        assert [sympy.Rational(v.numerator, v.denominator) for v in code] == \
            [sympy.cancel(p0.subs(at)), sympy.cancel(C.subs(at)), sympy.cancel(rho.subs(at))], (
            f"staircase_pmf(lam={root**2}) differs from the symbolic pmf")
        cases += 1
    return cases


def check_against_the_code(n: int, lam: Fraction) -> None:
    """The symbolic forms at a rational lam equal the code's exact output."""
    sub = {LAM: sympy.Rational(lam.numerator, lam.denominator)}
    G = _geometric(n).subs(sub)
    T = truncated_geometric(n, lam=lam).matrix
    assert all(sympy.Rational(T[i, j].numerator, T[i, j].denominator) == G[i, j]
               for i in range(n) for j in range(n)), f"n={n}, lam={lam}: G differs"
    for m, a in enumerate(sigma_amounts(n, lam)):
        c = geometric_amounts(n, RHO)[m] * sum(RHO ** abs(i - m) for i in range(n))
        assert sympy.Rational(a.numerator, a.denominator) == sympy.cancel(c.subs(sub)), (
            f"n={n}, lam={lam}: sigma_amounts differs at {m}")
    h = heights([1] * (n - 1))
    s = scale([1] * (n - 1), lam)
    total = sum(LAM ** int(v) for v in h)
    assert all(sympy.Rational(x.numerator, x.denominator) == (LAM ** int(v) / total).subs(sub)
               for x, v in zip(s, h, strict=True))


def run(mode: str = "quick") -> int:
    cases = 0
    top = 6 if mode == "quick" else 9
    for n in range(1, top + 1):
        if n >= 2:
            check_truncated_geometric(n)
            cases += 1
            cases += check_scales(n) if n <= (5 if mode == "quick" else 7) else 0
        check_geometric_amounts(n)
        check_sigma_amounts(n)
        cases += 2
        for lam in (Fraction(3, 2), Fraction(2), Fraction(7, 3)):
            check_against_the_code(n, lam)
            cases += 1
    return cases + check_staircase()


if __name__ == "__main__":
    print(run("full" if "--full" in sys.argv else "quick"), "cases checked")
