"""From records to counts (docs/records.md): the unit ``person:C:c``, the exact law of the
contribution bounding and its sampler, the caps on every person, the privacy of the whole
release for one person added or removed (exact ratios and seeded runs), the DP choice of
``C`` and the synthetic incident generator."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfix.experiments.incidents import contributions_law, incidents
from dpfix.release.bounds import bound_grid, exponential_pmf, halvings, upper_scores
from dpfix.release.budget import PrivacyUnit, privacy_unit
from dpfix.release.options import OneStage
from dpfix.release.plan import plan_release
from dpfix.release.records import (
    Records,
    basis_law,
    bound_contributions,
    bounded_counts,
    privatize_records,
    suggest_max_contributions,
)
from dpfix.release.records import bounding as B
from dpfix.release.report import composition
from dpfix.sampling.source import RandomSource, SeededSource, lam_at_most_exp, rational_lam


# ------------------------------------------------------------------ the unit
def test_the_person_unit_parses_states_and_composes_in_parallel():
    u = privacy_unit("person:5:2")
    assert (u.name, u.bound, u.per_group, u.text, u.composition) == \
        ("person", 5, 2, "person:5:2", "parallel")
    assert privacy_unit("person:5") == PrivacyUnit("person", 5) == PrivacyUnit("person", 5, 5)
    assert privacy_unit("person:5").text == "person:5" and privacy_unit("person").text == \
        "person"
    s = u.statement()
    assert "one person" in s and "at most 5 counts" in s and "each by at most 2" in s
    assert "adding up to at most 5" in s and "docs/records.md" in s
    for bad, match in [("person:0", "bound C"), ("person:3:4", r"1\.\.C = 3"),
                       ("person:3:0", r"1\.\.C = 3"), ("person:3:", "is not one of"),
                       ("person:x", "bound C")]:
        with pytest.raises(ValueError, match=match):
            privacy_unit(bad)
    with pytest.raises(ValueError, match="per_group is for the unit person"):
        PrivacyUnit("row", 2, 1)
    with pytest.raises(ValueError, match=r"in 1\.\.C = 2"):
        PrivacyUnit("person", 2, 3)


def test_every_column_spends_the_whole_budget_at_its_share_over_C():
    """The unit person composes as cell:C does: each column's budget is eps, its mechanisms
    run at eps / C, and the release spends max = eps (docs/records.md, section 3)."""
    unit = PrivacyUnit("person", 4, 2)
    plan = plan_release({"a": [1], "b": [2], "c": [3]}, ["a", "b", "c"], "1", upper=3,
                        unit=unit)
    assert plan.budgets == [1.0, 1.0, 1.0] and plan.rule.startswith("parallel")
    c = composition(plan)
    assert c["eps_spent"] == 1.0 and c["mechanism_eps"] == {"a": 0.25, "b": 0.25, "c": 0.25}
    assert c["rule"].startswith("parallel composition over one person's changes")
    assert "docs/records.md" in c["rule"]


# ------------------------------------------------------------------ the exact law
def _subsets_law(sizes, C, c):
    """The law of ``k`` of a uniformly random subset among the largest meeting both caps,
    by enumerating every subset of the person's records (an independent computation)."""
    records = [g for g, n in enumerate(sizes) for _ in range(n)]
    best, found = -1, []
    for mask in range(1 << len(records)):
        chosen = [records[i] for i in range(len(records)) if mask >> i & 1]
        k = tuple(chosen.count(g) for g in range(len(sizes)))
        if len(chosen) > C or max(k, default=0) > c:
            continue
        if len(chosen) > best:
            best, found = len(chosen), []
        if len(chosen) == best:
            found.append(k)
    tally = Counter(found)
    return {k: Fraction(v, len(found)) for k, v in tally.items()}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.integers(1, 6),
       st.integers(1, 6))
def test_basis_law_is_the_uniform_subset_among_the_largest(sizes, C, c):
    c = min(c, C)
    assert basis_law(sizes, C, c) == _subsets_law(sizes, C, c)


