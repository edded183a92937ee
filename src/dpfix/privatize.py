"""``dpfix privatize``: replace a column of counts by differentially private counts.

``dpfix privatize INPUT --column COL --epsilon 1 --upper 50 --out OUTPUT`` runs
the two-stage pipeline (:func:`dpfix.pipeline.privatize_counts`) on one column
of a CSV or Parquet table and writes the same table, rows in the same order,
with that column replaced. ``--demo`` runs it on the package's own synthetic
table and, when the shared data folder exists, on the county homicides.

Decisions
---------
- **Other columns untouched.** A CSV file is read as text (every cell a
  string, no NaN parsing), so the other cells are written back byte for byte
  (quoting is re-done minimally; a byte-order mark and CRLF line ends are
  kept). A Parquet file is read with its dtypes and written back with them;
  the privatized column keeps its integer or float dtype (nullable ``Int64``
  and the like too) when it can hold ``0 .. upper``, else (text, too narrow an
  integer) it becomes int64.
- **Histogram input** (``--histogram``: rows ``count,number`` with an optional
  header line): its ``N = sum(number)`` rows are never materialised; the
  ``number`` rows with count ``i`` get one multinomial draw from row ``i`` of
  ``T`` (:func:`dpfix.pipeline.privatize_histogram`; ``N`` up to 2^62), and the
  histogram of the privatized counts is written in the same format: the header
  line if there was one, then ``count,number`` for every count ``0 .. upper``.
- **Nothing derived from the true data without noise is printed or written**,
  except to ``--confidential-report`` (top-level key ``"CONFIDENTIAL"``).
  The number of top-coded counts is such a value (the exact number of rows
  above a threshold), so it is counted in the confidential report only; the
  public report records the public bound and says where the count is. ``N``
  and ``n = upper + 1`` are public (MATH.md section 9).
- **Bad input** ends in one line on stderr and exit code 2 with nothing
  written; so does an internal failure (a RuntimeError of the LP solver or of
  a construction check, MemoryError, OverflowError): every output is written
  to a temporary file in its own folder and moved into place (``os.replace``)
  only after all of them are complete.
- **Randomness.** Without ``--seed`` stage 1 uses OpenDP's secure samplers;
  ``--seed`` makes the run reproducible with numpy's samplers, labelled "not
  for production" in the report (and with a warning).
"""

from __future__ import annotations

import argparse
import codecs
import json
import math
import os
import secrets
import sys
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from dpfix.pipeline import (
    CONSTRUCTORS,
    PrivatizedCounts,
    check_choices,
    privatize_counts,
    privatize_histogram,
)

__all__ = ["add_parser", "run", "privatize_file", "make_figure", "read_counts", "MAX_UPPER"]

#: T has (upper + 1)^2 float entries: 10,000 makes it 800 MB.
MAX_UPPER = 10_000
PARQUET_SUFFIXES = (".parquet", ".pq")
DEMO_EPSILON = 1.0
DEMO_SYNTHETIC_UPPER = 40
DEMO_CRIME = ("crime_data.csv", "MURDER", 50)


# ------------------------------------------------------------------ reading
@dataclass
class _Input:
    """A parsed input: the counts and what is needed to write the output back."""

    path: Path
    kind: str  # "csv", "parquet" or "histogram"
    counts: np.ndarray | None  # None for a histogram: its rows are never materialised
    frame: Any = None  # the table (CSV: all text, header as row 0)
    col: Any = None  # CSV: column position; Parquet: column name
    header: str | None = None  # histogram header line
    bom: bool = False
    newline: str = "\n"
    eta: np.ndarray | None = None  # histogram input: eta[i] rows with count i

    @property
    def rows(self) -> int:
        return len(self.counts) if self.eta is None else sum(int(v) for v in self.eta)


