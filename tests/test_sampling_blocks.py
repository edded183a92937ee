"""The secure source and the vectorised draws (docs/sampling.md sections 1.1, 1.2 and 2).

- the secure source is AES-128 in counter mode keyed by ``os.urandom`` (the FIPS-197
  known answer, and the words against the key read), or ``os.urandom`` itself without
  randomgen;
- the permutation is the rule "sort the positions by their words, further rounds on
  ties" word for word (an independent lexsort implementation of the rule), with ties
  forced in the top bits and in whole words; every permutation of 4 positions comes
  exactly equally often over all tuples of distinct words from a set, and by
  chi-square over seeded and secure draws;
- the count tables of the two-sided geometric sampler and the column tables of the
  remap give the counts and columns that ``searchsorted`` gives, from the same words
  (the tables switched off for the reference; hypothesis on the tables themselves).
"""

from __future__ import annotations

import itertools
import math
import sys
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import dpfix.sampling.geometric as geo
import dpfix.sampling.source as src
import dpfix.sampling.structured as structured
from dpfix.sampling import (
    RandomSource,
    SecureSource,
    SeededSource,
    TwoSidedGeometric,
    rational_lam,
)
from dpfix.sampling.structured import Remap

ALPHA = 1e-4


class Counted(RandomSource):
    """Another source's words, counting them."""

    def __init__(self, inner: RandomSource) -> None:
        self.inner, self.drawn = inner, 0

    def words(self, size: int) -> np.ndarray:
        self.drawn += int(size)
        return self.inner.words(size)


class FewBits(RandomSource):
    """Seeded words keeping only their top ``bits`` bits (ties in the top bits, or whole)."""

    def __init__(self, seed: int, bits: int, low: bool = False) -> None:
        self.inner, self.shift, self.low = SeededSource(seed), np.uint64(64 - bits), low

    def words(self, size: int) -> np.ndarray:
        w = self.inner.words(size) >> self.shift
        return w if self.low else w << self.shift


class Script(RandomSource):
    """The given words in order."""

    def __init__(self, words: list[int]) -> None:
        self.left = list(words)

    def words(self, size: int) -> np.ndarray:
        assert size <= len(self.left), "read more words than scripted"
        out, self.left = self.left[:size], self.left[size:]
        return np.array(out, dtype=np.uint64)


def reference_permutation(source: RandomSource, size: int) -> np.ndarray:
    """The rule itself: positions sorted by their words, every position a further word
    while two tie (numpy's lexsort over the rounds)."""
    keys = [source.words(size)]
    while True:
        order = np.lexsort(keys[::-1])
        ranked = np.stack([k[order] for k in keys])
        if size < 2 or (ranked[:, 1:] != ranked[:, :-1]).any(axis=0).all():
            return order
        keys.append(source.words(size))


# ------------------------------------------------------------------ the secure source
def test_randomgen_aes_counter_is_aes_128():
    """FIPS-197 appendix C.1: key 000102..0f, plaintext 00112233..ff (the counter)."""
    randomgen = pytest.importorskip("randomgen")
    key = int.from_bytes(bytes(range(16)), "little")
    counter = int.from_bytes(bytes.fromhex("00112233445566778899aabbccddeeff"), "little")
    words = randomgen.AESCounter(key=key, counter=counter).random_raw(2)
    assert words.tobytes().hex() == "69c4e0d86a7b0430d8cdb78070b4c55a"


def test_secure_words_are_aes_ctr_under_a_key_from_os_urandom(monkeypatch):
    randomgen = pytest.importorskip("randomgen")
    key = bytes(range(100, 116))
    reads = []
    monkeypatch.setattr(src.os, "urandom", lambda k: reads.append(k) or key[:k])
    s = SecureSource()
    assert reads == [16] and s.secure
    expected = randomgen.AESCounter(key=int.from_bytes(key, "little")).random_raw(12)
    assert np.array_equal(np.concatenate([s.words(5), s.words(7)]), expected)
    assert "AES-128" in s.description and "os.urandom" in s.description
    assert "NOT FOR PRODUCTION" not in s.description
    # a fresh key for every source
    monkeypatch.undo()
    assert not np.array_equal(SecureSource().words(4), SecureSource().words(4))


def test_seeded_and_secure_sources_read_their_bit_generators_alike():
    """One code path: both hand out ``bit_generator.random_raw``; a source with neither a
    bit generator nor its own ``words`` says so."""
    seeded, secure = SeededSource(7), SecureSource()
    assert type(seeded).words is type(secure).words is RandomSource.words
    assert np.array_equal(seeded.words(5), np.random.PCG64(7).random_raw(5))
    assert hasattr(secure.bit_generator, "random_raw")
    with pytest.raises(NotImplementedError, match="bit_generator"):
        RandomSource().words(1)


