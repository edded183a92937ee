"""The polytopes U, F[z], R_F and R_U as exact H-representations (docs/math_notes.md
sections 2 and 3).

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

``lam`` may be an exact real algebraic number (:func:`dpfix.algebraic`; docs/math_notes.md
section 1): the coefficients then lie in the number field ``Q(lam)``, and
``contains``, ``is_extreme``, ``active_constraints``, ``dimension``, ``vertices``,
``count_vertices``, ``sample_vertices`` and ``has_vertex`` work exactly over it
(:mod:`dpfix.theory.algebraic_enumeration`: Normaliz's number-field input, and U's
structural count), as do ``maximize`` and ``optimal_face_vertices`` (the best of the
exact vertices: a linear function attains its maximum over a polytope at a vertex);
the other methods need a rational ``lam`` and say so.

One room, though long: :class:`Polytope` (its methods are the questions asked of every
polytope of the paper, each sent to the backends of :mod:`dpfix.theory.enumeration`
under one guard) and the four constructors that build its rows and set the symmetry
group its methods use; the (eps, delta) forms of :mod:`dpfix.theory.delta` and the
neighbour graphs of :mod:`dpfix.theory.graphs` come in through the same rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from math import lcm
from typing import Any, Literal

import cdd.gmp
import networkx as nx
import numpy as np

from dpfix.numbers.algebraic import ExactKey, exact_field_array, is_algebraic
from dpfix.numbers.deprecation import warn_deprecated
from dpfix.numbers.exact import (
    ExactnessError,
    exact_array,
    exact_lam,
    nullspace,
    probability_vector,
    to_fraction,
)
from dpfix.numbers.exact_lp import exact_lp, quiet_c_stdout
from dpfix.numbers.numeric import check_n
from dpfix.sampling.source import numpy_generator
from dpfix.theory import algebraic_enumeration as _alg
from dpfix.theory import enumeration as _en
from dpfix.theory import graphs as _gr
from dpfix.theory.enumeration import HRep, Symmetry, VertexArray, resolve_backend
from dpfix.theory.scales import graph_scales, psi

__all__ = ["Polytope", "U", "F", "RF", "RU", "VERTEX_LIMITS", "LIMITS", "check_delta", "check_kind",
           "u_rows", "delta_rows", "fixed_point_rows", "normaliz_advice"]

#: Largest ``n`` at which :meth:`Polytope.vertices` and :meth:`Polytope.graph` run
#: with cdd without ``limit=None``: every case up to it takes seconds, the next ``n``
#: takes more than minutes.
VERTEX_LIMITS: dict[str, int] = {"U": 4, "F": 4, "R_F": 3, "R_U": 4}

#: The default guards by backend and by what is asked: ``"vertices"`` (the list of
#: Fraction matrices), ``"graph"`` (the whole graph) and ``"count"`` (counts, compact
#: vertex arrays, orbits, degree ranges). Normaliz at n = 5: U has 55,725 vertices
#: (3-4 s), F(uniform z) 1,169,850 (about a minute, 1.5 GB; too many to hold as
#: Fractions: about 10 GB); U's whole graph would take about 30 minutes (its
#: degree range by orbits takes seconds); R_F at n = 5 ran over 8 minutes.
LIMITS: dict[str, dict[str, dict[str, int]]] = {
    "cdd": {"vertices": VERTEX_LIMITS, "graph": VERTEX_LIMITS, "count": VERTEX_LIMITS},
    "normaliz": {"vertices": {"U": 5, "F": 4, "R_F": 4, "R_U": 4},
                 "graph": {"U": 4, "F": 4, "R_F": 4, "R_U": 4},
                 "count": {"U": 5, "F": 5, "R_F": 4, "R_U": 4}},
    # over Q(lam), lam algebraic: Normaliz's number-field input (U(5): 19 to 34 s against
    # 4 s at a rational lam); U's counts from n = 5 on go to the structure count
    "normaliz-field": {"vertices": VERTEX_LIMITS, "graph": {},
                       "count": {"U": 4, "F": 4, "R_F": 3, "R_U": 4}},
}

#: ``backend="auto"`` counts U's vertices through their structure from this n on
#: (U(5): 2.2 s against Normaliz's 3.4 s), up to ``STRUCTURE_LIMIT`` by default.
STRUCTURE_FROM_N = 5
STRUCTURE_LIMIT = 6
#: The structural count's default guard for ``U_G``: every connected graph on 5 nodes
#: takes under 70 s (benchmarks/results/graphs.json); n = 6 is not measured.
GRAPH_STRUCTURE_LIMIT = 5

_WHY = {  # a shared 2-core machine, lam = 2, uniform z
    "cdd": {
        "U": "U at n = 4 has 664 vertices in 0.2 s; at n = 5 cdd ran over 10 minutes",
        "F": "F at n = 4 has up to 1924 vertices in about 1 s; at n = 5 cdd ran over 5 minutes",
        "R_F": "R_F at n = 3 takes 0.01 s; at n = 4 (32 variables) cdd ran over 14 minutes",
        "R_U": "R_U at n = 4 has 2192 vertices in 4 s; at n = 5 cdd ran over 5 minutes",
    },
    "normaliz": {
        "U": "Normaliz: U at n = 5 has 55,725 vertices in seconds (its whole graph would take "
             "about 30 minutes: use count_vertices or degree_range); at n = 6 (25,827,726 "
             "vertices) only count_vertices, through U's structure, finishes (71 s)",
        "F": "Normaliz: F at n = 5 has about 1.2 million vertices (a minute, 1.5 GB; use "
             "count_vertices or vertex_array: as Fractions they would need about 10 GB)",
        "R_F": "Normaliz: R_F at n = 4 takes about 2 s; at n = 5 it ran over 8 minutes",
        "R_U": "Normaliz: R_U at n = 4 takes under a second; n = 5 is not measured",
    },
    "normaliz-field": {
        "U": "over Q(lam) Normaliz takes 19 to 34 s for U at n = 5 (count_vertices uses "
             "U's structure, about 1.5 s)",
        "F": "over Q(lam) F at n = 5 has over a million vertices",
        "R_F": "over Q(lam) R_F at n = 4 takes Normaliz many times its seconds at a rational "
               "lam",
        "R_U": "over Q(lam) R_U at n = 5 is not measured",
    },
}

Row = dict[int, Fraction]


def normaliz_advice(name: str, n: int, what: str = "count") -> str | None:
    """What an install without PyNormaliz needs for ``name`` at ``n`` when Normaliz would
    take it but cdd's guard refuses it: the ``enumeration`` extra (lifting cdd's guard
    would run it for minutes to hours). None when PyNormaliz is installed, when cdd takes
    it, or when Normaliz's own guard (:data:`LIMITS`) refuses it too.

    Parameters
    ----------
    name : ``"U"``, ``"F"``, ``"R_F"`` or ``"R_U"``.
    n : int
    what : ``"vertices"``, ``"graph"`` or ``"count"`` (the keys of :data:`LIMITS`).

    Examples
    --------
    >>> from dpfix.theory import enumeration
    >>> advice = normaliz_advice("R_F", 4)
    >>> advice is None if enumeration.normaliz_available() else advice.startswith(
    ...     "without PyNormaliz, cdd enumerates R_F for n <= 3 only")
    True
    >>> normaliz_advice("R_F", 3) is None  # cdd takes it
    True
    """
    cdd_top = LIMITS["cdd"][what].get(name, 0)
    if _en.normaliz_available() or n <= cdd_top or n > LIMITS["normaliz"][what].get(name, 0):
        return None
    return (f"without PyNormaliz, cdd enumerates {name} for n <= {cdd_top} only (it takes "
            "minutes to hours beyond); Normaliz takes it in seconds: pip install "
            "'dpfix[enumeration]'")


def _sparse_rank(rows: list[Row]) -> int:
    """Exact rank of sparse rows (column -> Fraction) by forward elimination.

    The same answer as :func:`dpfix.numbers.exact.rank` (the tests compare them), but the
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
    n, lam, z : the size, ``lam = e^eps`` (Fraction, or Algebraic: :attr:`algebraic`) and the
        target (None for U, R_U).
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

    def __init__(self, name: str, n: int, lam: Any, z: np.ndarray | None,
                 shape: tuple[int, int], ub: list[tuple[Row, Fraction]],
                 eq: list[tuple[Row, Fraction]]) -> None:
        self.name, self.n, self.lam, self.z, self.shape = name, n, lam, z, shape
        self.num_variables = shape[0] * shape[1]
        self._ub, self._eq = ub, eq
        self._dense: dict[str, np.ndarray] = {}
        self._raw: dict[str, VertexArray] = {}  # backend -> vertices in its own order
        self._sorted: dict[str, VertexArray] = {}  # backend -> vertices sorted by value
        self._cdd_adjacency: list[set[int]] | None = None
        self._graphs: dict[str, nx.Graph] = {}
        self._masks: dict[str, np.ndarray] = {}
        self._orbits: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._keys: dict[str, set[tuple[Any, ...]]] = {}
        self._dimension: int | None = None
        #: The symmetry group (set by U, F, RF and RU; None: no structure is used).
        self.symmetry: Symmetry | None = None
        #: True for U(n, lam) itself: its vertices can be counted by their structure.
        self._u_structure = False
        #: The delta of (eps, delta)-DP (U and F with ``delta=``; 0 otherwise).
        self.delta = Fraction(0)
        #: The neighbour graph (a checked networkx graph, docs/graphs.md); None: the path.
        self.neighbour_graph: nx.Graph | None = None
        self._field_vertices: list[list[Any]] | None = None  # lam algebraic: Normaliz's

    @property
    def algebraic(self) -> bool:
        """Whether ``lam`` is an algebraic number (:func:`dpfix.algebraic`), the
        coefficients in ``Q(lam)``."""
        return is_algebraic(self.lam)

    def _rational_only(self, method: str) -> None:
        if self.algebraic:
            raise ValueError(f"{self!r}.{method}(): needs a rational lam; over Q(lam) "
                             "contains, is_extreme, active_constraints, dimension, vertices, "
                             "count_vertices, sample_vertices, has_vertex, maximize and "
                             "optimal_face_vertices are exact")

    def __repr__(self) -> str:
        zs = "" if self.z is None else ", z=[" + ", ".join(str(v) for v in self.z) + "]"
        ds = f", delta={self.delta}" if self.delta else ""
        gs = "" if self.neighbour_graph is None else \
            f", graph={_gr.graph_label(self.neighbour_graph)}"
        return f"{self.name}(n={self.n}, lam={self.lam}{zs}{ds}{gs})"

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
        # A dpfix.theory.mechanism.Mechanism (floor 3, so not imported here): duck-typed by
        # its two storage attributes, exact ``matrix`` and float ``log_matrix``.
        if hasattr(X, "matrix") and hasattr(X, "log_matrix"):
            if X.matrix is None:
                raise ExactnessError(f"{name}: a float Mechanism given where an exact one is "
                                     "required; build it with a rational lam")
            X = X.matrix
        arr = (exact_field_array(X, name, self.lam.field) if self.algebraic
               else exact_array(X, name))
        if arr.shape != self.shape:
            raise ValueError(f"{name}: expected shape {self.shape} for {self!r}, got {arr.shape}")
        return list(arr.ravel())

    @staticmethod
    def _dot(coef: Row, x: list[Fraction]) -> Fraction:
        return sum((v * x[c] for c, v in coef.items()), Fraction(0))

    def contains(self, X: Any) -> bool:
        """Whether the exact point ``X`` satisfies every constraint.

        ``X`` is a matrix of :attr:`shape` or an exact :class:`~dpfix.theory.mechanism.Mechanism`.
        Raises ``ValueError`` if ``X`` has the wrong shape and
        :class:`~dpfix.numbers.exact.ExactnessError` if it holds floats.

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

        The rank is exact (docs/math_notes.md section 3). Points outside the polytope give
        False (not an error).

        Examples
        --------
        >>> F(2, 2, ["1/2", "1/2"]).is_extreme([["2/3", "1/3"], ["1/3", "2/3"]])
        True
        """
        if not self.contains(X):
            return False
        return _sparse_rank(self._active_rows(self._flat(X))) == self.num_variables

    # -- enumeration ----------------------------------------------------------------------
    @property
    def hrep(self) -> HRep:
        """The H-representation as a :class:`dpfix.theory.enumeration.HRep` (sparse exact rows)."""
        return HRep(self.num_variables, self._ub, self._eq)

    def write(self, path: Any, format: str | None = None, what: str | None = None) -> Any:
        """Write the polytope for cdd, Normaliz or polymake (:mod:`dpfix.theory.formats`).

        Parameters
        ----------
        path : str or pathlib.Path
            The file, written whole (on an error it is left as it was).
        format : ``"cdd-ine"``, ``"cdd-ext"``, ``"normaliz"`` or ``"polymake"``;
            by default from the suffix (``.ine``, ``.ext``, ``.in``, ``.json``).
        what : ``"H"`` (the constraints) or ``"V"`` (the vertices, enumerated
            under :meth:`vertices`' guard); by default ``"V"`` for ``"cdd-ext"``,
            else ``"H"``.

        Returns
        -------
        pathlib.Path
            ``path``; :func:`dpfix.theory.formats.read_polytope` reads it back.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     text = F(2, 2, ["1/2", "1/2"]).write(pathlib.Path(tmp) / "F.ine").read_text()
        >>> print(text.split("begin")[1].strip().splitlines()[0])  # 4 equations, 4 inequalities
        8 5 rational
        """
        self._rational_only("write")
        from dpfix.theory import formats

        fmt = formats.resolve_format(path, format)
        what = formats.FORMATS[fmt] if what is None else what
        if what not in ("H", "V"):
            raise ValueError(f"what: 'H' (constraints) or 'V' (vertices), got {what!r}")
        if what == "H":
            return formats.write_polytope(path, hrep=self.hrep, format=fmt, shape=self.shape,
                                          name=repr(self))
        return formats.write_polytope(path, vertices=self.vertices(), format=fmt,
                                      shape=self.shape, name=repr(self))

    def _guard(self, what: str, limit: int | None | Literal["default"], backend: str,
               method: str) -> None:
        if limit == "default":
            limit = LIMITS[backend][what].get(self.name, VERTEX_LIMITS.get(self.name, 4))
        if limit is not None and self.n > limit:
            advice = normaliz_advice(self.name, self.n, what) if backend == "cdd" else None
            if advice is not None:  # cdd would take minutes to hours; Normaliz seconds
                raise ValueError(f"{self.name}(n={self.n}).{method}(): {advice}")
            why = _WHY[backend].get(self.name, "")
            raise ValueError(
                f"{self.name}(n={self.n}).{method}(): vertex enumeration is limited to "
                f"n <= {limit} with backend {backend!r} ({why}); pass limit=None to lift "
                "the guard"
            )

    def _raw_vertices(self, backend: str) -> VertexArray:
        if backend not in self._raw:
            if backend == "cdd":
                va, self._cdd_adjacency = _en.cdd_enumerate(self.hrep, self.shape)
            else:
                va = _en.enumerate_vertices(self.hrep, self.shape, backend)
            self._raw[backend] = va
        return self._raw[backend]

    def _sorted_vertices(self, backend: str) -> VertexArray:
        if backend not in self._sorted:
            self._sorted[backend] = self._raw_vertices(backend).sorted()
        return self._sorted[backend]

    def vertices(self, limit: int | None | Literal["default"] = "default",
                 backend: str = "auto") -> list[np.ndarray]:
        """Exact vertices, sorted lexicographically (the same list from either backend).

        Parameters
        ----------
        limit : refuse (``ValueError``) when ``n`` exceeds it; ``"default"`` uses
            ``LIMITS[backend]["vertices"][name]``; ``None`` lifts the guard.
        backend : ``"auto"`` (Normaliz when installed, see :mod:`dpfix.theory.enumeration`),
            ``"cdd"`` (cdd.gmp double description) or ``"normaliz"``.

        Examples
        --------
        >>> [V.tolist() for V in F(2, 2, ["1/2", "1/2"]).vertices()]
        [[[Fraction(1, 3), Fraction(2, 3)], [Fraction(2, 3), Fraction(1, 3)]], \
[[Fraction(2, 3), Fraction(1, 3)], [Fraction(1, 3), Fraction(2, 3)]]]
        """
        if self.algebraic:
            return self._algebraic_vertices(limit, backend)
        which = resolve_backend(backend, "vertices", self.num_variables)
        self._guard("vertices", limit, which, "vertices")
        return self._sorted_vertices(which).to_list()

    def _field_backend(self, backend: str, what: str) -> str:
        if backend not in ("auto", "normaliz"):
            raise ValueError(f"{self!r}: over Q(lam) the vertices come from Normaliz's "
                             f"number-field input (backend 'auto' or 'normaliz'), not {backend!r}")
        if not _en.normaliz_available():
            raise ImportError(f"{self!r}: vertices over Q(lam) need PyNormaliz built with "
                              "e-antic: pip install 'dpfix[enumeration]'")
        return "normaliz-field"

    def _algebraic_vertices(self, limit: int | None | Literal["default"], backend: str
                            ) -> list[np.ndarray]:
        """The vertices over Q(lam), sorted by exact value, entry by entry."""
        which = self._field_backend(backend, "vertices")
        self._guard("vertices", limit, which, "vertices")
        if self._field_vertices is None:
            raw = _alg.normaliz_field_vertices(self._ub, self._eq, self.num_variables,
                                               self.lam.field)
            self._field_vertices = sorted(raw, key=lambda v: [ExactKey(x) for x in v])
        return [np.array(v, dtype=object).reshape(self.shape) for v in self._field_vertices]

    def vertex_array(self, limit: int | None | Literal["default"] = "default",
                     backend: str = "auto") -> VertexArray:
        """The vertices held compactly (:class:`dpfix.theory.enumeration.VertexArray`: integer
        numerators, one denominator per vertex), in the backend's order; for vertex
        sets too large for :meth:`vertices` (F at n = 5).

        Examples
        --------
        >>> va = U(3, 2).vertex_array()
        >>> len(va), va.numerators.shape
        (27, (27, 9))
        """
        self._rational_only("vertex_array")
        which = resolve_backend(backend, "count", self.num_variables)
        self._guard("count", limit, which, "vertex_array")
        return self._raw_vertices(which)

    def count_vertices(self, limit: int | None | Literal["default"] = "default",
                       backend: str = "auto", processes: int = 1) -> int:
        """The number of vertices. With Normaliz the vertices are never brought into
        Python (Normaliz counts them; memory stays Normaliz's: 1.5 GB for the
        1,169,850 vertices of F(5, 2, uniform z)).

        ``backend="structure"`` (U only) counts the vertices of U through their
        structure, column by column from the faces of the cone of scales, without
        enumerating them (:func:`dpfix.theory.enumeration.u_vertex_count`): quicker than
        Normaliz at n = 5 (2 s against 3-4 s) and the one that reaches n = 6; "auto"
        takes it for U from n = 5 on. ``processes`` splits its search. For ``U_G`` (a
        neighbour graph) it counts through the faces of ``C_G``
        (:func:`dpfix.theory.graphs.u_graph_vertex_count`, docs/graphs.md section 6), one
        face per orbit of the graph's automorphisms.

        Examples
        --------
        >>> U(3, 2).count_vertices(), F(3, 2, ["1/3"] * 3).count_vertices(backend="cdd")
        (27, 36)
        >>> U(4, 2).count_vertices(backend="structure")
        664
        """
        if self.algebraic:
            return self._algebraic_count(limit, backend)
        if backend == "structure" or (backend == "auto" and self._u_structure
                                      and self.n >= STRUCTURE_FROM_N):
            if not self._u_structure:
                raise ValueError(f"{self!r}: backend='structure' counts the vertices of U only")
            if limit == "default":
                limit = STRUCTURE_LIMIT if self.neighbour_graph is None else \
                    GRAPH_STRUCTURE_LIMIT
            if limit is not None and self.n > limit:
                raise ValueError(f"U(n={self.n}).count_vertices(): the structural count is "
                                 f"limited to n <= {limit}; pass limit=None to lift the guard")
            if self.neighbour_graph is not None:
                return _gr.u_graph_vertex_count(self.neighbour_graph, self.lam,
                                                processes=processes)
            return _en.u_vertex_count(self.n, self.lam, processes=processes)
        which = resolve_backend(backend, "count", self.num_variables)
        self._guard("count", limit, which, "count_vertices")
        if which in self._raw:
            return len(self._raw[which])
        return _en.count_vertices(self.hrep, which)

    def _algebraic_count(self, limit: int | None | Literal["default"], backend: str) -> int:
        """The count over Q(lam): U's structure (from n = 5 on, or asked, when lam generates
        its field), else Normaliz's number-field input."""
        structure = self._u_structure and self.lam == self.lam.field.gen and (
            backend == "structure" or (backend == "auto" and self.n >= STRUCTURE_FROM_N))
        if backend == "structure" and not structure:
            raise ValueError(f"{self!r}: backend='structure' counts the vertices of U only "
                             "(over Q(lam): with lam the generator of its field)")
        if structure:
            top = STRUCTURE_LIMIT if limit == "default" else limit
            if top is not None and self.n > top:
                raise ValueError(f"U(n={self.n}).count_vertices(): the structural count is "
                                 f"limited to n <= {top}; pass limit=None to lift the guard")
            return _alg.u_vertex_count_algebraic(self.n, self.lam)
        which = self._field_backend(backend, "count")
        self._guard("count", limit, which, "count_vertices")
        if self._field_vertices is not None:
            return len(self._field_vertices)
        return _alg.normaliz_field_count(self._ub, self._eq, self.num_variables,
                                         self.lam.field)

    def sample_vertices(self, k: int, seed: Any = 0,
                        limit: int | None | Literal["default"] = "default",
                        backend: str = "auto") -> list[np.ndarray]:
        """``k`` vertices drawn (seeded, without replacement) from the whole enumeration,
        as exact matrices; every vertex, in :meth:`vertices` order, when there are at
        most ``k``. For the checks at sizes where the vertices are too many to test
        one by one (F at n = 5).

        Examples
        --------
        >>> len(U(3, 2).sample_vertices(5)), len(U(3, 2).sample_vertices(100))
        (5, 27)

        Over Q(lam) the same draw from :meth:`vertices` (under its guard):

        >>> from dpfix.numbers.algebraic import algebraic
        >>> len(U(3, algebraic("x^2 - x - 1", 1.6)).sample_vertices(100))
        27
        """
        if self.algebraic:
            verts = self._algebraic_vertices(limit, backend)
            if len(verts) <= k:
                return verts
            idx = np.sort(numpy_generator(seed).choice(len(verts), k, replace=False))
            return [verts[int(i)] for i in idx]
        which = resolve_backend(backend, "count", self.num_variables)
        self._guard("count", limit, which, "sample_vertices")
        va = self._raw_vertices(which)
        if len(va) <= k:
            return self._sorted_vertices(which).to_list()
        idx = np.sort(numpy_generator(seed).choice(len(va), k, replace=False))
        return [va[int(i)] for i in idx]

    def has_vertex(self, X: Any, backend: str = "auto") -> bool:
        """Whether ``X`` is one of the enumerated vertices (exact; by their integer rows,
        so it works on :meth:`vertex_array` sizes). Enumerates without a guard.

        Examples
        --------
        >>> U(2, 2).has_vertex([[1, 0], [1, 0]]), U(2, 2).has_vertex([["1/2"] * 2] * 2)
        (True, False)

        Over Q(lam): against :meth:`vertices`, by exact value (no guard there either).

        >>> from dpfix.numbers.algebraic import algebraic
        >>> U(2, algebraic("x^2 - x - 1", 1.6)).has_vertex([[1, 0], [1, 0]])
        True
        """
        if self.algebraic:
            if "field" not in self._keys:
                verts = self._algebraic_vertices(None, backend)
                self._keys["field"] = {tuple(V.ravel()) for V in verts}
            return tuple(self._flat(X)) in self._keys["field"]
        which = resolve_backend(backend, "count", self.num_variables)
        if which not in self._keys:
            self._keys[which] = self._raw_vertices(which).keys()
        key = next(iter(VertexArray.from_matrices([self._flat(X)], self.shape).keys()))
        return key in self._keys[which]

    def psi_images(self, limit: int | None | Literal["default"] = "default",
                   backend: str = "auto") -> VertexArray:
        """``Psi B`` for every vertex ``B`` of R_F or R_U, row ``i`` the image of row ``i``
        of :meth:`vertex_array`: exact, in integers (Psi scaled to an integer matrix and
        applied to all numerators at once), so that Theorem 3 and Proposition 1 can be
        checked on tens of thousands of vertices.

        Examples
        --------
        >>> R = RF(3, 2, ["1/3"] * 3)
        >>> from dpfix.theory.scales import graph_scales, psi
        >>> all((psi(3, 2) @ B == T).all() for B, T in zip(R.vertex_array(), R.psi_images()))
        True
        """
        if self.name not in ("R_F", "R_U"):
            raise ValueError(f"{self!r}: psi_images is for R_F and R_U")
        self._rational_only("psi_images")
        va = self.vertex_array(limit, backend)
        k, n = self.shape
        P = psi(n, self.lam)
        q = lcm(*(v.denominator for v in P.ravel()))
        P_int = np.array([[int(v * q) for v in row] for row in P], dtype=object)
        num = va.numerators.reshape(len(va), k, n)
        big = max(abs(int(v)) for v in P_int.ravel())
        if (va.numerators.dtype != object and len(va)
                and int(np.abs(va.numerators).max()) * k * big < 2**62):
            P_int = P_int.astype(np.int64)
        else:
            num = num.astype(object)
        T_num = np.einsum("ik,mkj->mij", P_int, num).reshape(len(va), n * n)
        den = va.denominators.astype(T_num.dtype) * q
        return VertexArray(T_num, den, (n, n))

    def _incidence(self, backend: str) -> np.ndarray:
        if backend not in self._masks:
            self._masks[backend] = _en.tight_masks(self.hrep, self._sorted_vertices(backend))
        return self._masks[backend]

    def graph(self, limit: int | None | Literal["default"] = "default",
              backend: str = "auto") -> nx.Graph:
        """The vertex-edge graph: nodes are indices into :meth:`vertices` (attribute
        ``"matrix"``). cdd returns the adjacency with the vertices; with Normaliz it is
        computed from the incidence of vertices and inequalities
        (:func:`dpfix.theory.enumeration.neighbours`). Both give the same graph.

        Examples
        --------
        >>> sorted(U(2, 2).graph().degree())
        [(0, 2), (1, 2), (2, 2), (3, 2)]
        """
        self._rational_only("graph")
        which = resolve_backend(backend, "graph", self.num_variables)
        self._guard("graph", limit, which, "graph")
        if which not in self._graphs:
            va = self._sorted_vertices(which)
            G = nx.Graph()
            for pos, V in enumerate(va):
                G.add_node(pos, matrix=V)
            if which == "cdd":
                raw = self._raw["cdd"]
                where = {k: pos for pos, k in enumerate(map(tuple, va.full_rows().tolist()))}
                new = [where[k] for k in map(tuple, raw.full_rows().tolist())]
                assert self._cdd_adjacency is not None
                for old, nbrs in enumerate(self._cdd_adjacency):
                    G.add_edges_from((new[old], new[o]) for o in nbrs)
            else:
                G.add_edges_from(_en.edges(self._incidence(which), self.dimension()))
            self._graphs[which] = G
        return self._graphs[which].copy()

    def summary(self, backend: str = "auto", diameter_max_vertices: int = 1000,
                degree_max_orbits: int = 20_000,
                limit: int | None | Literal["default"] = "default") -> dict[str, Any]:
        """Vertex count, dimension, orbits, degree range, edges and (small graphs)
        diameter, as cheaply as each allows: what ``dpfix explore`` prints.

        Degrees come from one vertex per orbit (:meth:`degree_range`), skipped when
        there are more than ``degree_max_orbits`` orbits (F at n = 5 with a z
        without symmetry: 1.2 million orbits, hours); the diameter needs the whole
        graph and is computed up to ``diameter_max_vertices`` vertices.

        Returns
        -------
        dict
            ``polytope`` (repr), ``dimension``, ``vertices``, ``orbits``,
            ``symmetry_order``, ``degree`` (``(min, max)`` or None), ``edges`` (or
            None), ``diameter`` (or None), ``backend``, ``seconds``.

        Examples
        --------
        >>> s = U(3, 2).summary()
        >>> s["vertices"], s["orbits"], s["degree"], s["edges"], s["diameter"]
        (27, 4, (6, 10), 102, 3)
        """
        self._rational_only("summary")
        import time

        start = time.perf_counter()
        which = resolve_backend(backend, "count", self.num_variables)
        self._guard("count", limit, which, "summary")
        reps, sizes = self.orbits(limit, which)
        nv = int(sizes.sum())
        row: dict[str, Any] = {
            "polytope": repr(self), "dimension": self.dimension(), "vertices": nv,
            "orbits": len(reps), "symmetry_order": (self.symmetry.order if self.symmetry
                                                     else 1),
            "degree": None, "edges": None, "diameter": None, "backend": which}
        if 0 < len(reps) <= degree_max_orbits:
            lo, hi, edges = self.degree_range(limit, which)
            row.update(degree=(lo, hi), edges=edges)
        if 0 < nv <= diameter_max_vertices:
            G = self.graph(limit=None, backend=backend)
            if nx.is_connected(G):
                row["diameter"] = nx.diameter(G)
        row["seconds"] = round(time.perf_counter() - start, 2)
        return row

    # -- symmetry -------------------------------------------------------------------------
    def orbits(self, limit: int | None | Literal["default"] = "default",
               backend: str = "auto") -> tuple[VertexArray, np.ndarray]:
        """The vertices up to :attr:`symmetry`: one representative per orbit (a
        :class:`~dpfix.theory.enumeration.VertexArray`) and the orbit sizes.

        U is invariant under permuting its columns and reversing its rows (a group of
        order ``2 n!``); F and R_F keep the column permutations that fix z and the
        reversal when z is symmetric; R_U keeps both (the reversal permutes the scales).

        Examples
        --------
        >>> reps, sizes = U(3, 2).orbits()
        >>> len(reps), int(sizes.sum()), U(3, 2).symmetry.order
        (4, 27, 12)
        """
        self._rational_only("orbits")
        which = resolve_backend(backend, "count", self.num_variables)
        self._guard("count", limit, which, "orbits")
        va = self._raw_vertices(which)
        if which not in self._orbits:
            sym = self.symmetry or Symmetry(((*range(self.shape[0]),),),
                                            tuple((j,) for j in range(self.shape[1])))
            self._orbits[which] = _en.orbits(va, sym)
        first, sizes = self._orbits[which]
        return va.take(first), sizes.copy()

    def degree_range(self, limit: int | None | Literal["default"] = "default",
                     backend: str = "auto") -> tuple[int, int, int]:
        """``(min degree, max degree, edges)`` of the vertex-edge graph without building
        it: degrees are computed for one vertex per orbit of :attr:`symmetry` (an
        automorphism keeps degrees) from the incidence; ``edges`` is
        ``sum(orbit size * degree) / 2``.

        Examples
        --------
        >>> U(3, 2).degree_range()
        (6, 10, 102)
        """
        self._rational_only("degree_range")
        which = resolve_backend(backend, "count", self.num_variables)
        self._guard("count", limit, which, "degree_range")
        va = self._raw_vertices(which)
        if not len(va):
            return 0, 0, 0
        _, sizes = self.orbits(limit, which)
        first = self._orbits[which][0]
        masks = _en.tight_masks(self.hrep, va)  # raw order, as the orbit representatives
        dim = self.dimension()
        degrees = [len(_en.neighbours(masks, int(u), dim)) for u in first]
        total = sum(int(s) * d for s, d in zip(sizes, degrees, strict=True))
        if total % 2:
            raise RuntimeError(f"{self!r}: the degrees sum to an odd {total}")
        return min(degrees), max(degrees), total // 2

    def dimension(self) -> int:
        """Exact dimension: ``num_variables`` minus the rank of all equalities,
        explicit and implicit (inequalities tight on the whole polytope, found by
        cdd.gmp's exact LPs). Over Q(lam) (``lam`` algebraic): the affine rank of the
        vertices, exact in the field (under :meth:`vertices`' guard).

        Examples
        --------
        >>> F(2, 2, [1, 0]).dimension(), F(2, 2, ["1/2", "1/2"]).dimension()
        (0, 1)
        """
        if self._dimension is None and self.algebraic:
            # over Q(lam): the affine rank of the vertices (no exact LP over the field here)
            self._algebraic_vertices("default", "auto")
            vs = self._field_vertices or []
            rows = [{c: x - vs[0][c] for c, x in enumerate(v) if x != vs[0][c]} for v in vs[1:]]
            self._dimension = _sparse_rank(rows) if vs else -1
        if self._dimension is None:
            with quiet_c_stdout():  # cdd's LPs, whose C code may print
                implicit = cdd.gmp.implicit_linearity_rows(_en.cdd_matrix(self.hrep))
            m = len(self._eq)
            rows = [a for a, _ in self._eq] + [self._ub[r - m][0] for r in sorted(implicit)]
            self._dimension = self.num_variables - _sparse_rank(rows)
        return self._dimension

    # -- linear programs ----------------------------------------------------------------
    def maximize(self, C: Any) -> tuple[Any, np.ndarray]:
        """Maximise ``<C, X>`` over the polytope exactly (cdd.gmp dual simplex).

        Returns the optimal value and an optimal vertex. If cdd's optimum is not
        a vertex, it is moved along the optimal face (where ``<C, .>`` is
        constant) until it is one.

        Examples
        --------
        >>> value, X = U(2, 2).maximize([[1, 0], [0, 1]])
        >>> value, X.tolist()
        (Fraction(4, 3), [[Fraction(2, 3), Fraction(1, 3)], [Fraction(1, 3), Fraction(2, 3)]])

        Over Q(lam) (``lam`` algebraic) there is no exact LP solver here, but the
        maximum of a linear function over a polytope is attained at a vertex: it is
        the best of :meth:`vertices` (exact, under its guard), the first such vertex
        returned.

        >>> from dpfix.numbers.algebraic import algebraic
        >>> phi = algebraic("x^2 - x - 1", 1.6)
        >>> value, X = U(2, phi).maximize([[1, 0], [0, 1]])
        >>> value == 2 * phi / (phi + 1), X[0, 0] == phi / (phi + 1)
        (True, True)
        """
        c = self._flat(C, "C")
        if self.algebraic:
            verts = self._algebraic_vertices("default", "auto")
            value, hits = _en.best_values(verts, c)
            return value, verts[int(hits[0])]
        lp = exact_lp(c, self._ub, self._eq, maximize=True, who=repr(self))
        x = self._to_vertex(lp.primal)
        value = sum((a * b for a, b in zip(c, x, strict=True)), Fraction(0))
        if value != lp.optimum:
            raise RuntimeError(f"{self!r}: LP value {lp.optimum} != <C, X> = {value}")
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

    def face(self, C: Any) -> Polytope:
        """The face maximising ``<C, X>`` as a polytope of its own: these constraints
        plus the equation ``<C, X> = max`` (the maximum by an exact LP). Its vertices
        are the optimal face's vertices, found without enumerating this polytope
        (Corollary 3 at n = 5, where R_F is beyond enumeration).

        Examples
        --------
        >>> P = U(3, 2)
        >>> P.face([[1, 0, 0], [0, 0, 0], [0, 0, 0]]).vertices()[0].tolist()  # T[0,0] = 1
        [[Fraction(1, 1), Fraction(0, 1), Fraction(0, 1)], \
[Fraction(1, 1), Fraction(0, 1), Fraction(0, 1)], [Fraction(1, 1), Fraction(0, 1), Fraction(0, 1)]]
        >>> P.face([[1, 1, 1]] * 3).count_vertices()  # <1, T> = 3 on all of U
        27
        """
        self._rational_only("face")
        c = self._flat(C, "C")
        value, _ = self.maximize(C)
        row = {i: v for i, v in enumerate(c) if v != 0}
        eq = self._eq + ([(row, value)] if row else [])
        return Polytope(self.name, self.n, self.lam, self.z, self.shape, self._ub, eq)

    def optimal_face_vertices(self, C: Any,
                              limit: int | None | Literal["default"] = "default",
                              backend: str = "auto") -> list[np.ndarray]:
        """The vertices maximising ``<C, X>`` (the optimal face's vertices), in
        :meth:`vertices` order; used to check Corollary 3.

        Examples
        --------
        >>> len(U(2, 2).optimal_face_vertices([[1, 0], [1, 0]]))
        1

        Over Q(lam) the same, from the exact :meth:`vertices` over the field:

        >>> from dpfix.numbers.algebraic import algebraic
        >>> len(U(2, algebraic("x^2 - x - 1", 1.6)).optimal_face_vertices([[1, 0], [1, 0]]))
        1
        """
        c = self._flat(C, "C")
        if self.algebraic:
            verts = self._algebraic_vertices(limit, backend)
            return [verts[int(i)] for i in _en.best_values(verts, c)[1]]
        which = resolve_backend(backend, "vertices", self.num_variables)
        self._guard("vertices", limit, which, "optimal_face_vertices")
        va = self._sorted_vertices(which)
        _, hits = _en.best_values(va, c)  # exact, in integers
        return [va[int(i)] for i in hits]


