"""Exact vertex enumeration backends: cddlib and Normaliz; compact vertex sets; graphs.

A polytope is given to this module as an :class:`HRep`: ``d`` variables,
inequalities ``a.x <= b`` and equalities ``a.x = b`` with sparse exact rows
(column -> :class:`fractions.Fraction`), as :mod:`dpfix.theory.polytopes` stores them.
Two exact backends enumerate its vertices:

- ``"cdd"``: pycddlib's ``cdd.gmp`` (double description over GMP rationals),
  which also returns the vertex adjacency;
- ``"normaliz"``: Normaliz through PyNormaliz (the optional extra
  ``dpfix[enumeration]``), multi-threaded. Normaliz works over the integers:
  every rational row is scaled to a primitive integer row (exactly), and each
  vertex comes back as a primitive integer row ``(p_1, ..., p_d, q)``,
  meaning ``x = p / q``. The cone is built over 64-bit integers
  (``CreateAsLongLong``), which Normaliz checks for overflow; on overflow the
  computation is redone over GMP integers. Normaliz's result is written to its
  ``.out`` file and read from there in chunks, so a count never brings the
  vertices into Python and a vertex set is read straight into integer arrays.

Vertex sets are :class:`VertexArray` s: an integer array of numerators (one
row a vertex, int64 when every entry fits, else Python ints) and one positive
denominator per vertex, the row made primitive, so that equal vertices have
equal rows and sets of vertices are compared exactly as sets of integer rows.
F(5, 2, uniform z) has 1,169,850 vertices: 0.25 GB as a VertexArray, where
Fractions would take about 10 GB.

The graph of a Normaliz vertex set is computed here from the incidence of
vertices and inequalities (:func:`neighbours`): ``u`` and ``v`` are adjacent
iff no third vertex is tight on every inequality tight at both (the smallest
face containing them has no other vertex, so it is an edge).

How ``backend="auto"`` chooses (:func:`resolve_backend`), by measurement
(``benchmarks/bench_enumeration.py``, ``benchmarks/results/enumeration.json``;
one run each on 2 cores, so the ratios between backends matter more than
the seconds; lam = 2 unless said; seconds, all vertices):

- U(3), 27 vertices: cdd 0.003, Normaliz 0.005, structure 0.01;
- U(4), 664: cdd 0.21, Normaliz 0.017, structure 0.05;
- F(4, uniform z), 1806: cdd 0.56, Normaliz 0.03;
- R_F(4, lam, z), lam in {3/2, 2, 3} and the four standard z, 4,283 to 54,918
  vertices: Normaliz 0.07 to 8.2; cdd 31 and 25 for the zero-entry z at lam = 2
  and 3, over the 60 s cap for the other ten;
- U(5, lam), 55,725 to 67,365: Normaliz 3.8 to 5.3, structure 1.3 to 1.6, cdd
  over 60;
- F(5, 2, uniform z), 1,169,850, counted: Normaliz 36 (1.5 GB), cdd over 60;
- U(6, 2), 25,827,726, counted: structure 71 (two processes); Normaliz, run
  for 20 minutes at the lowest priority on one thread (about a minute of CPU),
  had not finished (not a fair time, only a lower bound on its work).

So: vertices and counts go to Normaliz whenever PyNormaliz is installed (from
``n = 4`` on it is 10 to over 300 times quicker; at ``n <= 3`` both take
milliseconds); graphs go to cdd for polytopes with at most
:data:`CDD_GRAPH_MAX_VARIABLES` variables (cdd returns the adjacency with the
vertices, in milliseconds there) and to Normaliz plus :func:`neighbours`
beyond; U's counts from n = 5 on go to :func:`u_vertex_count`
(``Polytope.count_vertices``, "structure" above). Without PyNormaliz everything
else goes to cdd.

One room, though long: every backend (cdd, Normaliz, U's structural count) takes an
:class:`HRep` and returns a :class:`VertexArray`, and the incidence, graph, orbit and
best-value functions work on those; the backends are chosen here by one measured rule
(:func:`resolve_backend`).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import gcd, lcm
from pathlib import Path
from typing import IO, Any

import numpy as np

from dpfix.numbers.exact_lp import cdd_rows

__all__ = [
    "BACKENDS",
    "CDD_GRAPH_MAX_VARIABLES",
    "HRep",
    "VertexArray",
    "normaliz_available",
    "resolve_backend",
    "enumerate_vertices",
    "count_vertices",
    "iter_vertex_chunks",
    "cdd_matrix",
    "cdd_enumerate",
    "tight_masks",
    "neighbours",
    "edges",
    "Symmetry",
    "canonical_forms",
    "orbits",
    "best_values",
    "u_vertex_count",
    "u_vertex_sets",
    "count_face_sets",
    "normaliz_header_counts",
]

#: Backend names accepted by ``vertices``, ``graph`` and ``count_vertices``.
BACKENDS: tuple[str, ...] = ("auto", "cdd", "normaliz")

#: ``backend="auto"`` draws graphs with cdd up to this many variables (n = 3 for
#: U and F, where cdd's graph takes milliseconds), with Normaliz and the incidence
#: test beyond (U(4): cdd 0.2 s, Normaliz plus incidence 0.1 s).
CDD_GRAPH_MAX_VARIABLES = 12

#: Candidate sets compared per block in :func:`neighbours`.
_BLOCK = 512

#: Vertices read from Normaliz's output per chunk.
CHUNK = 100_000

_INT64_SAFE = 2**62
Row = dict[int, Fraction]
Constraint = tuple[Row, Fraction]


def normaliz_available() -> bool:
    """Whether PyNormaliz is installed (``pip install dpfix[enumeration]``)."""
    try:
        import PyNormaliz_cpp  # noqa: F401
    except ImportError:
        return False
    return True


def resolve_backend(backend: str, what: str, num_variables: int) -> str:
    """The backend that runs ``what`` (``"vertices"``, ``"count"`` or ``"graph"``).

    ``"cdd"`` and ``"normaliz"`` are returned as given (``"normaliz"`` raises
    ``ImportError`` without PyNormaliz); ``"auto"`` follows the rule of the module
    docstring.

    Examples
    --------
    >>> resolve_backend("cdd", "vertices", 25)
    'cdd'
    >>> resolve_backend("auto", "graph", 9)
    'cdd'
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend: one of {', '.join(BACKENDS)}, got {backend!r}")
    if what not in ("vertices", "count", "graph"):
        raise ValueError(f"what: 'vertices', 'count' or 'graph', got {what!r}")
    if backend == "normaliz" and not normaliz_available():
        raise ImportError("backend='normaliz' needs PyNormaliz: pip install 'dpfix[enumeration]'")
    if backend != "auto":
        return backend
    if not normaliz_available():
        return "cdd"
    if what == "graph" and num_variables <= CDD_GRAPH_MAX_VARIABLES:
        return "cdd"
    return "normaliz"


