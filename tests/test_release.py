"""``privatize_table`` (dpfix.release.table, docs/release.md): a table released in one call,
a declared privacy unit, public and confidential apart, one report shape with its schema,
and the command as a thin layer over the library (one table of cases drives both)."""

from __future__ import annotations

import dataclasses
import json
import math
import pickle
import re
import string

import jsonschema
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpfix.numbers.deprecation import DpfixDeprecationWarning
from dpfix.release.bounds import PrivateBound
from dpfix.release.budget import PrivacyUnit
from dpfix.release.options import NoSplit, OneStage, TwoStage
from dpfix.release.pipeline import privatize_counts
from dpfix.release.report import report_schema
from dpfix.release.table import Confidential, Dataset, Histogram, Release, privatize_table
from helpers import cli

SCHEMA = report_schema()
UPPER = 20
#: eta_i = 503 + 71 i rows with count i (all above UPPER, so no count equals one), and 389
#: rows above UPPER: confidential numbers no public output holds by chance.
ETA = [503 + 71 * i for i in range(UPPER + 1)]
TOPCODED = 389


def _letters(i: int) -> str:
    """A key without digits (a digit would be a number token of the report or table)."""
    out = ""
    for _ in range(4):
        i, r = divmod(i, 26)
        out += string.ascii_lowercase[r]
    return out


@pytest.fixture(scope="module")
def distinctive():
    """Two count columns whose true histograms are ETA, each with TOPCODED counts above
    UPPER, and a key without digits."""
    counts = np.concatenate([np.repeat(np.arange(UPPER + 1), ETA),
                             UPPER + 1 + np.arange(TOPCODED) % 7])
    rng = np.random.default_rng(11)
    a, b = rng.permutation(counts), rng.permutation(counts)
    return pd.DataFrame({"area": [_letters(i) for i in range(a.size)], "a": a, "b": b,
                         "total": a + b})