# -- constructors -------------------------------------------------------------------------
def u_rows(n: int, lam: Any, delta: Fraction = Fraction(0)
           ) -> tuple[list[tuple[Row, Fraction]], list[tuple[Row, Fraction]]]:
    """The rows of ``U(n, lam, delta)`` on the path (``(coefficients, bound)``, ``T``
    flattened row-major): for ``delta = 0`` per column ``j`` and pair ``i``,
    ``T_ij <= lam T_(i+1)j`` then the reverse, and the row sums (the path's
    :func:`dpfix.theory.graphs.neighbour_rows`); for ``delta > 0`` the subset form
    (:func:`delta_rows`).

    Examples
    --------
    >>> ub, eq = u_rows(3, Fraction(2))
    >>> len(ub), len(eq), ub[0]
    (12, 3, ({0: Fraction(1, 1), 3: Fraction(-2, 1)}, Fraction(0, 1)))
    >>> len(u_rows(3, Fraction(2), Fraction(1, 10))[0])
    33
    """
    if delta:
        return delta_rows(n, lam, delta)
    return _gr.neighbour_rows(n, _path_ratios(n, lam))


def _path_ratios(n: int, lam: Fraction) -> list[tuple[int, int, Fraction]]:
    """The path's edges ``(i, i + 1, lam)``."""
    return [(i, i + 1, lam) for i in range(n - 1)]