# -- the H-representation -----------------------------------------------------------------
def _primitive(values: Sequence[Fraction]) -> list[int]:
    """The integer row proportional (by a positive factor) to a rational row, gcd 1."""
    den = lcm(*(v.denominator for v in values)) if values else 1
    ints = [int(v * den) for v in values]
    g = gcd(*ints)
    return [i // g for i in ints] if g > 1 else ints


@dataclass(frozen=True)
class HRep:
    """``{x in Q^d : a.x <= b for (a, b) in ub, a.x = b for (a, b) in eq}``.

    Rows are sparse: ``a`` maps a column to a Fraction.

    Examples
    --------
    >>> square = HRep(2, [({0: Fraction(-1)}, Fraction(0)), ({0: Fraction(1)}, Fraction(1)),
    ...                   ({1: Fraction(-1)}, Fraction(0)), ({1: Fraction(1)}, Fraction(1))], [])
    >>> count_vertices(square, backend="cdd")
    4
    """

    d: int
    ub: Sequence[Constraint]
    eq: Sequence[Constraint]

    def _dense(self, coef: Row, last: Fraction, sign: int) -> list[Fraction]:
        row = [Fraction(0)] * (self.d + 1)
        for c, v in coef.items():
            row[c] = sign * v
        row[self.d] = last
        return row

    def normaliz_rows(self) -> tuple[list[list[int]], list[list[int]]]:
        """Normaliz's ``inhom_inequalities`` and ``inhom_equations``: flat integer rows
        ``[c_1, ..., c_d, c_0]`` (``d + 1`` entries, the constant last) meaning
        ``c.x + c_0 >= 0`` and ``c.x + c_0 = 0``, each a positive multiple of the
        exact row with gcd 1.

        Examples
        --------
        >>> h = HRep(2, [({0: Fraction(1, 2), 1: Fraction(1, 3)}, Fraction(1))],
        ...          [({0: Fraction(1), 1: Fraction(1)}, Fraction(2, 3))])
        >>> h.normaliz_rows()  # 1 - x/2 - y/3 >= 0 and x + y - 2/3 = 0
        ([[-3, -2, 6]], [[3, 3, -2]])
        """
        ineq = [_primitive(self._dense(a, b, -1)) for a, b in self.ub]
        eq = [_primitive(self._dense(a, -b, 1)) for a, b in self.eq]
        return ineq, eq

    def integer_ub(self) -> tuple[np.ndarray, np.ndarray]:
        """``(A, b)``: integer rows with ``A x <= b`` equivalent to the inequalities
        (int64 when small, else Python ints)."""
        rows = [_primitive(self._dense(a, b, 1)) for a, b in self.ub]
        big = any(abs(v) >= _INT64_SAFE for r in rows for v in r)
        arr = np.array(rows, dtype=object if big else np.int64).reshape(len(rows), self.d + 1)
        return arr[:, :-1], arr[:, -1]


# -- vertex sets --------------------------------------------------------------------------
class VertexArray:
    """A set of exact vertices held compactly: ``x = numerators[i] / denominators[i]``.

    Each row ``(numerators[i], denominators[i])`` is primitive with a positive
    denominator, so equal vertices have equal rows. Numerators are int64 when
    every entry fits, else an object array of Python ints.

    Parameters
    ----------
    numerators : ``(m, d)`` integer array.
    denominators : ``(m,)`` positive integers.
    shape : the shape of one vertex as a matrix (``d`` entries).

    Examples
    --------
    >>> va = VertexArray.from_matrices([[[Fraction(1, 2), Fraction(1, 2)]], [[1, 0]]], (1, 2))
    >>> len(va), va.numerators.tolist(), va.denominators.tolist()
    (2, [[1, 1], [1, 0]], [2, 1])
    >>> va[0].tolist()
    [[Fraction(1, 2), Fraction(1, 2)]]
    """

    def __init__(self, numerators: np.ndarray, denominators: np.ndarray,
                 shape: tuple[int, ...]) -> None:
        num = np.asarray(numerators)
        den = np.asarray(denominators)
        d = int(np.prod(shape))
        num = num.reshape(len(den), d)
        if len(den) and (den <= 0).any():
            raise ValueError("VertexArray: denominators must be positive")
        self.numerators, self.denominators, self.shape = num, den, tuple(shape)
        self._normalise()

    def _normalise(self) -> None:
        if not len(self.denominators):
            return
        if self.numerators.dtype == object or self.denominators.dtype == object:
            rows = [_primitive_ints([*map(int, r), int(q)])
                    for r, q in zip(self.numerators, self.denominators, strict=True)]
            full = np.array(rows, dtype=object)
            if all(abs(v) < _INT64_SAFE for v in full.ravel()):
                full = full.astype(np.int64)
            self.numerators, self.denominators = full[:, :-1], full[:, -1]
            return
        full = np.concatenate([self.numerators, self.denominators[:, None]], axis=1)
        g = np.gcd.reduce(full, axis=1)
        if (g != 1).any():
            full //= g[:, None]
        self.numerators, self.denominators = full[:, :-1], full[:, -1]

    @classmethod
    def from_matrices(cls, matrices: Sequence[Any], shape: tuple[int, ...]) -> VertexArray:
        """From exact matrices (Fractions, ints or strings such as ``"1/2"``)."""
        rows = []
        for X in matrices:
            vals = [Fraction(v) for v in np.asarray(X, dtype=object).ravel()]
            q = lcm(*(v.denominator for v in vals)) if vals else 1
            rows.append([int(v * q) for v in vals] + [q])
        d = int(np.prod(shape))
        full = np.array(rows, dtype=object).reshape(len(rows), d + 1)
        return cls(full[:, :-1], full[:, -1], shape)

    @classmethod
    def concatenate(cls, parts: Sequence[VertexArray], shape: tuple[int, ...]) -> VertexArray:
        """One array from several (object dtype if any part has it)."""
        d = int(np.prod(shape))
        if not parts:
            return cls(np.zeros((0, d), dtype=np.int64), np.zeros(0, dtype=np.int64), shape)
        obj = any(p.numerators.dtype == object for p in parts)
        dt = object if obj else np.int64
        return cls(np.concatenate([p.numerators.astype(dt) for p in parts]),
                   np.concatenate([p.denominators.astype(dt) for p in parts]), shape)

    def __len__(self) -> int:
        return len(self.denominators)

    def __getitem__(self, i: int) -> np.ndarray:
        """Vertex ``i`` as an exact matrix of Fractions."""
        q = int(self.denominators[i])
        return np.array([Fraction(int(p), q) for p in self.numerators[i]],
                        dtype=object).reshape(self.shape)

    def __iter__(self) -> Iterator[np.ndarray]:
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        return (f"VertexArray({len(self)} vertices of shape {self.shape}, "
                f"numerators {self.numerators.dtype}, {self.nbytes / 1e6:.1f} MB)")

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays (object arrays: pointers only)."""
        return int(self.numerators.nbytes + self.denominators.nbytes)

    def full_rows(self) -> np.ndarray:
        """``(m, d + 1)``: numerators then the denominator, one row a vertex."""
        return np.concatenate([self.numerators, self.denominators[:, None]], axis=1)

    def keys(self) -> set[tuple[int, ...]]:
        """The vertices as a set of primitive integer rows (exact comparison of sets)."""
        return {tuple(int(v) for v in r) for r in self.full_rows()}

    def take(self, index: Any) -> VertexArray:
        """The vertices at ``index`` (an integer array or a boolean mask)."""
        return VertexArray(self.numerators[index], self.denominators[index], self.shape)

    def sorted(self) -> VertexArray:
        """Sorted lexicographically by exact value (entry by entry, as Fractions)."""
        order = sorted(range(len(self)), key=lambda i: tuple(
            Fraction(int(p), int(self.denominators[i])) for p in self.numerators[i]))
        return self.take(np.array(order, dtype=np.int64))

    def to_list(self) -> list[np.ndarray]:
        """Every vertex as an exact matrix of Fractions (small sets only)."""
        return list(self)


def _primitive_ints(row: list[int]) -> list[int]:
    g = gcd(*row)
    return [v // g for v in row] if g > 1 else row


# -- cdd ----------------------------------------------------------------------------------
def cdd_matrix(h: HRep) -> Any:
    """The H-representation as a ``cdd.gmp`` matrix (:func:`dpfix.numbers.exact_lp.cdd_rows`:
    rows ``[b, -a]``, the equalities first and in its linearity set)."""
    import cdd
    import cdd.gmp

    return cdd.gmp.matrix_from_array(cdd_rows(h.d, h.ub, h.eq), lin_set=range(len(h.eq)),
                                     rep_type=cdd.RepType.INEQUALITY)


def cdd_enumerate(h: HRep, shape: tuple[int, ...]) -> tuple[VertexArray, list[set[int]]]:
    """Vertices and adjacency (``adjacency[i]``: indices of the neighbours of vertex
    ``i``) by cdd.gmp's exact double description.

    Raises ``RuntimeError`` if cdd returns rays or lines (an unbounded polyhedron).
    """
    import cdd.gmp

    poly = cdd.gmp.polyhedron_from_matrix(cdd_matrix(h))
    gens = cdd.gmp.copy_generators(poly)
    arr = gens.array
    if gens.lin_set or any(row[0] != 1 for row in arr):
        raise RuntimeError("cdd returned rays or lines; the polyhedron is unbounded")
    va = VertexArray.from_matrices([row[1:] for row in arr], shape) if arr else \
        VertexArray.concatenate([], shape)
    adjacency = [set(a) for a in cdd.gmp.copy_adjacency(poly)]
    return va, adjacency


# -- Normaliz -----------------------------------------------------------------------------
def _normaliz_out(h: HRep, directory: Path) -> Path:
    """Compute the vertices with Normaliz; write its ``.out`` file; return its path."""
    import PyNormaliz_cpp as nmz

    ineq, eq = h.normaliz_rows()
    kw: dict[str, Any] = {"inhom_inequalities": ineq}
    if eq:
        kw["inhom_equations"] = eq
    small = all(abs(v) < _INT64_SAFE for r in ineq + eq for v in r)
    base = directory / "polytope"
    for long_long in ((True, False) if small else (False,)):
        try:
            cone = nmz.NmzCone(**kw, **({"CreateAsLongLong": True} if long_long else {}))
            nmz.NmzCompute(cone, ["VerticesOfPolyhedron"])
            nmz.NmzWriteOutputFile(cone, str(base))
        except nmz.normaliz_error as exc:  # 64-bit overflow: redo over GMP integers
            if long_long and "verflow" in str(exc):
                continue
            raise
        break
    del cone
    return base.with_suffix(".out")


_COUNT = re.compile(r"^(\d+) (vertices of polyhedron|extreme rays of recession cone)\b")


def normaliz_header_counts(f: Any) -> tuple[int, int, list[str]]:
    """The numbers of vertices and of recession rays from the head of a Normaliz ``.out``
    file (an iterable of its lines, read no further than needed), and the lines read.

    Examples
    --------
    >>> normaliz_header_counts(["27 vertices of polyhedron",
    ...                         "0 extreme rays of recession cone"])[:2]
    (27, 0)
    """
    counts: dict[str, int] = {}
    head = []
    for line in f:
        head.append(line)
        m = _COUNT.match(line.strip())
        if m:
            counts[m.group(2)] = int(m.group(1))
        if line.startswith("*****") or len(counts) == 2:
            break
    if "vertices of polyhedron" not in counts:
        raise RuntimeError("Normaliz output without a vertex count: " + "".join(head[:5]))
    return counts["vertices of polyhedron"], counts.get("extreme rays of recession cone", 0), head


def _parse_rows(lines: list[str], width: int) -> np.ndarray:
    tokens = " ".join(lines).split()
    if any(len(t) > 18 for t in tokens):  # beyond int64: exact Python ints
        return np.array([int(t) for t in tokens], dtype=object).reshape(len(lines), width)
    return np.array(tokens, dtype=np.int64).reshape(len(lines), width)


def _open_normaliz_out(h: HRep) -> IO[str]:
    """Run Normaliz in a private folder of its own, open its output, remove the folder.

    Normaliz writes one file, ``polytope.out``, in the folder it is given; each
    call gets a fresh folder (``tempfile``: mode 0700, a unique name), so
    concurrent runs never share one. The folder and the file's name are removed
    as soon as the file is open (POSIX keeps an open file readable): nothing is
    left in the temporary folder while the vertices are streamed, however long
    the stream lasts or if it is left unfinished, and a job clearing the
    temporary folder meanwhile cannot take the output away.
    """
    with tempfile.TemporaryDirectory(prefix="dpfix-normaliz-") as tmp:
        return open(_normaliz_out(h, Path(tmp)))


def _normaliz_chunks(h: HRep, shape: tuple[int, ...], chunk: int, count_only: bool
                     ) -> Iterator[int | VertexArray]:
    with _open_normaliz_out(h) as f:
        nv, nrays, _ = normaliz_header_counts(f)
        if nrays:
            raise RuntimeError("Normaliz found recession rays; the polyhedron is unbounded")
        yield nv
        if count_only or nv == 0:
            return
        target = f"{nv} vertices of polyhedron:"
        for line in f:
            if line.strip() == target:
                break
        else:
            raise RuntimeError(f"Normaliz output lacks the section {target!r}")
        left = nv
        while left:
            k = min(chunk, left)
            lines = [next(f) for _ in range(k)]
            rows = _parse_rows(lines, h.d + 1)
            left -= k
            yield VertexArray(rows[:, :-1], rows[:, -1], shape)


def iter_vertex_chunks(h: HRep, shape: tuple[int, ...], chunk: int = CHUNK
                       ) -> Iterator[VertexArray]:
    """Normaliz's vertices in chunks of at most ``chunk`` (a stream: only one chunk
    and Normaliz's output file exist at a time; the order is Normaliz's)."""
    gen = _normaliz_chunks(h, shape, chunk, count_only=False)
    next(gen)  # the count
    for part in gen:
        assert isinstance(part, VertexArray)
        yield part


def enumerate_vertices(h: HRep, shape: tuple[int, ...], backend: str = "auto") -> VertexArray:
    """Every vertex, as a :class:`VertexArray` in the backend's order.

    Examples
    --------
    >>> tri = HRep(2, [({0: Fraction(-1)}, Fraction(0)), ({1: Fraction(-1)}, Fraction(0)),
    ...                ({0: Fraction(2), 1: Fraction(2)}, Fraction(1))], [])
    >>> sorted(enumerate_vertices(tri, (2,), backend="cdd").keys())
    [(0, 0, 1), (0, 1, 2), (1, 0, 2)]
    """
    which = resolve_backend(backend, "vertices", h.d)
    if which == "cdd":
        return cdd_enumerate(h, shape)[0]
    return VertexArray.concatenate(list(iter_vertex_chunks(h, shape)), shape)


def count_vertices(h: HRep, backend: str = "auto") -> int:
    """The number of vertices. With Normaliz the vertices stay in Normaliz and its
    output file: only the count is read."""
    which = resolve_backend(backend, "count", h.d)
    if which == "cdd":
        return len(cdd_enumerate(h, (h.d,))[0])
    first = next(_normaliz_chunks(h, (h.d,), CHUNK, count_only=True))
    assert isinstance(first, int)
    return first


# -- incidence and graph ------------------------------------------------------------------
def tight_masks(h: HRep, va: VertexArray) -> np.ndarray:
    """``(m, w)`` uint64 bit masks: bit ``r`` of vertex ``i`` is set iff inequality
    ``r`` (in ``h.ub`` order) is tight at it; computed exactly in integers."""
    A, b = h.integer_ub()
    num, den = va.numerators, va.denominators
    exact_int64 = (A.dtype != object and num.dtype != object and len(va) and
                   int(np.abs(num).max()) * int(np.abs(A).sum(axis=1).max() if len(A) else 0)
                   + int(np.abs(den).max()) * int(np.abs(b).max() if len(b) else 0)
                   < _INT64_SAFE)
    m, r = len(va), len(h.ub)
    words = max(1, (r + 63) // 64)
    masks = np.zeros((m, words), dtype=np.uint64)
    step = 200_000
    for s in range(0, m, step):
        if exact_int64:
            slack = den[s:s + step, None] * b[None, :] - num[s:s + step] @ A.T
        else:
            slack = (den[s:s + step, None].astype(object) * b[None, :].astype(object)
                     - num[s:s + step].astype(object).dot(A.T.astype(object)))
        tight = np.asarray(slack == 0, dtype=bool)
        if (np.asarray(slack < 0)).any():
            raise ValueError("tight_masks: a given vertex violates an inequality")
        for w in range(words):
            block = tight[:, 64 * w: 64 * (w + 1)]
            weights = np.left_shift(np.uint64(1), np.arange(block.shape[1], dtype=np.uint64))
            masks[s:s + step, w] = (block.astype(np.uint64) * weights).sum(axis=1,
                                                                           dtype=np.uint64)
    return masks


def neighbours(masks: np.ndarray, u: int, dim: int | None = None) -> np.ndarray:
    """Indices of the vertices adjacent to vertex ``u``, from the incidence masks.

    ``v`` is adjacent to ``u`` iff no third vertex is tight on every inequality
    tight at both ``u`` and ``v``. ``dim`` (the polytope's dimension) lets the
    test skip pairs with fewer than ``dim - 1`` common tight inequalities
    (not counting those tight on the whole polytope), which cannot span an edge.
    """
    common = masks & masks[u]
    if dim is not None:
        everywhere = np.bitwise_and.reduce(masks, axis=0)
        counts = np.bitwise_count(common & ~everywhere).sum(axis=1)
        cand = np.flatnonzero(counts >= dim - 1)
    else:
        cand = np.arange(len(masks))
    cand = cand[cand != u]
    if not len(cand):
        return cand
    sets = common[cand]
    uniq, inverse, counts_u = np.unique(sets, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    # A common set contained in a different one lies on a face with a third vertex. The
    # inclusion-maximal sets are found in blocks, largest first: a set can only lie in a
    # larger one, and a set inside a non-maximal set lies inside a maximal one too.
    if len(uniq) <= _BLOCK * 4:  # small: one square comparison
        contained = np.ones((len(uniq), len(uniq)), dtype=bool)
        for w in range(uniq.shape[1]):
            contained &= (uniq[:, None, w] & ~uniq[None, :, w]) == 0
        np.fill_diagonal(contained, False)
        return np.sort(cand[((counts_u == 1) & ~contained.any(axis=1))[inverse]])
    sizes = np.bitwise_count(uniq).sum(axis=1)
    order = np.argsort(-sizes, kind="stable")
    maximal = np.zeros(len(uniq), dtype=bool)
    kept = uniq[:0]
    for s in range(0, len(order), _BLOCK):
        idx = order[s:s + _BLOCK]
        blk, size = uniq[idx], sizes[idx]
        inside = np.zeros(len(idx), dtype=bool)
        if len(kept):
            sub = np.ones((len(idx), len(kept)), dtype=bool)
            for w in range(uniq.shape[1]):
                sub &= (blk[:, None, w] & ~kept[None, :, w]) == 0
            inside |= sub.any(axis=1)
        sub = size[:, None] < size[None, :]
        for w in range(uniq.shape[1]):
            sub &= (blk[:, None, w] & ~blk[None, :, w]) == 0
        inside |= sub.any(axis=1)
        maximal[idx[~inside]] = True
        kept = np.concatenate([kept, blk[~inside]])
    good = (counts_u == 1) & maximal
    return np.sort(cand[good[inverse]])


def edges(masks: np.ndarray, dim: int | None = None) -> list[tuple[int, int]]:
    """Every edge ``(u, v)``, ``u < v``, from the incidence masks (see :func:`neighbours`)."""
    out = []
    for u in range(len(masks)):
        out.extend((u, int(v)) for v in neighbours(masks, u, dim) if v > u)
    return out


# -- symmetry -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Symmetry:
    """A group acting on ``r x c`` points: a group of row permutations (listed in
    full, e.g. the identity and the reversal) times every permutation of the
    columns within each block of ``column_blocks``. Row and column moves commute.

    Examples
    --------
    >>> g = Symmetry(rows=((0, 1), (1, 0)), column_blocks=((0, 1),))
    >>> g.order
    4
    """

    rows: tuple[tuple[int, ...], ...]
    column_blocks: tuple[tuple[int, ...], ...]

    @property
    def order(self) -> int:
        """The number of group elements."""
        out = len(self.rows)
        for block in self.column_blocks:
            for i in range(2, len(block) + 1):
                out *= i
        return out

    def elements(self) -> Iterator[tuple[tuple[int, ...], tuple[int, ...]]]:
        """Every element as ``(row permutation, column permutation)`` (small groups)."""
        from itertools import permutations, product

        ncols = sum(len(b) for b in self.column_blocks)
        for rho in self.rows:
            for parts in product(*(permutations(b) for b in self.column_blocks)):
                sigma = [0] * ncols
                for block, image in zip(self.column_blocks, parts, strict=True):
                    for src, dst in zip(block, image, strict=True):
                        sigma[src] = dst
                yield rho, tuple(sigma)


def canonical_forms(va: VertexArray, sym: Symmetry) -> np.ndarray:
    """One integer row per vertex, equal for two vertices iff one is the image of the
    other under ``sym`` (exact: built from the vertices' integer rows).

    For each row permutation, the columns of the permuted point are numbered in
    lexicographic order of their integer entries and the numbers sorted within each
    column block (the canonical form under the column moves); the least of these
    over the row permutations, then the denominator, is the form.
    """
    r, c = va.shape
    m = len(va)
    X = va.numerators.reshape(m, r, c)
    cols = np.concatenate([X[:, list(rho), :].transpose(0, 2, 1).reshape(m * c, r)
                           for rho in sym.rows])
    if cols.dtype == object:  # numerators beyond int64: rank the columns in Python
        tuples = [tuple(int(v) for v in row) for row in cols]
        rank = {t: i for i, t in enumerate(sorted(set(tuples)))}
        ids = np.array([rank[t] for t in tuples], dtype=np.int64)
    else:
        _, ids = np.unique(cols, axis=0, return_inverse=True)
    ids = ids.reshape(len(sym.rows), m, c)
    best = None
    for k in range(len(sym.rows)):
        form = ids[k].copy()
        for block in sym.column_blocks:
            form[:, list(block)] = np.sort(form[:, list(block)], axis=1)
        if best is None:
            best = form
            continue
        diff = form != best
        first = diff.argmax(axis=1)
        rows = np.arange(m)
        smaller = diff.any(axis=1) & (form[rows, first] < best[rows, first])
        best[smaller] = form[smaller]
    assert best is not None
    den = va.denominators
    if den.dtype == object:
        return np.concatenate([best.astype(object), den[:, None]], axis=1)
    return np.concatenate([best.astype(np.int64), den.astype(np.int64)[:, None]], axis=1)


def orbits(va: VertexArray, sym: Symmetry) -> tuple[np.ndarray, np.ndarray]:
    """``(representatives, sizes)``: the index of one vertex of each orbit of ``sym``
    on the vertex set, and the number of vertices in that orbit."""
    if not len(va):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    forms = canonical_forms(va, sym)
    if forms.dtype == object:
        seen: dict[tuple[int, ...], int] = {}
        counts: dict[tuple[int, ...], int] = {}
        for i, row in enumerate(forms.tolist()):
            key = tuple(row)
            seen.setdefault(key, i)
            counts[key] = counts.get(key, 0) + 1
        first = np.array(list(seen.values()), dtype=np.int64)
        sizes = np.array([counts[k] for k in seen], dtype=np.int64)
    else:
        _, first, sizes = np.unique(forms, axis=0, return_index=True, return_counts=True)
    order = np.argsort(first)
    return first[order].astype(np.int64), sizes[order].astype(np.int64)


def best_values(va: VertexArray | Sequence[np.ndarray], objective: Sequence[Any]
                ) -> tuple[Any, np.ndarray]:
    """``(max, indices)``: the exact maximum of ``<objective, x>`` over the vertices
    and the indices attaining it.

    ``va`` is a :class:`VertexArray` (integer rows; floats only preselect, the
    comparison is exact), or a list of exact vertex matrices (Fractions or elements of
    ``Q(lam)``, a polytope's :meth:`~dpfix.theory.polytopes.Polytope.vertices` over
    ``Q(lam)``) with an exact ``objective`` over the flattened entries: every value
    computed and compared exactly.

    Examples
    --------
    >>> from dpfix.numbers.algebraic import algebraic
    >>> r2 = algebraic("x^2 - 2", 1.4)
    >>> verts = [np.array([[1, 0]]), np.array([[0, r2]], dtype=object), np.array([[r2, 0]])]
    >>> best, at = best_values(verts, [1, 1])
    >>> best == r2, at.tolist()
    (True, [1, 2])
    >>> best_values(VertexArray.from_matrices(verts[:1], (1, 2)), [Fraction(1, 2), 1])
    (Fraction(1, 2), array([0]))
    """
    if not isinstance(va, VertexArray):
        values = [sum((c * x for c, x in zip(objective, np.asarray(V, dtype=object).ravel(),
                                                strict=True)), Fraction(0)) for V in va]
        if not values:
            raise ValueError("best_values: no vertex")
        top = max(values)
        return top, np.array([i for i, v in enumerate(values) if v == top], dtype=np.int64)
    q = lcm(*(Fraction(v).denominator for v in objective)) if len(objective) else 1
    c = [int(Fraction(v) * q) for v in objective]
    num, den = va.numerators, va.denominators
    bound = (int(np.abs(num).max()) if len(va) and num.dtype != object else None)
    if bound is not None and bound * sum(abs(v) for v in c) < _INT64_SAFE:
        p = num @ np.array(c, dtype=np.int64)
    else:
        p = num.astype(object).dot(np.array(c, dtype=object))
    approx = p.astype(float) / den.astype(float)
    top = approx.max()
    cand = np.flatnonzero(approx >= top - 1e-9 * max(1.0, abs(top)))
    values = [Fraction(int(p[i]), int(den[i])) for i in cand]
    best = max(values)
    hit = np.array([i for i, v in zip(cand, values, strict=True) if v == best], dtype=np.int64)
    return best / q, hit


# -- U counted through its structure ------------------------------------------------------
def u_pattern_blocks(pt: tuple[str, ...]) -> list[tuple[int, list[int]]]:
    """The maximal runs of tight pairs of a face pattern ``pt`` in ``{"+", "-", "*"}^(n-1)``
    (cut at the free pairs ``"*"``): each run's first index and its heights ``h`` (``0`` at
    the start, ``+1`` per ``"+"``, ``-1`` per ``"-"``), so its block vector is ``lam^h``."""
    n = len(pt) + 1
    cuts = [i for i in range(n - 1) if pt[i] == "*"]
    blocks = []
    for a, b in zip([0] + [k + 1 for k in cuts], cuts + [n - 1], strict=True):
        h = [0]
        for i in range(a, b):
            h.append(h[-1] + (1 if pt[i] == "+" else -1))
        blocks.append((a, h))
    return blocks


def _u_faces(n: int, p: int, q: int) -> tuple[list[tuple[str, ...]], list[list[list[int]]]]:
    """The non-zero faces of the cone ``C = {v : v_i <= lam v_(i+1), v_(i+1) <= lam v_i}``
    (``lam = p / q``): one per pattern in ``{"+", "-", "*"}^(n-1)`` (pair ``i`` tight
    upwards, tight downwards, or free), with the integer basis of its linear span: one
    "block vector" per maximal run of tight pairs, a scale's shape on that run."""
    from itertools import product

    patterns = list(product("+-*", repeat=n - 1))
    families = []
    for pt in patterns:
        vecs = []
        for a, h in u_pattern_blocks(pt):
            lo, hi = min(h), max(h)
            v = [0] * n
            for k, hk in enumerate(h):  # lam^hk scaled to integers: p^(hk-lo) q^(hi-hk)
                v[a + k] = p ** (hk - lo) * q ** (hi - hk)
            vecs.append(v)
        families.append(vecs)
    return patterns, families


def _reduce(basis: list[tuple[int, list[int]]], v: list[int]) -> list[int]:
    """``v`` reduced against a fraction-free echelon basis (exact integers)."""
    for piv, row in basis:
        if v[piv]:
            a, b = row[piv], v[piv]
            v = [a * x - b * y for x, y in zip(v, row, strict=True)]
    return v


def _u_coefficients(vecs: list[list[int]], n: int) -> tuple[list[int], int]:
    """``(num, den)`` with ``sum (num_k / den) vecs[k] = 1`` (``vecs`` independent, 1 in
    their span): the exact reduced row echelon form of ``[vecs^T | 1]`` over the
    integers (python-flint's fmpz_mat)."""
    import flint

    k = len(vecs)
    M = flint.fmpz_mat([[vecs[c][i] for c in range(k)] + [1] for i in range(n)])
    R, den, rank = M.rref()
    if rank != k:  # 1 outside the span (rank k + 1) cannot happen here
        raise ArithmeticError("_u_coefficients: 1 is not in the span")
    return [int(R[c, k]) for c in range(k)], int(den)


#: A face of a cone of columns for :func:`count_face_sets`: the integer basis of its
#: linear span, and the strict inequalities ``q t_u < p t_v`` (``(u, v, p, q)``) that hold
#: exactly on its relative interior within that span.
Face = tuple[list[list[int]], list[tuple[int, int, int, int]]]


def _independent(basis: list[tuple[int, list[int]]], fam: list[list[int]]
                 ) -> list[tuple[int, list[int]]] | None:
    """``basis`` extended by ``fam``, or None when ``fam`` is not independent of it."""
    nb = list(basis)
    for v in fam:
        r = _reduce(nb, v)
        piv = next((j for j, x in enumerate(r) if x), None)
        if piv is None:
            return None
        nb.append((piv, r))
    return nb


def _inside(n: int, faces: list[Face], vecs: list[list[int]], cols: list[int]) -> bool:
    """Whether ``1 = sum`` of the columns of ``cols``, each a positive combination of its
    face's basis strictly inside the face (the vertex test of :func:`count_face_sets`)."""
    num, den = _u_coefficients(vecs, n)
    if den < 0:
        num = [-c for c in num]
    if any(c <= 0 for c in num):
        return False
    at = 0
    for ci in cols:
        fam, strict = faces[ci]
        v = [sum(num[at + t] * fam[t][i] for t in range(len(fam))) for i in range(n)]
        at += len(fam)
        if any(not q * v[a] < p * v[b] for a, b, p, q in strict):
            return False
    return True


def _face_sets_from(args: tuple[int, list[Face], int, bool]) -> tuple[Fraction, int]:
    """The vertices from the face sets holding face ``first``: with ``only_later``, the sets
    whose least face is ``first`` (weight ``n!/(n-k)!`` each); else every set holding it
    (weight ``n!/(n-k)!/k``, for a sum over orbit representatives)."""
    from math import perm

    n, faces, first, only_later = args
    one = [1] * n
    total, sets = Fraction(0), 0

    def dfs(start: int, basis: list, vecs: list, cols: list, rest: list[int]) -> None:
        # rest: 1 reduced against basis (reducing against the rows in order is
        # incremental: the rows added later only act after the earlier ones)
        nonlocal total, sets
        if not any(rest) and _inside(n, faces, vecs, cols):
            k = len(cols)
            total += perm(n, k) if only_later else Fraction(perm(n, k), k)
            sets += 1
        if len(cols) == n:
            return
        for i in range(start, len(faces)):
            fam = faces[i][0]
            if i == first or len(vecs) + len(fam) > n:
                continue
            nb = _independent(basis, fam)
            if nb is not None:
                dfs(i + 1, nb, vecs + fam, cols + [i], _reduce(nb[len(basis):], rest))

    basis = _independent([], faces[first][0])
    if basis is None:
        return Fraction(0), 0
    dfs(first + 1 if only_later else 0, basis, list(faces[first][0]), [first],
        _reduce(basis, list(one)))
    return total, sets


def count_face_sets(n: int, faces: list[Face], orbits: list[tuple[int, int]] | None = None,
                    processes: int = 1) -> int:
    """The number of vertices of ``{T : every column in the cone C, T 1 = 1}`` from the
    non-zero faces of ``C`` (exact integer and rational arithmetic).

    ``T`` is a vertex iff the smallest faces holding its columns have linearly independent
    spans (else a direction in their sum moves ``T`` both ways); then ``1`` decomposes
    uniquely, so the vertices are the sets ``S`` of distinct faces whose basis vectors are
    independent and write ``1`` with positive coefficients, each column strictly inside
    its face, a set of ``k`` faces giving ``n!/(n-k)!`` vertices (the other columns zero).

    With ``orbits`` (``(representative, orbit size)`` under a group of symmetries of
    ``C`` permuting the faces), the sum runs over the representatives only: the weight
    ``n!/(n-k)!`` of a set is shared among its ``k`` faces, and faces in one orbit lie
    in as many sets of each size. ``processes`` splits the search by face.

    Examples
    --------
    >>> faces = [([[2, 1]], [(1, 0, 2, 1)]), ([[1, 2]], [(0, 1, 2, 1)]),
    ...          ([[1, 0], [0, 1]], [(0, 1, 2, 1), (1, 0, 2, 1)])]  # U(2, 2)
    >>> count_face_sets(2, faces), count_face_sets(2, faces, orbits=[(0, 2), (2, 1)])
    (4, 4)
    """
    if orbits is None:
        work = [(n, faces, i, True) for i in range(len(faces))]
        sizes = [1] * len(faces)
    else:
        work = [(n, faces, i, False) for i, _ in orbits]
        sizes = [size for _, size in orbits]
    if processes > 1:
        import multiprocessing as mp

        with mp.get_context("fork").Pool(processes) as pool:
            parts = pool.map(_face_sets_from, work, chunksize=1)
    else:
        parts = [_face_sets_from(w) for w in work]
    total = sum((size * t for size, (t, _) in zip(sizes, parts, strict=True)), Fraction(0))
    if total.denominator != 1:
        raise ArithmeticError(f"count_face_sets: a non-integer count {total}")
    return int(total)


def _path_faces(n: int, lam: Fraction) -> list[Face]:
    """U's faces (:func:`_u_faces`) as :data:`Face` rows: a free pair is strict both ways."""
    p, q = lam.numerator, lam.denominator
    patterns, families = _u_faces(n, p, q)
    return [(fam, [c for i in range(n - 1) if pt[i] == "*"
                   for c in ((i, i + 1, p, q), (i + 1, i, p, q))])
            for pt, fam in zip(patterns, families, strict=True)]


def u_vertex_sets(n: int, lam: Fraction, first: int) -> Iterator[list[int]]:
    """The vertex sets of U (lists of face-pattern indices, in :func:`_u_faces` order)
    whose first pattern is ``first``: the sets ``S`` of :func:`u_vertex_count` (and of
    the chambers of U, :mod:`dpfix.theory.parametric`).

    Examples
    --------
    >>> list(u_vertex_sets(3, Fraction(2), 0))  # each set gives vertices up to its columns' places
    [[0, 1, 4], [0, 7]]
    """
    faces = _path_faces(n, lam)
    one = [1] * n

    def dfs(start: int, basis: list, vecs: list, cols: list) -> Iterator[list[int]]:
        if not any(_reduce(basis, list(one))) and _inside(n, faces, vecs, cols):
            yield list(cols)
        if len(cols) == n:
            return
        for i in range(start, len(faces)):
            fam = faces[i][0]
            if len(vecs) + len(fam) > n:
                continue
            nb = _independent(basis, fam)
            if nb is not None:
                yield from dfs(i + 1, nb, vecs + fam, cols + [i])

    basis = _independent([], faces[first][0])
    if basis is not None:
        yield from dfs(first + 1, basis, list(faces[first][0]), [first])


def u_vertex_count(n: int, lam: Fraction, processes: int = 1) -> int:
    """The number of vertices of ``U(n, lam)``, counted through their structure, without
    enumerating them (exact integer and rational arithmetic).

    A point ``T`` of U has columns in the cone ``C`` of lam-bounded vectors (Lemma 1:
    generated by the scales). ``T`` is a vertex iff the smallest faces of ``C``
    holding its columns have linearly independent spans (else a direction in their
    sum moves ``T`` both ways inside U; Theorem 2 is the case of rays). A non-zero
    face of ``C`` is a pattern in ``{up, down, free}^(n-1)`` (a zero entry forces a
    zero column), its span has one basis vector per run of tight pairs. So the
    vertices are counted as the sets ``S`` of distinct patterns whose basis vectors
    are independent and write ``1`` with positive coefficients, each column strictly
    inside ``C`` at its free pairs; a set of ``k`` patterns gives ``n!/(n-k)!``
    vertices (the other columns are zero). The search is split by its first pattern
    over ``processes`` worker processes.

    Agrees with Normaliz's counts at ``n <= 5`` (tests); it is what reaches ``U(6)``.

    Examples
    --------
    >>> [u_vertex_count(n, Fraction(2)) for n in (2, 3, 4)]
    [4, 27, 664]
    """
    return count_face_sets(n, _path_faces(n, Fraction(lam)), processes=processes)