def test_the_greedy_rule_on_one_random_order_is_not_uniform():
    """Keeping the first c per group and then the first C per person of one random order
    gives (2 of A, 1 of B) with probability 7/10 for A = 3, B = 2 records, C = 3, c = 2;
    the uniform subset among the largest gives 2/3 (docs/records.md, section 2)."""
    greedy = Counter()
    for order in set(itertools.permutations("AAABB")):
        seen, kept = Counter(), []
        for g in order:
            if seen[g] < 2:
                seen[g] += 1
                kept.append(g)
        greedy[tuple(Counter(kept[:3])[g] for g in "AB")] += 1
    total = sum(greedy.values())
    assert Fraction(greedy[(2, 1)], total) == Fraction(7, 10)
    assert basis_law([3, 2], 3, 2)[(2, 1)] == Fraction(2, 3)


def _pvalue(scipy_stats, observed, law) -> float:
    """The chi-square p-value of counts against an exact law, its cells expected below 5
    pooled into one."""
    observed = np.asarray(observed)
    expected = np.array([float(p) for p in law]) * observed.sum()
    big = expected >= 5
    if (~big).any():
        observed = np.r_[observed[big], observed[~big].sum()]
        expected = np.r_[expected[big], expected[~big].sum()]
    return float(scipy_stats.chisquare(observed, expected).pvalue)


def _draws(sizes, C, c, persons, seed):
    """``k`` of ``persons`` identical persons, bounded in one call: independent draws."""
    person = np.repeat(np.arange(persons), sum(sizes))
    group = np.tile(np.repeat(np.arange(len(sizes)), sizes), persons)
    keep = bound_contributions(person, group, C, c, seed=seed)
    k = np.zeros((persons, len(sizes)), dtype=np.int64)
    np.add.at(k, (person[keep], group[keep]), 1)
    return k, keep


@pytest.mark.parametrize("sizes, C, c", [([3, 2], 3, 2), ([1, 1, 1, 4], 2, 1),
                                         ([5, 5, 1], 4, 3), ([6, 2, 2, 2], 5, 2)])
def test_the_sampler_draws_the_basis_law(sizes, C, c):
    scipy_stats = pytest.importorskip("scipy.stats")
    k, _ = _draws(sizes, C, c, 6000, seed=11)
    law = basis_law(sizes, C, c)
    keys = sorted(law)
    seen = Counter(map(tuple, k.tolist()))
    assert set(seen) <= set(keys)
    observed = np.array([seen[key] for key in keys])
    expected = np.array([float(law[key]) for key in keys]) * len(k)
    assert scipy_stats.chisquare(observed, expected).pvalue > 1e-4


def test_the_sampler_has_power_against_the_greedy_law():
    """6000 persons separate 2/3 from 7/10 (the chi-square above can fail)."""
    scipy_stats = pytest.importorskip("scipy.stats")
    k, _ = _draws([3, 2], 3, 2, 6000, seed=12)
    observed = np.array([int((k[:, 0] == 2).sum()), int((k[:, 0] == 1).sum())])
    assert scipy_stats.chisquare(observed, np.array([0.7, 0.3]) * 6000).pvalue < 1e-4


def test_numbers_beyond_int64_are_drawn_exactly_in_python_integers():
    """100 records in two groups, C = 50, c = 30: W reaches binom(100, 50) ~ 2^96, so the
    draw takes the Python-integer path; its law is the basis law still."""
    scipy_stats = pytest.importorskip("scipy.stats")
    sizes, C, c = [60, 40], 50, 30
    k, _ = _draws(sizes, C, c, 1500, seed=5)
    assert (k.sum(axis=1) == 50).all() and (k <= 30).all()
    law = basis_law(sizes, C, c)
    keys = sorted(law)
    seen = Counter(map(tuple, k.tolist()))
    assert set(seen) <= set(keys)
    assert _pvalue(scipy_stats, [seen[key] for key in keys], [law[key] for key in keys]) > 1e-4