def _counts_of(values: Any, column: str) -> np.ndarray:
    """Integer counts of a Series: vectorised, with :func:`dpfix.data.counts_from_column`
    naming the first bad row when there is one."""
    import pandas as pd

    from dpfix.data import counts_from_column

    if values.dtype == bool:
        raise ValueError(f"column {column!r} holds booleans, not counts")
    if values.dtype == object or pd.api.types.is_string_dtype(values.dtype):
        text = values.astype(str).str.strip()
        values = values.where(text != "", np.nan)  # an empty cell is a missing value
    a = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    ok = np.isfinite(a).all() and (a >= 0).all() and (a == np.floor(a)).all()
    if not ok:
        counts_from_column(pd.DataFrame({column: values.reset_index(drop=True)}), column)
        raise ValueError(f"column {column!r}: not all values are non-negative integers")
    return np.minimum(a, 2.0**62).astype(np.int64)  # any count that large is top-coded anyway


def _read_csv(path: Path, column: str) -> _Input:
    import pandas as pd

    with open(path, "rb") as f:
        head = f.read(1 << 16)
    try:
        frame = pd.read_csv(path, header=None, dtype=str, keep_default_na=False,
                            na_filter=False, encoding="utf-8-sig")
    except pd.errors.EmptyDataError:
        raise ValueError(f"input file {path} is empty") from None
    except UnicodeDecodeError:
        raise ValueError(f"input file {path} is not UTF-8 text") from None
    except pd.errors.ParserError as exc:
        raise ValueError(f"input file {path}: {exc}") from None
    header = [str(h) for h in frame.iloc[0]]
    where = [k for k, h in enumerate(header) if h == column]
    if not where:
        raise ValueError(f"column {column!r} not found; columns are {header}")
    if len(where) > 1:
        raise ValueError(f"column {column!r} appears {len(where)} times in the header")
    if len(frame) < 2:
        raise ValueError(f"input file {path}: the table has no rows")
    counts = _counts_of(frame.iloc[1:, where[0]].reset_index(drop=True), column)
    first = head.split(b"\n", 1)[0]
    return _Input(path, "csv", counts, frame, where[0], bom=head.startswith(codecs.BOM_UTF8),
                  newline="\r\n" if first.endswith(b"\r") else "\n")


def _read_parquet(path: Path, column: str) -> _Input:
    import pandas as pd

    try:
        frame = pd.read_parquet(path)
    except ImportError:
        raise ValueError("reading Parquet needs pyarrow (pip install pyarrow)") from None
    except Exception as exc:  # pyarrow's errors name no common base
        raise ValueError(f"input file {path} is not a readable Parquet file: {exc}") from None
    if column not in frame.columns:
        raise ValueError(f"column {column!r} not found; columns are {list(frame.columns)}")
    if len(frame) == 0:
        raise ValueError(f"input file {path}: the table has no rows")
    return _Input(path, "parquet", _counts_of(frame[column], column), frame, column)


def _read_histogram(path: Path) -> _Input:
    from dpfix.data import read_histogram

    eta, header = read_histogram(path, with_header=True)
    if eta.sum() == 0:
        raise ValueError(f"histogram file {path} has no rows (every number is 0)")
    with open(path, "rb") as f:
        bom = f.read(3) == codecs.BOM_UTF8
    return _Input(path, "histogram", None, eta=eta, header=header, bom=bom)


