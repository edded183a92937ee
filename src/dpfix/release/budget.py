"""The budget of a release over several columns: the privacy unit, the shares, the bounds.

The policy that :func:`dpfix.release.plan.plan_release` applies (for
:func:`dpfix.release.table.privatize_table` and ``dpfix privatize`` alike), in one place;
its messages name the parameters (``eps``, ``shares``, ``upper``, ``constructor=``), and
the command line names its flags instead:

- **the privacy unit** (:class:`PrivacyUnit`, docs/release.md): what a neighbouring
  table is. ``"row"`` (the default, the safe one): one individual may change *every*
  column of one row, each count by at most ``c``; the columns are then composed
  sequentially (the release is ``sum of the shares``-DP). ``"cell"``: one individual
  changes *one* count of one row by at most ``c``; the columns are then disjoint in
  what one individual changes, so they compose in parallel (the release is
  ``max of the shares``-DP and every column may spend the whole budget). With
  ``c > 1`` every mechanism runs at its share divided by ``c``, rounded down
  (:func:`mechanism_budget`: group privacy along the path of ``c`` changes by 1,
  ``lam = e^(eps / c)``);
- **the shares** (:func:`column_budgets`): the total budget split equally over the
  columns, or set per column, the exact (rational) sum of the float shares never above
  the total (:func:`fit_shares`);
- **the usable ranges** (:data:`EPSILON_RANGE`, :data:`MAX_UPPER`,
  :data:`MAX_UPPER_STRUCTURED`), measured: below or above them the float constructions
  or their privacy checks lose every digit;
- the randomness of several columns is the seed policy's
  (:func:`dpfix.release.seeds.column_seeds`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.constructors import CONSTRUCTORS
from dpfix.numbers.exact import exact_text
from dpfix.numbers.numeric import plain_number
from dpfix.release.bounds import PrivateBound
from dpfix.sampling import STRUCTURED

__all__ = ["PrivacyUnit", "UNITS", "privacy_unit", "EPSILON_RANGE", "MAX_UPPER",
           "MAX_UPPER_STRUCTURED", "fit_shares", "exact_budget", "check_epsilon",
           "check_upper", "column_budgets", "column_uppers", "column_deltas",
           "mechanism_budget", "spent", "exact_text", "exact_budgets"]

#: T has (upper + 1)^2 float entries: 10,000 makes it 800 MB.
MAX_UPPER = 10_000
#: The structured constructors (northwest, unfixed, truncated-geometric) are drawn as
#: G R without T, in O(n) memory (dpfix.sampling; measured: 10^6 rows at upper 10^6 in
#: 12 s and 430 MB, benchmarks/bench_sampling.py).
MAX_UPPER_STRUCTURED = 1_000_000
#: Usable eps of one column's mechanisms per constructor, measured on every constructor
#: and privatizer over eps from 1e-300 to 1e6 and upper from 10 to 1000 (numerical
#: warnings as errors). Below: the exact sampler of T needs lam = e^eps_2 away from 1 at a
#: 2^-20 resolution (it fails at eps_2 = 1e-6), the one-stage constructors fail below about
#: 1e-3 (their rows or their privacy check lose every digit). Above: the heuristic's float
#: path fails from about 100 at n = 1001 and 300 at n = 51 (e^eps overflows its privacy
#: check), the LP solver from about 30; at eps = 100 the guarantee e^100 means nothing.
EPSILON_RANGE = {name: ((1e-3, 100.0) if info.stage == "one-stage" else
                        (1e-4, 20.0) if name == "lp" else (1e-4, 100.0))
                 for name, info in CONSTRUCTORS.items()}

#: The privacy units (:class:`PrivacyUnit`): name -> (what one individual changes, the
#: composition over the columns).
UNITS = {
    "row": ("every column of one row, each count by at most c", "sequential"),
    "cell": ("one count of one row (one column), by at most c", "parallel"),
    "person": ("one person's records, bounded (docs/records.md): at most C counts of the "
               "table in all, each by at most c, the changes adding up to at most C",
               "parallel"),
}


@dataclass(frozen=True)
class PrivacyUnit:
    """What one individual can change: the neighbouring tables of the guarantee.

    Parameters
    ----------
    name : str
        ``"row"``: every column of one row changes, each count by at most ``bound``
        (sequential composition over the columns); ``"cell"``: one count of one row
        changes by at most ``bound`` (parallel composition over the columns);
        ``"person"``: one person's records are added or removed, bounded to at most ``C =
        bound`` records in all and ``c = per_group`` in any one row (docs/records.md): at
        most ``C`` counts change, their changes adding up to at most ``C`` (parallel
        composition over the columns at their shares over ``C``).
    bound : int
        ``c >= 1`` (``C`` for ``"person"``): each mechanism runs at its share divided by it.
    per_group : int, optional
        ``"person"`` only: ``1 <= c <= C`` (default ``C``).

    Examples
    --------
    >>> u = PrivacyUnit("cell", 2)
    >>> u.composition, u.text
    ('parallel', 'cell:2')
    """

    name: str = "row"
    bound: int = 1
    per_group: int | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.name not in UNITS:
            raise ValueError(f"unit: {self.name!r} is not one of {', '.join(UNITS)} "
                             "(docs/release.md)")
        if (not isinstance(self.bound, (int, np.integer)) or isinstance(self.bound, bool)
                or self.bound < 1):
            raise ValueError(f"unit: the bound c must be an integer >= 1, got {self.bound!r}")
        object.__setattr__(self, "bound", int(self.bound))
        c = self.per_group
        if self.name != "person":
            if c is not None:
                raise ValueError(f"unit: per_group is for the unit person, not {self.name!r}")
            return
        c = self.bound if c is None else c
        if (not isinstance(c, (int, np.integer)) or isinstance(c, bool)
                or not 1 <= c <= self.bound):
            raise ValueError(f"unit: the bound per group c must be an integer in 1..C = "
                             f"{self.bound}, got {c!r}")
        object.__setattr__(self, "per_group", int(c))

    @property
    def composition(self) -> str:
        """``"sequential"`` (unit ``row``) or ``"parallel"`` (unit ``cell``)."""
        return UNITS[self.name][1]

    @property
    def text(self) -> str:
        """``"row"``, ``"cell"``, ``"person"``, or with a bound above 1 ``"row:C"``,
        ``"cell:C"``, ``"person:C"`` (``"person:C:c"`` with ``c < C``)."""
        if self.bound == 1:
            return self.name
        c = "" if self.per_group in (None, self.bound) else f":{self.per_group}"
        return f"{self.name}:{self.bound}{c}"

    def statement(self) -> str:
        """The unit in words, for the report."""
        what = UNITS[self.name][0].replace("at most c", f"at most {self.per_group or self.bound}")
        if self.name == "person":
            return (f"neighbouring tables differ by one person (added or removed): "
                    f"{what.replace('at most C', f'at most {self.bound}')}; the columns "
                    f"compose in parallel, each at its share over {self.bound}")
        return (f"neighbouring tables differ in what one individual changes: {what}; "
                f"the columns compose {self.composition}ly")


def privacy_unit(value: Any) -> PrivacyUnit:
    """A :class:`PrivacyUnit` from ``"row"``, ``"cell"``, ``"person"``, ``"row:C"``,
    ``"cell:C"``, ``"person:C"``, ``"person:C:c"`` or a :class:`PrivacyUnit`.

    Examples
    --------
    >>> privacy_unit("row:3")
    PrivacyUnit(name='row', bound=3)
    >>> privacy_unit("person:5:2").text, privacy_unit("person:5:2").per_group
    ('person:5:2', 2)
    >>> privacy_unit("column")
    Traceback (most recent call last):
    ...
    ValueError: unit: 'column' is not one of row, cell, person, row:C, cell:C, person:C, \
