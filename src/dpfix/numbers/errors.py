"""The base of every exception the library defines: :class:`Error` (``dpfix.Error``).

Every dpfix exception class subclasses :class:`Error` and keeps its builtin base, so
that ``except dpfix.Error`` catches what the library raises of its own while ``except
ValueError`` (or ``TypeError``, ``RuntimeError``) still catches what it caught before::

    class SamplingCheckError(Error, ValueError): ...

:class:`Error` is an :class:`Exception`. Two kinds of classes stay out of it, by design:

- the signals that end a run without being an error (``dpfix.cli.Interrupted``, a
  :class:`KeyboardInterrupt`; the internal deadline and stop signals of the search engine
  and the streamed release, :class:`BaseException` so that a user's ``except Exception``
  does not swallow them): making them an :class:`Exception` would let such an ``except``
  catch a Ctrl-C;
- the warnings (``DpfixDeprecationWarning``, ``BudgetReached``, ``TopCodingWarning``,
  ``FormulaWarning``): a warning is not raised but issued, and each keeps the builtin
  category (:class:`DeprecationWarning`, :class:`UserWarning`) that warning filters name.
"""

from __future__ import annotations

__all__ = ["Error"]


class Error(Exception):
    """The base of every exception class of dpfix (``dpfix.Error``).

    Examples
    --------
    >>> from dpfix.numbers.exact import ExactnessError, to_fraction
    >>> issubclass(ExactnessError, Error), issubclass(ExactnessError, TypeError)
    (True, True)
    >>> try:
    ...     to_fraction(0.5, "lam")
    ... except Error as exc:
    ...     type(exc).__name__
    'ExactnessError'
    """
