"""One vocabulary across the library: ``constructor=``, ``solver=``, ``loss=``, ``eps``
for every budget, ``kind=`` for which polytope (spelled ``"RF"``), ``lam=`` and ``n=``
one value or many, ``seed=``, ``keys=``, ``unit=`` a privacy unit, one default per
keyword, and one argument order for ``count_error``; the former names still work for one
release, each with a ``DeprecationWarning`` that names the new one, and a new name given
together with its former one is refused.

The second half walks the signatures of every public function, class and method of the
package (:func:`_public`) and fails on a parameter that deviates from the vocabulary: a
former name, ``over=`` outside the engine, a ``kind=`` or a ``seed=`` not known to mean
what the vocabulary says, a ``unit=`` whose default is no privacy unit, a default that
differs from its keyword's one default. A deviation that is meant is listed with the
reason, the place where the difference is documented."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings
from fractions import Fraction

import numpy as np
import pytest

import dpfix
from dpfix.certify import certify_optimal, exact_optimum, northwest_dual
from dpfix.constructors import construct, lp_optimum, northwest_corner, unfixed_optimum
from dpfix.constructors.delta import loss_matrix, lp_optimum_delta
from dpfix.explore.cases import grid
from dpfix.explore.graph_instances import atlas_graphs
from dpfix.explore.joint import joint_gap_survey
from dpfix.explore.northwest import find_northwest_counterexample, northwest_survey
from dpfix.explore.search import SearchResult
from dpfix.numbers.calibration import (
    analytic_gaussian_delta,
    analytic_gaussian_sigma,
    discrete_gaussian_delta,
    discrete_gaussian_sigma,
)
from dpfix.numbers.deprecation import renamed
from dpfix.release.bounds import PrivateBound
from dpfix.release.joint import zero_share_rule
from dpfix.release.options import rule_of_thumb_split, split_budget, stage_split
from dpfix.release.pipeline import privatize_counts
from dpfix.release.privatizers import (
    cyclic_gaussian,
    cyclic_laplace,
    hierarchical,
    laplace,
    privatize_distribution,
    privelet,
)
from dpfix.release.privatizers.deconvolve import deconvolve
from dpfix.release.privatizers.joint import joint_laplace
from dpfix.theory.mechanism import weight_matrix
from dpfix.theory.metrics import count_error
from helpers import cli

Z = ["1/2", "1/4", "1/4"]
ZF = [0.5, 0.25, 0.25]


def _same(a, b):
    """Equal results: mechanisms by their matrices, certificates by value, else ==."""
    if isinstance(a, SearchResult):
        return a.visited == b.visited and (a.counterexample is b.counterexample is None or
                                           _same(a.counterexample, b.counterexample))
    if hasattr(a, "eps_1") and hasattr(a, "output_histogram"):  # a release: its counts
        return np.array_equal(a.counts, b.counts) and a.eps == b.eps
    if hasattr(a, "edges") and hasattr(a, "nodes"):  # a graph
        return sorted(a.edges) == sorted(b.edges)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if hasattr(a, "matrix") and hasattr(a, "log_matrix"):
        return (a.T == b.T).all() if a.exact else np.array_equal(a.log_matrix, b.log_matrix)
    if hasattr(a, "lower_bound"):
        return (a.value, a.lower_bound, a.optimal) == (b.value, b.lower_bound, b.optimal)
    if hasattr(a, "raw") or hasattr(a, "iterations"):
        return np.array_equal(a.z, b.z)
    if hasattr(a, "northwest_value"):
        return (a.loss, a.n, a.lam, a.gap, a.searched) == (b.loss, b.n, b.lam, b.gap, b.searched)
    if isinstance(a, tuple):
        return all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


#: (function, positional arguments, new keyword, old keyword, value)
ALIASES = [
    (construct, (Z,), {"lam": 2}, "constructor", "method", "heuristic"),
    (construct, (Z,), {"lam": 2, "constructor": "lp"}, "loss", "weights", "squared"),
    (construct, (Z,), {"lam": 2, "constructor": "unfixed"}, "loss", "weights", "squared"),
    (lp_optimum, (Z,), {"lam": 2, "solver": "exact"}, "loss", "weights", "squared"),
    (lp_optimum, (ZF, 1.0), {}, "solver", "method", "highs-ipm"),
    (lp_optimum_delta, (Z, 2, "1/10"), {}, "loss", "weights", "squared"),
    (lp_optimum_delta, (ZF, 2.0, 0.1), {}, "solver", "method", "highs-ds"),
    (loss_matrix, (Z,), {}, "loss", "weights", "squared"),
    (unfixed_optimum, (Z,), {"lam": 2}, "loss", "weights", "squared"),
    (certify_optimal, (northwest_corner(Z, lam=2),), {}, "loss", "weights", "squared"),
    (exact_optimum, (Z, 2), {}, "loss", "weights", "zero-one"),
    (northwest_dual, (Z, 2), {}, "loss", "weights", "squared"),
    (count_error, (np.eye(3, dtype=int), Z), {}, "loss", "weights", "squared"),
    (weight_matrix, (), {"z": Z}, "loss", "weights", "squared"),
    (find_northwest_counterexample, (), {"n_max": 3}, "loss", "weights", "zero-one"),
    (northwest_survey, (), {"n": (3,), "lam": (3,), "denominator_max": 3},
     "loss", "weights", "zero-one"),
    (privatize_distribution, ([5, 3, 2], 1.0), {"secure": False, "seed": 3},
     "privatizer", "method", "laplace"),
    (privatize_distribution, ([5, 3, 2],), {"secure": False, "seed": 3}, "eps", "epsilon", 1.0),
    (deconvolve, ([100, 300, 600], 3), {}, "estimator", "method", "least-squares"),
]
ALIASES += [(f, ([5, 3, 2],), {"secure": False, "seed": 3}, "eps", "epsilon", 1.0)
            for f in (cyclic_laplace, laplace, privelet, hierarchical)]
ALIASES += [(f, (2.0,), {}, "eps", "epsilon", 1.0)
            for f in (analytic_gaussian_delta, discrete_gaussian_delta)]
ALIASES += [(f, (), {"delta": 1e-5}, "eps", "epsilon", 1.0)
            for f in (analytic_gaussian_sigma, discrete_gaussian_sigma)]
ALIASES += [(cyclic_gaussian, ([5, 3, 2],), {"delta": 1e-6, "secure": False, "seed": 3},
             "eps", "epsilon", 1.0)]


def grid_list(**kw):
    """:func:`dpfix.explore.cases.grid` as a list (its instances compared)."""
    return list(grid(**kw))


ALIASES += [
    (privatize_counts, ([0, 1, 2, 3, 3],), {"upper": 3, "seed": 1}, "eps", "epsilon", 1.0),
    (split_budget, (), {"split": 0.25}, "eps", "epsilon", 2.0),
    (stage_split, (), {"fraction": 0.3}, "eps", "epsilon", 0.7),
    (rule_of_thumb_split, (), {}, "eps", "eps_t", 1.0),
    (PrivateBound(0.1).split, (), {}, "eps", "eps_t", 1.0),
    (zero_share_rule, (), {}, "eps", "eps_total", 1.0),
    (certify_optimal, (northwest_corner(Z, lam=2),), {}, "kind", "over", "U"),
    (exact_optimum, (Z, 2), {}, "kind", "over", "U"),
    (atlas_graphs, ([4],), {}, "family", "kind", "trees"),
    (atlas_graphs, (), {}, "n", "n_values", [3, 4]),
    (grid_list, (), {"lam": [2]}, "n", "ns", (2, 3)),
    (grid_list, (), {"n": (2,)}, "lam", "lams", [2, 3]),
    (northwest_survey, ("zero-one",), {"lam": (3,), "denominator_max": 3}, "n", "n_values",
     (3,)),
    (northwest_survey, ("zero-one",), {"n": (3,), "denominator_max": 3}, "lam", "lams", (3,)),
    (find_northwest_counterexample, ("zero-one",), {"n_max": 3}, "lam", "lams", (2,)),
    (joint_gap_survey, (), {"shapes": ((2, 2),)}, "totals", "weights", (1,)),
    (cyclic_laplace, ([5, 3, 2], 1.0), {"secure": False}, "seed", "rng", 3),
    (joint_laplace, ([[30, 0], [0, 10]], 1.0), {"secure": False}, "seed", "rng", 3),
    (privatize_distribution, ([5, 3, 2], 1.0), {"secure": False}, "seed", "rng", 3),
]


@pytest.mark.parametrize("f, args, kw, new, old, value", ALIASES,
                         ids=[f"{a[0].__name__}-{a[4]}" for a in ALIASES])
def test_a_former_keyword_works_warns_and_cannot_be_doubled(f, args, kw, new, old, value):
    expected = f(*args, **kw, **{new: value})
    with pytest.warns(DeprecationWarning, match=f"{old}= is deprecated; use {new}=") as rec:
        got = f(*args, **kw, **{old: value})
    assert _same(got, expected)
    assert rec[0].filename == __file__  # the warning points at the caller's line
    with pytest.raises(TypeError, match=f"got both {new}= and its deprecated name {old}="):
        f(*args, **kw, **{old: value, new: value})


def test_an_unknown_keyword_is_still_refused():
    with pytest.raises(TypeError, match="unexpected keyword argument 'wieghts'"):
        lp_optimum(Z, lam=2, solver="exact", wieghts="abs")


def test_the_new_names_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        construct(Z, lam=2, constructor="lp", loss="squared", solver="exact")
        lp_optimum(ZF, 1.0, solver="highs-ds", loss="abs")
        northwest_corner(Z, lam=2).count_error(Z, "squared")


def test_count_error_takes_z_then_loss_in_both_places():
    M = northwest_corner(Z, lam=2)
    zeta = ["1/3", "1/3", "1/3"]
    assert M.count_error(zeta, "squared") == count_error(M.matrix, zeta, "squared")
    assert M.count_error(loss="squared") == count_error(M.matrix, Z, "squared")


@pytest.mark.parametrize("old_call, new_call", [
    (lambda M: M.count_error("squared"), lambda M: M.count_error(loss="squared")),
    (lambda M: M.count_error("squared", ["1/3"] * 3),
     lambda M: M.count_error(["1/3"] * 3, "squared")),
    (lambda M: M.count_error(lambda d: abs(d) ** 3), lambda M: M.count_error(loss=lambda d:
                                                                          abs(d) ** 3)),
    (lambda M: M.count_error(weight_matrix("abs", Z)),
     lambda M: M.count_error(loss=weight_matrix("abs", Z))),
    (lambda M: M.count_error(weights="squared"), lambda M: M.count_error(loss="squared")),
])
def test_the_former_count_error_order_still_works_and_warns(old_call, new_call):
    M = northwest_corner(Z, lam=2)
    with pytest.warns(DeprecationWarning, match="count_error"):
        got = old_call(M)
    assert got == new_call(M)


@pytest.mark.parametrize("name", ["zero-one", "capped:1", "hinge:1", "sqrt"])
def test_float_count_error_of_a_named_loss_is_that_loss(name):
    """On the float path every named loss is its own: not the squared error."""
    exact = northwest_corner(Z, lam=2).count_error(loss=name)
    floats = northwest_corner(ZF, eps=float(np.log(2))).count_error(loss=name)
    assert floats == pytest.approx(float(exact), rel=1e-9)


def test_renamed_attributes_warn():
    cert = certify_optimal(northwest_corner(Z, lam=2), loss="squared")
    with pytest.warns(DeprecationWarning, match="use Certificate.loss"):
        assert cert.weights == cert.loss == "squared"
    with pytest.warns(DeprecationWarning, match="use Certificate.custom_loss"):
        assert cert.custom_weights is cert.custom_loss is False
    ce = find_northwest_counterexample("zero-one", n_max=3).counterexample
    with pytest.warns(DeprecationWarning, match="use NorthwestCounterexample.loss"):
        assert ce.weights == ce.loss == "zero-one"
    out = laplace([5, 3, 2], 1.0, secure=False, seed=3)
    with pytest.warns(DeprecationWarning, match="use PrivatizedDistribution.privatizer"):
        assert out.method == out.privatizer == "laplace"
    with pytest.warns(DeprecationWarning, match="use PrivatizedDistribution.eps"):
        assert out.epsilon == out.eps == 1.0
    fit = deconvolve([100, 300, 600], 3, estimator="least-squares")
    with pytest.warns(DeprecationWarning, match="use Deconvolution.estimator"):
        assert fit.method == fit.estimator == "least-squares"


def test_the_helper_refuses_a_non_default_value_with_the_old_name():
    with pytest.warns(DeprecationWarning):
        assert renamed("weights", "loss", {"weights": "abs"}, "abs", "abs") == "abs"
    with pytest.raises(TypeError, match="pass loss= only"):
        renamed("weights", "loss", {"weights": "abs"}, Fraction(1), "abs")


@pytest.mark.parametrize("argv, out_words", [
    (["certify", "--n", "4", "--lam", "3"], "loss squared"),
    (["explore", "northwest", "--n-max", "3"], "loss squared"),
])
def test_the_weights_option_is_a_deprecated_name_of_loss(capsys, argv, out_words):
    rc, out, err = cli(capsys, *argv, "--loss", "squared")
    assert rc == 0 and out_words in out and "deprecated" not in err
    rc_old, out_old, err_old = cli(capsys, *argv, "--weights", "squared")
    assert rc_old == 0 and out_words in out_old
    assert "warning: --weights is deprecated; use --loss" in err_old
    strip = [line for line in out.splitlines() if " s" not in line and "seconds" not in line]
    assert strip == [line for line in out_old.splitlines()
                     if " s" not in line and "seconds" not in line]


def test_the_suite_turns_the_librarys_own_deprecations_into_errors():
    """pyproject's ``filterwarnings`` makes a dpfix deprecation an error in every test, so
    a test that still calls a former name fails instead of warning; the category is a
    :class:`DeprecationWarning` (filters on that class keep applying)."""
    from dpfix.numbers.deprecation import DpfixDeprecationWarning

    assert issubclass(DpfixDeprecationWarning, DeprecationWarning)
    M = northwest_corner(Z, lam=2)
    with pytest.raises(DpfixDeprecationWarning, match="the loss comes after z"):
        M.count_error("abs", Z)
    with pytest.raises(DpfixDeprecationWarning, match="weights= is deprecated"):
        renamed("weights", "loss", {"weights": "squared"}, "abs", "abs", where="f")


# ------------------------------------------------------------------ the walk of the public API
#: the command's modules take argparse namespaces, not the library's keywords
NOT_WALKED = ("dpfix.cli",)


def _public() -> dict[str, inspect.Signature]:
    """``module.qualname -> signature`` of every public function, class and public method
    of dpfix's modules (their ``__all__``), each once, where it is defined."""
    out: dict[str, inspect.Signature] = {}
    for info in pkgutil.walk_packages(dpfix.__path__, "dpfix."):
        if info.name.startswith(NOT_WALKED) or info.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            found = []
            if inspect.isfunction(obj):
                found.append(obj)
            elif inspect.isclass(obj) and obj.__module__ == info.name:
                if obj.__init__ is not object.__init__:
                    found.append(obj)
                found += [v.__func__ if isinstance(v, (staticmethod, classmethod)) else v
                          for k, v in vars(obj).items() if not k.startswith("_")
                          and (inspect.isfunction(v) or isinstance(v, (staticmethod,
                                                                      classmethod)))]
            for f in found:
                key = f"{f.__module__}.{f.__qualname__}"
                try:
                    out.setdefault(key, inspect.signature(f))
                except (TypeError, ValueError):  # a builtin without a signature
                    continue
    return out


