"""Exact samplers (docs/sampling.md): the noise, the structured mechanisms, the tables."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import dpfix.constructors as C
from dpfix.constructors import northwest_corner, truncated_geometric, unfixed_optimum
from dpfix.constructors.remap import structured_sampler
from dpfix.sampling import (
    SecureSource,
    SeededSource,
    TwoSidedGeometric,
    lam_at_most_exp,
    random_source,
    rational_lam,
    two_sided_geometric_pmf,
)
from dpfix.sampling.structured import Remap
from dpfix.sampling.table import CheckedTable, SamplingCheckError, checked_table

#: chi-square tests fail with probability ALPHA when the sampler is right
ALPHA = 1e-4


def chisquare_against(counts, probs, min_expected=5.0):
    """p-value of a chi-square goodness-of-fit test, pooling cells expected below 5."""
    counts, probs = np.asarray(counts, dtype=float), np.asarray(probs, dtype=float)
    assert abs(probs.sum() - 1) < 1e-9
    expected = probs * counts.sum()
    keep = expected >= min_expected
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp).pvalue


# ------------------------------------------------------------------ sources and lam
def test_uniform_below_is_uniform_and_in_range():
    src = SeededSource(3)
    for bound in (1, 2, 3, 6, 2**20, 3 * 2**40 + 1, 2**63):
        v = src.below(bound, 20000)
        assert v.dtype == np.uint64 and int(v.max()) < bound
    v = src.below(7, 70000)
    assert chisquare_against(np.bincount(v.astype(np.int64), minlength=7), [1 / 7] * 7) > ALPHA
    # a bound just above 2^63 / 1.5 refuses about a third of the words: still uniform
    b = (1 << 64) // 3 + 1
    top = (src.below(b, 30000) * np.uint64(3) // np.uint64(b)).astype(np.int64)
    assert chisquare_against(np.bincount(top, minlength=3), [1 / 3] * 3) > ALPHA
    with pytest.raises(ValueError, match="bound"):
        src.below(0, 1)


def test_sources_secure_by_default_and_seeded_reproducible():
    assert isinstance(random_source(), SecureSource) and random_source().secure
    a, b = random_source(5), random_source(5)
    assert not a.secure and "not for release" in a.description
    assert (a.words(10) == b.words(10)).all()
    assert random_source(np.random.SeedSequence(5)).words(3).shape == (3,)
    s = SecureSource()
    assert s.words(1000).dtype == np.uint64 and len(set(s.words(1000).tolist())) == 1000


@pytest.mark.parametrize("eps", [1e-3, 0.05, 0.1, 0.5, 1.0, math.log(2), 3.0, 10.0, 19.0, 30.0])
def test_rational_lam_is_at_most_e_eps_and_close(eps):
    lam = rational_lam(eps)
    assert isinstance(lam, Fraction) and lam > 1 and lam_at_most_exp(lam, eps)
    if eps < 20:
        assert math.log(lam) >= eps * (1 - 2e-9)
    # a rational a hair above e^eps is refused
    up = Fraction(math.exp(eps)) * (1 + Fraction(1, 10**12))
    assert not lam_at_most_exp(up, eps)


def test_lam_at_most_exp_decides_close_calls():
    e = Fraction(2718281828459045, 10**15)  # e = 2.718281828459045235...
    assert lam_at_most_exp(e, 1.0) and not lam_at_most_exp(e + Fraction(1, 10**15), 1.0)
    assert lam_at_most_exp(2, math.log(2) + 1e-15) and not lam_at_most_exp(2, math.log(2))
    with pytest.raises(ValueError):
        rational_lam(0.0)


# ------------------------------------------------------------------ the two-sided geometric
@pytest.mark.parametrize("lam", [2, Fraction(3, 2), Fraction(11, 10), Fraction(84457, 35739), 7])
def test_two_sided_geometric_matches_its_pmf(lam):
    g = TwoSidedGeometric(lam)
    x = g.sample(200_000, SeededSource(11))
    lo, hi = int(x.min()), int(x.max())
    ks = np.arange(lo, hi + 1)
    probs = np.array([float(two_sided_geometric_pmf(lam, k)) for k in ks])
    counts = np.bincount(x - lo, minlength=len(ks))
    # mass outside [lo, hi] goes to the pooled cell
    probs = np.append(probs, 1 - probs.sum())
    counts = np.append(counts, 0)
    assert chisquare_against(counts, probs) > ALPHA
    assert abs(x.mean()) < 5 * x.std() / math.sqrt(x.size)


def test_two_sided_geometric_cap_is_the_clamped_law():
    lam, cap = Fraction(11, 10), 4
    x = TwoSidedGeometric(lam).sample(100_000, SeededSource(2), cap=cap)
    assert x.min() >= -cap and x.max() <= cap
    probs = [float(two_sided_geometric_pmf(lam, k)) for k in range(-cap + 1, cap)]
    tail = (1 - sum(probs)) / 2
    probs = [tail, *probs, tail]
    assert chisquare_against(np.bincount(x + cap, minlength=2 * cap + 1), probs) > ALPHA


def test_two_sided_geometric_secure_source_and_refusals():
    x = TwoSidedGeometric(rational_lam(1.0)).sample(50_000)  # secure by default
    # bins |k| <= 6 and the two tails beyond: every expected count above 30, as the
    # chi-square approximation needs (the tails at +-9 expected under 5 rows)
    ks = np.arange(-6, 7)
    probs = [float(two_sided_geometric_pmf(rational_lam(1.0), k)) for k in ks]
    counts = np.bincount(np.clip(x, -7, 7) + 7, minlength=15)
    assert chisquare_against(counts, [(1 - sum(probs)) / 2, *probs, (1 - sum(probs)) / 2]) \
        > ALPHA
    with pytest.raises(ValueError, match="lam"):
        TwoSidedGeometric(1)
    with pytest.raises(ValueError, match="too large"):
        TwoSidedGeometric(Fraction(2**60))


def test_two_sided_geometric_matches_opendp_discrete_laplace():
    """Two-sample chi-square against OpenDP's exact discrete Laplace sampler (secure)."""
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    lam = rational_lam(0.7)
    size = 30_000
    meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T="i64")),
                             dp.l1_distance(T="i64"), scale=1 / math.log(lam))
    theirs = np.asarray(meas([0] * size), dtype=np.int64)
    ours = TwoSidedGeometric(lam).sample(size)  # both secure
    lo, hi = -6, 6
    table = np.array([np.bincount(np.clip(s, lo, hi) - lo, minlength=hi - lo + 1)
                      for s in (ours, theirs)])
    assert stats.chi2_contingency(table).pvalue > ALPHA
    # and OpenDP's draws fit our exact pmf
    probs = [float(two_sided_geometric_pmf(lam, k)) for k in range(lo + 1, hi)]
    probs = [(1 - sum(probs)) / 2, *probs, (1 - sum(probs)) / 2]
    assert chisquare_against(table[1], probs) > ALPHA


