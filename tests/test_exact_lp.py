"""The one exact LP of the library (:mod:`dpfix.numbers.exact_lp`): optima and their dual
certificates against an independent solver, one error policy, and cddlib's C-level
messages kept off the process's standard output."""

from __future__ import annotations

import ctypes
import os
import threading
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from dpfix.numbers.exact_lp import (
    ExactLPError,
    certificate_holds,
    exact_lp,
    quiet_c_stdout,
)

F = Fraction


def _simplex_rows(d: int) -> tuple[list, list]:
    """``x >= 0`` and ``sum x = 1``: the probability simplex in ``d`` variables."""
    ub = [({k: F(-1)}, F(0)) for k in range(d)]
    eq = [({k: F(1) for k in range(d)}, F(1))]
    return ub, eq


small = st.fractions(min_value=-5, max_value=5, max_denominator=4)


@settings(max_examples=40, deadline=None)
@given(c=st.lists(small, min_size=2, max_size=4),
       caps=st.lists(st.fractions(min_value=F(1, 2), max_value=2, max_denominator=3),
                     min_size=2, max_size=4),
       maximize=st.booleans())
def test_optimum_and_certificate_agree_with_highs(c, caps, maximize):
    d = min(len(c), len(caps))
    c, caps = c[:d], caps[:d]
    ub, eq = _simplex_rows(d)
    ub += [({k: F(1)}, caps[k]) for k in range(d)]  # x_k <= cap_k (caps sum >= 1: feasible)
    lp = exact_lp(c, ub, eq, maximize=maximize, certify=True)
    assert lp.status == "OPTIMAL"
    assert certificate_holds(c, ub, eq, lp.primal, lp.eq_dual, lp.ub_dual, lp.optimum, maximize)
    sign = -1.0 if maximize else 1.0
    ref = linprog(sign * np.array(c, dtype=float), A_ub=np.eye(d), b_ub=[float(v) for v in caps],
                  A_eq=np.ones((1, d)), b_eq=[1.0], bounds=[(0, None)] * d, method="highs")
    assert ref.status == 0
    assert float(lp.optimum) == pytest.approx(sign * ref.fun, abs=1e-9)


def test_the_duals_are_cdds_multipliers_folded_per_row():
    # min x0 + 2 x1 on the simplex: x = (1, 0); c = y_e (1, 1) + y_1 (-1, 0) + y_2 (0, -1)
    ub, eq = _simplex_rows(2)
    lp = exact_lp([1, 2], ub, eq, dual=True)
    assert (lp.optimum, lp.primal, lp.eq_dual, lp.ub_dual) == (1, [1, 0], [1], [0, -1])
    assert exact_lp([1, 2], ub, eq).eq_dual is None  # not asked for


def test_a_forged_certificate_fails():
    ub, eq = _simplex_rows(2)
    lp = exact_lp([1, 2], ub, eq, dual=True)
    assert not certificate_holds([1, 2], ub, eq, lp.primal, lp.eq_dual, lp.ub_dual, F(1, 2))
    assert not certificate_holds([1, 2], ub, eq, [F(1, 2), F(1, 2)], lp.eq_dual, lp.ub_dual,
                                 lp.optimum)
    assert not certificate_holds([1, 2], ub, eq, lp.primal, lp.eq_dual, [F(0), F(1)],
                                 lp.optimum)


@pytest.mark.parametrize("objective, eq, status", [
    ([1, 1], [({0: F(1), 1: F(1)}, F(-1))], "INCONSISTENT"),  # x >= 0 with a negative sum
])
def test_one_error_policy_carries_cdds_status(objective, eq, status):
    ub, _ = _simplex_rows(2)
    with pytest.raises(ExactLPError, match=rf"^probe: cdd's exact LP ended with status {status}$"
                       ) as info:
        exact_lp(objective, ub, eq, who="probe")
    assert info.value.status == status and isinstance(info.value, RuntimeError)


def test_an_unbounded_objective_is_refused():
    with pytest.raises(ExactLPError) as info:
        exact_lp([-1], [({0: F(-1)}, F(0))])  # min -x over x >= 0
    assert info.value.status != "OPTIMAL"


