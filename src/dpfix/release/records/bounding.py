"""The contribution bounding of records: each person keeps a uniformly random subset of
their records among the largest ones with at most ``C`` in all and at most ``c`` in any one
group (docs/records.md, section 2), and the counts the kept records make.

The subsets meeting both caps are the independent sets of a laminar matroid, so the largest
all have ``K = min(C, sum_g min(c, n_g))`` records; :func:`basis_law` is the exact law of how
many records each group keeps, :func:`bound_contributions` draws it (an exact dynamic
programme over the person's groups with exact uniform integers, then a uniformly random
subset of each group's records), every person from fresh randomness. :func:`tally` bounds
the indexed records of whole persons and counts the kept ones per declared group and value
(a :class:`Tally`, confidential: no noise); tallies of disjoint sets of persons add up
(:meth:`Tally.merge`), which the Dask and streamed readers use.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from scipy.special import gammaln

from dpfix.sampling.source import RandomSource, random_source

__all__ = ["basis_law", "bound_contributions", "bound_codes", "check_bounds", "Tally",
           "tally", "CHUNK_RECORDS"]

#: Records of persons with more than ``c`` records bounded at a time (whole persons): the
#: temporaries of a chunk stay small enough to be reused from one chunk to the next.
CHUNK_RECORDS = 1 << 20
#: Entries of the dynamic programme of one vectorised batch (its memory, 8 bytes each).
_BATCH_ENTRIES = 1 << 23


def _below_each(source: RandomSource, bounds: np.ndarray) -> np.ndarray:
    """Integers uniform on ``0 .. bounds[i] - 1``, one for each ``1 <= bounds[i] <= 2^63``,
    exactly: a word ``w`` is kept iff ``w < 2^64 - (2^64 mod b)`` (the largest multiple of
    ``b``), then reduced modulo ``b``; every value has ``floor(2^64 / b)`` preimages."""
    b = np.asarray(bounds, dtype=np.uint64)
    rest = (~b + np.uint64(1)) % b  # 2^64 mod b
    top = ~rest  # the largest word kept: 2^64 - 1 - rest
    out = np.empty(b.size, dtype=np.uint64)
    todo = np.arange(b.size)
    while todo.size:
        w = source.words(todo.size)
        ok = w <= top[todo]
        out[todo[ok]] = w[ok] % b[todo[ok]]
        todo = todo[~ok]
    return out


def _below_big(source: RandomSource, bound: int) -> int:
    """An integer uniform on ``0 .. bound - 1`` for any ``bound >= 1`` (Python ints): the
    low ``bits(bound)`` bits of fresh words, redrawn while ``>= bound`` (probability < 1/2)."""
    bits = (bound - 1).bit_length()
    if bits == 0:
        return 0
    words = (bits + 63) // 64
    while True:
        value = 0
        for w in source.words(words).tolist():
            value = (value << 64) | int(w)
        value &= (1 << bits) - 1
        if value < bound:
            return value


def basis_law(sizes: Sequence[int], max_contributions: int,
              max_per_group: int) -> dict[tuple[int, ...], Fraction]:
    """The exact law of how many records each group keeps, for one person with ``sizes[g]``
    records in group ``g``: ``P(k) = prod_g binom(n_g, k_g) / W`` over the ``k`` with
    ``k_g <= min(c, n_g)`` and ``sum k_g = K = min(C, sum_g min(c, n_g))``, the law of a
    uniformly random subset among the largest ones meeting both caps.

    Examples
    --------
    >>> law = basis_law([3, 2], 3, 2)   # 2 of 3 and 1 of 2 (6 ways), or 1 of 3 and 2 of 2 (3)
    >>> law[(2, 1)], law[(1, 2)]
    (Fraction(2, 3), Fraction(1, 3))
    """
    caps = [min(max_per_group, n) for n in sizes]
    K = min(max_contributions, sum(caps))
    weights = {}
    for k in _vectors(caps, K):
        weights[k] = math.prod(math.comb(n, j) for n, j in zip(sizes, k, strict=True))
    total = sum(weights.values())
    return {k: Fraction(w, total) for k, w in weights.items()}


def _vectors(caps: list[int], total: int) -> list[tuple[int, ...]]:
    """Every ``k`` with ``0 <= k_g <= caps[g]`` and ``sum k = total``."""
    if not caps:
        return [()] if total == 0 else []
    return [(j, *rest) for j in range(min(caps[0], total) + 1)
            for rest in _vectors(caps[1:], total - j)]


def _capped_exact(sizes: list[int], caps: list[int], C: int,
                  source: RandomSource) -> list[int]:
    """One person's ``k`` drawn from :func:`basis_law` (``sum caps > C``), in Python
    integers: the ways ``W[b][s]`` to choose ``s`` records from groups ``b..`` within the
    caps, then ``k_b = j`` with probability ``binom(n_b, j) W[b+1][s-j] / W[b][s]``."""
    B = len(sizes)
    W = [[0] * (C + 1) for _ in range(B + 1)]
    W[B][0] = 1
    for b in range(B - 1, -1, -1):
        for s in range(C + 1):
            W[b][s] = sum(math.comb(sizes[b], j) * W[b + 1][s - j]
                          for j in range(min(caps[b], s) + 1))
    out, s = [], C
    for b in range(B):
        u = _below_big(source, W[b][s])
        j = 0
        while True:
            w = math.comb(sizes[b], j) * W[b + 1][s - j]
            if u < w:
                break
            u -= w
            j += 1
        out.append(j)
        s -= j
    return out


def _capped_vector(sizes: np.ndarray, caps: np.ndarray, pos: np.ndarray, person: np.ndarray,
                   people: int, C: int, source: RandomSource) -> np.ndarray:
    """:func:`_capped_exact` for many persons at once in int64 (every ``W`` below ``2^62``,
    checked by the caller): blocks ``b`` (``sizes``, ``caps``, position ``pos`` within their
    person ``person``, a person's blocks contiguous and in order), ``k`` per block."""
    c = int(caps.max())
    uniq, inv = np.unique(sizes, return_inverse=True)
    table = np.array([[math.comb(int(u), j) if j <= min(int(u), c) else 0
                       for j in range(c + 1)] for u in uniq], dtype=np.int64)
    binom = table[inv]  # binom(n_b, j), j <= min(n_b, c) = caps[b]
    after = np.zeros((sizes.size, C + 1), dtype=np.int64)  # W of the blocks after b
    last = np.r_[person[1:] != person[:-1], True]
    after[last, 0] = 1
    by_pos = [np.flatnonzero(pos == t) for t in range(int(pos.max()) + 1)]
    for t in range(len(by_pos) - 1, 0, -1):
        sel = by_pos[t]
        conv = np.zeros((sel.size, C + 1), dtype=np.int64)
        for j in range(c + 1):
            conv[:, j:] += binom[sel, j:j + 1] * after[sel, :C + 1 - j]
        after[sel - 1] = conv  # the block before, of the same person
    left = np.full(people, C, dtype=np.int64)
    k = np.zeros(sizes.size, dtype=np.int64)
    rows = np.arange(c + 1)
    for sel in by_pos:
        s = left[person[sel]]
        j = np.broadcast_to(rows, (sel.size, c + 1))
        ok = j <= np.minimum(caps[sel], s)[:, None]
        w = np.where(ok, binom[sel] * after[sel[:, None], np.maximum(s[:, None] - j, 0)], 0)
        cum = np.cumsum(w, axis=1)
        u = _below_each(source, cum[:, -1]).astype(np.int64)
        chosen = (u[:, None] >= cum).sum(axis=1)
        k[sel] = chosen
        left[person[sel]] -= chosen
    assert not left.any(), "every person keeps exactly C records"
    return k


def _capped_counts(sizes: np.ndarray, caps: np.ndarray, starts: np.ndarray, C: int,
                   source: RandomSource) -> np.ndarray:
    """``k`` per block for the persons whose caps allow more than ``C`` records (their
    blocks from ``starts[i]`` to ``starts[i + 1]``), each drawn from :func:`basis_law`."""
    ends = np.r_[starts[1:], sizes.size]
    blocks = ends - starts
    totals = np.add.reduceat(sizes, starts)
    # every W of a person is at most max_{s <= C} binom(n, s): int64 when below 2^60
    s = np.minimum(C, totals // 2)
    bits = (gammaln(totals + 1) - gammaln(s + 1) - gammaln(totals - s + 1)) / math.log(2)
    safe = bits < 60
    k = np.zeros(sizes.size, dtype=np.int64)
    person = np.repeat(np.arange(starts.size), blocks)
    pos = np.arange(sizes.size) - np.repeat(starts, blocks)
    chosen = np.flatnonzero(safe)
    at = 0
    while at < chosen.size:  # batches of persons within the memory of _BATCH_ENTRIES
        cum = np.cumsum(blocks[chosen[at:]]) * (C + 1)
        stop = at + max(1, int(np.searchsorted(cum, _BATCH_ENTRIES, side="right")))
        who = chosen[at:stop]
        mask = np.zeros(starts.size, dtype=bool)
        mask[who] = True
        sel = np.flatnonzero(mask[person])
        local = np.searchsorted(who, person[sel])
        k[sel] = _capped_vector(sizes[sel], caps[sel], pos[sel], local, who.size, C, source)
        at = stop
    for i in np.flatnonzero(~safe).tolist():
        sl = slice(int(starts[i]), int(ends[i]))
        k[sl] = _capped_exact(sizes[sl].tolist(), caps[sl].tolist(), C, source)
    return k


def bound_contributions(person: Any, group: Any, max_contributions: int,
                        max_per_group: int | None = None,
                        seed: Any = None) -> np.ndarray:
    """Which records each person keeps: at most ``C = max_contributions`` in all and at
    most ``c = max_per_group`` in any one group, a uniformly random subset among the
    largest ones meeting both caps (docs/records.md, section 2).

    For a person with ``n_g`` records in group ``g`` the subsets meeting both caps are the
    independent sets of a laminar matroid, so the largest ones all have ``K = min(C, sum_g
    min(c, n_g))`` records, and a uniformly random one keeps ``k_g`` records of group ``g``
    with probability ``prod_g binom(n_g, k_g) / W`` (:func:`basis_law`), then a uniformly
    random ``k_g``-subset of the group's records. A person whose caps allow at most ``C``
    keeps ``min(c, n_g)`` per group; the others' ``k`` is drawn exactly by a dynamic
    programme over their groups (int64, or Python integers when its numbers exceed
    ``2^60``) with exact uniform integers. Every person's draw uses fresh randomness, so
    the persons are bounded independently.

    Parameters
    ----------
    person, group : array_like of int
        Per record: a non-negative code of its person, and of its group.
    max_contributions : int
        ``C >= 1``.
    max_per_group : int, optional
        ``1 <= c <= C`` (default ``C``).
    seed : None, int or RandomSource
        None: the operating system's CSPRNG (for release); an int: reproducible (tests).

    Returns
    -------
    numpy.ndarray of bool
        ``True`` for the records kept.

    Examples
    --------
    >>> keep = bound_contributions([7] * 50 + [3], [0] * 30 + [1] * 20 + [0], 4, 3, seed=0)
    >>> int(keep[:50].sum()), int(keep[:30].sum()) <= 3, bool(keep[50])
    (4, True, True)
    """
    C, c = check_bounds(max_contributions, max_per_group)
    if C is None:
        raise ValueError("max_contributions: must be an integer >= 1, got None")
    p = np.asarray(person)
    g = np.asarray(group)
    if p.shape != g.shape or p.ndim != 1:
        raise ValueError("person, group: expected two vectors of one length")
    if p.size == 0:
        return np.zeros(0, dtype=bool)
    for name, v in (("person", p), ("group", g)):
        if v.dtype.kind not in "iu" or v.min() < 0:
            raise ValueError(f"{name}: expected non-negative integer codes")
    return bound_codes(p.astype(np.int64, copy=False), g.astype(np.int64, copy=False), C, c,
                       random_source(seed))[0]


def bound_codes(p: np.ndarray, g: np.ndarray, C: int, c: int,
                source: RandomSource) -> tuple[np.ndarray, np.ndarray]:
    """:func:`bound_contributions` on checked codes (int64 ``p`` and ``g``, ``1 <= c <=
    C``): the records kept, and the number of records of each person code.

    Examples
    --------
    >>> from dpfix.sampling.source import random_source
    >>> keep, per = bound_codes(np.array([0, 0, 0, 1]), np.array([0, 1, 1, 0]), 2, 1,
    ...                         random_source(0))
    >>> int(keep[:3].sum()), bool(keep[3]), per.tolist()
    (2, True, [3, 1])
    """
    per_person = np.bincount(p) if p.size else np.zeros(0, dtype=np.int64)
    small = np.minimum(per_person, 255).astype(np.uint8) if c < 255 else per_person
    keep = small[p] <= c  # a person with at most c records keeps them all
    cut = np.flatnonzero(~keep)
    keep[cut] = True
    if cut.size <= CHUNK_RECORDS:
        if cut.size:
            keep[cut[_cut(p[cut], g[cut], C, c, source)]] = False
        return keep, per_person
    # chunks of whole persons (consecutive codes), each about CHUNK_RECORDS records
    cum = np.cumsum(np.where(per_person > c, per_person, 0))
    parts = -(-cut.size // CHUNK_RECORDS)
    splits = np.searchsorted(cum, np.arange(1, parts) * CHUNK_RECORDS, side="right")
    chunk = np.searchsorted(splits, p[cut], side="right").astype(np.uint16)
    by_chunk = cut[np.argsort(chunk, kind="stable")]  # a radix sort of small integers
    ends = np.cumsum(np.bincount(chunk, minlength=parts))
    for a, b in zip(np.r_[0, ends[:-1]].tolist(), ends.tolist(), strict=True):
        mine = by_chunk[a:b]
        if mine.size:
            keep[mine[_cut(p[mine], g[mine], C, c, source)]] = False
    return keep, per_person


def _cut(pc: np.ndarray, gc: np.ndarray, C: int, c: int, source: RandomSource) -> np.ndarray:
    """The positions of the records that persons with more than ``c`` records (all of each
    such person's records, ``pc`` and ``gc`` their codes) do not keep."""
    G = int(gc.max()) + 1
    if (int(pc.max()) + 1) * G >= 1 << 62:
        pc = np.unique(pc, return_inverse=True)[1].astype(np.int64)
    key = np.multiply(pc, G, out=pc if pc.flags.writeable else None)
    key += gc
    del gc
    # sorted by block (person, group), and within a block by r random bits: a uniformly
    # random order of the block wherever its records do not tie (_ranked redraws the others)
    r = 63 - int(key.max()).bit_length()
    if r >= 16:
        key <<= r
        key |= (source.words(key.size) >> np.uint64(64 - r)).view(np.int64)
        order = np.argsort(key)
        sfull = key[order]
        sk = np.right_shift(sfull, r, out=key)
    else:
        order = np.argsort(key)
        sk = key[order]
    starts = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]])
    sizes = np.diff(np.r_[starts, sk.size])
    owner = sk[starts] // G
    firsts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])  # each person's first block
    blocks = np.diff(np.r_[firsts, sizes.size])
    caps = np.minimum(sizes, c)
    k = caps.copy()
    heavy = np.add.reduceat(caps, firsts) > C
    if heavy.any():
        sel = np.flatnonzero(np.repeat(heavy, blocks))
        local = np.r_[0, np.cumsum(blocks[heavy])[:-1]]
        k[sel] = _capped_counts(sizes[sel], caps[sel], local, C, source)
    partial = k < sizes
    if not partial.any():
        return np.zeros(0, dtype=np.int64)
    # a uniformly random k_b-subset of each partial block: its first k_b records in the order
    where = np.flatnonzero(np.repeat(partial, sizes))  # the records of the partial blocks
    rank = where - np.repeat(starts[partial], sizes[partial])
    if r >= 16:
        tie = np.flatnonzero(sfull[1:] == sfull[:-1]) + 1  # same block, same bits
        tied = np.zeros(sizes.size, dtype=bool)
        tied[np.searchsorted(starts, tie, side="right") - 1] = True
        redraw = tied & partial
    else:
        redraw = partial
    if redraw.any():  # each such block's order drawn again, on its own
        again = np.flatnonzero(np.repeat(redraw[partial], sizes[partial]))
        rank[again] = _ranked(sizes[redraw], source)
    return order[where[rank >= np.repeat(k[partial], sizes[partial])]]