def test_a_secure_source_cannot_be_copied():
    import copy
    import pickle

    s = SecureSource()
    for clone in (pickle.dumps, copy.deepcopy, copy.copy):
        with pytest.raises(TypeError, match="repeat its words"):
            clone(s)


def test_secure_source_without_randomgen_reads_os_urandom(monkeypatch):
    monkeypatch.setitem(sys.modules, "randomgen", None)  # the import fails
    reads = []
    real = src.os.urandom
    monkeypatch.setattr(src.os, "urandom", lambda k: reads.append(k) or real(k))
    s = SecureSource()
    assert s.secure and s.description.startswith("os.urandom")
    w = s.words(1000)
    assert reads == [8000] and w.dtype == np.uint64 and w.flags.writeable
    assert sorted(s.permutation(50).tolist()) == list(range(50))
    x = TwoSidedGeometric(rational_lam(1.0)).sample(1000, s, cap=50)
    assert np.abs(x).max() <= 50


# ------------------------------------------------------------------ the permutation
@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 5, 17, 64, 65, 1000, 4097])
def test_permutation_is_the_rule_word_for_word(size):
    for seed in range(20):
        a, b = Counted(SeededSource(seed)), Counted(SeededSource(seed))
        got = a.permutation(size)
        assert got.dtype == np.int64
        assert np.array_equal(got, reference_permutation(b, size))
        assert a.drawn == b.drawn == size


@pytest.mark.parametrize("bits, low", [(1, False), (2, False), (3, False), (9, False),
                                       (14, False), (20, False), (2, True), (12, True)])
@pytest.mark.parametrize("size", [2, 3, 10, 300, 3000])
def test_permutation_with_forced_ties_is_the_rule(bits, low, size, monkeypatch):
    """Few random bits: the top bits tie often (resolved by the whole words) and whole
    words tie (further rounds); small blocks put runs across block boundaries."""
    monkeypatch.setattr(src, "_BLOCK", 7)
    for seed in range(8):
        a, b = Counted(FewBits(seed, bits, low)), Counted(FewBits(seed, bits, low))
        got = a.permutation(size)
        assert np.array_equal(got, reference_permutation(b, size)), (bits, low, size, seed)
        assert a.drawn == b.drawn


def test_every_permutation_of_four_comes_equally_often_over_distinct_words():
    """Exact: each 4-tuple of distinct words from 8 values (pairs of them equal in every
    bit but the lowest two, which the sort replaces by positions) orders the positions;
    each of the 24 orders comes from exactly 8 * 7 * 6 * 5 / 24 = 70 tuples."""
    values = [(h << 62) | low for h in range(2) for low in range(4)]
    counts: dict[tuple, int] = {}
    for tup in itertools.permutations(values, 4):
        p = tuple(Script(list(tup)).permutation(4).tolist())
        counts[p] = counts.get(p, 0) + 1
    assert sorted(counts) == sorted(itertools.permutations(range(4)))
    assert set(counts.values()) == {70}


@pytest.mark.parametrize("source", ["seeded", "secure"])
def test_permutations_of_four_pass_a_chi_square(source):
    s = SeededSource(2024) if source == "seeded" else SecureSource()
    perms = list(itertools.permutations(range(4)))
    index = {p: i for i, p in enumerate(perms)}
    counts = np.zeros(24, dtype=np.int64)
    for _ in range(24_000):
        counts[index[tuple(s.permutation(4).tolist())]] += 1
    assert stats.chisquare(counts).pvalue > ALPHA


