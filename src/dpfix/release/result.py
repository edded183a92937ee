"""What a privatization returns: :class:`PrivatizedCounts`, and the errors that stop one
before any row is drawn (:class:`NotPrivateError`, :class:`TimeLimitReached`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpfix.constructors import CONSTRUCTORS
from dpfix.numbers.deprecation import renamed_attribute
from dpfix.numbers.errors import Error
from dpfix.release.budget import exact_budgets
from dpfix.release.options import RULE_OF_THUMB
from dpfix.theory.mechanism import Mechanism

__all__ = ["PrivatizedCounts", "NotPrivateError", "TimeLimitReached"]


class NotPrivateError(Error, ValueError):
    """The constructed mechanism is not ``eps_2``-DP; no row was drawn."""


class TimeLimitReached(Error, RuntimeError):
    """The LP constructor hit ``time_limit``; no row was drawn.

    Attributes
    ----------
    z : numpy.ndarray
        Stage 1's public target (differentially private).
    eps_1, eps_2 : float
        The budgets of the two stages.
    seconds : dict
        Time spent per stage.
    """

    def __init__(self, message: str, z: np.ndarray, eps_1: float, eps_2: float,
                 seconds: dict) -> None:
        super().__init__(message)
        self.z, self.eps_1, self.eps_2, self.seconds = z, eps_1, eps_2, seconds


@dataclass(repr=False)
class PrivatizedCounts:
    """What :func:`dpfix.release.pipeline.privatize_counts` returns.

    ``counts`` (``None`` for a histogram input: then ``joint``, the ``n x n``
    histogram of (input, output) pairs, whose column sums are the private
    output histogram, while its rows are the true ``eta``: confidential), ``z``,
    the output distribution and everything derived from
    ``z`` and ``T`` are differentially private; ``n``, ``N`` and the budgets
    are public. ``topcoded`` (how many true counts exceeded ``upper``) is
    derived from the true data without noise: it is for the data holder and
    :meth:`public_report` leaves it out, as it leaves out ``seconds`` (the
    draw's time grows with the number of non-empty count groups).
    ``mechanism`` is None for a structured constructor above
    :data:`STRUCTURED_T_MAX` (``T`` is not built); ``sampler`` describes how
    stage 2 drew its rows, with its privacy statement (None: numpy's
    multinomial on float rows of ``T``); ``stage2`` is that exact sampler itself
    (a function of the public ``z`` and ``T`` only), which draws further rows with
    the same mechanism (``stage2.sample(counts, source)``: the Dask engine).
    The one-stage and hybrid frameworks add ``framework``, ``estimator``,
    ``remap``, ``deconvolution`` (the estimate's result) and
    ``released_histogram`` (the histogram of ``y``, itself private).
    ``eps_upper`` and ``bound`` (``upper="auto"``): the budget spent on the DP
    bound and its public description (:meth:`dpfix.release.bounds.PrivateUpper.describe`).
    ``drawn_histogram``: the histogram of the rows drawn, counted as they were drawn (by
    the engine that drew them after ``draw=False``), which :attr:`output_histogram` gives.
    ``allotted``: the budget the privatization was given (its stages spend at most it,
    exactly), the report's ``eps_t``.
    ``confidential`` (the Dask engine: the true histogram ``eta`` and the
    realized count errors ``abs`` and ``squared``) is derived from the true
    data without noise, like ``topcoded``, and stays out of :meth:`public_report`.
    """

    counts: np.ndarray
    z: np.ndarray | None
    eps_1: float
    eps_2: float
    mechanism: Mechanism | None
    estimated_count_error: float | None
    n: int
    N: int
    topcoded: int
    privatizer: str | None
    constructor: str
    seconds: dict = field(default_factory=dict)
    stage1: Any = None
    split_rule: str = "rule-of-thumb"
    split_fraction: float = 0.0
    eps_construction: float = 0.0
    privacy_level: float = 0.0
    delta: float = 0.0
    seed: int | None = None
    selector: str | None = None
    joint: np.ndarray | None = None
    sampler: dict | None = None
    stage2: Any = field(default=None, repr=False)
    drawn_histogram: np.ndarray | None = None
    framework: str = "two-stage"
    estimator: str | None = None
    remap: str | None = None
    deconvolution: Any = field(default=None, repr=False)
    released_histogram: np.ndarray | None = field(default=None, repr=False)
    confidential: dict | None = field(default=None, repr=False)
    chosen_by: str | None = None
    eps_upper: float = 0.0
    bound: dict | None = None
    allotted: float | None = None

    def __repr__(self) -> str:
        """The method and the public sizes only: no count, histogram or target (the
        object also holds ``topcoded`` and, for the Dask engine, ``confidential``, derived
        from the true data without noise)."""
        return (f"PrivatizedCounts(framework={self.framework!r}, "
                f"constructor={self.constructor!r}, eps_1={self.eps_1!r}, "
                f"eps_2={self.eps_2!r}, delta={self.delta!r}, n={self.n}, N={self.N})")

    @property
    def eps(self) -> float:
        """``eps_t``: the budget the privatization was given (``allotted``), which its stages
        ``eps_upper + eps_1 + eps_2`` spend at most, exactly (``eps_upper``: the bound of
        ``upper="auto"``); without it, their float sum."""
        if self.allotted is not None:
            return self.allotted
        return self.eps_upper + self.eps_1 + self.eps_2

    epsilon = renamed_attribute("epsilon", "eps")

    @property
    def output_distribution(self) -> np.ndarray:
        """``zhat``: the share of output rows at each count ``0 .. n-1`` (private)."""
        return self.output_histogram / self.N

    @property
    def output_histogram(self) -> np.ndarray:
        """How many output rows have each count ``0 .. n-1`` (private)."""
        if self.drawn_histogram is not None:  # counted as the rows were drawn
            return self.drawn_histogram
        if self.counts is None:
            if self.joint is None:
                raise ValueError("no rows were drawn (draw=False) and none reported")
            return self.joint.sum(axis=0)
        return np.bincount(self.counts, minlength=self.n)

    def samplers(self) -> dict[str, str]:
        """How stage 1 and stage 2 drew their randomness (for the report)."""
        if self.stage1 is None:
            s1 = "none (one-stage constructor)"
        elif self.stage1.secure:
            s1 = f"OpenDP {self.stage1.noise.get('distribution', '')} (secure sampler)"
        else:
            s1 = (f"numpy {self.stage1.noise.get('distribution', '')} with seed {self.seed}: "
                  "NOT FOR PRODUCTION (tests and experiments only)")
        if self.sampler is None or self.sampler.get("kind") == "float multinomial":
            s2 = ("numpy PCG64 multinomial on float64 rows of T, "
                  + ("seeded from fresh OS randomness (not recorded)" if self.seed is None
                     else f"seed {self.seed}: NOT FOR PRODUCTION"))
            return {"stage1": s1, "stage2": s2}
        s = self.sampler
        if self.framework != "two-stage":
            s2 = (f"y = G(x): exact two-sided geometric noise, lam = {s['lam']}: {s['source']}; "
                  f"then the {self.remap} remap onto the estimated z (post-processing)")
            return {"stage1": s1, "stage2": s2, "privacy_statement": self._no_split_statement()}
        s2 = f"{s['kind']} ({s['constructor']}, lam = {s['lam']}): {s['source']}"
        return {"stage1": s1, "stage2": s2, "privacy_statement": s["privacy_statement"]}

    def _no_split_statement(self) -> str:
        lam = self.sampler["lam"]
        released = ("y" if self.stage1 is None else
                    f"(V, y), V the cyclic Laplace release of the histogram at eps_1 = "
                    f"{self.eps_1:.12g}")
        total = ("ln(lam)" if self.stage1 is None else "eps_1 + ln(lam)")
        return (f"Every row's count x is released once as y = clamp(x + k, 0, {self.n - 1}), k "
                f"drawn from the exact two-sided geometric law P(k) proportional to lam^-|k|, "
                f"lam = {lam} <= e^eps_2 (proved in rational arithmetic), by integer "
                f"comparisons of uniform integers: the truncated geometric mechanism G, exactly "
                f"ln(lam)-DP for a change of one row's count by 1. The target z is computed "
                f"from the histogram of {released} only ({self.estimator}), and every output is "
                f"a function of its row's y, z and randomness independent of the data "
                f"({self.remap} remap): post-processing of {released}, so the release is "
                f"{total} <= eps_t-DP by sequential composition (docs/no_split.md).")

    def _dp_check(self) -> str:
        if self.framework != "two-stage":
            return (f"y drawn exactly with lam = {self.sampler['lam']} <= e^eps_2 (proved in "
                    "rational arithmetic); z and the outputs are post-processing")
        if self.constructor == "discrete-gaussian":
            return ("(eps_2, delta): delta of the discrete Gaussian recomputed at eps_2 "
                    "(CKS20 Theorem 7) and checked <= delta before any row was drawn")
        kind = (self.sampler or {}).get("kind")
        if kind == "structured G R":
            return (f"noise drawn exactly with lam = {self.sampler['lam']} <= e^eps_2 (proved "
                    "in rational arithmetic); the remap is post-processing"
                    + ("; privacy_level of T <= eps_2 checked" if self.mechanism else ""))
        if kind == "checked table":
            return ("privacy_level <= eps_2 checked, and the integer sampling table checked "
                    f"exactly ln(lam)-DP with lam = {self.sampler['lam']} <= e^eps_2, before "
                    "any row was drawn")
        return "privacy_level <= eps_2 checked before any row was drawn"

    def public_report(self) -> dict[str, Any]:
        """Budgets, target, estimate and provenance: public or private values only.

        Examples
        --------
        >>> from dpfix.release.pipeline import privatize_counts
        >>> r = privatize_counts([0, 1, 1, 2], 1.0, upper=2, seed=0).public_report()
        >>> r["budget"]["split"]["rule"], r["n"], r["N"]
        ('rule-of-thumb', 3, 4)
        """
        mech = self.mechanism
        split = {"rule": self.split_rule, "fraction": self.split_fraction}
        if self.split_rule == "rule-of-thumb":
            split.update(formula="f = B + (A - B) exp(-K eps_t)", constants=dict(RULE_OF_THUMB))
        stage1 = None
        if self.stage1 is not None:
            s = self.stage1
            stage1 = {"privatizer": s.privatizer, "postprocess": s.postprocess, "notion": s.notion,
                      "budget": s.budget, "secure": s.secure, "noise": s.noise}
        composition = {
            "two-stage": "sequential: stage 1 (eps_1) then T (eps_2)",
            "one-stage": "one release y = G(x) at eps_2 = eps_t; the rest is post-processing",
            "hybrid": "sequential: stage 1 V (eps_1) and y = G(x) (eps_2); the rest is "
                      "post-processing of (V, y)"}[self.framework]
        if self.bound is not None:
            rest = composition.removeprefix("sequential: ").replace(
                "eps_2 = eps_t", "eps_2 = eps_t - eps_upper")
            composition = (f"sequential: the DP bound upper = {self.bound['upper']} "
                           f"(eps_upper), then {rest}")
        framework = {"name": self.framework, "chosen_by": self.chosen_by}
        if self.framework != "two-stage":
            fit = self.deconvolution
            framework.update(estimator=self.estimator, remap=self.remap,
                             converged=getattr(fit, "converged", None),
                             iterations=getattr(fit, "iterations", None))
        return {
            "framework": framework,
            "budget": {"eps_t": self.eps, "eps_upper": self.eps_upper, "eps_1": self.eps_1,
                       "eps_2": self.eps_2, "delta": self.delta, "split": split,
                       "composition": composition,
                       "exact": exact_budgets(eps_t=self.eps, eps_upper=self.eps_upper,
                                              eps_1=self.eps_1, eps_2=self.eps_2)},
            "upper_bound": self.bound or {
                "upper": self.n - 1, "chosen_by": "given: a public parameter, not computed "
                                                  "from the data", "eps_upper": 0.0},
            "n": self.n, "N": self.N,
            "target_z": None if self.z is None else self.z.tolist(),
            "estimated_count_error": {
                "value": self.estimated_count_error, "loss": "abs",
                "definition": "<W, T>, W[i, j] = z_i |i - j|: expected |output - input| "
                              "when counts follow z; from z and T only, no privacy cost"},
            "mechanism": {"constructor": self.constructor,
                          "name": self.constructor if mech is None else mech.constructor,
                          "selector": self.selector, "eps_construction": self.eps_construction,
                          "privacy_level": self.privacy_level,
                          "dp_check": self._dp_check(),
                          "fixed_point": CONSTRUCTORS[self.constructor].fixed_point,
                          "row_sum_error": None if mech is None
                          else float(mech.row_sum_error()),
                          "fixed_point_error": None if mech is None or mech.fixed_point is None
                          else float(mech.fixed_point_error()),
                          "build_seconds": None if mech is None else mech.build_seconds,
                          "built": mech is not None},
            "stage1": stage1,
            "samplers": self.samplers(),
            "seed": self.seed,
            "output_distribution": self.output_distribution.tolist(),
        }