def _numbers(text: str) -> tuple[set[int], set[float]]:
    """The integer and the other number tokens of a text."""
    ints, floats = set(), set()
    for tok in re.findall(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?", text):
        if re.fullmatch(r"-?\d+", tok):
            ints.add(int(tok))
        else:
            floats.add(float(tok))
    return ints, floats


def _walk(x, seen=None):
    """Every scalar reachable from ``x`` (containers, arrays, DataFrames' values, objects'
    ``__dict__``), as Python numbers or strings."""
    seen = set() if seen is None else seen
    if id(x) in seen:
        return
    seen.add(id(x))
    if isinstance(x, (str, bytes)):
        yield x
    elif isinstance(x, (bool, int, float, np.integer, np.floating)):
        yield x.item() if isinstance(x, np.generic) else x
    elif isinstance(x, dict):
        for k, v in x.items():
            yield from _walk(k, seen)
            yield from _walk(v, seen)
    elif isinstance(x, (list, tuple, set, frozenset)):
        for v in x:
            yield from _walk(v, seen)
    elif isinstance(x, np.ndarray):
        yield from _walk(x.ravel().tolist(), seen)
    elif isinstance(x, pd.DataFrame):
        assert isinstance(x.index, pd.RangeIndex) and x.attrs == {}
        for c in x.columns:
            yield from _walk(c, seen)
            yield from _walk(x[c].tolist(), seen)
    elif hasattr(x, "__dict__") or dataclasses.is_dataclass(x):
        yield from _walk(vars(x), seen)
    elif x is not None:
        yield str(x)


def _found(secret_ints, secret_floats, texts, scalars):
    """The confidential numbers found among the texts' number tokens and the scalars."""
    hits = set()
    for text in texts:
        ints, floats = _numbers(text)
        hits |= (ints & secret_ints) | (floats & secret_floats)
    for v in scalars:
        if isinstance(v, str):
            ints, floats = _numbers(v)
            hits |= (ints & secret_ints) | (floats & secret_floats)
        elif isinstance(v, int) and v in secret_ints or isinstance(v, float) and \
                v in secret_floats:
            hits.add(v)
    return hits


def test_nothing_confidential_is_reachable_from_a_release(distinctive):
    release, secret = privatize_table(distinctive, ["a", "b"], 2.0, upper=UPPER,
                                      keys=["area"], seed=5, confidential=True)
    assert isinstance(release, Release) and isinstance(secret, Confidential)
    top_bin = ETA[-1] + TOPCODED  # the histogram top-coded at UPPER
    ints = set(ETA) | {TOPCODED, top_bin}
    floats = set()
    for col in secret.report["columns"]:  # the realised errors, against the top-coded input
        floats |= {col["realized_count_error"]["abs"], col["realized_count_error"]["squared"]}
    assert secret.topcoded == {"a": TOPCODED, "b": TOPCODED}
    assert secret.histograms["a"].tolist() == [*ETA[:-1], top_bin] and len(floats) == 4
    assert not any(math.isclose(f, round(f)) for f in floats)  # no integer in disguise
    blob = pickle.dumps(release)
    public_texts = [repr(release), str(release), json.dumps(release.report),
                    release.table.to_csv(index=False), repr(release.table)]
    back = pickle.loads(blob)
    scalars = [*_walk(release), *_walk(back), *_walk(release.budget)]
    assert _found(ints, floats, public_texts, scalars) == set()
    assert back.report == release.report and back.table.equals(release.table)
    for name in (b"PrivatizedCounts", b"TableInput", b"Confidential", b"dpfix.release.result"):
        assert name not in blob  # no object holding the true data is pickled with it
    # the search finds them where they are: the confidential object
    assert _found(ints, floats, [json.dumps(secret.report)], list(_walk(secret))) == \
        (ints - {ETA[-1]}) | floats
    assert "do not publish" in repr(secret) and str(TOPCODED) not in repr(secret)


def test_privatized_counts_repr_shows_no_confidential_field(distinctive):
    r = privatize_counts(distinctive["a"].to_numpy(), 1.0, upper=UPPER, seed=0)
    assert r.topcoded == TOPCODED
    text = repr(r)
    assert "topcoded" not in text and _numbers(text)[0] & (set(ETA) | {TOPCODED}) == set()
    assert text.startswith("PrivatizedCounts(framework='two-stage', constructor='northwest'")
    assert "stage1" not in text and "counts" not in text.replace("PrivatizedCounts", "")


def test_a_two_column_dataframe_in_one_call(distinctive):
    df = distinctive.copy()
    before = df.copy()
    r = privatize_table(df, {"a": 0.6, "b": None}, 1.0, upper={"a": 20, "b": 10},
                        keys=["area"], seed=0)
    pd.testing.assert_frame_equal(df, before)  # the input is not modified
    assert list(r.table.columns) == ["area", "a", "b"]  # total: not declared public, dropped
    assert r.table["a"].between(0, 20).all() and r.table["b"].between(0, 10).all()
    assert r.table["area"].is_monotonic_increasing  # order "key" by default with keys
    comp = r.report["composition"]
    assert comp["per_column"] == {"a": 0.6, "b": 0.4} and comp["eps_spent"] == 1.0
    assert [c["upper"] for c in r.report["columns"]] == [20, 10]
    assert r.report["output_columns"]["dropped"] == ["total"]
    jsonschema.validate(r.report, SCHEMA)


@pytest.mark.parametrize("kind", ["frame", "arrow", "mapping", "csv", "parquet"])
def test_every_kind_of_input_gives_the_same_release(kind, tmp_path):
    df = pd.DataFrame({"id": [7, 3, 5, 1, 9, 2], "n": [0, 4, 2, 9, 1, 3]})
    data = {"frame": df, "arrow": pa.Table.from_pandas(df, preserve_index=False),
            "mapping": {c: df[c].to_numpy() for c in df.columns}}.get(kind)
    if kind == "csv":
        data = tmp_path / "t.csv"
        df.to_csv(data, index=False)
    elif kind == "parquet":
        data = tmp_path / "t.parquet"
        df.to_parquet(data, index=False)
    r = privatize_table(data, "n", 1.0, upper=5, keys=["id"], seed=3)
    ref = privatize_table(df, "n", 1.0, upper=5, keys=["id"], seed=3)
    assert r.table["n"].tolist() == ref.table["n"].tolist()
    assert [str(v) for v in r.table["id"]] == ["1", "2", "3", "5", "7", "9"]
    jsonschema.validate(r.report, SCHEMA)


def test_parquet_output_keeps_integer_keys(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("id,code,n\n12,007,3\n-4,010,1\n5,x,2\n")  # id: integers; code: text
    r = privatize_table(src, "n", 1.0, upper=5, keys=["id"], keep=["code"], seed=0)
    r.write(tmp_path / "o.parquet", report=tmp_path / "r.json")
    schema = pq.read_schema(tmp_path / "o.parquet")
    assert str(schema.field("id").type) == "int64" and str(schema.field("n").type) == "int64"
    assert str(schema.field("code").type) in ("string", "large_string")
    got = pq.read_table(tmp_path / "o.parquet").to_pandas()
    assert sorted(got["id"].tolist()) == [-4, 5, 12] and "007" in got["code"].tolist()
    report = json.loads((tmp_path / "r.json").read_text())
    jsonschema.validate(report, SCHEMA)
    assert report["output"]["path"] == str(tmp_path / "o.parquet")
    frame = pd.DataFrame({"id": np.array([3, 1], dtype=np.int32), "n": [1, 2]})
    privatize_table(frame, "n", 1.0, upper=5, keys=["id"], seed=0).write(tmp_path / "f.pq")
    assert str(pq.read_schema(tmp_path / "f.pq").field("id").type) == "int32"


def test_the_unit_row_composes_sequentially_and_cell_in_parallel(distinctive):
    row = privatize_table(distinctive, ["a", "b"], 1.0, upper=UPPER, seed=0)
    cell = privatize_table(distinctive, ["a", "b"], 1.0, upper=UPPER, seed=0, unit="cell")
    assert row.report["unit"]["composition"] == "sequential"
    assert [c["budget"]["eps_t"] for c in row.report["columns"]] == [0.5, 0.5]
    assert cell.report["unit"]["composition"] == "parallel"
    assert [c["budget"]["eps_t"] for c in cell.report["columns"]] == [1.0, 1.0]
    assert cell.report["composition"]["eps_spent"] == 1.0 and "parallel" in \
        cell.report["composition"]["rule"]
    for r in (row, cell):
        jsonschema.validate(r.report, SCHEMA)
        assert "docs/release.md" in r.report["unit"]["proof"]


def test_a_bound_c_runs_every_mechanism_at_its_share_over_c(distinctive):
    r = privatize_table(distinctive, ["a"], 1.5, upper=UPPER, seed=0, unit="row:3",
                        options=TwoStage(split=0.5))
    (col,) = r.report["columns"]
    assert col["budget"]["eps_t"] == pytest.approx(0.5, rel=1e-15)  # 1.5 / 3
    assert col["budget"]["eps_1"] == pytest.approx(0.25, rel=1e-15)
    lam = float(col["samplers"]["stage2"].split("lam = ")[1].split(")")[0].split("/")[0]) / \
        float(col["samplers"]["stage2"].split("lam = ")[1].split(")")[0].split("/")[1])
    assert lam <= math.exp(0.25)  # lam = e^(eps_2 / c) at most
    assert r.report["unit"]["bound"] == 3 and r.report["composition"]["eps_spent"] == 1.5
    assert r.report["composition"]["mechanism_eps"] == {"a": 0.5}
    with pytest.raises(ValueError, match="unit: a bound c > 1 is for pure eps-DP"):
        privatize_table(distinctive, ["a"], 1.0, upper=UPPER, unit="row:2", delta=1e-6,
                        options=OneStage("discrete-gaussian"))


def test_options_travel_in_one_validated_object(distinctive):
    r = privatize_table(distinctive, "a", 1.0, upper=UPPER, seed=0,
                        options=NoSplit("hybrid", estimator="em"))
    assert r.report["columns"][0]["framework"]["name"] == "hybrid"
    with pytest.raises(dataclasses.FrozenInstanceError):
        TwoStage().constructor = "lp"
    with pytest.raises(ValueError, match="selector: applies to the heuristic constructor"):
        TwoStage(selector="random")


# ------------------------------------------------------------------ library and command
#: A refusal of the command's own flags, which the library has no parameter for.
CLI_ONLY = "the command only"

#: (library keywords, command flags, the library's message naming its parameters, the
#: command's naming its flags; CLI_ONLY: a refusal of the command alone): one case each;
#: None: accepted by both. ``shares``: the mapping of ``columns``.
CASES = {
    "eps out of range": (
        {"eps": "1000"}, ["--epsilon", "1000"],
        "eps: column 'a' gets 500 of the total 1000; the usable range per column is 0.0001 "
        "to 100 (with constructor='northwest')",
        "--epsilon: column 'a' gets 500 of the total 1000; the usable range per column is "
        "0.0001 to 100 (with --constructor northwest)"),
    "one column, eps out of range": (
        {"eps": "1e-5", "columns": ["a"]}, ["--epsilon", "1e-5"],
        "eps: the usable range is 0.0001 to 100 (with constructor='northwest'), got '1e-5'",
        "--epsilon: the usable range is 0.0001 to 100 (with --constructor northwest), got "
        "'1e-5'"),
    "shares do not add up": (
        {"shares": {"a": "0.3", "b": "0.6"}},
        ["--column-epsilon", "a=0.3", "--column-epsilon", "b=0.6"],
        "shares: the shares add up to 0.9, not the total eps=1; make them add up, or leave a "
        "column out to give it the rest",
        "--column-epsilon: the shares add up to 0.9, not the total --epsilon 1; make them add "
        "up, or leave a column out to give it the rest"),
    "share takes it all": (
        {"shares": {"a": "1"}}, ["--column-epsilon", "a=1"],
        "shares: the shares add up to 1, leaving nothing of the total eps=1 for b",
        "--column-epsilon: the shares add up to 1, leaving nothing of the total --epsilon 1 "
        "for b"),
    "share of another column": (
        {}, ["--column-epsilon", "note=0.5"], CLI_ONLY,
        "--column-epsilon: 'note' is not a --column (columns: a, b)"),
    "share not a number": (
        {"shares": {"a": "x", "b": "0.5"}},
        ["--column-epsilon", "a=x", "--column-epsilon", "b=0.5"],
        "shares a: must be a finite number > 0, got 'x'",
        "--column-epsilon a: must be a finite number > 0, got 'x'"),
    "bad upper": ({"upper": "0"}, ["--upper", "0"],
                  "upper: must be an integer in 1..1000000, got '0'",
                  "--upper: must be an integer in 1..1000000, got '0'"),
    "key privatized": ({"keys": ["a"]}, ["--key", "a"],
                       "keys: 'a' is a privatized column (columns=)",
                       "--key: 'a' is a privatized column (--column)"),
    "keep unknown": ({"keep": ["zz"]}, ["--keep", "zz"],
                     "keep: column 'zz' not found; the other columns are ['id', 'note']",
                     "--keep: column 'zz' not found; the other columns are ['id', 'note']"),
    "order key without keys": ({"order": "key"}, ["--order", "key"],
                               "order key: name the key columns with keys=",
                               "--order key: name the key columns with --key"),
    "bad unit": ({"unit": "column"}, ["--unit", "column"],
                 "unit: 'column' is not one of row, cell, person, row:C, cell:C, "
                 "person:C, person:C:c (docs/release.md)",
                 "--unit: 'column' is not one of row, cell, person, row:C, cell:C, "
                 "person:C, person:C:c (docs/release.md)"),
    "split starves a stage": ({"options": TwoStage(split=1e-12)}, ["--split", "1e-12"],
                              "split: 1e-12 gives eps_1 = 5e-13 and eps_2 = 0.5; each stage "
                              "needs at least 1e-05: at epsilon 0.5, a split in [2e-05, "
                              "0.99998]", None),
    "shares": ({"shares": {"a": "0.3"}}, ["--column-epsilon", "a=0.3"], None, None),
    "unit cell": ({"unit": "cell:2"}, ["--unit", "cell:2"], None, None),
}


def _columns(call: dict) -> object:
    """``columns`` of the call, a mapping column -> share with ``shares``."""
    columns, shares = call.pop("columns"), call.pop("shares", None)
    return columns if shares is None else {n: shares.get(n) for n in columns}


@pytest.fixture
def two_columns(tmp_path):
    rng = np.random.default_rng(3)
    path = tmp_path / "two.csv"
    pd.DataFrame({"id": [f"r{i:03d}" for i in range(200)], "a": rng.poisson(4, 200),
                  "note": ["x"] * 200, "b": rng.poisson(3, 200)}).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_library_and_the_command_accept_the_same(case, two_columns, tmp_path, capsys):
    given, flags, message, flagged = CASES[case]
    call = {"columns": ["a", "b"], "eps": "1", "upper": "20", **given}
    names = list(call["columns"])
    argv = [two_columns, *[x for c in names for x in ("--column", c)], "--out",
            tmp_path / "o.csv", "--report", tmp_path / "r.json", "--seed", "4", "--quiet"]
    defaults = {"--epsilon": "1", "--upper": "20"}
    for flag, value in defaults.items():
        if flag not in flags:
            argv += [flag, value]
    argv += flags
    columns = _columns(call)
    if message is None:
        r = privatize_table(two_columns, columns, call.pop("eps"), seed=4, **call)
        rc, _, err = cli(capsys, "privatize", *argv)
        assert rc == 0, err
        written = json.loads((tmp_path / "r.json").read_text())
        assert written["composition"]["per_column"] == r.report["composition"]["per_column"]
        assert written["unit"] == r.report["unit"]
        assert pd.read_csv(tmp_path / "o.csv")[names].equals(r.table[names])
        jsonschema.validate(written, SCHEMA)
        return
    if message is not CLI_ONLY:
        with pytest.raises(ValueError) as refused:
            privatize_table(two_columns, columns, call.pop("eps"), seed=4, **call)
        assert str(refused.value) == message
    rc, out, err = cli(capsys, "privatize", *argv)
    assert (rc, out) == (2, "") and err == f"dpfix privatize: error: {flagged or message}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["two.csv"]


#: The same for a histogram file (``Histogram(path)``, ``--histogram``): (library keywords,
#: command flags, the library's message, the command's); None: accepted by both.
HISTOGRAM_CASES = {
    "a column named": ({"columns": ["a"]}, ["--column", "a"],
                       "columns: a histogram file has no columns; give columns=None",
                       "--column: a histogram file has no columns; drop --column"),
    "a key": ({"keys": ["id"]}, ["--key", "id"],
              "keys: a histogram file has no other columns; drop it",
              "--key: a histogram file has no other columns; drop it"),
    "a kept column": ({"keep": ["id"]}, ["--keep", "id"],
                      "keep: a histogram file has no other columns; drop it",
                      "--keep: a histogram file has no other columns; drop it"),
    "an order": ({"order": "shuffled"}, ["--order", "shuffled"],
                 "order: a histogram has no rows to order; drop it",
                 "--order: a histogram has no rows to order; drop it"),
    "eps out of range": ({"eps": "1000"}, ["--epsilon", "1000"],
                         "eps: the usable range is 0.0001 to 100 (with "
                         "constructor='northwest'), got '1000'",
                         "--epsilon: the usable range is 0.0001 to 100 (with --constructor "
                         "northwest), got '1000'"),
    "bad unit": ({"unit": "column"}, ["--unit", "column"],
                 "unit: 'column' is not one of row, cell, person, row:C, cell:C, "
                 "person:C, person:C:c (docs/release.md)",
                 "--unit: 'column' is not one of row, cell, person, row:C, cell:C, "
                 "person:C, person:C:c (docs/release.md)"),
    "upper share without auto": ({}, ["--upper-share", "0.2"], CLI_ONLY,
                                 "--upper-share: applies to --upper auto only; drop it"),
    "plain": ({}, [], None, None),
    "unit cell:2": ({"unit": "cell:2"}, ["--unit", "cell:2"], None, None),
    "upper auto": ({"upper": "auto"}, ["--upper", "auto"], None, None),
}

#: The same for a Dask dataset (``Dataset(folder)``, ``--engine dask``).
DATASET_CASES = {
    "order key": ({"order": "key"}, ["--order", "key"],
                  "order key: the Dask engine does not sort the dataset by key (each "
                  "partition is written on its own); use order='shuffled' (its default) or "
                  "order='input'",
                  "--order key: the Dask engine does not sort the dataset by key (each "
                  "partition is written on its own); use --order shuffled (its default) or "
                  "--order input"),
    "upper auto": ({"upper": "auto"}, ["--upper", "auto"], None, None),
    "key privatized": ({"keys": ["a"]}, ["--key", "a"],
                       "keys: 'a' is a privatized column (columns=)",
                       "--key: 'a' is a privatized column (--column)"),
    "unknown column": ({"columns": ["a", "zz"]}, [],
                       "column 'zz' not found; columns are ['id', 'a', 'note', 'b']", None),
    "shares do not add up": ({"shares": {"a": "0.3", "b": "0.6"}},
                             ["--column-epsilon", "a=0.3", "--column-epsilon", "b=0.6"],
                             "shares: the shares add up to 0.9, not the total eps=1; make "
                             "them add up, or leave a column out to give it the rest",
                             "--column-epsilon: the shares add up to 0.9, not the total "
                             "--epsilon 1; make them add up, or leave a column out to give it "
                             "the rest"),
    "plain, keys": ({"keys": ["id"]}, ["--key", "id"], None, None),
    "unit cell, shares": ({"unit": "cell", "shares": {"a": "0.5"}},
                          ["--unit", "cell", "--column-epsilon", "a=0.5"], None, None),
    "one-stage": ({"options": NoSplit("one-stage")}, ["--framework", "one-stage"], None, None),
}


@pytest.fixture
def histogram_file(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("count,number\n0,40\n1,70\n2,50\n4,30\n9,10\n")
    return path


@pytest.fixture
def dataset(tmp_path):
    """A Parquet dataset of two partitions with the columns of ``two_columns``."""
    rng = np.random.default_rng(5)
    folder = tmp_path / "ds"
    folder.mkdir()
    for i in range(2):
        pd.DataFrame({"id": [f"r{i}{j:03d}" for j in range(100)], "a": rng.poisson(4, 100),
                      "note": ["x"] * 100, "b": rng.poisson(3, 100)}).to_parquet(
            folder / f"part-{i}.parquet", index=False)
    return folder


def _refused_alike(given, message, flagged, argv, tmp_path, capsys, run, keep):
    if message is not CLI_ONLY:
        with pytest.raises(ValueError) as refused:
            run(given)
        assert str(refused.value) == message
    rc, out, err = cli(capsys, "privatize", *argv)
    assert (rc, out) == (2, "") and err == f"dpfix privatize: error: {flagged or message}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == keep


@pytest.mark.parametrize("case", sorted(HISTOGRAM_CASES))
def test_the_library_and_the_command_accept_the_same_histograms(case, histogram_file, tmp_path,
                                                                capsys):
    given, flags, message, flagged = HISTOGRAM_CASES[case]
    given = {"eps": "1", "upper": "9", **given}
    argv = [histogram_file, "--histogram", "--out", tmp_path / "o.csv", "--report",
            tmp_path / "r.json", "--seed", "4", "--quiet", *flags]
    argv += [x for flag, value in (("--epsilon", "1"), ("--upper", "9")) if flag not in flags
             for x in (flag, value)]

    def run(kw):
        kw = dict(kw)
        return privatize_table(Histogram(histogram_file), kw.pop("columns", None),
                               kw.pop("eps"), seed=4, **kw)
    if message is not None:
        _refused_alike(given, message, flagged, argv, tmp_path, capsys, run, ["h.csv"])
        return
    r = run(given)
    rc, _, err = cli(capsys, "privatize", *argv)
    assert rc == 0, err
    written = json.loads((tmp_path / "r.json").read_text())
    jsonschema.validate(written, SCHEMA)
    jsonschema.validate(r.report, SCHEMA)
    for key in ("unit", "composition", "input"):
        assert written[key] == r.report[key]
    assert "output_columns" not in written and written["input"]["kind"] == "histogram"
    (mine,), (theirs,) = r.report["columns"], written["columns"]
    for c in (mine, theirs):  # the time it took to build T: the only difference
        del c["timings_seconds"], c["mechanism"]["build_seconds"]
    assert mine == theirs
    lines = (tmp_path / "o.csv").read_text().splitlines()
    assert lines[0] == "count,number"
    assert lines[1:] == [f"{i},{m}" for i, m in zip(r.table["count"], r.table["number"],
                                                     strict=True)]
    r.write(tmp_path / "lib.csv")
    assert (tmp_path / "lib.csv").read_text() == (tmp_path / "o.csv").read_text()


@pytest.mark.parametrize("case", sorted(DATASET_CASES))
def test_the_library_and_the_command_accept_the_same_datasets(case, dataset, tmp_path, capsys):
    pytest.importorskip("dask.dataframe")
    given, flags, message, flagged = DATASET_CASES[case]
    given = {"columns": ["a", "b"], "eps": "1", "upper": "20", **given}
    argv = [dataset, "--engine", "dask", *[x for c in given["columns"] for x in ("--column", c)],
            "--out", tmp_path / "o", "--report", tmp_path / "r.json", "--seed", "4", "--quiet",
            *flags]
    argv += [x for flag, value in (("--epsilon", "1"), ("--upper", "20")) if flag not in flags
             for x in (flag, value)]

    def run(kw):
        kw = dict(kw)
        return privatize_table(Dataset(dataset), _columns(kw), kw.pop("eps"), seed=4,
                               out=tmp_path / "lib", **kw)
    if message is not None:
        _refused_alike(given, message, flagged, argv, tmp_path, capsys, run, ["ds"])
        return
    r = run(given)
    rc, _, err = cli(capsys, "privatize", *argv)
    assert rc == 0, err
    written = json.loads((tmp_path / "r.json").read_text())
    jsonschema.validate(written, SCHEMA)
    jsonschema.validate(r.report, SCHEMA)
    for key in ("unit", "composition", "input", "engine", "row_order", "output_columns"):
        assert written[key] == r.report[key]
    assert written["output"] == {"path": str(tmp_path / "o")}
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "o"),
                                  pd.read_parquet(tmp_path / "lib"))
    lazy = r.table.compute()  # the release's table reads the dataset it wrote
    assert {c: lazy[c].tolist() for c in lazy.columns} == \
        {c: v.tolist() for c, v in pd.read_parquet(tmp_path / "lib").items()}
    assert [c["target_z"] for c in written["columns"]] == \
        [c["target_z"] for c in r.report["columns"]]


def test_the_command_states_the_unit(capsys):
    rc, out, _ = cli(capsys, "privatize", "--help")
    assert rc == 0
    text = " ".join(out.split())
    assert "--unit" in text and "every column of one row" in text and "in parallel" in text
    assert "dpfix docs release" in text


def test_every_report_the_command_writes_matches_the_schema(two_columns, tmp_path, capsys):
    for k, extra in enumerate([["--column", "a"], ["--column", "a", "--column", "b"],
                               ["--column", "a", "--framework", "one-stage"]]):
        rep = tmp_path / f"r{k}.json"
        rc, _, err = cli(capsys, "privatize", two_columns, *extra, "--epsilon", "1", "--upper",
                         "20", "--out", tmp_path / f"o{k}.csv", "--report", rep, "--quiet")
        assert rc == 0, err
        jsonschema.validate(json.loads(rep.read_text()), SCHEMA)
    hist = tmp_path / "h.csv"
    hist.write_text("count,number\n0,5\n1,7\n3,2\n")
    rc, _, err = cli(capsys, "privatize", hist, "--histogram", "--epsilon", "1", "--upper", "3",
                     "--out", tmp_path / "ho.csv", "--report", tmp_path / "hr.json", "--quiet")
    assert rc == 0, err
    jsonschema.validate(json.loads((tmp_path / "hr.json").read_text()), SCHEMA)


def test_the_schema_refuses_a_confidential_field():
    r = privatize_table({"n": [0, 1, 2, 3]}, "n", 1.0, upper=3, seed=0)
    bad = json.loads(json.dumps(r.report))
    bad["columns"][0]["topcoded"] = 0
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SCHEMA)
    assert PrivacyUnit().text == "row"


