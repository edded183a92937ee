"""Renamed keyword arguments: the old name still works for one release, with a warning.

:func:`renamed_attribute` does the same for an attribute of a result object.

The library's vocabulary: ``constructor=`` names a mechanism constructor,
``solver=`` an algorithm (an LP method, an optimiser), ``loss=`` the loss ``W``
of a count error, ``eps`` a privacy budget, ``kind=`` which polytope, ``lam=`` and
``n=`` one value or many, ``seed=`` the randomness, ``keys=`` the key columns,
``unit=`` a privacy unit. :func:`renamed` is the one way a function accepts a keyword it
used to take under another name; :func:`renamed_keywords` applies it to a function's
signature from outside (a decorator), for a function that takes no ``**kwargs``.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["DpfixDeprecationWarning", "warn_deprecated", "renamed", "renamed_keywords",
           "no_other", "renamed_attribute"]

_F = TypeVar("_F", bound=Callable[..., Any])
#: the value :func:`renamed_keywords` hands :func:`renamed` for a keyword not given
_ABSENT = object()


class DpfixDeprecationWarning(DeprecationWarning):
    """A deprecated dpfix name or call form: every deprecation of the library warns with it.

    A subclass of :class:`DeprecationWarning`, so that filters on that class still apply,
    and its own class, so that the library's own deprecations can be told from those of
    the packages it uses (the test suite turns exactly these into errors).
    """


def warn_deprecated(message: str, *, stacklevel: int = 2) -> None:
    """Warn with :class:`DpfixDeprecationWarning` (``stacklevel`` as for ``warnings.warn``,
    counted from the caller of :func:`warn_deprecated`).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     warn_deprecated("f: the old form goes in the next release")
    >>> w[0].category.__name__, issubclass(w[0].category, DeprecationWarning)
    ('DpfixDeprecationWarning', True)
    """
    warnings.warn(message, DpfixDeprecationWarning, stacklevel=stacklevel + 1)

def renamed(old: str, new: str, kwargs: dict[str, Any], value: Any, default: Any = None, *,
            where: str = "", depth: int = 1) -> Any:
    """The value of keyword ``new``, taken from the deprecated ``old`` if that was given.

    Parameters
    ----------
    old, new : str
        The deprecated and the current names of the keyword.
    kwargs : dict
        The caller's ``**kwargs``: ``old`` is popped from it, so what is left can be
        checked for unknown names.
    value : Any
        What the caller received as ``new``.
    default : Any, optional
        ``new``'s default in the caller's signature: ``value`` equal to it (``is``, or
        ``==`` for strings) counts as not given.
    where : str, optional
        The function's name, for the messages.
    depth : int, optional
        How many calls below the user's code ``renamed`` is called, minus one (1: from
        the public function itself), so that the warning points at the user's line.

    Returns
    -------
    Any
        ``kwargs[old] when ``old`` was given, else ``value``.

    Warns
    -----
    DeprecationWarning
        When ``old`` was given: the message names ``new``.

    Raises
    ------
    TypeError
        Both names given at once.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     renamed("weights", "loss", {"weights": "squared"}, "abs", "abs", where="f")
    'squared'
    >>> str(w[0].message)
    'f: weights= is deprecated; use loss= (the old name goes in the next release)'
    >>> renamed("weights", "loss", {}, "zero-one", "abs")
    'zero-one'
    >>> renamed("weights", "loss", {"weights": "abs"}, "squared", "abs", where="f")
    Traceback (most recent call last):
    TypeError: f: got both loss= and its deprecated name weights=; pass loss= only
    """
    if old not in kwargs:
        return value
    label = f"{where}: " if where else ""
    given = value != default if isinstance(value, str) and isinstance(default, str) \
        else value is not default
    if given:
        raise TypeError(f"{label}got both {new}= and its deprecated name {old}=; "
                        f"pass {new}= only")
    warn_deprecated(f"{label}{old}= is deprecated; use {new}= (the old name goes in the next "
                    "release)", stacklevel=2 + depth)
    return kwargs.pop(old)


def renamed_keywords(**names: str) -> Callable[[_F], _F]:
    """A decorator: the function also takes each deprecated keyword ``old=`` of ``names``
    (``old="new"``) as ``new=``, through :func:`renamed` (a warning that points at the
    caller's line; both names at once refused). The signature shown is the function's own.

    Parameters
    ----------
    **names : str
        ``old="new"``: the deprecated name and the parameter it now is.

    Returns
    -------
    callable
        The decorator.

    Examples
    --------
    >>> import warnings
    >>> @renamed_keywords(epsilon="eps")
    ... def budget(eps, *, upper=1):
    ...     return eps * upper
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     budget(epsilon=2.0, upper=3)
    6.0
    >>> str(w[0].message)
    'budget: epsilon= is deprecated; use eps= (the old name goes in the next release)'
    >>> inspect.signature(budget)
    <Signature (eps, *, upper=1)>
    >>> budget(1.0, epsilon=2.0)
    Traceback (most recent call last):
    TypeError: budget: got both eps= and its deprecated name epsilon=; pass eps= only
    """
    def decorate(f: _F) -> _F:
        params = inspect.signature(f).parameters
        positional = [p for p in params.values() if p.kind in (p.POSITIONAL_ONLY,
                                                                p.POSITIONAL_OR_KEYWORD)]
        at = {p.name: i for i, p in enumerate(positional)}  # where a positional one stands
        where = f.__qualname__.replace(".__init__", "")

        @functools.wraps(f)
        def call(*args: Any, **kwargs: Any) -> Any:
            for old, new in names.items():
                if old in kwargs:
                    given = args[at[new]] if at.get(new, len(args)) < len(args) \
                        else kwargs.get(new, _ABSENT)
                    kwargs[new] = renamed(old, new, kwargs, given, _ABSENT, where=where)
            return f(*args, **kwargs)

        return call  # type: ignore[return-value]

    return decorate


def no_other(kwargs: dict[str, Any], where: str) -> None:
    """Refuse the keywords left in ``kwargs`` once the deprecated names are popped.

    Parameters
    ----------
    kwargs : dict
        What is left of the caller's ``**kwargs``.
    where : str
        The function's name, for the message.

    Raises
    ------
    TypeError
        ``kwargs`` is not empty: the message names the first keyword, as Python's own.

    Examples
    --------
    >>> no_other({}, "f")
    >>> no_other({"wieghts": 1}, "f")
    Traceback (most recent call last):
    TypeError: f() got an unexpected keyword argument 'wieghts'
    """
    if kwargs:
        raise TypeError(f"{where}() got an unexpected keyword argument {next(iter(kwargs))!r}")


def renamed_attribute(old: str, new: str) -> property:
    """A read-only property ``old`` that returns attribute ``new`` with a ``DeprecationWarning``.

    Parameters
    ----------
    old, new : str
        The deprecated and the current names of the attribute.

    Returns
    -------
    property
        To assign in the class body: ``weights = renamed_attribute("weights", "loss")``.

    Examples
    --------
    >>> import warnings
    >>> class Result:
    ...     loss = "abs"
    ...     weights = renamed_attribute("weights", "loss")
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     Result().weights
    'abs'
    >>> str(w[0].message)
    'Result.weights is deprecated; use Result.loss (the old name goes in the next release)'
    """
    def get(self: Any) -> Any:
        cls = type(self).__name__
        warn_deprecated(f"{cls}.{old} is deprecated; use {cls}.{new} (the old name goes in the "
                        "next release)")
        return getattr(self, new)

    return property(get, doc=f"Deprecated name of :attr:`{new}` (warns).")
