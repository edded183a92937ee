"""``dpfix explore`` and ``dpfix certify`` on sizes and inputs they refuse (one line, exit
code 2) and on a bare install (no PyNormaliz): what the messages tell a new user."""

from __future__ import annotations

import pytest

from dpfix.theory import enumeration
from helpers import cli


@pytest.fixture
def bare(monkeypatch):
    """As on an install without the enumeration extra: Normaliz is not available."""
    monkeypatch.setattr(enumeration, "normaliz_available", lambda: False)


def test_explore_on_a_bare_install_names_the_enumeration_extra(capsys, bare):
    rc, out, err = cli(capsys, "explore", "--n", "4")
    assert rc == 0, err
    note = out.strip().splitlines()[-1]
    assert note.startswith("R_F[z]: R_F(n=4) skipped: without PyNormaliz, cdd enumerates "
                           "R_F for n <= 3 only"), note
    assert note.endswith("pip install 'dpfix[enumeration]'") and "limit=None" not in note


def test_explore_chambers_confirm_on_a_bare_install_prints_short_lines(capsys, bare):
    rc, out, err = cli(capsys, "explore", "chambers", "--kind", "F", "--n", "3", "--z",
                       "4/7,2/7,1/7", "--confirm")
    assert rc == 1, err  # two breakpoints over Q(lam) not confirmed
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 140, max(lines, key=len)
    tail = " ".join(x.strip() for x in lines[lines.index(next(
        x for x in lines if x.startswith("not confirmed: "))):])
    assert tail == ("not confirmed: breakpoint 1.186140662 (16 vertices), breakpoint "
                    "1.31895825 (18 vertices): the enumeration over Q(lam) refused: vertices "
                    "over Q(lam) need PyNormaliz built with e-antic: pip install "
                    "'dpfix[enumeration]'")


@pytest.mark.parametrize("argv, message", [
    (["explore", "graph", "--graph", "complete:100"], "--graph complete:100: 100 nodes; the "
     "summary is computed for at most 12"),
    (["explore", "graph", "--graph", "grid:4x4"], "16 nodes"),
    (["explore", "graph", "--graph", "complete:9"], "more than 50,000 automorphisms"),
    (["explore", "northwest", "--loss", "capped:-1"], "the cap C of capped:C must be > 0"),
    (["certify", "--n", "100000"], "--n 100000: certified for n <= 300"),
    (["certify", "--z", *["1/400"] * 400], "--n 400: certified for n <= 300"),
    (["certify", "--n", "13", "--constructor", "lp"], "--n 13: certified for n <= 12 "
     "(--constructor lp solves the exact LP"),
    (["certify", "--n", "20", "--dual", "lp"], "(--dual lp solves the exact LP"),
    (["certify", "--n", "101", "--universal"], "certified for n <= 100 (--universal"),
    (["certify", "--n", "4", "--loss", "capped:-1"], "--loss capped:-1: the cap C of "
     "capped:C must be > 0"),
    (["certify", "--n", "4", "--loss", "capped:0"], "must be > 0"),
])
def test_sizes_and_losses_beyond_the_guards_are_one_line(capsys, argv, message):
    rc, out, err = cli(capsys, *argv)
    assert rc == 2 and out == "", (out, err)
    assert len(err.splitlines()) == 1 and message in err, err


def test_the_largest_graph_within_the_guards_is_summarised(capsys):
    rc, out, err = cli(capsys, "explore", "graph", "--graph", "complete:7")
    assert rc == 0, err
    assert out.startswith("graph complete:7: n = 7 values, 21 edges, every weight 1, 5040 "
                          "automorphisms")
