"""Benchmark: the deconvolution estimators and solvers (``dpfix.release.privatizers.deconvolve``).

For ``n`` in {51, 1001} and ``eps`` in {0.1, 0.3, 1, 2, 5}, ``--reps`` seeded
histograms ``h`` of ``y = clamp(x + k)`` (``N = 10,000`` rows from a fixed
two-bump distribution ``z``, ``k`` two-sided geometric at ``eps``) are
deconvolved by

- maximum likelihood with each solver of ``SOLVERS``: ``interior-point`` (the
  default), ``squarem`` (EM with SQUAREM) and ``plain`` (EM, capped at
  ``--plain-cap`` updates: uncapped it runs 10^5 updates, ~6-12 s, at
  ``eps = 0.1``);
- ``least-squares`` and ``em-smooth``;
- the hybrid: ``em`` with ``stage1 = (V, eps/2)``, ``V`` a seeded cyclic
  Laplace release of the same table.

Prints median seconds, median iterations and the share converged side by
side, and the median W1 to ``z``; writes ``benchmarks/results/deconvolve.json``.
Timings are wall-clock medians and vary with what else runs on the machine.
Run: ``python benchmarks/bench_deconvolve.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import numpy as np

from dpfix.release.privatizers.deconvolve import deconvolve
from dpfix.theory.metrics import wasserstein1

RESULTS = Path(__file__).resolve().parent / "results" / "deconvolve.json"
NS = (51, 1001)
EPSILONS = (0.1, 0.3, 1.0, 2.0, 5.0)
N_ROWS = 10_000


def target(n: int) -> np.ndarray:
    """Two bumps (at 20% and 65% of the range): a shape EM has to resolve."""
    i = np.arange(n)
    z = np.exp(-0.5 * ((i - 0.2 * n) / (0.06 * n)) ** 2) + 0.6 * np.exp(
        -0.5 * ((i - 0.65 * n) / (0.1 * n)) ** 2)
    return z / z.sum()


def draw(z: np.ndarray, eps: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``(eta, h)``: the true histogram and that of the clamped geometric release."""
    n = len(z)
    eta = rng.multinomial(N_ROWS, z)
    x = np.repeat(np.arange(n), eta)
    p = -np.expm1(-eps)
    k = rng.geometric(p, N_ROWS) - rng.geometric(p, N_ROWS)
    return eta, np.bincount(np.clip(x + k, 0, n - 1), minlength=n).astype(float)


def cases(plain_cap: int) -> dict[str, dict]:
    return {
        "ml interior-point": {},
        "ml squarem": {"solver": "squarem"},
        f"ml plain (cap {plain_cap})": {"solver": "plain", "max_iter": plain_cap},
        "least-squares": {"method": "least-squares"},
        "em-smooth": {"method": "em-smooth"},
        "hybrid (eps_1 = eps/2)": {"hybrid": True},
    }


def run(reps: int, plain_cap: int) -> dict:
    root = np.random.SeedSequence(20261130)
    out: dict = {}
    for a, n in enumerate(NS):
        z = target(n)
        for b, eps in enumerate(EPSILONS):
            lam = float(np.exp(eps))
            rng = np.random.default_rng(np.random.SeedSequence(root.entropy, spawn_key=(a, b)))
            data = []
            for _ in range(reps):
                eta, h = draw(z, eps, rng)
                X = rng.laplace(0.0, 2.0 / eps, n)
                data.append((h, eta + X - np.roll(X, -1)))
            for name, kw in cases(plain_cap).items():
                secs, its, conv, w1 = [], [], [], []
                for h, V in data:
                    kw2 = dict(kw)
                    if kw2.pop("hybrid", False):
                        kw2["stage1"] = (V, eps / 2)
                    t = time.perf_counter()
                    res = deconvolve(h, lam, **kw2)
                    secs.append(time.perf_counter() - t)
                    its.append(res.iterations)
                    conv.append(res.converged)
                    w1.append(wasserstein1(res.z, z))
                out[f"{n}|{eps}|{name}"] = {
                    "n": n, "eps": eps, "case": name, "median_seconds": statistics.median(secs),
                    "median_iterations": statistics.median(its),
                    "converged": sum(conv) / len(conv), "median_w1": statistics.median(w1)}
            print(f"n = {n}, eps = {eps}: done", flush=True)
    return out


def table(results: dict) -> str:
    names = list(dict.fromkeys(r["case"] for r in results.values()))
    lines = ["| n | eps | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for n in NS:
        for eps in EPSILONS:
            cells = []
            for name in names:
                r = results[f"{n}|{eps}|{name}"]
                cells.append(f"{r['median_seconds'] * 1e3:.1f} ms, {r['median_iterations']:g} it, "
                             f"{r['converged']:.0%}, W1 {r['median_w1']:.3f}")
            lines.append(f"| {n} | {eps:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 repetitions")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--plain-cap", type=int, default=20_000)
    args = parser.parse_args()
    reps = 3 if args.quick else args.reps
    results = run(reps, args.plain_cap)
    print("\nmedian seconds, median iterations, share converged, median W1 to z "
          f"({reps} histograms of N = {N_ROWS} per cell)\n")
    print(table(results))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"machine": platform.platform(), "reps": reps,
                                   "rows": N_ROWS, "results": list(results.values())},
                                  indent=1))


if __name__ == "__main__":
    main()
