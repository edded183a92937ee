"""Mechanisms on pairs (and triples) of counts with the joint distribution as fixed point
(docs/joint.md).

States are pairs ``(a, b)`` in ``{0..n_a-1} x {0..n_b-1}``, flattened as ``a n_b + b``
(a tuple of ``k`` columns: ``k``-tuples flattened in C order, docs/joint.md section 9).
The privacy unit says which states are neighbours: ``"cell"`` (one count of one column
changes by one: the grid ``P_a x P_b``) or ``"row"`` (each column by at most one: the
king's graph; in ``k`` dimensions every offset in ``{-1, 0, 1}^k`` but zero). A mechanism
``T`` is ``lam``-DP on the unit's graph when ``T[s, j] <= lam T[t, j]`` for every edge
``{s, t}`` and every output ``j``; it fixes the joint target ``z`` when ``z T = z``.

- :func:`product_transport`: the product of truncated geometric mechanisms
  ``G_a x G_b`` followed by the optimal transport remap of ``z (G_a x G_b)`` onto ``z``
  (docs/joint.md sections 2-3): exact (Fractions; the exact network simplex of
  networkx) for rational ``lam``, its remap for the sampler in floats (POT's network
  simplex) for float ``eps``;
- :func:`transport_plan`: the transport problem solved exactly or in floats, checked;
- :func:`grid_lp_optimum`: the least count error over ``F_grid`` (every ``lam``-DP
  mechanism on the unit's graph fixing ``z``), exactly by cdd's LP (small sizes);
- :func:`joint_edges`, :func:`joint_lams`: the unit's graph and the per-column ``lam``.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.numbers.exact import ExactnessError, exact_array, is_exact_number, to_fraction
from dpfix.numbers.exact_lp import exact_lp
from dpfix.sampling.joint import JointSampler, apply_axes, geometric_matrix
from dpfix.sampling.source import rational_lam
from dpfix.sampling.structured import Remap

__all__ = ["JOINT_UNITS", "JointMechanism", "joint_edges", "joint_lams", "product_transport",
           "transport_plan", "grid_lp_optimum", "joint_sampler", "posterior_cost",
           "ground_cost", "product_remap"]

#: The privacy units of a pair and their graphs.
JOINT_UNITS = {"cell": "grid P_a x P_b (one count of one column by one)",
               "row": "king's graph (each column by at most one)"}
COSTS = ("count-error", "ground")


def _unit(unit: str) -> str:
    if unit not in JOINT_UNITS:
        raise ValueError(f"unit: one of {', '.join(JOINT_UNITS)}, got {unit!r}")
    return unit


def _offsets(k: int, unit: str) -> list[tuple[int, ...]]:
    """The unit's neighbour offsets, one of each pair ``+-o``: the unit vectors, then (unit
    ``row``) every other offset in ``{-1, 0, 1}^k`` whose first non-zero entry is 1."""
    units = [tuple(int(i == c) for i in range(k)) for c in range(k)]
    if _unit(unit) == "cell":
        return units
    rest = [o for o in itertools.product((0, 1, -1), repeat=k)
            if any(o) and o[next(i for i, v in enumerate(o) if v)] == 1 and o not in units]
    return units + rest


def joint_edges(shape: tuple[int, ...], unit: str = "cell") -> np.ndarray:
    """The edges ``(s, t)``, ``s < t``, of the unit's graph on the flattened states.

    Examples
    --------
    >>> joint_edges((2, 2), "cell").tolist()
    [[0, 2], [1, 3], [0, 1], [2, 3]]
    >>> len(joint_edges((2, 2), "row")), len(joint_edges((2, 2, 2), "row"))
    (6, 28)
    """
    shape = tuple(int(v) for v in shape)
    idx = np.arange(math.prod(shape)).reshape(shape)
    pairs = []
    for o in _offsets(len(shape), unit):
        src = tuple(slice(None, -1) if v == 1 else slice(1, None) if v == -1 else slice(None)
                    for v in o)
        dst = tuple(slice(1, None) if v == 1 else slice(None, -1) if v == -1 else slice(None)
                    for v in o)
        pairs.append(np.stack([idx[src].ravel(), idx[dst].ravel()], 1))
    out = np.concatenate(pairs).astype(np.int64).reshape(-1, 2)
    return np.sort(out, axis=1)


def _rational_root(lam: Fraction, k: int) -> Fraction:
    """The rational ``k``-th root of ``lam``, or a ValueError saying how to give the levels."""
    p, q = round(lam.numerator ** (1 / k)), round(lam.denominator ** (1 / k))
    for pp in (p - 1, p, p + 1):
        for qq in (q - 1, q, q + 1):
            if pp > 0 and qq > 0 and Fraction(pp, qq) ** k == lam:
                return Fraction(pp, qq)
    root = "square root" if k == 2 else "cube root" if k == 3 else f"{k}-th root"
    raise ValueError(f"lam: unit row runs each of {k} columns at lam^(1/{k}); {lam} has no "
                     f"rational {root}: give the levels lam=(lam_a, lam_b, ...) with product "
                     "<= lam")


def joint_lams(unit: str, *, lam: Any = None, eps: Any = None, k: int = 2
               ) -> tuple[Any, ...]:
    """The per-column levels ``(lam_a, lam_b, ...)`` whose product mechanism is ``lam``-DP
    on the unit's graph over ``k`` columns.

    Unit ``cell``: each column at ``lam`` (an edge changes one coordinate). Unit ``row``:
    ``prod_c lam_c <= lam`` (an edge may change every coordinate): a tuple given as
    ``lam``, a rational ``k``-th root of ``lam``, or with float ``eps`` the proved rational
    ``lam_c <= e^(eps/k)`` of :func:`dpfix.sampling.source.rational_lam` per column.

    Examples
    --------
    >>> joint_lams("row", lam=4), joint_lams("cell", lam=2)
    ((Fraction(2, 1), Fraction(2, 1)), (Fraction(2, 1), Fraction(2, 1)))
    >>> joint_lams("row", lam=8, k=3)
    (Fraction(2, 1), Fraction(2, 1), Fraction(2, 1))
    """
    _unit(unit)
    if eps is not None:
        e = float(eps) / (k if unit == "row" else 1)
        return tuple(rational_lam(e) for _ in range(k))
    if isinstance(lam, (tuple, list)):
        if len(lam) != k:
            raise ValueError(f"lam: one level per column, {len(lam)} for {k}")
        return tuple(to_fraction(v, "lam") for v in lam)
    lam = to_fraction(lam, "lam")
    if unit == "cell":
        return tuple(lam for _ in range(k))
    root = _rational_root(lam, k)
    return tuple(root for _ in range(k))


def ground_cost(shape: tuple[int, ...], cols: np.ndarray | None = None,
                rows: np.ndarray | None = None) -> np.ndarray:
    """``D[m, j] = sum_c |m_c - j_c|`` (int64), over the states ``rows`` and ``cols``.

    Examples
    --------
    >>> ground_cost((2, 2)).tolist()
    [[0, 1, 1, 2], [1, 0, 2, 1], [1, 2, 0, 1], [2, 1, 1, 0]]
    """
    N = math.prod(shape)
    ms = np.unravel_index(np.arange(N) if rows is None else np.asarray(rows), shape)
    js = np.unravel_index(np.arange(N) if cols is None else np.asarray(cols), shape)
    return sum((np.abs(m[:, None] - j[None, :]) for m, j in zip(ms, js, strict=True)),
               np.zeros((ms[0].size, js[0].size), dtype=np.int64))


def posterior_cost(Z: np.ndarray, *mats: np.ndarray, cols: np.ndarray | None = None,
                   rows: np.ndarray | None = None) -> np.ndarray:
    """``K[m, j] = sum_s z_s G[s, m] d(s, j)``: the count error of sending ``m`` to ``j``.

    ``G = G_1 x ... x G_k`` (``mats``, one per axis of ``Z``) and ``d`` the L1 distance
    separate: with ``Y_c`` the target with every other column's noise applied
    (``Y_c[.., s_c, ..] = sum_{s_-c} z_s prod_{d != c} G_d[s_d, m_d]``),
    ``K[m, j] = sum_c sum_{s_c} G_c[s_c, m_c] |s_c - j_c| Y_c[m_-c, s_c]``: ``O(n_c^2)`` per
    noisy state ``m`` of ``rows`` and column, never the ``N x N`` product. Over the noisy
    states ``rows`` (default all) and the outputs ``cols`` (default all). Exact for object
    arrays, float otherwise. A one-dimensional array after the matrices is ``cols``.
    """
    if mats and np.ndim(mats[-1]) == 1:
        mats, cols = mats[:-1], mats[-1]
    shape = Z.shape
    N = math.prod(shape)
    ms = np.unravel_index(np.arange(N) if rows is None else np.asarray(rows), shape)
    js = np.unravel_index(np.arange(N) if cols is None else np.asarray(cols), shape)
    K = None
    for c, Gc in enumerate(mats):
        n = shape[c]
        others = [mats[d] if d != c else np.eye(n, dtype=Gc.dtype) for d in range(len(mats))]
        if Z.dtype == object:
            others[c] = np.array([[Fraction(int(i == k)) for k in range(n)] for i in range(n)],
                                 dtype=object)
        Y = np.moveaxis(apply_axes(Z, others), c, -1)  # Y[m_-c, s_c]
        rest = tuple(m for d, m in enumerate(ms) if d != c)
        flat = (np.ravel_multi_index(rest, Y.shape[:-1]) if rest
                else np.zeros(ms[0].size, dtype=np.int64))
        V = Y.reshape(-1, n)[flat] * Gc.T[ms[c]]  # V[r, s_c] = Y_c[m_-c, s_c] G_c[s_c, m_c]
        Dc = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
        t = V.dot(Dc.astype(object) if Z.dtype == object else Dc)[:, js[c]]
        K = t if K is None else K + t
    return K


def _exact_plan(supply: list, demand: list, cost: np.ndarray) -> list[tuple[int, int, Any]]:
    """networkx's network simplex on Fractions: exact arithmetic throughout."""
    import networkx as nx

    G = nx.DiGraph()
    for i, s in enumerate(supply):
        G.add_node(("s", i), demand=-s)
    for j, d in enumerate(demand):
        G.add_node(("d", j), demand=d)
    for i in range(len(supply)):
        for j in range(len(demand)):
            G.add_edge(("s", i), ("d", j), weight=cost[i, j])
    _, flow = nx.network_simplex(G)
    return [(i, j, x) for i in range(len(supply))
            for (_, j), x in flow[("s", i)].items() if x != 0]


