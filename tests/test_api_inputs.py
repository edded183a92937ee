"""privatize_counts refuses odd API inputs by their real cause (inputs are strict).

numpy uint64 values above 2^63 - 1 (a negative number cast to unsigned wraps
there), masked arrays with masked entries and pandas nullable integers with NA
are refused with a message naming the cause, for row counts and for a
histogram; the same inputs without the odd entries are accepted.
"""

import numpy as np
import pytest

from dpfix.release.pipeline import privatize_counts

pd = pytest.importorskip("pandas")


def run(counts=None, histogram=None):
    return privatize_counts(counts, 1.0, upper=2, histogram=histogram, seed=0)


# ----------------------------------------------------------------- uint64
@pytest.mark.parametrize("big", [2**63, 2**63 + 5, 2**64 - 1])
@pytest.mark.parametrize("where", ["counts", "histogram"])
def test_uint64_above_int64_is_refused_by_name(big, where):
    values = np.array([1, big, 3], dtype=np.uint64)
    with pytest.raises(ValueError) as info:
        run(**{where: values})
    msg = str(info.value)
    assert msg.startswith("counts:" if where == "counts" else "eta:")
    assert str(big) in msg and "2^63 - 1" in msg and "uint64" in msg


def test_uint64_below_int64_is_accepted_and_topcoded():
    r = run(np.array([0, 1, 2**63 - 1], dtype=np.uint64))
    assert (r.N, r.topcoded) == (3, 1)
    h = run(histogram=np.array([4, 0, 1, 2], dtype=np.uint64))
    assert (h.N, h.topcoded) == (7, 2)


# ------------------------------------------------------------ masked array
@pytest.mark.parametrize("where", ["counts", "histogram"])
def test_masked_entries_are_refused(where):
    values = np.ma.masked_array([1, 2, 999, 0], mask=[0, 0, 1, 1])
    with pytest.raises(ValueError, match=r"masked array with 2 masked entries"):
        run(**{where: values})


def test_masked_array_without_masked_entries_is_its_data():
    values = np.ma.masked_array([0, 1, 2, 9], mask=False)
    r, plain = run(values), run(np.array([0, 1, 2, 9]))
    assert (r.N, r.topcoded) == (plain.N, plain.topcoded) == (4, 1)
    assert isinstance(r.counts, np.ndarray) and not np.ma.isMaskedArray(r.counts)
    assert r.counts.tolist() == plain.counts.tolist()


# ---------------------------------------------------------- pandas with NA
@pytest.mark.parametrize("dtype", ["Int64", "UInt8", "Int32"])
@pytest.mark.parametrize("where", ["counts", "histogram"])
def test_pandas_na_is_refused_as_missing(dtype, where):
    values = pd.Series([1, None, 3, None], dtype=dtype)
    with pytest.raises(ValueError) as info:
        run(**{where: values})
    msg = str(info.value)
    assert "2 missing values (NA)" in msg and "position 1" in msg
    assert "float64" not in msg


def test_pandas_array_with_na_is_refused():
    with pytest.raises(ValueError, match=r"1 missing value \(NA\)"):
        run(pd.array([0, 1, None], dtype="Int64"))


def test_pandas_nullable_without_na_is_accepted():
    r = run(pd.Series([0, 1, 2, 7], dtype="Int64"))
    assert (r.N, r.topcoded) == (4, 1)
    h = run(histogram=pd.Series([3, 2, 1], dtype="UInt64"))
    assert (h.N, h.topcoded) == (6, 0)


def test_float_nan_names_the_missing_value():
    with pytest.raises(ValueError, match=r"1 missing value \(NaN\), first at position 2"):
        run(np.array([0.0, 1.0, np.nan]))