def test_the_package_exports_the_release_names():
    import dpfix.release as R

    assert R.privatize_table is privatize_table and R.Release is Release
    assert R.Histogram is Histogram and R.Dataset is Dataset
    assert R.TwoStage is TwoStage and R.privatize_counts is privatize_counts
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        R.nothing  # noqa: B018


def test_a_ledger_charges_each_release_and_refuses_an_overdraft(distinctive, tmp_path):
    """Done when: a DataFrame of several count columns released in one call, with a stated
    unit and a ledger; the report carries the balance, nothing confidential reachable."""
    from dpfix.release.ledger import Ledger

    ledger = Ledger(tmp_path / "budget.jsonl", total="1.5")
    r = privatize_table(distinctive, ["a", "b"], 1.0, upper=UPPER, keys=["area"],
                        unit="row", ledger=ledger)
    assert r.report["ledger"]["spent"] == 1.0 and r.report["ledger"]["balance"] == 0.5
    jsonschema.validate(r.report, SCHEMA)
    cell = privatize_table(distinctive, ["a", "b"], 0.5, upper=UPPER, unit="cell",
                           ledger=ledger)  # parallel: charged the maximum, 0.5
    assert cell.report["ledger"]["balance"] == 0.0
    with pytest.raises(ValueError, match="exceeds|balance"):
        privatize_table(distinctive, "a", 0.1, upper=UPPER, ledger=ledger)
    assert float(ledger.balance().eps) == 0.0
    lines = (tmp_path / "budget.jsonl").read_text()
    assert "parallel" in lines and "sequential" in lines
    # the records' chain hashes are hex digests, not numbers of the data: left out
    records = [{k: v for k, v in json.loads(line).items() if k != "prev"}
               for line in lines.splitlines()]
    assert _numbers(json.dumps(records))[0] & (set(ETA) | {TOPCODED}) == set()