PUBLIC = _public()


def _having(param: str) -> dict[str, inspect.Parameter]:
    return {where: sig.parameters[param] for where, sig in PUBLIC.items()
            if param in sig.parameters}


def test_the_walk_sees_the_public_api():
    assert len(PUBLIC) > 500
    assert {"dpfix.release.table.privatize_table", "dpfix.explore.search.survey",
            "dpfix.theory.polytopes.Polytope.sample_vertices",
            "dpfix.release.records.release.privatize_records"} <= set(PUBLIC)


#: former names -> the vocabulary's (each kept as a deprecated alias where it was one)
FORMER = {"epsilon": "eps", "epsilons": "eps", "eps_t": "eps", "eps_total": "eps",
          "lams": "lam", "n_values": "n", "ns": "n", "rng": "seed", "key": "keys",
          "weights": "loss", "method": "constructor, solver, privatizer or estimator"}
_GENERATOR = "a numpy Generator the float primitive draws from (seed= made it: numpy_generator)"
_CELL = "a study's cell key (the tuple naming a cell of its grid), not key columns"
_INTERVAL = "how an interval is bounded (chernoff, bonferroni: docs/uncertainty.md)"
_AXES = "one lam per axis of a joint histogram (a pair), not values to iterate"
#: the parameters under a former name that mean another thing, and what they mean
MEANT_FORMER = {
    **{("rng", f"dpfix.explore.cases.{f}"): "the numpy Generator a random case is drawn from"
       for f in ("random_z", "random_lam", "random_convex_point")},
    **{("rng", f): _GENERATOR for f in (
        "dpfix.release.frameworks.apply_mechanism", "dpfix.release.frameworks.apply_histogram",
        "dpfix.release.privatizers.noise.add_laplace",
        "dpfix.release.privatizers.noise.add_gaussian")},
    **{("key", f): _CELL for f in (
        "dpfix.experiments.cells.cell_seed", "dpfix.experiments.cells.compute_cell",
        "dpfix.experiments.cells.key_id", "dpfix.experiments.cells.CellCache.get",
        "dpfix.experiments.cells.CellCache.add", "dpfix.experiments.accuracy.accuracy_cell",
        "dpfix.experiments.frontier.frontier_cell",
        "dpfix.experiments.privatizer_error.privatizer_cell",
        "dpfix.experiments.runtime.runtime_cell", "dpfix.experiments.split.split_cell")},
    ("method", "dpfix.experiments.runs.run_method"): "a method of the paper's study (a row)",
    ("method", "dpfix.experiments.bounds.run_release"): "a method of the bounds study",
    **{("method", f"dpfix.release.uncertainty.{f}"): _INTERVAL for f in (
        "columns.total_interval", "columns.group_intervals", "totals.total_intervals",
        "band.DistributionBand", "columns.ColumnUncertainty.group_intervals",
        "counts.ConfidenceSets", "totals.TotalInterval")},
    ("method", "dpfix.sampling.geometric.TwoSidedGeometric"): "how it draws: blocks or digits",
    **{("method", f"dpfix.release.outputs.Release.{f}"): _INTERVAL
       for f in ("total_interval", "group_intervals")},
    ("weights", "dpfix.experiments.incidents.incidents"): "the incidents' mixture weights",
    ("weights", "dpfix.release.uncertainty.common.width_summary"): "a weighted mean's weights",
    ("weights", "dpfix.sampling.table.CheckedTable"): "the integer weights of the table",
    **{("lams", f): _AXES for f in ("dpfix.constructors.joint.product_remap",
                                    "dpfix.release.privatizers.joint.deconvolve_joint",
                                    "dpfix.sampling.joint.JointSampler")},
}


