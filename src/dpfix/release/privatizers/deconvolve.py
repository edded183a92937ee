"""Deconvolution: the distribution of counts from a histogram of geometric-noised counts.

This serves the frameworks that keep a fixed point without splitting the
budget (docs/no_split.md). Every row's count
``x in 0 .. n-1`` is released as ``y = G(x)``: ``x`` plus exact two-sided
geometric noise ``P(k) ~ lam^-|k|`` clamped to ``0 .. n-1``, i.e.
``G[i, m] = c_m rho^|i-m|`` with ``rho = 1/lam`` and ``c_m`` from
:func:`dpfix.numbers.numeric.geometric_amounts`. The histogram ``h`` of
``y`` (``N = sum h``) has expectation ``N zG``, ``z`` the true distribution
of counts. Everything here is a function of ``h`` (and of the raw stage-1
release ``V`` in the hybrid): post-processing, no privacy cost.

- :func:`convolve` (``zG``) and :func:`correlate` (``Gw``) in ``O(n)`` through
  the side sums of ``rho^|i-m|`` (no ``n x n`` matrix).
- :func:`deconvolve` estimates ``z`` in the simplex; methods in
  :data:`ESTIMATORS`:

  ``"em"``
      Maximum likelihood of ``h ~ Mult(N, zG)``: by default the sparse
      interior point below, its answer checked by the EM certificate (the
      bound ``N (max_i (G r)_i - 1)`` on what the log-likelihood can still
      gain, polished by SQUAREM when it is not below ``tol``); ``solver=``
      ``"squarem"`` or ``"plain"`` run EM (Shepp-Vardi / Richardson-Lucy)
      itself, far slower at small eps (``benchmarks/bench_deconvolve.py``:
      at eps = 0.1, n = 51, 17 ms against 6 s unconverged). With ``stage1=(V, eps_1)``: the
      maximum of the joint log-likelihood (multinomial plus the cyclic
      Laplace profile likelihood), by a sparse primal-dual interior point.
  ``"least-squares"``
      ``min ||N zG - h||^2`` over the simplex, by the same interior point.
  ``"em-smooth"``
      EMS (Silverman, Jones, Wilson and Nychka 1990): an EM step then the
      kernel ``[w, 1-2w, w]``; a regularised estimate that maximises no
      likelihood exactly.

The interior point works in ``q = zG`` rather than ``z``: ``G = K diag(c)``
with ``K[i, m] = rho^|i-m|`` (Kac-Murdock-Szego), whose inverse is
tridiagonal, so ``z = K^-1 (q / c)`` is a sparse linear map, the multinomial
log-likelihood ``sum h log q`` is separable, and every Newton system is
sparse and banded: ``O(n)`` per iteration, and the conditioning of ``G`` at
small ``eps`` (which slows EM) does not slow it.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from dpfix.numbers.deprecation import no_other, renamed, renamed_attribute
from dpfix.numbers.numeric import geometric_amounts
from dpfix.sampling.structured import side_sums

__all__ = ["ESTIMATORS", "SOLVERS", "DEFAULT_SMOOTH", "Deconvolution", "convolve", "correlate",
           "deconvolve", "log_likelihood", "stage1_log_likelihood"]

#: The estimators of :func:`deconvolve`.
ESTIMATORS = ("em", "least-squares", "em-smooth")

#: The algorithms for ``estimator="em"`` without a stage 1 (the first is the default).
SOLVERS = ("interior-point", "squarem", "plain")

#: The EMS kernel weight ``w`` of ``[w, 1-2w, w]``: 1/4 is the binomial kernel
#: ``[1/4, 1/2, 1/4]``, the largest ``w`` whose kernel has a non-negative
#: Fourier transform (``1 - 2w + 2w cos(theta) >= 0`` iff ``w <= 1/4``), so the
#: step only damps oscillations and never flips them; it is fixed in advance
#: (data-independent), like the kernels of Silverman et al.
DEFAULT_SMOOTH = 0.25


@dataclass(frozen=True)
class Deconvolution:
    """The result of :func:`deconvolve` (in the spirit of ``scipy.optimize.OptimizeResult``).

    Attributes
    ----------
    z : numpy.ndarray
        The estimate: float64, ``>= 0``, sums to 1.
    estimator : str
        The estimator, a name in :data:`ESTIMATORS` (``method`` is its deprecated
        name, a property that warns).
    iterations : int
        EM updates (``"em"``, ``"em-smooth"``; SQUAREM counts each EM map
        evaluation) or interior-point Newton steps (plus any polishing EM
        updates after them).
    converged : bool
        Whether the stopping rule was met before ``max_iter``.
    objective : float
        The criterion at ``z``: ``"em"`` the log-likelihood
        :func:`log_likelihood` (plus :func:`stage1_log_likelihood` with a
        stage 1), ``"least-squares"`` ``||N zG - h||^2``, ``"em-smooth"`` the
        log-likelihood of its (non-maximising) ``z``.
    message : str
        How it stopped.
    """

    z: np.ndarray
    estimator: str
    iterations: int
    converged: bool
    objective: float
    message: str

    method = renamed_attribute("method", "estimator")

    def __post_init__(self) -> None:
        z = np.array(self.z, dtype=float)
        z.flags.writeable = False
        object.__setattr__(self, "z", z)


# --------------------------------------------------------------------------- checks

def _rho(lam: Any) -> float:
    """``1/lam`` as a float for a rational or real ``lam > 1`` (``inf``: no noise)."""
    if isinstance(lam, bool) or not isinstance(lam, numbers.Real):
        raise ValueError(f"lam: must be a real number > 1 (e.g. Fraction(2)), got {lam!r}")
    if isinstance(lam, Fraction | numbers.Rational):
        if lam <= 1:
            raise ValueError(f"lam: must be > 1, got {lam!r}")
        return float(Fraction(1) / Fraction(lam))  # exact reciprocal, one rounding
    v = float(lam)
    if not v > 1:  # also refuses NaN
        raise ValueError(f"lam: must be > 1, got {lam!r}")
    return 1.0 / v


def _vector(v: Any, name: str) -> np.ndarray:
    arr = np.asarray(v)
    if arr.dtype == bool or arr.dtype == object or arr.ndim != 1 or arr.shape[0] == 0:
        raise ValueError(f"{name}: expected a non-empty real vector, got shape {arr.shape} "
                         f"of {arr.dtype}")
    arr = arr.astype(float)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name}: must be finite")
    return arr


def _histogram(h: Any) -> np.ndarray:
    """``h`` as floats: finite, non-negative, positive total (integers, or expected counts)."""
    arr = _vector(h, "h")
    if (arr < 0).any():
        raise ValueError(f"h: counts must be non-negative, got {arr.min()!r}")
    if arr.sum() <= 0:
        raise ValueError("h: the total N = sum(h) must be positive")
    return arr


def _simplex_start(z0: Any, n: int) -> np.ndarray:
    z = _vector(z0, "z0")
    if z.shape[0] != n or (z < 0).any() or z.sum() <= 0:
        raise ValueError(f"z0: expected {n} non-negative numbers with a positive sum")
    return z / z.sum()


# --------------------------------------------------------------------------- G

def convolve(z: Any, lam: Any) -> np.ndarray:
    """``zG``: the distribution of ``y = G(x)`` when ``x ~ z``, in ``O(n)``.

    ``(zG)_m = c_m (A[m] + B[m])`` with the side sums ``A, B`` of ``z``
    (:func:`dpfix.sampling.structured.side_sums`).

    Parameters
    ----------
    z : array_like
        A real vector of length ``n`` (a distribution, or any weights).
    lam : Fraction or float
        ``e^eps > 1``; a Fraction is inverted exactly before one rounding.

    Returns
    -------
    numpy.ndarray
        ``zG``, length ``n``.

    Examples
    --------
    >>> convolve([1.0, 0.0, 0.0], Fraction(2)).round(12).tolist()  # G[0, :] = [2/3, 1/6, 1/6]
    [0.666666666667, 0.166666666667, 0.166666666667]
    """
    zv, rho = _vector(z, "z"), _rho(lam)
    A, B = side_sums(zv, rho)
    return geometric_amounts(zv.shape[0], rho) * (A + B)


def correlate(w: Any, lam: Any) -> np.ndarray:
    """``Gw`` (``G`` applied to a column vector), in ``O(n)``: the adjoint of :func:`convolve`.

    Parameters
    ----------
    w : array_like
        A real vector of length ``n``.
    lam : Fraction or float
        As :func:`convolve`.

    Returns
    -------
    numpy.ndarray
        ``(Gw)_i = sum_m c_m rho^|i-m| w_m``.

    Examples
    --------
    >>> correlate([1.0, 1.0, 1.0], 2.0).round(12).tolist()  # G is row-stochastic
    [1.0, 1.0, 1.0]
    """
    wv, rho = _vector(w, "w"), _rho(lam)
    A, B = side_sums(geometric_amounts(wv.shape[0], rho) * wv, rho)
    return A + B


class _G:
    """``G`` for one ``(n, rho)``: products without re-checking inputs (the inner loops)."""

    def __init__(self, n: int, rho: float) -> None:
        self.n, self.rho = n, rho
        self.c = geometric_amounts(n, rho)

    def conv(self, z: np.ndarray) -> np.ndarray:
        A, B = side_sums(z, self.rho)
        return self.c * (A + B)

    def corr(self, w: np.ndarray) -> np.ndarray:
        A, B = side_sums(self.c * w, self.rho)
        return A + B

    def inverse_map(self) -> sp.csr_matrix:
        """``M`` with ``z = M q`` whenever ``q = zG`` (as columns): ``K^-1 diag(1/c)``.

        ``K^-1 = tridiag(-rho, [1, 1+rho^2, ..., 1+rho^2, 1], -rho) / (1 - rho^2)``.
        """
        n, rho = self.n, self.rho
        if n == 1:
            return sp.csr_matrix(np.ones((1, 1)))
        diag = np.full(n, 1.0 + rho * rho)
        diag[0] = diag[-1] = 1.0
        off = np.full(n - 1, -rho)
        Kinv = sp.diags([off, diag, off], [-1, 0, 1]) / (1.0 - rho * rho)
        return sp.csr_matrix(Kinv @ sp.diags(1.0 / self.c))


def _loglik(h: np.ndarray, q: np.ndarray) -> float:
    pos = h > 0
    with np.errstate(divide="ignore"):
        return float(np.dot(h[pos], np.log(q[pos])))


def log_likelihood(z: Any, h: Any, lam: Any) -> float:
    """``sum_m h_m log (zG)_m``: the multinomial log-likelihood of ``h`` up to a constant.

    Parameters
    ----------
    z : array_like
        A distribution of length ``n``.
    h : array_like
        The histogram of the released ``y``.
    lam : Fraction or float

    Returns
    -------
    float
        ``-inf`` when some ``h_m > 0`` has ``(zG)_m = 0``.

    Examples
    --------
    >>> round(log_likelihood([0.5, 0.5], [1, 1], 1e9), 9)  # no noise: 2 log(1/2)
    -1.386294361
    """
    return _loglik(_histogram(h), convolve(z, lam))


def stage1_log_likelihood(z: Any, V: Any, eps_1: float) -> float:
    """The profile log-likelihood of the cyclic Laplace release ``V`` given ``z``.

    ``V = N z + X - roll(X, -1)`` with ``X_i`` i.i.d. Laplace(``1/eps_1``).
    With ``r = V - N z`` and ``S_i = r_0 + ... + r_{i-1}`` (``S_0 = 0``),
    ``X_i = X_0 - S_i``, and maximising the density over the unobserved
    ``X_0`` gives ``-eps_1 sum_i |S_i - median(S)|`` (constants dropped). It
    is concave in ``z``: the infimum over ``c`` of ``eps_1 sum_i |S_i - c|``,
    a jointly convex function of ``(z, c)``, is convex.

    Parameters
    ----------
    z : array_like
        A distribution of length ``n``.
    V : array_like
        The raw stage-1 release (``PrivatizedDistribution.raw``), ``sum V = N``.
    eps_1 : float
        The stage-1 budget.

    Returns
    -------
    float

    Examples
    --------
    >>> stage1_log_likelihood([0.5, 0.5], [6, 4], 1.0)  # S = (0, 1): |0 - c| + |1 - c| = 1
    -1.0
    """
    Vv, zv = _vector(V, "V"), _vector(z, "z")
    S = np.concatenate([[0.0], np.cumsum(Vv - Vv.sum() * zv)[:-1]])
    return float(-eps_1 * np.abs(S - np.median(S)).sum())


# --------------------------------------------------------------------------- EM

def _em_map(h: np.ndarray, N: float, g: _G, z: np.ndarray) -> tuple[np.ndarray, float, float]:
    """One EM update ``z * G(h / (N zG))``; also ``L(z)`` and the gap bound at ``z``.

    With ``r = h / (N q)`` the gradient of ``L(z) = sum h log(zG)`` is
    ``N G r`` and ``z . N G r = N``, so by concavity
    ``max L - L(z) <= N (max_i (G r)_i - 1)``: a certificate of optimality.
    """
    q = g.conv(z)
    pos = h > 0
    r = np.zeros_like(q)
    r[pos] = h[pos] / (N * np.maximum(q[pos], 1e-300))
    Gr = g.corr(r)
    znew = z * Gr
    znew /= znew.sum()  # exact in exact arithmetic (G row-stochastic); removes drift
    return znew, _loglik(h, q), N * (float(Gr.max()) - 1.0)


def _smooth(z: np.ndarray, w: float) -> np.ndarray:
    """``[w, 1-2w, w]`` with reflecting ends (the sum is kept)."""
    if z.shape[0] == 1 or w == 0:
        return z
    p = np.concatenate([[z[0]], z, [z[-1]]])
    return w * p[:-2] + (1 - 2 * w) * z + w * p[2:]


def _em(h: np.ndarray, g: _G, z: np.ndarray, max_iter: int, tol: float, accelerate: bool
        ) -> tuple[np.ndarray, int, bool, float, str]:
    """ML by EM (plain, or SQUAREM's SqS3 with the monotone safeguard of Varadhan-Roland).

    Stops when the certified remaining rise ``N (max G r - 1)`` is at most
    ``tol |L|``.
    """
    N = float(h.sum())
    evals = 0
    while evals < max_iter:
        z1, L0, gap = _em_map(h, N, g, z)
        evals += 1
        if gap <= tol * max(abs(L0), 1.0):
            return z, evals, True, L0, f"optimal within {gap:.3g} (log-likelihood bound)"
        if not accelerate:
            z = z1
            continue
        z2, L1, _ = _em_map(h, N, g, z1)
        evals += 1
        r, v = z1 - z, z2 - 2 * z1 + z
        vv = float(np.dot(v, v))
        if vv <= 0.0:
            z = z2
            continue
        alpha = min(-math.sqrt(float(np.dot(r, r)) / vv), -1.0)
        while True:  # step back towards alpha = -1 (plain EM) until the point is feasible
            zt = z - 2 * alpha * r + alpha * alpha * v
            if alpha == -1.0 or zt.min() >= 0.0:
                break
            alpha = min((alpha - 1.0) / 2.0, -1.0) if alpha < -1.5 else -1.0
        if alpha == -1.0:
            z = z2
            continue
        zt = np.maximum(zt, 0.0)
        zt /= zt.sum()
        z3, L3, _ = _em_map(h, N, g, zt)  # the stabilising EM step; L3 = L(zt)
        evals += 1
        # L(z3) >= L(zt) (EM is monotone): keep z3 only when zt already beats z2's parent L1
        z = z3 if L3 >= L1 else z2
    q = g.conv(z)
    L = _loglik(h, q)
    return z, evals, False, L, f"max_iter = {max_iter} EM updates reached"


def _ems(h: np.ndarray, g: _G, z: np.ndarray, w: float, max_iter: int, tol: float
         ) -> tuple[np.ndarray, int, bool, str]:
    """EMS: EM update, then smoothing; stops when ``||z_new - z||_1 <= tol``."""
    N = float(h.sum())
    for it in range(1, max_iter + 1):
        z1, _, _ = _em_map(h, N, g, z)
        znew = _smooth(z1, w)
        change = float(np.abs(znew - z).sum())
        z = znew
        if change <= tol:
            return z, it, True, f"L1 change {change:.3g} <= tol"
    return z, max_iter, False, f"max_iter = {max_iter} EMS updates reached"


# --------------------------------------------------------------------------- interior point

def _interior_point(fgh: Any, x: np.ndarray, A: sp.spmatrix, b: np.ndarray, C: sp.spmatrix,
                    d: np.ndarray, positive: np.ndarray, lam0: np.ndarray, max_iter: int,
                    tol: float) -> tuple[np.ndarray, int, bool, str]:
    """Minimise a convex ``f`` (diagonal Hessian) subject to ``A x = b``, ``C x >= d``.

    Mehrotra's predictor-corrector primal-dual method: slacks ``s = Cx - d``,
    multipliers ``lam >= 0`` and ``y``; one sparse LU of
    ``[[H + C^T (lam/s) C, A^T], [A, 0]]`` per step, solved twice. One step
    length for all variables (``f`` is not quadratic), at most 0.99 of the
    way to the boundary of ``s, lam >= 0`` and of ``x[positive] > 0`` (the
    domain of ``log``). ``x`` must start with ``s > 0``.
    """
    s = C @ x - d
    s = np.maximum(s, 1e-12)
    lam = lam0.copy()
    y = np.zeros(A.shape[0])
    m = s.shape[0]
    At, Ct = A.T.tocsr(), C.T.tocsr()
    nx, ne = x.shape[0], A.shape[0]

    def step_to(v: np.ndarray, dv: np.ndarray) -> float:
        neg = dv < 0
        return float(min(1.0, (-v[neg] / dv[neg]).min())) if neg.any() else 1.0

    for it in range(max_iter):
        f, g, H = fgh(x)
        rd = g - Ct @ lam + At @ y
        rp = A @ x - b
        ri = C @ x - d - s
        mu = float(np.dot(s, lam)) / m
        # float64 leaves the dual residual near 1e-9 relative; the gap carries ``tol``
        gap = mu * m
        dual = float(np.abs(rd).max()) / (1.0 + float(np.abs(g).max()))
        feasible = (float(np.abs(rp).max()) <= 1e-9
                    and float(np.abs(ri).max()) <= 1e-9 * (1.0 + float(np.abs(d).max())))
        if feasible and dual <= 1e-7 and gap <= tol * (1.0 + abs(f)):
            return x, it, True, f"duality gap {gap:.3g}, dual residual {dual:.3g}"
        D = lam / s
        # SuperLU with partial pivoting: a symmetric ordering with diagonal pivots (on a
        # quasi-definite regularisation) was faster but stalled at n = 1001 (measured)
        K = sp.bmat([[sp.diags(H) + Ct @ sp.diags(D) @ C, At], [A, None]], format="csc")
        try:
            lu = splu(K)
        except RuntimeError:
            # exactly singular (variables with no curvature and no active bound, e.g. the
            # stage-1 chain on a small table): regularise to a quasi-definite matrix, whose
            # step is still a descent direction; convergence is judged on the true residuals
            delta = 1e-9 * (1.0 + float(np.abs(K.diagonal()).max()))
            lu = splu((K + sp.diags(np.concatenate([np.full(nx, delta), np.full(ne, -delta)])))
                      .tocsc())

        def solve(r4: np.ndarray, rd=rd, rp=rp, ri=ri, s=s, lam=lam, lu=lu
                  ) -> tuple[np.ndarray, ...]:
            rhs = np.concatenate([-rd - Ct @ ((r4 + lam * ri) / s), -rp])
            sol = lu.solve(rhs)
            dx, dy = sol[:nx], sol[nx:nx + ne]
            ds = C @ dx + ri
            dl = -(r4 + lam * ds) / s
            return dx, dy, ds, dl

        dx, dy, ds, dl = solve(s * lam)
        a_aff = min(step_to(s, ds), step_to(lam, dl))
        mu_aff = float(np.dot(s + a_aff * ds, lam + a_aff * dl)) / m
        sigma = (mu_aff / mu) ** 3 if mu > 0 else 0.0
        if not (feasible and dual <= 1e-7):
            # stay centred while the dual residual lags: letting mu fall faster stalled
            # the hybrid at n = 1001 (gap 1e-12, dual residual 1e-5)
            sigma = max(sigma, min(0.5, dual))
        dx, dy, ds, dl = solve(s * lam + ds * dl - sigma * mu)
        alpha = 0.99 * min(step_to(s, ds), step_to(lam, dl),
                           step_to(x[positive], dx[positive]))
        if not alpha > 1e-10:  # stalled at the limit of float64: keep the last iterate
            ok = feasible and dual <= 1e-6 and gap <= 1e3 * tol * (1.0 + abs(f))
            return x, it, ok, f"stalled: duality gap {gap:.3g}, dual residual {dual:.3g}"
        x, s, lam, y = x + alpha * dx, s + alpha * ds, lam + alpha * dl, y + alpha * dy
    return x, max_iter, False, f"max_iter = {max_iter} interior-point steps reached"


def _q_problem(h: np.ndarray, g: _G, z0: np.ndarray, kind: str,
               stage1: tuple[np.ndarray, float] | None, max_iter: int, tol: float
               ) -> tuple[np.ndarray, int, bool, str]:
    """ML (``kind="ml"``) or least squares in ``q = zG``, optionally with the stage-1 term.

    Variables ``x = (q, [F_1 .. F_{n-1}, c_0 .. c_{n-1}, t_0 .. t_{n-1}])``, in units of
    ``N``: ``z = M q >= 0``; with a stage 1, ``F_{i+1} - F_i = z_i``
    (``F_0 = 0``, ``F_n = 1``), ``c_i = c_{i+1}`` and ``t_i >= |C_i/N - F_i - c_i|``, ``C_i`` the
    partial sums of ``V``; objective ``-(1/N) sum h log q + eps_1 sum t`` (``t`` and ``c``
    held as ``sigma t`` and ``sigma c``, ``sigma = min(eps_1, 1)``).
    """
    n = g.n
    N = float(h.sum())
    p = h / N
    M = g.inverse_map()
    q0 = g.conv(z0)
    pos = p > 0
    if stage1 is None:
        nx = n
        A = sp.csr_matrix(np.ones((1, n)))
        b = np.ones(1)
        C, d = M, np.zeros(n)
        x0 = q0
        lam0 = np.ones(n)
    else:
        V, eps_1 = stage1
        sigma = min(eps_1, 1.0)
        weight = eps_1 / sigma
        Cn = np.concatenate([[0.0], np.cumsum(V)[:-1]]) / N
        F0 = np.concatenate([[0.0], np.cumsum(z0)[:-1]])
        c0 = float(np.median(Cn - F0))
        t0 = np.abs(Cn - F0 - c0) + 1.0 / n
        # c is one number held as a chain c_0 = c_1 = ... = c_{n-1}: no dense row in the
        # Newton matrix, which stays banded (a single c made the LU fill in at n = 5000)
        nx = 4 * n - 1
        # F_{i+1} - F_i - (Mq)_i = 0 (F_0 = 0, F_n = 1 moved to b); c_{i+1} - c_i = 0
        Fdiff = sp.diags([np.ones(n - 1), -np.ones(n - 1)], [0, -1], shape=(n, n - 1))
        cdiff = sp.diags([-np.ones(n - 1), np.ones(n - 1)], [0, 1], shape=(n - 1, n))
        A = sp.vstack([
            sp.hstack([-M, Fdiff, sp.csr_matrix((n, 2 * n))]),
            sp.hstack([sp.csr_matrix((n - 1, 2 * n - 1)), cdiff, sp.csr_matrix((n - 1, n))]),
        ]).tocsr()
        b = np.zeros(2 * n - 1)
        b[n - 1] = -1.0
        # F_i as a function of x (row i; F_0 = 0)
        Fsel = sp.vstack([sp.csr_matrix((1, n - 1)), sp.identity(n - 1)])
        eye = sp.identity(n)
        Z = sp.csr_matrix((n, n))
        C = sp.vstack([
            sp.hstack([M, sp.csr_matrix((n, n - 1)), Z, Z]),
            # t and c are held as sigma t and sigma c, sigma = min(eps_1, 1): in their own
            # units a tiny eps_1 left the Newton matrix near-singular in t and c (stalled),
            # and scaling a large eps_1 into the F block stalled too (measured)
            sp.hstack([Z, sigma * Fsel, eye, eye]),    # t + F + c >= C/N
            sp.hstack([Z, -sigma * Fsel, -eye, eye]),  # t - F - c >= -C/N
        ]).tocsr()
        d = np.concatenate([np.zeros(n), sigma * Cn, -sigma * Cn])
        x0 = np.concatenate([q0, F0[1:], np.full(n, sigma * c0), sigma * t0])
        lam0 = np.concatenate([np.ones(n), np.full(2 * n, weight / 2)])
    positive = np.zeros(nx, dtype=bool)
    positive[:n] = pos if kind == "ml" else False

    def fgh(x: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        q = x[:n]
        g_ = np.zeros(nx)
        H = np.zeros(nx)
        if kind == "ml":
            f = -float(np.dot(p[pos], np.log(q[pos])))
            g_[:n][pos] = -p[pos] / q[pos]
            H[:n][pos] = p[pos] / q[pos] ** 2
        else:
            diff = q - p
            f = float(np.dot(diff, diff))
            g_[:n] = 2 * diff
            H[:n] = 2.0
        if stage1 is not None:
            f += weight * float(x[3 * n - 1:].sum())
            g_[3 * n - 1:] = weight
        return f, g_, H

    x, it, ok, msg = _interior_point(fgh, x0, A, b, C, d, positive, lam0, max_iter, tol)
    z = np.maximum(M @ x[:n], 0.0)
    return z / z.sum(), it, ok, msg


# --------------------------------------------------------------------------- the estimator

def deconvolve(h: Any, lam: Any, *, estimator: str = "em",
               stage1: tuple[Any, float] | None = None, smooth: float | None = None,
               max_iter: int | None = None, tol: float | None = None, z0: Any = None,
               solver: str | None = None, **deprecated: Any) -> Deconvolution:
    """Estimate the distribution ``z`` of counts from the histogram ``h`` of ``y = G(x)``.

    ``E[h] = N zG`` (``G`` the truncated geometric mechanism at
    ``lam = e^eps``). Methods (:data:`ESTIMATORS`):

    - ``"em"``: the maximum-likelihood ``z`` of ``h ~ Mult(N, zG)``, by EM
      (``z_i <- z_i (G (h / (N zG)))_i``, ``O(n)`` per update) accelerated by
      SQUAREM. It stops when ``N (max_i (G r)_i - 1)`` -- a bound on how much
      the log-likelihood can still rise -- is at most ``tol |L|``: the
      relative change still possible, certified by concavity.
    - ``"least-squares"``: ``min ||N zG - h||^2`` over the simplex.
    - ``"em-smooth"``: EMS, EM then ``[w, 1-2w, w]`` smoothing (reflecting
      ends, ``w = smooth``, default :data:`DEFAULT_SMOOTH`); stops when the
      L1 change of ``z`` is at most ``tol``. It maximises no likelihood
      exactly (a fixed point of "EM then smooth", not a penalised maximum).

    The hybrid (``stage1=(V, eps_1)``, estimator ``"em"`` only): ``V`` is the
    raw cyclic Laplace release at ``eps_1`` of the same table,
    ``V = N z + X - roll(X, -1)``. The estimate maximises
    ``log_likelihood(z) + stage1_log_likelihood(z)``, the second being the
    profile likelihood ``-eps_1 sum_i |S_i - median(S)|`` (see
    :func:`stage1_log_likelihood`): one concave, non-smooth objective. It is
    solved as a smooth convex problem (with ``c`` and ``t_i >= |S_i - c|``)
    by a sparse primal-dual interior point in ``q = zG``, ``O(n)`` per
    Newton step. EM has no closed-form M-step for the Laplace term, so
    ``"em"`` here names the estimator (maximum likelihood), not the
    algorithm. ``"least-squares"`` and ``"em-smooth"`` refuse a stage 1:
    neither is a likelihood, and weighing a squared error against the
    Laplace log-likelihood would be a choice with no principle behind it.

    Parameters
    ----------
    h : array_like
        The histogram of the released ``y`` (``h_m`` rows have ``y = m``):
        finite, non-negative, positive total ``N`` (integers in practice;
        expected counts work too).
    lam : Fraction or float
        ``e^eps > 1`` of the noise ``y`` was drawn with. Pass the sampler's
        exact ``Fraction`` (e.g. ``StructuredSampler.lam``); it is inverted
        exactly before one rounding.
    estimator : str
        A name in :data:`ESTIMATORS`.
    stage1 : (array_like, float), optional
        ``(V, eps_1)``: ``PrivatizedDistribution.raw`` of
        ``privatize_distribution(eta, eps_1, privatizer="cyclic-laplace")`` on the
        same table (length ``n``; its sum should be ``N``; it is rescaled to
        ``N`` when not, e.g. after float noise).
    smooth : float, optional
        EMS weight ``w`` in ``[0, 1/2]`` (``"em-smooth"`` only).
    max_iter : int, optional
        EM updates (default 100000) or interior-point steps (default 200;
        with the default solver of ``"em"`` it bounds the polishing EM updates).
    tol : float, optional
        Default ``1e-13`` (the interior point's duality gap relative to the
        objective), ``1e-10`` (EM's certificate, relative) and ``1e-9``
        (L1 change, EMS); a given ``tol`` serves all three.
    z0 : array_like, optional
        The starting distribution. Default: ``(h/N + uniform) / 2``, positive
        everywhere (EM cannot revive a zero).
    solver : str, optional
        For ``"em"`` without a stage 1: ``"interior-point"`` (default),
        ``"squarem"`` (EM with SQUAREM) or ``"plain"`` (EM). Measured in
        ``benchmarks/bench_deconvolve.py``: the interior point needs 6-11
        Newton steps for ``eps`` in 0.1 .. 5 at ``n`` = 51 and 1001, while EM
        needs up to 10^5 updates at ``eps = 0.1`` (SQUAREM 10^3-10^5). Its
        answer is checked by the EM certificate and polished by SQUAREM if
        the certificate fails.

    Returns
    -------
    Deconvolution

    Raises
    ------
    ValueError
        Bad ``h``, ``lam``, ``estimator``, ``stage1``, ``smooth``, ``max_iter``,
        ``tol`` or ``z0`` (one line naming it).

    Examples
    --------
    >>> z = np.array([0.1, 0.2, 0.4, 0.2, 0.1])
    >>> h = 1000 * convolve(z, Fraction(3))          # the expected histogram
    >>> out = deconvolve(h, Fraction(3))
    >>> out.converged, out.z.round(6).tolist()
    (True, [0.1, 0.2, 0.4, 0.2, 0.1])
    >>> deconvolve(h, Fraction(3), estimator="least-squares").z.round(6).tolist()
    [0.1, 0.2, 0.4, 0.2, 0.1]
    >>> V = np.array([110.0, 190.0, 400.0, 200.0, 100.0])
    >>> deconvolve(h, Fraction(3), stage1=(V, 1e3)).z.round(6).tolist()  # stage 1 dominates
    [0.11, 0.19, 0.4, 0.2, 0.1]
    """
    method = renamed("method", "estimator", deprecated, estimator, "em", where="deconvolve")
    no_other(deprecated, "deconvolve")
    hv = _histogram(h)
    rho = _rho(lam)
    if method not in ESTIMATORS:
        raise ValueError(f"estimator: expected one of {ESTIMATORS}, got {method!r}")
    n = hv.shape[0]
    N = float(hv.sum())
    if smooth is not None and method != "em-smooth":
        raise ValueError("smooth: only for estimator='em-smooth'")
    w = DEFAULT_SMOOTH if smooth is None else smooth
    if isinstance(w, bool) or not isinstance(w, numbers.Real) or not 0 <= float(w) <= 0.5:
        raise ValueError(f"smooth: must be a number in [0, 1/2], got {smooth!r}")
    iterative = method != "least-squares" and stage1 is None
    if max_iter is None:
        max_iter = 100_000 if iterative else 200
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1:
        raise ValueError(f"max_iter: must be a positive integer, got {max_iter!r}")
    # the interior point's relative duality gap: tighter than EM's, as it costs one or
    # two Newton steps, and a zero of z is approached only like sqrt(gap) where
    # the multiplier of z_j >= 0 vanishes (e.g. h exactly N zG with z_j = 0)
    ip_tol = 1e-13 if tol is None else tol
    if tol is None:
        tol = 1e-9 if method == "em-smooth" else 1e-10
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not float(tol) > 0:
        raise ValueError(f"tol: must be a number > 0, got {tol!r}")
    s1: tuple[np.ndarray, float] | None = None
    if stage1 is not None:
        if method != "em":
            raise ValueError(f"stage1: only with estimator='em' (maximum likelihood), "
                             f"not {method!r}")
        if not isinstance(stage1, tuple | list) or len(stage1) != 2:
            raise ValueError("stage1: expected a pair (V, eps_1)")
        V = _vector(stage1[0], "V")
        if V.shape[0] != n:
            raise ValueError(f"V: expected length n = {n} (that of h), got {V.shape[0]}")
        e1 = stage1[1]
        if isinstance(e1, bool) or not isinstance(e1, numbers.Real) or not (
                math.isfinite(float(e1)) and float(e1) > 0):
            raise ValueError(f"eps_1: must be a finite number > 0, got {e1!r}")
        if V.sum() <= 0:
            raise ValueError("V: its total must be positive (it is N)")
        s1 = (V * (N / V.sum()), float(e1))
    z = (hv / N + 1.0 / n) / 2 if z0 is None else _simplex_start(z0, n)
    if n == 1:
        return Deconvolution(np.ones(1), method, 0, True, 0.0 if method == "least-squares"
                             else 0.0, "n = 1: the only distribution")
    g = _G(n, rho)
    if solver is None:
        solver = "interior-point"
    if solver not in SOLVERS or (solver != "interior-point" and (method != "em" or s1)):
        raise ValueError(f"solver: expected one of {SOLVERS} ('squarem' and 'plain' only for "
                         f"estimator='em' without stage1), got {solver!r}")
    if method == "least-squares" or s1 is not None:
        zs = np.maximum(z, 1e-3 / n)  # the interior point starts strictly inside
        zs /= zs.sum()
        kind = "ml" if method == "em" else "ls"
        z, it, ok, msg = _q_problem(hv, g, zs, kind, s1, int(max_iter), float(ip_tol))
        q = g.conv(z)
        if kind == "ls":
            objective = float(np.sum((N * q - hv) ** 2))
        else:
            objective = _loglik(hv, q) + stage1_log_likelihood(z, s1[0], s1[1])
        return Deconvolution(z, method, it, ok, objective, "interior point: " + msg)
    if method == "em" and solver == "interior-point":
        zs = np.maximum(z, 1e-3 / n)
        z, it, ok, msg = _q_problem(hv, g, zs / zs.sum(), "ml", None, 200, float(ip_tol))
        # the EM certificate judges the answer; SQUAREM polishes it when it fails
        zp, more, ok, L, cert = _em(hv, g, z, int(max_iter),
                                    float(tol), accelerate=True)
        return Deconvolution(zp, method, it + more - 1, ok, L,
                             f"interior point ({it} steps: {msg}); EM certificate: {cert}")
    if method == "em":
        z, it, ok, L, msg = _em(hv, g, z, int(max_iter), float(tol), accelerate=solver == "squarem")
        return Deconvolution(z, method, it, ok, L, f"EM ({solver}): " + msg)
    z, it, ok, msg = _ems(hv, g, z, float(w), int(max_iter), float(tol))
    return Deconvolution(z, method, it, ok, _loglik(hv, g.conv(z)), "EMS: " + msg)
