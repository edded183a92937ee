"""The float path agrees with the exact one; float privacy levels and noise scales are right.

The other checks run the paper's results on the exact path (Fractions); the
mechanisms a user builds with ``eps`` are floats, and so is stage 1's noise.
This check ties them together, so that ``dpfix verify`` alone catches a bug
that lives only in floats:

1. scales (Definition 6): ``scale``, ``log_scale``, ``psi``, ``sigma`` with
   ``eps = log(lam)`` equal the exact scales with ``lam`` (every pattern, n <= 6);
2. Algorithm 1 (Theorems 5, 6): the float kernel, compiled (numba) and
   vectorised, gives the exact kernel's ``T`` for the same column order; the
   public float ``heuristic`` needs no exact fallback and is compiled when numba is;
3. the northwest corner (docs/optimum_of_F.md), Algorithm 2 (Theorems 7, 8) and
   the truncated geometric and staircase mechanisms: float ``T`` equals exact ``T``;
4. privacy levels of float mechanisms: ``privacy_level()`` equals a level
   computed here from ``log T``, is at most ``eps`` (within ``FLOAT_RTOL``),
   equals the exact mechanism's ``log`` ratio, and ``is_dp``/``check`` refuse
   the mechanism at its own level times ``1 - 1e-6``;
5. stage 1's noise (paper Section 3, Theorem 1, Appendix A): for every
   privatizer the noise scale it draws with gives privacy loss exactly its
   budget over all one-unit moves (computed here from the released values, or,
   for the cyclic mechanisms, from the shift of Theorem 1's proof), the
   reported scale is the one drawn with, the (eps, delta) Gaussian meets Balle
   and Wang's delta (computed here) tightly, and the drawn noise has that scale.
"""

from __future__ import annotations

import importlib
import math
import sys
from contextlib import contextmanager
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import numpy as np

from dpfix.constructors import construct
from dpfix.constructors._heuristic_kernel import HAVE_NUMBA, ExactOps, LogOps
from dpfix.constructors._heuristic_kernel import run as kernel
from dpfix.explore.cases import grid
from dpfix.release.privatizers import PRIVATIZERS, privatize_distribution
from dpfix.theory.mechanism import FLOAT_RTOL, Mechanism
from dpfix.theory.scales import log_scale, pattern_from_index, psi, scale, sigma

RESULT = "Float path"
STATEMENT = ("float scales, Algorithm 1 (compiled and not), northwest, Algorithm 2 and the "
             "baselines equal their exact forms; float privacy levels and stage-1 noise "
             "scales are exact")

LAMS = (Fraction(5, 4), Fraction(3, 2), Fraction(2), Fraction(3), Fraction(7))
#: Float T against exact T, entry by entry (rounding is about 1e-15 here).
T_ATOL = 1e-11


def _case(label: str, **kw) -> str:
    return label + " (" + ", ".join(f"{k}={v}" for k, v in kw.items()) + ")"


def _random_z(rng: np.random.Generator, n: int, zeros: int = 0) -> np.ndarray:
    w = [int(v) for v in rng.integers(1, 12, n)]
    for k in rng.choice(n, size=min(zeros, n - 1), replace=False):
        w[int(k)] = 0
    return np.array([Fraction(v, sum(w)) for v in w], dtype=object)


def _targets(mode: str) -> list[tuple[Fraction, np.ndarray]]:
    """(lam, exact z): the standard grid and seeded random z up to n = 9 (12 full)."""
    out = [(lam, z) for _n, lam, _name, z in grid()]
    rng = np.random.default_rng(1101)
    for k in range(40 if mode == "full" else 12):
        n = int(rng.integers(5, 13 if mode == "full" else 10))
        out.append((LAMS[k % len(LAMS)], _random_z(rng, n, zeros=k % 3)))
    return out


def _floats(z: np.ndarray) -> np.ndarray:
    zf = np.array([float(v) for v in z])
    return zf / zf.sum()


def _close(F: np.ndarray, X: np.ndarray, what: str) -> None:
    err = float(np.max(np.abs(F - X.astype(float)))) if X.size else 0.0
    assert err <= T_ATOL, f"{what}: float and exact differ by {err:.3g}"