@pytest.mark.parametrize("old", sorted(FORMER))
def test_no_public_parameter_has_a_former_name(old):
    found = {where for where in _having(old) if (old, where) not in MEANT_FORMER}
    assert not found, f"{old}= (use {FORMER[old]}=) in {sorted(found)}"
    stale = {w for (o, w) in MEANT_FORMER if o == old} - set(_having(old))
    assert not stale, f"MEANT_FORMER names what takes no {old}=: {sorted(stale)}"


#: ``over=`` is what the engine's predicate receives (a polytope, its pairs, an instance)
OVER = {"dpfix.explore.search.smallest_counterexample", "dpfix.explore.search.survey",
        "dpfix.explore.search.Counterexample", "dpfix.explore.graph_theory.Statement"}
#: ``kind=`` chooses a polytope
KIND = {"dpfix.certify.certificate.certify_optimal", "dpfix.certify.certificate.exact_optimum",
        "dpfix.certify.certificate.Certificate", "dpfix.explore.cases.polytope",
        "dpfix.explore.strategies.polytopes_of", "dpfix.explore.strategies.vertices_of",
        "dpfix.explore.strategies.points_of", "dpfix.explore.verification.every_lam_cases",
        "dpfix.theory.parametric.chambers", "dpfix.theory.parametric.interval_around",
        "dpfix.theory.parametric.Chambers", "dpfix.theory.delta.delta_polytope",
        "dpfix.theory.polytopes.check_kind", "dpfix.explore.graph_chambers.chambers_report"}