def fixed_point_rows(n: int, z: np.ndarray, W: np.ndarray) -> list[tuple[Row, Fraction]]:
    """``sum_m W[m] X[m, j] = z_j`` for each column ``j`` of an ``m x n`` point ``X``
    (``W = z`` for ``z T = z``, ``W = z Psi`` for ``z Psi B = z``).

    Examples
    --------
    >>> fixed_point_rows(2, [Fraction(1, 2)] * 2, [Fraction(1, 2), 0])
    [({0: Fraction(1, 2)}, Fraction(1, 2)), ({1: Fraction(1, 2)}, Fraction(1, 2))]
    """
    return [({m * n + j: W[m] for m in range(len(W)) if W[m] != 0}, z[j]) for j in range(n)]


def _column_blocks(z: np.ndarray) -> tuple[tuple[int, ...], ...]:
    """Columns with equal ``z_j``: permuting them keeps ``z T = z``."""
    blocks: dict[Fraction, list[int]] = {}
    for j, v in enumerate(z):
        blocks.setdefault(v, []).append(j)
    return tuple(tuple(b) for b in blocks.values())


def _reversals(reverse: tuple[int, ...], z: np.ndarray | None) -> tuple[tuple[int, ...], ...]:
    """The row permutations kept: the identity, and ``reverse`` when z is symmetric
    (reversing the rows of T maps ``z T = z`` to ``z R T = z``, the same when ``z R = z``)."""
    identity = tuple(range(len(reverse)))
    if z is None or list(z) == list(z[::-1]):
        return (identity, reverse) if reverse != identity else (identity,)
    return (identity,)


