"""dpfix's release as an OpenDP Measurement (:mod:`dpfix.release.opendp`): the features
it needs, its privacy map against the proof's components, composition with OpenDP's
own Laplace measurement, and the release itself."""

from __future__ import annotations

import math
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpfix.release import opendp as interop
from dpfix.release.pipeline import privatize_counts
from dpfix.release.result import NotPrivateError
from dpfix.sampling import lam_at_most_exp


def _opendp():
    """OpenDP with the plugin features enabled; the features that were off before it."""
    dp = pytest.importorskip("opendp.prelude", reason="OpenDP is not installed (production "
                                                      "extra)")
    off = {f for f in interop.FEATURES if f not in _features()}
    dp.enable_features(*interop.FEATURES)
    return dp, off


def _features() -> set:
    return pytest.importorskip("opendp.mod").GLOBAL_FEATURES


@pytest.fixture
def dp():
    """OpenDP with the plugin features enabled for one test. Afterwards "honest-but-curious"
    is switched off again if it was off; "contrib" stays (the pipeline's stage 1 enables it
    once, cached, for its own Laplace measurements)."""
    dp, off = _opendp()
    yield dp
    _features().difference_update(off - {"contrib"})


def test_importing_the_module_imports_no_opendp():
    code = "import sys, dpfix.release.opendp; print('opendp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"


def test_the_features_are_named_and_not_enabled_for_the_user(dp):
    _features().discard("honest-but-curious")
    with pytest.raises(dp.OpenDPException, match=r"'contrib', 'honest-but-curious' \(missing: "
                                                 r"honest-but-curious.*enable_features"):
        interop.make_privatize_counts(eps=1.0, upper=5)
    assert "honest-but-curious" not in _features()


@pytest.mark.parametrize("framework", ["two-stage", "one-stage", "hybrid", "auto"])
@pytest.mark.parametrize("unit", [1, 3])
def test_the_map_is_the_declared_budget_at_the_unit(dp, framework, unit):
    m = interop.make_privatize_counts(eps=0.7, upper=20, unit=f"cell:{unit}",
                                      framework=framework)
    assert m.map(unit) == 0.7 and m.check(unit, 0.7) and not m.check(unit + 1, 0.7)
    for d in (0, 1, 2, 5, 40):
        exact = Fraction(d) * Fraction(0.7) / unit
        assert Fraction(m.map(d)) >= exact and m.map(d) == pytest.approx(float(exact), rel=1e-15)
    assert m.input_metric == dp.l1_distance(T="i64") and m.output_measure == dp.max_divergence()


def test_change_one_distance_charges_upper_per_row(dp):
    m = interop.make_privatize_counts(dp.vector_domain(dp.atom_domain(T="i64")),
                                      dp.change_one_distance(), 0.5, upper=10,
                                      unit="cell:2")
    assert m.map(1) == pytest.approx(10 * 0.5 / 2, rel=1e-15) and m.map(1) >= 2.5
    assert m.map(3) == pytest.approx(7.5, rel=1e-15)


def _reported(result) -> tuple[Fraction, Fraction]:
    """(stage 1's loss as OpenDP reported it, the lam stage 2 drew with) of one run."""
    l1 = Fraction(0) if result.stage1 is None else Fraction(result.stage1.noise["opendp_loss"])
    return l1, Fraction(result.sampler["lam"])


@given(eps=st.floats(0.01, 8.0), split=st.one_of(st.none(), st.floats(0.05, 0.95)),
       unit=st.integers(1, 4), framework=st.sampled_from(["two-stage", "hybrid", "one-stage"]))
