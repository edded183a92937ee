"""From records to counts: each person's contributions bounded, the records aggregated per
declared group, the counts released under the unit ``person`` (docs/records.md).

A statistics office holds *records*: one row per incident, with the person behind it (a
victim or an offender), the group it belongs to (the county) and what it is (the offence).
:func:`privatize_records` releases the table of counts per declared group in one call:

1. **the declared groups** (public, given by the data holder, never read from the
   records): every declared group gets a row, with count 0 when no record falls in it;
   a record whose group is not declared (or missing) is dropped, and so is a record
   whose counted value is not declared;
2. **contribution bounding** (:func:`bound_contributions`): each person keeps at most
   ``C = max_contributions`` of their records in all and at most ``c = max_per_group``
   in any one group, a uniformly random subset among the largest ones meeting both caps
   (secure randomness; seeded only for tests);
3. **aggregation**: the kept records counted per group (one column, or one column per
   declared value of ``count``);
4. **the release**: :func:`dpfix.release.table.privatize_table` on that table with the
   unit ``person:C:c`` (:class:`dpfix.release.budget.PrivacyUnit`): one person changes
   at most ``C`` counts, by at most ``c`` in a row and at most ``C`` in all, so every
   column may spend the whole budget at its share over ``C`` (docs/records.md, the
   proof).

:func:`suggest_max_contributions` chooses ``C`` privately (a private quantile of the
number of records per person, the exponential mechanism of :mod:`dpfix.release.bounds`),
with its budget charged; ``privatize_records(..., max_contributions="auto")`` spends
``contributions_share`` of ``eps`` on it and the rest on the release.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import gammaln

from dpfix.io.tables import check_input_file, is_parquet
from dpfix.numbers.numeric import require
from dpfix.release.bounds import bound_grid, halvings, sample_exponential, upper_scores
from dpfix.release.budget import (
    EPSILON_RANGE,
    LIBRARY_LABELS,
    PrivacyUnit,
    column_budgets,
    column_deltas,
    column_seeds,
    exact_budget,
    fit_shares,
)
from dpfix.release.frameworks import check_seed
from dpfix.release.ledger import Reservation
from dpfix.release.options import TwoStage
from dpfix.release.report import composition
from dpfix.release.table import Confidential, Release, privatize_table
from dpfix.sampling.source import RandomSource, random_source, rational_lam

__all__ = ["privatize_records", "bound_contributions", "bounded_counts", "BoundedCounts",
           "suggest_max_contributions", "ContributionBound", "records_charge",
           "records_statement",
           "basis_law", "RECORDS_LABELS", "RECORDS_CLI_LABELS",
           "DEFAULT_CONTRIBUTION_QUANTILE", "DEFAULT_MAX_CONTRIBUTIONS", "CONTRIBUTIONS_SHARE",
           "COUNT_COLUMN", "RECORD_ORDERS"]

#: The quantile of the records per person that ``max_contributions="auto"`` aims at.
DEFAULT_CONTRIBUTION_QUANTILE = 0.9
#: The largest candidate ``C`` of :func:`suggest_max_contributions`.
DEFAULT_MAX_CONTRIBUTIONS = 1000
#: The share of ``eps`` that ``max_contributions="auto"`` spends on ``C`` by default.
CONTRIBUTIONS_SHARE = 0.1
#: The name of the one count column when every record is counted (``count=None``).
COUNT_COLUMN = "count"
#: The row orders of the released table: the declared order of the groups (public), sorted
#: by the group columns, or shuffled.
RECORD_ORDERS = {"groups": "input", "key": "key", "shuffled": "shuffled"}

#: How the messages of :func:`privatize_records` name its parameters (merged with
#: :data:`dpfix.release.budget.LIBRARY_LABELS`).
RECORDS_LABELS = {"records": "records", "person": "person", "group_by": "group_by",
                  "groups": "groups", "count": "count", "values": "values",
                  "max_contributions": "max_contributions", "max_per_group": "max_per_group",
                  "contributions_share": "contributions_share", "quantile": "quantile",
                  "keep": "keep", "order": "order"}
#: How ``dpfix privatize --records`` names them.
RECORDS_CLI_LABELS = {"records": "INPUT", "person": "--person", "group_by": "--group-by",
                      "groups": "--groups", "count": "--count", "values": "--values",
                      "max_contributions": "--max-contributions",
                      "max_per_group": "--max-per-group",
                      "contributions_share": "--contributions-share",
                      "quantile": "--contributions-quantile", "keep": "--keep",
                      "order": "--order"}

#: Records of persons with more than ``c`` records bounded at a time (whole persons): the
#: temporaries of a chunk stay small enough to be reused from one chunk to the next.
_CHUNK_RECORDS = 1 << 20
#: Bytes of a CSV file parsed at a time (pyarrow's block: a column's chunk).
_BLOCK_BYTES = 1 << 24
#: Entries of the dynamic programme of one vectorised batch (its memory, 8 bytes each).
_BATCH_ENTRIES = 1 << 23


# ------------------------------------------------------------------ the uniform sampler
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
    C, c = _bounds(max_contributions, max_per_group, RECORDS_LABELS)
    p = np.asarray(person)
    g = np.asarray(group)
    if p.shape != g.shape or p.ndim != 1:
        raise ValueError("person, group: expected two vectors of one length")
    if p.size == 0:
        return np.zeros(0, dtype=bool)
    for name, v in (("person", p), ("group", g)):
        if v.dtype.kind not in "iu" or v.min() < 0:
            raise ValueError(f"{name}: expected non-negative integer codes")
    return _bound(p.astype(np.int64, copy=False), g.astype(np.int64, copy=False), C, c,
                  random_source(seed))[0]


def _bound(p: np.ndarray, g: np.ndarray, C: int, c: int,
           source: RandomSource) -> tuple[np.ndarray, np.ndarray]:
    """:func:`bound_contributions` on checked codes: the records kept, and the number of
    records of each person code."""
    per_person = np.bincount(p) if p.size else np.zeros(0, dtype=np.int64)
    small = np.minimum(per_person, 255).astype(np.uint8) if c < 255 else per_person
    keep = small[p] <= c  # a person with at most c records keeps them all
    cut = np.flatnonzero(~keep)
    keep[cut] = True
    if cut.size <= _CHUNK_RECORDS:
        if cut.size:
            keep[cut[_cut(p[cut], g[cut], C, c, source)]] = False
        return keep, per_person
    # chunks of whole persons (consecutive codes), each about _CHUNK_RECORDS records
    cum = np.cumsum(np.where(per_person > c, per_person, 0))
    parts = -(-cut.size // _CHUNK_RECORDS)
    splits = np.searchsorted(cum, np.arange(1, parts) * _CHUNK_RECORDS, side="right")
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


def _bounds(max_contributions: Any, max_per_group: Any, labels: Mapping) -> tuple[int, int]:
    """``(C, c)`` checked: integers with ``1 <= c <= C`` (``c`` defaults to ``C``)."""
    def integer(v: Any, label: str) -> int:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{label}: must be an integer >= 1, got {v!r}")
        return int(v)

    C = integer(max_contributions, labels["max_contributions"])
    c = C if max_per_group is None else integer(max_per_group, labels["max_per_group"])
    if c > C:
        raise ValueError(f"{labels['max_per_group']}: {c} exceeds "
                         f"{labels['max_contributions']} {C} (a person keeps at most C "
                         "records in all, so at most C in one group)")
    return C, c


# ------------------------------------------------------------------ reading
@dataclass
class _Records:
    """The records' columns read (a pyarrow Table), and where they came from."""

    table: Any
    kind: str
    path: str


