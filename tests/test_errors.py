"""``dpfix.Error``: every exception class that dpfix defines subclasses it and keeps its
builtin base, so that ``except dpfix.Error`` catches the library's own errors and
``except ValueError`` still catches what it caught before.

Every module of the package is imported and every class it defines is checked; the
signals that end a run without being an error (:data:`SIGNALS`: BaseExceptions that an
``except Exception`` must not catch) and the warnings stay out, as
:mod:`dpfix.numbers.errors` says."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import dpfix
from dpfix.numbers.errors import Error

MODULES = sorted(m.name for m in pkgutil.walk_packages(dpfix.__path__, "dpfix."))
#: BaseExceptions that are not errors: a Ctrl-C or a stop signal, and the two internal
#: signals that unwind a search at its deadline and a streamed release at a stop signal
SIGNALS = {"dpfix.cli.Interrupted", "dpfix.explore.search._Deadline",
           "dpfix.explore.distributed.Abandoned",
           "dpfix.release.stream._Stopped"}


def _defined_exceptions(name: str) -> list[type]:
    module = importlib.import_module(name)  # vars: a lazy export is not imported here
    return [cls for cls in vars(module).values() if inspect.isclass(cls)
            if cls.__module__ == name and issubclass(cls, BaseException)
            and not issubclass(cls, Warning)]


def test_the_walk_sees_the_package():
    assert len(MODULES) > 100
    assert {"dpfix.release.table", "dpfix.release.records.reading",
            "dpfix.release.uncertainty.band"} <= set(MODULES)
    found = {f"{c.__module__}.{c.__qualname__}" for m in ("dpfix.numbers.exact",
                                                          "dpfix.explore.search")
             for c in _defined_exceptions(m)}
    assert {"dpfix.numbers.exact.ExactnessError", "dpfix.explore.search.PredicateError",
            "dpfix.explore.search._Deadline"} <= found


@pytest.mark.parametrize("name", MODULES)
def test_every_exception_class_subclasses_dpfix_error(name):
    for cls in _defined_exceptions(name):
        path = f"{name}.{cls.__qualname__}"
        if cls is Error:
            continue
        if path in SIGNALS:
            assert not issubclass(cls, Exception), f"{path} is a signal: not an Exception"
            continue
        assert issubclass(cls, Error), f"{path} does not subclass dpfix.Error"
        builtin = [b for b in cls.__mro__ if b.__module__ == "builtins"
                   and b not in (Exception, BaseException, object)]
        assert builtin, f"{path} keeps no builtin base beside Exception (ValueError, ...)"


def test_dpfix_error_is_the_top_level_name_and_an_exception():
    assert dpfix.Error is Error and "Error" in dpfix.__all__
    assert issubclass(Error, Exception) and not issubclass(Error, (ValueError, TypeError))


def _predicate_returns_an_int():
    from dpfix.explore.search import smallest_counterexample

    smallest_counterexample(lambda inst: 1, over="instance", n=2)


@pytest.mark.parametrize("raise_it, builtin", [
    (lambda: dpfix.RF(2, 1.5, ["1/2", "1/2"]), TypeError),
    (_predicate_returns_an_int, TypeError),
])
def test_a_library_error_is_caught_by_dpfix_error_and_by_its_builtin(raise_it, builtin):
    with pytest.raises(Error) as info:
        raise_it()
    assert isinstance(info.value, builtin)
