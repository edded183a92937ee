"""Reports as files, and text summaries: what the commands write and show.

- the JSON conversion (:func:`jsonable`), which refuses numpy random state:
  the entropy of a ``SeedSequence`` rebuilds the generators that drew the
  noise (:func:`small_params` drops it from a constructor's parameters), and the
  JSON file (:func:`write_json`); a release's public and confidential reports are
  built by :mod:`dpfix.release.report`, its figures by :mod:`dpfix.release.figures`;
- the image format of a figure file (:func:`plot_format`);
- the summaries of ``dpfix explore``: one polytope's vertex count, dimension
  and graph (:func:`polytope_summary`, :func:`format_summaries`), exact
  matrices as text (:func:`format_matrix`) and the paper's Example 1
  (:func:`format_example1`).

matplotlib (the ``production`` extra) is imported only when a figure file's format is
checked (:func:`dpfix.numbers.numeric.require`).
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from dpfix.numbers.display import format_exact
from dpfix.numbers.numeric import require

__all__ = ["jsonable", "small_params", "write_json", "plot_format", "format_matrix",
           "polytope_summary", "format_summaries", "format_example1", "EXPLORE_MAX_N",
           "RF_MAX_N", "DIAMETER_MAX_VERTICES"]

#: Graph diameters are computed only up to this many vertices (all-pairs BFS).
DIAMETER_MAX_VERTICES = 1000
#: Largest n explored: the dimensions of U and F (cdd's implicit equalities) take
#: seconds at n = 10 and minutes beyond 15.
EXPLORE_MAX_N = 12
#: R_F has n 2^(n-1) variables: its dimension takes 0.7 s at n = 6, 28 s at n = 7.
RF_MAX_N = 6

#: Random state that must never reach a report: its entropy rebuilds the generators.
_SEED_LIKE = (np.random.SeedSequence, np.random.Generator, np.random.BitGenerator,
              np.random.RandomState)


# ------------------------------------------------------------------ JSON
def jsonable(x: Any) -> Any:
    """``x`` with numpy values, Fractions and non-finite floats made JSON-ready.

    Dicts, lists, tuples and arrays are converted entry by entry; a Fraction
    becomes its text (``"1/3"``), ``inf``/``nan`` become ``"inf"``/``"nan"``.

    Raises
    ------
    TypeError
        For numpy random state (a ``SeedSequence``, ``Generator``,
        ``BitGenerator`` or ``RandomState``): ``str()`` of a SeedSequence
        shows its entropy, which rebuilds the generators.

    Examples
    --------
    >>> jsonable({"z": np.array([0.5, 0.5]), "lam": Fraction(3, 2), "e": float("inf")})
    {'z': [0.5, 0.5], 'lam': '3/2', 'e': 'inf'}
    >>> jsonable([np.random.SeedSequence(1)])
    Traceback (most recent call last):
    ...
    TypeError: refusing to write random state SeedSequence to a report
    """
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else str(float(x))
    if isinstance(x, Fraction):
        return str(x)
    if isinstance(x, _SEED_LIKE):
        raise TypeError(f"refusing to write random state {type(x).__name__} to a report")
    return x if x is None or isinstance(x, str) else str(x)


def _seed_like(x: Any) -> bool:
    if isinstance(x, _SEED_LIKE):
        return True
    if isinstance(x, dict):
        return any(_seed_like(v) for v in x.values())
    if isinstance(x, (list, tuple)):
        return any(_seed_like(v) for v in x)
    return False


def small_params(params: dict) -> dict:
    """A constructor's parameters fit for the public report.

    Random state (or a key naming entropy) is left out and its key listed
    under ``"omitted_random_state"``; long values (above 2,000 characters of
    JSON, such as the heuristic's steps) are left out.

    Examples
    --------
    >>> small_params({"selector": "random", "seed": np.random.SeedSequence(), "passes": 3})
    {'selector': 'random', 'omitted_random_state': ['seed'], 'passes': 3}
    """
    out: dict[str, Any] = {}
    for key, value in params.items():
        if _seed_like(value) or "entropy" in str(key).lower():
            out.setdefault("omitted_random_state", []).append(str(key))
            continue
        v = jsonable(value)
        if len(json.dumps(v)) <= 2_000:
            out[key] = v
    return out


def write_json(obj: dict, dest: str | Path) -> None:
    """Write ``obj`` as indented JSON (through :func:`jsonable`; no NaN literals).

    Examples
    --------
    >>> import shutil, tempfile
    >>> p = Path(tempfile.mkdtemp()) / "r.json"
    >>> write_json({"eps": np.float64(1.0), "lam": Fraction(2)}, p)
    >>> json.loads(p.read_text())
    {'eps': 1.0, 'lam': '2'}
    >>> shutil.rmtree(p.parent)
    """
    Path(dest).write_text(json.dumps(jsonable(obj), indent=2, allow_nan=False) + "\n",
                          encoding="utf-8")


# ------------------------------------------------------------------ the figure's file
def plot_format(path: str | Path) -> str:
    """The image format of a figure file, from its suffix.

    Raises
    ------
    ValueError
        If matplotlib's Agg canvas cannot write that format.

    Examples
    --------
    >>> plot_format("plot.PNG")
    'png'
    >>> plot_format("plot.xyz")
    Traceback (most recent call last):
    ...
    ValueError: plot: unsupported file type '.xyz'; use one of ...
    """
    FigureCanvasAgg = require("matplotlib.backends.backend_agg").FigureCanvasAgg
    Figure = require("matplotlib.figure").Figure

    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    supported = FigureCanvasAgg(Figure()).get_supported_filetypes()
    if fmt not in supported:
        raise ValueError(f"plot: unsupported file type {path.suffix!r}; use one of "
                         f"{', '.join(sorted(supported))}")
    return fmt


# ------------------------------------------------------------------ explore
def format_matrix(M: Any, indent: str = "    ") -> str:
    """An exact matrix as aligned text, indented for a report:
    :func:`dpfix.numbers.display.format_exact` with ``indent``.

    Examples
    --------
    >>> print(format_matrix([[Fraction(1, 2), 1], [0, Fraction(2, 3)]], indent=""))
    [1/2  1  ]
    [0    2/3]
    """
    return format_exact(M, indent=indent)


def polytope_summary(name: str, poly: Any, max_n: int = EXPLORE_MAX_N) -> dict[str, Any]:
    """Vertex count, dimension and graph summary of one polytope, guarded.

    Beyond ``max_n`` nothing is computed; a vertex enumeration refused by the
    polytope's guard (a ``ValueError``) is reported as skipped, with its
    reason under ``"note"``. The numbers come from the polytope's
    :meth:`~dpfix.theory.polytopes.Polytope.summary` (the backend chosen by measured
    speed, degrees from one vertex per orbit of its symmetry group); the
    graph's diameter is computed up to :data:`DIAMETER_MAX_VERTICES` vertices.

    Parameters
    ----------
    name : str
        The row's label (``"U"``, ``"F[z]"``, ...).
    poly : dpfix.theory.polytopes.U, F, RF or RU
    max_n : int
        The largest ``n`` summarised.

    Returns
    -------
    dict
        ``polytope``, ``dimension``, ``vertices``, ``orbits``, and when computed
        ``edges``, ``degree`` (``"min..max"``), ``diameter``, ``seconds``, or ``note``.

    Examples
    --------
    >>> from dpfix.theory.polytopes import U
    >>> s = polytope_summary("U", U(2, 2))
    >>> s["dimension"], s["vertices"], s["edges"], s["diameter"]
    (2, 4, 4, 2)
    """
    if poly.n > max_n:
        return {"polytope": name, "dimension": "skipped", "vertices": "skipped",
                "note": f"skipped at n = {poly.n} > {max_n} (it has {poly.num_variables} "
                        "variables; its dimension alone would take minutes)"}
    try:  # counts, orbits and degrees as cheaply as the polytope allows (its summary)
        s = poly.summary(diameter_max_vertices=DIAMETER_MAX_VERTICES)
    except ValueError as exc:  # the enumeration guard: report, do not run for hours
        return {"polytope": name, "dimension": poly.dimension(), "vertices": "skipped",
                "note": str(exc)}
    row: dict[str, Any] = {"polytope": name, "dimension": s["dimension"],
                           "vertices": s["vertices"], "orbits": s["orbits"]}
    if s["degree"] is not None:
        row.update(edges=s["edges"], degree="{}..{}".format(*s["degree"]))
    if s["diameter"] is not None:
        row["diameter"] = s["diameter"]
    row["seconds"] = s["seconds"]
    return row


def format_summaries(rows: list[dict[str, Any]]) -> str:
    """:func:`polytope_summary` rows as an aligned table, then their notes.

    Examples
    --------
    >>> print(format_summaries([{"polytope": "U", "dimension": 2, "vertices": 4},
    ...                         {"polytope": "F", "vertices": "skipped", "note": "too big"}]))
    polytope  dimension  vertices  orbits  edges  degree  diameter  seconds
    U         2          4         -       -      -       -         -
    F         -          skipped   -       -      -       -         -
    F: too big
    """
    cols = ["polytope", "dimension", "vertices", "orbits", "edges", "degree", "diameter",
            "seconds"]
    table = [[str(r.get(c, "-")) for c in cols] for r in rows]
    widths = [max(len(x) for x in col) for col in zip(cols, *table, strict=True)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
             for line in [cols, *table]]
    lines += [f"{r['polytope']}: {r['note']}" for r in rows if "note" in r]
    return "\n".join(lines)


def format_example1(ex: Any) -> str:
    """The paper's Example 1 (Appendix B.1) as text: both phenomena, exact matrices.

    Parameters
    ----------
    ex : dpfix.explore.counterexamples.Example1
        What :func:`dpfix.explore.counterexamples.find_example1` returns.

    Returns
    -------
    str
        B1 and B2 (two extreme points of R_F with one extreme image T, with the
        verdict of Theorem 4 on their difference vectors), T, then B3 (extreme
        in R_F) and its image, which is not extreme in F.
    """
    from dpfix.theory.representation import difference_vectors, is_psi_affinely_simplified

    out = [f"Example 1 (paper, Appendix B.1), found by exact search of {ex.cases_searched} "
           "(lam, z) cases at n = 3", "",
           f"1. Two different extreme points of R_F with one extreme image: lam = {ex.lam}, "
           f"z = ({', '.join(map(str, ex.z))})"]
    for name, B in (("B1", ex.B1), ("B2", ex.B2)):
        H = difference_vectors(B, ex.z, ex.lam)
        verdict = ("linearly independent: Psi-affinely simplified, so extreme (Theorem 4)"
                   if is_psi_affinely_simplified(B, ex.z, ex.lam) else "dependent")
        out.append(f"  {name} (rows: the scales in canonical order; its {len(H)} difference "
                   f"vector(s) are {verdict}):")
        out.append(format_matrix(B))
    out += ["  Psi B1 = Psi B2 = T, an extreme point of F:", format_matrix(ex.T), "",
            f"2. An extreme point of R_F whose image is not extreme in F: lam = {ex.lam3}, "
            f"z = ({', '.join(map(str, ex.z3))})",
            "  B3:", format_matrix(ex.B3),
            "  Psi B3 (in F, not extreme):", format_matrix(ex.T3)]
    return "\n".join(out)
