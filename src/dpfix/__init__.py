"""dpfix: differentially private count mechanisms with fixed points.

The exact research path works with rational ``lam = e^eps`` (a
:class:`fractions.Fraction`) and numpy object arrays of Fractions; the
production path runs the same functions on floats, given ``eps``.
"""

from dpfix.exact import ExactnessError

__all__ = ["ExactnessError", "__version__"]
__version__ = "0.1.0"