def test_the_records_kept_in_a_group_are_a_uniformly_random_subset():
    """A person with 4 records in one group and c = 2: each of the 6 pairs equally often."""
    scipy_stats = pytest.importorskip("scipy.stats")
    _, keep = _draws([4], 2, 2, 6000, seed=3)
    pairs = Counter(tuple(np.flatnonzero(row).tolist()) for row in keep.reshape(6000, 4))
    assert len(pairs) == 6
    assert scipy_stats.chisquare(list(pairs.values())).pvalue > 1e-4


@pytest.mark.parametrize("bits", [None, 20])
def test_ranks_within_blocks_are_uniform_orders(bits):
    """Both ways of ranking (random keys with ties redrawn; the permutation): every order
    of a block of 4 equally often, independently of the next block."""
    scipy_stats = pytest.importorskip("scipy.stats")
    source = SeededSource(4)
    orders = Counter()
    for _ in range(1200):
        rank = B._ranked(np.array([4, 3]), source, bits=bits)
        assert sorted(rank[:4].tolist()) == [0, 1, 2, 3] and sorted(rank[4:].tolist()) == \
            [0, 1, 2]
        orders[tuple(rank[:4].tolist())] += 1
    assert len(orders) == 24 and scipy_stats.chisquare(list(orders.values())).pvalue > 1e-4


class _TiedFirst(RandomSource):
    """Zeros for the first ``n`` words (every random key ties), then a seeded stream."""

    def __init__(self, n: int, seed: int) -> None:
        self.left, self.rest = n, SeededSource(seed)

    def words(self, size: int) -> np.ndarray:
        if self.left >= size:
            self.left -= size
            return np.zeros(size, dtype=np.uint64)
        return self.rest.words(size)


def test_tied_random_keys_are_drawn_again_and_stay_uniform():
    """Every block's low bits tie on the first draw: the partial blocks are ranked again,
    the caps hold and the kept pairs of a 4-record group stay uniform."""
    scipy_stats = pytest.importorskip("scipy.stats")
    person = np.repeat(np.arange(3000), 4)
    group = np.zeros(person.size, dtype=np.int64)
    keep = bound_contributions(person, group, 2, 2, seed=_TiedFirst(person.size, 8))
    assert (keep.reshape(3000, 4).sum(axis=1) == 2).all()
    pairs = Counter(tuple(np.flatnonzero(row).tolist()) for row in keep.reshape(3000, 4))
    assert len(pairs) == 6 and scipy_stats.chisquare(list(pairs.values())).pvalue > 1e-4


# ------------------------------------------------------------------ the caps
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 4)), min_size=0, max_size=60),
       st.integers(1, 6), st.integers(1, 6), st.integers(0, 2**32))
def test_every_person_keeps_the_largest_subset_meeting_both_caps(pairs, C, c, seed):
    c = min(c, C)
    person = np.array([p for p, _ in pairs], dtype=np.int64)
    group = np.array([g for _, g in pairs], dtype=np.int64)
    keep = bound_contributions(person, group, C, c, seed=seed)
    assert keep.shape == person.shape
    for p in set(person.tolist()):
        mine = person == p
        sizes = Counter(group[mine].tolist())
        kept = Counter(group[mine & keep].tolist())
        assert sum(kept.values()) == min(C, sum(min(c, n) for n in sizes.values()))
        assert all(kept[g] <= min(c, n) for g, n in sizes.items())


def test_a_person_with_50_records_contributes_at_most_C():
    data = incidents(3000, counties=30, seed=2)
    records = data.records.copy()
    heavy = records.iloc[:50].copy()
    heavy["person_id"] = -1  # one new person behind 50 incidents in 10 counties
    heavy["county"] = list(data.groups["county"][:10]) * 5
    records = __import__("pandas").concat([records, heavy], ignore_index=True)
    for C, c in [(5, 2), (3, 3), (1, 1)]:
        b = bounded_counts(Records(records.iloc[-50:], "person_id", "county"),
                           data.groups["county"], max_contributions=C, max_per_group=c, seed=C)
        assert int(b.true_counts.sum()) == 50 and int(b.counts.sum()) == C
        assert int(b.counts.max()) <= c
        whole = bounded_counts(Records(records, "person_id", "county"), data.groups["county"],
                               max_contributions=C, max_per_group=c, seed=C)
        assert whole.stats["largest_contribution"] == \
            records.groupby("person_id").size().max()
        assert int(whole.true_counts.sum() - whole.counts.sum()) == \
            whole.stats["records_cut_by_bounding"]
    keep = bound_contributions(np.zeros(50, dtype=np.int64), np.arange(50) % 10, 5, 2,
                               seed=0)
    assert int(keep.sum()) == 5 and np.bincount(np.arange(50)[keep] % 10).max() <= 2


