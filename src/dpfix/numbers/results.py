"""The protocol of what the library's functions return: :class:`Result`.

Every search and survey of :mod:`dpfix.explore` (and each of the paper's examples found by
search) returns an object of a class that subclasses :class:`Result`, found or not, and
every such object can be read the same way:

- its attributes, documented by its class (``result.visited``, ``result.stopped``);
- its truth: a result that says whether it ``found`` something is true when it did;
- :meth:`Result.describe`, a dict that :func:`json.dumps` writes as it is (exact numbers
  as text such as ``"1/3"``, arrays as nested lists; :func:`jsonable`): for a release, its
  public part only;
- its ``repr``, in one style: ``Name(key=value, ...)``, the class's name and its few
  headline values (:attr:`Result.headline`; a dataclass's own repr is of that style; a
  class may show fewer fields, never a confidential one).

A result that used to be a dict keeps the dict's keys for one release:
``result["key"]`` returns ``result.key`` with a
:class:`~dpfix.numbers.deprecation.DpfixDeprecationWarning` (:attr:`Result.former_keys`).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Mapping
from fractions import Fraction
from pathlib import PurePath
from typing import Any, ClassVar

import numpy as np

from dpfix.numbers.deprecation import warn_deprecated

__all__ = ["Result", "jsonable"]


def _takes_no_argument(method: Any) -> bool:
    try:
        params = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in params)


def jsonable(x: Any) -> Any:
    """``x`` as a value :func:`json.dumps` writes as it is, nothing lost that text keeps.

    Exact numbers (``Fraction``, algebraic numbers) become their text (``"1/3"``), numpy
    scalars and arrays Python numbers and nested lists, tuples and sets lists, mapping
    keys text; a :class:`Result` (or any object with a ``describe()`` of no argument) its
    :meth:`~Result.describe`, another dataclass the dict of its fields; anything else its
    ``str``. A float that is not finite becomes its text (``"inf"``, ``"nan"``): JSON has
    no such number.

    Examples
    --------
    >>> import json
    >>> json.dumps(jsonable({"z": np.array([Fraction(1, 3), Fraction(2, 3)], dtype=object),
    ...                      (2, 3): np.int64(4), "eps": float("inf")}))
    '{"z": ["1/3", "2/3"], "(2, 3)": 4, "eps": "inf"}'
    """
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, (int, np.integer)) and not isinstance(x, np.bool_):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else str(float(x))
    if isinstance(x, Fraction):
        return str(x)
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if isinstance(x, Mapping):
        return {k if isinstance(k, str) else str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in (sorted(x, key=str) if isinstance(x, (set, frozenset))
                                      else x)]
    if isinstance(x, PurePath):
        return str(x)
    describe = getattr(x, "describe", None)
    if callable(describe) and _takes_no_argument(describe):
        return jsonable(describe())
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: jsonable(getattr(x, f.name)) for f in dataclasses.fields(x)
                if not f.name.startswith("_")}
    return str(x)


class Result:
    """The base of every result class of dpfix: :meth:`describe` and a repr of one style.

    A dataclass that subclasses it gets :meth:`describe` from its fields (those shown in
    its repr; ``field(repr=False)`` keeps one out); another class overrides
    :meth:`describe`. :attr:`former_keys` maps the keys of a dict the result replaces to
    its attributes.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Found(Result):
    ...     visited: int
    ...     lam: Fraction
    ...     former_keys = {"instances": "visited"}
    >>> r = Found(5, Fraction(3, 2))
    >>> r
    Found(visited=5, lam=Fraction(3, 2))
    >>> r.describe()
    {'visited': 5, 'lam': '3/2'}
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     r["instances"]
    5
    >>> str(w[0].message)
    "Found['instances'] is deprecated; use Found.visited (the old form goes in the next release)"
    """

    #: the keys of the dict this result replaces -> its attributes (``result[key]`` warns)
    former_keys: ClassVar[dict[str, str]] = {}
    #: the attributes its repr shows, in order (empty: :meth:`describe`'s plain values)
    headline: ClassVar[tuple[str, ...]] = ()

    def __bool__(self) -> bool:
        """A result that says whether it ``found`` something (a search, a survey) is true
        when it did; any other result is true."""
        return bool(getattr(self, "found", True))

    def describe(self) -> dict[str, Any]:
        """What the result says, as a JSON-able dict (:func:`jsonable`): for a dataclass,
        its fields shown in its repr."""
        if not dataclasses.is_dataclass(self):
            raise NotImplementedError(f"{type(self).__name__}.describe")
        return {f.name: jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)
                if f.repr and not f.name.startswith("_")}

    def __repr__(self) -> str:
        shown = {k: getattr(self, k) for k in self.headline} if self.headline else \
            {k: v for k, v in self.describe().items()
             if v is None or isinstance(v, (bool, int, float, str))}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in shown.items())})"

    def __getitem__(self, key: str) -> Any:
        name = type(self).former_keys.get(key) if isinstance(key, str) else None
        if name is None:
            raise TypeError(f"{type(self).__name__} is not a dict; read its attributes "
                            f"(got [{key!r}])")
        cls = type(self).__name__
        warn_deprecated(f"{cls}[{key!r}] is deprecated; use {cls}.{name} (the old form goes "
                        "in the next release)")
        return getattr(self, name)