def _arrow(frame: Any, what: str) -> Any:
    """A pandas DataFrame, a pyarrow Table or a mapping as a pyarrow Table."""
    pa = require("pyarrow")
    pd = require("pandas")
    try:
        if isinstance(frame, pa.Table):
            return frame, "pyarrow Table"
        if isinstance(frame, pd.DataFrame):
            return pa.Table.from_pandas(frame, preserve_index=False), "DataFrame"
        if isinstance(frame, Mapping):
            return pa.table({k: pa.array(v) if not isinstance(v, pa.Array) else v
                             for k, v in frame.items()}), "mapping"
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
        raise ValueError(f"{what}: a column mixes types or cannot be read "
                         f"({' '.join(str(exc).split())})") from None
    raise TypeError(f"{what}: a DataFrame, a pyarrow Table, a mapping of arrays or a path, "
                    f"got {type(frame).__name__}")


def _header(path: Path, sep: str) -> list[str]:
    """The CSV file's header cells (a UTF-8 byte-order mark dropped)."""
    import csv

    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            return next(csv.reader(f, delimiter=sep), [])
    except UnicodeDecodeError:
        raise ValueError(f"input file {path} is not UTF-8 text") from None


def _columns(header: list[str], wanted: list[str], what: str) -> None:
    for name in wanted:
        if name not in header:
            raise ValueError(f"{what}: column {name!r} not found; columns are {header}")
        if header.count(name) > 1:
            raise ValueError(f"{what}: column {name!r} appears {header.count(name)} times in "
                             "the header")