def _scale_reversal(P: np.ndarray) -> tuple[int, ...]:
    """The permutation ``pi`` of the scales with ``R Psi = Psi Pi``: reversing a scale
    gives a scale, so reversing the rows of ``T = Psi B`` permutes the rows of ``B``."""
    where = {tuple(P[:, m]): m for m in range(P.shape[1])}
    return tuple(where[tuple(P[::-1, m])] for m in range(P.shape[1]))


def check_kind(kind: Any, kinds: Iterable[str], *, name: str = "kind",
               stacklevel: int = 3) -> str:
    """Which polytope (``kind=``, the engine's ``over=``) in its one spelling, one of
    ``kinds``: ``"RF"``, ``"RU"`` and their forms (``"RF_delta"``, ``"RF-pairs"``). The
    spelling of the polytopes' own names (:attr:`Polytope.name`: ``"R_F"``, ``"R_U"``) is
    taken with a :class:`~dpfix.numbers.deprecation.DpfixDeprecationWarning`.

    Parameters
    ----------
    kind : str
    kinds : iterable of str
        The kinds the caller takes.
    name : str
        The caller's parameter (``"over"`` in the engine), for the messages.
    stacklevel : int
        As for :func:`warnings.warn`, counted from the caller of :func:`check_kind` plus
        one (3: the warning points at the line that called the caller).

    Examples
    --------
    >>> check_kind("RF", ("U", "F", "RF"))
    'RF'
    >>> check_kind("RV", ("U", "F", "RF"))
    Traceback (most recent call last):
    ValueError: kind: one of 'U', 'F', 'RF', got 'RV'
    """
    kinds = tuple(kinds)
    if isinstance(kind, str) and kind.startswith(("R_F", "R_U")):
        new = "R" + kind[2:]
        warn_deprecated(f"{name}={kind!r} is deprecated; use {name}={new!r} (the old spelling "
                        "goes in the next release)", stacklevel=stacklevel)
        kind = new
    if kind not in kinds:
        raise ValueError(f"{name}: one of {', '.join(map(repr, kinds))}, got {kind!r}")
    return kind