# ------------------------------------------------------------------ structured: T = G R
TARGETS = [["1/4"] * 4, ["1/10", "0", "3/10", "1/5", "1/5", "1/5"], ["0", "1/2", "0", "1/2"],
           ["1/3", "1/6", "0", "0", "1/6", "1/3"], ["1"], ["0", "0", "1", "0", "0"]]


@pytest.mark.parametrize("lam", [2, Fraction(3, 2), Fraction(11, 10)])
@pytest.mark.parametrize("z", TARGETS)
def test_remap_reproduces_the_mechanism_exactly(z, lam):
    """G R == northwest_corner(z, lam) and Algorithm 2's unfixed optimum, in Fractions."""
    s = structured_sampler("northwest", z, lam=lam)
    assert (s.matrix() == northwest_corner(z, lam=lam).matrix).all()
    assert s.remap.cols.size <= 2 * len(z) - 1
    u = structured_sampler("unfixed", z, lam=lam)
    assert (u.matrix() == unfixed_optimum(z, lam=lam).matrix).all()
    g = structured_sampler("truncated-geometric", lam=lam, n=len(z))
    assert (g.matrix() == truncated_geometric(len(z), lam=lam).matrix).all()


def test_float_remap_matches_the_float_mechanisms():
    rng = np.random.default_rng(4)
    lam = rational_lam(0.8)
    eps = math.log(lam)
    for n in (2, 7, 30):
        z = rng.dirichlet(np.ones(n))
        z[n // 2] = 0
        z /= z.sum()
        s = structured_sampler("northwest", z, lam=lam)
        M = northwest_corner(z, eps=eps)
        assert np.abs(s.matrix(drawn=True).astype(float) - M.T).max() < 1e-12
        assert s.count_error() == pytest.approx(M.count_error(), rel=1e-10)
        u = structured_sampler("unfixed", z, lam=lam)
        U = unfixed_optimum(z, eps=eps)
        assert tuple(u.remap.cols) == U.params["placement"]
        assert u.count_error() == pytest.approx(U.count_error(z), rel=1e-10)


@pytest.mark.parametrize("constructor", ["northwest", "unfixed", "truncated-geometric"])
def test_sampled_rows_match_the_mechanism(constructor):
    """Chi-square on 10^6 draws per row, a few rows, n = 6: the rows drawn are the rows of T."""
    z = ["1/10", "0", "3/10", "1/5", "1/5", "1/5"]
    lam = Fraction(3, 2)
    s = structured_sampler(constructor, z, lam=lam, n=6)
    T = s.matrix(drawn=True)
    src = SeededSource(7)
    for i in (0, 2, 5):
        out = s.sample(np.full(1_000_000, i), src)
        counts = np.bincount(out, minlength=6)
        assert counts[[j for j in range(6) if T[i, j] == 0]].sum() == 0
        assert chisquare_against(counts, [float(t) for t in T[i]]) > ALPHA


def test_structured_sampler_float_target_large_n_and_refusals():
    rng = np.random.default_rng(0)
    n = 20_000
    z = rng.dirichlet(np.ones(n))
    s = structured_sampler("northwest", z, lam=rational_lam(0.5))
    d = rng.integers(0, n, 50_000)
    out = s.sample(d)  # secure source
    assert out.min() >= 0 and out.max() < n and np.abs(out - d).mean() < 50
    assert 0 < s.count_error() < 10
    assert "post-processing" in s.describe(SecureSource())["privacy_statement"]
    one = structured_sampler("northwest", ["1"], lam=2)
    assert one.sample([0, 0]).tolist() == [0, 0]
    with pytest.raises(ValueError, match="counts"):
        s.sample([n])
    with pytest.raises(ValueError, match="not sampled as G R"):
        structured_sampler("heuristic", z, lam=2)
    with pytest.raises(ValueError, match="pieces"):
        Remap.from_pieces(2, [(1, 0, Fraction(1))])


# ------------------------------------------------------------------ checked tables
def table_of(mech, eps=None):
    if mech.exact:
        return checked_table(mech.matrix, lam=mech.lam)
    return checked_table(log_T=mech.log_matrix, eps=eps)


def _table_mechanisms():
    rng = np.random.default_rng(5)
    z = rng.dirichlet(np.ones(8))
    eps = 0.9
    build = eps * (1 - 2e-9)  # the pipeline's margin
    return [
        ("heuristic exact", C.heuristic(["1/2", "1/4", "1/8", "1/8"], lam=Fraction(3, 2)), None),
        ("heuristic float", C.construct(z, build, constructor="heuristic").normalised(), eps),
        ("lp float", C.construct(z, build, constructor="lp").normalised(), eps),
        ("staircase", C.staircase(8, eps=build).normalised(), eps),
        ("staircase exact", C.staircase(5, lam=4), None),
    ]


@pytest.mark.parametrize("name, mech, eps", _table_mechanisms(), ids=lambda x: x
                         if isinstance(x, str) else "")
def test_checked_table_is_close_exact_checked_and_sampled(name, mech, eps):
    t = table_of(mech, eps)
    t.check()
    D = 1 << t.bits
    assert (t.weights.sum(axis=1) == D).all()
    if eps is not None:
        assert lam_at_most_exp(t.lam, eps) and math.log(t.lam) >= eps * (1 - 1e-9)
    else:
        assert t.lam == mech.lam
    T = np.array([[float(x) for x in r] for r in mech.matrix]) if mech.exact else mech.T
    assert np.abs(t.weights / D - T).max() < 1e-8
    # exact privacy on the integers, recomputed here with Fractions on a few rows
    for i in range(min(3, t.n - 1)):
        for j in range(t.n):
            a, b = int(t.weights[i, j]), int(t.weights[i + 1, j])
            assert Fraction(a) <= t.lam * b and Fraction(b) <= t.lam * a
    src = SeededSource(9)
    for i in (0, t.n - 1):
        out = t.sample(np.full(200_000, i), src)
        assert chisquare_against(np.bincount(out, minlength=t.n), t.weights[i] / D) > ALPHA
    assert "checked exactly" in t.describe(src)["privacy_statement"]


def test_perturbed_tables_fail_the_exact_check():
    t = table_of(C.heuristic(["1/2", "1/4", "1/8", "1/8"], lam=Fraction(3, 2)))
    t.check()
    j = int(np.argmin(t.weights[1]))
    # move mass so that w[1, j] / w[0, j] exceeds lam: rows still sum to 2^bits
    bad = t.weights.copy()
    delta = int(bad[0, j] * t.lam) - int(bad[1, j]) + 1
    k = int(np.argmax(bad[1]))
    bad[1, j] += delta
    bad[1, k] -= delta
    with pytest.raises(SamplingCheckError, match="differ by more than lam"):
        CheckedTable(bad, t.bits, t.lam, t.eps).check()
    one_off = t.weights.copy()
    one_off[2, 0] += 1  # a row that no longer sums to 2^bits
    with pytest.raises(SamplingCheckError, match="sums to"):
        CheckedTable(one_off, t.bits, t.lam, t.eps).check()
    neg = t.weights.copy()
    neg[0, 0], neg[0, 1] = -1, neg[0, 1] + neg[0, 0] + 1
    with pytest.raises(SamplingCheckError, match="negative"):
        CheckedTable(neg, t.bits, t.lam, t.eps).check()
    # lam above e^eps: refused even though the integers are fine
    with pytest.raises(SamplingCheckError, match="exceeds"):
        CheckedTable(t.weights, t.bits, t.lam, math.log(1.49)).check()
    # a float mechanism at exactly eps cannot be checked at a rational below e^eps
    with pytest.raises(SamplingCheckError, match="margin"):
        table_of(C.staircase(8, eps=0.9), 0.9)
    with pytest.raises(ValueError, match="not both"):
        checked_table(np.eye(2), log_T=np.zeros((2, 2)), eps=1.0)
    with pytest.raises(ValueError, match="eps"):
        checked_table(log_T=np.zeros((2, 2)))


# ------------------------------------------------------------------ the pipeline uses them
def test_pipeline_default_is_northwest_drawn_exactly_and_securely():
    from dpfix.release.pipeline import privatize_counts

    d = np.random.default_rng(0).negative_binomial(2, 0.25, 4000)
    r = privatize_counts(d, 1.0, upper=30)
    assert r.constructor == "northwest" and r.sampler["kind"] == "structured G R"
    assert r.sampler["secure"] and "os.urandom" in r.sampler["source"]
    report = r.public_report()
    assert "post-processing" in report["samplers"]["privacy_statement"]
    lam = Fraction(r.sampler["lam"])
    assert lam_at_most_exp(lam, r.eps_2) and r.eps_construction == math.log(lam)
    a, b = (privatize_counts(d, 1.0, upper=30, seed=4) for _ in range(2))
    assert np.array_equal(a.counts, b.counts) and not a.sampler["secure"]
    assert "NOT FOR PRODUCTION" in a.public_report()["samplers"]["stage2"]


@pytest.mark.parametrize("constructor", ["heuristic", "staircase", "lp"])
def test_pipeline_draws_other_mechanisms_from_a_checked_table(constructor):
    from dpfix.release.pipeline import privatize_counts

    d = np.random.default_rng(1).negative_binomial(2, 0.25, 3000)
    r = privatize_counts(d, 1.0, upper=12, constructor=constructor, seed=2)
    assert r.sampler["kind"] == "checked table"
    assert "checked exactly" in r.public_report()["samplers"]["privacy_statement"]
    assert lam_at_most_exp(Fraction(r.sampler["lam"]), r.eps_2)
    assert r.counts.min() >= 0 and r.counts.max() <= 12


def test_pipeline_upper_beyond_T_builds_no_T():
    from dpfix.release.frameworks import STRUCTURED_T_MAX
    from dpfix.release.pipeline import privatize_counts

    rng = np.random.default_rng(2)
    upper = 3 * STRUCTURED_T_MAX
    d = rng.integers(0, upper, 30_000)
    r = privatize_counts(d, 2.0, upper=upper, seed=1)
    assert r.mechanism is None and r.counts.shape == d.shape
    assert 0 < r.estimated_count_error < upper
    import json

    report = r.public_report()
    json.dumps(report, allow_nan=False)
    assert report["mechanism"]["built"] is False and report["mechanism"]["fixed_point"]


def test_pipeline_histogram_input_is_drawn_exactly_up_to_the_cap():
    from dpfix.release.pipeline import privatize_counts

    eta = np.array([500, 300, 0, 200])
    h = privatize_counts(None, 1.0, upper=3, histogram=eta, seed=0)
    assert h.sampler["kind"] == "structured G R"
    assert (h.joint.sum(axis=1) == eta).all() and h.output_histogram.sum() == 1000
    big = privatize_counts(None, 1.0, upper=2, histogram=[5 * 10**13, 3 * 10**13, 2 * 10**13],
                           seed=0)
    assert big.sampler["kind"] == "float multinomial"
    assert "multinomial" in big.public_report()["samplers"]["stage2"]
    with pytest.raises(ValueError, match="joint histogram"):
        privatize_counts(None, 1.0, upper=20_000, histogram=[1, 2, 3], seed=0)


def test_pipeline_refuses_a_table_that_fails_the_exact_check(monkeypatch):
    import dpfix.release.frameworks as P
    from dpfix.release.pipeline import privatize_counts

    drawn = []
    # checked at lam = 2 < e^eps_2 = e^0.86: T (ratios up to e^0.86) fails the integer check
    monkeypatch.setattr(P, "checked_table",
                        lambda *a, **k: checked_table(*a, **{**k, "lam": Fraction(2)}))
    monkeypatch.setattr(P, "_draw_rows", lambda *a, **k: drawn.append(a))
    d = np.random.default_rng(3).negative_binomial(2, 0.25, 2000)
    with pytest.raises(P.NotPrivateError, match="table: rows"):
        privatize_counts(d, 1.0, upper=12, constructor="heuristic", seed=0)
    assert drawn == []


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=7).filter(any),
       st.integers(2, 9), st.integers(1, 8))
