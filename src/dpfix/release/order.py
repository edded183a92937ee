"""The order of a release's rows: a rule of privacy, not of formatting (docs/release.md).

The input's order may follow the confidential data (a table sorted by a rate computed
from a dropped column), so a release does not keep it unless asked: :func:`row_order`
sorts by the key columns (equal keys in a uniformly random order) or shuffles, with the
randomness of :func:`order_source` (the operating system's CSPRNG, or with a seed its
own child of ``SeedSequence(seed)``: :data:`dpfix.release.seeds.ORDER`).
"""

from __future__ import annotations

from typing import Any

from dpfix.io.tables import TableInput
from dpfix.numbers.deprecation import renamed_keywords
from dpfix.numbers.numeric import require
from dpfix.release.seeds import ORDER, seed_child
from dpfix.sampling import random_source

__all__ = ["ROW_ORDERS", "DATASET_ROW_ORDERS", "order_source", "row_order"]


#: The orders of the output's rows (:func:`row_order`).
ROW_ORDERS = ("key", "shuffled", "input")
#: The orders of a Dataset release's rows (the Dask engine writes each partition on its own:
#: no global sort by key).
DATASET_ROW_ORDERS = ("shuffled", "input")




def order_source(seed: Any) -> Any:
    """The randomness of the output's row order: the operating system's CSPRNG, or with
    ``seed`` a generator of child :data:`dpfix.release.seeds.ORDER` of ``SeedSequence(seed)``
    (reproducible, independent of the samplers' streams; not for release)."""
    if seed is None:
        return random_source(None)
    return random_source(seed_child(seed, ORDER))


@renamed_keywords(key="keys")
def row_order(table: TableInput, order: str, keys: Any = (), seed: Any = None) -> Any:
    """The order of the output's rows, as positions of the input's rows (None: as read).

    The input's order may follow the confidential data (a table sorted by a
    rate computed from a dropped column), so by default it is not kept:

    - ``"key"``: sorted by the ``keys`` columns (the first, then the next, ...),
      a CSV table's cells compared as text (code point order), a Parquet
      table's by value (missing values last). Rows with equal keys
      (duplicates) come in a uniformly random order: the rows are shuffled
      first, then sorted stably;
    - ``"shuffled"``: a uniformly random permutation
      (:meth:`dpfix.sampling.RandomSource.permutation`) drawn from
      :func:`order_source`: the operating system's CSPRNG, or with ``seed``
      a seeded generator (reproducible, not for release);
    - ``"input"``: the input's order, kept (None).

    Parameters
    ----------
    table : TableInput
        A CSV or Parquet table (a histogram has no rows to order).
    order : str
        One of :data:`ROW_ORDERS`.
    keys : sequence of str
        The key columns (required for ``"key"``).
    seed : int, optional
        Makes the permutation reproducible.

    Returns
    -------
    numpy.ndarray or None
        ``perm``: output row ``r`` is input row ``perm[r]``.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from dpfix.io.tables import read_counts
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text("name,k\\nb,3\\nc,0\\na,1\\n")
    >>> row_order(read_counts(p, "k"), "key", ["name"]).tolist()
    [2, 0, 1]
    >>> sorted(row_order(read_counts(p, "k"), "shuffled", seed=0).tolist())
    [0, 1, 2]
    """
    if order not in ROW_ORDERS:
        raise ValueError(f"order: {order!r} is not one of {', '.join(ROW_ORDERS)}")
    keys = list(keys or [])
    if table.kind == "histogram":
        raise ValueError("order: a histogram has no rows to order")
    if order == "key" and not keys:
        raise ValueError("order: 'key' needs the key columns (keys=)")
    if order == "input":
        return None
    perm = order_source(seed).permutation(len(table.counts))
    if order == "shuffled":
        return perm
    pd = require("pandas")

    if table.kind == "csv":
        header = [str(h) for h in table.frame.iloc[0]]
        rows = table.frame.iloc[1:]
        values = pd.DataFrame({f"k{j}": rows.iloc[:, header.index(c)].to_numpy(dtype=object)
                               for j, c in enumerate(keys)})
    else:
        values = pd.DataFrame({f"k{j}": table.frame[c].to_numpy() for j, c in enumerate(keys)})
    shuffled = values.iloc[perm].reset_index(drop=True)
    try:
        ranked = shuffled.sort_values(list(shuffled.columns), kind="stable",
                                      na_position="last").index.to_numpy()
    except TypeError as exc:
        raise ValueError(f"keys: the key columns cannot be sorted ({exc}); use "
                         "order='shuffled'") from None
    return perm[ranked]