def test_the_map_covers_what_a_run_spends(eps, split, unit, framework):
    """The map of one step is at least stage 1's reported loss plus ln(lam), lam the one
    drawn with (``lam <= e^x`` decided exactly), for the run the measurement would make."""
    _, off = _opendp()
    try:
        if framework == "one-stage":
            split = None
        loss = interop.step_loss(eps, f"row:{unit}", framework, split)
        run = privatize_counts([0, 2, 1, 5, 3, 3], loss["eps_t"], upper=4, framework=framework,
                               split=split)
        l1, lam = _reported(run)
        assert l1 <= loss["L1"] and lam == loss["lam"]
        per_step = loss["S"]
        rest = float(per_step - l1)
        while Fraction(rest) > per_step - l1:
            rest = math.nextafter(rest, -math.inf)
        assert lam_at_most_exp(lam, rest), "ln(lam) exceeds the map's share for stage 2"
        assert per_step >= Fraction(eps) / unit
    finally:
        _features().difference_update(off - {"contrib"})


def test_a_split_that_starves_stage_2_is_charged_its_proved_sum(dp):
    """When eps_1's rounding is not covered by stage 2's margin, the map is the proved sum,
    above the declared budget (never below the proof)."""
    loss = interop.step_loss(1.0, "row", "two-stage", 1 - 2e-5,
                             stage1_loss=lambda e1: Fraction(e1) * (1 + Fraction(1, 10**8)))
    assert loss["S"] == loss["L1"] + loss["L2"] > 1


def test_composition_with_opendp_laplace_adds_the_maps(dp):
    domain, metric = dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64")
    ours = interop.make_privatize_counts(domain, metric, 0.8, upper=6, unit="cell:2")
    laplace = dp.m.make_laplace(domain, metric, scale=4.0)
    both = dp.c.make_composition([ours, laplace])
    for d in (1, 2, 3):
        total = ours.map(d) + laplace.map(d)
        assert both.map(d) >= total and both.map(d) == pytest.approx(total, rel=1e-12)
    assert both.map(2) == pytest.approx(0.8 + 0.5)
    released, noisy = both([0, 1, 7, 3, 2])
    assert np.asarray(released).shape == (5,) and len(noisy) == 5


def test_an_adaptive_compositor_and_an_odometer_account_for_it(dp):
    domain, metric = dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64")
    ours = interop.make_privatize_counts(eps=0.5, upper=4)
    laplace = dp.m.make_laplace(domain, metric, scale=2.0)
    data = [0, 4, 2, 2, 1, 3]
    queryable = dp.c.make_adaptive_composition(domain, metric, dp.max_divergence(), d_in=1,
                                               d_mids=[0.5, 0.5])(data)
    assert np.asarray(queryable(ours)).shape == (6,)
    with pytest.raises(dp.OpenDPException):  # the compositor's budget for it was 0.5
        queryable(interop.make_privatize_counts(eps=0.6, upper=4))
    queryable(laplace)
    odometer = dp.c.make_fully_adaptive_composition(domain, metric, dp.max_divergence())(data)
    odometer(ours)
    odometer(laplace)
    assert odometer.privacy_loss(1) == pytest.approx(1.0) and odometer.privacy_loss(3) >= 3.0


def test_the_release_codes_the_counts_and_returns_only_them(dp):
    m = interop.make_privatize_counts(eps=2.0, upper=5, framework="one-stage")
    out = m([0, 9, -3, 5, 2, 2, 1])
    assert isinstance(out, np.ndarray) and out.dtype == np.int64 and out.shape == (7,)
    assert out.min() >= 0 and out.max() <= 5


@pytest.mark.parametrize("constructor", ["northwest", "unfixed", "truncated-geometric"])
def test_every_exact_constructor_is_released_as_accounted(dp, constructor):
    """The run's own accounting (stage 1's reported loss, the lam drawn with) matches the
    map's, checked inside the measurement before the output is returned."""
    m = interop.make_privatize_counts(eps=1.2, upper=8, unit="cell:2",
                                      constructor=constructor)
    out = m([0, 3, 8, 12, 1, 1, 5, 0])
    assert out.shape == (8,) and 0 <= out.min() and out.max() <= 8 and m.map(2) == 1.2
    one = constructor == "truncated-geometric"  # one-stage: no stage 1, all of eps_t on G
    assert (interop.step_loss(1.2, "cell:2", constructor=constructor)["eps_1"] == 0) == one