def test_upper_auto_per_column(distinctive):
    r = privatize_table(distinctive, ["a", "b"], 2.0,
                        upper={"a": PrivateBound(0.25), "b": UPPER}, seed=1)
    a, b = r.report["columns"]
    assert a["budget"]["eps_upper"] == 0.25 and a["upper"] == a["upper_bound"]["upper"]
    assert r.table["a"].max() <= a["upper"] and b["upper"] == UPPER
    assert r.report["composition"]["eps_spent"] == 2.0
    jsonschema.validate(r.report, SCHEMA)
    with pytest.warns(DpfixDeprecationWarning, match="upper_share= is deprecated"):
        old = privatize_table(distinctive, ["a", "b"], 2.0, upper={"a": "auto", "b": UPPER},
                              upper_share=0.25, seed=1)
    assert old.report["columns"][0]["upper"] == a["upper"]
    with pytest.warns(DpfixDeprecationWarning), \
            pytest.raises(ValueError, match="upper_share: applies to upper auto only"):
        privatize_table(distinctive, "a", 1.0, upper=UPPER, upper_share=0.2)


# ------------------------------------------------------------------ histogram and dataset inputs
def test_nothing_confidential_is_reachable_from_a_histogram_release(tmp_path):
    """A histogram file's release: its report, repr, layout and pickled state hold no true
    number (the table is the privatized histogram); the Confidential holds them."""
    src = tmp_path / "h.csv"
    eta = [*ETA, *([0] * 3), TOPCODED]  # TOPCODED rows with count UPPER + 4
    src.write_text("count,number\n" + "".join(f"{i},{m}\n" for i, m in enumerate(eta)))
    release, secret = privatize_table(Histogram(src), None, 2.0, upper=UPPER, seed=5,
                                      confidential=True)
    top_bin = ETA[-1] + TOPCODED
    assert secret.topcoded == {None: TOPCODED}
    assert secret.histograms[None].tolist() == [*ETA[:-1], top_bin]
    floats = {secret.report["columns"][0]["realized_count_error"]["abs"]}
    texts = [repr(release), json.dumps(release.report), json.dumps(release.layout)]
    scalars = [*_walk(release.report), *_walk(release.layout), *_walk(pickle.loads(
        pickle.dumps(release)).report)]
    assert _found(set(ETA) | {TOPCODED, top_bin}, floats, texts, scalars) == set()
    assert int(release.table["number"].sum()) == sum(eta)  # N is public
    assert list(release.table["count"]) == list(range(UPPER + 1))


