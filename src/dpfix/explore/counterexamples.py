"""Counterexample search: the paper's Example 1 (n = 3), found by enumeration.

Proposition 1 says every extreme ``T`` of ``F`` is ``Psi B`` for an extreme
``B`` of ``R_F``; Example 1 shows the map is neither injective on extreme points
nor extreme-preserving. :func:`find_example1` searches small cases exactly and
returns instances of both phenomena.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.explore.cases import LAMS, polytope, standard_z
from dpfix.explore.instances import Instance
from dpfix.numbers.deprecation import renamed_keywords
from dpfix.numbers.exact import exact_array, exact_lam, one_or_many
from dpfix.numbers.results import Result
from dpfix.theory.polytopes import RF
from dpfix.theory.representation import psi_map

__all__ = ["Example1", "fibre_of_extreme_points", "find_example1"]


@dataclass
class Example1(Result):
    """Exact instances of both phenomena of the paper's Example 1 (both exist: the
    search that finds none raises).

    ``B1 != B2`` are extreme in ``R_F[lam, z]`` with ``Psi B1 = Psi B2 = T``
    extreme in ``F``; ``B3`` is extreme in ``R_F[lam3, z3]`` while
    ``Psi B3`` is not extreme in ``F[lam3, z3]``; ``cases_searched`` (also
    :attr:`visited`) the instances the longer of the two searches visited.
    """

    lam: Fraction
    z: np.ndarray
    B1: np.ndarray
    B2: np.ndarray
    T: np.ndarray
    lam3: Fraction
    z3: np.ndarray
    B3: np.ndarray
    T3: np.ndarray
    cases_searched: int

    @property
    def visited(self) -> int:
        """The instances the longer of the two searches visited (``cases_searched``)."""
        return self.cases_searched


def _key(M: np.ndarray) -> tuple:
    return tuple(M.ravel().tolist())


def fibre_of_extreme_points(n: int, lam: Any, z: Any) -> dict[tuple, list[np.ndarray]]:
    """Group the vertices of ``R_F`` by their image ``Psi B`` (exact).

    Returns a dict from ``Psi B`` (flattened, as a tuple of Fractions) to the
    list of extreme ``B`` mapping to it.

    Parameters
    ----------
    n : int
        The size (the R_F enumeration guard applies: ``n <= 3``).
    lam : int, Fraction or str
        ``e^eps``, rational ``> 1``.
    z : array_like
        The exact target distribution.

    Returns
    -------
    dict
        ``Psi B`` (flattened) -> the extreme ``B`` mapping to it.

    Examples
    --------
    >>> groups = fibre_of_extreme_points(2, 2, ["1/2", "1/2"])
    >>> sum(len(v) for v in groups.values()) == len(RF(2, 2, ["1/2", "1/2"]).vertices())
    True
    """
    lam = exact_lam(lam)
    groups: dict[tuple, list[np.ndarray]] = {}
    for B in RF(n, lam, z).vertices():
        groups.setdefault(_key(psi_map(B, lam)), []).append(B)
    return groups


@renamed_keywords(lams="lam")
def find_example1(
    n: int = 3,
    lam: Iterable[Any] = LAMS,
    zs: Iterable[Any] | None = None,
) -> Example1:
    """Search ``n = 3`` (by default) for both phenomena of Example 1.

    For each ``lam`` and ``z`` the vertices of ``R_F`` are enumerated exactly
    (cddlib), mapped by ``Psi``, and each image is tested for extremality in
    ``F`` by exact rank. The first instance of each phenomenon is returned: two
    searches of :func:`dpfix.explore.search.smallest_counterexample`, over the pairs of
    vertices of ``R_F`` (``B1`` before ``B2`` in vertex order) and over its vertices.

    Parameters
    ----------
    n : int
        The size searched (3: the paper's Example 1).
    lam : iterable
        The rational ``lam`` tried, in order.
    zs : iterable, optional
        The exact targets tried (default: :func:`dpfix.explore.cases.standard_z`).

    Returns
    -------
    Example1
        The first instance of each phenomenon (paper Section 4, Example 1;
        ``dpfix explore example1``).

    Raises
    ------
    LookupError
        If the grid holds no instance of one of the phenomena.

    Examples
    --------
    >>> from dpfix.theory.polytopes import F
    >>> ex = find_example1()
    >>> bool((ex.B1 != ex.B2).any()), bool(F(3, ex.lam, ex.z).is_extreme(ex.T))
    (True, True)
    >>> F(3, ex.lam3, ex.z3).is_extreme(ex.T3)
    False
    """
    from dpfix.explore.search import smallest_counterexample

    zs = list(standard_z(n).values()) if zs is None else [exact_array(z, "z", 1) for z in zs]
    space = {"n": n, "lam": [exact_lam(x) for x in one_or_many(lam)], "z": [tuple(z) for z in zs]}
    found = smallest_counterexample(_no_shared_extreme_image, over="RF-pairs", **space)
    found3 = smallest_counterexample(_image_is_extreme, over="RF", **space)
    if found and found3:
        pair, single = found.counterexample, found3.counterexample
        (B1, B2), B3 = pair.witness, single.witness
        return Example1(pair.lam, pair.instance.z_array(), B1, B2, psi_map(B1, pair.lam),
                        single.lam, single.instance.z_array(), B3, psi_map(B3, single.lam),
                        cases_searched=max(pair.visited, single.visited))
    missing = [name for name, v in (("two extreme B with one extreme T", found),
                                    ("an extreme B with a non-extreme image", found3)) if not v]
    searched = len(space["lam"]) * sum(len(z) == n for z in space["z"])
    raise LookupError(f"no instance of {' and '.join(missing)} among {searched} cases")


def _image_is_extreme(B: np.ndarray, inst: Instance) -> bool:
    """``Psi B`` is extreme in F (the predicate whose failure is Example 1's second part)."""
    return polytope("F", inst.n, inst.lam, inst.z).is_extreme(psi_map(B, inst.lam))


def _no_shared_extreme_image(pair: tuple[np.ndarray, np.ndarray], inst: Instance) -> bool:
    """Not (``Psi a = Psi b`` and extreme in F): its failure is Example 1's first part."""
    a, b = pair
    Ta = psi_map(a, inst.lam)
    if not (Ta == psi_map(b, inst.lam)).all():
        return True
    return not polytope("F", inst.n, inst.lam, inst.z).is_extreme(Ta)