def read_counts(path: str | Path, column: str | None, histogram: bool = False) -> _Input:
    """Read the counts of ``column`` of a CSV/Parquet table, or of a histogram file.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text("name,k\\na,3\\nb,0\\n")
    >>> read_counts(p, "k").counts.tolist()
    [3, 0]
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"input file {path} not found")
    if histogram:
        return _read_histogram(path)
    if path.suffix.lower() in PARQUET_SUFFIXES:
        return _read_parquet(path, column)
    return _read_csv(path, column)


# ------------------------------------------------------------------ writing
class _Staged:
    """Files written beside their destinations, moved into place together."""

    def __init__(self) -> None:
        self.items: list[tuple[Path, Path]] = []

    def temp(self, final: Path) -> Path:
        tmp = final.parent / f".{final.name}.{secrets.token_hex(6)}.part"
        tmp.touch(exist_ok=False)
        self.items.append((tmp, final))
        return tmp

    def commit(self) -> None:
        for tmp, final in self.items:
            os.replace(tmp, final)
        self.items = []

    def discard(self) -> None:
        for tmp, _ in self.items:
            tmp.unlink(missing_ok=True)
        self.items = []


def _write_output(inp: _Input, result: PrivatizedCounts, dest: Path) -> None:
    encoding = "utf-8-sig" if inp.bom else "utf-8"
    out, n = result.counts, result.n
    if inp.kind == "histogram":
        lines = ([inp.header] if inp.header is not None else [])
        lines += [f"{i},{m}" for i, m in enumerate(result.output_histogram)]
        dest.write_text("\n".join(lines) + "\n", encoding=encoding)
    elif inp.kind == "csv":
        frame = inp.frame.copy()
        frame.iloc[1:, inp.col] = out.astype(str)
        frame.to_csv(dest, header=False, index=False, encoding=encoding,
                     lineterminator=inp.newline)
    else:
        frame = inp.frame.copy()
        import pandas as pd

        dtype = _parquet_dtype(frame[inp.col].dtype, n)
        frame[inp.col] = pd.Series(out, index=frame.index).astype(dtype)
        frame.to_parquet(dest)


def _parquet_dtype(dtype: Any, n: int) -> Any:
    """The input column's dtype when it holds 0..n-1: numpy or pandas' nullable
    integers (``Int64``, ...) and floats keep theirs; anything else (text,
    integers too narrow for ``n - 1``) becomes int64."""
    import pandas as pd

    base = dtype.numpy_dtype if isinstance(dtype, pd.api.extensions.ExtensionDtype) and \
        hasattr(dtype, "numpy_dtype") else dtype
    if isinstance(base, np.dtype):
        if base.kind in "iu" and np.iinfo(base).max >= n - 1:
            return dtype
        if base.kind == "f":
            return dtype
    return np.int64


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else str(float(x))
    if isinstance(x, Fraction):
        return str(x)
    if isinstance(x, _SEED_LIKE):  # str() of a SeedSequence shows its entropy
        raise TypeError(f"refusing to write random state {type(x).__name__} to a report")
    return x if x is None or isinstance(x, str) else str(x)


#: Random state that must never reach a report: its entropy rebuilds the generators.
_SEED_LIKE = (np.random.SeedSequence, np.random.Generator, np.random.BitGenerator,
              np.random.RandomState)


def _seed_like(x: Any) -> bool:
    if isinstance(x, _SEED_LIKE):
        return True
    if isinstance(x, dict):
        return any(_seed_like(v) for v in x.values())
    if isinstance(x, (list, tuple)):
        return any(_seed_like(v) for v in x)
    return False


def _small_params(params: dict) -> dict:
    """The constructor's parameters fit for the public report: no random state (skipped,
    with its key listed), no long lists (the heuristic's steps)."""
    out: dict[str, Any] = {}
    for key, value in params.items():
        if _seed_like(value) or "entropy" in str(key).lower():
            out.setdefault("omitted_random_state", []).append(str(key))
            continue
        v = _jsonable(value)
        if len(json.dumps(v)) <= 2_000:  # long lists (the heuristic's steps) are left out
            out[key] = v
    return out


def _write_json(obj: dict, dest: Path) -> None:
    dest.write_text(json.dumps(_jsonable(obj), indent=2, allow_nan=False) + "\n",
                    encoding="utf-8")


def make_figure(result: PrivatizedCounts, title: str) -> Any:
    """The public target ``z`` and the output distribution of counts (both private
    releases; the true distribution is never drawn). A matplotlib Figure on Agg.

    Examples
    --------
    >>> from dpfix.pipeline import privatize_counts
    >>> fig = make_figure(privatize_counts([0, 1, 1, 2], 1.0, upper=2, seed=0), "demo")
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['public target z', 'output distribution of counts']
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    x = np.arange(result.n)
    ax.bar(x, result.output_distribution, width=0.9, color="tab:blue", alpha=0.6,
           label="output distribution of counts")
    if result.z is not None:
        ax.plot(x, result.z, "o-", color="tab:red", markersize=3, linewidth=1,
                label="public target z")
    ax.set_xlabel("count")
    ax.set_ylabel("share of rows")
    ax.set_title(f"{title}: eps_t = {result.epsilon:g} (eps_1 = {result.eps_1:.3g}, "
                 f"eps_2 = {result.eps_2:.3g}), {result.constructor}, N = {result.N}")
    ax.legend()
    return fig


def _plot_format(path: Path) -> str:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fmt = path.suffix.lower().lstrip(".")
    supported = FigureCanvasAgg(Figure()).get_supported_filetypes()
    if fmt not in supported:
        raise ValueError(f"--plot: unsupported file type {path.suffix!r}; use one of "
                         f"{', '.join(sorted(supported))}")
    return fmt


# ------------------------------------------------------------------ reports
def _public_report(result: PrivatizedCounts, inp: _Input, column: str | None, upper: int,
                   out: Path) -> dict:
    report = {
        "report": "dpfix privatize",
        "privacy": "every value here is public (parameters, N, n) or computed from the "
                   "differentially private releases; nothing is derived from the true data "
                   "without noise",
        "input": {"path": str(inp.path), "kind": inp.kind, "column": column},
        "output": {"path": str(out)},
        "upper": upper,
        "top_coding": {"upper": upper, "bound": "a public parameter given by the user; counts "
                       "above it are replaced by it before privatization",
                       "count": "in the confidential report only: it is derived from the true "
                       "data without noise"},
    }
    report.update(result.public_report())
    report["mechanism"]["params"] = _small_params(result.mechanism.params)
    # building T reads only the public z; the other phases take time growing with the
    # data (the draw with the number of non-empty count groups): confidential report only
    report["timings_seconds"] = {"construct": result.seconds["construct"]}
    report["timings_note"] = ("only the construction of T (a function of the public target "
                              "z); the data-dependent timings are in the confidential report")
    from dpfix import __version__

    report["dpfix_version"] = __version__
    return report


def _confidential_report(result: PrivatizedCounts, inp: _Input, upper: int,
                         timings: dict) -> dict:
    from dpfix.metrics import kolmogorov_smirnov, total_variation, wasserstein1

    zhat = result.output_distribution
    if result.joint is None:
        d = np.minimum(inp.counts, upper)
        zeta = np.bincount(d, minlength=result.n) / result.N
        diff = (result.counts - d).astype(float)
        realized = float(np.abs(diff).mean()), float((diff ** 2).mean())
    else:  # joint[i, j]: rows moved from count i to count j
        zeta = result.joint.sum(axis=1) / result.N
        gap = np.abs(np.subtract.outer(np.arange(result.n), np.arange(result.n))).astype(float)
        w = result.joint / result.N
        realized = float((w * gap).sum()), float((w * gap**2).sum())

    def distances(p: np.ndarray) -> dict:
        return {"wasserstein1": float(wasserstein1(p, zeta)),
                "total_variation": float(total_variation(p, zeta)),
                "kolmogorov_smirnov": float(kolmogorov_smirnov(p, zeta))}
    return {
        "CONFIDENTIAL": "derived from the true data without noise",
        "warning": "not covered by the differential privacy guarantee: do not publish",
        "input": str(inp.path),
        "topcoded": result.topcoded,
        "topcoded_definition": f"number of true counts above the public bound upper = {upper}",
        "true_distribution_zeta": zeta,
        "output_vs_true": distances(zhat),
        "target_vs_true": None if result.z is None else distances(result.z),
        "realized_count_error": {"abs": realized[0], "squared": realized[1],
                                 "definition": "mean over rows of |output - top-coded input| "
                                               "(and of its square)"},
        "estimated_count_error": result.estimated_count_error,
        "timings_seconds": timings,
        "timings_note": "read, stage 1, draw, write and total depend on the data",
    }


# ------------------------------------------------------------------ options
def _epsilon(text: Any) -> float:
    try:
        eps = float(text)
    except (TypeError, ValueError):
        raise ValueError(f"--epsilon: not a number: {text!r}") from None
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"--epsilon: must be a finite number > 0, got {text!r}")
    return eps


def _upper(text: Any) -> int:
    try:
        upper = int(str(text).strip())
    except ValueError:
        raise ValueError(f"--upper: must be an integer >= 1, got {text!r}") from None
    if not 1 <= upper <= MAX_UPPER:
        raise ValueError(f"--upper: must be an integer in 1..{MAX_UPPER}, got {text!r}")
    return upper


def _split(text: str) -> Any:
    if text == "rule-of-thumb":
        return text
    try:
        f = float(text)
    except ValueError:
        raise ValueError(f"--split: 'rule-of-thumb' or a fraction in (0, 1), got {text!r}") \
            from None
    if not 0 < f < 1:
        raise ValueError(f"--split: the stage-1 fraction must be in (0, 1), got {text!r}")
    return f


def _seed(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        seed = int(text)
    except ValueError:
        raise ValueError(f"--seed: must be a non-negative integer, got {text!r}") from None
    if seed < 0:
        raise ValueError(f"--seed: must be a non-negative integer, got {text!r}")
    return seed


def _delta(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        delta = float(text)
    except ValueError:
        raise ValueError(f"--delta: not a number: {text!r}") from None
    if not 0 < delta < 1:
        raise ValueError(f"--delta: must be in (0, 1), got {text!r}")
    return delta


def _method_options(args: argparse.Namespace) -> dict:
    check_choices(args.constructor, args.selector, args.privatizer, args.postprocess)
    return {"constructor": args.constructor, "selector": args.selector,
            "split": _split(args.split), "privatizer": args.privatizer,
            "postprocess": args.postprocess, "seed": _seed(args.seed),
            "delta": _delta(args.delta)}


def _check_outputs(outputs: dict[str, Path | None], force: bool,
                   inputs: list[Path]) -> None:
    seen: dict[Path, str] = {}
    for flag, path in outputs.items():
        if path is None:
            continue
        full = path.resolve()
        if full in seen:
            raise ValueError(f"{flag} and {seen[full]} name the same file {path}")
        seen[full] = flag
        if any(full == p.resolve() for p in inputs):
            raise ValueError(f"{flag}: {path} is the input file; choose another path")
        if not path.parent.is_dir():
            raise FileNotFoundError(f"{flag}: folder {path.parent} does not exist")
        if path.is_dir():
            raise ValueError(f"{flag}: {path} is a folder")
        if path.exists() and not force:
            raise ValueError(f"{flag}: {path} exists (use --force to overwrite)")


# ------------------------------------------------------------------ the job
class _Progress:
    """A tqdm bar on stderr, opened when the pipeline's first stage starts."""

    def __init__(self, total: int, quiet: bool, label: str) -> None:
        self.total, self.quiet, self.label, self.bar = total, quiet, label, None

    def stage(self, name: str) -> None:
        if self.quiet:
            return
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=self.total, unit="row", unit_scale=True, file=sys.stderr,
                            mininterval=0.5, dynamic_ncols=True)
        self.bar.set_description(f"{self.label}: {name}")

    def update(self, rows: int) -> None:
        if self.bar is not None:
            self.bar.update(rows)

    def close(self, failed: bool = False) -> None:
        if self.bar is not None:
            self.bar.leave = not failed  # an error message replaces the bar
            self.bar.close()