# ------------------------------------------------------------------------ 1. scales
def check_scales(mode: str) -> int:
    cases = 0
    for n in range(1, 7 if mode == "quick" else 9):
        for lam in LAMS:
            eps = math.log(lam)
            for m in range(2 ** (n - 1)):
                p = pattern_from_index(m, n)
                exact = scale(p, lam).astype(float)
                what = _case("scale", pattern=p, lam=lam)
                _close(scale(p, eps=eps), exact, what)
                _close(scale(p, float(lam)), exact, what + " with a float lam")
                _close(np.exp(log_scale(p, eps)), exact, "log_scale of " + what)
                cases += 1
            _close(psi(n, eps=eps), psi(n, lam), _case("psi", n=n, lam=lam))
            _close(sigma(n, eps=eps), sigma(n, lam), _case("sigma", n=n, lam=lam))
            cases += 2
    return cases


# ---------------------------------------------------------------- 2. Algorithm 1
def _sandwich(n: int):
    order = [k // 2 if k % 2 == 0 else n - 1 - k // 2 for k in range(n)]
    return lambda c, remaining: next(j for j in order if remaining[j])


def check_algorithm1(mode: str) -> int:
    cases = 0
    for lam, z in _targets(mode):
        n, zf, eps = len(z), _floats(z), math.log(lam)
        exact = kernel(ExactOps(lam, z), n, _sandwich(n)).matrix.astype(float)
        for compiled in (True, False) if HAVE_NUMBA else (False,):
            what = _case("Algorithm 1 kernel", compiled=compiled, lam=lam, z=list(map(str, z)))
            out = kernel(LogOps(eps, zf), n, _sandwich(n), compiled=compiled)
            assert out.compiled == compiled, f"{what}: compiled={out.compiled}"
            with np.errstate(under="ignore"):
                _close(np.exp(out.matrix), exact, what)
            cases += 1
        m = construct(zf, eps, constructor="heuristic", selector="sandwich")
        what = _case("heuristic", lam=lam, z=list(map(str, z)))
        assert "exact_fallback" not in m.params, \
            f"{what}: the float run failed its check ({m.params.get('exact_fallback')})"
        assert m.params["compiled"] == HAVE_NUMBA, f"{what}: compiled={m.params['compiled']}"
        exact = construct(z, lam=lam, constructor="heuristic", selector="sandwich")
        _close(m.T, exact.matrix, what)
        cases += 1
    return cases


# ------------------------------------------------ 3. northwest, Algorithm 2, baselines
def check_constructors(mode: str) -> int:
    cases = 0
    for lam, z in _targets(mode):
        zf, eps = _floats(z), math.log(lam)
        for method in ("northwest", "unfixed"):
            what = _case(method, lam=lam, z=list(map(str, z)))
            F, X = construct(zf, eps, constructor=method), construct(z, lam=lam, constructor=method)
            _close(F.T, X.matrix, what)
            fe, xe = F.count_error(zf, "abs"), float(X.count_error(z, "abs"))
            assert abs(fe - xe) <= T_ATOL, f"{what}: count errors {fe} != {xe}"
            cases += 1
    for n in (1, 2, 3, 7, 16):
        for lam in LAMS + (Fraction(9, 4), Fraction(4), Fraction(9)):
            methods = ["truncated-geometric"]
            if int(math.isqrt(lam.numerator)) ** 2 == lam.numerator and \
                    int(math.isqrt(lam.denominator)) ** 2 == lam.denominator:
                methods.append("staircase")  # exact only for a square lam
            for method in methods:
                F = construct(None, math.log(lam), constructor=method, n=n)
                X = construct(None, lam=lam, constructor=method, n=n)
                _close(F.T, X.matrix, _case(method, n=n, lam=lam))
                cases += 1
    return cases


# --------------------------------------------------------------- 4. privacy levels
def _level(L: np.ndarray) -> float:
    """max |log T[i, j] - log T[i+1, j]| over neighbours not both zero, from scratch."""
    a, b = L[:-1], L[1:]
    both = np.isneginf(a) & np.isneginf(b)
    with np.errstate(invalid="ignore"):
        d = np.where(both, 0.0, np.abs(a - b))
    return float(d.max()) if d.size else 0.0


def _level_checks(F: Mechanism, what: str, exact: Mechanism | None) -> None:
    level, eps = F.privacy_level(), F.eps
    ref = _level(F.log_matrix)
    assert abs(level - ref) <= 1e-12 * max(ref, 1.0), f"{what}: privacy_level {level} != {ref}"
    assert level <= eps * (1 + FLOAT_RTOL), f"{what}: level {level} > eps {eps}"
    assert F.is_dp(), f"{what}: not is_dp() at its own eps"
    if exact is not None and exact.n > 1:
        ratio = exact.privacy_ratio()
        want = math.log(ratio.numerator) - math.log(ratio.denominator)
        assert abs(level - want) <= 1e-9 * max(want, 1e-6), f"{what}: level {level}, exact {want}"
    if level > 0:
        below = level * (1 - 1e-6)
        assert not F.is_dp(below), f"{what}: is_dp at level (1 - 1e-6)"
        try:
            replace(F, eps=below).check()
        except ValueError:
            pass
        else:
            raise AssertionError(f"{what}: check() passes at level (1 - 1e-6)")


def check_levels(mode: str) -> int:
    cases = 0
    targets = _targets(mode)[:: 1 if mode == "full" else 3]
    for lam, z in targets:
        zf, eps = _floats(z), math.log(lam)
        for method in ("heuristic", "northwest", "unfixed"):
            what = _case(f"{method} privacy level", lam=lam, z=list(map(str, z)))
            X = construct(z, lam=lam, constructor=method)
            _level_checks(construct(zf, eps, constructor=method), what, X)
            cases += 1
        if len(z) <= 6:
            _level_checks(construct(zf, eps, constructor="lp"), _case("lp privacy level", lam=lam,
                                                                 z=list(map(str, z))), None)
            cases += 1
    for n in (2, 65, 130):  # privacy_level sees every pair, also across its row blocks
        for k in range(n - 1):  # rows k, k + 1 differ by a ratio 2 in column 0 only
            L = np.full((n, n), -math.log(n))
            L[k + 1] = np.log(np.r_[2.0, np.ones(n - 1)] / (n + 1))
            M = Mechanism(log_matrix=L, eps=math.log(2) * (1 + 1e-12))
            assert abs(M.privacy_level() - _level(L)) <= 1e-15, \
                f"privacy_level misses rows {k}, {k + 1} of {n}: {M.privacy_level()}"
            cases += 1
    for n in (2, 5, 40, 130):  # 130: pairs across the row blocks of privacy_level
        for eps in (1e-3, 0.5, math.log(4), 5.0):
            for method in ("truncated-geometric", "staircase"):
                _level_checks(construct(None, eps, constructor=method, n=n),
                              _case(f"{method} privacy level", n=n, eps=eps), None)
                cases += 1
    return cases


# --------------------------------------------------------------- 5. stage-1 noise
_MODULES = {"cyclic-laplace": "dpfix.release.privatizers.cyclic",
            "cyclic-gaussian": "dpfix.release.privatizers.cyclic",
            "laplace": "dpfix.release.privatizers.laplace_baselines",
            "privelet": "dpfix.release.privatizers.laplace_baselines",
            "hierarchical": "dpfix.release.privatizers.hierarchical"}


@contextmanager
def _recording(method: str):
    """Record every call of the module's noise functions (values, scale) and its output."""
    module = importlib.import_module(_MODULES[method])
    calls: list[dict] = []
    saved = {name: getattr(module, name) for name in ("add_laplace", "add_gaussian")
             if hasattr(module, name)}

    def wrap(name, f):
        def recorded(values, scale, **kw):
            out, loss = f(values, scale, **kw)
            calls.append({"kind": name, "values": np.asarray(values), "scale": float(scale),
                          "noise": np.asarray(out, dtype=float) - np.asarray(values, dtype=float)})
            return out, loss
        return recorded

    for name, f in saved.items():
        setattr(module, name, wrap(name, f))
    try:
        yield calls
    finally:
        for name, f in saved.items():
            setattr(module, name, f)


def _draw(method: str, eta: np.ndarray, eps: float, **kw) -> tuple[dict, object]:
    with _recording(method) as calls:
        out = privatize_distribution(eta, eps, privatizer=method, secure=False, rng=7, **kw)
    assert len(calls) <= 1, f"{method}: {len(calls)} noise draws, expected one"
    return (calls[0] if calls else None), out


def _moves(eta: np.ndarray):
    """Every one-unit move: one row's count i -> i + 1 or i + 1 -> i (paper Section 3)."""
    for i in range(len(eta) - 1):
        for a, b in ((i, i + 1), (i + 1, i)):
            if eta[a] > 0:
                e = eta.copy()
                e[a] -= 1
                e[b] += 1
                yield e


def _cyclic_shift(delta: np.ndarray, norm: int) -> float:
    """min ||u||_p over u with u_i - u_{(i+1) mod n} = delta_i (Definition 2's noise
    map, Theorem 1's shift): u is fixed up to a constant; the median (p = 1) or the
    mean (p = 2) of a solution is the best constant."""
    u = -np.concatenate([[0.0], np.cumsum(delta[:-1])])
    u -= np.median(u) if norm == 1 else u.mean()
    return float(np.abs(u).sum()) if norm == 1 else float(np.sqrt((u * u).sum()))


def _gaussian_delta(sigma_: float, eps: float) -> float:
    """Balle and Wang (2018), Theorem 8, sensitivity 1."""
    phi = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))  # noqa: E731
    return phi(0.5 / sigma_ - eps * sigma_) - math.exp(eps) * phi(-0.5 / sigma_ - eps * sigma_)


