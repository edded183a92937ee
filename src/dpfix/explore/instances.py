"""Exact instances ``(n, lam, z)`` and their enumerators, in a documented small-first order.

An :class:`Instance` is one case of the theory: the size ``n``, ``lam = e^eps``
(a rational ``> 1``) and the target ``z`` (a probability vector of ``n``
Fractions, or None where the object studied needs no target: ``U``, ``R_U``).
The enumerators below produce the values that :func:`dpfix.explore.search.smallest_counterexample`
and :func:`dpfix.explore.search.survey` combine into instances; each is a generator (or,
for the targets, a :class:`Targets` family giving one generator per ``n``) and
may be infinite: the search's budget stops it.

Orders (smallest first):

- :func:`lams_by_height`: ``p / q > 1`` in lowest terms by height ``max(p, q) = p``,
  then by value: ``2, 3/2, 3, 4/3, 4, 5/4, 5/3, 5/2, 5, ...``;
- :func:`compositions` / :func:`targets_by_denominator`: ``z = c / N`` for
  ``N = 1, 2, ...`` and, for each ``N``, the compositions ``c`` of ``N`` into ``n``
  non-negative parts in lexicographic order. A ``c`` whose entries share a factor
  ``g > 1`` is skipped: its ``z`` is ``(c / g) / (N / g)``, already given at the
  smaller denominator, so every distinct ``z`` comes once, at its least ``N``
  (``positive=True``: only the ``c`` of parts ``>= 1``, in the same order);
- :func:`named_targets`: :func:`dpfix.explore.cases.standard_z` (uniform, geometric,
  asymmetric, zero);
- :func:`random_targets`: seeded, reproducible draws (they may repeat).

Every family filters: ``compositions(6).filter(f)`` (:meth:`Targets.filter`) keeps the
targets where ``f(z)`` is True, in the family's order.

The ``parse_*`` functions read the command line's notation (``dpfix search``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from math import gcd
from typing import Any

import numpy as np

from dpfix.explore.cases import random_z, standard_z
from dpfix.numbers.exact import exact_lam, to_fraction
from dpfix.numbers.numeric import plain_number

__all__ = ["Instance", "Targets", "lams", "lams_by_height", "compositions",
           "targets_by_denominator", "named_targets", "random_targets", "parse_n",
           "parse_lams", "parse_targets"]

Target = tuple[Fraction, ...]


@dataclass(frozen=True)
class Instance:
    """One exact case ``(n, lam, z)``; its repr pastes back into Python.

    Parameters
    ----------
    n : int
        The size, ``>= 2``.
    lam : int, Fraction or str
        ``e^eps``, rational ``> 1`` (floats refused: :class:`dpfix.numbers.exact.ExactnessError`).
    z : sequence of exact numbers, optional
        The target: ``n`` non-negative rationals summing to 1, or None (no target).

    Examples
    --------
    >>> from fractions import Fraction
    >>> inst = Instance(3, 2, ["1/2", "1/4", "1/4"])
    >>> inst
    Instance(n=3, lam=Fraction(2, 1), z=(Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)))
    >>> eval(repr(inst)) == inst
    True
    >>> print(inst)
    n = 3, lam = 2, z = (1/2, 1/4, 1/4)
    >>> inst.z_array().tolist()
    [Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)]
    """

    n: int
    lam: Fraction
    z: Target | None = None

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or not isinstance(self.n, (int, np.integer)) or self.n < 2:
            raise ValueError(f"Instance: n must be an int >= 2, got {self.n!r}")
        object.__setattr__(self, "n", int(self.n))
        object.__setattr__(self, "lam", exact_lam(self.lam))
        if self.z is not None:
            z = tuple(to_fraction(x, "z") for x in self.z)
            if len(z) != self.n:
                raise ValueError(f"Instance: z has {len(z)} entries, n = {self.n}")
            if any(x < 0 for x in z) or sum(z) != 1:
                raise ValueError(f"Instance: z must be non-negative and sum to 1, got "
                                 f"({', '.join(map(str, z))})")
            object.__setattr__(self, "z", z)

    def __str__(self) -> str:
        z = "None" if self.z is None else f"({', '.join(map(str, self.z))})"
        return f"n = {self.n}, lam = {self.lam}, z = {z}"

    def z_array(self) -> np.ndarray | None:
        """The target as an object array of Fractions (None without a target)."""
        return None if self.z is None else np.array(self.z, dtype=object)

    def key(self) -> str:
        """A compact text key (``"3|2|1/2,1/4,1/4"``), the identity used by search caches."""
        z = "-" if self.z is None else ",".join(map(str, self.z))
        return f"{self.n}|{self.lam}|{z}"


class Targets:
    """A family of targets: one generator per ``n`` (:meth:`for_n`).

    The search asks it for the targets of each ``n`` it visits. With ``n`` fixed
    (``compositions(6, 3)``) it is also a plain iterable of tuples of Fractions.
    :meth:`filter` gives the family of the targets that pass a test, over every ``n`` or
    for the given one.

    Examples
    --------
    >>> t = compositions(2)
    >>> t
    compositions(2)
    >>> [tuple(map(str, z)) for z in t.for_n(2)]
    [('0', '1'), ('1', '0'), ('1/2', '1/2')]
    >>> def spread(z):
    ...     return max(z) < 1
    >>> t.filter(spread)
    compositions(2) | filter(spread)
    """

    def __init__(self, label: str, make: Callable[[int], Iterator[Target]],
                 n: int | None = None) -> None:
        self.label, self._make, self.n = label, make, n

    def for_n(self, n: int) -> Iterator[Target]:
        """The targets of length ``n``, in the family's order."""
        return self._make(int(n))

    def filter(self, predicate: Callable[[Target], Any]) -> Targets:
        """The family of the targets where ``predicate(z)`` is True (``z`` a tuple of
        Fractions), in this family's order, for every ``n`` (or the given one); lazy: a
        target is tested when it is drawn. ``predicate`` returns a bool (Python's or
        numpy's; anything else is a ``TypeError`` naming the target: the truth of a
        number or an array would hide a mistake). The label shows the filter's name.

        Examples
        --------
        >>> def interior(z):
        ...     return z[0] > 0 and z[-1] > 0
        >>> f = compositions(3).filter(interior)
        >>> f
        compositions(3) | filter(interior)
        >>> [tuple(map(str, z)) for z in f.for_n(2)]
        [('1/2', '1/2'), ('1/3', '2/3'), ('2/3', '1/3')]
        >>> [tuple(map(str, z)) for z in compositions(3, 3).filter(interior)][:2]
        [('1/2', '0', '1/2'), ('1/3', '0', '2/3')]
        """
        if not callable(predicate):
            raise TypeError(f"{self.label}.filter: the predicate is not callable: "
                            f"{predicate!r}")
        name = getattr(predicate, "__name__", None) or repr(predicate)
        label = f"{self.label} | filter({name})"

        def make(k: int) -> Iterator[Target]:
            for z in self.for_n(k):
                keep = predicate(z)
                if not isinstance(keep, (bool, np.bool_)):
                    raise TypeError(f"{label}: the filter returned {type(keep).__name__} "
                                    f"at z = ({', '.join(map(str, z))}); it must return a "
                                    "bool (True: keep the target)")
                if keep:
                    yield z
        return Targets(label, make, self.n)

    def __iter__(self) -> Iterator[Target]:
        if self.n is None:
            raise TypeError(f"{self.label}: a family over every n; iterate .for_n(n) or "
                            "give n (the family's .filter(f) filters it over every n)")
        return self.for_n(self.n)

    def __repr__(self) -> str:
        return self.label


