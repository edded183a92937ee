"""The release as an OpenDP ``Measurement``: :func:`make_privatize_counts`.

OpenDP (https://opendp.org) composes measurements through their privacy maps.
:func:`make_privatize_counts` wraps :func:`dpfix.release.pipeline.privatize_counts`
in OpenDP's plugin constructor ``opendp.measurements.make_user_measurement``, with
the privacy map that dpfix's proofs give, so the release composes with OpenDP's
compositors (``make_composition``, ``make_adaptive_composition``) and odometers
(``make_fully_adaptive_composition``) like any OpenDP measurement. OpenDP is
imported when a measurement is built, never when this module is imported (it comes
with the production extra).

**Features.** ``make_user_measurement`` needs the OpenDP features ``"contrib"``
and ``"honest-but-curious"``: the second states that the user trusts a privacy map
that OpenDP did not prove (here: dpfix's, documented below). As OpenDP's own
constructors do, :func:`make_privatize_counts` enables neither on the user's
behalf: it refuses, in one line naming them, until
``dp.enable_features("contrib", "honest-but-curious")`` has been called.

**The neighbouring relation and the map.** A table is a vector ``x`` of ``N``
non-negative integer counts, one per row; ``N`` (the vector's length) and the
public bound ``upper`` are public, as everywhere in dpfix. The function first
codes every count into ``0 .. upper`` (above ``upper``: top-coded, as the
pipeline does; below 0: bottom-coded to 0, so that the function is defined on
the whole integer domain and no data-dependent error can leak). Coding is
1-Lipschitz and lands in ``0 .. upper``, so for two tables ``x, x'`` of the same
length the coded tables differ by at most ``||x - x'||_1`` in L1, and by at most
``upper`` in each changed row. The coded tables are joined by a path of that many
*neighbours*: tables differing in one row, whose counts differ by one
(docs/sampling.md, "Neighbouring relation"; docs/no_split.md section 1). Let
``S`` be the proved loss of one neighbouring step (below). By group privacy along
the path (the loss adds up over the steps),

- ``input_metric = dp.l1_distance(T=...)`` (default; ``d_in`` bounds
  ``||x - x'||_1``: "one individual changes one count by at most ``c``" is
  ``d_in = c``): ``map(d_in) = d_in * S``;
- ``input_metric = dp.change_one_distance()`` (``d_in`` rows changed
  arbitrarily): ``map(d_in) = d_in * upper * S``,

each rounded up to a float. Tables of different lengths are never ``d_in``-close
(``N`` is public): no claim is made for them.

**The proved step loss S.** The pipeline runs at ``eps_t = eps / c``: the
mechanisms are scaled (stage 2's ``lam`` is at most ``e^(eps_2)``, ``eps_2`` a share
of ``eps / c``), so that a change of one count by ``c``, a path of ``c``
steps, costs ``eps``:

- *two-stage* (default; docs/math_notes.md section 7): stage 1 is the cyclic
  Laplace release ``V = eta + X - roll(X, -1)`` with ``X`` OpenDP's discrete Laplace
  of scale ``1/eps_1``; a neighbouring step moves one unit of the histogram
  between adjacent bins, absorbed by a unit shift of one coordinate of ``X`` (paper
  Theorem 1; docs/postprocessing.md, "The privatizers and their calibration"):
  its loss is ``L1``, OpenDP's own map at sensitivity 1 of that Laplace
  measurement (OpenDP rounds it up, so ``L1`` may exceed ``eps_1`` by a unit in
  the last place). Stage 2 draws every row as ``R(clamp(d + k, 0, upper))``
  with ``k`` exact two-sided geometric at a rational ``lam <= e^x`` proved in
  rational arithmetic, ``R`` a function of the public target only: ``ln(lam)``-DP
  (docs/sampling.md section 2, "Privacy (post-processing)"), with ``x =
  eps_2 (1 - EPS_MARGIN)``; its loss ``L2`` is the least float ``x`` proved
  (``dpfix.sampling.lam_at_most_exp``) among that one and the largest float below
  ``eps / c - L1``. By sequential composition the release is ``(L1 + L2)``-DP
  per step;
- *hybrid*: the same stage 1 and ``y = G(x)`` at ``lam = rational_lam(eps_2)``,
  the rest post-processing (docs/no_split.md section 1): ``L1 + L2``;
- *one-stage*: ``y = G(x)`` at ``lam = rational_lam(eps_t)``, ``L1 = 0``; likewise
  the one-stage constructor ``truncated-geometric`` in the two-stage framework
  (``G`` itself, at ``x = eps_t (1 - EPS_MARGIN)``, no stage 1).

``S = max(L1 + L2, eps / c)`` in exact rationals: the declared budget when the
proof fits within it (it does whenever ``eps_2`` is not negligible beside
``eps_1``), else the proved sum, never less. Before the output is returned, the
function checks that stage 1 reported at most ``L1`` and stage 2 drew with the
``lam`` the map accounts for (else :class:`~dpfix.release.result.NotPrivateError`
and nothing is released). The constructors supported are those drawn exactly as
``G R`` (:data:`dpfix.sampling.STRUCTURED`: ``northwest``, ``unfixed``,
``truncated-geometric``) with the cyclic Laplace stage 1: their per-step loss is
known before the data are seen. The randomness is the operating system's CSPRNG
(an OpenDP measurement takes no seed).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.constructors import CONSTRUCTORS
from dpfix.numbers.deprecation import warn_deprecated
from dpfix.numbers.numeric import check_positive, require
from dpfix.release.budget import PrivacyUnit, privacy_unit
from dpfix.release.frameworks import EPS_MARGIN
from dpfix.release.options import (
    MIN_STAGE_EPSILON,
    auto_setting,
    check_choices,
    check_framework,
    split_budget,
)
from dpfix.release.pipeline import privatize_counts
from dpfix.release.result import NotPrivateError
from dpfix.sampling import STRUCTURED, lam_at_most_exp, rational_lam

__all__ = ["make_privatize_counts", "FEATURES", "step_loss"]

#: The OpenDP features ``make_user_measurement`` needs (the user enables them).
FEATURES = ("contrib", "honest-but-curious")

#: Frameworks with a data-independent per-step loss (``"auto"`` resolves to one).
_FRAMEWORKS = ("two-stage", "one-stage", "hybrid", "auto")

#: Integer atoms whose every value numpy holds as int64 (the pipeline's counts).
_INTEGER_TYPES = ("i8", "i16", "i32", "i64", "isize", "u8", "u16", "u32")


def _float_at_least(x: Fraction) -> float:
    """The least float ``>= x`` (a privacy map rounds up)."""
    f = float(x)
    return math.nextafter(f, math.inf) if Fraction(f) < x else f


def _float_at_most(x: Fraction) -> float:
    """The largest float ``<= x``."""
    f = float(x)
    return math.nextafter(f, -math.inf) if Fraction(f) > x else f


def _stage1_loss(dp: Any, eps_1: float) -> Fraction:
    """OpenDP's map at sensitivity 1 of stage 1's discrete Laplace (scale ``1/eps_1``),
    the measurement :func:`dpfix.release.privatizers.cyclic.cyclic_laplace` draws ``X`` with."""
    laplace = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T="i64")),
                                dp.l1_distance(T="i64"), scale=1.0 / eps_1)
    return Fraction(laplace.map(1))


def _setting(eps_t: float, framework: str, split: Any, estimator: Any,
             remap: Any) -> tuple[str, Any, Any, Any]:
    if framework != "auto":
        return framework, split, estimator, remap
    for name, value in (("split", split), ("estimator", estimator), ("remap", remap)):
        if value is not None:
            raise ValueError(f"{name}: framework 'auto' chooses it (docs/no_split.md); name "
                             "the framework to set it")
    auto = auto_setting(eps_t)
    if auto["framework"] == "two-stage":
        return "two-stage", auto["split"], None, None
    return auto["framework"], auto["split"], auto["estimator"], auto["remap"]


def step_loss(eps: float, unit: Any = "row", framework: str = "two-stage", split: Any = None,
              *, constructor: str = "northwest", stage1_loss: Any = None) -> dict[str, Any]:
    """The proved loss ``S`` of one neighbouring step (one row's count changed by one)
    of the release at ``eps_t = eps / c``, and what it is made of (module docstring).

    Parameters
    ----------
    eps : float
        The budget spent for a change of one count by ``c``.
    unit : str or PrivacyUnit
        The privacy unit: ``"row"`` or ``"cell"`` with its bound ``c`` (``"cell:2"``; one
        column, so the two are one); an integer ``c`` is its deprecated form.
    framework : str
        ``"two-stage"``, ``"one-stage"`` or ``"hybrid"`` (``"auto"`` resolved first).
    split : float or str, optional
        The stage-1 fraction (None: the rule of thumb).
    constructor : str
        A name in :data:`dpfix.sampling.STRUCTURED`; a one-stage constructor
        (``"truncated-geometric"``) has no stage 1 in the two-stage framework either.
    stage1_loss : callable, optional
        ``eps_1 -> L1`` (a Fraction); by default OpenDP's map of stage 1's discrete
        Laplace (needs OpenDP).

    Returns
    -------
    dict
        ``S`` (Fraction), ``L1``, ``L2`` (Fractions), ``lam`` (the Fraction stage 2
        draws with), ``eps_t``, ``eps_1``, ``eps_2``.

    Examples
    --------
    >>> s = step_loss(1.0, "row", "one-stage")
    >>> s["lam"], s["S"] == 1, s["L1"]
    (Fraction(75117, 27634), True, Fraction(0, 1))
    >>> step_loss(0.5, "cell:2", constructor="truncated-geometric")["eps_2"]
    0.25
    """
    c = _check_unit(unit)
    eps_t = check_positive(eps) / c
    one = framework == "one-stage" or CONSTRUCTORS[constructor].stage == "one-stage"
    if one:
        eps_1, eps_2 = 0.0, eps_t
    else:
        eps_1, eps_2 = split_budget(eps_t, split)
    if min(eps_2, eps_2 if one else eps_1) < MIN_STAGE_EPSILON:
        raise ValueError(f"eps: at unit c = {c} each stage spends eps_1 = {eps_1:.3g}, eps_2 = "
                         f"{eps_2:.3g}; each needs at least {MIN_STAGE_EPSILON:g}")
    lam_arg = eps_2 * (1 - EPS_MARGIN) if framework == "two-stage" else eps_2
    lam = rational_lam(lam_arg)
    if one:
        L1 = Fraction(0)
    else:
        L1 = Fraction(stage1_loss(eps_1)) if stage1_loss is not None else \
            _stage1_loss(require("opendp.prelude"), eps_1)
    declared = Fraction(eps) / c
    L2 = Fraction(lam_arg)  # lam <= e^lam_arg, proved by rational_lam
    tight = _float_at_most(declared - L1) if declared > L1 else None
    if tight is not None and Fraction(tight) < L2 and tight > 0 and lam_at_most_exp(lam, tight):
        L2 = Fraction(tight)
    return {"S": max(L1 + L2, declared), "L1": L1, "L2": L2, "lam": lam, "eps_t": eps_t,
            "eps_1": eps_1, "eps_2": eps_2}


def _check_features(dp: Any) -> None:
    missing = [f for f in FEATURES if f not in require("opendp.mod").GLOBAL_FEATURES]
    if missing:
        raise dp.OpenDPException(
            "FailedFunction",
            f"make_privatize_counts builds an OpenDP plugin measurement "
            f"(make_user_measurement), which needs the OpenDP features "
            f"{', '.join(repr(f) for f in FEATURES)} (missing: {', '.join(missing)}; "
            "'honest-but-curious': its privacy map is dpfix's proof, not OpenDP's): call "
            "dp.enable_features('contrib', 'honest-but-curious') first")


def _check_space(input_domain: Any, input_metric: Any) -> str:
    """``"l1"`` or ``"change-one"``; refuses any other domain or metric in one line."""
    carrier = str(input_domain.carrier_type)
    if carrier not in {f"Vec<{t}>" for t in _INTEGER_TYPES}:
        raise ValueError(f"input_domain: expected a vector of integer counts that int64 holds "
                         f"({', '.join(_INTEGER_TYPES)}; default "
                         f"dp.vector_domain(dp.atom_domain(T='i64'))), got {input_domain}")
    name = str(input_metric)
    if name == "ChangeOneDistance()":
        return "change-one"
    if name.startswith("L1Distance(") and name[len("L1Distance("):-1] in _INTEGER_TYPES:
        return "l1"
    raise ValueError(f"input_metric: dp.l1_distance(T=<integer type>) (a change of the counts "
                     f"by d_in in all) or dp.change_one_distance() (d_in rows changed), got "
                     f"{input_metric}")


def _check_unit(unit: Any) -> int:
    """The bound ``c`` of a privacy unit of one column of counts (``"row:c"`` or
    ``"cell:c"``: one count changes by at most ``c``); an integer is its deprecated form."""
    if isinstance(unit, (int, np.integer)) and not isinstance(unit, bool):
        if unit < 1:
            raise ValueError(f"unit: the bound c of one row's change is at least 1, got {unit!r}")
        warn_deprecated(f"unit={unit}: an integer unit is deprecated; use the privacy unit "
                        f"unit='cell:{unit}' (the old form goes in the next release)",
                        stacklevel=3)
        return int(unit)
    u = privacy_unit(unit)
    if u.name == "person":
        raise ValueError(f"unit: one column of counts takes 'row:c' or 'cell:c', got {u.text!r}")
    return u.bound


def make_privatize_counts(input_domain: Any = None, input_metric: Any = None,
                          eps: float | None = None, *, upper: int, unit: Any = "row",
                          constructor: str = "northwest", framework: str = "two-stage",
                          split: Any = None, postprocess: str | None = None,
                          estimator: str | None = None, remap: str | None = None) -> Any:
    """An OpenDP ``Measurement`` that privatizes a vector of counts with dpfix.

    Built with OpenDP's plugin constructor ``make_user_measurement``, which needs
    the features ``"contrib"`` and ``"honest-but-curious"``: enable them first
    (``dp.enable_features("contrib", "honest-but-curious")``). Its function is
    :func:`dpfix.release.pipeline.privatize_counts` at ``eps_t = eps / c``
    (secure randomness), returning the privatized counts; its privacy map is the
    proved one (module docstring): ``map(d_in) = d_in * S`` for
    ``dp.l1_distance``, ``d_in * upper * S`` for ``dp.change_one_distance()``, with
    ``S = eps / c`` whenever the proof fits in it, so ``map(c) == eps``.

    Parameters
    ----------
    input_domain : opendp.mod.Domain, optional
        A vector of integers; default ``dp.vector_domain(dp.atom_domain(T="i64"))``.
    input_metric : opendp.mod.Metric, optional
        ``dp.l1_distance(T=...)`` of the domain's integer type (default, ``T="i64"``)
        or ``dp.change_one_distance()``.
    eps : float
        The budget spent for a change of one row's count by ``c`` (required: no
        budget is chosen for the user).
    upper : int
        The public upper bound of the counts (top-coded above it).
    unit : str or PrivacyUnit
        The declared privacy unit, ``"row"`` (default) or ``"cell"`` with its bound ``c``
        (``"cell:2"``): one individual changes one count by at most ``c`` (``map(c) ==
        eps``); an integer ``c`` is its deprecated form.
    constructor : str
        ``"northwest"`` (default), ``"unfixed"`` or ``"truncated-geometric"``
        (the exact ``G R`` samplers; the one-stage and hybrid frameworks take
        ``"northwest"`` only).
    framework : str
        ``"two-stage"`` (default), ``"one-stage"``, ``"hybrid"`` or ``"auto"``
        (:func:`dpfix.release.options.auto_setting`, resolved here).
    split, postprocess, estimator, remap
        As in :func:`dpfix.release.pipeline.privatize_counts`.

    Returns
    -------
    opendp.mod.Measurement
        Input: the domain and metric above; output measure ``dp.max_divergence()``;
        output: a numpy int64 vector of the ``N`` privatized counts.

    Raises
    ------
    opendp.mod.OpenDPException
        The features ``"contrib"`` and ``"honest-but-curious"`` are not enabled.
    ValueError
        An unsupported domain, metric, constructor, framework or budget.

    Examples
    --------
    >>> import opendp.prelude as dp
    >>> dp.enable_features("contrib", "honest-but-curious")
    >>> m = make_privatize_counts(eps=1.0, upper=5, unit="cell:2")
    >>> m.map(2), m.check(2, 1.0), m.check(3, 1.0)
    (1.0, True, False)
    >>> m([0, 3, 1, 9, 2]).shape
    (5,)
    """
    dp = require("opendp.prelude")
    _check_features(dp)
    if input_domain is None:
        input_domain = dp.vector_domain(dp.atom_domain(T="i64"))
    if input_metric is None:
        input_metric = dp.l1_distance(T="i64")
    relation = _check_space(input_domain, input_metric)
    c = _check_unit(unit)
    framework, split, estimator, remap = _checked_setting(eps, c, upper, constructor,
                                                          framework, split, postprocess,
                                                          estimator, remap)
    loss = step_loss(eps, PrivacyUnit("cell", c), framework, split, constructor=constructor,
                     stage1_loss=lambda e1: _stage1_loss(dp, e1))
    upper = int(upper)
    options = {"upper": upper, "constructor": constructor, "framework": framework,
               "split": split, "postprocess": postprocess, "estimator": estimator,
               "remap": remap}

    def function(x: Any) -> np.ndarray:
        d = np.clip(np.asarray(x, dtype=np.int64), 0, upper)
        result = privatize_counts(d, loss["eps_t"], **options)
        _check_accounting(result, loss)
        return np.asarray(result.counts, dtype=np.int64)

    per_row = upper if relation == "change-one" else 1

    def privacy_map(d_in: Any) -> float:
        if isinstance(d_in, bool) or int(d_in) != d_in or d_in < 0:
            raise ValueError(f"d_in: a non-negative integer distance, got {d_in!r}")
        return _float_at_least(int(d_in) * per_row * loss["S"])

    return dp.m.make_user_measurement(input_domain, input_metric, dp.max_divergence(),
                                      function, privacy_map)


def _checked_setting(eps: Any, unit: int, upper: Any, constructor: str, framework: str,
                     split: Any, postprocess: Any, estimator: Any,
                     remap: Any) -> tuple[str, Any, Any, Any]:
    """The framework's setting (``"auto"`` resolved), every option refused by name before
    the measurement exists (as :func:`~dpfix.release.pipeline.privatize_counts` would at
    run time)."""
    if not isinstance(upper, (int, np.integer)) or isinstance(upper, bool) or upper < 1:
        raise ValueError(f"upper: must be an integer >= 1, got {upper!r}")
    if framework not in _FRAMEWORKS:
        raise ValueError(f"framework: unknown {framework!r}; choose from {', '.join(_FRAMEWORKS)}")
    if constructor not in STRUCTURED:
        raise ValueError(f"constructor: {constructor!r} is drawn from a table checked on the "
                         f"data-dependent mechanism; the OpenDP measurement takes the exact G R "
                         f"constructors, whose loss is known before the data: "
                         f"{', '.join(STRUCTURED)}")
    if eps is None:
        raise ValueError("eps: give the budget spent for a change of one count by c")
    eps_t = check_positive(eps, "eps") / unit
    framework, split, estimator, remap = _setting(eps_t, framework, split, estimator, remap)
    check_choices(constructor, "best", "cyclic-laplace", postprocess)
    check_framework(framework, constructor, split, "cyclic-laplace", postprocess, None,
                     estimator, remap)
    if CONSTRUCTORS[constructor].stage == "one-stage":
        for name, value in (("split", split), ("postprocess", postprocess)):
            if value is not None:
                raise ValueError(f"{name}: does not apply: constructor {constructor!r} is "
                                 f"one-stage (all of eps on the counts); drop the {name}")
    return framework, split, estimator, remap


def _check_accounting(result: Any, loss: dict[str, Any]) -> None:
    """Refuse to release a run whose stages spent more than the map accounts for."""
    lam = Fraction((result.sampler or {}).get("lam", "0"))
    if lam != loss["lam"]:
        raise NotPrivateError(f"stage 2 drew with lam = {lam}, the map accounts for "
                              f"{loss['lam']}; nothing released")
    if result.stage1 is not None:
        reported = result.stage1.noise.get("opendp_loss")
        if reported is None or Fraction(reported) > loss["L1"]:
            raise NotPrivateError(f"stage 1 reported loss {reported}, the map accounts for "
                                  f"{float(loss['L1'])}; nothing released")