def check_noise(mode: str) -> int:
    cases = 0
    rng = np.random.default_rng(5)
    sizes = (2, 3, 5, 9, 17, 40) if mode == "quick" else (2, 3, 5, 9, 16, 17, 33, 40, 257)
    for method in PRIVATIZERS:
        for n in sizes:
            for eps in (0.5, 1.0, 3.0):
                eta = rng.integers(1, 6, n)
                what = _case(method, n=n, eps=eps)
                if method == "cyclic-gaussian":
                    cases += _check_gaussian(eta, eps, what)
                    continue
                call, out = _draw(method, eta, eps)
                scale_ = call["scale"]
                reported = out.noise.get("scale", out.noise.get("lam"))
                assert reported == scale_, f"{what}: reports scale {reported}, drew {scale_}"
                losses = []
                for e in _moves(eta):
                    if method == "cyclic-laplace":
                        losses.append(_cyclic_shift(e - eta, 1) / scale_)
                    else:
                        moved, _ = _draw(method, e, eps)
                        d = moved["values"].astype(float) - call["values"].astype(float)
                        losses.append(float(np.abs(d).sum()) / scale_)
                loss = max(losses)
                assert abs(loss - eps) <= 1e-12 * eps, \
                    f"{what}: Laplace scale {scale_} gives privacy loss {loss}, budget {eps}"
                cases += 1
    # the drawn noise has the scale it claims (n = 4096 draws per privatizer)
    for method in PRIVATIZERS:
        eta = rng.integers(1, 6, 4096)
        kw = {"delta": 1e-6} if method == "cyclic-gaussian" else {}
        call, _ = _draw(method, eta, 1.0, **kw)
        x = call["noise"]
        spread = float(np.abs(x).mean()) if call["kind"] == "add_laplace" else float(x.std())
        assert abs(spread / call["scale"] - 1) < 0.1, \
            f"{method}: noise of scale {call['scale']} has spread {spread}"
        cases += 1
    return cases


