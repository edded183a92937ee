"""The joint release (docs/joint.md) reads only the split of the options: a method option
it would ignore is refused in one line, by its parameter's name in the library and by its
flag in ``dpfix privatize``, before anything is drawn or written."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpfix.release.options import NoSplit, TwoStage, given_options
from dpfix.release.table import privatize_table
from helpers import cli


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(2)
    return pd.DataFrame({"k": [f"r{i}" for i in range(80)], "A": rng.integers(0, 5, 80),
                         "B": rng.integers(0, 9, 80)})


@pytest.mark.parametrize("options, named", [
    (TwoStage(constructor="heuristic"), "constructor='heuristic'"),
    (TwoStage(constructor="heuristic", split=0.5), "constructor='heuristic'"),
    (TwoStage(constructor="heuristic", selector="max"),
     "constructor='heuristic', selector='max'"),
    (TwoStage(privatizer="privelet", split=0.5), "privatizer='privelet'"),
    (TwoStage(postprocess="project-simplex"), "postprocess='project-simplex'"),
    (NoSplit("one-stage", estimator="em-smooth"), "estimator='em-smooth'"),
    (NoSplit("one-stage", remap="quantile"), "remap='quantile'"),
])
def test_the_library_refuses_an_option_the_joint_release_ignores(options, named):
    with pytest.raises(ValueError) as refused:
        privatize_table(_table(), ["A", "B"], 1.0, upper={"A": 4, "B": 8},
                        joint=[("A", "B")], options=options, seed=0)
    message = str(refused.value)
    assert message.startswith("joint: ") and named in message and "\n" not in message
    assert "--" not in message  # parameters, not flags


@pytest.mark.parametrize("options", [None, TwoStage(), TwoStage(split=0.5),
                                     TwoStage(split="rule-of-thumb"), NoSplit("one-stage")])
def test_the_options_the_joint_release_reads_pass(options):
    r = privatize_table(_table(), ["A", "B"], 1.0, upper={"A": 4, "B": 8},
                        joint=[("A", "B")], options=options, seed=0)
    assert r.report["joint"][0]["columns"] == ["A", "B"]


def test_given_options_are_the_fields_off_their_defaults():
    assert given_options(TwoStage()) == []
    assert given_options(TwoStage(constructor="heuristic", split=0.5, selector="max"),
                         read=("split",)) == [("constructor", "heuristic"), ("selector", "max")]
    assert given_options(NoSplit("one-stage"), read=("framework",)) == []
    assert given_options(None) == []


@pytest.mark.parametrize("flags, named", [
    (["--constructor", "heuristic"], "--constructor"),
    (["--constructor", "northwest"], "--constructor"),  # given: ignored all the same
    (["--selector", "best"], "--selector"),
    (["--privatizer", "privelet"], "--privatizer"),
    (["--postprocess", "project-simplex"], "--postprocess"),
    (["--framework", "one-stage", "--estimator", "em-smooth"], "--estimator"),
    (["--framework", "one-stage", "--remap", "quantile"], "--remap"),
])
def test_the_command_refuses_a_flag_the_joint_release_ignores(tmp_path, capsys, flags, named):
    src = tmp_path / "t.csv"
    _table().to_csv(src, index=False)
    out = tmp_path / "o.csv"
    rc, stdout, err = cli(capsys, "privatize", src, "--column", "A", "--column", "B",
                          "--epsilon", "1", "--upper", "A=4", "--upper", "B=8", "--joint",
                          "A,B", "--out", out, "--seed", "0", *flags)
    assert rc == 2 and stdout == ""
    assert err.startswith("dpfix privatize: error: --joint: ") and err.count("\n") == 1
    assert f"ignore {named}" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]


def test_the_command_runs_the_joint_release_with_split_or_one_stage(tmp_path, capsys):
    src = tmp_path / "t.csv"
    _table().to_csv(src, index=False)
    for i, flags in enumerate((["--split", "0.5"], ["--framework", "one-stage"], [])):
        rc, _, err = cli(capsys, "privatize", src, "--column", "A", "--column", "B",
                         "--epsilon", "1", "--upper", "A=4", "--upper", "B=8", "--joint",
                         "A,B", "--out", tmp_path / f"o{i}.csv", "--seed", "0", "--quiet",
                         *flags)
        assert rc == 0, err
