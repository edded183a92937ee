"""The heuristic fixed-point constructor: the paper's Algorithm 1 (paper Section 5.2).

Algorithm 1 fills the columns of ``T`` one at a time with positive multiples
of eps-scales: the single-peaked scale at the chosen column, its pattern
overridden wherever the remaining row mass ``r`` has become tight (locked).
Each pass fills a column or locks a position, so there are at most
``|P| + n - 1`` passes (Theorem 5, ``P = {j : z_j > 0}``) and the result is an
extreme point of ``F[z]`` (Theorem 6). One implementation serves both number
types (see :mod:`dpfix.constructors._heuristic_kernel`): a rational ``lam``
gives an exact matrix of Fractions, a float ``eps`` a float mechanism held in
log space and checked before it is returned.
"""

from __future__ import annotations

import math
import operator
import time
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.constructors._heuristic_kernel import ExactOps, LogOps, run
from dpfix.numbers.exact import Z_ATOL, probability_vector, resolve_lam
from dpfix.theory.mechanism import Mechanism
from dpfix.theory.scales import PSI_MAX_N, pattern_index

__all__ = ["heuristic", "heuristic_steps", "scale_representation", "SELECTORS", "Z_ATOL"]

#: The selectors known by name; a callable ``selector(c, z) -> j`` works too.
SELECTORS = ("max", "min", "sandwich", "random", "best")
#: Float path: ``z`` must sum to 1 within this, and is then renormalised.

#: Largest n at which a float build that fails its check is redone in exact
#: arithmetic (about 10 s at n = 51). The float passes lose about
#: ``eps / ln 10`` digits where a step multiplies by ``lam`` and subtracts, so at
#: ``eps >~ 10`` some targets come out invalid (rows off by 1e-7 at eps = 20).
EXACT_FALLBACK_MAX_N = 64

_BEST_OF = ("max", "min", "sandwich")