def lams(values: Iterable[Any]) -> Iterator[Fraction]:
    """The given values of ``lam``, in the given order, as Fractions ``> 1``.

    Examples
    --------
    >>> list(lams([2, "3/2"]))
    [Fraction(2, 1), Fraction(3, 2)]
    """
    for v in values:
        yield exact_lam(v)


def lams_by_height(max_height: int | None = None) -> Iterator[Fraction]:
    """Every rational ``p / q > 1`` in lowest terms, by height ``max(p, q) = p``
    (``2 .. max_height``; None: without end), then by value.

    Examples
    --------
    >>> [str(x) for x in lams_by_height(5)]
    ['2', '3/2', '3', '4/3', '4', '5/4', '5/3', '5/2', '5']
    """
    heights = itertools.count(2) if max_height is None else range(2, int(max_height) + 1)
    for p in heights:
        for q in range(p - 1, 0, -1):  # p / q increases as q decreases
            if gcd(p, q) == 1:
                yield Fraction(p, q)


def _compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """The compositions of ``total`` into ``parts`` non-negative parts, lexicographic."""
    for cut in itertools.combinations(range(total + parts - 1), parts - 1):
        prev, out = -1, []
        for c in (*cut, total + parts - 1):
            out.append(c - prev - 1)
            prev = c
        yield tuple(out)


