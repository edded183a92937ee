"""The ``Mechanism`` result object: a count mechanism you can ask for its privacy.

Every constructor returns one (like scipy.optimize's result object). It holds
the ``n x n`` transition matrix ``T`` (``T[i, j] = P(output j | input i)``)
either exactly (an object array of Fractions, with a rational ``lam``) or in
floating point. Float mechanisms are stored in log space (``log_matrix``,
``-inf`` for true zeros) because entries such as ``e^(-eps n)`` underflow
float64 for large ``n * eps`` while their neighbour ratios must stay exact to
within the stated tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.numbers import display
from dpfix.numbers.algebraic import to_exact
from dpfix.numbers.deprecation import no_other, renamed, warn_deprecated
from dpfix.numbers.exact import (
    ExactnessError,
    exact_array,
    probability_vector,
    to_fraction,
    wants_exact,
)

__all__ = ["Mechanism", "weight_matrix", "exact_weights", "loss", "LOSSES", "SQRT_DIGITS",
           "FLOAT_RTOL", "STR_MAX_N"]

#: Relative tolerance of every float check (rows sum to 1, zT = z, eps-DP).
FLOAT_RTOL = 1e-9

#: ``str(mechanism)`` shows the matrix below the summary up to this ``n``.
STR_MAX_N = 8

#: Rows per block in the float checks (blocks stay in cache at n = 10,000).
_ROWS = 64


#: Named losses ``f(d)``, ``d = i - j`` (the count error ``z_i f(i - j)``): ``"abs"``
#: ``|d|``, ``"squared"`` ``d^2``, ``"zero-one"`` ``1[d != 0]``, ``"capped:c"``
#: ``min(|d|, c)``, ``"hinge:a"`` ``(d - a)^+`` and ``"sqrt"`` ``sqrt|d|``. abs,
#: squared and the hinges are convex, so the northwest corner is optimal for them
#: (Theorem A, docs/optimum_of_F.md); the other three are not.
LOSSES = ("abs", "squared", "zero-one", "capped:c", "hinge:a", "sqrt")

#: ``"sqrt"`` is ``sqrt|d|`` rounded down to this many decimals, by an integer
#: square root (exact rationals; every ``<W, T>`` over F moves by at most
#: ``10^-SQRT_DIGITS`` from the true ``sqrt`` loss, because ``sum_ij z_i T_ij = 1``).
SQRT_DIGITS = 12


def _unbounded(ratio: Any) -> bool:
    """Whether a privacy ratio is the float ``inf`` (a zero next to a positive entry); an
    exact ratio (a Fraction, or an element of ``Q(lam)``) is never compared with a float."""
    return isinstance(ratio, float) and math.isinf(ratio)


def _isqrt_rational(d: int) -> Fraction:
    scale = 10**SQRT_DIGITS
    return Fraction(math.isqrt(d * scale * scale), scale)


def loss(name: str) -> Callable[[int], Fraction]:
    """The loss ``f(d)`` of a name in :data:`LOSSES`, with exact values.

    Parameters
    ----------
    name : str
        A name of :data:`LOSSES`, with its parameter after a colon
        (``"capped:2"``, ``"hinge:-1"``).

    Returns
    -------
    callable
        ``f(d) -> Fraction`` for integers ``d``.

    Raises
    ------
    ValueError
        An unknown name, a missing parameter, or a cap ``C <= 0`` (``capped:C``).

    Examples
    --------
    >>> [loss("capped:2")(d) for d in (-3, -1, 0, 4)]
    [Fraction(2, 1), Fraction(1, 1), Fraction(0, 1), Fraction(2, 1)]
    >>> loss("hinge:-1")(1), loss("sqrt")(4)
    (Fraction(2, 1), Fraction(2, 1))
    """
    base, _, arg = name.partition(":")
    if base in ("capped", "hinge"):
        if not arg:
            raise ValueError(f"loss: {base!r} needs a parameter, e.g. '{base}:2'")
        c = to_fraction(arg, f"{base} parameter")
        if base == "capped":
            if c <= 0:
                raise ValueError(f"loss: {name}: the cap C of capped:C must be > 0 (min(|d|, C) "
                                 "with C <= 0 counts no error, or a negative one)")
            return lambda d: min(Fraction(abs(d)), c)
        return lambda d: max(Fraction(d) - c, Fraction(0))
    if arg:
        raise ValueError(f"loss: {base!r} takes no parameter")
    table: dict[str, Callable[[int], Fraction]] = {
        "abs": lambda d: Fraction(abs(d)),
        "squared": lambda d: Fraction(d * d),
        "zero-one": lambda d: Fraction(int(d != 0)),
        "sqrt": lambda d: _isqrt_rational(abs(d)),
    }
    if base not in table:
        raise ValueError(f"loss: unknown loss {name!r}; use one of {', '.join(LOSSES)} "
                         "or a matrix")
    return table[base]


#: :func:`loss` under a name that a parameter called ``loss`` does not shadow.
named_loss = loss


def weight_matrix(loss: Any = None, z: Any = None, exact: bool | None = None,
                  **deprecated: Any) -> np.ndarray:
    """Count-error weights ``W`` (paper Section 1.1; docs/optimum_of_F.md section 1).

    ``W[i, j] = z_i f(i - j)`` for a loss ``f`` given by name (:data:`LOSSES`:
    ``"abs"`` the expected absolute deviation, ``"squared"`` the mean squared
    error, ...) or as a callable on the integers; or a given ``n x n`` matrix.

    Parameters
    ----------
    loss : str, callable or array_like
        A name of :data:`LOSSES`, a callable ``f(d)``, or an ``n x n`` matrix (required).
    z : array_like
        The distribution (required) that weighs the rows (exact numbers give an exact result).
    exact : bool, optional
        Force the exact path (a float loss value or matrix entry is then
        refused with :class:`dpfix.numbers.exact.ExactnessError`); default: exact
        when ``z`` and a given matrix are exact.
    **deprecated
        ``weights=`` (now ``loss=``), with a ``DeprecationWarning``.

    Returns
    -------
    numpy.ndarray
        ``n x n``: object array of Fractions when exact, else float64.

    Raises
    ------
    ValueError
        An unknown name or a matrix of the wrong shape.
    TypeError
        No loss or no ``z``, or ``loss=`` and ``weights=`` given at once.

    Examples
    --------
    >>> weight_matrix("abs", [Fraction(1, 2), Fraction(1, 2)]).tolist()
    [[Fraction(0, 1), Fraction(1, 2)], [Fraction(1, 2), Fraction(0, 1)]]
    >>> weight_matrix("zero-one", [0.5, 0.5]).tolist()
    [[0.0, 0.5], [0.5, 0.0]]
    """
    given = renamed("weights", "loss", deprecated, loss, where="weight_matrix")
    no_other(deprecated, "weight_matrix")
    if given is None or z is None:
        raise TypeError("weight_matrix: needs a loss and z")
    matrix = not (isinstance(given, str) or callable(given))
    if exact is None:
        exact = wants_exact(z, given if matrix else [])
    zv = exact_array(z, "z", ndim=1) if exact else np.asarray(z, dtype=float)
    n = zv.shape[0]
    if matrix:
        W = exact_array(given, "loss") if exact else np.asarray(given, dtype=float)
        if W.shape != (n, n):
            raise ValueError(f"loss: expected shape {(n, n)}, got {W.shape}")
        return W
    f = named_loss(given) if isinstance(given, str) else given
    d = np.arange(n)[:, None] - np.arange(n)[None, :]
    if exact:
        values = {k: to_fraction(f(k), f"f({k})") for k in range(-(n - 1), n)}
        return zv[:, None] * np.vectorize(values.__getitem__, otypes=[object])(d)
    values_f = np.array([float(f(k)) for k in range(-(n - 1), n)])
    return zv[:, None] * values_f[d + n - 1]


def exact_weights(loss: Any, z: Any) -> np.ndarray:
    """The exact weight matrix of :func:`weight_matrix` on the exact probability vector ``z``
    (:func:`dpfix.numbers.exact.probability_vector`): a float target, loss value or matrix
    entry is refused with :class:`dpfix.numbers.exact.ExactnessError`.

    Examples
    --------
    >>> exact_weights("zero-one", ["1/4", "3/4"]).tolist()
    [[Fraction(0, 1), Fraction(1, 4)], [Fraction(3, 4), Fraction(0, 1)]]
    """
    return weight_matrix(loss, probability_vector(z, exact=True), exact=True)


@dataclass
class Mechanism:
    """A count mechanism with its provenance.

    Parameters
    ----------
    matrix : exact ``n x n`` object array of Fractions, or None for float ones.
    log_matrix : float ``n x n`` array of ``log T`` (float mechanisms).
    eps : the privacy parameter the mechanism was built for (float).
    lam : ``e^eps`` as a Fraction on the exact path, else None.
    fixed_point : the target ``z`` when the constructor enforces ``z T = z``.
    constructor, params, build_seconds : provenance.
    delta : the delta of an (eps, delta) mechanism (0 for pure eps-DP).

    Examples
    --------
    >>> T = Mechanism.from_matrix([[Fraction(2, 3), Fraction(1, 3)],
    ...                            [Fraction(1, 3), Fraction(2, 3)]], lam=2)
    >>> T.privacy_ratio(), T.is_dp(lam=2), T.is_dp(lam=Fraction(3, 2))
    (Fraction(2, 1), True, False)
    """

    matrix: np.ndarray | None = None
    log_matrix: np.ndarray | None = None
    eps: float = float("nan")
    lam: Fraction | None = None
    fixed_point: np.ndarray | None = None
    constructor: str = "given"
    params: dict = field(default_factory=dict)
    build_seconds: float = 0.0
    delta: float = 0.0

    # ------------------------------------------------------------------ build
    @classmethod
    def from_matrix(cls, T: Any, *, lam: Any = None, eps: float | None = None, **kw: Any):
        """Wrap a given matrix: exact when ``lam`` is rational, else float.

        Parameters
        ----------
        T : array_like
            The ``n x n`` transition matrix.
        lam : int, Fraction, str or float, optional
            Rational: an exact mechanism; float: a float one.
        eps : float, optional
            The privacy parameter of a float mechanism.
        **kw
            Further fields (``fixed_point``, ``constructor``, ``params``, ...).

        Returns
        -------
        Mechanism
            Exact or float (log space), per ``lam``/``eps``.
        """
        if lam is not None and not isinstance(lam, (float, np.floating)):
            lam_x = to_fraction(lam, "lam")
            return cls(matrix=exact_array(T, "T", ndim=2), eps=float(np.log(float(lam_x))),
                       lam=lam_x, **kw)
        if eps is None:
            eps = float(np.log(lam)) if lam is not None else float("nan")
        with np.errstate(divide="ignore"):
            logT = np.log(np.asarray(T, dtype=float))
        return cls(log_matrix=logT, eps=float(eps), **kw)

    def __post_init__(self) -> None:
        if (self.matrix is None) == (self.log_matrix is None):
            raise ValueError("Mechanism: give exactly one of matrix (exact) and log_matrix (float)")
        shape = (self.matrix if self.matrix is not None else self.log_matrix).shape
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ValueError(f"Mechanism: the matrix must be square, got shape {shape}")

    # ----------------------------------------------------------------- access
    @property
    def exact(self) -> bool:
        """True on the exact path (Fraction entries)."""
        return self.matrix is not None

    @property
    def n(self) -> int:
        """Number of counts ``0 .. n-1``."""
        return (self.matrix if self.exact else self.log_matrix).shape[0]

    @property
    def T(self) -> np.ndarray:
        """The transition matrix (float entries may underflow to 0 for large ``n*eps``)."""
        if self.exact:
            return self.matrix
        blocks = [blk for _, blk in self._float_blocks()]
        return np.concatenate(blocks) if blocks else np.zeros((0, 0))

    def _float_blocks(self):
        """``(start, exp(log T[start:start+_ROWS]))`` blocks; entries below e^-700
        are set to 0 without calling exp (its subnormal range is slow, and they
        add nothing at double precision next to the row's other entries)."""
        L = self.log_matrix
        for s in range(0, L.shape[0], _ROWS):
            blk = L[s:s + _ROWS]
            yield s, np.exp(blk, where=blk > -700.0, out=np.zeros_like(blk))

    def _z(self, z: Any) -> np.ndarray:
        if z is None:
            if self.fixed_point is None:
                raise ValueError("z: this mechanism has no fixed point; pass z")
            z = self.fixed_point
        zv = exact_array(z, "z", ndim=1) if self.exact else np.asarray(z, dtype=float)
        if zv.shape != (self.n,):
            raise ValueError(f"z: expected length {self.n}, got {zv.shape}")
        return zv

    # -------------------------------------------------------------- measures
    def count_error(self, z: Any = None, loss: Any = "abs", **deprecated: Any) -> Any:
        """``<W, T>`` (paper Section 1.1); exact on the exact path.

        The arguments come in the order of :func:`dpfix.theory.metrics.count_error`
        (``T, z, loss``), ``T`` being the mechanism. ``z`` defaults to the fixed point:
        the data holder's estimate, free of privacy cost.

        Parameters
        ----------
        z : array_like, optional
            The distribution of the inputs (default: the fixed point).
        loss : str, callable or array_like
            A name of :data:`LOSSES` (default ``"abs"``), a callable or a matrix
            (:func:`weight_matrix`).
        **deprecated
            ``weights=`` (now ``loss=``). The former order, a loss first
            (``count_error("squared", z)``), is recognised (a name, a callable or a
            matrix where ``z`` goes) and taken with a ``DeprecationWarning``.

        Returns
        -------
        Fraction or float
            ``<W, T>``: exact on the exact path.

        Raises
        ------
        ValueError
            No ``z`` and no fixed point, or a ``z`` of the wrong length.
        TypeError
            ``loss=`` and ``weights=`` given at once, or an unknown keyword.

        Examples
        --------
        >>> M = Mechanism.from_matrix([["2/3", "1/3"], ["1/3", "2/3"]], lam=2,
        ...                           fixed_point=np.array([Fraction(1, 2)] * 2))
        >>> M.count_error(), M.count_error([1, 0], "squared")
        (Fraction(1, 3), Fraction(1, 3))
        """
        loss = renamed("weights", "loss", deprecated, loss, "abs", where="count_error")
        no_other(deprecated, "count_error")
        if isinstance(z, str) or callable(z) or np.ndim(z) == 2:
            warn_deprecated("count_error: the loss comes after z now (count_error(z, loss)); "
                            "the former order goes in the next release")
            z, loss = (None if isinstance(loss, str) else loss), z
        zv = self._z(z)
        if self.exact:
            return (weight_matrix(loss, zv) * self.matrix).sum()
        if isinstance(loss, str) and loss in ("abs", "squared"):
            # W block by block: n x n floats is 800 MB at n = 10^4
            cols = np.arange(self.n)

            def rows(s: int, e: int) -> np.ndarray:
                d = np.abs(np.arange(s, e)[:, None] - cols[None, :]).astype(float)
                return zv[s:e, None] * (d if loss == "abs" else d * d)
        else:
            W = weight_matrix(loss, zv)

            def rows(s: int, e: int) -> np.ndarray:
                return W[s:e]
        return float(sum((rows(s, s + len(blk)) * blk).sum() for s, blk in self._float_blocks()))

    def row_sum_error(self) -> Any:
        """``max_i |sum_j T[i, j] - 1|`` (exact, or computed in log space)."""
        if self.exact:
            return max(abs(s - 1) for s in self.matrix.sum(axis=1))
        lse = self._row_logsumexp()
        return float(np.max(np.abs(np.expm1(lse)), initial=0.0))

    def _row_logsumexp(self) -> np.ndarray:
        """``log sum_j T[i, j]`` for every row, from the log matrix, in row blocks."""
        out = np.empty(self.n)
        for s in range(0, self.n, _ROWS):
            L = self.log_matrix[s:s + _ROWS]
            top = np.max(L, axis=1, keepdims=True)
            d = L - top
            # terms below e^-700 add nothing at double precision; skipping them
            # avoids the slow subnormal range of exp (seconds at n = 10,000)
            terms = np.exp(d, where=d > -700.0, out=np.zeros_like(d))
            out[s:s + len(L)] = top[:, 0] + np.log(terms.sum(axis=1))
        return out

    def normalised(self) -> Mechanism:
        """The float mechanism with every row divided by its sum, in log space.

        What a sampler draws from is the normalised row; checking the
        normalised matrix checks what is sampled (rows differ from 1 by at most
        FLOAT_RTOL before). Exact mechanisms are returned as they are.
        """
        if self.exact:
            return self
        L = self.log_matrix - self._row_logsumexp()[:, None]
        return replace(self, log_matrix=L)

    def fixed_point_error(self, z: Any = None, *, relative: bool = False) -> Any:
        """``max_j |(z T)_j - z_j|`` (or relative to ``z_j``); exact on the exact path.

        The float checks (:meth:`in_F`, :meth:`check`) bound the absolute error,
        ``|(z T)_j - z_j| <= FLOAT_RTOL`` for every ``j``: the expected output
        histogram ``N z T`` is within ``N * FLOAT_RTOL`` rows of ``N z`` at every
        count. That is the guarantee; an entry ``z_j`` far below ``FLOAT_RTOL``
        (say ``1e-31``, far below one row) is not held relatively by it, and
        ``relative=True`` measures how far it is.

        Parameters
        ----------
        z : array_like, optional
            Default: the fixed point.
        relative : bool
            ``max_j |(z T)_j - z_j| / z_j`` over ``z_j > 0`` instead (``inf`` if
            ``(z T)_j != 0`` where ``z_j = 0``).

        Returns
        -------
        Fraction or float
            ``max_j |(z T)_j - z_j|``, or its relative form.

        Raises
        ------
        ValueError
            No ``z`` and no fixed point.

        Examples
        --------
        >>> m = Mechanism.from_matrix([[0.5, 0.5], [0.5, 0.5]], eps=1.0)
        >>> m.fixed_point_error([0.75, 0.25]), m.fixed_point_error([0.75, 0.25], relative=True)
        (0.25, 1.0)
        """
        zv = self._z(z)
        if not self.n:
            return 0 if self.exact else 0.0
        if self.exact:
            zT = zv @ self.matrix
        else:
            zT = sum(zv[s:s + len(blk)] @ blk for s, blk in self._float_blocks())
        err = np.abs(zT - zv)
        if relative:
            if any(e != 0 and v == 0 for e, v in zip(err, zv, strict=True)):
                return float("inf")
            err = np.array([e / v for e, v in zip(err, zv, strict=True) if v != 0],
                           dtype=object if self.exact else float)
            if not err.size:
                return 0 if self.exact else 0.0
        return np.max(err) if self.exact else float(np.max(err))

    def privacy_ratio(self) -> Any:
        """The largest ratio of neighbouring entries of a column (``inf`` if a
        zero neighbours a positive entry); ``e^`` of :meth:`privacy_level`."""
        if not self.exact:
            return float(np.exp(self.privacy_level()))
        best = Fraction(1)
        M = self.matrix
        for a, b in zip(M[:-1].ravel(), M[1:].ravel(), strict=True):
            if a == 0 and b == 0:
                continue
            if a == 0 or b == 0:
                return float("inf")
            best = max(best, a / b, b / a)
        return best

    def privacy_level(self) -> float:
        """The eps this matrix really gives: ``max |log T[i,j] - log T[i+1,j]|``."""
        if self.exact:
            r = self.privacy_ratio()
            return float("inf") if _unbounded(r) else float(np.log(float(r)))
        L = self.log_matrix
        if np.isnan(L).any():
            return float("nan")
        level = 0.0
        with np.errstate(invalid="ignore"):
            for s in range(0, L.shape[0] - 1, _ROWS):  # row blocks stay in cache
                e = min(s + _ROWS, L.shape[0] - 1)
                diff = np.abs(L[s:e] - L[s + 1:e + 1])  # NaN exactly where both are 0 (-inf)
                if not np.isnan(diff).all():
                    level = max(level, float(np.nanmax(diff)))
        return level

    def is_dp(self, eps: float | None = None, *, lam: Any = None, rtol: float = FLOAT_RTOL) -> bool:
        """Is every column eps-neighbour-indistinguishable?

        Exact comparison against a rational ``lam``; against a float ``eps``,
        ``privacy_level() <= eps * (1 + rtol)``. Defaults to the mechanism's own
        ``lam`` (exact) or ``eps``.

        Parameters
        ----------
        eps : float, optional
            Compare the privacy level with ``eps (1 + rtol)``.
        lam : int, Fraction or str, optional
            Compare the privacy ratio with ``lam`` exactly (exact mechanisms).
        rtol : float
            Relative tolerance of the float comparison.

        Returns
        -------
        bool
            False for an (eps, delta) mechanism (``delta > 0``).
        """
        if self.delta:
            return False
        if eps is None and lam is None:
            lam = self.lam
            eps = None if lam is not None else self.eps
        if lam is not None and self.exact:
            r = self.privacy_ratio()
            return not _unbounded(r) and r <= to_exact(lam, "lam")
        if eps is None:
            eps = float(np.log(float(to_fraction(lam, "lam"))))
        return self.privacy_level() <= float(eps) * (1 + rtol)

    def in_F(self, z: Any = None, *, rtol: float = FLOAT_RTOL) -> bool:
        """Rows sum to 1, ``z T = z``, no negative entry (exact or within ``rtol``).

        The float test of ``z T = z`` is absolute (``|(z T)_j - z_j| <= rtol``
        for every ``j``; :meth:`fixed_point_error` states what that guarantees).

        Parameters
        ----------
        z : array_like, optional
            Default: the fixed point.
        rtol : float
            Float tolerance.

        Returns
        -------
        bool
            Row-stochastic with ``z T = z`` (and no negative entry).
        """
        if self.exact:
            return (self.row_sum_error() == 0 and self.fixed_point_error(z) == 0
                    and all(v >= 0 for v in self.matrix.flat))
        return self.row_sum_error() <= rtol and float(self.fixed_point_error(z)) <= rtol

    def check(self, z: Any = None, *, rtol: float = FLOAT_RTOL) -> None:
        """Raise ``ValueError`` unless the mechanism is valid: row-stochastic,
        eps-DP for its own eps, and with its fixed point when it has one.

        Parameters
        ----------
        z : array_like, optional
            Also require ``z T = z`` (default: the fixed point, if any).
        rtol : float
            Float tolerance (exact mechanisms are checked exactly).

        Raises
        ------
        ValueError
            NaN entries, rows not summing to 1, not eps-DP, or ``z T != z``
            (floats: ``|(z T)_j - z_j| > rtol`` for some ``j``, an absolute
            bound, :meth:`fixed_point_error`).
        """
        if not self.exact and np.isnan(self.log_matrix).any():
            raise ValueError(f"{self.constructor}: the matrix has NaN entries")
        err = self.row_sum_error()
        if err > (0 if self.exact else rtol):
            raise ValueError(f"{self.constructor}: rows do not sum to 1 (max error {err})")
        if not self.delta:
            level = self.privacy_level()
            r = self.privacy_ratio() if self.exact and self.lam else None
            bound = (not _unbounded(r) and r <= self.lam) if r is not None else (
                level <= self.eps * (1 + rtol))
            if not bound:
                raise ValueError(f"{self.constructor}: not eps-DP: privacy level "
                                 f"{level} > eps {self.eps}")
        if z is not None or self.fixed_point is not None:
            fe = self.fixed_point_error(z)
            if fe > (0 if self.exact else rtol):
                raise ValueError(f"{self.constructor}: z T != z (max error {fe})")

    def __repr__(self) -> str:
        kind = "exact" if self.exact else "float"
        lam = f", lam={self.lam}" if self.lam is not None else ""
        return (f"Mechanism({self.constructor}, n={self.n}, eps={self.eps:.6g}{lam}, {kind}, "
                f"fixed_point={'yes' if self.fixed_point is not None else 'no'})")

    def __str__(self) -> str:
        """The summary (the repr), then the matrix when ``n <= STR_MAX_N``: exact
        entries as aligned fractions (:func:`dpfix.numbers.display.format_exact`), float ones
        to 6 significant digits.

        Examples
        --------
        >>> print(Mechanism.from_matrix([["2/3", "1/3"], ["1/3", "2/3"]], lam=2))
        Mechanism(given, n=2, eps=0.693147, lam=2, exact, fixed_point=no)
        [2/3  1/3]
        [1/3  2/3]
        """
        head = repr(self)
        if self.n > STR_MAX_N:
            return head
        if self.exact:
            return head + "\n" + display.format_exact(self.matrix)
        return head + "\n" + np.array2string(self.T, precision=6, suppress_small=True)

    def _exact_matrix(self, what: str) -> np.ndarray:
        if not self.exact:
            raise ExactnessError(f"{what}: a float mechanism has no exact matrix; build it "
                                 "with a rational lam")
        return self.matrix

    def to_latex(self, **kw: Any) -> str:
        """The exact matrix as LaTeX (:func:`dpfix.numbers.display.to_latex`; ``**kw`` go to it).

        Raises :class:`~dpfix.numbers.exact.ExactnessError` for a float mechanism.

        Examples
        --------
        >>> print(Mechanism.from_matrix([[1, 0], ["1/2", "1/2"]], lam=2).to_latex())
        \\begin{bmatrix}
        1 & 0 \\\\
        \\frac{1}{2} & \\frac{1}{2}
        \\end{bmatrix}
        """
        return display.to_latex(self._exact_matrix("to_latex"), **kw)

    def to_sympy(self) -> Any:
        """The exact matrix as a :class:`sympy.Matrix` of Rationals.

        Raises :class:`~dpfix.numbers.exact.ExactnessError` for a float mechanism (a float
        converted to a Rational would claim an exactness it does not have).

        Examples
        --------
        >>> Mechanism.from_matrix([[1, 0], ["1/2", "1/2"]], lam=2).to_sympy()[1, 0]
        1/2
        """
        return display.to_sympy(self._exact_matrix("to_sympy"))
