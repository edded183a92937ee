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
    or ``"POINTS"`` (rows ``1 x``), every rational a string ``"p/q"``. The reader
    also takes polymake's computed ``"FACETS"``, ``"AFFINE_HULL"`` and ``"VERTICES"``.

Files are written whole or not at all (a temporary file renamed into place).
The cdd and Normaliz writers add a comment naming the polytope and the shape of
its points (``dpfix shape 3 3``), which :func:`read_polytope` uses to give
vertices back as matrices.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import lcm, prod
from pathlib import Path
from typing import Any

import numpy as np

from dpfix.numbers.exact import ExactnessError, exact_array, to_fraction
from dpfix.theory.enumeration import HRep, VertexArray, cdd_enumerate

__all__ = ["FORMATS", "SUFFIXES", "PolytopeFile", "read_polytope", "write_polytope",
           "format_text", "parse_text", "resolve_format"]

#: The formats, and what each holds by default (``"H"`` constraints, ``"V"`` vertices).
FORMATS: dict[str, str] = {"cdd-ine": "H", "cdd-ext": "V", "normaliz": "H", "polymake": "H"}

#: File suffix -> format.
SUFFIXES: dict[str, str] = {".ine": "cdd-ine", ".ext": "cdd-ext", ".in": "normaliz",
                            ".json": "polymake"}

POLYMAKE_TYPE = "polytope::Polytope<Rational>"
_POLYMAKE_NS = {"polymake": ["https://polymake.org", "4.11"]}
_SHAPE = re.compile(r"dpfix shape((?: \d+)+)")


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

    def vertices(self) -> list[np.ndarray]:
        """The exact vertices, by cdd.gmp, sorted as
        :meth:`dpfix.theory.polytopes.Polytope.vertices` sorts them, each of :attr:`shape`.

        An H-representation is enumerated (double description); the points of a
        V-representation are reduced to the extreme ones (cdd's redundancy removal).
        """
        shape = self.shape or (self.d,)
        if self.points is None:
            va, _ = cdd_enumerate(self.hrep, shape)
            return va.sorted().to_list()
        import cdd
        import cdd.gmp

        if not len(self.points):
            return []
        mat = cdd.gmp.matrix_from_array([[Fraction(1), *p] for p in self.points],
                                        rep_type=cdd.RepType.GENERATOR)
        cdd.gmp.matrix_redundancy_remove(mat)
        rows = [row[1:] for row in mat.array]
        return VertexArray.from_matrices(rows, shape).sorted().to_list()


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


def _polymake_text(hrep: HRep | None, points: np.ndarray | None) -> str:
    def strs(rows: list[list[Fraction]]) -> list[list[str]]:
        return [[str(v) for v in r] for r in rows]

    data: dict[str, Any] = {"_ns": _POLYMAKE_NS, "_type": POLYMAKE_TYPE}
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
    return _polymake_text(hrep, points)


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
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


# -- reading -------------------------------------------------------------------------------
def _number(token: Any, where: str) -> Fraction:
    if isinstance(token, float):
        raise ExactnessError(f"{where}: a float {token!r} where an exact rational is required")
    if isinstance(token, str) and re.fullmatch(r"[+-]?\d+(/\d+)?", token.strip()) is None:
        if re.fullmatch(r"[+-]?[\d.]+([eE][+-]?\d+)?", token.strip()):
            raise ExactnessError(f"{where}: a decimal {token!r} where an exact rational is "
                                 "required")
        raise ValueError(f"{where}: not a rational number: {token!r}")
    return to_fraction(token, where)


def _from_rows(d: int, ub: list[list[Fraction]], eq: list[list[Fraction]],
               shape: tuple[int, ...], name: str) -> PolytopeFile:
    """cdd-style rows ``[b, -a]`` to ``A x <= b`` and ``A_eq x = b_eq``."""
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


def _comments_shape(comments: list[str], d: int, shape: Sequence[int] | None
                    ) -> tuple[tuple[int, ...], str]:
    name = next((c for c in comments if c and not _SHAPE.search(c)), "")
    if shape is None:
        m = next((m for c in comments if (m := _SHAPE.search(c))), None)
        shape = tuple(int(s) for s in m.group(1).split()) if m else (d,)
    return _shape_of(shape, d), name