def _selector(selector: Any, z: np.ndarray, ops: Any, seed: Any) -> Callable:
    """``choose(c, remaining) -> j`` for a selector name or callable."""
    n = len(z)
    if callable(selector):
        def choose(c: np.ndarray, remaining: np.ndarray) -> int:
            view = c.copy() if ops.exact else np.exp(c)
            try:
                j = operator.index(selector(view, z))
            except TypeError:
                raise ValueError("selector: must return an integer column index") from None
            if not 0 <= j < n:
                raise ValueError(f"selector: returned column {j}, outside 0..{n - 1}")
            if not remaining[j]:
                raise ValueError(f"selector: returned column {j} with c_j <= 0 (already full)")
            return j
        return choose
    if selector == "max":  # filled columns hold c_j = 0, so a plain argmax is enough
        return lambda c, remaining: int(np.argmax(c))
    if selector == "min":
        def choose_min(c: np.ndarray, remaining: np.ndarray) -> int:
            idx = np.flatnonzero(remaining)
            return int(idx[np.argmin(c[idx])])
        return choose_min
    if selector == "sandwich":
        order = iter([k // 2 if k % 2 == 0 else n - 1 - k // 2 for k in range(n)])

        def choose_sandwich(c: np.ndarray, remaining: np.ndarray) -> int:
            return next(j for j in order if remaining[j])
        return choose_sandwich
    if selector == "random":
        rng = np.random.default_rng(seed)
        return lambda c, remaining: int(rng.choice(np.flatnonzero(remaining)))
    raise ValueError(
        f"selector: unknown {selector!r}; use one of {', '.join(SELECTORS)} or a callable"
    )


def _seed_record(seed: Any) -> int | str:
    """What ``params`` may record of the random selector's seed: an integer the caller
    gave, else a description (never a SeedSequence, Generator or its entropy)."""
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return int(seed)
    if seed is None:
        return "fresh OS randomness (not recorded)"
    return "a seed object (not recorded)"


def _build(zv: np.ndarray, lam_x: Fraction | None, eps_f: float, selector: Any,
           seed: Any, compiled: bool | None = None) -> Mechanism:
    start = time.perf_counter()
    n = len(zv)
    ops = ExactOps(lam_x, zv) if lam_x is not None else LogOps(eps_f, zv)
    out = run(ops, n, _selector(selector, zv, ops, seed), compiled)
    name = selector if isinstance(selector, str) else getattr(selector, "__name__", "callable")
    params = {"selector": name, "passes": out.passes, "pass_bound": out.max_passes,
              "column_order": out.order, "steps": out.steps,
              "final_lock": tuple(int(v) for v in out.lock),
              "log_amounts": not ops.exact, "compiled": out.compiled}
    if selector == "random":  # an int seed only: a SeedSequence's entropy would reveal it
        params["seed"] = _seed_record(seed)
    if ops.exact:
        mech = Mechanism(matrix=out.matrix, eps=eps_f, lam=lam_x, fixed_point=zv,
                         constructor="heuristic", params=params)
        mech.check()
    else:
        mech = Mechanism(log_matrix=out.matrix, eps=eps_f,
                         fixed_point=zv, constructor="heuristic", params=params)
        try:
            mech.check()
        except ValueError as err:
            mech = _exact_fallback(zv, eps_f, selector, seed, err)
    mech.build_seconds = time.perf_counter() - start
    return mech


def _exact_fallback(zv: np.ndarray, eps: float, selector: Any, seed: Any,
                    err: ValueError) -> Mechanism:
    """Redo a float build that failed its check in exact arithmetic.

    ``lam`` is the largest float below ``e^eps`` (as a Fraction, so the result is
    at most eps-DP) and ``z`` the Fractions of the float target renormalised to
    sum to exactly 1; the exact matrix is returned in log space, where entries
    far below float64's range stay finite. Refused beyond EXACT_FALLBACK_MAX_N.
    """
    n = len(zv)
    if n > EXACT_FALLBACK_MAX_N:
        raise ValueError(f"heuristic: the float path cannot build a valid mechanism for this "
                         f"z at eps = {eps} ({err}); the exact fallback is limited to "
                         f"n <= {EXACT_FALLBACK_MAX_N}") from None
    lam = Fraction(math.nextafter(math.exp(eps), 0.0))
    zx = np.array([Fraction(float(v)) for v in zv], dtype=object)
    zx = zx / sum(zx)
    exact = _build(zx, lam, float(np.log(float(lam))), selector, seed)

    def log(v: Fraction) -> float:
        return -math.inf if v == 0 else math.log(v.numerator) - math.log(v.denominator)

    L = np.array([[log(v) for v in row] for row in exact.matrix], dtype=float)
    steps = [(j, log(a), locks) for j, a, locks in exact.params["steps"]]
    params = dict(exact.params, steps=steps, log_amounts=True, exact_fallback=str(err))
    mech = Mechanism(log_matrix=L, eps=eps, fixed_point=zv, constructor="heuristic",
                     params=params)
    mech.check()
    return mech


def heuristic(z: Any, eps: float | None = None, *, lam: Any = None, selector: Any = "sandwich",
              seed: Any = None) -> Mechanism:
    """A fixed-point mechanism by the paper's Algorithm 1 (Theorems 5 and 6).

    Parameters
    ----------
    z : the target distribution (probability vector of length ``n >= 1``).
        Exact numbers (ints, Fractions, strings) summing to exactly 1 on the
        exact path; floats summing to 1 within ``Z_ATOL`` (then renormalised)
        on the float path.
    eps : float privacy parameter: the float path.
    lam : ``e^eps`` as a rational (exact path), or a float (float path); a real
        algebraic ``lam`` (:func:`dpfix.algebraic`) gives the exact matrix over
        ``Q(lam)``, for the checks there (:func:`dpfix.constructors.construct` takes
        rationals only).
    selector : which column to fill next, chosen among those with ``c_j > 0``
        (``c`` the column mass still missing); ties go to the smallest index.
        ``"max"``: largest ``c_j``; ``"min"``: smallest positive ``c_j``;
        ``"sandwich"``: ``0, n-1, 1, n-2, ...``; ``"random"``: uniform, from
        ``numpy.random.default_rng(seed)``; ``"best"``: builds max, min and
        sandwich and keeps the least ``count_error("abs")`` (it depends on
        ``z`` only, so costs no privacy; the paper, end of Section 5.2); or a
        callable ``selector(c, z) -> j`` with ``c`` a copy of the remaining
        column mass (Fractions, or float64 on the float path).
    seed : seed of the ``"random"`` selector (anything ``default_rng`` takes).
        ``params["seed"]`` records it only when it is an integer: a
        SeedSequence or Generator is never stored (its entropy could rebuild
        sibling generators).

    Returns
    -------
    Mechanism
        Exact (``matrix``, ``lam``) or float (``log_matrix``, ``eps``), with
        ``fixed_point = z``. ``params`` holds ``selector``, ``passes`` (scale
        additions), ``pass_bound`` (``|P| + n - 1``), ``column_order``,
        ``final_lock`` and ``steps``, the scale representation read by
        :func:`heuristic_steps` and :func:`scale_representation`.

    Raises
    ------
    ValueError
        Bad ``z``, ``eps`` or selector; or a float result that fails
        :meth:`Mechanism.check` (never returned silently).

    Notes
    -----
    The paper's "max probability" selector takes the remaining column of
    largest ``z_j``, our notes (docs/math_notes.md) the largest remaining ``c_j``: the same column,
    since ``c_j = z_j`` until column ``j`` is chosen. Exact results tie every
    position that ties (no pass of length zero). Float results are checked to
    ``FLOAT_RTOL = 1e-9`` (rows sum to 1, ``z T = z``, eps-DP) and are eps-DP by
    construction (each column a sum of scales, in log space). Where ``r`` has
    fallen to the rounding level of the row sums (about 1e-15), floats cannot
    follow the exact ties; such blocks of ``r`` are set to 0 and the last
    column takes ``c_j = z . r`` (see :mod:`dpfix.constructors._heuristic_kernel`).
    With numba installed the float passes run compiled (about 10x faster).

    Examples
    --------
    >>> T = heuristic(["1/3", "1/3", "1/3"], lam=2, selector="max")
    >>> print(T.matrix * 49)
    [[Fraction(28, 1) Fraction(11, 1) Fraction(10, 1)]
     [Fraction(14, 1) Fraction(22, 1) Fraction(13, 1)]
     [Fraction(7, 1) Fraction(16, 1) Fraction(26, 1)]]
    >>> T.params["passes"], T.params["pass_bound"]  # at most |P| + n - 1 (Theorem 5)
    (5, 5)
    >>> Tf = heuristic([1/3, 1/3, 1/3], float(np.log(2)), selector="max")
    >>> bool(abs(Tf.T - T.matrix.astype(float)).max() < 1e-12)
    True
    """
    lam_x, eps_f = resolve_lam(eps, lam, algebraic=True)
    zv = probability_vector(z, exact=lam_x is not None)
    if isinstance(selector, str) and selector == "best":
        start = time.perf_counter()
        best, errors = None, {}
        for name in _BEST_OF:  # one at a time: at n = 10,000 each T takes 800 MB
            mech = _build(zv, lam_x, eps_f, name, seed)
            err = mech.count_error()
            errors[name] = err if lam_x is not None else float(err)
            if best is None or err < best[0]:  # ties keep the earlier selector
                best = (err, mech)
            del mech
        mech = best[1]
        mech.params.update(selector="best", chosen=mech.params["selector"], count_errors=errors)
        mech.build_seconds = time.perf_counter() - start
        return mech
    return _build(zv, lam_x, eps_f, selector, seed)


def _require_heuristic(mech: Mechanism) -> dict:
    if mech.constructor != "heuristic" or "steps" not in mech.params:
        raise ValueError("mech: not built by heuristic() (no scale representation in params)")
    return mech.params


def heuristic_steps(mech: Mechanism) -> Iterator[tuple[int, tuple[int, ...], Any]]:
    """The scale representation of a :func:`heuristic` mechanism, pass by pass.

    Yields ``(j, pattern, amount)``: the pass added ``amount`` times the scale
    with ``pattern`` to column ``j``; ``T`` is the sum (Observation 2: a conic
    combination of scales, eps-DP by construction). Exact amounts are
    Fractions; float ones are floats (zero for the rare float pass of length
    zero that only records a lock).

    Parameters
    ----------
    mech : Mechanism
        Built by :func:`heuristic`.

    Yields
    ------
    (int, tuple of int, Fraction or float)
        The column, the scale's pattern and the amount of one pass.

    Raises
    ------
    ValueError
        ``mech`` was not built by :func:`heuristic`.

    Examples
    --------
    >>> list(heuristic_steps(heuristic(["1/2", "1/2"], lam=3)))
    [(0, (-1,), Fraction(1, 1)), (1, (1,), Fraction(1, 1))]
    """
    params = _require_heuristic(mech)
    n = mech.n
    lock = np.zeros(max(n - 1, 0), dtype=np.int64)
    below = np.arange(n - 1)
    for j, amount, locks in params["steps"]:
        p = np.where(lock != 0, lock, np.where(below < j, 1, -1))
        value = float(np.exp(amount)) if params["log_amounts"] else amount
        yield j, tuple(int(v) for v in p), value
        for a, d in locks:
            lock[a] = d


def scale_representation(mech: Mechanism) -> np.ndarray:
    """``B`` in ``R_F`` (``2^(n-1) x n``) with ``Psi B = T`` (Theorem 3), from the passes.

    Row ``m`` is the scale with ``pattern_index(pattern) = m``. Exact for an
    exact mechanism. Only for ``n <= PSI_MAX_N``.

    Parameters
    ----------
    mech : Mechanism
        Built by :func:`heuristic`, ``n <= PSI_MAX_N``.

    Returns
    -------
    numpy.ndarray
        ``2^(n-1) x n``, exact for an exact mechanism.

    Raises
    ------
    ValueError
        ``mech`` was not built by :func:`heuristic`, or ``n > PSI_MAX_N``.

    Examples
    --------
    >>> scale_representation(heuristic(["1/2", "1/2"], lam=3)).tolist()
    [[Fraction(1, 1), Fraction(0, 1)], [Fraction(0, 1), Fraction(1, 1)]]
    """
    _require_heuristic(mech)
    n = mech.n
    if n > PSI_MAX_N:
        raise ValueError(f"mech: n = {n} > PSI_MAX_N = {PSI_MAX_N}; B would have 2^{n - 1} rows")
    B = np.zeros((2 ** (n - 1), n), dtype=object if mech.exact else float)
    if mech.exact:
        B[:] = Fraction(0)
    for j, pattern, amount in heuristic_steps(mech):
        B[pattern_index(pattern), j] += amount
    return B