def privatize_file(input_path: str | Path, *, column: str | None, epsilon: float, upper: int,
                   out: str | Path, histogram: bool = False, report: str | Path | None = None,
                   plot: str | Path | None = None, confidential_report: str | Path | None = None,
                   force: bool = False, quiet: bool = False, label: str | None = None,
                   **options: Any) -> PrivatizedCounts:
    """Read, privatize and write: the body of ``dpfix privatize`` (no file is
    created unless all of them are written). ``options`` go to
    :func:`dpfix.pipeline.privatize_counts`."""
    start = time.perf_counter()
    input_path = Path(input_path)
    if not input_path.is_file():
        raise FileNotFoundError(f"input file {input_path} not found")
    paths = {"--out": Path(out), "--report": report and Path(report),
             "--plot": plot and Path(plot),
             "--confidential-report": confidential_report and Path(confidential_report)}
    _check_outputs(paths, force, [input_path])
    out_parquet = paths["--out"].suffix.lower() in PARQUET_SUFFIXES
    in_parquet = input_path.suffix.lower() in PARQUET_SUFFIXES and not histogram
    if out_parquet != in_parquet:
        raise ValueError(f"--out: {paths['--out']} must be "
                         f"{'a Parquet' if in_parquet else 'a CSV'} file like the input")
    fmt = _plot_format(paths["--plot"]) if paths["--plot"] is not None else None
    if histogram and column is not None:
        raise ValueError("--column: a histogram file has no columns; drop --column")
    if not histogram and column is None:
        raise ValueError("--column: name the column of counts (or give --histogram)")

    inp = read_counts(input_path, column, histogram)
    read_seconds = time.perf_counter() - start
    progress = _Progress(inp.rows, quiet, label or input_path.name)
    try:
        if inp.eta is not None:
            result = privatize_histogram(inp.eta, epsilon, upper=upper,
                                         progress=progress.update, on_stage=progress.stage,
                                         **options)
        else:
            result = privatize_counts(inp.counts, epsilon, upper=upper,
                                      progress=progress.update, on_stage=progress.stage,
                                      **options)
    except BaseException:
        progress.close(failed=True)
        raise
    progress.close()

    staged = _Staged()
    try:
        write_start = time.perf_counter()
        _write_output(inp, result, staged.temp(paths["--out"]))
        if fmt is not None:
            fig = make_figure(result, label or input_path.name)
            fig.savefig(staged.temp(paths["--plot"]), format=fmt, dpi=120)
        if paths["--confidential-report"] is not None:
            now = time.perf_counter()
            timings = {**result.seconds, "read": read_seconds, "write": now - write_start,
                       "total": now - start}
            _write_json(_confidential_report(result, inp, upper, timings),
                        staged.temp(paths["--confidential-report"]))
        if paths["--report"] is not None:
            _write_json(_public_report(result, inp, column, upper, paths["--out"]),
                        staged.temp(paths["--report"]))
        staged.commit()
    finally:
        staged.discard()
    return result


