"""The exploration engine on a Dask cluster (``jobs=`` a ``distributed.Client``): the
answers of ``jobs=1`` (the first counterexample in visiting order, a survey's counts,
where a budget stops, the error of a raising predicate), the cache and the progress bar,
a bounded window of futures, and an end by the deadline or a signal that cancels what
runs and leaves the client open, its workers free.

One LocalCluster of two worker processes (one thread each) serves the whole module."""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
import weakref
from fractions import Fraction

import pytest

distributed = pytest.importorskip("distributed")

from dpfix.explore.distributed import OrderedMap  # noqa: E402
from dpfix.explore.instances import Instance, compositions, lams_by_height  # noqa: E402
from dpfix.explore.search import (  # noqa: E402
    BudgetReached,
    FilePredicate,
    PredicateError,
    smallest_counterexample,
    survey,
)

HALF, THIRD = Fraction(1, 2), Fraction(1, 3)
#: seconds a worker may take to run a small task before it counts as held up
FREE_WITHIN = 60


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address="127.0.0.1:0", silence_logs=40) as cluster, \
            distributed.Client(cluster) as c:
        c.run(importlib.import_module, "dpfix.explore.search")  # the workers' first imports
        yield c


# ------------------------------------------------------------ module-level predicates (pickle)
def monotone_column(T, inst) -> bool:
    """Some column of T is monotone (false from n = 3 on)."""
    return any(all(T[i, j] <= T[i + 1, j] for i in range(inst.n - 1)) or
               all(T[i, j] >= T[i + 1, j] for i in range(inst.n - 1)) for j in range(inst.n))


def fixed_point(T, inst) -> bool:
    """z T = z and every row sums to 1: true of every vertex of F."""
    n = inst.n
    return all(sum(inst.z[i] * T[i, j] for i in range(n)) == inst.z[j] for j in range(n)) \
        and all(sum(T[i, j] for j in range(n)) == 1 for i in range(n))


def raises_at_zero_entry(T, inst) -> bool:
    if 0 in inst.z:
        raise ZeroDivisionError(f"a zero entry in {inst.z}")
    return True


def first_entry_below_half(inst) -> bool:
    return inst.z[0] < HALF


def hangs_at_half(inst) -> bool:
    while inst.z == (HALF, HALF):
        time.sleep(0.05)
    return True


def hangs(inst) -> bool:
    while True:
        time.sleep(0.05)


def _free_thread() -> int:
    return threading.get_ident()


def _workers_free(client) -> bool:
    """Every worker runs a new task (a thread held by an abandoned predicate would not)."""
    futures = [client.submit(_free_thread, workers=[w], pure=False) for w in client.nthreads()]
    try:
        distributed.wait(futures, timeout=FREE_WITHIN)
    except TimeoutError:
        return False
    return all(f.status == "finished" for f in futures)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BudgetReached)
        return fn(*args, **kwargs)


# ------------------------------------------------------------ the answers of jobs=1
def test_a_counterexample_is_the_first_in_visiting_order(client) -> None:
    kw = dict(over="F", n=[2, 3, 4], lam=[2, 3], z=compositions(3))
    one = smallest_counterexample(monotone_column, **kw)
    dask = smallest_counterexample(monotone_column, jobs=client, **kw)
    ce = dask.counterexample
    assert (ce.instance, ce.visited, ce.witness.tolist()) == \
        (one.counterexample.instance, one.counterexample.visited,
         one.counterexample.witness.tolist())
    assert (ce.instance, ce.visited) == (Instance(3, 2, (THIRD,) * 3), 20)  # pinned
    assert [[str(x) for x in row] for row in ce.witness] == \
        [["1/4", "7/20", "2/5"], ["1/2", "3/10", "1/5"], ["1/4", "7/20", "2/5"]]
    assert (dask.visited, dask.stopped) == (one.visited, one.stopped) == (20, None)