def test_bad_bounds_are_one_line():
    for kwargs, match in [({"max_contributions": 0}, "max_contributions: must be an integer "
                           ">= 1, got 0"),
                          ({"max_contributions": -2}, "got -2"),
                          ({"max_contributions": 2.0}, "got 2.0"),
                          ({"max_contributions": True}, "got True"),
                          ({"max_contributions": 3, "max_per_group": 0},
                           "max_per_group: must be an integer >= 1, got 0"),
                          ({"max_contributions": 3, "max_per_group": 4},
                           "max_per_group: 4 exceeds max_contributions=3")]:
        with pytest.raises(ValueError, match=match) as err:
            bound_contributions([0, 1], [0, 0], **kwargs)
        assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="non-negative integer codes"):
        bound_contributions([0, -1], [0, 0], 2)


# ------------------------------------------------------------------ privacy
def _geometric(n: int, lam: Fraction) -> list[list[Fraction]]:
    """The truncated geometric mechanism on ``0 .. n-1`` at ``lam`` (exact)."""
    rho = 1 / lam
    T = []
    for i in range(n):  # clamp(i + Z, 0, n - 1), P(Z = k) = (1 - rho) / (1 + rho) rho^|k|
        row = [(1 - rho) / (1 + rho) * rho ** abs(i - j) for j in range(n)]
        row[0], row[-1] = rho ** i / (1 + rho), rho ** (n - 1 - i) / (1 + rho)
        assert sum(row) == 1
        T.append(row)
    return T


def _count_law(persons: dict, groups: list, C: int, c: int) -> dict:
    """The exact law of the bounded count table: the persons independent, each by
    :func:`basis_law` over their groups."""
    law = {tuple([0] * len(groups)): Fraction(1)}
    for sizes in persons.values():
        present = [g for g in groups if sizes.get(g, 0)]
        mine = basis_law([sizes[g] for g in present], C, c)
        out: dict = {}
        for table, p in law.items():
            for k, q in mine.items():
                t = list(table)
                for g, j in zip(present, k, strict=True):
                    t[groups.index(g)] += j
                out[tuple(t)] = out.get(tuple(t), 0) + p * q
        law = out
    return law


def _release_law(persons, groups, C, c, T, upper):
    """The exact law of the released table: each row's count through ``T``."""
    out: dict = {}
    for table, p in _count_law(persons, groups, C, c).items():
        for y in itertools.product(range(upper + 1), repeat=len(groups)):
            q = p * math.prod(T[min(x, upper)][v] for x, v in zip(table, y, strict=True))
            out[y] = out.get(y, 0) + q
    return out


NEIGHBOURS = [  # a data set, and one person added (all their records)
    ({"p1": {"a": 1}, "p2": {"a": 1, "b": 2}}, {"a": 3, "b": 1}),
    ({"p1": {"b": 2}}, {"a": 2}),
    ({"p1": {"a": 1, "b": 1}, "p2": {"b": 3}}, {"b": 5}),
]