def _announce(result: PrivatizedCounts, paths: list[Path | None]) -> None:
    print(f"dpfix privatize: eps_t = {result.epsilon:g} (eps_1 = {result.eps_1:.6g}, "
          f"eps_2 = {result.eps_2:.6g}, split {result.split_rule}), {result.constructor}, "
          f"N = {result.N}, n = {result.n}")
    for p in paths:
        if p is not None:
            print(f"  wrote {p}")


def _warn(options: dict, quiet: bool) -> None:
    """After a successful run (an error stays a single line on stderr)."""
    if options["seed"] is not None and not quiet:
        print("dpfix privatize: warning: --seed used numpy's seeded samplers: reproducible, "
              "NOT FOR PRODUCTION", file=sys.stderr)


def _demo(args: argparse.Namespace) -> int:
    import pandas as pd

    from dpfix.data import data_dir, data_path, synthetic_counts

    given = [flag for flag, v in (("INPUT", args.input), ("--column", args.column),
                                  ("--upper", args.upper), ("--out", args.out),
                                  ("--report", args.report), ("--plot", args.plot),
                                  ("--confidential-report", args.confidential_report),
                                  ("--histogram", args.histogram)) if v]
    if given:
        raise ValueError(f"--demo chooses its own inputs and outputs; drop {', '.join(given)}")
    options = _method_options(args)
    eps = DEMO_EPSILON if args.epsilon is None else _epsilon(args.epsilon)
    root = Path(args.out_dir or "out/privatize")
    jobs = [("synthetic", root / "synthetic" / "input.csv", "count", DEMO_SYNTHETIC_UPPER)]
    if os.environ.get("DPFIX_DATA"):
        jobs.append(("crime", data_path(DEMO_CRIME[0]), *DEMO_CRIME[1:]))
    else:
        try:
            data_dir()
            jobs.append(("crime", data_path(DEMO_CRIME[0]), *DEMO_CRIME[1:]))
        except FileNotFoundError:
            print("dpfix privatize: shared data not found (set DPFIX_DATA): "
                  "crime demo skipped")
    for name, _, _, _ in jobs:
        (root / name).mkdir(parents=True, exist_ok=True)
    files = ("privatized.csv", "report.json", "plot.png", "confidential_report.json")
    outs = {f"{name}/{f}": root / name / f for name, *_ in jobs for f in files}
    _check_outputs({"input.csv": jobs[0][1], **outs}, args.force,
                   [p for _, p, _, _ in jobs[1:]])
    table = pd.DataFrame({"category": [f"c{i:05d}" for i in range(2000)],
                          "count": synthetic_counts()})
    staged = _Staged()
    try:
        table.to_csv(staged.temp(jobs[0][1]), index=False)
        staged.commit()
    finally:
        staged.discard()
    for name, path, column, upper in jobs:
        d = root / name
        result = privatize_file(path, column=column, epsilon=eps, upper=upper,
                                out=d / files[0], report=d / files[1], plot=d / files[2],
                                confidential_report=d / files[3] if name == "synthetic" else None,
                                force=args.force, quiet=args.quiet,
                                label=f"{name} ({column})", **options)
        _announce(result, [d / f for f in files[:3]]
                  + ([d / files[3]] if name == "synthetic" else []))
    print(f"dpfix privatize: demo outputs in {root}")
    _warn(options, args.quiet)
    return 0


