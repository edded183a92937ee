"""Mutation runner: do the tests kill realistic defects? (not collected by pytest).

Each mutation is a textual replacement ``(file, old, new)`` in ``src/dpfix``: an
off-by-one, a flipped sign, a dropped term, a one-sided check, the wrong branch.
One at a time, the source tree is copied to a temporary folder, the mutation is
applied there (``old`` must occur exactly once) and the test files relevant to
that module run against the copy (``PYTHONPATH`` puts it ahead of the editable
install; checked) with ``-x -q`` and a timeout, their temporary folder inside the
copy. A mutation is *killed* when the
tests fail (or time out), *survived* when they pass. The working tree is never
touched.

Usage (CPU heavy: the mutations run one after the other)::

    .venv/bin/python benchmarks/mutations.py            # all, a table at the end
    .venv/bin/python benchmarks/mutations.py --list     # the mutations only
    .venv/bin/python benchmarks/mutations.py --only sampling-below-reject-one-more
    .venv/bin/python benchmarks/mutations.py --json out/mutations.json

Exit code 0 when every applicable mutation is killed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Exact boundary cases of every module, quick (a few seconds): run with each group.
BOUNDARIES = "tests/test_boundaries.py"
CERTIFY = ("tests/test_certify.py", BOUNDARIES)
NORTHWEST = ("tests/test_northwest.py", "tests/test_constructors.py", BOUNDARIES)
SAMPLING = ("tests/test_sampling_ties.py", BOUNDARIES, "tests/test_geometric.py",
            "tests/test_sampling.py")
DECONVOLVE = ("tests/test_deconvolve.py",)
PRIVATIZERS = ("tests/test_privatizers.py", BOUNDARIES)
PIPELINE = ("tests/test_pipeline.py", BOUNDARIES)
APPROXIMATE = ("tests/test_approximate.py", BOUNDARIES)
ENUMERATION = ("tests/test_enumeration.py", BOUNDARIES)
POLYTOPES = ("tests/test_polytopes.py", BOUNDARIES)
SCALES = ("tests/test_scales.py", BOUNDARIES)


@dataclass(frozen=True)
class Mutation:
    """A realistic defect: replace ``old`` (once) by ``new`` in ``file``; run ``tests``."""

    name: str
    file: str  # relative to src/dpfix
    old: str
    new: str
    tests: tuple[str, ...]
    why: str


MUTATIONS = [
    Mutation("certify-walk-wrong-branch", "certify.py",
             "            Q = g[i] + rho * Q\n", "            Q = g[i] + lam * Q\n", CERTIFY,
             "the cone minimum's walk steps up (lam) where it should step down (rho)"),
    Mutation("certify-crossing-at-equality", "certify.py",
             "        while S < cz and m < n - 1:", "        while S <= cz and m < n - 1:",
             CERTIFY, "m*_l moves past a scale whose cumulative supply equals the demand"),
    Mutation("certify-rho-sums-drop-first", "certify.py",
             "    for m in range(n - 2, -1, -1):\n        acc = (acc + x[m + 1]) * rho",
             "    for m in range(n - 2, 0, -1):\n        acc = (acc + x[m + 1]) * rho",
             CERTIFY, "the right side sum of rho^|i-m| x_i misses m = 0 (off by one)"),
    Mutation("northwest-share-dropped-factor", "constructors/northwest.py",
             "            r = left / s * share  # = left / supply[m]",
             "            r = left / s  # = left / supply[m]", NORTHWEST,
             "a split piece's share forgets the part of the supply already placed"),
    Mutation("sampling-below-reject-one-more", "sampling/source.py",
             "        todo = np.flatnonzero(w > lim)", "        todo = np.flatnonzero(w >= lim)",
             SAMPLING, "rejection refuses the last accepted word: one residue short (2^-64 bias)"),
    Mutation("sampling-exp-bound-no-tail", "sampling/source.py",
             "    return total, total + term / (1 - x / (terms + 2))",
             "    return total, total + term", SAMPLING,
             "the Taylor upper bound on e^x drops the geometric tail factor (not an upper bound)"),
    Mutation("sampling-floor-upper-bound-rounded-down", "sampling/geometric.py",
             "        hi = -((-hi * q) // p)", "        hi = hi * q // p", SAMPLING,
             "the fixed-point upper bound on a threshold is rounded down (no longer a bound)"),
    Mutation("sampling-remap-threshold-ceil", "sampling/structured.py",
             "thresholds[t] = min(math.floor(acc * one), one)",
             "thresholds[t] = min(math.ceil(acc * one), one)", SAMPLING,
             "the remap's integer thresholds round the cumulative shares up"),
    Mutation("privatizers-simplex-first-index", "privatizers/postprocess.py",
             "    r = int(np.nonzero(u - css / ranks > 0)[0][-1])",
             "    r = int(np.nonzero(u - css / ranks > 0)[0][0])", PRIVATIZERS,
             "the simplex projection takes the first support index instead of the last"),
    Mutation("privatizers-clip-zero-total", "privatizers/postprocess.py",
             "    if total <= 0.0:\n        return project_simplex(v)",
             "    if total < 0.0:\n        return project_simplex(v)", PRIVATIZERS,
             "clip-renormalise divides by a zero total instead of projecting"),
    Mutation("deconvolve-smooth-reflect-wrong-end", "privatizers/deconvolve.py",
             "    p = np.concatenate([[z[0]], z, [z[-1]]])",
             "    p = np.concatenate([[z[-1]], z, [z[0]]])", DECONVOLVE,
             "EMS smoothing wraps around (cyclic) instead of reflecting at the ends"),
    Mutation("pipeline-topcoded-off-by-one", "pipeline.py",
             "    top = int((c > upper).sum())", "    top = int((c >= upper).sum())", PIPELINE,
             "counts equal to upper are reported as top-coded"),
    Mutation("pipeline-histogram-cap-inclusive", "pipeline.py",
             "    if total > MAX_HISTOGRAM_N:", "    if total >= MAX_HISTOGRAM_N:", PIPELINE,
             "a histogram with exactly the cap of rows is refused"),
    Mutation("approximate-budget-strict", "approximate.py",
             "            and all(sum(row, _ZERO) <= delta for row in positive_parts(Tm, lam)))",
             "            and all(sum(row, _ZERO) < delta for row in positive_parts(Tm, lam)))",
             APPROXIMATE, "a mechanism spending exactly delta is called not (eps, delta)-DP"),
    Mutation("approximate-pairs-one-sided", "approximate.py",
             "    return [p for i in range(n - 1) for p in ((i, i + 1), (i + 1, i))]",
             "    return [p for i in range(n - 1) for p in ((i, i + 1), (i, i + 1))]",
             APPROXIMATE, "only one direction of each neighbouring pair is bounded"),
    Mutation("enumeration-edge-filter-off-by-one", "enumeration.py",
             "        cand = np.flatnonzero(counts >= dim - 1)",
             "        cand = np.flatnonzero(counts >= dim)", ENUMERATION,
             "the dimension filter drops pairs with exactly dim - 1 common facets (real edges)"),
    Mutation("enumeration-violation-check-loose", "enumeration.py",
             "        if (np.asarray(slack < 0)).any():",
             "        if (np.asarray(slack < -1)).any():", ENUMERATION,
             "tight_masks accepts a point outside by one integer unit"),
    Mutation("polytopes-u-rows-last-pair", "polytopes.py",
             "        for i in range(n - 1):\n            a, b = i * n + j, (i + 1) * n + j",
             "        for i in range(n - 2):\n            a, b = i * n + j, (i + 1) * n + j",
             POLYTOPES, "U's constraints miss the last pair of neighbouring rows"),
    Mutation("polytopes-active-rows-slack", "polytopes.py",
             "[a for a, b in self._ub if self._dot(a, x) == b]",
             "[a for a, b in self._ub if self._dot(a, x) <= b]", POLYTOPES,
             "every satisfied inequality is counted as active (tight)"),
    Mutation("scales-index-range-inclusive", "scales.py",
             "    if not 0 <= m < 2 ** (n - 1):", "    if not 0 <= m <= 2 ** (n - 1):", SCALES,
             "pattern_from_index accepts m = 2^(n-1) (one past the last column of psi)"),
    Mutation("scales-peak-off-by-one", "scales.py",
             "    return tuple(1 if i < j else -1 for i in range(n - 1))",
             "    return tuple(1 if i <= j else -1 for i in range(n - 1))", SCALES,
             "the single-peaked pattern peaks one step late"),

    # at the digits sampler's ties, EM's stopping rule, the branches of the inverse of
    # phi_delta and Normaliz's private folder
    Mutation("gap-digits-tie-first-draw", "sampling/geometric.py",
             "        g = K - np.searchsorted(first_thresholds, v >> np.uint64(1), side=\"right\")",
             "        g = K - np.searchsorted(first_thresholds, v >> np.uint64(1), side=\"left\")",
             SAMPLING, "the digits method counts u = s_g as below s_g"),
    Mutation("gap-digits-tie-further-draw", "sampling/geometric.py",
             "source.below(p ** J, more.size), side=\"right\")",
             "source.below(p ** J, more.size), side=\"left\")", SAMPLING,
             "the digits method's further draws count a tie as below the threshold"),
    Mutation("gap-em-stopping-rule-loose", "privatizers/deconvolve.py",
             "        if gap <= tol * max(abs(L0), 1.0):",
             "        if gap <= tol * max(abs(L0), N):", DECONVOLVE,
             "EM's certificate is judged relative to N, not to |L| (looser when |L| < N)"),
    Mutation("gap-phi-inverse-wrong-branch", "approximate.py",
             "    if v <= (x_b - delta) / lam:", "    if v <= x_b / lam:", APPROXIMATE,
             "the inverse of phi_delta switches branch at the wrong value"),
    Mutation("gap-normaliz-folder-left-behind", "enumeration.py",
             "    with tempfile.TemporaryDirectory(prefix=\"dpfix-normaliz-\") as tmp:\n"
             "        return open(_normaliz_out(h, Path(tmp)))",
             "    tmp = tempfile.mkdtemp(prefix=\"dpfix-normaliz-\")\n"
             "    return open(_normaliz_out(h, Path(tmp)))", ENUMERATION,
             "Normaliz's private folder is never removed"),
    Mutation("gap-normaliz-shared-folder", "enumeration.py",
             "        return open(_normaliz_out(h, Path(tmp)))",
             "        return open(_normaliz_out(h, Path(tempfile.gettempdir())))", ENUMERATION,
             "Normaliz writes in the shared temporary folder"),
]


def copy_source(dest: Path) -> Path:
    """Copy ``src`` to ``dest`` (without caches); return the copy's ``src``."""
    src = dest / "src"
    shutil.copytree(ROOT / "src", src, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return src


def environment(src: Path) -> dict[str, str]:
    """``PYTHONPATH`` with the copy first; ``TMPDIR`` beside it, so that whatever a
    mutant leaves in the temporary folder goes with the copy."""
    env = dict(os.environ)
    tmp = src.parent / "tmp"
    tmp.mkdir(exist_ok=True)
    env["TMPDIR"] = str(tmp)
    env["PYTHONPATH"] = os.pathsep.join([str(src), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def check_import(src: Path) -> None:
    """The tests must import the copy, not the editable install of the working tree."""
    out = subprocess.run([sys.executable, "-c", "import dpfix; print(dpfix.__file__)"],
                         env=environment(src), capture_output=True, text=True, check=True,
                         cwd=ROOT)
    where = Path(out.stdout.strip()).resolve()
    if not where.is_relative_to(src.resolve()):
        raise SystemExit(f"mutations: dpfix imports from {where}, not from the copy {src}")


def run_one(m: Mutation, timeout: float) -> dict[str, object]:
    """Apply ``m`` to a fresh copy and run its tests; the outcome as a dict."""
    with tempfile.TemporaryDirectory(prefix="dpfix-mutation-") as tmp:
        src = copy_source(Path(tmp))
        path = src / "dpfix" / m.file
        text = path.read_text()
        found = text.count(m.old)
        if found != 1:
            return {"name": m.name, "status": "not applicable",
                    "detail": f"the text to replace occurs {found} times in {m.file}"}
        path.write_text(text.replace(m.old, m.new))
        check_import(src)
        cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
               "-o", "addopts=", "--import-mode=importlib", *m.tests]
        start = time.monotonic()
        try:
            proc = subprocess.run(cmd, env=environment(src), cwd=ROOT, capture_output=True,
                                  text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"name": m.name, "status": "killed", "seconds": round(timeout),
                    "detail": f"timed out after {timeout:.0f} s"}
        seconds = round(time.monotonic() - start, 1)
        lines = proc.stdout.strip().splitlines()
        failed = [ln for ln in lines if ln.startswith(("FAILED", "ERROR"))]
        if proc.returncode == 0:
            status, detail = "survived", lines[-1] if lines else ""
        elif proc.returncode == 1:
            status, detail = "killed", failed[0] if failed else lines[-1]
        else:  # collection error, usage error: the mutation did not get a fair run
            status = "error"
            detail = (failed or lines or proc.stderr.strip().splitlines() or ["?"])[-1]
        return {"name": m.name, "status": status, "seconds": seconds, "detail": detail}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run these mutations only")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per mutation")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--json", type=Path, help="also write the outcomes here")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTATIONS if not args.only or m.name in args.only]
    unknown = set(args.only or ()) - {m.name for m in MUTATIONS}
    if unknown:
        parser.error(f"unknown mutation(s): {', '.join(sorted(unknown))}")
    if args.list:
        for m in chosen:
            print(f"{m.name:42} {m.file:28} {m.why}")
        return 0
    results = []
    for m in chosen:
        r = run_one(m, args.timeout)
        results.append(r)
        print(f"{r['status']:>14}  {m.name:42} {r.get('seconds', ''):>6}  {r['detail']}",
              flush=True)
    applicable = [r for r in results if r["status"] != "not applicable"]
    killed = sum(r["status"] == "killed" for r in applicable)
    print(f"killed {killed} of {len(applicable)} applicable mutations "
          f"({len(results) - len(applicable)} not applicable)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0 if killed == len(applicable) else 1


if __name__ == "__main__":
    sys.exit(main())
