"""The polytopes U, F[z], R_F and R_U as exact H-representations (MATH.md sections 3 and 4).

Each is a :class:`Polytope` in the convention ``A_ub x <= b_ub``,
``A_eq x = b_eq``, where ``x`` is the point flattened row-major: ``T`` (``n x n``)
for ``U`` and ``F``, ``B`` (``k x n``, ``k = 2^(n-1)``) for ``R_F`` and ``R_U``.
Every coefficient is a :class:`fractions.Fraction`; floats are refused.

- ``U(n, lam)``: the ``2n(n-1)`` neighbour inequalities, for each column ``j``
  and ``i = 0..n-2`` first ``T[i,j] - lam T[i+1,j] <= 0`` then
  ``T[i+1,j] - lam T[i,j] <= 0``; and the ``n`` row sums ``T 1 = 1``.
  ``T >= 0`` is NOT listed: it follows, as ``T[i] <= lam^2 T[i]`` with ``lam > 1``.
- ``F(n, lam, z)``: ``U`` plus ``z T = z`` (all ``n`` columns; one is redundant).
- ``R_F(n, lam, z)`` (Theorem 3): ``-B <= 0``, ``z Psi B = z``, ``Psi B 1 = 1``.
- ``R_U(n, lam)`` (Theorem 10): ``-B <= 0``, ``Psi B 1 = 1``.

Vertex enumeration, adjacency, implicit equalities and linear programs use
pycddlib's exact module ``cdd.gmp`` (its row ``[b, a]`` means ``b + a.x >= 0``).
Extremality is decided by the exact rank of the active constraints (Section 4).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Literal

import cdd
import cdd.gmp
import networkx as nx
import numpy as np

from dpfix.exact import ExactnessError, exact_array, exact_lam, nullspace, probability_vector
from dpfix.scales import psi

__all__ = ["Polytope", "U", "F", "RF", "RU", "VERTEX_LIMITS"]

#: Largest ``n`` at which :meth:`Polytope.vertices` runs without ``limit=None``:
#: every case up to it takes seconds, the next ``n`` takes more than minutes.
VERTEX_LIMITS: dict[str, int] = {"U": 4, "F": 4, "R_F": 3, "R_U": 4}

_WHY = {  # cdd.gmp, lam = 2, uniform z, a shared 2-core machine
    "U": "U at n = 4 has 664 vertices in 0.2 s; at n = 5 cdd ran over 10 minutes",
    "F": "F at n = 4 has up to 1924 vertices in about 1 s; at n = 5 cdd ran over 5 minutes",
    "R_F": "R_F at n = 3 takes 0.01 s; at n = 4 (32 variables) cdd ran over 14 minutes",
    "R_U": "R_U at n = 4 has 2192 vertices in 4 s; at n = 5 cdd ran over 5 minutes",
}

Row = dict[int, Fraction]


def _sparse_rank(rows: list[Row]) -> int:
    """Exact rank of sparse rows (column -> Fraction) by forward elimination.

    The same answer as :func:`dpfix.exact.rank` (the tests compare them), but the
    constraint rows have 2 to ``n`` non-zeros each, so this is far quicker at
    ``n`` around 10 than the dense Gauss-Jordan.
    """
    pivots: dict[int, Row] = {}  # leading column -> row scaled to 1 there
    for row in rows:
        r = {c: v for c, v in row.items() if v != 0}
        while r:
            c = min(r)
            p = pivots.get(c)
            if p is None:
                inv = 1 / r[c]
                pivots[c] = {k: v * inv for k, v in r.items()}
                break
            f = r[c]
            for k, v in p.items():  # every k >= c, so r's leading column moves right
                nv = r.get(k, 0) - f * v
                if nv:
                    r[k] = nv
                else:
                    r.pop(k, None)
    return len(pivots)


class Polytope:
    """A polytope ``{x : A_ub x <= b_ub, A_eq x = b_eq}`` with exact rational data.

    Build one with :func:`U`, :func:`F`, :func:`RF` or :func:`RU`. Points are
    exact matrices of shape :attr:`shape` (``n x n`` for U and F, ``k x n`` for
    R_F and R_U), flattened row-major into the variables.

    Attributes
    ----------
    name : ``"U"``, ``"F"``, ``"R_F"`` or ``"R_U"``.
    n, lam, z : the size, ``lam = e^eps`` (Fraction) and the target (None for U, R_U).
    shape : shape of a point; ``num_variables`` is its size.
    A_ub, b_ub, A_eq, b_eq : the H-representation as exact object arrays.

    Examples
    --------
    >>> P = U(2, 2)
    >>> P.A_ub.shape, P.A_eq.shape, P.dimension()
    ((4, 4), (2, 4), 2)
    >>> P.is_extreme([[1, 0], [1, 0]]), P.is_extreme([["1/2", "1/2"], ["1/2", "1/2"]])
    (True, False)
    """

    def __init__(self, name: str, n: int, lam: Fraction, z: np.ndarray | None,
                 shape: tuple[int, int], ub: list[tuple[Row, Fraction]],
                 eq: list[tuple[Row, Fraction]]) -> None:
        self.name, self.n, self.lam, self.z, self.shape = name, n, lam, z, shape
        self.num_variables = shape[0] * shape[1]
        self._ub, self._eq = ub, eq
        self._dense: dict[str, np.ndarray] = {}
        self._poly: Any = None
        self._vertices: list[np.ndarray] | None = None
        self._graph: nx.Graph | None = None
        self._dimension: int | None = None

    def __repr__(self) -> str:
        zs = "" if self.z is None else ", z=[" + ", ".join(str(v) for v in self.z) + "]"
        return f"{self.name}(n={self.n}, lam={self.lam}{zs})"

    # -- the H-representation --------------------------------------------------------------
    def _densify(self, key: str) -> np.ndarray:
        if key not in self._dense:
            rows = self._ub if key.endswith("ub") else self._eq
            A = np.full((len(rows), self.num_variables), Fraction(0), dtype=object)
            for r, (coef, _) in enumerate(rows):
                for c, v in coef.items():
                    A[r, c] = v
            self._dense["A" + key[1:]] = A
            self._dense["b" + key[1:]] = np.array([b for _, b in rows], dtype=object)
        return self._dense[key].copy()  # callers may write to it; the rows stay intact

    @property
    def A_ub(self) -> np.ndarray:
        """Inequality coefficients: the polytope satisfies ``A_ub x <= b_ub``."""
        return self._densify("A_ub")

    @property
    def b_ub(self) -> np.ndarray:
        """Inequality right-hand sides."""
        return self._densify("b_ub")

    @property
    def A_eq(self) -> np.ndarray:
        """Equality coefficients: ``A_eq x = b_eq`` (explicit equalities only)."""
        return self._densify("A_eq")

    @property
    def b_eq(self) -> np.ndarray:
        """Equality right-hand sides."""
        return self._densify("b_eq")

    # -- points --------------------------------------------------------------------------
    def _flat(self, X: Any, name: str = "X") -> list[Fraction]:
        # A dpfix.mechanism.Mechanism (floor 3, so not imported here): duck-typed by
        # its two storage attributes, exact ``matrix`` and float ``log_matrix``.
        if hasattr(X, "matrix") and hasattr(X, "log_matrix"):
            if X.matrix is None:
                raise ExactnessError(f"{name}: a float Mechanism given where an exact one is "
                                     "required; build it with a rational lam")
            X = X.matrix
        arr = exact_array(X, name)
        if arr.shape != self.shape:
            raise ValueError(f"{name}: expected shape {self.shape} for {self!r}, got {arr.shape}")
        return list(arr.ravel())

    @staticmethod
    def _dot(coef: Row, x: list[Fraction]) -> Fraction:
        return sum((v * x[c] for c, v in coef.items()), Fraction(0))

    def contains(self, X: Any) -> bool:
        """Whether the exact point ``X`` satisfies every constraint.

        ``X`` is a matrix of :attr:`shape` or an exact :class:`~dpfix.mechanism.Mechanism`.
        Raises ``ValueError`` if ``X`` has the wrong shape and
        :class:`~dpfix.exact.ExactnessError` if it holds floats.

        Examples
        --------
        >>> U(2, 2).contains([["1/3", "2/3"], ["2/3", "1/3"]]), U(2, 2).contains([[1, 0], [0, 1]])
        (True, False)
        """
        x = self._flat(X)
        return (all(self._dot(a, x) <= b for a, b in self._ub)
                and all(self._dot(a, x) == b for a, b in self._eq))

    def _active_rows(self, x: list[Fraction]) -> list[Row]:
        return [a for a, _ in self._eq] + [a for a, b in self._ub if self._dot(a, x) == b]

    def active_constraints(self, X: Any) -> np.ndarray:
        """The equality rows and the tight inequality rows at ``X``, as an exact matrix.

        Rows are coefficient vectors over the flattened variables, equalities
        first, in the order of ``A_eq`` then ``A_ub``. Raises ``ValueError`` if
        ``X`` is not in the polytope.

        Examples
        --------
        >>> U(2, 2).active_constraints([[1, 0], [1, 0]]).shape
        (4, 4)
        """
        x = self._flat(X)
        if not self.contains(X):
            raise ValueError(f"X: not a point of {self!r}")
        rows = self._active_rows(x)
        A = np.full((len(rows), self.num_variables), Fraction(0), dtype=object)
        for r, coef in enumerate(rows):
            for c, v in coef.items():
                A[r, c] = v
        return A

    def is_extreme(self, X: Any) -> bool:
        """Whether ``X`` is a vertex: in the polytope, active constraints of full rank.

        The rank is exact (MATH.md section 4). Points outside the polytope give
        False (not an error).

        Examples
        --------
        >>> F(2, 2, ["1/2", "1/2"]).is_extreme([["2/3", "1/3"], ["1/3", "2/3"]])
        True
        """
        if not self.contains(X):
            return False
        return _sparse_rank(self._active_rows(self._flat(X))) == self.num_variables

    # -- cdd ----------------------------------------------------------------------------
    def _cdd_matrix(self, objective: list[Fraction] | None = None) -> Any:
        d = self.num_variables
        rows, lin = [], []
        for r, (coef, b) in enumerate(self._eq + self._ub):
            row = [b] + [Fraction(0)] * d  # b - a.x >= 0 (or = 0)
            for c, v in coef.items():
                row[c + 1] = -v
            rows.append(row)
            if r < len(self._eq):
                lin.append(r)
        kw: dict[str, Any] = {}
        if objective is not None:
            kw = {"obj_type": cdd.LPObjType.MAX, "obj_func": [Fraction(0)] + objective}
        return cdd.gmp.matrix_from_array(rows, lin_set=lin, rep_type=cdd.RepType.INEQUALITY, **kw)

    def _guard(self, what: str, limit: int | None | Literal["default"]) -> None:
        if limit == "default":
            limit = VERTEX_LIMITS[self.name]
        if limit is not None and self.n > limit:
            raise ValueError(
                f"{self.name}(n={self.n}).{what}(): vertex enumeration is limited to "
                f"n <= {limit} ({_WHY[self.name]}); pass limit=None to lift the guard"
            )

    def _enumerate(self) -> None:
        if self._vertices is not None:
            return
        self._poly = cdd.gmp.polyhedron_from_matrix(self._cdd_matrix())
        gens = cdd.gmp.copy_generators(self._poly)
        arr = gens.array
        # A bounded polyhedron has only points (t = 1): no rays, no lines.
        if gens.lin_set or any(row[0] != 1 for row in arr):
            raise RuntimeError(f"{self!r}: cdd returned rays or lines; the polytope is unbounded")
        order = sorted(range(len(arr)), key=lambda i: tuple(arr[i][1:]))
        self._vertices = [np.array(arr[i][1:], dtype=object).reshape(self.shape) for i in order]
        new = {old: pos for pos, old in enumerate(order)}
        adjacency = cdd.gmp.copy_adjacency(self._poly)
        G = nx.Graph()
        for pos, V in enumerate(self._vertices):
            G.add_node(pos, matrix=V)
        for old, nbrs in enumerate(adjacency):
            G.add_edges_from((new[old], new[o]) for o in nbrs)
        self._graph = G

    def vertices(self, limit: int | None | Literal["default"] = "default") -> list[np.ndarray]:
        """Exact vertices (cdd.gmp double description), sorted lexicographically.

        Parameters
        ----------
        limit : refuse (``ValueError``) when ``n`` exceeds it; ``"default"`` uses
            ``VERTEX_LIMITS[name]``; ``None`` lifts the guard.

        Examples
        --------
        >>> [V.tolist() for V in F(2, 2, ["1/2", "1/2"]).vertices()]
        [[[Fraction(1, 3), Fraction(2, 3)], [Fraction(2, 3), Fraction(1, 3)]], \
[[Fraction(2, 3), Fraction(1, 3)], [Fraction(1, 3), Fraction(2, 3)]]]
        """
        self._guard("vertices", limit)
        self._enumerate()
        assert self._vertices is not None
        return [V.copy() for V in self._vertices]

    def graph(self, limit: int | None | Literal["default"] = "default") -> nx.Graph:
        """The vertex-edge graph: nodes are indices into :meth:`vertices` (attribute
        ``"matrix"``), edges are cdd's vertex adjacencies.

        Examples
        --------
        >>> sorted(U(2, 2).graph().degree())
        [(0, 2), (1, 2), (2, 2), (3, 2)]
        """
        self._guard("graph", limit)
        self._enumerate()
        assert self._graph is not None
        return self._graph.copy()

    def dimension(self) -> int:
        """Exact dimension: ``num_variables`` minus the rank of all equalities,
        explicit and implicit (inequalities tight on the whole polytope, found by
        cdd.gmp's exact LPs).

        Examples
        --------
        >>> F(2, 2, [1, 0]).dimension(), F(2, 2, ["1/2", "1/2"]).dimension()
        (0, 1)
        """
        if self._dimension is None:
            implicit = cdd.gmp.implicit_linearity_rows(self._cdd_matrix())
            m = len(self._eq)
            rows = [a for a, _ in self._eq] + [self._ub[r - m][0] for r in sorted(implicit)]
            self._dimension = self.num_variables - _sparse_rank(rows)
        return self._dimension

    # -- linear programs ----------------------------------------------------------------
    def maximize(self, C: Any) -> tuple[Fraction, np.ndarray]:
        """Maximise ``<C, X>`` over the polytope exactly (cdd.gmp dual simplex).

        Returns the optimal value and an optimal vertex. If cdd's optimum is not
        a vertex, it is moved along the optimal face (where ``<C, .>`` is
        constant) until it is one.

        Examples
        --------
        >>> value, X = U(2, 2).maximize([[1, 0], [0, 1]])
        >>> value, X.tolist()
        (Fraction(4, 3), [[Fraction(2, 3), Fraction(1, 3)], [Fraction(1, 3), Fraction(2, 3)]])
        """
        c = self._flat(C, "C")
        lp = cdd.gmp.linprog_from_matrix(self._cdd_matrix(c))
        cdd.gmp.linprog_solve(lp)
        if lp.status != cdd.LPStatusType.OPTIMAL:
            raise RuntimeError(f"{self!r}: cdd LP ended with status {lp.status.name}")
        x = [Fraction(v) for v in lp.primal_solution]
        x = self._to_vertex(x)
        value = sum((a * b for a, b in zip(c, x, strict=True)), Fraction(0))
        if value != lp.obj_value:
            raise RuntimeError(f"{self!r}: LP value {lp.obj_value} != <C, X> = {value}")
        return value, np.array(x, dtype=object).reshape(self.shape)

    def _to_vertex(self, x: list[Fraction]) -> list[Fraction]:
        """Move an optimal point along its face until its active rows have full rank.

        At an optimum, every direction ``u`` in the nullspace of the active rows is
        feasible both ways, so ``<C, u> = 0``: the value never changes.
        """
        while _sparse_rank(self._active_rows(x)) < self.num_variables:
            N = nullspace(self.active_constraints(np.array(x, dtype=object).reshape(self.shape)))
            u = list(N[:, 0])
            # Largest step t with every non-tight a.(x + t u) <= b; bounded since P is.
            steps = [(b - self._dot(a, x)) / au for a, b in self._ub
                     if (au := self._dot(a, u)) > 0]
            if not steps:
                u = [-v for v in u]
                steps = [(b - self._dot(a, x)) / au for a, b in self._ub
                         if (au := self._dot(a, u)) > 0]
            t = min(steps)
            x = [xi + t * ui for xi, ui in zip(x, u, strict=True)]
        return x

    def optimal_face_vertices(self, C: Any,
                              limit: int | None | Literal["default"] = "default"
                              ) -> list[np.ndarray]:
        """The vertices maximising ``<C, X>`` (the optimal face's vertices), in
        :meth:`vertices` order; used to check Corollary 3.

        Examples
        --------
        >>> len(U(2, 2).optimal_face_vertices([[1, 0], [1, 0]]))
        1
        """
        c = np.array(self._flat(C, "C"), dtype=object).reshape(self.shape)
        verts = self.vertices(limit)
        values = [(c * V).sum() for V in verts]
        best = max(values)
        return [V for V, v in zip(verts, values, strict=True) if v == best]


# -- constructors -------------------------------------------------------------------------
def _check_n(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise ValueError(f"n: must be an integer >= 2, got {n!r}")
    if n < 2:
        raise ValueError(f"n: must be an integer >= 2, got {n}")
    return int(n)


def _u_rows(n: int, lam: Fraction) -> tuple[list[tuple[Row, Fraction]], list[tuple[Row, Fraction]]]:
    zero, one = Fraction(0), Fraction(1)
    ub: list[tuple[Row, Fraction]] = []
    for j in range(n):
        for i in range(n - 1):
            a, b = i * n + j, (i + 1) * n + j
            ub.append(({a: one, b: -lam}, zero))  # T[i,j] <= lam T[i+1,j]
            ub.append(({b: one, a: -lam}, zero))  # T[i+1,j] <= lam T[i,j]
    eq = [({i * n + j: one for j in range(n)}, one) for i in range(n)]
    return ub, eq


def _fixed_point_rows(n: int, z: np.ndarray, W: np.ndarray) -> list[tuple[Row, Fraction]]:
    """``sum_m W[m] X[m, j] = z_j`` for each column ``j`` of an ``m x n`` point ``X``."""
    return [({m * n + j: W[m] for m in range(len(W)) if W[m] != 0}, z[j]) for j in range(n)]


def U(n: int, lam: Any) -> Polytope:
    """``U``: the eps-DP count mechanisms (row-stochastic, neighbour-indistinguishable columns).

    Examples
    --------
    >>> U(3, 2).A_ub.shape, U(3, 2).dimension()
    ((12, 9), 6)
    """
    n, lam = _check_n(n), exact_lam(lam)
    ub, eq = _u_rows(n, lam)
    return Polytope("U", n, lam, None, (n, n), ub, eq)


def F(n: int, lam: Any, z: Any) -> Polytope:
    """``F[z]``: the mechanisms of ``U`` with fixed point ``z T = z``.

    Examples
    --------
    >>> F(3, 2, ["1/3", "1/3", "1/3"]).A_eq.shape
    (6, 9)
    """
    n, lam = _check_n(n), exact_lam(lam)
    zv = probability_vector(z, exact=True, n=n)
    ub, eq = _u_rows(n, lam)
    return Polytope("F", n, lam, zv, (n, n), ub, eq + _fixed_point_rows(n, zv, zv))


def _r_rows(n: int, lam: Fraction) -> tuple[np.ndarray, list[tuple[Row, Fraction]],
                                             list[tuple[Row, Fraction]]]:
    P = psi(n, lam)
    k = P.shape[1]
    ub = [({v: Fraction(-1)}, Fraction(0)) for v in range(k * n)]
    eq = [({m * n + j: P[i, m] for m in range(k) for j in range(n)}, Fraction(1))
          for i in range(n)]  # (Psi B 1)_i = 1
    return P, ub, eq


def RF(n: int, lam: Any, z: Any) -> Polytope:
    """``R_F``: amounts ``B >= 0`` (``k x n``) of the scales Psi with ``Psi B`` in ``F[z]``
    (Theorem 3: ``T = Psi B`` maps R_F onto F).

    Examples
    --------
    >>> RF(2, 2, ["1/2", "1/2"]).vertices()[0].tolist()
    [[Fraction(0, 1), Fraction(1, 1)], [Fraction(1, 1), Fraction(0, 1)]]
    """
    n, lam = _check_n(n), exact_lam(lam)
    zv = probability_vector(z, exact=True, n=n)
    P, ub, eq = _r_rows(n, lam)
    W = zv @ P  # z Psi
    return Polytope("R_F", n, lam, zv, P.shape[::-1], ub, eq + _fixed_point_rows(n, zv, W))


def RU(n: int, lam: Any) -> Polytope:
    """``R_U`` (Theorem 10): amounts ``B >= 0`` with ``Psi B 1 = 1``; maps onto ``U``.

    Examples
    --------
    >>> len(RU(2, 2).vertices())
    4
    """
    n, lam = _check_n(n), exact_lam(lam)
    P, ub, eq = _r_rows(n, lam)
    return Polytope("R_U", n, lam, None, P.shape[::-1], ub, eq)
