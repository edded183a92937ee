"""Random bits and exact uniform integers; the rational ``lam <= e^eps`` (docs/sampling.md).

A :class:`RandomSource` hands out 64-bit words from a numpy bit generator:
:class:`SecureSource` is the default, AES-128 in counter mode (randomgen's
``AESCounter``, AES-NI) keyed with 128 bits of the operating system's CSPRNG
(``os.urandom``, the source of Python's ``secrets``), a cryptographically
secure generator; :class:`SeededSource` is a seeded numpy PCG64, for tests and
reproductions only (**not for release**: whoever knows the seed knows the
noise). Both hand out their words by the same call (``random_raw``) and
everything sampled in :mod:`dpfix.sampling` is computed from these words with
integer operations only, so the distribution drawn is exactly the one stated,
whatever the float rounding of the machine, and the same for both sources.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["RandomSource", "SecureSource", "SeededSource", "random_source", "numpy_generator",
           "rational_lam", "lam_at_most_exp", "MAX_LAM"]

_TWO64 = 1 << 64

#: Rows per block of the permutation's passes over its words (small arrays stay in cache).
_BLOCK = 1 << 16

#: :meth:`RandomSource.shuffle` sorts the values with their words when the expected number
#: of ties in the words' top bits is at most this (a tie: the positions are sorted instead).
_SHUFFLE_TIES = 1 / 16

#: Largest ``lam`` the samplers use: a larger budget is spent as ``log(MAX_LAM)``
#: (about 20.8), which is private (less noise is never needed at such budgets: a
#: count moves with probability below ``1e-9``).
MAX_LAM = Fraction(1 << 30)


class RandomSource:
    """Hands out uniform 64-bit words and exact uniform integers below a bound.

    Attributes
    ----------
    secure : bool
        True for a cryptographically secure source.
    description : str
        For the report.
    bit_generator : numpy.random.BitGenerator or None
        Where the words come from (:meth:`words` reads ``random_raw``); a
        subclass may instead override :meth:`words`.
    """

    secure = False
    description = ""
    bit_generator: Any = None

    def words(self, size: int) -> np.ndarray:
        """``size`` independent uniform ``uint64`` words: ``bit_generator.random_raw(size)``."""
        if self.bit_generator is None:
            raise NotImplementedError(f"{type(self).__name__}: has no bit_generator and does "
                                      "not override words()")
        return self.bit_generator.random_raw(int(size))

    def below(self, bound: int, size: int) -> np.ndarray:
        """``size`` independent integers uniform on ``0 .. bound-1``, exactly (``uint64``).

        A power of two takes the top bits of a word; any other ``bound`` (at most
        ``2^63``) keeps the words below the largest multiple of ``bound`` under
        ``2^64`` (rejection, at most half of them refused) and reduces them
        modulo ``bound``: every value has exactly ``floor(2^64 / bound)``
        preimages.

        Parameters
        ----------
        bound : int
            ``1 <= bound <= 2^63``.
        size : int
            How many.

        Returns
        -------
        numpy.ndarray of uint64

        Examples
        --------
        >>> v = SeededSource(0).below(6, 1000)
        >>> int(v.min()), int(v.max())
        (0, 5)
        """
        bound = int(bound)
        if not 1 <= bound <= 1 << 63:
            raise ValueError(f"bound: must lie in 1 .. 2^63, got {bound}")
        if bound & (bound - 1) == 0:
            shift = 64 - (bound.bit_length() - 1)
            w = self.words(size)
            return (w >> np.uint64(shift)) if shift < 64 else np.zeros(size, np.uint64)
        limit = _TWO64 - _TWO64 % bound  # a multiple of bound, > 2^63
        lim, b = np.uint64(limit - 1), np.uint64(bound)
        w = self.words(size)
        out = w % b
        todo = np.flatnonzero(w > lim)  # rare: fewer than 1 word in 2
        while todo.size:
            w = self.words(todo.size)
            ok = w <= lim
            out[todo[ok]] = w[ok] % b
            todo = todo[~ok]
        return out

    def permutation(self, size: int) -> np.ndarray:
        """A uniformly random permutation of ``0 .. size-1``, exactly (``int64``).

        Every position gets an independent uniform 64-bit word and the
        positions are sorted by their words; when two positions' words tie,
        every position is given a further word (so that the rule is symmetric)
        and the positions are sorted by their words in turn, until no two
        positions tie. The words are exchangeable and the stopping rule is
        symmetric, so every permutation has the same probability ``1 /
        size!``, whatever the number of rounds (docs/sampling.md section 1.1).

        The first round sorts the words themselves, not their positions: the
        top ``64 - b`` bits of each word with its position in the low ``b =
        bit_length(size - 1)`` bits, one sort of ``uint64`` values. Positions
        whose top bits tie (about ``size^2 2^(b-65)`` pairs) are then put in
        the order of their whole words; the order is exactly that of the
        positions sorted by their words.

        Examples
        --------
        >>> p = SeededSource(0).permutation(6)
        >>> sorted(p.tolist())
        [0, 1, 2, 3, 4, 5]
        >>> bool((SeededSource(0).permutation(6) == p).all())
        True
        """
        size = int(size)
        if size < 0:
            raise ValueError(f"size: must be >= 0, got {size}")
        return self._permutation_of(self.words(size))

    def shuffle(self, values: Any, overwrite: bool = False) -> np.ndarray:
        """``values`` in a uniformly random order: ``values[perm]`` for the permutation
        ``perm`` that :meth:`permutation` draws from the same words, exactly.

        ``values``: non-negative integers (a numpy integer array; its dtype is kept).
        When values of ``v`` bits leave the words' top ``64 - v`` bits few expected
        ties (``size^2 2^(v-65)`` pairs at most :data:`_SHUFFLE_TIES`), the words are
        sorted with their low ``v`` bits replaced by the values and the values read off
        the sorted words: no array of positions is sorted or gathered. Where no two
        words tie in their top ``64 - v`` bits that is the order of the whole words;
        where two do, ``perm`` is computed from the same words (further rounds as
        :meth:`permutation` reads them) and gathered, as it is for wider values. The
        output and the words read are always those of ``values[permutation(size)]``
        (docs/sampling.md section 1.1).

        With ``overwrite``, 64-bit ``values`` may be overwritten: the sort runs in their
        own memory (the output may be ``values``' memory, whose contents are then the
        output's). A source whose words are its bit generator's, which can be set back
        to an earlier state (the secure and the seeded sources), hands its words out
        block by block as they are packed (no array of ``size`` words): for a tie it is
        set back and the same words are read again.

        Examples
        --------
        >>> v = np.array([5, 0, 7, 7, 2])
        >>> SeededSource(0).shuffle(v).tolist() == v[SeededSource(0).permutation(5)].tolist()
        True
        """
        values = np.asarray(values)
        if values.ndim != 1 or values.dtype.kind not in "iu":
            raise ValueError(f"values: expected a vector of integers, got {values.dtype} of "
                             f"shape {values.shape}")
        size = values.size
        low = int(values.min()) if size else 0
        if low < 0:
            raise ValueError(f"values: must be non-negative, got {low}")
        v = int(values.max()).bit_length() if size else 0
        if size < 2 or size * (size - 1) * 2.0 ** (v - 65) > _SHUFFLE_TIES:
            w = self.words(size)
            return values.copy() if size < 2 else values[self._permutation_of(w)]
        dtype, into = values.dtype, None
        if overwrite and values.dtype.itemsize == 8 and values.flags.writeable \
                and values.flags.c_contiguous:
            # the values kept, narrow, for a tie; the sort in their memory
            into, values = values, values.astype(_unsigned(v))
        state = self._state()
        if state is None:
            w = self.words(size)
            out = _sorted_values(lambda a, b: w[a:b], values if into is None else into, v,
                                 into)
        else:
            out = _sorted_values(lambda a, b: self.words(b - a),
                                 values if into is None else into, v, into)
        if out is not None:
            return out if out.dtype == dtype else out.astype(dtype)
        if state is not None:  # a tie: the same words again, whole
            self.bit_generator.state = state
            w = self.words(size)
        return values[self._permutation_of(w)].astype(dtype, copy=False)

    def _state(self) -> Any:
        """The bit generator's state when the words are its own and it can be set back to
        it (the same words then come again), else None."""
        if type(self).words is not RandomSource.words or self.bit_generator is None:
            return None
        try:
            return self.bit_generator.state
        except AttributeError:
            return None

    def _permutation_of(self, w: np.ndarray) -> np.ndarray:
        """The positions sorted by the words ``w`` (further rounds of words on ties)."""
        size = w.size
        if size < 2:
            return np.zeros(size, dtype=np.int64)
        order = _sorted_positions(w)
        if order is not None:
            return order
        keys = [w]
        while True:  # two words tie (probability about size^2 2^-65): a further round
            keys.append(self.words(size))
            order = np.lexsort(keys[::-1])  # lexsort: the last key is the primary one
            ranked = np.stack([k[order] for k in keys])
            if (ranked[:, 1:] != ranked[:, :-1]).any(axis=0).all():
                return order.astype(np.int64)


def _sorted_positions(w: np.ndarray) -> np.ndarray | None:
    """The positions ``0 .. len(w)-1`` sorted by their words ``w``, or None if two words tie.

    Sorts each word with its low ``b = bit_length(len(w) - 1)`` bits replaced by
    its position: the positions in the order of their top ``64 - b`` bits, ties
    by position. A
    run of positions with equal top bits is then sorted by the whole words
    (the low ``b`` bits decide), so the result is the unique order of
    distinct words.

    Examples
    --------
    >>> _sorted_positions(np.array([5, 1, 4], dtype=np.uint64)).tolist()
    [1, 2, 0]
    >>> _sorted_positions(np.array([3, 1, 3], dtype=np.uint64)) is None
    True
    """
    size = w.size
    b = (size - 1).bit_length()
    one = np.uint64(1) << np.uint64(b)
    # blocks: no array of positions in memory at once
    packed = _packed(lambda start, stop: w[start:stop],
                     lambda start, stop: np.arange(start, stop, dtype=np.uint64), b, size)
    packed.sort()
    ties = []  # sorted positions whose top bits equal those of the next
    for start in range(0, size, _BLOCK):  # each block compared with the next, then masked
        stop = min(start + _BLOCK, size)
        end = min(stop + 1, size)
        at = np.flatnonzero((packed[start + 1:end] ^ packed[start:end - 1]) < one)
        if at.size:
            ties.append(at + start)
        packed[start:stop] &= one - np.uint64(1)
    order = packed.view(np.int64)
    if not ties:
        return order
    at = np.concatenate(ties)
    pos = np.union1d(at, at + 1)  # the sorted positions in runs of equal top bits
    starts = np.ones(pos.size, dtype=bool)  # where a run begins
    starts[1:] = ~np.isin(pos[1:] - 1, at)
    run = np.cumsum(starts)
    rows = order[pos]
    rows = rows[np.lexsort((w[rows], run))]
    order[pos] = rows
    words = w[rows]
    if ((words[1:] == words[:-1]) & ~starts[1:]).any():
        return None
    return order


def _unsigned(v: int) -> Any:
    """The narrowest unsigned integer type of at least ``v`` bits."""
    return next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64)
                if v <= np.iinfo(t).bits)


def _sorted_values(words: Callable[[int, int], np.ndarray], values: np.ndarray, v: int,
                   into: np.ndarray | None = None) -> np.ndarray | None:
    """The ``values`` (below ``2^v``) in the order of their words, or None when two words
    tie in their top ``64 - v`` bits; ``words(start, stop)`` gives the words of the
    values ``start .. stop-1``, asked for in order.

    Sorts each word with its low ``v`` bits replaced by its value: the values in the
    order of their words' top bits, ties by value. Where no two words tie in their top
    bits, that order is the order of the whole words. An ``int64`` array back for int64
    values, else ``uint64``; in the memory of ``into`` (a 64-bit vector of ``len(values)``
    entries, which may be ``values`` itself) when given, else in a new array.

    Examples
    --------
    >>> w = np.array([9 << 8, 3 << 8, 5 << 8], dtype=np.uint64)
    >>> _sorted_values(lambda a, b: w[a:b], np.array([4, 1, 2]), 3).tolist()
    [1, 2, 4]
    >>> v = np.array([4, 1, 2])
    >>> _sorted_values(lambda a, b: w[a:b] | np.uint64(255), v, 8, into=v).tolist(), v.tolist()
    ([1, 2, 4], [1, 2, 4])
    >>> tied = np.array([7, 7], dtype=np.uint64)
    >>> _sorted_values(lambda a, b: tied[a:b], np.array([1, 1]), 1) is None
    True
    """
    size = values.size
    one = np.uint64(1) << np.uint64(v)
    wide = values.dtype.itemsize == 8
    packed = _packed(words, lambda start, stop: values[start:stop].view(np.uint64) if wide
                     else values[start:stop].astype(np.uint64), v, size,
                     None if into is None else into.view(np.uint64))
    packed.sort()
    for start in range(0, size, _BLOCK):  # each block compared with the next, then masked
        stop = min(start + _BLOCK, size)
        end = min(stop + 1, size)
        if ((packed[start + 1:end] ^ packed[start:end - 1]) < one).any():  # top bits tie
            return None
        packed[start:stop] &= one - np.uint64(1)
    dtype = values.dtype if into is None else into.dtype
    return packed.view(np.int64) if dtype == np.int64 else packed


def _packed(words: Callable[[int, int], np.ndarray], low: Callable[[int, int], np.ndarray],
            v: int, size: int, into: np.ndarray | None = None) -> np.ndarray:
    """``size`` words (``words(start, stop)``, asked for in order) with their low ``v < 64``
    bits replaced by ``low(start, stop)`` (below ``2^v``), in blocks of :data:`_BLOCK`:
    one pass, each block in cache. Written to ``into`` (uint64, ``size`` entries) when
    given: each block's ``low`` is read before its block is written, so ``low`` may read
    ``into`` itself."""
    high = ~((np.uint64(1) << np.uint64(v)) - np.uint64(1))
    packed = np.empty(size, dtype=np.uint64) if into is None else into
    part = np.empty(min(_BLOCK, size), dtype=np.uint64)
    for start in range(0, size, _BLOCK):
        stop = min(start + _BLOCK, size)
        block = np.bitwise_and(words(start, stop), high, out=part[:stop - start])
        block |= low(start, stop)
        packed[start:stop] = block
    return packed


class _OsWords:
    """``random_raw`` read from ``os.urandom``: the secure words without randomgen."""

    def random_raw(self, size: int) -> np.ndarray:
        return np.frombuffer(os.urandom(8 * int(size)), dtype=np.uint64).copy()


class SecureSource(RandomSource):
    """A cryptographically secure source: the default, for releases.

    AES-128 in counter mode (randomgen's ``AESCounter``: words ``2i`` and ``2i+1``
    are the two halves of ``AES_k(i)``, with AES-NI where the processor has it)
    keyed with 128 bits of ``os.urandom``, a fresh key for every source. Without
    randomgen (the ``production`` extra) the words are read from ``os.urandom``
    itself: the same samplers, slower words.

    Examples
    --------
    >>> s = SecureSource()
    >>> s.secure, "os.urandom" in s.description, s.words(3).dtype
    (True, True, dtype('uint64'))
    """

    secure = True

    def __init__(self) -> None:
        try:
            from randomgen import AESCounter
        except ImportError:  # randomgen is in the production extra
            self.bit_generator = _OsWords()
            self.description = "os.urandom (the operating system's CSPRNG; secure)"
            return
        self.bit_generator = AESCounter(key=int.from_bytes(os.urandom(16), "little"))
        self.description = ("AES-128 in counter mode (randomgen AESCounter) keyed with 128 "
                            "bits of os.urandom, the operating system's CSPRNG; secure")

    def __reduce__(self) -> Any:
        """Refused: a copy (pickled, deep-copied) would hand out the same words again."""
        raise TypeError("SecureSource: cannot be copied or pickled (the copy would repeat "
                        "its words); make a new SecureSource() where it is needed")


class SeededSource(RandomSource):
    """Words of a seeded numpy PCG64 generator: tests and reproductions, NOT FOR RELEASE.

    Parameters
    ----------
    seed : int or numpy.random.SeedSequence
        The seed (recorded in the report by the caller).
    """

    secure = False

    def __init__(self, seed: Any) -> None:
        self.bit_generator = np.random.PCG64(seed)
        label = seed if isinstance(seed, (int, np.integer)) else "a SeedSequence"
        self.description = (f"numpy PCG64 seeded with {label}: NOT FOR PRODUCTION, not for "
                            "release (reproducible; whoever knows the seed knows the noise)")


def random_source(seed: Any = None) -> RandomSource:
    """The secure source when ``seed`` is None, else a seeded one (not for release).

    Parameters
    ----------
    seed : None, int, numpy.random.SeedSequence or RandomSource

    Returns
    -------
    RandomSource

    Examples
    --------
    >>> random_source().secure, random_source(1).secure
    (True, False)
    """
    if isinstance(seed, RandomSource):
        return seed
    return SecureSource() if seed is None else SeededSource(seed)


def numpy_generator(seed: Any) -> np.random.Generator:
    """The numpy Generator a seeded float path draws from (not for release): ``seed`` an
    int or a SeedSequence (PCG64 seeded with it, as :func:`numpy.random.default_rng`), a
    Generator (itself), or a seeded :class:`RandomSource` (a Generator over its own PCG64:
    the two share one stream). The secure source has no numpy generator.

    Parameters
    ----------
    seed : int, numpy.random.SeedSequence, numpy.random.Generator or SeededSource

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    ValueError
        Another value, or the secure source.

    Examples
    --------
    >>> a, b = numpy_generator(7), numpy_generator(np.random.SeedSequence(7))
    >>> a.integers(100, size=3).tolist() == b.integers(100, size=3).tolist()
    True
    >>> c = numpy_generator(SeededSource(7))
    >>> c.integers(100, size=3).tolist() == numpy_generator(7).integers(100, size=3).tolist()
    True
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, SeededSource):
        return np.random.Generator(seed.bit_generator)
    if isinstance(seed, RandomSource):
        raise ValueError("seed: the secure source draws no numpy floats; give an int, a "
                         "SeedSequence or a seeded source")
    if isinstance(seed, np.random.SeedSequence) or \
            isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return np.random.default_rng(seed)
    raise ValueError(f"seed: expected an int, a numpy SeedSequence or Generator, or a seeded "
                     f"RandomSource, got {seed!r}")


