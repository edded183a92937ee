"""Polytopes and vertex lists in the files of cdd, Normaliz and polymake, exactly.

A polytope ``{x in Q^d : A x <= b, A_eq x = b_eq}`` (an H-representation,
:class:`dpfix.theory.enumeration.HRep`) or a list of points ``x`` (a V-representation)
is written and read in four formats:

``"cdd-ine"`` (suffix ``.ine``), ``"cdd-ext"`` (``.ext``)
    cddlib's rational format. ``H-representation``, optionally
    ``linearity k i_1 .. i_k`` (1-based rows that are equations), then
    ``begin``, ``m d+1 rational``, one row ``b -a_1 .. -a_d`` per constraint
    (``b - a.x >= 0``, or ``= 0`` on a linearity row), ``end``. A vertex list is
    ``V-representation`` with rows ``1 x_1 .. x_d``. Lines starting with ``*``
    are comments.
``"normaliz"`` (``.in``)
    Normaliz's input file, integer entries only (each row scaled by the least
    common multiple of its denominators): ``amb_space d``, then
    ``inhom_inequalities m`` with rows ``c_1 .. c_d c_0`` (``c.x + c_0 >= 0``)
    and ``inhom_equations k`` (``c.x + c_0 = 0``), as
    :meth:`dpfix.theory.enumeration.HRep.normaliz_rows` gives them; a vertex list is
    ``vertices m`` with rows ``p_1 .. p_d q``: the vertex ``p / q`` (Normaliz's
    last, homogenizing, coordinate is the denominator). Comments are ``/* .. */``.
``"polymake"`` (``.json``)
    polymake's JSON for a ``polytope::Polytope<Rational>``: ``"_type"``,
    ``"_ns"``, ``"CONE_AMBIENT_DIM"`` (``d + 1``) and ``"INEQUALITIES"`` /
    ``"EQUATIONS"`` (rows ``b -a``, the homogenizing coordinate first, as in cdd)
    or ``"POINTS"`` (rows ``1 x``), every rational a string ``"p/q"``, and
    ``"_info": {"description": ...}`` holding the polytope's name and shape. The
    reader also takes polymake's computed ``"FACETS"``, ``"AFFINE_HULL"`` and
    ``"VERTICES"``.

Files are written whole or not at all (a temporary file renamed into place, with
the permissions of a new file). The writers record the polytope's name and the
shape of its points (``dpfix shape 3 3``): in a comment (cdd, Normaliz) or in the
description (polymake); :func:`read_polytope` uses it to give vertices back as
matrices.

A file is read only when it is a regular file of UTF-8 text; anything malformed
is a ``ValueError`` naming the file and the line or field.
:meth:`PolytopeFile.vertices` is guarded, as
:meth:`dpfix.theory.polytopes.Polytope.vertices` is: it refuses (``ValueError``,
``limit=None`` lifts the guard) an H-representation whose vertex count may exceed
:data:`H_VERTEX_LIMIT` by the upper bound theorem, and a V-representation of more
than :data:`V_POINT_LIMIT` points (cdd runs in C, where no signal interrupts it).
"""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import comb, lcm, prod
from pathlib import Path
from typing import Any

import numpy as np

from dpfix.numbers.exact import ExactnessError, exact_array, rank, to_fraction
from dpfix.theory.enumeration import HRep, VertexArray, cdd_enumerate

__all__ = ["FORMATS", "SUFFIXES", "PolytopeFile", "read_polytope", "write_polytope",
           "format_text", "parse_text", "resolve_format", "H_VERTEX_LIMIT", "V_POINT_LIMIT",
           "vertex_bound"]

#: The formats, and what each holds by default (``"H"`` constraints, ``"V"`` vertices).
FORMATS: dict[str, str] = {"cdd-ine": "H", "cdd-ext": "V", "normaliz": "H", "polymake": "H"}

#: File suffix -> format.
SUFFIXES: dict[str, str] = {".ine": "cdd-ine", ".ext": "cdd-ext", ".in": "normaliz",
                            ".json": "polymake"}

POLYMAKE_TYPE = "polytope::Polytope<Rational>"
_POLYMAKE_NS = {"polymake": ["https://polymake.org", "4.11"]}
_SHAPE = re.compile(r"dpfix shape((?: \d{1,9})+)")