def check_delta(delta: Any) -> Fraction:
    """``delta`` as an exact Fraction in ``[0, 1)`` (floats are refused).

    Parameters
    ----------
    delta : int, Fraction or str

    Returns
    -------
    Fraction

    Raises
    ------
    ExactnessError
        For a float.
    ValueError
        Unless ``0 <= delta < 1``.

    Examples
    --------
    >>> check_delta("1/10")
    Fraction(1, 10)
    """
    value = to_fraction(delta, "delta")
    if not 0 <= value < 1:
        raise ValueError(f"delta: must satisfy 0 <= delta < 1, got {value}")
    return value


def delta_rows(n: int, lam: Fraction, delta: Fraction
                ) -> tuple[list[tuple[Row, Fraction]], list[tuple[Row, Fraction]]]:
    """The subset form of (eps, delta)-DP (``delta > 0``; docs/open_questions.md section 5):
    ``-T_ij <= 0``, then per pair ``i``, order ``(a, b)`` = ``(i, i+1)``, ``(i+1, i)`` and
    non-empty proper subset ``S`` (bit ``j`` of ``mask = 1 .. 2^n - 2``):
    ``sum_(j in S) T_aj - lam T_bj <= delta``; the row sums (the path's
    :func:`dpfix.theory.graphs.subset_rows`)."""
    return _gr.subset_rows(n, _path_ratios(n, lam), delta)


