"""Theorems 5 and 6: Algorithm 1 stops within |P| + n - 1 passes at an extreme point of F[z].

Every case runs the exact path (rational lam, Fractions end to end) and checks:
the result is in F[z] exactly (rows sum to 1, z T = z, every column
eps-neighbour-indistinguishable); it is extreme, i.e. the constraints of F active
at T have exact rank n^2 (docs/math_notes.md section 3), with dpfix.theory.polytopes as a second
opinion when that module is present; the number of passes (scale additions) is
at most |P| + n - 1 (Theorem 5's count; P = {j : z_j > 0}); and Psi B = T for
the recorded scale representation B >= 0 (Theorem 3). Cases: the standard
grid (n in 2..4, lam in 3/2, 2, 3, named z including a zero entry) with every
selector, seeded random rational z (some with several zeros), and larger n
(6..10) for membership in F and the pass count.
"""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

from dpfix.constructors.heuristic import heuristic, scale_representation
from dpfix.explore.cases import grid
from dpfix.numbers.exact import rank
from dpfix.theory.scales import psi

RESULT = "Theorems 5 and 6"
STATEMENT = ("Algorithm 1 makes at most |P| + n - 1 scale additions and returns an extreme "
             "point of F[z]")

SELECTORS = ("max", "min", "sandwich", "random")
LAMS = (Fraction(5, 4), Fraction(3, 2), Fraction(2), Fraction(3), Fraction(7))

try:  # a second opinion on extremeness, when that module exists
    from dpfix.theory.polytopes import F as _F_polytope
except ImportError:  # pragma: no cover
    _F_polytope = None


def active_rank(T: np.ndarray, z: np.ndarray, lam: Fraction) -> int:
    """Exact rank of the constraints of F active at T: n row sums, n fixed-point
    equalities and every tight neighbour inequality, over T's n^2 entries."""
    n = T.shape[0]
    rows = [[1 if k // n == i else 0 for k in range(n * n)] for i in range(n)]
    rows += [[z[k // n] if k % n == j else 0 for k in range(n * n)] for j in range(n)]
    for j in range(n):
        for i in range(n - 1):
            for hi, lo in ((i, i + 1), (i + 1, i)):  # T[hi, j] <= lam T[lo, j]
                if T[hi, j] == lam * T[lo, j]:
                    row = [0] * (n * n)
                    row[hi * n + j], row[lo * n + j] = 1, -lam
                    rows.append(row)
    return rank(rows)


def check_case(z: np.ndarray, lam: Fraction, selector: str, label: str, *, extreme: bool = True,
               seed: int = 0) -> None:
    n = len(z)
    m = heuristic(z, lam=lam, selector=selector, seed=seed)
    case = f"{label}, n={n}, lam={lam}, selector={selector}, z={[str(v) for v in z]}"
    T = m.matrix
    assert all(isinstance(v, Fraction) for v in T.flat), f"not exact: {case}"
    assert all(v >= 0 for v in T.flat), f"negative entry: {case}"
    assert all(s == 1 for s in T.sum(axis=1)), f"rows do not sum to 1: {case}"
    assert (z @ T == z).all(), f"z T != z: {case}"
    assert m.is_dp(lam=lam), f"not eps-DP: {case}"
    support = sum(1 for v in z if v > 0)
    passes = m.params["passes"]
    assert support <= passes <= support + n - 1, f"{passes} passes, |P| = {support}: {case}"
    if not extreme:
        return
    assert active_rank(T, z, lam) == n * n, f"not extreme (active rank < n^2): {case}"
    if _F_polytope is not None:
        assert _F_polytope(n, lam, z).is_extreme(T), f"dpfix.theory.polytopes: not extreme: {case}"
    B = scale_representation(m)
    assert all(v >= 0 for v in B.flat) and (psi(n, lam) @ B == T).all(), f"Psi B != T: {case}"


def _random_z(rng: np.random.Generator, n: int, zeros: int) -> np.ndarray:
    w = [int(v) for v in rng.integers(1, 9, n)]
    for k in rng.choice(n, size=min(zeros, n - 1), replace=False):
        w[int(k)] = 0
    return np.array([Fraction(v, sum(w)) for v in w], dtype=object)


def run(mode: str = "quick") -> int:
    """Check the statement; returns the number of cases checked."""
    full = mode == "full"
    cases = 0
    for _n, lam, name, z in grid():
        for selector in SELECTORS:
            check_case(z, lam, selector, f"grid {name}", seed=cases)
            cases += 1
    rng = np.random.default_rng(20260101)
    for k in range(300 if full else 40):
        n = int(rng.integers(2, 7 if full else 6))
        z = _random_z(rng, n, zeros=int(rng.integers(0, n)))
        lam = LAMS[k % len(LAMS)]
        check_case(z, lam, SELECTORS[k % len(SELECTORS)], f"random #{k}", seed=k)
        cases += 1
    for n in range(6, 11) if full else (6, 8):
        for lam in (Fraction(3, 2), Fraction(3)):
            z = _random_z(rng, n, zeros=n // 3)
            check_case(z, lam, "sandwich", "larger n", extreme=full and n <= 7)
            cases += 1
    return cases


if __name__ == "__main__":
    chosen = "full" if "--full" in sys.argv[1:] else "quick"
    print(f"{Path(__file__).name}: {RESULT}: {STATEMENT}")
    print(f"ok: {run(chosen)} cases ({chosen})")
