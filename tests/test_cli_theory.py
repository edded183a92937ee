"""The research commands: ``dpfix verify`` and ``dpfix explore``."""

import textwrap

import pytest

from dpfix.cli import main
from dpfix.explore.counterexamples import find_example1
from dpfix.theory.polytopes import RF, F
from dpfix.theory.representation import is_psi_affinely_simplified, psi_map


def test_verify_runs_one_check_and_prints_the_table(capsys):
    assert main(["verify", "--quick", "--only", "Corollary 2"]) == 0
    out = capsys.readouterr().out
    assert "Corollary 2" in out and "ok" in out and "1 passed, 0 failed" in out


def test_verify_reports_failures_and_empty_checks(tmp_path, capsys):
    (tmp_path / "check_broken.py").write_text(textwrap.dedent("""
        RESULT = "Broken"
        STATEMENT = "always fails"
        def run(mode):
            assert 1 == 2, "case n=2 fails"
    """))
    (tmp_path / "check_empty.py").write_text(textwrap.dedent("""
        RESULT = "Empty"
        STATEMENT = "checks nothing"
        def run(mode):
            return 0
    """))
    assert main(["verify", "--dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "case n=2 fails" in out and "no case checked" in out and "0 passed, 2 failed" in out


def test_verify_unknown_only_is_a_clean_error(capsys):
    assert main(["verify", "--only", "Theorem 99"]) == 2
    assert "matches no check" in capsys.readouterr().err


def test_explore_prints_counts_dimensions_and_graphs(capsys):
    assert main(["explore", "--n", "2", "--lam", "2", "--z", "1/2", "1/2"]) == 0
    out = capsys.readouterr().out
    assert "R_F[z]" in out and "diameter" in out
    # n = 2, lam = 2: U is a quadrilateral (2 free entries, 4 vertices)
    u_row = next(line for line in out.splitlines() if line.startswith("U "))
    assert u_row.split()[1:3] == ["2", "4"]


@pytest.mark.parametrize("argv, message", [
    (["explore", "--lam", "1"], "must be > 1"),
    (["explore", "--n", "3", "--z", "1/2", "1/2"], "length"),
    (["explore", "--lam", "0.5x"], "cannot read"),
])
def test_explore_bad_input(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_example1_both_phenomena_exactly(capsys):
    ex = find_example1()
    assert (ex.B1 != ex.B2).any()
    assert (psi_map(ex.B1, ex.lam) == ex.T).all() and (psi_map(ex.B2, ex.lam) == ex.T).all()
    R = RF(3, ex.lam, ex.z)
    assert R.is_extreme(ex.B1) and R.is_extreme(ex.B2)
    assert is_psi_affinely_simplified(ex.B1, ex.z, ex.lam)
    assert F(3, ex.lam, ex.z).is_extreme(ex.T)
    assert RF(3, ex.lam3, ex.z3).is_extreme(ex.B3)
    assert F(3, ex.lam3, ex.z3).contains(ex.T3) and not F(3, ex.lam3, ex.z3).is_extreme(ex.T3)
    assert main(["explore", "example1"]) == 0
    out = capsys.readouterr().out
    assert "B1" in out and "B2" in out and "B3" in out and "not extreme" in out


def test_verify_refuses_a_missing_or_empty_folder(tmp_path, capsys):
    assert main(["verify", "--dir", str(tmp_path / "nope")]) == 2
    assert "no such folder" in capsys.readouterr().err
    assert main(["verify", "--dir", str(tmp_path)]) == 2
    assert "nothing would be verified" in capsys.readouterr().err


def test_explore_refuses_large_n_and_skips_what_does_not_fit(capsys):
    assert main(["explore", "--n", "13"]) == 2
    assert "2..12" in capsys.readouterr().err
    assert main(["explore", "--n", "7", "--lam", "2"]) == 0
    out = capsys.readouterr().out
    assert "R_F[z]: skipped at n = 7 > 6" in out and "limited to n <= 5" in out


def test_failures_are_one_line(monkeypatch, capsys):
    import dpfix.cli.explore

    def broken(args):
        raise RuntimeError("solver gave up")
    monkeypatch.setattr(dpfix.cli.explore, "run", broken)
    assert main(["explore"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == "dpfix explore: failed: RuntimeError: solver gave up"


def _toy_checks(folder, results):
    """Check scripts in ``folder``: name -> (RESULT, body of run(mode))."""
    for name, (result, body) in results.items():
        (folder / f"check_{name}.py").write_text(
            f"RESULT = {result!r}\nSTATEMENT = 'a toy check'\n"
            f"def run(mode):\n    {body}\n")


def test_verify_only_matches_whole_words(tmp_path, capsys):
    _toy_checks(tmp_path, {"theorem1": ("Theorem 1", "return 1"),
                           "theorem10": ("Theorem 10", "return 10")})
    assert main(["verify", "--dir", str(tmp_path), "--only", "Theorem 1"]) == 0
    out = capsys.readouterr().out
    assert "1 passed" in out and "Theorem 10" not in out
    assert main(["verify", "--dir", str(tmp_path), "--only", "Theorem 10"]) == 0
    out = capsys.readouterr().out
    assert "1 passed" in out and "Theorem 10" in out
    # the real scripts: Theorem 1 is one check, not Theorem 10 too
    from dpfix.explore.verification import find_checks_dir, load_checks
    assert [n for n, _ in load_checks(find_checks_dir(), "Theorem 1")] == ["theorem1_cyclic"]


def test_verify_in_worker_processes_prints_the_table_of_one_process(tmp_path, capsys):
    _toy_checks(tmp_path, {"a": ("Lemma A", "return 3"),
                           "b": ("Lemma B", "assert mode == 'full', 'fails at n = 2'"),
                           "c": ("Lemma C", "import math; return math.isqrt(49)"),
                           "d": ("Lemma D", "raise RuntimeError('solver gave up')"),
                           "e": ("Lemma E", "return 0")})

    def table(jobs):
        code = main(["verify", "--dir", str(tmp_path), "--jobs", str(jobs)])
        out = capsys.readouterr().out
        # the seconds column and total differ from run to run
        rows = [line.rsplit(None, 1)[0] if line.startswith("Lemma") else line
                for line in out.splitlines() if not line.startswith("3 passed")]
        return code, [r for r in rows if "Traceback" not in r and 'File "' not in r]

    one, two = table(1), table(2)
    assert one[0] == two[0] == 1
    assert one == two
    text = "\n".join(two[1])
    assert text.index("Lemma A") < text.index("Lemma C") < text.index("Lemma E")
    assert "fails at n = 2" in text and "solver gave up" in text and "no case checked" in text


def test_verify_refuses_no_worker_in_one_line(capsys):
    assert main(["verify", "--jobs", "0"]) == 2
    err = capsys.readouterr().err
    assert "--jobs" in err and len(err.strip().splitlines()) == 1


def test_verify_finds_the_checks_of_an_installed_package(tmp_path, monkeypatch, capsys):
    """Outside a checkout (no ./proofs_checks, none beside the sources) the checks come from
    the package dpfix.proofs_checks, as a wheel installs them; $DPFIX_CHECKS comes first."""
    import dpfix
    import dpfix.explore.verification as V

    # a package name of its own: the editable install of a checkout maps the real
    # dpfix.proofs_checks onto ./proofs_checks (tests/test_packaging.py installs the wheel)
    monkeypatch.setattr(V, "CHECKS_PACKAGE", "dpfix.toy_proofs_checks")
    installed = tmp_path / "site" / "toy_proofs_checks"
    installed.mkdir(parents=True)
    (installed / "__init__.py").write_text("")
    (installed / "check_toy.py").write_text(textwrap.dedent("""
        RESULT = "Toy"
        STATEMENT = "a check shipped in the package"
        def run(mode):
            return 3
    """))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DPFIX_CHECKS", raising=False)
    monkeypatch.setattr(V, "__file__", str(tmp_path / "lib" / "python" / "dpfix" / "v.py"))
    with pytest.raises(FileNotFoundError, match="no proofs_checks folder"):
        V.find_checks_dir()
    monkeypatch.setattr(dpfix, "__path__", [*dpfix.__path__, str(tmp_path / "site")])
    assert V.find_checks_dir() == installed
    assert main(["verify"]) == 0
    assert "Toy" in capsys.readouterr().out
    monkeypatch.setenv("DPFIX_CHECKS", str(tmp_path))
    assert V.find_checks_dir() == tmp_path


def test_explore_northwest_prints_the_smallest_zero_one_counterexample(capsys):
    assert main(["explore", "northwest", "--loss", "zero-one", "--n-max", "3"]) == 0
    out = capsys.readouterr().out
    assert "n = 3, lam = 3, z = (1/4, 1/4, 1/2)" in out
    assert "northwest corner: 85/252" in out and "optimum over F: 1/3" in out


def test_explore_northwest_finds_none_for_a_convex_loss(capsys):
    assert main(["explore", "northwest", "--loss", "hinge:1", "--n-max", "3"]) == 0
    assert "optimal over F on every instance searched" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--loss", "cubic"], "unknown loss 'cubic'"),
    (["--n-max", "9"], "--n-max: must be in 2..6"),
])
def test_explore_northwest_bad_input(argv, message, capsys):
    assert main(["explore", "northwest", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def _absent_optional_check(tmp_path, monkeypatch, module="dpfix_absent_optional"):
    """A check folder whose first check imports an optional module that is not installed."""
    from dpfix.explore import verification
    monkeypatch.setitem(verification.OPTIONAL_MODULES, "dpfix_absent_optional",
                        ("production", "AbsentWavelets"))
    (tmp_path / "check_a_needs_extra.py").write_text(textwrap.dedent(f"""
        RESULT = "Needs extra"
        STATEMENT = "imports an optional module"
        from dpfix.numbers.numeric import require
        def run(mode):
            require({module!r})
            return 1
    """))
    (tmp_path / "check_b_plain.py").write_text(textwrap.dedent("""
        RESULT = "Plain"
        STATEMENT = "needs nothing"
        def run(mode):
            return 3
    """))


def test_verify_skips_a_check_whose_extra_is_missing(tmp_path, monkeypatch, capsys):
    _absent_optional_check(tmp_path, monkeypatch)
    assert main(["verify", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "skipped: needs" in line]
    assert lines == ["Needs extra (a_needs_extra): skipped: needs dpfix[production] "
                     "(AbsentWavelets)"]
    assert "1 passed, 0 failed, 1 skipped" in out and "Traceback" not in out


def test_verify_with_only_skipped_checks_verifies_nothing(tmp_path, monkeypatch, capsys):
    _absent_optional_check(tmp_path, monkeypatch)
    assert main(["verify", "--dir", str(tmp_path), "--only", "Needs extra"]) == 1
    assert "nothing was verified" in capsys.readouterr().out


@pytest.mark.parametrize("module", ["dpfix_not_optional_at_all", "numpy.not_a_submodule"])
def test_verify_a_missing_module_outside_the_extras_is_an_error(tmp_path, monkeypatch, capsys,
                                                                 module):
    _absent_optional_check(tmp_path, monkeypatch, module)
    assert main(["verify", "--dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "ERROR" in out and "1 passed, 1 failed, 0 skipped" in out


def test_verify_times_agree_between_help_and_readme(capsys):
    """The help text and the README state the same times for --quick and --full."""
    from pathlib import Path

    from dpfix.cli.verify import FULL_TIME, QUICK_TIME

    try:
        assert main(["verify", "--help"]) == 0
    except SystemExit as exc:
        assert exc.code == 0
    helptext = " ".join(capsys.readouterr().out.split())
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text().split())
    for stated in (QUICK_TIME, FULL_TIME):
        assert stated in helptext and stated in readme, stated
    assert "25 minutes" not in readme and "571 s" not in readme