def test_remap_reproduces_northwest_for_random_rational_targets(weights, p, q):
    """Property: G R == northwest_corner(z, lam) exactly, for any rational z (zeros
    anywhere) and lam = p/q > 1; the remap has at most 2n - 1 pieces."""
    lam = Fraction(p + q, q)
    total = sum(weights)
    z = [Fraction(w, total) for w in weights]
    s = structured_sampler("northwest", z, lam=lam)
    assert (s.matrix() == northwest_corner(z, lam=lam).matrix).all()
    assert s.remap.cols.size <= 2 * len(z) - 1
    drawn = s.matrix(drawn=True)  # the thresholds' shares: within 2^-bits of R's
    assert max(abs(a - b) for a, b in zip(drawn.flat, s.matrix().flat, strict=True)) \
        <= Fraction(len(z), 1 << s.remap.bits)


# ------------------------------------------------------------------ every constructor, 10^6 draws
#: n = 5 counts; 10^6 draws per input row, through the pipeline's own stage 2.
ROWS, DRAWS = 5, 1_000_000
#: The exact samplers, by kind; the discrete Gaussian is drawn by numpy's float multinomial.
EXACT_KINDS = {"northwest": "structured G R", "unfixed": "structured G R",
               "truncated-geometric": "structured G R", "heuristic": "checked table",
               "lp": "checked table", "staircase": "checked table"}


