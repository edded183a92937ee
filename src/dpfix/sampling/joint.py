"""Tuples of counts sampled as ``T = (G_1 x ... x G_k) R``: exact product noise, then a
public remap (pairs ``k = 2`` and triples ``k = 3``, docs/joint.md).

A row ``(a, b)`` of two count columns is released as ``j = R(m)`` with
``m = (clamp(a + k_a, 0, n_a - 1), clamp(b + k_b, 0, n_b - 1))``, ``k_a`` and ``k_b``
independent exact two-sided geometric draws at the rationals ``lam_a`` and ``lam_b``
(:class:`dpfix.sampling.geometric.TwoSidedGeometric`), and ``R`` a remap of the
``n_a n_b`` states that depends only on the public joint target ``z`` (the optimal
transport plan of docs/joint.md section 3, as a :class:`~dpfix.sampling.structured.Remap`
over the flattened states ``m_a n_b + m_b``, C order). A tuple of ``k`` columns is the
same with one noise per column and the states flattened in C order. ``T`` is never
built: memory is that of ``R`` (at most ``2 N`` pieces for a basic plan over ``N``
states) and the work per row is ``O(1)`` expected (``k`` geometric draws, one uniform
word and one binary search in ``R``'s thresholds, ``O(log N)``).

Privacy is that of the product (docs/joint.md section 2): ``lam_c``-DP for a change of
column ``c`` by one, the product of the ``lam_c`` of the columns that change for a change
of several; ``R`` is post-processing whatever its float accuracy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.numbers.deprecation import renamed_keywords
from dpfix.sampling.geometric import TwoSidedGeometric
from dpfix.sampling.source import RandomSource, random_source
from dpfix.sampling.structured import Remap

__all__ = ["JointSampler", "geometric_matrix", "apply_axes"]


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


def apply_axes(Z: np.ndarray, mats: Any, transpose: bool = False) -> np.ndarray:
    """``Z`` with the matrix ``mats[c]`` applied along its axis ``c``, every axis.

    ``transpose=False``: ``W[m] = sum_s Z[s] prod_c mats[c][s_c, m_c]`` (the law of the
    product noise ``z G``); ``transpose=True``: ``sum_s Z[s] prod_c mats[c][m_c, s_c]``
    (``G x``). Each axis one matrix product: ``O(N sum_c n_c)``, never the ``N x N``
    Kronecker product. Exact for object arrays (``numpy.tensordot`` on Fractions).

    Examples
    --------
    >>> G = geometric_matrix(2, Fraction(2))
    >>> apply_axes(np.array([[Fraction(1), Fraction(0)], [Fraction(0), Fraction(0)]]),
    ...            (G, G)).tolist()
    [[Fraction(4, 9), Fraction(2, 9)], [Fraction(2, 9), Fraction(1, 9)]]
    """
    out = Z
    for c, M in enumerate(mats):
        M = M.T if transpose else M
        out = np.moveaxis(np.tensordot(out, M, axes=([c], [0])), -1, c)
    return out


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
    """Draws tuples from ``T = (G_1 x ... x G_k) R`` without building ``T``.

    Attributes
    ----------
    shape : tuple of int
        ``(n_1, ..., n_k)`` (``(n_a, n_b)`` for a pair).
    lams : tuple of Fraction
        One rational per column, the levels of the geometric noises.
    remap : Remap
        Over the ``n_1 ... n_k`` states flattened in C order (``m_a n_b + m_b``).
    constructor : str
        The name of what computed ``R`` (``"product-transport"``).
    """

    shape: tuple[int, ...]
    lams: tuple[Fraction, ...]
    remap: Remap
    constructor: str = "product-transport"

    def __post_init__(self) -> None:
        self.shape = tuple(int(n) for n in self.shape)
        if len(self.lams) != len(self.shape):
            raise ValueError(f"lams: one per column, {len(self.lams)} for {len(self.shape)}")
        if self.remap.n != math.prod(self.shape):
            raise ValueError(f"remap: over {self.remap.n} states, expected "
                             f"{math.prod(self.shape)}")
        self.noises = tuple(TwoSidedGeometric(Fraction(lam)) for lam in self.lams)

    @renamed_keywords(source="seed")
    def sample(self, *columns: Any, seed: Any = None) -> tuple[np.ndarray, ...]:
        """The released tuples ``R(clamp(a + k_a), clamp(b + k_b), ...)`` (int64 vectors).

        ``columns``: one vector per column (one tuple per row); a RandomSource given after
        them positionally is the randomness. ``seed``: as for
        :meth:`dpfix.sampling.structured.StructuredSampler.sample`.

        Examples
        --------
        >>> s = JointSampler((2, 2), (Fraction(2), Fraction(2)),
        ...                  Remap.from_placement([0, 1, 2, 3]))
        >>> [v.tolist() for v in s.sample([0, 1], [1, 1], random_source(0))]
        [[0, 1], [1, 0]]
        """
        if len(columns) == len(self.shape) + 1 and isinstance(columns[-1], RandomSource):
            columns, seed = columns[:-1], columns[-1]
        if len(columns) != len(self.shape):
            raise ValueError(f"columns: {len(self.shape)} vectors, got {len(columns)}")
        source = random_source(seed)
        names = "abcdefgh"
        ds = [_column(c, n, names[k]) for k, (c, n) in enumerate(zip(columns, self.shape,
                                                                       strict=True))]
        if len({d.size for d in ds}) != 1:
            raise ValueError(f"{', '.join(names[:len(ds)])}: "
                             f"{' and '.join(str(d.size) for d in ds)} rows; one tuple per row")
        ms = []
        for d, n, noise in zip(ds, self.shape, self.noises, strict=True):
            if n == 1:
                ms.append(np.zeros(d.size, dtype=np.int64))
                continue
            m = noise.sample(d.size, source, cap=n - 1)
            m += d
            np.clip(m, 0, n - 1, out=m)
            ms.append(m)
        j = self.remap.apply(np.ravel_multi_index(tuple(ms), self.shape), source)
        return tuple(np.asarray(v, dtype=np.int64) for v in np.unravel_index(j, self.shape))

    def matrix(self, drawn: bool = False) -> np.ndarray:
        """``(G_1 x ... x G_k) R`` in Fractions (small sizes): with ``drawn``, exactly what
        is sampled."""
        G = np.array([[Fraction(1)]], dtype=object)
        for n, lam in zip(self.shape, self.lams, strict=True):
            G = np.kron(G, geometric_matrix(n, lam))
        return G.dot(self.remap.matrix(drawn))

    @property
    def eps(self) -> tuple[float, ...]:
        """``log lam_c`` per column: the exact privacy level of each column's noise."""
        return tuple(math.log(lam) for lam in self.lams)

    def describe(self, source: RandomSource) -> dict[str, Any]:
        """The sampler for a report: kind, the ``lam`` per column, source and the privacy
        statement."""
        k = len(self.lams)
        letters = "abcdefgh"[:k]
        kind = "structured (G_a x G_b) R" if k == 2 else \
            f"structured ({' x '.join('G_' + c for c in letters)}) R"
        laws = ", ".join(f"lam_{c} = {lam}" for c, lam in zip(letters, self.lams, strict=True))
        moved = "(" + ", ".join(f"clamp({c} + k_{c})" for c in letters) + ")"
        return {"kind": kind, "constructor": self.constructor,
                "lam": [f"{lam.numerator}/{lam.denominator}" for lam in self.lams],
                "eps_sampled": list(self.eps),
                "noise": "exact two-sided geometric per column, integer thresholds",
                "source": source.description, "secure": source.secure,
                "remap_pieces": int(self.remap.cols.size),
                "privacy_statement": (
                    f"Every output is R{moved} with {', '.join('k_' + c for c in letters)} "
                    f"drawn independently from the exact two-sided geometric laws at {laws} "
                    f"(each <= e^eps of its column, proved in rational arithmetic) from "
                    f"{source.description}: a change of one column by one moves the "
                    "probability of any output by at most that column's lam, a change of "
                    "several by the product of theirs. R depends only on the public joint "
                    "target z: post-processing (docs/joint.md).")}
