"""Standard small cases on which the theory is checked (tests and ``proofs_checks``).

The grid of the issue "exact core": ``n`` in {2, 3, 4}, ``lam`` in
{3/2, 2, 3}, and for each ``n`` a uniform ``z``, a geometric ``z``, a ``z``
with a zero entry and an asymmetric ``z``; all exact.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

import numpy as np

__all__ = ["LAMS", "NS", "standard_z", "grid"]

LAMS: tuple[Fraction, ...] = (Fraction(3, 2), Fraction(2), Fraction(3))
NS: tuple[int, ...] = (2, 3, 4)


def _normalised(weights: list[int]) -> np.ndarray:
    total = sum(weights)
    return np.array([Fraction(w, total) for w in weights], dtype=object)


def standard_z(n: int) -> dict[str, np.ndarray]:
    """Named exact target distributions of length ``n``.

    Examples
    --------
    >>> sorted(standard_z(3))
    ['asymmetric', 'geometric', 'uniform', 'zero']
    >>> standard_z(3)["zero"].tolist()
    [Fraction(2, 3), Fraction(0, 1), Fraction(1, 3)]
    """
    if n < 2:
        raise ValueError(f"n: must be >= 2, got {n}")
    out = {
        "uniform": _normalised([1] * n),
        "geometric": _normalised([2 ** (n - 1 - i) for i in range(n)]),
        # 1, 3, 2, 5, 4, ...: neither monotone nor symmetric
        "asymmetric": _normalised([i + 1 + (2 if i % 2 else 0) for i in range(n)]),
    }
    zero = [2] + [1] * (n - 1)
    zero[1 if n > 2 else n - 1] = 0
    if n == 2:
        zero = [1, 0]
    out["zero"] = _normalised(zero)
    return out


def grid(ns: tuple[int, ...] = NS, lams: tuple[Fraction, ...] = LAMS
         ) -> Iterator[tuple[int, Fraction, str, np.ndarray]]:
    """Every ``(n, lam, z_name, z)`` of the standard grid."""
    for n in ns:
        for lam in lams:
            for name, z in standard_z(n).items():
                yield n, lam, name, z
