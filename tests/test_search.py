"""dpfix.explore.search: the exploration engine's contract (order, witnesses, jobs, cache, budget,
errors, exactness)."""

from __future__ import annotations

import itertools
import json
import multiprocessing
import signal
import time
import warnings
from datetime import timedelta
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpfix.explore.cases import standard_z
from dpfix.explore.instances import Instance, compositions, lams_by_height, targets_by_denominator
from dpfix.explore.search import (
    OVERS,
    BudgetReached,
    Counterexample,
    PredicateError,
    PredicateTypeError,
    smallest_counterexample,
    survey,
)
from dpfix.numbers.exact import ExactnessError
from dpfix.theory.mechanism import Mechanism
from dpfix.theory.polytopes import RF, RU, F, U

HALF, THIRD = Fraction(1, 2), Fraction(1, 3)


# ------------------------------------------------------------ module-level predicates (pickle)
def monotone_column(T: np.ndarray, inst: Instance) -> bool:
    """Some column of T is monotone (false from n = 3 on)."""
    return any(all(T[i, j] <= T[i + 1, j] for i in range(inst.n - 1)) or
               all(T[i, j] >= T[i + 1, j] for i in range(inst.n - 1)) for j in range(inst.n))


def raises_at_zero_entry(T: np.ndarray, inst: Instance) -> bool:
    if 0 in inst.z:
        raise ZeroDivisionError(f"a zero entry in {inst.z}")
    return True


def sleeps_forever(inst: Instance) -> bool:
    while True:
        time.sleep(0.05)


def spins_forever(inst: Instance) -> bool:
    while True:
        pass


def hangs_at_half(inst: Instance) -> bool:
    while inst.z == (HALF, HALF):
        time.sleep(0.05)
    return True


def returns_none_at_half(inst: Instance) -> bool | None:
    return None if inst.z == (HALF, HALF) else True


def exits(inst: Instance) -> bool:
    raise SystemExit(0)


def always_instance(inst: Instance) -> bool:
    return True


def fails_on_last_z_entry(inst: Instance) -> bool:
    return inst.z[-1] < Fraction(2, 3)


CALLS: list[Instance] = []


def counted(inst: Instance) -> bool:
    CALLS.append(inst)
    return inst.z[0] != Fraction(1, 5)


def counted_everywhere(inst: Instance) -> bool:
    CALLS.append(inst)
    return True


def always(x: object, inst: Instance) -> bool:
    return True


# ------------------------------------------------------------------ the visiting order
targets = st.lists(st.integers(0, 4), min_size=2, max_size=4).filter(any).map(
    lambda w: tuple(Fraction(x, sum(w)) for x in w))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sets(st.integers(2, 4), min_size=1, max_size=3),
       st.lists(st.sampled_from([2, 3, Fraction(3, 2), Fraction(5, 4)]), min_size=1,
                max_size=3, unique=True),
       st.lists(targets, min_size=1, max_size=5, unique=True),
       st.data())
def test_instances_visited_in_the_contract_order(ns, lams, zs, data) -> None:
    expected = [Instance(n, lam, z) for n in sorted(ns) for lam in lams for z in zs
                if len(z) == n]  # n ascending, lam given, z given, wrong lengths skipped
    seen: list[Instance] = []

    def record(inst: Instance) -> bool:
        seen.append(inst)
        return True
    order = list(ns)  # in any order: visited ascending
    if not expected:  # every target of another length: no instance, refused
        with pytest.raises(ValueError, match="give no instance"):
            smallest_counterexample(record, over="instance", n=order, lam=lams, z=zs)
        return
    assert not smallest_counterexample(record, over="instance", n=order, lam=lams, z=zs)
    assert seen == expected
    if expected:
        k = data.draw(st.integers(0, len(expected) - 1))

        def fail_at_k(inst: Instance) -> bool:
            return inst != expected[k]
        ce = smallest_counterexample(fail_at_k, over="instance", n=iter(sorted(ns)),
                                     lam=iter(lams), z=iter(zs)).counterexample
        assert ce.instance == expected[k] and ce.visited == k + 1 and ce.witness is None


