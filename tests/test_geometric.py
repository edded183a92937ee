"""The exact two-sided geometric sampler (docs/sampling.md section 1.2): law, ties, decomposition.

- chi-square on 10^6 draws against the exact pmf (binned in cells of about 1 %
  of the mass), with and without ``cap``, for ``lam`` from 2 to ``e^0.001``,
  and a power check (the same draws reject the law at ``1.01 eps``);
- the lazy comparison's tie path, forced by a source whose words equal the
  64-bit floors of the thresholds, checked against Fraction arithmetic;
- the block decomposition in Fractions reproduces the pmf exactly (hypothesis).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import dpfix.sampling.geometric as geo
from dpfix.sampling import (
    RandomSource,
    SeededSource,
    TwoSidedGeometric,
    rational_lam,
    two_sided_geometric_pmf,
)

#: chi-square tests fail with probability ALPHA when the sampler is right
ALPHA = 1e-4
DRAWS = 1_000_000


# ------------------------------------------------------------------ helpers
def magnitude_edges(rho: float, cap: int | None) -> list[int]:
    """Edges ``0 = a_0 < 1 = a_1 < a_2 < ...`` of magnitude cells of about 1 % of the mass each."""
    if cap is not None and cap <= 100:
        return list(range(cap + 1))
    edges = [0, 1]
    tail = 2 * rho / (1 + rho)  # P(|k| >= 1)
    level = tail
    while level > 1e-4:
        level *= 0.98
        a = max(edges[-1] + 1, math.ceil(math.log(level * (1 + rho) / 2) / math.log(rho)))
        if cap is not None and a >= cap:
            break
        edges.append(a)
    if cap is not None:
        edges.append(cap)
    return edges


def binned(x: np.ndarray, lam, cap: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Observed counts and exact cell probabilities over signed magnitude cells.

    Cells: ``k = 0``; for each sign, ``|k|`` in ``[a_i, a_(i+1))``; the last
    cell of each sign is ``|k| >= a_last`` (with ``cap``: ``|k| = cap``).
    ``P(|k| >= a) = 2 rho^a/(1 + rho)`` for ``a >= 1``, half of it per sign.
    """
    rho = 1 / Fraction(lam)
    edges = magnitude_edges(float(rho), cap)

    def tail(a: int) -> float:  # P(k >= a), a >= 1
        return float(rho) ** a / (1 + float(rho))

    probs = [float((1 - rho) / (1 + rho))]
    for lo, hi in zip(edges[1:-1], edges[2:], strict=True):
        probs.append(tail(lo) - tail(hi))
    probs.append(tail(edges[-1]))
    probs = np.array(probs)
    mag = np.abs(x)
    if cap is not None:
        assert mag.max() <= cap
    cell = np.searchsorted(np.array(edges[1:]), mag, side="right")  # 0 for k = 0
    pos = np.bincount(cell[x > 0], minlength=len(probs))
    neg = np.bincount(cell[x < 0], minlength=len(probs))
    counts = np.concatenate([[np.count_nonzero(x == 0)], pos[1:], neg[1:]])
    cells = np.concatenate([probs, probs[1:]])
    return counts, cells / cells.sum()  # sum 1 up to float rounding of the tails


def chisquare_p(counts: np.ndarray, probs: np.ndarray) -> float:
    """p-value of a chi-square goodness-of-fit test, pooling cells expected below 5."""
    expected = probs * counts.sum()
    keep = expected >= 5
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


LAMS = [Fraction(2), Fraction(3, 2), rational_lam(0.01), rational_lam(0.001)]


# ------------------------------------------------------------------ the law
@pytest.mark.parametrize("cap", [None, 50])
@pytest.mark.parametrize("lam", LAMS, ids=str)
def test_blocks_match_the_exact_pmf(lam, cap):
    x = TwoSidedGeometric(lam, method="blocks").sample(DRAWS, SeededSource(20261130), cap=cap)
    counts, probs = binned(x, lam, cap)
    assert chisquare_p(counts, probs) > ALPHA
    # power: the same draws reject the law at a 3 % larger eps (capped at 50 with eps <=
    # 0.01, nearly all the mass is at +-cap: 30 %)
    factor = 1.3 if cap is not None and lam < 1.1 else 1.03
    other = Fraction(math.exp(math.log(lam) * factor))
    counts, probs = binned(x, other, cap)
    assert chisquare_p(counts, probs) < 1e-6


