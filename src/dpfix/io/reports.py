"""Reports, figures and text summaries: what the commands show and write.

- the public and the confidential report of a privatization
  (:func:`public_report`, :func:`confidential_report`, written as JSON by
  :func:`write_json`; one column's public report, which
  :func:`dpfix.release.report.assemble` combines into a release's report of one or many
  columns, and the columns' confidential reports combined by
  :func:`confidential_columns`): the public one holds only public parameters and values
  computed from the differentially private releases; anything derived from the
  true data without noise goes to the confidential one, labelled so
  (``docs/math_notes.md``, the two-stage pipeline of the paper's Section 1.2);
- the JSON conversion (:func:`jsonable`), which refuses numpy random state:
  the entropy of a ``SeedSequence`` rebuilds the generators that drew the
  noise (:func:`small_params` drops it from a constructor's parameters);
- the figure of a privatization (:func:`make_figure`, :func:`plot_format`);
- the summaries of ``dpfix explore``: one polytope's vertex count, dimension
  and graph (:func:`polytope_summary`, :func:`format_summaries`), exact
  matrices as text (:func:`format_matrix`) and the paper's Example 1
  (:func:`format_example1`).

matplotlib (the ``production`` extra) is imported only when a figure is drawn
(:func:`dpfix.numbers.numeric.require`).
"""

from __future__ import annotations

import json
import math
import textwrap
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpfix.numbers.display import format_exact
from dpfix.numbers.numeric import require

if TYPE_CHECKING:  # pragma: no cover
    from dpfix.io.tables import TableInput
    from dpfix.release.result import PrivatizedCounts