def _ranked(sizes: np.ndarray, source: RandomSource, bits: int | None = None) -> np.ndarray:
    """For consecutive blocks of ``sizes`` records, each record's rank in a uniformly random
    order of its block (``0 .. size - 1``), exactly.

    Each record gets a key ``(block << r) | u`` with ``u`` uniform on ``r`` bits; sorted,
    the records of a block are in the order of their ``u``. When no two records of a block
    tie, that order is uniformly random (the ``u`` are exchangeable and the condition is
    symmetric), else every ``u`` is drawn again (a tie is rare: ``r >= 40``). With fewer
    bits (``r = 63 - bits(len(sizes))``, or ``bits``) the ranks come from
    :meth:`~dpfix.sampling.source.RandomSource.permutation`.
    """
    m = int(sizes.sum())
    block = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
    seg = np.repeat(np.r_[0, np.cumsum(sizes)[:-1]], sizes)
    r = 63 - int(sizes.size).bit_length() if bits is None else bits
    rank = np.empty(m, dtype=np.int64)
    for _ in range(4) if r >= 40 else ():
        u = (source.words(m) >> np.uint64(64 - r)).astype(np.int64)
        keys = (block << r) | u
        o = np.argsort(keys)
        ks = keys[o]
        if m < 2 or not (ks[1:] == ks[:-1]).any():
            rank[o] = np.arange(m) - seg
            return rank
    shuffled = source.permutation(m)
    arranged = shuffled[np.argsort(block[shuffled], kind="stable")]
    rank[arranged] = np.arange(m) - seg
    return rank