def test_default_method_and_digits_agree_in_law():
    lam = rational_lam(0.01)
    assert TwoSidedGeometric(lam).method == "blocks"
    assert TwoSidedGeometric(2).method == "digits"
    assert TwoSidedGeometric(rational_lam(1.0)).method == "digits"
    assert TwoSidedGeometric(rational_lam(0.5)).method == "blocks"
    x = TwoSidedGeometric(lam, method="digits").sample(DRAWS // 4, SeededSource(3), cap=50)
    assert chisquare_p(*binned(x, lam, 50)) > ALPHA
    with pytest.raises(ValueError, match="method"):
        TwoSidedGeometric(2, method="cdf")


@pytest.mark.parametrize("cap", [1, 2, 7, 8, 9, 10, 20])
def test_cap_below_at_and_above_the_block(cap):
    g = TwoSidedGeometric(Fraction(3, 2), method="blocks")
    assert g.block == 9
    x = g.sample(200_000, SeededSource(cap), cap=cap)
    assert np.abs(x).max() == cap
    ks = range(-cap + 1, cap)
    probs = [float(two_sided_geometric_pmf(g.lam, k)) for k in ks]
    tail = (1 - sum(probs)) / 2
    counts = np.bincount(x + cap, minlength=2 * cap + 1)
    assert stats.chisquare(counts, np.array([tail, *probs, tail]) * x.size).pvalue > ALPHA


def test_block_size_is_bounded_and_small_eps_is_cheap():
    g = TwoSidedGeometric(rational_lam(1e-4))
    assert g.method == "blocks" and g.block == math.ceil(3 * g.p / (g.p - g.q))
    x = g.sample(20_000, SeededSource(1))
    assert abs(np.abs(x).mean() * 1e-4 - 1) < 0.05  # E|k| ~ 1/eps
    assert TwoSidedGeometric(rational_lam(1e-6)).block == geo._MAX_BLOCK


# ------------------------------------------------------------------ exact floors
def exact_floor(num: int, den: int, p: int, q: int, g: int, bits: int) -> int:
    return math.floor(Fraction(num, den) * Fraction(q, p) ** (g - 1) * 2**bits)


@pytest.mark.parametrize("lam", [Fraction(3, 2), rational_lam(0.3), rational_lam(0.001)], ids=str)
def test_threshold_floors_are_exact(lam, monkeypatch):
    g = TwoSidedGeometric(lam, method="blocks")
    p, q, B = g.p, g.q, g.block
    for floors, num, den, bits in [(g._first_floors(), 2 * q, p + q, 63),
                                   (g._more_floors(), q, p, 64)]:
        assert floors.dtype == np.uint64 and len(floors) == B
        assert np.all(np.diff(floors.astype(object)) > 0)  # strictly increasing
        for level in sorted({1, 2, B // 2, B - 1, B} - {0}):
            assert int(floors[B - level]) == exact_floor(num, den, p, q, level, bits)
    # too few fixed-point bits: the bounds straddle often and the exact fallback decides
    monkeypatch.setattr(geo, "_PRECISION", 66)
    geo._threshold_floors.cache_clear()
    try:
        coarse = geo._threshold_floors(q, p, p, q, min(B, 200), 64)
        assert [int(f) for f in coarse[::-1]] == [
            exact_floor(q, p, p, q, m, 64) for m in range(1, min(B, 200) + 1)]
    finally:
        geo._threshold_floors.cache_clear()


# ------------------------------------------------------------------ the tie path
class ScriptedSource(RandomSource):
    """Hands out the scripted words first (in order), then a seeded generator's."""

    def __init__(self, script: list[int], seed: int = 0) -> None:
        self.script = list(script)
        self.used: list[int] = []
        self.rest = SeededSource(seed)

    def words(self, size: int) -> np.ndarray:
        take = self.script[:size]
        del self.script[:size]
        out = np.concatenate([np.array(take, dtype=np.uint64),
                              self.rest.words(size - len(take))])
        self.used.extend(int(w) for w in out)
        return out


def next_chunks(value: Fraction, bits: int, count: int) -> list[int]:
    """The first ``bits`` bits of ``value`` in [0, 1), then ``count`` further 64-bit chunks."""
    out = [math.floor(value * 2**bits)]
    rest = value * 2**bits - out[0]
    for _ in range(count):
        c = math.floor(rest * 2**64)
        out.append(c)
        rest = rest * 2**64 - c
    return out


def reference_magnitude(g: TwoSidedGeometric, blocks: list[list[int]]) -> int | None:
    """``|k|`` from the words of each block in Fractions; None if a block is undecided.

    A block's words ``[x, w_1, ..., w_j]`` pin ``u`` to ``[U, U + 2^-(bits + 64 j))``;
    its count is ``#{levels with threshold > U}`` when no threshold lies in that
    interval (else the words do not decide it).
    """
    rho = Fraction(g.q, g.p)
    total = 0
    for b, words in enumerate(blocks):
        bits = 63 if b == 0 else 64
        lo = Fraction(words[0], 2**bits)
        width = Fraction(1, 2**bits)
        for w in words[1:]:
            width /= 2**64
            lo += w * width
        first = 2 * rho / (1 + rho) if b == 0 else rho
        levels = [first * rho ** (level - 1) for level in range(1, g.block + 1)]
        if any(lo <= s < lo + width for s in levels):
            return None
        count = sum(s > lo for s in levels)
        total += count
        if count < g.block:
            return total
    return None


@pytest.mark.parametrize("lam", [Fraction(3, 2), rational_lam(0.01)], ids=str)
@pytest.mark.parametrize("level", [1, 2, 5])
@pytest.mark.parametrize("ties, last", [(0, -1), (0, +1), (2, -1), (2, +1)])
def test_tie_in_the_first_block_is_settled_exactly(lam, level, ties, last):
    """The first chunk equals ``floor(2^63 s_level)``, then ``ties`` further tying words."""
    g = TwoSidedGeometric(lam, method="blocks")
    rho = Fraction(g.q, g.p)
    s = 2 * rho / (1 + rho) * rho ** (level - 1)
    chunks = next_chunks(s, 63, ties + 1)
    chunks[-1] += last  # the deciding word: just below (u < s) or just above (u > s)
    words = [chunks[0] << 1 | 1, *chunks[1:]]  # low bit 1: negative
    src = ScriptedSource(words)
    x = g.sample(1, src)
    assert src.script == [] and src.used[:len(words)] == words
    expected = level if last < 0 else level - 1
    assert reference_magnitude(g, [chunks]) == expected
    assert x.tolist() == [-expected]


@pytest.mark.parametrize("lam", [Fraction(3, 2), rational_lam(0.01)], ids=str)
@pytest.mark.parametrize("last", [-1, +1])
def test_tie_in_a_further_block_is_settled_exactly(lam, last):
    """The first block reaches ``B`` (``u ~ 0``); the second ties with ``rho^3`` twice."""
    g = TwoSidedGeometric(lam, method="blocks")
    rho = Fraction(g.q, g.p)
    chunks = next_chunks(rho**3, 64, 2)
    chunks[-1] += last
    src = ScriptedSource([0, *chunks])  # positive sign, first chunk 0 < every floor
    x = g.sample(1, src)
    expected = g.block + (3 if last < 0 else 2)
    assert reference_magnitude(g, [[0], chunks]) == expected
    assert x.tolist() == [expected]


def test_ties_among_many_rows_only_touch_their_rows():
    """Vectorised: a few tied rows among seeded ones; the others as without ties."""
    g = TwoSidedGeometric(Fraction(3, 2), method="blocks")
    rho = Fraction(g.q, g.p)
    n = 1000
    base = SeededSource(5).words(n)
    script = [int(w) for w in base]
    tied_rows = [3, 500, 999]
    for r, level in zip(tied_rows, [1, 4, 7], strict=True):
        script[r] = math.floor(2 * rho / (1 + rho) * rho ** (level - 1) * 2**63) << 1
    x = g.sample(n, ScriptedSource(script, seed=9))
    y = g.sample(n, ScriptedSource([int(w) for w in base], seed=9))
    others = np.setdiff1d(np.arange(n), tied_rows)
    # untouched rows agree unless they needed a further block (which reads other words)
    same = others[(np.abs(y[others]) < g.block) & (np.abs(x[others]) < g.block)]
    assert np.array_equal(x[same], y[same]) and same.size > 900
    for r, level in zip(tied_rows, [1, 4, 7], strict=True):
        assert x[r] in (level, level - 1)


@settings(max_examples=200, deadline=None)
@given(num=st.integers(1, 10**30), extra=st.integers(1, 10**30), bits=st.sampled_from([63, 64]),
       ties=st.integers(0, 3), delta=st.sampled_from([-1, 0, 1]))
def test_less_exact_against_fractions(num, extra, bits, ties, delta):
    den = num + extra
    value = Fraction(num, den)
    chunks = next_chunks(value, bits, ties + 1)
    chunks[-1] = min(max(chunks[-1] + delta, 0), 2**64 - 1)
    words = chunks[1:] + [0] * 8  # then u' continues with zeros (lower end of its interval)
    got = geo._less_exact(chunks[0], bits, num, den, words.__getitem__)
    lo = Fraction(chunks[0], 2**bits) + sum(
        Fraction(w, 2 ** (bits + 64 * (i + 1))) for i, w in enumerate(chunks[1:]))
    width = Fraction(1, 2 ** (bits + 64 * (ties + 1)))
    # u lies in [lo, lo + width): when value is outside, the words decide; inside, the
    # zeros that follow make u = lo + 0 ... and u < value iff lo < value: either way
    assert lo <= value < lo + width or (lo < value) == (lo + width <= value)
    assert got == (lo < value)


# ------------------------------------------------------------------ the decomposition
@settings(max_examples=60, deadline=None)
@given(q=st.integers(1, 12), extra=st.integers(1, 12), B=st.integers(1, 6))
def test_block_decomposition_reproduces_the_pmf(q, extra, B):
    """``P(k)`` from the blocks (first block, then ``M = B A + R``) equals the pmf exactly.

    First block: ``P(G >= g) = s_g = 2 rho^g/(1 + rho)``, ``g <= B``. Beyond:
    ``|k| = B + B A + R``, ``P(A >= a) = rho^(B a)``, ``P(R >= r) = (rho^r -
    rho^B)/(1 - rho^B)`` on ``0 .. B-1``, independent; sign by a fair bit.
    """
    p = q + extra
    rho = Fraction(q, p)
    lam = 1 / rho

    def s(g: int) -> Fraction:
        return 2 * rho**g / (1 + rho) if g >= 1 else Fraction(1)

    def p_a(a: int) -> Fraction:  # P(A = a)
        return rho ** (B * a) - rho ** (B * (a + 1))

    def p_r(r: int) -> Fraction:  # P(R = r) = P(R >= r) - P(R >= r + 1)
        def ge(t: int) -> Fraction:
            return (rho**t - rho**B) / (1 - rho**B)
        return ge(r) - ge(r + 1)

    assert sum(p_r(r) for r in range(B)) == 1
    for m in range(0, 4 * B + 3):
        if m < B:
            mass = s(m) - s(m + 1)
        else:
            a, r = divmod(m - B, B)
            mass = s(B) * p_a(a) * p_r(r)
        if m == 0:
            assert mass == two_sided_geometric_pmf(lam, 0)
        else:
            assert mass / 2 == two_sided_geometric_pmf(lam, m) == two_sided_geometric_pmf(lam, -m)
    # the blocks as the sampler runs them: a block's u is below rho^B (success) or its
    # count is R; P(count = c) = rho^c - rho^(c+1) for c < B, P(count = B) = rho^B
    for c in range(B):
        assert (1 - rho**B) * p_r(c) == rho**c - rho ** (c + 1)


# ------------------------------------------------------------------ the digits' ties
def word_for_below(bound: int, value: int) -> int:
    """A word from which :meth:`RandomSource.below` (``bound``) returns ``value`` at once.

    A power of two takes the word's top bits; any other bound reduces an accepted
    word modulo ``bound`` (``value < bound`` is accepted: below the largest multiple).
    """
    assert 0 <= value < bound
    if bound & (bound - 1) == 0:
        return value << (64 - (bound.bit_length() - 1))
    return value


def digits_reference(g: TwoSidedGeometric, draws: list[int], cap: int | None = None) -> int:
    """``|k|`` (capped) from the uniform integers of the digits method, in Fractions.

    The first draw ``W`` (``V // 2``) is ``u = W / ((p + q) p^K)`` uniform on ``[0, 1)``
    in steps, and ``|k| >= level`` iff ``u < s_level = 2 rho^level / (1 + rho)``; each
    further draw ``W'`` below ``p^J`` is ``u' = W' / p^J`` with ``P(excess >= b) =
    rho^b``. A draw decides a level exactly: no rounding, ties included.
    """
    rho = Fraction(g.q, g.p)
    K, J = g.digits, g.more_digits
    u = Fraction(draws[0], (g.p + g.q) * g.p ** K)
    total = sum(u < 2 * rho**level / (1 + rho) for level in range(1, K + 1))
    full, rest = total == K, iter(draws[1:])
    while full and (cap is None or total < cap):  # a full draw: the excess is memoryless
        u = Fraction(next(rest), g.p ** J)
        count = sum(u < rho**b for b in range(1, J + 1))
        total, full = total + count, count == J
    return total if cap is None else min(total, cap)


DIGIT_LAMS = [Fraction(2), Fraction(3, 2), rational_lam(1.0)]


def digits_first_threshold(g: TwoSidedGeometric, level: int) -> int:
    """``(p + q) p^K s_level = 2 q^level p^(K+1-level)``, exactly (an integer)."""
    rho = Fraction(g.q, g.p)
    t = (g.p + g.q) * g.p ** g.digits * 2 * rho**level / (1 + rho)
    assert t.denominator == 1
    return int(t)


@pytest.mark.parametrize("lam", DIGIT_LAMS, ids=str)
@pytest.mark.parametrize("where", ["first", "second", "last"])
@pytest.mark.parametrize("offset", [0, -1])
@pytest.mark.parametrize("sign", [0, 1])
def test_digits_tie_in_the_first_draw_is_exact(lam, where, offset, sign):
    """``W`` equal to the threshold of a level (``u = s_level``: not below it) or one less."""
    g = TwoSidedGeometric(lam, method="digits")
    K = g.digits
    level = {"first": 1, "second": 2, "last": K}[where]
    W = digits_first_threshold(g, level) + offset
    bound = 2 * (g.p + g.q) * g.p ** K
    expected = level - 1 if offset == 0 else level  # u = s_level is not below s_level
    draws, words = [W], [word_for_below(bound, 2 * W + sign)]
    if expected == K:  # all K levels: one further draw, which stops (u' = 1 - 1/p^J)
        top = g.p ** g.more_digits
        draws.append(top - 1)
        words.append(word_for_below(top, top - 1))
    src = ScriptedSource(words)
    x = g.sample(1, src)
    assert src.script == [] and len(src.used) == len(words)
    assert digits_reference(g, draws) == expected
    assert x.tolist() == [-expected if sign else expected]


@pytest.mark.parametrize("lam", DIGIT_LAMS, ids=str)
@pytest.mark.parametrize("b", [1, 2, "J"])
@pytest.mark.parametrize("offset", [0, -1])
def test_digits_tie_in_a_further_draw_is_exact(lam, b, offset):
    """The first draw reaches ``K`` (``W = 0``); the second equals ``p^J rho^b`` (or one less)."""
    g = TwoSidedGeometric(lam, method="digits")
    K, J, p, q = g.digits, g.more_digits, g.p, g.q
    b = J if b == "J" else b
    W2 = q**b * p ** (J - b) + offset
    draws = [0, W2]
    words = [word_for_below(2 * (p + q) * p**K, 0), word_for_below(p**J, W2)]
    if offset == -1 and b == J:  # J levels: a third draw, full stop (u' = 1 - 1/p^J)
        draws.append(p**J - 1)
        words.append(word_for_below(p**J, p**J - 1))
    src = ScriptedSource(words)
    x = g.sample(1, src)
    assert src.script == [] and len(src.used) == len(words)
    expected = K + (b - 1 if offset == 0 else b)
    assert digits_reference(g, draws) == expected
    assert x.tolist() == [expected]


@pytest.mark.parametrize("lam", [Fraction(2), Fraction(3, 2)], ids=str)
def test_digits_ties_with_cap(lam):
    """A tie at the level ``cap``: ``u = s_cap`` gives ``cap - 1``, one less gives ``cap``."""
    g = TwoSidedGeometric(lam, method="digits")
    bound = 2 * (g.p + g.q) * g.p ** g.digits
    for cap in (1, 3):
        for offset, expected in ((0, cap - 1), (-1, cap)):
            W = digits_first_threshold(g, cap) + offset
            x = g.sample(1, ScriptedSource([word_for_below(bound, 2 * W)]), cap=cap)
            assert digits_reference(g, [W], cap=cap) == expected
            assert x.tolist() == [expected]
    # the first draw reaches K >= cap: no further draw is read
    src = ScriptedSource([word_for_below(bound, 1)])
    assert g.sample(1, src, cap=g.digits).tolist() == [-g.digits] and len(src.used) == 1


@pytest.mark.parametrize("lam", DIGIT_LAMS, ids=str)
def test_digits_every_first_threshold_is_a_tie_boundary(lam):
    """All ``K`` levels at once, vectorised: row ``level`` ties, row ``K + level`` is below."""
    g = TwoSidedGeometric(lam, method="digits")
    K = g.digits
    bound = 2 * (g.p + g.q) * g.p ** K
    Ws = [digits_first_threshold(g, level) for level in range(1, K + 1)]
    Ws += [w - 1 for w in Ws]
    src = ScriptedSource([word_for_below(bound, 2 * w) for w in Ws])
    x = g.sample(len(Ws), src, cap=K)  # cap K: no further draws
    assert x.tolist() == [digits_reference(g, [w], cap=K) for w in Ws]
    assert x.tolist() == [*range(0, K), *range(1, K + 1)]