def test_surveys_count_as_jobs_one(client) -> None:
    kw = dict(over="F", n=[2, 3], lam=[2], z=compositions(3))
    held, held_dask = survey(fixed_point, **kw), survey(fixed_point, jobs=client, **kw)
    assert held_dask.holds and held_dask.complete
    assert (held_dask.counts, held_dask.visited) == (held.counts, held.visited)
    # 5 targets of n = 2 and 13 of n = 3 with denominators <= 3 (each z once)
    assert held.visited == 18 and held.counts[(3, Fraction(2))]["held"] == 13
    s1, s2 = survey(monotone_column, **kw), survey(monotone_column, jobs=client, **kw)
    assert s2.counts == s1.counts and s2.visited == s1.visited
    assert [(c.instance, c.visited, c.witness.tolist()) for c in s2.failures] == \
        [(c.instance, c.visited, c.witness.tolist()) for c in s1.failures]
    assert len(s1.failures) == 1


def corner_below_two_thirds(T, inst):
    """With what it computed: the corner and the vertex."""
    return bool(T[0, 0] < Fraction(2, 3)), {"corner": T[0, 0], "T": T}


def test_graph_instances_and_details_as_jobs_one(client) -> None:
    kw = dict(over="F", graph=["path:3", "star:4"], lam=[2])
    one = smallest_counterexample(corner_below_two_thirds, **kw).counterexample
    ce = smallest_counterexample(corner_below_two_thirds, jobs=client, **kw).counterexample
    assert (ce.instance, ce.visited, str(ce)) == (one.instance, one.visited, str(one))
    assert ce.details["corner"] == Fraction(2, 3) and ce.instance.label == "path:3"
    s1, s2 = survey(corner_below_two_thirds, **kw), \
        survey(corner_below_two_thirds, jobs=client, **kw)
    assert s2.counts == s1.counts and [str(c) for c in s2.failures] == \
        [str(c) for c in s1.failures]


def test_an_instance_budget_stops_where_jobs_one_stops(client) -> None:
    with pytest.warns(BudgetReached, match="reached after 37 instances") as one_warning:
        one = smallest_counterexample(first_entry_below_half, over="instance", n=2,
                                      lam=lams_by_height(), z=[(THIRD, 2 * THIRD)], budget=37)
    with pytest.warns(BudgetReached) as dask_warning:
        dask = smallest_counterexample(first_entry_below_half, over="instance", n=2,
                                       lam=lams_by_height(), z=[(THIRD, 2 * THIRD)],
                                       budget=37, jobs=client)
    assert (dask.found, dask.visited, dask.stopped) == (one.found, one.visited, one.stopped)
    assert str(dask_warning[0].message) == str(one_warning[0].message)
    s1, s2 = (_quiet(survey, first_entry_below_half, over="instance", n=2,
                     lam=lams_by_height(), z=compositions(4), budget=37, jobs=jobs)
              for jobs in (1, client))
    assert (s2.visited, s2.complete, s2.stopped, s2.counts) == \
        (s1.visited, s1.complete, s1.stopped, s1.counts)
    assert [c.instance for c in s2.failures] == [c.instance for c in s1.failures]


def test_a_time_budget_cancels_the_chunks_still_out(client) -> None:
    """Eight instances hold (the first chunk), the ninth never returns: the deadline
    cancels its chunk, which is not visited, and frees the worker that ran it."""
    insts = [Instance(2, 2, (Fraction(k, 9), Fraction(9 - k, 9))) for k in range(8)]
    insts += [Instance(2, 2, (HALF, HALF)), Instance(2, 3, (HALF, HALF))]
    s = survey(hangs_at_half, over="instance", instances=insts, budget="1s", jobs=client)
    assert (s.visited, s.complete) == (8, False)
    assert s.counts == {(2, Fraction(2)): {"held": 8, "failed": 0, "errored": 0}}
    assert "budget (1 s) reached after 8 instances" in s.stopped
    one = survey(hangs_at_half, over="instance", instances=insts, budget="0.5s")
    assert (one.visited, one.counts) == (s.visited, s.counts)
    assert _workers_free(client)


