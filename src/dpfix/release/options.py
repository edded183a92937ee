"""The options of a release, validated once: one frozen dataclass per family of methods.

- :class:`TwoStage`: the paper's framework (Section 1.2): a distribution privatizer
  spends ``eps_1`` on the histogram (the target ``z``), a constructor spends ``eps_2``
  on a count mechanism ``T`` with fixed point ``z``;
- :class:`OneStage`: a one-stage baseline constructor (truncated geometric, staircase,
  discrete Gaussian) spends the whole budget on the counts, no target;
- :class:`NoSplit`: the one-stage and hybrid frameworks (docs/no_split.md): every row
  released as ``y = G(x)``, then remapped onto a target estimated from the histogram
  of ``y``;
- :class:`Auto`: the data-independent rule :data:`AUTO_RULE` of the frontier study,
  which chooses a :class:`NoSplit` setting by the budget (:meth:`Auto.at`).

:func:`method_options` maps the keywords of
:func:`dpfix.release.pipeline.privatize_counts` onto one of them, refusing by name an
unknown method or an option the method would ignore. The budget checks that depend on
``eps`` (:func:`check_stage_budgets`) and the split of ``eps_t`` into ``eps_1`` and
``eps_2`` (paper Appendix F: :func:`split_budget`, :func:`rule_of_thumb_split`) are here
too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Union

from dpfix.constructors import CONSTRUCTORS, SELECTORS
from dpfix.numbers.deprecation import renamed_keywords
from dpfix.numbers.numeric import check_fraction, check_positive
from dpfix.release.privatizers import POSTPROCESSORS, PRIVATIZERS
from dpfix.release.privatizers.deconvolve import ESTIMATORS

__all__ = ["TwoStage", "OneStage", "NoSplit", "Auto", "ReleaseOptions", "method_options",
           "RULE_OF_THUMB", "rule_of_thumb_split", "split_budget", "FRAMEWORKS", "AUTO_RULE",
           "REMAPS", "MIN_STAGE_EPSILON", "LP_MAX_UPPER", "LP_SOLVERS", "check_choices",
           "auto_setting", "auto_statement", "check_stage_budgets", "check_budget",
           "check_framework", "check_extras", "split_fraction", "given_options", "stage_split",
           "stage_budgets"]

#: Paper Appendix F: f = B + (A - B) exp(-K eps_t), fitted to Table 3.
RULE_OF_THUMB = {"A": 0.639, "B": 0.106, "K": 2.869}

#: The frameworks of :func:`privatize_counts` (docs/no_split.md); ``"auto"`` applies
#: :data:`AUTO_RULE`.
FRAMEWORKS = ("two-stage", "one-stage", "hybrid", "auto")

#: The data-independent rule of the frontier study (docs/no_split.md section 4,
#: ``dpfix reproduce frontier``): steps ``(from eps_t, framework, split, estimator)``,
#: the last step whose ``from`` is at most ``eps_t`` applies; the remap is northwest.
AUTO_RULE: tuple[tuple[float, str, Any, str | None], ...] = (
    (0.0, "hybrid", "rule-of-thumb", "em"),
    (1.88, "one-stage", None, "em-smooth"),
)

#: How the one-stage and hybrid frameworks map every released ``y`` to an output.
REMAPS = ("northwest", "quantile")


#: The least budget a stage may spend (eps_1, eps_2; eps_t for a one-stage method): three
#: times the limit of the exact samplers, which need lam = e^eps away from 1 at a 2^-20
#: resolution (they fail at eps = 1e-6; far below, lam = 1 divides by zero). Every
#: constructor and framework works at it (``dpfix privatize`` takes its floor from here).
MIN_STAGE_EPSILON = 1e-5

#: Largest ``upper`` for ``constructor="lp"``: HiGHS solves n ~ 400 in about 60 s here.
LP_MAX_UPPER = 400

#: The HiGHS methods of ``constructor="lp"`` (``solver=``): dual simplex, interior point.
LP_SOLVERS = ("highs-ds", "highs-ipm")


@renamed_keywords(eps_t="eps")
def rule_of_thumb_split(eps: float) -> float:
    """The fraction ``f = eps_1 / eps`` of the paper's rule of thumb (Appendix F).

    Parameters
    ----------
    eps : float
        The total budget.

    Returns
    -------
    float
        ``f = B + (A - B) exp(-K eps)`` with :data:`RULE_OF_THUMB`.

    Examples
    --------
    >>> round(rule_of_thumb_split(1.0), 4)
    0.1363
    """
    a, b, k = RULE_OF_THUMB["A"], RULE_OF_THUMB["B"], RULE_OF_THUMB["K"]
    return b + (a - b) * math.exp(-k * eps)


@renamed_keywords(epsilon="eps")
def split_fraction(eps: float, split: Any) -> tuple[float, str]:
    if split is None:
        split = "rule-of-thumb"
    if isinstance(split, str):
        if split != "rule-of-thumb":
            raise ValueError(f"split: 'rule-of-thumb' or a fraction in (0, 1), got {split!r}")
        return rule_of_thumb_split(eps), "rule-of-thumb"
    return check_fraction(split), "fixed fraction"


@renamed_keywords(epsilon="eps")
def stage_split(eps: float, fraction: float) -> tuple[float, float]:
    """``eps`` in two: ``first = fraction * eps`` (as a float) and ``rest``, what is
    left, lowered by units in the last place until the two floats' exact (rational) sum is
    at most ``eps``: what the two stages spend never exceeds the budget, however the
    floats round (the split of stage 1 and stage 2, and of a bound chosen privately and the
    release).

    Examples
    --------
    >>> stage_split(2.0, 0.25)
    (0.5, 1.5)
    >>> first, rest = stage_split(0.7, 0.3)
    >>> from fractions import Fraction
    >>> Fraction(first) + Fraction(rest) <= Fraction(0.7)
    True
    """
    first = fraction * eps
    rest = eps - first
    while Fraction(first) + Fraction(rest) > Fraction(eps):
        rest = math.nextafter(rest, 0.0)
    return first, rest


@renamed_keywords(epsilon="eps")
def split_budget(eps: float, split: Any = "rule-of-thumb") -> tuple[float, float]:
    """``(eps_1, eps_2)`` from the total budget and the split (paper Appendix F).

    Parameters
    ----------
    eps : float
        The total budget ``eps_t``.
    split : float or str
        The stage-1 fraction in ``(0, 1)``, or ``"rule-of-thumb"``
        (:func:`rule_of_thumb_split`).

    Returns
    -------
    (float, float)
        ``eps_1 + eps_2 <= eps`` exactly (:func:`stage_split`).

    Raises
    ------
    ValueError
        On a bad split.

    Examples
    --------
    >>> split_budget(2.0, 0.25)
    (0.5, 1.5)
    """
    f, _ = split_fraction(eps, split)
    return stage_split(eps, f)


def check_choices(constructor: str = "northwest", selector: Any = "best",
                  privatizer: str = "cyclic-laplace", postprocess: Any = None) -> None:
    """Raise ``ValueError`` naming the first unknown method name.

    The names are those of :data:`dpfix.constructors.CONSTRUCTORS`,
    :data:`dpfix.constructors.SELECTORS`, :data:`dpfix.release.privatizers.PRIVATIZERS`
    and :data:`dpfix.release.privatizers.POSTPROCESSORS`.

    Parameters
    ----------
    constructor, selector, privatizer, postprocess : str
        The names to check (a callable selector or postprocess is not checked).

    Raises
    ------
    ValueError
        The message names the option and its choices.

    Examples
    --------
    >>> check_choices(constructor="simplex")
    Traceback (most recent call last):
    ...
    ValueError: constructor: unknown 'simplex'; choose from heuristic, lp, northwest, unfixed, ...
    """
    released = [name for name, info in CONSTRUCTORS.items() if info.release]
    if constructor not in released:
        what = "a research constructor, not released" if constructor in CONSTRUCTORS \
            else "unknown"
        raise ValueError(f"constructor: {what} {constructor!r}; choose from "
                         f"{', '.join(released)}")
    if isinstance(selector, str) and selector not in SELECTORS:
        raise ValueError(f"selector: unknown {selector!r}; choose from {', '.join(SELECTORS)}")
    if privatizer not in PRIVATIZERS:
        raise ValueError(f"privatizer: unknown {privatizer!r}; choose from "
                         f"{', '.join(PRIVATIZERS)}")
    if isinstance(postprocess, str) and postprocess not in POSTPROCESSORS:
        raise ValueError(f"postprocess: unknown {postprocess!r}; choose from "
                         f"{', '.join(POSTPROCESSORS)}")


@renamed_keywords(eps_t="eps")
def auto_setting(eps: float) -> dict[str, Any]:
    """The setting :data:`AUTO_RULE` chooses at ``eps`` (``framework="auto"``).

    Parameters
    ----------
    eps : float
        The total budget.

    Returns
    -------
    dict
        ``framework``, ``split``, ``estimator`` and ``remap`` for :func:`privatize_counts`.

    Examples
    --------
    >>> auto_setting(0.5)["framework"], auto_setting(3.0)["framework"]
    ('hybrid', 'one-stage')
    """
    eps = check_positive(eps, "eps")
    step = [s for s in AUTO_RULE if s[0] <= eps][-1]
    return {"framework": step[1], "split": step[2], "estimator": step[3], "remap": "northwest"}


def auto_statement() -> str:
    """:data:`AUTO_RULE` in words, for reports."""
    parts = []
    for k, (lo, fw, split, est) in enumerate(AUTO_RULE):
        hi = AUTO_RULE[k + 1][0] if k + 1 < len(AUTO_RULE) else None
        where = (f"eps_t < {hi:g}" if lo == 0 else f"eps_t >= {lo:g}" if hi is None
                 else f"{lo:g} <= eps_t < {hi:g}")
        how = fw if split is None else f"{fw} (split {split})"
        parts.append(f"{where}: {how}, {est} estimate, northwest remap")
    return "; ".join(parts)


def check_framework(framework: str, constructor: str, split: Any, privatizer: str,
                     postprocess: Any, delta: Any, estimator: Any, remap: Any) -> None:
    """Refuse, by name, a framework unknown or an option it would ignore."""
    if framework not in FRAMEWORKS:
        raise ValueError(f"framework: unknown {framework!r}; choose from {', '.join(FRAMEWORKS)}")
    if framework == "two-stage":
        for name, value in (("estimator", estimator), ("remap", remap)):
            if value is not None:
                raise ValueError(f"{name}: applies to the one-stage and hybrid frameworks "
                                 "only; drop it")
        return
    if constructor != "northwest":
        raise ValueError(f"constructor: the {framework} framework remaps G through the "
                         f"northwest corner; {constructor!r} does not apply")
    if estimator is not None and estimator not in ESTIMATORS:
        raise ValueError(f"estimator: unknown {estimator!r}; choose from {', '.join(ESTIMATORS)}")
    if remap is not None and remap not in REMAPS:
        raise ValueError(f"remap: unknown {remap!r}; choose from {', '.join(REMAPS)}")
    why = ("the one-stage framework has no stage 1" if framework == "one-stage" else
           "the hybrid framework combines the raw cyclic Laplace release with y")
    for name, value, default in (("split", split if framework == "one-stage" else None, None),
                                 ("privatizer", privatizer, "cyclic-laplace"),
                                 ("postprocess", postprocess, None), ("delta", delta, None)):
        if value != default:
            raise ValueError(f"{name}: does not apply: {why}; drop the {name}")


@renamed_keywords(eps_t="eps")
def check_stage_budgets(eps: float, split: Any, two: bool) -> None:
    """Refuse a budget that leaves a stage less than :data:`MIN_STAGE_EPSILON` (``two``: two
    stages, split by ``split``; else all of ``eps`` on one), before anything is drawn.

    Examples
    --------
    >>> check_stage_budgets(1.0, 0.9999999999, True)
    Traceback (most recent call last):
    ...
    ValueError: split: 0.9999999999 gives eps_1 = 1 and eps_2 = 1e-10; each stage needs at \
