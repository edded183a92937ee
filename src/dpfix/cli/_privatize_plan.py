"""``dpfix privatize``'s flags as the library's plan, and the library's messages as flags.

:func:`plan_from_args` parses the flags into the arguments of
:func:`dpfix.release.plan.plan_release` (every policy is the library's: the command only
reads its flags: ``--column A --column-epsilon A=0.3`` is the column mapping ``{"A":
"0.3"}``, ``--upper auto --upper-share 0.2`` is ``PrivateBound(0.2)``, ``--sep ;`` is
``Csv(path, ";")``, ...). The library's messages name its parameters (``keys:``,
``order='key'``, ``upper=``); :func:`flag_messages` names the command's flags instead, from
one table (:data:`FLAGS`), in every error and warning that leaves the command.
"""

from __future__ import annotations

import argparse
import math
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dpfix.io.tables import is_parquet
from dpfix.numbers.numeric import plain_number
from dpfix.release.bounds import PrivateBound
from dpfix.release.inputs import Csv, Dataset, Histogram
from dpfix.release.options import method_options
from dpfix.release.plan import Output, ReleasePlan, plan_release

__all__ = ["plan_from_args", "method_keywords", "JOINT_IGNORES", "FLAGS", "RECORDS_FLAGS",
           "PHRASES", "flags_of", "flag_messages"]

#: The flags of the library's parameters: how the command names what its messages name.
#: A boolean flag takes no value (``force=True`` is ``--force``).
FLAGS = {"eps": "--epsilon", "shares": "--column-epsilon", "upper": "--upper",
         "upper_share": "--upper-share", "constructor": "--constructor", "unit": "--unit",
         "delta": "--delta", "columns": "--column", "keys": "--key", "keep": "--keep",
         "order": "--order", "joint": "--joint", "out": "--out", "sep": "--sep",
         "plot": "--plot", "force": "--force", "escape_formulas": "--escape-formulas"}
#: With ``--records``, the flags of the records' parameters (:func:`dpfix.release.records.
#: privatize_records`), over :data:`FLAGS`: the release's columns are the ``--values``
#: (``--count`` alone: the one column ``count``), its keys the ``--group-by`` columns, its
#: keep the ``--groups`` file's columns.
RECORDS_FLAGS = {"records": "INPUT", "person": "--person", "group_by": "--group-by",
                 "groups": "--groups", "count": "--count", "values": "--values",
                 "max_contributions": "--max-contributions",
                 "max_per_group": "--max-per-group",
                 "contributions_share": "--contributions-share",
                 "contributions_quantile": "--contributions-quantile",
                 "columns": "--values", "keys": "--group-by"}
#: Phrases of the library's messages that the command says with its flags.
PHRASES = {"a Dataset input": "--engine dask"}
#: The flags of a method that the joint release does not read (it runs its own mechanisms;
#: it reads --split, and --framework one-stage).
JOINT_IGNORES = ("constructor", "selector", "privatizer", "postprocess", "estimator", "remap",
                 "time_limit")


def _patterns(table: dict) -> tuple[re.Pattern, re.Pattern]:
    """The parameter leading a message, and every ``name=`` or ``name=value`` in it."""
    names = "|".join(sorted(table, key=len, reverse=True))
    return (re.compile(rf"^({names})(?=[: ])"),
            re.compile(rf"\b({names})=('[^']*'|\"[^\"]*\"|[^\s,;:)]*)"))


_TABLES = {False: (FLAGS, *_patterns(FLAGS)),
           True: ({**FLAGS, **RECORDS_FLAGS}, *_patterns({**FLAGS, **RECORDS_FLAGS}))}


