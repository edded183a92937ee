"""The exact two-sided geometric sampler: ``P(k)`` proportional to ``lam^-|k|``, ``lam = p/q``.

Integer operations only (docs/sampling.md section 1):

- a geometric magnitude ``G`` (``P(G >= g) = rho^g``, ``rho = q/p``) is read off
  ``K`` base-``p`` digits at a time: for ``W`` uniform on ``0 .. p^K - 1`` the
  sets ``{W < q^b p^(K-b)}``, ``b = 1 .. K``, are nested and have probability
  ``rho^b``, so ``B = #{b : W < q^b p^(K-b)}`` has ``P(B >= b) = rho^b``; when
  ``B = K`` (probability ``rho^K``) the count goes on with fresh digits
  (memorylessness). Vectorised over all rows, one pass per block;
- the first block draws ``|k|`` itself: with ``W`` uniform on ``0 .. (p+q) p^K - 1``,
  ``|k| = #{g : W < 2 q^g p^(K+1-g)}`` has ``P(|k| >= g) = 2 rho^g / (1 + rho)``
  for ``g = 1 .. K``, the law of ``|k|``; at ``|k| = K`` it goes on as a
  geometric (memoryless, ``J`` digits per further draw), and an independent
  sign bit (from the same uniform draw) signs it, so ``P(k)`` is proportional
  to ``rho^|k|`` with no rejection;
- with ``cap``, the magnitude stops at ``cap`` (``min(|k|, cap)`` with its sign
  is exact): enough for ``clamp(i + k, 0, n-1)`` with ``cap = n - 1``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.sampling.source import RandomSource, random_source

__all__ = ["TwoSidedGeometric", "two_sided_geometric_pmf"]

#: ``2 (p + q) p^K`` stays at most this (uniform draws below it refuse at most 1/8 of the words).
_MAX_BOUND = 1 << 61


class TwoSidedGeometric:
    """Exact sampler of ``P(k) = (1 - rho)/(1 + rho) rho^|k|``, ``rho = 1/lam``, ``k`` in Z.

    Parameters
    ----------
    lam : int, Fraction or str
        A rational ``lam = p/q > 1`` with ``2 (p + q) p <= 2^63`` (``p`` up to about
        ``2^31``; :func:`dpfix.sampling.source.rational_lam` keeps ``p <= 2^30``).

    Attributes
    ----------
    lam : Fraction
    digits, more_digits : int
        ``K`` and ``J``, the base-``p`` digits read by the first and by each
        further uniform draw.

    Examples
    --------
    >>> g = TwoSidedGeometric(2)
    >>> g.digits, g.sample(5, random_source(0)).tolist()
    (58, [0, 0, 1, -2, 0])
    """

    def __init__(self, lam: Any) -> None:
        lam = Fraction(lam)
        if not lam > 1:
            raise ValueError(f"lam: must be a rational > 1, got {lam}")
        p, q = lam.numerator, lam.denominator
        if 2 * (p + q) * p > 1 << 63:
            raise ValueError(f"lam: numerator {p} too large for the exact sampler "
                             "(2 (p + q) p must stay below 2^63)")
        K = 1
        while 2 * (p + q) * p ** (K + 1) <= _MAX_BOUND:
            K += 1
        self.lam, self.p, self.q, self.digits = lam, p, q, K
        # first draw: W uniform below (p+q) p^K; P(|k| >= g) = 2 rho^g / (1 + rho)
        # = t_g / ((p+q) p^K) with t_g = 2 q^g p^(K+1-g), g = 1..K (decreasing)
        self.first = (p + q) * p ** K
        self._first_thresholds = np.array([2 * q ** g * p ** (K + 1 - g)
                                           for g in range(K, 0, -1)], dtype=np.uint64)
        # continuation (memoryless): W uniform below p^K; P(B >= b) = rho^b = c_b / p^K
        # with c_b = q^b p^(K-b), b = 1..K (decreasing)
        J = 1
        while p ** (J + 1) <= _MAX_BOUND:
            J += 1
        self.more_digits, self.block = J, p ** J
        self._thresholds = np.array([q ** b * p ** (J - b) for b in range(J, 0, -1)],
                                    dtype=np.uint64)

    def sample(self, size: int, source: RandomSource | None = None,
               cap: int | None = None) -> np.ndarray:
        """``size`` independent draws (int64); with ``cap``, ``sign(k) min(|k|, cap)``.

        Parameters
        ----------
        size : int
            How many.
        source : RandomSource, optional
            Default: the secure source.
        cap : int, optional
            ``>= 1``: magnitudes above it are reported as ``cap`` (exactly the
            law of ``sign(k) min(|k|, cap)``), which bounds the work per draw.

        Returns
        -------
        numpy.ndarray of int64
        """
        source = random_source(None) if source is None else source
        if cap is not None and cap < 1:
            raise ValueError(f"cap: must be >= 1, got {cap}")
        K = self.digits
        v = source.below(2 * self.first, int(size))  # sign bit and W, independent
        negative = (v & np.uint64(1)).astype(bool)
        g = K - np.searchsorted(self._first_thresholds, v >> np.uint64(1), side="right")
        more = np.flatnonzero(g == K)
        while more.size:
            if cap is not None:
                more = more[g[more] < cap]
                if not more.size:
                    break
            J = self.more_digits
            d = J - np.searchsorted(self._thresholds, source.below(self.block, more.size),
                                    side="right")
            g[more] += d
            more = more[d == J]
        if cap is not None:
            np.minimum(g, cap, out=g)
        np.negative(g, out=g, where=negative)
        return g


def two_sided_geometric_pmf(lam: Any, k: Any) -> Fraction:
    """``P(k) = (1 - rho)/(1 + rho) rho^|k|`` exactly (``rho = 1/lam``).

    Examples
    --------
    >>> two_sided_geometric_pmf(2, -1)
    Fraction(1, 6)
    """
    rho = 1 / Fraction(lam)
    return (1 - rho) / (1 + rho) * rho ** abs(int(k))
