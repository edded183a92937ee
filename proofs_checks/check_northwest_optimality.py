"""Theorem A (docs/optimum_of_F.md): the northwest corner is optimal over F for every
convex loss, indeed for every Monge cost; exact certificates.

Every case is exact (rational lam, Fractions and python-flint fmpq) and checks:

- Lemma B (pointwise maximal joint CDF): for ``T`` in F (Algorithm 1 with every
  selector, and the exact optimum of F for the zero-one loss), ``H_T(k, l) =
  P(X <= k, Y <= l) <= H_nw(k, l)`` for all ``k, l`` (``X ~ z``, ``Y`` the output);
- Theorem A via Lemma C (the explicit dual): :func:`dpfix.certify.certify_optimal`
  certifies the northwest corner optimal (gap exactly 0, the dual point
  re-verified by :meth:`~dpfix.certify.Certificate.check`, whose walk recursion
  is Lemma 1) for abs, squared, every hinge ``(d - a)^+`` (so every convex loss:
  :func:`dpfix.certify.certify_universal`) and random Monge costs that are not
  functions of ``i - j``;
- an independent second opinion at small ``n``: the northwest count error equals
  the exact LP optimum over F of :func:`dpfix.constructors.lp_optimum` (cdd.gmp),
  and for the squared loss (strictly Monge) the LP's optimum equals the northwest
  corner on every row with ``z_i > 0`` (Corollary A1: uniqueness);
- Theorem 8 the same way over U: Algorithm 2 certified optimal by its own dual.

At an irrational breakpoint of ``dpfix verify --every-lam`` (``lam`` a real algebraic
number) every statement is checked the same way exactly over ``Q(lam)``: the northwest
corner, the heuristics and Algorithm 2 built in the field, the certificates' explicit
dual points and cone tests computed and re-verified in it; where an exact LP over Q
gives the independent optimum, the minimum over F is the least value over its exact
vertices (Normaliz over the number field), and every optimal vertex is tested (Lemma B
for each, Corollary A1's rows for each).

Cases: ``n`` in 2..12 (quick; 2..16, 20, 24, 30 and random targets up to 24 in full),
``lam`` in {11/10, 3/2, 2, 3, 10}, the standard targets of dpfix.explore.cases and
targets with zeros at the ends and inside.
"""

from __future__ import annotations

import sys
from fractions import Fraction

import numpy as np

from dpfix.certify import certify_optimal, certify_universal, exact_optimum
from dpfix.constructors import heuristic, lp_optimum, northwest_corner, unfixed_optimum
from dpfix.explore.cases import polytope, random_lam, random_z, standard_z
from dpfix.numbers.algebraic import is_algebraic
from dpfix.theory.mechanism import weight_matrix

RESULT = "Theorem A (northwest corner)"
STATEMENT = ("the northwest corner minimises sum z_i f(i-j) T_ij over F for every convex f "
             "(every Monge cost): exact dual certificates, joint-CDF dominance")

LAMS = (Fraction(11, 10), Fraction(3, 2), Fraction(2), Fraction(3), Fraction(10))