def _check_gaussian(eta: np.ndarray, eps: float, what: str) -> int:
    rho = eps / 4
    call, out = _draw("cyclic-gaussian", eta, None, rho=rho)
    s = call["scale"]
    assert out.noise["sigma"] == s, f"{what}: reports sigma {out.noise['sigma']}, drew {s}"
    # zCDP of a shift u: ||u||_2^2 / (2 sigma^2); the worst move's shift has ||u||_2 <= 1
    worst = max(_cyclic_shift(e - eta, 2) for e in _moves(eta))
    assert worst ** 2 / (2 * s * s) <= rho * (1 + 1e-12), f"{what}: zCDP {rho} exceeded"
    assert abs(1 / (2 * s * s) - rho) <= 1e-12 * rho, f"{what}: sigma {s} for rho {rho}"
    delta = 1e-6
    call, out = _draw("cyclic-gaussian", eta, eps, delta=delta)
    s = call["scale"]
    assert _gaussian_delta(s, eps) <= delta * (1 + 1e-6), f"{what}: sigma {s} exceeds delta"
    assert _gaussian_delta(s * (1 - 1e-3), eps) > delta, f"{what}: sigma {s} is not tight"
    return 2


def run(mode: str = "quick") -> int:
    """Check the statement; returns the number of cases checked."""
    if mode not in ("quick", "full"):
        raise ValueError(f"mode: 'quick' or 'full', got {mode!r}")
    return (check_scales(mode) + check_algorithm1(mode) + check_constructors(mode)
            + check_levels(mode) + check_noise(mode))


if __name__ == "__main__":
    chosen = "full" if "--full" in sys.argv[1:] else "quick"
    print(f"{Path(__file__).name}: {RESULT}: {STATEMENT}")
    print(f"ok: {run(chosen)} cases ({chosen})")