MEANT_KIND = {"dpfix.io.tables.TableInput": "the table's format (csv, parquet, histogram), "
                                            "an attribute of an input read, not a choice"}


def test_over_is_the_engines_and_kind_chooses_a_polytope():
    assert set(_having("over")) == OVER
    assert set(_having("kind")) == KIND | set(MEANT_KIND)


@pytest.mark.parametrize("call", [
    lambda kind: dpfix.explore.cases.polytope(kind, 2, 2, ["1/2", "1/2"]).name,
    lambda kind: dpfix.theory.parametric.chambers(kind, 2, ["1/2", "1/2"]).kind,
    lambda kind: dpfix.explore.search.survey(lambda B, inst: True, over=kind, n=2,
                                             lam=2).visited,
], ids=["polytope", "chambers", "engine"])
def test_rf_is_one_spelling_and_r_f_its_former_one(call):
    import dpfix.explore.cases
    import dpfix.explore.search
    import dpfix.theory.parametric  # noqa: F401

    new = call("RF")
    with pytest.warns(DeprecationWarning, match="'R_F' is deprecated; use .*'RF'") as rec:
        assert call("R_F") == new
    assert rec[0].filename == __file__


#: ``seed=`` takes an int, a SeedSequence or a RandomSource (random_source, numpy_generator)
SEED_ANY = {f"dpfix.release.privatizers.{f}" for f in (
    "cyclic.cyclic_laplace", "cyclic.cyclic_gaussian", "laplace_baselines.laplace",
    "laplace_baselines.privelet", "hierarchical.hierarchical", "joint.joint_laplace",
    "common.resolve_rng", "common.budget_and_seed")} | {
    "dpfix.sampling.source.random_source", "dpfix.sampling.source.numpy_generator",
    "dpfix.theory.polytopes.Polytope.sample_vertices", "dpfix.io.data.synthetic_counts",
    "dpfix.explore.graph_tables.staircase_optima", "dpfix.release.bounds.private_upper",
    "dpfix.release.bounds.choose_upper", "dpfix.release.records.bounding.bound_contributions",
    "dpfix.release.records.contributions.suggest_max_contributions",
    "dpfix.release.records.reading.IndexedRecords.tally",
    "dpfix.release.records.stream.StreamedRecords.tally",
    "dpfix.sampling.geometric.TwoSidedGeometric.sample",
    "dpfix.sampling.geometric.TwoSidedGeometric.magnitudes",
    "dpfix.sampling.structured.StructuredSampler.sample",
    "dpfix.sampling.table.CheckedTable.sample",
    "dpfix.sampling.joint.JointSampler.sample"}