def test_a_raising_predicate_gives_the_error_of_jobs_one(client) -> None:
    kw = dict(over="F", n=[2, 3])
    with pytest.raises(PredicateError) as one:
        smallest_counterexample(raises_at_zero_entry, **kw)
    with pytest.raises(PredicateError) as dask:
        smallest_counterexample(raises_at_zero_entry, jobs=client, **kw)
    a, b = one.value, dask.value
    assert (b.instance, b.witness.tolist(), b.exception_type, b.traceback, str(b)) == \
        (a.instance, a.witness.tolist(), a.exception_type, a.traceback, str(a))
    assert b.instance.z == (1, 0) and "ZeroDivisionError: a zero entry" in b.traceback
    s1, s2 = survey(raises_at_zero_entry, **kw), survey(raises_at_zero_entry, jobs=client, **kw)
    assert s2.counts == s1.counts and s2.visited == s1.visited == 8
    assert [(e.instance, e.traceback) for e in s2.errors] == \
        [(e.instance, e.traceback) for e in s1.errors]


def test_a_predicate_that_does_not_pickle_is_one_line(client) -> None:
    lock = threading.Lock()
    with pytest.raises(TypeError) as info:
        smallest_counterexample(lambda T, inst: lock is not None, over="F", n=2, jobs=client)
    message = str(info.value)
    assert "\n" not in message and message.startswith("jobs=<a Dask client>: the predicate")
    assert "must pickle" in message and "_thread.lock" in message
    # a lambda that pickles runs (cloudpickle sends it by value)
    assert not smallest_counterexample(lambda T, inst: True, over="F", n=2, jobs=client)


def test_jobs_refuses_what_is_neither_a_number_nor_a_running_client(client) -> None:
    with pytest.raises(ValueError, match=r"jobs: a number of processes >= 1 or a Dask client"):
        smallest_counterexample(fixed_point, over="F", n=2, jobs="2")
    other = distributed.Client(client.scheduler.address, set_as_default=False)
    other.close()
    with pytest.raises(ValueError, match=r"^jobs: the Dask client is closed, not running$"):
        survey(fixed_point, over="F", n=2, jobs=other)


def test_the_engine_runs_where_distributed_cannot_be_imported(tmp_path) -> None:
    """Without the production extra (``distributed`` and ``cloudpickle`` unimportable) the
    engine runs as before and imports neither (T[0, 0] = 1 at the fourth named target of
    n = 2, z = (1, 0))."""
    code = ("import sys\n"
            "for name in ('distributed', 'dask', 'cloudpickle'):\n"
            "    sys.modules[name] = None\n"
            "from dpfix.explore.search import smallest_counterexample\n"
            "r = smallest_counterexample(lambda T, inst: T[0, 0] < 1, over='F', n=2)\n"
            "print(r.found, r.visited)\n"
            "try:\n"
            "    smallest_counterexample(lambda T, inst: True, over='F', n=2, jobs='2')\n"
            "except ValueError as exc:\n"
            "    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "True 4", "jobs: a number of processes >= 1 or a Dask client (distributed.Client), "
        "got '2'"]


# ------------------------------------------------------------ cache, progress, files
def test_the_cache_resumes_with_the_answer_of_jobs_one(client, tmp_path, capfd) -> None:
    conj = tmp_path / "conj.py"
    conj.write_text("def predicate(inst):\n    return inst.z[0] < 1 or inst.lam < 3\n")
    predicate = FilePredicate(conj)
    path = tmp_path / "visited.jsonl"
    kw = dict(over="instance", n=2, lam=list(lams_by_height(3)), z=compositions(6))
    fresh = smallest_counterexample(predicate, **kw).counterexample
    stopped = _quiet(smallest_counterexample, predicate, jobs=client, cache=path, budget=9, **kw)
    assert not stopped and stopped.visited == 9 and len(path.read_text().splitlines()) == 9
    resumed = smallest_counterexample(predicate, jobs=client, cache=path, progress=True, **kw)
    ce = resumed.counterexample
    assert (ce.instance, ce.visited) == (fresh.instance, fresh.visited)
    assert ce.instance.lam == 3 and ce.instance.z[0] == 1
    assert f"search: {ce.visited} instances" in capfd.readouterr().err