def _float_plan(supply: np.ndarray, demand: np.ndarray, cost: np.ndarray
                ) -> list[tuple[int, int, float]]:
    """POT's network simplex (``ot.emd``) in floats."""
    from dpfix.numbers.numeric import require

    ot = require("ot")
    a = np.asarray(supply, dtype=float)
    b = np.asarray(demand, dtype=float)
    a, b = a / a.sum(), b / b.sum()
    P = ot.emd(a, b, np.ascontiguousarray(cost, dtype=float), numItermax=10**9)
    rows, cols = np.nonzero(P > 0)
    return [(int(i), int(j), float(P[i, j])) for i, j in zip(rows, cols, strict=True)]


def transport_plan(supply: Any, demand: Any, cost: Any, *, solver: str | None = None
                   ) -> list[tuple[int, int, Any]]:
    """An optimal plan of the transport problem, checked: pieces ``(i, j, x)``, ``x > 0``.

    ``min sum x_ij cost_ij`` over ``x >= 0`` with row sums ``supply`` and column sums
    ``demand``. ``solver``: ``"exact"`` (networkx's network simplex on Fractions; the
    default for exact inputs) or ``"pot"`` (POT's ``ot.emd``, floats; the default
    otherwise). The exact plan is checked exactly: non-negative, its sums exactly the
    supplies and demands.

    Examples
    --------
    >>> F = Fraction
    >>> transport_plan([F(1, 2), F(1, 2)], [F(1, 4), F(3, 4)], np.array([[0, 1], [1, 0]]))
    [(0, 0, Fraction(1, 4)), (0, 1, Fraction(1, 4)), (1, 1, Fraction(1, 2))]
    """
    cost = np.asarray(cost)
    exact = all(is_exact_number(v) for v in [*supply, *demand])
    solver = solver or ("exact" if exact else "pot")
    if solver == "pot":
        return _float_plan(np.asarray(supply, dtype=float), np.asarray(demand, dtype=float),
                           cost)
    if solver != "exact":
        raise ValueError(f"solver: 'exact' or 'pot', got {solver!r}")
    if not exact:
        raise ExactnessError("transport_plan: the exact solver needs exact supplies and demands")
    s = [to_fraction(v) for v in supply]
    d = [to_fraction(v) for v in demand]
    if sum(s) != sum(d):
        raise ValueError(f"supply and demand: sums {sum(s)} and {sum(d)} differ")
    c = exact_array(cost, "cost", ndim=2)
    pieces = _exact_plan(s, d, c)
    _check_plan(pieces, s, d)
    return pieces


