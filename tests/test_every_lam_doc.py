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

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGE, F4_PAGE = DOCS / "every_lam.md", DOCS / "every_lam_F4.md"
_BLOCK = r"```\n\$ (dpfix [^\n]+)\n(.*?)\n```"
BLOCKS = re.findall(_BLOCK, PAGE.read_text(), re.S)
F4_BLOCKS = re.findall(_BLOCK, F4_PAGE.read_text(), re.S)
SLOW = ("--n 5", "--n 4 --z", "4/7,2/7,1/7")  # U(5), F(4), R_F(3, geometric z): seconds each


def _marks(cmd: str) -> list:
    slow = any(s in cmd for s in SLOW) and not cmd.startswith("dpfix explore chambers "
                                                              "--kind F --n 3")
    return [pytest.mark.full] if slow else []


def test_the_page_has_its_tables():
    assert len(BLOCKS) == 8
    assert [c for c, _ in F4_BLOCKS] == [
        f"dpfix explore chambers --kind F --n 4 --z {name}" for name in ("geometric",
                                                                        "asymmetric")]


@pytest.mark.parametrize(("cmd", "table"), [pytest.param(c, t, marks=_marks(c), id=c)
                                            for c, t in BLOCKS + F4_BLOCKS])
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


# -- the tables as data: their rows, read back from the printed text -----------------------
_ROW = re.compile(r"(chamber|wall)\s+(\S.*?)\s{2,}(\d+)\s+(.*)")


def _rows(table: str) -> list[tuple[str, str, int, str]]:
    """``(kind, lam text, count, last column)`` for each row of a printed table."""
    out = []
    for line in table.splitlines()[2:]:
        m = _ROW.fullmatch(line)
        assert m, line
        out.append((m[1], m[2], int(m[3]), m[4]))
    return out


def _chamber_ends(text: str) -> tuple[float, float]:
    lo, hi = text.strip("()").split(", ")
    return float(Fraction(lo)), (float("inf") if hi == "inf" else float(Fraction(hi)))


