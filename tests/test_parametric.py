"""dpfix.parametric.chambers: the type of U, F and R_F as lam varies (docs/every_lam.md)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpfix
from dpfix import RF, F, U
from dpfix.numbers.exact import ExactnessError
from dpfix.theory import parametric as pm
from dpfix.theory.parametric import chambers

Z3 = [Fraction(4, 7), Fraction(2, 7), Fraction(1, 7)]  # the geometric target: 4 chambers
ZR = [Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)]  # R_F(3) at it: 2 chambers


@pytest.fixture(scope="module")
def f3():
    return chambers("F", 3, Z3)


def test_package_attribute():
    assert dpfix.parametric.chambers is chambers


@pytest.mark.parametrize(("n", "count"), [(2, 4), (3, 27), (4, 664)])
def test_u_one_chamber_up_to_4(n, count):
    ch = chambers("U", n)
    assert len(ch) == 1 and ch.counts() == [count]
    assert ch[0].lo == 1 and ch[0].hi == pm.INF and float(ch[0].hi) == float("inf")


@pytest.mark.parametrize("n", [3, 4])
def test_u_structure_agrees_with_the_generic_engine(n):
    """Two methods: U's vertex sets (Theorem 2) and the vertices by Normaliz/cdd with
    every row's slack over Z[lam]."""
    roots = pm._Roots()
    engine = pm._GenericEngine("U", n, None, roots)
    pieces = pm._merge(engine, pm._walk(engine, roots))
    assert [p.count for p in pieces] == chambers("U", n).counts()


def test_pieces_alternate_and_increase(f3):
    for ch in (f3, chambers("RF", 3, ZR)):
        assert not ch[0].is_breakpoint and not ch[-1].is_breakpoint
        for a, b in zip(ch, ch[1:], strict=False):
            assert a.is_breakpoint != b.is_breakpoint
            assert float(a.hi) <= float(b.lo)
            assert a.hi is b.lo and a.hi == b.lo
        for p in ch:
            assert (p.lo is p.hi) == p.is_breakpoint


def test_counts_inside_each_chamber_agree_with_count_vertices(f3):
    for p in f3:
        if not p.is_breakpoint:
            assert F(3, p.sample, Z3).count_vertices(backend="cdd") == p.count


def test_confirm(f3):
    rows = f3.confirm()
    assert len(rows) == len(f3)
    assert [r["ok"] for r in rows] == [True] * len(f3)  # the irrational walls over Q(lam)
    assert [r["method"].split(",")[0] for r in rows if "Q(lam)" in r["method"]] == \
        ["over Q(lam)"] * 2


def test_confirm_catches_a_wrong_count(f3):
    ch = chambers("F", 3, Z3)
    ch[0].count += 1
    with pytest.raises(AssertionError, match="count_vertices"):
        ch.confirm()


@settings(max_examples=25, deadline=None)
@given(st.fractions(min_value=Fraction(61, 60), max_value=10, max_denominator=60))
def test_count_at_lam_is_the_count_of_its_piece(lam):
    ch = _F3_CACHE.setdefault("f3", chambers("F", 3, Z3))
    assert F(3, lam, Z3).count_vertices(backend="cdd") == ch.piece_at(lam).count
    rf = _F3_CACHE.setdefault("rf3", chambers("RF", 3, ZR))
    assert RF(3, lam, ZR).count_vertices(backend="cdd") == rf.piece_at(lam).count


_F3_CACHE: dict[str, pm.Chambers] = {}


def test_u5_chambers_and_the_lam_values_of_the_tables():
    ch = chambers("U", 5)
    assert ch.counts() == [68805, 64965, 67365, 61725, 65805, 62445, 65325, 55725, 60345]
    assert [p.minimal_polynomial for p in ch if p.is_breakpoint] == [
        [-1, 0, -1, 1], [-1, -1, 1], [-1, 1, -2, 1], [-2, 1]]
    assert ch.piece_at(2).is_breakpoint and ch.piece_at(2).count == 55725
    assert ch.piece_at(Fraction(3, 2)).count == 67365 and ch.piece_at(3).count == 60345
    for lam in (Fraction(6, 5), Fraction(3, 2), Fraction(7, 4), Fraction(2), Fraction(5, 2)):
        assert U(5, lam).count_vertices(backend="structure") == ch.piece_at(lam).count


