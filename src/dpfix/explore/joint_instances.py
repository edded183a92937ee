"""The joint instances the exploration engine visits (docs/joint.md section 4): a
:class:`JointInstance` is a case ``(shape, lam, z, unit)`` of a pair (or triple) of count
columns, and :func:`joint_instances` enumerates them small first.

A joint instance is an :class:`~dpfix.explore.instances.Instance` on the ``N`` flattened
states of the grid (``n = N = n_a n_b``, ``z`` the flattened joint target, C order as in
:mod:`dpfix.constructors.joint`) whose neighbour graph is the unit's: the grid ``P_a x P_b``
for unit ``cell``, the king's graph for unit ``row``
(:func:`dpfix.constructors.joint.joint_edges`). So
:func:`dpfix.explore.search.smallest_counterexample` and :func:`~dpfix.explore.search.survey`
take joint instances through ``instances=``: ``over="instance"`` hands the predicate the
instance, ``over="F"`` (``"U"``, ``"RF"``, ``"RU"``) the vertices of ``F_grid[z]`` (of
``U_grid``, of their amounts).

The order (:func:`joint_instances`, the order of
:func:`dpfix.explore.joint.joint_targets`): the shapes by the number of states ``N``,
then as tuples; for each shape the total weights ``W`` in the given order; for each
``W`` every vector ``w`` of non-negative integers summing to ``W`` in lexicographic
order from the largest first entry, ``z = w / W``; for each ``z`` the values of ``lam``
in the given order. A ``w`` whose entries share a factor with ``W`` gives a ``z`` already
visited at a smaller total (when that total is given): it is visited again (each ``W``
gives all its targets). :meth:`JointInstance.order` is the order as a key.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import networkx as nx
import numpy as np

from dpfix.constructors.joint import JOINT_UNITS, joint_edges, joint_lams
from dpfix.explore.instances import Instance
from dpfix.numbers.exact import exact_lam, one_or_many
from dpfix.theory.graphs import as_graph

__all__ = ["JointInstance", "joint_instances", "grid_targets", "grid_compositions",
           "grid_text", "SHAPES", "TOTALS"]

#: the shapes of the joint gap study, by default
SHAPES = ((2, 2), (2, 3))
#: the total weights ``W`` of the targets, by default
TOTALS = (1, 2, 3)


def _shape(shape: Any) -> tuple[int, ...]:
    """``shape`` checked: a pair or triple of column sizes ``>= 1`` with ``N >= 2`` states."""
    try:
        sizes = tuple(shape)
    except TypeError:
        sizes = ()
    if len(sizes) not in (2, 3) or any(isinstance(v, bool) or not isinstance(
            v, (int, np.integer)) or v < 1 for v in sizes) or math.prod(sizes) < 2:
        raise ValueError(f"shape: a pair (n_a, n_b) or a triple (n_a, n_b, n_c) of column "
                         f"sizes >= 1 with at least 2 states, got {shape!r}")
    return tuple(int(v) for v in sizes)


def _unit(unit: Any) -> str:
    if not isinstance(unit, str) or unit not in JOINT_UNITS:
        raise ValueError(f"unit: one of {', '.join(JOINT_UNITS)}, got {unit!r}")
    return unit


def _shape_text(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape))


def grid_text(z: Any, shape: tuple[int, ...]) -> str:
    """A joint target as text: the rows of a pair separated by ``|``
    (``"1/2 0 | 0 1/2"``), the ``n_a`` slices of a triple by ``||``.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> grid_text([F(1, 2), F(0), F(0), F(1, 2)], (2, 2))
    '1/2 0 | 0 1/2'
    """
    Z = np.asarray(list(z), dtype=object).reshape(shape)

    def pair(M: np.ndarray) -> str:
        return " | ".join(" ".join(str(v) for v in row) for row in M)
    return pair(Z) if Z.ndim == 2 else " || ".join(pair(M) for M in Z)


@dataclass(frozen=True, init=False)
class JointInstance(Instance):
    """One exact case of a pair (or triple) of count columns: the grid's ``shape``,
    ``lam = e^eps`` on the unit's graph, the joint target ``z`` and the privacy ``unit``.

    An :class:`~dpfix.explore.instances.Instance` on the ``N`` flattened states (``n = N``,
    ``z`` flattened in C order); its repr pastes back into Python, it pickles (the worker
    processes of ``jobs > 1`` receive it) and :meth:`order` is its place in the order of
    :func:`joint_instances`.

    Parameters
    ----------
    shape : tuple of int
        ``(n_a, n_b)`` or ``(n_a, n_b, n_c)``, each ``>= 1``, ``N >= 2`` states.
    lam : int, Fraction or str
        ``e^eps``, rational ``> 1``, the level on the unit's graph (unit ``row``: a rational
        ``k``-th root of ``lam`` must exist, the product's per-column level,
        :func:`dpfix.constructors.joint.joint_lams`).
    z : array_like of exact numbers, optional
        The joint target, of the given shape or flat (``N`` entries), non-negative, summing
        to 1; None where the object studied needs no target (``U_grid``).
    unit : ``"cell"`` or ``"row"``
        ``"cell"``: one count of one column changes by one (the grid); ``"row"``: each
        column by at most one (the king's graph).

    Raises
    ------
    ValueError
        A bad shape, unit, ``lam`` or target (one line naming it).
    ExactnessError
        A float ``lam`` or entry of ``z``.

    Examples
    --------
    >>> inst = JointInstance((2, 2), 2, [["1/2", 0], [0, "1/2"]])
    >>> print(inst)
    2x2, unit cell, lam = 2, z = (1/2 0 | 0 1/2)
    >>> inst.n, inst.key()
    (4, '4|2|1/2,0,0,1/2|cell:2x2')
    >>> from fractions import Fraction  # the repr's numbers
    >>> eval(repr(inst)) == inst
    True
    >>> inst.z_grid().tolist()
    [[Fraction(1, 2), Fraction(0, 1)], [Fraction(0, 1), Fraction(1, 2)]]
    >>> sorted(inst.neighbour_graph().edges)
    [(0, 1), (0, 2), (1, 3), (2, 3)]
    """

    shape: tuple[int, ...] = ()
    unit: str = "cell"

    def __init__(self, shape: Any, lam: Any, z: Any = None, unit: str = "cell") -> None:
        sizes = _shape(shape)
        N = math.prod(sizes)
        if z is not None:
            flat = np.asarray(z, dtype=object)
            if flat.shape not in (sizes, (N,)):
                raise ValueError(f"JointInstance: z has shape {flat.shape}, the grid "
                                 f"{_shape_text(sizes)} needs {sizes} or ({N},)")
            z = tuple(flat.ravel())
        object.__setattr__(self, "shape", sizes)
        object.__setattr__(self, "unit", _unit(unit))
        Instance.__init__(self, N, lam, z)  # checks lam (> 1, exact) and z (sums to 1)
        joint_lams(self.unit, lam=self.lam, k=len(sizes))  # unit row: the columns' level

    def __repr__(self) -> str:
        z = None if self.z is None else tuple(self.z)
        return (f"JointInstance(shape={self.shape!r}, lam={self.lam!r}, z={z!r}, "
                f"unit={self.unit!r})")

    def __str__(self) -> str:
        z = "None" if self.z is None else f"({grid_text(self.z, self.shape)})"
        return f"{_shape_text(self.shape)}, unit {self.unit}, lam = {self.lam}, z = {z}"

    def __reduce__(self) -> tuple:
        return (JointInstance, (self.shape, self.lam, self.z, self.unit))

    def key(self) -> str:
        """The cache key: the instance's, then the unit and the shape
        (``"4|2|1/2,0,0,1/2|cell:2x2"``)."""
        return f"{Instance.key(self)}|{self.unit}:{_shape_text(self.shape)}"

    def z_grid(self) -> np.ndarray | None:
        """The target as an object array of Fractions of the grid's shape (None without
        a target)."""
        return None if self.z is None else np.array(self.z, dtype=object).reshape(self.shape)

    def order(self) -> tuple:
        """The instance's place in the small-first order of :func:`joint_instances`:
        ``(N, shape, W, -w, lam)``, ``W`` the least common denominator of ``z`` and
        ``w = W z`` (``-w``: the larger first entries first); without a target
        ``(N, shape, 0, (), lam)``. With the totals ``1, 2, ..., W_max`` and ``lam``
        ascending, the first visits of :func:`joint_instances` are in ascending ``order()``.

        Examples
        --------
        >>> a = JointInstance((2, 2), 2, ["1/2", 0, 0, "1/2"])
        >>> b = JointInstance((2, 2), 2, [1, 0, 0, 0])
        >>> a.order(), sorted([a, b], key=JointInstance.order) == [b, a]
        ((4, (2, 2), 2, (-1, 0, 0, -1), Fraction(2, 1)), True)
        """
        if self.z is None:
            return (self.n, self.shape, 0, (), self.lam)
        W = math.lcm(*(x.denominator for x in self.z))
        return (self.n, self.shape, W, tuple(-int(x * W) for x in self.z), self.lam)

    def neighbour_graph(self) -> nx.Graph:
        """The unit's graph on the ``N`` flattened states (``grid:AxB`` for unit ``cell``,
        ``king:AxB`` for ``row``; :func:`dpfix.constructors.joint.joint_edges`), checked
        by :func:`dpfix.theory.graphs.as_graph`: the engine builds ``U``, ``F``, ``RF`` and
        ``RU`` on it."""
        G = nx.Graph()
        G.add_nodes_from(range(self.n))
        G.add_edges_from((int(s), int(t)) for s, t in joint_edges(self.shape, self.unit))
        G.graph["label"] = f"{'grid' if self.unit == 'cell' else 'king'}:" \
                           f"{_shape_text(self.shape)}"
        return as_graph(G, self.n)


def grid_compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """The vectors of ``parts`` non-negative integers summing to ``total``, in
    lexicographic order from the largest first entry (the weight vectors ``w`` of
    :func:`joint_instances`).

    Examples
    --------
    >>> list(grid_compositions(2, 2))
    [(2, 0), (1, 1), (0, 2)]
    """
    if parts == 1:
        yield (total,)
        return
    for first in range(total, -1, -1):
        for rest in grid_compositions(total - first, parts - 1):
            yield (first, *rest)


def _totals(totals: Any) -> tuple[int, ...]:
    out = []
    for W in one_or_many(totals):
        if isinstance(W, bool) or not isinstance(W, (int, np.integer)) or W < 1:
            raise ValueError(f"totals: the total weights W of the targets are ints >= 1, got "
                             f"{W!r}")
        out.append(int(W))
    return tuple(out)


def _shapes(shapes: Any) -> list[tuple[int, ...]]:
    """The shapes checked, by the number of states ``N``, then as tuples (one shape or
    many)."""
    if isinstance(shapes, tuple) and shapes and all(isinstance(v, (int, np.integer))
                                                    for v in shapes):
        shapes = (shapes,)
    return sorted((_shape(s) for s in shapes), key=lambda s: (math.prod(s), s))


def grid_targets(shapes: Any = SHAPES, totals: Any = TOTALS
                 ) -> Iterator[tuple[tuple[int, ...], tuple[Fraction, ...]]]:
    """``(shape, z)`` in the order of :func:`joint_instances`, ``z`` flat (Fractions):
    the shapes (one or many) by the number of states ``N``, then as tuples; the total
    weights ``W`` in the given order; the weight vectors of :func:`grid_compositions`.
    The arguments are checked before the first target.

    Examples
    --------
    >>> [(s, tuple(map(str, z))) for s, z in grid_targets([(1, 2)], 1)]
    [((1, 2), ('1', '0')), ((1, 2), ('0', '1'))]
    """
    sizes, Ws = _shapes(shapes), _totals(totals)
    if not sizes or not Ws:
        raise ValueError(f"{'shapes' if not sizes else 'totals'}: none given; a search over "
                         "no target would hold vacuously")
    return ((shape, tuple(Fraction(v, W) for v in w)) for shape in sizes for W in Ws
            for w in grid_compositions(W, math.prod(shape)))


def joint_instances(shapes: Any = SHAPES, totals: Any = TOTALS, lam: Any = 2,
                    unit: str = "cell") -> Iterator[JointInstance]:
    """The joint instances small first: every shape (by ``N``), every total weight ``W``
    in ``totals``, every weight vector ``w`` summing to ``W`` (``z = w / W``, the larger
    first entries first), every ``lam`` (one value or many, in the given order).

    The order of :func:`dpfix.explore.joint.joint_targets`, then ``lam``; a generator
    (for the engine's ``instances=``). The arguments are checked before the first
    instance (unit ``row``: each ``lam`` must have a rational ``k``-th root,
    :func:`dpfix.constructors.joint.joint_lams`).

    Examples
    --------
    >>> insts = list(joint_instances(shapes=((1, 2),), totals=(1, 2), lam=[2, 3]))
    >>> len(insts), str(insts[0]), str(insts[-1])
    (10, '1x2, unit cell, lam = 2, z = (1 0)', '1x2, unit cell, lam = 3, z = (0 1)')
    """
    sizes = _shapes(shapes)
    targets = grid_targets(sizes, totals)
    lams = tuple(exact_lam(x) for x in one_or_many(lam))
    unit = _unit(unit)
    for k in sorted({len(s) for s in sizes}):
        for x in lams:
            joint_lams(unit, lam=x, k=k)
    return (JointInstance(shape, x, z, unit) for shape, z in targets for x in lams)
