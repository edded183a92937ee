"""The paper's structure on neighbour graphs (docs/graphs.md section 8):
Theorems 2, 3, 4, 10, Proposition 1 and Corollary 2 hold for every connected graph;
randomized response is optimal over F_{K_n} for the uniform target and the zero-one loss
(Proposition K2); the graph geometric mechanism of the star has alpha_centre =
(1 - (k - 1) rho) / (1 + rho); the product of the path's northwest corners is optimal on
the grid (Theorem G).

Checked exactly through the exploration engine on every connected graph of the atlas:
n = 2, 3 at lam = 2 (quick); full mode adds lam = 3/2, n = 4 for Theorem 2, and Theorem G
on grid:3x3 and at lam = 3. Each check
asserts that the engine finds no counterexample, and that the two steps of the path's
proofs which do not carry over fail exactly where docs/graphs.md says (the 4-cycle).
"""

from __future__ import annotations

import sys
from fractions import Fraction

from dpfix.explore.graph_mechanisms import exact_minimum, graph_geometric, loss_weights
from dpfix.explore.graph_tables import grid_rows
from dpfix.explore.graph_theory import CARRY_OVER, PROVED, carry_over_search
from dpfix.theory.polytopes import F

RESULT = "Graphs: Theorems 2-4, 10, Prop. 1, Cor. 2, Prop. K2, Theorem G"
STATEMENT = ("the paper's structure holds on every connected neighbour graph; the product "
             "of northwest corners is optimal on the grid")

#: The 4-cycle, first in the engine's order where the path's proof steps fail.
FIRST_FAILURE = "atlas:16"


def run(mode: str = "quick") -> int:
    cases = 0
    lams = [Fraction(2), Fraction(3, 2)] if mode == "full" else [Fraction(2)]
    for name, st in CARRY_OVER.items():
        if st.status == PROVED:
            sizes = [2, 3, 4] if mode == "full" and name == "Theorem 2" else [2, 3]
            found = carry_over_search(name, n=sizes, lam=lams)
            assert not found, f"{name} fails on a connected graph: {found}"
        else:
            found = carry_over_search(name, n=[2, 3, 4], lam=lams[:1])
            assert found and found.counterexample.instance.label == FIRST_FAILURE, \
                f"{name}: expected the first failure on {FIRST_FAILURE}, got {found}"
        cases += 1
    for n in range(2, 7 if mode == "full" else 5):
        for lam in lams:
            z = [Fraction(1, n)] * n
            W = loss_weights(f"complete:{n}", z, "zero-one")
            value = exact_minimum(F(n, lam, z, graph=f"complete:{n}"), W).value
            assert value == (n - 1) / (lam + n - 1), f"Proposition K2 fails: n={n}, lam={lam}"
            cases += 1
    for k in range(2, 6):
        for lam in lams + [Fraction(5)]:
            alpha = graph_geometric(f"star:{k + 1}", lam)[1]
            assert alpha[0] == (1 - (k - 1) / lam) / (1 + 1 / lam), f"star:{k + 1}, {lam}"
            cases += 1
    specs = ("grid:2x2", "grid:2x3") + (("grid:3x3",) if mode == "full" else ())
    for row in grid_rows(specs, lam=[2, 3] if mode == "full" else [2]):
        if row["product"] is not None:
            assert row["product"] == row["F"], f"Theorem G fails: {row}"
            cases += 1
    return cases


if __name__ == "__main__":
    print(run("full" if "--full" in sys.argv else "quick"), "cases checked")
