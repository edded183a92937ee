"""Floor 7, release: publishing a table of counts under differential privacy.

- :mod:`dpfix.release.privatizers`: stage 1, the DP estimates of the distribution of
  counts (cyclic Laplace and the baselines), their post-processing and the
  deconvolution estimators;
- :mod:`dpfix.release.options`: the options of a release, validated once (one frozen
  dataclass per family of methods) and the split of the budget between the stages;
- :mod:`dpfix.release.frameworks`: the frameworks (two-stage, one-stage, hybrid) that
  privatize a column of counts, and the draws of stage 2;
- :mod:`dpfix.release.result`: what a column's privatization returns
  (``PrivatizedCounts``) and the errors that stop one before any row is drawn;
- :mod:`dpfix.release.pipeline`: ``privatize_counts``, one column of counts or its
  histogram, the methods named by keywords.

May import: :mod:`dpfix.numbers`, :mod:`dpfix.sampling`, :mod:`dpfix.theory`,
:mod:`dpfix.constructors`, and on its own floor :mod:`dpfix.io` (reading and writing
tables, the atomic commit; no module cycle); not the research floors
:mod:`dpfix.certify` and :mod:`dpfix.explore`, which a release does not need.
"""
