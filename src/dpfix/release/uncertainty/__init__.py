"""Stated uncertainty of a release, from public quantities only (no budget spent;
docs/uncertainty.md).

- :mod:`dpfix.release.uncertainty.counts`: per released count, the ``(1 - alpha)``
  confidence set for the true top-coded count, the Neyman construction inverted from the
  mechanism sampled (exact for ``G R`` at any ``n``, checked tables and Fractions);
- :mod:`dpfix.release.uncertainty.band`: a simultaneous band for the CDF of the true
  top-coded distribution, from the exact law of stage 1's cyclic noise;
- :mod:`dpfix.release.uncertainty.totals`: an interval for the top-coded total (and mean)
  of a group of rows (Chernoff bounds uniform over the true counts, or Bonferroni);
- :mod:`dpfix.release.uncertainty.columns`: all three for a ``PrivatizedCounts``, the
  construction chosen by what was sampled, and ``ColumnUncertainty``, the public inputs a
  published release may keep to answer later;
- :mod:`dpfix.release.uncertainty.exact`: exact signs and floors of numbers built from the
  geometric law (arb balls, then Fractions);
- :mod:`dpfix.release.uncertainty.common`: the checks of ``alpha`` and of rows, the width
  summaries.
"""

from __future__ import annotations

from dpfix.release.uncertainty.band import DistributionBand, cdf_band, max_difference_bound
from dpfix.release.uncertainty.columns import (
    ColumnUncertainty,
    confidence_sets,
    distribution_band,
    group_intervals,
    mechanism_sampled,
    total_interval,
)
from dpfix.release.uncertainty.common import check_alpha, check_rows
from dpfix.release.uncertainty.counts import ConfidenceSets, neyman_sets, preimage_sets
from dpfix.release.uncertainty.totals import TOTAL_METHODS, TotalInterval, total_intervals

__all__ = ["ColumnUncertainty", "ConfidenceSets", "DistributionBand", "TotalInterval",
           "TOTAL_METHODS",
           "confidence_sets", "distribution_band", "total_interval", "group_intervals",
           "mechanism_sampled", "neyman_sets", "preimage_sets", "cdf_band",
           "max_difference_bound", "total_intervals", "check_alpha", "check_rows"]
