"""Floor 1, numbers: exact and floating-point numbers, and what is computed with them alone.

- :mod:`dpfix.numbers.exact`: exact conversion (ints, Fractions, strings such as
  ``"3/2"``; floats refused with :class:`~dpfix.numbers.exact.ExactnessError`),
  ``lam = e^eps`` as a rational, exact linear algebra.
- :mod:`dpfix.numbers.algebraic`: exact real algebraic numbers (``lam`` a root of an
  integer polynomial) and the number fields ``Q(lam)`` they generate.
- :mod:`dpfix.numbers.numeric`: the float path's checks and helpers (argument checks,
  log-space sums, optional imports that name the extra to install).
- :mod:`dpfix.numbers.exact_lp`: the one exact linear programme of the library (cddlib's
  simplex over GMP rationals), its dual certificate, and the guard that keeps cddlib's
  C-level messages off standard output;
- :mod:`dpfix.numbers.calibration`: the (eps, delta) calibrations of Gaussian noise.
- :mod:`dpfix.numbers.errors`: :class:`~dpfix.numbers.errors.Error` (``dpfix.Error``), the
  base of every exception class of the library.
- :mod:`dpfix.numbers.display`: exact vectors and matrices printed as aligned
  fractions, LaTeX and sympy.

May import: nothing else of dpfix (the bottom floor; :mod:`dpfix.sampling`, beside it,
imports its float helpers).
"""