def test_a_dataset_release_holds_its_report_and_a_lazy_table(dataset, tmp_path):
    pytest.importorskip("dask.dataframe")
    release, secret = privatize_table(Dataset(dataset), ["a", "b"], 1.0, upper=20, seed=1,
                                      keys=["id"], out=tmp_path / "o", confidential=True)
    assert release.report["engine"] == "dask" and "Release(columns=['a', 'b'], rows=200" in \
        repr(release)
    assert sorted(release.table.columns) == ["a", "b", "id"]
    truth = pd.read_parquet(dataset)
    assert [c["topcoded"] for c in secret.report["columns"]] == \
        [int((truth[c] > 20).sum()) for c in ("a", "b")]
    assert "topcoded" not in json.dumps(release.report)
    with pytest.raises(ValueError, match="written by the engine; write the report"):
        release.write(tmp_path / "t.csv")
    release.write_report(tmp_path / "r.json")
    written = json.loads((tmp_path / "r.json").read_text())
    assert written["output"] == {"path": str(tmp_path / "o")}
    jsonschema.validate(written, SCHEMA)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds", "o", "r.json"]


def test_out_is_a_file_for_a_table_and_required_for_a_dataset(distinctive, dataset,
                                                                 tmp_path):
    release = privatize_table(distinctive, "a", 1.0, upper=UPPER, out=tmp_path / "o.csv",
                              seed=3)
    assert release.table is None and release.path == tmp_path / "o.csv"
    assert (tmp_path / "o.csv").is_file()
    with pytest.raises(ValueError, match="out: a Dataset release writes a Parquet dataset"):
        privatize_table(Dataset(dataset), "a", 1.0, upper=UPPER)
    assert not (tmp_path / "o").exists()