def _check_plan(pieces: list, supply: list, demand: list) -> None:
    rs, cs = [Fraction(0)] * len(supply), [Fraction(0)] * len(demand)
    for i, j, x in pieces:
        if x < 0:
            raise RuntimeError(f"transport_plan: negative flow {x} at ({i}, {j})")
        rs[i] += x
        cs[j] += x
    if rs != list(supply) or cs != list(demand):
        raise RuntimeError("transport_plan: the plan's sums are not exactly the supplies and "
                           "demands")


@dataclass
class JointMechanism:
    """A mechanism on pairs: an exact ``N x N`` matrix over the flattened states.

    Attributes
    ----------
    matrix : numpy.ndarray
        ``T[s, j]`` (Fractions), ``N = n_a n_b`` (the product of the ``n_c``).
    shape : tuple of int
    unit : str
        ``"cell"`` (grid) or ``"row"`` (king's graph).
    lam : Fraction
        The level claimed on the unit's graph.
    fixed_point : numpy.ndarray
        The flattened joint target ``z``.
    constructor : str
    params : dict
    """

    matrix: np.ndarray
    shape: tuple[int, ...]
    unit: str
    lam: Fraction
    fixed_point: np.ndarray
    constructor: str
    params: dict = field(default_factory=dict)
    build_seconds: float = 0.0

    def privacy_ratio(self) -> Fraction:
        """The largest ``T[s, j] / T[t, j]`` over the edges, both ways (``inf``: a zero
        against a positive entry)."""
        worst = Fraction(1)
        for s, t in joint_edges(self.shape, self.unit):
            for u, v in ((self.matrix[s], self.matrix[t]), (self.matrix[t], self.matrix[s])):
                for x, y in zip(u, v, strict=True):
                    if x > 0 and y == 0:
                        return Fraction(10**30)
                    if y > 0 and x / y > worst:
                        worst = x / y
        return worst

    def count_error(self) -> Fraction:
        """``sum_s z_s sum_j T[s, j] d(s, j)``, ``d`` the L1 distance of the pairs."""
        D = ground_cost(self.shape)
        z = self.fixed_point
        return sum((z[s] * sum(self.matrix[s, j] * int(D[s, j]) for j in range(D.shape[1]))
                    for s in range(D.shape[0]) if z[s] != 0), Fraction(0))

    def check(self) -> None:
        """Rows sum to 1, entries non-negative, ``z T = z``, ``lam``-DP on the graph, exactly."""
        T, z = self.matrix, self.fixed_point
        if any(v < 0 for v in T.flat) or any(sum(r) != 1 for r in T):
            raise RuntimeError(f"{self.constructor}: not a stochastic matrix")
        if list(z.dot(T)) != list(z):
            raise RuntimeError(f"{self.constructor}: z T != z")
        if self.privacy_ratio() > self.lam:
            raise RuntimeError(f"{self.constructor}: not lam-DP on the {self.unit} graph")