def test_generators_are_replayed_for_each_n() -> None:
    seen: list[Instance] = []

    def record(inst: Instance) -> bool:
        seen.append(inst)
        return True
    smallest_counterexample(record, over="instance", n=[2, 3], lam=lams_by_height(3),
                            z=compositions(2))
    assert [(i.n, i.lam) for i in seen[:1]] == [(2, 2)]
    assert len(seen) == 3 * (3 + 6)  # 3 lams x (3 targets at n = 2, 6 at n = 3)
    assert sorted(seen, key=lambda i: i.n) == seen


@pytest.mark.parametrize("over, make", [
    ("F", lambda i: F(i.n, i.lam, i.z_array())), ("RF", lambda i: RF(i.n, i.lam, i.z_array())),
    ("U", lambda i: U(i.n, i.lam)), ("RU", lambda i: RU(i.n, i.lam)),
])
def test_vertices_in_the_polytope_order(over: str, make) -> None:
    got: list[tuple] = []

    def record(V: np.ndarray, inst: Instance) -> bool:
        assert V.dtype == object and all(isinstance(x, Fraction) for x in V.flat)
        got.append((inst, V.tolist()))
        return True
    smallest_counterexample(record, over=over, n=2, lam=[2, 3], z=[(HALF, HALF), (1, 0)])
    insts = list(dict.fromkeys(i for i, _ in got))
    assert [i.z is None for i in insts] == [over in ("U", "RU")] * len(insts)
    assert got == [(i, V.tolist()) for i in insts for V in make(i).vertices()]


def test_pairs_a_before_b() -> None:
    got = []

    def record(pair: tuple, inst: Instance) -> bool:
        got.append(tuple(x.tolist() for x in pair))
        return True
    smallest_counterexample(record, over="F-pairs", n=3, z=[(THIRD,) * 3])
    V = F(3, 2, [THIRD] * 3).vertices()
    assert got == [(a.tolist(), b.tolist()) for a, b in itertools.combinations(V, 2)]
    ce = smallest_counterexample(lambda p, inst: False, over="RF-pairs", n=2,
                                 z=[(HALF, HALF)]).counterexample
    a, b = ce.witness
    V = RF(2, 2, [HALF, HALF]).vertices()
    assert (a == V[0]).all() and (b == V[1]).all()
    assert "a:" in str(ce) and "b:" in str(ce)


# ------------------------------------------------------------------ results
def test_counterexample_is_exact_and_prints_exactly() -> None:
    ce = smallest_counterexample(monotone_column, over="F", n=range(2, 5), lam=[2]).counterexample
    assert isinstance(ce, Counterexample)
    assert ce.instance == Instance(3, 2, standard_z(3)["uniform"])
    assert (ce.n, ce.lam, ce.z) == (3, Fraction(2), (THIRD,) * 3) and ce.visited == 5
    assert ce.witness.dtype == object and F(3, 2, [THIRD] * 3).is_extreme(ce.witness)
    assert not monotone_column(ce.witness, ce.instance)
    text = str(ce)
    assert "n = 3, lam = 2, z = (1/3, 1/3, 1/3)" in text and "7/20" in text
    assert "." not in text.split("witness:")[1]  # no decimals


def test_mechanism_over() -> None:
    got = []

    def record(M: Mechanism, inst: Instance) -> bool:
        got.append(M)
        return bool(M.matrix[0, 0] != 1)
    ce = smallest_counterexample(record, over="mechanism", n=2,
                                 z=[(HALF, HALF), (1, 0)]).counterexample
    assert isinstance(got[0], Mechanism) and ce.instance.z == (1, 0)
    from dpfix.constructors import construct
    assert ce.witness.dtype == object
    assert ce.witness.tolist() == construct([1, 0], lam=2).matrix.tolist() == [[1, 0], [1, 0]]
    assert not smallest_counterexample(always, over="mechanism:heuristic", n=3)
    with pytest.raises(ValueError, match="unknown constructor"):
        smallest_counterexample(always, over="mechanism:nope", n=3)


def test_delta_forms() -> None:
    got = []

    def record(V: np.ndarray, inst: Instance) -> bool:
        got.append(V.tolist())
        return True
    smallest_counterexample(record, over="F_delta", n=2, z=[(HALF, HALF)], delta="1/10")
    assert got == [V.tolist() for V in F(2, 2, [HALF, HALF], "1/10").vertices()]
    with pytest.raises(ValueError, match="delta="):
        smallest_counterexample(always, over="U_delta", n=2)
    with pytest.raises(ValueError, match="delta"):
        smallest_counterexample(always, over="U", n=2, delta="1/10")