@pytest.mark.parametrize("C, c", [(2, 1), (2, 2), (3, 2)])
def test_one_person_added_or_removed_moves_every_output_by_at_most_e_eps(C, c):
    """The theorem on tiny data, exactly: with every mechanism at eps / C (lam^C <= e^eps),
    the law of the released table changes by at most lam^C both ways when one person (any
    number of records) is added or removed; the bound is met (more than lam^(C-1))
    when the new person's C records fall in one column (docs/records.md, section 3)."""
    eps = 1.0
    lam = rational_lam(eps / C)
    assert lam_at_most_exp(lam ** C, eps)
    upper, groups = 4, ["a", "b"]
    T = _geometric(upper + 1, lam)
    worst = Fraction(0)
    for base, new in NEIGHBOURS:
        P = _release_law(base, groups, C, c, T, upper)
        Q = _release_law({**base, "new": new}, groups, C, c, T, upper)
        worst = max(worst, max(max(P[y] / Q[y], Q[y] / P[y]) for y in P))
    assert worst <= lam ** C
    if c == C:
        assert worst > lam ** (C - 1)


def test_the_code_bounds_as_the_exact_law_says():
    """Seeded runs of :func:`bounded_counts` on a tiny data set follow the exact law of the
    bounded table used by the test above (chi-square)."""
    scipy_stats = pytest.importorskip("scipy.stats")
    base, new = NEIGHBOURS[0]
    persons = {**base, "new": new}
    recs = {"pid": [p for p, s in persons.items() for g, n in s.items() for _ in range(n)],
            "county": [g for s in persons.values() for g, n in s.items() for _ in range(n)]}
    law = _count_law(persons, ["a", "b"], 2, 2)
    seen = Counter(tuple(bounded_counts(Records(recs, "pid", "county"), ["a", "b"],
                                        max_contributions=2, max_per_group=2,
                                        seed=s).counts[:, 0].tolist())
                   for s in range(600))
    keys = sorted(law)
    assert set(seen) <= set(keys) and len(keys) == 3
    expected = np.array([float(law[k]) for k in keys]) * 600
    assert scipy_stats.chisquare([seen[k] for k in keys], expected).pvalue > 1e-4


def test_seeded_releases_of_neighbouring_records_stay_within_e_eps():
    """privatize_records itself on a tiny pair of neighbours (one person added): the
    frequencies of each released table agree with the exact law, whose ratios are at most
    e^eps (one-stage truncated geometric, so that the law is a product of rows)."""
    scipy_stats = pytest.importorskip("scipy.stats")
    import warnings

    base, new = NEIGHBOURS[1]
    eps, C, upper = 1.0, 2, 3
    lam = rational_lam(eps / C)
    T = _geometric(upper + 1, lam)
    laws = [_release_law(persons, ["a", "b"], C, C, T, upper)
            for persons in (base, {**base, "new": new})]
    assert max(max(p / q, q / p) for p, q in zip(*(
        [law[y] for y in sorted(laws[0])] for law in laws), strict=True)) <= lam ** C
    for persons in (base, {**base, "new": new}):
        recs = {"pid": [p for p, s in persons.items() for g, n in s.items() for _ in range(n)],
                "county": [g for s in persons.values() for g, n in s.items()
                           for _ in range(n)]}
        law = _release_law(persons, ["a", "b"], C, C, T, upper)
        seen = Counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for s in range(400):
                r = privatize_records(Records(recs, "pid", "county"), ["a", "b"], eps,
                                      upper=upper, max_contributions=C, seed=s,
                                      options=OneStage(constructor="truncated-geometric"))
                seen[tuple(r.table["count"].tolist())] += 1
        keys = sorted(law)
        assert set(seen) <= set(keys)
        assert _pvalue(scipy_stats, [seen[k] for k in keys], [law[k] for k in keys]) > 1e-4


# ------------------------------------------------------------------ choosing C
def _helper_pmf(contributions, candidates, lam, quantile):
    eta = np.bincount(np.asarray(contributions, dtype=np.int64), minlength=1) \
        if len(contributions) else np.zeros(1, np.int64)
    return exponential_pmf(upper_scores(eta, candidates, quantile), lam, halvings(candidates))


