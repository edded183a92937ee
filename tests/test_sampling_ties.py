"""Exact ties at the thresholds of the table and remap samplers (docs/sampling.md sections 2, 3).

Both compare a uniform integer ``u`` below ``2^bits`` with integer cumulative
sums: output ``j`` is drawn iff ``c_(j-1) <= u < c_j``, so ``u = c_j`` draws
the next output. A source whose words are exactly the thresholds forces the
tie; the expected output is computed from the half-open intervals in Fractions
(the law ``P(j) = (c_j - c_(j-1)) / 2^bits``), independently of ``searchsorted``.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from dpfix.sampling import RandomSource
from dpfix.sampling.structured import Remap
from dpfix.sampling.table import CheckedTable


class Words(RandomSource):
    """Hands out the given words in order (and refuses to run out)."""

    def __init__(self, words: list[int]) -> None:
        self.left = list(words)

    def words(self, size: int) -> np.ndarray:
        assert size <= len(self.left), "the sampler read more words than scripted"
        out, self.left = self.left[:size], self.left[size:]
        return np.array(out, dtype=np.uint64)


def interval_index(u: int, cumulative: list[int]) -> int:
    """The ``j`` with ``c_(j-1) <= u < c_j`` (``c_(-1) = 0``), by Fractions of the total."""
    total = cumulative[-1]
    x = Fraction(u, total)
    lows = [Fraction(0)] + [Fraction(c, total) for c in cumulative[:-1]]
    highs = [Fraction(c, total) for c in cumulative]
    (j,) = [j for j, (lo, hi) in enumerate(zip(lows, highs, strict=True)) if lo <= x < hi]
    return j


@pytest.mark.parametrize("offset", [-1, 0, 1])
def test_table_tie_at_every_cumulative_sum(offset):
    bits = 60
    w = np.array([[1, 2, 1], [1, 1, 2], [2, 1, 1]], dtype=np.int64) << (bits - 2)
    t = CheckedTable(w, bits, Fraction(2), 0.7)
    t.check()
    for i in range(3):
        cum = np.cumsum(w[i]).tolist()
        us = [c + offset for c in cum[:-1]] + ([0] if offset < 0 else [])
        us = [u for u in us if 0 <= u < 1 << bits]
        got = t.sample(np.full(len(us), i), Words([u << (64 - bits) for u in us]))
        assert got.tolist() == [interval_index(u, cum) for u in us]
        if offset == 0:  # u = c_j draws j + 1
            assert got.tolist() == [1, 2]


@pytest.mark.parametrize("offset", [-1, 0])
def test_remap_tie_at_a_share_boundary(offset):
    R = Remap.from_pieces(2, [(0, 0, Fraction(1, 3)), (0, 1, Fraction(1, 2)),
                              (0, 0, Fraction(1, 6)), (1, 1, Fraction(1))])
    one = 1 << R.bits
    cum = [int(c) for c in R.thresholds[:3]]
    assert cum == [one // 3, (5 * one) // 6, one]  # floor(2^bits * cumulative share)
    us = [cum[0] + offset, cum[1] + offset]
    got = R.apply(np.zeros(2, dtype=np.int64), Words([u << (64 - R.bits) for u in us]))
    cols = [0, 1, 0]
    assert got.tolist() == [cols[interval_index(u, cum)] for u in us]
    assert got.tolist() == ([1, 0] if offset == 0 else [0, 1])
    # scale 1 has one piece: any word, even the last, maps to its column
    assert R.apply(np.array([1]), Words([2**64 - 1])).tolist() == [1]
