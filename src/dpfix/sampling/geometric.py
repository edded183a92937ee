"""The exact two-sided geometric sampler: ``P(k)`` proportional to ``lam^-|k|``, ``lam = p/q``.

Integer operations only, ``O(1)`` expected work per draw whatever ``lam``
(docs/sampling.md section 1.2). Write ``rho = q/p = 1/lam`` and
``s_g = P(|k| >= g) = 2 rho^g / (1 + rho)`` (``g >= 1``).

**Blocks of B levels.** One uniform real ``u`` in ``[0, 1)`` decides ``B``
levels of the magnitude at once: ``G = #{g = 1 .. B : u < s_g}``. The
thresholds decrease, so the events ``{u < s_g}`` are nested and ``G >= g``
iff ``u < s_g``: ``P(G >= g) = s_g``, i.e. ``G`` has the law of ``min(|k|, B)``.
When ``G = B`` (``u < s_B``), the excess ``|k| - B`` given ``|k| >= B`` is
geometric, ``P(>= m) = s_(B+m) / s_B = rho^m`` (memorylessness), drawn the
same way with the thresholds ``rho^m``, ``m = 1 .. B``, one fresh ``u`` per
block, until a block stops short of ``B``. A sign bit independent of ``u``
signs the magnitude; the law is symmetric, so ``P(k) = (1 - rho)/(1 + rho)
rho^|k|`` exactly. ``B ~ 3/(1 - rho)`` makes ``rho^B ~ e^-3``: a further
block is needed with probability about 5 %, whatever ``eps``.

This is the decomposition ``|k| - 1 = M = B A + R`` (for ``|k| >= 1``) with
``A`` the number of successes of Bernoulli(``rho^B``) before the first failure
and ``R`` the truncated geometric on ``0 .. B-1``, ``P(R >= r) = (rho^r -
rho^B)/(1 - rho^B)``, independent of ``A``: a block's ``u`` is a success iff
``u < rho^B``, and given a failure (``u`` uniform on ``[rho^B, 1)``) its count
``R`` has ``P(R >= r) = P(u < rho^r | u >= rho^B) = (rho^r - rho^B)/(1 -
rho^B)``. Then ``P(M = B a + r) = rho^(B a) (1 - rho^B) (rho^r - rho^(r+1))/(1
- rho^B) = (1 - rho) rho^(B a + r)``, the geometric law of ``M``.

**Lazy exact comparison.** ``u`` is never rounded: its bits are read from
the source's words as needed. A block compares the first chunk ``x`` of
``u`` (63 bits in the first block, the 64th bit of that word being the sign;
64 bits in further blocks) with the exact floors ``F_g = floor(2^bits s_g)``
(precomputed in integers; numpy ``searchsorted``, vectorised over all rows).
``x < F_g`` proves ``u < s_g``, ``x > F_g`` proves ``u > s_g``; ``x = F_g``
(probability ``2^-bits`` per threshold, in practice never) is settled exactly
by reading further 64-bit words against the next 64 bits of ``s_g``
(Python integers, :func:`_less_exact`).

**Count tables.** The count ``#{g : F_g > x}`` depends on the top 16 bits
of ``x`` alone unless a floor lies among the chunks sharing them: a table of
``2^16`` counts (:func:`_count_table`), ``-1`` where a floor lies, gives every
other row's count by one lookup; the rows at a ``-1`` (probability at most
``B 2^-16``) are counted by ``searchsorted`` and settled as above. The counts
are the same numbers, from the same words: only faster.

The floors come from 128-bit fixed-point interval bounds on ``s_g``
(``floor`` and ``ceil`` of ``s_(g+1) = s_g q/p``): when both ends have the
same ``bits``-bit floor it is the exact floor; otherwise (probability about
``g 2^-64``) it is computed from the exact Fraction.

With ``cap``, the magnitude stops once ``|k| >= cap`` and ``sign(k)
min(|k|, cap)`` is returned, exactly the law of that variable: enough for
``clamp(i + k, 0, n-1)`` with ``cap = n - 1``.

**Digits** (``method="digits"``, the default when it is as fast: ``eps >~
1``). ``V`` uniform below ``2 (p + q) p^K`` (:meth:`RandomSource.below`):
the sign is ``V mod 2`` and ``|k| = #{g <= K : V // 2 < 2 q^g p^(K+1-g)}``
(nested events of probability ``s_g``), ``K`` base-``p`` digits per word;
at ``|k| = K`` further draws ``W`` below ``p^J`` add ``#{b <= J : W < q^b
p^(J-b)}`` while that is ``J``. At small ``eps`` (large ``p``) ``K, J`` are
1 or 2: about ``1/(J eps)`` passes per draw, hence the blocks.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.numbers.deprecation import renamed_keywords
from dpfix.sampling.source import RandomSource, random_source

__all__ = ["TwoSidedGeometric", "two_sided_geometric_pmf", "signed"]

#: ``2 (p + q) p^K`` stays at most this (``method="digits"``: uniform draws below it
#: refuse at most 1/8 of the words).
_MAX_BOUND = 1 << 61

#: The block size is about ``_BLOCK_SCALE / (1 - rho)`` levels: a further block with
#: probability about ``e^-3`` (measured: 2 and 4 are within a few per cent).
_BLOCK_SCALE = 3
#: At most this many levels per block (two arrays of 8 bytes each, 1 MB; built in about
#: 0.1 s). Reached below ``eps ~ 5e-5``; smaller budgets need ``~1/(B eps)`` blocks.
_MAX_BLOCK = 1 << 16
#: Bits of the fixed-point interval bounds on the thresholds (errors at most ``B``
#: units of ``2^-128``: the exact fallback runs with probability about ``B 2^-64``).
_PRECISION = 128
#: Bits of ``u`` in the first chunk of the first block (the word's low bit is the sign).
_FIRST_BITS = 63

METHODS = ("blocks", "digits")

#: The count tables are indexed by this many top bits of a chunk (``2^16`` entries of the
#: narrowest integer type that holds the counts: 64 KB at ``cap = 50``) ...
_TABLE_BITS = 16
#: ... and built for at most this many thresholds (at most 1/16 of the rows then fall on
#: a ``-1`` and are counted by ``searchsorted``); more thresholds are searched directly.
_TABLE_MAX = 4096
#: Rows per block of a table lookup and of the signs (their indices, 512 KB, stay in cache).
_BLOCK = 1 << 16


@functools.lru_cache(maxsize=16)
def _threshold_floors(num: int, den: int, p: int, q: int, count: int,
                      bits: int) -> np.ndarray:
    """``floor(2^bits s_g)`` for ``s_g = (num/den) (q/p)^(g-1)``, ``g = count .. 1`` (ascending).

    Exact: fixed-point lower and upper bounds on ``2^_PRECISION s_g`` by floor
    and ceiling divisions (each step moves each bound by less than one unit, so
    ``lo <= 2^_PRECISION s_g <= hi`` throughout); when ``lo`` and ``hi`` have the
    same top ``bits`` bits, that is the floor, else it is computed from the
    exact fraction (rare). Read-only (cached).
    """
    shift = _PRECISION - bits
    lo = (num << _PRECISION) // den
    hi = -((-num << _PRECISION) // den)
    out = np.empty(count, dtype=np.uint64)
    for g in range(1, count + 1):
        f = lo >> shift
        if hi >> shift != f:  # the bounds straddle a multiple of 2^-bits: decide exactly
            f = (num * q ** (g - 1) << bits) // (den * p ** (g - 1))
        out[count - g] = f
        lo = lo * q // p
        hi = -((-hi * q) // p)
    out.flags.writeable = False
    return out


def _count_table(asc: np.ndarray, bits: int, dtype: Any = np.int64) -> np.ndarray | None:
    """``#{j : asc[j] > x}`` for the chunks ``x < 2^bits`` by their top bits; ``-1`` if undecided.

    Entry ``v`` covers the chunks ``x`` with ``x >> (bits - t) = v`` (``t =
    min(16, bits)``), the interval ``[L, U]``: the count is ``#{j : asc[j] > L}``
    when no ``asc[j]`` lies in ``[L, U]`` (then it is the same for every ``x``
    there, and no ``x`` equals a floor), else ``-1`` (those chunks need
    ``searchsorted``, and those equal to a floor the exact comparison). None
    (no table) above :data:`_TABLE_MAX` thresholds. Of ``dtype`` (signed, holding
    ``len(asc)``), read-only.

    Examples
    --------
    >>> _count_table(np.array([5, 9], dtype=np.uint64), 4).tolist()  # x in 0 .. 15
    [2, 2, 2, 2, 2, -1, 1, 1, 1, -1, 0, 0, 0, 0, 0, 0]
    >>> _count_table(np.array([70000], dtype=np.uint64), 17)[:3].tolist()  # x >> 1
    [1, 1, 1]
    """
    if len(asc) > _TABLE_MAX:
        return None
    t = min(_TABLE_BITS, bits)
    shift = np.uint64(bits - t)
    lo = np.arange(1 << t, dtype=np.uint64) << shift
    hi = lo + np.uint64((1 << int(shift)) - 1)
    first = np.searchsorted(asc, lo, side="left")  # the floors >= L
    past = np.searchsorted(asc, hi, side="right")  # the floors > U
    table = (len(asc) - past).astype(dtype)
    table[past > first] = -1
    table.flags.writeable = False
    return table


def _magnitude_dtype(bound: int | None) -> Any:
    """The narrowest signed integer type holding ``-bound .. bound`` (int64 when None).

    Examples
    --------
    >>> _magnitude_dtype(100), _magnitude_dtype(200), _magnitude_dtype(None)
    (<class 'numpy.int8'>, <class 'numpy.int16'>, <class 'numpy.int64'>)
    """
    for dtype in (np.int8, np.int16, np.int32):
        if bound is not None and bound <= np.iinfo(dtype).max:
            return dtype
    return np.int64


def signed(g: np.ndarray, w: np.ndarray, dtype: Any = np.int64) -> np.ndarray:
    """``g`` as ``dtype`` (int64; a signed type that holds ``g``), negated where the low bit
    of ``w`` is 1 (``(g ^ -s) + s``, ``s`` the bit).

    The signs of :meth:`TwoSidedGeometric.magnitudes`. In blocks of
    :data:`_BLOCK` rows.

    Examples
    --------
    >>> signed(np.array([3, 3, 0, 5], np.int8), np.array([1, 2, 3, 4], np.uint64)).tolist()
    [-3, 3, 0, 5]
    """
    out = np.empty(g.size, dtype=dtype)
    for start in range(0, g.size, _BLOCK):
        stop = min(start + _BLOCK, g.size)
        s = w[start:stop].astype(g.dtype)  # the low bits (a cast to narrower keeps them)
        s &= 1
        np.negative(s, out=s)  # 0 or -1 (all bits set)
        part = g[start:stop] ^ s
        np.subtract(part, s, out=out[start:stop])
    return out


def _table_counts(table: np.ndarray, x: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """The counts of the chunks ``x < 2^bits`` looked up in ``table``, and the rows still at -1.

    In blocks of :data:`_BLOCK` rows, so that the table's indices stay in cache.
    """
    shift = np.uint64(bits - (int(table.size).bit_length() - 1))
    count = np.empty(x.size, dtype=table.dtype)
    for start in range(0, x.size, _BLOCK):
        stop = min(start + _BLOCK, x.size)
        np.take(table, (x[start:stop] >> shift).view(np.int64), out=count[start:stop],
                mode="clip")  # the indices are below table.size: "clip" only skips a check
    return count, np.flatnonzero(count < 0)


def _less_exact(first: int, bits: int, num: int, den: int,
                more: Callable[[int], int]) -> bool:
    """Decide ``u < num/den`` exactly when the first ``bits`` bits of ``u`` tie with it.

    ``first``, the first ``bits`` bits of ``u``, equals ``floor(2^bits num/den)``.
    ``u = (first + u')/2^bits`` with ``u'`` uniform on ``[0, 1)``, so ``u <
    num/den`` iff ``u' < r/den`` with ``r = 2^bits num - first den`` (``0 <= r <
    den``). ``u'`` is read 64 bits at a time (``more(i)``, the ``i``-th further
    word of this ``u``): a word below ``floor(2^64 r/den)`` decides yes, above
    it no, equal goes on with the remainder. ``r = 0`` decides no (``u' >= 0``).

    Examples
    --------
    >>> words = [2**63, 0]  # u' = 1/2 + 0 ...
    >>> _less_exact(0, 1, 1, 4, words.__getitem__)  # u = u'/2 = 1/4 + 0 ... < 1/4 ?
    False
    """
    r = (num << bits) - first * den
    i = 0
    while r:
        f, r = divmod(r << 64, den)
        w = more(i)
        if w != f:
            return w < f
        i += 1
    return False


class TwoSidedGeometric:
    """Exact sampler of ``P(k) = (1 - rho)/(1 + rho) rho^|k|``, ``rho = 1/lam``, ``k`` in Z.

    Parameters
    ----------
    lam : int, Fraction or str
        A rational ``lam = p/q > 1`` with ``2 (p + q) p <= 2^63`` (``p`` up to about
        ``2^31``; :func:`dpfix.sampling.source.rational_lam` keeps ``p <= 2^30``).
    method : {"blocks", "digits"}, optional
        ``"blocks"``: ``B`` levels per uniform real, compared lazily and exactly,
        ``O(1)`` expected words per draw for every ``lam``; ``"digits"``: ``K``
        base-``p`` digits of a uniform integer per draw (about ``1/(J eps)``
        passes at small ``eps``, a little faster when ``K`` digits nearly always
        suffice). Default: ``"digits"`` when at most a quarter of the rows need a
        further draw (``eps >~ 1``), else ``"blocks"``. Both draw exactly the same
        law (from different words).

    Attributes
    ----------
    lam : Fraction
    p, q : int
        ``lam = p/q`` in lowest terms.
    method : str
    block : int
        ``B``, the levels decided by one uniform real (``"blocks"``).
    digits, more_digits : int
        ``K`` and ``J``, the base-``p`` digits read by the first and by each
        further uniform draw (``"digits"``).

    Examples
    --------
    >>> g = TwoSidedGeometric(2)
    >>> g.method, g.digits, g.sample(5, random_source(0)).tolist()
    ('digits', 58, [0, 0, 1, -2, 0])
    >>> g = TwoSidedGeometric("1001/1000")  # eps ~ 0.001: one word per draw (or two: 5 %)
    >>> g.method, g.block, g.sample(4, random_source(0)).tolist()
    ('blocks', 3003, [-451, -1311, 3209, -3094])
    """

    def __init__(self, lam: Any, method: str | None = None) -> None:
        lam = Fraction(lam)
        if not lam > 1:
            raise ValueError(f"lam: must be a rational > 1, got {lam}")
        if method is not None and method not in METHODS:
            raise ValueError(f"method: one of {', '.join(METHODS)}, got {method!r}")
        p, q = lam.numerator, lam.denominator
        if 2 * (p + q) * p > 1 << 63:
            raise ValueError(f"lam: numerator {p} too large for the exact sampler "
                             "(2 (p + q) p must stay below 2^63)")
        self.lam, self.p, self.q = lam, p, q
        # "blocks": B ~ 3/(1 - rho) = 3p/(p - q) levels per uniform real
        self.block = min(_MAX_BLOCK, max(1, math.ceil(_BLOCK_SCALE * p / (p - q))))
        # "digits": K digits in the first draw, J in each further one
        K = 1
        while 2 * (p + q) * p ** (K + 1) <= _MAX_BOUND:
            K += 1
        J = 1
        while p ** (J + 1) <= _MAX_BOUND:
            J += 1
        self.digits, self.more_digits = K, J
        # the digits' thresholds, once per lam (not per call: the pipeline samples in chunks)
        self._first_thresholds = np.array([2 * q ** g * p ** (K + 1 - g)
                                           for g in range(K, 0, -1)], dtype=np.uint64)
        self._thresholds = np.array([q ** b * p ** (J - b) for b in range(J, 0, -1)],
                                    dtype=np.uint64)
        self._tables: dict[tuple, np.ndarray | None] = {}
        if method is None:
            # "digits" needs further draws for a share 2 rho^K/(1 + rho)/(1 - rho^J) of the
            # rows (about 1/(J eps) each at small eps), "blocks" for about 5 %; measured
            # (10^6 draws): "digits" 10 % faster when that share is below 0.01 (eps >= 2),
            # even at 0.21 (eps = 1), "blocks" 15 % faster at 0.38 (eps = 0.7) and ever more
            # below (7 times at eps = 0.01).
            rho = 1 / lam
            share = 2 * rho ** K / (1 + rho) / (1 - rho ** J)
            method = "digits" if share <= Fraction(1, 4) else "blocks"
        self.method = method

    # ------------------------------------------------------------------ "blocks"
    def _first_floors(self) -> np.ndarray:
        """``floor(2^63 s_g)``, ``s_g = 2 rho^g/(1 + rho) = (2q/(p+q)) rho^(g-1)``, ascending."""
        p, q = self.p, self.q
        return _threshold_floors(2 * q, p + q, p, q, self.block, _FIRST_BITS)

    def _more_floors(self) -> np.ndarray:
        """``floor(2^64 rho^m)``, ``m = B .. 1`` (ascending)."""
        return _threshold_floors(self.q, self.p, self.p, self.q, self.block, 64)

    def _settle(self, rows: np.ndarray, x: np.ndarray, asc: np.ndarray, idx: np.ndarray,
                num: int, den: int, bits: int, source: RandomSource) -> np.ndarray:
        """The exact count of the rows whose chunk equals a floor (rare): per row, in Python.

        ``asc[j]`` is the floor of ``s_g`` with ``g = len(asc) - j`` and ``s_g =
        (num/den) rho^(g-1)``; the count is ``#{g : u < s_g}``: the thresholds
        whose floor exceeds ``x``, plus those equal to it that ``u`` is below
        (decided exactly, all with the same further words of ``u``).
        """
        top = len(asc)
        p, q = self.p, self.q
        out = np.empty(rows.size, dtype=np.int64)
        for t, (xi, right) in enumerate(zip(x.tolist(), idx.tolist(), strict=True)):
            left = int(np.searchsorted(asc, np.uint64(xi), side="left"))
            words: list[int] = []

            def more(i: int, words: list[int] = words) -> int:
                while len(words) <= i:
                    words.append(int(source.words(1)[0]))
                return words[i]

            count = top - right
            for j in range(left, right):
                g = top - j
                count += _less_exact(xi, bits, num * q ** (g - 1), den * p ** (g - 1), more)
            out[t] = count
        return out

    def _search(self, x: np.ndarray, asc: np.ndarray, num: int, den: int, bits: int,
                source: RandomSource) -> np.ndarray:
        """``#{g : u < s_g}`` for every chunk ``x`` (the floors ``asc``, ascending), exactly."""
        idx = np.searchsorted(asc, x, side="right").astype(np.int64, copy=False)
        # a chunk equal to a floor: asc[idx - 1] == x (idx = 0 wraps to the largest floor,
        # which then exceeds x: no false tie)
        tied = np.flatnonzero(asc.take(idx - 1, mode="wrap") == x)
        right = idx[tied]
        count = np.subtract(len(asc), idx, out=idx)
        if tied.size:
            count[tied] = self._settle(tied, x[tied], asc, right, num, den, bits, source)
        return count

    def _table(self, key: tuple, asc: np.ndarray, bits: int,
               dtype: Any = np.int64) -> np.ndarray | None:
        """The count table of the floors ``asc`` (:func:`_count_table`), built once per key."""
        key = (*key, np.dtype(dtype).name)
        if key not in self._tables:
            self._tables[key] = _count_table(asc, bits, dtype)
        return self._tables[key]

    def _count(self, w: np.ndarray, drop: int, asc: np.ndarray, table: np.ndarray | None,
               num: int, den: int, bits: int, source: RandomSource) -> np.ndarray:
        """``#{g : u < s_g}`` for the chunks ``x = w >> drop`` (``bits = 64 - drop``), exactly.

        By the table where it decides, by :meth:`_search` on the other rows (in
        row order, so a tie reads the further words it would read without the
        table).
        """
        if table is None:
            return self._search(w >> np.uint64(drop), asc, num, den, bits, source)
        count, hard = _table_counts(table, w, 64)
        if hard.size:
            count[hard] = self._search(w[hard] >> np.uint64(drop), asc, num, den, bits, source)
        return count

    def _sample_blocks(self, size: int, source: RandomSource,
                       cap: int | None) -> tuple[np.ndarray, np.ndarray]:
        B, p, q = self.block, self.p, self.q
        w = source.words(size)  # the low bit of each word is the sign, independent of u's
        first = self._first_floors()
        top = B if cap is None else min(B, cap)  # levels above cap need not be decided
        asc = first[B - top:]
        dtype = _magnitude_dtype(None if cap is None else cap + B)  # g <= cap + B - 1
        g = self._count(w, 1, asc, self._table(("first", top), asc, _FIRST_BITS, dtype),
                        2 * q, p + q, _FIRST_BITS, source)
        if top == B:
            more = self._more_floors()
            table = self._table(("more",), more, 64, dtype)
            rows = np.flatnonzero(g == B)  # u < s_B: |k| >= B, the excess is geometric
            if cap is not None:
                rows = rows[g[rows] < cap]
            while rows.size:
                d = self._count(source.words(rows.size), 0, more, table, q, p, 64, source)
                g[rows] += d
                rows = rows[d == B]
                if cap is not None:
                    rows = rows[g[rows] < cap]
            if cap is not None:
                np.minimum(g, cap, out=g)
        return g, w

    # ------------------------------------------------------------------ "digits"
    def _sample_digits(self, size: int, source: RandomSource,
                       cap: int | None) -> tuple[np.ndarray, np.ndarray]:
        """The previous algorithm: ``K`` (then ``J``) base-``p`` digits per uniform integer.

        ``V`` uniform below ``2 (p + q) p^K``: sign ``V mod 2``, ``W = V // 2``,
        ``|k| = #{g <= K : W < 2 q^g p^(K+1-g)}``; at ``K``, further blocks of
        ``J`` digits with ``#{b <= J : W' < q^b p^(J-b)}`` (``W'`` below ``p^J``).
        """
        p, q, K, J = self.p, self.q, self.digits, self.more_digits
        first_thresholds, thresholds = self._first_thresholds, self._thresholds
        bound = 2 * (p + q) * p ** K
        v = source.below(bound, int(size))  # sign bit and W, independent
        dtype = _magnitude_dtype(None if cap is None else cap + max(K, J))
        # W < t iff V = 2 W + sign < 2 t: the count of the first thresholds above W
        g = self._digit_count(v, first_thresholds << np.uint64(1), ("digits", K),
                              bound.bit_length(), dtype)
        more = np.flatnonzero(g == K)
        if cap is not None:
            more = more[g[more] < cap]
        while more.size:
            d = self._digit_count(source.below(p ** J, more.size), thresholds,
                                  ("digits", J, "more"), (p ** J).bit_length(), dtype)
            g[more] += d
            more = more[d == J]
            if cap is not None:
                more = more[g[more] < cap]
        if cap is not None:
            np.minimum(g, cap, out=g)
        return g, v

    def _digit_count(self, v: np.ndarray, asc: np.ndarray, key: tuple, bits: int,
                     dtype: Any) -> np.ndarray:
        """``#{j : asc[j] > v}`` for integers ``v < 2^bits``: the table, else ``searchsorted``."""
        table = self._table(key, asc, bits, dtype)
        if table is None:
            return len(asc) - np.searchsorted(asc, v, side="right")
        count, hard = _table_counts(table, v, bits)
        if hard.size:
            count[hard] = len(asc) - np.searchsorted(asc, v[hard], side="right")
        return count

    @renamed_keywords(source="seed")
    def sample(self, size: int, seed: Any = None, cap: int | None = None) -> np.ndarray:
        """``size`` independent draws (int64); with ``cap``, ``sign(k) min(|k|, cap)``.

        Parameters
        ----------
        size : int
            How many.
        seed : None, int, numpy.random.SeedSequence or RandomSource, optional
            The randomness (:func:`~dpfix.sampling.source.random_source`): the secure
            source by default; ``source=`` is its deprecated name.
        cap : int, optional
            ``>= 1``: magnitudes above it are reported as ``cap`` (exactly the
            law of ``sign(k) min(|k|, cap)``), which bounds the work per draw.

        Returns
        -------
        numpy.ndarray of int64
        """
        return signed(*self.magnitudes(size, seed, cap))

    @renamed_keywords(source="seed")
    def magnitudes(self, size: int, seed: Any = None,
                   cap: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The draws of :meth:`sample` as magnitudes and signs: ``(g, w)`` (``seed`` as for
        :meth:`sample`).

        ``g`` holds ``min(|k|, cap)`` as signed integers (where the count tables
        count them, in the narrowest type that holds ``cap`` plus a block; int64
        without ``cap``), ``w`` unsigned words whose low bits are the signs (1:
        negative); :func:`signed` makes the draws of them. The same words are
        read as by :meth:`sample`.

        Examples
        --------
        >>> g, w = TwoSidedGeometric(2).magnitudes(5, random_source(0), cap=50)
        >>> g.dtype, signed(g, w).tolist()
        (dtype('int8'), [0, 0, 1, -2, 0])
        """
        source = random_source(seed)
        if cap is not None and cap < 1:
            raise ValueError(f"cap: must be >= 1, got {cap}")
        if self.method == "digits":
            return self._sample_digits(int(size), source, cap)
        return self._sample_blocks(int(size), source, cap)


def two_sided_geometric_pmf(lam: Any, k: Any) -> Fraction:
    """``P(k) = (1 - rho)/(1 + rho) rho^|k|`` exactly (``rho = 1/lam``).

    Examples
    --------
    >>> two_sided_geometric_pmf(2, -1)
    Fraction(1, 6)
    """
    rho = 1 / Fraction(lam)
    return (1 - rho) / (1 + rho) * rho ** abs(int(k))