_REPORTED = ("a release's seed: a non-negative int (check_seed), written in the report and "
             "spawned into the release's parts (dpfix.release.seeds; docs/release.md)")
_STUDY = "a study's seed: an int recorded with its results (docs/reproduction.md)"
#: ``seed=`` that takes an int only, and why
SEED_INT = {
    **{f: _REPORTED for f in (
        "dpfix.release.table.privatize_table", "dpfix.release.plan.plan_release",
        "dpfix.release.pipeline.privatize_counts",
        "dpfix.release.records.release.privatize_records",
        "dpfix.release.records.plan.plan_records", "dpfix.release.dask.privatize_dataset",
        "dpfix.release.frameworks.privatize", "dpfix.release.frameworks.stage2_source",
        "dpfix.release.joint.privatize_joint", "dpfix.release.order.order_source",
        "dpfix.release.order.row_order", "dpfix.release.plan.ReleasePlan",
        "dpfix.release.plan.ColumnPlan", "dpfix.release.records.plan.RecordsPlan",
        "dpfix.release.records.release.bounded_counts",
        "dpfix.release.records.dask.DaskRecords.tally", "dpfix.release.result.PrivatizedCounts",
        "dpfix.release.seeds.check_seed", "dpfix.release.seeds.seed_child",
        "dpfix.release.seeds.stage_seeds", "dpfix.release.seeds.column_seeds")},
    **{f"dpfix.experiments.{f}": _STUDY for f in (
        "config.make_config", "config.Config", "runs.run_method", "accuracy.accuracy_cell",
        "bounds.choose_by", "bounds.run_release", "bounds.bounds_cells", "bounds.study",
        "coverage.coverage_study", "coverage.run_case", "frontier.frontier_cell",
        "incidents.incidents", "joint.study", "joint.synthetic_pair", "joint.joint_cells",
        "privatizer_error.privatizer_cell", "resolution.paired_intervals", "runtime.runtime_cell",
        "split.split_cell")},
    "dpfix.constructors.heuristic.heuristic": "stored in the mechanism's params (a "
                                              "SeedSequence's entropy would be revealed)",
    "dpfix.explore.instances.random_targets": "seeds (seed, n) and names the family by it",
    "dpfix.sampling.source.SeededSource": "the seed of the seeded source itself",
}


