"""Benchmark: exact arithmetic over a real number field Q(lam), three ways.

The workload: Gaussian elimination (to the determinant) of the 20 x 20 matrix
``M[i, j] = lam^((i * j) mod 7) + [i == j]`` over ``Q(lam)`` for ``lam`` of degree 2
(golden ratio), 3 (the real root of ``x^3 - x - 1``) and 4 (``sqrt 2 + sqrt 3``),
pivoting on the first non-zero entry (every zero test exact). Compared:

- ``flint``: :class:`dpfix.numbers.algebraic.Algebraic` (python-flint ``fmpq_poly``
  modulo the minimal polynomial);
- ``sympy-anp``: sympy's ``AlgebraicField`` domain elements (``ANP``);
- ``sympy-crootof``: sympy expressions in ``CRootOf`` (``expand`` after each step,
  zero decided by ``minimal_polynomial``), under a time cap.

All three give the same determinant (checked). Writes
``benchmarks/results/algebraic.json``; run ``python benchmarks/bench_algebraic.py
[--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results" / "algebraic.json"
FIELDS = [("x^2 - x - 1", [-1, -1, 1], 1.618), ("x^3 - x - 1", [-1, -1, 0, 1], 1.3247),
          ("x^4 - 10*x^2 + 1", [1, 0, -10, 0, 1], 3.146)]
N = 20


def _matrix(lam: Any, one: Any) -> list[list[Any]]:
    return [[lam ** ((i * j) % 7) + (one if i == j else 0 * one) for j in range(N)]
            for i in range(N)]


def _det(M: list[list[Any]], is_zero: Any, simplify: Any = lambda x: x, one: Any = 1) -> Any:
    M = [row[:] for row in M]
    det = None
    n = len(M)
    for c in range(n):
        p = next((r for r in range(c, n) if not is_zero(M[r][c])), None)
        if p is None:
            return 0
        M[c], M[p] = M[p], M[c]
        det = M[c][c] if det is None else simplify(det * M[c][c])
        inv = one / M[c][c]
        for r in range(c + 1, n):
            f = simplify(M[r][c] * inv)
            if not is_zero(f):
                M[r] = [simplify(a - f * b) for a, b in zip(M[r], M[c], strict=True)]
    return det


def bench_flint(text: str, near: float) -> tuple[float, Any]:
    from dpfix.numbers.algebraic import algebraic

    lam = algebraic(text, near)
    start = time.perf_counter()
    d = _det(_matrix(lam, lam.field(1)), lambda x: x == 0)
    return time.perf_counter() - start, d


def bench_anp(coeffs: list[int], near: float) -> tuple[float, Any]:
    import sympy

    x = sympy.Symbol("x")
    poly = sympy.Poly(list(reversed(coeffs)), x)
    roots = [r for r in sympy.real_roots(poly)]
    root = min(roots, key=lambda r: abs(float(r) - near))
    K = sympy.QQ.algebraic_field(root)
    start = time.perf_counter()
    lam = K.from_sympy(root)
    d = _det(_matrix(lam, K.one), lambda v: not v, one=K.one)
    return time.perf_counter() - start, K.to_sympy(d)


def bench_crootof(coeffs: list[int], near: float, cap: int) -> tuple[float | None, Any]:
    import sympy

    x = sympy.Symbol("x")
    poly = sympy.Poly(list(reversed(coeffs)), x)
    root = min(sympy.real_roots(poly), key=lambda r: abs(float(r) - near))

    def is_zero(v: Any) -> bool:
        v = sympy.expand(v)
        return v == 0 or sympy.minimal_polynomial(v, x) == x

    def timeout(*_: Any) -> None:
        raise TimeoutError

    signal.signal(signal.SIGALRM, timeout)
    signal.alarm(cap)
    start = time.perf_counter()
    try:
        d = _det(_matrix(root, sympy.Integer(1)), is_zero, sympy.expand)
    except TimeoutError:
        return None, None
    finally:
        signal.alarm(0)
    return time.perf_counter() - start, d


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one repeat, a 10 s cap")
    args = parser.parse_args()
    repeats, cap = (1, 10) if args.quick else (3, 60)
    rows = []
    for text, coeffs, near in FIELDS:
        t_flint = [bench_flint(text, near) for _ in range(repeats)]
        t_anp = [bench_anp(coeffs, near) for _ in range(repeats)]
        det_flint, det_anp = t_flint[0][1], t_anp[0][1]
        if abs(float(det_flint) - float(det_anp)) > 1e-6 * max(1.0, abs(float(det_anp))):
            raise AssertionError(f"{text}: determinants differ: {det_flint} and {det_anp}")
        t_cr, _ = bench_crootof(coeffs, near, cap)
        row = {"field": text, "degree": len(coeffs) - 1, "n": N,
               "flint_s": statistics.median(t for t, _ in t_flint),
               "sympy_anp_s": statistics.median(t for t, _ in t_anp),
               "sympy_crootof_s": t_cr, "crootof_cap_s": cap, "determinant": float(det_flint)}
        rows.append(row)
        cr = f"{t_cr:.2f}" if t_cr is not None else f"over {cap}"
        print(f"{text:18s} degree {row['degree']}: flint {row['flint_s']:.3f} s, "
              f"sympy ANP {row['sympy_anp_s']:.3f} s, sympy CRootOf {cr} s", flush=True)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"machine": platform.platform(), "cpus": os.cpu_count(),
                                   "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