# ------------------------------------------------------------------ lam = p/q <= e^eps
def _exp_bounds(x: Fraction, terms: int) -> tuple[Fraction, Fraction]:
    """Rational bounds ``lo <= e^x <= hi`` for ``0 <= x < terms + 1`` (Taylor)."""
    total, term = Fraction(0), Fraction(1)
    for k in range(terms + 1):
        total += term
        term = term * x / (k + 1)  # x^(k+1) / (k+1)!
    # remainder sum_{k > K} x^k/k! <= x^(K+1)/(K+1)! * 1 / (1 - x/(K+2))
    return total, total + term / (1 - x / (terms + 2))


def lam_at_most_exp(lam: Any, eps: float) -> bool:
    """Decide exactly whether the rational ``lam <= e^eps`` (``eps`` a float, taken exactly).

    ``e^eps`` is bounded by Taylor sums in Fractions (all terms positive; the
    remainder by a geometric series), with more terms until the bounds decide.
    ``e^eps`` is irrational for every float ``eps != 0`` (Lindemann), so the
    answer is never a tie.

    Parameters
    ----------
    lam : int, Fraction or str
        A rational ``> 0``.
    eps : float
        ``> 0``.

    Returns
    -------
    bool

    Examples
    --------
    >>> lam_at_most_exp(Fraction(271828, 100000), 1.0), lam_at_most_exp(Fraction(2719, 1000), 1.0)
    (True, False)
    """
    lam, x = Fraction(lam), Fraction(float(eps))
    terms = max(16, 2 * math.ceil(float(x)) + 8)
    while True:
        lo, hi = _exp_bounds(x, terms)
        if lam <= lo:
            return True
        if lam > hi:
            return False
        terms *= 2