def test_every_constructor_is_covered():
    """A new constructor must join the 10^6-draw test (or say why it cannot)."""
    released = {name for name, info in C.CONSTRUCTORS.items() if info.release}
    assert released == set(EXACT_KINDS) | {"discrete-gaussian"}


def _drawn_by_the_pipeline(constructor, seed=0):
    """The pipeline run on a histogram of 10^6 rows at each count 0..4 (seeded, so the
    target z is fixed): row i of ``joint`` holds the 10^6 outputs of input i, drawn by the
    pipeline's stage 2 (``_draw_histogram``: the exact sampler row by row, or numpy's
    multinomial for the discrete Gaussian); returns the result and the matrix drawn from."""
    from dpfix.release.frameworks import _row_probabilities
    from dpfix.release.pipeline import privatize_counts

    extra = {"delta": 1e-6} if constructor == "discrete-gaussian" else {}
    r = privatize_counts(None, 1.0, upper=ROWS - 1, histogram=[DRAWS] * ROWS,
                         constructor=constructor, seed=seed, **extra)
    if constructor == "discrete-gaussian":
        assert r.sampler["kind"] == "float multinomial" and r.stage2 is None
        P = np.array([_row_probabilities(r.mechanism, i) for i in range(ROWS)])
    elif r.sampler["kind"] == "structured G R":
        P = np.array([[float(x) for x in row] for row in r.stage2.matrix(drawn=True)])
    else:
        t = r.stage2
        assert r.sampler["kind"] == "checked table" and isinstance(t, CheckedTable)
        P = t.weights / float(1 << t.bits)
    assert (r.joint.sum(axis=1) == DRAWS).all()
    return r, P


