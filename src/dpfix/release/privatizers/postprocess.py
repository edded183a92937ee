"""Post-processing a noisy vector into a probability vector.

Paper Section 3; the choice of the default is measured in docs/postprocessing.md.

Each function takes a real vector ``v`` (the noisy counts divided by ``N``;
it need not sum to 1) and returns a float64 probability vector. Being
functions of the released noise only, they cost no privacy.

- ``clip_renormalise``: the paper's: clip negatives to 0 and renormalise.
- ``project_simplex``: the Euclidean projection onto the probability simplex.
- ``isotonic_cdf``: after restoring the total to 1, the Euclidean projection
  of the cumulative sums onto the set of CDFs (non-decreasing, in ``[0, 1]``,
  last value 1). The
  Wasserstein-1 error is the L1 distance between CDFs, and the cyclic
  mechanism's partial sums carry only two noise terms
  (``sum_{i<=k} V_i = sum_{i<=k} eta_i + X_0 - X_{k+1}``), so smoothing there
  suits it.
- ``isotonic_cdf_offset``: the same fit with the common term ``X_0`` of those
  partial sums estimated jointly with the CDF (docs/postprocessing.md section 1).

The defaults were chosen by measurement (``docs/postprocessing.md`` section 3):
``isotonic-cdf-offset`` for the cyclic privatizers (:data:`DEFAULT_POSTPROCESS`),
``isotonic-cdf`` for the others (:data:`NONCYCLIC_POSTPROCESS`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.optimize import isotonic_regression

from dpfix.release.privatizers.common import Z_ATOL, PrivatizedDistribution

__all__ = ["clip_renormalise", "project_simplex", "isotonic_cdf", "isotonic_cdf_offset",
           "cycle_offset", "cdf_offset", "POSTPROCESSORS",
           "DEFAULT_POSTPROCESS", "NONCYCLIC_POSTPROCESS", "resolve_postprocess", "finish"]


def _vector(v: Any) -> np.ndarray:
    arr = np.asarray(v, dtype=float)
    if arr.ndim != 1 or arr.shape[0] == 0 or not np.isfinite(arr).all():
        raise ValueError(f"v: expected a non-empty finite vector, got shape {arr.shape}")
    return arr


def _checked(z: np.ndarray) -> np.ndarray:
    if (z < -Z_ATOL).any() or abs(z.sum() - 1.0) > Z_ATOL * max(1, len(z)):
        raise RuntimeError(f"post-processing left the simplex (sum {z.sum()!r}, min {z.min()!r})")
    return np.maximum(z, 0.0)


def project_simplex(v: Any) -> np.ndarray:
    """The closest probability vector to ``v`` in Euclidean distance.

    The exact sort-based algorithm: with ``u`` sorted decreasingly, the
    threshold ``theta = (sum_{i<=r} u_i - 1)/r`` for the largest ``r`` with
    ``u_r > theta_r``; the projection is ``max(v - theta, 0)``. ``O(n log n)``.

    Parameters
    ----------
    v : array_like
        A finite real vector (the noisy counts over ``N``).

    Returns
    -------
    numpy.ndarray
        A float64 probability vector.

    Raises
    ------
    ValueError
        Not a non-empty finite vector.

    Examples
    --------
    >>> project_simplex([0.5, 0.7, -0.2]).round(12).tolist()
    [0.4, 0.6, 0.0]
    """
    v = _vector(v)
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    ranks = np.arange(1, len(u) + 1)
    r = int(np.nonzero(u - css / ranks > 0)[0][-1])  # exists: at r = 0, u_0 - (u_0 - 1) = 1
    theta = css[r] / (r + 1)
    return _checked(np.maximum(v - theta, 0.0))


def clip_renormalise(v: Any) -> np.ndarray:
    """Clip negatives to 0 and renormalise (the paper's post-processing).

    When nothing positive is left (impossible for the cyclic mechanisms, whose
    counts sum to ``N > 0``), the result is :func:`project_simplex` of ``v``:
    the nearest distribution, rather than an arbitrary uniform guess.

    Parameters
    ----------
    v : array_like
        As for :func:`project_simplex`.

    Returns
    -------
    numpy.ndarray
        ``max(v, 0) / sum`` (a float64 probability vector).

    Raises
    ------
    ValueError
        As :func:`project_simplex`.

    Examples
    --------
    >>> clip_renormalise([0.6, -0.1, 0.2]).round(12).tolist()
    [0.75, 0.0, 0.25]
    >>> clip_renormalise([-0.5, -0.1]).round(12).tolist()
    [0.3, 0.7]
    """
    v = _vector(v)
    c = np.maximum(v, 0.0)
    total = c.sum()
    if total <= 0.0:
        return project_simplex(v)
    return _checked(c / total)


def isotonic_cdf(v: Any) -> np.ndarray:
    """Restore the total, project the cumulative sums onto the CDFs, return the increments.

    First ``v`` is moved to the hyperplane ``sum = 1`` by the least-squares
    shift ``v + (1 - sum v)/n`` (a no-op for the cyclic mechanisms, whose
    total is exact); then, with ``F_k = v_0 + ... + v_k`` for ``k < n-1``, the
    closest (least squares) ``G`` with ``0 <= G_0 <= ... <= G_{n-2} <= 1`` is the
    isotonic regression of ``F`` clipped to ``[0, 1]``; ``z = diff(0, G, 1)``.
    Without the first step the whole error of the total would land on the last
    cell (measured: 1.67 times the best W1 for the per-cell Laplace).

    The cyclic privatizers' default :func:`isotonic_cdf_offset` returns exactly this
    wherever the isotonic fit lies in ``[0, 1]``. This is the default of the per-cell
    Laplace, Privelet and the hierarchical histogram (:data:`NONCYCLIC_POSTPROCESS`).
    Measured by ``benchmarks/bench_postprocess.py`` (200 paired seeded releases per
    cell; ``docs/postprocessing.md`` section 3): for the cyclic Laplace on the
    short-range histograms this one has 1.083 times the best mean W1 on average
    (``isotonic_cdf_offset`` 1.000, ``project_simplex`` 1.38, ``clip_renormalise``
    1.86); for the three others on long-tailed histograms (county columns at their full
    range) it has the least W1 in every cell, the offset fit 1.47 to 2.08 times it on
    average.

    Parameters
    ----------
    v : array_like
        The noisy counts over ``N`` (finite, non-empty).

    Returns
    -------
    numpy.ndarray
        The increments of the fitted CDF.

    Raises
    ------
    ValueError
        An empty or non-finite ``v``.

    Examples
    --------
    >>> isotonic_cdf([0.5, -0.1, 0.3, 0.3]).round(12).tolist()
    [0.45, 0.0, 0.25, 0.3]
    >>> isotonic_cdf([0.2, 0.2]).round(12).tolist()  # total 0.4 restored evenly
    [0.5, 0.5]
    """
    return _fitted_cdf(v, offset=False)


def _restored_cdf(v: np.ndarray) -> np.ndarray:
    """The partial sums but the last of ``v`` with its total restored to 1."""
    v = v + (1.0 - v.sum()) / len(v)
    return np.cumsum(v)[:-1]


def _fitted_cdf(v: Any, offset: bool) -> np.ndarray:
    """The increments of the isotonic fit of ``v``'s restored CDF, less :func:`cycle_offset`
    when ``offset``, clipped to ``[0, 1]`` (:func:`isotonic_cdf`, :func:`isotonic_cdf_offset`)."""
    v = _vector(v)
    if len(v) == 1:
        return np.ones(1)
    fitted = isotonic_regression(_restored_cdf(v)).x
    if offset:
        fitted = fitted - _offset_of_fit(fitted)
    cdf = np.concatenate([[0.0], np.clip(fitted, 0.0, 1.0), [1.0]])
    return _checked(np.diff(cdf))


def cycle_offset(cdf: Any) -> float:
    """The offset ``c`` of least ``c^2 + ||F - c - clip(H - c, 0, 1)||^2``, ``H`` the isotonic
    regression of the noisy CDF ``F`` (docs/postprocessing.md section 1, Propositions 1, 2).

    The cyclic mechanisms' partial sums are ``F_k = F*_k + (X_0 - X_(k+1)) / N``: every one
    carries the same ``X_0``, which closes the cycle and costs no privacy. Modelling the noise
    terms as i.i.d. of one variance, the least-squares estimate of ``(F*, X_0 / N)`` over the
    CDFs ``F*`` is ``(clip(H - c, 0, 1), c)`` with ``c`` the root of the continuous,
    increasing, piecewise linear

        g(c) = c - sum_(H_k < c) (H_k - c) - sum_(H_k > 1 + c) (H_k - 1 - c),

    found exactly segment by segment (the breakpoints are the ``H_k`` and ``H_k - 1``).
    ``c = 0`` when ``H`` lies in ``[0, 1]`` (and when its excesses below 0 and above 1
    balance).

    Parameters
    ----------
    cdf : array_like
        The noisy partial sums ``F_0 .. F_(n-2)`` (the last, 1, is exact and left out).

    Returns
    -------
    float
        The offset ``c``.

    Examples
    --------
    >>> cycle_offset([0.2, 0.5, 0.9])  # within [0, 1]: nothing to explain
    0.0
    >>> round(cycle_offset([0.2, 1.1, 1.1, 1.1]), 12)  # three values above 1 by 0.1
    0.075
    """
    F = np.asarray(cdf, dtype=float)
    return 0.0 if F.size == 0 else _offset_of_fit(isotonic_regression(F).x)


def _offset_of_fit(H: np.ndarray) -> float:
    """:func:`cycle_offset` given the isotonic fit ``H`` (non-decreasing, non-empty)."""
    m = H.size
    P = np.concatenate([[0.0], np.cumsum(H)])

    def g(c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        i = np.searchsorted(H, c, side="left")        # H_k < c: fitted below 0, clipped to 0
        j = np.searchsorted(H, 1.0 + c, side="right")  # H_k > 1 + c: clipped to 1
        return c * (1 + i + m - j) - P[i] - (P[m] - P[j]) + (m - j), i, j

    breaks = np.unique(np.concatenate([H, H - 1.0]))
    at, _, _ = g(breaks)
    k = int(np.searchsorted(at, 0.0, side="left"))  # g is increasing: first break with g >= 0
    if k < breaks.size and at[k] == 0.0:
        return float(breaks[k])
    # on the open segment before breaks[k] the sets clipped are fixed: g is linear there
    low = -np.inf if k == 0 else float(breaks[k - 1])
    high = np.inf if k == breaks.size else float(breaks[k])
    inside = high - 1.0 if k == 0 else (low + 1.0 if k == breaks.size else 0.5 * (low + high))
    _, i, j = g(np.array([inside]))
    i, j = int(i[0]), int(j[0])
    c = (P[i] + P[m] - P[j] - (m - j)) / (1 + i + m - j)
    return float(min(max(c, low), high))


def isotonic_cdf_offset(v: Any) -> np.ndarray:
    """:func:`isotonic_cdf` with the cycle's common offset estimated (the default).

    The partial sums of a cyclic release, ``sum_(i<=k) V_i = sum_(i<=k) eta_i + X_0 -
    X_(k+1)``, all carry the one term ``X_0``. :func:`isotonic_cdf` fits a CDF to them as
    they are, so a large ``X_0`` moves the whole fitted CDF: a positive one reaches 1 too
    early and drops a sparse tail's rows from the target (then every count above the
    target's support is released at its top). Here ``c`` (:func:`cycle_offset`) estimates
    ``X_0 / N`` jointly with the CDF by least squares, and ``z`` is the increments of
    ``clip(H - c, 0, 1)``: the least-squares fit of a CDF plus one common offset, the offset
    weighed as one more noise term (docs/postprocessing.md section 1). Where the isotonic fit
    lies in ``[0, 1]``, ``c = 0`` and the result is :func:`isotonic_cdf`'s.

    This is the cyclic privatizers' default (:data:`DEFAULT_POSTPROCESS`): measured in
    docs/postprocessing.md section 3 (``benchmarks/bench_postprocess.py``). For the cyclic
    mechanisms it keeps sparse tails (the count-error floor of the target on long-tailed county
    columns 0.28 times :func:`isotonic_cdf`'s on average) and is never significantly worse on
    short-range histograms; at ``eps_1 = 0.1`` on long-tailed ones its W1 is up to 1.13 times
    :func:`isotonic_cdf`'s for the cyclic Laplace, 1.16 for the cyclic Gaussian (the last
    plateau's deficit, section 1). For the per-cell Laplace, Privelet and the hierarchical
    histogram the model does not hold: their default is :func:`isotonic_cdf`
    (:data:`NONCYCLIC_POSTPROCESS`; 1.47 to 2.08 times less W1 on average on long-tailed
    histograms).

    Parameters
    ----------
    v : array_like
        The noisy counts over ``N`` (finite, non-empty).

    Returns
    -------
    numpy.ndarray
        The increments of the fitted CDF.

    Raises
    ------
    ValueError
        An empty or non-finite ``v``.

    Examples
    --------
    Partial sums rising above 1 (a positive ``X_0``): the isotonic fit reaches 1 at the
    count 1 and drops the rest; with the offset ``c = 4/75`` the counts 2 to 4 keep their
    mass.

    >>> v = [0.6, 0.41, 0.02, 0.02, 0.02, 0.02, -0.09]  # partial sums 0.6, 1.01, ..., 1.09
    >>> isotonic_cdf(v).round(4).tolist()
    [0.6, 0.4, 0.0, 0.0, 0.0, 0.0, 0.0]
    >>> isotonic_cdf_offset(v).round(4).tolist()
    [0.5467, 0.41, 0.02, 0.02, 0.0033, 0.0, 0.0]
    """
    return _fitted_cdf(v, offset=True)


def cdf_offset(v: Any) -> float:
    """The offset :func:`isotonic_cdf_offset` subtracts from the isotonic fit of the CDF of
    ``v`` (:func:`cycle_offset` of its partial sums, the total restored; 0 for one value).

    Parameters
    ----------
    v : array_like
        The noisy counts over ``N`` (finite, non-empty).

    Returns
    -------
    float
        In CDF units (a share of the ``N`` rows).

    Examples
    --------
    >>> round(cdf_offset([0.6, 0.41, 0.02, 0.02, 0.02, 0.02, -0.09]) * 75, 9)
    4.0
    """
    v = _vector(v)
    return 0.0 if len(v) == 1 else cycle_offset(_restored_cdf(v))


#: name -> post-processing function
POSTPROCESSORS: dict[str, Callable[[Any], np.ndarray]] = {
    "isotonic-cdf-offset": isotonic_cdf_offset,
    "isotonic-cdf": isotonic_cdf,
    "project-simplex": project_simplex,
    "clip-renormalise": clip_renormalise,
}

#: The default post-processing of the cyclic privatizers, chosen by measurement
#: (``benchmarks/bench_postprocess.py``, figures in ``docs/postprocessing.md`` section 3):
#: for the cyclic Laplace, mean W1 relative to the best per cell 1.000 on the short-range
#: histograms (isotonic-cdf 1.083, project-simplex 1.38, clip-renormalise 1.86) and 1.020
#: on the long-tailed ones (isotonic-cdf 1.079). For Laplace, Privelet and hierarchical on
#: long-tailed histograms isotonic-cdf is better (section 3): it is theirs,
#: :data:`NONCYCLIC_POSTPROCESS`.
DEFAULT_POSTPROCESS = "isotonic-cdf-offset"
#: The default post-processing of the privatizers whose partial sums share no common term
#: (the per-cell Laplace, Privelet, the hierarchical histogram): an offset fitted there is
#: an excursion of the noise (docs/postprocessing.md section 3).
NONCYCLIC_POSTPROCESS = "isotonic-cdf"


def resolve_postprocess(postprocess: str | Callable[[Any], np.ndarray]
                        ) -> tuple[str, Callable[[Any], np.ndarray]]:
    """``(name, function)`` for a name in :data:`POSTPROCESSORS` or a callable.

    Parameters
    ----------
    postprocess : str or callable

    Returns
    -------
    (str, callable)
        The name and the function.

    Raises
    ------
    ValueError
        An unknown name.
    """
    if callable(postprocess):
        return getattr(postprocess, "__name__", "custom"), postprocess
    if postprocess not in POSTPROCESSORS:
        raise ValueError(f"postprocess: unknown {postprocess!r}; use one of "
                         f"{', '.join(POSTPROCESSORS)} or a callable")
    return postprocess, POSTPROCESSORS[postprocess]


def finish(raw: Any, eta: np.ndarray, privatizer: str,
           postprocess: str | Callable[[Any], np.ndarray], **fields: Any
           ) -> PrivatizedDistribution:
    """Post-process ``raw / N`` and wrap the result (shared by every privatizer).

    Parameters
    ----------
    raw : array_like
        The noisy counts.
    eta : numpy.ndarray
        The true histogram (its total ``N`` is public).
    privatizer : str
        The privatizer's name.
    postprocess : str or callable
    **fields
        The other fields of the result.

    Returns
    -------
    PrivatizedDistribution
        The checked target ``z`` with its provenance.

    Raises
    ------
    ValueError
        A post-processing that returns a wrong shape.
    """
    name, function = resolve_postprocess(postprocess)
    N = int(eta.sum())
    raw = np.asarray(raw, dtype=float)
    z = np.asarray(function(raw / N), dtype=float)
    if z.shape != raw.shape:
        raise ValueError(f"postprocess {name!r} returned shape {z.shape}, expected {raw.shape}")
    return PrivatizedDistribution(z=_checked(z), raw=raw, N=N, privatizer=privatizer,
                                  postprocess=name, **fields)
