"""The representation polytope ``R_F``: scales, movements, extreme points.

Paper Section 4 (Theorems 3 and 4, Lemma 2); docs/math_notes.md.

A representation matrix ``B`` (``k x n``, ``k = 2^(n-1)``, rows indexed by the
scales in the canonical order of :func:`dpfix.theory.scales.psi`) says how much of
scale ``i`` enters column ``j`` of ``T = Psi B``. ``R_F`` is the set of
``B >= 0`` with ``z Psi B = z`` and ``Psi B 1 = 1``; ``Psi`` maps it onto ``F``
(the paper's Theorem 3). This module is exact throughout: ``lam`` is rational
(every matrix an object array of Fractions) or a real algebraic number
(:func:`dpfix.algebraic`; the entries in ``Q(lam)``, by the same code), floats are
refused with :class:`dpfix.numbers.exact.ExactnessError`, and every rank is exact
(:func:`dpfix.numbers.exact.rank`, over ``Q(lam)`` too).

Because ``z`` is a probability vector and every scale is strictly positive,
``z . Psi_i > 0`` for every scale ``i``; the weights ``1 / (z . Psi_i)`` in the
difference vectors ``H(B_j)`` are therefore always defined.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.numbers.algebraic import exact_field_array, is_algebraic
from dpfix.numbers.exact import exact_array, exact_lam, nullspace, probability_vector, rank
from dpfix.theory.scales import PSI_MAX_N, pattern_index, psi, scale

__all__ = [
    "psi_map",
    "positive_support",
    "scale_count",
    "in_R_F",
    "difference_vectors",
    "is_psi_affinely_simplified",
    "movement_space",
    "has_movement_in_support",
    "decompose",
    "fibre_vertex",
    "extreme_preimage",
]

_ZERO = Fraction(0)


# --- validation ---------------------------------------------------------------------


def _n_of_k(k: int, name: str) -> int:
    if k < 1 or k & (k - 1):
        raise ValueError(f"{name}: has {k} rows; a representation matrix has k = 2^(n-1) rows")
    return k.bit_length()


def _field_matrix(X: Any, name: str, lam: Any) -> np.ndarray:
    """``X`` as a 2-dimensional exact matrix: Fractions for a rational ``lam``; Fractions
    and elements of ``Q(lam)`` for an algebraic ``lam`` (floats refused either way)."""
    lam_x = exact_lam(lam, algebraic=True)
    if not is_algebraic(lam_x):
        return exact_array(X, name, ndim=2)
    return exact_field_array(X, name, lam_x.field, ndim=2)


def _representation(B: Any, lam: Any, name: str = "B", *, square: bool = True
                    ) -> tuple[np.ndarray, int]:
    """Exact, non-negative ``k x n`` (or ``k x m`` when not ``square``) matrix and its ``n``
    (its entries in ``Q(lam)`` for an algebraic ``lam``)."""
    arr = _field_matrix(B, name, lam)
    n = _n_of_k(arr.shape[0], name)
    if square and arr.shape[1] != n:
        raise ValueError(
            f"{name}: expected shape {(arr.shape[0], n)} (k = 2^(n-1) scales by n columns), "
            f"got {arr.shape}"
        )
    for (i, j), v in np.ndenumerate(arr):
        if v < 0:
            raise ValueError(f"{name}: entry ({i}, {j}) is negative ({v}); B must be >= 0")
    return arr, n


def _psi(n: int, lam: Any) -> np.ndarray:
    if n > PSI_MAX_N:
        raise ValueError(f"n = {n} exceeds dpfix.theory.scales.PSI_MAX_N = {PSI_MAX_N}")
    return psi(n, exact_lam(lam, algebraic=True))


def _weights(zv: np.ndarray, P: np.ndarray) -> list[Fraction]:
    """``z . Psi_i`` for every scale ``i``: positive, as ``z >= 0``, ``sum z = 1``, ``Psi > 0``."""
    w = list(zv.dot(P))
    assert all(x > 0 for x in w), "z . Psi_i > 0 for a probability vector z"
    return w


def _violation(v: list[Fraction], lam: Fraction) -> int | None:
    """First ``a`` with ``v[a] > lam v[a+1]`` or ``v[a+1] > lam v[a]``, else None."""
    for a in range(len(v) - 1):
        if v[a] > lam * v[a + 1] or v[a + 1] > lam * v[a]:
            return a
    return None


# --- basic maps ---------------------------------------------------------------------


def psi_map(B: Any, lam: Any) -> np.ndarray:
    """``T = Psi B``: the mechanism a representation matrix encodes (Theorem 3).

    ``B`` is ``k x m`` with ``k = 2^(n-1)`` (``n`` is read from ``k``; usually
    ``m = n``) and may be any exact matrix, not only a non-negative one.

    Parameters
    ----------
    B : array_like
        A ``k x m`` exact matrix, ``k = 2^(n-1)``.
    lam : int, Fraction, str or Algebraic
        ``e^eps > 1``, rational or real algebraic (exact over ``Q(lam)``).

    Returns
    -------
    numpy.ndarray
        ``n x m`` object array of Fractions.

    Raises
    ------
    ValueError
        ``k`` is not a power of two.
    ExactnessError
        A float where an exact number is required.

    Examples
    --------
    >>> psi_map([[1, 0], [0, 1]], 2).tolist()
    [[Fraction(2, 3), Fraction(1, 3)], [Fraction(1, 3), Fraction(2, 3)]]
    """
    arr = _field_matrix(B, "B", lam)
    n = _n_of_k(arr.shape[0], "B")
    return _psi(n, lam).dot(arr)


def positive_support(B: Any) -> np.ndarray:
    """Boolean mask of the positive entries of ``B``.

    Parameters
    ----------
    B : array_like
        Any exact matrix (entries in ``Q`` or in one field ``Q(lam)``).

    Returns
    -------
    numpy.ndarray of bool
        ``True`` where ``B > 0``.

    Examples
    --------
    >>> positive_support([[0, "1/2"], [1, 0]]).tolist()
    [[False, True], [True, False]]
    """
    arr = exact_field_array(B, "B")
    if arr.ndim != 2:
        raise ValueError(f"B: expected 2 dimension(s), got shape {arr.shape}")
    return np.array([[v > 0 for v in row] for row in arr], dtype=bool).reshape(arr.shape)


def scale_count(B: Any) -> int:
    """Number of positive entries of ``B`` (scale uses; Corollary 2 bounds it).

    Parameters
    ----------
    B : array_like
        A representation matrix (exact).

    Returns
    -------
    int
        How many scales ``B`` uses.

    Examples
    --------
    >>> scale_count([[0, "1/2"], [1, 0]])
    2
    """
    return int(positive_support(B).sum())


def in_R_F(B: Any, z: Any, lam: Any) -> bool:
    """True when ``B >= 0``, ``z Psi B = z`` and ``Psi B 1 = 1`` (paper Section 4).

    Raises ``ValueError`` for a malformed ``B`` or ``z``, not for a ``B``
    outside ``R_F``.

    Parameters
    ----------
    B : array_like
        A ``k x n`` representation matrix of exact numbers, ``k = 2^(n-1)``.
    z : array_like
        The target distribution (exact numbers, summing to 1).
    lam : int, Fraction, str or Algebraic
        ``e^eps > 1``, rational or real algebraic (exact over ``Q(lam)``).

    Returns
    -------
    bool
        Membership in ``R_F`` (exact).

    Raises
    ------
    ValueError
        A malformed ``B`` or ``z``.

    Examples
    --------
    >>> in_R_F([[1, 0], [0, 1]], ["1/2", "1/2"], 2), in_R_F([[1, 1], [0, 0]], ["1/2", "1/2"], 2)
    (True, False)
    """
    arr = _field_matrix(B, "B", lam)
    n = _n_of_k(arr.shape[0], "B")
    if arr.shape[1] != n:
        raise ValueError(f"B: expected shape {(arr.shape[0], n)}, got {arr.shape}")
    zv = probability_vector(z, exact=True, n=n)
    if any(v < 0 for v in arr.flat):
        return False
    T = _psi(n, lam).dot(arr)
    return bool(all(zv.dot(T) == zv) and all(T.sum(axis=1) == 1))


# --- Psi-affine simplification (Definition 8, Lemma 2, Theorem 4) -------------------------


def difference_vectors(B: Any, z: Any, lam: Any) -> np.ndarray:
    """The multiset union of the ``H(B_j)`` as the rows of an exact array.

    For column ``j`` with positive entries at scale indices ``i_0 < i_1 < ...``,
    ``H(B_j)`` holds ``Psi_{i_l} / (z . Psi_{i_l}) - Psi_{i_0} / (z . Psi_{i_0})``
    for ``l >= 1`` (paper Section 4; the paper's Definition 8). Rows are
    ordered by ``j``, then ``l``; the result has shape ``(N, n)``, ``N`` being
    ``scale_count(B)`` minus the number of non-zero columns. Every row ``h``
    satisfies ``z h = 0``. ``B`` must be ``k x n`` and non-negative.

    Parameters
    ----------
    B, z, lam
        The non-negative representation matrix, the target and ``lam``, as for
        :func:`in_R_F`.

    Returns
    -------
    numpy.ndarray
        ``(N, n)`` object array of Fractions.

    Raises
    ------
    ValueError
        A negative or malformed ``B``, or a ``z`` that is no probability vector.

    Examples
    --------
    >>> difference_vectors([[0, 1], ["3/5", "2/5"]], ["1/3", "2/3"], 2).tolist()
    [[Fraction(-9, 10), Fraction(9, 20)]]
    """
    arr, n = _representation(B, lam)
    P = _psi(n, lam)
    w = _weights(probability_vector(z, exact=True, n=n), P)
    rows = []
    for j in range(n):
        idx = [i for i in range(arr.shape[0]) if arr[i, j] > 0]
        for i in idx[1:]:
            rows.append(P[:, i] / w[i] - P[:, idx[0]] / w[idx[0]])
    out = np.empty((len(rows), n), dtype=object)
    for r, h in enumerate(rows):
        out[r] = h
    return out


def is_psi_affinely_simplified(B: Any, z: Any, lam: Any) -> bool:
    """Definition 8: the multiset union of the ``H(B_j)`` is linearly independent.

    By Theorem 4, a ``B`` in ``R_F`` is an extreme point of ``R_F`` iff this
    holds; by Lemma 2 it holds iff no non-zero movement matrix vanishes where
    ``B`` does (:func:`has_movement_in_support`). Exact rank.

    Parameters
    ----------
    B, z, lam
        As for :func:`difference_vectors`.

    Returns
    -------
    bool
        Whether the ``H(B_j)`` are linearly independent (Definition 8).

    Raises
    ------
    ValueError
        As :func:`difference_vectors`.

    Examples
    --------
    >>> z = ["1/2", "1/2"]
    >>> is_psi_affinely_simplified([[1, 0], [0, 1]], z, 2)
    True
    >>> is_psi_affinely_simplified([["1/2", "1/2"], ["1/2", "1/2"]], z, 2)
    False
    """
    H = difference_vectors(B, z, lam)
    return rank(H) == H.shape[0]


def movement_space(z: Any, lam: Any, support: Any = None) -> list[np.ndarray]:
    """An exact basis of the movement matrices ``M_F(Psi)`` (Section 4.4).

    ``M_F(Psi) = {mu in R^(k x n) : z Psi mu = 0, Psi mu 1 = 0}``. With a
    boolean ``k x n`` mask ``support``, only the movements vanishing off the
    mask. Returns a list of ``k x n`` exact matrices (empty when the space is
    ``{0}``). Without a mask the dimension is ``k n - 2n + 1``: the ``2n``
    constraints have one dependency (``z`` times the second block equals the
    sum of the first).

    Parameters
    ----------
    z, lam
        The target distribution and the exact ``lam`` (see :func:`in_R_F`).
    support : array_like of bool, optional
        A ``k x n`` mask.

    Returns
    -------
    list of numpy.ndarray
        ``k x n`` exact matrices spanning the (masked) movement space.

    Raises
    ------
    ValueError
        A bad ``z`` or a mask of the wrong shape.

    Examples
    --------
    >>> [m.tolist() for m in movement_space(["1/2", "1/2"], 2)]
    [[[Fraction(1, 1), Fraction(-1, 1)], [Fraction(-1, 1), Fraction(1, 1)]]]
    """
    zv = exact_array(z, "z", ndim=1)
    n = zv.shape[0]
    if n < 1:
        raise ValueError("z: must have length >= 1")
    zv = probability_vector(zv, exact=True, n=n)
    P = _psi(n, lam)
    k = P.shape[1]
    if support is None:
        mask = np.ones((k, n), dtype=bool)
    else:
        mask = np.asarray(support)
        if mask.shape != (k, n):
            raise ValueError(f"support: expected a mask of shape {(k, n)}, got {mask.shape}")
        if mask.dtype != bool and not all(v in (0, 1) for v in mask.flat):
            raise ValueError("support: entries must be booleans (or 0/1)")
        mask = mask.astype(bool)
    cells = [(i, j) for i in range(k) for j in range(n) if mask[i, j]]
    if not cells:
        return []
    w = _weights(zv, P)
    rows = [[w[i] if jj == j else _ZERO for i, jj in cells] for j in range(n)]
    rows += [[P[r, i] for i, _ in cells] for r in range(n)]
    basis = nullspace(np.array(rows, dtype=object))
    out = []
    for c in range(basis.shape[1]):
        mu = np.full((k, n), _ZERO, dtype=object)
        for (i, j), v in zip(cells, basis[:, c], strict=True):
            mu[i, j] = v
        out.append(mu)
    return out


def has_movement_in_support(B: Any, z: Any, lam: Any) -> bool:
    """Lemma 2's condition: a non-zero ``mu`` in ``M_F(Psi)`` vanishes where ``B`` does.

    Lemma 2: ``B`` is Psi-affinely simplified iff this is False. The paper
    states it for ``B`` in ``R_F``, but the proof uses only the support: with
    ``c_ij = (z . Psi_i) mu_ij``, ``z Psi mu = 0`` says each column of ``c``
    sums to 0, and then ``Psi mu 1`` is the combination of the ``H(B_j)``
    vectors with coefficients ``c_{i_l, j}`` (``l >= 1``); so it holds for
    every ``B >= 0``.

    Parameters
    ----------
    B, z, lam
        Any ``B >= 0`` (its support matters), the target and ``lam``.

    Returns
    -------
    bool
        True when ``B`` is not Psi-affinely simplified (Lemma 2).

    Examples
    --------
    >>> has_movement_in_support([["1/2", "1/2"], ["1/2", "1/2"]], ["1/2", "1/2"], 2)
    True
    """
    arr, n = _representation(B, lam)
    return bool(movement_space(z, lam, support=positive_support(arr)))


# --- preimages under Psi (Lemma 1, Theorem 3, Proposition 1) -------------------------------


def _peel(v: list[Fraction], lam: Fraction) -> dict[int, Fraction]:
    """Write an eps-neighbour-indistinguishable ``v`` as ``sum_m c_m Psi_m``, ``c >= 0``.

    Invariant: the residual ``r`` is indistinguishable, so ``r = 0`` or ``r > 0``
    (a zero entry forces its neighbours to 0). Position ``a`` is *tight* when
    ``r[a+1] = lam r[a]`` (up) or ``r[a] = lam r[a+1]`` (down); both at once
    only when ``r = 0``. Each pass takes the pattern ``p`` that follows the
    tight directions and, where ``a`` is free, ``+1`` iff ``r[a+1] >= r[a]``
    (any choice would do), and subtracts ``g s`` with ``s = scale(p)``:
    - at a tight ``a`` the tight constraint has coefficient 0 in ``g``
      (e.g. ``p[a] = +1``: ``lam s[a] - s[a+1] = 0``), so it stays tight;
      the other one is ``(lam^2 - 1) r[a] >= 0`` while ``r >= 0``;
    - at a free ``a`` one constraint has coefficient 0 and the other shrinks
      linearly to 0 at ``g_a > 0`` (the paper's Section 5.2 formula).
    With free positions, ``g = min g_a`` keeps ``r - g s`` indistinguishable
    (if ``r - g' s`` reached 0 at some ``g' < g``, every free slack would be
    0 there, so ``g_a <= g'``) and tightens at least one new position; with no
    free position ``r`` is a multiple of ``s`` and ``g = r[0] / s[0]`` ends it.
    Hence at most ``n`` passes and at most ``n`` scales. They are linearly
    independent: the position first tightened in pass ``t`` gives a functional
    (``x[a] - lam x[a+1]`` or ``x[a+1] - lam x[a]``) that vanishes on every
    later scale but not on ``s_t``, a triangular system.
    """
    n = len(v)
    r = list(v)
    out: dict[int, Fraction] = {}
    while any(x != 0 for x in r):
        p, free = [], []
        for a in range(n - 1):
            if r[a + 1] == lam * r[a]:
                p.append(1)
            elif r[a] == lam * r[a + 1]:
                p.append(-1)
            else:
                p.append(1 if r[a + 1] >= r[a] else -1)
                free.append(a)
        s = scale(p, lam)
        limits = []
        for a in free:
            if p[a] == 1:
                limits.append((lam * r[a + 1] - r[a]) / (lam * s[a + 1] - s[a]))
            else:
                limits.append((lam * r[a] - r[a + 1]) / (lam * s[a] - s[a + 1]))
        g = min(limits) if limits else r[0] / s[0]
        m = pattern_index(p)
        out[m] = out.get(m, _ZERO) + g
        r = [x - g * y for x, y in zip(r, s, strict=True)]
    return out


def decompose(T: Any, lam: Any) -> np.ndarray:
    """Some ``B >= 0`` with ``Psi B = T`` (Lemma 1, constructively; exact).

    ``T`` is ``n x m`` (usually ``m = n``) with eps-neighbour-indistinguishable
    columns; the result is ``k x m``, ``k = 2^(n-1)``. Each column is peeled
    greedily: subtract the largest multiple of the scale that follows the
    column's tight neighbour ratios while the rest stays indistinguishable.
    Each non-zero column uses at most ``n`` scales, and they are linearly
    independent, so ``B`` is a vertex of the fibre ``{B' >= 0 : Psi B' = T}``.

    Parameters
    ----------
    T : array_like
        An ``n x m`` exact matrix with eps-neighbour-indistinguishable columns.
    lam : int, Fraction, str or Algebraic
        The exact ``e^eps`` of the scales to peel (algebraic: exact over ``Q(lam)``).

    Returns
    -------
    numpy.ndarray
        ``B``, ``k x m`` (``k = 2^(n-1)``), Fractions (elements of ``Q(lam)``).

    Raises
    ------
    ValueError
        Naming the first column that is not eps-neighbour-indistinguishable.

    Examples
    --------
    >>> decompose([["1/5", "4/5"], ["2/5", "3/5"]], 2).tolist()
    [[Fraction(0, 1), Fraction(1, 1)], [Fraction(3, 5), Fraction(2, 5)]]
    """
    lam_x = exact_lam(lam, algebraic=True)
    arr = _field_matrix(T, "T", lam_x)
    n, m = arr.shape
    if n < 1:
        raise ValueError("T: must have at least one row")
    if n > PSI_MAX_N:
        raise ValueError(f"T: n = {n} exceeds dpfix.theory.scales.PSI_MAX_N = {PSI_MAX_N}")
    out = np.full((2 ** (n - 1), m), _ZERO, dtype=object)
    for j in range(m):
        col = list(arr[:, j])
        a = _violation(col, lam_x)
        if a is not None:
            raise ValueError(
                f"T: column {j} is not eps-neighbour-indistinguishable at rows {a}, {a + 1} "
                f"({col[a]} and {col[a + 1]}, lam = {lam_x})"
            )
        for i, c in _peel(col, lam_x).items():
            out[i, j] = c
    return out


def fibre_vertex(B: Any, lam: Any) -> np.ndarray:
    """A vertex of the fibre ``{B' >= 0 : Psi B' = Psi B}`` with support inside ``B``'s.

    Purification, column by column (the fibre is a product of column fibres):
    while the scales on a column's support are linearly dependent, take an
    exact null direction ``d`` of them (it has entries of both signs, since
    ``Psi > 0``) and move along it until an entry reaches 0 (exact ratio test).
    The support shrinks each time; at the end every column's scales are
    linearly independent, which characterises the fibre's vertices.

    Parameters
    ----------
    B : array_like
        A non-negative ``k x n`` exact matrix.
    lam : int, Fraction or str
        The rational ``e^eps``.

    Returns
    -------
    numpy.ndarray
        ``k x n`` object array of Fractions, ``Psi`` of it equal to ``Psi B``.

    Examples
    --------
    >>> fibre_vertex([[1, 0], [0, 1]], 2).tolist()
    [[Fraction(1, 1), Fraction(0, 1)], [Fraction(0, 1), Fraction(1, 1)]]
    """
    arr, n = _representation(B, lam, square=False)
    P = _psi(n, lam)
    out = arr.copy()
    for j in range(out.shape[1]):
        while True:
            idx = [i for i in range(out.shape[0]) if out[i, j] > 0]
            null = nullspace(P[:, idx]) if idx else np.empty((0, 0), dtype=object)
            if null.shape[1] == 0:
                break
            d = null[:, 0]
            t = min(out[i, j] / -di for i, di in zip(idx, d, strict=True) if di < 0)
            for i, di in zip(idx, d, strict=True):
                out[i, j] += t * di
    return out


def extreme_preimage(T: Any, z: Any, lam: Any) -> np.ndarray:
    """Proposition 1: an extreme point ``B`` of ``R_F`` with ``Psi B = T``.

    ``T`` must lie in ``F[z]``. The result is the vertex of the fibre
    ``{B in R_F : Psi B = T}`` that :func:`decompose` and :func:`fibre_vertex`
    reach. If ``T`` is extreme in ``F``, the fibre is a face of ``R_F`` (it
    maximises ``<Psi^T c, B>`` for a ``c`` that ``T`` uniquely maximises), so its
    vertices are extreme in ``R_F`` and, by Theorem 4, Psi-affinely simplified.
    Hence a returned ``B`` is always extreme in ``R_F``. A returned ``B`` does
    not prove ``T`` extreme (the paper's Example 1: an extreme ``B`` can map to
    a non-extreme ``T``).

    Parameters
    ----------
    T : array_like
        An exact matrix in ``F[z]``.
    z, lam
        The target and the exact ``lam`` (rational or algebraic).

    Returns
    -------
    numpy.ndarray
        ``k x n`` object array of Fractions.

    Raises
    ------
    ValueError
        If ``T`` is not in ``F[z]``, or if the fibre vertex is not
        Psi-affinely simplified, which proves ``T`` is not extreme in ``F``.

    Examples
    --------
    >>> extreme_preimage([["1/5", "4/5"], ["2/5", "3/5"]], ["1/3", "2/3"], 2).tolist()
    [[Fraction(0, 1), Fraction(1, 1)], [Fraction(3, 5), Fraction(2, 5)]]
    """
    arr = _field_matrix(T, "T", lam)
    n = arr.shape[0]
    if arr.shape != (n, n) or n < 1:
        raise ValueError(f"T: expected a square n x n matrix, got shape {arr.shape}")
    zv = probability_vector(z, exact=True, n=n)
    bad_row = next((i for i in range(n) if sum(arr[i]) != 1), None)
    if bad_row is not None:
        raise ValueError(f"T: not in F: row {bad_row} sums to {sum(arr[bad_row])}, not 1")
    zT = zv.dot(arr)
    bad_col = next((j for j in range(n) if zT[j] != zv[j]), None)
    if bad_col is not None:
        raise ValueError(f"T: not in F: (z T)[{bad_col}] = {zT[bad_col]} != z[{bad_col}]")
    B = fibre_vertex(decompose(arr, lam), lam)
    if not is_psi_affinely_simplified(B, zv, lam):
        raise ValueError(
            "T is not an extreme point of F: a vertex of its fibre under Psi is not "
            "Psi-affinely simplified (Proposition 1, Theorem 4)"
        )
    return B