# -- C-level standard output -----------------------------------------------------------
def _c_printf(text: bytes) -> None:
    """``printf`` of the C library: buffered by C's stdio, as cddlib's messages are."""
    libc = ctypes.CDLL(None)
    libc.printf(b"%s", text)


@pytest.mark.skipif(os.name != "posix", reason="the C library by ctypes.CDLL(None)")
def test_c_level_writes_inside_the_guard_never_reach_stdout(capfd):
    os.write(1, b"before\n")
    with quiet_c_stdout():
        os.write(1, b"unbuffered C-level write\n")
        _c_printf(b"max number 100 of pivots performed in Phase I. Switch to the "
                  b"anticycling phase.\n")
    os.write(1, b"after\n")
    _c_printf(b"printf after\n")
    ctypes.CDLL(None).fflush(None)
    out = capfd.readouterr().out
    assert "before\n" in out and "after\n" in out and "printf after\n" in out
    assert "unbuffered" not in out and "anticycling" not in out


@pytest.mark.skipif(os.name != "posix", reason="the C library by ctypes.CDLL(None)")
def test_the_guard_restores_stdout_when_the_block_raises(capfd):
    with pytest.raises(ZeroDivisionError), quiet_c_stdout():
        os.write(1, b"hidden\n")
        _ = 1 / 0
    os.write(1, b"visible again\n")
    assert capfd.readouterr().out == "visible again\n"


@pytest.mark.skipif(os.name != "posix", reason="the C library by ctypes.CDLL(None)")
def test_nested_and_concurrent_guards_restore_stdout(capfd):
    def work() -> None:
        for _ in range(20):
            with quiet_c_stdout(), quiet_c_stdout():
                os.write(1, b"inner\n")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    os.write(1, b"end\n")
    assert capfd.readouterr().out == "end\n"


def test_python_output_before_the_guard_is_kept(capfd):
    print("written by Python before", end="")  # buffered in sys.stdout until flushed
    with quiet_c_stdout():
        pass
    assert capfd.readouterr().out == "written by Python before"


def _lp_calls():
    """One call of every public function that solves an exact LP (six places)."""
    from dpfix.certify import exact_optimum
    from dpfix.constructors import lp_optimum
    from dpfix.constructors.joint import grid_lp_optimum
    from dpfix.explore.graph_mechanisms import exact_minimum
    from dpfix.theory import polytopes
    from dpfix.theory.delta import representation_of

    half = [F(1, 2), F(1, 2)]
    return {
        "Polytope.maximize": lambda: polytopes.U(2, 2).maximize([[1, 0], [0, 1]]),
        "representation_of": lambda: representation_of([["1/10", "9/10"], [0, 1]], 2),
        "lp_optimum": lambda: lp_optimum(half, lam=2, solver="exact"),
        "grid_lp_optimum": lambda: grid_lp_optimum([[F(1, 2), F(0)], [F(0), F(1, 2)]], lam=2),
        "exact_optimum": lambda: exact_optimum(half, 2),
        "exact_minimum": lambda: exact_minimum(polytopes.U(2, 2), [[0, 1], [1, 0]]),
    }


@pytest.mark.skipif(os.name != "posix", reason="the C library by ctypes.CDLL(None)")
@pytest.mark.parametrize("name", list(_lp_calls()))
def test_what_cdd_prints_in_an_lp_never_reaches_stdout(name, capfd, monkeypatch):
    """cdd's solver, made to write as cddlib does (C's printf, then a raw write), inside
    every exact LP of the library: nothing reaches descriptor 1."""
    import cdd.gmp

    real = cdd.gmp.linprog_solve
    calls = []

    def noisy(lp):
        calls.append(1)
        _c_printf(b"max number 10 of pivots performed in Phase I. Switch to the "
                  b"anticycling phase.\n")
        os.write(1, b"raw write from the solver\n")
        return real(lp)

    monkeypatch.setattr(cdd.gmp, "linprog_solve", noisy)
    _lp_calls()[name]()
    ctypes.CDLL(None).fflush(None)
    out = capfd.readouterr().out
    assert calls, f"{name} solved no LP through cdd"
    assert "anticycling" not in out and "raw write" not in out, out