def test_survey_counts_and_table() -> None:
    s = survey(monotone_column, over="F", n=[2, 3], lam=[2, 3])
    assert s.counts[(2, Fraction(2))] == {"held": 4, "failed": 0, "errored": 0}
    assert s.counts[(3, Fraction(3))] == {"held": 1, "failed": 3, "errored": 0}
    assert s.visited == 16 and s.complete and not s.holds and len(s.failures) == 6
    assert [ce.visited for ce in s.failures] == [9, 10, 11, 13, 14, 15]
    text = str(s)
    assert "16 instances visited" in text and "complete" in text
    assert "failed at n = 3, lam = 2, z = (1/3, 1/3, 1/3)" in text


# ------------------------------------------------------------------ errors
def test_predicate_that_raises_is_reported() -> None:
    with pytest.raises(PredicateError) as info:
        smallest_counterexample(raises_at_zero_entry, over="F", n=[2, 3])
    err = info.value
    assert err.instance == Instance(2, 2, standard_z(2)["zero"])
    assert err.witness.dtype == object and F(2, 2, [1, 0]).contains(err.witness)
    assert "ZeroDivisionError: a zero entry" in err.traceback and "raise" in err.traceback
    assert "raises_at_zero_entry" in str(err)
    s = survey(raises_at_zero_entry, over="F", n=[2, 3])
    assert [e.instance.z for e in s.errors] == [(1, 0), (Fraction(2, 3), 0, Fraction(1, 3))]
    assert s.counts[(3, Fraction(2))]["errored"] == 1 and s.visited == 8


def test_non_bool_results_are_refused() -> None:
    with pytest.raises(TypeError, match="returned NoneType None.*must return a bool"):
        smallest_counterexample(lambda T, inst: None, over="F", n=2)
    with pytest.raises(TypeError, match="returned ndarray"):
        smallest_counterexample(lambda T, inst: T > 0, over="F", n=2)
    assert not smallest_counterexample(lambda T, inst: np.bool_(True), over="F", n=2)
    for jobs in (1, 2):
        with pytest.raises(PredicateTypeError, match="returned NoneType None") as info:
            survey(returns_none_at_half, over="instance", n=2, z=compositions(2), jobs=jobs)
        assert info.value.instance == Instance(2, 2, (HALF, HALF))


def test_sys_exit_in_a_predicate_is_an_error_not_an_exit() -> None:
    with pytest.raises(PredicateError) as info:
        smallest_counterexample(exits, over="instance", n=2, z=compositions(2))
    assert info.value.exception_type == "SystemExit" and info.value.instance.z == (0, 1)
    s = survey(exits, over="instance", n=2, z=compositions(2), jobs=2)
    assert s.counts[(2, Fraction(2))]["errored"] == 3
    assert [e.exception_type for e in s.errors] == ["SystemExit"] * 3


def test_an_empty_set_of_instances_is_refused() -> None:
    with pytest.raises(ValueError, match="instances: the iterable is empty"):
        smallest_counterexample(always, over="F", instances=[])
    with pytest.raises(ValueError, match="give no instance"):
        survey(always, over="F", n=2, z=[(THIRD, THIRD, THIRD)])
    with pytest.warns(BudgetReached, match="after 0 instances"):  # stopped, not empty
        assert not smallest_counterexample(always, over="F", n=2, z=[(HALF, HALF)], budget=0)


# ------------------------------------------------------------------ a predicate that never returns
@pytest.mark.parametrize("predicate", [sleeps_forever, spins_forever])
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_time_budget_stops_a_predicate_that_never_returns(predicate, jobs) -> None:
    with pytest.warns(BudgetReached, match=r"reached after 0 instances"):
        assert not smallest_counterexample(predicate, over="instance", n=2, z=compositions(2),
                                           budget="1s", jobs=jobs)
    assert multiprocessing.active_children() == []  # no worker left behind
    assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@pytest.mark.parametrize("jobs, seconds", [(1, 2), (2, 15)])  # 2 workers: seconds to start
