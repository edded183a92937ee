"""Pairs of counts sampled as ``T = (G_a x G_b) R``: exact product noise, then a public remap.

A row ``(a, b)`` of two count columns is released as ``j = R(m)`` with
``m = (clamp(a + k_a, 0, n_a - 1), clamp(b + k_b, 0, n_b - 1))``, ``k_a`` and ``k_b``
independent exact two-sided geometric draws at the rationals ``lam_a`` and ``lam_b``
(:class:`dpfix.sampling.geometric.TwoSidedGeometric`), and ``R`` a remap of the
``n_a n_b`` states that depends only on the public joint target ``z`` (the optimal
transport plan of docs/joint.md section 3, as a :class:`~dpfix.sampling.structured.Remap`
over the flattened states ``m_a n_b + m_b``). ``T`` is never built: memory is that of
``R`` (at most ``2 n_a n_b`` pieces for a basic plan) and the work per row is ``O(1)``
expected (two geometric draws, one uniform word and one binary search in ``R``'s
thresholds, ``O(log(n_a n_b))``).

Privacy is that of ``G_a x G_b`` (docs/joint.md section 2): ``lam_a``-DP for a change
of ``a`` by one, ``lam_b`` for ``b``, ``lam_a lam_b`` for both; ``R`` is post-processing
whatever its float accuracy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.sampling.geometric import TwoSidedGeometric
from dpfix.sampling.source import RandomSource, random_source
from dpfix.sampling.structured import Remap

__all__ = ["JointSampler", "geometric_matrix"]


def geometric_matrix(n: int, lam: Fraction) -> np.ndarray:
    """The truncated geometric mechanism ``G[i, m] = c_m lam^-|i-m|`` in Fractions.

    Examples
    --------
    >>> geometric_matrix(2, Fraction(2)).tolist()
    [[Fraction(2, 3), Fraction(1, 3)], [Fraction(1, 3), Fraction(2, 3)]]
    """
    rho = 1 / Fraction(lam)
    if n == 1:
        return np.array([[Fraction(1)]], dtype=object)
    c = [1 / (1 + rho)] + [(1 - rho) / (1 + rho)] * (n - 2) + [1 / (1 + rho)]
    return np.array([[c[m] * rho ** abs(i - m) for m in range(n)] for i in range(n)],
                    dtype=object)


def _column(counts: Any, n: int, name: str) -> np.ndarray:
    d = np.asarray(counts)
    if d.ndim != 1 or (d.size and d.dtype.kind not in "iu"):
        raise ValueError(f"{name}: expected a vector of integers")
    d = d.astype(np.int64, copy=False)
    if d.size and (d.min() < 0 or d.max() >= n):
        raise ValueError(f"{name}: must lie in 0..{n - 1}")
    return d


@dataclass
class JointSampler:
    """Draws pairs from ``T = (G_a x G_b) R`` without building ``T``.

    Attributes
    ----------
    shape : tuple of int
        ``(n_a, n_b)``.
    lams : tuple of Fraction
        ``(lam_a, lam_b)``, the rationals of the two geometric noises.
    remap : Remap
        Over the ``n_a n_b`` flattened states ``m_a n_b + m_b``.
    constructor : str
        The name of what computed ``R`` (``"product-transport"``).
    """

    shape: tuple[int, int]
    lams: tuple[Fraction, Fraction]
    remap: Remap
    constructor: str = "product-transport"

    def __post_init__(self) -> None:
        n_a, n_b = self.shape
        if self.remap.n != n_a * n_b:
            raise ValueError(f"remap: over {self.remap.n} states, expected {n_a * n_b}")
        self.noises = tuple(TwoSidedGeometric(Fraction(lam)) for lam in self.lams)

    def sample(self, a: Any, b: Any, source: RandomSource | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """The released pairs ``R(clamp(a + k_a), clamp(b + k_b))`` (two int64 vectors).

        Examples
        --------
        >>> s = JointSampler((2, 2), (Fraction(2), Fraction(2)),
        ...                  Remap.from_placement([0, 1, 2, 3]))
        >>> [v.tolist() for v in s.sample([0, 1], [1, 1], random_source(0))]
        [[0, 1], [1, 0]]
        """
        source = random_source(None) if source is None else source
        n_a, n_b = self.shape
        da, db = _column(a, n_a, "a"), _column(b, n_b, "b")
        if da.size != db.size:
            raise ValueError(f"a, b: {da.size} and {db.size} rows; one pair per row")
        ms = []
        for d, n, noise in ((da, n_a, self.noises[0]), (db, n_b, self.noises[1])):
            if n == 1:
                ms.append(np.zeros(d.size, dtype=np.int64))
                continue
            m = noise.sample(d.size, source, cap=n - 1)
            m += d
            np.clip(m, 0, n - 1, out=m)
            ms.append(m)
        j = self.remap.apply(ms[0] * n_b + ms[1], source)
        return j // n_b, j % n_b

    def matrix(self, drawn: bool = False) -> np.ndarray:
        """``(G_a x G_b) R`` in Fractions (small sizes): with ``drawn``, exactly what is sampled."""
        G = np.kron(geometric_matrix(self.shape[0], self.lams[0]),
                    geometric_matrix(self.shape[1], self.lams[1]))
        return G.dot(self.remap.matrix(drawn))

    @property
    def eps(self) -> tuple[float, float]:
        """``(log lam_a, log lam_b)``: the exact privacy level of each column's noise."""
        return (math.log(self.lams[0]), math.log(self.lams[1]))

    def describe(self, source: RandomSource) -> dict[str, Any]:
        """The sampler for a report: kind, the two ``lam``, source and the privacy statement."""
        la, lb = self.lams
        return {"kind": "structured (G_a x G_b) R", "constructor": self.constructor,
                "lam": [f"{la.numerator}/{la.denominator}", f"{lb.numerator}/{lb.denominator}"],
                "eps_sampled": list(self.eps),
                "noise": "exact two-sided geometric per column, integer thresholds",
                "source": source.description, "secure": source.secure,
                "remap_pieces": int(self.remap.cols.size),
                "privacy_statement": (
                    f"Every output is R(clamp(a + k_a), clamp(b + k_b)) with k_a, k_b drawn "
                    f"independently from the exact two-sided geometric laws at lam_a = {la} and "
                    f"lam_b = {lb} (each <= e^eps of its column, proved in rational "
                    f"arithmetic) from {source.description}: a change of a by one moves the "
                    f"probability of any output by at most lam_a, of b by lam_b, of both by "
                    "lam_a lam_b. R depends only on the public joint target z: "
                    "post-processing (docs/joint.md).")}