def test_every_table_alternates_increases_and_no_wall_exceeds_a_neighbour():
    """Section 2's proposition, on every table of both pages."""
    for cmd, table in BLOCKS + F4_BLOCKS:
        rows = _rows(table)
        assert [k for k, *_ in rows] == ["chamber", "wall"] * (len(rows) // 2) + ["chamber"], cmd
        ends = [_chamber_ends(t) for k, t, *_ in rows if k == "chamber"]
        walls = [float(Fraction(t)) if re.fullmatch(r"[\d/]+", t) else float(t)
                 for k, t, *_ in rows if k == "wall"]
        assert ends[0][0] == 1 and ends[-1][1] == float("inf"), cmd
        for (a, b), w, (c, _d) in zip(ends, walls, ends[1:], strict=False):
            assert a < b and abs(b - w) < 1e-8 and abs(c - w) < 1e-8, cmd
        counts = [c for _, _, c, _ in rows]
        for i in range(1, len(counts), 2):
            assert counts[i] <= min(counts[i - 1], counts[i + 1]), (cmd, rows[i])


def _summary(table: str) -> dict:
    rows = _rows(table)
    walls = [(t, poly) for k, t, _, poly in rows if k == "wall"]
    chambers_ = [(t, c) for k, t, c, _ in rows if k == "chamber"]
    where = [float(Fraction(t)) if re.fullmatch(r"[\d/]+", t) else float(t) for t, _ in walls]
    degrees = [max([int(e) for e in re.findall(r"lam\^(\d+)", p)] or [1]) for _, p in walls]
    widths = [b - a for a, b in (_chamber_ends(t) for t, _ in chambers_[:-1])]
    counts = [c for _, c in chambers_]
    return {
        "pieces": (len(chambers_), len(walls)),
        "range": (min(c for _, _, c, _ in rows), max(c for _, _, c, _ in rows)),
        "last": (chambers_[-1][0], chambers_[-1][1]),
        "bins": [sum(a < x <= b for x in where)
                 for a, b in ((1, 1.1), (1.1, 2), (2, 10), (10, float("inf")))],
        "rational": [t for t, _ in walls if re.fullmatch(r"[\d/]+", t)],
        "degrees": [degrees.count(d) for d in range(1, 9)],
        "equal": sum(a == b for a, b in zip(counts, counts[1:], strict=False)),
        "narrowest": f"{min(widths):.1e}",
    }


def test_section_4_f4_table_is_what_the_f4_page_says():
    geo, asy = (_summary(t) for _, t in F4_BLOCKS)
    assert geo == {"pieces": (359, 358), "range": (512, 1613),
                   "last": ("(71.21391084, inf)", 1599), "bins": [31, 178, 131, 18],
                   "rational": ["3/2", "2", "11/4", "4", "13/2", "14"],
                   "degrees": [6, 28, 83, 64, 124, 36, 16, 1], "equal": 77,
                   "narrowest": "5.9e-05"}
    assert asy == {"pieces": (299, 298), "range": (1664, 2004),
                   "last": ("(39.37337232, inf)", 1874), "bins": [0, 149, 129, 20],
                   "rational": ["2", "5"], "degrees": [2, 19, 53, 63, 71, 54, 30, 6],
                   "equal": 90, "narrowest": "1.5e-04"}
    text = PAGE.read_text()
    for needle in ("| chambers, breakpoints | 359, 358 | 299, 298 |",
                   "| rational breakpoints | 3/2, 2, 11/4, 4, 13/2, 14 | 2, 5 |",
                   "| degrees 1, 2, ..., 8 of the minimal polynomials | 6, 28, 83, 64, 124, 36, "
                   "16, 1 | 2, 19, 53, 63, 71, 54, 30, 6 |",
                   "| neighbouring chambers with equal counts | 77 pairs | 90 pairs |",
                   "| breakpoints in (1, 1.1], (1.1, 2], (2, 10], (10, inf) | 31, 178, 131, 18 "
                   "| 0, 149, 129, 20 |", "(167 pairs in all)"):
        assert needle in text, needle


def _algebraic_wall(t: str, poly: str):
    from dpfix.numbers.algebraic import algebraic

    if re.fullmatch(r"[\d/]+", t):
        return Fraction(t)
    return algebraic(poly.replace("lam", "x"), Fraction(t))


@pytest.mark.parametrize("block", [0, 1], ids=["geometric", "asymmetric"])
def test_f4_rows_recount_by_count_vertices(block):
    """A seeded sample of the printed rows, recounted from the printed text alone: at a
    rational point of the chamber other than its sample, and at the breakpoint over
    Q(lam) (its minimal polynomial and printed value)."""
    import random

    from dpfix.explore.cases import standard_z
    from dpfix.theory.polytopes import F

    rows = _rows(F4_BLOCKS[block][1])
    z = standard_z(4)[("geometric", "asymmetric")[block]]
    for i in sorted(random.Random(23 + block).sample(range(len(rows)), 6)):
        kind, t, count, last = rows[i]
        if kind == "wall":
            lam = _algebraic_wall(t, last)
        else:
            a, b = _chamber_ends(t)
            b = a + 1 if b == float("inf") else b
            lam = Fraction((a + b) / 2).limit_denominator(10 ** 9)
            assert a < lam < b and f"sample {lam}" != last
        assert F(4, lam, z).count_vertices(limit=None) == count, rows[i]


def _piece_of(table: str, lam: Fraction) -> tuple[str, str, int]:
    for kind, t, count, _ in _rows(table):
        if kind == "wall" and re.fullmatch(r"[\d/]+", t) and Fraction(t) == lam:
            return kind, t, count
        if kind == "chamber":
            a, b = _chamber_ends(t)
            if a < lam < b and not any(x == str(lam) for x in t.strip("()").split(", ")):
                return kind, t, count
    raise AssertionError(lam)


def test_section_5_f4_numbers():
    from dpfix.explore.cases import standard_z

    geo, asy = (t for _, t in F4_BLOCKS)
    half, two, three = Fraction(3, 2), Fraction(2), Fraction(3)
    assert [_piece_of(geo, x)[::2] for x in (half, two, three)] == [
        ("wall", 1117), ("wall", 1346), ("chamber", 1442)]
    assert _piece_of(geo, three)[1] == "(2.985494212, 3.018127709)"
    assert [_piece_of(asy, x)[::2] for x in (half, two, three)] == [
        ("chamber", 1924), ("wall", 1664), ("chamber", 1920)]
    assert [_piece_of(asy, x)[1] for x in (half, three)] == [
        "(1.477051553, 1.503099264)", "(2.985094094, 3.014321362)"]
    assert min(c for _, _, c, _ in _rows(asy)) == 1664
    zero = chambers("F", 4, standard_z(4)["zero"])
    assert len(zero) == 23  # 12 chambers
    assert [(zero.piece_at(x).is_breakpoint, zero.piece_at(x).count)
            for x in (half, two, three)] == [(False, 199), (False, 199), (False, 207)]
    text = " ".join(PAGE.read_text().split())
    for needle in ("3/2 and 2 are walls (1,117 and 1,346 vertices) and 3 lies in the chamber "
                   "``(2.9854..., 3.0181...)`` (1,442)", "3/2 lies in ``(1.4770..., "
                   "1.5030...)`` (1,924), 2 is a wall (1,664,", "``(2.9850..., 3.0143...)`` "
                   "(1,920)", "3/2, 2 and 3 lie in chambers (199, 199 and 207)"):
        assert needle in text, needle


def test_the_readme_states_the_pages_numbers():
    readme = " ".join((DOCS.parent / "README.md").read_text().split())
    geo, asy = (_summary(t) for _, t in F4_BLOCKS)
    assert f"{geo['pieces'][0]} and {asy['pieces'][0]} chambers" in readme
    assert (f"counts {geo['range'][0]:,} to {geo['range'][1]:,} and {asy['range'][0]:,} to "
            f"{asy['range'][1]:,}") in readme
    page = " ".join(PAGE.read_text().split())
    for number in ("35,350,086", "35,332,806", "1.1938..."):
        assert number in page and number in readme, number
    assert "F(4) at the zero-entry target has 12 chambers" in readme