def test_the_deadline_keeps_what_was_visited_before_it(jobs, seconds) -> None:
    """(0, 1) and (1, 0) hold; the predicate never returns at (1/2, 1/2)."""
    s = survey(hangs_at_half, over="instance", n=2, z=compositions(2), budget=f"{seconds}s",
               jobs=jobs)
    assert (s.visited, s.complete) == (2, False) and s.counts[(2, Fraction(2))]["held"] == 2
    assert f"budget ({seconds} s) reached after 2 instances" in s.stopped
    assert multiprocessing.active_children() == []


def test_a_budget_alarm_leaves_a_caller_timer_alone() -> None:
    """A timer of the caller is kept: the deadline is then checked between instances."""
    signal.setitimer(signal.ITIMER_REAL, 3600)
    try:
        s = survey(always_instance, over="instance", n=2, z=compositions(3), budget="30s")
        assert s.complete and 0 < signal.getitimer(signal.ITIMER_REAL)[0] <= 3600
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def test_floats_refused() -> None:
    with pytest.raises(ExactnessError):
        smallest_counterexample(always, over="F", n=2, lam=[2.0])
    with pytest.raises(ExactnessError):
        smallest_counterexample(always, over="F", n=2, lam=1.5)
    with pytest.raises(ExactnessError):
        smallest_counterexample(always, over="F", n=2, z=[(0.5, 0.5)])
    with pytest.raises(ExactnessError):
        survey(always, over="F", n=2, z=np.array([0.5, 0.5]))


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="choose from instance, U, F, RF, RU"):
        smallest_counterexample(always, over="G", n=2)
    with pytest.raises(ValueError, match="jobs"):
        smallest_counterexample(always, over="F", n=2, jobs=0)
    with pytest.raises(ValueError, match="n: give"):
        smallest_counterexample(always, over="F")
    with pytest.raises(ValueError, match="instances= replaces"):
        smallest_counterexample(always, over="F", n=2, instances=[Instance(2, 2, (1, 0))])
    with pytest.raises(TypeError, match="picklable"):
        smallest_counterexample(lambda T, inst: True, over="F", n=2, jobs=2)
    assert set(OVERS) >= {"instance", "U", "F", "RF", "RU", "F-pairs", "RF-pairs",
                          "mechanism", "U_delta", "F_delta", "RF_delta", "RU_delta"}


def test_single_target_and_defaults() -> None:
    seen = []

    def record(inst: Instance) -> bool:
        seen.append(inst)
        return True
    smallest_counterexample(record, over="instance", n=[2, 3], z=["1/3", "1/3", "1/3"])
    assert seen == [Instance(3, 2, (THIRD,) * 3)]
    seen.clear()
    smallest_counterexample(record, over="instance", n=[2, 3])
    assert seen == [Instance(2, 2), Instance(3, 2)]  # "instance" without z: no target
    ce = smallest_counterexample(lambda T, inst: False, over="F", n=3).counterexample
    assert ce.z == tuple(standard_z(3)["uniform"])  # default: the named targets
    ce = smallest_counterexample(lambda T, inst: False, over="U", n=3, z=[(1, 0, 0)]).counterexample
    assert ce.z is None  # U takes no target


def test_explicit_instances() -> None:
    insts = [Instance(3, 3, (THIRD,) * 3), Instance(2, 2, (HALF, HALF))]
    seen = []

    def record(inst: Instance) -> bool:
        seen.append(inst)
        return inst.n != 2
    ce = smallest_counterexample(record, over="instance", instances=insts).counterexample
    assert seen == insts and ce.visited == 2