def _target(z: Any, shape: Any) -> tuple[np.ndarray, tuple[int, ...], bool]:
    arr = np.asarray(z, dtype=object)
    if shape is None:
        if arr.ndim not in (2, 3):
            raise ValueError("z: a 2-D array (n_a x n_b) or 3-D (n_a x n_b x n_c), or give "
                             "shape=")
        shape = arr.shape
    shape = tuple(int(v) for v in shape)
    exact = all(is_exact_number(v) for v in arr.flat)
    Z = exact_array(arr.ravel(), "z").reshape(shape) if exact else \
        np.asarray(z, dtype=float).reshape(shape)
    if (Z < 0).any() or sum(Z.flat) == 0:
        raise ValueError("z: non-negative, with a positive entry")
    total = sum(Z.flat)
    if exact and total != 1:
        raise ValueError(f"z: must sum to 1 exactly, sums to {total}")
    return (Z if exact else Z / float(total)), shape, exact


def _noise_matrices(shape: tuple[int, ...], lams: Any, exact: bool) -> list[np.ndarray]:
    """``G_c`` per column: Fractions on the exact path, floats otherwise."""
    mats = [geometric_matrix(n, Fraction(lam)) for n, lam in zip(shape, lams, strict=True)]
    return mats if exact else [np.asarray(G, dtype=float) for G in mats]