#: :meth:`PolytopeFile.vertices` enumerates an H-representation only when the upper
#: bound theorem (:func:`vertex_bound`) allows at most this many vertices: U(4) (bound
#: 24,752; 664 vertices in 0.2 s) passes, R_F(4) (bound 1,136,960; cdd ran over 14
#: minutes) and the 30-cube (bound 4.6e11) do not.
H_VERTEX_LIMIT = 200_000
#: ... and reduces a V-representation to its extreme points only up to this many points
#: (cdd's redundancy removal, one LP per point: 100 points of R^16 take 3 s, 200 take 26 s).
V_POINT_LIMIT = 100
#: The longest number read (Python reads integers of at most 4300 digits from text).
_MAX_NUMBER_CHARS = 4300


def resolve_format(path: str | Path, format: str | None = None) -> str:
    """The format named, or the one of the file's suffix.

    Examples
    --------
    >>> resolve_format("U3.ine"), resolve_format("out.txt", "normaliz")
    ('cdd-ine', 'normaliz')
    """
    if format is not None:
        if format not in FORMATS:
            raise ValueError(f"format: one of {', '.join(FORMATS)}, got {format!r}")
        return format
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"{path}: cannot tell the format from the suffix {suffix!r}; pass "
                         f"format= (one of {', '.join(FORMATS)}) or use "
                         f"{', '.join(SUFFIXES)}")
    return SUFFIXES[suffix]


# -- the data ------------------------------------------------------------------------------
@dataclass(frozen=True)
class PolytopeFile:
    """A polytope read from a file: its constraints (H) or its points (V), exact.

    Attributes
    ----------
    d : the number of variables.
    A_ub, b_ub, A_eq, b_eq : the H-representation ``A_ub x <= b_ub``, ``A_eq x = b_eq``
        (exact object arrays; None for a V-representation).
    points : ``(m, d)`` exact object array of the points (None for an H-representation).
    shape : the shape of one point as a matrix (``(d,)`` unless the file says).
    name : the polytope's name from the file's comment, else ``""``.

    Examples
    --------
    >>> from dpfix.theory.polytopes import F
    >>> P = F(2, 2, ["1/2", "1/2"])
    >>> back = parse_text(format_text("cdd-ine", hrep=P.hrep, shape=P.shape), "cdd-ine")
    >>> back.what, back.shape, [V.tolist() == W.tolist()
    ...                          for V, W in zip(back.vertices(), P.vertices())]
    ('H', (2, 2), [True, True])
    """

    d: int
    A_ub: np.ndarray | None = None
    b_ub: np.ndarray | None = None
    A_eq: np.ndarray | None = None
    b_eq: np.ndarray | None = None
    points: np.ndarray | None = None
    shape: tuple[int, ...] = ()
    name: str = ""

    @property
    def what(self) -> str:
        """``"H"`` (constraints) or ``"V"`` (points)."""
        return "V" if self.points is not None else "H"

    @property
    def hrep(self) -> HRep:
        """The constraints as a :class:`~dpfix.theory.enumeration.HRep` (H-representations only)."""
        if self.A_ub is None:
            raise ValueError("a V-representation has no constraints; use vertices()")

        def sparse(A: np.ndarray, b: np.ndarray) -> list:
            return [({c: v for c, v in enumerate(row) if v != 0}, bi)
                    for row, bi in zip(A, b, strict=True)]
        return HRep(self.d, sparse(self.A_ub, self.b_ub), sparse(self.A_eq, self.b_eq))

    def vertices(self, limit: int | None | str = "default") -> list[np.ndarray]:
        """The exact vertices, by cdd.gmp, sorted as
        :meth:`dpfix.theory.polytopes.Polytope.vertices` sorts them, each of :attr:`shape`.

        An H-representation is enumerated (double description); the points of a
        V-representation are reduced to the extreme ones (cdd's redundancy removal).

        Parameters
        ----------
        limit : int, None or "default"
            The guard: the most vertices the enumeration may have to find. An
            H-representation is refused when :func:`vertex_bound` exceeds it
            (``"default"``: :data:`H_VERTEX_LIMIT`), a V-representation when it has
            more points (``"default"``: :data:`V_POINT_LIMIT`); None lifts the guard.

        Raises
        ------
        ValueError
            Beyond the guard, or for an unbounded polyhedron (cdd finds rays or lines).

        Examples
        --------
        >>> cube = parse_text("H-representation\\nbegin\\n4 3 rational\\n1 -1 0\\n0 1 0\\n"
        ...                   "1 0 -1\\n0 0 1\\nend\\n", "cdd-ine")
        >>> len(cube.vertices()), vertex_bound(4, 2)
        (4, 4)
        >>> cube.vertices(limit=3)
        Traceback (most recent call last):
        ...
        ValueError: PolytopeFile.vertices(): the upper bound theorem allows up to 4 vertices \
(4 inequalities, dimension <= 2), more than limit=3; pass limit=None to lift the guard
        """
        shape = self.shape or (self.d,)
        if self.points is None:
            h = self.hrep
            dim = self.d - (rank(self.A_eq) if len(h.eq) else 0)
            bound = vertex_bound(len(h.ub), dim)
            top = H_VERTEX_LIMIT if limit == "default" else limit
            if top is not None and bound > top:
                raise ValueError(
                    f"PolytopeFile.vertices(): the upper bound theorem allows up to "
                    f"{bound:,} vertices ({len(h.ub)} inequalities, dimension <= {dim}), "
                    f"more than limit={top:,}; pass limit=None to lift the guard")
            try:
                va, _ = cdd_enumerate(h, shape)
            except RuntimeError as exc:  # rays or lines
                raise ValueError(f"PolytopeFile.vertices(): {exc}; only a bounded polytope "
                                 "has a list of vertices") from None
            return va.sorted().to_list()
        import cdd
        import cdd.gmp

        if not len(self.points):
            return []
        top = V_POINT_LIMIT if limit == "default" else limit
        if top is not None and len(self.points) > top:
            raise ValueError(
                f"PolytopeFile.vertices(): {len(self.points):,} points, more than "
                f"limit={top:,} (cdd's redundancy removal solves one LP per point); pass "
                "limit=None to lift the guard")
        mat = cdd.gmp.matrix_from_array([[Fraction(1), *p] for p in self.points],
                                        rep_type=cdd.RepType.GENERATOR)
        cdd.gmp.matrix_redundancy_remove(mat)
        rows = [row[1:] for row in mat.array]
        return VertexArray.from_matrices(rows, shape).sorted().to_list()


