"""The order of a release's rows: a rule of privacy, not of formatting (docs/release.md).

The input's order may follow the confidential data (a table sorted by a rate computed
from a dropped column), so a release does not keep it unless asked: :func:`row_order`
sorts by the key columns (equal keys in a uniformly random order) or shuffles, with the
randomness of :func:`order_source` (the operating system's CSPRNG, or with a seed its
own child of ``SeedSequence(seed)``: :data:`dpfix.release.seeds.ORDER`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpfix.io.tables import TableInput
from dpfix.numbers.deprecation import renamed_keywords
from dpfix.numbers.numeric import require
from dpfix.release.seeds import ORDER, seed_child
from dpfix.sampling import random_source

__all__ = ["ROW_ORDERS", "DATASET_ROW_ORDERS", "order_source", "row_order", "text_order",
           "integer_order", "key_bytes", "key_window"]


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
    >>> import shutil, tempfile
    >>> from pathlib import Path
    >>> from dpfix.io.tables import read_counts
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text("name,k\\nb,3\\nc,0\\na,1\\n")
    >>> row_order(read_counts(p, "k"), "key", ["name"]).tolist()
    [2, 0, 1]
    >>> sorted(row_order(read_counts(p, "k"), "shuffled", seed=0).tolist())
    [0, 1, 2]
    >>> shutil.rmtree(p.parent)
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
        series = [rows.iloc[:, header.index(c)] for c in keys]
    else:
        series = [table.frame[c] for c in keys]
    text = _text_columns(series)
    if text is not None:  # text keys: sorted by their bytes, equal keys in perm's order
        return perm[text_order([c.take(perm) for c in text])]
    if table.kind != "csv" and all(isinstance(s.dtype, np.dtype) and s.dtype.kind in "iuf"
                                   for s in series):  # numbers: numpy's stable sort
        shuffled = [s.to_numpy()[perm] for s in series]  # NaN last, as pandas puts it
        if len(shuffled) == 1 and shuffled[0].dtype.kind in "iu":
            ranked = integer_order(shuffled[0])
        else:
            ranked = np.argsort(shuffled[0], kind="stable") if len(shuffled) == 1 else \
                np.lexsort(shuffled[::-1])
        return perm[ranked]
    values = pd.DataFrame({f"k{j}": s.to_numpy(dtype=object) if table.kind == "csv" else
                         s.to_numpy() for j, s in enumerate(series)})
    shuffled = values.iloc[perm].reset_index(drop=True)
    try:
        ranked = shuffled.sort_values(list(shuffled.columns), kind="stable",
                                      na_position="last").index.to_numpy()
    except TypeError as exc:
        raise ValueError(f"keys: the key columns cannot be sorted ({exc}); use "
                         "order='shuffled'") from None
    return perm[ranked]


def _text_columns(series: list) -> list | None:
    """The key columns (pandas Series) as pyarrow text arrays when each holds text only
    (missing cells allowed), else None."""
    pa = require("pyarrow")
    out = []
    for s in series:
        try:
            column = pa.array(s, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            return None
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            return None
        out.append(column)
    return out


#: The longest text key (in UTF-8 bytes) :func:`text_order` sorts by its bytes; a longer
#: one is sorted by pyarrow.
_LONGEST_KEY = 64


def _padded(c: Any) -> np.ndarray | None:
    """A text column's cells as rows of bytes padded with zero bytes to the longest, or None
    when it is not text, has a missing cell, a zero byte or a cell above
    :data:`_LONGEST_KEY` bytes."""
    pa = require("pyarrow")
    from dpfix.io.counts import text_buffers

    if not (pa.types.is_string(c.type) or pa.types.is_large_string(c.type)) or c.null_count:
        return None
    N = len(c)
    offsets, data = text_buffers(c)
    lengths = np.diff(offsets).astype(np.int64)
    L = int(lengths.max()) if N else 0
    text = data[offsets[0]:offsets[-1]]
    if L > _LONGEST_KEY or (text == 0).any():
        return None
    padded = np.zeros((N, max(L, 1)), dtype=np.uint8)
    if N and (lengths == L).all():
        padded[:, :L] = text.reshape(N, L)
    elif text.size:
        rows = np.repeat(np.arange(N), lengths)
        padded[rows, np.arange(text.size) - np.repeat(offsets[:-1] - offsets[0], lengths)] = text
    return padded


def text_order(columns: list) -> np.ndarray:
    """The stable sort of rows by text columns (pyarrow string arrays of one length,
    compared in turn; text in code point order): the positions ``perm``, output row ``r``
    is row ``perm[r]``, equal keys in their rows' order.

    Code point order is the order of the UTF-8 bytes, and a cell padded with zero bytes to
    its column's longest keeps its place among cells without a zero byte. The rows are
    sorted a few bytes at a time: each step sorts the 64-bit words ``(rank so far, the
    next bytes, position so far)`` (all distinct, so any sort is stable; numpy's sort of
    integers is vectorised), until the bytes end or every row's rank differs. Columns with
    a missing cell, a zero byte, a cell longer than 64 bytes, or not text, and tables of
    ``2^28`` rows or more, are sorted by pyarrow's stable sort instead (missing last).

    Examples
    --------
    >>> import pyarrow as pa
    >>> text_order([pa.array(["b", "a", "ab", "a", ""])]).tolist()
    [4, 1, 3, 2, 0]
    >>> text_order([pa.array(["x", "x", "w"]), pa.array(["2", "1", "9"])]).tolist()
    [2, 1, 0]
    """
    pa = require("pyarrow")
    pc = require("pyarrow.compute")

    columns = [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in columns]
    N = len(columns[0])
    r = max(1, (N - 1).bit_length())  # bits of a position
    padded = [_padded(c) for c in columns] if 2 * r + 8 <= 64 else [None]
    if any(p is None for p in padded):
        table = pa.table({f"k{j}": c for j, c in enumerate(columns)})
        return pc.sort_indices(table, sort_keys=[(f"k{j}", "ascending")
                                                 for j in range(len(columns))],
                               null_placement="at_end").to_numpy()
    key = np.concatenate(padded, axis=1) if len(padded) > 1 else padded[0]
    if N:  # a byte every row shares decides nothing
        key = key[:, (key != key[0]).any(axis=0)]
    width, mask = key.shape[1], np.uint64((1 << r) - 1)
    spans, at = [], 0
    while at < width:  # the bytes of each step: as many as fit beside the rank and position
        take = min((64 - r - (r if spans else 0)) // 8, width - at)
        spans.append((at, at + take))
        at += take
    perm = np.arange(N)
    position = np.arange(N, dtype=np.uint64)
    rank = None
    for a, b in spans:
        if N < 2:
            break
        piece = np.zeros(N, dtype=np.uint64)
        for k in range(a, b):  # big-endian: the first byte highest
            piece <<= np.uint64(8)
            piece |= key[:, k]
        word = piece[perm] if rank is not None else piece
        word <<= np.uint64(r)
        word |= position
        if rank is not None:
            word |= rank << np.uint64(r + 8 * (b - a))
        word.sort()
        perm = perm[(word & mask).astype(np.intp)]
        word >>= np.uint64(r)
        rank = np.zeros(N, dtype=np.uint64)
        np.cumsum(word[1:] != word[:-1], out=rank[1:])
        if int(rank[-1]) == N - 1:  # every row apart: the order is final
            break
    return perm


def key_bytes(column: Any, at: int, width: int = 1) -> np.ndarray:
    """Bytes ``at .. at+width-1`` of every cell of a text column (pyarrow, no missing
    cell), 0 past the cell's end: a ``(rows, width)`` uint8 array.

    Examples
    --------
    >>> import pyarrow as pa
    >>> key_bytes(pa.array(["ab", "c", ""]), 1)[:, 0].tolist()
    [98, 0, 0]
    """
    from dpfix.io.counts import text_buffers

    offsets, data = text_buffers(column)
    N = len(column)
    out = np.zeros((N, width), dtype=np.uint8)
    if N == 0 or data.size == 0:
        return out
    lengths = np.diff(offsets)
    L = int(lengths[0])
    if (lengths == L).all():  # cells of one length: the bytes as a matrix, no gather
        text = data[offsets[0]:offsets[-1]].reshape(N, L)
        if at < L:
            out[:, :min(width, L - at)] = text[:, at:at + width]
        return out
    starts, ends = offsets[:-1].astype(np.int64), offsets[1:]
    last = data.size - 1
    for k in range(width):  # one byte of every cell at a time: memory of one index array
        where = starts + (at + k)
        byte = data[np.minimum(where, last)]
        byte[where >= ends] = 0
        out[:, k] = byte
    return out


def key_window(column: Any, at: int) -> np.ndarray:
    """Bytes ``at .. at+7`` of every cell of a text column (pyarrow, no missing cell, no
    zero byte), 0 past its end, as one big-endian 64-bit word: among cells that share
    their first ``at`` bytes, a cell before another in code point order has a word at
    most the other's (equal cells: equal words).

    Examples
    --------
    >>> import pyarrow as pa
    >>> w = key_window(pa.array(["xa", "xab", "xb"]), 1)
    >>> bool(w[0] < w[1] < w[2])
    True
    """
    return key_bytes(column, at, 8).view(">u8")[:, 0].astype(np.uint64)


def integer_order(values: np.ndarray) -> np.ndarray:
    """The stable sort of integers: positions ``perm``, equal values in their positions'
    order. When ``max - min`` fits beside a position in 64 bits, one sort of the words
    ``(value - min, position)`` (distinct: any sort is stable; numpy's sort of integers is
    vectorised); else numpy's stable argsort.

    Examples
    --------
    >>> integer_order(np.array([3, -1, 3, 0])).tolist()
    [1, 3, 0, 2]
    """
    values = np.asarray(values)
    N = values.size
    if N < 2:
        return np.arange(N)
    r = (N - 1).bit_length()
    low, high = int(values.min()), int(values.max())
    if (high - low).bit_length() + r > 64:
        return np.argsort(values, kind="stable")
    word = (values - values.dtype.type(low)).astype(np.uint64)  # below 2^(64-r): no wrap
    word <<= np.uint64(r)
    word |= np.arange(N, dtype=np.uint64)
    word.sort()
    return (word & np.uint64((1 << r) - 1)).astype(np.intp)