def check_bounds(max_contributions: Any, max_per_group: Any) -> tuple[Any, int | None]:
    """``(C, c)`` checked: integers with ``1 <= c <= C`` (``c`` defaults to ``C``);
    ``max_contributions`` None (``C`` to be chosen): ``c`` alone, None when not given.

    Examples
    --------
    >>> check_bounds(5, None), check_bounds(5, 2), check_bounds(None, 2)
    ((5, 5), (5, 2), (None, 2))
    >>> check_bounds(3, 4)
    Traceback (most recent call last):
    ...
    ValueError: max_per_group: 4 exceeds max_contributions=3 (a person keeps at most C \
records in all, so at most C in one group)
    """
    def integer(v: Any, name: str) -> int:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name}: must be an integer >= 1, got {v!r}")
        return int(v)

    c = None if max_per_group is None else integer(max_per_group, "max_per_group")
    if max_contributions is None:
        return None, c
    C = integer(max_contributions, "max_contributions")
    if c is not None and c > C:
        raise ValueError(f"max_per_group: {c} exceeds max_contributions={C} (a person keeps "
                         "at most C records in all, so at most C in one group)")
    return C, C if c is None else c


@dataclass
class Tally:
    """What bounding some persons' records made (confidential: no noise).

    Attributes
    ----------
    counts, true : numpy.ndarray
        ``(groups * values,)`` int64: the kept records of each declared group and counted
        value (row-major), and every record of them before bounding.
    stats : dict
        How many records were read, dropped (group or value not declared), bounded, kept
        and cut, how many persons there were and were cut, the largest contribution.
    """

    counts: np.ndarray
    true: np.ndarray
    stats: dict

    def merge(self, other: Tally) -> Tally:
        """The tally of two disjoint sets of persons: the counts and numbers added, the
        largest contribution the larger.

        Examples
        --------
        >>> a = Tally(np.array([1]), np.array([2]), {"persons": 1, "largest_contribution": 2})
        >>> b = Tally(np.array([0]), np.array([1]), {"persons": 1, "largest_contribution": 1})
        >>> m = a.merge(b)
        >>> m.counts.tolist(), m.stats
        ([1], {'persons': 2, 'largest_contribution': 2})
        """
        stats = {k: v + other.stats[k] for k, v in self.stats.items()}
        stats["largest_contribution"] = max(self.stats["largest_contribution"],
                                            other.stats["largest_contribution"])
        return Tally(self.counts + other.counts, self.true + other.true, stats)


