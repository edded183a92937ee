"""Distribution privatizers: stage 1 of the two-stage pipeline (paper Section 3, Appendix A;
docs/postprocessing.md).

Each privatizer takes the true histogram ``eta`` (``eta_i`` rows have count
``i``; ``N = sum eta`` is public), a budget and a random source, and returns a
:class:`PrivatizedDistribution` holding the public target ``z``. The default
noise comes from OpenDP's secure samplers; ``secure=False`` with ``seed`` (a
numpy Generator or a seed) gives reproducible runs with numpy's continuous
noise, as in the paper's experiments.

==================  ==============================================  ==========
method              noise                                           guarantee
==================  ==============================================  ==========
cyclic-laplace      ``eta + X - roll(X)``, ``X ~ Lap(1/eps)``         eps-DP (Theorem 1)
cyclic-gaussian     ``eta + X - roll(X)``, ``X ~ N(0, sigma^2)``      rho-zCDP or (eps, delta)
laplace             ``eta + Lap(2/eps)``                              eps-DP
privelet            Haar coefficients, ``Lap(2 log2 m / (eps W))``    eps-DP
hierarchical        16-ary tree, ``Lap(2h/eps)`` per node             eps-DP
==================  ==============================================  ==========
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dpfix.numbers.calibration import (
    analytic_gaussian_delta,
    analytic_gaussian_sigma,
    discrete_gaussian_delta,
    discrete_gaussian_sigma,
)
from dpfix.numbers.deprecation import renamed
from dpfix.release.privatizers.common import PrivatizedDistribution
from dpfix.release.privatizers.cyclic import cyclic_difference, cyclic_gaussian, cyclic_laplace
from dpfix.release.privatizers.hierarchical import consistent_leaves, hierarchical
from dpfix.release.privatizers.laplace_baselines import (
    haar_inverse,
    haar_weighted_coefficients,
    laplace,
    privelet,
    privelet_sensitivity,
)
from dpfix.release.privatizers.postprocess import (
    DEFAULT_POSTPROCESS,
    NONCYCLIC_POSTPROCESS,
    POSTPROCESSORS,
    clip_renormalise,
    isotonic_cdf,
    isotonic_cdf_offset,
    project_simplex,
)

__all__ = [
    "PrivatizedDistribution", "privatize_distribution", "PRIVATIZERS",
    "cyclic_laplace", "cyclic_gaussian", "laplace", "privelet", "hierarchical",
    "clip_renormalise", "project_simplex", "isotonic_cdf", "isotonic_cdf_offset",
    "POSTPROCESSORS", "DEFAULT_POSTPROCESS", "NONCYCLIC_POSTPROCESS",
    "analytic_gaussian_delta", "analytic_gaussian_sigma",
    "discrete_gaussian_delta", "discrete_gaussian_sigma", "cyclic_difference",
    "haar_weighted_coefficients", "haar_inverse", "privelet_sensitivity", "consistent_leaves",
]

#: privatizer name -> function (stage 1 of the pipeline)
PRIVATIZERS: dict[str, Callable[..., PrivatizedDistribution]] = {
    "cyclic-laplace": cyclic_laplace,
    "cyclic-gaussian": cyclic_gaussian,
    "laplace": laplace,
    "privelet": privelet,
    "hierarchical": hierarchical,
}


def privatize_distribution(eta: Any, eps: float | None = None,
                           privatizer: str = "cyclic-laplace", **kw: Any
                           ) -> PrivatizedDistribution:
    """Privatize the distribution of counts ``eta / N`` with the named privatizer.

    Parameters
    ----------
    eta : histogram of counts (``N = sum eta`` is public).
    eps : the budget ``eps_1`` (for ``"cyclic-gaussian"`` give ``delta=``
        too, or ``rho=`` instead).
    privatizer : one of :data:`PRIVATIZERS`: ``"cyclic-laplace"`` (the paper's,
        Theorem 1), ``"cyclic-gaussian"``, ``"laplace"``, ``"privelet"``,
        ``"hierarchical"``.
    **kw : passed on: ``seed`` (``rng``: its deprecated name), ``secure``, ``postprocess``,
        ``delta``, ``rho``, ``branching``. ``epsilon=`` (now ``eps``) and ``method=`` (now
        ``privatizer=``) are deprecated names: they warn (``DeprecationWarning``).

    Raises
    ------
    ValueError
        On an unknown privatizer or bad input.
    TypeError
        A new name and its deprecated one given at once.

    Examples
    --------
    >>> out = privatize_distribution([5, 3, 2], 1.0, secure=False, seed=3)
    >>> out.privatizer, out.postprocess, out.z.shape
    ('cyclic-laplace', 'isotonic-cdf-offset', (3,))
    >>> privatize_distribution([5, 3, 2], 1.0, privatizer="wavelet")
    Traceback (most recent call last):
    ...
    ValueError: privatizer: unknown 'wavelet'; use one of cyclic-laplace, cyclic-gaussian, ...
    """
    eps = renamed("epsilon", "eps", kw, eps, where="privatize_distribution")
    if "rng" in kw:
        kw["seed"] = renamed("rng", "seed", kw, kw.get("seed"), where="privatize_distribution")
    name = renamed("method", "privatizer", kw, privatizer, "cyclic-laplace",
                   where="privatize_distribution")
    if name not in PRIVATIZERS:
        raise ValueError(f"privatizer: unknown {name!r}; use one of {', '.join(PRIVATIZERS)}")
    if name == "cyclic-gaussian":
        return cyclic_gaussian(eta, eps, **kw)
    if eps is None:
        raise ValueError(f"eps: required by privatizer {name!r}")
    return PRIVATIZERS[name](eta, eps, **kw)