def run(args: argparse.Namespace) -> int:
    """Run ``dpfix privatize``: every error ends as one line and exit code 2.

    Bad input raises ValueError/FileNotFoundError. An internal failure to
    produce a valid mechanism (RuntimeError: the LP solver, the heuristic's
    pass bound, a post-processing check), MemoryError and OverflowError are
    mapped to a one-line ValueError too, so also exit 2 (``dpfix.cli`` has one
    error code); no output is written in any of these cases.
    """
    try:
        return _run(args)
    except (ValueError, OSError) as exc:  # one line, as dpfix.cli prints it
        text = " ".join(str(exc).split())
        raise (FileNotFoundError if isinstance(exc, FileNotFoundError) else ValueError)(text) \
            from None
    except MemoryError:
        raise ValueError("out of memory (try a smaller --upper); nothing written") from None
    except (RuntimeError, OverflowError) as exc:
        text = " ".join(str(exc).split()) or type(exc).__name__
        raise ValueError(f"internal failure, no valid mechanism or output produced "
                         f"({type(exc).__name__}: {text}); nothing written") from None


def _run(args: argparse.Namespace) -> int:
    if args.demo:
        return _demo(args)
    if args.out_dir is not None:
        raise ValueError("--out-dir: only with --demo; use --out")
    if args.input is None:
        raise ValueError("INPUT: name the table of counts (or use --demo)")
    for flag, value in (("--epsilon", args.epsilon), ("--upper", args.upper),
                        ("--out", args.out)):
        if value is None:
            raise ValueError(f"{flag} is required")
    eps, upper = _epsilon(args.epsilon), _upper(args.upper)
    options = _method_options(args)
    result = privatize_file(args.input, column=args.column, epsilon=eps, upper=upper,
                            out=args.out, histogram=args.histogram, report=args.report,
                            plot=args.plot, confidential_report=args.confidential_report,
                            force=args.force, quiet=args.quiet, **options)
    _announce(result, [Path(args.out), args.report, args.plot, args.confidential_report])
    _warn(options, args.quiet)
    return 0


