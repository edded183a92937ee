"""Structured mechanisms sampled as ``T = G R``: exact geometric noise, then a public remap.

The northwest corner (Theorem A of docs/optimum_of_F.md), Algorithm 2's
unfixed optimum (Theorems 7-8) and the truncated geometric mechanism are all
``T = G R``: ``G`` adds two-sided geometric noise to the count and clamps it to
``0 .. n-1`` (the truncated geometric mechanism, ``G[i, m] = c_m rho^|i-m|``),
and ``R`` is a remap of the clamped value ``m`` that depends only on the
public target ``z``: for the northwest corner the pieces of the
northwest-corner plan (at most ``2n - 1`` in all, each scale ``m`` sent to
consecutive columns), for Algorithm 2 the placement ``g(m)``, for the
truncated geometric mechanism the identity. A row is drawn as
``j = R(clamp(d + k, 0, n-1))`` with ``k`` from
:class:`dpfix.sampling.geometric.TwoSidedGeometric`: ``T`` is never built,
memory is ``O(n)`` and time ``O(1)`` per row. The rows' noise is drawn first,
then the remap's words; the sign, the clamp and the remap's table lookups run
in blocks of ``2^16`` rows, so that their arrays stay in cache.

Privacy is that of ``G``, exactly ``log(lam)``-DP for the rational ``lam``
the noise is drawn with, by post-processing, whatever the float accuracy of
``R`` (docs/sampling.md section 2). The remaps themselves are computed by
:func:`dpfix.constructors.remap.structured_sampler` (this floor knows no
constructor).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.numbers.deprecation import renamed_keywords
from dpfix.numbers.numeric import geometric_amounts
from dpfix.sampling.geometric import TwoSidedGeometric, signed
from dpfix.sampling.source import RandomSource, random_source

__all__ = ["Remap", "StructuredSampler", "STRUCTURED", "privacy_statement", "side_sums"]

#: The constructors sampled as ``G R``.
STRUCTURED = ("northwest", "unfixed", "truncated-geometric")

#: The column tables of :meth:`Remap.apply` hold at most this many entries (int16: 512 KB).
_TABLE_ENTRIES = 1 << 18
#: Rows per block of :meth:`StructuredSampler.sample` and of :meth:`Remap.columns`.
_BLOCK = 1 << 16


def _bits(n: int) -> int:
    """Resolution of the shares: ``(m << bits) + u`` stays below ``2^63`` for ``m < n``."""
    return 62 - max(int(n), 1).bit_length()


@dataclass
class Remap:
    """A remap ``R`` of ``0 .. n-1`` given by pieces ``(m, j, share)`` sorted by ``m``.

    Piece ``t`` of scale ``m`` is drawn when ``(m << bits) + u`` falls in
    ``[keys[t-1], keys[t])`` for ``u`` uniform below ``2^bits``: integer
    comparisons only. A table indexed by ``m`` and the top bits of ``u`` holds
    the column wherever those bits decide it (:meth:`column_table`); the other
    rows (a share boundary among their ``u``, probability below ``(pieces of m)
    2^-t``) are found by ``searchsorted``: the same column from the same word.

    Attributes
    ----------
    n : int
    start : numpy.ndarray
        ``n + 1`` offsets: the pieces of ``m`` are ``start[m] .. start[m+1]-1``.
    cols : numpy.ndarray
        The column ``j`` of each piece.
    thresholds : numpy.ndarray
        int64 cumulative shares within each ``m``, out of ``2^bits`` (the last
        of each ``m`` is ``2^bits``).
    bits : int
        ``62 - bit_length(n)``: the shares' resolution (post-processing: it
        does not bear on privacy).
    shares : list, optional
        The exact shares (Fractions; None for float shares), for :meth:`matrix`.
    """

    n: int
    start: np.ndarray
    cols: np.ndarray
    thresholds: np.ndarray
    bits: int
    shares: list | None = None

    def __post_init__(self) -> None:
        ms = np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.start))
        self.keys = (ms << self.bits) + self.thresholds
        self.deterministic = bool((np.diff(self.start) == 1).all())
        self._columns: tuple[int, np.ndarray | None] | None = None

    @classmethod
    def from_pieces(cls, n: int, pieces: list[tuple[int, int, Any]]) -> Remap:
        """From ``(m, j, share)`` pieces covering every ``m`` (shares of ``m`` sum to 1).

        Examples
        --------
        >>> R = Remap.from_pieces(2, [(0, 0, Fraction(1, 3)), (0, 1, Fraction(2, 3)),
        ...                           (1, 1, Fraction(1))])
        >>> R.matrix().tolist()
        [[Fraction(1, 3), Fraction(2, 3)], [Fraction(0, 1), Fraction(1, 1)]]
        """
        ms = np.array([m for m, _, _ in pieces], dtype=np.int64)
        if ms.size == 0 or (np.diff(ms) < 0).any() or not np.array_equal(np.unique(ms),
                                                                         np.arange(n)):
            raise ValueError("pieces: must cover 0 .. n-1 in order")
        start = np.searchsorted(ms, np.arange(n + 1), side="left").astype(np.int64)
        cols = np.array([j for _, j, _ in pieces], dtype=np.int64)
        shares = [r for _, _, r in pieces]
        bits = _bits(n)
        one = 1 << bits
        if all(isinstance(r, Fraction) for r in shares):
            thresholds = np.empty(len(pieces), dtype=np.int64)
            for m in range(n):
                acc = Fraction(0)
                for t in range(int(start[m]), int(start[m + 1])):
                    acc += shares[t]
                    thresholds[t] = min(math.floor(acc * one), one)
            return cls(n, start, cols, thresholds, bits, shares)
        r = np.asarray(shares, dtype=float)
        cs = np.cumsum(r)  # non-decreasing: so are the thresholds within each m
        cum = cs - (cs[start[:-1]] - r[start[:-1]])[ms]
        thresholds = np.clip(np.floor(cum * one), 0, one).astype(np.int64)
        thresholds[start[1:] - 1] = one
        return cls(n, start, cols, thresholds, bits, None)

    @classmethod
    def from_placement(cls, g: Any) -> Remap:
        """A deterministic remap ``m -> g[m]`` (Algorithm 2's placement; identity for ``G``)."""
        g = np.asarray(g, dtype=np.int64)
        n = g.shape[0]
        bits = _bits(n)
        return cls(n, np.arange(n + 1, dtype=np.int64), g.copy(),
                   np.full(n, 1 << bits, dtype=np.int64), bits,
                   [Fraction(1)] * n if n <= 4096 else None)

    def column_table(self) -> tuple[int, np.ndarray | None]:
        """``(t, table)``: the column drawn for ``m`` and the top ``t`` bits ``v`` of ``u``.

        ``table[(m << t) + v]`` is the column of every ``u`` with those top bits
        when no key ``keys[j]`` lies in ``((m << bits) + L, (m << bits) + U]``
        (``[L, U]`` the ``u`` with top bits ``v``: ``searchsorted`` gives them all
        the same piece), else ``-1``. ``t = min(16, bits, 18 - bit_length(n))``;
        no table (None) when ``t < 4`` (``n >= 2^14``). Built once, read-only.

        Examples
        --------
        >>> R = Remap.from_pieces(1, [(0, 0, Fraction(1, 2)), (0, 1, Fraction(1, 2))])
        >>> t, table = R.column_table()
        >>> t, table[[0, 2**t // 2 - 1, 2**t // 2, 2**t - 1]].tolist()
        (16, [0, 0, 1, 1])
        """
        if self._columns is None:
            t = min(16, self.bits, (_TABLE_ENTRIES.bit_length() - 1) - int(self.n).bit_length())
            table = None
            if t >= 4:  # fewer bits: too many rows would fall on a -1
                width = np.int64(1) << np.int64(self.bits - t)
                low = (np.arange(self.n, dtype=np.int64)[:, None] << self.bits) + \
                    (np.arange(1 << t, dtype=np.int64) * width)[None, :]
                low = low.ravel()
                piece = np.searchsorted(self.keys, low, side="right")
                last = np.searchsorted(self.keys, low + (width - 1), side="right")
                table = self.cols[piece].astype(np.int16)  # n < 2^14: the columns fit
                table[last != piece] = -1
                table.flags.writeable = False
            self._columns = (t, table)
        return self._columns

    def apply(self, m: np.ndarray, source: RandomSource) -> np.ndarray:
        """``j`` drawn from ``R[m, :]`` for every entry of ``m`` (int64), one word per entry.

        Examples
        --------
        >>> R = Remap.from_placement([0, 0, 1])
        >>> R.apply(np.array([2, 1, 0]), random_source(0)).tolist()
        [1, 0, 0]
        """
        if self.deterministic:
            return self.cols[m]
        return self.columns(m, source.words(m.size))

    def columns(self, m: np.ndarray, w: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """The columns drawn for the scales ``m`` with the words ``w`` (``u``: their top bits).

        By :meth:`column_table` where it decides, by ``searchsorted`` elsewhere (and
        without a table); int64, written to ``out`` when given (an int64 vector of
        ``len(m)`` entries).

        Examples
        --------
        >>> R = Remap.from_pieces(1, [(0, 0, Fraction(1, 2)), (0, 1, Fraction(1, 2))])
        >>> R.columns(np.zeros(2, np.int64), np.array([2**63 - 1, 2**63], np.uint64)).tolist()
        [0, 1]
        """
        t, table = self.column_table()
        if out is None:
            out = np.empty(m.size, dtype=np.int64)
        if table is None:
            out[:] = self._search(m, w)
            return out
        shift = np.uint64(64 - t)
        for start in range(0, m.size, _BLOCK):  # blocks: the indices stay in cache
            stop = min(start + _BLOCK, m.size)
            at = m[start:stop].astype(np.int32)  # below n 2^t <= 2^18
            at <<= t
            at += (w[start:stop] >> shift).astype(np.int32)
            col = table.take(at, mode="clip")  # in range: "clip" skips a check
            out[start:stop] = col
            hard = np.flatnonzero(col < 0)
            if hard.size:
                hard += start
                out[hard] = self._search(m[hard], w[hard])
        return out

    def _search(self, m: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The columns of the scales ``m`` for the words ``w`` (``u`` their top bits)."""
        key = (w >> np.uint64(64 - self.bits)).astype(np.int64)
        key += m.astype(np.int64) << self.bits
        return self.cols[np.searchsorted(self.keys, key, side="right")]

    def drawn_shares(self) -> np.ndarray:
        """The probability each piece is drawn with (int64 numerators out of ``2^bits``)."""
        prev = np.concatenate([[0], self.thresholds[:-1]])
        prev[self.start[:-1]] = 0
        return self.thresholds - prev

    def matrix(self, drawn: bool = False) -> np.ndarray:
        """``R`` as an ``n x n`` matrix of Fractions (small ``n``).

        The exact shares, or with ``drawn`` (or float shares) the probabilities
        the thresholds draw, out of ``2^bits``.
        """
        exact = self.shares is not None and not drawn
        one = 1 << self.bits
        shares = self.shares if exact else [Fraction(int(v), one) for v in self.drawn_shares()]
        R = np.full((self.n, self.n), Fraction(0), dtype=object)
        for m in range(self.n):
            for t in range(int(self.start[m]), int(self.start[m + 1])):
                R[m, int(self.cols[t])] += shares[t]
        return R


#: The terms up to which :func:`side_sums` runs its recursion as a loop.
_LOOP_TERMS = 1 << 14


def _recursion(v: np.ndarray, rho: float) -> np.ndarray:
    """``y_m = v_m + rho y_(m-1)``, ``y_0 = v_0`` (float64)."""
    v = np.asarray(v, dtype=np.float64)
    if v.size > _LOOP_TERMS:
        from scipy.signal import lfilter

        return lfilter([1.0], [1.0, -rho], v)
    out, acc = [], 0.0
    for x in v.tolist():
        acc = x + rho * acc
        out.append(acc)
    return np.array(out, dtype=np.float64)


def side_sums(v: np.ndarray, rho: float) -> tuple[np.ndarray, np.ndarray]:
    """``A[m] = sum_{i<=m} v_i rho^(m-i)`` and ``B[m] = sum_{i>m} v_i rho^(i-m)``, ``O(n)``.

    Linear recursions of non-negative terms, ``y_m = v_m + rho y_(m-1)`` in float64 (the
    operations of ``scipy.signal.lfilter``, whose import is long, for ``n`` above
    :data:`_LOOP_TERMS`; a loop below: the same results bit for bit): no cancellation;
    terms below float64's range underflow to 0.
    """
    A = _recursion(v, rho)
    D = _recursion(v[::-1], rho)[::-1]  # sum_{i>=m} v_i rho^(i-m)
    B = np.zeros_like(A)
    B[:-1] = rho * D[1:]
    return A, B


@dataclass
class StructuredSampler:
    """Draws rows of ``T = G R`` without building ``T``.

    Attributes
    ----------
    constructor : str
        ``"northwest"``, ``"unfixed"`` or ``"truncated-geometric"``.
    n : int
    lam : Fraction
        The noise's ``lam = p/q``; ``G`` is exactly ``log(lam)``-DP.
    remap : Remap
    z : numpy.ndarray or None
        The public target ``R`` was computed from.
    """

    constructor: str
    n: int
    lam: Fraction
    remap: Remap
    z: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.noise = TwoSidedGeometric(self.lam)

    @property
    def eps(self) -> float:
        """``log(lam)``, the exact privacy level of what is sampled."""
        return math.log(self.lam)

    @renamed_keywords(source="seed")
    def sample(self, counts: Any, seed: Any = None, out: np.ndarray | None = None) -> np.ndarray:
        """``R(clamp(d + k, 0, n-1))`` for every count ``d`` (int64, ``O(1)`` per row).

        Parameters
        ----------
        counts : array_like of int
            In ``0 .. n-1``.
        seed : None, int, numpy.random.SeedSequence or RandomSource, optional
            The randomness (:func:`~dpfix.sampling.source.random_source`): the secure
            source by default; ``source=`` is its deprecated name.
        out : numpy.ndarray, optional
            An int64 vector of ``len(counts)`` entries the draws are written to (and
            returned); by default a new one.

        Returns
        -------
        numpy.ndarray of int64

        Examples
        --------
        >>> s = StructuredSampler("truncated-geometric", 3, Fraction(2),
        ...                       Remap.from_placement([0, 1, 2]))
        >>> s.sample([0, 1, 2], random_source(0)).tolist()
        [0, 1, 2]
        """
        source = random_source(seed)
        d = np.asarray(counts)
        if d.ndim != 1 or (d.size and d.dtype.kind not in "iu"):
            raise ValueError("counts: expected a vector of integers")
        if d.size and (d.min() < 0 or d.max() >= self.n):
            raise ValueError(f"counts: must lie in 0..{self.n - 1}")
        if out is None:
            out = np.empty(d.size, dtype=np.int64)
        elif out.shape != d.shape or out.dtype != np.int64:
            raise ValueError(f"out: expected an int64 vector of {d.size} entries, got "
                             f"{out.dtype} of shape {out.shape}")
        if self.n == 1:
            out[:] = 0
            return out
        g, signs = self.noise.magnitudes(d.size, source, cap=self.n - 1)
        R = self.remap
        w = None if R.deterministic else source.words(d.size)  # after all the noise's words
        # d + k lies in -(n-1) .. 2(n-1): int16 holds it below n = 2^14 (k and m in L1)
        small = np.int16 if self.n < 1 << 14 else np.int64
        for start in range(0, d.size, _BLOCK):  # blocks: k and m stay in cache
            stop = min(start + _BLOCK, d.size)
            m = signed(g[start:stop], signs[start:stop], small)
            np.add(m, d[start:stop], out=m, casting="unsafe")  # d < n: held by small
            np.clip(m, 0, self.n - 1, out=m)
            if w is None:
                np.take(R.cols, m, out=out[start:stop])
            else:
                R.columns(m, w[start:stop], out=out[start:stop])
        return out

    def matrix(self, drawn: bool = False) -> np.ndarray:
        """``G R`` in Fractions (small ``n``): with ``drawn``, exactly the ``T`` sampled.

        Without ``drawn`` the remap's exact shares (when it has them) are used:
        the mechanism ``T`` itself; with it, the shares its thresholds draw.
        """
        n, rho = self.n, 1 / self.lam
        c = [Fraction(1)] if n == 1 else (
            [1 / (1 + rho)] + [(1 - rho) / (1 + rho)] * (n - 2) + [1 / (1 + rho)])
        G = np.array([[c[m] * rho ** abs(i - m) for m in range(n)] for i in range(n)],
                     dtype=object)
        return G.dot(self.remap.matrix(drawn))

    def count_error(self, z: Any = None) -> float:
        """``<W, G R>`` for ``W[i, j] = z_i |i - j|`` in ``O(n + pieces)`` floats (no ``T``).

        With ``S(m, j) = sum_i z_i rho^|i-m| |i - j|`` from the side sums of
        ``z`` and ``i z`` (docs/sampling.md section 2), the error is
        ``sum over pieces (m, j, r) of c_m r S(m, j)``.

        Examples
        --------
        >>> s = StructuredSampler("truncated-geometric", 3, Fraction(2),
        ...                       Remap.from_placement([0, 1, 2]))
        >>> s.count_error([0.5, 0.0, 0.5])  # rows 0, 2: (1/6 * 1 + 1/6 * 2) each
        0.5
        """
        zv = np.asarray(self.z if z is None else z, dtype=float)
        n, rho = self.n, float(1 / self.lam)
        A0, B0 = side_sums(zv, rho)
        A1, B1 = side_sums(zv * np.arange(n), rho)
        c = geometric_amounts(n, rho)
        R = self.remap
        ms = np.repeat(np.arange(n), np.diff(R.start))
        js = R.cols
        share = R.drawn_shares() / float(1 << R.bits)
        fwd = js >= ms
        decay = np.exp(-np.abs(js - ms) * math.log(self.lam))
        S = np.where(fwd,
                     js * A0[ms] - A1[ms] + js * B0[ms] - B1[ms]
                     + 2 * decay * (B1[js] - js * B0[js]),
                     B1[ms] - js * B0[ms] + A1[ms] - js * A0[ms]
                     + 2 * decay * (js * A0[js] - A1[js]))
        return float((c[ms] * share * S).sum())

    def describe(self, source: RandomSource) -> dict[str, Any]:
        """The sampler for a report: kind, ``lam``, source and the privacy statement."""
        return {"kind": "structured G R", "constructor": self.constructor,
                "lam": f"{self.lam.numerator}/{self.lam.denominator}", "eps_sampled": self.eps,
                "noise": "exact two-sided geometric, integer thresholds",
                "source": source.description, "secure": source.secure,
                "remap_pieces": int(self.remap.cols.size),
                "privacy_statement": privacy_statement(self, source)}


def privacy_statement(sampler: StructuredSampler, source: RandomSource) -> str:
    """One paragraph for the report: why what is sampled is exactly ``log(lam)``-DP."""
    lam = sampler.lam
    return (f"Every output is R(clamp(d + k, 0, {sampler.n - 1})) with k drawn from the exact "
            f"two-sided geometric law P(k) proportional to lam^-|k|, lam = "
            f"{lam.numerator}/{lam.denominator} <= e^eps (proved in rational arithmetic), by "
            f"integer comparisons of uniform integers from {source.description}: the "
            f"truncated geometric mechanism G, exactly ln(lam) = {math.log(lam):.12g}-DP. R "
            f"({sampler.constructor}) depends only on the public target z: post-processing, "
            "so the release is ln(lam)-DP whatever the float accuracy of R "
            "(docs/sampling.md).")
