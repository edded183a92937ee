"""Floor 6, release: publishing a table of counts under differential privacy.

- :mod:`dpfix.release.privatizers`: stage 1, the DP estimates of the distribution of
  counts (cyclic Laplace and the baselines), their post-processing and the
  deconvolution estimators;
- :mod:`dpfix.release.pipeline`: the frameworks (two-stage, one-stage, hybrid) that
  privatize a column of counts, ``privatize_counts``;
- :mod:`dpfix.release.opendp`: the release as an OpenDP ``Measurement`` with its proved
  privacy map, ``make_privatize_counts`` (OpenDP imported when one is built).
- :mod:`dpfix.release.ledger`: the budget ledger, a file recording the charge of every
  release against one total (sequential composition), ``Ledger``.

May import: :mod:`dpfix.numbers`, :mod:`dpfix.sampling`, :mod:`dpfix.theory`,
:mod:`dpfix.constructors` (not the research floors :mod:`dpfix.certify` and
:mod:`dpfix.explore`, which a release does not need).
"""
