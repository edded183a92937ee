"""Theorem G for d columns (docs/graphs.md section 11): on the grid
``P_(n_1) x ... x P_(n_d)``, for a product target and a separable Monge cost, the product
of the paths' northwest corners lies in ``F_grid[z]`` and attains its exact optimum, the
sum of the paths' optima; the proof's dual point is feasible and tight.

Every case is exact (Fractions, cdd.gmp) and checks, through
:func:`dpfix.explore.grid_products.theorem_g_check`: the product in ``F_grid[z]``; its
count error equal to an exact optimum over ``F_grid[z]`` (cdd's simplex on the primal, or
column generation on the dual: two independent LPs) and to the sum of the paths' exact
optima; the dual point of the proof feasible (an exact LP over the grid's cone per column)
with the same value. Then each hypothesis dropped (:func:`failure_cases`): a loss that is
not separable, a separable loss that is not Monge, a target that is not a product, each
giving the documented exact failure.

Cases (quick): every multiset of three marginals of :data:`MARGINALS_2` on ``2x2x2`` at
``lam = 2`` (every fourth also at ``lam = 3``; primal LP), two ``2x2x3`` instances (dual
LP), the certificate on ``2x3x3`` and ``3x3x3``. Full: every ordered triple of marginals on
``2x2x2`` at ``lam`` in {3/2, 2, 3}, ``2x2x3`` by the primal LP, ``2x3x3`` and ``3x3x3`` by
the dual LP, certificates up to ``4x4x4``.
"""

from __future__ import annotations

import itertools
import sys
from fractions import Fraction

from dpfix.explore.grid_products import failure_cases, theorem_g_check

RESULT = "Theorem G, d columns"
STATEMENT = ("on 3-D grids the product of the paths' northwest corners is optimal over "
             "F_grid for product targets and separable Monge costs; each hypothesis is "
             "needed")

#: Two-value marginals (zeros included).
MARGINALS_2 = (("1/2", "1/2"), ("1/3", "2/3"), ("1", "0"), ("1/4", "3/4"))

#: Three- and four-value marginals.
MARGINALS_3 = (("1/3", "1/3", "1/3"), ("1/4", "0", "3/4"), ("1/6", "1/2", "1/3"))
MARGINALS_4 = (("1/4", "1/4", "1/4", "1/4"), ("1/10", "2/5", "0", "1/2"))


def _costs(n: int) -> list[list[list[Fraction]]]:
    """Monge costs on ``0..n-1``: absolute, squared, an asymmetric linear loss and a cost
    that is no function of ``i - j`` (``a_i + b_j + #{k < i, l >= j}``)."""
    r = range(n)
    return [[[Fraction(abs(i - j)) for j in r] for i in r],
            [[Fraction((i - j) ** 2) for j in r] for i in r],
            [[Fraction(2 * max(i - j, 0) + max(j - i, 0)) for j in r] for i in r],
            [[Fraction(i + 2 * j + sum(1 for k in range(i) for _ in range(j, n)))
              for j in r] for i in r]]


def _check(xs: tuple, lam: Fraction, which: int, solver: str | None) -> None:
    costs = [_costs(len(x))[(which + k) % 4] for k, x in enumerate(xs)]
    chk = theorem_g_check(xs, costs, lam, solver=solver)
    where = f"{'x'.join(map(str, chk.shape))}, lam = {lam}, marginals {xs}, costs {which}"
    assert chk.product_in_F, f"the product is not in F_grid: {where}"
    assert chk.dual_feasible, f"the proof's dual point is infeasible: {where}"
    assert chk.product_value == chk.dual_value == sum(chk.path_optima), \
        f"values differ ({chk.product_value}, {chk.dual_value}, {chk.path_optima}): {where}"
    if solver is not None:
        assert chk.optimum == chk.product_value, \
            f"{solver} LP optimum {chk.optimum} != product {chk.product_value}: {where}"


def run(mode: str = "quick") -> int:
    full = mode == "full"
    cases = 0
    lams = [Fraction(3, 2), Fraction(2), Fraction(3)] if full else [Fraction(2), Fraction(3)]
    triples = list(itertools.product(MARGINALS_2, repeat=3) if full else
                   itertools.combinations_with_replacement(MARGINALS_2, 3))
    for k, xs in enumerate(triples):
        for lam in lams if full or k % 4 == 0 else lams[:1]:
            _check(xs, lam, k, "primal")
            cases += 1
    grids = [((a, b, c), "dual") for a in MARGINALS_2[:2] for b in MARGINALS_2[2:]
             for c in MARGINALS_3[1:]]
    for k, (xs, solver) in enumerate(grids if full else grids[:2]):
        _check(xs, Fraction(2), k, solver)
        cases += 1
    for k, (xs, _) in enumerate(grids if full else []):
        _check(xs, Fraction(3), k, "primal")
        cases += 1
    big = [((MARGINALS_2[0], MARGINALS_3[2], MARGINALS_3[1]), "dual"),
           ((MARGINALS_3[0], MARGINALS_3[1], MARGINALS_3[2]), "dual")]
    if full:
        big.append(((MARGINALS_4[1], MARGINALS_4[0], MARGINALS_4[1]), None))
    for k, (xs, solver) in enumerate(big):
        _check(xs, Fraction(2), k, solver if full else None)
        cases += 1
    rows = {r["case"]: r for r in failure_cases()}
    ns = rows["not separable"]
    assert ns["product_in_F"] and ns["optimum"] < ns["product"], f"not separable: {ns}"
    nm = rows["not Monge"]
    assert nm["product_in_F"] and nm["optimum"] == nm["path_optima"] < nm["product"], \
        f"not Monge: {nm}"
    npd = rows["not a product"]
    assert not npd["product_in_F"] and npd["optimum"] < npd["path_optima"], \
        f"not a product: {npd}"
    return cases + 3


if __name__ == "__main__":
    print(run("full" if "--full" in sys.argv else "quick"), "cases checked")