def product_remap(z: Any, lams: tuple[Any, ...], shape: Any = None, *,
                  cost: str = "count-error", solver: str | None = None
                  ) -> tuple[Remap, list, dict]:
    """The optimal transport remap ``R`` of ``w = z (G_a x G_b)`` onto ``z`` (a tuple of
    ``k`` columns: ``w = z (G_1 x ... x G_k)``, one level per column in ``lams``).

    ``cost="count-error"`` (default): the cost of sending the noisy state ``m`` to
    ``j`` is the count error it adds, ``K[m, j] / w_m`` (:func:`posterior_cost`), so
    that ``R`` has the least count error of all ``z``-preserving remaps of the product
    noise (docs/joint.md section 3). ``cost="ground"``: the L1 distance ``|m - j|``.
    Columns with ``z_j = 0`` are left out (they receive nothing).

    Returns
    -------
    (Remap, pieces, info)
        ``pieces`` ``(m, j, share)`` (Fractions on the exact path); ``info`` the solver,
        the number of pieces and the seconds.
    """
    if cost not in COSTS:
        raise ValueError(f"cost: one of {', '.join(COSTS)}, got {cost!r}")
    start = time.perf_counter()
    Z, shape, exact = _target(z, shape)
    mats = _noise_matrices(shape, lams, exact)
    w = apply_axes(Z, mats).ravel()  # w_m = sum_s z_s G[s, m], m = m_a n_b + m_b
    zf = Z.ravel()
    cols = np.flatnonzero(np.asarray([v != 0 for v in zf]))
    if cost == "ground":
        C = ground_cost(shape, cols)
    else:
        K = posterior_cost(Z, *mats, cols=cols)
        C = K / w[:, None]
    if not exact and solver == "exact":
        raise ExactnessError("product_remap: the exact solver needs an exact z")
    flows = transport_plan(list(w), list(zf[cols]), C, solver=solver)
    pieces = sorted((m, int(cols[j]), x / w[m]) for m, j, x in flows)
    pieces = _cover(pieces, len(w), cols, shape, exact)
    info = {"solver": solver or ("exact" if exact else "pot"), "pieces": len(pieces),
            "cost": cost, "seconds": time.perf_counter() - start}
    return Remap.from_pieces(len(w), pieces), pieces, info


