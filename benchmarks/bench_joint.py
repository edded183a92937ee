"""Benchmark: the transport solvers of the joint remap (docs/joint.md section 3).

The remap of ``w = z (G_a x G_b)`` onto ``z`` is a transport problem with ``N = n_a n_b``
supplies and the support of ``z`` as demands, cost the expected count error. Measured
(median of repeats, wall-clock seconds), each on the same problem:

- ``pot``: POT's network simplex ``ot.emd`` (C++, floats);
- ``highs``: the transport LP by scipy's HiGHS (``linprog``, dual simplex, floats);
- ``networkx``: networkx's network simplex in floats; ``networkx_exact``: the same on
  Fractions (the exact path), only at the small sizes;
- ``match``: the one-stage integer matching of ``N`` rows at the county data's size,
  POT on the integer histograms against scipy's ``linear_sum_assignment`` on the
  ``N x N`` row-level cost;
- ``sampling``: rows per second of the exact ``(G_a x G_b) R`` sampler (51 x 101 states,
  the secure source) at ``10^4 .. 10^6`` rows: constant per row;
- ``triple``: the one-stage release of a triple of 3136 dependent rows
  (``privatize_joint``, docs/joint.md section 9) at ``21 x 51 x 51`` and
  ``51 x 101 x 101`` states: seconds and the peak of traced memory.

Every solver's optimal cost is compared with POT's (relative difference printed). Writes
``benchmarks/results/joint.json``. Run: ``python benchmarks/bench_joint.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

from dpfix.constructors.joint import posterior_cost, transport_plan
from dpfix.release.privatizers.joint import geometric_float
from dpfix.sampling.joint import geometric_matrix

RESULTS = Path(__file__).resolve().parent / "results" / "joint.json"


def _problem(shape: tuple[int, int], seed: int = 0, exact: bool = False):
    rng = np.random.default_rng(seed)
    weights = rng.integers(0, 20, size=shape[0] * shape[1])
    weights[0] += 1
    if exact:
        Z = np.array([Fraction(int(v), int(weights.sum())) for v in weights],
                     dtype=object).reshape(shape)
        Ga, Gb = geometric_matrix(shape[0], Fraction(2)), geometric_matrix(shape[1], Fraction(2))
    else:
        Z = (weights / weights.sum()).reshape(shape)
        Ga, Gb = geometric_float(shape[0], 2.0), geometric_float(shape[1], 2.0)
    cols = np.flatnonzero([v != 0 for v in Z.ravel()])
    w = Ga.T.dot(Z).dot(Gb).ravel()
    C = posterior_cost(Z, Ga, Gb, cols=cols) / w[:, None]
    return w, Z.ravel()[cols], C


def _time(fn, reps: int):
    out, times = None, []
    for _ in range(reps):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return out, statistics.median(times)


def _highs(w, z, C) -> float:
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    n, k = C.shape
    r = np.arange(n * k)
    A = coo_matrix((np.ones(2 * n * k), (np.concatenate([r // k, n + r % k]),
                                         np.concatenate([r, r]))), shape=(n + k, n * k))
    res = linprog(C.ravel(), A_eq=A.tocsr(), b_eq=np.concatenate([w, z]), bounds=(0, None),
                  method="highs-ds")
    return float(res.fun)


def _nx(w, z, C) -> float:
    pieces = transport_plan(list(w), list(z), C, solver="exact") if isinstance(w[0], Fraction) \
        else _nx_float(w, z, C)
    return float(sum(x * C[i, j] for i, j, x in pieces))


def _nx_float(w, z, C):
    import networkx as nx

    scale = 10**9  # networkx's simplex wants integral demands for floats
    G = nx.DiGraph()
    s = np.floor(np.asarray(w, dtype=float) * scale).astype(np.int64)
    d = np.floor(np.asarray(z, dtype=float) * scale).astype(np.int64)
    d[np.argmax(d)] += s.sum() - d.sum()
    for i, v in enumerate(s):
        G.add_node(("s", i), demand=-int(v))
    for j, v in enumerate(d):
        G.add_node(("d", j), demand=int(v))
    for i in range(len(s)):
        for j in range(len(d)):
            G.add_edge(("s", i), ("d", j), weight=int(round(float(C[i, j]) * 10**6)))
    _, flow = nx.network_simplex(G)
    return [(i, j, x / scale) for i in range(len(s)) for (_, j), x in flow[("s", i)].items()
            if x]


def _pot(w, z, C) -> float:
    pieces = transport_plan(np.asarray(w, dtype=float), np.asarray(z, dtype=float), C,
                            solver="pot")
    return float(sum(x * C[i, j] for i, j, x in pieces))


def _match(N: int, seed: int = 0) -> dict:
    import ot
    from scipy.optimize import linear_sum_assignment

    rng = np.random.default_rng(seed)
    y = rng.integers(0, 60, size=N)
    t = np.sort(rng.integers(0, 60, size=N))
    h, g = np.bincount(y, minlength=60), np.bincount(t, minlength=60)
    D = np.abs(np.arange(60)[:, None] - np.arange(60)[None, :]).astype(float)
    cost_pot, s_pot = _time(lambda: float(ot.emd2(h.astype(float), g.astype(float), D)), 3)
    M = np.abs(y[:, None] - t[None, :]).astype(float)
    (r, c), s_lsa = _time(lambda: linear_sum_assignment(M), 1)
    return {"N": N, "pot_seconds": s_pot, "lsa_seconds": s_lsa,
            "pot_cost": cost_pot, "lsa_cost": float(M[r, c].sum())}


def _sampling(sizes: tuple) -> list[dict]:
    from dpfix.constructors.joint import joint_sampler
    from dpfix.sampling.source import random_source

    Z = np.random.default_rng(1).dirichlet(np.full(51 * 101, 0.05)).reshape(51, 101)
    s = joint_sampler(Z, eps=1.0, unit="row")
    out = []
    for n in sizes:
        a = np.random.default_rng(2).integers(0, 51, n)
        b = np.random.default_rng(3).integers(0, 101, n)
        _, sec = _time(lambda a=a, b=b: s.sample(a, b, random_source(None)), 1)
        out.append({"rows": n, "seconds": sec, "rows_per_second": n / sec,
                    "remap_pieces": int(s.remap.cols.size)})
    return out


def _triple(shapes: tuple) -> list[dict]:
    import tracemalloc

    from dpfix.release.joint import privatize_joint

    rng = np.random.default_rng(4)
    base = rng.poisson(2.0, 3136)
    cols = [base + rng.poisson(m, 3136) for m in (0.5, 8.0, 12.0)]
    out = []
    for shape in shapes:
        tracemalloc.start()
        _, sec = _time(lambda shape=shape: privatize_joint(
            cols, (0.5, 0.5, 0.5), upper=tuple(n - 1 for n in shape), seed=0), 1)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        out.append({"shape": list(shape), "states": int(np.prod(shape)), "seconds": sec,
                    "peak_traced_mb": peak / 2**20})
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    reps = 1 if args.quick else 3
    rows = []
    shapes = [(3, 3), (6, 6), (11, 21)] + ([] if args.quick else [(26, 51), (51, 101)])
    for shape in shapes:
        w, z, C = _problem(shape)
        row: dict = {"shape": list(shape), "supplies": int(w.size), "demands": int(z.size)}
        ref, row["pot"] = _time(lambda w=w, z=z, C=C: _pot(w, z, C), reps)
        if w.size * z.size <= 3 * 10**5:
            val, row["highs"] = _time(lambda w=w, z=z, C=C: _highs(w, z, C), reps)
            row["highs_rel_diff"] = abs(val - ref) / ref
        if w.size * z.size <= 10**4:
            val, row["networkx"] = _time(lambda w=w, z=z, C=C: _nx(w, z, C), reps)
            row["networkx_rel_diff"] = abs(val - ref) / ref
            we, ze, Ce = _problem(shape, exact=True)
            val, row["networkx_exact"] = _time(lambda we=we, ze=ze, Ce=Ce: _nx(we, ze, Ce), 1)
            row["networkx_exact_rel_diff"] = abs(val - ref) / ref
        rows.append(row)
        print(row, flush=True)
    match = _match(1000 if args.quick else 3136)
    print(match)
    sampling = _sampling((10**4, 10**5) if args.quick else (10**4, 10**5, 10**6))
    print(sampling)
    triple = _triple(((21, 51, 51),) if args.quick else ((21, 51, 51), (51, 101, 101)))
    print(triple)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"machine": platform.platform(), "cpus": os.cpu_count(),
                                   "transport": rows, "match": match, "sampling": sampling,
                                   "triple": triple},
                                  indent=1))


if __name__ == "__main__":
    main()