def test_permutation_of_many_rows_is_uniform_in_its_positions():
    """The secure permutation of 20,000 rows: where row 0 lands and which row lands first
    are uniform (chi-square over 50 cells of 400 positions), and it is a permutation."""
    s = SecureSource()
    first, where = np.zeros(50, dtype=np.int64), np.zeros(50, dtype=np.int64)
    for _ in range(2000):
        p = s.permutation(20_000)
        first[p[0] // 400] += 1
        where[int(np.flatnonzero(p == 0)[0]) // 400] += 1
    assert np.array_equal(np.sort(p), np.arange(20_000))
    assert stats.chisquare(first).pvalue > ALPHA and stats.chisquare(where).pvalue > ALPHA


@pytest.mark.parametrize("size", [0, 1, 2, 3, 17, 1000, 4097])
@pytest.mark.parametrize("high", [0, 1, 2, 50, 2**40, 2**63 - 1])
@pytest.mark.parametrize("dtype", [np.int64, np.uint8, np.uint64])
def test_shuffle_is_the_permutation_applied_word_for_word(size, high, dtype):
    """``shuffle(values)`` is ``values[perm]`` for the rule's ``perm`` of the same words,
    reading the same words: values narrow (sorted with the words) and wide (gathered)."""
    if high > np.iinfo(dtype).max:
        pytest.skip("the values do not fit the dtype")
    for seed in range(6):
        values = np.random.default_rng(seed).integers(0, high, size, endpoint=True,
                                                      dtype=np.uint64).astype(dtype)
        a, b = Counted(SeededSource(seed)), Counted(SeededSource(seed))
        got = a.shuffle(values)
        assert got.dtype == values.dtype
        assert np.array_equal(got, values[reference_permutation(b, size)])
        assert a.drawn == b.drawn


@pytest.mark.parametrize("bits, low", [(1, False), (3, False), (14, False), (40, False),
                                       (2, True), (12, True)])
@pytest.mark.parametrize("size", [2, 3, 10, 300, 3000])
def test_shuffle_with_forced_ties_is_the_permutation_applied(bits, low, size, monkeypatch):
    """Few random bits: the words' top bits tie (the positions are sorted instead) and
    whole words tie (further rounds), across blocks of 7."""
    monkeypatch.setattr(src, "_BLOCK", 7)
    monkeypatch.setattr(src, "_SHUFFLE_TIES", float("inf"))  # the values sorted whatever
    for seed in range(8):
        values = np.random.default_rng(seed).integers(0, 6, size)
        a, b = Counted(FewBits(seed, bits, low)), Counted(FewBits(seed, bits, low))
        got = a.shuffle(values)
        assert np.array_equal(got, values[reference_permutation(b, size)]), (bits, size)
        assert a.drawn == b.drawn


def test_shuffle_sorts_the_values_with_their_words():
    """Narrow values are read off the sorted words (no permutation computed) unless the
    top bits tie; a tie computes the permutation from the same words (a bit generator set
    back to its state, or the words kept), and reads no other words."""
    class Watched(SeededSource):
        def __init__(self, seed: int) -> None:
            super().__init__(seed)
            self.sorted: list[int] = []

        def _permutation_of(self, w: np.ndarray) -> np.ndarray:
            self.sorted.append(w.size)
            return super()._permutation_of(w)

    class WatchedScript(Script):
        sorted: list[int] = []

        def _permutation_of(self, w: np.ndarray) -> np.ndarray:
            self.sorted.append(w.size)
            return super()._permutation_of(w)

    values = np.random.default_rng(0).integers(0, 51, 100_000)
    s = Watched(1)
    got = s.shuffle(values)
    assert s.sorted == []
    assert np.array_equal(got, values[SeededSource(1).permutation(100_000)])
    assert np.array_equal(s.words(3), SeededSource(1).words(100_003)[-3:])
    t = WatchedScript([5 << 8, 5 << 8 | 1, 9])  # the top 62 bits of two words tie
    assert t.shuffle(np.array([3, 1, 2])).tolist() == [2, 3, 1]  # the order of the words
    assert t.sorted == [3] and t.left == []


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_tie_in_the_top_bits_sets_the_generator_back(overwrite, monkeypatch):
    """Words whose top bits tie (all but the lowest 8 bits zero): the seeded and secure
    bit generators are set back and read again; the output is the permutation's, the
    words read are the permutation's, and overwritten values come back shuffled."""
    class Tied(SeededSource):
        def __init__(self, seed: int) -> None:
            super().__init__(seed)
            self.bit_generator = FewBitsGenerator(self.bit_generator)

    class FewBitsGenerator:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def random_raw(self, size: int) -> np.ndarray:
            return self.inner.random_raw(size) >> np.uint64(56)

        @property
        def state(self) -> Any:
            return self.inner.state

        @state.setter
        def state(self, value: Any) -> None:
            self.inner.state = value

    for seed in range(5):
        values = np.random.default_rng(seed).integers(0, 4, 300)
        expected = values[Tied(seed).permutation(300)]
        a, b = Tied(seed), Tied(seed)
        b.permutation(300)
        given = values.copy()
        got = a.shuffle(given, overwrite=overwrite)
        assert np.array_equal(got, expected)
        assert np.array_equal(a.words(4), b.words(4))
        assert np.array_equal(given, values) or overwrite


def test_shuffle_refuses_what_is_not_a_vector_of_non_negative_integers():
    s = SeededSource(0)
    for bad, match in [(np.array([1.0, 2.0]), "vector of integers"),
                       (np.zeros((2, 2), dtype=np.int64), "vector of integers"),
                       (np.array([3, -1]), "non-negative")]:
        with pytest.raises(ValueError, match=match):
            s.shuffle(bad)


@pytest.mark.parametrize("source", ["seeded", "secure"])
def test_shuffles_of_four_distinct_values_pass_a_chi_square(source):
    s = SeededSource(77) if source == "seeded" else SecureSource()
    perms = list(itertools.permutations(range(4)))
    index = {p: i for i, p in enumerate(perms)}
    counts = np.zeros(24, dtype=np.int64)
    for _ in range(24_000):
        counts[index[tuple(s.shuffle(np.arange(4)).tolist())]] += 1
    assert stats.chisquare(counts).pvalue > ALPHA


# ------------------------------------------------------------------ count tables
@settings(max_examples=300, deadline=None)
@given(bits=st.integers(1, 64), data=st.data())
def test_count_table_entries_are_the_counts_or_minus_one(bits, data):
    top = (1 << bits) - 1
    floors = data.draw(st.lists(st.integers(0, top), min_size=1, max_size=12, unique=True))
    asc = np.array(sorted(floors), dtype=np.uint64)
    table = geo._count_table(asc, bits)
    t = min(16, bits)
    assert table.size == 1 << t and not table.flags.writeable
    near = [f + d for f in floors for d in (-1, 0, 1)]
    edges = [v << (bits - t) for v in data.draw(st.lists(st.integers(0, (1 << t) - 1),
                                                         max_size=5))]
    xs = [x for x in near + edges + [e - 1 for e in edges] + [0, top] if 0 <= x <= top]
    for x in xs:
        v = x >> (bits - t)
        lo, hi = v << (bits - t), ((v + 1) << (bits - t)) - 1
        inside = any(lo <= f <= hi for f in floors)
        count = sum(f > x for f in floors)
        assert table[v] == (-1 if inside else count)
    x = np.array(xs, dtype=np.uint64)
    got, hard = geo._table_counts(table, x, bits)
    assert np.array_equal(np.flatnonzero(got < 0), hard)


@pytest.mark.parametrize("method", ["blocks", "digits"])
@pytest.mark.parametrize("lam", [Fraction(2), Fraction(3, 2), Fraction(11, 10),
                                 rational_lam(0.864), rational_lam(3.0), rational_lam(0.01),
                                 rational_lam(15.0)], ids=str)
@pytest.mark.parametrize("cap", [None, 1, 3, 50, 10**6])
def test_geometric_tables_give_the_searched_counts(method, lam, cap, monkeypatch):
    monkeypatch.setattr(geo, "_BLOCK", 1000)  # blocks end inside the draw
    for seed in range(2):
        with_tables = TwoSidedGeometric(lam, method=method).sample(20_000, SeededSource(seed),
                                                                   cap=cap)
        monkeypatch.setattr(geo, "_TABLE_MAX", 0)  # no table: searchsorted alone
        searched = TwoSidedGeometric(lam, method=method).sample(20_000, SeededSource(seed),
                                                                cap=cap)
        monkeypatch.setattr(geo, "_TABLE_MAX", 4096)
        assert with_tables.dtype == np.int64
        assert np.array_equal(with_tables, searched), (seed,)


def test_geometric_rows_at_table_edges_and_floors_are_searched(monkeypatch):
    """Words at the edges of the table's intervals and at the floors (ties settled by
    further words): the same magnitudes, reading the same words, with or without."""
    g = TwoSidedGeometric(Fraction(3, 2), method="blocks")
    floors = [int(f) for f in g._first_floors()]
    script = []
    for f in floors:
        for x in (f - 1, f, f + 1, (f >> 47) << 47, ((f >> 47) << 47) - 1):
            script.append((x << 1) | (len(script) & 1))
    extra = [int(w) for w in SeededSource(3).words(10 * len(script))]
    a = g.sample(len(script), Script(script + extra))
    monkeypatch.setattr(geo, "_TABLE_MAX", 0)
    b = TwoSidedGeometric(Fraction(3, 2), method="blocks").sample(len(script),
                                                                  Script(script + extra))
    assert np.array_equal(a, b)


@settings(max_examples=200, deadline=None)
@given(g=st.lists(st.integers(0, 100), min_size=1, max_size=50), data=st.data())
def test_signed_negates_where_the_low_bit_is_set(g, data):
    w = np.array(data.draw(st.lists(st.integers(0, 2**64 - 1), min_size=len(g),
                                    max_size=len(g))), dtype=np.uint64)
    for dtype in (np.int8, np.int16, np.int64):
        got = geo.signed(np.array(g, dtype=dtype), w)
        assert got.dtype == np.int64
        assert got.tolist() == [-x if int(b) & 1 else x for x, b in zip(g, w, strict=True)]


# ------------------------------------------------------------------ column tables
@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40), data=st.data())
def test_remap_column_table_gives_the_searched_columns(n, data):
    pieces = []
    for m in range(n):
        k = data.draw(st.integers(1, 4))
        weights = data.draw(st.lists(st.integers(0, 5), min_size=k, max_size=k))
        if sum(weights) == 0:
            weights[-1] = 1
        cols = data.draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k))
        pieces += [(m, j, Fraction(w, sum(weights))) for j, w in zip(cols, weights,
                                                                      strict=True)]
    R = Remap.from_pieces(n, pieces)
    t, table = R.column_table()
    assert table is not None and t == min(16, R.bits, 18 - n.bit_length())
    seed = data.draw(st.integers(0, 2**32))
    m = SeededSource(seed).below(n, 3000).astype(np.int64)
    thresholds = [int(c) << (64 - R.bits) for c in R.thresholds]  # words at the boundaries
    words = [x + d for x in thresholds for d in (-1, 0, 1) if 0 <= x + d < 2**64]
    words += [int(w) for w in SeededSource(seed + 1).words(3000 - len(words))]
    with_table = R.apply(m, Script(words))
    searched = R._search(m, np.array(words, dtype=np.uint64))
    assert with_table.dtype == np.int64 and np.array_equal(with_table, searched)
    with pytest.MonkeyPatch.context() as patch:  # blocks that end inside the draw
        patch.setattr(structured, "_BLOCK", 7)
        R2 = Remap.from_pieces(n, pieces)
        assert np.array_equal(R2.apply(m, Script(words)), searched)