least 1e-05: at epsilon 1, a split in [1e-05, 0.99999]
    """
    need = MIN_STAGE_EPSILON * (2 if two else 1)
    if not eps >= need:
        each = f" (each of its two stages needs at least {MIN_STAGE_EPSILON:g})" if two else ""
        raise ValueError(f"eps: must be at least {need:g}{each}, got {eps!r}")
    if not two:
        return
    eps_1, eps_2 = split_budget(eps, split)
    if not min(eps_1, eps_2) >= MIN_STAGE_EPSILON:
        lo = MIN_STAGE_EPSILON / eps
        raise ValueError(f"split: {split!r} gives eps_1 = {eps_1:.3g} and eps_2 = {eps_2:.3g}; "
                         f"each stage needs at least {MIN_STAGE_EPSILON:g}: at epsilon "
                         f"{eps:g}, a split in [{lo:.3g}, {1 - lo:.6g}]")


def check_extras(constructor: str, selector: Any = "best", solver: Any = None,
                 time_limit: Any = None) -> float | None:
    """Refuse the options of one constructor given to another (they would be ignored);
    return ``time_limit`` checked (a positive number of seconds, or None)."""
    if selector != "best" and constructor != "heuristic":
        raise ValueError(f"selector: applies to the heuristic constructor only, not "
                         f"{constructor!r}; drop it")
    for name, value in (("solver", solver), ("time_limit", time_limit)):
        if value is not None and constructor != "lp":
            raise ValueError(f"{name}: applies to the lp constructor only, not "
                             f"{constructor!r}; drop it")
    if solver is not None and solver not in LP_SOLVERS:
        raise ValueError(f"solver: unknown {solver!r}; choose from {', '.join(LP_SOLVERS)}")
    return None if time_limit is None else check_positive(time_limit, "time_limit")


@dataclass(frozen=True)
class TwoStage:
    """The two-stage framework (paper Section 1.2): ``eps_1`` on the target, ``eps_2`` on T.

    Parameters
    ----------
    constructor : str
        A two-stage constructor of :data:`dpfix.constructors.CONSTRUCTORS` released
        for production (``"northwest"``, ``"heuristic"``, ``"lp"``, ``"unfixed"``).
    split : float or str, optional
        The stage-1 fraction in ``(0, 1)`` or ``"rule-of-thumb"`` (None: the rule of thumb).
    privatizer : str
        Stage 1, a name in :data:`dpfix.release.privatizers.PRIVATIZERS`.
    postprocess : str, optional
        Stage 1's post-processing (None: the privatizer's default).
    selector : str
        The heuristic's column selector (``"best"``; refused with another constructor).
    solver : str, optional
        ``constructor="lp"`` only: a name in :data:`LP_SOLVERS`.
    time_limit : float, optional
        ``constructor="lp"`` only: seconds for HiGHS.

    Examples
    --------
    >>> TwoStage(constructor="heuristic", split=0.25).framework
    'two-stage'
    >>> TwoStage(solver="highs-ipm")
    Traceback (most recent call last):
    ...
    ValueError: solver: applies to the lp constructor only, not 'northwest'; drop it
    """

    constructor: str = "northwest"
    split: Any = None
    privatizer: str = "cyclic-laplace"
    postprocess: str | None = None
    selector: str = "best"
    solver: str | None = None
    time_limit: float | None = None

    framework = "two-stage"

    def __post_init__(self) -> None:
        check_choices(self.constructor, self.selector, self.privatizer, self.postprocess)
        if CONSTRUCTORS[self.constructor].stage != "two-stage":
            raise ValueError(f"constructor: {self.constructor!r} is one-stage (all of epsilon "
                             "on the counts): use OneStage")
        limit = check_extras(self.constructor, self.selector, self.solver, self.time_limit)
        object.__setattr__(self, "time_limit", limit)
        if self.split is not None:
            split_fraction(1.0, self.split)


@dataclass(frozen=True)
class OneStage:
    """A one-stage baseline constructor: the whole budget on the counts, no target.

    Examples
    --------
    >>> OneStage("staircase").framework
    'two-stage'
    >>> OneStage("northwest")
    Traceback (most recent call last):
    ...
    ValueError: constructor: 'northwest' is two-stage (a target z, then T): use TwoStage
    """

    constructor: str

    #: the pipeline of :func:`dpfix.release.pipeline.privatize_counts` that runs it (stage 1
    #: skipped)
    framework = "two-stage"
    split = None
    privatizer = None
    postprocess = None
    selector = "best"
    solver = None
    time_limit = None

    def __post_init__(self) -> None:
        check_choices(self.constructor)
        if CONSTRUCTORS[self.constructor].stage != "one-stage":
            raise ValueError(f"constructor: {self.constructor!r} is two-stage (a target z, "
                             "then T): use TwoStage")


@dataclass(frozen=True)
class NoSplit:
    """The one-stage or hybrid framework (docs/no_split.md), with the northwest remap's
    constructor.

    Parameters
    ----------
    framework : str
        ``"one-stage"`` or ``"hybrid"``.
    split : float or str, optional
        The hybrid framework's stage-1 fraction (None: the rule of thumb); refused for
        the one-stage framework.
    estimator : str
        How ``z`` is estimated from the histogram of ``y``, a name in
        :data:`dpfix.release.privatizers.deconvolve.ESTIMATORS`.
    remap : str
        A name in :data:`REMAPS`.

    Examples
    --------
    >>> NoSplit("hybrid").estimator, NoSplit("one-stage", remap="quantile").remap
    ('em', 'quantile')
    """

    framework: str
    split: Any = None
    estimator: str = ESTIMATORS[0]
    remap: str = REMAPS[0]

    constructor = "northwest"
    selector = "best"
    solver = None
    time_limit = None
    postprocess = None

    @property
    def privatizer(self) -> str | None:
        """Stage 1's privatizer: the hybrid framework's cyclic Laplace release, or None."""
        return "cyclic-laplace" if self.framework == "hybrid" else None

    def __post_init__(self) -> None:
        if self.framework not in ("one-stage", "hybrid"):
            raise ValueError(f"framework: {self.framework!r} is not one-stage or hybrid")
        if self.estimator not in ESTIMATORS:
            raise ValueError(f"estimator: unknown {self.estimator!r}; choose from "
                             f"{', '.join(ESTIMATORS)}")
        if self.remap not in REMAPS:
            raise ValueError(f"remap: unknown {self.remap!r}; choose from {', '.join(REMAPS)}")
        if self.framework == "one-stage" and self.split is not None:
            raise ValueError("split: does not apply: the one-stage framework has no stage 1; "
                             "drop the split")
        if self.split is not None:
            split_fraction(1.0, self.split)


@dataclass(frozen=True)
class Auto:
    """``framework="auto"``: the setting :data:`AUTO_RULE` chooses by the budget.

    Examples
    --------
    >>> Auto().at(0.5).framework, Auto().at(3.0).framework
    ('hybrid', 'one-stage')
    """

    framework = "auto"
    constructor = "northwest"

    @renamed_keywords(eps_t="eps")
    def at(self, eps: float) -> TwoStage | NoSplit:
        """The setting chosen at ``eps``."""
        auto = auto_setting(eps)
        if auto["framework"] == "two-stage":
            return TwoStage(split=auto["split"])
        return NoSplit(auto["framework"], auto["split"], auto["estimator"], auto["remap"])


#: The options of one release: one of the four families.
ReleaseOptions = Union[TwoStage, OneStage, NoSplit, Auto]  # noqa: UP007 (a runtime alias)


def given_options(options: Any, read: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    """The fields of ``options`` set to other values than their defaults, but those in
    ``read``: ``[(name, value)]`` in the class's order (what a release reading only
    ``read`` would ignore).

    Examples
    --------
    >>> given_options(TwoStage(constructor="heuristic", split=0.5), read=("split",))
    [('constructor', 'heuristic')]
    >>> given_options(NoSplit("one-stage", estimator="em-smooth"), read=("framework",))
    [('estimator', 'em-smooth')]
    """
    import dataclasses

    if options is None or not dataclasses.is_dataclass(options):
        return []
    return [(f.name, getattr(options, f.name)) for f in dataclasses.fields(options)
            if f.name not in read and f.default is not dataclasses.MISSING
            and getattr(options, f.name) != f.default]


def method_options(*, constructor: str = "northwest", selector: str = "best",
                   split: Any = None, privatizer: str = "cyclic-laplace",
                   postprocess: str | None = None, solver: str | None = None,
                   time_limit: float | None = None, framework: str = "two-stage",
                   estimator: str | None = None, remap: str | None = None) -> ReleaseOptions:
    """The validated options for the keywords of
    :func:`dpfix.release.pipeline.privatize_counts` (and of ``dpfix privatize``).

    An unknown name, or an option that the chosen method would ignore, is refused by
    name, in one line.

    Returns
    -------
    TwoStage, OneStage, NoSplit or Auto

    Raises
    ------
    ValueError
        Naming the option.

    Examples
    --------
    >>> method_options(constructor="heuristic", split=0.3)
    TwoStage(constructor='heuristic', split=0.3, privatizer='cyclic-laplace', \
postprocess=None, selector='best', solver=None, time_limit=None)
    >>> method_options(framework="hybrid").estimator
    'em'
    >>> method_options(constructor="staircase", split=0.5)
    Traceback (most recent call last):
    ...
    ValueError: split: does not apply: constructor 'staircase' is one-stage (all of epsilon \
on the counts); drop the split
    """
    check_choices(constructor, selector, privatizer, postprocess)
    if framework == "auto":
        if constructor != "northwest":
            raise ValueError(f"constructor: framework 'auto' chooses among the northwest "
                             f"frameworks; {constructor!r} does not apply")
        for name, value, default in (("split", split, None), ("estimator", estimator, None),
                                     ("remap", remap, None),
                                     ("privatizer", privatizer, "cyclic-laplace"),
                                     ("postprocess", postprocess, None)):
            if value != default:
                raise ValueError(f"{name}: framework 'auto' chooses it (docs/no_split.md); "
                                 "name the framework to set it")
        check_extras(constructor, selector, solver, time_limit)
        return Auto()
    check_framework(framework, constructor, split, privatizer, postprocess, None, estimator,
                    remap)
    if framework != "two-stage":
        check_extras(constructor, selector, solver, time_limit)
        return NoSplit(framework, split, estimator or ESTIMATORS[0], remap or REMAPS[0])
    if CONSTRUCTORS[constructor].stage == "one-stage":  # options of stage 1 would be ignored
        check_extras(constructor, selector, solver, time_limit)
        one = f"constructor {constructor!r} is one-stage (all of epsilon on the counts)"
        for name, value, default in (("split", split, None),
                                     ("privatizer", privatizer, "cyclic-laplace"),
                                     ("postprocess", postprocess, None)):
            if value != default:
                raise ValueError(f"{name}: does not apply: {one}; drop the {name}")
        return OneStage(constructor)
    return TwoStage(constructor, split, privatizer, postprocess, selector, solver, time_limit)


@renamed_keywords(eps_t="eps")
def stage_budgets(options: ReleaseOptions, eps: float) -> dict[str, float]:
    """What each stage of ``options`` spends of a column's ``eps``: ``{"stage 1": eps_1,
    "stage 2": eps_2}`` (two stages: the two-stage framework with a two-stage
    constructor, the hybrid framework), else ``{"stage 2": eps}``; split by
    :func:`stage_split`, as the frameworks split it (:mod:`dpfix.release.frameworks`),
    after refusing a stage below :data:`MIN_STAGE_EPSILON` (:func:`check_budget`).

    Examples
    --------
    >>> stage_budgets(TwoStage(split=0.25), 2.0), stage_budgets(NoSplit("one-stage"), 1.0)
    ({'stage 1': 0.5, 'stage 2': 1.5}, {'stage 2': 1.0})
    """
    check_budget(options, eps)
    if isinstance(options, Auto):
        options = options.at(check_positive(eps))
    if not _two_stages(options):
        return {"stage 2": eps}
    eps_1, eps_2 = split_budget(eps, options.split)
    return {"stage 1": eps_1, "stage 2": eps_2}


def _two_stages(options: TwoStage | OneStage | NoSplit) -> bool:
    """Whether ``options`` spend a stage 1 before stage 2 (``options`` not ``Auto``)."""
    return options.framework == "hybrid" or (
        options.framework == "two-stage" and CONSTRUCTORS[options.constructor].stage
        == "two-stage")


@renamed_keywords(eps_t="eps")
def check_budget(options: ReleaseOptions, eps: float) -> None:
    """Refuse, before anything is drawn, a budget that leaves a stage of ``options`` less
    than :data:`MIN_STAGE_EPSILON` (:func:`check_stage_budgets`).

    Examples
    --------
    >>> check_budget(TwoStage(split=0.5), 1e-5)
    Traceback (most recent call last):
    ...
    ValueError: eps: must be at least 2e-05 (each of its two stages needs at least \
1e-05), got 1e-05
    """
    if isinstance(options, Auto):
        options = options.at(check_positive(eps))
    check_stage_budgets(eps, options.split, _two_stages(options))