def test_every_seed_is_known_to_take_one_of_the_forms():
    having = set(_having("seed"))
    assert not SEED_ANY & set(SEED_INT)
    unknown = having - SEED_ANY - set(SEED_INT)
    assert not unknown, f"seed= of unknown form (add to SEED_ANY or SEED_INT): {unknown}"
    assert not (SEED_ANY | set(SEED_INT)) - having


@pytest.mark.parametrize("draw", [
    lambda seed: dpfix.io.data.synthetic_counts(50, seed=seed).tolist(),
    lambda seed: [t.tolist() for t in dpfix.theory.polytopes.U(3, 2).sample_vertices(3, seed)],
    lambda seed: dpfix.sampling.random_source(seed).words(4).tolist(),
    lambda seed: dpfix.release.bounds.choose_upper(list(range(1, 42)) * 10, 30.0,
                                                   seed=seed).upper,
    lambda seed: dpfix.sampling.TwoSidedGeometric(2).sample(6, seed).tolist(),
    lambda seed: dpfix.constructors.remap.structured_sampler("northwest", Z, lam=2).sample(
        [0, 1, 2, 2], seed=seed).tolist(),
], ids=["synthetic_counts", "sample_vertices", "random_source", "choose_upper", "geometric",
        "sampler"])
def test_a_seed_is_an_int_a_seed_sequence_or_a_seeded_source(draw):
    import dpfix.constructors.remap
    import dpfix.io.data
    import dpfix.release.bounds
    import dpfix.sampling
    import dpfix.theory.polytopes  # noqa: F401
    from dpfix.sampling import SeededSource

    want = draw(11)
    assert draw(np.random.SeedSequence(11)) == want
    assert draw(SeededSource(11)) == want


