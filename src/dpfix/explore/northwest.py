"""Where the northwest corner stops being optimal: exact searches on the exploration engine.

:func:`find_northwest_counterexample` finds the smallest exact instance where the
northwest corner (the optimum of F for every convex loss, Theorem A,
docs/optimum_of_F.md) is not optimal for a given loss, and
:func:`northwest_survey` counts, per loss, on how many instances it is optimal and
whether the optimum is a monotone remap of the truncated geometric mechanism
(:func:`remap_of`); both run on :func:`dpfix.explore.search.smallest_counterexample`
and :func:`dpfix.explore.search.survey` with the exact optimum of
:func:`dpfix.certify.exact_optimum` (docs/optimum_of_F.md section 5).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np

from dpfix.certify.certificate import Certificate, exact_optimum, loss_label
from dpfix.certify.duals import single_peaked_optimum
from dpfix.numbers.algebraic import exact_field_array
from dpfix.numbers.deprecation import no_other, renamed, renamed_attribute
from dpfix.numbers.exact import exact_lam, one_or_many
from dpfix.numbers.results import Result
from dpfix.theory.mechanism import exact_weights

__all__ = ["NorthwestCounterexample", "NorthwestSurvey", "find_northwest_counterexample",
           "remap_of", "northwest_survey"]


# ---------------------------------------------------------------- counterexamples
@dataclass
class NorthwestCounterexample(Result):
    """An exact instance where the northwest corner is not optimal over F (the
    counterexample of the :class:`dpfix.explore.search.SearchResult` that
    :func:`find_northwest_counterexample` returns).

    ``gap = northwest_value - optimum > 0``; ``optimum_T`` attains ``optimum``
    (``certificate`` proves it); ``searched`` counts the instances tried before.
    """

    loss: str
    n: int
    lam: Fraction
    z: np.ndarray
    northwest_value: Fraction
    optimum: Fraction
    gap: Fraction
    northwest_T: np.ndarray
    optimum_T: np.ndarray
    certificate: Certificate
    searched: int

    weights = renamed_attribute("weights", "loss")

    def __str__(self) -> str:
        def mat(M: np.ndarray) -> str:
            return "\n".join("  [" + ", ".join(str(x) for x in row) + "]" for row in M)
        return (f"loss {self.loss}: n = {self.n}, lam = {self.lam}, "
                f"z = ({', '.join(str(x) for x in self.z)})\n"
                f"northwest corner: {self.northwest_value}\noptimum over F: {self.optimum}\n"
                f"gap: {self.gap} (~{float(self.gap):.6g}); "
                f"{self.searched} instances searched\n"
                f"northwest T:\n{mat(self.northwest_T)}\noptimal T:\n{mat(self.optimum_T)}")


def _northwest_and_optimum(weights: Any, inst: Any, matrix_weights: bool
                           ) -> tuple[np.ndarray, np.ndarray, Fraction, Certificate]:
    """The northwest corner ``T`` of an instance, the loss matrix ``W``, ``W . T`` and the
    exact optimum over F (for the loss given by name, or by its matrix ``W``)."""
    from dpfix.constructors import northwest_corner

    zv = inst.z_array()
    T = northwest_corner(zv, lam=inst.lam).matrix
    W = exact_weights(weights, zv)
    opt = exact_optimum(zv, inst.lam, W if matrix_weights else weights)
    return T, W, (W * T).sum(), opt


def _northwest_is_optimal(weights: Any, matrix_weights: bool, inst: Any) -> bool:
    """The predicate of the northwest searches: no mechanism of F does better."""
    _, _, nw, opt = _northwest_and_optimum(weights, inst, matrix_weights)
    return not opt.value < nw


#: the defaults of ``lam=`` and ``n=`` of the search and the survey (``lams=`` and
#: ``n_values=``: their deprecated names)
_SEARCH_LAM = (2, 3, Fraction(3, 2))
_SURVEY_N, _SURVEY_LAM = (3, 4), (2, 3)


def _required_loss(deprecated: dict[str, Any], loss: Any, where: str) -> Any:
    """``loss``, or the deprecated ``weights=``; one of them must be given."""
    given = renamed("weights", "loss", deprecated, loss, where=where, depth=2)
    no_other(deprecated, where)
    if given is None:
        raise TypeError(f"{where}: give the loss (a name of LOSSES or a callable)")
    return given


def _northwest_instances(n: Any, lam: Any, denominator_max: int) -> Iterator[Any]:
    """The instances of the northwest searches: ``n`` (one or many), then ``z`` (least
    denominator first, :func:`dpfix.explore.instances.targets_by_denominator`), then
    ``lam`` (one or many)."""
    from dpfix.explore.instances import Instance, targets_by_denominator

    lam_values = [exact_lam(x) for x in one_or_many(lam)]
    for size in one_or_many(n):
        for z in targets_by_denominator(size, denominator_max):
            for x in lam_values:
                yield Instance(size, x, z)


def find_northwest_counterexample(loss: Any = None, *, n_max: int = 5,
                                  lam: Any = _SEARCH_LAM,
                                  denominator_max: int = 6, limit: int | None = None,
                                  **deprecated: Any) -> Any:
    """The smallest exact instance where the northwest corner is not optimal over F.

    Searches ``n = 2 .. n_max``; for each ``n`` the targets ``z = c / N`` for
    ``N = 1 .. denominator_max`` and every composition ``c`` of ``N`` into ``n``
    non-negative parts (zeros at the ends and inside included), and each ``lam``
    in ``lam``, in this order; compares the northwest corner with the exact
    optimum of :func:`exact_optimum`. "Smallest": least ``n``, then least ``N``.
    The search is :func:`dpfix.explore.search.smallest_counterexample` over these instances.

    Parameters
    ----------
    loss : a loss name (:data:`dpfix.theory.mechanism.LOSSES`) or a callable ``f``
        (``z_i f(i - j)``); required.
    n_max, lam, denominator_max : the search space.
    limit : stop after this many instances (None: no limit).
    **deprecated : ``weights=`` (now ``loss=``), with a ``DeprecationWarning``.

    Returns
    -------
    dpfix.explore.search.SearchResult
        Its ``counterexample`` a :class:`NorthwestCounterexample`, or None (then false) when
        every instance searched has the northwest corner optimal (for a convex loss that
        is Theorem A; for others, evidence only); ``visited`` and ``stopped`` (``limit``).

    Examples
    --------
    >>> ce = find_northwest_counterexample("zero-one", n_max=3).counterexample
    >>> ce.n, ce.gap > 0
    (3, True)
    >>> find_northwest_counterexample("abs", n_max=3, denominator_max=3)
    SearchResult(found=False, visited=54, stopped=None)
    """
    from dataclasses import replace

    from dpfix.explore.search import BudgetReached, smallest_counterexample

    lam = renamed("lams", "lam", deprecated, lam, _SEARCH_LAM,
                  where="find_northwest_counterexample")
    weights = _required_loss(deprecated, loss, "find_northwest_counterexample")
    instances = _northwest_instances(range(2, n_max + 1), lam, denominator_max)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BudgetReached)  # the result says it (stopped)
        result = smallest_counterexample(partial(_northwest_is_optimal, weights, False),
                                         over="instance", instances=instances, budget=limit)
    if not result.found:
        return result
    inst = result.counterexample.instance
    T, _, nw, opt = _northwest_and_optimum(weights, inst, False)
    return replace(result, counterexample=NorthwestCounterexample(
        loss=loss_label(weights), n=inst.n, lam=inst.lam, z=inst.z_array(),
        northwest_value=nw, optimum=opt.value, gap=nw - opt.value, northwest_T=T,
        optimum_T=opt.T, certificate=opt, searched=result.visited))


def remap_of(T: Any, lam: Any) -> np.ndarray:
    """``R`` with ``T = G R``, ``G`` the truncated geometric mechanism (exact).

    ``R = diag(alpha)^-1 Sigma^-1 T`` (``Sigma^-1 = diag(Z) K^-1``, ``K^-1``
    tridiagonal), so its rows sum to 1; ``T`` is the geometric mechanism
    followed by a (randomised) remapping iff ``R >= 0`` (docs/optimum_of_F.md
    section 5).

    Parameters
    ----------
    T : an exact ``n x n`` matrix; lam : rational ``lam > 1``.

    Returns
    -------
    numpy.ndarray
        ``R``, Fractions.

    Examples
    --------
    >>> from dpfix.constructors import northwest_corner
    >>> remap_of(northwest_corner(["1/2", "1/2"], lam=2).matrix, 2).tolist()
    [[Fraction(1, 1), Fraction(0, 1)], [Fraction(0, 1), Fraction(1, 1)]]
    """
    lam_x = exact_lam(lam)
    Tm = exact_field_array(T, "T", ndim=2)
    n = Tm.shape[0]
    rho = 1 / lam_x
    if n == 1:
        return Tm.copy()
    k = 1 / (1 - rho * rho)
    KiT = np.empty((n, n), dtype=object)
    for i in range(n):
        row = Tm[i] * (1 + rho * rho if 0 < i < n - 1 else 1)
        if i > 0:
            row = row - rho * Tm[i - 1]
        if i < n - 1:
            row = row - rho * Tm[i + 1]
        KiT[i] = row * k
    Z = [sum(rho ** abs(i - m) for i in range(n)) for m in range(n)]
    ends, inner = 1 / (1 + rho), (1 - rho) / (1 + rho)
    alpha = [Z[m] * (ends if m in (0, n - 1) else inner) for m in range(n)]
    return np.array([KiT[m] * (Z[m] / alpha[m]) for m in range(n)], dtype=object)


def _monotone(R: np.ndarray) -> bool:
    """Support of ``R`` a staircase: row ``m``'s columns all at or left of row ``m+1``'s."""
    last = -1
    for row in R:
        cols = [j for j, x in enumerate(row) if x != 0]
        if cols[0] < last:
            return False
        last = cols[-1]
    return True


@dataclass(repr=False)
class NorthwestSurvey(Result):
    """What :func:`northwest_survey` returns: how far the northwest corner is from the
    optimum over F on the instances visited.

    Attributes
    ----------
    loss : str
        The loss's label.
    visited : int
        Instances visited (every one: the survey has no budget, so ``stopped`` is None).
    not_optimal : int
        Instances where the northwest corner is not optimal (``found``: some are).
    max_gap, max_relative_gap : Fraction
        The largest ``northwest - optimum`` and ``(northwest - optimum) / optimum``.
    worst : dict or None
        ``n, lam, z, gap, northwest, optimum`` at the largest relative gap.
    remap_optimal, remap_beats_northwest, remap_monotone : int
        Among the non-optimal instances: the best ``G R`` is optimal over F; is below the
        northwest corner (a non-monotone or non-northwest remapping); has a staircase
        remapping.
    by_n : dict
        ``n -> [instances, not optimal]``.
    """

    loss: str
    visited: int = 0
    not_optimal: int = 0
    max_gap: Fraction = Fraction(0)
    max_relative_gap: Fraction = Fraction(0)
    worst: dict | None = None
    remap_optimal: int = 0
    remap_beats_northwest: int = 0
    remap_monotone: int = 0
    by_n: dict = field(default_factory=dict)
    stopped: str | None = None

    former_keys = {"loss": "loss", "instances": "visited", "not_optimal": "not_optimal",
                   "max_gap": "max_gap", "max_relative_gap": "max_relative_gap",
                   "worst": "worst", "remap_optimal": "remap_optimal",
                   "remap_beats_northwest": "remap_beats_northwest",
                   "remap_monotone": "remap_monotone", "by_n": "by_n"}
    headline = ("loss", "found", "visited", "not_optimal", "stopped")

    @property
    def found(self) -> bool:
        """Whether the northwest corner is not optimal somewhere."""
        return self.not_optimal > 0


def northwest_survey(loss: Any = None, *, n: Any = _SURVEY_N, lam: Any = _SURVEY_LAM,
                     denominator_max: int = 4, **deprecated: Any) -> NorthwestSurvey:
    """How far the northwest corner is from the optimum over F, on every small instance.

    The instances of :func:`find_northwest_counterexample` (``z = c / N``, every
    composition ``c``, ``N <= denominator_max``) for each ``n`` and ``lam``; the
    optimum by :func:`exact_optimum`. Where the northwest corner is not optimal,
    also the best mechanism of the form ``G R`` (the truncated geometric
    mechanism followed by a randomised remapping, i.e. ``T = Sigma A``,
    ``A >= 0``: the exact LP over single-peaked scales), to tell whether an
    optimum of that form exists and whether a monotone remapping suffices.

    Parameters
    ----------
    loss : a loss name (:data:`dpfix.theory.mechanism.LOSSES`) or a callable ``f``;
        required.
    n, lam, denominator_max : the instances.
    **deprecated : ``weights=`` (now ``loss=``), with a ``DeprecationWarning``.

    Returns
    -------
    NorthwestSurvey
        ``visited``, ``not_optimal``, the gaps, the worst instance and what the best
        ``G R`` does there (the keys of the dict it replaces still work for one release,
        with a deprecation: ``result["instances"]`` is ``result.visited``).

    Examples
    --------
    >>> s = northwest_survey("zero-one", n=(3,), lam=(3,), denominator_max=4)
    >>> s.visited, s.not_optimal, s.max_gap, s.remap_optimal
    (22, 2, Fraction(1, 252), 2)
    """
    from dpfix.explore.search import survey

    n = renamed("n_values", "n", deprecated, n, _SURVEY_N, where="northwest_survey")
    lam = renamed("lams", "lam", deprecated, lam, _SURVEY_LAM, where="northwest_survey")
    weights = _required_loss(deprecated, loss, "northwest_survey")
    result = survey(partial(_northwest_is_optimal, weights, True), over="instance",
                    instances=_northwest_instances(n, lam, denominator_max))
    if result.errors:
        raise result.errors[0]
    out = NorthwestSurvey(loss_label(weights), visited=result.visited,
                          not_optimal=len(result.failures), stopped=result.stopped)
    for (n, _), c in result.counts.items():
        counts = out.by_n.setdefault(n, [0, 0])
        counts[0] += c["held"] + c["failed"]
        counts[1] += c["failed"]
    for ce in result.failures:
        _, W, nw, opt = _northwest_and_optimum(weights, ce.instance, True)
        n, lam_x, zv = ce.n, ce.lam, ce.instance.z_array()
        gap = nw - opt.value
        rel = gap / opt.value if opt.value else Fraction(0)
        out.max_gap = max(out.max_gap, gap)
        if rel > out.max_relative_gap:
            out.max_relative_gap = rel
            out.worst = {"n": n, "lam": lam_x, "z": list(zv), "gap": gap,
                         "northwest": nw, "optimum": opt.value}
        Tr = single_peaked_optimum(zv, lam_x, W)
        best_remap = (W * Tr).sum()
        out.remap_optimal += best_remap == opt.value
        out.remap_beats_northwest += best_remap < nw
        out.remap_monotone += _monotone(remap_of(Tr, lam_x))
    return out