def _by_denominator(n: int, N_max: int | None, up_to_reversal: bool, positive: bool = False
                    ) -> Iterator[Target]:
    Ns = itertools.count(1) if N_max is None else range(1, int(N_max) + 1)
    for N in Ns:
        if positive:  # the compositions into parts >= 1: those of N - n, each part plus 1
            parts = (tuple(x + 1 for x in c) for c in _compositions(N - n, n)) \
                if N >= n else iter(())
        else:
            parts = _compositions(N, n)
        for c in parts:
            if gcd(*c) != 1 or (up_to_reversal and c[::-1] < c):
                continue  # z already given at N / gcd; or its reversal came first
            yield tuple(Fraction(x, N) for x in c)


def targets_by_denominator(n: int, N_max: int | None = None, *, up_to_reversal: bool = False,
                           positive: bool = False) -> Iterator[Target]:
    """The targets ``z = c / N`` of length ``n``: ``N = 1 .. N_max`` (None: without end),
    each composition ``c`` of ``N`` into ``n`` non-negative parts in lexicographic
    order, each distinct ``z`` once at its least ``N``; with ``up_to_reversal`` only
    the first of ``z`` and its reversal (the one with ``c <= reversed(c)``); with
    ``positive`` only the targets whose every entry is positive (``c`` of parts
    ``>= 1``, in the same order: the first comes at ``N = n``).

    Examples
    --------
    >>> [tuple(map(str, z)) for z in targets_by_denominator(3, 2, up_to_reversal=True)]
    [('0', '0', '1'), ('0', '1', '0'), ('0', '1/2', '1/2'), ('1/2', '0', '1/2')]
    >>> [tuple(map(str, z)) for z in targets_by_denominator(2, 3, positive=True)]
    [('1/2', '1/2'), ('1/3', '2/3'), ('2/3', '1/3')]
    """
    if int(n) < 1:
        raise ValueError(f"targets_by_denominator: n must be >= 1, got {n}")
    return _by_denominator(int(n), N_max, up_to_reversal, positive)


def compositions(N_max: int | None = None, n: int | None = None, *,
                 up_to_reversal: bool = False, positive: bool = False) -> Targets:
    """The targets of :func:`targets_by_denominator` with denominators up to ``N_max``
    (None: without end), as a :class:`Targets` family over every ``n`` (or for one ``n``);
    ``positive``: only the targets whose every entry is positive.

    Examples
    --------
    >>> len(list(compositions(6, 3)))
    55
    >>> compositions(6, positive=True), len(list(compositions(6, 3, positive=True)))
    (compositions(6, positive=True), 19)
    """
    suffix = (", up_to_reversal=True" if up_to_reversal else "") + \
        (", positive=True" if positive else "")
    label = f"compositions({N_max}{'' if n is None else f', {n}'}{suffix})"
    return Targets(label, lambda k: _by_denominator(k, N_max, up_to_reversal, positive), n)


def named_targets(n: int | None = None) -> Targets:
    """The named targets of :func:`dpfix.explore.cases.standard_z` (uniform, geometric,
    asymmetric, zero), as a :class:`Targets` family.

    Examples
    --------
    >>> [tuple(map(str, z)) for z in named_targets(2)][:2]
    [('1/2', '1/2'), ('2/3', '1/3')]
    """
    def make(k: int) -> Iterator[Target]:
        for z in standard_z(k).values():
            yield tuple(z)
    return Targets("named_targets()" if n is None else f"named_targets({n})", make, n)