def _read_file(path: Path, wanted: list[str], sep: str, what: str,
               coded: Sequence[str] = ()) -> Any:
    """The columns ``wanted`` of a CSV file (as text, cells exactly as written; those in
    ``coded`` as a dictionary of texts) or of a Parquet file (as typed)."""
    pa = require("pyarrow")
    check_input_file(path, f"{what} file")
    if is_parquet(path):
        import pyarrow.parquet as pq

        try:
            names = pq.read_schema(path).names
        except (pa.ArrowInvalid, OSError) as exc:
            raise ValueError(f"{what} file {path}: not a Parquet file ({exc})") from None
        _columns(names, wanted, what)
        return pq.read_table(path, columns=wanted)
    import pyarrow.csv as pcsv

    header = _header(path, sep)
    if not header:
        raise ValueError(f"{what} file {path} is empty")
    _columns(header, wanted, what)
    try:
        return pcsv.read_csv(
            path, read_options=pcsv.ReadOptions(block_size=_BLOCK_BYTES),
            parse_options=pcsv.ParseOptions(delimiter=sep),
            convert_options=pcsv.ConvertOptions(
                include_columns=wanted,
                column_types={c: pa.dictionary(pa.int32(), pa.string()) if c in coded else
                              pa.string() for c in wanted},
                strings_can_be_null=False, quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, UnicodeDecodeError) as exc:
        raise ValueError(f"{what} file {path}: {' '.join(str(exc).split())}") from None


def _read_records(records: Any, wanted: list[str], sep: str, labels: Mapping,
                  coded: Sequence[str] = ()) -> _Records:
    what = labels["records"]
    if isinstance(records, (str, Path)):
        path = Path(records)
        kind = "parquet" if is_parquet(path) else "csv"
        return _Records(_read_file(path, wanted, sep, what, coded), kind, str(path))
    table, kind = _arrow(records, what)
    _columns(list(table.column_names), wanted, what)
    return _Records(table.select(wanted), kind, f"<{kind}>")


def _plain(column: Any) -> Any:
    """A column (an array or a chunked one) with a dictionary decoded, large text as text."""
    pa = require("pyarrow")
    arr = column
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    if pa.types.is_large_string(arr.type):
        arr = arr.cast(pa.string())
    return arr


def _missing(arr: Any) -> int:
    """Null cells, and empty ones of a text column."""
    pa, pc = require("pyarrow"), require("pyarrow.compute")
    n = arr.null_count
    if pa.types.is_string(arr.type) and len(arr) > n and \
            pc.min(pc.binary_length(arr)).as_py() == 0:
        n += int(pc.sum(pc.equal(arr, "")).as_py() or 0)
    return n


def _plain_integers(arr: Any) -> bool:
    """Whether every text is a plain non-negative integer below ``10^18`` (digits, no
    leading zero): such texts and their int64 values correspond one to one."""
    pc = require("pyarrow.compute")
    length = pc.binary_length(arr)
    if not pc.all(pc.ascii_is_decimal(arr)).as_py() or pc.max(length).as_py() > 18:
        return False
    return not pc.any(pc.and_(pc.starts_with(arr, "0"), pc.greater(length, 1))).as_py()


def _person_codes(column: Any, name: str, labels: Mapping) -> np.ndarray:
    """A non-negative code per record, one per distinct person (exact identity: a text is
    the same person only as the same text)."""
    pa, pc = require("pyarrow"), require("pyarrow.compute")
    arr = _plain(column)
    missing = _missing(arr)
    if missing:
        raise ValueError(f"{labels['person']}: {missing} record(s) have no {name!r} (missing "
                         "or empty); every record needs its person (drop or identify them)")
    n = len(arr)
    if pa.types.is_string(arr.type) and n and _plain_integers(arr):
        arr = arr.cast(pa.int64())  # plain integer texts: one text <-> one int64
    if pa.types.is_integer(arr.type) and n and not (
            pa.types.is_uint64(arr.type) and pc.max(arr).as_py() >= 1 << 63):
        v = arr.to_numpy().astype(np.int64, copy=False)
        lo, hi = int(v.min()), int(v.max())
        if hi - lo <= 4 * n + 1024:
            return v - lo if lo else v
        return require("pandas").factorize(v)[0].astype(np.int64)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return np.asarray(pc.dictionary_encode(arr).indices.to_numpy(zero_copy_only=False),
                      dtype=np.int64)


def _common(a: Any, declared: Any, what: str, name: str) -> tuple[Any, Any]:
    """The type both sides are compared in (None: the records' own type ``a``) and the
    declared values in it, or one line refusing."""
    pa = require("pyarrow")
    b = declared.type
    if a == b:
        return None, declared
    if pa.types.is_integer(a) and pa.types.is_integer(b):
        try:
            return pa.int64(), declared.cast(pa.int64())
        except pa.ArrowInvalid:
            pass
    if pa.types.is_floating(a) and pa.types.is_floating(b):
        return pa.float64(), declared.cast(pa.float64())
    text = "text" if pa.types.is_string(b) else str(b)
    raise ValueError(f"{what}: the declared {name!r} are {text}, the records' are "
                     f"{'text' if pa.types.is_string(a) else a}; give both one type (a CSV "
                     "file is read as text)")


def _index_in(values: Any, declared: Any, what: str, name: str) -> np.ndarray:
    """Each record's position among the declared values, -1 when not declared (or missing).

    A dictionary column (a CSV file's group and value columns are read so) is looked up by
    its dictionary, chunk by chunk: few distinct values, one gather per record."""
    pa, pc = require("pyarrow"), require("pyarrow.compute")
    declared = _plain(declared)
    kind = values.type
    if not pa.types.is_dictionary(kind):
        values = _plain(values)
        target, declared = _common(values.type, declared, what, name)
        found = pc.index_in(values if target is None else values.cast(target),
                            value_set=declared)
        return np.asarray(found.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
    value_type = pa.string() if pa.types.is_large_string(kind.value_type) else kind.value_type
    target, declared = _common(value_type, declared, what, name)
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    out = np.empty(len(values), dtype=np.int64)
    at = 0
    for chunk in chunks:
        words = chunk.dictionary.cast(value_type if target is None else target)
        found = pc.index_in(words, value_set=declared).fill_null(-1)
        lookup = np.r_[np.asarray(found.to_numpy(zero_copy_only=False), dtype=np.int64), -1]
        indices = chunk.indices
        where = (indices.fill_null(len(lookup) - 1) if indices.null_count else
                 indices).to_numpy(zero_copy_only=False)
        out[at:at + len(chunk)] = lookup[where]
        at += len(chunk)
    return out


# ------------------------------------------------------------------ the declared groups
def _declared(groups: Any, group_by: list[str], keep: list[str], sep: str,
              labels: Mapping) -> tuple[Any, str]:
    """The declared groups (a pyarrow Table of the group and kept columns), checked: no
    missing cell, no group twice, at least one."""
    pa, pd = require("pyarrow"), require("pandas")
    what = labels["groups"]
    wanted = [*group_by, *keep]
    if isinstance(groups, (str, Path)):
        table, source = _read_file(Path(groups), wanted, sep, what), str(groups)
    elif isinstance(groups, (pa.Table, pd.DataFrame, Mapping)):
        table, kind = _arrow(groups, what)
        _columns(list(table.column_names), wanted, what)
        table, source = table.select(wanted), f"<{kind}>"
    else:
        if len(group_by) != 1 or keep:
            raise ValueError(f"{what}: with several group columns (or {labels['keep']}) give "
                             "a table of them (a DataFrame, a pyarrow Table or a file)")
        values = groups.to_numpy() if isinstance(groups, (pd.Series, pd.Index)) else groups
        if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
            raise TypeError(f"{what}: a sequence of groups, a table or a path, got "
                            f"{type(groups).__name__}")
        try:
            table = pa.table({group_by[0]: pa.array(list(values))})
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise ValueError(f"{what}: the groups mix types ({exc})") from None
        source = "<sequence>"
    if table.num_rows == 0:
        raise ValueError(f"{what}: no group is declared")
    for name in group_by:
        arr = _plain(table[name])
        missing = _missing(arr)
        if missing:
            row = next(i for i, v in enumerate(arr.to_pylist()) if v is None or v == "")
            raise ValueError(f"{what}: declared group {row + 1} has no {name!r} (missing or "
                             "empty)")
    keys = table.select(group_by).to_pandas()
    twice = keys.duplicated()
    if twice.any():
        row = keys[twice].iloc[0].tolist()
        shown = row[0] if len(row) == 1 else tuple(row)
        raise ValueError(f"{what}: group {shown!r} is declared twice")
    return table, source


def _group_index(records: Any, declared: Any, group_by: list[str], labels: Mapping
                 ) -> np.ndarray:
    """Each record's declared group (its row), -1 when its group is not declared."""
    pc = require("pyarrow.compute")
    what = labels["groups"]
    if len(group_by) == 1:
        return _index_in(records[group_by[0]], declared[group_by[0]], what, group_by[0])
    n = records.num_rows
    key = np.zeros(n, dtype=np.int64)
    dkey = np.zeros(declared.num_rows, dtype=np.int64)
    bad = np.zeros(n, dtype=bool)
    for name in group_by:  # a mixed radix over each column's distinct declared values
        distinct = pc.unique(_plain(declared[name]))
        size = len(distinct)
        r = _index_in(records[name], distinct, what, name)
        d = _index_in(declared[name], distinct, what, name)
        bad |= r < 0
        key, dkey = key * size + np.maximum(r, 0), dkey * size + d
    order = np.argsort(dkey)
    at = np.minimum(np.searchsorted(dkey[order], key), dkey.size - 1)
    found = (dkey[order][at] == key) & ~bad
    return np.where(found, order[at], -1)


# ------------------------------------------------------------------ bounded counts
@dataclass(frozen=True)
class BoundedCounts:
    """The records bounded and counted per declared group (confidential: no noise).

    Attributes
    ----------
    groups : pyarrow.Table
        The declared groups (their columns, and the kept ones), in the declared order.
    names : list of str
        The count columns.
    counts : numpy.ndarray
        ``(groups, columns)`` int64: the kept records of each group and counted value.
    true_counts : numpy.ndarray
        The same before bounding (every record of a declared group and value).
    stats : dict
        How many records were read, dropped (group or value not declared), kept, cut by
        the bounding, and how many persons there were and were cut.
    max_contributions, max_per_group : int
        ``C`` and ``c``.
    """

    groups: Any
    names: list
    counts: np.ndarray
    true_counts: np.ndarray
    stats: dict
    max_contributions: int
    max_per_group: int


@dataclass(frozen=True)
class _Plan:
    """The checked parameters of a records release (no data read)."""

    person: str
    group_by: list
    count: str | None
    values: list | None
    keep: list
    names: list


def _plan(person: Any, group_by: Any, count: Any, values: Any, keep: Any,
          labels: Mapping) -> _Plan:
    if not isinstance(person, str) or not person:
        raise ValueError(f"{labels['person']}: name the column of the persons, got {person!r}")
    by = [group_by] if isinstance(group_by, str) else list(group_by or [])
    if not by or not all(isinstance(g, str) and g for g in by):
        raise ValueError(f"{labels['group_by']}: name the column(s) of the groups, got "
                         f"{group_by!r}")
    keep = [keep] if isinstance(keep, str) else list(keep or [])
    every = [person, *by] + ([count] if count is not None else [])
    for i, name in enumerate(every):
        if name in every[:i]:
            raise ValueError(f"{labels['group_by'] if name in by else labels['count']}: "
                             f"{name!r} is also the person or a group column")
    for name in keep:
        if name in by or keep.count(name) > 1:
            raise ValueError(f"{labels['keep']}: {name!r} is a group column or named twice")
    if count is None:
        if values is not None:
            raise ValueError(f"{labels['values']}: applies to {labels['count']} only; drop it "
                             "or name the column whose values are counted")
        names = [COUNT_COLUMN]
    else:
        if not isinstance(count, str) or not count:
            raise ValueError(f"{labels['count']}: name the column whose values are counted, "
                             f"got {count!r}")
        if values is None or isinstance(values, (str, bytes)) or not len(list(values)):
            raise ValueError(f"{labels['values']}: name the public values of {count!r} to count "
                             "(one column each); the values found in the records are not "
                             "public")
        values = list(values)
        names = [str(v) for v in values]
        for i, name in enumerate(names):
            if name in names[:i]:
                raise ValueError(f"{labels['values']}: {name!r} is declared twice")
    for name in names:
        if name in by or name in keep:
            raise ValueError(f"{labels['count']}: the count column {name!r} is also a group "
                             f"or kept column; rename one")
    return _Plan(person, by, count, values, keep, names)


@dataclass
class _Indexed:
    """The records read and indexed: each one's declared group, counted value and person."""

    declared: Any
    row: np.ndarray
    value: np.ndarray
    persons: np.ndarray
    records: int
    meta: dict

    @property
    def inside(self) -> np.ndarray:
        """The records of a declared group and value: those bounded."""
        return (self.row >= 0) & (self.value >= 0)

    def contributions(self) -> np.ndarray:
        """The number of records of each person (who has one) among those bounded."""
        p = self.persons[self.inside]
        per = np.bincount(p) if p.size else np.zeros(0, np.int64)
        return per[per > 0]


def _indexed(records: Any, plan: _Plan, groups: Any, sep: str, labels: Mapping) -> Any:
    """Read the declared groups and the records' columns, index every record (a Dask
    dataset or DataFrame: :class:`_DaskRecords`, indexed partition by partition)."""
    if _is_dask(records):
        return _DaskRecords(records, plan, groups, sep, labels)
    start = time.perf_counter()
    declared, groups_source = _declared(groups, plan.group_by, plan.keep, sep, labels)
    read = _read_records(records, _wanted(plan), sep, labels, coded=_wanted(plan)[1:])
    read_seconds = time.perf_counter() - start
    ix = _index_table(read.table, plan, declared, labels)
    ix.meta = {"kind": read.kind, "path": read.path, "groups_source": groups_source,
               "seconds": {"read": read_seconds,
                           "index": time.perf_counter() - start - read_seconds}}
    return ix


def _wanted(plan: _Plan) -> list:
    """The records' columns read: the person, the groups, the counted column."""
    return [plan.person, *plan.group_by] + ([plan.count] if plan.count else [])


def _index_table(table: Any, plan: _Plan, declared: Any, labels: Mapping) -> _Indexed:
    """Each record's declared group, counted value and person code."""
    pa = require("pyarrow")
    row = _group_index(table, declared, plan.group_by, labels)
    if plan.count is None:
        value = np.zeros(table.num_rows, dtype=np.int64)
    else:
        try:
            declared_values = pa.array(plan.values)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise ValueError(f"{labels['values']}: the values mix types ({exc})") from None
        value = _index_in(table[plan.count], declared_values, labels["values"], plan.count)
    persons = _person_codes(table[plan.person], plan.person, labels)
    return _Indexed(declared, row, value, persons, int(table.num_rows), {"seconds": {}})


def _is_dask(records: Any) -> bool:
    from dpfix.release.table import Dataset

    return isinstance(records, Dataset) or type(records).__module__.startswith("dask")


def _dask_frame(records: Any, wanted: list, sep: str, labels: Mapping) -> tuple[Any, str, str]:
    """A Dask DataFrame of the records' columns ``wanted``: a Dataset's Parquet dataset (a
    folder or a file) or glob of CSV files (read as text), or a Dask DataFrame as given."""
    import glob

    from dpfix.release.table import Dataset

    dd = require("dask.dataframe")
    what = labels["records"]
    if isinstance(records, Dataset):
        text = str(records.source)
        if Path(text).is_dir() or is_parquet(text):
            ddf, kind = dd.read_parquet(text), "parquet"
        else:
            if not glob.glob(text):
                raise FileNotFoundError(f"{what}: no file matches {text}")
            ddf = dd.read_csv(text, dtype=str, keep_default_na=False, na_filter=False,
                              blocksize=None, sep=sep)
            kind = "csv"
        path = text
    else:
        ddf, kind, path = records, "dask", "<dask DataFrame>"
    _columns([str(c) for c in ddf.columns], wanted, what)
    return ddf[wanted], kind, path


def _partition(frame: Any, plan: _Plan, declared: Any, labels: Mapping, bound: Any,
               seed: Any) -> dict:
    """One partition (every record of its persons: the dataset is shuffled by person): the
    contributions' histogram (``bound`` None), or its bounded and true counts."""
    table, _ = _arrow(frame.reset_index(drop=True), labels["records"])
    ix = _index_table(table, plan, declared, labels)
    if bound is None:
        return {"eta": np.bincount(ix.contributions(), minlength=1)}
    b = _bounded(ix, plan.names, bound[0], bound[1], seed)
    return {"counts": b.counts, "true": b.true_counts, "stats": b.stats}


class _DaskRecords:
    """Records beyond memory: a Dask dataset shuffled by person (every record of a person
    in one partition), each partition indexed and bounded on its own with its own
    randomness (the secure source, or a child of the seed), the counts summed."""

    def __init__(self, records: Any, plan: _Plan, groups: Any, sep: str,
                 labels: Mapping) -> None:
        start = time.perf_counter()
        self.declared, source = _declared(groups, plan.group_by, plan.keep, sep, labels)
        ddf, kind, path = _dask_frame(records, _wanted(plan), sep, labels)
        self.parts = ddf.shuffle(on=plan.person).to_delayed()
        self.plan, self.labels = plan, labels
        self.meta = {"kind": kind, "path": path, "groups_source": source,
                     "seconds": {"read": time.perf_counter() - start}}

    def _run(self, bound: Any, seed: Any) -> list[dict]:
        dask = require("dask")
        seeds = [None] * len(self.parts) if seed is None else \
            np.random.SeedSequence(seed).spawn(len(self.parts))
        tasks = [dask.delayed(_partition)(part, self.plan, self.declared, self.labels, bound,
                                          s) for part, s in zip(self.parts, seeds, strict=True)]
        return list(dask.compute(*tasks))

    def contributions(self) -> np.ndarray:
        """The number of records of each person (who has one) among those bounded."""
        etas = [r["eta"] for r in self._run(None, None)]
        eta = np.zeros(max(e.size for e in etas), dtype=np.int64)
        for e in etas:
            eta[:e.size] += e
        eta[0] = 0
        return np.repeat(np.arange(eta.size), eta)

    def bounded(self, names: list, C: int, c: int, seed: Any) -> BoundedCounts:
        start = time.perf_counter()
        parts = self._run((C, c), seed)
        stats = {k: sum(r["stats"][k] for r in parts) for k in parts[0]["stats"]}
        stats["largest_contribution"] = max(r["stats"]["largest_contribution"] for r in parts)
        self.meta["seconds"]["bound"] = time.perf_counter() - start
        return BoundedCounts(self.declared, list(names), sum(r["counts"] for r in parts),
                             sum(r["true"] for r in parts), stats, C, c)


def _bounded(ix: Any, names: list, C: int, c: int, seed: Any) -> BoundedCounts:
    """Bound and count the indexed records (the confidential step of
    :func:`privatize_records`)."""
    if isinstance(ix, _DaskRecords):
        return ix.bounded(names, C, c, seed)
    start = time.perf_counter()
    inside = ix.inside
    every = bool(inside.all())
    G, V = ix.declared.num_rows, len(names)
    row = ix.row if every else ix.row[inside]
    if V == 1:
        cells = row
    else:
        cells = row * V
        cells += ix.value if every else ix.value[inside]
    true = np.bincount(cells, minlength=G * V)
    p = ix.persons if every else ix.persons[inside]
    source = random_source(seed)
    keep, per_person = _bound(p, row, C, c, source)
    cut = ~keep
    counts = (true - np.bincount(cells[cut], minlength=G * V)).reshape(G, V)
    stats = {
        "records": ix.records,
        "dropped_group_not_declared": int((ix.row < 0).sum()),
        "dropped_value_not_declared": 0 if every else int(((ix.row >= 0) & (ix.value < 0)).sum()),
        "records_bounded": int(p.size),
        "records_kept": int(p.size - cut.sum()),
        "records_cut_by_bounding": int(cut.sum()),
        "persons": int(np.count_nonzero(per_person)),
        "persons_cut": int(np.count_nonzero(np.bincount(p[cut]))) if cut.any() else 0,
        "largest_contribution": int(per_person.max()) if per_person.size else 0,
    }
    true = true.reshape(G, V)
    ix.meta.setdefault("seconds", {})["bound"] = time.perf_counter() - start
    return BoundedCounts(ix.declared, list(names), counts, true, stats, C, c)


def bounded_counts(records: Any, *, person: str, group_by: Any, groups: Any,
                   max_contributions: int, max_per_group: int | None = None,
                   count: str | None = None, values: Sequence | None = None,
                   keep: Any = (), sep: str = ",", seed: Any = None,
                   labels: Mapping = RECORDS_LABELS) -> BoundedCounts:
    """The records bounded (:func:`bound_contributions`) and counted per declared group:
    the table :func:`privatize_records` releases, WITHOUT noise (confidential; for tests,
    studies and checks).

    Parameters are those of :func:`privatize_records`.

    Examples
    --------
    >>> recs = {"pid": ["a"] * 5 + ["b"], "county": ["x", "x", "y", "y", "y", "z"]}
    >>> b = bounded_counts(recs, person="pid", group_by="county", groups=["x", "y"],
    ...                    max_contributions=4, max_per_group=2, seed=0)
    >>> b.counts.ravel().tolist(), b.true_counts.ravel().tolist()
    ([2, 2], [2, 3])
    >>> b.stats["dropped_group_not_declared"], b.stats["records_cut_by_bounding"]
    (1, 1)
    """
    labels = {**RECORDS_LABELS, **labels}
    C, c = _bounds(max_contributions, max_per_group, labels)
    plan = _plan(person, group_by, count, values, keep, labels)
    return _bounded(_indexed(records, plan, groups, sep, labels), plan.names, C, c, seed)


# ------------------------------------------------------------------ choosing C
@dataclass(frozen=True)
class ContributionBound:
    """A DP choice of ``max_contributions`` and what the report states about it (public).

    Attributes
    ----------
    max_contributions : int
        The bound chosen (a DP output).
    eps : float
        The budget spent (``>= 2 ln(lam)``).
    lam : Fraction
        ``p/q <= e^(eps/2)``, proved.
    quantile : float, Fraction or str
        The quantile of the records per person aimed at.
    candidates : int
        How many candidates (:func:`dpfix.release.bounds.bound_grid`).
    max_candidate : int
        The largest candidate.
    """

    max_contributions: int
    eps: float
    lam: Fraction
    quantile: Any
    candidates: int
    max_candidate: int

    def describe(self) -> dict:
        """The report's entry (every value public: parameters or the DP output)."""
        return {
            "max_contributions": self.max_contributions, "eps_contributions": self.eps,
            "quantile": str(self.quantile),
            "lam": f"{self.lam.numerator}/{self.lam.denominator}",
            "candidates": {"count": self.candidates, "max_candidate": self.max_candidate,
                           "grid": "dpfix.release.bounds.bound_grid (1..32, then 8 geometric "
                                   "steps per doubling) with its base measure"},
            "mechanism": "exponential mechanism over the public grid, score |#{persons with at "
                         "most C records} - ceil(quantile P)| (P the persons: sensitivity 1 "
                         "when one person is added or removed), weights 2^-d lam^-score, "
                         "drawn exactly: eps_contributions-DP for one person (docs/records.md)",
        }


def _choose_c(per_person: np.ndarray, eps: float, quantile: Any, max_candidate: int,
              source: RandomSource) -> ContributionBound:
    """The exponential mechanism of :mod:`dpfix.release.bounds` on the records per person."""
    grid = bound_grid(max_candidate)
    eta = np.bincount(per_person, minlength=1) if per_person.size else np.zeros(1, np.int64)
    scores = upper_scores(eta, grid, quantile)  # |#{m_p <= C_j} - ceil(q P)|
    lam = rational_lam(eps / 2)
    j = int(sample_exponential(scores, lam, source, halved=halvings(grid))[0])
    return ContributionBound(int(grid[j]), eps, lam, quantile, int(grid.size), int(max_candidate))


def suggest_max_contributions(records: Any, *, person: str, eps: Any, group_by: Any = None,
                              groups: Any = None, count: str | None = None,
                              values: Sequence | None = None,
                              quantile: Any = DEFAULT_CONTRIBUTION_QUANTILE,
                              max_candidate: int = DEFAULT_MAX_CONTRIBUTIONS,
                              sep: str = ",", seed: Any = None, ledger: Any = None,
                              labels: Mapping = RECORDS_LABELS) -> ContributionBound:
    """An ``eps``-DP choice of ``max_contributions``: a private ``quantile`` of the number
    of records per person (docs/records.md, section 5).

    The exponential mechanism of :func:`dpfix.release.bounds.choose_upper` over the public
    grid :func:`dpfix.release.bounds.bound_grid` ``(max_candidate)``, with the score
    ``|#{persons with at most C_j records} - ceil(quantile P)|`` (``P`` persons). Adding or
    removing one person changes ``#{m_p <= C_j}`` by at most 1 and ``ceil(quantile P)`` by
    at most 1, in the same direction, so every score by at most 1: the choice is
    ``eps``-DP for one person added or removed (whatever their records).

    Parameters
    ----------
    records, person, group_by, groups, count, values, sep :
        As :func:`privatize_records`; with ``groups`` (and ``values``) only the records
        that would be bounded are counted.
    eps : float or str
        The budget spent on the choice.
    quantile : float, Fraction or str
        The share of persons whose records ``C`` should keep whole, in ``(0, 1]``
        (default :data:`DEFAULT_CONTRIBUTION_QUANTILE`).
    max_candidate : int
        The largest candidate (default :data:`DEFAULT_MAX_CONTRIBUTIONS`).
    seed : None, int or RandomSource
        None: the operating system's CSPRNG; an int: reproducible (tests).
    ledger : dpfix.release.ledger.Ledger, optional
        Charged with ``eps`` (the unit: one person added or removed).

    Returns
    -------
    ContributionBound

    Examples
    --------
    >>> sizes = [1] * 600 + [2] * 200 + [3] * 100 + [4] * 60 + [10] * 40  # 1000 persons
    >>> recs = {"pid": [p for p, m in enumerate(sizes) for _ in range(m)]}
    >>> suggest_max_contributions(recs, person="pid", eps=20, seed=0).max_contributions
    3
    """
    labels = {**RECORDS_LABELS, **labels}
    budget = float(exact_budget(eps, LIBRARY_LABELS["eps"]))
    if groups is None and (group_by is not None or count is not None):
        raise ValueError(f"{labels['groups']}: {labels['group_by']} and {labels['count']} "
                         "select the records counted only with the declared groups")
    plan = None if groups is None else _plan(person, group_by, count, values, (), labels)

    def run() -> ContributionBound:
        if plan is None and _is_dask(records):
            column = _dask_frame(records, [person], sep, labels)[0][person]
            missing = int((column.isna() | (column.astype(str) == "")).sum().compute())
            if missing:
                raise ValueError(f"{labels['person']}: {missing} record(s) have no {person!r} "
                                 "(missing or empty); every record needs its person (drop or "
                                 "identify them)")
            per = column.value_counts().compute().to_numpy()
        elif plan is None:
            table = _read_records(records, [person], sep, labels).table
            codes = _person_codes(table[person], person, labels)
            per = np.bincount(codes) if codes.size else np.zeros(0, np.int64)
            per = per[per > 0]
        else:
            per = _indexed(records, plan, groups, sep, labels).contributions()
        return _choose_c(per, budget, quantile, max_candidate, random_source(seed))

    if ledger is None:
        return run()
    with ledger.reserve(Fraction(budget), dataset=_source_name(records), columns=[],
                        unit=PERSON_STATEMENT) as charge:
        made = run()
        charge.commit()
    return made


#: The neighbouring relation of :func:`suggest_max_contributions`, for its ledger charge.
PERSON_STATEMENT = ("neighbouring record sets differ by one person (all their records, added "
                    "or removed)")


# ------------------------------------------------------------------ the release
def _source_name(records: Any) -> str:
    """What a ledger's charge names as the data set: a file's resolved path, or the kind of
    object given."""
    if isinstance(records, (str, Path)):
        return str(Path(records).resolve())
    return f"<{type(records).__name__}>"


def _split(eps: Any, share: Any, labels: Mapping) -> tuple[float, Fraction]:
    """``max_contributions="auto"``: the float budget of the choice of ``C`` and the exact
    rest for the release, their exact sum at most the float of ``eps``."""
    total = Fraction(float(exact_budget(eps, labels["eps"])))
    if share is None:
        share = CONTRIBUTIONS_SHARE
    if isinstance(share, bool) or not isinstance(share, (int, float, Fraction, str)):
        raise ValueError(f"{labels['contributions_share']}: a number in (0, 1), got {share!r}")
    try:
        q = Fraction(share) if not isinstance(share, float) else Fraction(repr(share))
    except (ValueError, ZeroDivisionError):
        q = Fraction(-1)
    if not 0 < q < 1:
        raise ValueError(f"{labels['contributions_share']}: a number in (0, 1), got {share!r}")
    spend = fit_shares([q * total], float(q * total))[0]
    rest = total - Fraction(spend)
    return spend, rest


def _rest_float(rest: Fraction) -> float:
    """The largest float at most the exact ``rest``."""
    f = float(rest)
    return math.nextafter(f, 0.0) if Fraction(f) > rest else f


def records_charge(eps: Any, columns: Sequence, *, max_contributions: Any,
                   max_per_group: int | None = None, shares: Mapping | None = None,
                   delta: float | None = None, contributions_share: Any = None,
                   constructor: str = "northwest",
                   labels: Mapping = RECORDS_LABELS) -> tuple[Fraction, Fraction]:
    """The exact ``(eps, delta)`` a :func:`privatize_records` call spends, from its public
    parameters only (the charge a caller reserves on a ledger before the release).

    With ``max_contributions="auto"``: the choice of ``C`` (``contributions_share`` of
    ``eps``) plus the release (the rest), composed sequentially; else the release. The
    release's columns compose in parallel (the unit ``person``): the maximum of their
    budgets.

    Examples
    --------
    >>> records_charge("1", ["MURDER", "RAPE"], max_contributions=5)
    (Fraction(1, 1), Fraction(0, 1))
    """
    labels = {**LIBRARY_LABELS, **RECORDS_LABELS, **labels}
    names = list(columns)
    auto = isinstance(max_contributions, str) and max_contributions.strip() == "auto"
    spend, rest = (_split(eps, contributions_share, labels) if auto else
                   (0.0, Fraction(float(exact_budget(eps, labels["eps"])))))
    C = 1 if auto else _bounds(max_contributions, max_per_group, labels)[0]
    unit = PrivacyUnit("person", C)
    release_eps = _rest_float(rest) if auto else eps
    try:
        budgets, rule = column_budgets(release_eps, names, shares, constructor,
                                       PrivacyUnit("person", 1) if auto else unit, labels)
    except ValueError as exc:
        if not auto:
            raise
        raise ValueError(f"{exc} (the release's part of {labels['eps']} {eps!r}: "
                         f"{labels['max_contributions']} auto spends {spend:.6g} on C)") from None
    spent = composition(names, budgets, release_eps, rule, unit,
                        column_deltas(delta, len(names), unit), exact=True)
    return Fraction(spend) + spent["eps_spent"], spent["delta_spent"]


def records_statement(max_contributions: Any, max_per_group: int | None = None) -> str:
    """The unit of a :func:`privatize_records` call in words, as its ledger charge records
    it: the unit ``person:C:c``'s statement, or with ``max_contributions="auto"`` the
    choice of ``C`` composed with the release.

    Examples
    --------
    >>> records_statement(3, 2)[:60]
    'neighbouring tables differ by one person (added or removed):'
    >>> records_statement("auto")[:45]
    'neighbouring record sets differ by one person'
    """
    if isinstance(max_contributions, str) and max_contributions.strip() == "auto":
        return ("neighbouring record sets differ by one person (added or removed); the choice "
                "of C and the release compose sequentially, the release under the unit "
                "person:C of the C chosen (docs/records.md)")
    C, c = _bounds(max_contributions, max_per_group, RECORDS_LABELS)
    return PrivacyUnit("person", C, c).statement()


def _largest_candidate(release_eps: Any, names: list, shares: Any, constructor: str,
                       labels: Mapping) -> int:
    """``max_contributions="auto"``: the largest ``C`` whose mechanisms (every column's
    budget over ``C``) stay in the usable range of ``constructor`` (at most
    :data:`DEFAULT_MAX_CONTRIBUTIONS`): a public function of the parameters."""
    budgets, _ = column_budgets(release_eps, names, shares, constructor,
                                PrivacyUnit("person", 1), labels)
    lo = EPSILON_RANGE.get(constructor, EPSILON_RANGE["heuristic"])[0]
    top = min(DEFAULT_MAX_CONTRIBUTIONS, int(min(budgets) / lo))
    while top > 1 and min(budgets) / top < lo:  # the float division, as the check does
        top -= 1
    return top  # at least 1: column_budgets checked every budget at C = 1


def _records_entry(plan: _Plan, bounded: BoundedCounts, meta: dict, unit: PrivacyUnit,
                   chosen: ContributionBound | None, seeded: bool, order: str,
                   budget: dict) -> dict:
    """The public report's ``records`` entry: how the counts were made from the records."""
    return {
        "source": {"path": meta["path"], "kind": meta["kind"]},
        "person": plan.person,
        "group_by": list(plan.group_by),
        "groups": {
            "declared": int(bounded.groups.num_rows), "source": meta["groups_source"],
            "rule": "one row per declared group, in the released table whatever the records "
                    "hold (0 when no record falls in it); a record whose group is not "
                    "declared, or missing, is dropped before the bounding. The groups are "
                    "public: given by the data holder, not read from the records, so which "
                    "rows appear says nothing about the records; how many records were "
                    "dropped is in the confidential report only"},
        "count": {
            "column": plan.count, "values": None if plan.values is None else
            [str(v) for v in plan.values], "columns": list(plan.names),
            "rule": "every record of a declared group counted once" if plan.count is None
            else f"one count column per declared value of {plan.count!r}; a record whose "
                 "value is not declared, or missing, is dropped before the bounding (the "
                 "values are public, not read from the records)"},
        "bounding": {
            "max_contributions": unit.bound, "max_per_group": unit.per_group,
            "chosen_by": "given: a public parameter, not computed from the records"
            if chosen is None else chosen.describe(),
            "rule": "each person keeps a uniformly random subset of their records among the "
                    f"largest ones with at most {unit.bound} in all and at most "
                    f"{unit.per_group} in any one group (the bases of a laminar matroid, "
                    "drawn exactly), independently of every other person, before the "
                    "aggregation",
            "randomness": "seeded (NOT FOR PRODUCTION)" if seeded else
                          "the operating system's CSPRNG (secure)"},
        "unit": unit.text,
        "row_order": order,
        "budget": budget,
        "proof": "docs/records.md",
    }


def privatize_records(records: Any, *, person: str, group_by: Any, groups: Any, eps: Any,
                      upper: Any, max_contributions: Any, max_per_group: int | None = None,
                      count: str | None = None, values: Sequence | None = None,
                      keep: Any = (), shares: Mapping | None = None,
                      delta: float | None = None, order: str = "groups",
                      options: Any = None, upper_share: float | None = None,
                      contributions_share: Any = None,
                      quantile: Any = DEFAULT_CONTRIBUTION_QUANTILE, joint: Any = None,
                      seed: int | None = None, ledger: Any = None, sep: str = ",",
                      confidential: bool = False,
                      labels: Mapping = RECORDS_LABELS
                      ) -> Release | tuple[Release, Confidential]:
    """Release a table of counts from records: each person's contributions bounded, the
    records counted per declared group, the counts privatized under the unit
    ``person:C:c`` (docs/records.md).

    Parameters
    ----------
    records : pandas.DataFrame, pyarrow.Table, mapping, str, pathlib.Path, Dataset or Dask
        One row per record (incident): a DataFrame, a pyarrow Table, a mapping column ->
        array, or a CSV file (read as text: cells are identities as written, ``007`` is
        not ``7``) or a Parquet file; beyond memory a
        :class:`dpfix.release.table.Dataset` (a Parquet dataset or a glob of CSV files) or
        a ``dask.dataframe.DataFrame``, shuffled by person and bounded partition by
        partition (each with its own randomness), the counts summed. Only the columns
        ``person``, ``group_by`` and ``count`` are read. Not modified.
    person : str
        The column that identifies a person (every record needs one: a missing or empty
        cell is refused).
    group_by : str or list of str
        The column(s) of the groups: the rows of the released table (the county).
    groups : sequence, pandas.DataFrame, pyarrow.Table, str or pathlib.Path
        The public list of groups: a sequence of values (one group column), or a table or
        file with the ``group_by`` columns (and the ``keep`` ones). Every declared group
        gets a row; a group declared twice, or with a missing cell, is refused; a record
        whose group is not declared is dropped (the number dropped goes to the confidential
        report only). Matched by value, in one type (a CSV file is read as text).
    eps : float or str
        The total budget (with ``max_contributions="auto"`` the choice of ``C`` included).
    upper : int, "auto" or mapping
        The public bound of the counts, as :func:`dpfix.release.table.privatize_table`.
    max_contributions : int or "auto"
        ``C >= 1``: a person keeps at most ``C`` records in all. ``"auto"``: chosen by
        :func:`suggest_max_contributions` at ``quantile`` with ``contributions_share`` of
        ``eps`` (default :data:`CONTRIBUTIONS_SHARE`), the rest for the release.
    max_per_group : int, optional
        ``1 <= c <= C``: at most ``c`` in any one group (default ``C``; with ``"auto"`` the
        smaller of it and the ``C`` chosen).
    count : str, optional
        None (default): every record counted, one column :data:`COUNT_COLUMN`. A column
        name (the offence): one count column per value in ``values``.
    values : sequence, optional
        With ``count``: the public values counted, one column each (named by their text);
        a record with another value (or none) is dropped.
    keep : sequence
        Columns of the ``groups`` table written as they are (public: county names).
    shares, delta, options, upper_share, joint :
        As :func:`dpfix.release.table.privatize_table` (``joint``: tuples of count columns).
    order : str
        The released rows: ``"groups"`` (default: the declared order, public), ``"key"``
        (sorted by the group columns) or ``"shuffled"``.
    contributions_share, quantile :
        For ``max_contributions="auto"``.
    seed : int, optional
        Reproducible (NOT FOR PRODUCTION): the bounding, the choice of ``C`` and the release
        each get a seed spawned from it.
    ledger : dpfix.release.ledger.Ledger or Reservation, optional
        Charged once with all the call spends (:func:`records_charge`), the records' source,
        the columns and the unit's statement; an entered Reservation must charge exactly
        that, and the caller commits it.
    sep : str
        The separator of CSV files.
    confidential : bool
        Also return the :class:`~dpfix.release.table.Confidential`, its report holding the
        records' numbers (read, dropped, cut by the bounding, the persons).
    labels : mapping
        How messages name the parameters (:data:`RECORDS_CLI_LABELS` for the command).

    Returns
    -------
    Release, or (Release, Confidential) with ``confidential=True``
        The table: the group columns (and ``keep``), then the privatized count columns;
        the report: as :func:`~dpfix.release.table.privatize_table`'s, with the unit
        ``person:C:c``, its input the records, and a ``records`` entry (the groups' rule,
        what is counted, the bounding, the budget).

    Raises
    ------
    ValueError
        On bad input, in one line naming it, before any randomness is drawn.

    Examples
    --------
    >>> recs = {"pid": [1, 1, 1, 2, 3], "county": ["a", "a", "b", "b", "z"]}
    >>> r = privatize_records(recs, person="pid", group_by="county", groups=["a", "b", "c"],
    ...                       eps=1.0, upper=5, max_contributions=2, seed=0)
    >>> r.table["county"].tolist(), r.report["unit"]["text"]
    (['a', 'b', 'c'], 'person:2')
    """
    labels = {**LIBRARY_LABELS, **RECORDS_LABELS, **labels}
    plan = _plan(person, group_by, count, values, keep, labels)
    if order not in RECORD_ORDERS:
        raise ValueError(f"{labels['order']}: one of {', '.join(RECORD_ORDERS)}, got {order!r}")
    auto = isinstance(max_contributions, str) and max_contributions.strip() == "auto"
    options = options if options is not None else TwoStage()
    if auto:
        if max_per_group is not None:
            _bounds(max_per_group, None, labels)
        spend, rest = _split(eps, contributions_share, labels)
        release_eps: Any = _rest_float(rest)
        C, c = 1, 1
    else:
        if contributions_share is not None:
            raise ValueError(f"{labels['contributions_share']}: applies to "
                             f"{labels['max_contributions']} auto only; drop it")
        spend, release_eps = 0.0, eps
        C, c = _bounds(max_contributions, max_per_group, labels)
    seed = check_seed(seed)
    # the checks of the release, on its public parameters, before any record is read
    charge_eps, charge_delta = records_charge(
        eps, plan.names, max_contributions=max_contributions, max_per_group=max_per_group,
        shares=shares, delta=delta, contributions_share=contributions_share,
        constructor=options.constructor, labels=labels)
    if auto:  # before any record is read: some C must keep the mechanisms in range
        _largest_candidate(release_eps, plan.names, shares, options.constructor, labels)
    if delta is not None and (auto or C > 1):
        raise ValueError(f"{labels['max_contributions']}: C > 1 is for pure eps-DP methods "
                         "(group privacy also multiplies delta); drop delta or use C = 1")
    seeds = column_seeds(seed, 3) if seed is not None else [None, None, None]
    args = (records, plan, groups, auto, C, c, max_per_group, spend, release_eps, upper,
            shares, delta, order, options, upper_share, quantile, joint, seeds, sep,
            confidential, labels, eps)
    if ledger is None:
        return _release_records(*args, charge=None)
    if isinstance(ledger, Reservation):
        if ledger.after is None:
            raise ValueError("ledger: a Reservation must be entered (with ledger.reserve(...) "
                             "as r) before the release")
        if (ledger.charge.eps, ledger.charge.delta) != (charge_eps, charge_delta):
            raise ValueError(f"ledger: the reservation charges eps {ledger.charge.eps}, delta "
                             f"{ledger.charge.delta}, but the release spends eps {charge_eps}, "
                             f"delta {charge_delta} (records_charge)")
        return _release_records(*args, charge=ledger)
    with ledger.reserve(charge_eps, charge_delta, dataset=_source_name(records),
                        columns=[str(n) for n in plan.names],
                        unit=records_statement(max_contributions, max_per_group)) as charge:
        made = _release_records(*args, charge=charge)
        if not charge.committed:
            charge.commit()
    return made


def _release_records(records: Any, plan: _Plan, groups: Any, auto: bool, C: int, c: int,
                     max_per_group: Any, spend: float, release_eps: Any, upper: Any,
                     shares: Any, delta: Any, order: str, options: Any, upper_share: Any,
                     quantile: Any, joint: Any, seeds: list, sep: str, confidential: bool,
                     labels: Mapping, eps: Any, charge: Any
                     ) -> Release | tuple[Release, Confidential]:
    """The release, its public parameters checked (:func:`privatize_records`)."""
    start = time.perf_counter()
    ix = _indexed(records, plan, groups, sep, labels)
    meta = ix.meta
    chosen = None
    if auto:  # C first (its own budget), then the bounding under the C chosen
        top = _largest_candidate(release_eps, plan.names, shares, options.constructor, labels)
        chosen = _choose_c(ix.contributions(), spend, quantile, top, random_source(seeds[1]))
        C = chosen.max_contributions
        c = C if max_per_group is None else min(int(max_per_group), C)
    bounded = _bounded(ix, plan.names, C, c, seeds[0])
    unit = PrivacyUnit("person", C, c)
    frame = bounded.groups.to_pandas()
    for k, name in enumerate(plan.names):
        frame[name] = bounded.counts[:, k]
    made = privatize_table(frame, plan.names, release_eps, upper=upper, unit=unit,
                           keys=plan.group_by, keep=plan.keep, shares=shares, delta=delta,
                           order=RECORD_ORDERS[order], seed=seeds[2], options=options,
                           upper_share=upper_share, confidential=True, joint=joint,
                           labels=labels)
    release, secret = made
    report = dict(release.report)
    spent = report["composition"]
    total = Fraction(spend) + Fraction(spent["eps_spent"])
    budget = {"eps_t": float(exact_budget(eps, labels["eps"])),
              "eps_contributions": spend, "eps_release": spent["eps_spent"],
              "eps_spent": float(total),
              "rule": "the choice of C, then the release under the C chosen: sequential "
                      "composition, eps_contributions + eps_release" if auto else
                      "C given: the release alone"}
    report["input"] = {"path": meta["path"], "kind": "records",
                       "columns": list(plan.names)}
    if order == "groups":
        report["row_order_rule"] = ("rows in the declared order of the groups (public: given "
                                    "by the data holder, not read from the records)")
    report["records"] = _records_entry(plan, bounded, meta, unit, chosen, seeds[0] is not None,
                                       order, budget)
    if charge is not None:
        report["ledger"] = charge.statement()
    public = Release(release.table, report, release.layout, release.path)
    if not confidential:
        return public
    body = dict(secret.report)
    body["records"] = {**bounded.stats, "seconds": {**meta["seconds"],
                                                    "total": time.perf_counter() - start},
                       "true_counts_total": dict(zip(plan.names,
                                                     bounded.true_counts.sum(axis=0).tolist(),
                                                     strict=True)),
                       "kept_counts_total": dict(zip(plan.names,
                                                     bounded.counts.sum(axis=0).tolist(),
                                                     strict=True))}
    return public, Confidential(body, secret.histograms, secret.topcoded)