def _simplest_between(lo: Fraction, hi: Fraction) -> Fraction:
    """The fraction of least denominator in ``[lo, hi]`` (``0 < lo <= hi``; continued fractions)."""
    fl = math.floor(lo)
    if fl == lo or fl + 1 <= hi:
        return Fraction(fl if fl == lo else fl + 1)
    return fl + 1 / _simplest_between(1 / (hi - fl), 1 / (lo - fl))


def rational_lam(eps: float, rtol: float = 1e-9) -> Fraction:
    """The simplest rational ``lam = p/q`` with ``e^(eps (1 - rtol)) <= lam <= e^eps``, proved.

    Small ``p`` and ``q`` make the exact samplers fast (more base-``p`` digits
    per 64-bit word); ``rtol`` bounds the budget given up (``log lam >= eps (1 -
    rtol)``, up to float rounding of the lower end, which is harmless). The
    upper end is proved exactly (:func:`lam_at_most_exp`). Capped at
    :data:`MAX_LAM`.

    Parameters
    ----------
    eps : float
        ``> 0``.
    rtol : float
        The relative share of ``eps`` that may be given up, in ``(0, 1)``.

    Returns
    -------
    Fraction

    Examples
    --------
    >>> rational_lam(math.log(2) + 1e-12)
    Fraction(2, 1)
    >>> lam = rational_lam(1.0); lam, lam_at_most_exp(lam, 1.0)
    (Fraction(75117, 27634), True)
    """
    eps = float(eps)
    if not (eps > 0 and math.isfinite(eps)):
        raise ValueError(f"eps: must be a finite number > 0, got {eps!r}")
    if not 0 < rtol < 1:
        raise ValueError(f"rtol: must lie in (0, 1), got {rtol!r}")
    if eps >= math.log(float(MAX_LAM)):
        return MAX_LAM
    hi = Fraction(math.exp(eps))
    while not lam_at_most_exp(hi, eps):  # libm's exp may round up
        hi = Fraction(math.nextafter(float(hi), 0.0))
    lo = min(Fraction(math.exp(eps * (1 - rtol))), hi)
    lam = _simplest_between(max(lo, Fraction(1) + Fraction(1, 1 << 40)), hi)
    if not (lam > 1 and lam_at_most_exp(lam, eps)):  # pragma: no cover - proved above
        raise AssertionError(f"rational_lam: {lam} is not in (1, e^{eps}]")
    return lam