__all__ = ["jsonable", "small_params", "write_json", "public_report", "confidential_report",
           "confidential_columns", "make_figure",
           "make_figures", "plot_format", "format_matrix", "polytope_summary",
           "format_summaries", "format_example1", "EXPLORE_MAX_N", "RF_MAX_N",
           "DIAMETER_MAX_VERTICES"]

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
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "r.json"
    >>> write_json({"eps": np.float64(1.0), "lam": Fraction(2)}, p)
    >>> json.loads(p.read_text())
    {'eps': 1.0, 'lam': '2'}
    """
    Path(dest).write_text(json.dumps(jsonable(obj), indent=2, allow_nan=False) + "\n",
                          encoding="utf-8")


# ------------------------------------------------------------------ the two reports
def public_report(result: PrivatizedCounts, table: TableInput, column: str | None, upper: int,
                  out: str | Path) -> dict:
    """The public report of one privatized table: safe to publish with the output.

    Every value is a public parameter (the budgets and split, ``upper``, ``N``,
    ``n``, the file names) or computed from the differentially private
    releases (the target ``z``, ``T`` and its estimated count error, the output
    distribution); the time to build ``T`` depends on the public ``z`` only.
    The number of top-coded counts and the data-dependent timings are left out
    (:func:`confidential_report`); so is the constructor's random state.

    Parameters
    ----------
    result : dpfix.release.result.PrivatizedCounts
    table : dpfix.io.tables.TableInput
        The input as read (its path and kind are reported).
    column : str or None
        The privatized column (None for a histogram).
    upper : int
        The public upper bound.
    out : str or pathlib.Path
        The output file.

    Returns
    -------
    dict
        Ready for :func:`write_json`.

    Examples
    --------
    >>> from dpfix.io.tables import TableInput
    >>> from dpfix.release.pipeline import privatize_counts
    >>> counts = np.array([0, 1, 1, 2, 9])
    >>> r = privatize_counts(counts, 1.0, upper=2, seed=0)
    >>> rep = public_report(r, TableInput(Path("t.csv"), "csv", counts), "k", 2, "o.csv")
    >>> rep["upper"], rep["N"], "topcoded" in json.dumps(jsonable(rep))
    (2, 5, False)
    """
    report = {
        "report": "dpfix privatize",
        "privacy": "every value here is public (parameters, N, n) or computed from the "
                   "differentially private releases; nothing is derived from the true data "
                   "without noise",
        "input": {"path": str(table.path), "kind": table.kind, "column": column},
        "output": {"path": str(out)},
        "upper": upper,
        "top_coding": {"upper": upper, "bound": (
                           "a public parameter given by the user" if result.bound is None else
                           "chosen privately with eps_upper (upper_bound: a DP output)")
                       + "; counts above it are replaced by it before privatization",
                       "count": "in the confidential report only: it is derived from the true "
                       "data without noise"},
    }
    report.update(result.public_report())
    if result.mechanism is not None:  # None: a structured constructor drawn without T
        report["mechanism"]["params"] = small_params(result.mechanism.params)
    # building T reads only the public z; the other phases take time growing with the
    # data (the draw with the number of non-empty count groups): confidential report only
    report["timings_seconds"] = {"construct": result.seconds["construct"]}
    report["timings_note"] = ("only the construction of T (a function of the public target "
                              "z); the data-dependent timings are in the confidential report")
    from dpfix import __version__

    report["dpfix_version"] = __version__
    return report


def confidential_report(result: PrivatizedCounts, table: TableInput, upper: int,
                        timings: dict) -> dict:
    """The confidential report: values derived from the true data WITHOUT noise.

    For the data holder only (top-level key ``"CONFIDENTIAL"``): the true
    distribution of counts ``zeta``, the distances of the output and of the
    target to it, the realized count error, the number of top-coded counts and
    every timing.

    Parameters
    ----------
    result : dpfix.release.result.PrivatizedCounts
    table : dpfix.io.tables.TableInput
        The input as read (its counts; for a histogram, ``result.joint``).
    upper : int
        The public upper bound.
    timings : dict
        Seconds of each phase.

    Returns
    -------
    dict
        Ready for :func:`write_json`.

    Examples
    --------
    >>> from dpfix.io.tables import TableInput
    >>> from dpfix.release.pipeline import privatize_counts
    >>> counts = np.array([0, 1, 1, 2, 9])
    >>> r = privatize_counts(counts, 1.0, upper=2, seed=0)
    >>> c = confidential_report(r, TableInput(Path("t.csv"), "csv", counts), 2, {})
    >>> c["CONFIDENTIAL"], c["topcoded"], c["true_distribution_zeta"].tolist()
    ('derived from the true data without noise', 1, [0.2, 0.4, 0.4])
    """
    from dpfix.theory.metrics import kolmogorov_smirnov, total_variation, wasserstein1

    zhat = result.output_distribution
    kept = getattr(result, "confidential", None)
    if kept is not None:  # the Dask engine: the histogram and sums kept per partition
        zeta = np.asarray(kept["eta"]) / result.N
        realized = float(kept["abs"]), float(kept["squared"])
        true = float(kept["abs_true"]), float(kept["squared_true"])
    elif result.joint is None:
        d = np.minimum(table.counts, upper)
        zeta = np.bincount(d, minlength=result.n) / result.N
        diff = (result.counts - d).astype(float)
        realized = float(np.abs(diff).mean()), float((diff ** 2).mean())
        gap = (result.counts - table.counts).astype(float)
        true = float(np.abs(gap).mean()), float((gap ** 2).mean())
    else:  # joint[i, j]: rows moved from count i to count j
        zeta = result.joint.sum(axis=1) / result.N
        realized, true = _joint_errors(result.joint, np.asarray(table.eta), result.N)

    def distances(p: np.ndarray) -> dict:
        return {"wasserstein1": float(wasserstein1(p, zeta)),
                "total_variation": float(total_variation(p, zeta)),
                "kolmogorov_smirnov": float(kolmogorov_smirnov(p, zeta))}
    return {
        "CONFIDENTIAL": "derived from the true data without noise",
        "warning": "not covered by the differential privacy guarantee: do not publish",
        "input": str(table.path),
        "topcoded": result.topcoded,
        "topcoded_definition": f"number of true counts above the public bound upper = {upper}",
        "true_distribution_zeta": zeta,
        "output_vs_true": distances(zhat),
        "target_vs_true": None if result.z is None else distances(result.z),
        "realized_count_error": {"abs": realized[0], "squared": realized[1],
                                 "definition": "mean over rows of |output - top-coded input| "
                                               "(and of its square)"},
        "realized_count_error_vs_true": {
            "abs": true[0], "squared": true[1],
            "definition": "mean over rows of |output - true input| (and of its square): with "
                          "the top-coding error, which realized_count_error leaves out"
                          + ("" if result.joint is None else
                             "; a histogram's rows top-coded to upper are exchangeable: the "
                             "mean over a uniformly random matching of their true counts to "
                             "their outputs")},
        "estimated_count_error": result.estimated_count_error,
        "timings_seconds": timings,
        "timings_note": "read, stage 1, draw, write and total depend on the data",
    }


def _joint_errors(joint: np.ndarray, eta: np.ndarray, N: int) -> tuple[tuple[float, float],
                                                                       tuple[float, float]]:
    """Mean ``|out - in|`` and ``(out - in)^2`` from the joint histogram (``in`` top-coded),
    then against the true counts ``eta`` (the rows of the last input value, top-coded to
    ``upper``, matched to their true counts uniformly at random: the mean over the matching).
    """
    n = joint.shape[0]
    values = np.arange(n, dtype=float)
    gap = np.abs(np.subtract.outer(values, values))
    w = joint / N
    realized = float((w * gap).sum()), float((w * gap**2).sum())
    t = np.flatnonzero(eta[n - 1:]) + (n - 1)  # the true counts of the rows top-coded
    share = eta[t] / eta[t].sum() if t.size else np.zeros(0)
    gap_top = np.abs(np.subtract.outer(values, t.astype(float)))  # [output j, true count]
    head = w[:-1]
    true_abs = float((head * gap[:-1]).sum() + (w[-1] * (gap_top @ share)).sum())
    true_sq = float((head * gap[:-1] ** 2).sum() + (w[-1] * (gap_top ** 2 @ share)).sum())
    return realized, (true_abs, true_sq)


def confidential_columns(per_column: list[dict], names: list[str], table: TableInput,
                         timings: dict) -> dict:
    """One confidential report for several columns: each column's
    :func:`confidential_report` under ``columns`` (in the order given), the
    reading and writing timings once.

    Examples
    --------
    >>> from dpfix.io.tables import TableInput
    >>> c = confidential_columns([{"topcoded": 1}, {"topcoded": 0}], ["a", "b"],
    ...                          TableInput(Path("t.csv"), "csv", None), {"read": 0.1})
    >>> c["CONFIDENTIAL"], [x["column"] for x in c["columns"]]
    ('derived from the true data without noise', ['a', 'b'])
    """
    return {
        "CONFIDENTIAL": "derived from the true data without noise",
        "warning": "not covered by the differential privacy guarantee: do not publish",
        "input": str(table.path),
        "columns": [{"column": name, **{k: v for k, v in rep.items()
                                        if k not in ("CONFIDENTIAL", "warning", "input")}}
                    for name, rep in zip(names, per_column, strict=True)],
        "timings_seconds": timings,
        "timings_note": "reading and writing the whole table; each column's own phases are "
                        "under its entry",
    }


# ------------------------------------------------------------------ the figure
def panel_title(ax: Any, title: str, details: str) -> str:
    """``title`` and ``details`` on lines that fit the width of ``ax``'s figure.

    The title leads its own line(s), the details follow; each is wrapped at the
    number of characters of the title's font that the figure's width holds
    (an average character is about 0.6 of the font size wide), so that no
    line runs past the figure's edge however long a file or column name is.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure(figsize=(4, 3)).add_subplot()
    >>> panel_title(ax, "counts.csv (MURDER)", "eps_t = 1 (eps_1 = 0.233, eps_2 = 0.767), "
    ...             "northwest, N = 3136").splitlines()
    ['counts.csv (MURDER)', 'eps_t = 1 (eps_1 = 0.233, eps_2 =', '0.767), northwest, N = 3136']
    """
    fig = ax.get_figure()
    size = ax.title.get_fontsize()
    chars = max(20, int(fig.get_figwidth() * 72 / (0.6 * size)) - 4)
    return "\n".join(textwrap.fill(part, chars) for part in (title, details))


def _draw(ax: Any, result: Any, title: str) -> None:
    """The target and the output distribution of one privatization on ``ax``: a
    PrivatizedCounts or a column's public report (both public)."""
    c = result if isinstance(result, dict) else result.public_report()
    b = c["budget"]
    x = np.arange(c["n"])
    ax.bar(x, c["output_distribution"], width=0.9, color="tab:blue", alpha=0.6,
           label="output distribution of counts")
    if c["target_z"] is not None:
        ax.plot(x, c["target_z"], "o-", color="tab:red", markersize=3, linewidth=1,
                label="public target z")
    ax.set_xlabel("count")
    ax.set_ylabel("share of rows")
    ax.set_title(panel_title(ax, title, f"eps_t = {b['eps_t']:g} (eps_1 = "
                                        f"{b['eps_1']:.3g}, eps_2 = {b['eps_2']:.3g}), "
                                        f"{c['mechanism']['constructor']}, N = {c['N']}"))
    ax.legend()


