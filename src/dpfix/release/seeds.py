"""The seed policy of a release: which randomness each part of a seeded release draws from.

Without a seed every part draws fresh secure randomness (the operating system's CSPRNG,
:func:`dpfix.sampling.random_source`). With a seed (reproducible, NOT FOR PRODUCTION)
each part draws from its own child of ``SeedSequence(seed)`` (independent streams; the
child ``k`` of a sequence is the same whatever number of children is spawned):

- :data:`STAGE1`, :data:`STAGE2`, :data:`SELECTOR`: a column's stage 1, its stage 2 (and
  a joint tuple's noise), the heuristic's random selector (a joint tuple's matching):
  :func:`stage_seeds`;
- :data:`BOUND`: a bound chosen privately (``upper="auto"``);
- :data:`PARTITIONS`: the Dask engine's partitions, one grandchild each (the bound is
  never chosen there: a Dataset refuses ``upper="auto"``);
- :data:`ORDER`: the row order (:func:`dpfix.release.order.order_source`);

and several columns get seeds of their own, the children of the release's seed as 128-bit
integers (:func:`column_seeds`; one column keeps the seed itself).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["STAGE1", "STAGE2", "SELECTOR", "BOUND", "PARTITIONS", "ORDER", "check_seed",
           "seed_child", "stage_seeds", "column_seeds"]

#: The children of ``SeedSequence(seed)`` each part of a seeded release draws from.
STAGE1, STAGE2, SELECTOR, BOUND, PARTITIONS, ORDER = 0, 1, 2, 3, 3, 4


def check_seed(seed: Any) -> int | None:
    """A non-negative integer seed, or None (production: the operating system's CSPRNG).

    Examples
    --------
    >>> check_seed(3), check_seed(None)
    (3, None)
    """
    if seed is not None and (not isinstance(seed, (int, np.integer)) or isinstance(seed, bool)
                             or seed < 0):
        raise ValueError(f"seed: must be a non-negative integer or None, got {seed!r}")
    return seed


def seed_child(seed: Any, k: int) -> np.random.SeedSequence:
    """Child ``k`` of ``SeedSequence(seed)`` (the part :data:`STAGE1` ... :data:`ORDER`
    draws from).

    Examples
    --------
    >>> seed_child(7, ORDER).spawn_key
    (4,)
    >>> child = np.random.SeedSequence(7).spawn(3)[1]
    >>> seed_child(7, 1).generate_state(1) == child.generate_state(1)
    array([ True])
    """
    return np.random.SeedSequence(seed).spawn(k + 1)[k]


def stage_seeds(seed: int | None) -> tuple[Any, Any, Any]:
    """The seeds of stage 1, stage 2 and the random selector.

    With a seed, children :data:`STAGE1`, :data:`STAGE2` and :data:`SELECTOR` of
    ``SeedSequence(seed)`` (reproducible; the seed is in the report anyway). Without one,
    two independent draws of OS randomness and None: children of one ``SeedSequence()``
    would share its entropy, so whatever reveals the selector's randomness would rebuild
    stage 2's generator.

    Examples
    --------
    >>> [s.spawn_key for s in stage_seeds(5)]
    [(0,), (1,), (2,)]
    >>> stage_seeds(None)[2] is None
    True
    """
    if seed is not None:
        return tuple(np.random.SeedSequence(seed).spawn(SELECTOR + 1))
    return np.random.SeedSequence(), np.random.SeedSequence(), None


def column_seeds(seed: int | None, k: int) -> list[int | None]:
    """One seed per column: the seed itself for one column; for several, column ``i`` gets
    ``SeedSequence(seed).spawn(k)[i]`` as a 128-bit integer (independent streams).

    Examples
    --------
    >>> column_seeds(None, 2), column_seeds(7, 1)
    ([None, None], [7])
    """
    if seed is None:
        return [None] * k
    if k == 1:
        return [seed]
    return [int.from_bytes(child.generate_state(4, np.uint32).tobytes(), "little")
            for child in np.random.SeedSequence(seed).spawn(k)]