def test_chamber_vertices_are_rational_functions_valid_on_the_chamber():
    import sympy

    ch = chambers("F", 3, Z3)
    lam = sympy.Symbol("lam")
    p = ch[0]
    verts = p.vertices()
    assert len(verts) == p.count
    for x in (p.sample, pm._pick(p.lo, p.sample)):
        P = F(3, x, Z3)
        at = sympy.Rational(x.numerator, x.denominator)
        got = {tuple(Fraction(str(sympy.cancel(e.subs(lam, at)))) for e in V) for V in verts}
        want = {tuple(v.ravel()) for v in P.vertices()}
        assert got == want


def test_breakpoint_numbers():
    phi = pm.AlgebraicPoint(pm.fmpz_poly([-1, -1, 1]), 1, 2)
    assert pm._cmp(phi, Fraction(8, 5)) == 1 and pm._cmp(phi, Fraction(13, 8)) == -1
    assert abs(float(phi) - (1 + 5 ** 0.5) / 2) < 1e-12
    assert pm._cmp(phi, pm.AlgebraicPoint(pm.fmpz_poly([-1, -1, 1]), Fraction(3, 2), 2)) == 0
    assert pm._cmp(phi, pm.AlgebraicPoint(pm.fmpz_poly([-1, 0, -1, 1]), 1, 2)) == 1
    public = pm._public(phi)
    assert public is pm._public(phi) and public * public == public + 1
    assert pm.breakpoint_number([-3, 2], 1, 2) == Fraction(3, 2)


@pytest.mark.parametrize(("lo", "hi"), [
    (Fraction(1), Fraction(2)), (Fraction(7, 5), Fraction(3, 2)),
    (Fraction(5, 3), Fraction(17, 10)), (Fraction(2), Fraction(9))])
def test_simplest_rational(lo, hi):
    x = pm._simplest(lo, hi)
    assert lo < x < hi
    assert all(not lo < Fraction(a, b) < hi for b in range(1, x.denominator)
               for a in range(int(lo * b), int(hi * b) + 2))


def test_bad_input():
    with pytest.raises(ValueError, match="kind"):
        chambers("V", 3)
    with pytest.raises(ValueError, match="n <= 5"):
        chambers("U", 6)
    with pytest.raises(ValueError, match="needs an exact target"):
        chambers("F", 3)
    with pytest.raises(ExactnessError):
        chambers("F", 2, [0.5, 0.5])
    with pytest.raises(ExactnessError):
        chambers("F", 3, Z3).piece_at(1.5)


def test_f3_geometric_known_walls(f3):
    assert f3.counts() == [16, 16, 19, 18, 20, 17, 28]
    assert [p.minimal_polynomial for p in f3 if p.is_breakpoint] == [
        [-4, 1, 2], [-4, -14, 5, 6], [-2, 1]]