_RANDOM = "a RandomSource object the internal step draws from (random_source(seed) made it)"
_DATA = "the data read (a path, a frame, a dataset), not randomness"
#: ``source=`` names the data read or, inside a release, its RandomSource object: never a
#: seed (the samplers take ``seed=``, their ``source=`` is its deprecated name)
SOURCE = {
    **{f"dpfix.release.{f}": _DATA for f in (
        "dask.privatize_dataset", "dask.read_dataset", "inputs.Dataset", "records.reading.Records",
        "records.reading.index_records", "records.reading.source_of",
        "records.reading.source_name", "records.reading.is_dask",
        "records.sources.records_engine", "records.sources.open_records")},
    **{f: _RANDOM for f in (
        "dpfix.release.bounds.sample_exponential", "dpfix.release.records.bounding.bound_codes",
        "dpfix.release.records.bounding.tally",
        "dpfix.release.records.contributions.choose_contributions",
        "dpfix.release.stream.external_shuffle", "dpfix.sampling.quantile.quantile_remap",
        "dpfix.sampling.quantile.quantile_joint", "dpfix.sampling.structured.Remap.apply")},
    **{f: "the RandomSource whose randomness the report describes" for f in (
        "dpfix.release.report.assemble", "dpfix.sampling.structured.privacy_statement",
        "dpfix.sampling.joint.JointSampler.describe",
        "dpfix.sampling.structured.StructuredSampler.describe",
        "dpfix.sampling.table.CheckedTable.describe")},
}


def test_source_is_data_or_a_random_source_object_never_a_seed():
    assert set(_having("source")) == set(SOURCE)


def test_the_samplers_former_source_keyword_warns():
    from dpfix.sampling import TwoSidedGeometric, random_source

    with pytest.warns(DeprecationWarning, match="source= is deprecated; use seed=") as rec:
        old = TwoSidedGeometric(2).sample(6, source=random_source(3))
    assert rec[0].filename == __file__
    assert old.tolist() == TwoSidedGeometric(2).sample(6, seed=3).tolist()


def _unit_default(p: inspect.Parameter) -> str | None:
    from dpfix.release.budget import privacy_unit

    return None if p.default is p.empty else privacy_unit(p.default).text


_RECORD = "a field of a result: what was used, set by the function that made it"
_REQUIRED = ("required: None stands for not given (the deprecated weights= may give it), "
             "refused with a message")
#: the privacy unit of a joint histogram's mechanisms: one record's cell
_JOINT = ("the joint mechanisms' unit: one count of one column (docs/joint.md sections 1 "
          "and 4); the release's default unit is the row")
#: defaults that differ from their keyword's one default, and why
MEANT_DEFAULT = {
    **{("unit", f): _JOINT for f in (
        "dpfix.constructors.joint.joint_edges", "dpfix.constructors.joint.product_transport",
        "dpfix.constructors.joint.grid_lp_optimum", "dpfix.constructors.joint.joint_sampler",
        "dpfix.explore.joint.smallest_joint_gap", "dpfix.explore.joint.joint_gap_survey",
        "dpfix.explore.joint_instances.JointInstance",
        "dpfix.explore.joint_instances.joint_instances")},
    ("unit", "dpfix.explore.joint.JointGapSurvey"): _RECORD,
    ("selector", "dpfix.constructors.heuristic.heuristic"):
        "the constructor alone runs one selector; a release keeps the best of three",
    ("framework", "dpfix.release.joint.privatize_joint"):
        "a joint release is one-stage unless asked (docs/joint.md sections 5 and 7)",
    ("split", "dpfix.release.joint.privatize_joint"):
        "the joint two-stage split (docs/joint.md section 7)",
    ("constructor", "dpfix.sampling.table.checked_table"): "a table given, not constructed",
    ("constructor", "dpfix.sampling.table.CheckedTable"): "a table given, not constructed",
    ("constructor", "dpfix.theory.mechanism.Mechanism"): "a matrix given, not constructed",
    ("constructor", "dpfix.sampling.joint.JointSampler"): "the joint release's one mechanism",
    ("loss", "dpfix.explore.graph_theory.rr_remap_optimal"):
        "the graph statement's loss (docs/graphs.md)",
    ("loss", "dpfix.explore.graph_theory.northwest_analogue_holds"):
        "the graph statement's loss (docs/graphs.md)",
    ("loss", "dpfix.explore.graph_theory.northwest_analogue_values"):
        "the graph statement's loss (docs/graphs.md)",
    ("loss", "dpfix.certify.certificate.Certificate"): _RECORD,
    ("selector", "dpfix.release.result.PrivatizedCounts"): _RECORD,
    ("loss", "dpfix.explore.northwest.find_northwest_counterexample"): _REQUIRED,
    ("loss", "dpfix.explore.northwest.northwest_survey"): _REQUIRED,
    ("loss", "dpfix.theory.mechanism.weight_matrix"): _REQUIRED,
    **{("loss", f"dpfix.explore.star_large_lam.{f}"): "the graph statement's loss (docs/graphs.md)"
       for f in ("derive_certificate", "prove_no_threshold", "exact_gap")},
    **{("solver", f"dpfix.explore.grid_products.{f}"):
       "the exact LP's form on a grid: the primal simplex, or the dual (column generation)"
       for f in ("grid_optimum", "theorem_g_check")},
    ("backend", "dpfix.theory.parametric.Chambers.confirm_vertices"):
        "the second count is cdd's by design: the chambers' own count is the first",
    ("loss", "dpfix.explore.graph_tables.search_report"):
        "None: the report without the values of a loss",
    ("solver", "dpfix.constructors.lp.lp_optimum"): "the float LP (solver='exact' for cdd)",
    ("solver", "dpfix.constructors.delta.lp_optimum_delta"):
        "the (eps, delta) optimum is exact by default (its docstring)",
    ("postprocess", "dpfix.release.privatizers.joint.joint_laplace"):
        "a joint histogram has no CDF to make monotone: the simplex projection",
    ("order", "dpfix.release.records.release.privatize_records"):
        "records come out as their groups (docs/records.md)",
    ("order", "dpfix.release.records.plan.plan_records"):
        "records come out as their groups (docs/records.md)",
    ("order", "dpfix.release.dask.privatize_dataset"):
        "a dataset is shuffled within its partitions (no global sort)",
}
#: the one default of each keyword (None: the path's own, documented where it is chosen)
ONE_DEFAULT = {"constructor": "northwest", "selector": "best", "framework": "two-stage",
               "privatizer": "cyclic-laplace", "unit": "row", "loss": "abs", "split": None,
               "solver": None, "order": None, "keys": (), "keep": (), "secure": True,
               "backend": "auto", "jobs": 1, "postprocess": None, "estimator": None,
               "remap": None}
