"""dpfix: differentially private count mechanisms with fixed points.

The exact research path works with rational ``lam = e^eps`` (a
:class:`fractions.Fraction`) and numpy object arrays of Fractions; the
production path runs the same functions on floats, given ``eps``. The names
people type first are here (docs/math_notes.md; the paper's Sections 2-5):

- the polytopes ``U``, ``F``, ``RF``, ``RU`` (:mod:`dpfix.theory.polytopes`);
- ``scale`` and ``psi`` (:mod:`dpfix.theory.scales`);
- ``construct``, the one constructor registry (:mod:`dpfix.constructors`), and
  the ``Mechanism`` it returns (:mod:`dpfix.theory.mechanism`);
- ``privatize_counts``, the two-stage pipeline (:mod:`dpfix.release.pipeline`);
- ``ExactnessError``, raised where a float is given for an exact number;
- ``Error``, the base of every exception class of dpfix (each keeps its builtin base:
  ``ExactnessError`` is also a ``TypeError``; :mod:`dpfix.numbers.errors`);
- ``algebraic``, an exact real algebraic ``lam`` (:mod:`dpfix.numbers.algebraic`);
- ``read_polytope``, reading cdd, Normaliz and polymake files (:mod:`dpfix.theory.formats`);
- ``parametric``, the module :mod:`dpfix.parametric` (``import dpfix.parametric``;
  ``dpfix.parametric.chambers``: the combinatorial type of U, F and R_F as lam varies),
  the public names of :mod:`dpfix.theory.parametric` under a short path.

They are imported on first use, so ``import dpfix`` stays light and
``import dpfix.numbers.exact`` does not pull in the pipeline. ``python -m dpfix`` runs
the ``dpfix`` command (:mod:`dpfix.cli`).

Examples
--------
>>> from dpfix import construct
>>> construct([0.5, 0.5], 1.0).constructor
'northwest'
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: top-level name -> the module that defines it
_EXPORTS = {
    "U": "dpfix.theory.polytopes",
    "F": "dpfix.theory.polytopes",
    "RF": "dpfix.theory.polytopes",
    "RU": "dpfix.theory.polytopes",
    "scale": "dpfix.theory.scales",
    "psi": "dpfix.theory.scales",
    "construct": "dpfix.constructors",
    "Mechanism": "dpfix.theory.mechanism",
    "privatize_counts": "dpfix.release.pipeline",
    "ExactnessError": "dpfix.numbers.exact",
    "Error": "dpfix.numbers.errors",
    "algebraic": "dpfix.numbers.algebraic",
    "read_polytope": "dpfix.theory.formats",
}

#: top-level module name -> its module, imported on first use (``dpfix.parametric.chambers``
#: after ``import dpfix``, as after ``import dpfix.parametric``)
_MODULES = {
    "parametric": "dpfix.parametric",
}

__all__ = [*_EXPORTS, *_MODULES, "__version__"]


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        value = importlib.import_module(_MODULES[name])
        globals()[name] = value
        return value
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dpfix' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