def _targets(n: int) -> dict[str, np.ndarray]:
    """The standard targets plus zeros at both ends, inside, and a point mass."""
    out = dict(standard_z(n))
    if n >= 3:
        w = [0] + [k % 3 + 1 for k in range(n - 2)] + [0]
        out["zero ends"] = np.array([Fraction(v, sum(w)) for v in w], dtype=object)
        w = [1 if k % 2 == 0 else 0 for k in range(n)]
        w[-1] = 2
        out["zeros inside"] = np.array([Fraction(v, sum(w)) for v in w], dtype=object)
    w = [0] * n
    w[n // 2] = 1
    out["point mass"] = np.array([Fraction(v) for v in w], dtype=object)
    return out


def _joint_cdf(T: np.ndarray, z: np.ndarray) -> np.ndarray:
    J = z[:, None] * T
    return np.cumsum(np.cumsum(J, axis=0), axis=1)


def _random_monge(rng: np.random.Generator, n: int, z: np.ndarray) -> np.ndarray:
    """``z_i c(i, j)``, ``c = a_i + b_j + sum_kl w_kl 1[i > k] 1[j <= l]``, ``w >= 0``:
    a Monge cost that is not a function of ``i - j``."""
    i = np.arange(n)
    c = np.zeros((n, n), dtype=object)
    c[:] = Fraction(0)
    for _ in range(3):
        k, m = (int(x) for x in rng.integers(0, n, size=2))
        c = c + Fraction(int(rng.integers(1, 5))) * ((i[:, None] > k) & (i[None, :] <= m))
    c = c + np.array([Fraction(int(x)) for x in rng.integers(-3, 4, size=n)])[:, None]
    c = c + np.array([Fraction(int(x)) for x in rng.integers(-3, 4, size=n)])[None, :]
    return z[:, None] * c


def _check(n: int, lam: Fraction, z: np.ndarray, label: str, rng: np.random.Generator,
           lp: bool) -> int:
    T = northwest_corner(z, lam=lam).matrix
    uc = certify_universal(z, lam, T)
    uc.check()
    bad = [a for a, c in uc.hinges if not c.optimal]
    assert not bad, f"{label}: hinges {bad} not certified optimal (a counterexample to Theorem A)"
    for weights in ("abs", "squared", _random_monge(rng, n, z)):
        kind = weights if isinstance(weights, str) else "random Monge"
        cert = certify_optimal(T, z, lam, weights, dual="explicit").check()
        assert cert.optimal and cert.dual == "northwest", (
            f"{label}, {kind}: gap {cert.gap} ({cert.dual} dual)")
    H = _joint_cdf(T, z)
    others = [heuristic(z, lam=lam, selector=s).matrix for s in ("max", "min", "sandwich")]
    if n <= 6:
        others += _optima(n, lam, z, "zero-one")[1]
    for k, other in enumerate(others):
        below = _joint_cdf(other, z) <= H
        assert below.all(), (f"{label}: Lemma B fails for mechanism {k} at "
                             f"{np.argwhere(~below)[0].tolist()}")
    for weights in ("abs", "squared"):
        M = unfixed_optimum(z, lam=lam, loss=weights)
        cu = certify_optimal(M, z, lam, weights, kind="U", dual="explicit").check()
        assert cu.optimal, f"{label}, {weights}: Algorithm 2 not certified over U (gap {cu.gap})"
        if lp:
            value, optima = _optima(n, lam, z, weights, lp=True)
            assert value == certify_optimal(T, z, lam, weights, dual="explicit").value, (
                f"{label}, {weights}: the exact LP disagrees with the certificate")
            if weights == "squared":  # Corollary A1: strictly Monge, so a unique optimum
                pos = [i for i in range(n) if z[i] > 0]
                assert all((opt[pos] == T[pos]).all() for opt in optima), (
                    f"{label}: the LP's squared-loss optimum differs from the northwest "
                    f"corner on a row with z_i > 0 (Corollary A1)")
    return 1


def _optima(n: int, lam, z: np.ndarray, loss: str, lp: bool = False) -> tuple[object, list]:
    """The exact minimum of ``<W, T>`` over F and optimal points, by a method independent
    of the northwest dual. Over Q: the exact dual LP's optimum
    (:func:`dpfix.certify.exact_optimum`), or with ``lp`` the exact primal LP of
    :func:`dpfix.constructors.lp_optimum` (cdd.gmp). Over Q(lam) (``lam`` algebraic),
    where neither LP runs: the minimum over F is attained at a vertex, so it is the least
    value over the exact vertices of F(n, lam, z), and every vertex attaining it is
    returned (all optima, not only one)."""
    if is_algebraic(lam):
        Fz = polytope("F", n, lam, z)
        W = weight_matrix(loss, z, exact=True)
        best, _ = Fz.maximize(-W)
        return -best, Fz.optimal_face_vertices(-W)
    if lp:
        opt = lp_optimum(z, lam=lam, loss=loss, solver="exact")
        return opt.params["objective"], [opt.matrix]
    opt = exact_optimum(z, lam, loss)
    return opt.value, [opt.T]


def run(mode: str = "quick") -> int:
    rng = np.random.default_rng(20)
    ns = tuple(range(2, 13)) if mode == "quick" else (*range(2, 17), 20, 24, 30)
    lams = LAMS if mode == "full" else (Fraction(3, 2), Fraction(2), Fraction(10))
    cases = 0
    for n in ns:
        for lam in lams:
            for name, z in _targets(n).items():
                if mode == "quick" and n > 8 and name not in ("zero ends", "zeros inside"):
                    continue
                cases += _check(n, lam, z, f"n={n}, lam={lam}, z={name}", rng, lp=n <= 4)
    for t in range(20 if mode == "quick" else 100):
        n = int(rng.integers(2, 9 if mode == "quick" else 25))
        lam = random_lam(rng)
        z = random_z(rng, n, zeros=int(rng.integers(0, n)))
        cases += _check(n, lam, z, f"random case {t}: n={n}, lam={lam}, z={list(z)}", rng,
                        lp=n <= 4)
    return cases



def every_lam(n: int, cases: list) -> int:
    """The check at size ``n`` at each ``(lam, z_name, z)`` of ``cases`` (``dpfix verify
    --every-lam``: a rational point of every chamber and every breakpoint, an irrational
    one as an algebraic lam, the check then exact over Q(lam))."""
    rng = np.random.default_rng(20)
    return sum(_check(n, lam, z, f"n={n}, lam={lam}, z={name}", rng, lp=n <= 4)
               for lam, name, z in cases)


if __name__ == "__main__":
    print(run("full" if "--full" in sys.argv else "quick"), "cases checked")