@pytest.mark.parametrize("eps", [0.4, 3.0])
def test_adding_or_removing_a_person_moves_the_choice_of_C_by_at_most_e_eps(eps):
    """Every set of up to 3 persons with 1..5 records each, and every person added: the
    pmf of the choice of C changes by at most lam^2 <= e^eps (the number of persons P
    changes too; exact)."""
    lam = rational_lam(eps / 2)
    candidates = [1, 2, 3, 5]
    worst = Fraction(0)
    for size in range(4):
        for persons in itertools.product(range(1, 6), repeat=size):
            p = _helper_pmf(list(persons), candidates, lam, 0.75)
            for m in range(1, 6):
                q = _helper_pmf([*persons, m], candidates, lam, 0.75)
                worst = max(worst, max(max(a / b, b / a) for a, b in zip(p, q, strict=True)))
    assert worst <= lam ** 2 and lam_at_most_exp(lam ** 2, eps)
    assert worst > lam


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 80), max_size=15), st.integers(1, 80),
       st.sampled_from([0.5, 0.9, 0.99, 1.0]))
def test_one_person_moves_every_score_of_C_by_at_most_one(persons, m, quantile):
    grid = bound_grid(100)
    a = upper_scores(np.bincount(persons, minlength=1), grid, quantile)
    b = upper_scores(np.bincount([*persons, m]), grid, quantile)
    assert np.abs(a - b).max() <= 1


def test_the_suggestion_finds_the_quantile_of_the_records_per_person():
    data = incidents(20_000, counties=50, seed=4)
    per = data.records.groupby("person_id").size().to_numpy()
    C = suggest_max_contributions(Records(data.records, "person_id"), 50, quantile=0.9,
                                  seed=0).max_contributions
    assert (per <= C).mean() >= 0.88 and (per <= C - 1).mean() <= 0.9
    b = suggest_max_contributions(Records(data.records, "person_id", "county"), 50, seed=0,
                                  groups=data.groups["county"])
    assert b.max_contributions == C and b.describe()["eps_contributions"] == 50.0


# ------------------------------------------------------------------ the generator
def test_the_generator_is_heavy_tailed_and_reproducible():
    data = incidents(20_000, counties=100, seed=9)
    per = data.records.groupby("person_id").size()
    assert (per == 1).mean() > 0.7 and per.max() >= 24  # most one record, a few dozens
    assert data.records.equals(incidents(20_000, counties=100, seed=9).records)
    assert len(data.records) == 20_000 and data.groups["county"].is_unique
    assert set(data.records["county"]) <= set(data.groups["county"])
    assert set(data.records["offence"]) <= set(data.offences)
    assert abs(float(contributions_law().sum()) - 1) < 1e-12
    text = incidents(500, counties=10, person_ids="text", undeclared=0.1, seed=1)
    assert text.records["person_id"].str.match(r"^P\d{8}$").all()
    assert (text.records["county"] == "99999").any()


def test_persons_bounded_in_chunks_keep_the_caps_and_the_law(monkeypatch):
    """Many persons' records are bounded a chunk of whole persons at a time: with chunks of
    64 records the caps hold, each person keeps K records, and the law is the basis law."""
    scipy_stats = pytest.importorskip("scipy.stats")
    monkeypatch.setattr(B, "CHUNK_RECORDS", 64)
    k, keep = _draws([3, 2], 3, 2, 3000, seed=21)
    assert (k.sum(axis=1) == 3).all() and (k <= 2).all()
    law = basis_law([3, 2], 3, 2)
    seen = Counter(map(tuple, k.tolist()))
    assert _pvalue(scipy_stats, [seen[key] for key in sorted(law)],
                   [law[key] for key in sorted(law)]) > 1e-4
    rng = np.random.default_rng(0)
    person, group = rng.integers(0, 400, 5000), rng.integers(0, 6, 5000)
    kept = bound_contributions(person, group, 4, 2, seed=1)
    for p in range(400):
        mine = person == p
        sizes = Counter(group[mine].tolist())
        got = Counter(group[mine & kept].tolist())
        assert sum(got.values()) == min(4, sum(min(2, n) for n in sizes.values()))
        assert all(got[g] <= 2 for g in sizes)