def _neighbour_graph(n: int, graph: Any) -> nx.Graph | None:
    """The checked neighbour graph on ``0..n-1``, or None for the path (no graph, or the
    path itself: the same rows, symmetries and structure as today's U)."""
    if graph is None:
        return None
    G = _gr.as_graph(graph, n)
    return None if _gr.is_path(G) else G


def _rows(n: int, lam: Fraction, d: Fraction, G: nx.Graph | None
          ) -> tuple[list[tuple[Row, Fraction]], list[tuple[Row, Fraction]]]:
    """The rows of U on the path or on ``G``, for ``delta = d``."""
    if G is None:
        return u_rows(n, lam, d)
    ratios = _gr.edge_ratios(G, lam)
    if d == 0:
        return _gr.neighbour_rows(n, ratios)
    if any(w != 1 for _, _, w in G.edges(data="weight")):
        raise ValueError("delta: delta > 0 with graph= needs every edge weight 1 (the subset "
                         "form bounds each edge by lam and delta; a weight w has no delta of "
                         "its own)")
    return _gr.subset_rows(n, ratios, d)


def _graph_symmetry(G: nx.Graph, z: np.ndarray | None) -> Symmetry:
    """The automorphisms of ``G`` (keeping ``z`` when given) on the rows, times the column
    permutations within the blocks of equal ``z_j``."""
    rows = tuple(rho for rho in _gr.automorphisms(G)
                 if z is None or all(z[rho[i]] == z[i] for i in range(len(rho))))
    n = G.number_of_nodes()
    return Symmetry(rows, (tuple(range(n)),) if z is None else _column_blocks(z))