#: defaults that are the same as the keyword's one (rule-of-thumb is what None splits by)
SAME = {("split", "rule-of-thumb"): None, ("keep", None): (), ("keys", None): ()}
#: the privatizers' own post-processing (the cyclic ones' and the others') and the no-split
#: framework's estimator and remap are what None picks on the release path
#: (dpfix.release.options)
PATH_DEFAULTS = {("postprocess", "isotonic-cdf-offset"), ("postprocess", "isotonic-cdf"),
                 ("estimator", "em"), ("remap", "northwest")}


@pytest.mark.parametrize("keyword", sorted(ONE_DEFAULT))
def test_one_default_per_keyword_or_the_difference_documented(keyword):
    other = {}
    for where, p in _having(keyword).items():
        if p.default is p.empty or (keyword, where) in MEANT_DEFAULT:
            continue
        value = _unit_default(p) if keyword == "unit" else p.default
        value = SAME.get((keyword, value), value) if isinstance(value, (str, type(None))) \
            else value
        if value != ONE_DEFAULT[keyword] and (keyword, value) not in PATH_DEFAULTS:
            other[where] = value
    assert not other, f"{keyword}= defaults other than {ONE_DEFAULT[keyword]!r}: {other}"
    stale = {w for (k, w) in MEANT_DEFAULT if k == keyword} - set(_having(keyword))
    assert not stale, f"MEANT_DEFAULT names what takes no {keyword}=: {sorted(stale)}"


def test_every_unit_default_is_a_privacy_unit():
    for where, p in _having("unit").items():
        if p.default is not p.empty:
            assert _unit_default(p) in ("row", "cell"), where


@pytest.mark.parametrize("one, many", [
    (lambda: grid_list(n=3, lam=2), lambda: grid_list(n=[3], lam=[2])),
    (lambda: [lab for lab, _ in atlas_graphs(4)], lambda: [lab for lab, _ in atlas_graphs([4])]),
    (lambda: northwest_survey("abs", n=3, lam=3, denominator_max=3),
     lambda: northwest_survey("abs", n=(3,), lam=(3,), denominator_max=3)),
    (lambda: joint_gap_survey(lam=2, shapes=((2, 2),), totals=(1,)).visited,
     lambda: joint_gap_survey(lam=[2], shapes=((2, 2),), totals=(1,)).visited),
], ids=["grid", "atlas_graphs", "northwest_survey", "joint_gap_survey"])
def test_lam_and_n_take_one_value_or_many(one, many):
    assert _same(one(), many())


def test_keys_is_the_key_columns_and_key_its_former_name(tmp_path):
    from dpfix.io.tables import read_counts
    from dpfix.release.order import row_order

    p = tmp_path / "t.csv"
    p.write_text("name,k\nb,3\nc,0\na,1\n")
    table = read_counts(p, "k")
    with pytest.warns(DeprecationWarning, match="key= is deprecated; use keys=") as rec:
        old = row_order(table, "key", key=["name"], seed=0)
    assert rec[0].filename == __file__
    assert old.tolist() == row_order(table, "key", keys=["name"], seed=0).tolist() == [2, 0, 1]