def test_the_pipeline_runs_at_eps_over_the_unit(dp, monkeypatch):
    seen = {}

    def spy(counts, eps, **options):
        seen.update(eps=eps, counts=np.asarray(counts).tolist(), **options)
        return privatize_counts(counts, eps, **options)

    monkeypatch.setattr(interop, "privatize_counts", spy)
    interop.make_privatize_counts(eps=1.5, upper=3, unit="cell:3", split=0.25)([4, 0, -1, 2])
    assert seen["eps"] == 0.5 and seen["split"] == 0.25 and seen["upper"] == 3
    assert seen["counts"] == [3, 0, 0, 2]


def test_a_run_spending_other_than_the_map_is_not_released(dp, monkeypatch):
    def other_lam(counts, eps, **options):
        return privatize_counts(counts, eps * 1.01, **options)

    m = interop.make_privatize_counts(eps=1.0, upper=3)
    monkeypatch.setattr(interop, "privatize_counts", other_lam)
    with pytest.raises(dp.OpenDPException, match="NotPrivateError|lam"):
        m([0, 1, 2, 3])
    with pytest.raises(NotPrivateError, match="stage 1 reported"):
        run = privatize_counts([0, 1, 2, 3], 1.0, upper=3)
        interop._check_accounting(run, dict(interop.step_loss(1.0), L1=Fraction(0)))


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"constructor": "heuristic"}, "constructor: 'heuristic'"),
    ({"framework": "hybrid", "constructor": "unfixed"}, "constructor: the hybrid framework"),
    ({"framework": "one-stage", "split": 0.5}, "split: does not apply"),
    ({"constructor": "truncated-geometric", "split": 0.5}, "split: does not apply"),
    ({"postprocess": "nothing"}, "nothing"),
    ({"unit": 0}, "unit: "), ({"unit": True}, "unit: "), ({"unit": "person:2"}, "unit: "),
    ({"unit": "cell:0"}, "unit: "),
    ({"upper": 0}, "upper: "), ({"eps": -1.0}, "eps"), ({"eps": None}, "eps: give"),
    ({"framework": "staged"}, "framework: unknown"),
])
def test_bad_settings_are_refused_when_built(dp, kwargs, match):
    options = {"eps": 1.0, "upper": 5, **kwargs}
    with pytest.raises(ValueError, match=match):
        interop.make_privatize_counts(**options)


def test_bad_spaces_and_distances_are_refused(dp):
    with pytest.raises(ValueError, match="input_metric: "):
        interop.make_privatize_counts(dp.vector_domain(dp.atom_domain(T="i64")),
                                      dp.symmetric_distance(), 1.0, upper=5)
    with pytest.raises(ValueError, match="input_domain: "):
        interop.make_privatize_counts(dp.vector_domain(dp.atom_domain(T=float, nan=False)),
                                      dp.l1_distance(T="i64"), 1.0, upper=5)
    with pytest.raises(ValueError, match="input_domain: "):  # values numpy's int64 cannot hold
        interop.make_privatize_counts(dp.vector_domain(dp.atom_domain(T="u64")),
                                      dp.l1_distance(T="u64"), 1.0, upper=5)
    m = interop.make_privatize_counts(eps=1.0, upper=5)
    with pytest.raises(dp.OpenDPException):
        m.map(-1)


def test_an_integer_unit_is_the_deprecated_form_of_a_privacy_unit(dp):
    """``unit=`` is a privacy unit, as in ``privatize_table``; ``unit=2`` still means
    ``"cell:2"`` for one release, with a warning."""
    with pytest.warns(DeprecationWarning, match="use the privacy unit unit='cell:2'"):
        old = interop.make_privatize_counts(eps=1.0, upper=5, unit=2)
    new = interop.make_privatize_counts(eps=1.0, upper=5, unit="cell:2")
    assert [old.map(d) for d in (1, 2, 3)] == [new.map(d) for d in (1, 2, 3)]
    assert interop.step_loss(1.0, "row:2") == interop.step_loss(1.0, "cell:2")
    assert interop.step_loss(1.0) == interop.step_loss(1.0, "row")