def test_explore_chambers_command(capsys):
    from dpfix.cli import main

    assert main(["explore", "chambers", "--kind", "F", "--n", "3", "--z", "4/7,2/7,1/7"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == ("F(n=3, z=(4/7, 2/7, 1/7)): 4 chamber(s), 3 breakpoint(s) "
                                   "in lam > 1")
    assert "2*lam^2 + lam - 4" in out and out.count("wall") == 3
    assert main(["explore", "chambers", "--n", "4"]) == 0
    assert "(1, inf)" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "message"), [
    (["--n", "6"], "--n: chambers of U are computed for n in 2..5, got 6"),
    (["--kind", "F", "--n", "3", "--z", "1/2,1/4,x"], "--z: cannot read 'x'"),
    (["--kind", "F", "--n", "3", "--z", "1/2,1/4"], "z: expected length 3"),
    (["--n", "\uff15"], "plain digits"),
    (["--z", "1/2,1/2", "--n", "2"], "U has no target"),
])
def test_explore_chambers_bad_input(argv, message, capsys):
    from dpfix.cli import main

    assert main(["explore", "chambers", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and message in err


def test_every_lam_cases_cover_every_chamber_and_rational_wall():
    from dpfix.explore.cases import standard_z
    from dpfix.explore.verification import _exact_key, every_lam_cases

    cases, skipped = every_lam_cases("F", 3)
    assert skipped == []
    z = standard_z(3)["geometric"]
    at = {_exact_key(lam) for lam, name, _ in cases if name == "geometric"}
    irrational = 0
    for kind in ("F", "RF"):
        for p in chambers(kind, 3, z):
            lam = p.lo if p.is_breakpoint else p.sample
            irrational += not isinstance(lam, Fraction)
            assert _exact_key(lam) in at, p
    assert irrational == 7  # the same 5 values of lam behind them: two walls of F are R_F's


def test_verify_every_lam(capsys):
    from dpfix.cli import main

    assert main(["verify", "--every-lam", "--n", "3", "--only", "Theorem 3"]) == 0
    out = capsys.readouterr().out
    assert "1 passed, 0 failed" in out and "every-lam mode" in out
    assert "lam in {7/6, 6/5, 5/4, 4/3, 7/5, 3/2, 8/5, 5/3, 2, 11/5, 22/9, 3, 7/2, 4, 9/2, " \
           "5, 11/2}" in out
    assert "and the 5 irrational breakpoints (exact over Q(lam))" in out


def test_verify_every_lam_reports_a_failure(tmp_path, capsys):
    from dpfix.cli import main

    (tmp_path / "check_lam.py").write_text(
        'RESULT = "Lam"\nSTATEMENT = "lam is never 2"\nEVERY_LAM = "U"\n'
        "def run(mode):\n    return 1\n"
        "def every_lam(n, cases):\n"
        "    for lam, _, _ in cases:\n        assert lam != 2, f'lam = {lam}'\n"
        "    return len(cases)\n")
    assert main(["verify", "--every-lam", "--n", "3", "--dir", str(tmp_path)]) == 1
    assert "lam = 2" in capsys.readouterr().out


def test_verify_every_lam_bad_n(capsys):
    from dpfix.cli import main

    assert main(["verify", "--every-lam", "--n", "4"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "every-lam checks run at n in (2, 3)" in err


def test_f_vector(f3):
    assert chambers("U", 3)[0].f_vector() == [27, 102, 168, 141, 60, 12]
    for p in f3:
        if p.is_breakpoint and not isinstance(p.lo, Fraction):
            with pytest.raises(ValueError, match="irrational"):
                p.f_vector()
        else:
            fv = p.f_vector()
            assert fv[0] == p.count and sum((-1) ** i * f for i, f in enumerate(fv)) == \
                1 - (-1) ** len(fv)  # Euler: f_0 - f_1 + ... = 1 - (-1)^d


def test_explore_chambers_named_target_and_confirm(capsys):
    from dpfix.cli import main

    assert main(["explore", "chambers", "--kind", "RF", "--n", "3", "--z", "zero",
                 "--confirm"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "RF(n=3, z=(2/3, 0, 1/3)): 2 chamber(s), 1 breakpoint(s) in lam > 1"
    assert lines[-1].startswith("confirmed 3 of 3 piece(s) by count_vertices: 2 chamber(s) at "
                                "a second rational point, 1 breakpoint(s) (0 over Q(lam), "
                                "1 rational)")


def test_explore_chambers_confirm_reports_a_disagreement(monkeypatch, capsys):
    from dpfix.cli import main
    from dpfix.theory import polytopes

    real = polytopes.Polytope.count_vertices
    monkeypatch.setattr(polytopes.Polytope, "count_vertices",
                        lambda self, *a, **k: real(self, *a, **k) + 1)
    assert main(["explore", "chambers", "--kind", "F", "--n", "3", "--z", "zero",
                 "--confirm"]) == 1
    assert capsys.readouterr().out.splitlines()[-1].startswith("not confirmed: F(n=3, ")


def test_explore_confirm_only_with_chambers(capsys):
    from dpfix.cli import main

    assert main(["explore", "--confirm"]) == 2
    assert "--confirm: only with 'dpfix explore chambers'" in capsys.readouterr().err


@settings(max_examples=8, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=3, max_size=3).filter(lambda w: sum(w) > 0))
def test_a_wall_has_no_more_vertices_than_either_side(weights):
    """docs/every_lam.md section 2's proposition, on F(3) at random targets; and the
    memory of tight sets changes nothing: a walk without it gives the same pieces."""
    z = [Fraction(w, sum(weights)) for w in weights]
    ch = chambers("F", 3, z)
    counts = ch.counts()
    assert all(counts[i] <= min(counts[i - 1], counts[i + 1]) for i in range(1, len(ch), 2))
    roots = pm._Roots()
    engine = pm._GenericEngine("F", 3, ch.z, roots)
    engine.known = _Forgetful()
    fresh = pm._merge(engine, pm._walk(engine, roots))
    assert [(repr(p), p._keys) for p in fresh] == [(repr(p), p._keys) for p in ch]


class _Forgetful(dict):
    def __setitem__(self, key, value) -> None:
        pass

    def setdefault(self, key, default=None):
        return default


def test_interval_around_lies_in_its_chamber():
    z = [Fraction(4, 7), Fraction(2, 7), Fraction(1, 7)]
    ch = chambers("RF", 3, z)
    for lam in (Fraction(11, 10), Fraction(6, 5), Fraction(7, 3), Fraction(9, 2), 7):
        p = pm.interval_around("RF", 3, lam, z)
        q = ch.piece_at(lam)
        assert p.count == q.count and p._keys == q._keys and lam in p
        assert pm._cmp(q._lo, p._lo) <= 0 and (q._hi is pm.INF or pm._cmp(p._hi, q._hi) <= 0)
    assert len(pm.interval_around("U", 3, 2).vertices()) == 27


def test_interval_around_refusals():
    with pytest.raises(ValueError, match="root of a polynomial of its own vertices"):
        pm.interval_around("F", 3, 2, [Fraction(4, 7), Fraction(2, 7), Fraction(1, 7)])
    with pytest.raises(ExactnessError):
        pm.interval_around("U", 3, 1.5)
    with pytest.raises(ValueError, match="must be > 1"):
        pm.interval_around("U", 3, 1)
    with pytest.raises(ValueError, match="interval_around: U is decomposed for n <= 6"):
        pm.interval_around("U", 7, 2)


def test_explore_chambers_around(capsys):
    from dpfix.cli import main

    assert main(["explore", "chambers", "--n", "5", "--around", "6/5"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "U(n=5) at lam = 6/5: 68805 vertices",
        "the same type on (1, 1.465571232), from 1 to the root of lam^3 - lam^2 - 1 near "
        "1.465571232 (within the chamber holding lam)"]
    assert main(["explore", "chambers", "--n", "3", "--around", "2", "--confirm"]) == 2
    assert main(["explore", "--around", "2"]) == 2
    assert "--around: only with 'dpfix explore chambers'" in capsys.readouterr().err


@pytest.mark.full
def test_u6_has_a_wall_below_every_root_of_the_u5_rule():
    """docs/every_lam.md section 3: the root of lam^5 - lam^2 - 1 is a breakpoint of
    U(6), below 1.3802..., the smallest root of lam^a (lam - 1)^b = 1 with a + b <= 4."""
    below = pm.interval_around("U", 6, Fraction(119, 100), processes=2)
    above = pm.interval_around("U", 6, Fraction(6, 5), processes=2)
    assert (below.count, above.count) == (35350086, 35332806)
    assert below._hi.minimal_polynomial == above._lo.minimal_polynomial == [-1, 0, -1, 0, 0, 1]
    assert pm._cmp(below._hi, above._lo) == 0 and float(above.lo) < 1.3802
    assert below._lo.minimal_polynomial == [-2, 0, 0, 0, 1]
    assert above._hi.minimal_polynomial == [-1, -1, 0, 0, 1]


@pytest.mark.full
def test_u6_at_its_wall_below_the_rule():
    """docs/every_lam.md section 3: U(6) at the root of lam^5 - lam^2 - 1, over Q(lam)."""
    r = dpfix.algebraic("x^5 - x^2 - 1", Fraction(1194, 1000))
    assert U(6, r).count_vertices(limit=None) == 35233446


@pytest.mark.full
def test_u6_has_a_wall_at_two():
    """docs/every_lam.md section 3 and the README's table: lam = 2 is a wall of U(6)."""
    below = pm.interval_around("U", 6, Fraction(199, 100), processes=2)
    above = pm.interval_around("U", 6, Fraction(201, 100), processes=2)
    assert (below.count, above.count) == (30225006, 28266846)
    assert below.hi == above.lo == 2
    assert below._lo.minimal_polynomial == [-1, -1, -1, -1, -1, -1, 1]
    assert above._hi.minimal_polynomial == [-1, -2, -1, 1]
    from dpfix.theory.enumeration import u_vertex_count

    assert u_vertex_count(6, Fraction(2), processes=2) == 25827726