def flags_of(message: str, records: bool = False) -> str:
    """A library message with its parameters named by the command's flags: the parameter
    that leads it (``keys: ...``), every ``name=`` and ``name=value`` (``--key``,
    ``--order shuffled``; ``force=True``: ``--force``), and the phrases of
    :data:`PHRASES`; with ``records`` (``dpfix privatize --records``) by
    :data:`RECORDS_FLAGS` too.

    Examples
    --------
    >>> flags_of("order key: name the key columns with keys=")
    '--order key: name the key columns with --key'
    >>> flags_of("keys: sort failed; use order='shuffled' (force=True to overwrite)")
    '--key: sort failed; use --order shuffled (--force to overwrite)'
    >>> flags_of("--out: kept as it is; column 'eps' not found")
    "--out: kept as it is; column 'eps' not found"
    >>> flags_of("max_per_group: 4 exceeds max_contributions=3", records=True)
    '--max-per-group: 4 exceeds --max-contributions 3'
    """
    table, leading, named_ = _TABLES[bool(records)]

    def named(match: re.Match) -> str:
        flag, value = table[match.group(1)], match.group(2).strip("'\"")
        return flag if value in ("", "True") else f"{flag} {value}"
    text = named_.sub(named, leading.sub(lambda m: table[m.group(1)], message))
    for phrase, flags in PHRASES.items():
        text = text.replace(phrase, flags)
    return text


@contextmanager
def flag_messages(records: bool = False) -> Iterator[None]:
    """Within the block, the errors (``ValueError``, ``OSError``) and the warnings that leave
    it speak of the command's flags (:func:`flags_of`; ``records``: a ``--records`` run's):
    the one place where the library's parameters become flags. The warnings leave it when it
    ends, whether it fails or not."""
    seen: list = []
    try:
        with warnings.catch_warnings(record=True) as seen:
            try:
                yield
            except (ValueError, OSError) as exc:
                if isinstance(exc, OSError) and len(exc.args) == 2 \
                        and isinstance(exc.args[0], int):
                    exc.args = (exc.args[0], flags_of(str(exc.args[1]), records))
                    exc.strerror = exc.args[1]
                elif len(exc.args) == 1 and isinstance(exc.args[0], str):
                    exc.args = (flags_of(exc.args[0], records),)
                raise
    finally:
        for w in seen:
            text = flags_of(str(w.message), records)
            message = w.message if text == str(w.message) else _like(w.message, text)
            warnings.warn_explicit(message, w.category, w.filename, w.lineno)


def _like(warning: Warning, text: str) -> Warning:
    """A warning of ``warning``'s class saying ``text`` (its class kept for the command's
    line ``warning: CLASS: ...``)."""
    try:
        return type(warning)(text)
    except TypeError:  # a class that takes other arguments: the text alone
        return UserWarning(text)


# ------------------------------------------------------------------ the values of flags
def _number(text: Any, flag: str, within: Any, bad: str, outside: str,
            integer: bool = False) -> Any:
    """The number a flag was given (plain ASCII digits, :func:`plain_number`), or None when it
    was not: refused with ``FLAG: bad`` when it is not a number, ``FLAG: outside`` when
    ``within(value)`` is false (each message formatted with ``text=repr(text)``)."""
    if text is None:
        return None
    try:
        value = (int if integer else float)(plain_number(text, flag, integer=integer))
    except (TypeError, ValueError):
        raise ValueError(f"{flag}: {bad.format(text=repr(text))}") from None
    if not within(value):
        raise ValueError(f"{flag}: {outside.format(text=repr(text))}")
    return value


def _split(text: str | None) -> Any:
    if text == "rule-of-thumb":  # None: the framework's default
        return text
    return _number(text, "--split", lambda f: 0 < f < 1,
                   "'rule-of-thumb' or a fraction in (0, 1), got {text}",
                   "the stage-1 fraction must be in (0, 1), got {text}")


def _seed(text: str | None) -> int | None:
    return _number(text, "--seed", lambda s: s >= 0,
                   "must be a non-negative integer, got {text}",
                   "must be a non-negative integer, got {text}", integer=True)


def _delta(text: str | None) -> float | None:
    return _number(text, "--delta", lambda d: 0 < d < 1, "not a number: {text}",
                   "must be in (0, 1), got {text}")