def _cover(pieces: list, N: int, cols: np.ndarray, shape: tuple[int, ...],
           exact: bool) -> list:
    """Every state with a piece: a float supply too small for the solver goes whole to the
    nearest support column (post-processing; the exact path never needs it)."""
    seen = {m for m, _, _ in pieces}
    if len(seen) == N:
        return pieces
    if exact:
        raise RuntimeError("product_remap: the exact plan leaves a state without a piece")
    D = ground_cost(shape, cols)
    extra = [(m, int(cols[int(np.argmin(D[m]))]), 1.0) for m in range(N) if m not in seen]
    return sorted(pieces + extra)


def product_transport(z: Any, shape: Any = None, *, lam: Any = None, unit: str = "cell",
                      cost: str = "count-error") -> JointMechanism:
    """The product of truncated geometric mechanisms, then the optimal transport remap.

    ``T = (G_a x G_b) R`` with ``G_c`` the truncated geometric mechanism of column
    ``c`` at ``lam_c`` (:func:`joint_lams`: ``lam`` each under unit ``cell``, ``lam_a
    lam_b <= lam`` under ``row``) and ``R`` the exact optimal transport remap of
    ``z (G_a x G_b)`` onto ``z`` (:func:`product_remap`). ``T`` fixes ``z`` and is
    ``lam``-DP on the unit's graph (docs/joint.md section 2, proved); both are checked
    exactly. Exact path only (Fractions; the release samples the same construction
    with :func:`joint_sampler` without building ``T``).

    Parameters
    ----------
    z : array_like
        The joint target, ``n_a x n_b`` (or flat with ``shape``), exact, summing to 1.
    lam : rational or pair
        The level on the unit's graph (or the pair ``(lam_a, lam_b)``).
    unit : ``"cell"`` or ``"row"``
    cost : ``"count-error"`` or ``"ground"``

    Returns
    -------
    JointMechanism

    Examples
    --------
    >>> F = Fraction
    >>> M = product_transport([[F(1, 2), F(0)], [F(0), F(1, 2)]], lam=2)
    >>> M.count_error(), M.privacy_ratio()
    (Fraction(2, 3), Fraction(2, 1))
    """
    start = time.perf_counter()
    Z, shape, exact = _target(z, shape)
    if not exact:
        raise ExactnessError("product_transport: exact z and rational lam (use joint_sampler "
                             "for the float release)")
    lams = joint_lams(unit, lam=lam, k=len(shape))
    level = max(lams) if unit == "cell" else math.prod(lams)
    R, pieces, info = product_remap(Z, lams, cost=cost)
    G = JointSampler(shape, lams, R).matrix()
    mech = JointMechanism(G, shape, unit, level, Z.ravel(), "product-transport",
                          {"lams": lams, "cost": cost, **info})
    mech.check()
    mech.build_seconds = time.perf_counter() - start
    return mech


def joint_sampler(z: Any, shape: Any = None, *, eps: float | None = None, lam: Any = None,
                  unit: str = "cell", cost: str = "count-error") -> JointSampler:
    """The ``(G_a x G_b) R`` sampler of :func:`product_transport`, ``O(n_a n_b)`` memory.

    Float ``z`` with ``eps``: the per-column rationals ``lam_c <= e^(eps)`` (``cell``) or
    ``<= e^(eps/2)`` (``row``), proved; ``R`` by POT's network simplex in floats (its
    accuracy bears on the fixed point only, not on privacy). Exact ``z`` and ``lam``:
    the exact remap.

    Examples
    --------
    >>> s = joint_sampler([[0.5, 0.0], [0.0, 0.5]], eps=1.0, unit="row")
    >>> s.lams[0] == s.lams[1], s.remap.n
    (True, 4)
    """
    Z, shape, _ = _target(z, shape)
    lams = joint_lams(unit, lam=lam, eps=eps, k=len(shape))
    R, _, _ = product_remap(Z, lams, cost=cost)
    return JointSampler(shape, lams, R)