class CountingClient:
    """A client (duck-typed) that keeps a weak reference to every future it submits."""

    def __init__(self, client) -> None:
        self.client, self.submitted = client, []

    def submit(self, *args, **kwargs):
        future = self.client.submit(*args, **kwargs)
        self.submitted.append(weakref.ref(future))
        return future

    def scatter(self, *args, **kwargs):
        return self.client.scatter(*args, **kwargs)

    def cancel(self, *args, **kwargs):
        return self.client.cancel(*args, **kwargs)

    def nthreads(self):
        return self.client.nthreads()

    def held(self) -> int:
        return sum(ref() is not None for ref in self.submitted)


def test_at_most_a_window_of_futures_is_out(client) -> None:
    """The instances are drawn as chunks come back: the engine holds at most twice as many
    chunks' futures as the workers have threads, whatever the stream's length."""
    counting, most = CountingClient(client), [0]

    def drawn():
        for N in range(1, 80):
            for k in range(N + 1):
                most[0] = max(most[0], counting.held())
                yield Instance(2, 2, (Fraction(k, N), Fraction(N - k, N)))
    s = survey(first_entry_below_half, over="instance", instances=drawn(), jobs=counting)
    threads = sum(client.nthreads().values())
    assert s.visited == sum(N + 1 for N in range(1, 80))
    assert len(counting.submitted) > 2 * threads and 0 < most[0] <= 2 * threads


def test_ordered_map_yields_in_the_order_of_the_stream(client) -> None:
    powers = OrderedMap(client, pow, 3, ((k, (k,)) for k in range(5)), window=2)
    assert [result for _, result in powers] == [1, 3, 9, 27, 81]
    parts = [("a", (2,)), ("b", None), ("c", (0,))]
    assert list(OrderedMap(client, pow, 5, parts, window=1)) == [("a", 25), ("b", None),
                                                                 ("c", 1)]
    assert not powers.timed_out


# ------------------------------------------------------------ signals
@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
def test_a_signal_ends_the_search_and_keeps_the_client(client, name) -> None:
    """A signal whose handler raises (as dpfix.cli's do) while the workers run a predicate
    that never returns: the search ends, its futures are cancelled, the predicate is
    interrupted on the workers and the client stays open."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    signum = getattr(signal, name)

    def raise_interrupt(signum, frame):
        raise KeyboardInterrupt(name)

    over = threading.Event()  # the search ended another way: no signal

    def send_when_running():
        deadline = time.monotonic() + FREE_WITHIN
        while time.monotonic() < deadline and not any(client.processing().values()):
            if over.wait(0.05):
                return
        if not over.wait(0.3):  # the tasks start on the workers
            os.kill(os.getpid(), signum)

    old = signal.signal(signum, raise_interrupt)
    sender = threading.Thread(target=send_when_running)
    try:
        sender.start()
        with pytest.raises(KeyboardInterrupt, match=name):
            survey(hangs, over="instance", n=2, z=compositions(4), jobs=client)
    finally:
        over.set()
        sender.join()
        signal.signal(signum, old)
    assert client.status == "running" and not client.futures
    assert _workers_free(client)


KILLED = """
import sys
from distributed import Client
from dpfix.explore.instances import compositions
from dpfix.explore.search import survey


def hangs(inst):
    while True:
        pass


if __name__ == "__main__":
    client = Client(sys.argv[1])
    print("connected", flush=True)
    survey(hangs, over="instance", n=2, z=compositions(4), jobs=client)
"""


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_a_search_killed_by_sigterm_leaves_its_predicate_running_nowhere(client, tmp_path):
    """The default SIGTERM ends the searching process at once: the scheduler releases its
    futures, and the predicate that never returns is interrupted on the worker."""
    script = tmp_path / "killed.py"
    script.write_text(KILLED)
    proc = subprocess.Popen([sys.executable, str(script), client.scheduler.address],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout.readline() == "connected\n"
        deadline = time.monotonic() + FREE_WITHIN
        while time.monotonic() < deadline and not any(client.processing().values()):
            time.sleep(0.05)
        assert any(client.processing().values())
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=FREE_WITHIN)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGTERM
    assert _workers_free(client)
