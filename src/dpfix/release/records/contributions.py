"""Choosing the bound ``C`` of contributions per person privately (docs/records.md,
section 5).

The exponential mechanism of :mod:`dpfix.release.bounds` over its public grid of
candidates, on the number of records of each person: the score of ``C_j`` is ``|#{persons
with at most C_j records} - ceil(quantile P)|`` (``P`` the persons), which one person added
or removed moves by at most 1, so the choice is ``eps``-DP for one person.
:func:`suggest_max_contributions` is the choice alone (charged on a ledger);
``privatize_records(..., max_contributions="auto")`` (or :class:`PrivateContributions`) plans
it as a stage of the release (:mod:`dpfix.release.records.plan`): its budget split off the
total by :func:`dpfix.release.options.stage_split`, as a bound chosen privately is, and the
candidates stopped at the largest ``C`` the release's plan admits
(:func:`largest_candidate`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.release.bounds import bound_grid, halvings, sample_exponential, upper_scores
from dpfix.release.budget import exact_budget
from dpfix.release.options import MIN_STAGE_EPSILON, stage_split
from dpfix.sampling.source import RandomSource, random_source, rational_lam

__all__ = ["PrivateContributions", "ContributionBound", "choose_contributions",
           "largest_candidate", "suggest_max_contributions", "private_contributions",
           "DEFAULT_CONTRIBUTION_QUANTILE", "DEFAULT_MAX_CONTRIBUTIONS", "CONTRIBUTIONS_SHARE",
           "PERSON_STATEMENT"]

#: The quantile of the records per person that ``max_contributions="auto"`` aims at.
DEFAULT_CONTRIBUTION_QUANTILE = 0.9
#: The largest candidate ``C``.
DEFAULT_MAX_CONTRIBUTIONS = 1000
#: The share of ``eps`` that ``max_contributions="auto"`` spends on ``C`` by default.
CONTRIBUTIONS_SHARE = 0.1
#: The neighbouring relation of a choice of ``C``, for its ledger charge.
PERSON_STATEMENT = ("neighbouring record sets differ by one person (all their records, added "
                    "or removed)")


def _fraction(value: Any) -> Fraction | None:
    """A number (a float by its shortest repr, a decimal text, a Fraction) exactly, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction, str)):
        return None
    try:
        return Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    except (ValueError, ZeroDivisionError):
        return None


@dataclass(frozen=True)
class PrivateContributions:
    """``C`` to choose privately (``max_contributions=PrivateContributions()``, or
    ``max_contributions="auto"``): a DP ``quantile`` of the records per person spending
    ``share`` of the release's ``eps``, the release the rest (sequential composition).

    Attributes
    ----------
    share : float, Fraction or str, optional
        In ``(0, 1)``; None: :data:`CONTRIBUTIONS_SHARE`.
    quantile : float, Fraction or str, optional
        The share of persons whose records ``C`` keeps whole, in ``(0, 1]``; None:
        :data:`DEFAULT_CONTRIBUTION_QUANTILE`.

    Examples
    --------
    >>> PrivateContributions().fraction, PrivateContributions("1/4").fraction
    (0.1, 0.25)
    >>> PrivateContributions(1.5)
    Traceback (most recent call last):
    ...
    ValueError: contributions_share: a number in (0, 1), got 1.5
    """

    share: Any = None
    quantile: Any = None

    def __post_init__(self) -> None:
        if self.share is not None:
            q = _fraction(self.share)
            if q is None or not 0 < q < 1:
                raise ValueError(f"contributions_share: a number in (0, 1), got {self.share!r}")
        if self.quantile is not None:
            q = _fraction(self.quantile)
            if q is None or not 0 < q <= 1:
                raise ValueError(f"contributions_quantile: a number in (0, 1], got "
                                 f"{self.quantile!r}")

    @property
    def fraction(self) -> float:
        """The share spent on ``C`` (:data:`CONTRIBUTIONS_SHARE` when none is given)."""
        return CONTRIBUTIONS_SHARE if self.share is None else float(_fraction(self.share))

    @property
    def aim(self) -> Any:
        """The quantile aimed at (:data:`DEFAULT_CONTRIBUTION_QUANTILE` when none is given)."""
        return DEFAULT_CONTRIBUTION_QUANTILE if self.quantile is None else self.quantile

    def split(self, eps: float) -> tuple[float, float]:
        """``(eps_contributions, eps_release)``: the choice's budget and the release's, their
        exact sum at most ``eps`` (:func:`dpfix.release.options.stage_split`), the choice's
        at least :data:`dpfix.release.options.MIN_STAGE_EPSILON`.

        Examples
        --------
        >>> PrivateContributions().split(1.0)
        (0.1, 0.8999999999999999)
        """
        first, rest = stage_split(eps, self.fraction)
        if first < MIN_STAGE_EPSILON:
            raise ValueError(f"contributions_share: gives eps_contributions = {first:.3g}; "
                             f"the choice of C needs at least {MIN_STAGE_EPSILON:g}")
        return first, rest