def _row_pvalues(joint, P):
    """Per row: outcomes of probability 0 never drawn, then the chi-square p-value."""
    out = []
    for i in range(joint.shape[0]):
        assert joint[i][P[i] == 0].sum() == 0, (i, joint[i], P[i])
        out.append(chisquare_against(joint[i], P[i] / P[i].sum()))
    return out


def _perturbed(P, shift=0.005):
    """``P`` with ``shift`` of each row's mass moved between its two largest outcomes (a
    mechanism 0.5 percentage points away: at 10^6 draws its chi-square noncentrality is
    above 100, so the test must reject it)."""
    Q = P.copy()
    for i in range(Q.shape[0]):
        a, b = np.argsort(Q[i])[-2:]
        Q[i, a] += shift
        Q[i, b] -= shift
    return Q


@pytest.mark.parametrize("constructor", [*EXACT_KINDS, "discrete-gaussian"])
def test_every_constructor_samples_its_rows_exactly_at_a_million_draws(constructor):
    """For each constructor, the distribution sampled for each row
    matches the mechanism the pipeline checked, by a chi-square test on 10^6 draws per row
    (n = 5), and the same test rejects a mechanism a little off in every row (its power).

    The matrix compared with is what the sampler draws from: ``G R'`` (the remap's
    thresholds) for the structured constructors, the checked integer weights ``/ 2^bits``
    for the tables, the float rows handed to numpy's multinomial for the discrete Gaussian
    (an (eps, delta) mechanism, drawn in floats, labelled so). Each row's test is at
    ``ALPHA = 1e-4``: 35 row tests (7 constructors x 5 rows) would fail together with
    probability at most 35 x 1e-4 = 0.35% for correct samplers (Bonferroni); the seed is
    fixed, so a pass is reproducible, not luck re-drawn on every run.
    """
    r, P = _drawn_by_the_pipeline(constructor)
    if constructor in EXACT_KINDS:
        assert r.sampler["kind"] == EXACT_KINDS[constructor]
    assert min(_row_pvalues(r.joint, P)) > ALPHA
    # power: 0.5 percentage points off is rejected in every row
    Q = _perturbed(P)
    assert max(chisquare_against(r.joint[i], Q[i] / Q[i].sum()) for i in range(ROWS)) < ALPHA
    if constructor in EXACT_KINDS:  # and what is drawn is the mechanism T within 1e-8
        T = r.mechanism.T if r.mechanism is not None else None
        assert T is not None and np.abs(P - T).max() < 1e-8


