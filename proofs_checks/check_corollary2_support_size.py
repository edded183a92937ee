"""Corollary 2: an extreme B of R_F has between |P| and |P| + n - 1 positive
entries, P = {j : z_j > 0}.

Checked exactly on every vertex of R_F over the grid; the check also reports
that both bounds are attained somewhere on the grid (they are tight).
"""

from __future__ import annotations

import sys

from dpfix.cases import rf_grid, rf_vertices

RESULT = "Corollary 2"
STATEMENT = "extreme B of R_F has between |P| and |P| + n - 1 positive entries"


def run(mode: str = "quick") -> int:
    cases = 0
    attained_low = attained_high = False
    for n, lam, name, z in rf_grid(mode):
        p = sum(1 for v in z if v > 0)
        for B in rf_vertices(n, lam, z):
            k = sum(1 for v in B.flat if v > 0)
            assert p <= k <= p + n - 1, (f"{k} positive entries outside [{p}, {p + n - 1}]: "
                                         f"n={n}, lam={lam}, z={name}")
            attained_low |= k == p
            attained_high |= k == p + n - 1
            cases += 1
    assert attained_low and attained_high, "a bound of Corollary 2 is never attained"
    return cases


if __name__ == "__main__":
    print(run("full" if "--full" in sys.argv else "quick"), "cases checked")