def vertex_bound(inequalities: int, dimension: int) -> int:
    """The most vertices a polytope of dimension at most ``dimension`` with at most
    ``inequalities`` facets can have: McMullen's upper bound theorem (the number of
    facets of the cyclic polytope ``C(m, d)``, ``binom(m - ceil(d/2), floor(d/2)) +
    binom(m - floor(d/2) - 1, ceil(d/2) - 1)``), the largest over ``d <= dimension``.

    Examples
    --------
    >>> vertex_bound(6, 3), vertex_bound(21, 20) >= 21, vertex_bound(60, 30) > 10**11
    (8, True, True)
    """
    best = 1  # a point (dimension 0)
    for d in range(1, max(0, dimension) + 1):
        if inequalities < d + 1:
            break
        lo, hi = d // 2, (d + 1) // 2
        best = max(best, comb(inequalities - hi, lo) + comb(inequalities - lo - 1, hi - 1))
    return best


# -- writing -------------------------------------------------------------------------------
def _shape_of(shape: Sequence[int] | None, d: int) -> tuple[int, ...]:
    shape = (d,) if shape is None else tuple(int(s) for s in shape)
    if prod(shape) != d:
        raise ValueError(f"shape: {shape} does not hold {d} variables")
    return shape


def _points(vertices: Iterable[Any]) -> tuple[np.ndarray, tuple[int, ...] | None]:
    """The points as an exact ``(m, d)`` array, and the shape of the first one."""
    arrays = [exact_array(V, "vertices") for V in vertices]
    if not arrays:
        raise ValueError("vertices: the list is empty (its dimension is unknown)")
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        raise ValueError(f"vertices: points of different shapes {sorted(shapes)}")
    return np.array([a.ravel() for a in arrays], dtype=object), arrays[0].shape


def _dense_rows(h: HRep) -> tuple[list[list[Fraction]], list[list[Fraction]]]:
    """cdd's rows ``[b, -a]`` of the equalities and of the inequalities."""
    def row(coef: dict, b: Fraction) -> list[Fraction]:
        r = [Fraction(b)] + [Fraction(0)] * h.d
        for c, v in coef.items():
            r[c + 1] = -Fraction(v)
        return r
    return [row(a, b) for a, b in h.eq], [row(a, b) for a, b in h.ub]


def _comment_lines(name: str, shape: tuple[int, ...]) -> list[str]:
    lines = [name] if name else []
    return lines + ["dpfix shape " + " ".join(map(str, shape))]