def _upper_share(text: Any) -> float | None:
    return _number(text, "--upper-share", lambda s: 0 < s < 1,
                   "a fraction in (0, 1), got {text}",
                   "the share of a column's budget spent on the bound must be in (0, 1), "
                   "got {text}")


def _time_limit(text: Any) -> float | None:
    return _number(text, "--time-limit", lambda s: math.isfinite(s) and s > 0,
                   "not a number of seconds: {text}",
                   "must be a finite number of seconds > 0, got {text}")


def method_keywords(args: argparse.Namespace) -> dict:
    """The method's keywords of :func:`dpfix.release.options.method_options` from the flags
    (the names were checked by argparse's choices), with ``seed``, ``delta`` and
    ``upper_share``."""
    constructor = args.constructor or "northwest"
    options = {"constructor": constructor, "selector": args.selector or "best",
               "split": _split(args.split), "privatizer": args.privatizer or "cyclic-laplace",
               "postprocess": args.postprocess, "seed": _seed(args.seed),
               "delta": _delta(args.delta),
               "upper_share": _upper_share(getattr(args, "upper_share", None))}
    for name in ("framework", "estimator", "remap"):  # given: passed on (else the library's
        value = getattr(args, name, None)              # defaults apply)
        if value is not None:
            options[name] = value
    limit = _time_limit(getattr(args, "time_limit", None))
    if limit is not None:
        if constructor != "lp":
            raise ValueError(f"--time-limit: applies to --constructor lp only, not "
                             f"{constructor!r}; drop it")
        options["time_limit"] = limit
    return options


# ------------------------------------------------------------------ several columns
def _names(columns: list | None) -> list[str]:
    """The ``--column`` names in the order given, each once."""
    names = list(columns or [])
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ValueError(f"--column: {name!r} named twice")
    return names


def _per_column(values: list | None, flag: str, names: list[str | None],
                what: str = "--column") -> dict:
    """``--upper 50`` (every column) and ``--upper COL=50`` (that column, the text after
    the last ``=``): ``{name: text}`` for every column, the bare value where none is given;
    ``what`` names the flag of the columns (``--values`` with ``--records``)."""
    shared, specific = None, {}
    for text in values or []:
        col, eq, value = str(text).rpartition("=")
        if not eq:
            if shared is not None:
                raise ValueError(f"{flag}: given twice ({shared}, {text}); give one value for "
                                 f"every column, or {flag} COL=VALUE per column")
            shared = text
            continue
        if col not in names:
            known = ", ".join(str(n) for n in names if n is not None) or "none: a histogram"
            raise ValueError(f"{flag}: {col!r} in {text!r} is not a {what} (columns: "
                             f"{known})")
        if col in specific:
            raise ValueError(f"{flag}: column {col!r} given twice")
        specific[col] = value
    out = {}
    for name in names:
        if name not in specific and shared is None:
            if names == [name] and not values:
                raise ValueError(f"{flag} is required")
            raise ValueError(f"{flag}: no value for column {name!r}; give {flag} VALUE (every "
                             f"column) or {flag} {name}=VALUE")
        out[name] = specific.get(name, shared)
    return out


def _assignments(values: list | None, names: list[str | None],
                 what: str = "--column") -> dict[str, str]:
    """``--column-epsilon COL=EPS`` as ``{COL: EPS}`` (each one of the columns, each once;
    ``what`` names their flag)."""
    out: dict[str, str] = {}
    for text in values or []:
        col, eq, value = str(text).rpartition("=")
        if not eq:
            raise ValueError(f"--column-epsilon: expected COL=EPS, got {text!r}")
        if col not in names:
            known = ", ".join(str(n) for n in names if n is not None) or "none: a histogram"
            raise ValueError(f"--column-epsilon: {col!r} is not a {what} (columns: {known})")
        if col in out:
            raise ValueError(f"--column-epsilon: column {col!r} given twice")
        out[col] = value
    return out