def test_a_million_draws_follow_the_exact_remap_not_only_t():
    """The structured samplers' rows: the drawn ``G R'`` and the exact ``G R`` agree to the
    thresholds' resolution (2^-bits per share), far below what 10^6 draws resolve."""
    r, P = _drawn_by_the_pipeline("northwest")
    exact = np.array([[float(x) for x in row] for row in r.stage2.matrix()])
    assert np.abs(P - exact).max() <= ROWS / (1 << r.stage2.remap.bits)


@pytest.mark.parametrize("constructor", ["heuristic", "lp", "staircase"])
def test_the_pipelines_tables_fail_the_exact_check_when_perturbed(constructor):
    """Each table constructor's own checked table, as the pipeline built it, passes the
    exact check and fails it once one neighbouring ratio is pushed past lam by the least
    integer amount (rows still summing to 2^bits); the pipeline then refuses it."""
    from dpfix.release.pipeline import privatize_counts

    r = privatize_counts(None, 1.0, upper=ROWS - 1, histogram=[10] * ROWS,
                         constructor=constructor, seed=1, draw=False)
    t = r.stage2
    t.check()
    w = t.weights
    i, j = 0, int(np.argmin(w[0]))  # the smallest entry of row 0: raise row 1 above lam x it
    need = int(w[i, j]) * t.lam.numerator // t.lam.denominator + 1  # least > lam w[0, j]
    bad = w.copy()
    k = int(np.argmax(bad[1]))
    assert k != j
    moved = need - int(bad[1, j])
    bad[1, j] += moved
    bad[1, k] -= moved
    assert bad.sum(axis=1).tolist() == w.sum(axis=1).tolist() and bad.min() >= 0
    with pytest.raises(SamplingCheckError, match="differ by more than lam"):
        CheckedTable(bad, t.bits, t.lam, t.eps).check()
    one_less = w.copy()  # one unit less than that passes the ratio (the bound is tight)
    one_less[1, j] += moved - 1
    one_less[1, k] -= moved - 1
    one_less_ok = Fraction(int(one_less[1, j])) <= t.lam * int(one_less[0, j])
    assert one_less_ok