def test_a_ledger_with_a_histogram_and_an_entered_reservation(distinctive, tmp_path):
    """The library charges a histogram's release to the ledger (its resolved path); an
    entered Reservation must charge what the release spends, and its caller records it."""
    from dpfix.release.ledger import Ledger

    src = tmp_path / "h.csv"
    src.write_text("0,40\n1,70\n2,50\n")
    ledger = Ledger(tmp_path / "l.jsonl", total="2")
    r = privatize_table(Histogram(src), None, 0.5, upper=2, ledger=ledger)
    assert r.report["ledger"]["balance"] == 1.5
    (entry,) = ledger.entries()
    assert entry["dataset"] == str(src.resolve()) and entry["columns"] == []
    with ledger.reserve("0.25", dataset="d", columns=["a"], unit="u") as held:
        with pytest.raises(ValueError, match="the reservation charges eps 1/4, delta 0, but "
                                             "the release spends eps 1/2"):
            privatize_table(distinctive, "a", 0.5, upper=UPPER, ledger=held)
        made = privatize_table(distinctive, "a", 0.25, upper=UPPER, ledger=held)
        assert made.report["ledger"]["balance"] == 1.25 and not held.committed
        held.commit()  # the caller's outputs complete: recorded
    assert len(ledger.entries()) == 2 and float(ledger.balance().eps) == 1.25


def test_a_dataset_release_failing_after_the_move_takes_the_dataset_back(dataset, tmp_path,
                                                                        monkeypatch):
    """The dataset is in place once the engine moved it: a failure building its report takes
    it back (the ledger's charge, recorded before the move, stays: budget spent for
    nothing, never an output without its charge)."""
    pytest.importorskip("dask.dataframe")
    import dpfix.release.dask as engine
    from dpfix.release.ledger import Ledger

    def boom(*args, **kwargs):
        raise RuntimeError("report failed")

    monkeypatch.setattr(engine, "assemble", boom)
    ledger = Ledger(tmp_path / "l.jsonl", total=1)
    with pytest.raises(RuntimeError, match="report failed"):
        privatize_table(Dataset(dataset), "a", 0.5, upper=20, out=tmp_path / "o",
                        ledger=ledger)
    assert not (tmp_path / "o").exists() and len(ledger.entries()) == 1
    assert not [p for p in tmp_path.iterdir() if p.name.startswith((".o.", "o"))]