def _with_graph(P: Polytope, G: nx.Graph | None) -> Polytope:
    P.neighbour_graph = G
    return P


def U(n: int, lam: Any, delta: Any = 0, graph: Any = None) -> Polytope:
    """``U``: the eps-DP count mechanisms (row-stochastic, neighbour-indistinguishable columns).

    With ``delta > 0`` (exact, ``< 1``): the (eps, delta)-DP ones, in the subset form
    of :mod:`dpfix.theory.delta` (``2 (n-1) (2^n - 2)`` rows; ``delta = 0`` gives
    exactly the rows above). Same symmetries: column permutations, reversal.

    With ``graph=`` (docs/graphs.md; :func:`dpfix.theory.graphs.as_graph`: a networkx graph
    on ``0..n-1``, ``"cycle:5"``, a file of edges): ``U_G``, one pair of rows
    ``T_uj <= lam^w T_vj``, ``T_vj <= lam^w T_uj`` per column ``j`` and edge ``uv`` of
    weight ``w`` (edges in sorted order); its symmetries are the graph's automorphisms
    on the rows and every column permutation. The path (or no graph) gives exactly the
    rows above. ``delta > 0`` with a graph takes the subset form on each edge, and needs
    every weight 1: the form bounds an edge by ``lam`` and one ``delta``, and a weight
    ``w`` says nothing of how ``delta`` should grow along it.

    Examples
    --------
    >>> U(3, 2).A_ub.shape, U(3, 2).dimension()
    ((12, 9), 6)
    >>> U(2, 2, "1/10"), len(U(2, 2, "1/10").vertices())
    (U(n=2, lam=2, delta=1/10), 8)
    >>> P = U(3, 2, graph="complete:3")
    >>> P, P.A_ub.shape, P.symmetry.order, P.count_vertices()
    (U(n=3, lam=2, graph=complete:3), (18, 9), 36, 33)
    """
    n, lam, d = check_n(n, minimum=2), exact_lam(lam, algebraic=True), check_delta(delta)
    G = _neighbour_graph(n, graph)
    ub, eq = _rows(n, lam, d, G)
    P = Polytope("U", n, lam, None, (n, n), ub, eq)
    if G is None:
        P.symmetry = Symmetry((tuple(range(n)), tuple(range(n))[::-1]), (tuple(range(n)),))
    else:
        P.symmetry = _graph_symmetry(G, None)
    P._u_structure = d == 0  # the count by the faces of the cone of columns needs delta = 0
    P.delta = d
    return _with_graph(P, G)