def _cdd_text(hrep: HRep | None, points: np.ndarray | None, name: str,
              shape: tuple[int, ...]) -> str:
    out = [f"* {line}" for line in _comment_lines(name, shape)]
    if hrep is not None:
        eq, ub = _dense_rows(hrep)
        rows, d = eq + ub, hrep.d
        out.append("H-representation")
        if eq:
            out.append(f"linearity {len(eq)} " + " ".join(str(i + 1) for i in range(len(eq))))
    else:
        rows, d = [[Fraction(1), *p] for p in points], points.shape[1]
        out.append("V-representation")
    out += ["begin", f"{len(rows)} {d + 1} rational"]
    out += [" ".join(str(v) for v in r) for r in rows]
    out.append("end")
    return "\n".join(out) + "\n"


def _normaliz_text(hrep: HRep | None, points: np.ndarray | None, name: str,
                   shape: tuple[int, ...]) -> str:
    out = [f"/* {line} */" for line in _comment_lines(name, shape)]

    def block(kind: str, rows: list[list[int]]) -> None:
        out.append(f"{kind} {len(rows)}")
        out.extend(" ".join(map(str, r)) for r in rows)

    if hrep is not None:
        ineq, eq = hrep.normaliz_rows()
        out.append(f"amb_space {hrep.d}")
        block("inhom_inequalities", ineq)
        if eq:
            block("inhom_equations", eq)
    else:
        out.append(f"amb_space {points.shape[1]}")
        rows = []
        for p in points:
            q = lcm(1, *(v.denominator for v in p))
            rows.append([int(v * q) for v in p] + [q])
        block("vertices", rows)
    return "\n".join(out) + "\n"


def _polymake_text(hrep: HRep | None, points: np.ndarray | None, name: str,
                   shape: tuple[int, ...]) -> str:
    def strs(rows: list[list[Fraction]]) -> list[list[str]]:
        return [[str(v) for v in r] for r in rows]

    data: dict[str, Any] = {"_ns": _POLYMAKE_NS, "_type": POLYMAKE_TYPE,
                            "_info": {"description": "\n".join(_comment_lines(name, shape))}}
    if hrep is not None:
        eq, ub = _dense_rows(hrep)
        data["CONE_AMBIENT_DIM"] = hrep.d + 1
        data["INEQUALITIES"] = strs(ub)
        if eq:
            data["EQUATIONS"] = strs(eq)
    else:
        data["CONE_AMBIENT_DIM"] = points.shape[1] + 1
        data["POINTS"] = strs([[Fraction(1), *p] for p in points])
    return json.dumps(data, indent=1) + "\n"


def format_text(format: str, *, hrep: HRep | None = None, vertices: Iterable[Any] | None = None,
                shape: Sequence[int] | None = None, name: str = "") -> str:
    """The text of a file of ``format`` holding ``hrep`` or ``vertices`` (exactly one).

    Parameters
    ----------
    format : ``"cdd-ine"``, ``"cdd-ext"``, ``"normaliz"`` or ``"polymake"``
        (``"cdd-ine"`` holds constraints only, ``"cdd-ext"`` points only).
    hrep : dpfix.theory.enumeration.HRep, optional
        The constraints (:attr:`dpfix.theory.polytopes.Polytope.hrep`).
    vertices : iterable of exact arrays, optional
        The points, each a vector or a matrix (flattened row-major).
    shape : sequence of int, optional
        The shape of one point, recorded in a comment (cdd, Normaliz); by default
        the shape of the first vertex, or ``(d,)``.
    name : str
        Recorded in a comment (cdd, Normaliz).

    Returns
    -------
    str

    Examples
    --------
    >>> from dpfix.theory.polytopes import U
    >>> print(format_text("cdd-ext", vertices=U(2, 2).vertices()[:2]), end="")
    * dpfix shape 2 2
    V-representation
    begin
    2 5 rational
    1 0 1 0 1
    1 1/3 2/3 2/3 1/3
    end
    >>> print(format_text("normaliz", vertices=[["1/2", "1/3"]]), end="")
    /* dpfix shape 2 */
    amb_space 2
    vertices 1
    3 2 6
    """
    fmt = resolve_format("", format)
    if (hrep is None) == (vertices is None):
        raise ValueError("give exactly one of hrep= (constraints) and vertices= (points)")
    points = None
    if vertices is not None:
        if fmt == "cdd-ine":
            raise ValueError("format 'cdd-ine' holds constraints; write points as 'cdd-ext'")
        points, first = _points(vertices)
        shape = _shape_of(shape if shape is not None else first, points.shape[1])
    else:
        if fmt == "cdd-ext":
            raise ValueError("format 'cdd-ext' holds points; write constraints as 'cdd-ine'")
        shape = _shape_of(shape, hrep.d)
    if fmt.startswith("cdd"):
        return _cdd_text(hrep, points, name, shape)
    if fmt == "normaliz":
        return _normaliz_text(hrep, points, name, shape)
    return _polymake_text(hrep, points, name, shape)