def _exact_lp(eq: list, b: list, ub: list, c: list, d: int) -> tuple[list, Fraction, dict]:
    """cdd's exact LP over ``d`` variables (sparse rows ``[(k, v), ...]``: ``a.x = rhs``
    for ``eq`` and ``b``, ``a.x <= 0`` for ``ub``) with its certificate, checked exactly:
    the dual multipliers combine the rows into the objective and their bound equals the
    count error of the primal solution (:func:`dpfix.numbers.exact_lp.certificate_holds`)."""
    zero = Fraction(0)
    lp = exact_lp(c, [(dict(coeffs), zero) for coeffs in ub],
                  [(dict(coeffs), rhs) for coeffs, rhs in zip(eq, b, strict=True)],
                  certify=True, who="grid_lp_optimum")
    bound = sum((y * rhs for y, rhs in zip(lp.eq_dual, b, strict=True)), zero)
    return lp.primal, lp.optimum, {"dual_bound": bound, "multipliers": len(lp.basis)}


def grid_lp_optimum(z: Any, shape: Any = None, *, lam: Any, unit: str = "cell"
                    ) -> JointMechanism:
    """The least count error over ``F_grid``: every ``lam``-DP mechanism on the unit's
    graph with ``z T = z``, by cdd's exact LP (Fractions; small sizes, ``N <= 16``).

    The optimum is certified exactly: cdd's dual multipliers ``u`` (non-negative on the
    ratio rows) combine the constraints into the objective, ``c = sum_r u_r a_r``, and
    their bound ``-sum_r u_r b_r`` equals the count error of the primal solution, which
    is checked feasible (:meth:`JointMechanism.check`): weak duality makes it optimal.
    (The ratio rows imply ``T >= 0`` on a connected graph.)

    Examples
    --------
    >>> F = Fraction
    >>> grid_lp_optimum([[F(1, 2), F(0)], [F(0), F(1, 2)]], lam=2).count_error()
    Fraction(1, 2)
    """
    Z, shape, exact = _target(z, shape)
    if not exact:
        raise ExactnessError("grid_lp_optimum: exact z and rational lam")
    lam = to_fraction(lam, "lam")
    N = math.prod(shape)
    zf = Z.ravel()
    edges = joint_edges(shape, unit)
    zero = Fraction(0)
    ub = [[(u * N + j, Fraction(1)), (v * N + j, -lam)]  # T[u, j] - lam T[v, j] <= 0
          for s, t in edges for u, v in ((s, t), (t, s)) for j in range(N)]
    eq = [[(s * N + j, Fraction(1)) for j in range(N)] for s in range(N)]
    b = [Fraction(1)] * N
    pos = [s for s in range(N) if zf[s] != 0]
    for j in range(N - 1):  # the N-th follows from the others and the row sums
        eq.append([(s * N + j, zf[s]) for s in pos])
        b.append(zf[j])
    D = ground_cost(shape)
    c = [zf[s] * int(D[s, j]) if zf[s] != 0 else zero for s in range(N) for j in range(N)]
    start = time.perf_counter()
    x, value, cert = _exact_lp(eq, b, ub, c, N * N)
    T = np.array(x, dtype=object).reshape(N, N)
    mech = JointMechanism(T, shape, unit, lam, zf, "grid-lp",
                          {"value": value, "certificate": cert})
    mech.check()
    mech.build_seconds = time.perf_counter() - start
    return mech
