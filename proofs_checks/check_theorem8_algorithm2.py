"""Theorems 7, 8 and 12: Algorithm 2 is fast, optimal over U and built from single-peaked scales.

For row-wise convex and row-wise concentrating weights ``W`` (absolute and
squared deviation, and random exact ones), exactly:

- Theorem 8: ``<W, T>`` of Algorithm 2's output equals the exact LP optimum
  over ``U`` (cdd.gmp), and ``T`` is an extreme point of ``U`` (exact rank);
- Theorem 12: ``T`` is in ``U`` and every column is a conic combination of
  single-peaked scales; indeed ``T`` is the truncated geometric mechanism
  followed by the deterministic re-mapping ``m -> g(m)``;
- Theorem 7: the forward sweep makes at most ``2n - 1`` cost comparisons of
  ``O(n)`` each.
"""

from __future__ import annotations

import sys
from fractions import Fraction

import numpy as np

from dpfix.constructors.additive import truncated_geometric
from dpfix.constructors.lp import lp_optimum
from dpfix.constructors.unfixed import unfixed_optimum
from dpfix.explore.cases import LAMS, grid, random_lam, random_z
from dpfix.numbers.exact import nullspace
from dpfix.theory.polytopes import U
from dpfix.theory.scales import sigma

RESULT = "Theorems 7, 8 and 12"
STATEMENT = ("Algorithm 2 (O(n^2)) returns an extreme point of U made of single-peaked "
             "scales whose count error is the exact LP optimum over U")


def _random_weights(rng: np.random.Generator, n: int) -> np.ndarray:
    """Exact W with convex rows whose minimum is on the diagonal."""
    W = np.empty((n, n), dtype=object)
    for i in range(n):
        right = sorted(int(v) for v in rng.integers(0, 5, size=n - 1 - i))
        left = sorted(int(v) for v in rng.integers(0, 5, size=i))
        row = [Fraction(int(rng.integers(0, 3)))] * n
        for k, d in enumerate(right):
            row[i + 1 + k] = row[i + k] + d
        for k, d in enumerate(left):
            row[i - 1 - k] = row[i - k] + d
        W[i] = row
    return W


def _check(n: int, lam: Fraction, z: np.ndarray, weights, label: str) -> None:
    M = unfixed_optimum(z, lam=lam, loss=weights)
    T = M.matrix
    W = weights if not isinstance(weights, str) else None
    value = (W * T).sum() if W is not None else M.count_error(z, weights)
    best = lp_optimum(z, lam=lam, loss=weights, fixed=False, solver="exact")
    assert value == best.params["objective"], (
        f"{label}: Algorithm 2 gives {value}, the LP optimum over U is {best.params['objective']}")
    assert U(n, lam).contains(T) and M.is_dp(lam=lam), f"{label}: output not in U"
    assert U(n, lam).is_extreme(T), f"{label}: output is not an extreme point of U"
    g = M.params["placement"]
    assert list(g) == sorted(g), f"{label}: placement {g} is not non-decreasing"
    remap = np.full((n, n), Fraction(0), dtype=object)
    for m, col in enumerate(g):
        remap[m, col] = Fraction(1)
    assert (truncated_geometric(n, lam=lam).matrix.dot(remap) == T).all(), (
        f"{label}: T is not the truncated geometric mechanism re-mapped by g")
    S = sigma(n, lam)
    for col in range(n):
        N = nullspace(np.concatenate([S, -T[:, col:col + 1]], axis=1))
        beta = N[:n, 0] / N[n, 0]
        assert all(b >= 0 for b in beta), f"{label}: column {col} is not conic in Sigma"
    assert M.params["cost_evaluations"] <= 2 * n - 1, (
        f"{label}: {M.params['cost_evaluations']} cost comparisons > 2n - 1")


def run(mode: str = "quick") -> int:
    rng = np.random.default_rng(8)
    cases = 0
    ns = (2, 3, 4) if mode == "quick" else (2, 3, 4, 5, 6)
    for n, lam, name, z in grid(n=ns, lam=LAMS):
        for weights in ("abs", "squared", _random_weights(rng, n)):
            kind = weights if isinstance(weights, str) else "random W"
            _check(n, lam, z, weights, f"n={n}, lam={lam}, z={name}, {kind}")
            cases += 1
    for t in range(40 if mode == "quick" else 300):
        n = int(rng.integers(2, 6 if mode == "quick" else 8))
        lam = random_lam(rng)
        z = random_z(rng, n, zeros=int(rng.integers(0, n)))
        for weights in ("abs", "squared", _random_weights(rng, n)):
            kind = weights if isinstance(weights, str) else "random W"
            _check(n, lam, z, weights, f"random case {t}: n={n}, lam={lam}, z={list(z)}, {kind}")
            cases += 1
    return cases


if __name__ == "__main__":
    print(run("full" if "--full" in sys.argv else "quick"), "cases checked")