def private_contributions(max_contributions: Any) -> PrivateContributions | None:
    """``max_contributions`` as a :class:`PrivateContributions` (``"auto"``:
    ``PrivateContributions()``), or None for a bound given.

    Examples
    --------
    >>> private_contributions("auto"), private_contributions(3)
    (PrivateContributions(share=None, quantile=None), None)
    """
    if isinstance(max_contributions, PrivateContributions):
        return max_contributions
    if isinstance(max_contributions, str) and max_contributions.strip() == "auto":
        return PrivateContributions()
    return None


@dataclass(frozen=True)
class ContributionBound:
    """A DP choice of ``max_contributions`` and what the report states about it (public).

    Attributes
    ----------
    max_contributions : int
        The bound chosen (a DP output).
    eps : float
        The budget spent (``>= 2 ln(lam)``).
    lam : Fraction
        ``p/q <= e^(eps/2)``, proved.
    quantile : float, Fraction or str
        The quantile of the records per person aimed at.
    candidates : int
        How many candidates (:func:`dpfix.release.bounds.bound_grid`).
    max_candidate : int
        The largest candidate.
    """

    max_contributions: int
    eps: float
    lam: Fraction
    quantile: Any
    candidates: int
    max_candidate: int

    def describe(self) -> dict:
        """The report's entry (every value public: parameters or the DP output)."""
        return {
            "max_contributions": self.max_contributions, "eps_contributions": self.eps,
            "quantile": str(self.quantile),
            "lam": f"{self.lam.numerator}/{self.lam.denominator}",
            "candidates": {"count": self.candidates, "max_candidate": self.max_candidate,
                           "grid": "dpfix.release.bounds.bound_grid (1..32, then 8 geometric "
                                   "steps per doubling) with its base measure"},
            "mechanism": "exponential mechanism over the public grid, score |#{persons with at "
                         "most C records} - ceil(quantile P)| (P the persons: sensitivity 1 "
                         "when one person is added or removed), weights 2^-d lam^-score, "
                         "drawn exactly: eps_contributions-DP for one person (docs/records.md)",
        }


def choose_contributions(eta: np.ndarray, eps: float, quantile: Any, max_candidate: int,
                         source: RandomSource) -> ContributionBound:
    """The exponential mechanism of :mod:`dpfix.release.bounds` on the histogram ``eta`` of
    the records per person (``eta[m]`` persons with ``m`` records; ``eta[0]`` is ignored).

    Examples
    --------
    >>> eta = np.bincount([1] * 600 + [2] * 200 + [3] * 100 + [4] * 60 + [10] * 40)
    >>> choose_contributions(eta, 20.0, 0.9, 1000, random_source(0)).max_contributions
    3
    """
    grid = bound_grid(max_candidate)
    e = np.asarray(eta, dtype=np.int64).copy() if len(eta) else np.zeros(1, np.int64)
    e[0] = 0
    scores = upper_scores(e, grid, quantile)  # |#{m_p <= C_j} - ceil(q P)|
    lam = rational_lam(eps / 2)
    j = int(sample_exponential(scores, lam, source, halved=halvings(grid))[0])
    return ContributionBound(int(grid[j]), eps, lam, quantile, int(grid.size),
                             int(max_candidate))


