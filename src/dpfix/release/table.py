"""``privatize_table``: a table of counts released in one call (docs/release.md).

A data holder with a pandas DataFrame (a pyarrow Table, a CSV or Parquet file, a
mapping of arrays) of several count columns states the privacy unit and the budget,
and gets a :class:`~dpfix.release.outputs.Release`: the privatized table (keys, kept and
privatized columns only) and the public report. What is derived from the true data
without noise (the true histograms, the number of top-coded counts, the realised errors)
comes only in a separate :class:`~dpfix.release.outputs.Confidential`, and only when asked
for (``confidential=True``): nothing confidential is reachable from a ``Release`` (no
attribute, repr, report field or pickled state holds it).

A call is a plan and its execution: :func:`dpfix.release.plan.plan_release` checks every
choice and computes every budget exactly before any data are read, :func:`execute` runs
the plan on its engine (in memory, a CSV or Parquet file streamed, a Dask dataset) and
charges the ledger. ``dpfix privatize`` parses its flags into the same plan and executes it with its
own staging and progress bars.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dpfix.numbers.deprecation import no_other, warn_deprecated
from dpfix.release.bounds import PrivateBound
from dpfix.release.dask import release_dataset
from dpfix.release.inputs import Csv, Dataset, Histogram, read_input
from dpfix.release.ledger import Reservation
from dpfix.release.memory import release_in_memory
from dpfix.release.options import ReleaseOptions
from dpfix.release.outputs import Confidential, Release
from dpfix.release.plan import Output, ReleasePlan, plan_release
from dpfix.release.stream import BUCKET_ROWS, release_streamed

__all__ = ["privatize_table", "execute", "Release", "Confidential", "read_input", "Histogram",
           "Dataset", "Csv", "Output", "PrivateBound"]


def execute(plan: ReleasePlan, *, ledger: Any = None, staged: Any = None,
            progress: Any = None, on_stage: Any = None, bucket_rows: int = BUCKET_ROWS,
            scratch: str | Path | None = None) -> Release | tuple[Release, Confidential]:
    """Run ``plan`` on its engine and charge ``ledger`` with ``plan.charge``.

    Parameters
    ----------
    plan : ReleasePlan
        What :func:`dpfix.release.plan.plan_release` made.
    ledger : dpfix.release.ledger.Ledger or dpfix.release.ledger.Reservation, optional
        A ledger: its reservation of ``plan.charge`` is entered before the data are read
        (a release the balance cannot pay is refused there) and recorded once the release
        is made, before any output is in place (with an output: just before it moves
        into place). An entered reservation (made with
        :meth:`~dpfix.release.plan.ReleasePlan.reserve`, or charging exactly the plan's
        charge): its caller records it, but where the release itself moves an output into
        place (an output that is not ``staged``, a Dataset): just before that move.
    staged : dpfix.io.commit.StagedFiles, optional
        With an output (not a Dataset's): the table is staged in it and the caller commits
        it with its other outputs.
    progress, on_stage : callable, optional
        ``progress(column, rows)``: rows done (fixed shares of the column's rows);
        ``on_stage(column, name, N)``: a stage begins (``N``: the number of rows, public).
        Not for a Dataset.
    bucket_rows, scratch : optional
        The streamed engine's: a bucket's rows on average in its external shuffle (its
        memory, :data:`dpfix.release.stream.BUCKET_ROWS`) and the folder of its private
        scratch folder (default: the temporary folder).

    Returns
    -------
    Release, or (Release, Confidential) when the plan asks for the confidential one

    Examples
    --------
    >>> from dpfix.release.plan import plan_release
    >>> p = plan_release({"k": ["a", "b", "c"], "n": [3, 0, 1]}, "n", 1.0, upper=3,
    ...                  keys=["k"], seed=0)
    >>> list(execute(p).table.columns)
    ['k', 'n']
    """
    def run(charge: Any) -> Release | tuple[Release, Confidential]:
        if plan.engine == "dask":
            return release_dataset(plan, charge=charge)
        if plan.engine == "stream":
            return release_streamed(plan, charge=charge, staged=staged, progress=progress,
                                    on_stage=on_stage, bucket_rows=bucket_rows,
                                    scratch=scratch)
        return release_in_memory(plan, charge=charge, staged=staged, progress=progress,
                                 on_stage=on_stage)
    if ledger is None:
        return run(None)
    if isinstance(ledger, Reservation):
        ledger.check_spends(plan.charge)
        return run(ledger)  # the caller commits it (a Dataset: before its dataset moves)
    with plan.reserve(ledger) as charge:
        made = run(charge)
        if not charge.committed:  # the randomness is drawn: the budget is spent
            charge.commit()
    return made


#: The keywords of ``privatize_table`` that are settings of :func:`execute` now.
_SETTINGS = ("staged", "progress", "on_stage", "bucket_rows", "scratch")


def _deprecated(data: Any, columns: Any, upper: Any, out: Any,
                old: dict) -> tuple[Any, Any, Any, Any, dict]:
    """The former keywords of ``privatize_table`` in their present forms, each with a
    :class:`~dpfix.numbers.deprecation.DpfixDeprecationWarning`: ``shares`` in ``columns``
    (a mapping column -> share), ``upper_share`` in ``upper`` (``PrivateBound(share)``),
    ``sep`` in ``data`` (``Csv(path, sep)``), ``force`` and ``escape_formulas`` in ``out``
    (``Output(path, ...)``), ``labels`` dropped (the messages name the parameters), and
    the settings of :func:`execute` (``staged``, ``progress``, ``on_stage``,
    ``bucket_rows``, ``scratch``) returned for it."""
    def warn(name: str, use: str) -> None:
        warn_deprecated(f"privatize_table: {name}= is deprecated; {use} (the old form goes "
                        "in the next release)", stacklevel=4)
    if "shares" in old:
        warn("shares", "give columns as a mapping column -> share (None: an equal part of "
                       "the rest)")
        shares = dict(old.pop("shares") or {})
        names = [columns] if isinstance(columns, str) else list(columns or [])
        for name in shares:
            if name not in names:
                raise ValueError(f"shares: {name!r} is not a privatized column (columns: "
                                 f"{', '.join(map(str, names))})")
        columns = {name: shares.get(name) for name in names}
    if "upper_share" in old:
        warn("upper_share", "give upper=PrivateBound(share) (upper='auto': PrivateBound())")
        share = old.pop("upper_share")
        if share is not None:
            values = upper.values() if isinstance(upper, Mapping) else [upper]
            if not any(v == "auto" or isinstance(v, PrivateBound) for v in values):
                raise ValueError("upper_share: applies to upper auto only; drop it")
            bound = PrivateBound(share)
            upper = ({k: bound if v == "auto" else v for k, v in upper.items()}
                     if isinstance(upper, Mapping) else bound if upper == "auto" else upper)
    if "sep" in old:
        warn("sep", "give data=Csv(path, sep)")
        sep = old.pop("sep")
        if isinstance(data, (str, Path)):
            data = Csv(data, sep)
        elif sep != ",":
            raise ValueError(f"sep: {sep!r} is a CSV file's separator; the data are not a "
                             "CSV file named by its path")
    given = {k: old.pop(k) for k in ("force", "escape_formulas") if k in old}
    for name in given:
        warn(name, f"give out=Output(path, {name}=...)")
    if given and out is not None:
        out = out if isinstance(out, Output) else Output(out, **given)
    if "labels" in old:
        warn("labels", "the messages name the parameters; drop it")
        old.pop("labels")
    settings = {}
    for name in _SETTINGS:
        if name in old:
            warn(name, f"give it to execute(plan_release(...), {name}=...)")
            settings[name] = old.pop(name)
    if settings.get("bucket_rows") is None:
        settings.pop("bucket_rows", None)
    no_other(old, "privatize_table")
    return data, columns, upper, out, settings


def privatize_table(data: Any, columns: Any, eps: Any, *, upper: Any, unit: Any = "row",
                    keys: Any = (), keep: Any = (), delta: float | None = None,
                    order: str | None = None, seed: int | None = None,
                    options: ReleaseOptions | None = None, joint: Any = None,
                    ledger: Any = None, out: Any = None, confidential: bool = False,
                    **deprecated: Any) -> Release | tuple[Release, Confidential]:
    """Privatize the count columns of a table in one call (docs/release.md).

    ``privatize_table(...)`` is ``execute(plan_release(...), ledger=ledger)``
    (:func:`dpfix.release.plan.plan_release`, :func:`execute`): what a user chooses is
    here; how the release runs (its staging, its progress, the streamed engine's memory)
    is :func:`execute`'s. Each parameter is one choice: the shares of the budget come with
    the columns (a mapping), a bound chosen privately with its share in ``upper``
    (:class:`~dpfix.release.bounds.PrivateBound`), a CSV file's separator with the file
    (:class:`~dpfix.release.inputs.Csv`), whether an output may replace a file and
    escapes formulas with the output (:class:`~dpfix.release.plan.Output`). The former
    keywords (``shares``, ``upper_share``, ``sep``, ``force``, ``escape_formulas``,
    ``labels``, ``staged``, ``progress``, ``on_stage``, ``bucket_rows``, ``scratch``) still
    work for one release, with a :class:`~dpfix.numbers.deprecation.DpfixDeprecationWarning`.

    Parameters
    ----------
    data : pandas.DataFrame, pyarrow.Table, str, pathlib.Path, mapping, Csv, Histogram or Dataset
        The table: a DataFrame, a pyarrow Table, a CSV or Parquet file (by its suffix;
        a CSV read as text, so the kept cells are written back as read; ``Csv(path,
        sep)`` for another separator than ``","``), a mapping column -> array, a
        :class:`Histogram` file (rows ``count,number``) or a :class:`Dataset`
        (partitioned, released with Dask into ``out``). Not modified.
    columns : str, list, mapping or None
        The column(s) of non-negative integer counts to privatize (None for a
        :class:`Histogram`: it has one column and no names); a mapping column -> its
        budget (None: an equal part of what the others leave). Unit ``row``: with a
        budget for every column they must add up to ``eps`` exactly (in decimal). Unit
        ``cell``: each at most ``eps`` (the others spend all of it).
    eps : float or str
        The total budget of the release (a decimal text or a number; a float is taken
        by its shortest decimal repr for the exact split over the columns).
    upper : int, "auto", PrivateBound or mapping
        The public bound (counts above it are top-coded), one for every column or a
        mapping column -> bound; ``PrivateBound(share)`` (``"auto"``: ``PrivateBound()``):
        chosen privately with ``share`` of the column's budget
        (:mod:`dpfix.release.bounds`, docs/bounds.md), reported.
    unit : str or PrivacyUnit
        The privacy unit (:class:`dpfix.release.budget.PrivacyUnit`): ``"row"``
        (default: one individual may change every column of one row, each count by at
        most 1; sequential composition over the columns), ``"cell"`` (one count of one
        row; parallel composition: every column may spend all of ``eps``), or with a
        bound ``c``: ``"row:C"``, ``"cell:C"`` (each mechanism at its share over ``c``,
        rounded down).
    keys, keep : sequence
        Columns written as they are: ``keys`` (also the row order's sort keys by
        default) and ``keep`` (declared public). Every other column is dropped: it is
        not private.
    delta : float, optional
        The total delta of an (eps, delta) method (split equally under unit ``row``).
    order : str, optional
        The rows' order: ``"key"`` (default with ``keys``), ``"shuffled"`` (default
        without), ``"input"`` (may follow the confidential data).
    seed : int, optional
        Reproducible (NOT FOR PRODUCTION): numpy's samplers in stage 1, a seeded PCG64 for
        the exact samplers; several columns get independent seeds spawned from it.
    options : TwoStage, OneStage, NoSplit or Auto, optional
        The method (:mod:`dpfix.release.options`; default ``TwoStage()``: the two-stage
        framework with the northwest constructor and the paper's rule-of-thumb split).
    joint : sequence of pairs or triples, optional
        Pairs (or triples) of privatized columns released together with their joint
        distribution as the fixed point (docs/joint.md): ``joint=[("MURDER", "RAPE")]``,
        ``joint=[("MURDER", "RAPE", "ROBBERY")]``. Each tuple keeps its columns' budgets
        (the unit's composition is unchanged) and the report's ``joint`` entry states its
        framework and composition. The framework follows ``options``: the one-stage
        framework by default (and with ``NoSplit("one-stage")``), the two-stage one
        (stage 1 the joint Laplace mechanism) with ``TwoStage(split=...)``
        (docs/joint.md section 7).
    ledger : dpfix.release.ledger.Ledger or dpfix.release.ledger.Reservation, optional
        Charged with what the release spends (by the unit's composition), the data set,
        the columns and the unit: a release the balance cannot pay is refused before the
        data are read; the charge is recorded once the release is made and before any
        output is in place (with ``out``: once the file is written, just before it moves
        into place; a :class:`Dataset`: once every partition is written, just before the
        dataset moves), and the report's ``ledger`` gives the balance after it. An
        entered :class:`~dpfix.release.ledger.Reservation` must charge exactly what the
        release spends (:meth:`~dpfix.release.plan.ReleasePlan.reserve`); the caller
        commits it, except where the release itself moves an output into place (``out``,
        a :class:`Dataset`): it is recorded just before that move.
    out : str, pathlib.Path or Output, optional
        A :class:`Dataset` release: the Parquet dataset folder to write (required; must not
        exist). Any other input: write the table to this file (CSV or Parquet by its
        suffix) instead of returning it: the returned ``Release`` has ``table`` None and
        ``path`` set. A CSV or Parquet ``data`` file to a CSV or Parquet ``out`` is
        streamed (two passes over the file, memory flat in the number of rows,
        :mod:`dpfix.release.stream`) with the two-stage framework (any constructor but the
        discrete Gaussian; not with ``joint``; a Parquet file whose key and kept columns
        are integers, floats, booleans or text); with a seed it writes what the in-memory
        path writes. The file
        appears whole or not at all (:class:`dpfix.io.commit.StagedFiles`), replacing an
        existing one only with ``Output(path, force=True)``; ``Output(path,
        escape_formulas=True)`` as :meth:`Release.write_table`.
    confidential : bool
        Also return the :class:`Confidential` (true histograms, top-coded counts,
        realised errors).

    Returns
    -------
    Release, or (Release, Confidential) with ``confidential=True``

    Raises
    ------
    ValueError
        On bad input, in one line naming it, before any randomness is drawn.
    RuntimeWarning
        A numerical warning while building a mechanism is an error: no release.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"county": ["a", "b", "c", "d"], "MURDER": [0, 3, 1, 7],
    ...                    "RAPE": [2, 0, 5, 1], "INDEX": [9, 9, 9, 9]})
    >>> r = privatize_table(df, ["MURDER", "RAPE"], 1.0, upper=8, keys=["county"], seed=0)
    >>> list(r.table.columns), r.report["composition"]["eps_spent"]
    (['county', 'MURDER', 'RAPE'], 1.0)
    >>> r.report["unit"]["composition"], len(r.report["columns"])
    ('sequential', 2)
    >>> r = privatize_table(df, {"MURDER": "0.3", "RAPE": None}, 1.0, upper=8, seed=0)
    >>> r.report["composition"]["per_column"]
    {'MURDER': 0.3, 'RAPE': 0.7}
    """
    data, columns, upper, out, settings = _deprecated(data, columns, upper, out,
                                                      dict(deprecated))
    plan = plan_release(data, columns, eps, upper=upper, unit=unit, keys=keys, keep=keep,
                        delta=delta, order=order, seed=seed, options=options, joint=joint,
                        out=out, confidential=confidential)
    return execute(plan, ledger=ledger, **settings)