person:C:c (docs/release.md)
    """
    if isinstance(value, PrivacyUnit):
        return value
    text = str(value).strip()
    name, colon, bound = text.partition(":")
    bound, colon_c, per = bound.partition(":") if name == "person" else (bound, "", "")
    if name not in UNITS or (colon and not bound) or (colon_c and not per):
        raise ValueError(f"unit: {value!r} is not one of row, cell, person, row:C, cell:C, "
                         "person:C, person:C:c (docs/release.md)")
    c = 1
    if colon:
        try:
            c = int(plain_number(bound, "unit", integer=True))
        except ValueError:
            c = 0
        if c < 1:
            raise ValueError(f"unit: the bound C of {value!r} must be an integer >= 1")
    if not colon_c:
        return PrivacyUnit(name, c)
    try:
        g = int(plain_number(per, "unit", integer=True))
    except ValueError:
        g = 0
    if not 1 <= g <= c:
        raise ValueError(f"unit: the bound per group c of {value!r} must be an integer in "
                         f"1..C = {c}")
    return PrivacyUnit(name, c, g)


def fit_shares(shares: list[Fraction], total: float) -> list[float]:
    """Floats for the budget shares whose exact sum is at most ``total``.

    Each share is rounded to the nearest float; while the exact (rational) sum
    of those floats exceeds ``total``, the largest is lowered by one unit in
    the last place. So the composed guarantee, the sum of what each column
    spends, never exceeds the total, however the shares round (``0.1 + 0.2``
    exceeds ``0.3`` in floats by one ulp).

    Examples
    --------
    >>> fit_shares([Fraction(1, 10), Fraction(2, 10)], 0.3)
    [0.1, 0.19999999999999998]
    >>> fit_shares([Fraction(1, 2)] * 2, 1.0)
    [0.5, 0.5]
    """
    out = [float(s) for s in shares]
    cap = Fraction(total)
    while sum(map(Fraction, out)) > cap:
        i = max(range(len(out)), key=out.__getitem__)
        out[i] = math.nextafter(out[i], 0.0)
    return out


def mechanism_budget(budget: float, bound: int) -> float:
    """What each mechanism of a column with ``budget`` runs at under a unit of bound ``c``:
    the largest float ``m`` with ``c * m <= budget`` exactly (in rationals).

    Group privacy: a change by ``c`` is a path of ``c`` changes by 1, each costing ``m``,
    so the column spends ``c * m``; the nearest float to ``budget / c`` may exceed the
    budget by units in the last place once multiplied back, the one returned never does.

    Examples
    --------
    >>> mechanism_budget(1.0, 2), mechanism_budget(0.7, 1)
    (0.5, 0.7)
    >>> m = mechanism_budget(0.1, 3)
    >>> 3 * Fraction(m) <= Fraction(0.1) < 3 * Fraction(math.nextafter(m, 1))
    True
    """
    cap = Fraction(budget)
    m = float(cap / bound)
    while bound * Fraction(m) > cap:
        m = math.nextafter(m, 0.0)
    return m


def spent(budgets: list, deltas: list, unit: PrivacyUnit) -> tuple[Fraction, Fraction]:
    """What a release of columns with ``budgets`` (and ``deltas``, None for none) spends,
    ``(eps, delta)`` exactly: their sums under sequential composition (unit ``row``), their
    maxima under parallel composition (unit ``cell``); a float by its binary value.

    Examples
    --------
    >>> spent([0.5, 0.25], [None, None], PrivacyUnit())
    (Fraction(3, 4), Fraction(0, 1))
    >>> spent([0.5, 0.25], [1e-6, 1e-6], PrivacyUnit("cell"))[0]
    Fraction(1, 2)
    """
    parallel = unit.composition == "parallel"
    each = [Fraction(b) for b in budgets]
    ds = [Fraction(d) for d in deltas if d is not None]
    total = max if parallel else (lambda xs: sum(xs, Fraction(0)))
    return total(each), (total(ds) if ds else Fraction(0))


def exact_budgets(**budgets: Any) -> dict[str, str]:
    """Budgets by name as their exact texts (:func:`exact_text`), for a report.

    Examples
    --------
    >>> exact_budgets(eps_t=0.5, eps_1=0.25)
    {'eps_t': '0.5', 'eps_1': '0.25'}
    """
    return {name: exact_text(value) for name, value in budgets.items()}


def _text(value: Any) -> str:
    """A number as the decimal text it was written in (a float by its shortest repr)."""
    if isinstance(value, bool):
        raise ValueError
    if isinstance(value, Fraction):
        raise TypeError
    return repr(float(value)) if isinstance(value, (float, np.floating)) else str(value)


def exact_budget(value: Any, label: str) -> Fraction:
    """A budget as the exact rational its decimal text denotes (``0.1`` is 1/10; a float
    by its shortest repr, so ``0.1`` too; a Fraction as it is).

    Examples
    --------
    >>> exact_budget("0.3", "eps"), exact_budget(0.1, "eps")
    (Fraction(3, 10), Fraction(1, 10))
    """
    if isinstance(value, Fraction) and value > 0:
        return value
    try:
        q = Fraction(Decimal(plain_number(_text(value), label)))
    except (InvalidOperation, ValueError, TypeError, OverflowError):
        raise ValueError(f"{label}: must be a finite number > 0, got {value!r}") from None
    if q <= 0:
        raise ValueError(f"{label}: must be a finite number > 0, got {value!r}")
    return q


def _float(value: Any, label: str) -> float:
    try:
        eps = float(value) if isinstance(value, Fraction) else \
            float(plain_number(_text(value), label))
    except (TypeError, ValueError):
        raise ValueError(f"{label}: not a number: {value!r}") from None
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"{label}: must be a finite number > 0, got {value!r}")
    return eps


def _range(constructor: str) -> tuple[float, float]:
    return EPSILON_RANGE.get(constructor, EPSILON_RANGE["heuristic"])


def check_epsilon(value: Any, constructor: str = "northwest") -> float:
    """The budget of one column, a float in :data:`EPSILON_RANGE` of ``constructor``.

    Examples
    --------
    >>> check_epsilon("1e-5")
    Traceback (most recent call last):
    ...
    ValueError: eps: the usable range is 0.0001 to 100 (with constructor='northwest'), got '1e-5'
    """
    eps = _float(value, "eps")
    lo, hi = _range(constructor)
    if not lo <= eps <= hi:
        raise ValueError(f"eps: the usable range is {lo:g} to {hi:g} (with "
                         f"constructor={constructor!r}), got {value!r}")
    return eps


def check_upper(value: Any, constructor: str = "northwest") -> int | str | PrivateBound:
    """A public bound ``upper``: an integer in ``1..MAX_UPPER`` (``MAX_UPPER_STRUCTURED``
    for the constructors drawn as ``G R`` without ``T``), or ``"auto"`` or a
    :class:`~dpfix.release.bounds.PrivateBound` (a DP bound, :mod:`dpfix.release.bounds`),
    returned as given.

    Examples
    --------
    >>> check_upper(50), check_upper("0")
    Traceback (most recent call last):
    ...
    ValueError: upper: must be an integer in 1..1000000, got '0'
    """
    if isinstance(value, PrivateBound):
        return value
    if isinstance(value, str) and value.strip() == "auto":
        return "auto"
    try:
        if isinstance(value, bool) or isinstance(value, (float, np.floating)):
            raise ValueError
        upper = int(plain_number(str(value), "upper", integer=True))
    except ValueError:
        raise ValueError(f"upper: must be an integer >= 1 or auto, got {value!r}") from None
    top = MAX_UPPER_STRUCTURED if constructor in STRUCTURED else MAX_UPPER
    if not 1 <= upper <= top:
        more = (f" (with constructor={constructor!r}; northwest, unfixed and "
                f"truncated-geometric need no n x n T and take up to {MAX_UPPER_STRUCTURED})"
                if top == MAX_UPPER else "")
        raise ValueError(f"upper: must be an integer in 1..{top}{more}, got {value!r}")
    return upper


def column_uppers(upper: Any, names: list, constructor: str = "northwest") -> dict:
    """Each column's bound from one bound for every column or a mapping column -> bound.

    Examples
    --------
    >>> column_uppers({"a": 5, "b": 7}, ["a", "b"]), column_uppers(9, ["a"])
    ({'a': 5, 'b': 7}, {'a': 9})
    """
    if not isinstance(upper, dict):
        return {name: check_upper(upper, constructor) for name in names}
    for col in upper:
        if col not in names:
            raise ValueError(f"upper: {col!r} is not a privatized column (columns: "
                             f"{', '.join(map(str, names))})")
    missing = [n for n in names if n not in upper]
    if missing:
        raise ValueError(f"upper: no value for column {missing[0]!r}")
    return {name: check_upper(upper[name], constructor) for name in names}


def column_budgets(eps: Any, names: list, shares: dict | None = None,
                   constructor: str = "northwest",
                   unit: PrivacyUnit = PrivacyUnit()) -> tuple[list[float], str]:
    """Each column's budget (its guarantee) from the total ``eps`` and the ``shares``.

    Unit ``row`` (sequential composition): the total is split equally over the columns
    without a share; with a share for every column the shares must add up to the total
    exactly (in decimal: ``0.3 + 0.7 = 1``), else they must leave a positive rest; the
    floats' exact sum is at most the total (:func:`fit_shares`). Unit ``cell`` (parallel
    composition): every column spends the whole total, or its share (each at most the
    total). Each column's mechanisms then run at its budget divided by the unit's bound
    (:func:`mechanism_budget`), which must lie in :data:`EPSILON_RANGE`.

    Returns
    -------
    (list of float, str)
        The budgets in the order of ``names`` and the rule, for the report.

    Examples
    --------
    >>> column_budgets("1", ["a", "b"], {"a": "0.3"})
    ([0.3, 0.7], 'shares for a; the rest split equally over b')
    >>> column_budgets(1.0, ["a", "b"], unit=PrivacyUnit("cell"))[0]
    [1.0, 1.0]
    """
    shares = dict(shares or {})
    for col in shares:
        if col not in names:
            raise ValueError(f"shares: {col!r} is not a privatized column (columns: "
                             f"{', '.join(map(str, names))})")
    c = unit.bound
    if len(names) == 1 and not shares:  # one column: the whole budget
        budgets, rule = [_float(eps, "eps")], "one column: the whole budget"
    else:
        eps_t = _float(eps, "eps")
        total = exact_budget(eps, "eps")
        explicit = {n: exact_budget(v, f"shares {n}") for n, v in shares.items()}
        rest = [n for n in names if n not in explicit]
        given = sum(explicit.values(), Fraction(0))
        if unit.composition == "parallel":
            over = [n for n, q in explicit.items() if q > total]
            if over:
                raise ValueError(f"shares: the share of {over[0]!r} exceeds the total "
                                 f"eps={eps}")
            # each column on its own at most the total (the guarantee is their maximum)
            budgets = [fit_shares([explicit.get(n, total)], eps_t)[0] for n in names]
            rule = ("parallel composition: every column spends the whole budget"
                    + (f" (shares for {', '.join(map(str, explicit))})" if explicit else ""))
        else:
            if not rest and given != total:
                raise ValueError(f"shares: the shares add up to {float(given):.12g}, not the "
                                 f"total eps={eps}; make them add up, or leave a column "
                                 "out to give it the rest")
            if rest and given >= total:
                raise ValueError(f"shares: the shares add up to {float(given):.12g}, leaving "
                                 f"nothing of the total eps={eps} for "
                                 f"{', '.join(map(str, rest))}")
            each = (total - given) / len(rest) if rest else Fraction(0)
            budgets = fit_shares([explicit.get(n, each) for n in names], eps_t)
            if not explicit:
                rule = f"the total split equally over the {len(names)} columns"
            elif not rest:
                rule = "shares for every column (adding up to the total exactly)"
            else:
                rule = (f"shares for {', '.join(map(str, explicit))}; the rest split equally "
                        f"over {', '.join(map(str, rest))}")
    lo, hi = _range(constructor)
    for name, b in zip(names, budgets, strict=True):
        run = mechanism_budget(b, c)
        if lo <= run <= hi:
            continue
        if len(names) == 1 and not shares and c == 1:
            raise ValueError(f"eps: the usable range is {lo:g} to {hi:g} (with "
                             f"constructor={constructor!r}), got {eps!r}")
        at = f"{b:.6g}" if c == 1 else f"{b:.6g}, its mechanisms {run:.6g} (unit bound {c})"
        raise ValueError(f"eps: column {name!r} gets {at} of the total {eps}; the usable "
                         f"range per column is {lo:g} to {hi:g} (with "
                         f"constructor={constructor!r})")
    return budgets, rule


def column_deltas(delta: float | None, k: int,
                  unit: PrivacyUnit = PrivacyUnit()) -> list[float | None]:
    """The total ``delta`` split equally over ``k`` columns (their exact sum at most it);
    under parallel composition (unit ``cell``) every column may spend all of it.

    Examples
    --------
    >>> column_deltas(1e-6, 2), column_deltas(None, 2)
    ([5e-07, 5e-07], [None, None])
    """
    if delta is None or k == 1 or unit.composition == "parallel":
        return [delta] * k
    return fit_shares([Fraction(delta) / k] * k, delta)
