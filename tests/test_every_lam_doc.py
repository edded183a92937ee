"""docs/every_lam.md: every table is the output of its command, every number in the
prose comes from dpfix.parametric.chambers."""

from __future__ import annotations

import re
import shlex
from fractions import Fraction
from pathlib import Path

import pytest
from flint import fmpz_poly

from dpfix.cli import main
from dpfix.theory.parametric import _roots_above_one, chambers

PAGE = Path(__file__).resolve().parents[1] / "docs" / "every_lam.md"
BLOCKS = re.findall(r"```\n\$ (dpfix [^\n]+)\n(.*?)\n```", PAGE.read_text(), re.S)
SLOW = ("--n 5", "--n 4 --z", "4/7,2/7,1/7")  # U(5), F(4), R_F(3, geometric z): seconds each


def _marks(cmd: str) -> list:
    slow = any(s in cmd for s in SLOW) and not cmd.startswith("dpfix explore chambers "
                                                              "--kind F --n 3")
    return [pytest.mark.full] if slow else []


def test_the_page_has_its_tables():
    assert len(BLOCKS) == 8


@pytest.mark.parametrize(("cmd", "table"), [pytest.param(c, t, marks=_marks(c), id=c)
                                            for c, t in BLOCKS])
def test_each_table_is_its_commands_output(cmd, table, capsys):
    assert main(shlex.split(cmd)[1:]) == 0
    assert capsys.readouterr().out.strip("\n") == table


def _walls(a_plus_b: int) -> set[tuple[int, ...]]:
    """Minimal polynomials of the roots above 1 of lam^a (lam - 1)^b = 1, b >= 1."""
    out = set()
    lam = fmpz_poly([0, 1])
    for b in range(1, a_plus_b + 1):
        for a in range(0, a_plus_b - b + 1):
            for f, _ in (lam ** a * (lam - 1) ** b - 1).factor()[1]:
                if _roots_above_one(f):
                    out.add(tuple(int(c) for c in (f if f.coeffs()[-1] > 0 else -f).coeffs()))
    return out


def test_u_walls_and_the_rule_of_section_3():
    assert [len(chambers("U", n)) for n in (2, 3, 4)] == [1, 1, 1]
    assert [chambers("U", n).counts() for n in (2, 3, 4)] == [[4], [27], [664]]
    assert _walls(3) == {(-2, 1), (-1, -1, 1), (-1, 0, -1, 1), (-1, 1, -2, 1)}
    assert _walls(2) == {(-2, 1), (-1, -1, 1)}  # 2 and the golden ratio: no walls of U(4)
    six = sorted(float(r) for f in _walls(4) for r in _roots_above_one(fmpz_poly(list(f))))
    assert [f"{x:.4f}"[:-1] for x in six] == ["1.380", "1.465", "1.618", "1.754", "1.819",
                                               "2.000"]


@pytest.mark.full
def test_u5_walls_are_the_rule_with_a_plus_b_at_most_3():
    ch = chambers("U", 5, processes=2)
    assert {tuple(p.minimal_polynomial) for p in ch if p.is_breakpoint} == _walls(3)


def test_section_4_and_5_numbers():
    from dpfix.explore.cases import standard_z

    z3, z4 = standard_z(3), standard_z(4)
    assert [chambers("F", 2, z).counts() for z in standard_z(2).values()] == \
        [[2], [2], [2], [1]]
    assert chambers("F", 3, z3["uniform"]).counts() == [36]
    assert chambers("F", 4, z4["uniform"]).counts() == [1806]
    assert chambers("RF", 3, z3["uniform"]).counts() == [78]
    for name in ("geometric", "zero", "asymmetric"):
        f = {tuple(p.minimal_polynomial) for p in chambers("F", 3, z3[name]) if p.is_breakpoint}
        r = {tuple(p.minimal_polynomial) for p in chambers("RF", 3, z3[name])
             if p.is_breakpoint}
        assert f <= r and (len(f) < len(r)) == (name != "zero")
    for kind, name in (("F", "geometric"), ("F", "zero"), ("RF", "geometric"), ("RF", "zero")):
        assert chambers(kind, 3, z3[name]).piece_at(2).is_breakpoint
    for kind in ("F", "RF"):
        assert chambers(kind, 3, z3["asymmetric"]).piece_at(Fraction(3, 2)).is_breakpoint
    assert chambers("RF", 3, z3["asymmetric"]).piece_at(3).is_breakpoint
    assert not chambers("F", 3, z3["asymmetric"]).piece_at(3).is_breakpoint
