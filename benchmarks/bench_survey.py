"""Benchmark: a survey of 101,005 instances through the exploration engine on one process,
two processes and a Dask LocalCluster of two workers.

The instances: ``n = 4``, ``lam = 2``, every target ``z = c / N`` of
:func:`dpfix.explore.instances.compositions` up to ``N = 38`` (each distinct ``z`` once:
101,005 of them). The predicate, :func:`plan_is_basic`, is exact and cheap (a few
hundred microseconds): the northwest-corner plan from the supplies
``(z Sigma)_m alpha_m`` to the demands ``z`` (the plan of
:func:`dpfix.constructors.northwest.northwest_corner`) has at most ``2n - 1`` pieces, as a
northwest-corner plan of ``n`` supplies and ``n`` demands does, and the shares of each
supply sum to 1. It holds everywhere, so every instance is visited in each mode.

Measured in one run, the modes interleaved in each repeat:

- ``jobs1``: :func:`dpfix.explore.search.survey` with ``jobs=1``;
- ``jobs2``: ``jobs=2`` (the two worker processes' start, by spawn, is included);
- ``dask2``: ``jobs=`` a client of a ``distributed.LocalCluster`` of two worker
  processes of one thread each (Dask's default configuration), started for the run
  and its workers' first imports done before the clock starts (a cluster outlives a
  search; its start is reported apart).

The predicate is a :class:`dpfix.explore.search.FilePredicate` of this file in every
mode (what ``dpfix search`` runs): the worker processes and the Dask workers load it
by path. Each mode's survey must give the same counts. Medians over ``--repeats`` runs
(default 3): wall-clock seconds, instances per second, and the CPU seconds spent (this
process, with the LocalCluster's scheduler in its threads, and the workers: the pool's
from ``getrusage`` of the children it reaped, the Dask workers' as they report it),
whose sum against ``jobs1``'s says what running in parallel costs. The load average at
the start and the end is recorded beside them (the machine has 2 cores, shared).
Writes ``benchmarks/results/survey.json`` and prints a table. Run: ``python
benchmarks/bench_survey.py [--quick]`` (``--quick``: the first 10,000 instances, one
repeat, nothing written).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import platform
import resource
import statistics
import sys
import time
from pathlib import Path

from dpfix.constructors.northwest import northwest_plan
from dpfix.constructors.unfixed import sigma_amounts
from dpfix.explore.instances import Instance, compositions
from dpfix.explore.search import FilePredicate, survey
from dpfix.theory.scales import sigma

RESULTS = Path(__file__).resolve().parent / "results" / "survey.json"
N, N_MAX, LAM = 4, 38, 2
MODES = ("jobs1", "jobs2", "dask2")


@functools.cache
def _scales(n, lam):
    return sigma(n, lam), sigma_amounts(n, lam)


def plan_is_basic(inst) -> bool:
    """The northwest-corner plan of the instance has at most 2n - 1 pieces and gives out
    each supply whole (exactly)."""
    n, z = inst.n, inst.z_array()
    S, alpha = _scales(n, inst.lam)
    supply = [w * a for w, a in zip(z.dot(S), alpha, strict=True)]
    pieces = northwest_plan(supply, list(z))
    return len(pieces) <= 2 * n - 1 and \
        all(sum(r for m, _, r in pieces if m == k) == 1 for k in range(n))


def run(predicate, jobs, budget):
    """``(wall seconds, CPU seconds of this process, CPU seconds of the workers, survey)``."""
    def worker_cpu():
        if jobs == 1:
            return 0.0
        if jobs == 2:
            return resource.getrusage(resource.RUSAGE_CHILDREN)[:2]
        return jobs.run(time.process_time)
    before, cpu, start = worker_cpu(), time.process_time(), time.perf_counter()
    s = survey(predicate, over="instance", n=N, lam=[LAM], z=compositions(N_MAX),
               budget=budget, jobs=jobs)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    after = worker_cpu()
    if jobs == 1:
        workers = 0.0
    elif jobs == 2:
        workers = sum(after) - sum(before)
    else:
        workers = sum(after[w] - before[w] for w in after)
    assert s.holds, s
    return seconds, cpu, workers, s


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="the first 10,000 instances, one repeat")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    budget, repeats = (10_000, 1) if args.quick else (None, args.repeats)
    from distributed import Client, LocalCluster, __version__

    predicate = FilePredicate(__file__, "plan_is_basic")
    load_start = os.getloadavg()
    times: dict[str, list[float]] = {m: [] for m in MODES}
    cpu: dict[str, list[float]] = {m: [] for m in MODES}
    workers: dict[str, list[float]] = {m: [] for m in MODES}
    starts, counts = [], {}
    for _ in range(repeats):  # interleaved, so that a change of load hits all three
        for mode in MODES:
            if mode != "dask2":
                seconds, main_cpu, worker_cpu, s = run(predicate, int(mode[-1]), budget)
            else:
                started = time.perf_counter()
                with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address="127.0.0.1:0", silence_logs=40) as cluster, \
                        Client(cluster) as client:
                    client.run(importlib.import_module, "dpfix.explore.search")
                    client.run(predicate, Instance(N, LAM, (1, 0, 0, 0)))  # loads the file
                    starts.append(time.perf_counter() - started)
                    seconds, main_cpu, worker_cpu, s = run(predicate, client, budget)
            times[mode].append(seconds)
            cpu[mode].append(main_cpu)
            workers[mode].append(worker_cpu)
            counts[mode] = (s.visited, s.counts)
    visited = counts["jobs1"][0]
    assert all(c == counts["jobs1"] for c in counts.values()), "the modes disagree"
    med = {m: statistics.median(v) for m, v in times.items()}
    med_cpu = {m: statistics.median(v) for m, v in cpu.items()}
    med_workers = {m: statistics.median(v) for m, v in workers.items()}
    rate = {m: visited / med[m] for m in MODES}
    result = {
        "instances": visited, "n": N, "lam": LAM, "targets": f"compositions({N_MAX})",
        "predicate": "plan_is_basic", "repeats": repeats,
        "median_seconds": med, "instances_per_second": rate, "all_seconds": times,
        "speedup_over_jobs1": {m: med["jobs1"] / med[m] for m in MODES},
        "median_cpu_seconds_this_process": med_cpu,
        "median_cpu_seconds_workers": med_workers,
        "all_cpu_seconds_this_process": cpu, "all_cpu_seconds_workers": workers,
        "local_cluster_start_seconds": starts,
        "load_average_start": load_start, "load_average_end": os.getloadavg(),
        "cpu_count": os.cpu_count(), "python": platform.python_version(),
        "distributed": __version__, "quick": args.quick,
    }
    print(f"{visited} instances (n = {N}, lam = {LAM}, compositions({N_MAX})); medians of "
          f"{repeats}")
    for m in MODES:
        print(f"  {m:6s} {med[m]:8.2f} s  {rate[m]:9.0f} instances/s  "
              f"{med['jobs1'] / med[m]:.2f}x jobs=1  CPU {med_cpu[m]:.1f} s here + "
              f"{med_workers[m]:.1f} s workers")
    print(f"  LocalCluster start {statistics.median(starts):.1f} s (not in dask2)")
    print(f"  load average {load_start[0]:.1f} -> {result['load_average_end'][0]:.1f} on "
          f"{os.cpu_count()} cores")
    if not args.quick:
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
