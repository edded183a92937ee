"""dpfix: differentially private count mechanisms with fixed points.

The exact research path works with rational ``lam = e^eps`` (a
:class:`fractions.Fraction`) and numpy object arrays of Fractions; the
production path runs the same functions on floats, given ``eps``. The names
people type first are here (docs/math_notes.md; the paper's Sections 2-5):

- the polytopes ``U``, ``F``, ``RF``, ``RU`` (:mod:`dpfix.polytopes`);
- ``scale`` and ``psi`` (:mod:`dpfix.scales`);
- ``construct``, the one constructor registry (:mod:`dpfix.constructors`), and
  the ``Mechanism`` it returns (:mod:`dpfix.mechanism`);
- ``privatize_counts``, the two-stage pipeline (:mod:`dpfix.pipeline`);
- ``ExactnessError``, raised where a float is given for an exact number;
- ``read_polytope``, reading cdd, Normaliz and polymake files (:mod:`dpfix.formats`).

They are imported on first use, so ``import dpfix`` stays light and
``import dpfix.exact`` does not pull in the pipeline.

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
    "U": "dpfix.polytopes",
    "F": "dpfix.polytopes",
    "RF": "dpfix.polytopes",
    "RU": "dpfix.polytopes",
    "scale": "dpfix.scales",
    "psi": "dpfix.scales",
    "construct": "dpfix.constructors",
    "Mechanism": "dpfix.mechanism",
    "privatize_counts": "dpfix.pipeline",
    "ExactnessError": "dpfix.exact",
    "read_polytope": "dpfix.formats",
}

__all__ = [*_EXPORTS, "__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dpfix' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