def _one_line_error(prog: str):
    def error(message: str) -> None:
        print(f"{prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)
    return error


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dpfix privatize``."""
    p = sub.add_parser(
        "privatize", help="privatize a column of counts (two-stage pipeline)",
        description="Replace a column of counts by differentially private counts "
                    "(paper Section 1.2: a private target distribution z, then a count "
                    "mechanism T with fixed point z). Writes the same table with the column "
                    "replaced. Nothing derived from the true data without noise is printed "
                    "or written, except to --confidential-report.",
        epilog="example: dpfix privatize crime_data.csv --column MURDER --epsilon 1 "
               "--upper 50 --out private.csv --report report.json --plot plot.png; "
               "dpfix privatize --demo --out-dir out/run")
    p.error = _one_line_error("dpfix privatize")
    p.add_argument("input", nargs="?", metavar="INPUT",
                   help="CSV or Parquet table of counts (or a histogram file with --histogram)")
    p.add_argument("--column", help="the column of non-negative integer counts")
    p.add_argument("--histogram", action="store_true",
                   help="INPUT has rows count,number; the output is the histogram of the "
                        "privatized counts in the same format")
    p.add_argument("--epsilon", help="total privacy budget eps_t > 0 (split between stages)")
    p.add_argument("--upper", help="public upper bound on the counts: a parameter you choose, "
                   "not computed from the data (n = upper + 1 values). Counts above it are "
                   "top-coded to it; how many were is derived from the true data, so it is "
                   "written to --confidential-report only")
    p.add_argument("--out", help="output table (same format as INPUT); must not exist")
    p.add_argument("--constructor", default="heuristic",
                   help=f"stage 2: {', '.join(CONSTRUCTORS)} (lp: small --upper only; "
                        "truncated-geometric and staircase spend all of eps_t on the counts). "
                        "Default: heuristic")
    p.add_argument("--selector", default="best",
                   help="heuristic column selector: best, max, min, sandwich, random "
                        "(default: best)")
    p.add_argument("--split", default="rule-of-thumb",
                   help="fraction of eps_t for stage 1, or rule-of-thumb (default)")
    p.add_argument("--privatizer", default="cyclic-laplace",
                   help="stage 1: cyclic-laplace (default), cyclic-gaussian (needs --delta), "
                        "laplace, privelet, hierarchical")
    p.add_argument("--postprocess", default=None,
                   help="stage 1 post-processing: isotonic-cdf (default), clip-renormalise, "
                        "project-simplex")
    p.add_argument("--delta", help="delta of stage 1 for --privatizer cyclic-gaussian")
    p.add_argument("--seed", help="reproducible run with numpy's samplers (NOT FOR "
                   "PRODUCTION); without it stage 1 uses OpenDP's secure samplers")
    p.add_argument("--report", help="JSON report: budgets and split, n, N, target z, "
                   "estimated count error, realized privacy level of T, samplers, time to build T")
    p.add_argument("--plot", help="plot of z and the output distribution (png, pdf, svg, ...)")
    p.add_argument("--confidential-report", metavar="PATH",
                   help="JSON derived from the true data WITHOUT noise (true distribution, "
                        "realized errors, number of top-coded counts): do not publish")
    p.add_argument("--force", action="store_true", help="overwrite existing output files")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no warnings")
    p.add_argument("--demo", action="store_true",
                   help="run on the package's synthetic table and, when the shared data "
                        "folder exists, on crime_data.csv (MURDER, upper 50)")
    p.add_argument("--out-dir", help="folder of the --demo outputs (default out/privatize)")
    p.set_defaults(func=run)
    return p
