"""The result object and the input checks shared by every privatizer (stage 1).

Budgets are checked by :func:`dpfix.numbers.numeric.check_positive` and
:func:`dpfix.numbers.numeric.check_probability`."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# Z_ATOL: the absolute tolerance on sum(z) = 1 and z >= 0 of every returned target,
# the same as every constructor's (re-exported for the privatizer modules).
from dpfix.numbers.deprecation import no_other, renamed, renamed_attribute
from dpfix.numbers.exact import Z_ATOL
from dpfix.sampling.source import numpy_generator

__all__ = ["PrivatizedDistribution", "check_histogram", "resolve_rng", "budget_keyword",
           "budget_and_seed", "Z_ATOL"]


@dataclass(frozen=True)
class PrivatizedDistribution:
    """A privatized distribution of counts: the public target ``z`` and its provenance.

    Attributes
    ----------
    z : float64 probability vector of length ``n`` (the public target).
    raw : float64 noisy counts of length ``n`` before post-processing (the
        privatizer's unbiased estimate of ``eta``; integer-valued for the
        secure cyclic mechanisms). Post-processing ``raw / N`` gives ``z``.
    N : the number of rows ``sum(eta)`` (public).
    privatizer : the privatizer's name, e.g. ``"cyclic-laplace"`` (``method`` is its
        deprecated name, a property that warns).
    postprocess : the name of the post-processing that made ``z`` from ``raw``.
    notion : ``"pure-DP"``, ``"approx-DP"`` or ``"zCDP"``: the guarantee charged.
    eps, delta, rho : the budget charged under ``notion`` (unused ones are
        ``None``; ``delta`` is 0 for pure DP; ``epsilon`` is the deprecated name of
        ``eps``, a property that warns).
    secure : True when the noise came from OpenDP's secure samplers.
    noise : what was drawn, e.g. ``{"distribution": "discrete Laplace", "scale": 2.0}``.
    """

    z: np.ndarray
    raw: np.ndarray
    N: int
    privatizer: str
    postprocess: str
    notion: str
    eps: float | None
    delta: float | None = 0.0
    rho: float | None = None
    secure: bool = True
    noise: dict[str, Any] = field(default_factory=dict)

    method = renamed_attribute("method", "privatizer")
    epsilon = renamed_attribute("epsilon", "eps")

    def __post_init__(self) -> None:
        for name in ("z", "raw"):
            arr = np.array(getattr(self, name), dtype=float)
            arr.flags.writeable = False
            object.__setattr__(self, name, arr)

    @property
    def n(self) -> int:
        """The number of count values ``0 .. n-1``."""
        return int(self.z.shape[0])

    @property
    def budget(self) -> str:
        """The charged budget as text, e.g. ``"eps=1 (pure-DP)"``."""
        if self.notion == "zCDP":
            return f"rho={self.rho:g} (zCDP)"
        if self.notion == "approx-DP":
            return f"eps={self.eps:g}, delta={self.delta:g} (approx-DP)"
        return f"eps={self.eps:g} (pure-DP)"


def budget_and_seed(eps: Any, seed: Any, deprecated: dict[str, Any], where: str
                    ) -> tuple[Any, Any]:
    """A privatizer's ``eps`` and ``seed``, or their deprecated keywords ``epsilon=`` and
    ``rng=`` (each with a warning), as :func:`budget_keyword`.

    Examples
    --------
    >>> budget_and_seed(1.0, 3, {}, "laplace")
    (1.0, 3)
    """
    seed = renamed("rng", "seed", deprecated, seed, where=where, depth=2)
    return budget_keyword(eps, deprecated, where, depth=3), seed


def budget_keyword(eps: Any, deprecated: dict[str, Any], where: str, depth: int = 2) -> Any:
    """A privatizer's ``eps``, or its deprecated keyword ``epsilon=`` (with a warning).

    Parameters
    ----------
    eps : the value received as ``eps``.
    deprecated : the privatizer's other keywords (only ``epsilon`` is accepted).
    where : the privatizer's name, for the messages.

    Returns
    -------
    Any
        The budget, not yet checked.

    Raises
    ------
    TypeError
        ``eps`` and ``epsilon=`` given at once, or an unknown keyword.
    """
    value = renamed("epsilon", "eps", deprecated, eps, where=where, depth=depth)
    no_other(deprecated, where)
    return value


def check_histogram(eta: Any) -> np.ndarray:
    """``eta`` as an int64 vector: non-empty, non-negative integers, positive total.

    Parameters
    ----------
    eta : array_like

    Returns
    -------
    numpy.ndarray
        int64, as given.

    Raises
    ------
    ValueError
        Empty, not integers, negative, or a zero total.

    Examples
    --------
    >>> check_histogram([3, 0, 2]).tolist()
    [3, 0, 2]
    >>> check_histogram([1.5, 2])
    Traceback (most recent call last):
    ...
    ValueError: eta: counts must be integers, got 1.5 at position 0
    """
    arr = np.asarray(eta)
    if arr.dtype == bool or arr.ndim != 1 or arr.shape[0] == 0:
        raise ValueError(f"eta: expected a non-empty vector of integer counts, got shape "
                         f"{arr.shape} of {arr.dtype}")
    if arr.dtype == object or arr.dtype.kind == "f":
        for i, x in enumerate(arr.tolist()):
            if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(x) \
                    or x != int(x):
                raise ValueError(f"eta: counts must be integers, got {x!r} at position {i}")
        arr = np.array([int(x) for x in arr.tolist()], dtype=np.int64)
    elif arr.dtype.kind not in "iu":
        raise ValueError(f"eta: counts must be integers, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if (arr < 0).any():
        i = int(np.argmax(arr < 0))
        raise ValueError(f"eta: counts must be non-negative, got {arr[i]} at position {i}")
    if arr.sum() <= 0:
        raise ValueError("eta: the total N = sum(eta) must be positive")
    return arr


def resolve_rng(seed: Any, secure: bool) -> np.random.Generator | None:
    """The numpy Generator of a seeded run (:func:`dpfix.sampling.source.numpy_generator`;
    fresh entropy without a seed), or None on the secure path.

    OpenDP's samplers take no seed, so a seed together with ``secure=True`` is
    refused rather than silently ignored.

    Parameters
    ----------
    seed : int, numpy.random.SeedSequence, numpy.random.Generator, a seeded RandomSource or None
    secure : bool

    Returns
    -------
    numpy.random.Generator or None
        None on the secure path.

    Raises
    ------
    ValueError
        A seed with ``secure=True``, or a seed of another type.
    """
    if secure:
        if seed is not None:
            raise ValueError("seed: the secure (OpenDP) samplers cannot be seeded; "
                             "pass secure=False for seeded runs")
        return None
    return np.random.default_rng() if seed is None else numpy_generator(seed)