def tally(row: np.ndarray, value: np.ndarray, persons: np.ndarray, cells: int, values: int,
          C: int, c: int, source: RandomSource, read: int | None = None) -> Tally:
    """Bound the records of whole persons and count the kept ones: ``row`` (each record's
    declared group, ``-1`` when not declared), ``value`` (its counted value, ``-1`` when not
    declared), ``persons`` (non-negative codes) per record; ``cells`` the groups times the
    ``values``; ``read`` the records read (default: those given).

    Examples
    --------
    >>> from dpfix.sampling.source import random_source
    >>> t = tally(np.array([0, 0, 1, -1]), np.zeros(4, np.int64), np.array([0, 0, 0, 1]),
    ...           2, 1, 2, 1, random_source(0))
    >>> t.counts.tolist(), t.true.tolist(), t.stats["dropped_group_not_declared"]
    ([1, 1], [2, 1], 1)
    """
    inside = (row >= 0) & (value >= 0)
    every = bool(inside.all())
    r = row if every else row[inside]
    if values == 1:
        at = r
    else:
        at = r * values
        at += value if every else value[inside]
    true = np.bincount(at, minlength=cells)
    p = persons if every else persons[inside]
    keep, per_person = bound_codes(p, r, C, c, source)
    cut = ~keep
    counts = true - np.bincount(at[cut], minlength=cells)
    stats = {
        "records": int(row.size if read is None else read),
        "dropped_group_not_declared": int((row < 0).sum()),
        "dropped_value_not_declared": 0 if every else int(((row >= 0) & (value < 0)).sum()),
        "records_bounded": int(p.size),
        "records_kept": int(p.size - cut.sum()),
        "records_cut_by_bounding": int(cut.sum()),
        "persons": int(np.count_nonzero(per_person)),
        "persons_cut": int(np.count_nonzero(np.bincount(p[cut]))) if cut.any() else 0,
        "largest_contribution": int(per_person.max()) if per_person.size else 0,
    }
    return Tally(counts, true, stats)