@pytest.mark.parametrize("constructor", [*EXACT_KINDS])
def test_the_secure_source_is_the_default_for_every_exact_constructor(constructor,
                                                                      monkeypatch):
    """Without a seed, stage 2 of every exact constructor reads os.urandom, and says so."""
    import dpfix.sampling.source as S
    from dpfix.release.pipeline import privatize_counts

    calls = []
    real = S.os.urandom
    monkeypatch.setattr(S.os, "urandom", lambda k: calls.append(k) or real(k))
    d = np.random.default_rng(0).integers(0, ROWS, 500)
    r = privatize_counts(d, 1.0, upper=ROWS - 1, constructor=constructor)
    assert r.sampler["secure"] is True and "os.urandom" in r.sampler["source"]
    assert calls and "NOT FOR PRODUCTION" not in r.public_report()["samplers"]["stage2"]
    calls.clear()
    seeded = privatize_counts(d, 1.0, upper=ROWS - 1, constructor=constructor, seed=3)
    assert seeded.sampler["secure"] is False and calls == []


@settings(max_examples=60, deadline=None)
@given(v=st.lists(st.floats(0, 1e300), min_size=1, max_size=60), rho=st.floats(0, 1))
def test_side_sums_loop_is_lfilter_bit_for_bit(v, rho):
    """The loop of side_sums' recursion gives scipy's lfilter's floats exactly."""
    from scipy.signal import lfilter

    from dpfix.sampling import structured

    v = np.array(v)
    assert np.array_equal(structured._recursion(v, rho), lfilter([1.0], [1.0, -rho], v))