def random_targets(n: int | None, count: int, seed: int = 0, *, denominator: int = 12
                   ) -> Targets:
    """``count`` seeded random targets per ``n`` (:func:`dpfix.explore.cases.random_z`: integer
    weights ``1 .. denominator``, normalised); reproducible, the stream of each ``n``
    seeded by ``(seed, n)``; draws may repeat.

    Examples
    --------
    >>> a = list(random_targets(3, 2, seed=1))
    >>> a == list(random_targets(3, 2, seed=1)), all(sum(z) == 1 for z in a)
    (True, True)
    """
    def make(k: int) -> Iterator[Target]:
        rng = np.random.default_rng([int(seed), k])
        for _ in range(int(count)):
            yield tuple(random_z(rng, k, denominator=denominator))
    label = f"random_targets({n}, {count}, seed={seed}, denominator={denominator})"
    return Targets(label, make, n)


# ------------------------------------------------------------------ command-line notation
def parse_n(text: str) -> list[int]:
    """``"3"``, ``"2..4"`` (inclusive) or ``"2,3,5"`` -> the sizes, ascending.

    Examples
    --------
    >>> parse_n("2..4"), parse_n("5,3")
    ([2, 3, 4], [3, 5])
    """
    try:
        if ".." in text:
            lo, hi = (int(plain_number(x, "--n", integer=True)) for x in text.split(".."))
            out = list(range(lo, hi + 1))
        else:
            out = sorted({int(plain_number(x, "--n", integer=True)) for x in text.split(",")})
    except ValueError:
        raise ValueError(f"--n: cannot read {text!r} (expected 3, 2..4 or 2,3)") from None
    if not out or out[0] < 2:
        raise ValueError(f"--n: {text!r} must give sizes >= 2")
    return out


def parse_lams(text: str) -> list[Fraction]:
    """``"2,3/2"`` (in that order) or ``"height:H"`` (:func:`lams_by_height`) -> values of lam.

    Examples
    --------
    >>> [str(x) for x in parse_lams("2,3/2")], len(parse_lams("height:4"))
    (['2', '3/2'], 5)
    """
    if text.startswith("height:"):
        try:
            h = int(plain_number(text.split(":", 1)[1], "--lam height", integer=True))
        except ValueError:
            raise ValueError(f"--lam: cannot read the height of {text!r}") from None
        return list(lams_by_height(h))
    try:
        return list(lams(x for x in text.split(",")))
    except ValueError as exc:
        raise ValueError(f"--lam: {exc}") from None


def _positive(text: str, form: str, what: str) -> int:
    """An integer >= 1 of the notation ``form`` (a family of no target is refused)."""
    k = int(plain_number(text, f"--z {form}", integer=True))
    if k < 1:
        raise ValueError(f"{form} needs {what} >= 1 (else no target at all), got {k}")
    return k


def parse_targets(text: str) -> Targets | list[Target]:
    """The targets of ``--z``: ``"compositions:N"`` (``compositions:N:reversal`` up to
    reversal, ``compositions:N:positive`` every entry positive, both as
    ``compositions:N:reversal,positive``), ``"named"``, ``"random:COUNT[:SEED]"``, or one
    explicit target ``"1/2,1/3,1/6"`` (several separated by ``;``).

    Examples
    --------
    >>> parse_targets("compositions:6")
    compositions(6)
    >>> [tuple(map(str, z)) for z in parse_targets("1/2,1/3,1/6")]
    [('1/2', '1/3', '1/6')]
    """
    head, _, rest = text.partition(":")
    try:
        if head == "compositions":
            N, _, flag = rest.partition(":")
            flags = set(flag.split(",")) if flag else set()
            if not flags <= {"reversal", "positive"}:
                raise ValueError(f"unknown flag {flag!r} (reversal, positive)")
            top = _positive(N, "compositions:N", "N")
            return compositions(top, up_to_reversal="reversal" in flags,
                                positive="positive" in flags)
        if head == "named" and not rest:
            return named_targets()
        if head == "random":
            count, _, seed = rest.partition(":")
            return random_targets(None, _positive(count, "random:COUNT", "COUNT"),
                                  int(plain_number(seed, "--z seed", integer=True))
                                  if seed else 0)
        out = []
        for part in text.split(";"):
            z = tuple(to_fraction(x, "--z") for x in part.split(","))
            if any(x < 0 for x in z) or sum(z) != 1:
                raise ValueError(f"target {part!r} is not non-negative summing to 1")
            out.append(z)
        return out
    except ValueError as exc:
        raise ValueError(f"--z: cannot read {text!r}: {exc}") from None