def _joint(values: list | None, args: argparse.Namespace) -> list | None:
    """``--joint A,B`` or ``A,B,C`` (repeatable): the ``joint=`` tuples of the plan, if any;
    a flag of :data:`JOINT_IGNORES` given with them is refused (the library refuses the
    options it would ignore too, by their parameters' names)."""
    if not values:
        return None
    given = [f"--{name.replace('_', '-')}" for name in JOINT_IGNORES
             if getattr(args, name, None) is not None]
    if given:
        raise ValueError(f"--joint: the joint release runs its own mechanisms (product noise, "
                         f"a joint deconvolution, a transport remap) and reads only --split and "
                         f"--framework; it would ignore {', '.join(given)}: drop "
                         f"{'it' if len(given) == 1 else 'them'}")
    pairs = []
    for text in values:
        parts = [p.strip() for p in str(text).split(",")]
        if len(parts) not in (2, 3) or not all(parts):
            raise ValueError(f"--joint: two columns as A,B or three as A,B,C, got {text!r}")
        pairs.append(tuple(parts))
    return pairs


def _uppers(args: argparse.Namespace, names: list, share: float | None,
            what: str = "--column") -> Any:
    """``--upper`` for every column (``--upper-share`` in each bound chosen privately)."""
    upper = _per_column(args.upper, "--upper", names, what)
    auto = [name for name, text in upper.items() if str(text).strip() == "auto"]
    if share is not None:
        if not auto:
            raise ValueError("--upper-share: applies to --upper auto only; drop it")
        upper = {name: PrivateBound(share) if name in auto else text
                 for name, text in upper.items()}
    return upper[None] if names == [None] else upper


def _data(args: argparse.Namespace, source: str | Path) -> Any:
    """The input of the plan: a histogram file, a Dataset, a CSV file with its ``--sep``, or
    the path itself."""
    if getattr(args, "engine", "local") == "dask":
        return Dataset(source)
    histogram = bool(getattr(args, "histogram", False))
    header = getattr(args, "header", None)
    if header is not None and not histogram:
        raise ValueError("--header/--no-header: only with --histogram (a table's first line "
                         "is always its header)")
    sep = getattr(args, "sep", None)
    if sep is not None and (histogram or is_parquet(args.input)):
        raise ValueError("--sep: only for a CSV table; drop it")
    if histogram:
        return Histogram(source, header)
    if sep is not None:
        return Csv(source, {"tab": "\t", "\\t": "\t"}.get(sep, sep))
    return source


def plan_from_args(args: argparse.Namespace, options: dict, source: str | Path,
                   out: str | Path) -> ReleasePlan:
    """The plan of the run (:func:`dpfix.release.plan.plan_release`): its input read from
    ``source`` (``INPUT``, or the copy of standard input), its table written to ``out``
    (``--out``, or the file staged for standard output, or a Dask dataset's staged name);
    ``options``, from :func:`method_keywords`, keeps the method's keywords."""
    names: list[str | None] = _names(args.column)
    histogram = bool(getattr(args, "histogram", False))
    if histogram and names:
        raise ValueError("--column: a histogram file has no columns; drop --column")
    if not histogram and not names:
        raise ValueError("--column: name the column of counts (or give --histogram)")
    if histogram:
        names = [None]
    if args.epsilon is None:
        raise ValueError("--epsilon is required")
    delta, seed = options.pop("delta"), options.pop("seed")
    share = options.pop("upper_share", None)
    shares = _assignments(args.column_epsilon, names)
    upper = _uppers(args, names, share)
    joint = _joint(getattr(args, "joint", None), args)
    method = method_options(**options)
    data = _data(args, source)
    return plan_release(
        data, None if histogram else {name: shares.get(name) for name in names},
        args.epsilon, upper=upper, unit=getattr(args, "unit", None) or "row",
        keys=args.key or [], keep=args.keep or [], delta=delta,
        order=getattr(args, "order", None), seed=seed, options=method, joint=joint,
        out=Output(out, escape_formulas=bool(getattr(args, "escape_formulas", False))),
        confidential=True)