# ------------------------------------------------------------------ budget
def test_instance_budget_stops_and_says_so() -> None:
    with pytest.warns(BudgetReached, match=r"reached after 5 instances \(last: Instance\(n=2"):
        assert not smallest_counterexample(always, over="F", n=2,
                                           z=targets_by_denominator(2), budget=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the whole space in budget: no warning
        assert not smallest_counterexample(always, over="F", n=2, budget=4)
    s = survey(always, over="F", n=2, z=targets_by_denominator(2), budget="7")
    assert s.visited == 7 and not s.complete and "reached after 7" in s.stopped
    assert "stopped: budget" in str(s)


def test_time_budget_ends_an_infinite_search() -> None:
    s = survey(fails_on_last_z_entry, over="instance", n=2, z=targets_by_denominator(2),
               budget=timedelta(milliseconds=200))
    assert s.visited > 0 and not s.complete and s.elapsed < 5
    s2 = survey(fails_on_last_z_entry, over="instance", n=2, z=targets_by_denominator(2),
                budget={"seconds": 0.1, "instances": 3})
    assert s2.visited == 3


@pytest.mark.parametrize("budget", ["30 parsecs", -1, 1.5, True, {"minutes": 2}])
def test_bad_budgets(budget) -> None:
    with pytest.raises((ValueError, TypeError), match="budget"):
        smallest_counterexample(always, over="F", n=2, budget=budget)


# ------------------------------------------------------------------ jobs
def test_jobs_two_gives_the_answer_of_jobs_one() -> None:
    one = smallest_counterexample(monotone_column, over="F", n=[2, 3, 4], lam=[2, 3],
                                  z=compositions(3)).counterexample
    two = smallest_counterexample(monotone_column, over="F", n=[2, 3, 4], lam=[2, 3],
                                  z=compositions(3), jobs=2).counterexample
    assert (two.instance, two.visited, two.witness.tolist()) == \
        (one.instance, one.visited, one.witness.tolist())
    s1 = survey(monotone_column, over="F", n=[2, 3], lam=[2, 3], z=compositions(3))
    s2 = survey(monotone_column, over="F", n=[2, 3], lam=[2, 3], z=compositions(3), jobs=2)
    assert s1.counts == s2.counts and s1.visited == s2.visited
    assert [(c.instance, c.visited) for c in s1.failures] == \
        [(c.instance, c.visited) for c in s2.failures]
    with pytest.raises(PredicateError) as info:
        smallest_counterexample(raises_at_zero_entry, over="F", n=[2, 3], jobs=2)
    assert info.value.instance.z == (1, 0) and "ZeroDivisionError" in info.value.traceback


# ------------------------------------------------------------------ cache
def test_cache_resumes_with_the_same_answer(tmp_path) -> None:
    path = tmp_path / "visited.jsonl"
    fresh = smallest_counterexample(counted, over="instance", n=2, z=compositions(6)).counterexample
    CALLS.clear()
    with pytest.warns(BudgetReached):
        assert not smallest_counterexample(counted, over="instance", n=2, z=compositions(6),
                                           cache=path, budget=4)
    assert len(CALLS) == 4
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [x["outcome"] for x in lines] == ["held"] * 4
    assert lines[0]["instance"] == Instance(2, 2, (0, 1)).key()
    CALLS.clear()
    with path.open("a") as f:
        f.write('{"run": "truncated')  # a line cut by a killed run is ignored
    again = smallest_counterexample(counted, over="instance", n=2, z=compositions(6),
                                    cache=path).counterexample
    assert (again.instance, again.visited) == (fresh.instance, fresh.visited)
    assert len(CALLS) == fresh.visited - 4  # the 4 cached instances were skipped
    s = survey(counted, over="instance", n=2, z=compositions(6), cache=path)
    assert s.visited == survey(counted, over="instance", n=2, z=compositions(6)).visited
    # another predicate does not reuse the entries
    CALLS.clear()
    assert not smallest_counterexample(counted_everywhere, over="instance", n=2,
                                       z=compositions(6), cache=path)
    assert len(CALLS) == s.visited
    records = [x for x in path.read_text().splitlines() if x != '{"run": "truncated']
    assert len({json.loads(x)["run"] for x in records}) == 2


def test_progress_on_stderr(capsys) -> None:
    assert not smallest_counterexample(always, over="F", n=2, progress=True)
    assert "search" in capsys.readouterr().err
    assert not smallest_counterexample(always, over="F", n=2)
    assert capsys.readouterr().err == ""  # off by default


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 25), st.sampled_from([Fraction(1, 5), Fraction(2, 7), Fraction(5, 6)]))
def test_cache_resume_is_the_fresh_answer(k: int, first: Fraction) -> None:
    import tempfile
    from pathlib import Path

    def space(**kw):
        return smallest_counterexample(first_entry_is_not, over="instance", n=2,
                                       z=compositions(8), **kw).counterexample
    FIRST[:] = [first]
    fresh = space()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.jsonl"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BudgetReached)
            space(cache=path, budget=k)
        again = space(cache=path)
    assert (again.instance, again.visited) == (fresh.instance, fresh.visited)


FIRST: list[Fraction] = []


def first_entry_is_not(inst: Instance) -> bool:
    return inst.z[0] != FIRST[0]