def _parse_cdd(text: str, where: str, shape: Sequence[int] | None) -> PolytopeFile:
    comments, lines = [], []
    for raw in text.splitlines():
        s = raw.strip()
        if s.startswith("*"):
            comments.append(s[1:].strip())
        elif s:
            lines.append(s)
    kind, lin = "H", set()
    try:
        begin = lines.index("begin")
        end = lines.index("end", begin)
    except ValueError:
        raise ValueError(f"{where}: no 'begin' ... 'end' block (not a cdd file)") from None
    for s in lines[:begin] + lines[end + 1:]:
        if s.startswith("V-representation"):
            kind = "V"
        elif s.startswith("linearity"):
            nums = [int(t) for t in s.split()[1:]]
            if len(nums) != 1 + nums[0]:
                raise ValueError(f"{where}: linearity line {s!r}: expected a count and "
                                 "that many rows")
            lin = {i - 1 for i in nums[1:]}
    head = lines[begin + 1].split()
    if len(head) != 3 or head[2] not in ("rational", "integer", "real"):
        raise ValueError(f"{where}: expected 'm d rational' after begin, got {lines[begin + 1]!r}")
    if head[2] == "real":
        raise ExactnessError(f"{where}: number type 'real': floats where exact rationals are "
                             "required")
    m, cols = int(head[0]), int(head[1])
    body = lines[begin + 2:end]
    if len(body) != m:
        raise ValueError(f"{where}: the header says {m} rows, the block has {len(body)}")
    rows = []
    for k, s in enumerate(body):
        toks = s.split()
        if len(toks) != cols:
            raise ValueError(f"{where}: row {k + 1} has {len(toks)} entries, expected {cols}")
        rows.append([_number(t, f"{where} row {k + 1}") for t in toks])
    d = cols - 1
    shp, name = _comments_shape(comments, d, shape)
    if kind == "V":
        if lin:
            raise ValueError(f"{where}: linearity in a V-representation (lines): unbounded")
        return _from_points(d, rows, where, shp, name)
    return _from_rows(d, [r for i, r in enumerate(rows) if i not in lin],
                      [r for i, r in enumerate(rows) if i in lin], shp, name)


def _parse_normaliz(text: str, where: str, shape: Sequence[int] | None) -> PolytopeFile:
    comments = [c.strip() for c in re.findall(r"/\*(.*?)\*/", text, flags=re.S)]
    tokens = re.sub(r"/\*.*?\*/", " ", text, flags=re.S).split()
    d, blocks, i = None, {}, 0
    while i < len(tokens):
        key = tokens[i]
        if key == "amb_space":
            d = int(tokens[i + 1])
            i += 2
            continue
        if key not in ("inhom_inequalities", "inhom_equations", "vertices"):
            raise ValueError(f"{where}: Normaliz input type {key!r} is not read (only "
                             "amb_space, inhom_inequalities, inhom_equations, vertices)")
        if d is None:
            raise ValueError(f"{where}: {key} before amb_space")
        m, width = int(tokens[i + 1]), d + 1
        flat = tokens[i + 2:i + 2 + m * width]
        if len(flat) != m * width:
            raise ValueError(f"{where}: {key} {m}: expected {m} rows of {width} entries")
        rows = [[_number(t, f"{where} {key}") for t in flat[r * width:(r + 1) * width]]
                for r in range(m)]
        blocks[key] = rows
        i += 2 + m * width
    if d is None:
        raise ValueError(f"{where}: no amb_space (not a Normaliz input file)")
    shp, name = _comments_shape(comments, d, shape)
    if "vertices" in blocks:
        if len(blocks) > 1:
            raise ValueError(f"{where}: both vertices and constraints")
        # p_1 .. p_d q -> homogenizing coordinate first
        return _from_points(d, [[r[-1], *r[:-1]] for r in blocks["vertices"]], where, shp, name)

    def cdd_rows(rows: list[list[Fraction]]) -> list[list[Fraction]]:
        return [[r[-1], *r[:-1]] for r in rows]  # c.x + c0 >= 0 is cdd's [c0, c]
    return _from_rows(d, cdd_rows(blocks.get("inhom_inequalities", [])),
                      cdd_rows(blocks.get("inhom_equations", [])), shp, name)


def _polymake_matrix(data: dict, keys: tuple[str, ...], where: str) -> list[list[Fraction]]:
    for key in keys:
        if key in data:
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
    kind = data.get("_type") if isinstance(data, dict) else None
    if kind not in (POLYMAKE_TYPE, "polytope::Polytope<Integer>"):
        if isinstance(kind, str) and "Float" in kind:
            raise ExactnessError(f"{where}: a {kind}: floats where exact rationals are "
                                 "required")
        raise ValueError(f"{where}: _type {kind!r}, expected {POLYMAKE_TYPE!r}")
    ub = _polymake_matrix(data, ("INEQUALITIES", "FACETS"), where)
    eq = _polymake_matrix(data, ("EQUATIONS", "AFFINE_HULL"), where)
    pts = _polymake_matrix(data, ("POINTS", "VERTICES"), where)
    cols = data.get("CONE_AMBIENT_DIM") or len((ub + eq + pts)[0])
    if any(len(r) != cols for r in ub + eq + pts):
        raise ValueError(f"{where}: rows of a length other than CONE_AMBIENT_DIM = {cols}")
    d = int(cols) - 1
    shp = _shape_of(shape, d)
    if pts:  # with constraints too (polymake computed both), the points suffice
        return _from_points(d, pts, where, shp, "")
    return _from_rows(d, ub, eq, shp, "")


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
        For a malformed file, naming the line or field.

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
    return parse_text(path.read_text(encoding="utf-8"), fmt, shape=shape, where=str(path))