def make_figures(results: list, titles: list[str]) -> Any:
    """Several privatizations (the columns of one run) as one figure, one panel each:
    PrivatizedCounts, or the columns of a release's public report.

    Examples
    --------
    >>> from dpfix.release.pipeline import privatize_counts
    >>> rs = [privatize_counts([0, 1, 1, 2], 0.5, upper=2, seed=s) for s in (0, 1)]
    >>> len(make_figures(rs, ["t (a)", "t (b)"]).axes)
    2
    """
    FigureCanvasAgg = require("matplotlib.backends.backend_agg").FigureCanvasAgg
    Figure = require("matplotlib.figure").Figure

    fig = Figure(figsize=(8, 3.6 * len(results)), layout="constrained")
    FigureCanvasAgg(fig)
    for k, (result, title) in enumerate(zip(results, titles, strict=True)):
        _draw(fig.add_subplot(len(results), 1, k + 1), result, title)
    return fig


def make_figure(result: PrivatizedCounts, title: str) -> Any:
    """The public target ``z`` and the output distribution of counts, as a figure.

    Both are private releases; the true distribution is never drawn.

    Parameters
    ----------
    result : dpfix.release.result.PrivatizedCounts
    title : str
        Leads the figure's title (the budgets, constructor and ``N`` follow).

    Returns
    -------
    matplotlib.figure.Figure
        On the Agg canvas (no display needed).

    Examples
    --------
    >>> from dpfix.release.pipeline import privatize_counts
    >>> fig = make_figure(privatize_counts([0, 1, 1, 2], 1.0, upper=2, seed=0), "demo")
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['public target z', 'output distribution of counts']
    """
    FigureCanvasAgg = require("matplotlib.backends.backend_agg").FigureCanvasAgg
    Figure = require("matplotlib.figure").Figure

    fig = Figure(figsize=(8, 4.5), layout="constrained")
    FigureCanvasAgg(fig)
    _draw(fig.add_subplot(), result, title)
    return fig


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
    ValueError: --plot: unsupported file type '.xyz'; use one of ...
    """
    FigureCanvasAgg = require("matplotlib.backends.backend_agg").FigureCanvasAgg
    Figure = require("matplotlib.figure").Figure

    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    supported = FigureCanvasAgg(Figure()).get_supported_filetypes()
    if fmt not in supported:
        raise ValueError(f"--plot: unsupported file type {path.suffix!r}; use one of "
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