def F(n: int, lam: Any, z: Any, delta: Any = 0, graph: Any = None) -> Polytope:
    """``F[z]``: the mechanisms of ``U`` with fixed point ``z T = z`` (with ``delta > 0``,
    of ``U(n, lam, delta)``; with ``graph=``, of ``U(n, lam, delta, graph)``: the
    automorphisms of the graph that keep ``z`` act on the rows).

    Examples
    --------
    >>> F(3, 2, ["1/3", "1/3", "1/3"]).A_eq.shape
    (6, 9)
    >>> F(3, 2, ["1/3", "1/3", "1/3"], "1/2").count_vertices(backend="cdd")
    48
    >>> F(3, 2, ["1/3", "1/3", "1/3"], graph="cycle:3").symmetry.order
    36
    """
    n, lam, d = check_n(n, minimum=2), exact_lam(lam, algebraic=True), check_delta(delta)
    zv = probability_vector(z, exact=True, n=n)
    G = _neighbour_graph(n, graph)
    ub, eq = _rows(n, lam, d, G)
    P = Polytope("F", n, lam, zv, (n, n), ub, eq + fixed_point_rows(n, zv, zv))
    if G is None:
        P.symmetry = Symmetry(_reversals(tuple(range(n))[::-1], zv), _column_blocks(zv))
    else:
        P.symmetry = _graph_symmetry(G, zv)
    P.delta = d
    return _with_graph(P, G)


def _r_rows(n: int, lam: Fraction, G: nx.Graph | None = None
            ) -> tuple[np.ndarray, list[tuple[Row, Fraction]], list[tuple[Row, Fraction]]]:
    P = psi(n, lam) if G is None else graph_scales(G, lam)
    k = P.shape[1]
    ub = [({v: Fraction(-1)}, Fraction(0)) for v in range(k * n)]
    eq = [({m * n + j: P[i, m] for m in range(k) for j in range(n)}, Fraction(1))
          for i in range(n)]  # (Psi B 1)_i = 1
    return P, ub, eq


def _scale_permutations(P: np.ndarray, rows: tuple[tuple[int, ...], ...]
                        ) -> tuple[tuple[int, ...], ...]:
    """For each row permutation ``rho`` (an automorphism), the permutation ``pi`` of the
    scales with ``Psi[rho] = Psi[:, pi]``: ``t o rho`` is an extreme ray when ``t`` is, so
    permuting the rows of ``T = Psi B`` permutes the rows of ``B`` (the inverses are in the
    list too, as the automorphisms form a group)."""
    where = {tuple(P[:, m]): m for m in range(P.shape[1])}
    return tuple(tuple(where[tuple(P[list(rho), m])] for m in range(P.shape[1]))
                 for rho in rows)


def RF(n: int, lam: Any, z: Any, graph: Any = None) -> Polytope:
    """``R_F``: amounts ``B >= 0`` (``k x n``) of the scales Psi with ``Psi B`` in ``F[z]``
    (Theorem 3: ``T = Psi B`` maps R_F onto F).

    With ``graph=``: the scales are the graph's, ``Psi_G`` =
    :func:`dpfix.theory.scales.graph_scales` (the extreme rays of the cone ``C_G``, one
    column each), and ``T = Psi_G B`` maps ``R_F`` onto ``F_G[z]`` (docs/graphs.md,
    section 3: every column of a ``T`` in ``F_G`` lies in ``C_G``, a pointed cone, so it is
    a non-negative combination of the extreme rays; the constraints on ``B`` are those of
    ``F_G`` on ``Psi_G B``). Which of the path's further results on R_F carry over is in
    docs/graphs.md.

    Examples
    --------
    >>> RF(2, 2, ["1/2", "1/2"]).vertices()[0].tolist()
    [[Fraction(0, 1), Fraction(1, 1)], [Fraction(1, 1), Fraction(0, 1)]]
    >>> RF(3, 2, ["1/3"] * 3, graph="complete:3").shape
    (6, 3)
    """
    n, lam = check_n(n, minimum=2), exact_lam(lam, algebraic=True)
    zv = probability_vector(z, exact=True, n=n)
    G = _neighbour_graph(n, graph)
    P, ub, eq = _r_rows(n, lam, G)
    W = zv @ P  # z Psi
    R = Polytope("R_F", n, lam, zv, P.shape[::-1], ub, eq + fixed_point_rows(n, zv, W))
    if G is None:
        rows = _reversals(_scale_reversal(P), zv)
    else:
        rows = _scale_permutations(P, _graph_symmetry(G, zv).rows)
    R.symmetry = Symmetry(rows, _column_blocks(zv))
    return _with_graph(R, G)


def RU(n: int, lam: Any, graph: Any = None) -> Polytope:
    """``R_U`` (Theorem 10): amounts ``B >= 0`` with ``Psi B 1 = 1``; maps onto ``U``
    (with ``graph=``, the graph's scales, onto ``U_G``: as for :func:`RF`).

    Examples
    --------
    >>> len(RU(2, 2).vertices())
    4
    >>> RU(3, 2, graph="star:3").shape  # the star on 3 nodes is the path 1 - 0 - 2
    (4, 3)
    """
    n, lam = check_n(n, minimum=2), exact_lam(lam, algebraic=True)
    G = _neighbour_graph(n, graph)
    P, ub, eq = _r_rows(n, lam, G)
    R = Polytope("R_U", n, lam, None, P.shape[::-1], ub, eq)
    if G is None:
        rows = _reversals(_scale_reversal(P), None)
    else:
        rows = _scale_permutations(P, _gr.automorphisms(G))
    R.symmetry = Symmetry(rows, (tuple(range(n)),))
    return _with_graph(R, G)
