"""Floor 1, sampling: exact, private-by-construction sampling of count mechanisms
(docs/sampling.md).

- :mod:`dpfix.sampling.source`: random words (secure by default; seeded for
  tests and reproductions, not for release), exact uniform integers, and the
  rational ``lam = p/q <= e^eps`` the samplers use (proved exactly);
- :mod:`dpfix.sampling.geometric`: the exact two-sided geometric sampler;
- :mod:`dpfix.sampling.structured`: ``T = G R`` sampled as noise, clamp and a
  public remap in ``O(n)`` memory, never building ``T`` (the remaps of the
  northwest corner, Algorithm 2 and the truncated geometric mechanism are
  computed by :mod:`dpfix.constructors.remap`);
- :mod:`dpfix.sampling.table`: every other pure eps-DP mechanism sampled from
  integer weights checked exactly ``log(lam)``-DP before any draw;
- :mod:`dpfix.sampling.joint`: pairs of counts drawn as ``(G_a x G_b) R`` (product
  geometric noise, a public remap of the states; docs/joint.md).

May import: :mod:`dpfix.numbers`, the floor it shares (the float helpers of
:mod:`dpfix.numbers.numeric`, e.g. the amounts of ``G``), and nothing else of dpfix
(tests/test_layering.py).
"""

from __future__ import annotations

from dpfix.sampling.geometric import TwoSidedGeometric, two_sided_geometric_pmf
from dpfix.sampling.source import (
    MAX_LAM,
    RandomSource,
    SecureSource,
    SeededSource,
    lam_at_most_exp,
    random_source,
    rational_lam,
)
from dpfix.sampling.structured import (
    STRUCTURED,
    Remap,
    StructuredSampler,
    privacy_statement,
)
from dpfix.sampling.table import CheckedTable, SamplingCheckError, checked_table

__all__ = ["RandomSource", "SecureSource", "SeededSource", "random_source", "rational_lam",
           "lam_at_most_exp", "MAX_LAM", "TwoSidedGeometric", "two_sided_geometric_pmf",
           "STRUCTURED", "Remap", "StructuredSampler", "privacy_statement", "CheckedTable",
           "SamplingCheckError", "checked_table"]