def largest_candidate(admits: Callable[[int], bool]) -> int:
    """The largest ``C`` in ``1 .. DEFAULT_MAX_CONTRIBUTIONS`` that ``admits(C)`` (the
    release's plan at ``C``: every mechanism at its budget over ``C`` in its usable range),
    given ``admits(1)``: the mechanisms' budgets fall with ``C``, so the admitted ``C`` are
    ``1 .. top`` and a binary search finds ``top``.

    Examples
    --------
    >>> largest_candidate(lambda C: 0.5 / C >= 1e-3)
    500
    """
    lo, hi = 1, DEFAULT_MAX_CONTRIBUTIONS
    if admits(hi):
        return hi
    while hi - lo > 1:  # admits(lo), not admits(hi)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if admits(mid) else (lo, mid)
    return lo


def suggest_max_contributions(records: Any, eps: Any, *, groups: Any = None,
                              values: Any = None,
                              quantile: Any = DEFAULT_CONTRIBUTION_QUANTILE,
                              max_candidate: int = DEFAULT_MAX_CONTRIBUTIONS,
                              seed: Any = None, ledger: Any = None) -> ContributionBound:
    """An ``eps``-DP choice of ``max_contributions``: a private ``quantile`` of the number
    of records per person (docs/records.md, section 5).

    The exponential mechanism of :func:`dpfix.release.bounds.choose_upper` over the public
    grid :func:`dpfix.release.bounds.bound_grid` ``(max_candidate)``, with the score
    ``|#{persons with at most C_j records} - ceil(quantile P)|`` (``P`` persons). Adding or
    removing one person changes ``#{m_p <= C_j}`` by at most 1 and ``ceil(quantile P)`` by
    at most 1, in the same direction, so every score by at most 1: the choice is
    ``eps``-DP for one person added or removed (whatever their records).

    Parameters
    ----------
    records : Records
        The records (:class:`dpfix.release.records.Records`); only the person column is
        needed.
    eps : float or str
        The budget spent on the choice.
    groups, values : optional
        As :func:`~dpfix.release.records.privatize_records`: with ``groups`` (and
        ``values``) only the records that would be bounded are counted (``records`` then
        names its ``group_by``, and its ``count`` with ``values``); without, every record of
        a person.
    quantile : float, Fraction or str
        The share of persons whose records ``C`` should keep whole, in ``(0, 1]``
        (default :data:`DEFAULT_CONTRIBUTION_QUANTILE`).
    max_candidate : int
        The largest candidate (default :data:`DEFAULT_MAX_CONTRIBUTIONS`).
    seed : None, int or RandomSource
        None: the operating system's CSPRNG; an int: reproducible (tests).
    ledger : dpfix.release.ledger.Ledger, optional
        Charged with ``eps`` (the unit: one person added or removed).

    Returns
    -------
    ContributionBound

    Examples
    --------
    >>> from dpfix.release.records import Records
    >>> sizes = [1] * 600 + [2] * 200 + [3] * 100 + [4] * 60 + [10] * 40  # 1000 persons
    >>> recs = {"pid": [p for p, m in enumerate(sizes) for _ in range(m)]}
    >>> suggest_max_contributions(Records(recs, person="pid"), 20, seed=0).max_contributions
    3
    """
    from dpfix.release.records.reading import Records, records_schema, source_name
    from dpfix.release.records.sources import open_records, person_histogram

    budget = float(exact_budget(eps, "eps"))
    if not isinstance(records, Records):
        raise TypeError(f"records: a Records(source, person=...) naming the person column, "
                        f"got {type(records).__name__}")
    if groups is None and values is not None:
        raise ValueError("values: select the records counted only with the declared groups "
                         "(groups=); drop it")
    PrivateContributions(quantile=quantile)  # a bad quantile: one line, before any reading

    def run() -> ContributionBound:
        if groups is None:
            eta = person_histogram(records)
        else:
            schema = records_schema(records, values, ())
            with open_records(records.source, schema, groups) as reader:
                eta = reader.contribution_histogram()
        return choose_contributions(eta, budget, quantile, max_candidate, random_source(seed))

    if ledger is None:
        return run()
    with ledger.reserve(Fraction(budget), dataset=source_name(records.source), columns=[],
                        unit=PERSON_STATEMENT) as charge:
        made = run()
        charge.commit()
    return made