def write_polytope(path: str | Path, *, hrep: HRep | None = None,
                   vertices: Iterable[Any] | None = None, format: str | None = None,
                   shape: Sequence[int] | None = None, name: str = "") -> Path:
    """Write :func:`format_text` to ``path`` whole (a temporary file renamed into
    place: on any error the file is as it was). The format is ``format`` or the
    suffix's (:data:`SUFFIXES`).

    Returns
    -------
    pathlib.Path
        ``path``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from dpfix.theory.polytopes import RF
    >>> P = RF(2, 2, ["1/2", "1/2"])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write_polytope(pathlib.Path(tmp) / "RF.json", hrep=P.hrep, shape=P.shape)
    ...     [V.tolist() for V in read_polytope(path, shape=P.shape).vertices()] == [
    ...         V.tolist() for V in P.vertices()]
    True
    """
    path = Path(path)
    text = format_text(resolve_format(path, format), hrep=hrep, vertices=vertices,
                       shape=shape, name=name)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, _new_file_mode())  # mkstemp's 0600 would make the file private
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _new_file_mode() -> int:
    """The permissions ``open()`` gives a new file: ``0o666`` less the umask."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


# -- reading -------------------------------------------------------------------------------
_RATIONAL = re.compile(r"[+-]?\d+(/\d+)?")
_DECIMAL = re.compile(r"[+-]?[\d.]+([eE][+-]?\d+)?")


def _number(token: Any, where: str) -> Fraction:
    """One exact rational of a file: an int, or a string ``p`` or ``p/q``."""
    if isinstance(token, float):
        raise ExactnessError(f"{where}: a float {token!r} where an exact rational is required")
    if isinstance(token, bool) or not isinstance(token, (str, int)):
        raise ValueError(f"{where}: not a rational number: {_short(token)}")
    text = token.strip() if isinstance(token, str) else str(token)
    if len(text) > _MAX_NUMBER_CHARS:
        raise ValueError(f"{where}: a number of {len(text):,} characters (at most "
                         f"{_MAX_NUMBER_CHARS:,} are read)")
    if _RATIONAL.fullmatch(text) is None:
        if _DECIMAL.fullmatch(text):
            raise ExactnessError(f"{where}: a decimal {_short(token)} where an exact rational "
                                 "is required")
        raise ValueError(f"{where}: not a rational number: {_short(token)}")
    if "/" in text and int(text.split("/")[1]) == 0:
        raise ValueError(f"{where}: {text!r} has the denominator 0")
    return to_fraction(text, where)


def _short(x: Any, width: int = 40) -> str:
    """``repr(x)``, cut to ``width`` characters."""
    r = repr(x)
    return r if len(r) <= width else r[:width - 5] + " ...'"


def _count(token: str, where: str, what: str) -> int:
    """A non-negative integer of a header (a count or a size)."""
    if re.fullmatch(r"\d{1,9}", token) is None:
        raise ValueError(f"{where}: {what}: expected a non-negative integer, got {_short(token)}")
    return int(token)


def _from_rows(d: int, ub: list[list[Fraction]], eq: list[list[Fraction]],
               shape: tuple[int, ...], name: str, where: str) -> PolytopeFile:
    """cdd-style rows ``[b, -a]`` to ``A x <= b`` and ``A_eq x = b_eq``."""
    if not ub and not eq:
        raise ValueError(f"{where}: no constraint (an H-representation without rows is all "
                         f"of Q^{d}, not a polytope)")
    def split(rows: list[list[Fraction]]) -> tuple[np.ndarray, np.ndarray]:
        A = np.array([[-v for v in r[1:]] for r in rows], dtype=object).reshape(len(rows), d)
        return A, np.array([r[0] for r in rows], dtype=object)
    (A, b), (Ae, be) = split(ub), split(eq)
    return PolytopeFile(d, A, b, Ae, be, shape=shape, name=name)


def _from_points(d: int, rows: list[list[Fraction]], where: str, shape: tuple[int, ...],
                 name: str) -> PolytopeFile:
    """Homogenized rows ``[h, h x]`` (``h > 0``) to the points ``x``."""
    pts = []
    for r in rows:
        if r[0] <= 0:
            raise ValueError(f"{where}: a ray or a line (homogenizing coordinate {r[0]}); "
                             "only bounded polytopes are read")
        pts.append([v / r[0] for v in r[1:]])
    return PolytopeFile(d, points=np.array(pts, dtype=object).reshape(len(pts), d),
                        shape=shape, name=name)


def _comments_shape(comments: list[str], d: int, shape: Sequence[int] | None,
                    where: str) -> tuple[tuple[int, ...], str]:
    name = next((c for c in comments if c and not _SHAPE.search(c)), "")
    recorded = shape is None
    if recorded:
        m = next((m for c in comments if (m := _SHAPE.search(c))), None)
        shape = tuple(int(s) for s in m.group(1).split()) if m else (d,)
    try:
        return _shape_of(shape, d), name
    except ValueError as exc:
        if recorded:
            raise ValueError(f"{where}: the recorded {exc}") from None
        raise


def _parse_cdd(text: str, where: str, shape: Sequence[int] | None) -> PolytopeFile:
    comments, lines = [], []
    for raw in text.splitlines():
        s = raw.strip()
        if s.startswith("*"):
            comments.append(s[1:].strip())
        elif s:
            lines.append(s)
    kind, linearity = "H", None
    try:
        begin = lines.index("begin")
        end = lines.index("end", begin)
    except ValueError:
        raise ValueError(f"{where}: no 'begin' ... 'end' block (not a cdd file)") from None
    for s in lines[:begin] + lines[end + 1:]:
        if s.startswith("V-representation"):
            kind = "V"
        elif s.startswith("linearity"):
            if linearity is not None:
                raise ValueError(f"{where}: two linearity lines")
            linearity = s
    if end == begin + 1:
        raise ValueError(f"{where}: nothing between 'begin' and 'end' (expected 'm d rational' "
                         "and the rows)")
    head = lines[begin + 1].split()
    if len(head) != 3 or head[2] not in ("rational", "integer", "real"):
        raise ValueError(f"{where}: expected 'm d rational' after begin, got "
                         f"{_short(lines[begin + 1])}")
    if head[2] == "real":
        raise ExactnessError(f"{where}: number type 'real': floats where exact rationals are "
                             "required")
    m = _count(head[0], where, "the number of rows m of 'm d rational'")
    cols = _count(head[1], where, "the number of columns of 'm d rational'")
    if cols < 2:
        raise ValueError(f"{where}: 'm d rational' with {cols} column(s): a row is the "
                         "constant and at least one coefficient")
    body = lines[begin + 2:end]
    if len(body) != m:
        raise ValueError(f"{where}: the header says {m} rows, the block has {len(body)}")
    lin = set() if linearity is None else _linearity(linearity, m, where)
    rows = []
    for k, s in enumerate(body):
        toks = s.split()
        if len(toks) != cols:
            raise ValueError(f"{where}: row {k + 1} has {len(toks)} entries, expected {cols}")
        rows.append([_number(t, f"{where} row {k + 1}") for t in toks])
    d = cols - 1
    shp, name = _comments_shape(comments, d, shape, where)
    if kind == "V":
        if lin:
            raise ValueError(f"{where}: linearity in a V-representation (lines): unbounded")
        return _from_points(d, rows, where, shp, name)
    return _from_rows(d, [r for i, r in enumerate(rows) if i not in lin],
                      [r for i, r in enumerate(rows) if i in lin], shp, name, where)


def _linearity(line: str, m: int, where: str) -> set[int]:
    """The 0-based rows of ``linearity k i_1 .. i_k``: ``k`` distinct rows of ``1..m``."""
    toks = line.split()[1:]
    if not toks or any(re.fullmatch(r"[+-]?\d{1,9}", t) is None for t in toks):
        raise ValueError(f"{where}: linearity line {_short(line)}: expected 'linearity k "
                         "i_1 .. i_k' in integers")
    nums = [int(t) for t in toks]
    if nums[0] < 1 or len(nums) != 1 + nums[0]:
        raise ValueError(f"{where}: linearity line {_short(line)}: expected a count k >= 1 "
                         "and that many rows")
    rows = nums[1:]
    bad = next((i for i in rows if not 1 <= i <= m), None)
    if bad is not None:
        raise ValueError(f"{where}: linearity line {_short(line)}: row {bad} is not one of "
                         f"the rows 1..{m}")
    twice = next((i for i in rows if rows.count(i) > 1), None)
    if twice is not None:
        raise ValueError(f"{where}: linearity line {_short(line)}: row {twice} is listed "
                         "twice")
    return {i - 1 for i in rows}


def _parse_normaliz(text: str, where: str, shape: Sequence[int] | None) -> PolytopeFile:
    comments = [c.strip() for c in re.findall(r"/\*(.*?)\*/", text, flags=re.S)]
    tokens = re.sub(r"/\*.*?\*/", " ", text, flags=re.S).split()
    d, blocks, i = None, {}, 0
    while i < len(tokens):
        key = tokens[i]
        if i + 1 >= len(tokens):
            raise ValueError(f"{where}: {_short(key)} at the end of the file, without its "
                             "number")
        if key == "amb_space":
            if d is not None:
                raise ValueError(f"{where}: amb_space given twice")
            d = _count(tokens[i + 1], where, "amb_space")
            if d < 1:
                raise ValueError(f"{where}: amb_space {d}: at least one coordinate")
            i += 2
            continue
        if key not in ("inhom_inequalities", "inhom_equations", "vertices"):
            raise ValueError(f"{where}: Normaliz input type {_short(key)} is not read (only "
                             "amb_space, inhom_inequalities, inhom_equations, vertices)")
        if d is None:
            raise ValueError(f"{where}: {key} before amb_space")
        if key in blocks:
            raise ValueError(f"{where}: {key} given twice")
        m, width = _count(tokens[i + 1], where, key), d + 1
        flat = tokens[i + 2:i + 2 + m * width]
        if len(flat) != m * width:
            raise ValueError(f"{where}: {key} {m}: expected {m} rows of {width} entries")
        rows = [[_number(t, f"{where} {key}") for t in flat[r * width:(r + 1) * width]]
                for r in range(m)]
        blocks[key] = rows
        i += 2 + m * width
    if d is None:
        raise ValueError(f"{where}: no amb_space (not a Normaliz input file)")
    shp, name = _comments_shape(comments, d, shape, where)
    if "vertices" in blocks:
        if len(blocks) > 1:
            raise ValueError(f"{where}: both vertices and constraints")
        # p_1 .. p_d q -> homogenizing coordinate first
        return _from_points(d, [[r[-1], *r[:-1]] for r in blocks["vertices"]], where, shp, name)

    def cdd_rows(rows: list[list[Fraction]]) -> list[list[Fraction]]:
        return [[r[-1], *r[:-1]] for r in rows]  # c.x + c0 >= 0 is cdd's [c0, c]
    return _from_rows(d, cdd_rows(blocks.get("inhom_inequalities", [])),
                      cdd_rows(blocks.get("inhom_equations", [])), shp, name, where)


def _polymake_matrix(data: dict, keys: tuple[str, ...], where: str) -> list[list[Fraction]]:
    for key in keys:
        if key in data:
            if not isinstance(data[key], list):
                raise ValueError(f"{where}: {key} is not a matrix (a list of rows), got "
                                 f"{type(data[key]).__name__}")
            rows = [r for r in data[key] if not isinstance(r, dict)]  # {"cols": k}: empty
            if not all(isinstance(r, list) for r in rows):
                raise ValueError(f"{where}: {key} is not a dense matrix (sparse rows are "
                                 "not read)")
            return [[_number(v, f"{where} {key}") for v in r] for r in rows]
    return []


def _parse_polymake(text: str, where: str, shape: Sequence[int] | None) -> PolytopeFile:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: not JSON ({exc.msg}, line {exc.lineno})") from None
    except RecursionError:
        raise ValueError(f"{where}: JSON nested too deeply to be a polytope") from None
    except ValueError as exc:  # an integer beyond Python's limit of digits
        raise ValueError(f"{where}: not read as JSON ({' '.join(str(exc).split()[:8])} ...)"
                         ) from None
    kind = data.get("_type") if isinstance(data, dict) else None
    if kind not in (POLYMAKE_TYPE, "polytope::Polytope<Integer>"):
        if isinstance(kind, str) and "Float" in kind:
            raise ExactnessError(f"{where}: a {kind}: floats where exact rationals are "
                                 "required")
        raise ValueError(f"{where}: _type {_short(kind)}, expected {POLYMAKE_TYPE!r}")
    ub = _polymake_matrix(data, ("INEQUALITIES", "FACETS"), where)
    eq = _polymake_matrix(data, ("EQUATIONS", "AFFINE_HULL"), where)
    pts = _polymake_matrix(data, ("POINTS", "VERTICES"), where)
    cols = data.get("CONE_AMBIENT_DIM")
    if cols is None:
        if not ub + eq + pts:
            raise ValueError(f"{where}: neither CONE_AMBIENT_DIM nor a row of INEQUALITIES, "
                             "EQUATIONS or POINTS")
        cols = len((ub + eq + pts)[0])
    if isinstance(cols, bool) or not isinstance(cols, int) or cols < 2:
        raise ValueError(f"{where}: CONE_AMBIENT_DIM must be an integer >= 2, got "
                         f"{_short(cols)}")
    if any(len(r) != cols for r in ub + eq + pts):
        raise ValueError(f"{where}: rows of a length other than CONE_AMBIENT_DIM = {cols}")
    d = cols - 1
    info = data.get("_info")
    description = info.get("description") if isinstance(info, dict) else None
    comments = description.splitlines() if isinstance(description, str) else []
    shp, name = _comments_shape(comments, d, shape, where)
    # with constraints too (polymake computed both), the points suffice
    if pts or (("POINTS" in data or "VERTICES" in data) and not ub + eq):
        return _from_points(d, pts, where, shp, name)
    return _from_rows(d, ub, eq, shp, name, where)


def parse_text(text: str, format: str, *, shape: Sequence[int] | None = None,
               where: str = "text") -> PolytopeFile:
    """Read the text of a file of ``format`` (see :func:`read_polytope`).

    Examples
    --------
    >>> P = parse_text("amb_space 1\\ninhom_inequalities 2\\n1 0\\n-2 1\\n", "normaliz")
    >>> P.A_ub.tolist(), P.b_ub.tolist(), [V.tolist() for V in P.vertices()]
    ([[Fraction(-1, 1)], [Fraction(2, 1)]], [Fraction(0, 1), Fraction(1, 1)], \
[[Fraction(0, 1)], [Fraction(1, 2)]])
    """
    fmt = resolve_format("", format)
    if fmt.startswith("cdd"):
        return _parse_cdd(text, where, shape)
    if fmt == "normaliz":
        return _parse_normaliz(text, where, shape)
    return _parse_polymake(text, where, shape)


def read_polytope(path: str | Path, format: str | None = None, *,
                  shape: Sequence[int] | None = None) -> PolytopeFile:
    """Read a polytope or a vertex list written by cdd, Normaliz, polymake or
    :meth:`dpfix.theory.polytopes.Polytope.write`, exactly.

    Parameters
    ----------
    path : str or pathlib.Path
    format : ``"cdd-ine"``, ``"cdd-ext"``, ``"normaliz"`` or ``"polymake"``; by
        default from the suffix (:data:`SUFFIXES`).
    shape : the shape of one point; by default the file's ``dpfix shape`` comment,
        else ``(d,)``.

    Returns
    -------
    PolytopeFile
        The H-representation (``A_ub``, ``b_ub``, ``A_eq``, ``b_eq``) or the
        ``points``; :meth:`PolytopeFile.vertices` gives the vertices through cdd.

    Raises
    ------
    dpfix.ExactnessError
        For floats (cdd's ``real``, decimals, polymake's ``Polytope<Float>``).
    ValueError
        For a malformed file, naming the line or field; for a path that is not a
        regular file of UTF-8 text (a folder, a FIFO, a binary file).
    FileNotFoundError
        For a missing file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from dpfix.theory.polytopes import U
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = U(2, 2).write(pathlib.Path(tmp) / "U2.ine")
    ...     back = read_polytope(path)
    >>> back.name, back.shape, len(back.vertices())
    ('U(n=2, lam=2)', (2, 2), 4)
    """
    path = Path(path)
    fmt = resolve_format(path, format)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    if not stat.S_ISREG(mode):  # a FIFO would block until someone writes to it
        what = "a folder" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if \
            stat.S_ISFIFO(mode) else "a device or a socket"
        raise ValueError(f"{path}: {what}, not a regular file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a text file (byte {exc.object[exc.start]:#04x} at "
                         f"offset {exc.start} is not UTF-8)") from None
    return parse_text(text, fmt, shape=shape, where=str(path))