def test_remap_without_a_table_above_the_size_limit(monkeypatch):
    monkeypatch.setattr(structured, "_TABLE_ENTRIES", 1 << 8)
    R = Remap.from_pieces(40, [(m, j, Fraction(1, 2)) for m in range(40)
                               for j in (m, (m + 1) % 40)])
    assert R.column_table() == (2, None)
    m = np.arange(40, dtype=np.int64).repeat(50)
    w = SeededSource(1).words(m.size)
    assert np.array_equal(R.apply(m, Script([int(x) for x in w])), R._search(m, w))


def test_structured_draw_matches_its_law_with_tables():
    """The pipeline's sampler at 10^7 rows' settings (upper 50): a chi-square of 10^6 draws
    per input row against ``G R'`` in Fractions, rows 0, 20 and 50."""
    from dpfix.constructors.remap import structured_sampler

    z = np.random.default_rng(0).dirichlet(np.ones(51))
    s = structured_sampler("northwest", z, lam=rational_lam(0.86), n=51)
    T = s.matrix(drawn=True)
    for i in (0, 20, 50):
        x = s.sample(np.full(1_000_000, i), SeededSource(i))
        probs = np.array([float(v) for v in T[i]])
        counts = np.bincount(x, minlength=51)
        assert counts[probs == 0].sum() == 0
        keep = probs * x.size >= 5
        obs = np.append(counts[keep], counts[~keep].sum())
        exp = np.append(probs[keep], probs[~keep].sum()) * x.size
        if exp[-1] == 0:
            obs, exp = obs[:-1], exp[:-1]
        assert stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > ALPHA
    assert math.isclose(float(sum(T[0])), 1.0)


# ------------------------------------------------------------------ the pipeline's blocks
@settings(max_examples=100, deadline=None)
@given(counts=st.lists(st.integers(0, 40), min_size=1, max_size=60), upper=st.integers(1, 30),
       block=st.integers(1, 9))
def test_histogram_in_blocks_is_the_histogram(counts, upper, block):
    import dpfix.release.frameworks as F

    c = np.array(counts, dtype=np.int64)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(F, "_HISTOGRAM_BLOCK", block)
        eta, top = F.histogram(c, upper)
    assert eta.tolist() == np.bincount(np.minimum(c, upper), minlength=upper + 1).tolist()
    assert top == sum(x > upper for x in counts)
